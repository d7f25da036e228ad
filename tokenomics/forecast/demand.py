"""Token demand forecasts to 2030: backtest-weighted model ensemble, optional agentic scenario.

:func:`forecast` fits every model that a series has enough observations for, combines them with
the weights of the rolling-origin backtest (:mod:`.backtest`) by averaging their log-scale
quantiles (the median and each interval bound separately), and, for a scenario, multiplies the
path by the agentic uplift of :mod:`.scenarios`. Results are monthly to 2030-12.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from . import models as M
from .._display import Display
from .history import MIN_OBS, decimal_year, load_history, month_end, series as get_series

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

    from .backtest import BacktestResult

#: Last forecast month.
END = "2030-12"

#: Output columns of :meth:`ForecastResult.to_frame` (tokens/day and intervals).
COLUMNS = ("series", "date", "tokens_per_day", "tokens_per_day_lo_80", "tokens_per_day_hi_80",
           "tokens_per_day_lo_95", "tokens_per_day_hi_95", "scenario", "agentic_share_frac",
           "agentic_uplift", "models")


@dataclass(frozen=True, repr=False)
class ForecastResult(Display):
    """Monthly forecasts of one or more series.

    Attributes
    ----------
    monthly : pandas.DataFrame
        One row per series and month (columns :data:`COLUMNS`; dates ``YYYY-MM``).
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
        return self.monthly[self.monthly["date"].str.endswith("-12")].reset_index(drop=True)

    def series_names(self) -> list[str]:
        return list(dict.fromkeys(self.monthly["series"]))

    def fan_chart(self, path) -> "object":
        """Save a log-scale fan chart (80 % and 95 % bands, observations) as PNG; return the path."""
        return fan_chart(self, path)

    def write(self, out_dir) -> list:
        """Write ``forecast_annual.csv``, ``forecast_monthly.csv``, ``backtest.csv``,
        ``history.csv`` and ``forecast_fan.png`` into ``out_dir`` (atomically); return the paths."""
        from pathlib import Path

        from ..io import write_frame

        out = Path(out_dir)
        paths = [
            write_frame(self.to_frame("annual"), out / "forecast_annual.csv"),
            write_frame(self.to_frame("monthly"), out / "forecast_monthly.csv"),
            write_frame(self.backtest.to_frame(), out / "backtest.csv"),
            write_frame(self.history.assign(date=self.history["date"].dt.strftime("%Y-%m-%d")),
                        out / "history.csv"),
        ]
        paths.append(self.fan_chart(out / "forecast_fan.png"))
        return paths


def _month_grid(start_after, end: str) -> "pd.PeriodIndex":
    import pandas as pd

    first = pd.Period(start_after, freq="M") + 1
    last = pd.Period(month_end(end), freq="M")
    return pd.period_range(first, last, freq="M")


def _combine(fits: dict, weights: dict, tq: np.ndarray) -> dict[str, np.ndarray]:
    w = np.array([weights.get(m, 0.0) for m in fits], dtype=float)
    if w.sum() <= 0:
        w = np.ones(len(fits))
    w = w / w.sum()
    preds = [f.predict(tq) for f in fits.values()]
    return {k: sum(wi * p[k] for wi, p in zip(w, preds)) for k in preds[0]}


