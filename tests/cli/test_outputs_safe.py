"""Outputs are safe to open: CSV cells from user input never start a spreadsheet formula, table
views show no terminal escape sequences, ``--out`` goes where the user means it, interrupts end
every command with one line and the conventional code, and the library never returns inf or NaN
for non-physical inputs.
"""

from __future__ import annotations

import csv
import io
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from tokenomics import catalog
from tokenomics.cli import main
from tokenomics.io import spreadsheet_safe, write_frame

REPO = Path(__file__).resolve().parents[2]
CASES = catalog.data_dir() / "h200_cases.csv"
HOSTILE = ['=HYPERLINK("http://x","c")', "=cmd|' /C calc'!A0", "+1+2", "-2+3", "@SUM(A1)", "\tx", "\rx"]


def _cli(args, capsys) -> tuple[int, str, str]:
    try:
        main(args)
        code = 0
    except SystemExit as ex:
        code = ex.code or 0
    out = capsys.readouterr()
    return code, out.out, out.err


def test_spreadsheet_safe_neutralises_formula_starts_and_keeps_numbers():
    df = pd.DataFrame({"case_id": HOSTILE + ["ok"], "text_number": ["-0.5"] * 8, "x": [-0.5] * 8})
    out = spreadsheet_safe(df)
    # OWASP's rule: a leading ' makes a spreadsheet show the text instead of running it
    assert out["case_id"].tolist() == ["'" + h for h in HOSTILE] + ["ok"]
    assert out["text_number"].tolist() == ["-0.5"] * 8  # a number written as text is still a number
    assert out["x"].tolist() == [-0.5] * 8 and out["x"].dtype == float
    assert df["case_id"].iloc[0] == HOSTILE[0]  # the caller's frame is untouched


def test_csv_file_is_safe_json_and_parquet_keep_the_value(tmp_path):
    names = HOSTILE[:-1]  # (a bare CR inside a cell is not quoted by pandas' writer: checked in memory above)
    df = pd.DataFrame({"series": names, "tokens_per_day": np.arange(6.0) - 3})
    rows = list(csv.reader(open(write_frame(df, tmp_path / "a.csv"), newline="")))
    assert [r[0] for r in rows[1:]] == ["'" + h for h in names]
    assert [float(r[1]) for r in rows[1:]] == [-3.0, -2.0, -1.0, 0.0, 1.0, 2.0]
    assert pd.read_json(write_frame(df, tmp_path / "a.json"))["series"].tolist() == names
    assert pd.read_parquet(write_frame(df, tmp_path / "a.parquet"))["series"].tolist() == names


def test_validate_csv_output_does_not_run_a_case_id(tmp_path, capsys):
    lines = CASES.read_text().splitlines()
    rows = list(csv.reader(io.StringIO("\n".join(lines[:3]))))
    rows[1][0], rows[2][0] = HOSTILE[0], HOSTILE[1]
    buf = io.StringIO()
    csv.writer(buf, lineterminator="\n").writerows(rows)
    f = tmp_path / "cases.csv"
    f.write_text(buf.getvalue())
    code, out, err = _cli(["validate", str(f), "--format", "csv"], capsys)
    assert code == 0, err
    got = list(csv.DictReader(io.StringIO(out)))
    ids = [r["case_id"] for r in got]
    assert ids == ["'" + HOSTILE[0], "'" + HOSTILE[1]]
    for r in got:  # every cell: no formula start unless it is a number
        for v in r.values():
            assert v[:1] not in "=+@\t\r" and (not v.startswith("-") or float(v) <= 0), v
    code, out, err = _cli(["validate", str(f), "--format", "json"], capsys)
    assert HOSTILE[0] in out.replace('\\"', '"')  # JSON keeps the value


