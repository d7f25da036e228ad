"""Rolling-origin backtests: every model against naive and drift baselines, out of sample.

For each series with more than :data:`MIN_TRAIN` observations and each origin ``k >=
MIN_TRAIN``, every model is fitted on the first ``k`` observations and predicts each later one
(horizon = time since the last training observation). Errors are ``log10(predicted / actual)``,
so an error of 1 is a factor of ten. Baselines:

- ``naive``: the last training value;
- ``drift``: the straight line (on the log scale) through the first and last training values.

The summary table (:meth:`BacktestResult.to_frame`) gives per model the number of
out-of-sample points, the mean absolute log10 error, its ratio to the naive and drift baselines
on the same points, and the share of points inside the 80 % and 95 % intervals. The model
weights used by :func:`tokenomics.forecast.forecast` come from this table (inverse mean squared
log error, among models with at least :data:`MIN_POINTS` points), never from taste.
"""

from __future__ import annotations

import functools
import warnings
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from . import models as M
from .._display import Display
from .history import decimal_year, load_history, month_end

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

#: Observations every training window holds at least.
MIN_TRAIN = 3

#: Fewest out-of-sample points before a model gets a weight.
MIN_POINTS = 2

BASELINES: tuple[str, ...] = ("naive", "drift")

_LN10 = np.log(10.0)


@dataclass(frozen=True, repr=False)
class BacktestResult(Display):
    """Out-of-sample errors of each model and the weights derived from them.

    Attributes
    ----------
    points : pandas.DataFrame
        One row per (series, origin, target, model): ``error_log10``, ``in_80``, ``in_95``.
    damping_per_year : float
        Decay rate of the ``damped`` model chosen by the backtest [1/year].
    weights : dict
        Model -> weight (sums to 1 over weighted models; 0 for the rest).
    """

    points: "pd.DataFrame"
    damping_per_year: float
    weights: dict

    def to_frame(self) -> "pd.DataFrame":
        """Summary per model: points, errors, ratios to the baselines, coverage, weight.

        Columns: ``model, n_points, n_series, mae_log10, rmse_log10, mae_vs_naive,
        mae_vs_drift, coverage_80, coverage_95, weight``.
        """
        return _summary(self.points, self.weights)


def _baselines(t: np.ndarray, y: np.ndarray, tq: np.ndarray) -> dict[str, np.ndarray]:
    naive = np.full_like(tq, y[-1])
    slope = (y[-1] - y[0]) / (t[-1] - t[0]) if t[-1] > t[0] else 0.0
    drift = y[-1] + slope * (tq - t[-1])
    return {"naive": naive, "drift": drift}


def _points_for(name: str, t: np.ndarray, y: np.ndarray, model_list, damping: float):
    rows = []
    for k in range(MIN_TRAIN, len(t)):
        tt, yy, tq, yq = t[:k], y[:k], t[k:], y[k:]
        preds: dict[str, dict[str, np.ndarray]] = {
            b: {"median": v} for b, v in _baselines(tt, yy, tq).items()
        }
        for m in model_list:
            if k < M.MIN_OBS[m]:
                continue
            kw = {"damping_per_year": damping} if m == "damped" else {}
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                preds[m] = M.fit(m, tt, yy, **kw).predict(tq)
        for m, p in preds.items():
            for j in range(len(tq)):
                row = {
                    "series": name, "model": m, "n_train": k,
                    "origin_year": float(tt[-1]), "target_year": float(tq[j]),
                    "horizon_year": float(tq[j] - tt[-1]),
                    "predicted_log10": float(p["median"][j] / _LN10),
                    "actual_log10": float(yq[j] / _LN10),
                }
                row["error_log10"] = row["predicted_log10"] - row["actual_log10"]
                for lev in (80, 95):
                    if f"lo_{lev}" in p:
                        row[f"in_{lev}"] = bool(p[f"lo_{lev}"][j] <= yq[j] <= p[f"hi_{lev}"][j])
                    else:
                        row[f"in_{lev}"] = np.nan
                rows.append(row)
    return rows


