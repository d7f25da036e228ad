"""Disaggregated prefill/decode serving (issue 11): hand-calculated steady states, the published
denominators, the P:D split rule and the recovered held-out rows."""

import math

import numpy as np
import pandas as pd
import pytest

from tokenomics import catalog
from tokenomics.deployment import resolve
from tokenomics.errors import TokenomicsError, ValidationError
from tokenomics.perf import serving
from tokenomics.validate import serving_cases
from tokenomics.perf.memory import kv_bytes_per_seq_per_chip
from tokenomics.perf.serving import kv_transfer_s, serve, serve_disaggregated

ISL, OSL = 1024.0, 1024.0


@pytest.fixture(scope="module")
def deps():
    kw = dict(hardware="gb200", execution="engine", engine="trt", kv_precision="fp8", expert_precision="nvfp4")
    return resolve("deepseek-r1", tp=1, ep=4, **kw), resolve("deepseek-r1", tp=8, ep=8, **kw)


def _fake_prefill(monkeypatch, t_batch_s: float):
    """Every prefill batch takes ``t_batch_s`` whatever its size; no KV transfer."""
    monkeypatch.setattr(serving, "_prefill_iteration_s",
                        lambda dep, isl, batch, t_eng, profile=None: np.full(np.shape(batch), t_batch_s))
    monkeypatch.setattr(serving, "kv_transfer_s", lambda *a, **k: 0.0)


def test_cheap_prefill_is_the_decode_only_result(deps, monkeypatch):
    """With a free prefill every request in flight decodes: B = C / decode instances, and the
    figures are the decode phase's at that batch."""
    pre, dec = deps
    _fake_prefill(monkeypatch, 1e-9)
    from tokenomics.catalog import load

    eng = load("engines").assign(ttft_overhead_s=0.0)  # no per-request overhead outside the iterations
    c, n_dec = 96.0, 32.0
    r = serve_disaggregated(pre, dec, n_prefill_gpus=4, n_decode_gpus=n_dec, isl_tok=ISL, osl_tok=OSL, concurrency=c,
                            engines=eng)
    b = c / (n_dec / dec.replica_chips)
    d = serve(dec, isl_tok=ISL, osl_tok=OSL, phase="decode", batch=b, context_tok=ISL + OSL / 2, engines=eng)
    assert float(r.batch) == pytest.approx(b, rel=1e-3)
    assert float(r.output_tok_per_s_per_decode_gpu) == pytest.approx(float(d.output_tok_per_s_per_gpu), rel=2e-3)
    assert float(r.tpot_s) == pytest.approx(float(d.tpot_s), rel=2e-3)
    assert float(r.ttft_s) == pytest.approx(0.0, abs=1e-6)


def test_output_never_exceeds_prefill_capacity(deps, monkeypatch):
    """A slow prefill (1 s per batch of n prompts per instance) caps the request rate at
    n_instances * n / 1 s; the surplus concurrency queues for prefill (Little's law on the TTFT)."""
    pre, dec = deps
    _fake_prefill(monkeypatch, 1.0)
    n_pre = 8.0
    n_max = int(np.max(pre.prefill_batch(int(ISL))))
    cap_req_s = n_pre / pre.replica_chips * n_max / 1.0
    for c in (64.0, 512.0, 4096.0):
        r = serve_disaggregated(pre, dec, n_prefill_gpus=n_pre, n_decode_gpus=32, isl_tok=ISL, osl_tok=OSL,
                                concurrency=c)
        out_tok_s = float(r.output_tok_per_s_per_decode_gpu) * 32
        assert out_tok_s <= cap_req_s * OSL * (1 + 1e-9)
    # near saturation the rate approaches capacity (the M/D/1 queue in front of prefill absorbs the
    # surplus: 1 - rho ~ residual / queue time = 0.5 s / ~43 s ~ 1 %) and TTFT = C / X - osl * t_it
    x = out_tok_s / OSL
    assert x == pytest.approx(cap_req_s, rel=0.02)
    assert float(r.ttft_s) == pytest.approx(4096.0 / x - OSL * float(r.tpot_s), rel=1e-3)


def test_little_law_closes_the_loop(deps):
    """Requests in flight = rate x (TTFT + decode time), unsaturated or not."""
    pre, dec = deps
    for c, n_pre in ((144.0, 4.0), (4096.0, 4.0)):
        r = serve_disaggregated(pre, dec, n_prefill_gpus=n_pre, n_decode_gpus=32, isl_tok=ISL, osl_tok=OSL,
                                concurrency=c)
        x = float(r.output_tok_per_s_per_decode_gpu) * 32 / OSL
        assert x * (float(r.ttft_s) + OSL * float(r.tpot_s)) == pytest.approx(c, rel=0.01)


