"""Token demand forecasts to 2030: backtest-weighted ensemble with calibrated intervals.

:func:`forecast` fits every model that a series has enough observations for and combines them:

- the **median** is the weighted mean of the models' log medians (weights from the
  rolling-origin backtest, shrunk towards equal: :func:`.backtest.weights_from_points`);
- the **80 % and 95 % intervals** are the median +- the calibrated half-width of
  :class:`.backtest.Calibration`, fitted on pooled out-of-sample errors of every series by
  horizon. The models' own intervals (tens of decades wide
  for a three-point series, a fraction of a decade for a saturating fit) are not used. A series
  with fewer than four points is labelled in the ``interval_basis`` column;
- with a **scenario**, a seeded Monte Carlo (:data:`N_SCENARIO_DRAWS` draws) combines trend
  draws matching the calibrated quantiles with draws of the scenario's parameters
  (:func:`.scenarios.uplift_draws`); the agentic uplift counts only agent adoption beyond what
  the fitted trend already carries forward.

Results are monthly to 2030-12; the ``date`` column is datetime64 (the 15th of each month, as
for month-only observations).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from . import models as M
from .._display import Display
from ..errors import ConvergenceWarning, ValidationError
from .history import MIN_OBS, decimal_year, load_history, month_end, part_of, select_series
from .measurement import on_latest_definition

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

    from .backtest import BacktestResult

#: Last forecast month.
END = "2030-12"

#: Output columns of :meth:`ForecastResult.to_frame` (tokens/day and intervals).
COLUMNS = ("series", "date", "tokens_per_day", "tokens_per_day_lo_80", "tokens_per_day_hi_80",
           "tokens_per_day_lo_95", "tokens_per_day_hi_95", "scenario", "agentic_share_frac",
           "agentic_uplift", "models", "interval_basis")


@dataclass(frozen=True, repr=False)
class ForecastResult(Display):
    """Monthly forecasts of one or more series.

    Attributes
    ----------
    monthly : pandas.DataFrame
        One row per series and month (columns :data:`COLUMNS`; ``date`` is datetime64, the
        15th of each month).
    history : pandas.DataFrame
        The observations the fits used.
    backtest : BacktestResult
        The backtest whose weights combined the models.
    fit_through : str or None
    scenario : str or None
    skipped : dict
        Series left out -> reason (e.g. too few observations).
    """

    _display_columns = ("series", "date", "tokens_per_day", "tokens_per_day_lo_80", "tokens_per_day_hi_80",
                        "tokens_per_day_lo_95", "tokens_per_day_hi_95")

    monthly: "pd.DataFrame"
    history: "pd.DataFrame"
    backtest: "BacktestResult"
    fit_through: str | None
    scenario: str | None
    skipped: dict

    def to_frame(self, freq: str = "annual") -> "pd.DataFrame":
        """Forecast table.

        Parameters
        ----------
        freq : {"annual", "monthly"}
            ``monthly``: every month to 2030-12. ``annual``: the December row of each year
            (the year-end daily rate; quantiles cannot be averaged over months).

        Returns
        -------
        pandas.DataFrame
            Columns :data:`COLUMNS`; token volumes in [tokens/day].
        """
        from .._validate import one_of

        one_of(freq, "freq", ("annual", "monthly"))
        if freq == "monthly":
            return self.monthly.copy()
        return self.monthly[self.monthly["date"].dt.month == 12].reset_index(drop=True)

    def series_names(self) -> list[str]:
        return list(dict.fromkeys(self.monthly["series"]))

    @property
    def price_scale(self) -> float:
        """List prices as a multiple of those the forecast was fitted under [-]: 1 unless
        :func:`~tokenomics.forecast.elasticity.price_response` moved the demand."""
        m = self.monthly
        return float(m["price_scale"].iloc[0]) if "price_scale" in m.columns and len(m) else 1.0

    def summary_frame(self, alpha: float = 0.05, series: str | None = None, *, per: str = "day",
                      period_index: bool = False) -> "pd.DataFrame":
        """One series' monthly forecast as statsmodels' ``get_forecast(...).summary_frame(alpha)``
        lays it out: the point forecast and one interval, indexed by date.

        Parameters
        ----------
        alpha : {0.2, 0.05}
            One minus the interval's coverage: 0.2 the 80 % interval, 0.05 the 95 % one (the two
            the backtest calibrates).
        series : str, optional
            The series; needed where the result holds several.
        per : {"day", "month"}
            ``day``: tokens per day (the rate at mid-month) [tokens/day]; ``month``: that rate times
            the month's days, the month's total [tokens/month].
        period_index : bool
            Index by monthly ``pandas.Period`` instead of the mid-month date.

        Returns
        -------
        pandas.DataFrame
            ``median``, ``ci_lower``, ``ci_upper`` (columns ``tokens_per_day`` or
            ``tokens_per_month`` in the unit of ``per``; the point forecast is the median of the
            log-space forecast, not a mean).
        """
        import pandas as pd

        from .._validate import one_of

        one_of(per, "per", ("day", "month"))
        level = {0.2: 80, 0.05: 95}.get(round(float(alpha), 10))
        if level is None:
            hint = " (a percent? alpha is a fraction)" if isinstance(alpha, (int, float)) and alpha > 1 else ""
            raise ValidationError(f"alpha must be 0.2 (80 % interval) or 0.05 (95 %), the intervals the backtest "
                                  f"calibrates; got {alpha!r}{hint}")
        names = self.series_names()
        if series is None:
            if len(names) != 1:
                raise ValidationError(f"the forecast holds {len(names)} series; name one with series= "
                                      f"({', '.join(names)})")
            series = names[0]
        elif series not in names:
            from ..errors import unknown_name

            raise unknown_name("series", series, names)
        m = self.monthly[self.monthly["series"] == series]
        days = m["date"].dt.days_in_month.to_numpy(float) if per == "month" else 1.0
        out = pd.DataFrame({"median": m["tokens_per_day"].to_numpy(float) * days,
                            "ci_lower": m[f"tokens_per_day_lo_{level}"].to_numpy(float) * days,
                            "ci_upper": m[f"tokens_per_day_hi_{level}"].to_numpy(float) * days},
                           index=(pd.PeriodIndex(m["date"], freq="M") if period_index
                                  else pd.DatetimeIndex(m["date"])))
        out.index.name = "month" if period_index else "date"
        out.attrs.update(series=series, unit=f"tokens/{per}", alpha=float(alpha))
        return out

    def conf_int(self, alpha: float = 0.05, series: str | None = None, **kwargs) -> "pd.DataFrame":
        """``lower`` and ``upper`` of the ``1 - alpha`` interval, as statsmodels' ``conf_int``
        (:meth:`summary_frame`'s bounds; ``per`` and ``period_index`` as there)."""
        f = self.summary_frame(alpha, series, **kwargs)
        return f[["ci_lower", "ci_upper"]].rename(columns={"ci_lower": "lower", "ci_upper": "upper"})

    def fan_chart(self, path) -> "object":
        """Save a log-scale fan chart (80 % and 95 % bands, observations) as PNG; return the path."""
        return fan_chart(self, path)

    def write(self, out_dir, extra: "dict[str, pd.DataFrame] | None" = None) -> list:
        """Write ``forecast_annual.csv``, ``forecast_monthly.csv``, ``backtest.csv``,
        ``backtest_coverage.csv`` (by horizon), ``backtest_series.csv`` (by series),
        ``backtest_points.csv`` (each scored point beside drift and the random walk), ``history.csv``,
        ``forecast_fan.png`` and the tables of ``extra`` (file name -> DataFrame) into ``out_dir``;
        return the paths.

        The directory is written atomically (:func:`tokenomics.io.atomic_dir`): built beside
        ``out_dir`` and swapped in, so an interrupted run leaves the old files or the new ones,
        never a mix."""
        from pathlib import Path

        from ..io import atomic_dir, check_output

        final = check_output(out_dir, kind="dir")
        extra = dict(extra or {})
        for name in extra:
            if Path(name).name != name or Path(name).suffix.lower() not in (".csv", ".json", ".parquet"):
                raise ValidationError(f"extra file name must be a plain .csv, .json or .parquet name, got {name!r}")
        owned = FORECAST_FILES + tuple(n for n in extra if n not in FORECAST_FILES) + ("references.csv",
                                                                                       "infrastructure.csv")
        with atomic_dir(final, owned=owned) as tmp:
            names = [p.name for p in self._write_into(tmp, extra)]
        return [final / n for n in names]

    def _write_into(self, out, extra) -> list:
        from ..io import write_frame

        paths = [
            write_frame(_iso(self.to_frame("annual")), out / "forecast_annual.csv"),
            write_frame(_iso(self.to_frame("monthly")), out / "forecast_monthly.csv"),
            write_frame(self.backtest.to_frame(), out / "backtest.csv"),
            write_frame(self.backtest.coverage_by_horizon(), out / "backtest_coverage.csv"),
            write_frame(self.backtest.coverage_by_series(), out / "backtest_series.csv"),
            write_frame(self.backtest.scored_points(), out / "backtest_points.csv"),
            write_frame(self.history.assign(date=self.history["date"].dt.strftime("%Y-%m-%d")),
                        out / "history.csv"),
        ]
        paths.append(self.fan_chart(out / "forecast_fan.png"))
        paths += [write_frame(df, out / name) for name, df in extra.items()]
        return paths


#: Files :meth:`ForecastResult.write` writes (besides its ``extra`` tables).
FORECAST_FILES = ("forecast_annual.csv", "forecast_monthly.csv", "backtest.csv", "backtest_coverage.csv",
                  "backtest_series.csv", "backtest_points.csv", "history.csv", "forecast_fan.png")


def _iso(df: "pd.DataFrame") -> "pd.DataFrame":
    """Copy with ``date`` as ISO ``YYYY-MM-DD`` text (for CSV and JSON)."""
    return df.assign(date=df["date"].dt.strftime("%Y-%m-%d"))


def _month_grid(start_after, end: str) -> "pd.PeriodIndex":
    import pandas as pd

    first = pd.Period(start_after, freq="M") + 1
    last = pd.Period(month_end(end), freq="M")
    return pd.period_range(first, last, freq="M")


#: Monte Carlo draws of a scenario forecast.
N_SCENARIO_DRAWS = 10000

#: Seed of the scenario Monte Carlo (results are deterministic).
SEED = 14

#: Series with fewer observations than this get the ``interval_basis`` label below.
FEW_OBS = 4

_Z = {0.8: 1.2815515655446004, 0.95: 1.959963984540054}


def _trend_draws(q: dict, n: int, rng) -> np.ndarray:
    """Draws (n, months) of log demand whose quantiles are the calibrated ones.

    One standard-normal score per draw (stratified, so the trend's own quantiles carry no
    Monte Carlo noise), mapped month by month through the piecewise-linear
    interpolation of the (score, value) pairs at the 2.5, 10, 50, 90 and 97.5 % quantiles
    (linear extrapolation beyond): each path is a coherent trajectory, and each month's
    quantiles reproduce the calibrated interval.
    """
    zk = np.array([-_Z[0.95], -_Z[0.8], 0.0, _Z[0.8], _Z[0.95]])
    vk = np.stack([q["lo_95"], q["lo_80"], q["median"], q["hi_80"], q["hi_95"]])  # (5, T)
    from scipy.special import ndtri

    z = ndtri((rng.permutation(n) + rng.random(n)) / n)  # stratified: one draw per 1/n slice
    idx = np.clip(np.searchsorted(zk, z) - 1, 0, 3)  # segment per draw
    z0, z1 = zk[idx], zk[idx + 1]
    frac = ((z - z0) / (z1 - z0))[:, None]
    return vk[idx] + frac * (vk[idx + 1] - vk[idx])


def _trend(medians: dict, weights: dict, cal, tq: np.ndarray, t: np.ndarray,
           drift: np.ndarray | None = None) -> dict[str, np.ndarray]:
    """Ensemble median and calibrated bounds (natural log of tokens/day) at ``tq``.

    ``medians``: model -> its median at ``tq`` (natural log of tokens/day); ``t`` holds the
    fitted observations' times [decimal years] (horizon and leverage). ``drift`` (drift's median
    at ``tq``, natural log), for a series whose own record prefers it: the median is
    :func:`.record.drift_blend` of the ensemble's and drift's, the bounds around it."""
    from .backtest import combine_medians, leverage
    from .record import drift_blend

    med10, spread10 = combine_medians({m: v / np.log(10.0) for m, v in medians.items()}, weights)
    h = np.maximum(tq - t[-1], 0.0)
    if drift is not None:
        med10 = drift_blend(med10, drift / np.log(10.0), h)
    L = leverage(t, tq)
    out = {"median": med10 * np.log(10.0), "spread_log10": spread10}
    for level in M.LEVELS:
        k = int(round(level * 100))
        half = cal.half_width_log10(level, h, spread10, L) * np.log(10.0)
        out[f"lo_{k}"] = out["median"] - half
        out[f"hi_{k}"] = out["median"] + half
    return out


def _model_medians(t: np.ndarray, y: np.ndarray, tq: np.ndarray, damping: float) -> tuple[dict, dict]:
    """Each model's fit to one series and its median at ``tq`` (natural log of tokens/day).

    Only the medians enter the ensemble: the saturating curves skip their bootstrap, and the
    damped model's median comes from :func:`.models.damped_medians` (one array call; its own
    intervals, a mixture quantile search, are not needed). Returns ``(fits, medians)``; ``fits``
    holds the :class:`.models.Fitted` of the models fitted one by one (convergence)."""
    fits, medians = {}, {}
    with warnings.catch_warnings():
        # reported by the caller, with the series and the model's weight (the bare warning names neither)
        warnings.simplefilter("ignore", ConvergenceWarning)
        for m in M.available(len(t)):
            if m == "damped":
                order = np.argsort(t, kind="stable")
                medians[m] = M.damped_medians(t[order], y[order], [len(t)], [damping], t_query=tq)[0, 0]
                continue
            kw = {"n_boot": 0} if m in ("gompertz", "logistic") else {}  # the median needs no bootstrap
            fits[m] = M.fit(m, t, y, **kw)
            medians[m] = fits[m].predict(tq)["median"]
    return fits, {m: medians[m] for m in M.available(len(t))}


def forecast_series(name: str, fit_through=None, scenario: str | None = None, end: str = END,
                    history: "pd.DataFrame | None" = None, backtest_result=None) -> "pd.DataFrame":
    """Monthly forecast of one series (see :func:`forecast`); returns the frame only."""
    from .backtest import run_backtest
    from .history import check_history

    s = _fit_series(load_history() if history is None else check_history(history), name, fit_through)
    bt = backtest_result or run_backtest(history=history, fit_through=fit_through)
    return _series_frame(name, s, bt, scenario, end)


def _series_frame(name: str, s: "pd.DataFrame", bt, scenario: str | None, end: str) -> "pd.DataFrame":
    """:func:`forecast_series` of the observations ``s`` of one series, with backtest ``bt``."""
    import pandas as pd

    from .scenarios import scenario as get_scenario, uplift_draws

    t = s["t_year"].to_numpy(float)
    y = np.log(s["tokens_per_day"].to_numpy(float))
    grid = _month_grid(s["date"].iloc[-1], end)
    dates = grid.to_timestamp() + pd.Timedelta(days=14)
    tq = decimal_year(dates)
    fits, medians = _model_medians(t, y, tq, bt.damping_per_year)
    w = np.array([bt.weights.get(m, 0.0) for m in medians])
    w = w / w.sum() if w.sum() > 0 else np.full(len(medians), 1.0 / len(medians))
    weights = dict(zip(medians, w))
    for m, f in fits.items():
        if not f.converged:
            M.warn_not_converged(f, s["series"].iloc[0], weights[m])
    from .backtest import drift_path

    point = bt.point_method(name)
    drift = drift_path(t, y, tq) if point == "drift" else None
    q = _trend(medians, weights, bt.calibration, tq, t, drift)
    if scenario is not None:
        rng = np.random.default_rng(SEED)
        log_trend = _trend_draws(q, N_SCENARIO_DRAWS, rng)
        share, uplift = uplift_draws(get_scenario(scenario), tq, t, N_SCENARIO_DRAWS, rng)
        total = log_trend + np.log(uplift)
        qs = np.quantile(total, [0.5, 0.1, 0.9, 0.025, 0.975], axis=0)
        out = dict(zip(["median", "lo_80", "hi_80", "lo_95", "hi_95"], qs))
        share_med, uplift_med = np.median(share, axis=0), np.median(uplift, axis=0)
    else:
        out = q
        share_med, uplift_med = np.full(len(tq), np.nan), np.ones(len(tq))
    basis = "pooled backtest errors by horizon"
    if len(t) < FEW_OBS:
        basis = f"pooled backtest errors only ({len(t)} observations: wide, no series-specific fit)"
    if bt.calibration.source != "pooled":
        basis += f"; calibration: {bt.calibration.source}"
    return pd.DataFrame({
        "series": name,
        "date": pd.DatetimeIndex(dates).astype("datetime64[ns]"),
        "tokens_per_day": np.exp(out["median"]),
        "tokens_per_day_lo_80": np.exp(out["lo_80"]),
        "tokens_per_day_hi_80": np.exp(out["hi_80"]),
        "tokens_per_day_lo_95": np.exp(out["lo_95"]),
        "tokens_per_day_hi_95": np.exp(out["hi_95"]),
        "scenario": scenario or "trend",
        "agentic_share_frac": share_med,
        "agentic_uplift": uplift_med,
        "models": "+".join(f"{m}:{weights[m]:.2f}" for m in weights),
        "point_method": point,
        "interval_basis": basis,
    })


def _fit_series(hist: "pd.DataFrame", name: str, fit_through) -> "pd.DataFrame":
    """The observations of series ``name`` a forecast fits: through ``fit_through``, on the series'
    latest definition by then (:func:`~.measurement.on_latest_definition`)."""
    return on_latest_definition(select_series(hist, name, fit_through))


def _depth(name: str, wholes: dict[str, str]) -> int:
    """How many wholes ``name`` sits inside (0 for a series that is part of none)."""
    d = 0
    while name in wholes:
        name, d = wholes[name], d + 1
    return d


#: Observations of a part matched by one of its whole (same date, and same period where the
#: history states it) from which the part is forecast as a share of the whole (:func:`share_parts`)
#: instead of on its own history; fewer, and it is capped at the whole (:func:`cap_parts`).
MIN_SHARE_PAIRS = 6

#: Monte Carlo draws of a part forecast as a share of its whole.
N_SHARE_DRAWS = 10000


def share_model(t, share) -> dict[str, float]:
    """A share's path as a random walk plus observation noise on the logit scale.

    ``logit(share_k) = x(t_k) + e_k`` with ``x`` a random walk (variance ``sigma2`` per year) and
    ``e`` independent noise (variance ``tau2``: weekly figures of the same quantity scatter). Both
    variances come from the variogram of the observations, least squares with both non-negative:

        E[(y_j - y_i)^2] = 2 tau2 + sigma2 (t_j - t_i)

    and the level from the Kalman filter of that model (irregular times). The share ``h`` years
    after the last observation is ``expit`` of a normal with the filtered mean and variance
    ``P + sigma2 h + tau2`` (the noise of the figure that will be published). A random walk keeps
    the latest share: no trend in the share is extrapolated, and it stays inside (0, 1).

    Parameters
    ----------
    t : array-like
        Times of the matched observations [decimal years], increasing.
    share : array-like
        Part over whole at those times, each in (0, 1).

    Returns
    -------
    dict
        ``level`` (filtered logit share at the last observation), ``var`` (its variance),
        ``sigma2_per_year``, ``tau2``, ``t_last``, ``n``.

    Examples
    --------
    A share that never moves has no variance and keeps its level:

    >>> m = share_model([2026.0, 2026.1, 2026.2], [0.25, 0.25, 0.25])
    >>> round(float(m["level"]), 6), m["sigma2_per_year"], m["tau2"]
    (-1.098612, 0.0, 0.0)
    """
    from scipy.optimize import nnls
    from scipy.special import logit

    t = np.asarray(t, float)
    y = logit(np.asarray(share, float))
    i, j = np.triu_indices(len(y), 1)
    a = np.column_stack([np.full(len(i), 2.0), t[j] - t[i]])
    (tau2, sigma2), _ = nnls(a, (y[j] - y[i]) ** 2)
    x, p = y[0], tau2
    for k in range(1, len(y)):
        p = p + sigma2 * (t[k] - t[k - 1])
        gain = p / (p + tau2) if p + tau2 > 0 else 1.0
        x, p = x + gain * (y[k] - x), (1.0 - gain) * p
    return {"level": float(x), "var": float(p), "sigma2_per_year": float(sigma2), "tau2": float(tau2),
            "t_last": float(t[-1]), "n": len(y)}


def _matched_shares(part: "pd.DataFrame", whole: "pd.DataFrame") -> "pd.DataFrame":
    """Rows where part and whole were observed for the same date (and period), with the share."""
    keys = ["date", "period"] if "period" in part.columns and "period" in whole.columns else ["date"]
    m = part[keys + ["tokens_per_day", "t_year"]].merge(whole[keys + ["tokens_per_day"]], on=keys,
                                                         suffixes=("", "_whole"))
    m["share"] = m["tokens_per_day"] / m["tokens_per_day_whole"]
    return m[(m["share"] > 0) & (m["share"] < 1)].sort_values("t_year").reset_index(drop=True)


def share_parts(frames: "dict[str, pd.DataFrame]", wholes: dict[str, str], history: "pd.DataFrame",
                fit_through=None) -> tuple["dict[str, pd.DataFrame]", set[str]]:
    """Parts observed together with their whole forecast as whole x share.

    A part with at least :data:`MIN_SHARE_PAIRS` observations matched by its whole's is, in every
    month its whole is forecast, the whole's forecast times the share of :func:`share_model`:
    ``N_SHARE_DRAWS`` seeded draws of the whole's log demand (its calibrated quantiles,
    :func:`_trend_draws`) plus the log of independent share draws, and their quantiles. Months
    before the whole's forecast starts keep the part's own forecast. A share is below one in
    every draw, so the part stays below its whole at every quantile, and two series counted one
    inside the other are extrapolated with one growth rate instead of two.

    Returns
    -------
    (frames, shared)
        The frames (copies where changed) and the parts forecast as shares.
    """
    import pandas as pd
    from scipy.special import expit

    out, shared = dict(frames), set()
    for part in sorted((n for n in frames if wholes.get(n) in frames), key=lambda n: _depth(n, wholes)):
        whole = wholes[part]
        pairs = _matched_shares(*(_fit_series(history, n, fit_through) for n in (part, whole)))
        if len(pairs) < MIN_SHARE_PAIRS:
            continue
        m = share_model(pairs["t_year"], pairs["share"])
        f = out[part].copy()
        w = out[whole].set_index("date").reindex(f["date"])
        rows = w["tokens_per_day"].notna().to_numpy()
        wq = {k: np.log(w[c].to_numpy(float)[rows]) for k, c in
              (("median", "tokens_per_day"), ("lo_80", "tokens_per_day_lo_80"), ("hi_80", "tokens_per_day_hi_80"),
               ("lo_95", "tokens_per_day_lo_95"), ("hi_95", "tokens_per_day_hi_95"))}
        rng = np.random.default_rng(SEED)
        log_whole = _trend_draws(wq, N_SHARE_DRAWS, rng)
        h = np.maximum(decimal_year(f["date"])[rows] - m["t_last"], 0.0)
        sd = np.sqrt(m["var"] + m["sigma2_per_year"] * h + m["tau2"])
        z = rng.standard_normal((N_SHARE_DRAWS, 1))
        log_part = log_whole + np.log(expit(m["level"] + z * sd))
        qs = np.exp(np.quantile(log_part, [0.5, 0.1, 0.9, 0.025, 0.975], axis=0))
        for col, qv in zip(CAPPED_COLUMNS, qs):
            f.loc[rows, col] = qv
        f.loc[rows, "agentic_share_frac"] = w["agentic_share_frac"].to_numpy(float)[rows]
        f.loc[rows, "agentic_uplift"] = w["agentic_uplift"].to_numpy(float)[rows]
        f.loc[rows, "models"] = f"share of {whole}"
        f.loc[rows, "point_method"] = w["point_method"].to_numpy()[rows]  # the whole's median carries it
        f.loc[rows, "interval_basis"] = (
            f"{whole}'s forecast x its share ({m['n']} matched observations, latest "
            f"{pd.Timestamp(pairs['date'].iloc[-1]).date()}; random walk in logit share, "
            f"level {expit(m['level']):.0%})")
        out[part] = f
        shared.add(part)
    return out, shared


#: Forecast columns a part's are capped at (:func:`cap_parts`).
CAPPED_COLUMNS = ("tokens_per_day", "tokens_per_day_lo_80", "tokens_per_day_hi_80", "tokens_per_day_lo_95",
                  "tokens_per_day_hi_95")


def cap_parts(frames: "dict[str, pd.DataFrame]", wholes: dict[str, str]) -> "dict[str, pd.DataFrame]":
    """A part never above its whole: each month's median and interval bounds of a part's forecast
    are capped at the same quantiles of its whole's (``wholes``: :func:`~.history.part_of`).

    If part and whole move together (comonotonic: the part is high when the whole is), the
    q-quantile of ``min(part, whole)`` is the smaller of their q-quantiles, so the capped columns
    are the quantiles of what the part can be. Wholes are capped first (a chain of parts); a row
    where a cap binds says so in ``interval_basis``. Frames whose whole is absent are unchanged.

    Parameters
    ----------
    frames : dict of str to pandas.DataFrame
        Monthly forecasts (:func:`forecast_series`) by series.
    wholes : dict of str to str
        ``{part: whole}``.

    Returns
    -------
    dict of str to pandas.DataFrame
        The same frames, parts capped (copies; the inputs are not modified).
    """
    out = dict(frames)
    for part in sorted((n for n in frames if wholes.get(n) in frames), key=lambda n: _depth(n, wholes)):
        whole = wholes[part]
        f = out[part].copy()
        cap = out[whole].set_index("date")[list(CAPPED_COLUMNS)].reindex(f["date"]).to_numpy(float)
        vals = f[list(CAPPED_COLUMNS)].to_numpy(float)
        bind = np.any(vals > cap, axis=1)  # NaN caps (months the whole lacks) never bind
        f.loc[:, list(CAPPED_COLUMNS)] = np.fmin(vals, cap)
        f.loc[bind, "interval_basis"] = f.loc[bind, "interval_basis"] + f"; capped at {whole}'s forecast (part of it)"
        out[part] = f
    return out


def forecast(series="all", fit_through=None, scenario: str | None = None, end: str = END,
             history: "pd.DataFrame | None" = None) -> ForecastResult:
    """Forecast token demand per series, monthly to 2030-12, with 80 % and 95 % intervals.

    Parameters
    ----------
    series : str or list of str
        Series name(s) (``"google"``, ``"china"`` for the national figure, ``"doubao"``, ...)
        or ``"all"`` (every series with at least three observations; others are skipped).
    fit_through : str, optional
        ``YYYY-MM``: fit (and backtest) only on observations up to the end of that month.
    scenario : {"low", "base", "high"}, optional
        Combine the trend with the agentic uplift of that scenario (seeded Monte Carlo);
        default: the trend alone.
    end : str
        Last month, ``YYYY-MM`` (default 2030-12).
    history : pandas.DataFrame, optional
        Long frame to use instead of ``datasets/token_demand.csv``.

    Returns
    -------
    ForecastResult

    Raises
    ------
    UnknownNameError
        Unknown series (with the closest names).
    ValidationError
        Fewer than three observations through ``fit_through``; unknown scenario.
    DataError
        Non-positive or missing volumes in ``history``.
    """
    import pandas as pd

    from .._validate import one_of
    from .backtest import run_backtest
    from .history import check_history
    from .scenarios import SCENARIOS

    from ..errors import ValidationError

    if not (isinstance(series, str) or (isinstance(series, (list, tuple)) and series
                                         and all(isinstance(x, str) for x in series))):
        raise ValidationError(f"series must be a series name, a list of names or 'all', got {series!r:.60}")
    if scenario is not None:
        one_of(scenario, "scenario", SCENARIOS)
    hist = load_history() if history is None else check_history(history)
    wholes = part_of(hist)  # checked on the whole history (an added file may name a bundled whole)
    if fit_through is not None:
        month_end(fit_through)  # validates the format early
    if not (isinstance(series, str) and series == "all"):
        for n in [series] if isinstance(series, str) else list(series):
            select_series(hist, n, fit_through)  # unknown name / too few obs (hist is checked)
    bt = run_backtest(history=history, fit_through=fit_through)
    skipped: dict = {}
    cutoff = month_end(fit_through) if fit_through is not None else None

    def n_obs(n: str) -> int:
        """Observations of series ``n`` through the cut-off."""
        return int(((hist["series"] == n) & ((hist["date"] <= cutoff) if cutoff is not None else True)).sum())

    if isinstance(series, str) and series == "all":
        names = sorted(hist["series"].unique())
        chosen = []
        for n in names:
            k = n_obs(n)
            if k < MIN_OBS:
                skipped[n] = f"{k} observation(s); {MIN_OBS} needed"
            else:
                chosen.append(n)
    else:
        chosen = [series] if isinstance(series, str) else list(series)
    frames, used_hist = {}, []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        for n in chosen:
            used_hist.append(_fit_series(hist, n, fit_through))
            frames[n] = _series_frame(n, used_hist[-1], bt, scenario, end)
        for n in list(chosen):  # the wholes a chosen part is capped at, forecast but not shown
            w = wholes.get(n)
            while w is not None and n_obs(w) >= MIN_OBS:
                if w not in frames:
                    frames[w] = _series_frame(w, _fit_series(hist, w, fit_through), bt, scenario, end)
                w = wholes.get(w)
    for part in sorted((n for n in frames if wholes.get(n) in frames), key=lambda n: _depth(n, wholes)):
        one = {part: wholes[part]}  # wholes first: a chain of parts sees its whole already final
        frames, shared = share_parts(frames, one, hist, fit_through)
        if not shared:
            frames = cap_parts(frames, one)
    frames = [frames[n] for n in chosen]
    if not frames:
        from ..errors import ValidationError

        found = ", ".join(f"{k} has {v.split()[0]}" for k, v in skipped.items()) or "the history is empty"
        if fit_through is None:
            raise ValidationError(f"no series has the {MIN_OBS} observations a trend needs ({found}); "
                                  "add observations")
        raise ValidationError(f"no series has {MIN_OBS} observations through {fit_through} ({found}); "
                              "use a later --fit-through")
    monthly = pd.concat(frames, ignore_index=True)
    return ForecastResult(monthly, pd.concat(used_hist, ignore_index=True), bt,
                          None if fit_through is None else str(fit_through), scenario, skipped)


def fan_chart(result: ForecastResult, path):
    """Log-scale fan chart of a :class:`ForecastResult` saved atomically as PNG
    (drawn by :func:`tokenomics.plot.forecast`)."""
    from .. import plot
    from ..io import save_png
    from .scenarios import reference_lines

    _, ax = plot._pyplot().subplots(figsize=(10, 6), dpi=110)
    plot.forecast(result, references=reference_lines(), ax=ax)
    save_png(ax.figure, path, dpi=100, bbox_inches="tight")
    return path


def realtime_backtest(first: str = "2025-06", last: str | None = None,
                      history: "pd.DataFrame | None" = None) -> "pd.DataFrame":
    """Score forecasts made as of each month-end against the observations published later.

    For every cut-off month from ``first`` to ``last`` (default: the month before the newest
    observation), :func:`forecast` is run with ``fit_through`` = that month, so the weights and
    the interval calibration use only data available then, and each later observation of a
    forecast series is compared with the forecast for its month. Cut-offs overlap, so the rows
    are not independent. Slow (one full forecast per cut-off).

    Returns
    -------
    pandas.DataFrame
        One row per (cut-off, series, later observation): ``horizon_year``, ``in_80``,
        ``in_95``, ``width_95_log10``, ``error_log10``, ``naive_error_log10`` (the last value
        carried forward), ``drift_error_log10`` (the growth of the year before the cut-off
        continued, :func:`.backtest.drift_path`, from the observations the forecast fitted, at the
        forecast's date), ``point_method`` and ``calibration`` (its source).
    """
    import pandas as pd

    from ..errors import TokenomicsError
    from .backtest import drift_path
    from .history import check_history

    h = load_history() if history is None else check_history(history)
    end = h["date"].max().to_period("M") - 1 if last is None else pd.Period(last, freq="M")
    rows = []
    for cut in pd.period_range(first, end, freq="M"):
        try:
            r = forecast("all", fit_through=str(cut), end=str(h["date"].max().to_period("M")),
                         history=history)
        except TokenomicsError:
            continue
        m = r.monthly.assign(month=r.monthly["date"].dt.to_period("M"))
        for name in r.series_names():
            used = r.history[r.history["series"] == name].sort_values("date")
            t_used, y_used = decimal_year(used["date"]), np.log10(used["tokens_per_day"].to_numpy(float))
            later = h[(h["series"] == name) & (h["date"] > cut.to_timestamp(how="end"))]
            for _, o in later.iterrows():
                f = m[(m["series"] == name) & (m["month"] == o["date"].to_period("M"))]
                if f.empty:
                    continue
                f = f.iloc[0]
                v = float(o["tokens_per_day"])
                rows.append({
                    "fit_through": str(cut), "series": name, "date": o["date"],
                    "horizon_year": (o["date"] - used["date"].max()).days / 365.25,
                    "in_80": bool(f["tokens_per_day_lo_80"] <= v <= f["tokens_per_day_hi_80"]),
                    "in_95": bool(f["tokens_per_day_lo_95"] <= v <= f["tokens_per_day_hi_95"]),
                    "width_95_log10": float(np.log10(f["tokens_per_day_hi_95"]
                                                     / f["tokens_per_day_lo_95"])),
                    "error_log10": float(np.log10(f["tokens_per_day"] / v)),
                    "naive_error_log10": float(np.log10(used["tokens_per_day"].iloc[-1] / v)),
                    "drift_error_log10": float(drift_path(t_used, y_used, decimal_year(pd.DatetimeIndex([f["date"]])))[0]
                                               - np.log10(v)),
                    "point_method": str(f.get("point_method", "trend")),
                    "calibration": r.backtest.calibration.source,
                })
    return pd.DataFrame(rows)
