"""Tests of the pricing report, the econ CLI commands and the example script."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from tokenomics import chain
from tokenomics.cli import app, main
from tokenomics.report import write_report

ROOT = Path(__file__).resolve().parents[2]
runner = CliRunner()
PRICE = ["price", "-H", "h200", "-m", "llama-3.1-8b", "-b", "32", "-c", "1024", "-e", "graph"]


def test_price_json_is_one_record_with_required_keys():
    res = runner.invoke(app, [*PRICE, "--format", "json"])
    assert res.exit_code == 0, res.output
    rows = json.loads(res.stdout)
    assert isinstance(rows, list) and len(rows) == 1  # an array of records, as every command prints
    obj = rows[0]
    for k in ("usd_per_m_input_tok", "usd_per_m_output_tok", "cost_usd_per_chip_h",
              "energy_j_per_tok", "tok_per_s_per_chip"):
        assert isinstance(obj[k], float) and obj[k] > 0


def test_price_csv_is_exactly_the_library_frame():
    res = runner.invoke(app, [*PRICE, "--format", "csv"])
    assert res.exit_code == 0, res.output
    from io import StringIO

    got = pd.read_csv(StringIO(res.stdout))
    want = chain.price("h200", "llama-3.1-8b", "graph", batch=32, context_tok=1024).to_frame()
    assert list(got.columns) == list(want.columns)
    assert got["usd_per_m_output_tok"].iloc[0] == pytest.approx(want["usd_per_m_output_tok"].iloc[0], rel=1e-9)


def test_price_table_and_tier_option():
    res = runner.invoke(app, [*PRICE, "--cost", "neocloud-owned@2026-07"])
    assert res.exit_code == 0 and "neocloud-owned 2026-07" in res.stdout and "USD/M tokens" in res.stdout


@pytest.mark.parametrize("extra,needle", [
    (["--utilization", "60"], "did you mean 0.6"),
    (["--cost", "-3"], "cost_usd_per_chip_h must be a positive"),
    (["--cost", "hyperscaler-owed"], "Did you mean 'hyperscaler-owned'"),
    (["--workload", "chatt"], "Unknown workload"),
    (["--margin", "1.5"], "margin_frac"),
    (["-H", "h2000"], "Unknown accelerator"),
])
def test_price_bad_input_exit_2_one_line(extra, needle, capsys):
    base = list(PRICE)
    if extra[0] in base:  # the option given once, in place of the good value
        i = base.index(extra[0])
        del base[i:i + 2]
    with pytest.raises(SystemExit) as e:
        main([*base, *extra])
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert needle in err and err.count("\n") == 1 and "Traceback" not in err


def test_report_writes_markdown_html_and_pngs(tmp_path):
    out = tmp_path / "rep"
    res = runner.invoke(app, ["report", "--out", str(out), "-H", "h200", "-H", "b200", "-m", "llama-3.1-8b",
                              "--samples", "200"])
    assert res.exit_code == 0, res.output
    names = {p.name for p in out.iterdir()}
    assert {"report.md", "report.html", "price_vs_interactivity.png", "cost_breakdown.png", "tornado.png"} <= names
    assert not [n for n in names if n.endswith(".tmp")]  # atomic writes leave no temporary files
    for png in out.glob("*.png"):
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    md = (out / "report.md").read_text()
    assert "## Measured check" in md and "## Disaggregated" in md and "Monte Carlo" in md
    html = (out / "report.html").read_text()
    assert html.count("data:image/png;base64,") == 3 and "<table>" in html


def test_report_out_must_be_directory(tmp_path, capsys):
    f = tmp_path / "file.txt"
    f.write_text("x")
    with pytest.raises(SystemExit) as e:
        main(["report", "--out", str(f), "-H", "h200", "-m", "llama-3.1-8b"])
    assert e.value.code == 2 and "must be a directory" in capsys.readouterr().err


def test_report_library_skips_what_does_not_fit(tmp_path):
    # Kimi K3 holds on no catalogued MI300X system (eight chips: 195 GB of weights per chip)
    paths = write_report(tmp_path, hardware=("mi300x",), models=("llama-3.1-8b", "kimi-k3"), n_samples=100)
    md = Path(paths[0]).read_text()
    assert "## Skipped" in md and "kimi-k3" in md


def test_example_runs():
    res = subprocess.run([sys.executable, str(ROOT / "examples" / "price_per_token.py"), "--samples", "200"],
                         capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert res.returncode == 0, res.stderr
    assert "P5/P50/P95" in res.stdout and "hyperscaler-owned" in res.stdout
    assert "gb200-nvl72 tp8-ep8-pp1 (9 replicas)" in res.stdout and "cheapest" in res.stdout


def test_help_lists_econ_commands():
    res = runner.invoke(app, ["--help"])
    assert "price" in res.stdout and "report" in res.stdout


def test_report_prices_a_named_deployment(tmp_path):
    """--system prices the system's chip with the resolver's layout, 32 sequences per attention
    group: the same number as chain.price for that deployment."""
    from tokenomics import chain
    from tokenomics.report import build_report

    rep = build_report(models=("deepseek-v3",), n_samples=100, layout={"system": "gb200-nvl72"})
    row = rep.prices.iloc[0]
    want = chain.price(system="gb200-nvl72", model="deepseek-v3", batch=32 * 72)
    assert row["batch"] == 32 * 72
    assert row["usd_per_m_output_tok"] == pytest.approx(float(want.usd_per_m_output_tok), rel=1e-12)


def test_price_table_names_each_rows_deployment():
    """Llama 3.1 70B FP8 needs two H100s (80 GB) but fits one H200 (141 GB): the report's price
    table says so, since that is why the H100 row is faster per user."""
    from tokenomics.report import build_report, price_view

    rep = build_report(hardware=("h100-sxm", "h200"), models=("llama-3.1-70b",), weight_precision="fp8", n_samples=50)
    view = price_view(rep.prices).set_index("config")
    assert view.loc["h100-sxm / llama-3.1-70b (fp8)", "deployment"].startswith("dgx-h100 tp2-ep1-pp1")
    assert view.loc["h200 / llama-3.1-70b (fp8)", "deployment"] == "h200 tp1-ep1-pp1"


def test_report_warns_on_stderr_about_skipped_configurations(tmp_path, capsys):
    """A chip without a bottom-up capex (A100) is skipped, listed in report.md and named in one
    warning line on stderr; the rest is priced (exit 0)."""
    from tokenomics.cli import main

    main(["report", "-o", str(tmp_path / "rep"), "-H", "h200", "-H", "a100", "--samples", "100"])  # exit 0
    err = capsys.readouterr().err
    assert "Warning: 2 configuration(s) skipped" in err and "a100 / llama-3.1-8b" in err
    assert "## Skipped" in (tmp_path / "rep" / "report.md").read_text()


def _md_rows(md: str, first_header: str, having: str | None = None) -> list[dict[str, str]]:
    """The rows of the first Markdown table whose header starts with ``| first_header |`` (and
    has a column ``having``)."""
    lines = md.splitlines()
    i = next(k for k, line in enumerate(lines) if line.startswith(f"| {first_header} |")
             and (having is None or f"| {having} |" in line))
    head = [c.strip() for c in lines[i].strip("|").split("|")]
    rows = []
    for line in lines[i + 2:]:
        if not line.startswith("|"):
            break
        rows.append(dict(zip(head, (c.strip() for c in line.strip("|").split("|")))))
    return rows


def _num(cell: str) -> float:
    """A number as the report writes it (``1,230``, ``0.142``, ``11.1 %``) as a float."""
    return float(cell.replace(",", "").replace("%", "").strip())


def test_report_states_every_price_in_one_unit_and_each_finding_once():
    """The tornado and Monte Carlo tables are in USD per million output tokens, as the headline
    table and the tornado figure are: at the tornado's base utilization (its high end, 100 %) the
    price is the headline price of the same configuration, to the tables' 3 significant digits
    (each cell rounded to 3 digits: within 1 %). (Before: USD per 1K, 1,000x apart from the figure
    beside it.) A disaggregation finding that does not depend on the decode chip is listed once,
    not once per decode chip."""
    from tokenomics.report import build_report, render_markdown

    rep = build_report(hardware=["h200", "b200", "mi300x"], models=["llama-3.1-8b"], n_samples=100)
    md = render_markdown(rep, {})
    head = {r["configuration"]: r for r in _md_rows(md, "configuration")}
    util = next(r for r in _md_rows(md, "input") if r["input"] == "utilization (%)")
    first = rep.tornado_label.split(",")[0]
    assert _num(util["USD per M output tokens at high"]) == pytest.approx(
        _num(head[first]["USD per M output tokens"]), rel=1e-2)
    mc = {r["configuration"]: r for r in _md_rows(md, "configuration", having="USD per M output tokens, P50")}
    assert mc and all(0.5 < _num(mc[k]["USD per M output tokens, P50"]) / _num(head[k]["USD per M output tokens"]) < 2
                      for k in mc)
    assert "per 1K" not in md and "usd_per_1k" not in md
    bullets = [line for line in md.splitlines() if line.startswith("- ")]
    assert bullets and len(bullets) == len(set(bullets))
    assert "above 100 %, renting is cheaper at any utilization" in md


def test_report_tables_read_as_text():
    """Every table header is a display name (no snake_case), no number is in e-notation below
    10^12 and whole numbers carry thousands separators (the demand table's GPU counts: 357,000,
    not 3.57e+05)."""
    import re

    from tokenomics.report import build_report, render_markdown

    rep = build_report(hardware=["h200"], models=["llama-3.1-8b"], n_samples=100)
    md = render_markdown(rep, {})
    lines = md.splitlines()
    heads = [lines[i] for i in range(len(lines) - 1) if lines[i].startswith("|") and lines[i + 1].startswith("|-")]
    assert len(heads) >= 10 and not [h for h in heads if "_" in h]
    assert not re.search(r"\d[eE][+-]?\d", md)
    gpus = _md_rows(md, "series", having="GPUs")
    assert all(re.fullmatch(r"\d{1,3}(,\d{3})*", r["GPUs"]) for r in gpus)


def test_report_module_examples_run():
    import doctest

    from tokenomics import report

    assert doctest.testmod(report).failed == 0


def test_report_prices_a_token_along_the_hardware_roadmap():
    """The demand section carries the roadmap's cost and list price per year: the numbers
    tokenomics.forecast.cost_path gives (the bundled roadmap and margin)."""
    from tokenomics.forecast.roadmap import cost_path
    from tokenomics.report import build_report, render_markdown

    rep = build_report(hardware=["h200"], models=["llama-3.1-8b"], n_samples=100)
    lib = cost_path(range(2024, 2031)).to_frame()
    np.testing.assert_allclose(rep.roadmap["cost, USD per M output tokens"], lib["cost_usd_per_m_output_tok"], rtol=1e-12)
    np.testing.assert_allclose(rep.roadmap["list price, USD per M output tokens"], lib["usd_per_m_output_tok"], rtol=1e-12)
    section = render_markdown(rep, {}).split("## Demand and what serves it")[1]
    assert "| 2026 | vr200-nvl72 | announced |" in section and "35 % median margin" in section
    # China's June 2026 figure is another definition: the section says its jump is a level shift
    from tokenomics.forecast.history import load_history
    from tokenomics.forecast.measurement import level_shifts

    shift = level_shifts(load_history()).set_index("series").loc["china", "shift_dec"]
    assert f"The `china` series changes definition in June 2026" in section
    assert f"level shift of {shift:+.2f} decades" in section


def test_report_ends_with_the_demand_and_what_serves_it():
    """The report carries the forecast's Google and China trend (annual medians, 80 % intervals)
    and the GPUs, grid power and energy of serving them on the forecast's default deployment: the
    same numbers tokenomics.forecast gives, and one sentence on the largest build-out."""
    from tokenomics.forecast import forecast, plan_infrastructure
    from tokenomics.report import build_report, render_markdown

    rep = build_report(hardware=["h200"], models=["llama-3.1-8b"], n_samples=100)
    fr = forecast(["google", "china"])
    lib = plan_infrastructure(fr).to_frame()
    np.testing.assert_allclose(rep.infra["n_chips"], lib["n_chips"], rtol=1e-12)
    np.testing.assert_allclose(rep.infra["facility_mw"], lib["facility_mw"], rtol=1e-12)
    np.testing.assert_allclose(rep.demand["tokens_per_day"], fr.to_frame("annual")["tokens_per_day"], rtol=1e-12)
    md = render_markdown(rep, {})
    section = md.split("## Demand and what serves it")[1]
    assert "deepseek-v3 on gb200-nvl72" in section and "| google | 2030 |" in section
    big = lib.loc[lib["n_chips"].idxmax()]
    assert f"The largest: {big['series']} in {int(big['year'])}" in section
    # and each series' energy beside its region's data centres: the first year past all of them
    np.testing.assert_allclose(rep.infra["dc_electricity_share_frac"], lib["dc_electricity_share_frac"], rtol=1e-12)
    for name, g in lib.groupby("series"):
        last, over = g.iloc[-1], g[g["dc_electricity_share_frac"] > 1]
        if over.empty:
            assert f"{name} in {int(last['year'])}: {last['dc_electricity_share_frac']:.1%} of world" in section
        else:
            assert f"{name}: more than all of {last['region']} from {int(over['year'].iloc[0])}" in section


def test_report_prices_kimi_k3_on_the_articles_systems():
    """The mission's question in the quickstart's report: what a Kimi K3 output token costs on
    the four systems of the article, the same frame as tokenomics.studies.showdown.costs() (what
    `tokenomics showdown` prints), with one sentence per batch naming the cheapest and dearest."""
    from tokenomics.studies import showdown
    from tokenomics._display import fmt_number
    from tokenomics.report import K3_COLUMNS, build_report, render_markdown

    rep = build_report(hardware=["h200"], models=["llama-3.1-8b"], n_samples=100)
    lib = showdown.costs()
    pd.testing.assert_frame_equal(rep.k3_costs.reset_index(drop=True), lib[list(K3_COLUMNS)])
    assert set(rep.k3_costs["system"]) == {"generic-supernode-128", "sd200-ultra", "tpu-v7-16", "gb200-16"}
    md = render_markdown(rep, {})
    section = md.split("## Kimi K3 on the article's systems")[1].split("## Demand")[0]
    rows = _md_rows(section, "system")
    assert len(rows) == len(lib)
    for b, g in lib.groupby("batch"):
        lo = g.loc[g["usd_per_m_output_tok"].idxmin()]
        hi = g.loc[g["usd_per_m_output_tok"].idxmax()]
        ratio = hi["usd_per_m_output_tok"] / lo["usd_per_m_output_tok"]
        assert f"{lo['system']} is cheapest at {fmt_number(lo['usd_per_m_output_tok'])} USD" in section
        assert f"({ratio:.0f}x)" in section
