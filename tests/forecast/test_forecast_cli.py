"""CLI and example tests for ``tokenomics forecast``."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from tokenomics.cli import app, main
from tokenomics.forecast import forecast

ROOT = Path(__file__).resolve().parents[2]
runner = CliRunner()


def test_json_is_the_library_frame_for_google():
    res = runner.invoke(app, ["forecast", "--series", "google", "--format", "json"])
    assert res.exit_code == 0, res.output
    rows = json.loads(res.stdout)
    expected = forecast("google").to_frame("annual")
    assert len(rows) == len(expected)
    for k in ("date", "tokens_per_day", "tokens_per_day_lo_95", "tokens_per_day_hi_95",
              "tokens_per_day_lo_80", "tokens_per_day_hi_80"):
        assert k in rows[0]
    assert rows[-1]["date"] == "2030-12-15"  # ISO date of the mid-month the row stands for
    assert rows[-1]["tokens_per_day"] == pytest.approx(expected["tokens_per_day"].iloc[-1])


def test_csv_monthly_china_fit_through():
    res = runner.invoke(app, ["forecast", "-s", "china", "--fit-through", "2025-12",
                              "--freq", "monthly", "--format", "csv"])
    assert res.exit_code == 0, res.output
    df = pd.read_csv(io.StringIO(res.stdout))
    lib = forecast("china", fit_through="2025-12").to_frame("monthly")
    assert list(df.columns) == list(lib.columns)
    assert df["date"].iloc[0] == "2026-01-15" and df["date"].iloc[-1] == "2030-12-15"
    pd.testing.assert_series_equal(df["tokens_per_day"], lib["tokens_per_day"], check_names=False)


@pytest.mark.parametrize("show,col", [("scenarios", "bass_q"), ("references", "share_of_goldman_2030"),
                                      ("infra", "n_chips")])
def test_show_views_csv(show, col):
    res = runner.invoke(app, ["forecast", "-s", "google", "--scenario", "base", "--show", show,
                              "--format", "csv"])
    assert res.exit_code == 0, res.output
    assert col in pd.read_csv(io.StringIO(res.stdout)).columns


@pytest.mark.integration  # builds the backtest's report: every model's rolling-origin points (~18 s)
def test_show_backtest_csv():
    test_show_views_csv("backtest", "mae_vs_naive")


def test_table_output_and_out_dir(tmp_path):
    res = runner.invoke(app, ["forecast", "-s", "google", "--scenario", "high", "--out", str(tmp_path)])
    assert res.exit_code == 0, res.output
    assert "2030-12" in res.stdout and "median" in res.stdout
    for name in ("forecast_annual.csv", "forecast_monthly.csv", "backtest.csv", "backtest_coverage.csv",
                 "backtest_series.csv", "history.csv", "references.csv", "forecast_fan.png"):
        assert (tmp_path / name).stat().st_size > 0
    assert (tmp_path / "forecast_fan.png").read_bytes()[:4] == b"\x89PNG"
    assert not list(tmp_path.glob(".*tmp"))  # atomic writes leave no temporaries


def test_show_infra_prices_the_stated_deployment():
    """--show infra sizes the forecast with the deployment given on the command line, the same
    numbers the library's plan_infrastructure gives."""
    from tokenomics.forecast import plan_infrastructure

    argv = ["forecast", "-s", "google", "--show", "infra", "--system", "dgx-b200", "-m", "llama-3.1-70b",
            "-w", "chat", "--target-tok-s-user", "30", "--cost", "hyperscaler-owned@2026-07", "--format", "csv"]
    res = runner.invoke(app, argv)
    assert res.exit_code == 0, res.output
    df = pd.read_csv(io.StringIO(res.stdout))
    lib = plan_infrastructure(forecast("google"), "dgx-b200", model="llama-3.1-70b", workload="chat",
                              target_tok_per_s_per_user=30, cost="hyperscaler-owned@2026-07").to_frame()
    assert df["deployment"].iloc[0].startswith("llama-3.1-70b on dgx-b200")
    assert (df["cost_basis"] == "hyperscaler-owned 2026-07").all()
    np.testing.assert_allclose(df["n_chips"], lib["n_chips"], rtol=1e-9)
    np.testing.assert_allclose(df["n_nodes"], df["n_chips"] / 8)


