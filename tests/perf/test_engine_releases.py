"""Engine releases by date (perf.engines, datasets/engine_releases.csv) and how a release
between two measured ones is timed (perf.kernel_versions)."""

from __future__ import annotations

import datetime as dt

import pytest

from tokenomics.catalog import load
from tokenomics.deployment import resolve
from tokenomics.errors import ValidationError
from tokenomics.perf.engines import period_end, release_date, release_in_force, split_engine
from tokenomics.perf.kernel_versions import kernel_penalty


def test_every_release_is_sourced_and_dated():
    df = load("engine_releases")
    assert set(df["engine"]) == {"vllm", "sglang", "trt"}
    assert df["source"].str.startswith("https://pypi.org/project/").all()
    assert df["release_date"].map(lambda d: dt.date.fromisoformat(d)).notna().all()


def test_release_dates_are_pypi_upload_days():
    # PyPI: sglang 0.4.3 first uploaded 2025-02-14; TensorRT-LLM 1.2.0rc5 2025-12-10
    assert release_date("sglang", "0.4.3") == dt.date(2025, 2, 14)
    assert release_date("trt", "1.2.0rc5") == dt.date(2025, 12, 10)
    # a container build not on PyPI takes the latest listed release at or below it
    assert release_date("trt", "1.1.0rc2.post2") == release_date("trt", "1.1.0rc2")


def test_period_end():
    assert period_end("2025") == dt.date(2025, 12, 31)
    assert period_end("2025-02") == dt.date(2025, 2, 28)
    assert period_end("2024-12") == dt.date(2024, 12, 31)
    assert period_end("nan") is None


def test_release_in_force_is_the_newest_published_by_then():
    # sglang 0.4.3.post2 is the newest sglang on PyPI by the end of February 2025
    assert release_in_force("sglang", "2025-02") == "0.4.3.post2"
    assert release_in_force("default", "2025-02") is None  # no tabulated releases


def test_engine_at_release_parses_and_unknown_release_lists_the_known_ones():
    assert split_engine("sglang@0.4.3") == ("sglang", "0.4.3")
    assert split_engine("dynamo-trt@1.2.0rc5") == ("trt", "1.2.0rc5")
    # a release candidate whose kernels were measured but that never reached PyPI is known too
    assert split_engine("trt@1.3.0rc20") == ("trt", "1.3.0rc20")
    with pytest.raises(ValidationError, match=r"known sglang releases: 0\.1\.3, .*0\.4\.3,") as e:
        split_engine("sglang@0.4.99")
    assert "\n" not in str(e.value)
    with pytest.raises(ValidationError, match="conflicts"):
        split_engine("sglang@0.4.3", "0.5.2")
    dep = resolve("deepseek-r1", hardware="h200", engine="sglang@0.4.3")
    assert (dep.engine, dep.engine_version) == ("sglang", "0.4.3")


def test_engine_at_a_date_is_the_release_in_force():
    assert split_engine("sglang@2025-02") == ("sglang", "0.4.3.post2")
    with pytest.raises(ValidationError, match="no sglang release was published by 2023"):
        split_engine("sglang@2023")


def test_a_release_between_measured_ones_is_interpolated_by_date():
    lo = kernel_penalty("b200", "trt", "1.2.0rc5", "gemm", "fp8_block")
    hi = kernel_penalty("b200", "trt", "1.3.0rc10", "gemm", "fp8_block")
    mid = kernel_penalty("b200", "trt", "1.2.0rc6.post2", "gemm", "fp8_block")
    # its weight is the fraction of the days from 1.2.0rc5 to 1.3.0rc10 that had passed
    days = (release_date("trt", "1.2.0rc6.post2") - release_date("trt", "1.2.0rc5")).days
    span = (release_date("trt", "1.3.0rc10") - release_date("trt", "1.2.0rc5")).days
    assert mid.newer_version == "1.3.0rc10" and mid.newer_weight == pytest.approx(days / span)
    w = mid.newer_weight
    want = (1 - w) * float(lo.extra_s(1, 0.0, 1)) + w * float(hi.extra_s(1, 0.0, 1))
    assert float(mid.extra_s(1, 0.0, 1)) == pytest.approx(want)
    # a measured release is its own table
    assert lo.newer_weight == 0.0 and hi.newer_weight == 0.0
