"""Time the demand forecast on a user's own history: N synthetic series of daily token counts.

    python benchmarks/forecast_user_history.py [N_SERIES] [N_DAYS]     # default 5 x 730

Each series grows at its own seeded rate with 10 % daily noise (seed 0). The daily rows go to
``forecast(history=...)`` as they are: it validates them, averages each daily series to
calendar-month means (``tokenomics.forecast.history.monthly_means``: the forecast's step is a
month), runs the rolling-origin backtest on the user's series (weights, damping, calibration) and
the fits. Prints the wall time and peak RSS; the issue's target is 50 series x 730 days in <= 10 s
and < 1 GB on 2 cores.

Each series becomes 24 monthly points, 21 rolling origins. The backtest keeps at most five a series
(three beyond 30 series: ``backtest.origins_per_series``), fits the closed-form models at all of
them in one array call per series and the two saturating curves by least squares at each: those
curve fits (~20 ms each, scipy) and the final fits dominate what is left.
"""

from __future__ import annotations

import resource
import sys
import time
import warnings


def history(n_series: int, n_days: int):
    import numpy as np
    import pandas as pd

    rng = np.random.default_rng(0)
    dates = pd.date_range("2024-12-01", periods=n_days, freq="D")
    t = np.arange(n_days) / 365.0
    frames = []
    for i in range(n_series):
        growth, level = rng.uniform(0.5, 3.0), 10 ** rng.uniform(9, 13)
        y = level * np.exp(np.log1p(growth) * t) * np.exp(rng.normal(0, 0.1, n_days))
        frames.append(pd.DataFrame({"series": f"user{i:02d}", "date": dates, "tokens_per_day": y}))
    return pd.concat(frames, ignore_index=True)


def main() -> None:
    n_series = int(sys.argv[1]) if len(sys.argv) > 1 else 5
    n_days = int(sys.argv[2]) if len(sys.argv) > 2 else 730
    import statsmodels.tsa.statespace.mlemodel  # noqa: F401  (imports are not the forecast)

    from tokenomics.forecast import forecast

    h = history(n_series, n_days)
    warnings.filterwarnings("ignore")
    t = time.perf_counter()
    r = forecast(history=h)
    s = time.perf_counter() - t
    rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"{n_series} series x {n_days} days ({len(h):,} daily rows, {len(r.to_frame()):,} forecast rows): "
          f"{s:.1f} s, peak RSS {rss_mb:.0f} MB (target: 50 x 730 in <= 10 s, < 1 GB)")


if __name__ == "__main__":
    main()