def test_table_view_drops_terminal_escapes(tmp_path, capsys):
    lines = CASES.read_text().splitlines()
    rows = list(csv.reader(io.StringIO("\n".join(lines[:2]))))
    rows[1][0] = "evil\x1b[2J\x1b]0;pwned\x07\u202eid"
    buf = io.StringIO()
    csv.writer(buf, lineterminator="\n").writerows(rows)
    f = tmp_path / "cases.csv"
    f.write_text(buf.getvalue())
    code, out, err = _cli(["validate", str(f)], capsys)
    assert code == 0, err
    assert "\x1b" not in out and "\x07" not in out and "\u202e" not in out
    assert "evil[2J]0;pwnedid" in out.replace("\n", "").replace(" ", "").replace("│", "")


@pytest.mark.parametrize("args", [["validate"], ["validate-serving"], ["market", "--prices"],
                                  ["forecast", "--history"], ["watch", "--megakernel-events"]])
def test_an_unrelated_file_is_not_echoed(args, tmp_path, capsys):
    # a key file passed by mistake: the error says so without printing its first line
    f = tmp_path / "secret.env"
    f.write_text("API_TOKEN=s3cr3t-value\nOTHER=1\n")
    code, out, err = _cli(args + [str(f)], capsys)
    assert code == 2 and len(err.strip().splitlines()) == 1, err
    assert "s3cr3t" not in err and "API_TOKEN" not in err
    assert "none of the expected columns" in err and "secret.env" in err


# ---------------------------------------------------------------- --out and interrupts

@pytest.mark.parametrize("args", [["watch"], ["forecast"], ["report"]])
def test_out_dot_into_a_non_empty_current_directory_needs_force(args, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "mine.txt").write_text("mine")
    code, out, err = _cli(args + ["--out", "."], capsys)
    assert code == 2 and len(err.strip().splitlines()) == 1, err
    assert "current directory and it is not empty" in err and "--force" in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["mine.txt"]


def test_out_dot_with_force_keeps_other_files_and_says_where(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "mine.txt").write_text("mine")
    code, out, err = _cli(["watch", "--out", ".", "--force", "--format", "csv"], capsys)
    assert code == 0, err
    assert (tmp_path / "mine.txt").read_text() == "mine" and (tmp_path / "watch.md").exists()
    assert f"wrote {tmp_path.resolve() / 'watch.md'}" in err  # the resolved path, not '.'


@pytest.mark.parametrize("target", ["/etc", "/usr/share", "/proc", "/sys", "/dev"])
def test_out_through_a_symlink_into_a_system_directory_is_refused(target, tmp_path, capsys):
    link = tmp_path / "innocent"
    link.symlink_to(target)
    grid = tmp_path / "g.toml"
    grid.write_text('[grid]\nhardware=["h200"]\nmodel=["llama-3.1-8b"]\nbatch=[1]\n')
    up = "/.." * 12  # past the root: '..' there stays at /
    for args in (["watch", "--out", str(link / "w")], ["report", "--out", str(link / "w")],
                 ["sweep", str(grid), "--out", str(link / "r.csv")],
                 ["sweep", str(grid), "--out", str(tmp_path) + up + target + "/r.csv"]):
        code, out, err = _cli(args, capsys)
        assert code == 2 and len(err.strip().splitlines()) == 1, err
        assert f"inside the system directory {'/usr' if target.startswith('/usr') else target}" in err, err


def test_out_through_a_symlink_writes_the_target_and_leaves_the_link(tmp_path, capsys):
    real = tmp_path / "real"
    real.mkdir()
    (tmp_path / "link").symlink_to(real)
    for _ in range(2):  # the second run replaces the first's files
        code, out, err = _cli(["watch", "--out", str(tmp_path / "link"), "--format", "csv"], capsys)
        assert code == 0, err
    assert (tmp_path / "link").is_symlink() and (real / "watch.md").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["link", "real"]  # no hidden leftovers


def test_forecast_out_is_one_directory_swap(tmp_path, capsys):
    out = tmp_path / "o"
    code, _, err = _cli(["forecast", "--out", str(out), "--format", "csv"], capsys)
    assert code == 0, err
    names = sorted(p.name for p in out.iterdir())
    assert names == ["backtest.csv", "backtest_coverage.csv", "backtest_points.csv", "backtest_series.csv",
                     "forecast_annual.csv", "forecast_fan.png", "forecast_monthly.csv", "history.csv", "references.csv"]
    assert f"wrote 9 files to {out.resolve()}" in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["o"]  # no temporary sibling left


