"""Rolling-origin backtests, ensemble weights and interval calibration on pooled errors.

For each series with more than :data:`MIN_TRAIN` observations and each origin ``k >=
MIN_TRAIN``, every model is fitted on the first ``k`` observations and predicts each later one
(horizon = time since the last training observation). Errors are ``log10(predicted / actual)``,
so an error of 1 is a factor of ten. A tuning series with more origins than
:func:`origins_per_series` allows (at most :data:`MAX_ORIGINS`, about :data:`MAX_BACKTEST_ORIGINS`
in all) keeps that many, evenly spaced with the first and the last among them
(:func:`backtest_origins`); the bundled tuning series keep all of theirs, held-out series are
scored at every origin, and :attr:`BacktestResult.origins` says what was used. The weights and
the calibration read only the models' medians: the closed-form models' medians at every origin
come from one array call per series (:func:`.models.loglinear_medians`,
:func:`.models.local_trend_medians`, :func:`.models.damped_medians`, the damped one at every
prior decay rate the damping choice compares), the saturating curves' from their own fit at each
origin. Baselines:

- ``naive``: the last training value (a random walk in logs);
- ``drift``: constant growth at the rate of the last year before the origin (the straight line,
  on the log scale, from the value a year before the last training observation to it;
  :func:`drift_slope`).

From these out-of-sample errors, pooled over the **tuning** series:

- **weights** (:func:`weights_from_points`): inverse mean squared log error per model, shrunk
  towards equal weights until a model has about :data:`SHRINK_POINTS` errors, so two backtest
  points cannot hand one model the whole forecast;
- the **ensemble** median: the weighted mean of the models' log medians (a weighted median was
  tried: on the backtest it scored worse, 0.24 vs 0.20 decades mean absolute error, and held
  Doubao and Google flat from 2027 because the three saturating models carry most weight);
- the **calibration** (:class:`Calibration`): the ensemble's errors are modelled as
  ``e ~ scale(h, L) * score`` with ``scale^2 = s0^2 (1 + L) + (s1 h)^2`` (``h`` the horizon in
  years, ``L`` the extrapolation leverage of the training window, :func:`leverage`); ``s0, s1``
  by maximum likelihood, and the 80 % / 95 % multipliers are conformal quantiles of the scores
  ``|e| / scale``. ``s0^2 (1 + L)`` is the textbook prediction variance of a straight-line fit
  to noisy observations (the new observation's noise plus the fitted line's error at the
  target), so three points spanning three months extrapolate with a wider interval than three
  points spanning two years; ``(s1 h)^2`` is the growth rate changing after the origin. Every
  series, whatever its length, gets this interval; the leverage is capped at the largest the
  calibration saw (:attr:`Calibration.max_leverage`), so a three-point series is wide but never
  tens of decades wide.

:meth:`BacktestResult.coverage_by_horizon` scores the calibrated intervals honestly, in two
samples:

- ``tuning``: each tuning series' points predicted with weights and a calibration fitted on the
  *other* tuning series only (leave one series out). The method's fixed choices (models, the
  shrinkage, the error-scale form) were made looking at these series, so this is optimistic;
- ``holdout``: series marked ``holdout = 1`` in ``datasets/token_demand.csv`` (any row of the
  series; :func:`holdout_series`). They never enter the damping choice, the weights or the
  calibration; their rolling-origin points are only scored, with the weights and calibration
  fitted on all tuning series.
"""

from __future__ import annotations

import dataclasses
import functools
import math
import warnings
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable

import numpy as np

from . import models as M
from .._display import Display
from .history import decimal_year, load_history, month_end
from .record import apply_record, point_records

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

#: Observations every training window holds at least.
MIN_TRAIN = 3

#: Backtest errors after which a model's weight is half its error-based value and half equal.
SHRINK_POINTS = 10

#: Fewest pooled ensemble errors to calibrate on (two scale parameters; with so few errors the
#: multipliers fall back to Student-t quantiles with n - 1 degrees of freedom, so the intervals
#: are wide); fewer falls back to the bundled calibration.
MIN_CALIBRATION_POINTS = 3

#: Floor of the error scale at horizon 0 [decades, one standard deviation]: how far published
#: figures for the same quantity disagree. ASSUMPTION, set from the tuning rows of
#: ``token_demand.csv``: Doubao December 2025, third-party 63 T vs the company's 50 T/day (0.10
#: decades); Google's 980 T month reported as July and June (one month of its growth, ~0.09
#: decades); "more than X" figures rounded to one or two digits (up to ~0.05). Without it the
#: maximum-likelihood ``s0`` fell to 0.02 decades on 11 tuning errors with almost none at short
#: horizons, and the held-out series (scored once before this floor existed) were covered 33 %
#: (80 %) and 56 % (95 %).
OBS_NOISE_LOG10 = 0.1

#: Bootstrap draws of the saturating models inside the backtest (their own coverage only).
N_BOOT_BACKTEST = 40

#: Most rolling origins per tuning series (:func:`backtest_origins`: evenly spaced, the first and
#: the last kept). The bundled tuning series have at most five origins, so all of them are used; a
#: user's two years of monthly points have 21, of which five cost a quarter of the time. Held-out
#: series, only scored, keep every origin.
MAX_ORIGINS = 5

#: Rolling origins in all over the tuning series (:func:`origins_per_series`): beyond 30 series
#: each keeps fewer than :data:`MAX_ORIGINS`, never fewer than :data:`MIN_ORIGINS`. The weights and
#: the two-parameter calibration pool the errors of every series; 150 origins give thousands of
#: errors, and each origin refits two curves by iterative least squares (~20 ms each).
MAX_BACKTEST_ORIGINS = 150

#: Fewest rolling origins a capped tuning series keeps: the first (longest horizons), the middle
#: and the last (the latest data).
MIN_ORIGINS = 3

BASELINES: tuple[str, ...] = ("naive", "drift")

#: Window over which the ``drift`` benchmark measures growth [years]: it extrapolates the
#: constant growth rate of the last year before the origin (:func:`drift_slope`).
DRIFT_WINDOW_YEAR = 1.0

#: Labels of the ``sample`` column: series the method is tuned on, and series only scored.
SAMPLES: tuple[str, ...] = ("tuning", "holdout")

#: Horizon bins [years] of the coverage table.
HORIZON_BINS_YEAR: tuple[float, ...] = (0.0, 0.5, 1.0, 2.0, math.inf)

_LN10 = np.log(10.0)


