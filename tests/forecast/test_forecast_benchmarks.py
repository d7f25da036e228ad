"""The backtest's benchmarks: drift (constant growth of the last year) and the random walk beside
the forecast, per scored point and per sample."""

import io
import json

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from tokenomics.cli import app
from tokenomics.forecast.backtest import coverage_stats, drift_slope, run_backtest

runner = CliRunner()


def test_drift_slope_is_the_growth_of_the_last_year():
    """Hand calculations: log10 values 0, 1, 1.5 at 2023.0, 2024.0, 2024.5. One year before
    2024.5 is 2023.5, halfway between the first two points: 0.5 interpolated; slope (1.5 - 0.5)
    / 1 = 1 decade/year. A series shorter than a year uses its first point: 0 -> 1.5 over 0.5 y = 3."""
    assert drift_slope([2023.0, 2024.0, 2024.5], [0.0, 1.0, 1.5]) == pytest.approx(1.0)
    assert drift_slope([2024.0, 2024.5], [0.0, 1.5]) == pytest.approx(3.0)
    assert drift_slope([2024.0, 2024.0], [1.0, 2.0]) == 0.0  # no time span: no growth


def test_coverage_stats_with_drift_by_hand():
    """Errors 0.1, 0.2, 0.3, 0.4 (mae 0.25); drift's 0.5, 0.5, 0.5, NaN -> mae 0.5, ratio 0.5
    (hand calculation); without drift errors the keys are absent."""
    r = coverage_stats([True] * 4, [True] * 4, [1] * 4, [0.1, -0.2, 0.3, -0.4], [1.0] * 4, ["a"] * 4,
                       drift_error_log10=[0.5, -0.5, 0.5, np.nan])
    assert r["mae_drift_log10"] == pytest.approx(0.5) and r["mae_vs_drift"] == pytest.approx(0.5)
    assert "mae_vs_drift" not in coverage_stats([True], [True], [1], [0.1], [0.2], ["a"])


def _history():
    """Two tuning series and one held-out, quarterly, growing 10x/year then 3x/year."""
    rows = []
    dates = pd.date_range("2023-01-01", periods=8, freq="QS")
    for k, (name, hold) in enumerate((("a", 0), ("b", 0), ("c", 1))):
        t = np.arange(8) / 4.0
        logv = 12 + k * 0.3 + np.where(t < 1, t, 1 + np.log10(3) * (t - 1))
        rows += [{"series": name, "date": d.strftime("%Y-%m-%d"), "tokens_per_day": 10**v, "holdout": hold}
                 for d, v in zip(dates, logv)]
    return pd.DataFrame(rows)


@pytest.fixture(scope="module")
def bt():
    return run_backtest(_history())


def test_scored_points_carry_the_three_errors(bt):
    """Every scored point has the forecast's, drift's and the random walk's errors; the drift
    error is the extrapolated last-year growth minus the truth, recomputed here by hand for one
    point of the held-out series (origin its 5th point, target its 6th)."""
    p = bt.scored_points()
    assert {"model_err_dec", "drift_err_dec", "rw_err_dec", "in_80", "in_95"} <= set(p.columns)
    assert set(p["sample"]) == {"tuning", "holdout"}
    assert np.isfinite(p[["model_err_dec", "drift_err_dec", "rw_err_dec"]].to_numpy(float)).all()
    row = p[(p["series"] == "c") & np.isclose(p["target_year"], p["target_year"].min() + 0.25 * 2)
            & np.isclose(p["origin_year"], p["target_year"].min() + 0.25)]
    assert len(row) == 1
    # 5 training points (t = 0 .. 1 y); the value one year before the last point is the first
    # (10 x growth over the first year), so drift predicts one more decade/year for a quarter
    # (+0.25) where the truth grew log10(3)/4: error 0.25 - log10(3)/4 decades
    assert row["drift_err_dec"].iloc[0] == pytest.approx(0.25 - np.log10(3) / 4, abs=2e-3)
    assert row["rw_err_dec"].iloc[0] == pytest.approx(-np.log10(3) / 4, abs=2e-3)


def test_benchmarks_summarise_the_scored_points(bt):
    p, b = bt.scored_points(), bt.benchmarks()
    for s, g in p.groupby("sample"):
        r = b.set_index("sample").loc[s]
        assert r["drift_median_abs_err_dec"] == pytest.approx(g["drift_err_dec"].abs().median())
        assert r["beats_drift_frac"] == pytest.approx((g["model_err_dec"].abs() < g["drift_err_dec"].abs()).mean())


def test_cli_backtest_json_is_per_scored_point_and_table_names_drift(tmp_path):
    f = tmp_path / "h.csv"
    _history().to_csv(f, index=False)
    res = runner.invoke(app, ["forecast", "--history", str(f), "--show", "backtest", "--format", "json"])
    assert res.exit_code == 0, res.output
    rec = json.loads(res.stdout)
    rec = rec if isinstance(rec, list) else rec.get("rows", rec)
    assert {"model_err_dec", "drift_err_dec", "rw_err_dec", "in_80", "in_95"} <= set(rec[0])
    res = runner.invoke(app, ["forecast", "--history", str(f), "--show", "backtest", "--format", "csv"])
    assert "mae_vs_drift" in pd.read_csv(io.StringIO(res.stdout)).columns
    res = runner.invoke(app, ["forecast", "--history", str(f), "--show", "backtest"])
    assert "vs drift" in " ".join(res.stdout.split())
