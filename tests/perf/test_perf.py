"""Performance core: hand calculations, properties, memory fit, calibration accuracy."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tokenomics import catalog
from tokenomics.errors import DoesNotFitError, ValidationError
from tokenomics.perf import Profile, decode_step, max_batch, prefill
from tokenomics.validate.calibrate import predict_cases, summarize
from tokenomics.perf.ops import expected_distinct_experts, sum_rows
from tokenomics.specs import Accelerator, ExecutionPlan, ModelSpec

# A toy accelerator and an "ideal" profile make step times computable by hand.
TOY_HW = Accelerator("toy", peak_bf16_flop_per_s=1e15, hbm_bytes=1e11, hbm_bytes_per_s=1e12)
IDEAL = Profile("ideal", weight_bw_frac=1.0, kv_bw_frac=1.0, flop_frac=1.0, gemm_half_rows=1e-9,
                attn_flop_frac=1.0, gemm_tile_s=0.0, graph_kernel_s=1e-6, eager_kernel_s=20e-6,
                eager_busy_kernel_s=20e-6, usable_mem_frac=1.0)
TOY = ModelSpec("toy", n_layers=1, hidden=1024, n_q_heads=8, n_kv_heads=8, head_dim=128, ffn_hidden=4096)


def test_graph_step_equals_weights_plus_kv_over_bandwidth_plus_kernels_hand_calc():
    """1 layer: qkv 1024x3072 + o 1024x1024 + gate_up 1024x8192 + down 4096x1024
    = 16,777,216 params x 2 B = 33.55 MB -> 33.55 us at 1 TB/s; KV at 1000 positions
    = 1000 x 2 x 8 x 128 x 2 B = 4.10 MB -> 4.10 us; kernels: 28 per layer + 1 split-K
    reduction (down GEMM, k=4096 >= n=1024 at batch <= 8) + 1 per step (final norm; no
    embedding or lm head) = 30 -> 30 us at 1 us each. Total 67.65 us (activations < 0.2 %)."""
    r = decode_step(TOY_HW, TOY, "graph", batch=1, context_tok=1000, profile=IDEAL)
    assert float(r.n_kernels) == 30
    expected = 16_777_216 * 2 / 1e12 + 1000 * 2 * 8 * 128 * 2 / 1e12 + 30e-6
    assert float(r.step_time_s) == pytest.approx(expected, rel=0.002)
    assert r.bound == "launch" or r.bound == "memory"


def test_eager_host_bound_hand_calc():
    """Eager: 30 kernels x 20 us = 600 us of host time >> 68 us of GPU time -> host-bound."""
    r = decode_step(TOY_HW, TOY, "eager-fused", batch=1, context_tok=1000, profile=IDEAL)
    assert float(r.step_time_s) == pytest.approx(30 * 20e-6, rel=1e-9)
    assert r.bound == "host"


def test_compute_bound_prefill_hand_calc():
    """Prefill of 4096 tokens through the toy layer: GEMM FLOPs 2 x 4096 x 16.78M = 137.4 GFLOP;
    causal attention 2 x 4096 x 8 heads x 2048.5 mean keys x 256 = 34.4 GFLOP; at 1 PFLOP/s
    (ideal efficiency) = 171.8 us, plus 30 kernels x 1 us. Bandwidth set to 1 PB/s so that the
    ~170 MB of activation traffic is negligible; the elementwise FLOPs (norms 10 per element
    of 4096 x 1024, SiLU-and-mul 4 per element of 4096 x 4096) run at the vector rate, taken as
    5 % of the tensor peak: (41.9 M + 67.1 M) / 5e13 = 2.18 us."""
    r = prefill(TOY_HW.replace(hbm_bytes_per_s=1e15), TOY, "graph", prompt_tok=4096, profile=IDEAL)
    gemm = 2 * 4096 * 16_777_216 / 1e15
    attn = 2 * 4096 * 8 * 2048.5 * 256 / 1e15
    vec = (10 * 4096 * 1024 + 4 * 4096 * 4096) / 5e13
    assert float(r.step_time_s) == pytest.approx(gemm + attn + vec + 30e-6, rel=0.002)
    assert r.bound == "compute"


def test_sum_rows_adds_in_row_order_to_the_bit():
    # the step's per-operator sums: one np.add.reduce where rows hold two elements or more, a
    # loop otherwise; either way the loop's value (no pairwise summation), whatever the layout
    rng = np.random.default_rng(7)
    for shape in [(15,), (15, 1), (15, 2), (15, 8), (15, 158), (15, 8, 77), (3, 6, 1)]:
        for order in ("C", "F"):
            a = np.asarray(rng.random(shape) * 10.0 ** rng.integers(-9, 4, size=shape), order=order)
            a[0] = -0.0  # a signed zero first: the loop's 0.0 + x makes it +0.0
            want = 0.0 + a[0]
            for row in a[1:]:
                want = want + row
            got = sum_rows(a)
            assert np.shape(got) == np.shape(want)
            assert np.asarray(got).tobytes() == np.asarray(want).tobytes()


def test_distinct_experts_formula():
    # E * (1 - (1 - k/E)^N): one token touches exactly k experts; many tokens touch all
    assert float(expected_distinct_experts(1, 64, 2)) == pytest.approx(2.0)
    assert float(expected_distinct_experts(2, 64, 2)) == pytest.approx(64 * (1 - (62 / 64) ** 2))
    assert float(expected_distinct_experts(1e6, 64, 2)) == pytest.approx(64.0)


def test_moe_touched_reads_fewer_weights_than_all():
    m = catalog.model("qwen3-235b-a22b")
    touched = decode_step("h200", m, ExecutionPlan("t", "graph", expert_compute="touched"), batch=1,
                          weight_precision="int4", on_oom="ignore")
    allx = decode_step("h200", m, ExecutionPlan("a", "graph", expert_compute="all"), batch=1,
                       weight_precision="int4", on_oom="ignore")
    assert float(touched.hbm_bytes) < 0.2 * float(allx.hbm_bytes)


def test_verify_step_costs_little_more_than_one_token_measured():
    """Measured on the H200 (h200-069 vs h200-073): 16 tokens/step cost 1.23x one token."""
    one = decode_step("h200", "dense-1b", "graph", batch=1, tokens_per_step=1)
    many = decode_step("h200", "dense-1b", "graph", batch=1, tokens_per_step=16)
    ratio = float(many.step_time_s / one.step_time_s)
    assert 1.0 < ratio < 1.5
    assert float(many.tok_per_s_per_replica) > 10 * float(one.tok_per_s_per_replica)


def test_vectorized_sweep_matches_scalar_calls():
    b = np.array([1, 4, 16, 64])[:, None]
    c = np.array([512, 4096])[None, :]
    r = decode_step("h200", "llama-3.1-8b", "graph", batch=b, context_tok=c)
    assert r.step_time_s.shape == (4, 2)
    for i, bb in enumerate([1, 4, 16, 64]):
        for j, cc in enumerate([512, 4096]):
            s = decode_step("h200", "llama-3.1-8b", "graph", batch=bb, context_tok=cc)
            assert float(s.step_time_s) == pytest.approx(r.step_time_s[i, j], rel=1e-12)
    assert len(r.to_frame()) == 8


def test_does_not_fit_error_names_need_have_and_max_batch():
    with pytest.raises(DoesNotFitError, match=r"llama-3.1-70b at bf16 needs 141 GB of weights"):
        decode_step("h200", "llama-3.1-70b", "graph", batch=1)
    with pytest.raises(DoesNotFitError, match=r"batch <= \d+ at 8192 context"):
        decode_step("h200", "llama-3.1-8b", "graph", batch=5000, context_tok=8192)
    nb = max_batch("h200", "llama-3.1-8b", context_tok=8192)
    decode_step("h200", "llama-3.1-8b", "graph", batch=nb, context_tok=8192)
    with pytest.raises(DoesNotFitError):
        decode_step("h200", "llama-3.1-8b", "graph", batch=nb + 1, context_tok=8192)


def test_mask_mode_marks_configs_that_do_not_fit():
    r = decode_step("h200", "llama-3.1-8b", "graph", batch=np.array([1, 10_000]), context_tok=8192, on_oom="mask")
    assert r.fits.tolist() == [True, False]
    assert np.isnan(r.step_time_s[1]) and np.isfinite(r.step_time_s[0])


@pytest.mark.parametrize("kw, msg", [
    ({"batch": 0}, "batch must be an integer >= 1"),
    ({"batch": float("nan")}, "batch must be an integer"),
    ({"context_tok": -5}, "context_tok must be an integer >= 0"),
    ({"tokens_per_step": 1.5}, "tokens_per_step"),
])
def test_bad_numbers_one_line_errors(kw, msg):
    with pytest.raises(ValidationError, match=msg):
        decode_step("h200", "llama-3.1-8b", "graph", **kw)


def test_profile_fraction_given_as_percent_is_rejected_with_hint():
    with pytest.raises(ValidationError, match="did you mean 0.8"):
        Profile("x", weight_bw_frac=80)


# ---------------- properties ---------------------------------------------------------------
models = st.sampled_from(["dense-1b", "llama-3.1-8b", "qwen3-235b-a22b", "gpt-oss-120b"])
plans = st.sampled_from(["eager", "graph", "engine", "super", "megakernel"])


@settings(max_examples=40, deadline=None)
@given(models, plans, st.integers(1, 256), st.integers(0, 32768), st.floats(1.01, 4.0))
def test_more_bandwidth_never_slows_a_step(m, p, b, c, k):
    bw = catalog.accelerator("h200").hbm_bytes_per_s
    kw = dict(batch=b, context_tok=c, on_oom="ignore", weight_precision="int4")
    slow = decode_step("h200", m, p, hbm_bytes_per_s=bw, **kw)
    fast = decode_step("h200", m, p, hbm_bytes_per_s=bw * k, **kw)
    assert float(fast.step_time_s) <= float(slow.step_time_s) * (1 + 1e-12)


@settings(max_examples=30, deadline=None)
@given(models, st.sampled_from(["eager", "graph"]), st.integers(1, 256), st.integers(100, 5000), st.integers(1, 5000))
def test_more_kernels_never_speed_a_step(m, launch, b, k1, dk):
    base = ExecutionPlan("x", launch, kernels_per_step=k1)
    more = base.replace(kernels_per_step=k1 + dk)
    kw = dict(batch=b, context_tok=1024, on_oom="ignore", weight_precision="int4")
    assert float(decode_step("h200", m, more, **kw).step_time_s) >= float(decode_step("h200", m, base, **kw).step_time_s)


@settings(max_examples=30, deadline=None)
@given(models, st.integers(1, 512), st.integers(0, 16384))
def test_fusion_never_adds_bytes(m, b, c):
    kw = dict(batch=b, context_tok=c, on_oom="ignore", weight_precision="int4")
    unfused = decode_step("h200", m, "graph-unfused", **kw)
    fused = decode_step("h200", m, "graph", **kw)
    assert float(fused.hbm_bytes) <= float(unfused.hbm_bytes)
    assert float(fused.n_kernels) <= float(unfused.n_kernels)


@settings(max_examples=20, deadline=None)
@given(st.sampled_from(["dense-1b", "llama-3.1-8b", "gpt-oss-120b"]), plans, st.integers(0, 32768))
def test_total_throughput_never_falls_as_batch_grows_until_memory_runs_out(m, p, c):
    nb = max_batch("h200", m, context_tok=c, weight_precision="int4")
    b = np.unique(np.geomspace(1, max(nb, 1), 24).astype(int))
    r = decode_step("h200", m, p, batch=b, context_tok=c, weight_precision="int4")
    assert np.all(np.diff(r.tok_per_s_per_replica) >= -1e-9 * r.tok_per_s_per_replica[:-1])


# ---------------- calibration against the H200 measurements ---------------------------------
def test_shipped_h200_profile_reproduces_measurements():
    """datasets/h200_cases.csv, measured on one H200; targets from the issue: graph median <= 6 %,
    P90 <= 15 %; eager median <= 12 %, P90 <= 35 %, relaxed to 40 % by issue 13: eager step
    time must not fall as the batch grows, and the measurements themselves do (dense-8b eager
    29.6 ms at batch 1, 16.4 ms at batch 32; the 512-token eager prefill, 12.6 ms, is faster
    than a one-token decode step). No monotone model fits those rows; the refit gives 39 %."""
    s = summarize(predict_cases(catalog.load("h200_cases"), "h200")).set_index("execution")
    assert s.loc["graph", "median_abs_error_frac"] <= 0.06
    assert s.loc["graph", "p90_abs_error_frac"] <= 0.15
    assert s.loc["eager", "median_abs_error_frac"] <= 0.12
    assert s.loc["eager", "p90_abs_error_frac"] <= 0.40


def test_estimated_kernel_counts_match_profiler_counts():
    """kernels_per_step in h200_cases.csv was counted with the CUDA profiler; the estimate from
    architecture and plan is within 3 % of every count."""
    cases = catalog.load("h200_cases")
    p = predict_cases(cases, "h200", use_measured_kernels=False)
    counted = cases["kernels_per_step"].to_numpy(float)
    ok = np.isfinite(counted)
    rel = np.abs(p["kernels_per_step"].to_numpy(float)[ok] / counted[ok] - 1)
    assert rel.max() <= 0.03


def test_decode_energy_relevant_throughput_matches_measured_tok_per_s():
    """h200_microbench.csv power rows note measured graph decode throughput (dense-8b, ctx 1024):
    178 tok/s (b=1), 4307 (b=32), 10637 (b=128); dense-1b b=128: 42274."""
    for model, b, meas in [("dense-8b", 1, 178), ("dense-8b", 32, 4307), ("dense-8b", 128, 10637),
                           ("dense-1b", 128, 42274)]:
        r = decode_step("h200", model, "graph", batch=b, context_tok=1024)
        assert float(r.tok_per_s_per_replica) == pytest.approx(meas, rel=0.10)


@pytest.mark.slow
def test_leave_one_model_out_graph_generalizes():
    from tokenomics.validate.calibrate import leave_one_model_out

    cases = catalog.load("h200_cases")
    lomo = leave_one_model_out(cases, catalog.load("h200_microbench"))
    g = lomo[lomo.execution == "graph"]
    assert g.error_frac.abs().median() <= 0.06


def test_megakernel_llama_1b_h100_matches_hazy_research_published():
    """datasets/measured_public.csv: Hazy Research's megakernel runs a Llama-3.2-1B forward pass
    in 1.00 ms on an H100 at batch 1 (blog, claimed by its authors; 32-token prompt, 128
    generated -> context ~160). Predicted with the H200 profile transferred to the H100:
    within 15 %. (Their B200 figure, 0.68 ms, is 40 % slower than this model predicts; see the
    closing notes.)"""
    r = decode_step("h100-sxm", "llama-3.2-1b", "megakernel", batch=1, context_tok=160)
    assert float(r.step_time_s) == pytest.approx(1.00e-3, rel=0.15)
    g = decode_step("h100-sxm", "llama-3.2-1b", "graph", batch=1, context_tok=160)
    assert float(g.step_time_s) > 1.5 * float(r.step_time_s)  # launch overhead, not bandwidth


# ---------------- profile transfer to other chips ---------------------------------------------
def test_ascend_class_chips_take_the_measured_eager_launch_ratio():
    """Host time per tiny eager PyTorch op: 12.142 us on an Ascend 910B2 (triton-ascend issue 1675)
    over 10.647 us on the calibration H200 (h200_microbench launch_eager) = 1.1404 (hand
    calculation). The Ascend 910C (vendor sibling) and the SD200 chip (ASSUMED 910B-class in
    accelerators.csv) scale their eager per-kernel costs by it; graph launch costs, for which no
    Ascend measurement exists, stay the H200's, and NVIDIA chips are unchanged."""
    from tokenomics.perf.profile import load_profile, measured_launch

    h200 = load_profile(None, "h200")
    micro = catalog.load("h200_microbench")
    row = micro[micro["experiment"] == "launch_eager"]["value"].astype(float).iloc[0]
    assert measured_launch("h200") == (pytest.approx(row), "h200")  # one value in two tables
    for chip in ("ascend-910c", "sd200-chip"):
        p = load_profile(None, chip)
        assert measured_launch(chip)[1] == "ascend-910b"
        assert p.eager_kernel_s / h200.eager_kernel_s == pytest.approx(12.142 / 10.647, rel=1e-3)
        assert p.eager_busy_kernel_s / h200.eager_busy_kernel_s == pytest.approx(12.142 / 10.647, rel=1e-3)
        assert p.graph_kernel_s == h200.graph_kernel_s
        assert "eager op launch, from ascend-910b" in p.source
    assert load_profile(None, "b200").eager_kernel_s == h200.eager_kernel_s