# ------------------------------------------------------------------------------ calibration
@dataclass(frozen=True)
class Calibration:
    """Interval calibration fitted on pooled out-of-sample ensemble errors (log10).

    The half-width of the ``level`` interval at horizon ``h`` [years], leverage ``L``
    (:func:`leverage`) and model spread ``d`` [decades] is ``q[level] * sqrt(s0^2 (1 + L) +
    (s1 h)^2 + (k d)^2)`` decades.

    Attributes
    ----------
    s0_log10 : float
        Observation noise [decades, one standard deviation]: the error scale at horizon 0 of a
        perfectly known trend (``L = 0``).
    s1_log10_per_year : float
        Growth of the error scale per year of horizon [decades/year].
    k_spread : float
        Weight of the models' spread ``d`` in the scale (dimensionless). :func:`fit_calibration`
        fixes it at 0 by default: with 10-15 pooled errors, fitting it alongside the horizon
        term was unstable (it jumped between 0 and 0.5 when one series was added), and pooled
        errors by horizon already include the models' disagreement on average.
    q : dict
        Level (0.8, 0.95) -> multiplier of the scale (conformal quantile of ``|e| / scale``).
    n_points, n_series : int
        Errors and series the calibration was fitted on.
    max_horizon_year : float
        Longest horizon among those errors [years]. Beyond it the variance grows linearly in
        the horizon (a random walk) instead of quadratically (ASSUMPTION: nothing in the
        backtest says how growth-rate errors behave past it; linear-in-horizon error growth
        would put 2030 intervals at 10+ decades).
    source : str
        ``"pooled"`` (fitted on this history) or ``"bundled"`` (too few errors in the given
        history: the calibration of the bundled dataset).
    max_leverage : float
        Largest leverage among those errors (dimensionless). Larger leverages (a short window
        extrapolated years ahead) are capped at it (ASSUMPTION: the calibration says nothing
        about them, and an uncapped straight-line leverage would put a three-month series'
        2030 interval at tens of decades).
    noise_floor_log10 : float
        Observation noise no interval is narrower than [decades, one standard deviation]: the
        half-width of the ``level`` interval is at least the normal quantile of ``level`` times
        it. The conformal multipliers are quantiles of ``|e| / scale``, so on a history smoother
        than the noise (errors far below ``s0``) they fall below the normal quantiles and,
        unbounded, gave 95 % intervals ~0.02 decades wide to 2030; a future figure is never
        known better than published figures for the same quantity agree.
    """

    s0_log10: float
    s1_log10_per_year: float
    k_spread: float
    q: dict
    n_points: int
    n_series: int
    source: str = "pooled"
    max_horizon_year: float = 1.0
    max_leverage: float = math.inf
    noise_floor_log10: float = OBS_NOISE_LOG10

    def capped_leverage(self, leverage) -> np.ndarray:
        """Leverage capped at the largest the calibration saw (:attr:`max_leverage`)."""
        return np.minimum(np.asarray(leverage, dtype=float), self.max_leverage)

    def scale_log10(self, horizon_year, spread_log10=0.0, leverage=0.0) -> np.ndarray:
        """Error scale [decades] at horizons [years], model spread [decades] and leverage."""
        h = np.asarray(horizon_year, dtype=float)
        d = np.asarray(spread_log10, dtype=float)
        lev = self.capped_leverage(leverage)
        H = self.max_horizon_year
        drift2 = self.s1_log10_per_year**2 * (np.minimum(h, H) ** 2 + H * np.maximum(h - H, 0.0))
        return np.sqrt(self.s0_log10**2 * (1.0 + lev) + drift2 + (self.k_spread * d) ** 2)

    def half_width_log10(self, level: float, horizon_year, spread_log10=0.0,
                         leverage=0.0) -> np.ndarray:
        """Half-width [decades] of the two-sided ``level`` interval, never below the normal
        interval of the observation noise (:attr:`noise_floor_log10`)."""
        return np.maximum(self.q[level] * self.scale_log10(horizon_year, spread_log10, leverage),
                          M._z(level) * self.noise_floor_log10 * np.sqrt(1.0 + self.capped_leverage(leverage)))


def leverage(t_train_year, t_target_year) -> np.ndarray:
    """Extrapolation leverage of a training window at target times (dimensionless).

    ``1/n + (t - mean(t_train))^2 / sum((t_train - mean(t_train))^2)``: the variance of a
    least-squares straight line at ``t``, in units of the observations' noise variance (the
    standard prediction-interval result of simple linear regression). Used by :class:`Calibration` as
    a stand-in for every trend model's extrapolation error, so the interval knows how many
    observations, over how long a span, it extrapolates from.

    Parameters
    ----------
    t_train_year : array-like
        Training observation times [decimal years], two or more distinct.
    t_target_year : array-like
        Target times [decimal years].

    Returns
    -------
    numpy.ndarray
        Leverage at each target (``1/n`` at the window's mean time, growing quadratically away
        from it).
    """
    t = np.asarray(t_train_year, dtype=float)
    tq = np.asarray(t_target_year, dtype=float)
    tbar = float(np.mean(t)) if len(t) else 0.0
    sxx = float(np.sum((t - tbar) ** 2))
    if sxx <= 0:  # fewer than two distinct times: no slope to extrapolate
        return np.full(tq.shape, math.inf)
    return 1.0 / len(t) + (tq - tbar) ** 2 / sxx


def _conformal_quantile(scores: np.ndarray, level: float) -> float:
    """Split-conformal quantile: the ceil((n + 1) level)-th smallest score.

    With too few scores for that rank, the Student-t quantile (n - 1 degrees of freedom) times
    the largest-score ratio is used instead, so the multiplier stays finite and conservative.
    """
    from scipy.stats import t as student

    s = np.sort(np.asarray(scores, dtype=float))
    n = len(s)
    k = math.ceil((n + 1) * level)
    if k <= n:
        return float(s[k - 1])
    return float(max(s[-1], student.ppf(0.5 + level / 2, max(n - 1, 1))))


def _fit_scale(e: np.ndarray, h: np.ndarray, d: np.ndarray, k_spread: float | None,
               floor2: float, lev: np.ndarray) -> tuple[float, float, float]:
    """Maximum-likelihood ``(s0, s1, k)`` of :func:`fit_calibration` on errors ``e``."""
    from scipy.optimize import minimize

    def nll(theta):
        k = np.exp(theta[2]) if k_spread is None else k_spread
        v = ((floor2 + np.exp(2 * theta[0])) * (1.0 + lev) + (np.exp(theta[1]) * h) ** 2
             + (k * d) ** 2 + 1e-8)
        return float(np.sum(np.log(v) + e**2 / v))

    rms = float(np.sqrt(np.mean(e**2))) if len(e) else 0.3
    x0 = np.log([max(rms / 2, 1e-3), max(rms, 1e-3)] + ([0.5] if k_spread is None else []))
    res = minimize(nll, x0, method="Nelder-Mead", options={"xatol": 1e-6, "fatol": 1e-9,
                                                           "maxiter": 6000})
    a, s1 = (float(v) for v in np.exp(res.x[:2]))
    k = float(np.exp(res.x[2])) if k_spread is None else float(k_spread)
    return math.sqrt(floor2 + a**2), s1, k


