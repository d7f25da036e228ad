"""Systems, parallel plans, per-chip memory fit, system_step and the frontier."""

import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from tokenomics import catalog
from tokenomics.errors import DoesNotFitError, UnknownNameError, ValidationError
from tokenomics.perf import decode_step
from tokenomics.perf.frontier import frontier, pareto_mask, parallel_plans
from tokenomics.validate.mlperf import mlperf_check
from tokenomics.perf.parallel import (ParallelPlan, System, check_fit, check_plan, max_batch_per_replica,
                                      memory_per_chip, system, system_names)
from tokenomics.perf.speculative import SpecDecode
from tokenomics.perf.system import (collective_counts, expected_experts_touched, expert_load,
                                    forward_hbm_bytes, system_step)

K3 = catalog.model("kimi-k3")


def test_catalog_has_the_issue_systems():
    names = set(system_names())
    for n in ["dgx-h100", "dgx-h200", "dgx-b200", "gb200-nvl72", "gb300-nvl72", "tpu-v7-16",
              "tpu-v7-64", "tpu-v7-256", "cloudmatrix-384", "sd200-ultra", "generic-supernode-128"]:
        assert n in names
    # article: SD200 Ultra 128 chips x 64 GB = 8 TB unified memory (claimed)
    sd = system("sd200-ultra")
    assert sd.n_chips == 128 and sd.hbm_bytes_total == pytest.approx(sd.unified_memory_bytes, rel=0.03)


@pytest.mark.parametrize(
    "name, p, hops",
    [
        ("tpu-v7-16", 16, 1 + 1 + 3),   # 2x2x4 mesh: sum(d - 1)
        ("tpu-v7-16", 8, 1 + 1 + 1),    # 2x2x2 block
        ("tpu-v7-64", 64, 2 + 2 + 2),   # 4x4x4 torus: sum(d // 2)
        ("sd200-ultra", 128, 3),        # hyper mesh: one hop per dimension
        ("gb200-nvl72", 72, 1),         # switch
    ],
)
def test_diameter_hand(name, p, hops):
    assert system(name).diameter_hops(p) == hops


def test_groups_that_do_not_tile_the_grid_fail():
    with pytest.raises(ValidationError, match="does not tile"):
        system("tpu-v7-16").group_dims(3)


def test_unknown_topology_and_system():
    acc = catalog.accelerator("h200")
    with pytest.raises(UnknownNameError, match="topology"):
        System("x", acc, 8, topology="ring", link_bytes_per_s=1e11)
    with pytest.raises(UnknownNameError, match="Did you mean 'dgx-h200'"):
        system("dgx-h20")


def test_plans_that_do_not_divide_the_model_or_chips():
    s = system("tpu-v7-16")
    with pytest.raises(ValidationError, match="96 attention heads"):
        check_plan(K3, ParallelPlan(tp=5, ep=5))
    with pytest.raises(ValidationError, match="896 routed experts"):
        check_plan(K3, ParallelPlan(tp=1, ep=1024))
    check_plan(K3, ParallelPlan(tp=1, ep=5))  # 180 slots per chip, 4 redundant (EPLB-style)
    with pytest.raises(ValidationError, match="must nest"):
        ParallelPlan(tp=4, ep=6)
    with pytest.raises(ValidationError, match="dense"):
        check_plan(catalog.model("llama-3.1-70b"), ParallelPlan(tp=8, ep=8))
    with pytest.raises(ValidationError, match="more than tpu-v7-16's 16"):
        check_plan(K3, ParallelPlan(tp=32, ep=32), s)


