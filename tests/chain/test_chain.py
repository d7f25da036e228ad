"""Tests of tokenomics.chain: perf -> power -> cost -> price, against measurements and hand sums."""

from __future__ import annotations

import numpy as np
import pytest

from tokenomics import chain
from tokenomics.econ import pricing, tco
from tokenomics.errors import DoesNotFitError, TargetSpeedError, TokenomicsError, ValidationError


@pytest.mark.parametrize("batch,measured", [(1, 2.2199), (32, 0.1076), (128, 0.0571)])
def test_energy_per_token_matches_h200_measurement(batch, measured):
    """Measured: datasets/h200_microbench.csv power_decode rows (dense-8b = llama-3.1-8b shapes,
    CUDA graph, context 1024): 2.22 / 0.108 / 0.057 J/token. Tolerance 25 % (the issue's)."""
    r = chain.price("h200", "llama-3.1-8b", "graph", batch=batch, context_tok=1024)
    assert float(r.energy_j_per_tok) == pytest.approx(measured, rel=0.25)


def test_vectorized_batch_sweep_is_one_call():
    b = np.array([1, 8, 32, 128])
    r = chain.price("h200", "llama-3.1-8b", "graph", batch=b, context_tok=1024)
    df = r.to_frame()
    assert len(df) == 4 and list(df.batch) == [1, 8, 32, 128]
    # cost per output token falls with batch (weights read once per step, shared by the batch)
    assert np.all(np.diff(df.usd_per_m_output_tok) < 0)
    for col in ("usd_per_m_input_tok", "usd_per_m_output_tok", "cost_usd_per_chip_h",
                "energy_j_per_tok", "tok_per_s_per_chip", "facility_energy_j_per_tok", "kwh_per_m_tok"):
        assert col in df.columns


def test_price_identity_with_pricing_formula():
    """The chain's output price is exactly cost/h / (tok/s x 3600) x 1000 at utilization 1, margin 0."""
    r = chain.price("h200", "llama-3.1-8b", "graph", batch=32, context_tok=1024)
    expect = float(r.cost_usd_per_chip_h) / (float(r.tok_per_s_per_chip) * 3600) * 1000
    assert float(r.price_usd_per_1k_output_tok) == pytest.approx(expect, rel=1e-12)


def test_utilization_and_margin_scale_price():
    """Hand: at a flat (power-free) USD/h, utilization 0.5 and margin 0.2 multiply the price by
    1 / (0.5 x 0.8) = 2.5."""
    a = chain.price("h200", "llama-3.1-8b", "graph", batch=32, context_tok=1024, cost=2.0)
    b = chain.price("h200", "llama-3.1-8b", "graph", batch=32, context_tok=1024, cost=2.0,
                    utilization_frac=0.5, margin_frac=0.2)
    assert float(b.price_usd_per_1k_output_tok) == pytest.approx(2.5 * float(a.price_usd_per_1k_output_tok))


def test_unsold_hours_pay_idle_power_not_busy_power():
    """Hand: at utilization 0.5 a sold hour carries its busy power plus one unsold hour at idle
    power, so the electricity is that of (p_busy + p_idle) / 2 (bottom-up, margin 0)."""
    from tokenomics.econ import power as pw

    a = chain.price("h200", "llama-3.1-8b", "graph", batch=32, context_tok=1024)
    b = chain.price("h200", "llama-3.1-8b", "graph", batch=32, context_tok=1024, utilization_frac=0.5)
    ci = tco.cost_model("h200")
    p_busy, p_idle = float(a.board_power_w), float(pw.power_model("h200").idle_w)
    expect = float(ci.cost_usd_per_chip_h(0.5 * p_busy + 0.5 * p_idle)) / (float(a.tok_per_s_per_chip) * 3600 * 0.5) * 1e3
    assert float(b.price_usd_per_1k_output_tok) == pytest.approx(expect, rel=1e-9)
    assert float(b.price_usd_per_1k_output_tok) < 2 * float(a.price_usd_per_1k_output_tok)


def test_tier_cost_uses_preset_value():
    """tco_params.csv: H200 hyperscaler-owned 2025-08 is 1.41 USD per GPU-hour."""
    r = chain.price("h200", "llama-3.1-8b", "graph", batch=32, context_tok=1024, cost="hyperscaler-owned")
    assert float(r.cost_usd_per_chip_h) == 1.41
    r2 = chain.price("h200", "llama-3.1-8b", "graph", batch=32, context_tok=1024, cost=2.5)
    assert float(r2.cost_usd_per_chip_h) == 2.5