def fit_calibration(error_log10, horizon_year, spread_log10, n_series: int = 0,
                    source: str = "pooled", k_spread: float | None = 0.0,
                    s0_floor_log10: float = OBS_NOISE_LOG10, groups=None,
                    leverage=None) -> Calibration:
    """Fit :class:`Calibration` to pooled errors.

    ``s0, s1`` (and ``k`` when ``k_spread`` is None) maximise the Gaussian likelihood of ``e``
    with variance ``s0^2 (1 + L) + (s1 h)^2 + (k d)^2``, where ``s0^2 = floor^2 + a^2`` (``a >= 0``
    fitted), so ``s0`` never falls below the observation noise; the multipliers are conformal
    quantiles of ``|e| / scale``. With ``groups`` (the series of each error, two or more), each
    series' scores use the scale fitted without that series (cross-conformal by series: errors of
    one series are not exchangeable with each other, series are), so the multipliers are not
    computed on the errors that fitted the scale; a series whose removal leaves fewer than
    :data:`MIN_CALIBRATION_POINTS` errors is scored in sample.

    Parameters
    ----------
    error_log10, horizon_year, spread_log10 : array-like
        Ensemble errors [decades], horizons [years] and model spreads [decades], one per point.
    n_series : int
        Series the points come from (recorded).
    source : str
        Label recorded in the result.
    k_spread : float or None
        Fixed weight of the model spread; None fits it too.
    s0_floor_log10 : float
        Smallest ``s0`` [decades]; default :data:`OBS_NOISE_LOG10`.
    groups : array-like, optional
        Series label of each error (cross-conformal scores); None scores in sample.
    leverage : array-like, optional
        Leverage ``L`` of each error's training window at its target (:func:`leverage`);
        None is 0 everywhere (a trend known exactly: the scale is ``s0`` at horizon 0).

    Returns
    -------
    Calibration
    """
    e = np.asarray(error_log10, dtype=float)
    h = np.asarray(horizon_year, dtype=float)
    d = np.asarray(spread_log10, dtype=float)
    L = np.zeros_like(e) if leverage is None else np.asarray(leverage, dtype=float)
    floor2 = float(s0_floor_log10) ** 2
    s0, s1, k = _fit_scale(e, h, d, k_spread, floor2, L)

    def scale_of(params, idx):
        a0, a1, ak = params
        return np.sqrt(a0**2 * (1.0 + L[idx]) + (a1 * h[idx]) ** 2 + (ak * d[idx]) ** 2)

    scores = np.abs(e) / scale_of((s0, s1, k), slice(None))
    g = None if groups is None else np.asarray(groups)
    if g is not None and len(np.unique(g)) >= 2:
        for key in np.unique(g):
            out = g == key
            if (~out).sum() >= MIN_CALIBRATION_POINTS:
                params = _fit_scale(e[~out], h[~out], d[~out], k_spread, floor2, L[~out])
                scores[out] = np.abs(e[out]) / scale_of(params, out)
    q = {lev: _conformal_quantile(scores, lev) for lev in M.LEVELS}
    return Calibration(s0, s1, k, q, int(len(e)), int(n_series), source,
                       float(max(h.max(), 0.25)) if len(h) else 1.0,
                       float(L.max()) if len(L) else math.inf, float(s0_floor_log10))


#: Last-resort calibration when neither the given history nor the bundled one (through the same
#: month) has :data:`MIN_CALIBRATION_POINTS` errors. ASSUMPTION (not fitted to anything): 0.1
#: decades at horizon 0 growing by 0.5 decades (a factor of ~3) per year of horizon at one
#: standard deviation, normal multipliers, no leverage term.
DEFAULT_CALIBRATION = Calibration(0.1, 0.5, 0.0, {0.8: 1.2816, 0.95: 1.96}, 0, 0,
                                  "default (ASSUMPTION)", 1.0, 0.0)


# ------------------------------------------------------------------------------ the result
@dataclass(frozen=True, repr=False)
class BacktestResult(Display):
    """Out-of-sample errors of each model, the weights and calibration derived from them.

    Attributes
    ----------
    points : pandas.DataFrame
        One row per (series, origin, target, model): ``error_log10``, ``leverage`` (of the
        training window at the target, :func:`leverage`), ``in_80``, ``in_95``
        (each model's own interval), ``spread_log10`` and ``width_95_log10`` (ensemble rows:
        leave-one-series-out calibration on tuning series, the tuning calibration on held-out
        ones) and ``sample`` (``"tuning"`` or ``"holdout"``, :data:`SAMPLES`).
    damping_per_year : float
        Prior median decay rate of the ``damped`` model chosen by the backtest [1/year].
    weights : dict
        Model -> weight (sums to 1), from the tuning series.
    calibration : Calibration
        Interval calibration used by :func:`tokenomics.forecast.forecast`, fitted on the
        tuning series only.
    origins : dict
        How the damping, weights and calibration were obtained: rolling origins ``used`` of
        ``available`` over ``series`` tuning series, at most ``max_per_series`` each
        (:func:`origins_per_series`, :func:`backtest_origins`: evenly spaced, first and last
        kept).
    """

    damping_per_year: float
    weights: dict
    calibration: Calibration = field(default=None)
    #: builds :attr:`points` (every model's own intervals, the leave-one-series-out and held-out
    #: scores): only the reports read it, so a forecast never pays for it
    _points_fn: "Callable[[], pd.DataFrame]" = field(default=None, repr=False, compare=False)
    #: how the tuning errors were sampled: ``max_per_series`` (:data:`MAX_ORIGINS`), ``used`` and
    #: ``available`` rolling origins over ``series`` tuning series, and their ``spacing``
    origins: dict = field(default=None, compare=False)
    #: each series' own record and the point forecast it chooses (:func:`.record.point_records`)
    records: "pd.DataFrame" = field(default=None, compare=False, repr=False)

    def point_method(self, series: str) -> str:
        """``drift`` where the series' own record prefers drift (:mod:`.record`), else ``trend``."""
        r = self.records
        if r is None or r.empty:
            return "trend"
        hit = r.loc[r["series"] == series, "point"]
        return str(hit.iloc[0]) if len(hit) else "trend"

    @functools.cached_property
    def points(self) -> "pd.DataFrame":
        return self._points_fn()

    def to_frame(self, sample: str = "all") -> "pd.DataFrame":
        """Summary per sample and model: points, errors, ratios to the baselines, coverage, weight.

        Parameters
        ----------
        sample : {"all", "tuning", "holdout"}
            Which series to summarise; ``all`` stacks both samples.

        Returns
        -------
        pandas.DataFrame
            Columns ``sample, model, n_points, n_series, mae_log10, rmse_log10, mae_vs_naive,
            mae_vs_drift, coverage_80, coverage_95, weight``. The ``ensemble`` row's coverage
            is that of the calibrated intervals; the models' rows, that of their own intervals.
        """
        return _by_sample(self.points, sample, lambda p: _summary(p, self.weights))

    def coverage_by_horizon(self, sample: str = "all") -> "pd.DataFrame":
        """Calibrated ensemble intervals scored out of sample, by sample and horizon bin.

        Parameters
        ----------
        sample : {"all", "tuning", "holdout"}
            ``tuning``: leave one tuning series out; ``holdout``: series never used to tune,
            scored with the tuning calibration; ``all`` stacks both.

        Returns
        -------
        pandas.DataFrame
            Columns ``sample, horizon, n_points, n_series, coverage_80, coverage_95,
            median_width_95_log10`` (decades), ``mae_log10`` (ensemble), ``mae_naive_log10``
            (random walk in logs on the same points), ``mae_vs_naive``. The last row of each
            sample pools all horizons.
        """
        return _by_sample(self.points, sample, _coverage_table)

    def coverage_by_series(self, sample: str = "all") -> "pd.DataFrame":
        """Calibrated ensemble intervals scored out of sample, by sample and series.

        A long series contributes many overlapping points to :meth:`coverage_by_horizon` (the
        held-out OpenRouter weeks are three quarters of that sample); here each series gets its
        own row, and a last row per sample (``series = "each series one vote"``) averages the
        series' coverages, widths and errors, so one series cannot stand for the sample.

        Parameters
        ----------
        sample : {"all", "tuning", "holdout"}
            As :meth:`coverage_by_horizon`.

        Returns
        -------
        pandas.DataFrame
            Columns ``sample, series, n_points, n_series, coverage_80, coverage_95,
            median_width_95_log10`` (decades), ``mae_log10, mae_naive_log10, mae_vs_naive``.
        """
        return _by_sample(self.points, sample, _series_table)

    def scored_points(self, sample: str = "all") -> "pd.DataFrame":
        """Every scored point: the forecast beside the drift and random-walk benchmarks.

        Parameters
        ----------
        sample : {"all", "tuning", "holdout"}
            As :meth:`coverage_by_horizon` (tuning points are scored leaving their series out).

        Returns
        -------
        pandas.DataFrame
            Columns ``sample, series, origin_year, target_year, horizon_year`` [decimal years,
            years], ``model_err_dec`` (the calibrated forecast's median), ``drift_err_dec``
            (constant growth of the last year before the origin, :func:`drift_slope`),
            ``rw_err_dec`` (the last value: a random walk in logs), all log10(predicted /
            actual) [decades], ``in_80``, ``in_95`` (the forecast's calibrated intervals held the
            observation), ``width_95_dec`` [decades] and ``point`` (``drift`` where the series' own
            record by that origin handed the forecast to drift, :mod:`.record`; else ``trend``).
        """
        return _by_sample(self.points, sample, _scored_points)

    def benchmarks(self, sample: str = "all") -> "pd.DataFrame":
        """Median and mean |error| of the forecast, drift and the random walk on the same points.

        Returns
        -------
        pandas.DataFrame
            One row per sample: ``n_points, n_series``, ``median_abs_err_dec`` and
            ``mean_abs_err_dec`` of ``model``, ``drift`` and ``rw`` [decades],
            ``beats_drift_frac`` (share of points where the forecast errs less than drift) and
            ``follows_drift_frac`` (share where the series' own record handed it to drift).
        """
        import pandas as pd

        pts = self.scored_points(sample)
        rows = []
        for s, g in (pts.groupby("sample", sort=False) if not pts.empty else []):
            r = {"sample": s, "n_points": int(len(g)), "n_series": int(g["series"].nunique())}
            for k in ("model", "drift", "rw"):
                a = g[f"{k}_err_dec"].abs()
                r[f"{k}_median_abs_err_dec"] = float(a.median())
                r[f"{k}_mean_abs_err_dec"] = float(a.mean())
            r["beats_drift_frac"] = float((g["model_err_dec"].abs() < g["drift_err_dec"].abs()).mean())
            r["follows_drift_frac"] = float((g["point"] == "drift").mean())
            rows.append(r)
        return pd.DataFrame(rows)


