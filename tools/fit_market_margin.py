"""Fit the gross margin the forecast's price path marks cost up by, from the bundled price list.

    python tools/fit_market_margin.py

The margin is the median implied gross margin of every list price ``tokenomics market`` prices
with its defaults (``datasets/market_prices.csv``: the precision, speculative decoding and speed
each provider serves). It is written to ``datasets/demand_scenarios.csv`` as
``market_margin_frac`` (so a price path need not price the whole list again);
``tests/forecast/test_forecast_roadmap.py`` checks, in the integration tier, that it still equals
the list's median.
"""

from __future__ import annotations

import csv
import io
from pathlib import Path

from tokenomics.forecast.roadmap import market_margin_frac

OUT = Path(__file__).resolve().parent.parent / "tokenomics" / "datasets" / "demand_scenarios.csv"


def main() -> None:
    margin, n = market_margin_frac()
    lines = [ln for ln in OUT.read_text().splitlines() if not ln.startswith("market_margin_frac,")]
    buf = io.StringIO()
    csv.writer(buf, lineterminator="").writerow(
        ["market_margin_frac", "all", repr(margin), "fraction of the list price",
         "tokenomics market on tokenomics/datasets/market_prices.csv (tools/fit_market_margin.py)", "2026-12-07",
         f"fitted: median implied gross margin of the {n} list prices the market prices with its defaults "
         "(served precision, speculative decoding and speed); the forecast's roadmap marks cost up by it"])
    OUT.write_text("\n".join(lines + [buf.getvalue()]) + "\n")
    print(f"market_margin_frac={margin!r} n={n}")


if __name__ == "__main__":
    main()