def test_show_infra_takes_a_deployment_file_and_an_execution_plan(tmp_path):
    """--deployment FILE (the TOML tokenomics price reads) and --execution state a deployment the
    flags alone cannot (Kimi K3 on the SD200 at the showdown's layout with super operators): the
    same numbers as plan_infrastructure on that file's Deployment; -e alone changes the default
    deployment's plan."""
    from tokenomics.deployment import from_file
    from tokenomics.forecast import plan_infrastructure

    toml = tmp_path / "k3.toml"
    toml.write_text('[deployment]\nmodel = "kimi-k3"\nsystem = "sd200-ultra"\nexecution = "super"\n'
                    "tp = 32\nep = 32\nmoe_tp = 4\n")
    res = runner.invoke(app, ["forecast", "-s", "google", "--show", "infra", "--deployment", str(toml),
                              "--cost", "1.23", "--format", "csv"])
    assert res.exit_code == 0, res.output
    df = pd.read_csv(io.StringIO(res.stdout))
    assert df["deployment"].iloc[0].startswith("kimi-k3 on sd200-ultra tp32-ep32x4") and "super" in df["deployment"].iloc[0]
    lib = plan_infrastructure(forecast("google"), deployment=from_file(toml), cost=1.23).to_frame()
    np.testing.assert_allclose(df["n_chips"], lib["n_chips"], rtol=1e-9)
    res = runner.invoke(app, ["forecast", "-s", "google", "--show", "infra", "-e", "megakernel", "--format", "csv"])
    assert res.exit_code == 0, res.output
    assert "megakernel" in pd.read_csv(io.StringIO(res.stdout))["deployment"].iloc[0]


def test_show_infra_says_which_series_are_counted_inside_others():
    res = runner.invoke(app, ["forecast", "-s", "all", "--show", "infra"], env={"COLUMNS": "400"})
    assert res.exit_code == 0, res.output
    text = " ".join(res.stdout.split())
    assert "not to be added to it: doubao in china, google-gemini-api in google, openrouter-china in openrouter" in text


@pytest.mark.parametrize("argv,needle", [
    (["--system", "dgx-h100", "-m", "kimi-k3"], "does not fit on dgx-h100"),
    (["--target-tok-s-user", "5000"], "no batch reaches 5000 tok/s per user"),
    (["--system", "tpu-v7-64"], "--cost"),
    (["-w", "chats"], "Did you mean 'chat'"),
    (["--cache-hit", "56.3"], "did you mean 0.563"),
    (["-e", "supr"], "Did you mean 'super'"),
    (["--deployment", "/nonexistent/k3.toml"], "not found"),
    (["--serving", "coloc"], "Did you mean 'colocated'"),
    (["--serving", "colocated", "--cache-hit", "0.5"], "disaggregated sizing only"),
])
def test_show_infra_bad_deployment_is_one_line_exit_2(argv, needle, capsys, tmp_path):
    out = tmp_path / "out"
    with pytest.raises(SystemExit) as e:
        main(["forecast", "-s", "google", "--show", "infra", "--out", str(out), *argv])
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert needle in err and "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert not out.exists()


def test_added_history_with_an_unknown_region_is_one_line_exit_2(capsys, tmp_path):
    f = tmp_path / "extra.csv"
    f.write_text("series,date,tokens_per_day,source,region\nacme,2026-01,1e12,https://example.com,mars\n")
    out = tmp_path / "out"
    with pytest.raises(SystemExit) as e:
        main(["forecast", "--add-history", str(f), "--out", str(out)])
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert "Unknown region 'mars'" in err and "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert not out.exists()


def test_show_replay_tabulates_the_month_end_replay(tmp_path):
    """--show replay is realtime_backtest's scores summarised by replay_coverage (three month-ends
    here, 2025-06 to 2025-08, to keep the test short), and --out writes both tables."""
    from tokenomics.forecast import realtime_backtest
    from tokenomics.forecast.backtest import replay_coverage

    res = runner.invoke(app, ["forecast", "--show", "replay", "--fit-through", "2025-08", "--format", "csv",
                              "--out", str(tmp_path)])
    assert res.exit_code == 0, res.output
    df = pd.read_csv(io.StringIO(res.stdout))
    scores = realtime_backtest(last="2025-08")
    lib = replay_coverage(scores)
    assert list(df.columns) == list(lib.columns) and len(df) == len(lib)
    np.testing.assert_allclose(df["coverage_80"], lib["coverage_80"])
    row = df[(df["sample"] == "all") & (df["horizon"] == "all")].iloc[0]
    assert row["n_points"] == len(scores) and row["coverage_95"] == pytest.approx(scores["in_95"].mean())
    assert "month-ends (2025-06 to 2025-08)" in res.stderr
    assert len(pd.read_csv(tmp_path / "replay.csv")) == len(scores)
    assert (tmp_path / "replay_coverage.csv").stat().st_size > 0


