"""The structural demand model: adopters x tokens per adopter per day, fitted with statsmodels.

Synthetic series are built from the model's own equations, so the expected values are hand
calculations of those equations; the bundled data are checked for what the model promises
(decomposition multiplies back, bounds ordered, adopters below the ceiling)."""

import json
import math

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from tokenomics.cli import app, main
from tokenomics.errors import TokenomicsError
from tokenomics.forecast.backtest import drift_slope
from tokenomics.forecast.structural import (
    backtest_summary, damped_growth, drivers, fit_adopters, fit_series, load_drivers, structural_backtest)

runner = CliRunner()

CEIL = 5.5e9  # adopter_ceiling_world (ITU 2024)


def _logistic(t, a, r, t_ref):
    return CEIL / (1.0 + np.exp(-(a + r * (t - t_ref))))


def _synthetic(noise: float = 0.0, seed: int = 0):
    """A world series whose users follow a logistic (a = -3 at 2025.0, r = 0.8 / year) and whose
    tokens per user grow 3x a year exactly (log growth 1.0986 / year, constant), observed
    quarterly 2024.0-2026.0; users every half year."""
    rng = np.random.default_rng(seed)
    t_tok = np.arange(2024.0, 2026.01, 0.25)
    t_u = np.arange(2024.0, 2026.01, 0.5)
    intensity = 1e4 * np.exp(math.log(3.0) * (t_tok - 2024.0) + noise * rng.standard_normal(len(t_tok)))
    tokens = _logistic(t_tok, -3.0, 0.8, 2025.0) * intensity
    dates = [f"{int(t)}-{int(round((t % 1) * 12)) + 1:02d}-01" for t in t_tok]
    hist = pd.DataFrame({"series": "synth", "date": pd.to_datetime(dates), "tokens_per_day": tokens,
                         "region": "world"})
    udates = [f"{int(t)}-{int(round((t % 1) * 12)) + 1:02d}-01" for t in t_u]
    from tokenomics.dates import decimal_year

    tu = decimal_year(np.array(udates, dtype="datetime64[D]"))
    drv = pd.DataFrame({"driver": "adopters", "series": "synth", "entity": "Synth app", "metric": "monthly active users",
                        "date": udates, "value": _logistic(tu, -3.0, 0.8, 2025.0), "unit": "users", "kind": "measured",
                        "source": "synthetic", "as_of": "2026-12-07", "note": ""})
    return hist, drv


def test_adopters_logistic_recovers_its_coefficients():
    """Counts on an exact logistic (a = -3 at 2025, r = 0.8 / year): OLS on the logit returns them."""
    t = np.array([2024.0, 2024.5, 2025.0, 2025.5, 2026.0])
    f = fit_adopters(t, _logistic(t, -3.0, 0.8, 2025.0), CEIL)
    assert f.params[1] == pytest.approx(0.8, rel=1e-9)
    assert f.params[0] + f.params[1] * (2025.0 - f.t_ref) == pytest.approx(-3.0, rel=1e-9)
    assert np.exp(f.log_adopters([2040.0]))[0] == pytest.approx(CEIL, rel=1e-3)  # saturates at the ceiling


def test_damped_growth_is_the_integral_of_a_decaying_rate():
    """g (1 - e^{-c h}) / c: 1.0986 x (1 - e^-2) / 1 = 0.9499 after 2 years at c = 1."""
    assert float(damped_growth(math.log(3.0), 1.0, 2.0)) == pytest.approx(math.log(3.0) * (1 - math.exp(-2.0)))
    assert float(damped_growth(1.0, 1.0, -1.0)) == 0.0  # no growth before the origin


def test_structural_median_follows_its_equations_on_a_synthetic_series():
    """No noise: the intensity's last-year growth is exactly log 3; the 2030-12-15 median is the
    last observation x A(2030.95) / A(2026.0) x exp(log 3 x (1 - e^{-4.95}) / 1) (hand calculation
    of the design; the Monte Carlo's median within 3 %)."""
    hist, drv = _synthetic()
    fit = fit_series("synth", hist, load_drivers(drv))
    assert fit.growth_per_year == pytest.approx(math.log(3.0), rel=1e-3)
    t_last, tq = fit.t_last, 2030.9534246575343  # 2030-12-15
    expect = (hist["tokens_per_day"].iloc[-1] * _logistic(tq, -3.0, 0.8, 2025.0) / _logistic(t_last, -3.0, 0.8, 2025.0)
              * math.exp(math.log(3.0) * (1 - math.exp(-(tq - t_last)))))
    p = fit.predict([tq])
    assert math.exp(p["median"][0]) == pytest.approx(expect, rel=0.03)
    assert p["lo_95"][0] <= p["lo_80"][0] <= p["median"][0] <= p["hi_80"][0] <= p["hi_95"][0]


