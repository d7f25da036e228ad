"""Fixed-length closed loops on a prefill-first engine run in synchronized waves (issue 11):
``serving.wave_serve`` by hand, the engines it applies to, one published measurement, bad input."""

import numpy as np
import pandas as pd
import pytest

from tokenomics import catalog
from tokenomics.deployment import resolve
from tokenomics.errors import DataError
from tokenomics.perf import serving

from tokenomics.validate import serving_cases
D_S = 0.010  # decode iteration [s]


@pytest.fixture(scope="module")
def sglang():
    return resolve("llama-3.1-8b", hardware="h200", tp=1, execution="engine", engine="sglang")


@pytest.fixture
def flat(monkeypatch):
    """A 10 ms decode iteration at any batch; a prefill iteration of n prompts of isl tokens takes
    2 ms + 1 us per prompt token; no per-request overhead."""
    monkeypatch.setattr(serving, "_decode_iteration_s",
                        lambda dep, batch, ctx, t_eng, profile=None: np.full(np.shape(batch), D_S))
    monkeypatch.setattr(serving, "_prefill_iteration_s",
                        lambda dep, isl, batch, t_eng, profile=None: 0.002 + 1e-6 * isl * np.asarray(batch, float))
    return catalog.load("engines").assign(ttft_overhead_s=0.0)


def test_wave_hand_calc(sglang, flat):
    """10 users, 2048 in / 128 out, chunk 8192: 4 prompts a prefill iteration, batches 4, 4, 2 of
    10.192, 10.192 and 6.096 ms ending at 10.192, 20.384 and 26.480 ms. Mean TTFT (4 x 10.192 +
    4 x 20.384 + 2 x 26.480) / 10 = 17.5264 ms. Then 127 decode iterations of 10 ms together:
    cycle 26.48 + 1270 = 1296.48 ms, TPOT (26.48 - 17.5264 + 1270) / 127 = 10.0705 ms, output
    10 x 128 / 1.29648 = 987.29 tok/s on the one GPU."""
    r = serving.serve(sglang, isl_tok=2048, osl_tok=128, concurrency=10, engines=flat, fixed_lengths=True)
    assert float(r.batch) == 10
    assert float(r.ttft_s) == pytest.approx(0.0175264, rel=1e-9)
    assert float(r.tpot_s) == pytest.approx((0.02648 - 0.0175264 + 1.27) / 127, rel=1e-9)
    assert float(r.tpot_s) == pytest.approx(0.0100705, rel=1e-5)
    assert float(r.output_tok_per_s_per_gpu) == pytest.approx(10 * 128 / 1.29648, rel=1e-9)
    assert float(r.output_tok_per_s_per_gpu) == pytest.approx(987.29, abs=0.01)
    # Little's law: every user is in flight for TTFT + (osl - 1) TPOT, one cycle
    x = 10 / 1.29648
    assert x * (float(r.ttft_s) + 127 * float(r.tpot_s)) == pytest.approx(10.0, rel=1e-9)


def test_users_beyond_the_peak_kv_wait_a_wave(sglang, flat, monkeypatch):
    """A KV cache holding 4 sequences at the wave's peak length runs waves of 4; the other 6 of 10
    users wait (C - B) / X on top (Little's law), X = 4 / cycle."""
    from tokenomics.deployment import Deployment

    seen = []

    def cap(self, context_tok=2048):
        seen.append(context_tok)
        return 4

    monkeypatch.setattr(Deployment, "max_batch", cap)
    r = serving.serve(sglang, isl_tok=2048, osl_tok=128, concurrency=10, engines=flat, fixed_lengths=True)
    assert float(r.batch) == 4 and seen[-1] == 2048 + 128  # all sequences peak together
    cycle = 0.002 + 4 * 2048e-6 + 127 * D_S  # one prefill iteration of 4 prompts, 127 decodes
    assert float(r.ttft_s) == pytest.approx(0.002 + 4 * 2048e-6 + 6 / (4 / cycle), rel=1e-9)


def test_mixing_engines_and_varied_lengths_stay_staggered(sglang):
    """vLLM and TensorRT-LLM mix prompt chunks into the decode batch: a fixed-length loop there is
    the staggered steady state, as is SGLang with varied lengths (the default)."""
    for engine in ("vllm", "trt"):
        dep = resolve("llama-3.1-8b", hardware="h200", tp=1, execution="engine", engine=engine)
        a = serving.serve(dep, isl_tok=4096, osl_tok=128, concurrency=64)
        b = serving.serve(dep, isl_tok=4096, osl_tok=128, concurrency=64, fixed_lengths=True)
        assert float(a.ttft_s) == float(b.ttft_s) and float(a.tpot_s) == float(b.tpot_s)
    assert not serving.runs_in_waves(sglang, False) and serving.runs_in_waves(sglang, True)


def test_published_wave_run():
    """AIConfigurator's dump, Qwen3-32B BF16 on 2 H100 (TP2), SGLang 0.5.1.post1, 64 users,
    4096 in / 128 out (serving_aic_sample.csv M0524): measured TTFT 9.005 s, TPOT 84.05 ms,
    208.1 tok/s per GPU. Staggered, the prompts' work sits in every TPOT (141 ms, 0.38 s TTFT);
    in waves it moves into the TTFT of the requests behind: within 20 % on all three."""
    dep = resolve("qwen3-32b", hardware="h100", tp=2, execution="engine", engine="sglang", weight_precision="bf16")
    steady = serving.serve(dep, isl_tok=4096, osl_tok=128, concurrency=64)
    wave = serving.serve(dep, isl_tok=4096, osl_tok=128, concurrency=64, fixed_lengths=True)
    assert float(wave.ttft_s) == pytest.approx(9.005, rel=0.20)
    assert float(wave.tpot_s) == pytest.approx(0.08405, rel=0.20)
    assert float(wave.output_tok_per_s_per_gpu) == pytest.approx(208.1, rel=0.20)
    assert float(steady.ttft_s) < 0.1 * 9.005 and float(steady.tpot_s) > 1.5 * 0.08405
    # the same work: throughput within a few per cent either way
    assert float(wave.output_tok_per_s_per_gpu) == pytest.approx(float(steady.output_tok_per_s_per_gpu), rel=0.05)


def test_fixed_lengths_cell_must_be_0_or_1():
    rows = catalog.load("serving_aic_silicon").head(2).copy()
    rows["fixed_lengths"] = rows["fixed_lengths"].astype(object)
    rows.loc[rows.index[1], "fixed_lengths"] = 2
    with pytest.raises(DataError, match=r"fixed_lengths .*0 or 1"):
        serving_cases.read_cases(rows)
    assert serving_cases.read_cases(pd.DataFrame(catalog.load("serving_aic_silicon")))["fixed_lengths"].eq(1).all()
