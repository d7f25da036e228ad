"""Each series' own record: where the trend ensemble has not beaten drift, the forecast follows drift.

The trend ensemble's weights and calibration are pooled over the tuning series. A series' own
rolling-origin points say whether, on that series, the ensemble's medians erred less than drift
(constant growth of the last year before the origin, :func:`.backtest.drift_slope`). Where they did
not, over at least :data:`RECORD_MIN_POINTS` of its own errors, the series' point forecast follows
drift for :data:`DRIFT_HORIZON_YEAR` and the ensemble's growth after it (:func:`drift_blend`): the
trend ensemble is kept only where it beats drift.

The backtest applies the rule as a forecaster could have at each origin (:func:`apply_record`: the
record is the series' errors whose target was observed by then); the forecast reads the whole
record (:func:`point_records`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

#: Fewest of its own realised rolling-origin errors (of the ensemble and of drift, at the same
#: points) a series needs before its record can hand its point forecast to drift. ASSUMPTION: one
#: or two errors of one origin say little; three is the least a mean is read from anywhere in the
#: backtest (:data:`.backtest.MIN_CALIBRATION_POINTS`).
RECORD_MIN_POINTS = 3

#: How far ahead a series whose record prefers drift follows drift's growth [years]: as far as
#: that growth was measured back (:data:`.backtest.DRIFT_WINDOW_YEAR`, one year). Beyond it the
#: ensemble's growth takes over, so drift's extra growth of that year stays as a level and a
#: constant growth rate is never carried to 2030; the rolling-origin records hardly reach further
#: (their horizons are within 1.5 years).
DRIFT_HORIZON_YEAR = 1.0

#: The two point forecasts a series' record chooses between.
POINT_METHODS: tuple[str, ...] = ("trend", "drift")

_KEY = ["series", "n_train", "target_year"]


def drift_blend(trend, drift, horizon_year, drift_horizon_year: float = DRIFT_HORIZON_YEAR) -> np.ndarray:
    """The point forecast of a series whose record prefers drift (any log scale).

    ``trend + min(1, H / h) * (drift - trend)``: drift up to ``H``; beyond it the trend's growth
    from drift's level at ``H`` (exactly so where both grow linearly in ``h``), continuous in ``h``.

    Parameters
    ----------
    trend, drift : array-like
        The ensemble's and drift's medians (same log scale).
    horizon_year : array-like
        Time since the last fitted observation [years].
    drift_horizon_year : float
        ``H``, how far ahead drift is followed [years].

    Returns
    -------
    numpy.ndarray
        The blended median (same log scale).

    Examples
    --------
    Trend growth 0.5 and drift growth 1 decade a year: at half a year drift, 0.5; at two years
    drift's first year (1.0) plus a year of the trend's growth (0.5):

    >>> drift_blend([0.25, 1.0], [0.5, 2.0], [0.5, 2.0]).tolist()
    [0.5, 1.5]
    """
    trend, drift = np.asarray(trend, float), np.asarray(drift, float)
    h = np.asarray(horizon_year, float)
    w = np.minimum(1.0, float(drift_horizon_year) / np.maximum(h, 1e-12))
    return trend + w * (drift - trend)


def prefers_drift(trend_err, drift_err) -> bool:
    """Whether a record hands the point forecast to drift.

    Parameters
    ----------
    trend_err, drift_err : array-like
        The ensemble's and drift's errors at the same points [log10(predicted / actual)]; pairs
        with a missing error are dropped.

    Returns
    -------
    bool
        At least :data:`RECORD_MIN_POINTS` pairs and drift's mean |error| below the ensemble's.
    """
    te, de = np.abs(np.asarray(trend_err, float)), np.abs(np.asarray(drift_err, float))
    ok = np.isfinite(te) & np.isfinite(de)
    return bool(ok.sum() >= RECORD_MIN_POINTS and de[ok].mean() < te[ok].mean())


def _with_drift(ens: "pd.DataFrame", drift: "pd.DataFrame") -> "pd.DataFrame":
    """``ens`` with ``trend_log10`` (its median) and ``drift_log10`` (drift's at the same point)."""
    import pandas as pd

    d = drift.drop_duplicates(_KEY).set_index(_KEY)["predicted_log10"]
    out = ens.copy()
    out["trend_log10"] = out["predicted_log10"].to_numpy(float)
    out["drift_log10"] = d.reindex(pd.MultiIndex.from_frame(out[_KEY])).to_numpy(float)
    return out


def apply_record(ens: "pd.DataFrame", drift: "pd.DataFrame") -> "pd.DataFrame":
    """Backtest ensemble rows with the rule applied as it could have been at each origin.

    At each origin of a series the record is the series' earlier points whose target was observed
    by that origin (``target_year <= origin_year``); where it :func:`prefers_drift`, the origin's
    forecasts are :func:`drift_blend` of the ensemble and drift.

    Parameters
    ----------
    ens : pandas.DataFrame
        Ensemble rows (``series, n_train, origin_year, target_year, horizon_year,
        predicted_log10, actual_log10``).
    drift : pandas.DataFrame
        Drift's rows at the same points (``series, n_train, target_year, predicted_log10``).

    Returns
    -------
    pandas.DataFrame
        ``ens`` with ``predicted_log10`` and ``error_log10`` of the point forecast, ``trend_log10``
        (the ensemble's median), ``drift_log10`` and ``point`` (:data:`POINT_METHODS`).
    """
    out = _with_drift(ens, drift)
    if out.empty:
        return out.assign(point=np.array([], dtype=object))
    act = out["actual_log10"].to_numpy(float)
    te, de = out["trend_log10"].to_numpy(float) - act, out["drift_log10"].to_numpy(float) - act
    origin, target = out["origin_year"].to_numpy(float), out["target_year"].to_numpy(float)
    use = np.zeros(len(out), dtype=bool)
    for idx in out.groupby("series", sort=False).indices.values():
        for o in np.unique(origin[idx]):
            rec = idx[target[idx] <= o + 1e-9]
            if prefers_drift(te[rec], de[rec]):
                use[idx[origin[idx] == o]] = True
    use &= np.isfinite(out["drift_log10"].to_numpy(float))
    blend = drift_blend(out["trend_log10"], out["drift_log10"], out["horizon_year"])
    out["predicted_log10"] = np.where(use, blend, out["trend_log10"].to_numpy(float))
    out["error_log10"] = out["predicted_log10"] - out["actual_log10"]
    out["point"] = np.where(use, "drift", "trend")
    return out


def point_records(ens: "pd.DataFrame", drift: "pd.DataFrame") -> "pd.DataFrame":
    """Each series' whole record and the point forecast it chooses for the forecast.

    Parameters
    ----------
    ens, drift : pandas.DataFrame
        As :func:`apply_record` (the ensemble's own medians, before the rule).

    Returns
    -------
    pandas.DataFrame
        One row per series: ``n_points``, ``trend_mae_log10`` and ``drift_mae_log10`` (mean
        |error| [decades] of the ensemble and drift at the series' rolling-origin points) and
        ``point`` (``drift`` where :func:`prefers_drift`, else ``trend``).
    """
    import pandas as pd

    cols = ["series", "n_points", "trend_mae_log10", "drift_mae_log10", "point"]
    out = _with_drift(ens, drift)
    rows = []
    for name, g in out.groupby("series", sort=True):
        te = g["trend_log10"].to_numpy(float) - g["actual_log10"].to_numpy(float)
        de = g["drift_log10"].to_numpy(float) - g["actual_log10"].to_numpy(float)
        ok = np.isfinite(te) & np.isfinite(de)
        rows.append({"series": name, "n_points": int(ok.sum()),
                     "trend_mae_log10": float(np.abs(te[ok]).mean()) if ok.any() else np.nan,
                     "drift_mae_log10": float(np.abs(de[ok]).mean()) if ok.any() else np.nan,
                     "point": "drift" if prefers_drift(te, de) else "trend"})
    return pd.DataFrame(rows, columns=cols)
