"""The command line behaves as the library does and as command lines do: one default per
question (a CLI command and its Python twin give the same number), ``--version``, names in any
case, ``8k`` token counts, JSON arrays, tables at the terminal's width with readable headers,
one flag vocabulary, and a short ``price`` headline."""

from __future__ import annotations

import io
import json
import sys

import numpy as np
import pytest
from typer.testing import CliRunner

import tokenomics as tk
from tokenomics import chain, sweep
from tokenomics.cli import app, main

runner = CliRunner()


def _json(args: list[str]) -> list[dict]:
    res = runner.invoke(app, [*args, "-f", "json"])
    assert res.exit_code == 0, (args, res.output)
    out = json.loads(res.stdout)
    assert isinstance(out, list) and all(isinstance(r, dict) for r in out), args  # an array of records
    return out


# -- one answer per question -------------------------------------------------------------------

def test_cli_and_library_share_the_default_batch():
    """`tokenomics price -H h200 -m llama-3.1-8b` and `tk.price("h200", "llama-3.1-8b")` price the
    same operating point: co-located serving, 32 requests in flight per attention group."""
    cli = _json(["price", "-H", "h200", "-m", "llama-3.1-8b"])[0]
    lib = tk.price("h200", "llama-3.1-8b")
    assert cli["serving"] == lib.serving == "colocated"
    assert cli["concurrency"] == float(lib.concurrency) == chain.DEFAULT_BATCH_PER_ATTN_GROUP
    assert cli["batch"] == pytest.approx(float(np.ravel(lib.batch)[0]), rel=1e-12)
    for k in ("usd_per_m_output_tok", "usd_per_m_input_tok", "tok_per_s_per_chip", "energy_j_per_tok"):
        assert cli[k] == pytest.approx(float(np.ravel(getattr(lib, k))[0]), rel=1e-12), k


@pytest.mark.parametrize("args, kwargs", [
    (["--system", "dgx-h200", "-m", "llama-3.1-70b"], dict(system="dgx-h200", model="llama-3.1-70b")),
    (["-H", "h200", "-m", "llama-3.1-8b", "--target-tok-s-user", "150"],
     dict(hardware="h200", model="llama-3.1-8b", target_tok_per_s_per_user=150.0)),
    (["-H", "b200", "-m", "llama-3.1-8b", "-w", "reasoning", "--cost", "rental-3yr"],
     dict(hardware="b200", model="llama-3.1-8b", workload="reasoning", cost="rental-3yr")),
])
def test_price_commands_equal_their_python_twins(args, kwargs):
    cli = _json(["price", *args])[0]
    lib = tk.price(**kwargs)
    assert cli["deployment"] == lib.deployment.label()
    assert cli["serving"] == lib.serving and cli["batch"] == pytest.approx(float(np.ravel(lib.batch)[0]), rel=1e-12)
    assert cli["usd_per_m_output_tok"] == pytest.approx(float(np.ravel(lib.usd_per_m_output_tok)[0]), rel=1e-12)


def test_sweep_mc_and_plots_price_the_default_point():
    cli = _json(["sweep-mc", "--samples", "2000", "--chunk-samples", "1000"])[0]
    lib = sweep.price_monte_carlo("h200", "llama-3.1-8b", n_samples=2000, chunk_samples=1000).to_frame().iloc[0]
    assert cli["price_usd_per_m_tok_p50"] == pytest.approx(lib["price_usd_per_m_tok_p50"], rel=1e-12)
    from tokenomics import plotdata

    bd = plotdata.breakdown("h200", "llama-3.1-8b").iloc[0]  # what tk.plot.price_breakdown draws by default
    price = _json(["price"])[0]
    assert bd["batch"] == price["batch"] and bd["cost_usd_per_chip_h"] == pytest.approx(price["cost_usd_per_chip_h"])


# -- habits ----------------------------------------------------------------------------------

def _main(args: list[str]) -> int:
    try:
        main(args)
    except SystemExit as exc:
        return int(exc.code or 0)
    return 0


def test_version(capsys):
    assert _main(["--version"]) == 0 and capsys.readouterr().out.strip() == f"tokenomics {tk.__version__}"


def test_bare_command_prints_help(capsys):
    rc = _main([])
    cap = capsys.readouterr()
    assert rc == 0 and "Usage: tokenomics" in cap.out and cap.err == ""


def test_names_are_case_insensitive():
    low = _json(["price", "-H", "h200", "-m", "llama-3.1-8b", "--engine", "vllm"])[0]
    up = _json(["price", "-H", "H200", "-m", "Llama-3.1-8B", "--engine", "VLLM", "-e", "Engine"])[0]
    for k in ("deployment", "hardware", "model", "engine", "execution", "batch", "usd_per_m_output_tok"):
        assert up[k] == low[k], k
    assert tk.catalog.accelerator("H100").name == "h100-sxm"  # aliases too
    assert _json(["price", "--system", "DGX-H200", "-m", "llama-3.1-70b"])[0]["system"] == "dgx-h200"