def test_bottom_up_overrides():
    r = chain.price("h200", "llama-3.1-8b", "graph", batch=32, context_tok=1024, wacc_frac=0.0,
                    capex_usd=87_600 * 4)
    # capital = 350,400 / 4 y / 8760 h = 10 USD/h (r = 0)
    assert r.cost_breakdown_usd_per_chip_h["capital_usd_per_chip_h"] == pytest.approx(10.0)


def test_workloads_and_default_context():
    """workloads.csv (InferenceX): reasoning is 1024 in / 8192 out; default decode context = 1024 + 4096."""
    r = chain.price("h200", "llama-3.1-8b", "graph", batch=8, workload="reasoning")
    assert (r.input_tok, r.output_tok) == (1024, 8192)
    assert float(r.context_tok) == 1024 + 4096
    p = pricing.blended_usd_per_1k_tok(r.price_usd_per_1k_input_tok, r.price_usd_per_1k_output_tok, 1024, 8192)
    assert float(r.price_usd_per_1k_blended_tok) == pytest.approx(float(p))


def test_cost_per_token_varies_more_than_10x_along_frontier():
    """InferenceX: cost per token varies 10-20x along the Pareto curve; the measured H200 decode
    (178 -> 10,637 tok/s from batch 1 to 128 at 395-607 W) already spans > 10x, so must the model."""
    f = chain.frontier("h200", "llama-3.1-8b", "graph", context_tok=1024)
    p = f.price_usd_per_1k_output_tok[np.isfinite(f.price_usd_per_1k_output_tok)]
    assert p.max() / p.min() > 10


def test_price_at_interactivity_monotone():
    df = chain.price_at_interactivity("h200", "llama-3.1-8b", "graph", tok_per_s_per_user=[20, 60, 120],
                                      context_tok=1024)
    p = df.usd_per_m_output_tok.to_numpy()
    assert np.all(np.diff(p) > 0)  # faster per user costs more


def test_price_at_interactivity_is_the_target_price():
    """A speed per user is priced one way: price_at_interactivity gives what
    ``price(target_tok_per_s_per_user=...)`` (``tokenomics price --target-tok-s-user``) gives, the
    most requests in flight and the layout that serve every user at least that fast (co-located by
    default, as price). Llama-3.1-70B FP8 on the H200: the resolver's one-chip layout tops out
    below 50 tok/s per user (its batch sweep gave NaN there before); a layout of a DGX H200 reaches it."""
    df = chain.price_at_interactivity("h200", "llama-3.1-70b", "engine", tok_per_s_per_user=[50.0, 1e5],
                                      weight_precision="fp8")
    one = chain.frontier("h200", "llama-3.1-70b", "engine", weight_precision="fp8")
    assert np.nanmax(one.tok_per_s_per_user) < 50  # the one-chip sweep cannot serve 50 tok/s per user
    want = chain.price("h200", "llama-3.1-70b", "engine", target_tok_per_s_per_user=50.0, weight_precision="fp8")
    got = df.iloc[0]
    assert got.usd_per_m_output_tok == pytest.approx(float(np.ravel(want.usd_per_m_output_tok)[0]))
    assert got.deployment == want.deployment.layout_label() and got.deployment.startswith("dgx-h200 ")
    assert got.served_tok_per_s_per_user >= 50
    far = df.iloc[1]  # no layout serves 100,000 tok/s per user: NaN, not an error
    assert np.isnan(far.usd_per_m_output_tok) and far.deployment == ""


def test_does_not_fit_and_unknown_names():
    with pytest.raises(DoesNotFitError):
        chain.price("h200", "kimi-k3", "graph", system="dgx-h200", batch=1, context_tok=1024)
    with pytest.raises(TokenomicsError, match="Unknown workload"):
        chain.price("h200", "llama-3.1-8b", "graph", workload="chatt")
    with pytest.raises(ValidationError, match="did you mean 0.6"):
        chain.price("h200", "llama-3.1-8b", "graph", utilization_frac=60)


def test_system_without_multichip_model_or_unknown():
    with pytest.raises(TokenomicsError):
        chain.price("h200", "llama-3.1-8b", "graph", system="no-such-system")


