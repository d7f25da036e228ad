"""Watch dashboard example: the three metrics as a table, plus a Markdown report with PNGs.

Run:  python examples/watch_dashboard.py [OUT_DIR] [--fast]
"""

from __future__ import annotations

import sys
import warnings

from tokenomics.errors import TokenomicsWarning
from tokenomics.watch import watch
from tokenomics.watch.megakernels import fit_adoption
from tokenomics.watch.prices import decline_rates


def main(argv: list[str]) -> None:
    fast = "--fast" in argv
    args = [a for a in argv if a != "--fast"]
    out_dir = args[0] if args else "watch_report"
    warnings.filterwarnings("ignore", category=TokenomicsWarning)

    # Metric 1: how fast do list prices fall, per capability tier (90 % CI, OLS on log price)?
    rates = decline_rates(by="tier")
    print(rates[["group", "n", "decline_factor_per_year", "decline_factor_lo", "decline_factor_hi"]].to_string(index=False))

    # Metric 2: when does a whole-model megakernel become default in one engine (level 3)?
    f = fit_adoption(n_boot=20 if fast else 200)
    print(f.to_frame()[["family", "latest_level", "level3_date", "level3_lo", "level3_hi"]].to_string(index=False))

    # All three metrics, and the report (watch.md + one PNG per metric).
    d = watch(n_boot=20 if fast else 200, n_draws=40 if fast else 400)
    print(d.to_frame()[["metric", "status"]].to_string(index=False))
    for p in d.write(out_dir):
        print("wrote", p)


if __name__ == "__main__":
    main(sys.argv[1:])
