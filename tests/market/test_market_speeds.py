"""``tokenomics market --speeds``: margins as curves, not points. Every row priced at several speeds per
user, the speed at which its implied margin is zero, and the median margin at each speed.

Each expected value says where it comes from (a hand calculation or the model's own pricing at that
speed).
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from tokenomics import market
from tokenomics.errors import TokenomicsError
from cli_run import run_cli


_cli = run_cli  # (exit code, stdout, stderr) of tokenomics ARGS


def test_zero_margin_speed_interpolates_the_first_crossing():
    # hand: between 30 (margin 0.1) and 40 (-0.3): 30 + 10 x 0.1 / 0.4 = 32.5
    assert market.zero_margin_speed([20, 30, 40], [0.5, 0.1, -0.3]) == pytest.approx(32.5)
    assert market.zero_margin_speed([20, 30, 40], [0.5, 0.0, -0.3]) == pytest.approx(30.0)
    assert np.isnan(market.zero_margin_speed([20, 30, 40], [-0.1, -0.2, -0.3]))  # below cost throughout
    assert np.isnan(market.zero_margin_speed([20, 30, 40], [0.5, 0.4, 0.3]))  # above cost throughout
    assert np.isnan(market.zero_margin_speed([20, 30, 40], [0.5, np.nan, -0.3]))  # unreachable in between


@pytest.fixture(scope="module")
def deepseek():
    """DeepSeek's own list price ($0.56 / $1.68 per M, published 21 tok/s/user) at 35 and 20."""
    t = market.load_prices().iloc[[0]]
    return t, market.market(t, speeds=[35, 20], spec="none")  # the cliff without MTP


def test_margins_at_each_speed(deepseek):
    t, df = deepseek
    r = df.iloc[0]
    cols = [market.speed_column(s) for s in (20, 35)]
    assert cols == ["implied_margin_frac_at_20_tok_per_s", "implied_margin_frac_at_35_tok_per_s"]
    assert [c for c in df.columns if c.startswith("implied_margin_frac_at_")] == cols  # sorted, one per speed
    # the point priced at the row's speed is unchanged by asking for the curve
    assert r["implied_margin_frac"] == pytest.approx(market.market(t, spec="none").iloc[0]["implied_margin_frac"])
    # each point is the margin of pricing the row at that speed (the same row with that published speed)
    at35 = t.assign(tok_per_s_per_user=35.0)
    assert r[cols[1]] == pytest.approx(market.market(at35, spec="none").iloc[0]["implied_margin_frac"])


def test_margin_falls_with_speed():
    """Faster per user costs more per token on the same chips: Llama 3.1 8B at $0.03 / $0.08 per M."""
    t = pd.DataFrame([{"provider": "P", "model": "llama-3.1-8b", "input_usd_per_m_tok": 0.03,
                       "output_usd_per_m_tok": 0.08, "source": "https://example.org", "as_of": "2026"}])
    r = market.market(t, speeds=[50, 200, 400]).iloc[0]
    m = [r[market.speed_column(s)] for s in (50, 200, 400)]
    assert m[0] > m[1] > m[2]
    # this price covers the cost at 50 tok/s/user (margin ~37 % today) and not at 200 (the crossing
    # is near 145 tok/s/user)
    assert m[0] > 0.2 and m[1] < -0.1
    assert 50 < r["zero_margin_tok_per_s_per_user"] < 200


def test_zero_margin_speed_lies_where_the_margin_changes_sign(deepseek):
    _, df = deepseek
    r = df.iloc[0]
    m20, m35 = r[market.speed_column(20)], r[market.speed_column(35)]
    assert m20 > 0 > m35  # DeepSeek-V3 on 8 x H200: wide EP serves 20 tok/s, not 35 (the layout cliff)
    assert 20 < r["zero_margin_tok_per_s_per_user"] < 35


def test_summary_gives_the_median_margin_at_each_speed(deepseek):
    _, df = deepseek
    s = market.summary(df)
    for v in (20, 35):
        assert s[f"median_{market.speed_column(v)}"] == pytest.approx(df[market.speed_column(v)].iloc[0])


def test_bad_speeds_one_line():
    t = market.load_prices().iloc[[0]]
    with pytest.raises(TokenomicsError, match="speeds"):
        market.market(t, speeds=[20, -5])


def test_cli_speeds_json_and_bad_input(capsys, tmp_path):
    f = tmp_path / "p.csv"
    pd.DataFrame([{"provider": "P", "model": "llama-3.1-8b", "input_usd_per_m_tok": 0.02, "output_usd_per_m_tok": 0.05,
                   "source": "https://example.org", "as_of": "2026"}]).to_csv(f, index=False)
    rc, out, err = _cli(["market", "--prices", str(f), "--speeds", "150,50", "--format", "json"], capsys)
    assert rc == 0, err
    row = json.loads(out)[0]
    for k in ("weight_precision", "speed_source", "cost_basis", "implied_margin_frac_at_50_tok_per_s",
              "implied_margin_frac_at_150_tok_per_s", "zero_margin_tok_per_s_per_user"):
        assert k in row
    rc, out, err = _cli(["market", "--prices", str(f), "--speeds", "150,50"], capsys)
    assert rc == 0 and "margin @50" in out and "median margin at 150 tok/s/user" in out
    for bad in ("20,abc", "0", "20,,35", "inf"):
        rc, out, err = _cli(["market", "--prices", str(f), "--speeds", bad], capsys)
        assert rc == 2 and err.count("\n") == 1 and "--speeds" in err, (bad, err)