def test_decode_memory_caps_the_batch(deps, monkeypatch):
    """A decode instance holding 10 sequences decodes 10; the rest of the concurrency queues (TTFT)."""
    from tokenomics.deployment import Deployment

    pre, dec = deps
    _fake_prefill(monkeypatch, 1e-9)
    monkeypatch.setattr(Deployment, "max_batch", lambda self, context_tok=2048: 10)
    r = serve_disaggregated(pre, dec, n_prefill_gpus=4, n_decode_gpus=8, isl_tok=ISL, osl_tok=OSL, concurrency=100)
    assert float(r.batch) == pytest.approx(10)
    x = float(r.output_tok_per_s_per_decode_gpu) * 8 / OSL
    assert float(r.ttft_s) == pytest.approx(100 / x - OSL * float(r.tpot_s), rel=1e-6)


def test_per_decode_gpu_vs_per_gpu(deps):
    pre, dec = deps
    r = serve_disaggregated(pre, dec, n_prefill_gpus=4, n_decode_gpus=32, isl_tok=ISL, osl_tok=OSL, concurrency=144)
    assert float(r.output_tok_per_s_per_decode_gpu / r.output_tok_per_s_per_gpu) == pytest.approx(36 / 32)
    assert float(r.total_tok_per_s_per_gpu) == pytest.approx(float(r.output_tok_per_s_per_gpu) * (1 + ISL / OSL))
    assert float(r.tok_per_s_per_user) == pytest.approx(1 / float(r.tpot_s))


def test_kv_transfer_hand_calc(deps):
    """DeepSeek's MLA cache (61 layers x 576 fp8 bytes per token) crosses one 900 GB/s NVLink,
    plus one 1 us hop; a deployment wider than the NVLink domain pays the 50 GB/s NIC."""
    pre, dec = deps
    m = catalog.model("deepseek-r1")
    shard = 1024 * m.n_layers * (m.kv_lora_rank + m.qk_rope_head_dim) * 1.0
    assert float(kv_bytes_per_seq_per_chip(m, 1024, kv_precision="fp8")) == pytest.approx(shard)
    assert kv_transfer_s(pre, dec, 1024, 36) == pytest.approx(shard / 900e9 + 1e-6)
    assert kv_transfer_s(pre, dec, 1024, 144) == pytest.approx(shard / 50e9 + 1e-6)


def test_too_few_gpus_for_one_instance(deps):
    pre, dec = deps
    with pytest.raises(ValidationError, match="fewer than one instance"):
        serve_disaggregated(pre, dec, n_prefill_gpus=2, n_decode_gpus=32, isl_tok=ISL, osl_tok=OSL, concurrency=8)


ROW = dict(case_id="D1", phase="serve", hardware="gb200", model="deepseek-r1", weight_precision="fp4",
           kv_precision="fp8", engine="dynamo-trt", n_gpus=36, tp=8, ep=8, dp_attention=0, disaggregated=1,
           n_prefill_gpus=4, n_decode_gpus=32, prefill_tp=1, prefill_ep=4, spec_decode="none", isl_tok=1024,
           osl_tok=1024, concurrency=64, measured_output_tok_per_s_per_gpu=1.0, note="")


def test_predict_case_uses_the_published_denominator():
    """InferenceMAX divides a disaggregated run's output by its decode GPUs."""
    p = serving_cases.predict_case(ROW)
    assert p["predicted_output_tok_per_s_per_gpu"] / p["predicted_output_tok_per_s_per_deployment_gpu"] == \
        pytest.approx(36 / 32)
    assert "tp8-ep8" in p["deployment"]


@pytest.mark.parametrize("drop", [("n_prefill_gpus",), ("n_decode_gpus",), ("n_prefill_gpus", "n_decode_gpus")])
def test_split_missing_is_one_line(drop):
    row = {**ROW, **{k: float("nan") for k in drop}}
    with pytest.raises(ValidationError) as exc:
        serving_cases.predict_case(row)
    msg = str(exc.value)
    assert "D1" in msg and all(k in msg for k in drop) and "\n" not in msg
    with pytest.raises(TokenomicsError, match="D1: a disaggregated serve row needs its prefill/decode split"):
        serving_cases.read_cases(pd.DataFrame([row]))  # the strict reader (check_cases refuses the row alone)


@pytest.fixture(scope="module")
def holdout():
    return serving_cases.predict_cases(catalog.data_dir() / "serving_holdout.csv")


