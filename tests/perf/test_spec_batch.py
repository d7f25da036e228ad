"""Speculative decoding at batch: the verify step's FLOPs, acceptance by draft position, the draft's
prefill."""

import numpy as np
import pytest

from tokenomics.catalog import load, model
from tokenomics.deployment import _spec, resolve
from tokenomics.errors import ValidationError
from tokenomics.perf.ops import build_ops
from tokenomics.perf.speculative import (SpecDecode, expected_tokens_per_step, position_acceptance,
                                         tokens_per_step_by_position)
from tokenomics.perf.step import decode_step
from tokenomics.specs import plan


def _gemm_flop(batch, tokens_per_step):
    ops = build_ops(model("llama-3.1-8b"), plan("graph"), batch=batch, context_tok=1024,
                    tokens_per_step=tokens_per_step, phase="decode")
    return sum(float(o.count * o.flop) for o in ops if o.kind == "gemm")


def test_verify_step_gemm_flops_hand():
    # Llama 3.1 8B (hidden 4096, 32 layers, 8 KV heads of 128, FFN 14336, vocab 128256), 64
    # sequences verifying 3 drafts each: 64 * (3 + 1) = 256 rows through every GEMM, the lm head
    # included (every verified position needs its logits). Hand calculation, 2 FLOP per MAC:
    per_layer = 4096 * (4096 + 2 * 1024) + 4096 * 4096 + 4096 * 2 * 14336 + 14336 * 4096
    expected = 2 * 256 * (32 * per_layer + 4096 * 128256)
    assert _gemm_flop(64, 4) == pytest.approx(expected, rel=1e-12)
    # ... the same FLOPs as 256 sequences decoding one token each
    assert _gemm_flop(64, 4) == pytest.approx(_gemm_flop(256, 1), rel=1e-12)


def test_large_batch_verify_is_compute_bound():
    # one sequence: the 4-token verify step re-reads the same weights, costing little more than a
    # 1-token step. 512 sequences at 1k context (H200, BF16; hand estimate): weights 16 GB / 4.8 TB/s
    # ~ 3.3 ms and KV 512 * 1024 * 131 kB = 69 GB ~ 14 ms, read once either way; GEMMs
    # 2 * 8e9 * 512 = 8 TFLOP (~8 ms at ~1 PFLOP/s) for one token, 33 TFLOP (~33 ms) for 2,048 rows:
    # (14 + 33) / (14 + 8) ~ 2.1, so the verify step is compute-bound and a deeper draft no longer free.
    def ratio(b):
        one = decode_step("h200", "llama-3.1-8b", batch=b, context_tok=1024, tokens_per_step=1, on_oom="ignore")
        four = decode_step("h200", "llama-3.1-8b", batch=b, context_tok=1024, tokens_per_step=4, on_oom="ignore")
        return float(four.step_time_s / one.step_time_s), four

    small, _ = ratio(1)
    large, step = ratio(512)
    assert small < 1.3
    assert large > 1.8
    assert float(step.compute_time_s) > float(step.mem_time_s)


def test_acceptance_by_position_gives_published_acceptance_lengths():
    # NVIDIA's DeepSeek-R1 MTP acceptance lengths at depths 1, 2, 3: 1.92, 2.58, 2.82 tokens a step
    # (datasets/spec_acceptance.csv); the table's per-position rates must give them back
    for depth, al in ((1, 1.92), (2, 2.58), (3, 2.82)):
        assert tokens_per_step_by_position(position_acceptance("mtp", depth)) == pytest.approx(al, abs=5e-4)
        assert _spec(f"mtp:{depth}").tokens_per_step == pytest.approx(al, abs=5e-4)


def test_position_table_is_sourced_and_decays():
    df = load("spec_acceptance")
    assert df["source"].notna().all() and df["as_of"].notna().all()
    p = df[df["method"] == "mtp"].sort_values("position")["acceptance_frac"].to_numpy()
    assert np.all(np.diff(p) < 0)  # each later position is accepted less often


def test_equal_rates_reduce_to_the_iid_formula():
    # p_k = alpha for every k: 1 + a + a^2 + a^3 = (1 - a^4) / (1 - a)
    assert tokens_per_step_by_position([0.6] * 3) == pytest.approx(float(expected_tokens_per_step(0.6, 3)))
    # hand: 1 + 0.9 + 0.9 * 0.5 = 2.35
    assert tokens_per_step_by_position([0.9, 0.5]) == pytest.approx(2.35)


def test_by_position_alpha_is_the_equivalent_single_rate():
    s = SpecDecode.by_position("mtp", 2)
    assert float(expected_tokens_per_step(s.alpha, 2)) == pytest.approx(s.tokens_per_step, rel=1e-9)


def test_a_new_alpha_drops_the_position_table():
    s = _spec("mtp:3").replace(alpha=0.5)
    assert s.position_acceptance is None
    assert s.tokens_per_step == pytest.approx(1.875)  # 1 + 0.5 + 0.25 + 0.125


def test_position_table_errors_are_one_line():
    with pytest.raises(ValidationError, match="eagle:GAMMA:ALPHA"):
        _spec("eagle:2")
    with pytest.raises(ValidationError, match="positions 1-3, not 4"):
        _spec("mtp:4")
    with pytest.raises(ValidationError, match="one per draft token"):
        SpecDecode("mtp", 2, 0.8, position_acceptance=(0.9,))


def test_draft_prefills_the_prompt():
    # DeepSeek-V3 with MTP: the draft module (one layer of the target's 61 plus its lm head) also
    # prefills every prompt; the first token pays it. Its share of the prefill: about one layer in 61.
    base = resolve("deepseek-v3", system="dgx-h200", tp=8, ep=8, dp_attention=False)
    mtp = resolve("deepseek-v3", system="dgx-h200", tp=8, ep=8, dp_attention=False, spec="mtp")
    a = base.prefill(4096, batch=2)
    b = mtp.prefill(4096, batch=2)
    assert float(b.step_time_s) == pytest.approx(float(a.step_time_s) + float(b.draft_s), rel=1e-9)
    share = float(b.draft_s) / float(a.step_time_s)
    assert 1 / 61 * 0.5 < share < 1 / 61 * 2
    assert float(a.draft_s) == 0.0