def test_kimi_k3_architecture_matches_its_checkpoint():
    # moonshotai/Kimi-K3 weight shapes (datasets/models.csv source): routed experts
    # 92 x 896 x 3 x 3072 x 3584; 69 KDA layers q/k/v/o/g 5 x 7168 x 12288 and b 96 x 7168,
    # f_a 128 x 7168, f_b 12288 x 128; 24 MLA layers
    # q_a 7168x1536, q_b 1536x18432, kv_a 7168x576, kv_b 512x24576, o and g 12288x7168;
    # dense layer 0: 3 x 7168 x 33792; shared 92 x 3 x 7168 x 6144; latent 92 x 2 x 7168 x 3584;
    # router 92 x 896 x 7168; embedding + lm head 2 x 163840 x 7168
    routed = 92 * 896 * 3 * 3072 * 3584
    kda = 69 * (5 * 7168 * 12288 + 96 * 7168 + 128 * 7168 + 12288 * 128)
    mla = 24 * (7168 * 1536 + 1536 * 18432 + 7168 * 576 + 512 * 24576 + 2 * 12288 * 7168)
    rest = 3 * 7168 * 33792 + 92 * 3 * 7168 * 6144 + 92 * 2 * 7168 * 3584 + 92 * 896 * 7168 + 2 * 163840 * 7168
    assert K3.total_params() == routed + kda + mla + rest  # 2.78 T (the article: 2.8 T)
    assert K3.total_params() == pytest.approx(2.8e12, rel=0.01)
    # stored: routed experts MXFP4 (4.25 bits with the group-32 scales), everything else BF16;
    # the checkpoint is 1.561 TB (InferenceX: "1.561 TB decimal, 96 safetensors"), the vision
    # tower and norms (~1 GB) included
    stored = routed * 4.25 / 8 + (kda + mla + rest) * 2
    assert float(forward_hbm_bytes(K3, batch=1e7, context_tok=0)) == pytest.approx(stored - 163840 * 7168 * 2)
    assert stored == pytest.approx(1.561e12, rel=0.005)


def test_hybrid_linear_attention_ops_hand():
    from tokenomics.perf.ops import build_ops
    from tokenomics.specs import plan

    ops = {o.name: o for o in build_ops(K3, plan("graph"), batch=2, context_tok=1000)}
    # 69 KDA layers read and write each sequence's 96 x 128 x 128 FP32 state once per step,
    # whatever the context; the 24 MLA layers read the 576-element latent of every cached token
    lin = ops["linear attention"]
    assert lin.count == 69 and float(lin.kv_bytes) == pytest.approx(2 * 96 * 128 * 128 * 4 * 2)
    att = ops["attention"]
    assert att.count == 24 and float(att.kv_bytes) == pytest.approx(2 * (1000 + 1) * 576 * 2)
    # LatentMoE: routed experts in the 3,584 latent (16 of 896 per token), behind 7168 -> 3584
    # and back projections in every MoE layer
    assert ops["latent down"].count == 92 and float(ops["latent down"].weight_bytes) == pytest.approx(7168 * 3584 * 2)
    assert float(K3.expert_params()) == 3 * 3584 * 3072
    # the draft module of a hybrid is a full-attention layer (as MTP layers are)
    assert SpecDecode("mtp", 1, 0.875, 1).draft_model(K3).n_linear_layers == 0


def test_weights_per_chip_hand():
    # tp = ep = 16: every weight split 16 ways, routed experts at MXFP4, the rest at BF16
    m = memory_per_chip(K3, ParallelPlan(tp=16, ep=16), batch=1, context_tok=8192)
    routed = 92 * 896 * 3 * 3072 * 3584 * 4.25 / 8
    dense = (K3.total_params() - 92 * 896 * 3 * 3072 * 3584) * 2
    assert m["weights_bytes"] == pytest.approx((routed + dense) / 16)
    # KV: the 24 MLA layers' latent (576 elements x 2 B x 8192 tokens, not split by TP) plus
    # the 69 KDA layers' state (96 heads x 128 x 128 x 4 B, FP32, split over the 16 TP ranks)
    assert float(m["kv_bytes"]) == pytest.approx(576 * 2 * 24 * 8192 + 69 * 96 * 128 * 128 * 4 / 16)


def test_kimi_k3_does_not_fit_one_dgx_h100():
    # 1.56 TB > 8 x 80 GB
    with pytest.raises(DoesNotFitError, match="does not fit per chip"):
        check_fit(K3, system("dgx-h100"), ParallelPlan(tp=8, ep=8), batch=1, context_tok=8192)


def test_max_batch_hand():
    s = system("tpu-v7-16")
    par = ParallelPlan(tp=16, ep=16)
    mem = memory_per_chip(K3, par, 1, 8192)
    free = s.accelerator.hbm_bytes * 0.9 - mem["weights_bytes"]
    assert max_batch_per_replica(K3, s, par, 8192) == math.floor(free / float(mem["kv_bytes_per_seq"]))


