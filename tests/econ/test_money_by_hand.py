"""The price arithmetic at non-default money inputs, re-derived by hand from the result's own parts.

Golden figures pin these numbers; these tests say why they are what they are, so that a change to
the arithmetic (weights swapped, power of the wrong hours, the all-in charge inverted) fails with a
reason rather than only a moved figure."""

import numpy as np
import pytest

from tokenomics import chain

KW = dict(batch=32, workload="openrouter-2025", utilization_frac=0.6, margin_frac=0.3, cache_hit_frac=0.5)


@pytest.fixture(scope="module")
def both():
    return {c: chain.price("h200", "llama-3.1-8b", output_convention=c, **KW) for c in ("decode-only", "all-in")}


def _f(x):
    return float(np.asarray(x, float).ravel()[0])


def test_all_in_charges_the_prompt_to_the_output(both):
    # all-in output = decode-only output + input price x (1 - hit) x input/output tokens (6,000 / 400),
    # and input tokens pay nothing
    d, a = both["decode-only"], both["all-in"]
    want = _f(d.usd_per_m_output_tok) + _f(d.usd_per_m_input_tok) * (1 - 0.5) * 6000 / 400
    assert _f(a.usd_per_m_output_tok) == pytest.approx(want, rel=1e-12)
    assert _f(a.usd_per_m_input_tok) == 0.0


def test_energy_per_token_is_busy_power_over_throughput(both):
    # joules per token: the board power while decoding over the tokens it makes, whatever share of
    # hours is sold (idle hours cost electricity but make no tokens)
    d = both["decode-only"]
    assert _f(d.energy_j_per_tok) == pytest.approx(_f(d.board_power_w) / _f(d.tok_per_s_per_chip), rel=1e-12)


def test_price_is_cost_over_sold_tokens_and_margin(both):
    # USD per M output tokens = cost per chip-hour / (tokens per chip-hour x utilization) / (1 - margin)
    d = both["decode-only"]
    tok_per_h = _f(d.tok_per_s_per_chip) * 3600
    want = _f(d.cost_usd_per_chip_h) / (tok_per_h * 0.6) / (1 - 0.3) * 1e6
    assert _f(d.usd_per_m_output_tok) == pytest.approx(want, rel=1e-12)