def test_token_counts_take_k_and_m(capsys):
    # k = 1,024 tokens, as "1k/1k" chat means 1,024 in and out (datasets/workloads.csv)
    a = _json(["price", "--context", "8k"])[0]
    b = _json(["price", "--context", "8192"])[0]
    assert a["context_tok"] == 8192 and a == b
    rows = _json(["throughput", "-c", "1k,4k", "--prompt", "2k"])
    assert [r["context_tok"] for r in rows] == [1024, 4096]
    assert _main(["price", "--context", "8q"]) == 2 and "8k" in capsys.readouterr().err


@pytest.mark.parametrize("cmd", [["price"], ["price", "--target-tok-s-user", "100", "--layouts"], ["hardware"],
                                 ["models"], ["systems"], ["throughput", "-b", "1,8"]])
def test_every_json_is_an_array_of_records(cmd):
    assert len(_json(cmd)) >= 1


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_tables_fit_the_terminal_and_read(monkeypatch):
    import pandas as pd

    from tokenomics.cli._common import Format, emit

    wide = pd.DataFrame([{f"column_{i}_tok_per_s_per_user": 1234.5 for i in range(5)}])
    monkeypatch.setenv("COLUMNS", "90")
    term = _Terminal()
    monkeypatch.setattr(sys, "stdout", term)
    emit(wide, Format.table)
    monkeypatch.undo()
    import re

    text = re.sub(r"\x1b\[[0-9;]*m", "", term.getvalue())  # a terminal gets bold headers
    lines = text.splitlines()
    assert lines and max(len(line) for line in lines) <= 90  # the terminal's width
    assert "tok/s/user" in text and "tok_per_s_per_user" not in text  # display headers
    res = runner.invoke(app, ["price", "--target-tok-s-user", "100", "--layouts"])  # a pipe: 120 wide
    assert res.exit_code == 0 and max(len(line) for line in res.stdout.splitlines()) <= 120
    assert "tok/s/user" in res.stdout


def test_frontier_takes_price_flags_and_keeps_the_old_ones():
    args = ["frontier", "-m", "llama-3.1-8b", "-f", "csv"]
    new = runner.invoke(app, [*args, "-H", "h200", "-e", "engine", "--weight-precision", "bf16", "-c", "2k"])
    old = runner.invoke(app, [*args, "--hardware", "h200", "--plan", "engine", "--precision", "bf16",
                              "--context", "2048"])
    assert new.exit_code == 0 and old.exit_code == 0, new.output + old.output
    assert new.stdout == old.stdout
    help_text = runner.invoke(app, ["frontier", "--help"]).stdout
    assert "--execution" in help_text and "--plan" not in help_text  # the old spellings are hidden


def test_sweep_summary_names_the_weight_precision(tmp_path):
    grid = tmp_path / "g.toml"
    grid.write_text('[grid]\nhardware = ["h200"]\nmodel = ["llama-3.1-8b"]\nexecution = ["engine"]\n'
                    'weight_precision = ["bf16", "fp8"]\nbatch = [8]\n')
    res = runner.invoke(app, ["sweep", str(grid), "--no-progress"])
    assert res.exit_code == 0, res.output
    rows = [line for line in res.stdout.splitlines() if line.startswith("│")]
    assert len(rows) == 2 and any("fp8" in r for r in rows) and any("bf16" in r for r in rows)


def test_price_headline_and_all():
    short = runner.invoke(app, ["price"])
    full = runner.invoke(app, ["price", "--all"])
    assert short.exit_code == 0 and full.exit_code == 0
    n_short = sum(line.startswith("│") for line in short.stdout.splitlines())
    n_full = sum(line.startswith("│") for line in full.stdout.splitlines())
    assert n_short <= 12 < 40 <= n_full
    assert "price per M output tokens" in short.stdout and "tok/s per user" in short.stdout


# -- speculative decoding, checked -------------------------------------------------------------

SPEC_BASE = ["price", "--system", "dgx-h200", "-m", "llama-3.1-70b", "--tp", "8"]


@pytest.mark.parametrize("spec, says", [
    ("banana:4:0.77", "unknown speculative decoding method 'banana'"),
    ("eagel:3:0.7", "Did you mean 'eagle'?"),
    ("llama-3.2-1b:4:0.77", "Did you mean draft:llama-3.2-1b:4:0.77?"),
    ("draft:llama-9b:4:0.7", "Unknown model 'llama-9b'"),
    ("draft:llama-3.2-1b", "draft:MODEL:GAMMA:ALPHA"),
])
def test_spec_refuses_what_it_does_not_know(spec, says, capsys):
    with pytest.raises(SystemExit) as exc:
        main([*SPEC_BASE, "--spec", spec])
    assert exc.value.code == 2 and says in capsys.readouterr().err


