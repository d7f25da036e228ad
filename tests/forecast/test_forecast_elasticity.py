"""Price elasticity of token volume: the fixed-effects estimator recovers a known elasticity, and
the bundled OpenRouter panel's estimate is reported as it is (not supported)."""

import json

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from tokenomics.cli import app
from tokenomics.errors import TokenomicsError
from tokenomics.forecast.elasticity import Elasticity, estimate_elasticity, model_weeks

runner = CliRunner()


def _panel(e: float, n_models: int = 20, n_weeks: int = 30, seed: int = 0) -> pd.DataFrame:
    """Synthetic model-weeks: each model's price steps down at random weeks; log tokens = model
    effect + week effect + e x log(blended price) + 0.05 noise. Input and output prices in the
    same ratio, so the blended price is proportional to both."""
    rng = np.random.default_rng(seed)
    rows = []
    week_fx = rng.normal(0, 0.3, n_weeks)
    for m in range(n_models):
        p0, a = rng.uniform(0.1, 10), rng.normal(25, 1)
        cuts = np.cumsum(rng.random(n_weeks) < 0.1) * np.log(0.7)  # 30 % cuts
        for w in range(n_weeks):
            p = p0 * np.exp(cuts[w])
            ly = a + week_fx[w] + e * np.log(p) + rng.normal(0, 0.05)
            rows.append({"week": f"w{w:02d}", "slug": f"m{m}", "total_tokens": np.exp(ly),
                         "input_usd_per_m_tok": p, "output_usd_per_m_tok": 4 * p, "is_free": 0})
    return pd.DataFrame(rows)


def test_within_estimate_recovers_a_known_elasticity():
    """Constructed with e = -1.5: the within (model + week effects) estimate is within 0.1 of it,
    its interval below zero (supported), and half the price multiplies demand by 2^1.5 = 2.83."""
    r = estimate_elasticity("within", data=_panel(-1.5))
    assert r.estimate == pytest.approx(-1.5, abs=0.1) and r.lo_95 < -1.5 < r.hi_95 < 0 and r.supported
    assert r.demand_multiplier(0.5)[0] == pytest.approx(0.5**r.estimate)
    assert r.n_obs == 600 and r.n_models == 20


def test_no_price_change_is_refused_not_guessed():
    d = _panel(-1.0).assign(input_usd_per_m_tok=1.0, output_usd_per_m_tok=4.0)
    with pytest.raises(TokenomicsError, match="price change"):
        estimate_elasticity("within", data=d)
    with pytest.raises(TokenomicsError, match="negative price"):
        model_weeks(d.assign(input_usd_per_m_tok=-1.0))


def test_demand_multiplier_by_hand():
    """e = -1 (interval -1.5 to -0.5): half the price doubles demand, 2^0.5 to 2^1.5 (hand)."""
    m, lo, hi = Elasticity("within", -1.0, -1.5, -0.5, 10, 2, 5, 2, "x").demand_multiplier(0.5)
    assert (m, lo, hi) == pytest.approx((2.0, 2**0.5, 2**1.5))


def test_bundled_openrouter_panel_does_not_support_an_elasticity():
    """Measured on datasets/openrouter_model_weeks.csv (2026-12-07): 490 paid model-weeks of 53
    models, 7 of which changed price; within estimate +0.73 (95 % -0.17 to 1.63), not below zero."""
    r = estimate_elasticity("within")
    assert r.n_obs == 490 and r.n_models == 53 and r.n_models_price_changed == 7
    assert r.estimate == pytest.approx(0.73, abs=0.01) and not r.supported


@pytest.mark.slow
def test_cli_elasticity_json():
    res = runner.invoke(app, ["forecast", "--show", "elasticity", "--format", "json"])
    assert res.exit_code == 0, res.output
    rec = json.loads(res.stdout)
    rec = rec if isinstance(rec, list) else rec.get("rows", rec)
    assert {r["spec"] for r in rec} == {"within", "cross_section"}
    assert {"elasticity", "lo_95", "hi_95", "n_obs", "half_price_demand_x", "dataset"} <= set(rec[0])


