"""Attention data parallelism in lockstep (issue 11): a prompt prefilled on one attention-DP rank holds
every rank at each MoE barrier, and the expert all-to-all runs the engines' measured NVLink kernels.
Hand calculations of :func:`queueing.expected_max_poisson` and :func:`queueing.adp_prefill_s`, the
identity behind :func:`serving.adp_prefill_parts_s`, and the measured DeepEP rows."""

import math

import numpy as np
import pytest

from tokenomics.deployment import resolve
from tokenomics.perf import comm, queueing, serving
from tokenomics.perf.parallel import system


def test_expected_max_poisson_hand():
    """Two Poisson(1) counts: E[max] = sum_m 1 - F(m)^2 with F(0..7) = 0.367879, 0.735759, 0.919699,
    0.981012, 0.996340, 0.999406, 0.999917, 0.999990: 0.864665 + 0.458659 + 0.154154 + 0.037616 +
    0.007307 + 0.001188 + 0.000166 + 0.000020 + 0.000002 = 1.523778 (hand sum). One count: its mean;
    nothing arriving: 0."""
    assert float(queueing.expected_max_poisson(1.0, 2)) == pytest.approx(1.523778, abs=2e-6)
    assert np.allclose(queueing.expected_max_poisson(np.array([0.0, 0.3, 7.0]), 1), [0.0, 0.3, 7.0])
    assert float(queueing.expected_max_poisson(0.0, 8)) == 0.0
    # rare arrivals: the largest of n is one whenever any arrived, 1 - e^(-n q) ~ n q
    assert float(queueing.expected_max_poisson(1e-4, 8)) == pytest.approx(8e-4, rel=1e-3)
    # many arrivals: the largest is near the mean (spread evenly)
    assert float(queueing.expected_max_poisson(400.0, 8)) / 400.0 == pytest.approx(1.0, abs=0.08)


def test_poisson_cdf_is_pdtr_to_the_bit():
    """:func:`queueing.poisson_cdf` skips the counts whose CDF rounds to 1.0: every element equals
    ``scipy.special.pdtr``'s, ascending grids of means (banded), shuffled ones and zeros alike."""
    from scipy.special import pdtr

    rng = np.random.default_rng(11)
    grids = [np.geomspace(1e-6, 3.0, 150), np.geomspace(1e-3, 60.0, 90), np.linspace(0.0, 40.0, 400),
             rng.permutation(np.geomspace(1e-4, 5.0, 120)), np.zeros(40)]
    grids += [np.sort(rng.uniform(0.0, 10.0 ** rng.uniform(-6, 2), rng.integers(2, 200))) for _ in range(200)]
    for q in grids:
        q_max = float(q.max())
        top = math.ceil(q_max + 12.0 * math.sqrt(q_max) + 20.0)
        m = np.arange(top).reshape(-1, 1)
        got, want = queueing.poisson_cdf(m, q), pdtr(m, q)
        assert got.shape == want.shape and np.array_equal(got.view(np.int64), want.view(np.int64))


def test_poisson_maxima_of_several_means_are_the_full_sums_to_the_bit():
    """:func:`queueing.expected_max_pass_s` and :func:`queueing.expected_max_poisson` of several means
    sum only the counts before the rows of F = 1.0 (their terms are exactly 0, and a sum over the
    counts adds row by row): every value equals the whole sum's."""
    from scipy.special import pdtr

    rng = np.random.default_rng(3)
    grids = [np.geomspace(1e-5, 2.0, 158), np.linspace(0.0, 30.0, 77), rng.permutation(np.geomspace(1e-3, 9.0, 64)),
             np.array([0.2, 0.1])]
    grids += [np.sort(rng.uniform(0.0, 10.0 ** rng.uniform(-5, 1.5), rng.integers(2, 160))) for _ in range(100)]
    for q in grids:
        q_max = float(q.max())
        top = math.ceil(q_max + 12.0 * math.sqrt(q_max) + 20.0)
        for n, first, each in ((18, 0.02, 0.004), (1, 0.01, 0.01), (72, 0.03, 0.03)):
            before, step = queueing._pass_steps(top, 1, first, each)
            want = (step * (1.0 - pdtr(before, q) ** n)).sum(axis=0)
            assert np.array_equal(queueing.expected_max_pass_s(q, n, first, each), want)
        m = np.arange(math.ceil(q_max + 12.0 * math.sqrt(q_max) + 20.0) + 1).reshape(-1, 1)
        assert np.array_equal(queueing.expected_max_poisson(q, 8), np.sum(1.0 - pdtr(m, q) ** 8, axis=0))


