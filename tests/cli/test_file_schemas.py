"""Every CSV file a user hands in is checked against one declared schema (tokenomics.io.Column):
a file with bad cells in several rows is refused with every one named (row, line, column), in
one line, exit 2, nothing written; the bundled files, handed in as files, still load as before."""

import datetime as dt

import pandas as pd
import pytest

from tokenomics import catalog
from tokenomics.errors import DataError, ValidationError
from tokenomics.io import MAX_PROBLEMS_NAMED, Column, check_frame, frame_problems

from cli_run import run_cli

FAST = ["--n-boot", "20", "--n-draws", "20"]
NEXT_YEAR = dt.date.today().year + 1  # a date no file can have observed yet


def _bundled(name: str, n: int = 6) -> pd.DataFrame:
    """The first ``n`` rows of a bundled CSV as text (cells as written)."""
    return pd.read_csv(catalog.data_dir() / name, dtype=str, keep_default_na=False).head(n)


def _bad_file(tmp_path, name: str, cells: dict[tuple[int, str], str], n: int = 6):
    df = _bundled(name, n)
    for (row, col), val in cells.items():
        df.loc[row, col] = val
    f = tmp_path / f"bad_{name}"
    df.to_csv(f, index=False)
    return f


def _refused(args, tmp_path, capsys, wanted, monkeypatch):
    """Exit 2, one line on stderr naming each (line, column), no traceback, nothing written."""
    monkeypatch.chdir(tmp_path)
    before = sorted(p.name for p in tmp_path.iterdir())
    code, out, err = run_cli([str(a) for a in args], capsys)
    assert code == 2, (code, out, err)
    assert "Traceback" not in err
    lines = [x for x in err.splitlines() if x.strip()]
    assert len(lines) == 1 and lines[0].startswith("Error: "), err
    for line, col in wanted:
        assert f"(line {line})" in err and col in err, (line, col, err)
    assert sorted(p.name for p in tmp_path.iterdir()) == before  # nothing written
    return err


# three bad rows, each in another column: (file, cells, CLI arguments before/after the file)
CASES = {
    "validate": ("h200_cases.csv", {(0, "batch"): "abc", (2, "phase"): "decod", (4, "measured_step_s"): "-1"},
                 ["validate"], []),
    "calibrate": ("h200_cases.csv", {(0, "n_layers"): "0", (2, "fusion"): "fused", (4, "kv_bytes_per_elem"): "3"},
                  ["calibrate"], ["--out", "p.json"]),
    "validate-kernels": ("kernel_microbench.csv", {(0, "op"): "decode", (2, "batch"): "0", (4, "value"): "abc"},
                         ["validate-kernels"], []),
}


@pytest.mark.parametrize("key", list(CASES))
def test_a_file_with_three_bad_rows_names_all_three(key, tmp_path, capsys, monkeypatch):
    name, cells, before, after = CASES[key]
    f = _bad_file(tmp_path, name, cells)
    err = _refused([*before, f, *after], tmp_path, capsys, [(r + 2, c) for r, c in cells], monkeypatch)
    assert "3 bad cells" in err


def test_calibrate_microbench_names_every_bad_row(tmp_path, capsys, monkeypatch):
    df = _bundled("h200_microbench.csv", 30)
    gemm = df.index[df["experiment"] == "gemm"][:2]
    df.loc[1, "seconds"] = "abc"                   # hbm_read_reduce: a row the fit uses
    df.loc[gemm[0], "note"] = "rows=8"             # a gemm row without m=
    df.loc[gemm[1], "value"] = "-4"
    f = tmp_path / "mb.csv"
    df.to_csv(f, index=False)
    wanted = [(3, "seconds"), (gemm[0] + 2, "note"), (gemm[1] + 2, "value")]
    _refused(["calibrate", "--microbench", f, "--out", "p.json"], tmp_path, capsys, wanted, monkeypatch)


