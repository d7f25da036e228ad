"""Commands an analyst asked for: a sweep with a service-level objective (``[slo]``),
``watch --prices FILE`` and a multi-system frontier plot."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from tokenomics import sweep
from tokenomics.cli import app, main

GRID = """
[grid]
hardware = ["h200"]
model = ["llama-3.1-8b"]
execution = ["graph", "engine"]
batch = [1, 8, 32, 128, 512]
context_tok = [2048, 32768]
margin_frac = [0.0, 0.5]

[sweep]
chunk_configs = 7
"""
SLO = """
[slo]
min_tok_per_s_per_user = 100
max_ttft_s = 1.0
"""


def _grid(text):
    return sweep.parse_grid(__import__("tomllib").loads(text))


# -- sweep [slo] ------------------------------------------------------------------------------

def test_slo_rows_marked_and_best_only_among_them():
    rows = sweep.evaluate(_grid(GRID + SLO))
    # reference: the same grid without an SLO, filtered by hand in pandas
    free = sweep.evaluate(_grid(GRID))
    want = free.fits & (free.tok_per_s_per_user >= 100) & (free.ttft_s <= 1.0)
    assert want.any() and not want.all() and (want != free.fits).any()  # the SLO bites, not everywhere
    np.testing.assert_array_equal(rows.meets_slo.to_numpy(), want.to_numpy())
    # every other column is unchanged: the SLO marks rows, it drops none
    pd.testing.assert_frame_equal(rows.drop(columns="meets_slo"), free.drop(columns="meets_slo"))
    summ = sweep.run(_grid(GRID + SLO)).to_frame()
    for ex, row in summ.set_index("execution").iterrows():
        ok = free[want & (free.execution == ex)]
        assert row.n_meet_slo == len(ok)
        assert row.n_fit == int(free[free.execution == ex].fits.sum())
        i = ok.usd_per_m_output_tok.idxmin()
        assert row.best_usd_per_m_output_tok == ok.usd_per_m_output_tok[i]
        assert row.best_config_id == ok.config_id[i] and row.best_batch == ok.batch[i]
        # the unconstrained cheapest is a larger batch that misses 100 tok/s per user
        assert row.best_usd_per_m_output_tok > free[free.execution == ex].usd_per_m_output_tok.min()


def test_no_slo_means_meets_slo_is_fits_and_summary_as_before():
    rows = sweep.evaluate(_grid(GRID))
    np.testing.assert_array_equal(rows.meets_slo.to_numpy(), rows.fits.to_numpy())
    summ = sweep.run(_grid(GRID)).to_frame()
    assert (summ.n_meet_slo == summ.n_fit).all()
    for ex, row in summ.set_index("execution").iterrows():
        assert row.best_usd_per_m_output_tok == rows[rows.execution == ex].usd_per_m_output_tok.min()


def test_slo_nobody_meets_leaves_best_empty():
    summ = sweep.run(_grid(GRID + "[slo]\nmin_tok_per_s_per_user = 1e6\n")).to_frame()
    assert (summ.n_meet_slo == 0).all() and summ.best_usd_per_m_output_tok.isna().all()
    assert (summ.best_batch == -1).all()


def test_slo_loop_baseline_agrees():
    g = _grid(GRID + SLO)
    rows = sweep.evaluate(g)
    loop = sweep.evaluate_loop(g, rows.config_id.to_numpy()[::3])
    np.testing.assert_array_equal(loop.meets_slo.to_numpy(), rows.meets_slo.to_numpy()[::3])


def test_meets_slo_is_vectorized_over_any_shape():
    fits = np.array([[True, True], [True, False]])
    tps = np.array([[50.0, 150.0], [np.nan, 500.0]])
    ttft = np.array([[0.5, 0.5], [0.5, 0.1]])
    # hand: 50 < 100 misses; 150 ok; NaN (unpriced) misses; does not fit misses
    np.testing.assert_array_equal(sweep.meets_slo(fits, tps, ttft, 100.0, 1.0), [[False, True], [False, False]])
    np.testing.assert_array_equal(sweep.meets_slo(fits, tps, ttft), fits)


def test_sweep_cli_slo_table_json_and_file(tmp_path):
    p = tmp_path / "g.toml"
    p.write_text(GRID + SLO)
    r = CliRunner().invoke(app, ["sweep", str(p), "--no-progress"])
    assert r.exit_code == 0, r.output
    assert "SLO" in r.stdout.split("┡")[0]  # the n_meet_slo column's header
    assert "cheapest among rows meeting the SLO" in " ".join(r.stdout.split())
    out = tmp_path / "rows.csv"
    r = CliRunner().invoke(app, ["sweep", str(p), "-f", "json", "--no-progress", "--out", str(out)])
    assert r.exit_code == 0, r.output
    js = json.loads(r.stdout)
    assert all("n_meet_slo" in x for x in js)
    got = pd.read_csv(out)
    assert got.meets_slo.dtype == bool and got.meets_slo.sum() == sum(x["n_meet_slo"] for x in js)


@pytest.mark.parametrize("extra, msg", [
    ("[slo]\nmin_tok_per_s_per_user = -5\n", "min_tok_per_s_per_user must be a positive number"),
    ("[slo]\nmax_ttft_s = \"fast\"\n", "max_ttft_s must be a positive number"),
    ("[slo]\nmax_ttft_s = 0\n", "max_ttft_s must be a positive number"),
    ("[slo]\nmax_ttft = 1\n", "Did you mean 'max_ttft_s'"),
    ("[slo]\nmin_tok_per_s_per_user = true\n", "min_tok_per_s_per_user must be a positive number"),
])
def test_sweep_bad_slo_exit_2_one_line(tmp_path, capsys, extra, msg):
    p = tmp_path / "g.toml"
    p.write_text(GRID + extra)
    with pytest.raises(SystemExit) as exc:
        main(["sweep", str(p), "--no-progress"])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert msg in err and err.count("\n") == 1 and "Traceback" not in err


def test_slo_key_in_grid_section_points_to_slo(tmp_path, capsys):
    p = tmp_path / "g.toml"
    p.write_text(GRID.replace("[grid]\n", "[grid]\nmax_ttft_s = 1.0\n"))
    with pytest.raises(SystemExit) as exc:
        main(["sweep", str(p), "--no-progress"])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert "put it under an [slo] section" in err and err.count("\n") == 1


def test_example_slo_grid_best_meets_its_slo():
    g = sweep.load_grid("examples/grid_slo.toml")
    assert (g.min_tok_per_s_per_user, g.max_ttft_s) == (50.0, 2.0)
    rows = sweep.evaluate(g).set_index("config_id")
    for _, row in sweep.run(g).to_frame().iterrows():
        best = rows.loc[row.best_config_id]
        assert best.meets_slo and best.tok_per_s_per_user >= 50 and best.ttft_s <= 2.0


# -- watch --prices ---------------------------------------------------------------------------

@pytest.fixture()
def bundled_prices():
    from pathlib import Path

    return pd.read_csv(Path(sweep.__file__).parent / "datasets" / "api_prices.csv", dtype=str)


def _with_cut(prices: pd.DataFrame) -> pd.DataFrame:
    """The bundled list plus a later price of its newest 100B+ line at half the blended price
    (the bundled 2026-12-01 Gemini 4 Carbon row, USD 8/M blended -> 4/M on 2027-01-15)."""
    row = prices.iloc[-1].copy()
    assert row["line"] == "gemini-4" and float(row["blended_usd_per_m_tok"]) == 8.0
    row[["date", "price_effective_date", "as_of"]] = "2027-01-15"
    row[["input_usd_per_m_tok", "output_usd_per_m_tok", "blended_usd_per_m_tok"]] = ["2", "10", "4"]
    new = row.copy()
    new[["provider", "model", "line"]] = ["Acme", "Acme Ultra", "acme-ultra"]  # a model without traits
    return pd.concat([prices, pd.DataFrame([row, new])], ignore_index=True)


def test_read_prices_names_every_bad_row(tmp_path, bundled_prices):
    from tokenomics.errors import DataError
    from tokenomics.watch.prices import read_prices

    df = bundled_prices.copy()
    df.loc[3, "price_kind"] = "lsit"
    df.loc[5, "blended_usd_per_m_tok"] = "abc"
    df.loc[7, ["date", "price_effective_date", "as_of"]] = ["soon", None, "soon"]
    df.loc[9, "blended_usd_per_m_tok"] = None
    df.loc[11, "output_usd_per_m_tok"] = "-1"
    p = tmp_path / "mine.csv"
    df.to_csv(p, index=False)
    with pytest.raises(DataError) as exc:
        read_prices(p)
    msg = str(exc.value)
    assert "5 bad rows" in msg and "\n" not in msg
    for want in ("row 4 (line 5): price_kind must be one of", "Did you mean 'list'",
                 "row 6 (line 7): blended_usd_per_m_tok is not a number, got 'abc'",
                 "row 8 (line 9): date 'soon' cannot be read",
                 "row 10 (line 11): blended_usd_per_m_tok is missing; expected USD per million tokens",
                 "row 12 (line 13): output_usd_per_m_tok must be >= 0"):
        assert want in msg, want
    assert len(read_prices(bundled_prices)) == len(bundled_prices)  # the bundled list passes


@pytest.mark.parametrize("edit, msg", [
    (lambda d: d.drop(columns="tier"), "missing columns ['tier']"),
    (lambda d: d.assign(size_class="<100b"), "needs at least 3 list prices"),
    (lambda d: d.assign(model=[""] + list(d.model[1:])), "row 1 (line 2): model is empty"),
])
def test_watch_prices_bad_file_exit_2_one_line(tmp_path, capsys, bundled_prices, edit, msg):
    p = tmp_path / "mine.csv"
    edit(bundled_prices).to_csv(p, index=False)
    with pytest.raises(SystemExit) as exc:
        main(["watch", "--prices", str(p)])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert msg in err and err.count("\n") == 1 and "Traceback" not in err


def test_watch_prices_not_for_cost_tables(tmp_path, capsys, bundled_prices):
    p = tmp_path / "mine.csv"
    bundled_prices.to_csv(p, index=False)
    with pytest.raises(SystemExit) as exc:
        main(["watch", "--prices", str(p), "--show", "cost-basis"])
    assert exc.value.code == 2 and "--prices applies to" in capsys.readouterr().err


def test_watch_price_index_from_a_users_prices(tmp_path, bundled_prices):
    from tokenomics.watch import price_index as pi

    p = tmp_path / "mine.csv"
    _with_cut(bundled_prices).to_csv(p, index=False)
    r = CliRunner().invoke(app, ["watch", "--show", "price-paths", "--prices", str(p), "-f", "json"])
    assert r.exit_code == 0, r.output
    paths = pd.DataFrame(json.loads(r.stdout))
    g = paths[paths.model == "Gemini 4 Carbon"].iloc[0]
    # hand: the chat mix blends input and output 1:1 here: bundled 4 in / 20 out -> 12, the added
    # 2 in / 10 out -> 6 USD/M, the same model at the same provider: a -50% path ending on the added date
    assert g.last_date.startswith("2027-01-15") and g.n_dates == 2
    assert (g.first_usd_per_m_tok, g.last_usd_per_m_tok, g.change_frac) == (12.0, 6.0, -0.5)
    assert "1 price row(s) of mine.csv" in r.stderr  # Acme Ultra has no characteristics
    bundled = pi.like_for_like_paths(pi.hedonic_sample(measure="blended"), measure="blended")
    assert "2027-01-15" not in " ".join(map(str, bundled.last_date))


@pytest.mark.slow  # the whole dashboard twice (~15 s cold)
def test_watch_prices_recomputes_the_price_metric(tmp_path, bundled_prices):
    from tokenomics.watch import watch

    same = tmp_path / "same.csv"
    bundled_prices.to_csv(same, index=False)
    mine = tmp_path / "mine.csv"
    _with_cut(bundled_prices).to_csv(mine, index=False)
    base = watch(n_boot=0, n_draws=20).to_frame()
    # the bundled list given as a file gives exactly the bundled dashboard (its rows cited by file name)
    again = watch(n_boot=0, n_draws=20, prices=same).to_frame()
    assert again.loc[0, "sources"] == base.loc[0, "sources"].replace("api_prices rows", "same.csv rows")
    pd.testing.assert_frame_equal(again.drop(columns="sources"), base.drop(columns="sources"))
    d = watch(n_boot=0, n_draws=20, prices=mine)
    got, ref = d.to_frame().set_index("metric"), base.set_index("metric")
    assert got.loc["price", "latest"].startswith("2027-01-15: Gemini 4 Carbon -50%")  # hand: 8 -> 4 USD/M
    assert got.loc["price", "as_of"] > ref.loc["price", "as_of"]
    # two more 100B+ list prices move the fitted decline (1.76x/yr -> 1.68x/yr when measured)
    assert got.loc["price", "price_decline_factor_per_year"] != ref.loc["price", "price_decline_factor_per_year"]
    assert "1 price rows of models without characteristics" in got.loc["price", "trend"]
    assert got.loc["price", "sources"].startswith("mine.csv rows ")  # the rows cited are the file's
    pd.testing.assert_series_equal(got.loc["megakernel"], ref.loc["megakernel"])  # other metrics untouched
    assert len(d.prices) == len(bundled_prices) + 2
    paths = d.write(tmp_path / "out")
    assert {p.name for p in paths} >= {"watch.md", "watch_price.png"}


# -- tk.plot.frontier over several systems ------------------------------------------------------

@pytest.fixture(scope="module")
def systems_frontier():
    import tokenomics as tk

    return {"8x H200": tk.plotdata.frontier("h200", "llama-3.1-70b", system="dgx-h200"),
            "8x B200": tk.plotdata.frontier(None, "llama-3.1-70b", system="dgx-b200")}


def _curve(ax, label):
    (line,) = [ln for ln in ax.get_lines() if ln.get_label() == label]
    return np.asarray(line.get_xdata(), float), np.asarray(line.get_ydata(), float)


def test_plot_frontier_dict_of_systems_one_curve_each(systems_frontier):
    import matplotlib

    matplotlib.use("Agg")
    import tokenomics as tk

    ax = tk.plot.frontier(systems_frontier)
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["8x H200", "8x B200"]
    for label, d in systems_frontier.items():
        (frame,) = d.values()
        assert frame["system"].iloc[0] == {"8x H200": "dgx-h200", "8x B200": "dgx-b200"}[label]
        x, y = _curve(ax, label)
        ok = frame[np.isfinite(frame.usd_per_m_output_tok)]
        # the curve is the frame's points, by speed per user (the data drawn, not a recomputation)
        np.testing.assert_allclose(np.sort(x), np.sort(ok.tok_per_s_per_user.to_numpy(float)))
        assert y.min() == ok.usd_per_m_output_tok.min()
    # B200 serves the same model cheaper than H200 at its cheapest batch (both priced by the chain)
    assert _curve(ax, "8x B200")[1].min() < _curve(ax, "8x H200")[1].min()
    matplotlib.pyplot.close(ax.figure)


def test_plot_frontier_list_and_nested_dicts_keep_every_curve(systems_frontier):
    import matplotlib

    matplotlib.use("Agg")
    import tokenomics as tk

    both = tk.plotdata.frontier(None, "llama-3.1-70b", system=["dgx-h200", "dgx-b200"])
    assert list(both) == ["dgx-h200 / llama-3.1-70b (engine)", "dgx-b200 / llama-3.1-70b (engine)"]
    ax = tk.plot.frontier({"NVIDIA 8-GPU": both})
    assert [t.get_text() for t in ax.get_legend().get_texts()] == [f"NVIDIA 8-GPU: {k}" for k in both]
    same = list(systems_frontier["8x H200"].values())[0]
    ax = tk.plot.frontier([same, same])  # two curves with one label: both kept, numbered
    assert [t.get_text() for t in ax.get_legend().get_texts()] == [
        "dgx-h200 / llama-3.1-70b", "dgx-h200 / llama-3.1-70b (2)"]
    matplotlib.pyplot.close("all")


def test_plot_frontier_name_instead_of_data_says_how():
    import tokenomics as tk
    from tokenomics.errors import ValidationError

    with pytest.raises(ValidationError, match=r"'8x H200' is a name \('dgx-h200'\).*plotdata.frontier\(None"):
        tk.plot.frontier({"8x H200": "dgx-h200"})
    with pytest.raises(ValidationError, match="one hardware name or None"):
        tk.plotdata.frontier(["h200", "b200"], "llama-3.1-8b", system="dgx-h200")


# -- --electricity on market and forecast -----------------------------------------------------

@pytest.fixture()
def two_market_rows(tmp_path):
    from pathlib import Path

    from tokenomics import market as mk

    df = pd.read_csv(Path(sweep.__file__).parent / "datasets" / "market_prices.csv")
    rows = df[df.model == "deepseek-v3"].head(2)
    assert len(rows) == 2
    p = tmp_path / "two.csv"
    rows.to_csv(p, index=False)
    return p


def test_market_electricity_kept_as_a_column_and_linear(two_market_rows):
    from tokenomics import market as mk
    from tokenomics.econ.tco import param

    base = mk.market(two_market_rows)
    lo = mk.market(two_market_rows, electricity_usd_per_kwh=0.05)
    hi = mk.market(two_market_rows, electricity_usd_per_kwh=0.30)
    assert (base.electricity_usd_per_kwh == param("electricity_usd_per_kwh")).all()  # the dataset default
    assert (lo.electricity_usd_per_kwh == 0.05).all() and (hi.electricity_usd_per_kwh == 0.30).all()
    assert (hi.batch == lo.batch).all()  # the same operating point: only the cost of power moves
    # cost is linear in the electricity price at a fixed operating point: the default lies on the line
    slope = (hi.cost_usd_per_m_output_tok - lo.cost_usd_per_m_output_tok) / 0.25
    assert (slope > 0).all()
    np.testing.assert_allclose(lo.cost_usd_per_m_output_tok + slope * (param("electricity_usd_per_kwh") - 0.05),
                               base.cost_usd_per_m_output_tok, rtol=1e-9)
    assert (hi.implied_margin_frac < base.implied_margin_frac).all()


def test_market_cli_electricity(two_market_rows, capsys):
    r = CliRunner().invoke(app, ["market", "--prices", str(two_market_rows), "--electricity", "0.3", "-f", "json"])
    assert r.exit_code == 0, r.output
    assert [x["electricity_usd_per_kwh"] for x in json.loads(r.stdout)] == [0.3, 0.3]
    r = CliRunner().invoke(app, ["market", "--prices", str(two_market_rows), "--electricity", "0.3"])
    assert "electricity USD 0.3/kWh" in " ".join(r.stdout.split())
    for args, msg in ((["--electricity", "-1"], "electricity_usd_per_kwh must be a non-negative finite number"),
                      (["--electricity", "0.1", "--cost", "hyperscaler-owned"], "applies to the bottom-up cost")):
        with pytest.raises(SystemExit) as exc:
            main(["market", "--prices", str(two_market_rows), *args])
        err = capsys.readouterr().err
        assert exc.value.code == 2 and msg in err and err.count("\n") == 1


def test_serving_basis_electricity_moves_cost_by_facility_power():
    from tokenomics.econ.tco import param
    from tokenomics.forecast.infrastructure import serving_basis

    base = serving_basis()
    hi = serving_basis(electricity_usd_per_kwh=0.30)
    assert base["electricity_usd_per_kwh"] == param("electricity_usd_per_kwh") and hi["electricity_usd_per_kwh"] == 0.30
    # hand: a busy chip draws facility_w_per_chip from the grid every hour it is costed, so the
    # chip-hour costs facility kW x the price difference more; nothing else moves
    d_cost = hi["cost_usd_per_chip_h"] - base["cost_usd_per_chip_h"]
    assert d_cost == pytest.approx(base["facility_w_per_chip"] / 1e3 * (0.30 - base["electricity_usd_per_kwh"]), rel=1e-9)
    assert hi["tok_per_s_per_chip"] == base["tok_per_s_per_chip"]


def test_forecast_infra_and_capacity_keep_electricity(capsys):
    r = CliRunner().invoke(app, ["forecast", "--show", "infra", "--series", "openrouter", "--electricity", "0.3",
                                 "-f", "json"])
    assert r.exit_code == 0, r.output
    rows = json.loads(r.stdout)
    assert rows and all(x["electricity_usd_per_kwh"] == 0.3 for x in rows)
    r = CliRunner().invoke(app, ["forecast", "--show", "capacity", "--series", "openrouter", "--electricity", "0.3",
                                 "-f", "json"])
    assert r.exit_code == 0, r.output
    assert all(x["electricity_usd_per_kwh"] == 0.3 for x in json.loads(r.stdout))
    for args, msg in ((["--show", "forecast"], "--electricity prices the serving chips of --show infra or capacity"),
                      (["--show", "infra", "--cost", "rental-3yr"], "applies to the bottom-up cost")):
        with pytest.raises(SystemExit) as exc:
            main(["forecast", "--electricity", "0.1", *args])
        err = capsys.readouterr().err
        assert exc.value.code == 2 and msg in err and err.count("\n") == 1