def _all_points(history: "pd.DataFrame", model_list, damping: float) -> "pd.DataFrame":
    import pandas as pd

    rows = []
    for name, g in history.groupby("series", sort=True):
        if len(g) <= MIN_TRAIN:
            continue
        g = g.sort_values("date")
        t = decimal_year(g["date"])
        y = np.log(g["tokens_per_day"].to_numpy(float))
        rows += _points_for(name, t, y, model_list, damping)
    cols = ["series", "model", "n_train", "origin_year", "target_year", "horizon_year",
            "predicted_log10", "actual_log10", "error_log10", "in_80", "in_95"]
    return pd.DataFrame(rows, columns=cols)


def _mae(points: "pd.DataFrame", model: str) -> float:
    e = points.loc[points["model"] == model, "error_log10"]
    return float(np.mean(np.abs(e))) if len(e) else np.nan


def _choose_damping(history: "pd.DataFrame") -> float:
    best, best_mae = M.DEFAULT_DAMPING_PER_YEAR, np.inf
    for c in M.DAMPING_GRID:
        mae = _mae(_all_points(history, ("damped",), c), "damped")
        if np.isfinite(mae) and mae < best_mae - 1e-12:
            best, best_mae = c, mae
    return float(best)


def _weights(points: "pd.DataFrame", model_list) -> dict:
    inv = {}
    for m in model_list:
        e = points.loc[points["model"] == m, "error_log10"].to_numpy(float)
        inv[m] = 1.0 / max(float(np.mean(e**2)), 1e-6) if len(e) >= MIN_POINTS else 0.0
    total = sum(inv.values())
    if total == 0:  # too few points anywhere: equal weights
        return {m: 1.0 / len(model_list) for m in model_list}
    return {m: v / total for m, v in inv.items()}


def _summary(points: "pd.DataFrame", weights: dict) -> "pd.DataFrame":
    import pandas as pd

    rows = []
    for m in list(BASELINES) + [m for m in M.MODELS if m in set(points["model"])]:
        sub = points[points["model"] == m]
        if sub.empty:
            continue
        keys = sub[["series", "n_train", "target_year"]].apply(tuple, axis=1)
        same = points[points[["series", "n_train", "target_year"]].apply(tuple, axis=1).isin(set(keys))]
        e = sub["error_log10"].to_numpy(float)
        mae = float(np.mean(np.abs(e)))

        def ratio(b):
            eb = same.loc[same["model"] == b, "error_log10"].to_numpy(float)
            d = float(np.mean(np.abs(eb))) if len(eb) else np.nan
            return mae / d if d > 0 else np.nan

        rows.append({
            "model": m,
            "n_points": int(len(sub)),
            "n_series": int(sub["series"].nunique()),
            "mae_log10": mae,
            "rmse_log10": float(np.sqrt(np.mean(e**2))),
            "mae_vs_naive": ratio("naive"),
            "mae_vs_drift": ratio("drift"),
            "coverage_80": float(pd.to_numeric(sub["in_80"]).mean()) if m not in BASELINES else np.nan,
            "coverage_95": float(pd.to_numeric(sub["in_95"]).mean()) if m not in BASELINES else np.nan,
            "weight": float(weights.get(m, 0.0)),
        })
    return pd.DataFrame(rows)


def run_backtest(history: "pd.DataFrame | None" = None, fit_through=None,
             model_list: tuple[str, ...] = M.MODELS) -> BacktestResult:
    """Rolling-origin backtest over every series with enough observations.

    Parameters
    ----------
    history : pandas.DataFrame, optional
        Long frame (``series, date, tokens_per_day``); default the bundled dataset.
    fit_through : str, optional
        ``YYYY-MM``: use only observations up to the end of that month (no peeking).
    model_list : tuple of str
        Models to evaluate (baselines are always included).

    Returns
    -------
    BacktestResult
    """
    if history is None:
        return _backtest_default(None if fit_through is None else str(fit_through), tuple(model_list))
    from .history import check_history

    return _run(check_history(history), fit_through, tuple(model_list))


@functools.lru_cache(maxsize=16)
def _backtest_default(fit_through, model_list) -> BacktestResult:
    return _run(load_history(), fit_through, model_list)


def _run(history: "pd.DataFrame", fit_through, model_list) -> BacktestResult:
    if fit_through is not None:
        history = history[history["date"] <= month_end(fit_through)]
    damping = _choose_damping(history) if "damped" in model_list else M.DEFAULT_DAMPING_PER_YEAR
    points = _all_points(history, model_list, damping)
    return BacktestResult(points, damping, _weights(points, model_list))