def test_every_holdout_row_predicts(holdout):
    assert (holdout["status"] == "predicted").all(), holdout.loc[holdout["status"] != "predicted", "status"].tolist()
    dis = holdout[(holdout["disaggregated"] == 1) & (holdout["phase"] == "serve")]
    assert len(dis) == 54 and (dis["hardware"] == "gb200").all()
    assert np.isfinite(dis["predicted_output_tok_per_s_per_gpu"].astype(float)).all()
    assert np.isfinite(dis["predicted_ttft_s"].astype(float)).all()


def test_recovered_split_matches_the_published_denominators():
    """tput_per_gpu x all GPUs = output/decode GPU x decode GPUs + input/prefill GPU x prefill GPUs:
    the split the rows carry reproduces the artifact's total (ISL/OSL mean ratio 1 or 8)."""
    df = pd.read_csv(catalog.data_dir() / "serving_holdout.csv")
    dis = df[(df["disaggregated"] == 1) & (df["phase"] == "serve")]
    assert (dis["n_prefill_gpus"] + dis["n_decode_gpus"] == dis["n_gpus"]).all()
    out = dis["measured_output_tok_per_s_per_gpu"] * dis["n_decode_gpus"]
    total = dis["measured_total_tok_per_s_per_gpu"] * dis["n_gpus"]
    ratio = (total - out) / out  # input / output tokens
    assert ratio.between(0.8 * dis["isl_tok"] / dis["osl_tok"], 1.25 * dis["isl_tok"] / dis["osl_tok"]).all()
    assert not math.isnan(float(dis["concurrency"].min()))


def test_disaggregated_ttft_hand_calc(deps, monkeypatch):
    """Every prefill batch takes 0.2 s, no KV transfer, no per-request overhead. At rate X over n_pi
    instances a batch holds the lam * 0.2 s prompts arriving while one runs (the smallest batch
    n >= lam * t); the instance is busy lam * t / n of the time, so an arrival finds the residual
    0.5 * busy * t, inflated by the queue 1 / (1 - X / X_cap), X_cap = n_pi * n_max / t; then its
    own batch: TTFT = 0.5 busy t / (1 - rho) + t (the same ttft_s as co-located serving)."""
    pre, dec = deps
    _fake_prefill(monkeypatch, 0.2)
    eng = catalog.load("engines").assign(ttft_overhead_s=0.0)
    n_max = int(np.max(pre.prefill_batch(int(ISL))))
    n_pi = 4.0 / pre.replica_chips
    for c in (16.0, 512.0, 2048.0):
        r = serve_disaggregated(pre, dec, n_prefill_gpus=4, n_decode_gpus=32, isl_tok=ISL, osl_tok=OSL,
                                concurrency=c, engines=eng)
        x = float(r.output_tok_per_s_per_decode_gpu) * 32 / OSL
        lam = x / n_pi
        n = min(max(1, math.ceil(lam * 0.2 - 1e-12)), n_max)
        busy = min(1.0, lam * 0.2 / n)
        rho = x / (n_pi * n_max / 0.2)
        assert float(r.ttft_s) == pytest.approx(0.5 * busy * 0.2 / (1 - rho) + 0.2, rel=1e-6), c


def test_colocated_wide_ep_serves_a_prefill_heavy_mix_far_below_the_disaggregated_rate():
    """Why the forecast's infrastructure prices disaggregated serving (README, --show infra): the
    default deployment (DeepSeek-V3, GB200 NVL72, EP72 with attention DP) co-located, serving
    OpenRouter's 6,000 / 400 mix, holds 35 tok/s per user only up to ~42 users, where it delivers
    ~324 tok/s per GPU of input and output (measured with this model, 2026-12-05): each prompt
    prefilled on one attention-DP rank holds all 72 in lockstep. Disaggregated (serve_disaggregated,
    5 prefill instances per decode instance), a GPU serves 11,297 (golden infra basis): 35x more."""
    from tokenomics.chain import price
    from tokenomics.forecast.infrastructure import serving_basis

    dep = price(model="deepseek-v3", system="gb200-nvl72", workload="openrouter-2025",
                target_tok_per_s_per_user=35, serving="decode").deployment
    r = serve(dep, isl_tok=6000, osl_tok=400, concurrency=41.9)
    assert float(r.tok_per_s_per_user) == pytest.approx(35.0, rel=0.01)
    assert float(r.total_tok_per_s_per_gpu) == pytest.approx(324, rel=0.02)
    assert serving_basis()["tok_per_s_per_chip"] / float(r.total_tok_per_s_per_gpu) > 30