def test_backtest_scores_every_later_point_against_drift_and_the_random_walk():
    """Origins need 3 token and 3 user observations: 2025.0 (users 2024.0-2025.0) onwards, so the
    scored points are 4 + 3 + 2 + 1 = 10 (origins 2025.0, .25, .5, .75). Drift and random-walk
    errors are recomputed here from their definitions."""
    hist, drv = _synthetic(noise=0.1)
    pts = structural_backtest(history=hist, data=drv)
    assert len(pts) == 10 and set(pts["series"]) == {"synth"}
    from tokenomics.dates import decimal_year

    t = decimal_year(hist["date"])
    y = np.log10(hist["tokens_per_day"].to_numpy())
    first = pts.iloc[0]
    k = int(np.flatnonzero(np.isclose(t, first["origin_year"]))[0])
    j = int(np.flatnonzero(np.isclose(t, first["target_year"]))[0])
    drift = y[k] + drift_slope(t[: k + 1], y[: k + 1]) * (t[j] - t[k])
    assert first["drift_err_dec"] == pytest.approx(drift - y[j])
    assert first["rw_err_dec"] == pytest.approx(y[k] - y[j])
    s = backtest_summary(pts)
    assert list(s["horizon"]) == ["all", "<= 1 y"] and s["n_points"].iloc[0] == 10


def test_bundled_decomposition_multiplies_back_and_stays_below_the_ceiling():
    """For every bundled series with user counts: tasks x tokens per task = tokens per adopter;
    adopters below the region's people online; bounds ordered; the trend median beside it."""
    df = drivers().to_frame()
    assert not df.empty
    assert np.allclose(df["tasks_per_adopter_per_day"] * df["tokens_per_task"], df["tokens_per_adopter_per_day"])
    assert (df["adopters"] < df["adopter_ceiling"]).all()
    assert (df["tokens_per_day_lo_95"] <= df["tokens_per_day_lo_80"]).all()
    assert (df["tokens_per_day_lo_80"] <= df["tokens_per_day"]).all() and (df["tokens_per_day"] <= df["tokens_per_day_hi_80"]).all()
    assert df["trend_tokens_per_day"].notna().all()
    assert (df["year"] == 2030).groupby(df["series"]).any().all()


@pytest.mark.parametrize("bad, needle", [
    ({"value": -1.0}, "positive"),
    ({"date": "2025-13"}, "date"),
    ({"driver": "adoptors"}, "adopters"),
])
def test_bad_driver_rows_are_one_line_errors(bad, needle):
    _, drv = _synthetic()
    drv.loc[0, list(bad)] = list(bad.values())
    with pytest.raises(TokenomicsError, match=needle) as e:
        load_drivers(drv)
    assert "\n" not in str(e.value)


def test_too_few_user_counts_names_the_series_that_fit():
    hist, drv = _synthetic()
    with pytest.raises(TokenomicsError, match="too few") as e:
        fit_series("synth", hist, load_drivers(drv.iloc[:2]))
    assert "\n" not in str(e.value)


def test_cli_show_drivers_json_is_the_library_frame_and_states_its_score():
    res = runner.invoke(app, ["forecast", "--show", "drivers", "--format", "json"])
    assert res.exit_code == 0, res.output
    rows = json.loads(res.stdout)
    assert {"adopters", "tokens_per_adopter_per_day", "tasks_per_adopter_per_day", "tokens_per_task",
            "trend_tokens_per_day"} <= set(rows[0])
    assert "drift" in res.stderr and "random walk" in res.stderr


def test_cli_show_drivers_refuses_options_it_ignores(capsys):
    with pytest.raises(SystemExit) as e:
        main(["forecast", "--show", "drivers", "--scenario", "high"])
    err = capsys.readouterr().err
    assert e.value.code == 2 and "--scenario" in err and "Traceback" not in err and len(err.strip().splitlines()) == 1


def test_cli_users_own_history_and_drivers(tmp_path, capsys):
    """A user's series with their own user counts is decomposed (tokens per request from the
    bundled data); without user counts the command says which series have them, exit 2."""
    h = tmp_path / "h.csv"
    h.write_text("series,date,tokens_per_day\nacme,2025-01,1e12\nacme,2025-06,2e12\nacme,2026-01,5e12\n")
    d = tmp_path / "d.csv"
    d.write_text("driver,series,metric,date,value\nadopters,acme,monthly active users,2025-01,1e6\n"
                 "adopters,acme,monthly active users,2025-06,3e6\nadopters,acme,monthly active users,2026-01,6e6\n")
    res = runner.invoke(app, ["forecast", "--show", "drivers", "--history", str(h), "--drivers", str(d), "--format", "json"])
    assert res.exit_code == 0, res.output
    rows = json.loads(res.stdout)
    assert {r["series"] for r in rows} == {"acme"} and all(r["tokens_per_task"] > 0 for r in rows)
    with pytest.raises(SystemExit) as e:
        main(["forecast", "--show", "drivers", "--history", str(h)])
    err = capsys.readouterr().err
    assert e.value.code == 2 and "user counts are held for" in err and len(err.strip().splitlines()) == 1