def test_disaggregated_b200_prefill_h200_decode():
    r = chain.disaggregated("b200", "h200", "llama-3.1-8b", "graph")
    df = r.to_frame()
    assert len(df) == 3
    # reasoning (1k/8k) needs far fewer prefill chips per decode chip than summarization (8k/1k)
    assert df.instance_ratio.iloc[1] < df.instance_ratio.iloc[2]
    assert len(r.what_must_be_true().splitlines()) == 3
    with pytest.raises(ValidationError, match="bottom-up"):
        chain.disaggregated("b200", "h200", "llama-3.1-8b", cost_prefill="hyperscaler-owned")


def test_tdp_scaled_power_for_other_chips():
    r = chain.price("b200", "llama-3.1-8b", "graph", batch=32, context_tok=1024)
    assert 0 < float(r.board_power_w) <= 1000.0
    assert isinstance(tco.cost_model("b200"), tco.CostInputs)


def test_system_pricing_per_chip():
    """Multi-chip: tokens/s per chip = replica tokens/s / chips (8 x H200, llama-3.1-8b, tp 8)."""
    r = chain.price("h200", "llama-3.1-8b", "graph", batch=32, context_tok=1024, system="dgx-h200",
                    cost="hyperscaler-owned@2026-07", tp=8)
    assert r.n_chips == 8 and r.hardware == "h200"
    assert r.to_frame()[["tp", "ep", "replica_chips"]].iloc[0].tolist() == [8, 1, 8]
    assert float(r.cost_usd_per_chip_h) == 1.22  # tco_params.csv, InferenceX Jul-2026 survey
    assert float(r.tok_per_s_per_chip) == pytest.approx(32 * float(r.tok_per_s_per_user) / 8)


def test_system_without_price_needs_flat_cost():
    with pytest.raises(TokenomicsError, match="flat USD per chip-hour"):
        chain.price(None, "kimi-k3", "super", batch=8, context_tok=4096, system="sd200-ultra")
    r = chain.price(None, "kimi-k3", "super", batch=8, context_tok=4096, system="sd200-ultra", cost=2.0)
    assert float(r.cost_usd_per_chip_h) == 2.0 and r.n_chips >= 16


def test_moe_target_speed_considers_attention_tensor_parallel_over_the_expert_group():
    """A wide-EP MoE deployment (attention data-parallel) gets, for a target speed, attention
    tensor-parallel in groups of t chips inside the expert group (t = 2, 4, ... up to the whole
    group, where the heads divide t and t divides the group; attention data-parallel over the
    rest). DeepSeek-V3 on a DGX H200: at 35 tok/s per user the full-TP layout serves more tokens
    per chip (no all-to-all, no rank waiting on another's prompt), at DeepSeek's own 21 tok/s wide
    EP does (its batch is large); on a GB200 NVL72 (EP72: 128 heads do not split 72 ways) the
    groups stop at 8. The price names the layout it priced."""
    from tokenomics.deployment import layout_candidates, resolve

    h200 = resolve("deepseek-v3", system="dgx-h200")
    cands = layout_candidates(h200)
    assert [(c.parallel.tp, c.parallel.ep, int(c.parallel.attn_dp)) for c in cands] == [
        (1, 8, 8), (2, 8, 4), (4, 8, 2), (8, 8, 1)]
    assert any("attention tensor-parallel over the expert group" in p for p in cands[-1].picked)
    assert any("attention tensor-parallel in groups of 4, data-parallel over 2" in p for p in cands[2].picked)
    nvl = layout_candidates(resolve("deepseek-v3", system="gb200-nvl72"))
    assert [(c.parallel.tp, c.parallel.ep) for c in nvl][:4] == [(1, 72), (2, 72), (4, 72), (8, 72)]
    fast = chain.price(deployment=h200, target_tok_per_s_per_user=35, margin_frac=0.0, serving="decode")
    slow = chain.price(deployment=h200, target_tok_per_s_per_user=21, margin_frac=0.0, serving="decode")
    assert (fast.deployment.parallel.tp, fast.deployment.parallel.ep) == (8, 8)
    assert (slow.deployment.parallel.tp, slow.deployment.parallel.ep) == (1, 8)
    stated = resolve("deepseek-v3", system="dgx-h200", tp=1, ep=8)  # a layout the user chose is kept
    kept = chain.price(deployment=stated, target_tok_per_s_per_user=35, margin_frac=0.0, serving="decode")
    assert (kept.deployment.parallel.tp, kept.deployment.parallel.ep) == (1, 8)
    assert float(np.ravel(kept.usd_per_m_output_tok)[0]) > float(np.ravel(fast.usd_per_m_output_tok)[0])