def forecast_series(name: str, fit_through=None, scenario: str | None = None, end: str = END,
                    history: "pd.DataFrame | None" = None, backtest_result=None) -> "pd.DataFrame":
    """Monthly forecast of one series (see :func:`forecast`); returns the frame only."""
    from .backtest import run_backtest
    from .scenarios import scenario as get_scenario

    s = get_series(name, fit_through=fit_through, history=history)
    bt = backtest_result or run_backtest(history=history, fit_through=fit_through)
    t = s["t_year"].to_numpy(float)
    y = np.log(s["tokens_per_day"].to_numpy(float))
    usable = [m for m in M.available(len(t)) if bt.weights.get(m, 0.0) > 0] or list(M.available(len(t)))
    fits = {}
    for m in usable:
        kw = {"damping_per_year": bt.damping_per_year} if m == "damped" else {}
        fits[m] = M.fit(m, t, y, **kw)
    grid = _month_grid(s["date"].iloc[-1], end)
    tq = decimal_year(grid.to_timestamp() + np.timedelta64(14, "D"))
    comb = _combine(fits, bt.weights, tq)
    if scenario is not None:
        sc = get_scenario(scenario)
        share = sc.share(tq)
        uplift = sc.uplift(tq) / sc.uplift(t[-1])
    else:
        share = np.full(len(tq), np.nan)
        uplift = np.ones(len(tq))
    import pandas as pd

    used = [m for m in fits if bt.weights.get(m, 0.0) > 0] or list(fits)
    frame = pd.DataFrame({
        "series": name,
        "date": grid.strftime("%Y-%m"),
        "tokens_per_day": np.exp(comb["median"]) * uplift,
        "tokens_per_day_lo_80": np.exp(comb["lo_80"]) * uplift,
        "tokens_per_day_hi_80": np.exp(comb["hi_80"]) * uplift,
        "tokens_per_day_lo_95": np.exp(comb["lo_95"]) * uplift,
        "tokens_per_day_hi_95": np.exp(comb["hi_95"]) * uplift,
        "scenario": scenario or "trend",
        "agentic_share_frac": share,
        "agentic_uplift": uplift,
        "models": "+".join(f"{m}:{bt.weights.get(m, 0.0) / max(sum(bt.weights.get(k, 0.0) for k in used), 1e-12):.2f}" for m in used),
    })
    return frame


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
        Multiply the trend by the agentic uplift of that scenario; default: the trend alone.
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

    if scenario is not None:
        one_of(scenario, "scenario", SCENARIOS)
    hist = load_history() if history is None else check_history(history)
    if fit_through is not None:
        month_end(fit_through)  # validates the format early
    if not (isinstance(series, str) and series == "all"):
        for n in [series] if isinstance(series, str) else list(series):
            get_series(n, fit_through=fit_through, history=hist)  # unknown name / too few obs
    bt = run_backtest(history=history, fit_through=fit_through)
    skipped: dict = {}
    if isinstance(series, str) and series == "all":
        names = sorted(hist["series"].unique())
        cutoff = month_end(fit_through) if fit_through is not None else None
        chosen = []
        for n in names:
            k = int(((hist["series"] == n) & ((hist["date"] <= cutoff) if cutoff is not None else True)).sum())
            if k < MIN_OBS:
                skipped[n] = f"{k} observation(s); {MIN_OBS} needed"
            else:
                chosen.append(n)
    else:
        chosen = [series] if isinstance(series, str) else list(series)
    frames, used_hist = [], []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        for n in chosen:
            frames.append(forecast_series(n, fit_through, scenario, end, history=hist, backtest_result=bt))
            used_hist.append(get_series(n, fit_through=fit_through, history=hist))
    if not frames:
        from ..errors import ValidationError

        raise ValidationError(f"no series has {MIN_OBS} observations through {fit_through}; "
                              "use a later --fit-through")
    monthly = pd.concat(frames, ignore_index=True)
    return ForecastResult(monthly, pd.concat(used_hist, ignore_index=True), bt,
                          None if fit_through is None else str(fit_through), scenario, skipped)


def fan_chart(result: ForecastResult, path):
    """Log-scale fan chart of a :class:`ForecastResult` saved atomically as PNG
    (drawn by :func:`tokenomics.plot.forecast`)."""
    from .. import plot
    from ..io import save_png

    _, ax = plot._pyplot().subplots(figsize=(10, 6), dpi=110)
    plot.forecast(result, ax=ax)
    save_png(ax.figure, path, dpi=100, bbox_inches="tight")
    return path
