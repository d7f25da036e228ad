"""``tokenomics market`` bills revenue as the provider bills it where a row has off-peak prices:
each token type at the blend of its off-peak and standard (peak) price, weighted by the share of
tokens billed off-peak (``off_peak_share_frac``, else ``off_peak_hours_per_week`` / 168: a flat
hourly load), through the one margin function (``market.margins``).

Each expected value says where it comes from (a hand calculation written out in the comment).
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from tokenomics import market
from tokenomics.errors import DataError, ValidationError
from cli_run import run_cli

_cli = run_cli

#: DeepSeek's V3 standard-hours list price of 2025-07 (bundled market_prices.csv, genai-prices
#: deepseek.yml, model id deepseek-chat) and its off-peak price (UTC 16:30-00:30 every day).
V3_2025 = {"input": 0.27, "cached": 0.07, "output": 1.10}
V3_2025_OFF = {"input": 0.135, "cached": 0.035, "output": 0.55}


def _v3_2025_row() -> pd.DataFrame:
    t = market.load_prices()
    hit = t[(t["provider"] == "DeepSeek") & (t["input_usd_per_m_tok"] == 0.27)
            & (t["output_usd_per_m_tok"] == 1.10)]
    assert len(hit) == 1
    return hit


def test_flat_load_share_hand_calculation():
    # DeepSeek V4 (2026-08-16): peak = weekdays 09:00-12:00 and 14:00-18:00 Beijing = 5 x (3 + 4) = 35 h;
    # off-peak = 168 - 35 = 133 h; under a flat load 133 / 168 = 0.791667 of the week's tokens
    assert market.flat_load_off_peak_share_frac(168 - 5 * 7) == pytest.approx(133 / 168)
    assert 133 / 168 == pytest.approx(0.7917, abs=5e-5)
    # DeepSeek 2025 discount: UTC 16:30-00:30 = 8 h a day, 7 days = 56 h; 56 / 168 = 1/3
    assert market.flat_load_off_peak_share_frac(56) == pytest.approx(1 / 3)
    assert market.billing_label(133 / 168) == "peak/off-peak, 79 % off-peak"
    assert market.billing_label(float("nan")) == "flat"


def test_blended_price_v4_flash_hand_calculation():
    """V4-Flash from 2026-08-16 (datasets/china_price_cuts.csv): off-peak 1.5 CNY per M cache-miss input,
    peak twice that; CNY -> USD at the rows' 7.0197 (CFETS 2026-01-08). Off-peak $0.213684, peak $0.427369;
    blended over 133 / 168 off-peak = off-peak x (0.791667 + 2 x 0.208333) = off-peak x 1.208333 = $0.258202.
    Output 4.5 CNY -> $0.641053 off-peak, $1.282106 peak, blended x 1.208333 = $0.774606."""
    s = 133 / 168
    off_in, off_out = 1.5 / 7.0197, 4.5 / 7.0197
    assert market.blended_price_usd_per_m_tok(2 * off_in, off_in, s) == pytest.approx(0.258202, abs=1e-6)
    assert market.blended_price_usd_per_m_tok(2 * off_out, off_out, s) == pytest.approx(0.774606, abs=1e-6)
    # no off-peak price (NaN): billed flat, the price itself; vectorised over rows
    got = market.blended_price_usd_per_m_tok([1.0, 2.0], [0.5, np.nan], [0.5, np.nan])
    np.testing.assert_allclose(got, [0.75, 2.0])


def test_bundled_deepseek_2025_rows_carry_their_off_peak_prices():
    t = market.load_prices()
    off = t[np.isfinite(t["off_peak_output_usd_per_m_tok"])]
    # exactly the two DeepSeek standard-hours rows priced while the 2025 discount ran (2025-02-26 to 2025-09-05)
    assert len(off) == 2 and set(off["provider"]) == {"DeepSeek"}
    assert (off["price_effective_date"] >= "2025-02-26").all() and (off["price_effective_date"] < "2025-09-05").all()
    assert set(off["off_peak_hours_per_week"]) == {56.0}
    # same off-peak price for V3 (50 % off 0.27 / 0.07 / 1.10) and R1 (about 75 % off 0.55 / 0.14 / 2.19)
    assert set(off["off_peak_input_usd_per_m_tok"]) == {0.135} and set(off["off_peak_output_usd_per_m_tok"]) == {0.55}


def test_margins_hand_calculation_deepseek_v3_off_peak():
    """DeepSeek V3, 2025-07: standard $0.27 miss / $0.07 hit / $1.10 output, off-peak $0.135 / $0.035 / $0.55,
    1/3 of tokens off-peak (56 / 168). Blended: input 0.27 - (0.27 - 0.135) / 3 = 0.225; hit 0.07 - 0.035 / 3
    = 0.058333; output 1.10 - 0.55 / 3 = 0.916667. With 56.3 % cache hits and the modelled cost of
    test_market_revenue ($0.044704 effective input, $0.455248 output per M), chat 1,024 / 1,024:
    billed input = 0.437 x 0.225 + 0.563 x 0.058333 = 0.098325 + 0.032842 = 0.131167;
    margin = 1 - (0.044704 + 0.455248) / (0.131167 + 0.916667) = 1 - 0.499952 / 1.047833 = 0.522871.
    Billed flat at the standard price: 0.437 x 0.27 + 0.563 x 0.07 = 0.1574, 1 - 0.499952 / 1.2574 = 0.602392.
    Output alone: 1 - 0.455248 / 0.916667 = 0.503366 (0.586138 flat)."""
    s = market.flat_load_off_peak_share_frac(56)
    bl = {k: float(market.blended_price_usd_per_m_tok(V3_2025[k], V3_2025_OFF[k], s)) for k in V3_2025}
    assert (bl["input"], bl["cached"], bl["output"]) == pytest.approx((0.225, 0.058333, 0.916667), abs=1e-6)
    implied, out = market.margins(bl["input"], bl["cached"], bl["output"], 0.044704, 0.455248, 1024, 1024, 0.563)
    assert implied == pytest.approx(0.522871, abs=1e-6)
    assert out == pytest.approx(0.503366, abs=1e-6)
    flat = market.margins(0.27, 0.07, 1.10, 0.044704, 0.455248, 1024, 1024, 0.563)
    assert flat == pytest.approx((0.602392, 0.586138), abs=1e-6)


def test_market_row_bills_the_blend():
    row = _v3_2025_row()
    r = market.market(row, cache_hit_frac=0.563).iloc[0]
    assert r["billing"] == "peak/off-peak, 33 % off-peak"
    assert r["off_peak_share_frac"] == pytest.approx(1 / 3)
    # the list columns keep the standard price; the blended ones are what the revenue is billed at
    assert (r["list_usd_per_m_input_tok"], r["list_usd_per_m_output_tok"]) == (0.27, 1.10)
    assert (r["list_usd_per_m_blended_input_tok"], r["list_usd_per_m_blended_cached_input_tok"],
            r["list_usd_per_m_blended_output_tok"]) == pytest.approx((0.225, 0.058333, 0.916667), abs=1e-6)
    assert r["list_usd_per_m_billed_input_tok"] == pytest.approx(0.131167, abs=1e-6)  # as in the hand calculation
    cin, cout = r["cost_usd_per_m_input_tok"], r["cost_usd_per_m_output_tok"]
    assert r["implied_margin_frac"] == pytest.approx(1 - (cin + cout) / (0.131167 + 0.916667), abs=1e-5)
    assert r["output_margin_frac"] == pytest.approx(1 - cout / 0.916667, abs=1e-6)
    # a load shape of your own: half the tokens off-peak -> output 0.5 x 0.55 + 0.5 x 1.10 = 0.825
    h = market.market(row, off_peak_share_frac=0.5).iloc[0]
    assert h["billing"] == "peak/off-peak, 50 % off-peak"
    assert h["list_usd_per_m_blended_output_tok"] == pytest.approx(0.825)
    # all tokens at the standard price (share 0) is the flat margin
    z = market.market(row, off_peak_share_frac=0.0).iloc[0]
    assert z["implied_margin_frac"] == pytest.approx(
        market.margins(0.27, 0.07, 1.10, z["cost_usd_per_m_input_tok"], z["cost_usd_per_m_output_tok"], 1024, 1024)[0])


def test_flat_rows_unchanged():
    t = market.load_prices()
    flat = t.iloc[[0]]  # DeepSeek-V3.1, 2025-09-05: the discount ended that day, billed flat
    assert not np.isfinite(flat["off_peak_output_usd_per_m_tok"].iloc[0])
    a = market.market(flat).iloc[0]
    b = market.market(flat, off_peak_share_frac=0.9).iloc[0]  # the option touches only off-peak rows
    assert a["billing"] == b["billing"] == "flat" and np.isnan(a["off_peak_share_frac"])
    assert (a["list_usd_per_m_blended_input_tok"], a["list_usd_per_m_blended_cached_input_tok"],
            a["list_usd_per_m_blended_output_tok"]) == (0.56, 0.07, 1.68)
    assert a["implied_margin_frac"] == b["implied_margin_frac"] == market.margins(
        0.56, 0.07, 1.68, a["cost_usd_per_m_input_tok"], a["cost_usd_per_m_output_tok"], 1024, 1024)[0]


def _file(tmp_path, **extra) -> str:
    """A one-row price file: a DeepSeek V4-Flash-like peak / off-peak price (USD at 7.0197 CNY per USD:
    peak 3 / 0.1 / 9 CNY per M) priced on the catalogued deepseek-v3 (the mechanics, not V4's cost)."""
    row = {"provider": "DeepSeek", "model": "deepseek-v3", "input_usd_per_m_tok": 0.427369,
           "cached_input_usd_per_m_tok": 0.014246, "output_usd_per_m_tok": 1.282106,
           "off_peak_input_usd_per_m_tok": 0.213684, "off_peak_cached_input_usd_per_m_tok": 0.007123,
           "off_peak_output_usd_per_m_tok": 0.641053, "off_peak_hours_per_week": 133,
           "source": "https://api-docs.deepseek.com/quick_start/pricing", "as_of": "2026-08-25"}
    row.update(extra)
    f = tmp_path / "p.csv"
    pd.DataFrame([row]).to_csv(f, index=False)
    return str(f)


def test_cli_json_carries_billing_and_blended_prices(tmp_path, capsys):
    rc, out, err = _cli(["market", "--prices", _file(tmp_path), "--format", "json"], capsys)
    assert rc == 0, err
    r = json.loads(out)[0]
    assert r["billing"] == "peak/off-peak, 79 % off-peak"
    assert r["off_peak_share_frac"] == pytest.approx(133 / 168)
    # 0.641053 x 133/168 + 1.282106 x 35/168 = 0.507500 + 0.267105 = 0.774605
    assert r["list_usd_per_m_blended_output_tok"] == pytest.approx(0.774605, abs=1e-6)
    rc, out, err = _cli(["market", "--prices", _file(tmp_path), "--off-peak-share", "0.6", "--format", "json"], capsys)
    assert rc == 0, err
    # 0.6 x 0.641053 + 0.4 x 1.282106 = 0.384632 + 0.512842 = 0.897474
    assert json.loads(out)[0]["list_usd_per_m_blended_output_tok"] == pytest.approx(0.897474, abs=1e-6)
    # a row's own share wins over its hours (a stated load shape)
    rc, out, err = _cli(["market", "--prices", _file(tmp_path, off_peak_share_frac=0.6), "--format", "json"], capsys)
    assert json.loads(out)[0]["billing"] == "peak/off-peak, 60 % off-peak"


@pytest.mark.parametrize("extra, needle", [
    ({"off_peak_output_usd_per_m_tok": 1.5},
     "off_peak_output_usd_per_m_tok must not exceed output_usd_per_m_tok (the off-peak price is the lower one), "
     "got 1.5 > 1.28211"),
    ({"off_peak_hours_per_week": "", "off_peak_share_frac": 79},
     "off_peak_share_frac: expected a fraction 0-1, got 79 (a percent? did you mean 0.79?)"),
    ({"off_peak_hours_per_week": ""}, "off-peak prices without off_peak_hours_per_week or off_peak_share_frac"),
    ({"off_peak_hours_per_week": 200}, "off_peak_hours_per_week must be <= 168, got 200"),
    ({"off_peak_cached_input_usd_per_m_tok": ""},
     "cached_input_usd_per_m_tok is given but off_peak_cached_input_usd_per_m_tok is empty"),
    ({"off_peak_cached_input_usd_per_m_tok": 0.3},
     "off_peak_cached_input_usd_per_m_tok must not exceed cached_input_usd_per_m_tok"),
    ({"off_peak_input_usd_per_m_tok": "", "off_peak_cached_input_usd_per_m_tok": "",
      "off_peak_output_usd_per_m_tok": ""}, "an off-peak window (off_peak_hours_per_week or off_peak_share_frac) "
                                            "without an off-peak price"),
    ({"off_peak_share_frac": "most"}, "off_peak_share_frac is not a number, got 'most'"),
])
def test_bad_off_peak_cells_are_one_line(tmp_path, capsys, extra, needle):
    f = _file(tmp_path, **extra)
    with pytest.raises(DataError) as exc:
        market.load_prices(f)
    msg = str(exc.value)
    assert "\n" not in msg and "row 1 (line 2)" in msg and needle in msg, msg
    rc, out, err = _cli(["market", "--prices", f, "--format", "csv"], capsys)
    assert rc == 2 and out == "" and needle in err


@pytest.mark.parametrize("value, needle", [
    (79, "expected a fraction 0-1, got 79 (a percent? did you mean 0.79?)"),
    (-0.1, "expected a fraction 0-1, got -0.1"),
    (float("nan"), "expected a fraction 0-1, got nan"),
])
def test_bad_share_option(tmp_path, capsys, value, needle):
    with pytest.raises(ValidationError, match=r"off_peak_share_frac: " + needle.replace("(", r"\(").replace(")", r"\)")
                       .replace("?", r"\?")):
        market.market(_file(tmp_path), off_peak_share_frac=value)
    rc, out, err = _cli(["market", "--prices", _file(tmp_path), "--off-peak-share", str(value), "--format", "csv"], capsys)
    assert rc == 2 and out == "" and f"--off-peak-share: {needle}" in err