# ----------------------------------------------------------------------------- the backtest
def drift_slope(t, y, window_year: float = DRIFT_WINDOW_YEAR) -> float:
    """Growth rate of the last ``window_year`` of a series [log units per year].

    The slope from the value one window before the last observation (interpolated linearly in
    ``y`` between the observations around it) to the last observation; a series shorter than
    the window uses its first observation. 0 for fewer than two distinct times.

    Parameters
    ----------
    t : array-like
        Observation times, increasing [decimal years].
    y : array-like
        Values on a log scale (any base; the slope is in that base per year).
    window_year : float
        How far back the growth is measured [years].

    Returns
    -------
    float
        ``(y[-1] - y(t[-1] - window)) / window`` [log units/year].

    Examples
    --------
    Ten-fold in the last year, whatever came before:

    >>> round(drift_slope([2023.0, 2024.0, 2025.0], [0.0, 0.0, 1.0]), 6)
    1.0
    """
    t, y = np.asarray(t, dtype=float), np.asarray(y, dtype=float)
    start = max(float(t[-1]) - float(window_year), float(t[0]))
    span = float(t[-1]) - start
    if span <= 0:
        return 0.0
    return float((y[-1] - np.interp(start, t, y)) / span)


def drift_path(t, y, tq) -> np.ndarray:
    """The drift benchmark's median at ``tq``: the last value plus :func:`drift_slope` times the
    time since it (same log scale as ``y``).

    Parameters
    ----------
    t : array-like
        Observation times, increasing [decimal years].
    y : array-like
        Values on a log scale.
    tq : array-like
        Times to forecast [decimal years].

    Returns
    -------
    numpy.ndarray
        ``y[-1] + drift_slope(t, y) * (tq - t[-1])``.

    Examples
    --------
    >>> drift_path([2024.0, 2025.0], [0.0, 1.0], [2025.5]).tolist()
    [1.5]
    """
    t, y = np.asarray(t, dtype=float), np.asarray(y, dtype=float)
    return y[-1] + drift_slope(t, y) * (np.asarray(tq, dtype=float) - t[-1])


def _baselines(t: np.ndarray, y: np.ndarray, tq: np.ndarray) -> dict[str, np.ndarray]:
    return {"naive": np.full_like(tq, y[-1]), "drift": drift_path(t, y, tq)}


def _fit_quiet(m: str, t, y, damping: float, intervals: bool):
    kw = {}
    if m == "damped":
        kw["damping_per_year"] = damping
    if m in ("gompertz", "logistic"):
        kw["n_boot"] = N_BOOT_BACKTEST if intervals else 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return M.fit(m, t, y, **kw)


def backtest_origins(n_obs: int, max_origins: int | None = MAX_ORIGINS) -> np.ndarray:
    """Training sizes (rolling origins) the backtest fits a series of ``n_obs`` observations at.

    Every ``k`` from :data:`MIN_TRAIN` to ``n_obs - 1``; with more than ``max_origins`` of them,
    ``max_origins`` evenly spaced ones, the first (longest horizons) and the last (the latest
    data) always among them (``statsforecast``'s ``cross_validation(n_windows=...)`` is the same
    economy). Each origin refits every model, two of them by iterative least squares, so a long
    user history costs time in proportion to its origins; the later observations of a dropped
    origin are still forecast from the kept origins before them.

    Parameters
    ----------
    n_obs : int
        Observations of the series.
    max_origins : int or None
        Most origins kept; None keeps all.

    Returns
    -------
    numpy.ndarray
        Increasing training sizes (empty when ``n_obs <= MIN_TRAIN``).
    """
    ks = np.arange(MIN_TRAIN, n_obs)
    if max_origins is None or len(ks) <= max_origins:
        return ks
    return np.unique(np.round(np.linspace(MIN_TRAIN, n_obs - 1, int(max_origins))).astype(int))


