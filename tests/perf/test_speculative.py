"""Speculative decoding: expected tokens per step (hand and properties), draft module."""

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from tokenomics.catalog import model
from tokenomics.errors import ValidationError
from tokenomics.perf.speculative import SpecDecode, expected_tokens_per_step, speedup


@pytest.mark.parametrize(
    "alpha, gamma, expected",
    [
        (0.5, 3, 1.875),   # (1 - 0.5^4) / 0.5
        (0.0, 4, 1.0),     # nothing accepted: the target's own token only
        (1.0, 4, 5.0),     # everything accepted: gamma + 1
        (0.8, 0, 1.0),     # no draft
        (0.77, 4, (1 - 0.77 ** 5) / 0.23),
    ],
)
def test_expected_tokens_hand(alpha, gamma, expected):
    assert float(expected_tokens_per_step(alpha, gamma)) == pytest.approx(expected)


def test_vectorized():
    e = expected_tokens_per_step(np.array([0.5, 0.9]), np.array([[1], [3]]))
    assert e.shape == (2, 2)
    assert e[0, 0] == pytest.approx(1.5)  # 1 + 0.5


@settings(max_examples=50, deadline=None)
@given(a=st.floats(0, 0.999), da=st.floats(0, 0.5), g=st.integers(0, 12))
def test_monotone_and_bounded(a, da, g):
    e = float(expected_tokens_per_step(a, g))
    assert 1.0 - 1e-12 <= e <= g + 1 + 1e-12
    assert float(expected_tokens_per_step(min(a + da, 1.0), g)) >= e - 1e-12
    assert float(expected_tokens_per_step(a, g + 1)) >= e - 1e-12


def test_percent_gets_a_hint():
    with pytest.raises(ValidationError, match="did you mean 0.77"):
        expected_tokens_per_step(77, 4)


def test_dspark_default_matches_plan_params_derivation():
    # plan_params.csv: MTP-1 1.875 tok/step x ~1.7 (DSpark speed-up) ~ 3.2 tokens/step at gamma 4
    assert SpecDecode("dspark", 4, 0.77).tokens_per_step == pytest.approx(3.2, rel=0.02)


def test_draft_module_is_one_layer_of_the_target():
    # MTP-style: no catalogued kimi-k3-mtp, so one layer of the target
    d = SpecDecode("mtp", draft_layers=1).draft_model(model("kimi-k3"))
    assert d.n_layers == 1 and d.n_moe_layers == 1 and d.vocab == 163840


def test_dspark_drafts_with_kimi_k3s_published_draft():
    """kimi/dspark.py DraftConfig (Inferact): 5 dense layers, hidden 7168, 96 / 16 heads of 64,
    SwiGLU 14336, vocab 163840. Parameters by hand: per layer q 7168x6144 + k, v 2 x 7168x1024
    + o 6144x7168 + 3 x 7168x14336 = 411.0 M; x 5 = 2.055 B; embedding + lm head
    2 x 163840 x 7168 = 2.349 B; total 4.404 B."""
    d = SpecDecode("dspark").draft_model(model("kimi-k3"))
    assert d.name == "kimi-k3-dspark" and d.n_layers == 5 and not d.is_moe
    per_layer = 7168 * 6144 * 2 + 2 * 7168 * 1024 + 3 * 7168 * 14336
    assert d.total_params() == pytest.approx(5 * per_layer + 2 * 163840 * 7168, rel=1e-3)
    # a target without a catalogued draft falls back to its own layers; 0 layers = no model
    assert SpecDecode("dspark").draft_model(model("deepseek-v3")).n_layers == 1
    assert SpecDecode("ngram", draft_layers=0).draft_model(model("deepseek-v3")) is None


def test_block_draft_is_one_pass_of_gamma_plus_one_rows():
    s = SpecDecode("dspark", 7, 0.9, block=True)
    assert (s.draft_rows, s.draft_passes) == (8, 1)
    assert (SpecDecode("mtp", 3, 0.8).draft_rows, SpecDecode("mtp", 3, 0.8).draft_passes) == (1, 3)


@pytest.mark.parametrize("al, gamma", [(6.0, 7), (3.0, 7), (1.875, 3), (1.0, 4), (5.0, 4)])
def test_from_acceptance_length_inverts_expected_tokens(al, gamma):
    s = SpecDecode.from_acceptance_length(al, gamma, method="dspark", block=True)
    assert s.tokens_per_step == pytest.approx(al, rel=1e-9) and s.block and s.gamma == gamma


def test_from_acceptance_length_rejects_impossible_lengths():
    with pytest.raises(ValidationError, match=r"outside \[1, gamma \+ 1\] = \[1, 8\]"):
        SpecDecode.from_acceptance_length(9, 7)


def test_speedup_hand():
    # E(0.8, 4) = 3.3616; cost 1.1 + 4 x 0.05 = 1.3
    assert float(speedup(0.8, 4, 1.1, 0.05)) == pytest.approx(3.3616 / 1.3)
