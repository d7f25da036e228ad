"""One quantity, one function: contract tests that keep duplicated physics out, and path-equivalence
tests that pin every pricing path to the one perf-to-econ bridge (``tokenomics.chain.price``)."""

import re
from pathlib import Path

import numpy as np
import pytest

from tokenomics import catalog, chain
from tokenomics.deployment import resolve

PKG = Path(__file__).resolve().parents[2] / "tokenomics"


def _sources():
    """(relative path, code with comments and string literals removed) of every module."""
    import io
    import tokenize

    for p in sorted(PKG.rglob("*.py")):
        toks = tokenize.generate_tokens(io.StringIO(p.read_text()).readline)
        code = " ".join(t.string for t in toks if t.type not in (tokenize.COMMENT, tokenize.STRING))
        yield p.relative_to(PKG).as_posix(), code


#: (what, regex, files allowed to hold it)
CONTRACTS = [
    ("resident KV bytes per token", r"\.kv_bytes_per_tok\(", {"specs.py", "perf/memory.py", "cli/perf.py"}),
    ("usable device memory", r"usable_mem_frac|hbm_bytes\s*\*\s*0\.\d", {"perf/memory.py", "perf/profile.py"}),
    ("hours per year", r"\b87[56][06]\b|365\.25\s*\*\s*24", {"units.py"}),
    ("seconds per hour in a price", r"\*\s*3600|\bS_PER_H\b", {"units.py", "econ/pricing.py"}),
    ("collective timing", r"collective_time_s\(", {"perf/comm.py", "perf/system.py", "showdown.py"}),
    ("attention/expert weight shards", r"n_experts\s*\*\s*m(odel)?\.expert_params\(\)\s*/", {"perf/memory.py"}),
]


@pytest.mark.parametrize("what, pattern, allowed", CONTRACTS, ids=[c[0] for c in CONTRACTS])
def test_physics_lives_in_one_place(what, pattern, allowed):
    rx = re.compile(pattern)
    offenders = [name for name, code in _sources() if rx.search(code) and name not in allowed]
    assert not offenders, f"{what} computed outside {sorted(allowed)}: {offenders}"


def test_memory_oracle_agrees_across_paths():
    """system_step's fits/memory and the core's come from perf.memory: identical numbers
    (GQA with tp > KV heads and a sliding-window model were the two that disagreed)."""
    from tokenomics.perf.parallel import ParallelPlan, memory_per_chip
    from tokenomics.perf.system import system_step

    for model, tp in (("llama-3.1-70b", 16), ("gpt-oss-120b", 8)):
        m = catalog.model(model)
        if m.n_q_heads % tp:
            continue
        par = ParallelPlan(tp=tp, ep=1)
        r = system_step("gb200-nvl72", m, "engine", par, batch=64, context_tok=8192)
        mem = memory_per_chip(m, par, 64, 8192)
        assert float(np.asarray(r.kv_bytes_per_chip)) == pytest.approx(float(np.asarray(r.core.kv_bytes)), rel=0.01)
        assert float(r.weights_bytes_per_chip) == pytest.approx(float(np.asarray(r.core.weight_bytes)))
        assert float(mem["weights_bytes"]) == pytest.approx(float(r.weights_bytes_per_chip))


def test_gqa_kv_split_stops_at_the_kv_heads():
    """Hand: llama-3.1-70b has 8 KV heads x 128 x 2 (K,V) x 80 layers x 2 B = 327,680 B per token;
    at tp 16 every chip holds one KV head: 327,680 / 8 = 40,960 B per token."""
    from tokenomics.perf.memory import kv_bytes_per_seq_per_chip

    m = catalog.model("llama-3.1-70b")
    assert float(kv_bytes_per_seq_per_chip(m, 1, tp=16)) == pytest.approx(327_680 / 8)
    assert float(kv_bytes_per_seq_per_chip(m, 1, tp=4)) == pytest.approx(327_680 / 4)