def origins_per_series(n_series: int) -> int:
    """Rolling origins each of ``n_series`` tuning series keeps (:func:`backtest_origins`).

    :data:`MAX_ORIGINS`, lowered so that all series together keep about
    :data:`MAX_BACKTEST_ORIGINS`, but never below :data:`MIN_ORIGINS` (five origins each up to 30
    series, four up to 37, three beyond).

    Parameters
    ----------
    n_series : int
        Tuning series long enough to backtest.

    Returns
    -------
    int
        Most origins per series.
    """
    return max(MIN_ORIGINS, min(MAX_ORIGINS, MAX_BACKTEST_ORIGINS // max(int(n_series), 1)))


def _points_for(name: str, t: np.ndarray, y: np.ndarray, model_list, damping: float,
                intervals: bool = True, max_origins: int | None = None):
    rows = []
    for k in backtest_origins(len(t), max_origins):
        tt, yy, tq, yq = t[:k], y[:k], t[k:], y[k:]
        L = leverage(tt, tq)
        preds: dict[str, dict[str, np.ndarray]] = {
            b: {"median": v} for b, v in _baselines(tt, yy, tq).items()
        }
        for m in model_list:
            if k < M.MIN_OBS[m]:
                continue
            preds[m] = _fit_quiet(m, tt, yy, damping, intervals).predict(tq)
        for m, p in preds.items():
            for j in range(len(tq)):
                row = {
                    "series": name, "model": m, "n_train": k,
                    "origin_year": float(tt[-1]), "target_year": float(tq[j]),
                    "horizon_year": float(tq[j] - tt[-1]),
                    "predicted_log10": float(p["median"][j] / _LN10),
                    "actual_log10": float(yq[j] / _LN10),
                    "leverage": float(L[j]),
                }
                row["error_log10"] = row["predicted_log10"] - row["actual_log10"]
                for lev in (80, 95):
                    if f"lo_{lev}" in p:
                        row[f"in_{lev}"] = bool(p[f"lo_{lev}"][j] <= yq[j] <= p[f"hi_{lev}"][j])
                    else:
                        row[f"in_{lev}"] = np.nan
                rows.append(row)
    return rows


_COLS = ["series", "model", "n_train", "origin_year", "target_year", "horizon_year",
         "leverage", "predicted_log10", "actual_log10", "error_log10", "in_80", "in_95"]


def _series_arrays(history: "pd.DataFrame") -> list[tuple[str, np.ndarray, np.ndarray]]:
    """``(name, t [decimal years], log y)`` of each series long enough to backtest, sorted."""
    out = []
    for name, g in history.groupby("series", sort=True):
        if len(g) <= MIN_TRAIN:
            continue
        g = g.sort_values("date")
        out.append((name, decimal_year(g["date"]), np.log(g["tokens_per_day"].to_numpy(float))))
    return out


def _all_points(history: "pd.DataFrame", model_list, damping: float,
                max_origins: int | None = None) -> "pd.DataFrame":
    """Backtest rows with every model's own intervals (the reports; the weights and calibration
    read the medians of :func:`_median_table`)."""
    import pandas as pd

    rows = []
    for name, t, y in _series_arrays(history):
        rows += _points_for(name, t, y, model_list, damping, True, max_origins)
    return pd.DataFrame(rows, columns=_COLS)


def _median_table(series, model_list, dampings, max_origins: int | None) -> list[dict]:
    """Every model's median at every later observation from every origin of every series.

    The closed-form models (``loglinear``, ``local_trend``, ``damped`` at every prior decay rate
    of ``dampings``) in one array call per series (:func:`.models.loglinear_medians` and its
    siblings); the saturating curves by their own least-squares fit at each origin. Each entry
    holds ``name, t, y, ks`` (origins) and ``preds``: model (``("damped", rate)`` for the damped
    model) -> array (origins, n) of natural-log medians, NaN where a model has too few points.
    """
    closed = {"loglinear": M.loglinear_medians, "local_trend": M.local_trend_medians}
    out = []
    for name, t, y in series:
        ks = backtest_origins(len(t), max_origins)
        preds = {b: np.full((len(ks), len(t)), np.nan) for b in BASELINES}
        for i, k in enumerate(ks):
            for b, v in _baselines(t[:k], y[:k], t[k:]).items():
                preds[b][i, k:] = v
        for m in model_list:
            if m in closed:
                preds[m] = closed[m](t, y, ks)
            elif m == "damped":
                for c, med in zip(dampings, M.damped_medians(t, y, ks, dampings)):
                    preds[("damped", c)] = med
            else:
                preds[m] = np.full((len(ks), len(t)), np.nan)
                for i, k in enumerate(ks):
                    if k >= M.MIN_OBS[m]:
                        preds[m][i, k:] = _fit_quiet(m, t[:k], y[:k], 0.0, False).predict(t[k:])["median"]
        out.append({"name": name, "t": t, "y": y, "ks": ks, "preds": preds})
    return out


def _median_points(table: list[dict], model_list, damping: float) -> "pd.DataFrame":
    """Backtest rows (:data:`_COLS`, no intervals) of the medians in ``table`` (:func:`_median_table`),
    the damped model at prior decay rate ``damping``; rows ordered by series, origin, model, target."""
    import pandas as pd

    cols: dict[str, list] = {c: [] for c in _COLS[:-2]}
    for e in table:
        t, y, name = e["t"], e["y"], e["name"]
        for i, k in enumerate(e["ks"]):
            tq, yq = t[k:], y[k:]
            L = leverage(t[:k], tq)
            for m in list(BASELINES) + list(model_list):
                p = e["preds"][("damped", damping) if m == "damped" else m][i, k:]
                if np.isnan(p).all():
                    continue
                n = len(tq)
                pred10, act10 = p / _LN10, yq / _LN10
                for c, v in (("series", [name] * n), ("model", [m] * n), ("n_train", np.full(n, k)),
                             ("origin_year", np.full(n, float(t[k - 1]))), ("target_year", tq),
                             ("horizon_year", tq - t[k - 1]), ("leverage", L), ("predicted_log10", pred10),
                             ("actual_log10", act10), ("error_log10", pred10 - act10)):
                    cols[c].append(v)
    data = {c: (np.concatenate(v) if v else []) for c, v in cols.items()}
    return pd.DataFrame({**data, "in_80": np.nan, "in_95": np.nan}, columns=_COLS)


def _mae(points: "pd.DataFrame", model: str) -> float:
    e = points.loc[points["model"] == model, "error_log10"]
    return float(np.mean(np.abs(e))) if len(e) else np.nan


def _choose_damping(table: list[dict]) -> float:
    """Prior median decay rate of :data:`.models.DAMPING_GRID` whose damped medians err least."""
    best, best_mae = M.DEFAULT_DAMPING_PER_YEAR, np.inf
    for c in M.DAMPING_GRID:
        mae = _mae(_median_points(table, ("damped",), c), "damped")
        if np.isfinite(mae) and mae < best_mae - 1e-12:
            best, best_mae = c, mae
    return float(best)


def weights_from_points(points: "pd.DataFrame", model_list) -> dict:
    """Model weights: inverse mean squared log10 error, shrunk towards equal.

    ``w_m = (1 - l_m) / M + l_m * v_m / sum(v)`` with ``v_m = 1 / MSE_m`` and ``l_m = n_m / (n_m
    + SHRINK_POINTS)`` (``n_m`` the model's backtest errors), renormalised. A model with no
    errors yet gets the equal share.

    Returns
    -------
    dict
        Model -> weight, summing to 1.
    """
    model_list = list(model_list)
    k = len(model_list)
    inv, n = {}, {}
    for m in model_list:
        e = points.loc[points["model"] == m, "error_log10"].to_numpy(float)
        n[m] = len(e)
        inv[m] = 1.0 / max(float(np.mean(e**2)), 1e-6) if len(e) else 0.0
    total = sum(inv.values())
    w = {}
    for m in model_list:
        lam = n[m] / (n[m] + SHRINK_POINTS)
        w[m] = (1 - lam) / k + (lam * inv[m] / total if total > 0 else lam / k)
    s = sum(w.values())
    return {m: v / s for m, v in w.items()}


def combine_medians(preds: dict, weights: dict) -> tuple[np.ndarray, np.ndarray]:
    """Weighted mean and weighted standard deviation of the models' medians.

    Parameters
    ----------
    preds : dict
        Model -> array of medians (any log scale).
    weights : dict
        Model -> weight; renormalised over the models present.

    Returns
    -------
    (numpy.ndarray, numpy.ndarray)
        Ensemble median and spread, in the units of ``preds``.
    """
    names = list(preds)
    w = np.array([weights.get(m, 0.0) for m in names], dtype=float)
    if w.sum() <= 0:
        w = np.ones(len(names))
    w = w / w.sum()
    P = np.array([np.asarray(preds[m], dtype=float) for m in names])
    mean = np.sum(w[:, None] * P, axis=0)
    spread = np.sqrt(np.sum(w[:, None] * (P - mean) ** 2, axis=0))
    return mean, spread


def _ensemble_rows(points: "pd.DataFrame", weights: dict, model_list) -> "pd.DataFrame":
    """One ``ensemble`` row per (series, n_train, target): weighted mean and spread.

    :func:`combine_medians` over each point's models, for all points at once: the weights are
    renormalised over the models present and the sums taken in row order (``numpy.bincount``),
    so every row equals that of a call per point."""
    import pandas as pd

    sub = points[points["model"].isin(model_list)]
    if sub.empty:
        return pd.DataFrame(columns=_COLS + ["spread_log10"])
    keys = ["series", "n_train", "origin_year", "target_year", "horizon_year", "leverage",
            "actual_log10"]
    code = sub.groupby(keys, sort=True).ngroup().to_numpy()
    n = int(code.max()) + 1
    w = sub["model"].map(lambda m: float(weights.get(m, 0.0))).to_numpy(float)
    total = np.bincount(code, w, minlength=n)
    if np.any(total <= 0):  # a point whose models all weigh nothing: equal weights there
        w = np.where(total[code] <= 0, 1.0, w)
        total = np.bincount(code, w, minlength=n)
    w = w / total[code]
    p = sub["predicted_log10"].to_numpy(float)
    mean = np.bincount(code, w * p, minlength=n)
    spread = np.sqrt(np.bincount(code, w * (p - mean[code]) ** 2, minlength=n))
    first = np.zeros(n, dtype=int)
    first[code[::-1]] = np.arange(len(code))[::-1]
    out = sub.iloc[first][keys].reset_index(drop=True)
    out["model"] = "ensemble"
    out["predicted_log10"] = mean
    out["spread_log10"] = spread
    out["error_log10"] = out["predicted_log10"] - out["actual_log10"]
    return out


def _calibrate(ens: "pd.DataFrame", source: str = "pooled") -> Calibration:
    return fit_calibration(ens["error_log10"], ens["horizon_year"], ens["spread_log10"],
                           n_series=int(ens["series"].nunique()), source=source, groups=ens["series"],
                           leverage=ens["leverage"])


def _loso(points: "pd.DataFrame", model_list, fallback: Calibration | None) -> "pd.DataFrame":
    """Ensemble rows scored with weights and calibration fitted without their own series."""
    import pandas as pd

    frames = []
    drift = points[points["model"] == "drift"]
    for s in sorted(points["series"].unique()):
        others = points[points["series"] != s]
        w = weights_from_points(others, model_list)
        ens_all = apply_record(_ensemble_rows(points, w, model_list), drift)
        train, test = ens_all[ens_all["series"] != s], ens_all[ens_all["series"] == s].copy()
        if test.empty:
            continue
        if len(train) >= MIN_CALIBRATION_POINTS:
            cal = _calibrate(train)
        elif fallback is not None:
            cal = fallback
        else:
            continue
        frames.append(_score(test, cal))
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()


def _score(ens: "pd.DataFrame", cal: Calibration) -> "pd.DataFrame":
    """Ensemble rows with ``in_80``, ``in_95`` and ``width_95_log10`` under calibration ``cal``."""
    out = ens.copy()
    for lev in M.LEVELS:
        k = int(round(lev * 100))
        half = cal.half_width_log10(lev, out["horizon_year"], out["spread_log10"], out["leverage"])
        out[f"in_{k}"] = np.abs(out["error_log10"].to_numpy(float)) <= half
        if k == 95:
            out["width_95_log10"] = 2 * half
    return out


def holdout_series(history: "pd.DataFrame") -> set:
    """Series held out from tuning: those with ``holdout = 1`` on any row.

    A history without a ``holdout`` column (``--history FILE``) holds nothing out; rows added
    with ``--add-history`` to a held-out series stay held out.
    """
    import pandas as pd

    if "holdout" not in history.columns:
        return set()
    flag = pd.to_numeric(history["holdout"], errors="coerce").fillna(0).to_numpy(float) == 1
    return set(history.loc[flag, "series"])


def _by_sample(points: "pd.DataFrame", sample: str, table) -> "pd.DataFrame":
    """``table(points of one sample)`` for each sample asked for, with a leading ``sample`` column."""
    import pandas as pd

    from .._validate import one_of

    one_of(sample, "sample", ("all",) + SAMPLES)
    frames = []
    for s in SAMPLES if sample == "all" else (sample,):
        sub = points[points["sample"] == s]
        t = table(sub) if not sub.empty else pd.DataFrame()
        if not t.empty:
            frames.append(t.assign(sample=s)[["sample", *t.columns]])
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()


def _summary(points: "pd.DataFrame", weights: dict) -> "pd.DataFrame":
    import pandas as pd

    rows = []
    present = set(points["model"])
    order = list(BASELINES) + [m for m in M.MODELS if m in present] + (
        ["ensemble"] if "ensemble" in present else [])
    key_cols = ["series", "n_train", "target_year"]
    for m in order:
        sub = points[points["model"] == m]
        if sub.empty:
            continue
        keys = set(map(tuple, sub[key_cols].to_numpy()))
        mask = [tuple(r) in keys for r in points[key_cols].to_numpy()]
        same = points[mask]
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
            "weight": float(weights.get(m, 0.0)) if m != "ensemble" else np.nan,
        })
    return pd.DataFrame(rows)


