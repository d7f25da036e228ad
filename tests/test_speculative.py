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
    d = SpecDecode(draft_layers=1).draft_model(model("kimi-k3"))
    assert d.n_layers == 1 and d.n_moe_layers == 1 and d.vocab == 163840


def test_speedup_hand():
    # E(0.8, 4) = 3.3616; cost 1.1 + 4 x 0.05 = 1.3
    assert float(speedup(0.8, 4, 1.1, 0.05)) == pytest.approx(3.3616 / 1.3)