def test_smaller_expert_groups_serve_a_speed_the_whole_rack_cannot():
    """DeepSeek-V3 on a GB200 NVL72: the fastest 72-chip expert group (tp8-ep72) serves one user
    95 tok/s, so 100 tok/s per user used to be refused. Smaller expert groups that divide the rack
    (ep 36, 24, 18, 12, 9, 8, 6, 4: no chip idle) are candidates now, each with its attention
    groups, and nine tp8-ep8 replicas (the layout InferenceX's high-interactivity GB200 runs use)
    serve it at batch 2. Kimi K3 at 50 tok/s is refused in one line that names the fastest of the
    13 layouts that hold its weights (tp8-ep72, 49.3 tok/s at batch 1, measured with this model)
    and points to speculative decoding."""
    from tokenomics.deployment import layout_candidates, resolve

    nvl = layout_candidates(resolve("deepseek-v3", system="gb200-nvl72"))
    groups = sorted({int(c.parallel.ep) for c in nvl}, reverse=True)
    assert groups == [72, 36, 24, 18, 12, 9, 8, 6, 4] and all(72 % g == 0 for g in groups)
    r = chain.price(model="deepseek-v3", system="gb200-nvl72", target_tok_per_s_per_user=100, margin_frac=0.0, serving="decode")
    assert (r.deployment.parallel.tp, r.deployment.parallel.ep) == (8, 8)
    assert float(np.ravel(r.tok_per_s_per_user)[0]) >= 100
    assert "tp8-ep8 (9 replicas)" in r.deployment.picked[-1]
    eight = resolve("deepseek-v3", system="gb200-nvl72", tp=8, ep=8)
    assert eight.expert_balance == "none"  # re-derived for EP8 (< 32), not the rack's EPLB
    with pytest.raises(TargetSpeedError, match=r"any of the 13 layouts tried \(gb200-nvl72\); the fastest is "
                                               r"49\.3 tok/s per user at batch 1 \(kimi-k3 on gb200-nvl72 tp8-ep72"):
        chain.price(model="kimi-k3", system="gb200-nvl72", target_tok_per_s_per_user=50, margin_frac=0.0, serving="decode")


def test_an_all_reduce_algorithm_the_user_set_travels_to_every_candidate_layout():
    """Re-resolved layouts (smaller expert groups, larger systems of the chip) keep the user's
    all-reduce algorithm like the other collectives settings; they used to fall back to the
    implementation's default."""
    from tokenomics.deployment import layout_candidates, on_larger_systems, resolve

    nvl = layout_candidates(resolve("deepseek-v3", system="gb200-nvl72", ar_algo="ring"))
    assert len(nvl) == 25 and {c.ar_algo for c in nvl} == {"ring"}
    larger = on_larger_systems(resolve("llama-3.1-8b", hardware="h200", ar_algo="tree"))
    assert larger and {c.ar_algo for c in larger} == {"tree"}