def test_spec_draft_model_is_the_separate_draft_path():
    """``draft:MODEL:G:A`` drafts with that catalogued model (SpecDecode.draft), not one layer of
    the target: a 1B draft costs more per step than a one-layer head at the same acceptance."""
    from tokenomics.perf.speculative import SpecDecode

    d = _json([*SPEC_BASE, "--spec", "draft:llama-3.2-1b:4:0.77"])[0]
    want = tk.price(system="dgx-h200", model="llama-3.1-70b", tp=8,
                    spec=SpecDecode("draft", 4, 0.77, 1, draft="llama-3.2-1b"))
    assert d["tok_per_s_per_user"] == pytest.approx(float(np.ravel(want.tok_per_s_per_user)[0]), rel=1e-12)
    head = _json([*SPEC_BASE, "--spec", "eagle:4:0.77"])[0]
    assert d["tok_per_s_per_user"] < head["tok_per_s_per_user"]
    ngram = _json([*SPEC_BASE, "--spec", "ngram:4:0.77"])[0]  # no draft model at all: the fastest
    assert ngram["tok_per_s_per_user"] > head["tok_per_s_per_user"]


# -- the layout search weighs every layout -------------------------------------------------------

def test_target_speed_pick_is_no_dearer_than_any_layout_tried_by_hand():
    """Qwen3-235B on MI355X at 50 tok/s per user: the search used to stop at the resolver's expert
    group (tp4-ep4, USD 11.96/M) and never try tp8-ep8 on the same 8 chips (USD 9.10/M)."""
    pick = _json(["price", "-H", "mi355x", "-m", "qwen3-235b-a22b", "--target-tok-s-user", "50"])[0]
    for tp, ep in ((8, 8), (4, 4), (2, 2), (4, 8), (2, 8)):
        hand = tk.price(system="mi355x-8", model="qwen3-235b-a22b", tp=tp, ep=ep, target_tok_per_s_per_user=50.0)
        assert pick["usd_per_m_output_tok"] <= float(np.ravel(hand.usd_per_m_output_tok)[0]) * (1 + 1e-12), (tp, ep)
    assert pick["tp"] == 8 and pick["ep"] == 8


# -- electricity and rent vs own ----------------------------------------------------------------

def test_electricity_is_an_input_and_a_column():
    """Doubling the electricity price raises the chip-hour by exactly the electricity share:
    electricity USD/h = facility kW x USD/kWh (datasets/tco_params.csv), the rest unchanged."""
    base = _json(["price"])[0]
    dear = _json(["price", "--electricity", str(2 * base["electricity_usd_per_kwh"])])[0]
    assert dear["electricity_usd_per_kwh"] == pytest.approx(2 * base["electricity_usd_per_kwh"])
    assert dear["electricity_usd_per_chip_h"] == pytest.approx(2 * base["electricity_usd_per_chip_h"], rel=1e-12)
    assert dear["cost_usd_per_chip_h"] - base["cost_usd_per_chip_h"] == pytest.approx(
        base["electricity_usd_per_chip_h"], rel=1e-9)
    lib = tk.price("h200", "llama-3.1-8b", electricity_usd_per_kwh=2 * base["electricity_usd_per_kwh"])
    assert dear["usd_per_m_output_tok"] == pytest.approx(float(np.ravel(lib.usd_per_m_output_tok)[0]), rel=1e-12)


def test_rent_vs_own_is_the_library_answer():
    from tokenomics.econ import tco

    rows = _json(["rent-vs-own", "-H", "B200", "--rent", "3.5", "-u", "0.5,1"])
    want = tco.rent_vs_own(tco.CostInputs.for_hardware("b200"), 3.5, [0.5, 1.0])
    assert [r["cheaper"] for r in rows] == list(want["cheaper"])
    assert rows[0]["breakeven_utilization_frac"] == pytest.approx(want["breakeven_utilization_frac"][0], rel=1e-12)
    # hand: an owned chip's cost per used hour is its hourly cost over the utilization
    assert rows[0]["own_usd_per_used_h"] == pytest.approx(2 * rows[1]["own_usd_per_used_h"], rel=1e-12)
    default = _json(["rent-vs-own", "-H", "h200", "-u", "1"])[0]  # InferenceX 3-year rental, 2026-07
    assert default["rent_usd_per_used_h"] == pytest.approx(tco.preset("h200", "rental-3yr", "2026-07").cost_usd_per_h)