def test_coverage_stats_by_hand():
    """Four points, three inside 80 %, all inside 95 %: coverage 0.75 / 1; widths 1, 2, 3, 4 ->
    median 2.5; |errors| 0.1, 0.2, 0.3, 0.4 -> mae 0.25; random walk 0.5 on three points (one
    NaN) -> 0.5, ratio 0.5 (hand calculation)."""
    from tokenomics.forecast.backtest import coverage_stats

    r = coverage_stats([True, True, True, False], [True] * 4, [1, 2, 3, 4], [0.1, -0.2, 0.3, -0.4],
                       [0.5, -0.5, np.nan, 0.5], ["a", "a", "b", "b"])
    assert r == pytest.approx({"n_points": 4, "n_series": 2, "coverage_80": 0.75, "coverage_95": 1.0,
                               "median_width_95_log10": 2.5, "mae_log10": 0.25, "mae_naive_log10": 0.5,
                               "mae_vs_naive": 0.5})


def test_table_caption_lists_each_set_of_weights_once():
    """Series sharing weights (here all with saturating models vs those too short for them) are
    named after one copy of the weights instead of repeating them per series."""
    res = runner.invoke(app, ["forecast"], env={"COLUMNS": "400"})
    assert res.exit_code == 0, res.output
    lib = forecast().to_frame("annual").groupby("series")["models"].last()
    caption = " ".join(res.stdout[res.stdout.index("model weights from the backtest"):].split())
    for weights, names in lib.groupby(lib).groups.items():
        assert caption.count(weights) == 1
        assert f"{weights} ({', '.join(sorted(names))})" in caption


@pytest.mark.parametrize("argv,needle", [
    (["forecast", "--series", "googel"], "Did you mean 'google'"),
    (["forecast", "--show", "replay", "--series", "googel"], "Did you mean 'google'"),
    (["forecast", "--show", "replay", "--fit-through", "2025-03"], "nothing to replay"),
    (["forecast", "--show", "replay", "--scenario", "base"], "drop --scenario"),
    (["forecast", "--series", "china", "--fit-through", "2025-01"], "at least 3"),
    (["forecast", "--series", "china", "--fit-through", "2025-13"], "month must be 01-12"),
])
def test_bad_input_is_one_line_exit_2(argv, needle, capsys):
    with pytest.raises(SystemExit) as exc:
        main(argv)
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert needle in err and len(err.strip().splitlines()) == 1 and "Traceback" not in err


def test_non_positive_volume_in_history_file_is_exit_2(tmp_path, capsys):
    p = tmp_path / "h.csv"
    p.write_text("series,date,tokens_per_day\nx,2024-01,1e12\nx,2024-06,-3\nx,2025-01,3e12\n")
    with pytest.raises(SystemExit) as exc:
        main(["forecast", "--history", str(p)])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert "positive" in err and len(err.strip().splitlines()) == 1


def test_help_lists_options():
    res = runner.invoke(app, ["forecast", "--help"])
    assert res.exit_code == 0
    for opt in ("--series", "--fit-through", "--scenario", "--out", "--format"):
        assert opt in res.stdout