def _bin_label(lo: float, hi: float) -> str:
    return f"> {lo:g} y" if math.isinf(hi) else f"{lo:g}-{hi:g} y"


def coverage_stats(in_80, in_95, width_95_log10, error_log10, naive_error_log10, series,
                   drift_error_log10=None) -> dict:
    """Coverage, width and error of scored intervals beside the random walk in logs (and drift).

    Parameters
    ----------
    in_80, in_95 : array-like of bool
        Whether each later observation fell inside the 80 % / 95 % interval.
    width_95_log10, error_log10, naive_error_log10 : array-like
        95 % width [decades], forecast error and the random walk's error on the same points
        [log10(predicted / actual)] (NaN where the random walk has no value).
    series : array-like
        Series of each point.
    drift_error_log10 : array-like, optional
        The drift benchmark's error on the same points (constant growth of the last year,
        :func:`drift_slope`) [log10(predicted / actual)].

    Returns
    -------
    dict
        ``n_points, n_series, coverage_80, coverage_95, median_width_95_log10, mae_log10,
        mae_naive_log10, mae_vs_naive``; with ``drift_error_log10`` also ``mae_drift_log10`` and
        ``mae_vs_drift`` (below 1: the forecast beats drift).
    """
    import pandas as pd

    en = np.asarray(naive_error_log10, float)
    en = en[np.isfinite(en)]
    mae = float(np.mean(np.abs(np.asarray(error_log10, float))))
    mae_n = float(np.mean(np.abs(en))) if len(en) else np.nan
    out = {
        "n_points": int(len(np.asarray(in_80))),
        "n_series": int(pd.Series(series).nunique()),
        "coverage_80": float(pd.to_numeric(pd.Series(in_80)).mean()),
        "coverage_95": float(pd.to_numeric(pd.Series(in_95)).mean()),
        "median_width_95_log10": float(np.median(np.asarray(width_95_log10, float))),
        "mae_log10": mae,
        "mae_naive_log10": mae_n,
        "mae_vs_naive": mae / mae_n if mae_n > 0 else np.nan,
    }
    if drift_error_log10 is not None:
        ed = np.asarray(drift_error_log10, float)
        ed = ed[np.isfinite(ed)]
        mae_d = float(np.mean(np.abs(ed))) if len(ed) else np.nan
        out.update(mae_drift_log10=mae_d, mae_vs_drift=mae / mae_d if mae_d > 0 else np.nan)
    return out