def test_adp_prefill_rare_prompts_hold_every_rank_frequent_ones_spread():
    """local 10 ms and shared 1 ms a chunk, 8 ranks. Rare prompts (q = 1e-4 chunks a rank an
    iteration): each costs its whole local 10 ms on one rank while seven wait, 8 q x 10 ms + 8 q x
    1 ms = 8.8 us an iteration, 8x the spread local part (q x 10 ms). A balance gate holding prompts
    for 10^5 iterations releases ~10 a rank together: back to ~the spread cost (hand calculation)."""
    q, n, loc, sh = 1e-4, 8, 0.010, 0.001
    assert float(queueing.adp_prefill_s(q, n, loc, sh)) == pytest.approx(8 * q * loc + n * q * sh, rel=1e-3)
    spread = q * loc + n * q * sh
    gated = float(queueing.adp_prefill_s(q, n, loc, sh, window_iters=1e5))
    assert spread < gated < 1.8 * spread
    assert float(queueing.adp_prefill_s(q, 1, loc, sh)) == pytest.approx(q * (loc + sh), rel=1e-12)
    many = float(queueing.adp_prefill_s(200.0, n, loc, sh))
    assert many == pytest.approx(200.0 * loc + n * 200.0 * sh, rel=0.1)


def test_expected_max_pass_hand():
    """Passes of m chunks take max(1, m/4) (one chunk pays a whole pass, four share one). Two ranks at
    Poisson(1) chunks: the longest pass is 1 whenever either got a chunk (1 - F(0)^2 = 0.864665), and
    grows by 1/4 for each chunk past the fourth: + 0.25 (1 - F(4)^2) + 0.25 (1 - F(5)^2) + ... with
    F(4..7) = 0.996340, 0.999406, 0.999917, 0.999990: 0.25 x (0.007307 + 0.001188 + 0.000166 +
    0.000020 + 0.000002) = 0.002171; total 0.866836 (hand sum). Equal costs give expected_max_poisson."""
    assert float(queueing.expected_max_pass_s(1.0, 2, 1.0, 0.25)) == pytest.approx(0.866836, abs=2e-6)
    q = np.array([0.0, 0.2, 5.0, 50.0])
    assert np.allclose(queueing.expected_max_pass_s(q, 8, 0.01, 0.01), 0.01 * queueing.expected_max_poisson(q, 8))
    # many chunks: each pays its share; rare ones: a whole pass each
    assert float(queueing.expected_max_pass_s(400.0, 1, 1.0, 0.25)) == pytest.approx(100.0, rel=1e-6)
    assert float(queueing.expected_max_pass_s(1e-4, 8, 1.0, 0.25)) == pytest.approx(8e-4, rel=1e-3)


def test_adp_prefill_batched_passes_share_a_pass():
    """local 10 ms / shared 1 ms a chunk standing alone, 2.5 ms / 0.25 ms batched, 8 ranks: rare chunks
    cost as before (each a whole pass); at 40 chunks a rank an iteration they cost their batched share,
    40 x 2.5 ms (busiest rank, + its Poisson excess) + 320 x 0.25 ms, far below the unbatched 40 x 10 ms."""
    n, loc, sh = 8, 0.010, 0.001
    rare = 1e-4
    assert float(queueing.adp_prefill_s(rare, n, loc, sh, batched_s=(0.0025, 0.00025))) == pytest.approx(
        float(queueing.adp_prefill_s(rare, n, loc, sh)), rel=2e-3)
    busy = float(queueing.adp_prefill_s(40.0, n, loc, sh, batched_s=(0.0025, 0.00025)))
    assert 40 * 0.0025 + 320 * 0.00025 < busy < 1.25 * (40 * 0.0025) + 320 * 0.00025
    assert busy < 0.3 * float(queueing.adp_prefill_s(40.0, n, loc, sh))


@pytest.fixture(scope="module")
def dep8():
    # DeepSeek-V3 FP4 experts on 8 B200 with attention data-parallel over the EP group (DEP8)
    return resolve("deepseek-v3", hardware="b200", tp=1, ep=8, execution="engine", engine="trt",
                   expert_precision="nvfp4")


def test_adp_parts_split_the_cores_own_prefill(dep8):
    """t(1 chunk) = local + shared and t(one chunk a rank) = local + 8 shared (identity on the
    core's prefill); the local part dominates: attention and dense layers run on one rank."""
    assert dep8.parallel.attn_dp == 8
    loc, sh = serving.adp_prefill_parts_s(dep8, 1024)
    t = np.asarray(dep8.prefill(1024, batch=np.array([1, 8])).step_time_s, float)
    assert loc + sh == pytest.approx(t[0], rel=1e-9)
    assert loc + 8 * sh == pytest.approx(t[1], rel=1e-9)
    assert loc > 2 * sh > 0