def test_scalar_equals_vectorised():
    b = np.array([1, 8, 64])
    vec = chain.price("h200", "llama-3.1-8b", batch=b, context_tok=2048)
    for i, bb in enumerate(b):
        one = chain.price("h200", "llama-3.1-8b", batch=int(bb), context_tok=2048)
        assert float(one.usd_per_m_output_tok) == pytest.approx(float(vec.usd_per_m_output_tok[i]), rel=1e-12)
        assert float(one.tok_per_s_per_chip) == pytest.approx(float(vec.tok_per_s_per_chip[i]), rel=1e-12)


def test_showdown_costs_equal_price_of_the_same_deployment():
    from tokenomics.studies import showdown
    from tokenomics.econ.power import power_model

    c = showdown.costs(batches=(1, 8))
    dep = showdown.scenario_deployment("tpu-v7-megakernel")
    cm, _ = showdown._showdown_cost("tpu-v7")
    r = chain.price(deployment=dep, batch=np.array([1.0, 8.0]),
                    context_tok=8192, cost=cm,
                    power=power_model("tpu-v7"), margin_frac=0.0, utilization_frac=1.0)
    got = c[c["system"] == "tpu-v7-16"]["usd_per_m_output_tok"].to_numpy()
    assert np.allclose(got, r.usd_per_m_output_tok, rtol=1e-12)


def test_watch_floor_equals_price_of_the_resolved_deployment():
    """The floor is what pricing the resolved deployment at the floor's target speed gives, served
    as the floor serves it (disaggregated, bottom-up cost): the most requests in flight that still
    serve 35 tok/s per user (a bisection, not a coarse grid: the speed lands within 1 % above it)."""
    from tokenomics.watch.prices import FLOOR_COST_BASIS, FLOOR_MIN_TOK_PER_S_PER_USER, FLOOR_SERVING, cost_floor

    f = cost_floor(systems=(("gb200-class", "gb200-nvl72"),)).iloc[0]
    dep = resolve("deepseek-v3", system="gb200-nvl72", execution="engine")
    r = chain.price(deployment=dep, target_tok_per_s_per_user=FLOOR_MIN_TOK_PER_S_PER_USER, serving=FLOOR_SERVING,
                    cost=FLOOR_COST_BASIS, margin_frac=0.0)
    assert r.serving == "disaggregated" and r.serving_mode.startswith("disaggregated ")
    assert float(r.usd_per_m_output_tok) == pytest.approx(float(f["cost_usd_per_m_tok"]), rel=1e-12)
    assert f["parallel"] in r.deployment.layout_label()
    assert FLOOR_MIN_TOK_PER_S_PER_USER <= float(r.tok_per_s_per_user) < 1.01 * FLOOR_MIN_TOK_PER_S_PER_USER


def test_one_chip_deployment_equals_the_core():
    from tokenomics.perf import decode_step

    dep = resolve("llama-3.1-8b", hardware="h200", execution="graph", engine="none")
    assert dep.replica_chips == 1
    r = dep.decode(np.array([1, 32]), 1024)
    core = decode_step("h200", "llama-3.1-8b", "graph", batch=np.array([1, 32]), context_tok=1024)
    assert np.allclose(r.step_time_s, core.step_time_s, rtol=1e-12)
    assert np.allclose(r.tok_per_s_per_chip, core.tok_per_s_per_chip, rtol=1e-12)


def test_engine_cost_is_added_once_per_iteration():
    """A production engine adds its fitted per-kernel iteration cost (datasets/engines.csv) to the
    core's step: the kernels the step launches x the vllm/nvidia value, and nothing else changes."""
    from tokenomics.perf.engines import engine_params

    bare = resolve("llama-3.1-8b", hardware="h200", execution="engine", engine="none").decode(32, 1024)
    dep = resolve("llama-3.1-8b", hardware="h200", execution="engine", engine="vllm")
    eng = dep.decode(32, 1024)
    per_kernel = engine_params("vllm", "nvidia")["kernel_overhead_s"]
    assert dep.engine_kernels == float(bare.core.n_kernels)  # the same count the core reports
    assert float(eng.step_time_s - bare.step_time_s) == pytest.approx(dep.engine_kernels * per_kernel, rel=1e-9)