def _coverage_row(sub: "pd.DataFrame", naive: "pd.DataFrame", drift: "pd.DataFrame | None" = None) -> dict:
    """Coverage, width and error of the calibrated ensemble rows ``sub`` beside the random walk
    (and the drift benchmark)."""
    keys = list(zip(sub["series"], sub["n_train"], sub["target_year"]))
    en = naive.loc[naive.index.intersection(keys), "error_log10"].to_numpy(float)
    ed = None if drift is None else drift.loc[drift.index.intersection(keys), "error_log10"].to_numpy(float)
    return coverage_stats(sub["in_80"], sub["in_95"], sub["width_95_log10"], sub["error_log10"], en,
                          sub["series"], drift_error_log10=ed)


_POINT_KEY = ["series", "n_train", "target_year"]


def _scored(points: "pd.DataFrame") -> tuple["pd.DataFrame", "pd.DataFrame", "pd.DataFrame"]:
    """The calibrated ensemble rows, and the random walk's and drift's rows indexed by point."""
    ens = points[(points["model"] == "ensemble") & points["in_95"].notna()]
    naive = points[points["model"] == "naive"].set_index(_POINT_KEY)
    drift = points[points["model"] == "drift"].set_index(_POINT_KEY)
    return ens, naive, drift


def _scored_points(points: "pd.DataFrame") -> "pd.DataFrame":
    """One row per scored point of one sample: the forecast's, drift's and the random walk's
    errors and whether the calibrated intervals held the observation."""
    import pandas as pd

    ens, naive, drift = _scored(points)
    if ens.empty:
        return pd.DataFrame()
    idx = pd.MultiIndex.from_frame(ens[_POINT_KEY])
    return pd.DataFrame({
        "series": ens["series"].to_numpy(), "origin_year": ens["origin_year"].to_numpy(float),
        "target_year": ens["target_year"].to_numpy(float), "horizon_year": ens["horizon_year"].to_numpy(float),
        "model_err_dec": ens["error_log10"].to_numpy(float),
        "drift_err_dec": drift["error_log10"].reindex(idx).to_numpy(float),
        "rw_err_dec": naive["error_log10"].reindex(idx).to_numpy(float),
        "in_80": ens["in_80"].astype(bool).to_numpy(), "in_95": ens["in_95"].astype(bool).to_numpy(),
        "width_95_dec": ens["width_95_log10"].to_numpy(float),
        "point": ens["point"].fillna("trend").to_numpy() if "point" in ens.columns else "trend",
    })


def _horizon_rows(scored: "pd.DataFrame", row) -> list[dict]:
    """``row(points)`` for each horizon bin of :data:`HORIZON_BINS_YEAR` and for all horizons."""
    rows = []
    bins = list(zip(HORIZON_BINS_YEAR[:-1], HORIZON_BINS_YEAR[1:])) + [(0.0, math.inf)]
    for i, (lo, hi) in enumerate(bins):
        last = i == len(bins) - 1
        h = scored["horizon_year"]
        sub = scored if last else scored[(h > lo) & (h <= hi) | ((lo == 0) & (h == 0))]
        if not sub.empty:
            rows.append({"horizon": "all" if last else _bin_label(lo, hi), **row(sub)})
    return rows


def _coverage_table(points: "pd.DataFrame") -> "pd.DataFrame":
    import pandas as pd

    ens, naive, drift = _scored(points)
    return pd.DataFrame(_horizon_rows(ens, lambda sub: _coverage_row(sub, naive, drift)))


def replay_coverage(scores: "pd.DataFrame", history: "pd.DataFrame | None" = None) -> "pd.DataFrame":
    """Coverage by sample and horizon of :func:`~tokenomics.forecast.realtime_backtest` scores.

    The same table as :meth:`BacktestResult.coverage_by_horizon`, for the forecasts the product
    would have printed at each past month-end: ``holdout`` rows are the series marked
    ``holdout = 1`` in ``history`` (default the bundled dataset), ``tuning`` the others; a last
    ``all`` sample pools both.

    Returns
    -------
    pandas.DataFrame
        Columns ``sample, horizon`` and those of :func:`coverage_stats`.
    """
    import pandas as pd

    from .history import load_history

    if scores.empty:
        return pd.DataFrame()
    held = holdout_series(load_history() if history is None else history)
    d = scores.assign(sample=np.where(scores["series"].isin(held), "holdout", "tuning"))

    def row(sub):
        return coverage_stats(sub["in_80"], sub["in_95"], sub["width_95_log10"], sub["error_log10"],
                              sub["naive_error_log10"], sub["series"],
                              drift_error_log10=sub["drift_error_log10"] if "drift_error_log10" in sub else None)

    frames = [pd.DataFrame(_horizon_rows(d[d["sample"] == s], row)).assign(sample=s)
              for s in SAMPLES if (d["sample"] == s).any()]
    frames.append(pd.DataFrame(_horizon_rows(d, row)).assign(sample="all"))
    out = pd.concat(frames, ignore_index=True)
    return out[["sample", *[c for c in out.columns if c != "sample"]]]