def test_fit_serving_refuses_the_whole_file_naming_every_bad_row(tmp_path, capsys, monkeypatch):
    cells = {(0, "concurrency"): "abc", (2, "isl_tok"): "-5", (4, "measured_output_tok_per_s_per_gpu"): "x"}
    f = _bad_file(tmp_path, "serving_public.csv", cells)
    err = _refused(["fit-serving", f, "--out", "e.csv"], tmp_path, capsys, [(r + 2, c) for r, c in cells],
                   monkeypatch)
    assert "3 refused rows" in err


def test_an_engines_file_names_every_bad_row(tmp_path, capsys, monkeypatch):
    cells = {(0, "engine"): "vllmm", (2, "kernel_overhead_s"): "-1", (4, "max_seqs"): "0"}
    f = _bad_file(tmp_path, "engines.csv", cells)
    wanted = [(r + 2, c) for r, c in cells]
    err = _refused(["validate-serving", "--engines", f], tmp_path, capsys, wanted, monkeypatch)
    assert "Did you mean 'vllm'" in err
    monkeypatch.setenv("TOKENOMICS_ENGINES", str(f))  # every pricing command reads it
    err = _refused(["price"], tmp_path, capsys, wanted, monkeypatch)
    assert "$TOKENOMICS_ENGINES" in err


@pytest.mark.parametrize("flag,name,cells", [
    ("--megakernel-events", "megakernel_events.csv",
     {(0, "kind"): "rumour", (2, "level"): "9", (4, "track"): "kernels"}),
    ("--supernode-events", "supernode_events.csv",
     {(0, "event"): "delivery", (1, "units_low"): "abc", (3, "chips_per_node"): "1"}),
])
def test_an_event_file_names_every_bad_row(flag, name, cells, tmp_path, capsys, monkeypatch):
    f = _bad_file(tmp_path, name, cells)
    _refused(["watch", *FAST, flag, f, "--out", "w"], tmp_path, capsys, [(r + 2, c) for r, c in cells],
             monkeypatch)


@pytest.mark.parametrize("flag", ["--history", "--add-history"])
def test_a_history_file_names_every_bad_row(flag, tmp_path, capsys, monkeypatch):
    f = tmp_path / "h.csv"
    f.write_text("series,date,tokens_per_day,source\n"
                 ",2024-01,1e9,me\n"         # line 2: no series name
                 "x,2024-02,abc,me\n"        # line 3: not a number
                 "x,2024/03,1e9,me\n")       # line 4: not a date
    _refused(["forecast", flag, f, "--out", "o"], tmp_path, capsys,
             [(2, "series"), (3, "tokens_per_day"), (4, "date")], monkeypatch)


@pytest.mark.parametrize("flag,name,col", [
    ("--megakernel-events", "megakernel_events.csv", "as_of"),
    ("--megakernel-events", "megakernel_events.csv", "date"),
    ("--supernode-events", "supernode_events.csv", "date"),
])
def test_an_event_dated_after_today_is_refused(flag, name, col, tmp_path, capsys, monkeypatch):
    f = _bad_file(tmp_path, name, {(1, col): f"{NEXT_YEAR}-01-01"}, n=4)
    err = _refused(["watch", *FAST, flag, f], tmp_path, capsys, [(3, col)], monkeypatch)
    assert f"{col} '{NEXT_YEAR}-01-01' is after today" in err


@pytest.mark.parametrize("col", ["date", "as_of"])
def test_an_added_observation_after_today_is_refused(col, tmp_path, capsys, monkeypatch):
    f = tmp_path / "h.csv"
    dates = {"date": "2024-03", "as_of": "2024-04-01", col: f"{NEXT_YEAR}-01"}
    f.write_text(f"series,date,tokens_per_day,source,as_of\nacme,{dates['date']},1e11,x,{dates['as_of']}\n")
    err = _refused(["forecast", "--add-history", f], tmp_path, capsys, [(2, col)], monkeypatch)
    assert "is after today" in err


def test_this_month_is_not_after_today(tmp_path):
    from tokenomics.forecast.history import history_schema

    month = dt.date.today().strftime("%Y-%m")
    df = pd.DataFrame({"date": [month], "tokens_per_day": ["1e9"]})
    assert frame_problems(df, history_schema()[1]) == []


