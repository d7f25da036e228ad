"""Time the demand forecast on the bundled history, and what the backtest report adds.

A forecast needs the backtest's weights, damping and interval calibration only (the models'
medians on the tuning series); the report frame (every model's own intervals, leave-one-series-out
and held-out scores) is built when a report reads ``BacktestResult.points``. One run, one
process, both measured cold (caches cleared). Usage: python benchmarks/forecast_speed.py
Last line: ``forecast_s=T with_report_s=R ratio=R/T``.
"""

from __future__ import annotations

import time


def main() -> None:
    import statsmodels.regression.linear_model  # noqa: F401  (imports are not the forecast)
    import scipy.optimize  # noqa: F401

    from tokenomics.forecast import backtest, forecast

    backtest._backtest_default.cache_clear()
    t = time.perf_counter()
    forecast()
    fc = time.perf_counter() - t

    backtest._backtest_default.cache_clear()
    t = time.perf_counter()
    r = forecast()
    n = len(r.backtest.points)
    full = time.perf_counter() - t
    print(f"forecast (calibration only): {fc:.2f} s; with the backtest report ({n:,} scored rows): {full:.2f} s")
    print(f"forecast_s={fc:.3f} with_report_s={full:.3f} ratio={full / fc:.1f}")


if __name__ == "__main__":
    main()
