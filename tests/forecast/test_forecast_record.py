"""Each series' own record: the trend ensemble is kept only where it beats drift (forecast.record)."""

import numpy as np
import pandas as pd
import pytest

from tokenomics.forecast.record import (DRIFT_HORIZON_YEAR, RECORD_MIN_POINTS, apply_record, drift_blend,
                                        point_records, prefers_drift)


def test_drift_blend_follows_drift_for_a_year_then_the_trends_growth():
    """Hand: trend 0.5 and drift 1.0 decade a year from the same level. Up to H = 1 y the blend is
    drift (0.25 at a quarter year, 1.0 at a year); beyond it drift's first year plus the trend's growth
    (at 3 y: 1.0 + 2 x 0.5 = 2.0), so drift's extra growth stays as a level (0.5 decades) and is never
    extrapolated (drift alone: 3.0)."""
    h = np.array([0.25, 1.0, 3.0])
    out = drift_blend(0.5 * h, 1.0 * h, h)
    np.testing.assert_allclose(out, [0.25, 1.0, 2.0])
    assert DRIFT_HORIZON_YEAR == 1.0
    # continuous at H from either side
    eps = 1e-9
    np.testing.assert_allclose(drift_blend(0.5 * (1 - eps), 1 - eps, 1 - eps), drift_blend(0.5 * (1 + eps), 1 + eps, 1 + eps),
                               atol=1e-8)


def test_prefers_drift_needs_three_errors_and_a_lower_mean():
    """Hand: drift's mean |error| 0.1 vs the trend's 0.3 on three points: drift; on two points: not
    enough (RECORD_MIN_POINTS = 3); a tie keeps the trend; a pair with a missing error is dropped."""
    assert RECORD_MIN_POINTS == 3
    assert prefers_drift([0.3, -0.3, 0.3], [0.1, -0.1, 0.1])
    assert not prefers_drift([0.3, -0.3], [0.1, -0.1])
    assert not prefers_drift([0.2, 0.2, 0.2], [-0.2, 0.2, -0.2])
    assert prefers_drift([0.3, 0.3, 0.3, np.nan], [0.1, 0.1, 0.1, 0.0])  # three valid pairs remain
    assert not prefers_drift([0.3, 0.3, np.nan], [0.1, 0.1, 0.1])  # two valid pairs


def _frame(origins, targets, trend, drift, actual):
    n_train = {o: i + 3 for i, o in enumerate(sorted(set(origins)))}
    base = pd.DataFrame({"series": "s", "n_train": [n_train[o] for o in origins], "origin_year": origins,
                         "target_year": targets, "horizon_year": np.subtract(targets, origins),
                         "actual_log10": actual})
    ens = base.assign(predicted_log10=trend, error_log10=np.subtract(trend, actual))
    dr = base.assign(model="drift", predicted_log10=drift)
    return ens, dr


def test_apply_record_hands_an_origin_to_drift_only_on_errors_observed_by_then():
    """Hand: origins 2025.0, 2025.5 and 2026.0; the trend errs 0.3 and drift 0.0 at every target.
    At 2025.0 nothing is observed yet, at 2025.5 two errors are (targets 2025.25 and 2025.5): both
    trend. At 2026.0 five are (2025.25, 2025.5, 2025.75 from the first origin; 2025.75, 2026.0 from
    the second): drift, so that origin's forecasts take drift's value (h <= 1 y: error 0)."""
    origins = [2025.0, 2025.0, 2025.0, 2025.0, 2025.5, 2025.5, 2026.0]
    targets = [2025.25, 2025.5, 2025.75, 2026.25, 2025.75, 2026.0, 2026.25]
    actual = np.zeros(len(origins))
    ens, dr = _frame(origins, targets, trend=actual + 0.3, drift=actual, actual=actual)
    out = apply_record(ens, dr)
    assert out["point"].tolist() == ["trend"] * 6 + ["drift"]
    np.testing.assert_allclose(out["error_log10"], [0.3] * 6 + [0.0])
    np.testing.assert_allclose(out["trend_log10"], 0.3)
    rec = point_records(ens, dr)
    assert rec.loc[0, "point"] == "drift" and rec.loc[0, "n_points"] == 7
    assert rec.loc[0, "trend_mae_log10"] == pytest.approx(0.3) and rec.loc[0, "drift_mae_log10"] == 0.0


def test_a_series_whose_trend_beats_drift_keeps_the_trend():
    """The same record with the roles swapped (trend exact, drift 0.3 off): trend everywhere."""
    origins = [2025.0, 2025.0, 2025.0, 2025.5, 2025.5, 2026.0]
    targets = [2025.25, 2025.5, 2025.75, 2025.75, 2026.0, 2026.25]
    actual = np.zeros(len(origins))
    ens, dr = _frame(origins, targets, trend=actual, drift=actual + 0.3, actual=actual)
    assert (apply_record(ens, dr)["point"] == "trend").all()
    assert point_records(ens, dr).loc[0, "point"] == "trend"


def test_an_accelerating_history_is_forecast_along_last_years_growth():
    """A user's monthly series whose growth speeds up (log10 tokens = 10 + 0.5 t + 0.4 t^2 over three
    years): the saturating curves the tuning pool favours under-forecast it, its own record prefers
    drift, and up to a year ahead the forecast is drift's: last year's growth continued, by hand
    0.5 + 0.4 x (3^2 - 2^2) = 2.5 decades a year from 10 + 1.5 + 3.6 = 15.1."""
    from tokenomics.forecast import forecast
    from tokenomics.forecast.backtest import drift_path, drift_slope
    from tokenomics.forecast.history import decimal_year

    dates = pd.date_range("2023-01-15", periods=37, freq="MS") + pd.Timedelta(days=14)
    t = np.arange(37) / 12.0
    hist = pd.DataFrame({"series": "acc", "date": dates, "tokens_per_day": 10 ** (10 + 0.5 * t + 0.4 * t**2),
                         "source": "synthetic"})
    res = forecast("acc", history=hist)
    assert res.backtest.point_method("acc") == "drift"
    f = res.monthly
    f = f[f["series"] == "acc"]
    assert (f["point_method"] == "drift").all()
    tq = decimal_year(f["date"])
    tt = decimal_year(hist["date"])
    y10 = np.log10(hist["tokens_per_day"].to_numpy())
    assert y10[-1] == pytest.approx(15.1) and drift_slope(tt, y10) == pytest.approx(2.5, abs=0.02)
    want = drift_path(tt, y10, tq)
    half = tq - tt[-1] <= DRIFT_HORIZON_YEAR
    np.testing.assert_allclose(np.log10(f["tokens_per_day"].to_numpy())[half], want[half], atol=1e-9)
