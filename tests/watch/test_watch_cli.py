"""Tests of the watch dashboard, the `tokenomics watch` command and examples/watch_dashboard.py."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

from tokenomics.cli import app, main
from tokenomics.watch import watch

ROOT = Path(__file__).resolve().parents[2]
FAST = ["--n-boot", "20", "--n-draws", "20"]
REQUIRED = ["metric", "latest", "trend", "forecast", "status", "as_of"]


@pytest.fixture(scope="module")
def dash():
    return watch(n_boot=20, n_draws=20)


def test_dashboard_frame(dash):
    df = dash.to_frame()
    assert list(df["metric"]) == ["price", "megakernel", "supernode"]
    for c in REQUIRED + ["sources"]:
        assert df[c].astype(str).str.len().gt(0).all(), c
    # every figure traces to dataset rows
    assert df["sources"].str.contains("rows").all()


def test_price_row_summarises_china_apart(dash):
    """The price row's latest names China's newest change, one model at a time with its token
    types, and counts the year's cuts and rises before it: on 2026-09-10 DeepSeek's V4.1-Flash
    replaced V4-Flash at 0.02 / 1 / 4 CNY per M (cache hit / input / output, off-peak) from
    0.05 / 1.5 / 4.5; the 12 months before hold the two V3.2-Exp cuts of 2025-09-29, seven
    April-May 2026 V4 cuts, these three, and the eight rises of 2026-08-16
    (datasets/china_price_cuts.csv, counted by hand)."""
    latest = dash.to_frame().set_index("metric").loc["price", "latest"]
    assert ("China 2026-09-10: DeepSeek V4.1-Flash (off-peak; replaces V4-Flash) -11% output, -33% input, "
            "-60% cache hit (year to then: 12 cuts, 8 rises)") in latest
    # the row is as of its newest price or change, China's included: the global table's newest is
    # Gemini 4 Carbon's scheduled price of 2026-12-01 (datasets/api_prices.csv), after China's 2026-09-10
    assert str(dash.to_frame().set_index("metric").loc["price", "as_of"])[:10] == "2026-12-01"


def test_price_row_states_the_constant_quality_decline(dash):
    """The price trend names the hedonic decline with its 95 % interval and n beside the pooled one;
    the numbers are constant_quality_decline's on the same prices."""
    from tokenomics.watch.price_index import constant_quality_decline, hedonic_sample

    row = dash.to_frame().set_index("metric").loc["price"]
    cq = constant_quality_decline(hedonic_sample(), ci=0.95)
    assert row["cq_n"] == cq["n"] == len(hedonic_sample())
    assert row["cq_decline_factor_lo"] < row["cq_decline_factor_per_year"] < row["cq_decline_factor_hi"]
    assert (f"at constant quality (hedonic: size, open weights, context, provider; all sizes, chat-mix price) "
            f"{cq['decline_factor_per_year']:.2f}x/yr (95% CI {cq['decline_factor_lo']:.2f}-"
            f"{cq['decline_factor_hi']:.2f}, n={cq['n']}") in row["trend"]
    assert row["trend"].startswith("100B+ list prices fall")  # the pooled figure stays first
    assert dash.price_index["index"].iloc[0] == 1.0 and len(dash.price_paths) > 0


def test_no_resamples_says_no_interval(dash):
    """n_boot 0 fits the adoption curve once: the dates print without an interval instead of an
    empty '(90% ..)'; with resamples the interval is printed."""
    point = watch(n_boot=0, n_draws=20).to_frame().set_index("metric").loc["megakernel", "forecast"]
    assert "(no interval: no bootstrap resamples)" in point and ".." not in point
    assert "(90% " in dash.to_frame().set_index("metric").loc["megakernel", "forecast"]


def test_dashboard_pending_is_labelled_not_invented(dash):
    row = dash.to_frame().set_index("metric").loc["price"]
    if pd.isna(row["cost_floor_usd_per_m_tok"]):
        assert "pending perf core" in row["status"]