@pytest.mark.slow
def test_example_runs(tmp_path):
    out = subprocess.run([sys.executable, str(ROOT / "examples" / "forecast_demand.py"),
                          "--series", "china", "--out", str(tmp_path)],
                         capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    assert "Backtest" in out.stdout and "base:" in out.stdout
    assert "the IEA projects for every data centre in china (277 TWh)" in out.stdout  # dc_electricity.csv, 2030
    assert (tmp_path / "forecast_fan.png").exists()


def _write(tmp_path, name, text):
    p = tmp_path / name
    p.write_text(text)
    return p


@pytest.mark.slow
def test_add_history_adds_a_series_to_the_bundled_ones(tmp_path):
    p = _write(tmp_path, "add.csv", "series,date,tokens_per_day,source\n"
               "acme,2024-03,1e11,https://example.com/a\nacme,2024-09-30,5e11,https://example.com/b\n"
               "acme,2025-03,2e12,https://example.com/c\n")
    res = runner.invoke(app, ["forecast", "--add-history", str(p), "--format", "csv"])
    assert res.exit_code == 0, res.output
    df = pd.read_csv(io.StringIO(res.stdout))
    assert {"acme", "google", "china"} <= set(df["series"])
    # --history replaces: only the file's series remain
    res = runner.invoke(app, ["forecast", "--history", str(p), "--format", "csv"])
    assert res.exit_code == 0, res.output
    assert set(pd.read_csv(io.StringIO(res.stdout))["series"]) == {"acme"}


@pytest.mark.parametrize("text,needle", [
    ("series,date,tokens_per_day\nacme,2024-03,1e11\n", "missing columns ['source']"),
    ("series,date,tokens_per_day,source\nacme,2024/03/01,1e11,x\n", "row 1 (line 2): bad date '2024/03/01'; expected an observation date YYYY-MM or YYYY-MM-DD"),
    ("series,date,tokens_per_day,source\nacme,2024-13,1e11,x\n", "row 1 (line 2): bad date '2024-13'"),
    ("series,date,tokens_per_day,source\nacme,2024-03,-1,x\n", "positive"),
    ("series,date,tokens_per_day,source\nacme,2024-03,1e11,x\nacme,2024-03,2e11,y\n",
     "2 observations dated 2024-03-15"),
])
def test_bad_added_history_is_one_line_exit_2_nothing_written(tmp_path, capsys, text, needle):
    p = _write(tmp_path, "bad.csv", text)
    out = tmp_path / "out"
    with pytest.raises(SystemExit) as exc:
        main(["forecast", "--add-history", str(p), "--out", str(out)])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert needle in err and len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert not out.exists()


@pytest.mark.parametrize("argv,needle", [
    (["forecast", "--fit-through", ""], "date is empty"),
    (["forecast", "--fit-through", "2024-06"], "no series has 3 observations"),
])
def test_bad_fit_through_is_one_line_exit_2(argv, needle, capsys):
    with pytest.raises(SystemExit) as exc:
        main(argv)
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert needle in err and len(err.strip().splitlines()) == 1


def test_show_backtest_reports_coverage_and_width_by_horizon():
    res = runner.invoke(app, ["forecast", "--show", "backtest", "--format", "csv"])
    assert res.exit_code == 0, res.output
    df = pd.read_csv(io.StringIO(res.stdout))
    assert {"sample", "horizon", "coverage_80", "coverage_95", "median_width_95_log10"} <= set(df.columns)
    assert list(df["sample"].unique()) == ["tuning", "holdout"]
    assert (df.groupby("sample", sort=False)["horizon"].last() == "all").all()


def test_show_added_scores_added_rows_with_the_method_fitted_without_them(tmp_path, capsys, demand_as_of):
    """--history (the bundled rows without the sixth pass) + --add-history (its nine rows)
    --show added: the 45 scores of the library's score_new_points (64 % / 87 % with each series' own
    record handing OpenRouter to drift; 53 % / 82 % before it, 51 % before stop 54's observation-noise
    bound); without
    --add-history it is one line and exit 2."""
    df, late = demand_as_of(6)
    df[~late].to_csv(tmp_path / "before.csv", index=False)
    df.loc[late, ["series", "date", "tokens_per_day", "source"]].to_csv(tmp_path / "added.csv", index=False)
    res = runner.invoke(app, ["forecast", "--history", str(tmp_path / "before.csv"), "--add-history",
                              str(tmp_path / "added.csv"), "--show", "added", "--format", "csv"])
    assert res.exit_code == 0, res.output
    out = pd.read_csv(io.StringIO(res.stdout))
    assert len(out) == 45 and out["in_80"].sum() == 29 and out["in_95"].sum() == 39
    assert out["target"].str.match(r"^\d{4}-\d{2}-\d{2}$").all()
    with pytest.raises(SystemExit) as exc:
        main(["forecast", "--show", "added"])
    err = capsys.readouterr().err.strip()
    assert exc.value.code == 2 and "--add-history" in err and len(err.splitlines()) == 1


def test_the_default_table_shows_what_supply_serves_beside_each_median():
    """`tokenomics forecast` puts the served rate and its binding constraint beside each annual
    median (a median must not read as servable where chips or power cap it): the served
    rate is supply_capacity's at the library's defaults, never above the median, and the caption
    names the supply-bound series."""
    import json

    from typer.testing import CliRunner

    from tokenomics.cli import app
    from tokenomics.forecast import forecast
    from tokenomics.forecast.capacity import supply_capacity

    r = CliRunner().invoke(app, ["forecast", "--format", "json"])
    assert r.exit_code == 0, r.output
    rows = json.loads(r.stdout)
    assert all(x["served_tokens_per_day"] <= x["tokens_per_day"] * (1 + 1e-12) for x in rows)
    assert {x["binding"] for x in rows} <= {"demand", "chips", "power"}
    cap = supply_capacity(forecast()).to_frame().set_index(["series", "year"])
    china = next(x for x in rows if x["series"] == "china" and x["date"].startswith("2030"))
    assert china["served_tokens_per_day"] == cap.loc[("china", 2030), "served_tokens_per_day"]
    assert china["binding"] == "power"
    table = CliRunner().invoke(app, ["forecast"], env={"COLUMNS": "200"})
    assert "supply-bound: china from 2026" in " ".join(table.output.split())
