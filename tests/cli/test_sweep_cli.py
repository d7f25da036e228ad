"""CLI: ``tokenomics sweep`` and ``tokenomics sweep-mc`` (CliRunner; exit code 2 via main)."""

from __future__ import annotations

import io
import json
import subprocess
import sys

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
batch = [1, 8, 64]
context_tok = [512, 4096]
utilization_frac = [0.5, 1.0]
margin_frac = [0.0, 0.5]

[sweep]
chunk_configs = 10
"""


@pytest.fixture()
def grid_file(tmp_path):
    p = tmp_path / "grid.toml"
    p.write_text(GRID)
    return p


def test_csv_is_exactly_the_summary_frame(grid_file):
    r = CliRunner().invoke(app, ["sweep", str(grid_file), "--format", "csv", "--no-progress"])
    assert r.exit_code == 0, r.output
    got = pd.read_csv(io.StringIO(r.stdout))
    ref = sweep.run(sweep.load_grid(grid_file)).to_frame()
    pd.testing.assert_frame_equal(got, ref, check_dtype=False)


def test_json_and_out_file(grid_file, tmp_path):
    out = tmp_path / "rows.parquet"
    r = CliRunner().invoke(app, ["sweep", str(grid_file), "--out", str(out), "-f", "json", "--no-progress"])
    assert r.exit_code == 0, r.output
    rows = json.loads(r.stdout)
    assert [x["execution"] for x in rows] == ["graph", "engine"]
    assert sum(x["n_configs"] for x in rows) == 48
    assert len(pd.read_parquet(out)) == 48


def test_table_output(grid_file):
    r = CliRunner().invoke(app, ["sweep", str(grid_file), "--no-progress"])
    assert r.exit_code == 0, r.output
    assert "48 configurations" in r.stdout and "engine local" in r.stdout


@pytest.mark.parametrize("text, args, msg", [
    (GRID.replace("batch =", "btach ="), [], "Did you mean 'batch'"),
    (GRID.replace("batch = [1, 8, 64]", "batch = []"), [], "axis 'batch' is empty"),
    (GRID.replace('"h200"', '"h2000"'), [], "Did you mean 'h200'"),
    (GRID, ["--out", "x.xlsx"], ".parquet or .csv"),
    (GRID, ["--engine", "spark"], "engine must be one of local, dask"),
])
def test_bad_input_exit_2_one_line(tmp_path, capsys, text, args, msg):
    p = tmp_path / "g.toml"
    p.write_text(text)
    with pytest.raises(SystemExit) as exc:
        main(["sweep", str(p), "--no-progress", *args])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert msg in err and err.count("\n") == 1 and "Traceback" not in err
    assert not (tmp_path / "x.xlsx").exists()


def test_too_large_for_csv_exit_2_before_work(tmp_path, capsys, monkeypatch, grid_file):
    monkeypatch.setattr(sweep, "CSV_MAX_ROWS", 40)
    with pytest.raises(SystemExit) as exc:
        main(["sweep", str(grid_file), "--out", str(tmp_path / "r.csv"), "--no-progress"])
    assert exc.value.code == 2
    assert "limited to 40 rows" in capsys.readouterr().err
    assert not (tmp_path / "r.csv").exists()


def test_sweep_mc_json_is_to_frame():
    r = CliRunner().invoke(app, ["sweep-mc", "--samples", "20000", "--chunk-samples", "7000", "--seed", "1",
                                 "-f", "json"])
    assert r.exit_code == 0, r.output
    got = json.loads(r.stdout)[0]
    ref = sweep.price_monte_carlo("h200", "llama-3.1-8b", n_samples=20000, chunk_samples=7000, seed=1).to_frame()
    assert got["n_chunks"] == 3 and got["price_usd_per_m_tok_p50"] == pytest.approx(ref.price_usd_per_m_tok_p50[0],
                                                                                     rel=1e-12)


def test_sweep_mc_prices_the_point_price_prices():
    """Monte Carlo and `price` run one default plan (engine): the MC median sits near the point
    price. Under the graph plan (once sweep-mc's default) gpt-oss-120b's experts ran one kernel
    each and its median came out 7x the `price` command's USD 0.34 per M output tokens."""
    from tokenomics.chain import price

    mc = sweep.price_monte_carlo("h200", "gpt-oss-120b", n_samples=20000, seed=1).to_frame()
    point = float(price("h200", "gpt-oss-120b", batch=32, cost="bottom-up").to_frame().usd_per_m_output_tok[0])
    assert mc.price_usd_per_m_tok_p5[0] < point < mc.price_usd_per_m_tok_p95[0]


def test_cli_modules_import_no_heavy_libraries():
    """tokenomics --help stays fast: importing the CLI pulls in none of pandas/pyarrow/dask."""
    code = ("import sys, tokenomics.cli.sweep, tokenomics.cli; "
            "print(sorted(m for m in ('pandas', 'pyarrow', 'dask', 'distributed', 'scipy') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_help_lists_sweep_commands():
    r = CliRunner().invoke(app, ["--help"])
    assert "sweep" in r.stdout and "sweep-mc" in r.stdout


def test_progress_bar_only_after_one_second(monkeypatch):
    from tokenomics.cli.sweep import _Bar

    bar = _Bar(True, "sweep")
    bar(1, 10)
    assert bar.progress is None  # a fast sweep shows no bar
    bar.t0 -= 2.0
    bar(5, 10)
    assert bar.progress is not None and bar.progress.tasks[0].completed == 5
    bar.close()
    off = _Bar(False, "sweep")
    off.t0 -= 2.0
    off(5, 10)
    assert off.progress is None


def test_interrupt_exit_130_and_message(grid_file, monkeypatch, tmp_path, capsys):
    def boom(*a, **k):
        raise KeyboardInterrupt

    monkeypatch.setattr(sweep, "run", boom)
    with pytest.raises(SystemExit) as ex:  # the entry point says it, for every command
        main(["sweep", str(grid_file), "--out", str(tmp_path / "r.parquet")])
    assert ex.value.code == 130
    assert "Interrupted: stopped before finishing; no file half-written." in capsys.readouterr().err
    assert not (tmp_path / "r.parquet").exists()
