"""The backtest's array fits equal the per-origin fits they replace, and a long user history is
backtested at a stated number of rolling origins.

The reference in each test is the fit the backtest ran before (one statsmodels / bisection call per
origin, :func:`tokenomics.forecast.models.fit`); the tolerances are stated where they are not
round-off.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

from tokenomics.forecast import models as M
from tokenomics.forecast import run_backtest
from tokenomics.forecast.backtest import (
    MIN_TRAIN,
    _ensemble_rows,
    backtest_origins,
    combine_medians,
    origins_per_series,
)
from tokenomics.forecast.history import decimal_year, load_history


def _series() -> list[tuple[np.ndarray, np.ndarray]]:
    """Bundled doubao (8 irregular points) and two years of noisy monthly growth (seed 3)."""
    h = load_history()
    g = h[h["series"] == "doubao"].sort_values("date")
    out = [(decimal_year(g["date"]), np.log(g["tokens_per_day"].to_numpy(float)))]
    rng = np.random.default_rng(3)
    t = 2025.0 + (np.arange(24) + 0.5) / 12
    out.append((t, 30.0 + 1.2 * (t - t[0]) + rng.normal(0, 0.1, len(t))))
    return out


def _reference(model: str, t, y, k: int, **kw) -> np.ndarray:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return M.fit(model, t[:k], y[:k], **kw).predict(t[k:])["median"]


@pytest.mark.parametrize("model,tol", [("loglinear", 1e-9), ("damped", 1e-9)])
def test_array_medians_equal_the_per_origin_fits(model, tol):
    """Every origin's medians from one array call equal the statsmodels fit with the jump-off
    (loglinear) and the nine-rate mixture bisected per origin (damped, two prior decay rates) to
    1e-9 [natural log]: the same closed-form OLS, summed centred."""
    for t, y in _series():
        ks = np.arange(MIN_TRAIN, len(t))
        if model == "loglinear":
            got = {None: M.loglinear_medians(t, y, ks)}
        else:
            got = dict(zip((0.5, 1.5), M.damped_medians(t, y, ks, (0.5, 1.5))))
        for c, med in got.items():
            kw = {} if c is None else {"damping_per_year": c}
            for i, k in enumerate(ks):
                np.testing.assert_allclose(med[i, k:], _reference(model, t, y, k, **kw), rtol=0, atol=tol)


def test_local_trend_median_is_the_exact_diffuse_value_of_the_statsmodels_fit():
    """Last month's level plus the months ahead times the mean monthly growth: statsmodels' Kalman
    filter starts from an approximate diffuse prior (variance 1e6), which moves its median by up to
    ~1e-7; 5e-7 [natural log] (2e-7 decades) bounds it here."""
    for t, y in _series():
        ks = np.arange(MIN_TRAIN, len(t))
        med = M.local_trend_medians(t, y, ks)
        for i, k in enumerate(ks):
            np.testing.assert_allclose(med[i, k:], _reference("local_trend", t, y, k), rtol=0, atol=5e-7)


def test_damped_medians_at_query_times_equal_the_final_fit():
    """The forecast's damped median (all points, monthly to 2030) from the array path equals
    ``fit_damped(...).predict`` with the jump-off to 1e-9."""
    tq = 2026.0 + np.arange(60) / 12
    for t, y in _series():
        for c in (0.25, 2.0):
            ref = M.fit("damped", t, y, damping_per_year=c).predict(tq)["median"]
            got = M.damped_medians(t, y, [len(t)], [c], t_query=tq)[0, 0]
            np.testing.assert_allclose(got, ref, rtol=0, atol=1e-9)


def test_mixture_median_is_the_point_where_the_mixture_cdf_is_one_half():
    """Two Cauchy components (one degree of freedom) at 0 and 2, weights 3:1: the median solves
    0.75 F(m) + 0.25 F(m - 2) = 1/2 (F the Cauchy cdf); checked on the cdf, and a lone component's
    median is its centre."""
    from scipy.special import stdtr

    loc = np.array([[0.0], [2.0]])
    m = M._mixture_median(loc, np.ones((2, 1)), np.ones((1, 1)), np.array([[0.75], [0.25]]))[0]
    assert 0.75 * stdtr(1.0, m) + 0.25 * stdtr(1.0, m - 2.0) == pytest.approx(0.5, abs=1e-14)
    one = M._mixture_median(loc, np.ones((2, 1)), np.ones((1, 1)), np.array([[1.0], [0.0]]))[0]
    assert one == 0.0


def test_ensemble_rows_equal_combine_medians_point_by_point():
    """The ensemble rows built for all points at once equal :func:`combine_medians` called on
    each point's models, bit for bit (weights renormalised over the models present, sums in the
    same order); a point missing a model is combined from the others."""
    rng = np.random.default_rng(0)
    rows = []
    for s in ("a", "b"):
        for k in (3, 4):
            for j, tgt in enumerate((2026.1, 2026.3)):
                for m in M.MODELS:
                    if m in ("gompertz", "logistic") and k == 3:
                        continue
                    rows.append({"series": s, "model": m, "n_train": k, "origin_year": 2026.0,
                                 "target_year": tgt, "horizon_year": tgt - 2026.0, "leverage": 1.0 + j,
                                 "actual_log10": 14.0 + j, "predicted_log10": 14.0 + rng.normal()})
    points = pd.DataFrame(rows)
    weights = dict(zip(M.MODELS, (0.1, 0.2, 0.3, 0.25, 0.15)))
    ens = _ensemble_rows(points, weights, M.MODELS)
    assert len(ens) == 8
    for _, r in ens.iterrows():
        g = points[(points["series"] == r["series"]) & (points["n_train"] == r["n_train"])
                   & (points["target_year"] == r["target_year"])]
        mean, spread = combine_medians(dict(zip(g["model"], g["predicted_log10"].to_numpy()[:, None])), weights)
        assert r["predicted_log10"] == mean[0] and r["spread_log10"] == spread[0]
        assert r["error_log10"] == r["predicted_log10"] - r["actual_log10"]


def test_origins_are_capped_evenly_with_the_first_and_last_kept():
    """24 points: origins 3..23 (21); five kept are 3, 8, 13, 18, 23 (linspace 3..23). Eight
    points: five origins, all kept (every bundled tuning series has at most five). 50 series keep
    three each (150 in all), 30 keep five, 4 keep five."""
    assert backtest_origins(24, 5).tolist() == [3, 8, 13, 18, 23]
    assert backtest_origins(24, None).tolist() == list(range(3, 24))
    assert backtest_origins(8, 5).tolist() == [3, 4, 5, 6, 7]
    assert backtest_origins(3, 5).tolist() == []
    assert backtest_origins(24, 3).tolist() == [3, 13, 23]
    assert [origins_per_series(n) for n in (1, 4, 30, 37, 50, 500)] == [5, 5, 5, 4, 3, 3]


def test_a_user_history_reports_how_many_origins_made_the_weights():
    """Two monthly series of 12 points: 9 origins each, 5 kept (3, 5, 7, 9, 11), 10 of 18; the
    bundled backtest uses every origin."""
    rng = np.random.default_rng(1)
    dates = pd.date_range("2025-01-15", periods=12, freq="MS") + pd.Timedelta(days=14)
    h = pd.concat([pd.DataFrame({"series": s, "date": dates,
                                 "tokens_per_day": 1e12 * np.exp(0.1 * np.arange(12) + rng.normal(0, 0.05, 12))})
                   for s in ("a", "b")])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        bt = run_backtest(h)
    assert bt.origins == {"max_per_series": 5, "used": 10, "available": 18, "series": 2,
                          "spacing": "evenly spaced, first and last kept"}
    o = run_backtest().origins
    assert o["used"] == o["available"]