def test_collective_counts_kimi_k3_attention_dp():
    # tp8 inside ep128 (attention data-parallel over 16 groups): 93 layers with one all-reduce
    # after attention each + one more in the dense first layer; dispatch + combine in each of the
    # 92 MoE layers (the article: 'more than 120 all-to-alls'); LatentMoE under TP gathers the
    # latent and the hidden state in each MoE layer (2 x 92) besides the logits
    c = collective_counts(K3, ParallelPlan(tp=8, ep=128, pp=2))
    assert c == {"allreduce": 94, "all_to_all": 184, "allgather": 185, "p2p": 1}


def test_collective_counts_replicated_tokens():
    # attention TP over the whole EP group: every chip holds every token after the attention
    # all-reduce, so a MoE layer is a local expert pass + one all-reduce of the outputs (TensorRT-LLM
    # min-latency DeepSeek-R1: 'localReduction, oneshotAllReduce', tech blog 1): 93 x 2 all-reduces,
    # no all-to-all; TP-sharded experts (ep 1) reduce the same way
    c = collective_counts(K3, ParallelPlan(tp=16, ep=16, pp=2))
    assert c == {"allreduce": 186, "all_to_all": 0, "allgather": 185, "p2p": 1}
    assert collective_counts(K3, ParallelPlan(tp=16, ep=1)) == {"allreduce": 186, "all_to_all": 0,
                                                                 "allgather": 185, "p2p": 0}
    # a dense model: attention + MLP all-reduce per layer, whatever ep says
    from tokenomics.catalog import model
    m = model("llama-3.1-70b")
    assert collective_counts(m, ParallelPlan(tp=8, ep=1))["allreduce"] == 2 * m.n_layers
    # no latent: only the logits are gathered; one chip gathers nothing
    assert collective_counts(model("deepseek-v3"), ParallelPlan(tp=8, ep=8))["allgather"] == 1
    assert collective_counts(K3, ParallelPlan(tp=1, ep=16))["allgather"] == 0


def test_latent_gathers_are_timed_per_moe_layer():
    """Hand: with tp > 1 a LatentMoE forward adds, per MoE layer, an all-gather of the 3,584-wide
    latent and one of the 7,168-wide hidden state of the attention group's rows."""
    from tokenomics.perf import comm
    from tokenomics.perf.system import forward_comm_s

    s = system("tpu-v7-16")
    par = ParallelPlan(tp=16, ep=16)
    c = forward_comm_s(K3, par, s, attn_group_tok=8.0, stage_tok=8.0, logit_rows=8.0, ar_impl="ici_xla")
    ag = lambda n: float(comm.collective_time_s("allgather", n, 16, s, "ici_xla"))  # noqa: E731
    want = ag(8 * 163840 * 2) + 92 * (ag(8 * 3584 * 2) + ag(8 * 7168 * 2))
    assert float(c["allgather_s"]) == pytest.approx(want)


def test_expert_load_hand():
    mean, mx = expert_load(K3, 1, 1)        # one chip holds all 896: max = mean = 16
    assert float(mean) == pytest.approx(16.0) and float(mx) == pytest.approx(16.0, rel=1e-6)
    mean, mx = expert_load(K3, 1, 128)      # 7 experts per chip, q = 16/896
    assert float(mean) == pytest.approx(7 * 16 / 896)
    assert 1.0 <= float(mx) < 2.0           # some chip reads at least one whole expert



