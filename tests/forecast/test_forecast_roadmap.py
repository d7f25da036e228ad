"""The hardware roadmap priced by the core: the cheapest available system per year, its list price,
and the capacity view's prices from it (expected values: the watch's own cost of each system, and
hand arithmetic of the mark-up)."""

import json

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from tokenomics.cli import app, main
from tokenomics.errors import TokenomicsError
from tokenomics.forecast.roadmap import cost_path, load_roadmap
from tokenomics.watch.prices import system_cost

runner = CliRunner()

ROADMAP = pd.DataFrame({
    "system": ["dgx-h200", "gb200-nvl72", "dgx-b200"],
    "available_year": [2024, 2026, 2026],
    "status": ["shipping", "announced", "shipping"],
    "region": ["world", "world", "world"],
})


def test_each_year_takes_the_cheapest_system_available_and_marks_it_up():
    """2023: nothing available (NaN, said). 2024: only the H200. 2026 on: the cheaper of GB200 NVL72
    and DGX B200 by the watch's own cost; list = cost / (1 - 0.35)."""
    r = cost_path([2023, 2024, 2026, 2030], roadmap=ROADMAP, margin_frac=0.35).to_frame().set_index("year")
    assert np.isnan(r.loc[2023, "cost_usd_per_m_output_tok"]) and "no system" in r.loc[2023, "note"]
    h200 = system_cost("dgx-h200")["cost_usd_per_m_tok"]
    assert r.loc[2024, "system"] == "dgx-h200" and r.loc[2024, "cost_usd_per_m_output_tok"] == pytest.approx(h200)
    best = min(("gb200-nvl72", "dgx-b200"), key=lambda s: system_cost(s)["cost_usd_per_m_tok"])
    assert r.loc[2026, "system"] == best and r.loc[2030, "system"] == best
    assert r.loc[2026, "status"] == dict(zip(ROADMAP["system"], ROADMAP["status"]))[best]
    assert r.loc[2026, "usd_per_m_output_tok"] == pytest.approx(r.loc[2026, "cost_usd_per_m_output_tok"] / 0.65)
    assert (r.loc[[2024, 2026, 2030], "n_systems_priced"] == [1, 3, 3]).all()


@pytest.mark.parametrize("change, needle", [
    ({"system": "gb200-nvl7"}, "Did you mean 'gb200-nvl72'"),
    ({"status": "rumoured"}, "shipping, announced"),
    ({"available_year": "2026.5"}, "available_year"),
    ({"region": "mars"}, "Unknown roadmap region 'mars'"),
])
def test_a_bad_roadmap_row_is_one_line(change, needle):
    bad = ROADMAP.astype(object).copy()
    for k, v in change.items():
        bad.loc[1, k] = v
    with pytest.raises(TokenomicsError, match=needle.replace("(", r"\(")) as e:
        load_roadmap(bad)
    assert "\n" not in str(e.value)


def test_the_bundled_roadmap_loads_and_names_catalogued_systems():
    rm = load_roadmap()
    assert set(rm["status"]) <= {"shipping", "announced"} and {"world", "china"} <= set(rm["region"])


def test_capacity_prices_follow_a_given_path_and_leave_missing_years_empty():
    from tokenomics.forecast import forecast, supply_capacity

    path = pd.DataFrame({"year": [2026, 2030], "usd_per_m_output_tok": [1.0, 0.5]})
    cap = supply_capacity(forecast("google"), price_path=path).to_frame().set_index("year")
    assert cap.loc[2026, "usd_per_m_output_tok"] == 1.0 and cap.loc[2030, "usd_per_m_output_tok"] == 0.5
    assert np.isnan(cap.loc[2028, "usd_per_m_output_tok"])
    with pytest.raises(TokenomicsError, match="positive"):
        supply_capacity(forecast("google"), price_path=path.assign(usd_per_m_output_tok=-1.0))


def test_cli_missing_price_path_is_one_line(capsys, tmp_path):
    with pytest.raises(SystemExit) as e:
        main(["forecast", "-s", "google", "--show", "capacity", "--price-path", str(tmp_path / "none.csv")])
    err = capsys.readouterr().err
    assert e.value.code == 2 and "not found" in err and "Traceback" not in err and len(err.strip().splitlines()) == 1