@pytest.mark.slow
@pytest.mark.parametrize("sig,code,word", [(signal.SIGTERM, 143, "Terminated"), (signal.SIGINT, 130, "Interrupted")])
def test_a_signal_ends_any_command_with_one_line_and_its_code(sig, code, word, tmp_path):
    env = dict(os.environ, PYTHONPATH=str(REPO))
    p = subprocess.Popen([sys.executable, "-m", "tokenomics", "forecast", "--out", str(tmp_path / "o")], cwd=tmp_path,
                         env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    time.sleep(3.0)  # mid-run: the forecast takes ~10 s on this machine
    p.send_signal(sig)
    _, err = p.communicate(timeout=60)
    assert p.returncode == code, err
    lines = err.decode().strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(word), err
    assert list(tmp_path.iterdir()) == []  # no output directory, no temporary one


# ---------------------------------------------------------------- library: no inf or NaN returned

def test_a_non_physical_bandwidth_is_an_error_not_inf():
    from tokenomics import catalog, decode_step, prefill
    from tokenomics.errors import TokenomicsError

    slow = catalog.accelerator("h200").replace(hbm_bytes_per_s=1e-300)
    for call in (lambda: decode_step(slow, "llama-3.1-8b", "graph", batch=8),
                 lambda: prefill(slow, "llama-3.1-8b", "graph", prompt_tok=1024),
                 lambda: decode_step("h200", "llama-3.1-8b", "graph", batch=8, hbm_bytes_per_s=1e-300)):
        with pytest.raises(TokenomicsError, match=r"step_time_s came out infinite for hbm_bytes_per_s=1e-300"):
            call()


def test_a_non_physical_electricity_price_is_an_error_not_inf():
    from tokenomics import price
    from tokenomics.errors import TokenomicsError

    with pytest.raises(TokenomicsError, match=r"electricity_usd_per_kwh=1e\+308 is not a price of electricity"):
        price("h200", "llama-3.1-8b", electricity_usd_per_kwh=1e308)
    ok = price("h200", "llama-3.1-8b").to_frame()["usd_per_m_output_tok"]  # the default stays a finite price
    assert np.isfinite(ok).all()


def test_mem_frac_over_one_is_refused_where_memory_is_checked():
    # 1,500 sequences of 8,192 tokens need ~203 GB, more than an H200 holds: mem_frac 2.0 made it "fit"
    from tokenomics import system_step
    from tokenomics.errors import TokenomicsError

    with pytest.raises(TokenomicsError, match=r"mem_frac must be in \(0, 1\], got 2"):
        system_step("dgx-h200", "llama-3.1-8b", batch=1500, context_tok=8192, mem_frac=2.0)


def test_masked_batches_stay_nan_not_an_error():
    # on_oom="mask" marks batches that do not fit as NaN on purpose: the guard leaves them
    from tokenomics import decode_step

    r = decode_step("h200", "llama-3.1-8b", "graph", batch=[1, 4096], context_tok=32768, on_oom="mask")
    t = np.asarray(r.step_time_s)
    assert np.isfinite(t[0]) and np.isnan(t[1])


def test_a_grid_with_non_physical_electricity_is_one_line(tmp_path, capsys):
    grid = tmp_path / "g.toml"
    grid.write_text('[grid]\nhardware=["h200"]\nmodel=["llama-3.1-8b"]\nbatch=[1]\nelectricity_usd_per_kwh=[1e308]\n')
    code, out, err = _cli(["sweep", str(grid), "--no-progress"], capsys)
    assert code == 2 and len(err.strip().splitlines()) == 1, err  # no overflow warning before it
    assert "electricity_usd_per_kwh=" in err and "1e+308" in err and "is not a price of electricity" in err