def test_batched_parts_are_the_cores_pass_shares(dep8):
    """1,024-token chunks under TensorRT-LLM's 8,192-token budget: 8 a rank share a pass, each paying
    t(64) / (8 t(8)) of its stand-alone parts (the core's own prefill); a whole-budget chunk pays all."""
    loc, sh = serving.adp_prefill_parts_s(dep8, 1024)
    bl, bs = serving.adp_prefill_batched_parts_s(dep8, 1024)
    t = np.asarray(dep8.prefill(1024, batch=np.array([8, 64])).step_time_s, float)
    share = t[1] / (8 * t[0])
    assert 0 < share < 1
    assert (bl, bs) == pytest.approx((loc * share, sh * share), rel=1e-12)
    assert serving.adp_prefill_batched_parts_s(dep8, 8192) == serving.adp_prefill_parts_s(dep8, 8192)


def test_dep_iteration_carries_the_lockstep_prefill(dep8):
    """Steady state at 256 users, 1024/1024 tokens: the iteration is the decode step plus
    adp_prefill_s at q = B / 8 x (isl / osl) / 1024 chunks a rank, more than the evenly spread
    cost; TensorRT-LLM's balance gate (60 iterations) brings it back towards the spread cost."""
    isl = osl = 1024.0
    r = serving.serve(dep8, isl_tok=isl, osl_tok=osl, concurrency=256)
    b, t_it = float(r.batch), float(r.iteration_s)
    _, t_eng = serving._engine_cost_s(dep8, None)
    d = float(np.asarray(serving._decode_iteration_s(dep8, b, isl + osl / 2, t_eng, None)))
    loc, sh = serving.adp_prefill_parts_s(dep8, 1024)
    q = b / 8 * (isl / osl) / 1024
    batched = serving.adp_prefill_batched_parts_s(dep8, 1024)
    assert t_it - d == pytest.approx(float(queueing.adp_prefill_s(q, 8, loc, sh, batched_s=batched)), rel=1e-9)
    assert t_it - d > 2 * q * (loc + 8 * sh)  # > twice the evenly spread prefill
    gated = serving.serve(dep8, isl_tok=isl, osl_tok=osl, concurrency=256, adp_timeout_iters=60)
    assert float(gated.iteration_s) < t_it


def test_tensor_parallel_serving_keeps_the_spread_prefill():
    """One attention rank (TP8): no lockstep term, the prompt load is b x isl/osl x t_pre_tok."""
    dep = resolve("deepseek-v3", hardware="b200", tp=8, ep=8, execution="engine", engine="trt")
    assert dep.parallel.attn_dp == 1
    r = serving.serve(dep, isl_tok=1024, osl_tok=1024, concurrency=64)
    b, t_it = float(r.batch), float(r.iteration_s)
    _, t_eng = serving._engine_cost_s(dep, None)
    d = float(np.asarray(serving._decode_iteration_s(dep, b, 1536.0, t_eng, None)))
    t_pre = serving._prefill_per_token_s(dep, 1024.0, float(dep.prefill_chunk_tok), None)
    assert t_it - d == pytest.approx(b * t_pre, rel=1e-9)


def test_deepep_nvlink_rows_and_auto_all_to_all():
    """DeepEP low-latency on 8 B200 (aiconfigurator SGLang 0.5.12 table), 32 tokens a rank at
    DeepSeek-V3's shape: dispatch 24.401 us (FP8, 32 x 8 x 7168 x 1 B) + combine 26.274 us (BF16,
    2 B) = 50.675 us measured; the fit within 5 %. Inside NVLink 'auto' times the expert all-to-all
    with it (the all-reduce fits gave ~11 us a call); across the scale-out network DeepEP's RDMA."""
    b200 = system("dgx-b200")
    msg = 32 * 8 * 7168
    pair = sum(float(comm.collective_time_s("all_to_all", msg * k, 8, b200, "deepep_ll")) for k in (1.0, 2.0))
    assert pair == pytest.approx(50.675e-6, rel=0.05)
    auto = sum(float(comm.collective_time_s("all_to_all", msg * k, 8, b200, "auto")) for k in (1.0, 2.0))
    assert auto == pair
    h100 = system("h100-ib-64")
    assert float(comm.collective_time_s("all_to_all", msg, 16, h100, "auto")) == pytest.approx(
        float(comm.collective_time_s("all_to_all", msg, 16, h100, "deepep_rdma")), rel=1e-12)
    assert math.isclose(float(comm.collective_time_s("allreduce", 2 ** 20, 8, b200, "auto")),
                        min(float(comm.collective_time_s("allreduce", 2 ** 20, 8, b200, i)) for i in comm.AUTO_IMPLS))