def test_engine_cost_follows_kernels_not_layers():
    """Issue 11: an MLA + MoE layer (DeepSeek-V3) launches more kernels than a GQA dense layer
    (Llama), so the engine costs it more per layer."""
    ds = resolve("deepseek-v3", system="dgx-h200", execution="engine", engine="vllm", tp=8, ep=1)
    ll = resolve("llama-3.1-70b", system="dgx-h200", execution="engine", engine="vllm", tp=8)
    assert ds.engine_step_s / ds.model.n_layers > 1.5 * ll.engine_step_s / ll.model.n_layers


@pytest.mark.parametrize("call, match", [
    (lambda: __import__("tokenomics").decode_step("h200", "llama-3.1-8b", tp=3), "attention heads"),
    (lambda: __import__("tokenomics").decode_step("h200", "llama-3.1-8b", tp=64), "attention heads"),
    (lambda: __import__("tokenomics").decode_step("h200", "llama-3.1-8b", ep=8), "dense"),
    (lambda: __import__("tokenomics.perf", fromlist=["max_batch"]).max_batch("h200", "llama-3.1-8b", tp=0), "tp must"),
])
def test_one_layout_check_on_every_path(call, match):
    """Issue 13: the single-chip core rejects layouts the system path rejects (one check_layout)."""
    from tokenomics.errors import ValidationError

    with pytest.raises(ValidationError, match=match):
        call()


def test_a_deployment_names_its_all_reduce_algorithm():
    """``ar_algo`` (a deployment file key too) reaches the collectives: a TP16 K3 step on the TPU
    slice with one-shot all-reduces differs from two-shot, and ``auto`` is the faster of the two
    at each row count; an unknown algorithm is a one-line error naming the choices."""
    from tokenomics.errors import ValidationError

    kw = dict(system="tpu-v7-16", tp=16, ep=8, execution="megakernel", engine="none", ar_impl="pallas_ici",
              expert_precision="fp8-mxfp4")
    t = {a: np.asarray(resolve("kimi-k3", ar_algo=a, **kw).decode(np.array([1.0, 8.0]), 512).comm_s)
         for a in ("oneshot", "twoshot", "auto")}
    assert np.all(t["auto"] <= np.minimum(t["oneshot"], t["twoshot"]) * (1 + 1e-12))
    assert t["oneshot"][0] < t["twoshot"][0] and t["twoshot"][1] < t["oneshot"][1]
    with pytest.raises(ValidationError, match="ar_algo must be one of") as e:
        resolve("kimi-k3", ar_algo="threeshot", **kw)
    assert "\n" not in str(e.value)


def test_a_deployments_frontier_is_its_decode():
    """One quantity, one function: the frontier of one deployment's layout (what
    ``tokenomics frontier --deployment`` draws) passes the deployment's engine cost, overlap,
    all-reduce algorithm and expert balance, so each point equals ``Deployment.decode``."""
    from tokenomics.perf import frontier as fr

    dep = resolve("deepseek-r1", hardware="b200", tp=8, ep=8, engine="sglang", weight_precision="fp4")
    b = np.array([1.0, 8.0, 64.0])
    df = fr.deployment_frontier(dep, context_tok=2048, batches=b).to_frame()
    want = dict(zip(b.astype(int), np.asarray(dep.decode(b, 2048, check_memory=False).step_time_s)))
    assert len(df) and all(np.isclose(r.step_time_s, want[int(r.batch)], rtol=1e-9) for r in df.itertuples())
    assert dep.engine_step_s > 0  # the engine's cost is in both
