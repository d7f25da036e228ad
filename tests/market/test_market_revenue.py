"""``tokenomics market`` bills revenue as the provider does: cache hits at the row's cached-input list
price, and the implied margin over the same input / cached / output token mix on both sides (cost and
revenue), by the one margin function (``econ.pricing.gross_margin_frac``).

Each expected value says where it comes from (a hand calculation written out in the comment).
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from tokenomics import market
from cli_run import run_cli


_cli = run_cli  # (exit code, stdout, stderr) of tokenomics ARGS


def test_margins_hand_calculation_deepseek_cache_hits():
    """DeepSeek's list price $0.56 miss / $0.07 hit / $1.68 output per M, 56.3 % of input tokens hit
    (DeepSeek day-6), chat mix 1,024 / 1,024; modelled cost $0.044704 effective input (hits skip
    prefill) and $0.455248 output per M (DeepSeek-V3 on 8 x H200 at 21 tok/s/user).
    By hand: billed input = 0.437 x 0.56 + 0.563 x 0.07 = 0.24472 + 0.03941 = 0.28413 $/M;
    revenue per request = (0.28413 + 1.68) x 1024 / 1e6; cost = (0.044704 + 0.455248) x 1024 / 1e6;
    margin = 1 - 0.499952 / 1.96413 = 0.74546 (74.5 %). Billing every input token at the miss price
    (as before) gave 1 - 0.499952 / 2.24 = 0.77681 (77.7 %). Output alone: 1 - 0.455248 / 1.68 = 0.72902."""
    implied, out = market.margins(0.56, 0.07, 1.68, 0.044704, 0.455248, 1024, 1024, 0.563)
    assert implied == pytest.approx(0.74546, abs=1e-5)
    assert out == pytest.approx(0.72902, abs=1e-5)
    # no cached price published: a hit is billed at the miss price, 1 - 0.499952 / 2.24
    assert market.margins(0.56, np.nan, 1.68, 0.044704, 0.455248, 1024, 1024, 0.563)[0] == pytest.approx(0.77681, abs=1e-5)
    # no input price: the request margin is the output margin; no cost: NaN
    assert market.margins(np.nan, np.nan, 1.68, 0.044704, 0.455248, 1024, 1024)[0] == pytest.approx(0.72902, abs=1e-5)
    assert np.isnan(market.margins(0.56, 0.07, 1.68, np.nan, np.nan, 1024, 1024)[0])


def test_margins_use_the_workload_mix_on_both_sides():
    """openrouter-2025 mix, 6,000 input / 400 output tokens (OpenRouter's mean request, late 2025);
    list $0.50 miss / $0.10 hit / $2.00 output, half the input hits; cost $0.05 input, $0.80 output.
    By hand: billed input = 0.5 x 0.50 + 0.5 x 0.10 = 0.30; revenue = 0.30 x 6000 + 2.00 x 400 = 2600;
    cost = 0.05 x 6000 + 0.80 x 400 = 620 (USD per M requests); margin = 1 - 620 / 2600 = 0.761538.
    Weighing tokens 1:1 (the chat mix) would give 1 - (0.05 + 0.80) / (0.30 + 2.00) = 0.630435 instead."""
    implied, out = market.margins(0.50, 0.10, 2.00, 0.05, 0.80, 6000, 400, 0.5)
    assert implied == pytest.approx(1 - 620 / 2600)  # 0.761538
    assert market.margins(0.50, 0.10, 2.00, 0.05, 0.80, 1024, 1024, 0.5)[0] == pytest.approx(0.630435, abs=1e-6)
    assert out == pytest.approx(1 - 0.80 / 2.00)


@pytest.fixture(scope="module")
def deepseek_rows():
    """DeepSeek's own list price (first bundled row) at cache hits 0 and 0.563, chat and openrouter-2025."""
    t = market.load_prices().iloc[[0]]
    return {(w, h): market.market(t, workload=w, cache_hit_frac=h, spec="none").iloc[0]
            for w in ("chat", "openrouter-2025") for h in (0.0, 0.563)}


def test_market_bills_cache_hits_at_the_cached_price(deepseek_rows):
    r = deepseek_rows[("chat", 0.563)]
    assert (r["list_usd_per_m_input_tok"], r["list_usd_per_m_cached_input_tok"]) == (0.56, 0.07)
    assert r["list_usd_per_m_billed_input_tok"] == pytest.approx(0.437 * 0.56 + 0.563 * 0.07)  # 0.28413
    # same mix on both sides: the modelled effective input cost and the billed input price, 1,024 / 1,024
    cin, cout = r["cost_usd_per_m_input_tok"], r["cost_usd_per_m_output_tok"]
    assert r["implied_margin_frac"] == pytest.approx(1 - (cin + cout) / (0.28413 + 1.68), abs=1e-6)
    # today's model cost puts that at 74.5 % (77.7 % when hits were billed at the miss price)
    assert r["implied_margin_frac"] == pytest.approx(0.745, abs=0.005)
    no_hit = deepseek_rows[("chat", 0.0)]
    assert no_hit["list_usd_per_m_billed_input_tok"] == 0.56
    assert r["implied_margin_frac"] < 1 - (cin + cout) / (0.56 + 1.68)


def test_market_margin_at_a_non_chat_workload(deepseek_rows):
    """openrouter-2025: 6,000 input / 400 output tokens per request (datasets/workloads.csv)."""
    r = deepseek_rows[("openrouter-2025", 0.563)]
    assert r["workload"] == "openrouter-2025"
    cin, cout = r["cost_usd_per_m_input_tok"], r["cost_usd_per_m_output_tok"]
    billed = 0.437 * 0.56 + 0.563 * 0.07  # 0.28413 $/M
    want = 1 - (cin * 6000 + cout * 400) / (billed * 6000 + 1.68 * 400)
    assert r["implied_margin_frac"] == pytest.approx(want, abs=1e-9)
    # the input-heavy mix weighs the cheap cached input: a different margin from chat's
    assert abs(r["implied_margin_frac"] - deepseek_rows[("chat", 0.563)]["implied_margin_frac"]) > 0.005


def test_cli_cache_hit_json_carries_the_billed_input(capsys, tmp_path):
    f = tmp_path / "p.csv"
    pd.DataFrame([{"provider": "P", "model": "llama-3.1-8b", "input_usd_per_m_tok": 0.2,
                   "cached_input_usd_per_m_tok": 0.05, "output_usd_per_m_tok": 0.2, "source": "https://example.org",
                   "as_of": "2026-01-01"}]).to_csv(f, index=False)
    rc, out, err = _cli(["market", "--prices", str(f), "--cache-hit", "0.5", "--format", "json"], capsys)
    assert rc == 0, err
    row = json.loads(out)[0]
    assert row["list_usd_per_m_billed_input_tok"] == pytest.approx(0.5 * 0.2 + 0.5 * 0.05)  # 0.125
    assert row["cache_hit_frac"] == 0.5