# ---------------------------------------------------------------- demand at another price
@pytest.fixture(scope="module")
def google():
    """Google's trend forecast (one fit for the tests below; price_response copies, never mutates)."""
    from tokenomics.forecast import forecast

    return forecast("google")


def test_half_price_at_a_stated_elasticity_doubles_demand_and_its_bounds(google):
    """Elasticity -1 stated exactly: every column x 0.5^-1 = 2 (hand calculation), no added width."""
    from tokenomics.forecast.elasticity import price_response

    base = google
    moved = price_response(base, 0.5, -1.0)
    cols = ["tokens_per_day", "tokens_per_day_lo_80", "tokens_per_day_hi_80", "tokens_per_day_lo_95", "tokens_per_day_hi_95"]
    assert np.allclose(moved.monthly[cols].to_numpy(), 2.0 * base.monthly[cols].to_numpy(), rtol=1e-12)
    assert moved.price_scale == 0.5 and base.price_scale == 1.0
    assert (moved.monthly["demand_response_x"] == 2.0).all()


def test_the_estimated_elasticity_moves_the_median_and_widens_the_intervals(google):
    """Default: the bundled within estimate e; the median moves by 0.5^e exactly, and each bound's
    log distance from it is the old one and z x se x log 2 in quadrature (se from the 95 % CI)."""
    from tokenomics.forecast.elasticity import price_response

    e = estimate_elasticity("within")
    se = (e.hi_95 - e.lo_95) / (2 * 1.959963984540054)
    base = google.monthly
    moved = price_response(google, 0.5, e).monthly
    assert np.allclose(moved["tokens_per_day"], base["tokens_per_day"] * 0.5**e.estimate)
    d_old = np.log(base["tokens_per_day_hi_95"] / base["tokens_per_day"])
    d_new = np.log(moved["tokens_per_day_hi_95"] / moved["tokens_per_day"])
    assert np.allclose(d_new, np.hypot(d_old, 1.959963984540054 * se * np.log(2.0)))
    assert "NOT supported" in moved["elasticity_basis"].iloc[0]  # the bundled estimate's verdict travels with it


def test_capacity_prices_follow_the_price_scale(google):
    from tokenomics.forecast import supply_capacity
    from tokenomics.forecast.elasticity import price_response

    base = google
    a = supply_capacity(base).to_frame()
    b = supply_capacity(price_response(base, 0.5, -1.0)).to_frame()
    assert np.allclose(b["usd_per_m_output_tok"], 0.5 * a["usd_per_m_output_tok"])
    assert np.allclose(b["demand_tokens_per_day"], 2.0 * a["demand_tokens_per_day"])


def test_cli_price_scale_json_carries_the_response():
    res = runner.invoke(app, ["forecast", "-s", "google", "--price-scale", "0.5", "--elasticity", "-1", "--format", "json"])
    assert res.exit_code == 0, res.output
    rows = json.loads(res.stdout)
    assert rows[-1]["demand_response_x"] == 2.0 and rows[-1]["price_scale"] == 0.5
    assert "prices x0.5: demand x2" in res.stderr


@pytest.mark.parametrize("argv, needle", [
    (["--elasticity", "-1"], "--elasticity needs --price-scale"),
    (["--price-scale", "-0.5"], "--price-scale"),
    (["--price-scale", "0.5", "--show", "backtest"], "--show backtest"),
])
def test_cli_price_scale_bad_input_is_one_line_exit_2(argv, needle, capsys):
    from tokenomics.cli import main

    with pytest.raises(SystemExit) as e:
        main(["forecast", "-s", "google", *argv])
    err = capsys.readouterr().err
    assert e.value.code == 2 and needle in err and "Traceback" not in err and len(err.strip().splitlines()) == 1