@pytest.mark.parametrize("argv, needle", [
    (["--show", "backtest", "--roadmap", "x.csv"], "--roadmap prices --show roadmap or capacity"),
    (["--show", "roadmap", "--price-path", "x.csv"], "--price-path prices --show capacity"),
    (["--show", "roadmap", "--system", "dgx-h200"], "--system has no effect with --show roadmap"),
])
def test_cli_roadmap_options_refused_where_they_do_nothing(argv, needle, capsys):
    with pytest.raises(SystemExit) as e:
        main(["forecast", *argv])
    err = capsys.readouterr().err
    assert e.value.code == 2 and needle in err and "Traceback" not in err


@pytest.mark.integration
def test_cli_show_roadmap_json_is_the_library_frame(tmp_path):
    """--show roadmap --format json: one row per region and year; the world's 2030 price equals
    cost_path's with the bundled margin."""
    res = runner.invoke(app, ["forecast", "--show", "roadmap", "--format", "json"])
    assert res.exit_code == 0, res.output
    rows = pd.DataFrame(json.loads(res.stdout))
    lib = cost_path(range(2024, 2031)).to_frame().set_index("year")
    w = rows[rows["region"] == "world"].set_index("year")
    assert w.loc[2030, "usd_per_m_output_tok"] == pytest.approx(lib.loc[2030, "usd_per_m_output_tok"])
    assert "margin" in res.stderr


@pytest.mark.integration
def test_the_stored_margin_is_the_bundled_lists_median():
    """market_margin_frac (demand_scenarios.csv) was fitted by tools/fit_market_margin.py: it must
    still be the median implied margin of the bundled list (rerun the tool after a market change)."""
    from tokenomics.forecast.roadmap import market_margin_frac
    from tokenomics.forecast.scenarios import parameter

    assert parameter("market_margin_frac") == pytest.approx(market_margin_frac()[0], rel=1e-12)


def test_margin_path_holds_a_trend_it_cannot_tell_from_zero():
    """An interval spanning zero holds the median every year; one excluding zero moves it by the slope
    from the centre year (hand calculation: 0.35 - 0.05 x (2029.5 - 2026.5) = 0.20), bounded at 0."""
    from tokenomics.forecast.roadmap import margin_path

    held, how = margin_path([2026, 2030], 0.35, {"slope_frac_per_year": 0.1, "slope_lo_95": -0.3,
                                                "slope_hi_95": 0.5, "centre_year": 2026.0})
    assert how == "held" and held.tolist() == [0.35, 0.35]
    falling = {"slope_frac_per_year": -0.05, "slope_lo_95": -0.08, "slope_hi_95": -0.02, "centre_year": 2026.5}
    m, how = margin_path([2029, 2040], 0.35, falling)
    assert how == "trend"
    assert m[0] == pytest.approx(0.20) and m[1] == 0.0


def test_the_roadmap_says_how_its_margin_was_set():
    """The bundled list's trend interval spans zero (datasets/demand_scenarios.csv), so every year
    carries the median margin and the basis says the trend was not followed."""
    from tokenomics.forecast.roadmap import cost_path, margin_trend_text, stored_margin_trend
    from tokenomics.forecast.scenarios import parameter

    tr = stored_margin_trend()
    assert tr["slope_lo_95"] < 0 < tr["slope_hi_95"]
    # the fit tools/fit_market_margin.py stored; docs/guide/forecast-capacity.md quotes it
    assert margin_trend_text(tr) == "+11 points a year (95 % -34 to +56)"
    df = cost_path([2025, 2030]).to_frame()
    assert df["margin_frac"].tolist() == [parameter("market_margin_frac")] * 2
    assert "not distinguishable from zero" in df.attrs["margin_basis"]


@pytest.mark.integration
def test_the_stored_margin_trend_is_the_bundled_lists_fit():
    """market_margin_trend_frac_per_year (demand_scenarios.csv) was fitted by tools/fit_market_margin.py
    on the bundled list: rerun the tool after a market or price-list change."""
    from tokenomics.forecast.roadmap import market_margin_trend, stored_margin_trend

    fit, stored = market_margin_trend(), stored_margin_trend()
    for k in stored:  # QuantReg iterates to a tolerance: equal well below what any printed figure shows
        assert stored[k] == pytest.approx(fit[k], abs=1e-6), k