def test_low_precision_tensor_paths_run_at_their_measured_share_of_peak():
    """perf.profile.tensor_path_ratio, hand calculations from datasets/chip_microbench.csv:
    B200 NVFP4 (aiconfigurator TRT-LLM GEMM table) 4547/9000 over bf16 1693/2250 = 0.671;
    MI300X FP8 (ROCm max-achievable-FLOPs blog, same harness for both) 1273/2614.9 over bf16
    708/1307.4 = 0.899; the bf16 path and a chip with no measured sibling (Ascend) stay 1.0.
    A compute-bound NVFP4 prefill on B200 then takes 1/0.671 of the datasheet-path time."""
    from tokenomics.catalog import accelerator
    from tokenomics.perf.profile import tensor_path_ratio

    assert tensor_path_ratio("b200", "peak_fp4_flop_per_s") == pytest.approx((4547 / 9000) / (1693 / 2250), rel=1e-3)
    assert tensor_path_ratio("mi300x", "peak_fp8_flop_per_s") == pytest.approx(
        (1273 / 2614.9) / (708 / 1307.4), rel=1e-3)
    assert tensor_path_ratio("h200", "peak_bf16_flop_per_s") == 1.0
    assert tensor_path_ratio("ascend-910c", "peak_fp8_flop_per_s") == 1.0
    assert accelerator("b200").peak_flop_field("nvfp4") == "peak_fp4_flop_per_s"