def test_expected_max_binom_skips_only_terms_of_one():
    """The busiest chip's expected experts skip the counts whose term rounds to 1.0 (far below the
    mean): every value equals the full sum's to the bit, on grids of batches ascending and not."""
    from tokenomics.perf import system
    from tokenomics.perf.ops import expected_distinct_experts

    def full(per, q, ep):
        j = np.arange(1, per + 1).reshape(-1, 1)
        return np.sum(1 - system._binom_cdf(j - 1, per, q) ** ep, axis=0)

    rng = np.random.default_rng(5)
    grid = np.unique(np.concatenate([np.arange(1, 65), np.round(np.geomspace(64, 6000, 96))]))
    for n, k in ((256, 8), (896, 16), (160, 6)):
        for ep in (2, 4, 8, 9, 12, 18, 32):
            for b in (grid, np.arange(500.0, 640.0), rng.uniform(1, 3000, 120), np.geomspace(1, 1e5, 150)):
                q = expected_distinct_experts(b, n, k) / n
                got, want = system._expected_max_binom(n // ep, q, ep), full(n // ep, q, ep)
                assert np.array_equal(got.view(np.int64), want.view(np.int64))

def test_forward_hbm_bytes_hand_and_article():
    # huge batch: every weight read once except the embedding table (a gather, not a read)
    full = float(forward_hbm_bytes(K3, batch=1e7, context_tok=0))
    routed = 92 * 896 * 3 * 3072 * 3584
    assert full == pytest.approx(routed * 4.25 / 8 + (K3.total_params() - routed - K3.vocab * K3.hidden) * 2,
                                 rel=1e-6)
    # article (SemiAnalysis): about 1.5 TB per forward pass; tolerance 15 %
    assert full == pytest.approx(1.5e12, rel=0.15)
    assert float(expected_experts_touched(K3, 1)) == pytest.approx(16.0)


def test_single_chip_system_equals_the_core():
    acc = catalog.accelerator("h200")
    one = System("h200-x1", acc, 1, link_bytes_per_s=4.5e11)
    r = system_step(one, "llama-3.1-8b", "graph", ParallelPlan(), batch=np.array([1, 8, 64]),
                    context_tok=2048)
    core = decode_step("h200", "llama-3.1-8b", "graph", batch=np.array([1, 8, 64]), context_tok=2048)
    assert np.allclose(r.step_time_s, core.step_time_s)
    assert float(np.max(r.comm_s)) == 0.0


def test_system_step_parts_add_up_and_spec_counts_draft():
    spec = SpecDecode("dspark", 4, 0.77, 1)
    r = system_step("tpu-v7-16", K3, "megakernel", ParallelPlan(tp=16, ep=16), batch=1,
                    context_tok=8192, spec=spec, ar_impl="custom_oneshot", overlap="prefetch")
    assert float(r.step_time_s) == pytest.approx(float(r.compute_s + r.comm_s - r.overlap_s + r.draft_s))
    assert float(r.draft_s) > 0 and r.tokens_per_step == pytest.approx(spec.tokens_per_step)
    assert float(r.tok_per_s_per_user) == pytest.approx(r.tokens_per_step / float(r.step_time_s))
    # replicated tokens: no dispatch; 186 all-reduces + the logits and 2 x 92 latent all-gathers
    assert r.n_all_to_all == 0 and r.n_allreduce == 186 and r.n_collectives == 371
    assert 0 <= float(r.overlap_s) <= float(r.comm_s)
    df = r.to_frame()
    assert len(df) == 1 and {"step_time_s", "tok_per_s_per_chip", "n_collectives"} <= set(df.columns)


@settings(max_examples=10, deadline=None)
@given(factor=st.floats(1.0, 8.0))
def test_more_link_bandwidth_never_slows_a_step(factor):
    base = system("gb200-16")
    kw = dict(batch=4, context_tok=4096, ar_impl="nccl")
    slow = system_step(base, K3, "engine", ParallelPlan(tp=16, ep=16), **kw)
    fast = system_step(base.replace(link_bytes_per_s=base.link_bytes_per_s * factor), K3, "engine",
                       ParallelPlan(tp=16, ep=16), **kw)
    assert float(fast.step_time_s) <= float(slow.step_time_s) * (1 + 1e-12)


def test_pareto_mask_hand():
    assert pareto_mask(np.array([1, 2, 1]), np.array([1, 2, 3])).tolist() == [False, True, True]


def test_frontier_llama70b_h200(tmp_path):
    f = frontier("dgx-h200", "llama-3.1-70b", "engine", weight_precision="fp8", context_tok=4096)
    fr = f.frontier
    assert len(fr) >= 5
    # along the frontier: faster per user <=> fewer tokens per chip
    assert np.all(np.diff(fr["tok_per_s_per_user"]) > 0)
    assert np.all(np.diff(fr["tok_per_s_per_chip"]) < 0)
    png = f.plot(tmp_path / "f.png")
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert all(p.n_chips == 8 for p in parallel_plans(catalog.model("llama-3.1-70b"), system("dgx-h200")))


def test_frontier_nothing_fits():
    with pytest.raises(DoesNotFitError, match="does not fit"):
        frontier("dgx-h100", K3, "engine", batches=[1, 2])


def test_mlperf_bounds():
    # ../shared/reference/measured_public.csv MLPerf rows: lower bound <= upper bound everywhere,
    # and the 8-GPU Llama-2-70B offline results lie between them
    df = mlperf_check()
    assert len(df) >= 20
    assert (df["lower_tok_per_s"] <= df["upper_tok_per_s"]).all()
    l70 = df[(df["model"] == "llama-2-70b") & (df["scenario"] == "offline") & (df["chips"] == 8)]
    assert l70["bracketed"].all(), l70


@pytest.mark.parametrize("mod", ["tokenomics.perf.comm", "tokenomics.perf.speculative",
                                 "tokenomics.perf.system", "tokenomics.perf.parallel",
                                 "tokenomics.perf.frontier", "tokenomics.perf.serving",
                                 "tokenomics.perf.profile", "tokenomics.perf.step", "tokenomics.perf.engines",
                                 "tokenomics.validate.serving_cases", "tokenomics.econ.disagg"])
def test_docstring_examples_are_true(mod):
    import doctest
    import importlib

    res = doctest.testmod(importlib.import_module(mod))
    assert res.failed == 0


def test_system_prefill_adds_collectives_to_sharded_compute():
    """TTFT = sharded prefill compute + TP all-reduces (2 per layer of the attention group's
    prompt tokens x hidden x 2 B) when tp > 1; with tp = ep = 1 it is the single-chip prefill."""
    from tokenomics.perf import prefill
    from tokenomics.perf.parallel import ParallelPlan
    from tokenomics.perf.system import system_prefill

    one = system_prefill("dgx-h200", "llama-3.1-8b", "engine", ParallelPlan(tp=1, ep=1), prompt_tok=2048)
    ref = prefill("h200", "llama-3.1-8b", "engine", prompt_tok=2048)
    assert float(one.comm_s) == 0.0
    assert float(one.step_time_s) == pytest.approx(float(ref.step_time_s), rel=1e-12)
    tp8 = system_prefill("dgx-h200", "llama-3.1-70b", "engine", ParallelPlan(tp=8, ep=1), prompt_tok=2048,
                         weight_precision="fp8")
    assert float(tp8.comm_s) > 0
    assert float(tp8.step_time_s) == pytest.approx(float(tp8.compute_s + tp8.comm_s), rel=1e-12)


def test_shared_experts_split_over_tp_whatever_the_experts_split():
    """DeepSeek-V3 at TP8 without EP: routed experts are TP-split 8 ways inside each expert, and
    the one shared expert (3 x 7168 x 2048 FP8 per MoE layer) is split 8 ways too, not 64
    (hand: 58 layers x 3 x 7168 x 2048 x 1 B / 8)."""
    from tokenomics.catalog import model
    from tokenomics.perf.ops import build_ops
    from tokenomics.specs import plan

    ds = model("deepseek-v3")
    ops = {o.name: o for o in build_ops(ds, plan("graph"), batch=1, context_tok=1024, tp=8, ep=1,
                                        weight_bytes_per_param=1.0)}
    assert float(ops["shared_expert"].weight_bytes) * ops["shared_expert"].count == pytest.approx(
        58 * 3 * 7168 * 2048 * 1.0 / 8)


def test_expert_imbalance_of_experts_split_over_two_chips_is_halved():
    """The busiest chip's extra expert read: EP8 groups of 112 experts, each expert split over 2
    of the 16 chips, read half an expert per extra expert of its group (expert_load at ep=8)."""
    from tokenomics.perf.system import expert_load

    s = system("tpu-v7-16")
    r = system_step(s, K3, "megakernel", ParallelPlan(tp=16, ep=8), batch=1, context_tok=512,
                    ar_impl="ici_xla", overlap="prefetch")
    mean, emax = expert_load(K3, 1, 8)
    rate = s.accelerator.hbm_bytes_per_s * r.core.profile.weight_bw_frac
    read = 92 * float(emax - mean) * K3.expert_params() / 2 * 4.25 / 8 / rate
    skew = float(r.imbalance_s) - read
    assert read > 0 and skew >= -1e-12
    r16 = system_step(s, K3, "megakernel", ParallelPlan(tp=16, ep=16), batch=1, context_tok=512,
                      ar_impl="ici_xla", overlap="prefetch")
    assert float(r.imbalance_s) < float(r16.imbalance_s)


def test_forward_bytes_follow_the_expert_precision():
    """Every K3 expert touched: the routed experts' bytes move by 92 x 896 x 3 x 3072 x 3584
    params x (0.8542 - 0.53125) B from MXFP4 to the TPU kernel's FP8 gate/up (hand)."""
    from tokenomics.perf.system import forward_hbm_bytes

    a = float(forward_hbm_bytes(K3, batch=1e6, context_tok=0))
    b = float(forward_hbm_bytes(K3, batch=1e6, context_tok=0, expert_precision="fp8-mxfp4"))
    per = (2 * (1 + 2 / 128) + 4.25 / 8) / 3 - 4.25 / 8
    assert b - a == pytest.approx(92 * 896 * 3 * 3072 * 3584 * per, rel=1e-9)


def test_block_draft_costs_one_step_of_the_draft_over_gamma_plus_one_rows():
    """DSpark drafts with kimi-k3-dspark in one 8-row forward (7 drafts + anchor), on the TP16
    chips; a sequential draft would pay 7 one-row steps."""
    s = system("tpu-v7-16")
    kw = dict(ar_impl="ici_xla", overlap="prefetch", context_tok=512)
    spec = SpecDecode.from_acceptance_length(6.0, 7, method="dspark", block=True)
    r = system_step(s, K3, "megakernel", ParallelPlan(tp=16, ep=8), batch=1, spec=spec, **kw)
    rows = SpecDecode("block", 7, spec.alpha, 0)  # a model-free draft: only the 8-row step
    d = system_step(s, "kimi-k3-dspark", "megakernel", ParallelPlan(tp=16), batch=1, spec=rows,
                    check_memory=False, **kw)
    assert float(r.draft_s) == pytest.approx(float(d.step_time_s)) and float(d.draft_s) == 0
    assert r.tokens_per_step == pytest.approx(6.0)
    seq = system_step(s, K3, "megakernel", ParallelPlan(tp=16, ep=8), batch=1,
                      spec=spec.replace(block=False), **kw)
    one = system_step(s, "kimi-k3-dspark", "megakernel", ParallelPlan(tp=16), batch=1,
                      check_memory=False, **kw)
    assert float(seq.draft_s) == pytest.approx(7 * float(one.step_time_s))


def test_muse_spark_matches_its_published_size_and_bytes():
    """Muse Spark 1.2 (816B-A42B; Inferact's musespark/config.py): the computed parameters match
    the name within 1 %, and a batch-1 step on 4 TPU7x chips (8 cores, int4 group-128 experts)
    reads ~7.0 GB per core, the README's figure; the model omits the router's second BF16 half
    (62 x 8192 x 256 x 2 B = 0.26 GB per core), so it lands within 6 % below."""
    from tokenomics.catalog import model

    m = model("muse-spark-1.2")
    assert m.total_params() == pytest.approx(816e9, rel=0.01)
    r = system_step("tpu-v7-16", m, "megakernel", ParallelPlan(tp=4), batch=1, context_tok=256,
                    ar_impl="ici_xla", overlap="prefetch", expert_precision="int4-g128")
    per_core = float(r.hbm_bytes_per_chip) / 2
    assert per_core == pytest.approx(7.0e9 - 62 * 8192 * 256 * 2, rel=0.03)


def test_closing_collectives_are_the_mlp_reductions_and_the_hidden_gather():
    """Hand: under TP16 a K3 forward closes each of its 93 layers with one MLP/MoE all-reduce and
    each MoE layer with the hidden-state gather; the attention all-reduces, the latent gathers and
    the logits gather open or sit inside a layer."""
    from tokenomics.perf import comm
    from tokenomics.perf.system import forward_comm_s

    s = system("tpu-v7-16")
    c = forward_comm_s(K3, ParallelPlan(tp=16, ep=8), s, attn_group_tok=1.0, stage_tok=1.0, logit_rows=1.0,
                       ar_impl="pallas_ici", ar_algo="auto")
    ar = float(comm.collective_time_s("allreduce", 7168 * 2, 16, s, "pallas_ici", "auto"))
    ag = float(comm.collective_time_s("allgather", 7168 * 2, 16, s, "pallas_ici"))
    assert float(c["closing_s"]) == pytest.approx(93 * ar + 92 * ag)
    assert float(c["allreduce_s"]) == pytest.approx(186 * ar)
    # with attention data parallelism the closing collective is the combine all-to-all
    d = forward_comm_s(catalog.model("deepseek-v3"), ParallelPlan(tp=1, ep=8), system("dgx-h100"), attn_group_tok=1.0,
                       stage_tok=8.0, logit_rows=1.0, ar_impl="nccl")
    assert 0 < float(d["closing_s"]) < float(d["all_to_all_s"])


def test_prefetch_hides_only_the_closing_collectives_behind_the_next_layers_dense_weights():
    """Hand: per layer, ``prefetch`` hides min(closing collectives, the read time of the weights
    known before routing, VMEM / HBM rate); the attention all-reduce and the latent gather stay
    exposed. K3's routing-independent weights are ~73 MB a layer per TPU7x chip (TP16), read in
    ~12 us."""
    from tokenomics.perf.system import dense_layer_bytes_per_chip, forward_comm_s

    s = system("tpu-v7-16")
    par = ParallelPlan(tp=16, ep=8)
    kw = dict(ar_impl="pallas_ici", ar_algo="auto", context_tok=512, expert_precision="fp8-mxfp4")
    r = system_step(s, K3, "megakernel", par, batch=1, overlap="prefetch", **kw)
    c = forward_comm_s(K3, par, s, attn_group_tok=1.0, stage_tok=1.0, logit_rows=1.0, ar_impl="pallas_ici",
                       ar_algo="auto")
    rate = s.accelerator.hbm_bytes_per_s * r.core.profile.weight_bw_frac
    assert dense_layer_bytes_per_chip(K3, 16, None, "fp8-mxfp4") == pytest.approx(73e6, rel=0.01)
    dense = dense_layer_bytes_per_chip(K3, 16, None, "fp8-mxfp4") / rate
    want = 93 * min(float(c["closing_s"]) / 93, dense, s.accelerator.sram_bytes / rate)
    assert float(r.overlap_s) == pytest.approx(want)
    assert float(r.overlap_s) < float(c["closing_s"]) < float(r.comm_s)
    none = system_step(s, K3, "megakernel", par, batch=1, overlap="none", **kw)
    assert float(none.step_time_s) - float(r.step_time_s) == pytest.approx(want)


@pytest.mark.parametrize("kw", [
    dict(model="gpt-oss-120b", hardware="h200", tp=8, ep=1, engine="trt"),
    dict(model="deepseek-r1", system="gb200-nvl72", tp=1, ep=8, engine="sglang", spec="mtp"),
    dict(model="deepseek-r1", system="gb200-nvl72", tp=1, ep=8, engine="sglang", overlap="two-batch"),
    dict(model="llama-3.1-70b", system="dgx-h200", tp=4, execution="eager"),
])
def test_deployment_breakdown_adds_up_to_the_step(kw):
    """A deployment's breakdown is the chip's operators, then its own terms (collectives, the part
    hidden behind memory traffic, draft, engine, two micro-batches or host launches); for every
    configuration of a batch x context sweep the rows add up to the step time exactly (one
    quantity, one place: the rows are the fields the step was summed from)."""
    from tokenomics.deployment import resolve

    dep = resolve(**kw)
    r = dep.decode(np.array([[2], [96]]), np.array([[512, 4096]]))
    steps = np.broadcast_to(r.step_time_s, (2, 2)).ravel()
    for i in range(4):
        bd = r.breakdown(i)
        assert bd["time_s"].sum() == pytest.approx(steps[i], rel=1e-5)
        assert bd["share"].sum() == pytest.approx(1.0, rel=1e-5)
        assert bd["kind"].iloc[0] == "gemm" and "launch/host overhead" in set(bd["op"])
    ops = set(r.breakdown(3)["op"])
    if dep.parallel.tp > 1:
        assert "all-reduce" in ops
    if dep.spec is not None:
        assert "draft model" in ops
    if dep.overlap == "two-batch":
        assert {"two micro-batches (weights read twice)", "collectives hidden behind memory traffic"} <= ops
    if dep.runs_engine:
        assert "engine per-step cost" in ops