def _series_table(points: "pd.DataFrame") -> "pd.DataFrame":
    import pandas as pd

    ens, naive, drift = _scored(points)
    rows = [{"series": name, **_coverage_row(sub, naive, drift)} for name, sub in ens.groupby("series", sort=True)]
    if not rows:
        return pd.DataFrame()
    t = pd.DataFrame(rows)
    vote = {c: float(t[c].mean()) for c in ("coverage_80", "coverage_95", "median_width_95_log10",
                                               "mae_log10", "mae_naive_log10", "mae_vs_naive",
                                               "mae_drift_log10", "mae_vs_drift")}
    vote.update(series="each series one vote", n_points=int(t["n_points"].sum()), n_series=int(len(t)))
    return pd.concat([t, pd.DataFrame([vote])], ignore_index=True)[t.columns]


def run_backtest(history: "pd.DataFrame | None" = None, fit_through=None,
                 model_list: tuple[str, ...] = M.MODELS) -> BacktestResult:
    """Rolling-origin backtest, weights and interval calibration over every series.

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
    return _run(load_history(), fit_through, model_list, bundled=True)


def _run(history: "pd.DataFrame", fit_through, model_list, bundled: bool = False) -> BacktestResult:
    import pandas as pd

    if fit_through is not None:
        history = history[history["date"] <= month_end(fit_through)]
    # scored as published: a definition change a later figure brings is an error a forecaster meets
    # (the forecast from the last origin fits each series on its latest definition: demand.forecast)
    held = history["series"].isin(holdout_series(history))
    history, holdout = history[~held], history[held]
    # weights and calibration read only the errors of the models' medians (no intervals needed):
    # every model's medians at every capped origin once, the damped one at each prior decay rate
    series = _series_arrays(history)
    per_series = origins_per_series(len(series))
    table = _median_table(series, model_list, M.DAMPING_GRID if "damped" in model_list else (), per_series)
    damping = _choose_damping(table) if "damped" in model_list else M.DEFAULT_DAMPING_PER_YEAR
    errors = _median_points(table, model_list, damping)
    weights = weights_from_points(errors, model_list)
    ens = apply_record(_ensemble_rows(errors, weights, model_list), errors[errors["model"] == "drift"])
    records = _records(history, holdout, errors, weights, model_list, damping)
    fallback = None
    if len(ens) >= MIN_CALIBRATION_POINTS:
        cal = _calibrate(ens)
    else:
        fallback = DEFAULT_CALIBRATION if bundled else _bundled_calibration(fit_through)
        cal = fallback

    def report_points() -> "pd.DataFrame":
        points = _all_points(history, model_list, damping, max_origins=per_series)
        loso = _loso(points, model_list, fallback if fallback is not None else cal)
        held_points = _all_points(holdout, model_list, damping)
        held_ens = apply_record(_ensemble_rows(held_points, weights, model_list),
                                held_points[held_points["model"] == "drift"])
        frames = [points.assign(sample="tuning"), loso.assign(sample="tuning"),
                  held_points.assign(sample="holdout"),
                  (_score(held_ens, cal) if not held_ens.empty else held_ens).assign(sample="holdout")]
        frames = [f for f in frames if not f.empty]
        return pd.concat(frames, ignore_index=True) if frames else points.assign(sample=pd.Series(dtype=str))

    used = sum(len(e["ks"]) for e in table)
    available = sum(len(backtest_origins(len(e["t"]), None)) for e in table)
    origins = {"max_per_series": per_series, "used": used, "available": available,
               "series": len(table), "spacing": "evenly spaced, first and last kept"}
    return BacktestResult(damping, weights, cal, report_points, origins, records)


def _records(tuning: "pd.DataFrame", holdout: "pd.DataFrame", errors: "pd.DataFrame", weights: dict,
             model_list, damping: float) -> "pd.DataFrame":
    """Each series' own record (:func:`.record.point_records`) on the figures the forecast fits:
    every series on its latest definition (:func:`.measurement.on_latest_definition`), held-out
    series too (their own points; they enter no weight or calibration). The tuning series'
    backtest ``errors`` are reused where no definition changed."""
    import pandas as pd

    from .measurement import on_latest_definition

    tuning, holdout = on_latest_definition(tuning), on_latest_definition(holdout)
    moved = set()
    if "level_shift_dec" in tuning.columns:
        moved = set(tuning.loc[tuning["level_shift_dec"] != 0, "series"])
    fresh = _series_arrays(pd.concat([tuning[tuning["series"].isin(moved)], holdout], ignore_index=True))
    frames = [errors[~errors["series"].isin(moved)]]
    if fresh:
        frames.append(_median_points(_median_table(fresh, model_list, (damping,), MAX_ORIGINS), model_list, damping))
    e = pd.concat(frames, ignore_index=True)
    return point_records(_ensemble_rows(e, weights, model_list), e[e["model"] == "drift"])


def score_new_points(before: "pd.DataFrame", after: "pd.DataFrame",
                     model_list: tuple[str, ...] = M.MODELS) -> "pd.DataFrame":
    """How the method, frozen on ``before``, does on the observations ``after`` adds.

    The weights, damping and interval calibration come from :func:`run_backtest` on ``before``
    alone; every rolling-origin forecast of ``after`` whose target is an observation not in
    ``before`` is scored with them (origins may include other new points: the method is fixed,
    the target unseen). The clean out-of-sample check for figures published after a change.

    Parameters
    ----------
    before, after : pandas.DataFrame
        Long frames (``series, date, tokens_per_day``; ``holdout`` optional), ``after`` a
        superset of ``before``.

    Returns
    -------
    pandas.DataFrame
        One ensemble row per (series, origin, new target): ``error_log10``, ``horizon_year``,
        ``leverage``, ``in_80``, ``in_95``, ``width_95_log10``, ``naive_error_log10`` and
        ``sample`` (``holdout`` for series held out in ``after``, else ``tuning``).
    """
    import pandas as pd

    from .history import check_history

    b, a = check_history(before), check_history(after)
    bt = run_backtest(b, model_list=tuple(model_list))
    old = set(zip(b["series"], np.round(decimal_year(b["date"]), 6)))
    pts = _all_points(a, tuple(model_list), bt.damping_per_year)
    # the series' own record may read every earlier target, old or new, as a forecaster could have
    ens = apply_record(_ensemble_rows(pts, bt.weights, tuple(model_list)), pts[pts["model"] == "drift"])
    new = [(s, round(t, 6)) not in old for s, t in zip(ens["series"], ens["target_year"])]
    ens = ens[np.asarray(new, dtype=bool)]
    if ens.empty:
        return pd.DataFrame(columns=_COLS + ["spread_log10", "width_95_log10", "naive_error_log10", "sample"])
    out = _score(ens, bt.calibration)
    naive = pts[pts["model"] == "naive"].set_index(["series", "n_train", "target_year"])["error_log10"]
    out["naive_error_log10"] = naive.reindex(pd.MultiIndex.from_frame(
        out[["series", "n_train", "target_year"]])).to_numpy()
    held = holdout_series(after)
    out["sample"] = np.where(out["series"].isin(held), "holdout", "tuning")
    return out


def _bundled_calibration(fit_through) -> Calibration:
    """Calibration of the bundled dataset (the fallback for histories with too few errors)."""
    bt = _backtest_default(None if fit_through is None else str(fit_through), M.MODELS)
    c = bt.calibration
    if c.source != "pooled":
        return c
    return dataclasses.replace(c, source="bundled")