def test_layout_options_lists_what_the_target_search_weighs():
    """chain.layout_options prices every layout the target-speed search weighs at its own cheapest
    batch: DeepSeek-V3 on a GB200 NVL72 at 100 tok/s per user has two layouts fast enough (nine
    tp8-ep8 replicas at batch 2, the one price picks, and eighteen tp4-ep4 at batch 1) and 23 too
    slow ones, each with its speed at batch 1; a layout the user gave is the only row. The CLI's
    --layouts prints the same table."""
    opts = chain.layout_options(model="deepseek-v3", system="gb200-nvl72", target_tok_per_s_per_user=100,
                                margin_frac=0.0)
    picked = chain.price(model="deepseek-v3", system="gb200-nvl72", target_tok_per_s_per_user=100, margin_frac=0.0,
                         serving="decode")
    assert len(opts) == 25 and opts["status"].iloc[0] == "cheapest"
    top = opts.iloc[0]
    assert top["deployment"] == picked.deployment.layout_label() and top["batch"] == 2
    assert top["usd_per_m_output_tok"] == pytest.approx(float(np.ravel(picked.usd_per_m_output_tok)[0]))
    assert opts["usd_per_m_output_tok"].notna().sum() == 2 and (opts["tok_per_s_per_user"].dropna() >= 100).all()
    slow = opts[opts["deployment"] == "gb200-nvl72 tp8-ep72-pp1"].iloc[0]
    assert slow["status"] == "too slow: 95.4 tok/s per user at batch 1" and np.isnan(slow["usd_per_m_output_tok"])
    given = chain.layout_options(model="deepseek-v3", system="gb200-nvl72", tp=8, ep=8, target_tok_per_s_per_user=35)
    assert len(given) == 1 and given["status"].iloc[0] == "cheapest"
    from typer.testing import CliRunner

    from tokenomics.cli import app

    r = CliRunner().invoke(app, ["price", "--system", "gb200-nvl72", "-m", "deepseek-v3", "--target-tok-s-user", "100",
                                 "--layouts", "--format", "csv"])
    assert r.exit_code == 0, r.output
    import io

    import pandas as pd

    cli = pd.read_csv(io.StringIO(r.output))
    assert list(cli["deployment"][:2]) == list(opts["deployment"][:2]) and cli["status"].iloc[0] == "cheapest"


def test_a_speed_only_attention_groups_reach_is_priced_not_refused():
    """Kimi K3 on a GB200 NVL72 at 40 tok/s per user: wide EP with attention data-parallel tops out
    at ~30 tok/s per user (every chip reads all ~28 B dense attention parameters in BF16), and 96
    heads do not split 72 ways, so before the attention groups this target was refused. Attention
    tensor-parallel in groups of 8 (data-parallel over 9) reaches it at batch 270 for 4.78 USD per
    M output tokens (measured with this model, 2026-12-05), the layout SGLang's --tp with --dp or
    TensorRT-LLM's attention TP inside EP run. Llama 4 Maverick on a DGX H200 at 35 tok/s: groups
    of 4 beat the full-TP layout the market priced before (1.27 USD per M output tokens)."""
    k3 = chain.price(model="kimi-k3", system="gb200-nvl72", target_tok_per_s_per_user=40, workload="chat",
                     margin_frac=0.0, serving="decode")
    assert (k3.deployment.parallel.tp, k3.deployment.parallel.ep, int(k3.deployment.parallel.attn_dp)) == (8, 72, 9)
    assert float(np.ravel(k3.tok_per_s_per_user)[0]) >= 40
    assert float(np.ravel(k3.usd_per_m_output_tok)[0]) == pytest.approx(4.78, rel=0.01)
    assert "groups of 8, data-parallel over 9" in k3.deployment.picked[-1]
    mav = chain.price(model="llama-4-maverick", system="dgx-h200", target_tok_per_s_per_user=35, workload="chat",
                      margin_frac=0.0, serving="decode")
    assert (mav.deployment.parallel.tp, mav.deployment.parallel.ep) == (4, 8)
    assert float(np.ravel(mav.usd_per_m_output_tok)[0]) == pytest.approx(1.27, rel=0.01)


def test_a_fast_target_looks_beyond_the_smallest_system_the_resolver_picked():
    """Llama 3.1 8B fits one H200, whose only layout (tp1) tops out at ~192 tok/s per user: a
    300 tok/s target is met on the chip's larger system (DGX H200, tp8: ~437 at batch 1) and
    the result says it picked that system. A named system stays the user's: on one chip's worth
    of layouts the target fails with the fastest speed reachable."""
    from tokenomics.chain import price
    from tokenomics.errors import ValidationError

    r = price("h200", "llama-3.1-8b", target_tok_per_s_per_user=300, serving="decode")
    dep = r.deployment
    assert dep.system.name == "dgx-h200" and dep.parallel.tp >= 4
    assert float(np.min(r.tok_per_s_per_user)) >= 300
    assert any(p.startswith("system dgx-h200") for p in dep.picked)
    with pytest.raises(ValidationError, match="the fastest is 43"):
        price("h200", "llama-3.1-8b", target_tok_per_s_per_user=1000, serving="decode")
    # a slower target that the single chip meets is still priced at the cheapest layout per chip
    slow = price("h200", "llama-3.1-8b", target_tok_per_s_per_user=50, serving="decode")
    assert float(np.min(slow.tok_per_s_per_user)) >= 50
