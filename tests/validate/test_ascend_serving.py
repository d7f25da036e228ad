"""Huawei Ascend 910C serving results (datasets/serving_ascend.csv) and the chip's INT8 path."""

from __future__ import annotations

import numpy as np
import pytest

from tokenomics.catalog import accelerator, load
from tokenomics.validate.serving_cases import predict_cases


@pytest.fixture(scope="module")
def rows():
    return load("serving_ascend")


def test_rows_are_the_published_figures(rows):
    """CloudMatrix-Infer's decode sweep (arXiv 2506.12708): batch per NPU / TPOT reproduces each
    published tokens/s per NPU (96 / 0.0494 s = 1,943; 8 / 0.0149 s = 537 vs 538), which is why the
    paper's 'NPU' is read as the 910C package; concurrency = batch x 160 NPUs. Prefill: the measured
    default 5,655 input tokens/s per NPU, not the simulated perfect-balance 6,688."""
    r = rows.set_index("case_id")
    assert len(r) == 14 and (r["hardware"] == "ascend-910c").all()
    dec = r[r["phase"] == "decode"]
    batch = dec["concurrency"] / 160
    assert (batch / dec["measured_tpot_s"]).to_numpy() == pytest.approx(
        dec["measured_output_tok_per_s_per_gpu"].to_numpy(), rel=0.005)
    assert r.at["A003", "measured_output_tok_per_s_per_gpu"] == 1943
    assert r.at["A006", "measured_total_tok_per_s_per_gpu"] == 5655
    assert (r.loc[r["engine"] == "sglang", "measured_tpot_s"] > 0).all()
    # vLLM-Ascend Qwen3-235B: 2,761.72 output tok/s over 8 packages; the PD run's 8,593.44 per decode
    # package (16), as the schema counts a disaggregated row
    assert r.at["A013", "measured_output_tok_per_s_per_gpu"] == pytest.approx(2761.72 / 8, rel=1e-4)
    assert r.at["A014", "measured_output_tok_per_s_per_gpu"] == pytest.approx(8593.44 / 16)


def test_int8_runs_on_its_own_path_where_a_chip_has_one():
    """The 910C has no FP8 tensor path; W8A8 INT8 GEMMs run at its INT8 rate, 2 x BF16 (the
    1,504 TFLOPS CloudMatrix-Infer divides by). W4A8 (int4 weights) runs 8-bit GEMMs too. On
    NVIDIA chips INT8 stays on the FP8 path (no separate column)."""
    a = accelerator("ascend-910c")
    assert a.peak_int8_flop_per_s == pytest.approx(2 * a.peak_bf16_flop_per_s)
    assert a.peak_flop_field("int8") == a.peak_flop_field("int4") == "peak_int8_flop_per_s"
    assert a.peak_flop_field("fp8") == "peak_bf16_flop_per_s"
    h = accelerator("h200")
    assert h.peak_flop_field("int8") == "peak_fp8_flop_per_s"


def test_every_row_is_predicted(rows):
    """Nothing is fitted on these rows (vendor Huawei has no engine row: the 'any' default); every
    row is predicted, the decode sweep's throughput rises with the batch as measured, and the
    SGLang rows (TPOT only) are scored on TPOT."""
    p = predict_cases(rows).set_index("case_id")
    assert p["status"].eq("predicted").all()
    sweep = p.loc[["A005", "A004", "A003"], "predicted_output_tok_per_s_per_gpu"].to_numpy()
    assert np.all(np.diff(sweep) > 0)
    sg = p[p["engine"] == "sglang"]
    assert np.isfinite(sg["predicted_tpot_s"]).all() and sg["error_frac"].isna().all()


def test_watch_prices_cloudmatrix_through_the_validated_deployment(rows):
    """The supernode watch's perf-core rate is the deployment validate-serving builds for the
    paper's headline row (A003), at the cheapest batch within TPOT 50 ms: the same physics, so the
    two cannot disagree; a tighter TPOT gives fewer tokens/s per chip; an unknown case is refused."""
    from tokenomics.errors import UnknownNameError
    from tokenomics.validate.serving_cases import case_deployment
    from tokenomics.watch.supernodes import modelled_tok_per_s_per_chip

    tps, note = modelled_tok_per_s_per_chip()
    dep = case_deployment(rows.set_index("case_id", drop=False).loc["A003"])
    b = dep.batch_for_target(20.0, 4096.0)
    r = dep.decode(b, 4096.0, check_memory=False)
    assert tps == pytest.approx(float(np.asarray(r.tok_per_s_per_chip)))
    assert float(np.asarray(r.tpot_s)) <= 0.05 and "A003" in note
    assert modelled_tok_per_s_per_chip(0.03)[0] < tps
    with pytest.raises(UnknownNameError):
        modelled_tok_per_s_per_chip(case="A999")


def test_fp8_checkpoints_are_served_int8_where_no_fp8_path_exists():
    """The resolver serves DeepSeek's FP8 checkpoint W8A8 INT8 on the 910C (no FP8 tensor path, an
    INT8 one), as every Ascend source in serving_ascend.csv runs it, and says so; same bytes, the
    8-bit rate. A precision the user gives is kept, and chips with FP8 (H200) or neither path (the
    SD200's assumed chip) are untouched."""
    from tokenomics.deployment import resolve

    d = resolve("deepseek-v3", system="cloudmatrix-384")
    assert (d.weight_precision, d.expert_precision) == ("int8", "int8")
    assert any("W8A8" in p for p in d.picked)
    assert resolve("deepseek-v3", system="cloudmatrix-384", weight_precision="fp8").weight_precision == "fp8"
    assert resolve("deepseek-v3", hardware="h200").weight_precision == "fp8"
    k3 = resolve("kimi-k3", system="sd200-ultra")
    assert (k3.weight_precision, k3.expert_precision) == ("bf16", "mxfp4")


def test_910c_profile_reads_the_papers_operator_measurements():
    """CloudMatrix-Infer's operator table (arXiv 2506.12708): MLA decode at 84.1 % of peak HBM
    bandwidth, INT8 GEMMs at up to 82.7 % of peak. The 910C's bandwidth fraction is the former
    (not the H200's BabelStream 95.2 %); its INT8 path, timed with no BF16 GEMM beside it, runs at
    0.827 / 0.856 (the H200 BF16 fraction its profile carries) of its share, by hand 0.9666. An
    NVIDIA chip with a lone timing (H800's DeepGEMM claim) keeps its sibling's same-harness ratio."""
    from tokenomics.perf.profile import measured_fracs, tensor_path_ratio

    m = measured_fracs("ascend-910c")
    assert m["read_frac"] == pytest.approx(0.841) and m["read_from"] == "ascend-910c"
    assert tensor_path_ratio("ascend-910c", "peak_int8_flop_per_s") == pytest.approx(0.827 / m["gemm_frac"], rel=1e-9)
    assert tensor_path_ratio("ascend-910c", "peak_int8_flop_per_s") == pytest.approx(0.9666, abs=1e-4)
    assert tensor_path_ratio("h800", "peak_fp8_flop_per_s") == tensor_path_ratio("h200", "peak_fp8_flop_per_s")
