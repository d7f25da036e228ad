"""Older SGLang and vLLM releases run a mixture-of-experts model's kernels slower
(datasets/engine_maturity.csv, fitted by tools/fit_engine_maturity.py on dstack's early-2025
DeepSeek-R1 runs): the slowdown by hand, where it stops, and that dense models and TensorRT-LLM
are left as they were."""

import datetime as dt
import math

import pytest

from tokenomics.catalog import load
from tokenomics.deployment import resolve
from tokenomics.perf.engines import maturity_slowdown, release_date


def _rate_and_dates():
    r = load("engine_maturity").set_index("engine").loc["sglang"]
    return (float(r["log_slowdown_per_year"]), dt.date.fromisoformat(r["reference_date"]),
            dt.date.fromisoformat(r["oldest_fitted_date"]))


def test_slowdown_by_hand():
    rate, ref, _ = _rate_and_dates()
    # SGLang 0.4.3.post2 was published 2025-02-17 (PyPI, datasets/engine_releases.csv), 183 days
    # before the reference release vLLM 0.10.1 (2025-08-19)
    assert release_date("sglang", "0.4.3.post2") == dt.date(2025, 2, 17) and ref == dt.date(2025, 8, 19)
    want = math.exp(rate * 183 / 365.25)
    assert maturity_slowdown("sglang", "0.4.3.post2") == pytest.approx(want, rel=1e-12)
    assert 2.5 < want < 3.2  # the fit: the February 2025 releases ran DeepSeek-R1's kernels ~2.9x slower


def test_no_extrapolation_past_the_oldest_fitted_release_and_none_for_newer_ones():
    rate, ref, oldest = _rate_and_dates()
    cap = math.exp(rate * (ref - oldest).days / 365.25)
    assert maturity_slowdown("sglang", "0.3.0") == pytest.approx(cap)       # 2024: held at the oldest fitted age
    assert maturity_slowdown("vllm", "0.6.0") == pytest.approx(cap)
    for engine, version in (("vllm", "0.10.1"), ("vllm", "0.19.0"), ("sglang", "0.5.9"), ("trt", "1.0.0"),
                            ("sglang", ""), ("sglang", None)):
        assert maturity_slowdown(engine, version) == 1.0


def test_an_old_release_slows_a_moe_model_and_leaves_a_dense_one():
    def tpot(model, system, version):
        dep = resolve(model, system=system, engine="sglang", engine_version=version)
        return float(dep.decode(batch=32, context_tok=2048).step_time_s)

    new, old = tpot("deepseek-v3", "dgx-h200", None), tpot("deepseek-v3", "dgx-h200", "0.4.3.post2")
    assert 1.3 < old / new < maturity_slowdown("sglang", "0.4.3.post2")  # kernels slower, comms as they were
    assert tpot("llama-3.1-8b", "dgx-h200", "0.4.3.post2") == tpot("llama-3.1-8b", "dgx-h200", None)


def test_the_deployment_says_what_the_release_changes():
    moe = resolve("deepseek-v3", system="dgx-h200", engine="sglang", engine_version="0.4.3.post2")
    assert any("kernels run 2.88x slower" in p for p in moe.picked)
    dense = resolve("llama-3.1-8b", system="dgx-h200", engine="sglang", engine_version="0.4.3.post2")
    assert any("no old release was measured on a dense model" in p for p in dense.picked)
