"""Fit the margin path the forecast's price path marks cost up by, from the bundled price list.

    python tools/fit_market_margin.py

The margin is the median implied gross margin of every list price ``tokenomics market`` prices
with its defaults (``datasets/market_prices.csv``: the precision, speculative decoding and speed
each provider serves); its trend is the median regression of those margins on the date each price
took effect (``tokenomics.forecast.roadmap.market_margin_trend``). Both are written to
``datasets/demand_scenarios.csv`` (``market_margin_frac``; ``market_margin_trend_frac_per_year``
with its 95 % interval as the ``low`` / ``high`` scenarios, and ``market_margin_trend_centre_year``),
so a price path need not price the whole list again; ``tests/forecast/test_forecast_roadmap.py``
checks, in the integration tier, that they still equal the list's fit.
"""

from __future__ import annotations

import csv
import io
from pathlib import Path

from tokenomics.forecast.roadmap import market_margin_frac, market_margin_trend

OUT = Path(__file__).resolve().parent.parent / "tokenomics" / "datasets" / "demand_scenarios.csv"


def main() -> None:
    margin, n = market_margin_frac()
    tr = market_margin_trend()
    src = "tokenomics market on tokenomics/datasets/market_prices.csv (tools/fit_market_margin.py)"
    span = f"{tr['first_year']:.2f}-{tr['last_year']:.2f}"
    trend_note = (f"fitted: statsmodels QuantReg (median) of the implied gross margins of {tr['n']} priced list prices "
                  f"on the decimal year each took effect ({span}); the forecast's roadmap follows it only where the "
                  "95 % interval excludes zero")
    rows = [
        ["market_margin_frac", "all", repr(margin), "fraction of the list price", src, "2026-12-07",
         f"fitted: median implied gross margin of the {n} list prices the market prices with its defaults "
         "(served precision, speculative decoding and speed); the forecast's roadmap marks cost up by it"],
        ["market_margin_trend_frac_per_year", "low", repr(tr["slope_lo_95"]), "fraction of the list price per year",
         src, "2026-12-08", "lower end of the slope's 95 % interval; " + trend_note],
        ["market_margin_trend_frac_per_year", "base", repr(tr["slope_frac_per_year"]),
         "fraction of the list price per year", src, "2026-12-08", "the slope; " + trend_note],
        ["market_margin_trend_frac_per_year", "high", repr(tr["slope_hi_95"]), "fraction of the list price per year",
         src, "2026-12-08", "upper end of the slope's 95 % interval; " + trend_note],
        ["market_margin_trend_centre_year", "all", repr(tr["centre_year"]), "decimal year", src, "2026-12-08",
         "mean date of the prices the margin trend is fitted on: where the trend passes through the median"],
    ]
    names = {r[0] for r in rows}
    lines = [ln for ln in OUT.read_text().splitlines() if ln.split(",", 1)[0] not in names]
    out = []
    for r in rows:
        buf = io.StringIO()
        csv.writer(buf, lineterminator="").writerow(r)
        out.append(buf.getvalue())
    OUT.write_text("\n".join(lines + out) + "\n")
    print(f"market_margin_frac={margin!r} n={n} trend={tr}")


if __name__ == "__main__":
    main()