def test_a_compute_bound_fp4_prefill_slows_by_the_path_ratio(monkeypatch):
    """Same prefill (Llama-70B, NVFP4, 4 x 8192 tokens on one B200: GEMM-bound) with the measured
    ratio and with the datasheet path (ratio forced to 1): GEMM time scales by 1 / 0.671, and the
    attention (bf16 path) does not, so the whole step slows by less than 1.49x but clearly."""
    import tokenomics.perf.kernels as kernels_mod

    real = float(prefill("b200", "llama-3.1-70b", "graph", prompt_tok=8192, batch=4,
                         weight_precision="nvfp4").step_time_s)
    monkeypatch.setattr(kernels_mod, "tensor_path_ratio", lambda hw, field: 1.0)
    datasheet = float(prefill("b200", "llama-3.1-70b", "graph", prompt_tok=8192, batch=4,
                              weight_precision="nvfp4").step_time_s)
    assert 1.2 < real / datasheet < 1 / 0.671 + 1e-6


def test_mla_prefill_attends_in_mha_form_and_decode_in_the_absorbed_latent_form():
    """DeepSeek-V3 (128 heads, nope 128 + rope 64, v 128, latent 512): an 8192-token prefill
    attends per head at qk 192 / v 128, causal, 2 x 8192 x 128 x 8193/2 x (192 + 128)
    = 2.749e12 FLOP per layer; one decode token over 8192 cached positions attends in the
    absorbed latent form, 2 x 128 x 8192 x (576 + 512) = 2.282e9 (hand calculations)."""
    from tokenomics.perf.ops import build_ops
    from tokenomics.specs import plan

    m = catalog.model("deepseek-v3")
    kw = dict(batch=1, context_tok=8192, tokens_per_step=1, weight_bytes_per_param=1.0, kv_bytes_per_elem=2.0)
    pre = next(o for o in build_ops(m, plan("engine"), phase="prefill", **kw) if o.name == "attention")
    dec = next(o for o in build_ops(m, plan("engine"), phase="decode", **kw) if o.name == "attention")
    assert float(pre.flop) == pytest.approx(2 * 8192 * 128 * 8193 / 2 * (192 + 128), rel=1e-9)
    assert float(dec.flop) == pytest.approx(2 * 128 * 8192 * (576 + 512), rel=1e-9)


def test_mi355x_reads_its_own_measured_hbm_bandwidth():
    """The MI355X's bandwidth share is the largest read-only HBM measurement of its gfx950 die
    (TransferBench on an MI350X, 7.2 TB/s, ROCm/rocm-systems PR 8480) over its 8 TB/s datasheet:
    7.2 / 8.0 = 0.90 by hand, no longer the MI300X's BabelStream Dot 4.0 / 5.3 = 0.755. The MI325X,
    with no row of its own, still borrows the MI300X's; the transferred profile scales the H200's
    weight-read fraction by 0.90 / 0.952 (the H200's BabelStream Dot 4.57 / 4.8)."""
    from tokenomics.perf.profile import load_profile, measured_fracs, transfer_profile

    m = measured_fracs("mi355x")
    assert m["read_frac"] == pytest.approx(7.2 / 8.0) and m["read_from"] == "mi355x"
    assert measured_fracs("mi325x")["read_frac"] == pytest.approx(4.0 / 5.3)
    h200 = load_profile("h200")
    got = transfer_profile(h200, "mi355x").weight_bw_frac
    assert got == pytest.approx(h200.weight_bw_frac * 0.90 / (4.57 / 4.8), rel=1e-9)
