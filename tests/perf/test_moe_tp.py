"""Experts split both by expert and inside each expert under attention data parallelism
(``ParallelPlan.moe_tp``, stop 49): TensorRT-LLM's ``moe_tp_size`` x ``moe_ep_size`` and the split
of Inferact's Kimi K3 latency kernel (attention TP32, experts EP8 x TP4)."""

import pandas as pd
import pytest

from tokenomics import catalog
from tokenomics.deployment import resolve
from tokenomics.errors import ValidationError
from tokenomics.perf.parallel import ParallelPlan, memory_per_chip
from tokenomics.perf.system import expert_load, expert_skew_s, forward_comm_s, system_step
from tokenomics.validate import serving_cases as SC
from tokenomics.perf.parallel import system

K3 = catalog.model("kimi-k3")


def test_plan_shape_hand():
    p = ParallelPlan(tp=32, ep=32, moe_tp=4)
    # 32 x 4 = 128 chips a stage: 4 attention groups of TP32, each expert on 4 chips
    assert (p.stage_chips, p.attn_dp, p.expert_tp) == (128, 4, 4)
    assert p.label() == "tp32-ep32x4-pp1-dp1" and p.to_dict()["moe_tp"] == 4
    # the split tp and ep already imply is the default plan, not a new one
    assert ParallelPlan(tp=8, ep=4, moe_tp=2) == ParallelPlan(tp=8, ep=4)
    assert ParallelPlan(tp=8, ep=4).expert_tp == 2 and ParallelPlan(tp=1, ep=8).expert_tp == 1


def test_plan_rejects_a_group_that_is_not_whole_attention_groups():
    with pytest.raises(ValidationError, match="must be a multiple of tp=8"):
        ParallelPlan(tp=8, ep=2, moe_tp=2)
    with pytest.raises(ValidationError, match="moe_tp"):
        ParallelPlan(tp=1, ep=2, moe_tp=0)


def test_weights_per_chip_same_bytes_split_differently_hand():
    # 896 experts: EP128 = 7 whole experts a chip; EP32 x TP4 = 28 quarter-experts: the same bytes
    whole = memory_per_chip(K3, ParallelPlan(tp=32, ep=128), 1, 8192)["weights_bytes"]
    split = memory_per_chip(K3, ParallelPlan(tp=32, ep=32, moe_tp=4), 1, 8192)["weights_bytes"]
    assert split == pytest.approx(whole)
    routed = 92 * 896 * 3 * 3072 * 3584 * 4.25 / 8
    dense = (K3.total_params() - 92 * 896 * 3 * 3072 * 3584) * 2
    assert split == pytest.approx(dense / 32 + routed / 128)


def test_busiest_chip_reads_its_experts_slices_hand():
    """At one user the busiest of EP128's chips reads E[max] whole experts; under EP32 x TP4 the
    busiest of 32 expert groups reads E[max] experts of which each chip holds a quarter."""
    s = system("sd200-ultra")
    kw = dict(batch=1, context_tok=8192, ar_impl="custom_oneshot", overlap="tile")
    r128 = system_step(s, K3, "super", ParallelPlan(tp=32, ep=128), **kw)
    r32 = system_step(s, K3, "super", ParallelPlan(tp=32, ep=32, moe_tp=4), **kw)
    per_expert_s = 92 * K3.expert_params() * 4.25 / 8 / (s.accelerator.hbm_bytes_per_s * r128.core.profile.weight_bw_frac)
    m128, x128 = expert_load(K3, 1, 128)
    m32, x32 = expert_load(K3, 1, 32)
    # (the rest of imbalance_s is the routing skew of the busiest chip's expert GEMMs)
    read128 = float(r128.imbalance_s) - float(expert_skew_s(r128.core, K3, 128))
    read32 = float(r32.imbalance_s) - float(expert_skew_s(r32.core, K3, 32))
    assert read128 == pytest.approx(float(x128 - m128) * per_expert_s, rel=1e-9)
    assert read32 == pytest.approx(float(x32 - m32) / 4 * per_expert_s, rel=1e-9)
    # the core reads the same mean expert bytes a chip either way
    assert float(r32.core.step_time_s) == pytest.approx(float(r128.core.step_time_s), rel=1e-9)


