"""One price unit: USD per million tokens in every public frame and every command's default
JSON/CSV; per-1K only on request (``--per 1k``, ``usd_per_k_*`` columns)."""

from __future__ import annotations

import io
import json
import tomllib

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from tokenomics import catalog, chain, sweep
from tokenomics.cli import app
from tokenomics.units import in_unit, is_per_thousand, per_million, per_thousand

runner = CliRunner()

GRID = """
[grid]
hardware = ["h200"]
model = ["llama-3.1-8b"]
execution = ["engine"]
batch = [8, 64]
context_tok = [1024]
"""


def _per_1k_columns(cols) -> list[str]:
    return [str(c) for c in cols if is_per_thousand(c)]


def test_per_million_and_back_by_hand():
    # 0.00015 USD per 1K tokens = 0.15 USD per million (x 1,000); 0.5 Wh per 1K = 0.5 kWh per million
    df = pd.DataFrame({"cost_usd_per_1k_tok": [0.00015], "wh_per_1k_tok": [0.5], "batch": [32]})
    m = per_million(df)
    assert list(m.columns) == ["cost_usd_per_m_tok", "kwh_per_m_tok", "batch"]
    assert m["cost_usd_per_m_tok"][0] == pytest.approx(0.15) and m["kwh_per_m_tok"][0] == 0.5
    k = per_thousand(m)
    assert list(k.columns) == ["cost_usd_per_k_tok", "wh_per_k_tok", "batch"]
    assert k["cost_usd_per_k_tok"][0] == pytest.approx(0.00015)
    with pytest.raises(Exception, match="expected m"):
        in_unit(m, "10k")


def test_a_per_1k_twin_of_a_per_million_column_is_dropped():
    df = pd.DataFrame({"price_usd_per_1k_output_tok": [0.0002], "usd_per_m_output_tok": [0.2]})
    assert list(per_million(df).columns) == ["usd_per_m_output_tok"]


def test_public_frames_speak_per_million():
    r = chain.price("h200", "llama-3.1-8b", batch=np.array([8, 32]))
    frames = {
        "price": r.to_frame(),
        "frontier": chain.frontier("h200", "llama-3.1-8b", batches=[1, 32]).to_frame(),
        "price_at_interactivity": chain.price_at_interactivity("h200", "llama-3.1-8b", tok_per_s_per_user=[50.0],
                                                               batches=[1, 32]),
        "sweep rows": sweep.evaluate(sweep.parse_grid(tomllib.loads(GRID))),
        "sweep summary": sweep.run(sweep.parse_grid(tomllib.loads(GRID))).to_frame(),
        "sweep-mc": sweep.price_monte_carlo("h200", "llama-3.1-8b", n_samples=2000, chunk_samples=1000).to_frame(),
        "disaggregated": chain.disaggregated("b200", "h200", "llama-3.1-8b").to_frame(),
        "api_prices": catalog.load("api_prices"),
        "china_price_cuts": catalog.load("china_price_cuts"),
    }
    from tokenomics.econ import tco, uncertainty

    ci = tco.CostInputs.for_hardware("h200")
    frames["tornado"] = uncertainty.tornado(ci, 600.0, 5000.0).to_frame()
    frames["monte_carlo"] = uncertainty.monte_carlo(ci, 600.0, 5000.0, n_samples=200).to_frame()
    for name, df in frames.items():
        assert _per_1k_columns(df.columns) == [], name
    # the frame's price is the attribute's, x 1,000 (one quantity, two units)
    np.testing.assert_allclose(frames["price"]["usd_per_m_output_tok"], r.price_usd_per_1k_output_tok * 1e3)
    assert "usd_per_m_output_tok_at_low" in frames["tornado"].columns


def test_api_prices_are_stored_per_million():
    # GPT-4 (8k) launched at $30 / $60 per million tokens (OpenAI, 2023-03-14)
    p = catalog.load("api_prices")
    row = p[p["model"] == "GPT-4 (8k)"].iloc[0]
    assert (row["input_usd_per_m_tok"], row["output_usd_per_m_tok"]) == pytest.approx((30, 60))


@pytest.fixture()
def grid_file(tmp_path):
    p = tmp_path / "grid.toml"
    p.write_text(GRID)
    return p


@pytest.mark.parametrize("fmt", ["json", "csv"])
def test_no_command_prints_per_1k_by_default(grid_file, fmt):
    commands = [
        ["price"],
        ["price", "--target-tok-s-user", "50", "--layouts"],
        ["sweep", str(grid_file), "--no-progress"],
        ["sweep-mc", "--samples", "2000", "--chunk-samples", "1000"],
        ["throughput", "-b", "1,8"],
    ]
    for cmd in commands:
        res = runner.invoke(app, [*cmd, "-f", fmt])
        assert res.exit_code == 0, (cmd, res.output)
        if fmt == "json":
            cols = set().union(*(rec.keys() for rec in json.loads(res.stdout)))
        else:
            cols = pd.read_csv(io.StringIO(res.stdout)).columns
        assert _per_1k_columns(cols) == [], cmd


def test_per_1k_on_request(grid_file, tmp_path):
    m = json.loads(runner.invoke(app, ["price", "-f", "json"]).stdout)[0]
    k = json.loads(runner.invoke(app, ["price", "-f", "json", "--per", "1k"]).stdout)[0]
    assert "usd_per_m_output_tok" not in k
    assert k["usd_per_k_output_tok"] == pytest.approx(m["usd_per_m_output_tok"] / 1e3, rel=1e-12)
    out = tmp_path / "rows.csv"
    res = runner.invoke(app, ["sweep", str(grid_file), "--no-progress", "--per", "1k", "-o", str(out), "-f", "json"])
    assert res.exit_code == 0, res.output
    rows = pd.read_csv(out)
    assert "usd_per_k_output_tok" in rows.columns and "usd_per_m_output_tok" not in rows.columns
    want = sweep.evaluate(sweep.parse_grid(tomllib.loads(GRID)))
    np.testing.assert_allclose(rows["usd_per_k_output_tok"], want["usd_per_m_output_tok"] / 1e3, rtol=1e-12)
    assert "best_usd_per_k_output_tok" in json.loads(res.stdout)[0]
    bad = runner.invoke(app, ["price", "--per", "10k"])
    assert bad.exit_code != 0


# ~20 s: every watch frame, the cost trend's twelve layout searches included (integration tier)
@pytest.mark.integration
def test_watch_frames_speak_per_million():
    from tokenomics.watch import watch

    d = watch(n_boot=0, n_draws=20)
    df = d.to_frame()
    assert _per_1k_columns(df.columns) == []
    row = df.set_index("metric").loc["price"]
    # the status text quotes the same floor the column holds (USD per million output tokens)
    if row["cost_floor_usd_per_m_tok"] == row["cost_floor_usd_per_m_tok"]:
        assert f"${row['cost_floor_usd_per_m_tok']:.3f}/Mtok" in row["status"]
    for name in ("events", "floor", "headroom"):
        frame = getattr(d.price, name, None)
        if frame is not None and hasattr(frame, "columns"):
            assert _per_1k_columns(frame.columns) == [], name
