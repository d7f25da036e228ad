"""Prices dated by when they took effect: one date picker for the decline fits and the price index."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from tokenomics.errors import DataError
from tokenomics.watch import prices as pr
from tokenomics.watch.price_index import hedonic_sample


def _rows(prices, effective, as_of="2026-08-05", date=None) -> pd.DataFrame:
    """API price rows (the columns of datasets/api_prices.csv), one 100B+ frontier line."""
    n = len(prices)
    return pd.DataFrame({
        "date": [as_of] * n if date is None else date, "provider": ["P"] * n, "model": [f"m{i}" for i in range(n)],
        "line": ["l"] * n, "tier": ["frontier"] * n, "size_class": ["100b+"] * n, "price_kind": ["list"] * n,
        "input_usd_per_m_tok": prices, "output_usd_per_m_tok": prices, "blended_usd_per_m_tok": prices,
        "source": ["hand-made"] * n, "as_of": [as_of] * n, "price_effective_date": effective,
    })


def test_a_row_with_both_dates_uses_the_effective_one():
    df = pd.DataFrame({"date": ["2026-08-05", "2026-08-05", ""], "as_of": ["2026-08-05"] * 3,
                       "price_effective_date": ["2025-11-18", np.nan, np.nan]})
    text, basis = pr.price_date(df)
    assert list(text) == ["2025-11-18", "2026-08-05", "2026-08-05"]
    assert list(basis) == ["price_effective_date", "date", "as_of"]
    loaded = pr.load_prices(_rows([8.0, 4.0], ["2025-11-18", np.nan]))
    assert str(loaded["date_parsed"].iloc[0])[:10] == "2025-11-18"
    assert str(loaded["date_parsed"].iloc[1])[:10] == "2026-08-05"
    assert list(loaded["date_basis"]) == ["price_effective_date", "date"]


def test_no_date_column_is_a_one_line_error():
    with pytest.raises(DataError, match="no date column"):
        pr.price_date(pd.DataFrame({"provider": ["P"]}))


def test_decline_on_three_rows_with_known_effective_dates():
    # Hand calculation: 8, 4, 2 USD/M taking effect on 1 Jan 2024, 2025, 2026 halve each year, so
    # ln p = a - ln(2) t exactly and the decline factor is exp(ln 2) = 2.00x a year with r2 = 1.
    # Dated by the snapshot's as_of alone (one day for all three) there is no time spread to fit.
    rows = _rows([8.0, 4.0, 2.0], ["2024-01-01", "2025-01-01", "2026-01-01"])
    r = pr.decline_rates(rows, by="all", size_class=pr.SIZE_100B).iloc[0]
    assert r["decline_factor_per_year"] == pytest.approx(2.0, rel=1e-9)
    assert r["r2"] == pytest.approx(1.0, abs=1e-12)
    assert r["dates"] == "3 price_effective_date"
    undated = pr.decline_rates(rows.drop(columns=["price_effective_date"]), by="all", size_class=pr.SIZE_100B)
    assert np.isnan(undated.iloc[0]["decline_factor_per_year"])
    assert undated.iloc[0]["dates"] == "3 date"


def test_cut_events_are_dated_when_the_price_took_effect():
    ev = pr.cut_events(_rows([8.0, 4.0], ["2025-03-01", "2025-09-01"]))
    g = ev[ev["region"] == "global"].iloc[0]
    assert str(g["date"])[:10] == "2025-09-01"  # the second price's effective date, not 2026-08-05
    assert g["change_frac"] == pytest.approx(-0.5)  # 8 -> 4 by hand
    assert g["date_basis"] == "price_effective_date"


def test_price_index_dates_market_rows_by_the_effective_date():
    market = pd.DataFrame({
        "provider": ["X", "X"], "model": ["deepseek-v3", "deepseek-v3"],
        "input_usd_per_m_tok": [1.0, 0.5], "cached_input_usd_per_m_tok": [np.nan, np.nan],
        "output_usd_per_m_tok": [4.0, 2.0], "tok_per_s_per_user": [np.nan, np.nan],
        "source": ["hand-made"] * 2, "date": ["2026-08-21", "2026-08-21"], "as_of": ["2026-08-21"] * 2,
        "price_effective_date": ["2025-07-13", np.nan], "also_in": ["", ""],
    })
    s = hedonic_sample(market=market)
    mine = s[s["file"] == "market_prices.csv"].sort_values("row")
    assert [str(d)[:10] for d in mine["date"]] == ["2025-07-13", "2026-08-21"]
    assert list(mine["date_basis"]) == ["price_effective_date", "date"]


def test_bundled_catalogue_rows_carry_a_date_source():
    from tokenomics import catalog

    mp = catalog.load("market_prices")
    cat = mp["source"].astype(str).str.contains("genai-prices")
    assert cat.sum() > 100
    # every catalogue row says where its effective date came from (a commit) or why it has none
    assert mp.loc[cat, "date_source"].astype(str).str.contains("genai-prices commit|no effective date").all()
    eff = pd.to_datetime(mp.loc[cat, "price_effective_date"])
    assert (eff <= pd.to_datetime(mp.loc[cat, "as_of"])).all()  # took effect no later than last seen