def test_dispatch_reaches_every_slice_hand():
    """Each (token, expert) pair is sent to the expert's moe_tp slices and each slice returns a
    partial output: the all-to-all carries moe_tp times the bytes of whole experts."""
    from tokenomics.perf import comm

    s = system("sd200-ultra")
    kw = dict(attn_group_tok=8.0, stage_tok=32.0, logit_rows=8.0, ar_impl="custom_oneshot")
    c1 = forward_comm_s(K3, ParallelPlan(tp=32, ep=128), s, **kw)
    c4 = forward_comm_s(K3, ParallelPlan(tp=32, ep=32, moe_tp=4), s, **kw)
    tok_chip = 32.0 / 128
    expect = 92 * sum(comm.collective_time_s("all_to_all", tok_chip * 16 * 4 * 3584 * b, 128, s, "custom_oneshot")
                      for b in (2, 1))  # combine BF16, dispatch FP8
    assert float(c4["all_to_all_s"]) == pytest.approx(expect, rel=1e-9)
    assert float(c4["all_to_all_s"]) >= float(c1["all_to_all_s"])


def test_resolve_and_serving_row_take_moe_tp():
    d = resolve("gpt-oss-120b", hardware="b200", tp=1, ep=2, moe_tp=2, engine="trt")
    assert d.parallel.stage_chips == 4 and d.parallel.attn_dp == 4 and d.parallel.expert_tp == 2
    assert "tp1-ep2x2-pp1 (2 replicas)" in d.label()
    with pytest.raises(ValidationError, match="give tp and ep"):
        resolve("gpt-oss-120b", hardware="b200", moe_tp=2)
    # AIConfigurator's "attention TP1 x DP4, MoE TP2 x EP2" row: the group is 4 GPUs, experts 2 x 2
    rows = catalog.load("serving_aic_sample")
    row = rows[rows["case_id"] == "M2472"].iloc[0]
    assert "MoE TP2 x EP2" in row["note"] and (int(row["ep"]), int(row["moe_tp"])) == (2, 2)
    dep = SC.case_deployment(row)
    assert (dep.parallel.tp, dep.parallel.ep, dep.parallel.expert_tp, dep.parallel.attn_dp) == (1, 2, 2, 4)
    # without the column the same row is expert-parallel over the 4 GPUs
    plain = SC.case_deployment(pd.Series({**row.to_dict(), "moe_tp": float("nan"), "ep": 4}))
    assert (plain.parallel.ep, plain.parallel.expert_tp) == (4, 1)


def test_cli_moe_tp_needs_a_layout(capsys):
    from tokenomics.cli import main

    with pytest.raises(SystemExit) as exc:
        main(["price", "-m", "gpt-oss-120b", "-H", "b200", "--moe-tp", "2"])
    err = capsys.readouterr().err.strip()
    assert exc.value.code == 2 and "give tp and ep" in err and len(err.splitlines()) == 1


def test_serving_row_with_a_fractional_moe_tp_is_one_line_exit_2(tmp_path, capsys):
    from tokenomics.cli import main

    path = tmp_path / "cases.csv"
    path.write_text("case_id,phase,hardware,model,weight_precision,kv_precision,engine,n_gpus,tp,ep,dp_attention,"
                    "disaggregated,spec_decode,isl_tok,osl_tok,concurrency,measured_output_tok_per_s_per_gpu,moe_tp\n"
                    "A1,serve,b200,gpt-oss-120b,fp4,,trt,4,1,2,1,0,none,1024,1024,16,500,2.5\n")
    with pytest.raises(SystemExit) as exc:
        main(["validate-serving", str(path)])
    err = capsys.readouterr().err.strip()
    assert exc.value.code == 2 and "moe_tp=2.5" in err and len(err.splitlines()) == 1
