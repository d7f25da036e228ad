"""Structural token demand: tokens/day = adopters x tasks per adopter per day x tokens per task.

Where a token series has published user counts (``datasets/demand_drivers.csv``, driver
``adopters``), its demand is split into who uses it and how much each user consumes:

- **adopters** ``A(t)``: a logistic diffusion toward a sourced ceiling ``m``, the region's people
  online (:func:`adopter_ceiling`); ``logit(A / m) = a + r t`` fitted by statsmodels OLS on the
  series' user counts (one metric: the one with the most points);
- **tokens per adopter per day** ``I = tokens per day / A``: grows at its rate over the year
  before the last observation (:func:`~tokenomics.forecast.backtest.drift_slope`, the drift
  benchmark's definition) and that rate decays at
  :data:`~tokenomics.forecast.models.DEFAULT_DAMPING_PER_YEAR`:
  ``log I(t0 + h) = log I(t0) + g (1 - exp(-c h)) / c``;
- ``I`` = tasks per adopter per day x tokens per task, with tokens per task from the published
  tokens per request (driver ``tokens_per_request``) on the same damped path.

Intervals are Monte Carlo draws (:data:`N_DRAWS`, fixed seed) of the logistic's coefficients (OLS
covariance), of the decay rate (log-normal, the damped model's prior sd) and of ``log I`` as a
random walk with drift whose innovation variance per year is estimated from the intensity's own
increments. The design was fixed before it was scored (``docs/validation/structural.md``); the
rolling-origin score against drift and a random walk is :func:`structural_backtest`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from .._display import Display
from ..errors import ValidationError

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

#: Monte Carlo draws per structural forecast.
N_DRAWS = 2000

#: Fewest user counts of a series (up to the origin) the adopters' logistic is fitted on.
MIN_ADOPTER_OBS = 3

#: Fewest token observations (up to the origin): two increments estimate the intensity's variance.
MIN_TOKEN_OBS = 3

#: Drivers ``datasets/demand_drivers.csv`` may hold.
DRIVERS: tuple[str, ...] = ("adopters", "tokens_per_request", "agentic_share")

_LEVELS = {"80": (0.10, 0.90), "95": (0.025, 0.975)}


def load_drivers(data: "pd.DataFrame | None" = None) -> "pd.DataFrame":
    """Driver observations with a ``t_year`` column [decimal year], validated.

    Parameters
    ----------
    data : pandas.DataFrame, optional
        Rows with the columns of ``datasets/demand_drivers.csv`` (``driver, series, metric, date,
        value``); default the bundled file.

    Returns
    -------
    pandas.DataFrame
        The rows sorted by driver, series and date.
    """
    from ..catalog import check_columns, load
    from ..dates import decimal_year, parse_date

    df = (load("demand_drivers") if data is None else data).copy()
    check_columns(df, ("driver", "series", "metric", "date", "value"), what="demand drivers")
    bad = sorted(set(df["driver"]) - set(DRIVERS))
    if bad:
        from ..errors import unknown_name

        raise unknown_name("demand driver", bad[0], DRIVERS)
    parsed = [parse_date(d) for d in df["date"].astype(str)]
    for i, p in enumerate(parsed):
        if p is None:
            raise ValidationError(f"demand drivers row {i + 1}: date {df['date'].iloc[i]!r} is not YYYY, YYYY-MM or YYYY-MM-DD")
    value = np.asarray(df["value"], dtype=float)
    if not np.all(np.isfinite(value) & (value > 0)):
        i = int(np.flatnonzero(~(np.isfinite(value) & (value > 0)))[0])
        raise ValidationError(f"demand drivers row {i + 1}: value {df['value'].iloc[i]!r} must be a positive number")
    df["value"] = value
    df["t_year"] = decimal_year(np.array([p[0] for p in parsed]))
    df["series"] = df["series"].fillna("").astype(str)
    return df.sort_values(["driver", "series", "t_year"]).reset_index(drop=True)


def adopter_ceiling(region: str) -> float:
    """Most users a product can have in ``region`` [people]: its people online
    (``adopter_ceiling_<region>`` of ``datasets/demand_scenarios.csv``)."""
    from .scenarios import parameter

    return parameter(f"adopter_ceiling_{region}")


# ----------------------------------------------------------------------------- adopters
@dataclass(frozen=True)
class AdopterFit:
    """Logistic adopters ``A(t) = m / (1 + exp(-(a + r t)))`` fitted by OLS on ``logit(A / m)``.

    Attributes
    ----------
    ceiling : float
        ``m`` [people].
    params : numpy.ndarray
        ``(a, r)``; ``r`` [1/year] on decimal years centred at ``t_ref``.
    cov : numpy.ndarray
        2 x 2 covariance of ``params``.
    t_ref : float
        Centre of the fitted times [decimal year].
    metric : str
        What the fitted user counts count (e.g. monthly active users).
    n_obs : int
    """

    ceiling: float
    params: np.ndarray
    cov: np.ndarray
    t_ref: float
    metric: str
    n_obs: int

    def log_adopters(self, t_year, coef: np.ndarray | None = None) -> np.ndarray:
        """``log A(t)`` [log people]; ``coef`` (n, 2) draws give (n, len(t))."""
        t = np.asarray(t_year, dtype=float) - self.t_ref
        c = self.params if coef is None else coef
        z = c[..., 0, None] + c[..., 1, None] * t if np.ndim(c) > 1 else c[0] + c[1] * t
        return math.log(self.ceiling) - np.logaddexp(0.0, -z)


def fit_adopters(t_year, users, ceiling: float, metric: str = "") -> AdopterFit:
    """Fit the logistic adopters curve (statsmodels OLS of ``logit(users / ceiling)`` on time).

    Parameters
    ----------
    t_year : array-like
        Dates of the user counts [decimal year].
    users : array-like
        User counts [people], each below ``ceiling``.
    ceiling : float
        The logistic's ceiling [people].
    metric : str
        Label of what is counted.

    Returns
    -------
    AdopterFit

    Examples
    --------
    Users doubling from 1 % to 2 % of the ceiling in a year, then 4 %: the fitted logit grows
    ``log(2 x 0.99 / 0.98)`` = 0.703 a year.

    >>> f = fit_adopters([2024.0, 2025.0, 2026.0], [0.01, 0.02, 0.04], 1.0)
    >>> round(float(f.params[1]), 2)
    0.71
    """
    import statsmodels.api as sm

    t = np.asarray(t_year, dtype=float)
    u = np.asarray(users, dtype=float)
    if len(t) < MIN_ADOPTER_OBS:
        raise ValidationError(f"adopters need at least {MIN_ADOPTER_OBS} user counts, got {len(t)}")
    if np.any(u >= ceiling):
        raise ValidationError(f"a user count ({u.max():.3g}) is not below the ceiling {ceiling:.3g}: "
                              "the ceiling must exceed every count")
    t_ref = float(t.mean())
    x = sm.add_constant(t - t_ref, has_constant="add")
    res = sm.OLS(np.log(u / (ceiling - u)), x).fit()
    cov = np.asarray(res.cov_params(), dtype=float) if res.df_resid > 0 else np.zeros((2, 2))
    return AdopterFit(float(ceiling), np.asarray(res.params, dtype=float), np.nan_to_num(cov), t_ref, metric, len(t))


# ----------------------------------------------------------------------------- damped growth
def damped_growth(g, c, h) -> np.ndarray:
    """Log growth over horizon ``h`` of a rate ``g`` that decays at ``c``: ``g (1 - e^{-c h}) / c``.

    Parameters
    ----------
    g : array-like
        Growth rate at the origin [log units / year].
    c : array-like
        Decay rate of the growth rate [1/year], positive.
    h : array-like
        Horizon [years], clipped at 0.

    Returns
    -------
    numpy.ndarray
        [log units], broadcast over the inputs.

    Examples
    --------
    A rate of 1 a year decaying at 1 a year adds ``1 - e^-1`` = 0.632 in the first year and at
    most 1 in all:

    >>> round(float(damped_growth(1.0, 1.0, 1.0)), 3), round(float(damped_growth(1.0, 1.0, 1e3)), 3)
    (0.632, 1.0)
    """
    h = np.maximum(np.asarray(h, dtype=float), 0.0)
    c = np.asarray(c, dtype=float)
    return np.asarray(g, dtype=float) * -np.expm1(-c * h) / c


def _increment_sd(t: np.ndarray, y: np.ndarray) -> float:
    """Innovation sd per sqrt(year) of ``y`` as a random walk with drift (variance proportional to
    the time between observations)."""
    dt, dy = np.diff(t), np.diff(y)
    keep = dt > 0
    dt, dy = dt[keep], dy[keep]
    if len(dt) < 2:
        return float("nan")
    g = dy.sum() / dt.sum()
    return float(np.sqrt(np.sum((dy - g * dt) ** 2 / dt) / (len(dt) - 1)))


# ----------------------------------------------------------------------------- the fit
@dataclass(frozen=True)
class StructuralFit:
    """A series' structural demand, fitted up to its last token observation.

    Attributes
    ----------
    series, region : str
    adopters : AdopterFit
    t_last : float
        Last token observation [decimal year].
    log_tokens_last : float
        Its ``log(tokens/day)``.
    log_intensity_last : float
        ``log`` tokens per adopter per day at ``t_last``.
    growth_per_year : float
        ``g``: growth of ``log`` tokens per adopter per day over the last year [1/year].
    sigma_per_sqrt_year : float
        Innovation sd of ``log`` tokens per adopter per day [1/sqrt(year)].
    window_year : float
        Span ``g`` was measured over [years].
    """

    series: str
    region: str
    adopters: AdopterFit
    t_last: float
    log_tokens_last: float
    log_intensity_last: float
    growth_per_year: float
    sigma_per_sqrt_year: float
    window_year: float

    def draws(self, t_year, n: int = N_DRAWS, seed: int = 0) -> np.ndarray:
        """Monte Carlo draws of ``log(tokens/day)`` at ``t_year``, shape (n, len(t_year))."""
        from .models import DAMPING_SD_LOG, DEFAULT_DAMPING_PER_YEAR

        rng = np.random.default_rng(seed)
        tq = np.atleast_1d(np.asarray(t_year, dtype=float))
        h = np.maximum(tq - self.t_last, 0.0)
        coef = rng.multivariate_normal(self.adopters.params, self.adopters.cov, size=n) \
            if np.any(self.adopters.cov) else np.tile(self.adopters.params, (n, 1))
        la = self.adopters.log_adopters(tq, coef) - self.adopters.log_adopters([self.t_last], coef)
        c = DEFAULT_DAMPING_PER_YEAR * np.exp(DAMPING_SD_LOG * rng.standard_normal((n, 1)))
        g = self.growth_per_year + self.sigma_per_sqrt_year / math.sqrt(self.window_year) * rng.standard_normal((n, 1))
        li = damped_growth(g, c, h) + self.sigma_per_sqrt_year * np.sqrt(h) * rng.standard_normal((n, len(tq)))
        return self.log_tokens_last + la + li

    def predict(self, t_year, n: int = N_DRAWS, seed: int = 0) -> dict[str, np.ndarray]:
        """Median and 80 / 95 % bounds of ``log(tokens/day)``, the adopters' and the intensity's
        medians [log units] at ``t_year``."""
        from .models import DEFAULT_DAMPING_PER_YEAR

        tq = np.atleast_1d(np.asarray(t_year, dtype=float))
        d = self.draws(tq, n, seed)
        out = {"median": np.median(d, axis=0)}
        for lvl, (lo, hi) in _LEVELS.items():
            out[f"lo_{lvl}"], out[f"hi_{lvl}"] = np.quantile(d, [lo, hi], axis=0)
        out["log_adopters"] = self.adopters.log_adopters(tq)
        out["log_intensity"] = self.log_intensity_last + damped_growth(
            self.growth_per_year, DEFAULT_DAMPING_PER_YEAR, tq - self.t_last)
        return out


def fit_structural(t_tok, tokens_per_day, t_users, users, ceiling: float, *, series: str = "",
                   region: str = "world", metric: str = "") -> StructuralFit:
    """Fit the structural model on one series' token and user observations.

    Parameters
    ----------
    t_tok, tokens_per_day : array-like
        Token observations [decimal year], [tokens/day]; at least :data:`MIN_TOKEN_OBS`.
    t_users, users : array-like
        User counts [decimal year], [people]; at least :data:`MIN_ADOPTER_OBS`.
    ceiling : float
        Most users the product can have [people] (:func:`adopter_ceiling`).
    series, region, metric : str
        Labels.

    Returns
    -------
    StructuralFit
    """
    from .backtest import DRIFT_WINDOW_YEAR, drift_slope

    t = np.asarray(t_tok, dtype=float)
    y = np.log(np.asarray(tokens_per_day, dtype=float))
    if len(t) < MIN_TOKEN_OBS:
        raise ValidationError(f"{series or 'series'}: the structural model needs {MIN_TOKEN_OBS} token "
                              f"observations, got {len(t)}")
    order = np.argsort(t, kind="stable")
    t, y = t[order], y[order]
    ad = fit_adopters(t_users, users, ceiling, metric)
    li = y - ad.log_adopters(t)
    sigma = _increment_sd(t, li)
    window = min(DRIFT_WINDOW_YEAR, float(t[-1] - t[0]))
    if not np.isfinite(sigma) or window <= 0:
        raise ValidationError(f"{series or 'series'}: token observations need at least {MIN_TOKEN_OBS} distinct dates")
    return StructuralFit(series, region, ad, float(t[-1]), float(y[-1]), float(li[-1]),
                         drift_slope(t, li), sigma, window)


# ----------------------------------------------------------------------------- per series
def _series_inputs(name: str, history: "pd.DataFrame", drivers: "pd.DataFrame", through: float | None):
    """(t_tok, tokens, t_users, users, metric, region) of one series up to ``through``, or None where
    the series has too few token or user observations."""
    from ..dates import decimal_year
    from .measurement import on_latest_definition

    h = history[history["series"] == name]
    if through is not None:
        h = h[decimal_year(h["date"]) <= through + 1e-9]
    h = on_latest_definition(h)  # on its definition as of ``through``
    t_tok = decimal_year(h["date"])
    tok = h["tokens_per_day"].to_numpy(float)
    a = drivers[(drivers["driver"] == "adopters") & (drivers["series"] == name)]
    if a.empty:
        return None
    metric = a["metric"].value_counts().index[0]
    a = a[a["metric"] == metric]
    t_u, u = a["t_year"].to_numpy(float), a["value"].to_numpy(float)
    if through is not None:
        t_u, u = t_u[t_u <= through + 1e-9], u[t_u <= through + 1e-9]
    if len(t_tok) < MIN_TOKEN_OBS or len(np.unique(t_tok)) < MIN_TOKEN_OBS or len(t_u) < MIN_ADOPTER_OBS:
        return None
    region = str(h["region"].iloc[0]) if "region" in h.columns and isinstance(h["region"].iloc[0], str) else "world"
    return t_tok, tok, t_u, u, metric, region


def structural_series(history: "pd.DataFrame | None" = None, drivers: "pd.DataFrame | None" = None) -> list[str]:
    """Series the structural model can fit on the whole history (enough token and user observations)."""
    from .history import load_history

    h = load_history() if history is None else history
    d = load_drivers() if drivers is None else drivers
    return [s for s in sorted(h["series"].unique()) if _series_inputs(s, h, d, None) is not None]


def fit_series(name: str, history: "pd.DataFrame | None" = None, drivers: "pd.DataFrame | None" = None,
               through: float | None = None) -> StructuralFit:
    """The structural fit of one series, on its observations up to ``through`` [decimal year].

    Raises
    ------
    ValidationError
        The series has fewer than :data:`MIN_TOKEN_OBS` token or :data:`MIN_ADOPTER_OBS` user
        observations (the message names the series that have enough).
    """
    from .history import load_history

    h = load_history() if history is None else history
    d = load_drivers() if drivers is None else drivers
    inp = _series_inputs(name, h, d, through)
    if inp is None:
        raise ValidationError(f"series {name!r} has too few token ({MIN_TOKEN_OBS}) or user ({MIN_ADOPTER_OBS}) "
                              f"observations for the structural model; it fits: {', '.join(structural_series(h, d)) or 'none'}")
    return _fit_inputs(name, inp)


def _fit_inputs(name: str, inp: tuple) -> StructuralFit:
    """:func:`fit_structural` of what :func:`_series_inputs` returned for series ``name``."""
    t_tok, tok, t_u, u, metric, region = inp
    return fit_structural(t_tok, tok, t_u, u, adopter_ceiling(region), series=name, region=region, metric=metric)


# ----------------------------------------------------------------------------- the drivers table
@dataclass(frozen=True, repr=False)
class DriversResult(Display):
    """Structural demand per series and year beside the trend forecast; see :func:`drivers`."""

    frame: "pd.DataFrame"

    def to_frame(self) -> "pd.DataFrame":
        """One row per series and year."""
        return self.frame.copy()


def _tokens_per_task(drivers: "pd.DataFrame", tq: np.ndarray) -> tuple[np.ndarray, str]:
    """Tokens per request [tokens] at ``tq``, and the series they were published for.

    Prompt + completion tokens at each date where both averages are published (interpolated in logs
    between those dates, on the damped path of :func:`damped_growth` after the last); NaN where
    no date has both."""
    from .backtest import drift_slope
    from .models import DEFAULT_DAMPING_PER_YEAR

    r = drivers[drivers["driver"] == "tokens_per_request"]
    metric = r["metric"].str.lower()
    part = np.where(metric.str.contains("prompt") & ~metric.str.contains("completion"), "prompt",
                    np.where(metric.str.contains("completion") & ~metric.str.contains("prompt"), "completion", ""))
    r = r.assign(part=part)
    r = r[r["part"] != ""]
    both = r.pivot_table(index=["series", "t_year"], columns="part", values="value", aggfunc="mean")
    if {"prompt", "completion"} - set(both.columns):
        return np.full(len(tq), np.nan), ""
    both = both.dropna(subset=["prompt", "completion"]).reset_index()
    if both.empty:
        return np.full(len(tq), np.nan), ""
    src = both["series"].value_counts().index[0]
    both = both[both["series"] == src].sort_values("t_year")
    t = both["t_year"].to_numpy(float)
    y = np.log((both["prompt"] + both["completion"]).to_numpy(float))
    g = drift_slope(t, y) if len(t) > 1 else 0.0
    ly = np.where(tq <= t[-1], np.interp(tq, t, y), y[-1] + damped_growth(g, DEFAULT_DAMPING_PER_YEAR, tq - t[-1]))
    return np.exp(ly), src


def drivers(series: str = "all", history: "pd.DataFrame | None" = None, data: "pd.DataFrame | None" = None,
            end: str = "2030-12", scenario: str = "base") -> DriversResult:
    """The structural decomposition of each series that has user counts, per year to ``end``.

    Parameters
    ----------
    series : str
        A series name or ``"all"`` (every series :func:`structural_series` can fit).
    history : pandas.DataFrame, optional
        Token observations (default the bundled ones).
    data : pandas.DataFrame, optional
        Driver observations (default ``datasets/demand_drivers.csv``).
    end : str
        Last December forecast, ``YYYY-MM``.
    scenario : {"low", "base", "high"}
        Agentic scenario whose share of tasks and tokens-per-task multiple are shown.

    Returns
    -------
    DriversResult
        Columns ``series, region, year``, ``tokens_per_day`` (structural median) with
        ``tokens_per_day_lo_80/_hi_80/_lo_95/_hi_95`` [tokens/day], ``adopters`` [people],
        ``adopter_metric``, ``tokens_per_adopter_per_day``, ``tokens_per_task`` (published tokens
        per request on its damped path), ``tasks_per_adopter_per_day``, ``agentic_share_frac`` and
        ``agentic_multiple`` (the scenario's; tokens per request from the bundled data where ``data``
        has none), ``trend_tokens_per_day`` (the trend forecast's
        December median) and ``adopter_ceiling``. Years are each December 15; the current year
        onwards.
    """
    import pandas as pd

    from ..dates import decimal_year
    from .demand import forecast
    from .history import load_history
    from .scenarios import scenario as scenario_of

    h = load_history() if history is None else history
    d = load_drivers(data)
    names = structural_series(h, d) if series == "all" else [series]
    if not names:
        covered = sorted(set(d.loc[d["driver"] == "adopters", "series"]) - {""})
        raise ValidationError(f"no series of the history has the {MIN_TOKEN_OBS} token observations and "
                              f"{MIN_ADOPTER_OBS} user counts the structural model needs; user counts are held for: "
                              f"{', '.join(covered) or 'none'} (add yours with the columns of datasets/demand_drivers.csv)")
    trend = forecast(names if len(names) > 1 else names[0], history=history, end=end).to_frame("annual") \
        if names else pd.DataFrame(columns=["series", "date", "tokens_per_day"])
    sc = scenario_of(scenario)
    per_request = d if (d["driver"] == "tokens_per_request").any() else load_drivers()
    rows = []
    for name in names:
        fit = fit_series(name, h, d)
        years = np.arange(int(math.floor(fit.t_last)), int(end[:4]) + 1)
        tq = decimal_year(np.array([f"{y}-12-15" for y in years], dtype="datetime64[D]"))
        years, tq = years[tq > fit.t_last], tq[tq > fit.t_last]  # Decembers after the last observation
        p = fit.predict(tq)
        tpt, _ = _tokens_per_task(per_request, tq)
        intensity = np.exp(p["log_intensity"])
        tr = trend[trend["series"] == name]
        tr_by_year = dict(zip(pd.to_datetime(tr["date"]).dt.year, tr["tokens_per_day"]))
        for i, y in enumerate(years):
            rows.append({
                "series": name, "region": fit.region, "year": int(y),
                "tokens_per_day": float(np.exp(p["median"][i])),
                **{f"tokens_per_day_{k}": float(np.exp(p[k][i])) for k in ("lo_80", "hi_80", "lo_95", "hi_95")},
                "adopters": float(np.exp(p["log_adopters"][i])), "adopter_metric": fit.adopters.metric,
                "tokens_per_adopter_per_day": float(intensity[i]), "tokens_per_task": float(tpt[i]),
                "tasks_per_adopter_per_day": float(intensity[i] / tpt[i]),
                "agentic_share_frac": float(sc.share(tq[i])), "agentic_multiple": float(sc.multiplier),
                "trend_tokens_per_day": float(tr_by_year.get(int(y), np.nan)),
                "adopter_ceiling": fit.adopters.ceiling,
            })
    return DriversResult(pd.DataFrame(rows))


# ----------------------------------------------------------------------------- rolling origin
def structural_backtest(history: "pd.DataFrame | None" = None, data: "pd.DataFrame | None" = None) -> "pd.DataFrame":
    """Rolling-origin score of the structural model beside drift and the random walk.

    Every token observation with :data:`MIN_TOKEN_OBS` token and :data:`MIN_ADOPTER_OBS` user
    observations of its series on or before it is an origin; every later observation of the series
    is scored, fitted only on the token and user observations dated on or before the origin.

    Returns
    -------
    pandas.DataFrame
        One row per scored point: ``series, origin_year, target_year, horizon_year``,
        ``model_err_dec``, ``drift_err_dec``, ``rw_err_dec`` (log10 predicted / actual [decades]),
        ``in_80``, ``in_95``, ``width_95_dec`` [decades].
    """
    import pandas as pd

    from ..dates import decimal_year
    from .backtest import drift_path
    from .history import load_history

    h = load_history() if history is None else history
    d = load_drivers(data)
    rows = []
    ln10 = math.log(10.0)
    for name in sorted(h["series"].unique()):
        s = h[h["series"] == name]
        t_all = decimal_year(s["date"])
        order = np.argsort(t_all, kind="stable")
        t_all, y_all = t_all[order], np.log10(s["tokens_per_day"].to_numpy(float)[order])
        for origin in np.unique(t_all):
            later = t_all > origin + 1e-9
            inp = _series_inputs(name, h, d, float(origin)) if later.any() else None
            if inp is None:
                continue
            fit = _fit_inputs(name, inp)
            tq, actual = t_all[later], y_all[later]
            p = fit.predict(tq)
            past = t_all <= origin + 1e-9
            tp, yp = t_all[past], y_all[past]
            drift = drift_path(tp, yp, tq)
            for i in range(len(tq)):
                rows.append({
                    "series": name, "origin_year": float(origin), "target_year": float(tq[i]),
                    "horizon_year": float(tq[i] - origin),
                    "model_err_dec": float(p["median"][i] / ln10 - actual[i]),
                    "drift_err_dec": float(drift[i] - actual[i]), "rw_err_dec": float(yp[-1] - actual[i]),
                    "in_80": bool(p["lo_80"][i] / ln10 <= actual[i] <= p["hi_80"][i] / ln10),
                    "in_95": bool(p["lo_95"][i] / ln10 <= actual[i] <= p["hi_95"][i] / ln10),
                    "width_95_dec": float((p["hi_95"][i] - p["lo_95"][i]) / ln10),
                })
    return pd.DataFrame(rows)


def backtest_summary(points: "pd.DataFrame") -> "pd.DataFrame":
    """Median and mean |error| of the structural model, drift and the random walk on the same
    points, coverage of the 80 / 95 % intervals and the median 95 % width, overall and within a year.

    Returns
    -------
    pandas.DataFrame
        One row per horizon group (``all``, ``<= 1 y``).
    """
    import pandas as pd

    rows = []
    for label, g in (("all", points), ("<= 1 y", points[points["horizon_year"] <= 1.0] if len(points) else points)):
        if g.empty:
            continue
        r = {"horizon": label, "n_points": int(len(g)), "n_series": int(g["series"].nunique())}
        for k in ("model", "drift", "rw"):
            a = g[f"{k}_err_dec"].abs()
            r[f"{k}_median_abs_err_dec"], r[f"{k}_mean_abs_err_dec"] = float(a.median()), float(a.mean())
        r["coverage_80"], r["coverage_95"] = float(g["in_80"].mean()), float(g["in_95"].mean())
        r["median_width_95_dec"] = float(g["width_95_dec"].median())
        rows.append(r)
    return pd.DataFrame(rows)