def test_dashboard_write(dash, tmp_path):
    paths = dash.write(tmp_path / "rep")
    names = sorted(p.name for p in paths)
    assert names == ["watch.md", "watch_megakernel.png", "watch_price.png", "watch_supernode.png"]
    for p in paths:
        if p.suffix == ".png":
            assert p.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and p.stat().st_size > 10_000
    md = (tmp_path / "rep" / "watch.md").read_text()
    assert "## price" in md and "## megakernel" in md and "## supernode" in md
    assert not list((tmp_path / "rep").glob(".*.tmp"))  # atomic writes leave no temporaries


def test_cli_json_is_the_frame():
    r = CliRunner().invoke(app, ["watch", "-f", "json", *FAST])
    assert r.exit_code == 0, r.output
    data = json.loads(r.stdout)
    assert isinstance(data, list) and [d["metric"] for d in data] == ["price", "megakernel", "supernode"]
    for d in data:
        assert all(k in d for k in REQUIRED)
    expected = watch(n_boot=20, n_draws=20).to_frame()
    assert list(data[0].keys()) == list(expected.columns)
    assert [d["forecast"] for d in data] == list(expected["forecast"])


def test_cli_csv_is_the_frame():
    r = CliRunner().invoke(app, ["watch", "-f", "csv", *FAST])
    assert r.exit_code == 0, r.output
    got = pd.read_csv(io.StringIO(r.stdout))
    expected = watch(n_boot=20, n_draws=20).to_frame()
    assert list(got.columns) == list(expected.columns)
    assert list(got["trend"]) == list(expected["trend"])


def test_cli_table_and_out(tmp_path):
    r = CliRunner().invoke(app, ["watch", *FAST, "--out", str(tmp_path / "o")])
    assert r.exit_code == 0, r.output
    assert "megakernel" in r.stdout
    assert (tmp_path / "o" / "watch_supernode.png").exists()


def test_cli_help_lists_watch():
    r = CliRunner().invoke(app, ["--help"])
    assert "watch" in r.stdout
    r = CliRunner().invoke(app, ["watch", "--help"])
    assert r.exit_code == 0 and "--out" in r.stdout


def _bad_events(tmp_path, body: str) -> Path:
    f = tmp_path / "events.csv"
    f.write_text("date,project,org,hardware,hardware_family,kind,track,level,source,as_of\n" + body)
    return f


@pytest.mark.parametrize("body, needle", [
    ("2025-01-01,a,b,c,nvidia,research_paper,megakernel,0,s,2025\n2025-03-01,a,b,c,nvidia,blog_post,megakernel,0,s,2025\n",
     "row 2 (line 3): kind must be one of"),
    ("2025-01-01,a,b,c,nvidia,research_paper,megakernel,0,s,2025\n,a,b,c,nvidia,port,megakernel,0,s,2025\n",
     "row 2 (line 3): missing date"),
])
def test_cli_bad_events_exit_2_one_line(tmp_path, capsys, body, needle):
    f = _bad_events(tmp_path, body)
    with pytest.raises(SystemExit) as info:
        main(["watch", *FAST, "--megakernel-events", str(f)])
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert needle in err
    assert err.strip().count("\n") == 0 and "Traceback" not in err


def test_cli_bad_supernode_events(tmp_path, capsys):
    from tokenomics import catalog

    df = catalog.load("supernode_events").reset_index(drop=True)
    df.loc[2, "date"] = ""
    f = tmp_path / "sn.csv"
    df.to_csv(f, index=False)
    with pytest.raises(SystemExit) as info:
        main(["watch", *FAST, "--supernode-events", str(f)])
    assert info.value.code == 2
    assert "row 3 (line 4): missing date" in capsys.readouterr().err


def test_example_runs(tmp_path):
    out = tmp_path / "ex"
    r = subprocess.run([sys.executable, str(ROOT / "examples" / "watch_dashboard.py"), str(out), "--fast"],
                       capture_output=True, text=True, timeout=180)
    assert r.returncode == 0, r.stderr
    assert "level3_date" in r.stdout
    assert (out / "watch.md").exists() and (out / "watch_price.png").exists()
