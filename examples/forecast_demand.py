"""Token demand to 2030: backtest, forecast, agentic scenario, reference lines, infrastructure.

Run:  python examples/forecast_demand.py [--series google] [--out DIR]
"""

from __future__ import annotations

import argparse

from tokenomics.forecast import forecast, plan_infrastructure
from tokenomics.forecast.scenarios import reference_comparison


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--series", default="google")
    ap.add_argument("--fit-through", default=None)
    ap.add_argument("--system", default="gb200-nvl72")
    ap.add_argument("--out", default=None, help="directory for tables and the fan chart")
    args = ap.parse_args()

    trend = forecast(args.series, fit_through=args.fit_through)
    print("Backtest (log10 errors, out of sample):")
    print(trend.backtest.to_frame().round(3).to_string(index=False))
    for scen in ("low", "base", "high"):
        r = forecast(args.series, fit_through=args.fit_through, scenario=scen)
        ref = reference_comparison(r).iloc[0]
        print(f"{scen:>4}: {ref['tokens_per_day_2030']:.3g} tokens/day in Dec 2030, "
              f"x{ref['growth_2026_2030']:.1f} over Dec 2026 (Goldman: x24)")
    base = forecast(args.series, fit_through=args.fit_through, scenario="base")
    infra = plan_infrastructure(base, args.system).to_frame()
    print(f"\nServing the base scenario: {infra['deployment'].iloc[0]}, {infra['workload'].iloc[0]} "
          f"({infra['tok_per_s_per_chip'].iloc[0]:,.0f} tok/s per chip at "
          f"{infra['tok_per_s_per_user'].iloc[0]:.0f} tok/s per user):")
    print(infra[["year", "tokens_per_day", "n_chips", "n_nodes", "cost_usd", "capex_usd", "facility_mw", "energy_twh",
                 "dc_electricity_share_frac"]].to_string(index=False, float_format=lambda v: f"{v:.3g}"))
    last = infra.iloc[-1]
    print(f"{int(last['year'])}: {last['dc_electricity_share_frac']:.1%} of the electricity the IEA projects for "
          f"every data centre in {last['region']} ({last['dc_electricity_twh']:,.0f} TWh)")
    if args.out:
        for p in base.write(args.out):
            print("wrote", p)


if __name__ == "__main__":
    main()
