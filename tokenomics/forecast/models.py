"""Trend models for token demand on the log scale.

Every model is fitted to ``log(tokens_per_day)`` against time in decimal years and returns a
:class:`Fitted` object whose :meth:`Fitted.predict` gives the median and the 80 % and 95 %
prediction intervals (on the log scale) at any future times. Models:

``loglinear``
    Ordinary least squares, ``log y = a + b t`` (statsmodels ``OLS``; intervals from
    ``get_prediction(...).summary_frame`` ``obs_ci_*``, Student-t with n - 2 degrees of freedom).
``local_trend``
    State-space random walk with drift on a monthly grid, months without an observation left
    missing (statsmodels ``UnobservedComponents(level="random walk with drift")``; Kalman-filter
    intervals). It copes with irregular, sparse dates without interpolation.
``damped``
    Gompertz ``log y = A - B exp(-c (t - t_last))``: for a given decay rate ``c`` it is linear in
    ``A, B`` (OLS, Student-t prediction intervals). ``c`` is uncertain: the fit averages over a
    log-normal prior around the rate chosen by the rolling-origin backtest (from
    :data:`DAMPING_GRID`), weighted by each rate's marginal likelihood. The log growth rate
    ``B c exp(-c h)`` decays by ``exp(-c)`` per year: a damped trend that needs three points.
``gompertz``
    Saturating growth ``log y = A - B exp(-c (t - t0))``: the log growth rate decays
    exponentially, i.e. a damped trend on the log scale (``scipy.optimize.curve_fit`` with
    bounds; residual-bootstrap intervals).
``logistic``
    ``log y = A - log(1 + exp(-r (t - t_mid)))`` (``curve_fit`` with bounds; bootstrap).

Jump-off: the fitted curves (all but ``local_trend``, whose Kalman filter already starts at the
last observed month) are shifted so their median passes through the last observation, median
and bounds alike (:func:`fit`; ``params["jump_off_log"]`` holds the shift). A smooth curve fitted
through every point otherwise starts its forecast at its own fitted value, which for a series
whose growth is still speeding up lies below the latest point: fitted through 2026-09-10, the
OpenRouter forecast for the next week sat 0.18 decades under the week just measured. On the
tuning series' rolling origins the jump-off lifts 80 % coverage from 67 % to 88 % at the same
point error (0.22 decades); it has no parameter.

Fits are deterministic (fixed bootstrap seed). statsmodels and scipy warnings are silenced
inside the fits; a fit that does not converge raises one
:class:`tokenomics.errors.ConvergenceWarning` instead.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from dataclasses import dataclass, field, replace

import numpy as np

from ..errors import ConvergenceWarning, ValidationError

#: Model names, in display order.
MODELS: tuple[str, ...] = ("loglinear", "local_trend", "damped", "gompertz", "logistic")

#: Fewest observations each model needs (more than its number of parameters).
MIN_OBS: dict[str, int] = {"loglinear": 3, "local_trend": 3, "damped": 3, "gompertz": 4, "logistic": 4}

#: Decay rates [1/year] of the damped model's log growth rate that the backtest chooses from.
DAMPING_GRID: tuple[float, ...] = (0.25, 0.5, 0.75, 1.0, 1.5, 2.0)

#: Default decay rate [1/year] of the damped model when no backtest has chosen one.
DEFAULT_DAMPING_PER_YEAR = 1.0

#: Prior standard deviation of log(decay rate) of the damped model (0.5: a factor 1.65 either
#: way at one sd). ASSUMPTION: the data (3-8 points) cannot pin the decay rate down.
DAMPING_SD_LOG = 0.5

#: Half the number of decay rates the damped model averages over (grid of 2 n + 1 over +-2 sd).
N_DAMPING_GRID_HALF = 4

#: Two-sided interval levels reported everywhere.
LEVELS: tuple[float, ...] = (0.8, 0.95)

#: Bootstrap replicates for the saturating models (the 2.5 % and 97.5 % quantiles of 400
#: draws move by a few hundredths of a decade between seeds).
N_BOOT = 400

#: Saturation ceiling allowed above the largest observation, as a factor (bounds of curve_fit).
MAX_CEILING_FACTOR = 1e4


@dataclass(frozen=True)
class Fitted:
    """A model fitted to one series (log scale).

    Attributes
    ----------
    model : str
        Model name (one of :data:`MODELS`).
    n_obs : int
        Observations used.
    t_last_year : float
        Time of the last observation [decimal year].
    params : dict
        Fitted parameters (model-specific; rates per year).
    converged : bool
        Whether the optimiser reported success.
    """

    model: str
    n_obs: int
    t_last_year: float
    params: dict
    converged: bool
    _predict: Callable = field(repr=False, compare=False)

    def predict(self, t_year) -> dict[str, np.ndarray]:
        """Median and interval bounds of ``log(tokens_per_day)`` at times ``t_year``.

        Parameters
        ----------
        t_year : array-like
            Times [decimal year].

        Returns
        -------
        dict of numpy.ndarray
            Keys ``median``, ``lo_80``, ``hi_80``, ``lo_95``, ``hi_95`` (natural log of
            tokens/day).
        """
        return self._predict(np.atleast_1d(np.asarray(t_year, dtype=float)))


def _z(level: float) -> float:
    from scipy.stats import norm

    return float(norm.ppf(0.5 + level / 2))


def _check_xy(t_year, log_y, model: str) -> tuple[np.ndarray, np.ndarray]:
    t = np.asarray(t_year, dtype=float)
    y = np.asarray(log_y, dtype=float)
    if t.shape != y.shape or t.ndim != 1:
        raise ValidationError(f"t_year and log_y must be 1-D of equal length, got {t.shape} and {y.shape}")
    if not (np.all(np.isfinite(t)) and np.all(np.isfinite(y))):
        raise ValidationError("t_year and log_y must be finite (volumes must be positive)")
    need = MIN_OBS[model]
    if len(t) < need:
        raise ValidationError(f"model {model!r} needs at least {need} observations, got {len(t)}")
    order = np.argsort(t, kind="stable")
    return t[order], y[order]


# ----------------------------------------------------------------------------- log-linear OLS
def _ols_predictor(res, design):
    """Prediction function of a fitted OLS: median and observation intervals at LEVELS."""

    def predict(tq: np.ndarray) -> dict[str, np.ndarray]:
        pred = res.get_prediction(design(tq))
        out = {"median": np.asarray(pred.predicted_mean, dtype=float)}
        for lev in LEVELS:
            sf = pred.summary_frame(alpha=1 - lev)
            k = int(round(lev * 100))
            out[f"lo_{k}"] = sf["obs_ci_lower"].to_numpy(float)
            out[f"hi_{k}"] = sf["obs_ci_upper"].to_numpy(float)
        return out

    return predict


def fit_loglinear(t_year, log_y) -> Fitted:
    """OLS ``log y = a + b (t - t_last)`` with Student-t prediction intervals.

    Parameters
    ----------
    t_year : array-like
        Observation times [decimal year].
    log_y : array-like
        ``log(tokens_per_day)``.

    Returns
    -------
    Fitted
        ``params``: ``intercept`` (log tokens/day at the last observation),
        ``growth_per_year`` (natural-log slope [1/year]).
    """
    from statsmodels.regression.linear_model import OLS

    t, y = _check_xy(t_year, log_y, "loglinear")
    t0 = t[-1]

    def design(tq):
        return np.column_stack([np.ones_like(tq), tq - t0])

    res = OLS(y, design(t)).fit()

    predict = _ols_predictor(res, design)

    params = {"intercept": float(res.params[0]), "growth_per_year": float(res.params[1]),
              "sigma": float(np.sqrt(res.scale))}
    return Fitted("loglinear", len(t), float(t0), params, True, predict)


# --------------------------------------------- damped log trend (Gompertz, uncertain decay)
def _mixture_quantiles(loc: np.ndarray, scale: np.ndarray, df: float, w: np.ndarray,
                       probs) -> list[np.ndarray]:
    """Quantiles of a weighted mixture of Student-t components, by vectorised bisection.

    ``loc`` and ``scale`` have shape (n_components, n_points); ``w`` (n_components,) sums to 1.
    Every probability and point bisects at once (arrays of shape (n_probs, n_components,
    n_points)), 56 halvings of a bracket 2,000 scales wide: the quantile to 3e-14 scales.
    """
    from scipy.special import stdtr

    keep = w > 1e-12
    loc, scale, w = loc[keep], scale[keep], w[keep] / w[keep].sum()
    p = np.asarray(list(probs), dtype=float)[:, None]
    lo = np.broadcast_to(np.min(loc - 1e3 * scale, axis=0), (len(p), loc.shape[1])).copy()
    hi = np.broadcast_to(np.max(loc + 1e3 * scale, axis=0), lo.shape).copy()
    wk = w[None, :, None]
    for _ in range(MIXTURE_BISECTIONS):
        mid = 0.5 * (lo + hi)
        cdf = np.sum(wk * stdtr(df, (mid[:, None, :] - loc[None]) / scale[None]), axis=1)
        below = cdf < p
        lo = np.where(below, mid, lo)
        hi = np.where(below, hi, mid)
    return list(0.5 * (lo + hi))


#: Halvings of :func:`_mixture_quantiles`' bracket (2,000 component scales wide): 2e3 / 2**56 =
#: 3e-14 scales, far below any figure's tolerance.
MIXTURE_BISECTIONS = 56


def fit_damped(t_year, log_y, damping_per_year: float = DEFAULT_DAMPING_PER_YEAR,
               damping_sd_log: float = DAMPING_SD_LOG) -> Fitted:
    """Damped log trend ``log y = A - B exp(-c (t - t_last))`` averaged over uncertain ``c``.

    For each decay rate ``c`` on a log-spaced grid around ``damping_per_year`` the model is
    linear in ``A, B`` and fitted by OLS (statsmodels; Student-t prediction intervals from
    ``get_prediction``). The fits are weighted by a log-normal prior on ``c`` (median
    ``damping_per_year``, log-sd ``damping_sd_log``) times the marginal likelihood of ``c``
    under flat priors on ``A, B`` and ``1/sigma`` (``|X'X|^-1/2 RSS^-(n-2)/2``). The median and
    intervals are quantiles of that mixture, so uncertainty in the decay rate widens them.

    Parameters
    ----------
    t_year, log_y : array-like
        Times [decimal year] and ``log(tokens_per_day)``.
    damping_per_year : float
        Prior median of ``c`` [1/year]: the log growth rate shrinks by ``exp(-c)`` each year.
    damping_sd_log : float
        Prior standard deviation of ``log c``; 0 fixes ``c``.

    Returns
    -------
    Fitted
        ``params``: ``ceiling_log`` (A) and ``growth_per_year`` (B c) at ``c = damping_per_year``,
        ``damping_per_year``, ``damping_mean_per_year`` (posterior mean of ``c``).
    """
    from statsmodels.regression.linear_model import OLS

    from .._validate import non_negative, positive

    positive(damping_per_year, "damping_per_year")
    non_negative(damping_sd_log, "damping_sd_log")
    t, y = _check_xy(t_year, log_y, "damped")
    t0 = t[-1]
    c0 = float(damping_per_year)
    z = np.linspace(-2.0, 2.0, 2 * N_DAMPING_GRID_HALF + 1) if damping_sd_log > 0 else np.zeros(1)
    grid = c0 * np.exp(z * damping_sd_log)
    log_prior = -0.5 * z**2

    def design_for(c):
        return lambda tq: np.column_stack([np.ones_like(tq), -np.exp(-c * (tq - t0))])

    fits, log_like = [], []
    n, p = len(t), 2
    for c in grid:
        design = design_for(c)
        res = OLS(y, design(t)).fit()
        rss = max(float(res.ssr), 1e-300)
        _, logdet = np.linalg.slogdet(design(t).T @ design(t))
        fits.append((res, design))
        log_like.append(-0.5 * logdet - 0.5 * (n - p) * np.log(rss))
    lw = log_prior + np.array(log_like)
    w = np.exp(lw - lw.max())
    w = w / w.sum()
    df_resid = max(n - p, 1)

    def predict(tq: np.ndarray) -> dict[str, np.ndarray]:
        locs, scales = [], []
        for res, design in fits:
            pred = res.get_prediction(design(tq))  # se_obs: the Student-t scale of a new point
            locs.append(np.asarray(pred.predicted_mean, dtype=float))
            scales.append(np.maximum(np.asarray(pred.se_obs, dtype=float), 1e-12))
        loc, scale = np.array(locs), np.array(scales)
        probs = [0.5] + [q for lev in LEVELS for q in (0.5 - lev / 2, 0.5 + lev / 2)]
        qs = _mixture_quantiles(loc, scale, df_resid, w, probs)
        out = {"median": qs[0]}
        for i, lev in enumerate(LEVELS):
            k = int(round(lev * 100))
            out[f"lo_{k}"], out[f"hi_{k}"] = qs[1 + 2 * i], qs[2 + 2 * i]
        return out

    centre = fits[len(grid) // 2][0]
    A, B = map(float, centre.params)
    params = {"ceiling_log": A, "growth_per_year": B * c0, "damping_per_year": c0,
              "damping_mean_per_year": float(np.sum(w * grid)),
              "sigma": float(np.sqrt(centre.scale))}
    return Fitted("damped", len(t), float(t0), params, True, predict)


# ------------------------------------------------------------- state space on a monthly grid
def _month_index(t_year: np.ndarray) -> np.ndarray:
    """Decimal years -> integer month counts (year * 12 + month - 1)."""
    year = np.floor(t_year)
    month = np.clip(np.floor((t_year - year) * 12), 0, 11)
    return (year * 12 + month).astype(int)


#: Largest |gradient| of statsmodels' per-observation log-likelihood at which an optimiser stop
#: counts as converged although L-BFGS reports an abnormal line-search termination (``warnflag``
#: 2): the stop is then at a stationary point, where BFGS and Powell land on the same parameter
#: (OpenAI's three points: sigma2 0.011540 vs 0.011541, gradient 1.9e-5).
MLE_GRADIENT_TOL = 1e-4


def _mle_converged(retvals: dict | None, caught) -> bool:
    """Whether a statsmodels MLE fit converged: its own flag, or a stop at a stationary point
    (:data:`MLE_GRADIENT_TOL`) when the line search gave up there."""
    if not retvals:
        return True
    g = retvals.get("gopt")
    if g is not None and np.all(np.isfinite(g)) and np.max(np.abs(g)) < MLE_GRADIENT_TOL:
        return True
    return bool(retvals.get("converged", True)) and not any(
        "converge" in str(w.message).lower() for w in caught)


def fit_local_trend(t_year, log_y) -> Fitted:
    """Random walk with drift on a monthly grid with missing months (Kalman filter).

    Observations in the same month are averaged (on the log scale). Medians and intervals come
    from statsmodels' ``get_forecast`` (nothing is re-derived by hand); a target in the last
    observed month is given the one-step-ahead forecast.

    Returns
    -------
    Fitted
        ``params``: ``sigma2_level`` (per month), ``growth_per_year`` (drift x 12).
    """
    from statsmodels.tsa.statespace.structural import UnobservedComponents

    t, y = _check_xy(t_year, log_y, "local_trend")
    m = _month_index(t)
    m0 = m[0]
    n_months = m[-1] - m0 + 1
    grid = np.full(n_months, np.nan)
    for k in np.unique(m):
        grid[k - m0] = y[m == k].mean()
    mod = UnobservedComponents(grid, level="random walk with drift")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        res = mod.fit(disp=False)
    converged = _mle_converged(res.mle_retvals, caught)
    sigma2 = float(res.params[0])
    drift = float(res.smoothed_state[1, -1]) if res.smoothed_state.shape[0] > 1 else 0.0

    def predict(tq: np.ndarray) -> dict[str, np.ndarray]:
        # months after the last observed month; a target inside that month is read as the
        # one-step-ahead forecast (never a zero-width interval)
        h = np.maximum(_month_index(tq) - m[-1], 1).astype(int)
        fc = res.get_forecast(steps=int(h.max()))
        mean = np.asarray(fc.predicted_mean, dtype=float)[h - 1]
        out = {"median": mean}
        for lev in LEVELS:
            k = int(round(lev * 100))
            ci = np.asarray(fc.conf_int(alpha=1 - lev), dtype=float)[h - 1]
            out[f"lo_{k}"] = ci[:, 0]
            out[f"hi_{k}"] = ci[:, 1]
        return out

    params = {"sigma2_level": sigma2, "growth_per_year": 12 * drift}
    return Fitted("local_trend", len(t), float(t[-1]), params, converged, predict)


# ------------------------------------------------------------------- saturating curves (scipy)
def _gompertz(t, A, B, c, t0):
    return A - B * np.exp(-c * (t - t0))


def _logistic(t, A, r, tm):
    return A - np.logaddexp(0.0, -r * (t - tm))


def _gompertz_jac(t, A, B, c, t0):
    e = np.exp(-c * (t - t0))
    return np.column_stack([np.ones_like(t), -e, B * (t - t0) * e])


def _logistic_jac(t, A, r, tm):
    s = np.exp(-np.logaddexp(0.0, r * (t - tm)))  # = exp(-x) / (1 + exp(-x)), x = r (t - tm)
    return np.column_stack([np.ones_like(t), s * (t - tm), -s * r])


def _curve_setup(model: str, t: np.ndarray, y: np.ndarray):
    t0 = t[0]
    ymax = y.max()
    span = max(t[-1] - t[0], 0.25)
    top = ymax + np.log(MAX_CEILING_FACTOR)
    if model == "gompertz":
        f = lambda tt, A, B, c: _gompertz(tt, A, B, c, t0)  # noqa: E731
        jac = lambda tt, A, B, c: _gompertz_jac(tt, A, B, c, t0)  # noqa: E731
        p0 = [ymax + 2.0, ymax + 2.0 - y[0], 1.0]
        lo = [ymax, 1e-6, 0.05]
        hi = [top, 100.0, 10.0]
    else:
        f, jac = _logistic, _logistic_jac
        p0 = [ymax + 2.0, 2.0, t[-1]]
        lo = [ymax, 0.05, t0 - 5 * span]
        hi = [top, 20.0, t[-1] + 10.0]
    p0 = np.clip(p0, np.array(lo) + 1e-9, np.array(hi) - 1e-9)
    return f, jac, p0, (lo, hi)


def _curve_fit(f, jac, t, y, p0, bounds):
    from scipy.optimize import curve_fit

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        popt, _ = curve_fit(f, t, y, p0=p0, bounds=bounds, jac=jac, max_nfev=2000)
    return popt


def _fit_curve(model: str, t_year, log_y, n_boot: int, seed: int) -> Fitted:
    from .._validate import draws

    draws(n_boot, "n_boot", ci=max(LEVELS), allow_zero=True)  # 0: point fit only (backtest errors)
    t, y = _check_xy(t_year, log_y, model)
    f, jac, p0, bounds = _curve_setup(model, t, y)
    converged = True
    try:
        popt = _curve_fit(f, jac, t, y, p0, bounds)
    except RuntimeError:
        converged = False
        popt = p0
    fitted = f(t, *popt)
    resid = y - fitted
    n, p = len(t), len(popt)
    resid = (resid - resid.mean()) * np.sqrt(n / max(n - p, 1))
    rng = np.random.default_rng(seed)
    boot = []
    for _ in range(n_boot):
        yb = fitted + rng.choice(resid, size=n, replace=True)
        try:
            boot.append(_curve_fit(f, jac, t, yb, popt, bounds))
        except RuntimeError:
            continue
    boot = np.array(boot) if boot else popt[None, :]
    noise_draws = rng.choice(resid, size=(len(boot), 1), replace=True)

    def predict(tq: np.ndarray) -> dict[str, np.ndarray]:
        paths = np.stack([f(tq, *b) for b in boot]) + noise_draws
        out = {"median": f(tq, *popt)}
        for lev in LEVELS:
            k = int(round(lev * 100))
            lo_q, hi_q = np.quantile(paths, [0.5 - lev / 2, 0.5 + lev / 2], axis=0)
            out[f"lo_{k}"] = np.minimum(lo_q, out["median"])
            out[f"hi_{k}"] = np.maximum(hi_q, out["median"])
        return out

    names = ("ceiling_log", "B", "decay_per_year") if model == "gompertz" else (
        "ceiling_log", "rate_per_year", "t_mid_year")
    params = dict(zip(names, map(float, popt)))
    params["ceiling_tokens_per_day"] = float(np.exp(popt[0]))
    params["at_bound"] = bool(np.any(np.isclose(popt, bounds[0], rtol=1e-6, atol=1e-9))
                              or np.any(np.isclose(popt, bounds[1], rtol=1e-6, atol=1e-9)))
    return Fitted(model, n, float(t[-1]), params, converged, predict)


def fit_gompertz(t_year, log_y, n_boot: int = N_BOOT, seed: int = 0) -> Fitted:
    """Gompertz curve on the log scale with residual-bootstrap intervals.

    ``log y = A - B exp(-c (t - t_first))``; ``exp(A)`` is the ceiling [tokens/day], bounded to
    [max observed, :data:`MAX_CEILING_FACTOR` x max observed]; ``c`` in [0.05, 10] per year.
    """
    return _fit_curve("gompertz", t_year, log_y, n_boot, seed)


def fit_logistic(t_year, log_y, n_boot: int = N_BOOT, seed: int = 0) -> Fitted:
    """Logistic curve on the log scale with residual-bootstrap intervals.

    ``log y = A - log(1 + exp(-r (t - t_mid)))``; ceiling bounded as for :func:`fit_gompertz`,
    ``r`` in [0.05, 20] per year.
    """
    return _fit_curve("logistic", t_year, log_y, n_boot, seed)


_FITTERS: dict[str, Callable[..., Fitted]] = {
    "loglinear": fit_loglinear,
    "local_trend": fit_local_trend,
    "damped": fit_damped,
    "gompertz": fit_gompertz,
    "logistic": fit_logistic,
}


def fit(model: str, t_year, log_y, **kwargs) -> Fitted:
    """Fit one model by name; warn once (ConvergenceWarning) if the optimiser did not converge.

    Parameters
    ----------
    model : str
        One of :data:`MODELS`.
    t_year, log_y : array-like
        Times [decimal year] and ``log(tokens_per_day)``.
    **kwargs
        Passed to the model's fitter (``damping_per_year`` for ``damped``).

    Returns
    -------
    Fitted
    """
    from .._validate import one_of

    one_of(model, "model", MODELS)
    fitted = _FITTERS[model](t_year, log_y, **kwargs)
    if model in JUMP_OFF_MODELS:
        fitted = _jump_off(fitted, t_year, log_y)
    if not fitted.converged:
        warn_not_converged(fitted)
    return fitted


def warn_not_converged(fitted: Fitted, series: str | None = None, weight: float | None = None,
                       stacklevel: int = 3) -> None:
    """One :class:`~tokenomics.errors.ConvergenceWarning` for a fit that did not converge, naming
    the series and the model's weight in the ensemble where the caller knows them."""
    where = f"series {series!r}: " if series is not None else ""
    share = f" (weight {weight:.0%} of the ensemble median)" if weight is not None else ""
    warnings.warn(
        f"{where}{fitted.model} fit did not converge on {fitted.n_obs} observations{share}; its "
        "forecast is unreliable. Silence with warnings.filterwarnings('ignore', "
        "category=tokenomics.errors.ConvergenceWarning)",
        ConvergenceWarning,
        stacklevel=stacklevel,
    )


#: Models whose forecast is shifted to start at the last observation (module docstring).
JUMP_OFF_MODELS: tuple[str, ...] = ("loglinear", "damped", "gompertz", "logistic")


def _jump_off(fitted: Fitted, t_year, log_y) -> Fitted:
    """``fitted`` with its median and bounds shifted by the last observation's residual."""
    t = np.asarray(t_year, dtype=float)
    y = np.asarray(log_y, dtype=float)
    last = int(np.argmax(t))
    shift = float(y[last] - fitted.predict(t[last])["median"][0])
    base = fitted._predict

    def predict(tq: np.ndarray) -> dict[str, np.ndarray]:
        return {k: q + shift for k, q in base(tq).items()}

    return replace(fitted, params={**fitted.params, "jump_off_log": shift}, _predict=predict)


def available(n_obs: int) -> tuple[str, ...]:
    """Models that can be fitted to ``n_obs`` observations."""
    return tuple(m for m in MODELS if n_obs >= MIN_OBS[m])


# ------------------------------------------------ backtest medians: every origin in one array call
def _origin_masks(t: np.ndarray, n_train: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Training mask (origins, n) and the index of each origin's last training time.

    The last time is the first observation at ``t[k - 1]`` (:func:`_jump_off` reads the first
    of tied maxima)."""
    idx = np.arange(len(t))
    train = idx[None, :] < n_train[:, None]
    last = np.searchsorted(t, t[n_train - 1], side="left")
    return train, last


def _centred(v: np.ndarray, train: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Mean over each origin's training points and the deviations from it (0 off the window)."""
    n = train.sum(axis=-1, keepdims=True)
    mean = np.where(train, v, 0.0).sum(axis=-1, keepdims=True) / n
    return mean, np.where(train, v - mean, 0.0)


def loglinear_medians(t_year, log_y, n_train) -> np.ndarray:
    """Medians of :func:`fit_loglinear` with the jump-off (:func:`fit`), every origin at once.

    For the first ``k`` observations the OLS line through them, shifted to pass through the last
    one, is ``y_last + b (t - t_last)`` with ``b = Sxy / Sxx`` (centred sums): closed form, one
    array call for all origins instead of one statsmodels fit each.

    Parameters
    ----------
    t_year : array-like
        Observation times, sorted [decimal year].
    log_y : array-like
        ``log(tokens_per_day)``.
    n_train : array-like of int
        Training sizes ``k`` (origins), each at least :data:`MIN_OBS` ``["loglinear"]``.

    Returns
    -------
    numpy.ndarray
        Shape (origins, n): the median of ``log(tokens_per_day)`` at every observation time
        (only the times after each origin are forecasts).
    """
    t, y = np.asarray(t_year, float), np.asarray(log_y, float)
    k = np.asarray(n_train, int)
    train, last = _origin_masks(t, k)
    _, dt = _centred(np.broadcast_to(t, train.shape), train)
    _, dy = _centred(np.broadcast_to(y, train.shape), train)
    b = (dt * dy).sum(axis=1) / (dt * dt).sum(axis=1)
    return y[last][:, None] + b[:, None] * (t[None, :] - t[k - 1][:, None])


def local_trend_medians(t_year, log_y, n_train) -> np.ndarray:
    """Medians of :func:`fit_local_trend`, every origin at once, in closed form.

    The model has no observation noise, so under a diffuse prior the filtered level is the last
    observed month's mean and the drift is the generalised-least-squares slope of the monthly
    differences (variance proportional to the gap): ``(g_last - g_first) / months between``,
    whatever the level variance. The median ``h`` months ahead is ``g_last + h drift`` (``h`` at
    least 1, as :func:`fit_local_trend` reads a target in the last observed month). statsmodels'
    approximate diffuse prior (variance 1e6) moves its median by up to ~1e-7 [natural log] from
    this exact value; only the median enters the backtest errors.

    Parameters
    ----------
    t_year, log_y, n_train
        As :func:`loglinear_medians`.

    Returns
    -------
    numpy.ndarray
        Shape (origins, n), as :func:`loglinear_medians`.
    """
    t, y = np.asarray(t_year, float), np.asarray(log_y, float)
    k = np.asarray(n_train, int)
    m = _month_index(t)
    train, _ = _origin_masks(t, k)
    m_last = m[k - 1]
    in_last = train & (m[None, :] == m_last[:, None])
    in_first = train & (m[None, :] == m[0])
    g_last = np.where(in_last, y, 0.0).sum(axis=1) / in_last.sum(axis=1)
    g_first = np.where(in_first, y, 0.0).sum(axis=1) / in_first.sum(axis=1)
    span = (m_last - m[0]).astype(float)
    drift = np.divide(g_last - g_first, span, out=np.zeros_like(span), where=span > 0)
    h = np.maximum(m[None, :] - m_last[:, None], 1)
    return g_last[:, None] + h * drift[:, None]


def _mixture_median(loc: np.ndarray, scale: np.ndarray, df: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Median of weighted Student-t mixtures, reduced over axis -2, by safeguarded Newton.

    ``loc``, ``scale``, ``w`` broadcast to (..., components, points), ``df`` to (..., 1, points).
    Components of weight 1e-12 or less are dropped as in :func:`_mixture_quantiles`. The median of
    symmetric components lies between their smallest and largest centre: Newton steps from that
    bracket, a step leaving it is replaced by bisection, until the step is below 1e-14 of the
    value (the bisection of :func:`_mixture_quantiles` stops at 3e-14 component scales).
    """
    from scipy.special import gammaln, stdtr

    w = np.where(w > 1e-12, w, 0.0)
    w = w / w.sum(axis=-2, keepdims=True)
    big = np.where(w > 0, loc, -np.inf).max(axis=-2)
    lo, hi = np.where(w > 0, loc, np.inf).min(axis=-2), big
    x = 0.5 * (lo + hi)
    log_c = gammaln((df + 1) / 2) - gammaln(df / 2) - 0.5 * np.log(df * np.pi)
    for _ in range(MIXTURE_BISECTIONS + 8):
        z = (x[..., None, :] - loc) / scale
        below = np.sum(w * stdtr(df, z), axis=-2) - 0.5
        dens = np.sum(w * np.exp(log_c - 0.5 * (df + 1) * np.log1p(z * z / df)) / scale, axis=-2)
        lo, hi = np.where(below < 0, x, lo), np.where(below < 0, hi, x)
        new = x - below / np.maximum(dens, 1e-300)
        new = np.where((new >= lo) & (new <= hi), new, 0.5 * (lo + hi))
        done = np.abs(new - x) <= 1e-14 * (1.0 + np.abs(x))
        x = new
        if np.all(done):
            break
    return x


def damped_medians(t_year, log_y, n_train, dampings=(DEFAULT_DAMPING_PER_YEAR,),
                   damping_sd_log: float = DAMPING_SD_LOG, t_query=None) -> np.ndarray:
    """Medians of :func:`fit_damped` with the jump-off (:func:`fit`), every origin and prior
    decay rate at once.

    The same model as :func:`fit_damped`: for each decay rate ``c`` of the grid around each
    prior median the OLS of ``log y`` on ``[1, -exp(-c (t - t_last))]`` in closed form (centred
    sums), weighted by prior times marginal likelihood, the median of the Student-t mixture
    (:func:`_mixture_median`), shifted through the last training observation. One array call
    over (rates, grid, origins, times) instead of nine statsmodels fits and a bisection per
    origin; equal to :func:`fit_damped` to ~1e-12 [natural log] (``tests/forecast``).

    Parameters
    ----------
    t_year, log_y, n_train
        As :func:`loglinear_medians` (training sizes at least 3).
    dampings : sequence of float
        Prior median decay rates [1/year] (:data:`DAMPING_GRID` for the backtest's choice).
    damping_sd_log : float
        Prior standard deviation of ``log c``.
    t_query : array-like, optional
        Times to forecast [decimal year] instead of the observation times.

    Returns
    -------
    numpy.ndarray
        Shape (rates, origins, n): medians of ``log(tokens_per_day)`` at every observation time
        from each origin's last training time on (NaN before it); with ``t_query``, shape
        (rates, origins, len(t_query)), the medians at those times.
    """
    t, y = np.asarray(t_year, float), np.asarray(log_y, float)
    k = np.asarray(n_train, int)
    train, last = _origin_masks(t, k)
    t0 = t[k - 1]
    z = np.linspace(-2.0, 2.0, 2 * N_DAMPING_GRID_HALF + 1) if damping_sd_log > 0 else np.zeros(1)
    c = np.asarray(dampings, float)[:, None] * np.exp(z * damping_sd_log)[None, :]  # (D, C)
    x = -np.exp(-c[:, :, None, None] * (t[None, :] - t0[:, None]))  # (D, C, K, n)
    xbar, dx = _centred(x, train)
    ybar, dy = _centred(np.broadcast_to(y, train.shape), train)
    sxx = (dx * dx).sum(axis=-1)
    b = (dx * dy).sum(axis=-1) / sxx
    rss = ((dy - b[..., None] * dx) ** 2).sum(axis=-1)
    log_like = -0.5 * np.log(k * sxx) - 0.5 * (k - 2) * np.log(np.maximum(rss, 1e-300))
    lw = -0.5 * z[None, :, None] ** 2 + log_like
    w = np.exp(lw - lw.max(axis=1, keepdims=True))
    w = w / w.sum(axis=1, keepdims=True)
    df = np.maximum(k - 2, 1).astype(float)
    if t_query is None:  # each origin's targets and the origin itself (the jump-off)
        kk, jj = np.nonzero(np.arange(len(t))[None, :] >= (k - 1)[:, None])
        tp = t[jj]
    else:
        tq = np.atleast_1d(np.asarray(t_query, float))
        kk = np.repeat(np.arange(len(k)), len(tq) + 1)
        tp = np.column_stack([t0, np.broadcast_to(tq, (len(k), len(tq)))]).ravel()
    xq = -np.exp(-c[:, :, None] * (tp - t0[kk])[None, None, :])  # (D, C, P)
    xb = xbar[..., 0][..., kk]
    loc = ybar[kk, 0] + b[..., kk] * (xq - xb)
    scale = np.maximum(np.sqrt(rss[..., kk] / df[kk] * (1.0 + 1.0 / k[kk] + (xq - xb) ** 2 / sxx[..., kk])),
                       1e-12)
    med = _mixture_median(loc, scale, df[kk][None, None, :], w[..., kk])  # (D, P)
    if t_query is not None:
        med = med.reshape(len(c), len(k), len(tq) + 1)
        return med[..., 1:] + (y[last] - med[..., 0])[..., None]
    out = np.full((len(c), len(k), len(t)), np.nan)
    out[:, kk, jj] = med
    shift = y[last] - out[:, np.arange(len(k)), k - 1]
    return out + shift[:, :, None]