@pytest.mark.parametrize("name,read", [
    ("h200_cases.csv", lambda p: __import__("tokenomics.validate.calibrate", fromlist=["x"]).read_cases(p)),
    ("h200_microbench.csv", lambda p: __import__("tokenomics.validate.calibrate", fromlist=["x"]).read_microbench(p)),
    ("kernel_microbench.csv", lambda p: __import__("tokenomics.perf.kernels", fromlist=["x"]).read_kernel_microbench(p)),
    ("megakernel_events.csv", lambda p: __import__("tokenomics.watch.megakernels", fromlist=["x"]).load_events(p)),
    ("supernode_events.csv", lambda p: __import__("tokenomics.watch.supernodes", fromlist=["x"]).load_events(p)),
])
def test_the_bundled_files_handed_in_load_as_the_bundled_tables(name, read, tmp_path):
    f = tmp_path / name
    f.write_bytes((catalog.data_dir() / name).read_bytes())
    got = read(f)
    want = read(catalog.load(name.removesuffix(".csv")).reset_index(drop=True))
    pd.testing.assert_frame_equal(got.reset_index(drop=True), want.reset_index(drop=True), check_dtype=False)


def test_the_bundled_engines_and_history_load(tmp_path):
    from tokenomics.forecast.history import read_history
    from tokenomics.perf.engines import read_engines

    eng = read_engines(catalog.data_dir() / "engines.csv")
    n = len(catalog.load("engines"))
    assert len(eng) == 2 * n  # its rows above the bundled ones: the same rows twice
    pd.testing.assert_frame_equal(eng.iloc[:n].reset_index(drop=True)[["kernel_overhead_s", "max_seqs"]],
                                  eng.iloc[n:].reset_index(drop=True)[["kernel_overhead_s", "max_seqs"]])
    hist = read_history(catalog.data_dir() / "token_demand.csv", require_source=True)
    assert len(hist) == int((catalog.load("token_demand")["in_fit"] == 1).sum())


# -- the declarative layer itself -----------------------------------------------------------------

SCHEMA = (Column("n", "integer", minimum=1), Column("t_s", "number", minimum=0.0, strict_minimum=True, unit="s"),
          Column("kind", "choice", choices=("a", "b")), Column("when", "date", not_after_today=True),
          Column("note", "text", required=False, optional=True))


def test_check_frame_converts_a_good_table():
    df = pd.DataFrame({"n": ["1", "2"], "t_s": ["0.5", "1e-3"], "kind": [" a", "b"], "when": ["2024-01", "2025"]})
    out = check_frame(df, SCHEMA, "t")
    assert list(out["n"]) == [1.0, 2.0] and list(out["t_s"]) == [0.5, 1e-3] and list(out["kind"]) == ["a", "b"]


def test_check_frame_names_ten_bad_cells_and_counts_the_rest():
    df = pd.DataFrame({"n": ["0"] * 12, "t_s": ["1"] * 12, "kind": ["a"] * 12, "when": ["2024"] * 12})
    with pytest.raises(DataError) as e:
        check_frame(df, SCHEMA, "t")
    msg = str(e.value)
    assert msg.startswith("t: 12 bad cells: row 1 (line 2): n must be >= 1, got '0'; expected a whole number >= 1")
    assert msg.count("n must be >= 1") == MAX_PROBLEMS_NAMED and msg.endswith("; and 2 more")
    assert "\n" not in msg


def test_each_kind_says_what_it_expected():
    df = pd.DataFrame({"n": ["x"], "t_s": ["-1"], "kind": ["c"], "when": [f"{NEXT_YEAR}-02-03"]})
    got = [d for _, d in frame_problems(df, SCHEMA)]
    assert got == ["n is not a number, got 'x'; expected a whole number >= 1",
                   "t_s must be > 0, got '-1'; expected a number > 0 [s]",
                   "kind must be one of a, b, got 'c'",
                   f"when '{NEXT_YEAR}-02-03' is after today ({dt.date.today()}); expected a date on or before it"]


def test_an_unknown_column_kind_is_refused():
    with pytest.raises(ValidationError, match="kind must be one of"):
        Column("x", "float")
