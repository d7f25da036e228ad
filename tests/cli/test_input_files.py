"""Every file a user hands in is checked like a flag: a named pipe, a device or a directory is
refused before it is opened, a file over the size limit before it is read, a shell pipe
(``<(...)``) is read with the same cap, a UTF-8 byte-order mark is dropped; each refusal is one
line and exit 2, quickly. Booleans from files and library keywords accept only true/false.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from contextlib import contextmanager
from pathlib import Path

import pytest

from tokenomics import catalog
from tokenomics.cli import main
from tokenomics.errors import DataError, TokenomicsError
from tokenomics.io import max_input_bytes, read_bytes, read_text

REPO = Path(__file__).resolve().parents[2]

# every command-line option or argument that names an input file; F is replaced by the file
FILE_ARGS = [
    ["validate", "F"],
    ["calibrate", "F"],
    ["calibrate", "--microbench", "F"],
    ["validate-kernels", "F"],
    ["validate-serving", "F"],
    ["validate-serving", "--engines", "F"],
    ["fit-serving", "F"],
    ["throughput", "--profile", "F"],
    ["frontier", "--measured", "F"],
    ["forecast", "--history", "F"],
    ["forecast", "--add-history", "F"],
    ["watch", "--megakernel-events", "F"],
    ["watch", "--supernode-events", "F"],
    ["sweep", "F"],
    ["price", "--deployment", "F"],
    ["market", "--prices", "F"],
]
IDS = [" ".join(a).replace(" F", "") for a in FILE_ARGS]


@contextmanager
def _deadline(seconds: int):
    """Fail instead of hanging: a read that blocks is interrupted by SIGALRM."""
    def boom(signum, frame):
        raise TimeoutError(f"still running after {seconds} s")

    old = signal.signal(signal.SIGALRM, boom)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


def _run(args, capsys) -> tuple[int, str]:
    with _deadline(20), pytest.raises(SystemExit) as ex:
        main(args)
    return ex.value.code, capsys.readouterr().err


def _one_line_exit_2(code, err, *needles):
    assert code == 2, err
    lines = [x for x in err.splitlines() if x.strip()]
    assert len(lines) == 1 and lines[0].startswith("Error: "), err
    assert "Traceback" not in err
    for n in needles:
        assert n in err, err


@pytest.mark.parametrize("args", FILE_ARGS, ids=IDS)
def test_a_named_pipe_is_refused_before_it_is_opened(args, tmp_path, capsys, monkeypatch):
    # nothing ever writes to this FIFO: opening it for reading would block forever
    monkeypatch.chdir(tmp_path)
    fifo = tmp_path / "pipe.csv"
    os.mkfifo(fifo)
    t0 = time.perf_counter()
    code, err = _run([str(fifo) if a == "F" else a for a in args], capsys)
    _one_line_exit_2(code, err, "named pipe", "expected a regular file")
    assert time.perf_counter() - t0 < 10
    assert sorted(p.name for p in tmp_path.iterdir()) == ["pipe.csv"]  # nothing written


@pytest.mark.parametrize("args", FILE_ARGS, ids=IDS)
def test_dev_zero_is_refused_as_a_device(args, capsys):
    # /dev/zero never ends: read whole it fills memory until the process is killed
    code, err = _run(["/dev/zero" if a == "F" else a for a in args], capsys)
    _one_line_exit_2(code, err, "'/dev/zero'", "character device")


@pytest.mark.parametrize("args", FILE_ARGS, ids=IDS)
def test_a_directory_is_refused(args, tmp_path, capsys):
    code, err = _run([str(tmp_path) if a == "F" else a for a in args], capsys)
    _one_line_exit_2(code, err, "directory")


@pytest.mark.parametrize("args", FILE_ARGS, ids=IDS)
def test_a_file_over_the_size_limit_is_refused_before_reading(args, tmp_path, capsys, monkeypatch):
    big = tmp_path / "big.csv"
    big.write_bytes(b"x" * 5000)
    monkeypatch.setenv("TOKENOMICS_MAX_INPUT_BYTES", "4000")
    code, err = _run([str(big) if a == "F" else a for a in args], capsys)
    _one_line_exit_2(code, err, "more than the 4,000 B", "TOKENOMICS_MAX_INPUT_BYTES")


def test_size_limit_from_the_environment(monkeypatch):
    monkeypatch.delenv("TOKENOMICS_MAX_INPUT_BYTES", raising=False)
    assert max_input_bytes() == 64 * 2**20  # the documented default
    for raw, want in [("1000", 1000), ("64MB", 64_000_000), ("64MiB", 64 * 2**20), ("1gib", 2**30), ("2k", 2000)]:
        monkeypatch.setenv("TOKENOMICS_MAX_INPUT_BYTES", raw)
        assert max_input_bytes() == want, raw
    for raw in ("-5", "0", "lots", "1e9x"):
        monkeypatch.setenv("TOKENOMICS_MAX_INPUT_BYTES", raw)
        with pytest.raises(TokenomicsError, match="TOKENOMICS_MAX_INPUT_BYTES"):
            max_input_bytes()


def test_a_shell_pipe_is_read_up_to_the_cap(monkeypatch):
    # what `--prices <(cat prices.csv)` hands the program: /dev/fd/N, the read end of a pipe
    r, w = os.pipe()
    os.write(w, b"\xef\xbb\xbfa,b\n1,2\n")
    os.close(w)
    try:
        assert read_text(f"/dev/fd/{r}", "cases file") == "a,b\n1,2\n"  # BOM dropped
    finally:
        os.close(r)
    # a pipe that writes more than the cap is cut off at the cap, not read to the end
    monkeypatch.setenv("TOKENOMICS_MAX_INPUT_BYTES", "1000")
    p = subprocess.Popen([sys.executable, "-c", "import sys\nwhile True: sys.stdout.buffer.write(b'x' * 4096)"],
                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    try:
        with _deadline(20), pytest.raises(DataError, match="more than the 1,000 B"):
            read_bytes(f"/proc/self/fd/{p.stdout.fileno()}", "history file")
    finally:
        p.kill()
        p.communicate()


def test_process_substitution_through_the_cli(tmp_path):
    # bash's <(...) end to end: the market price list and a deployment given as shell pipes
    prices = catalog.data_dir() / "market_prices.csv"
    dep = tmp_path / "d.toml"
    dep.write_text('model = "llama-3.1-8b"\nhardware = "h200"\n')
    env = dict(os.environ, PYTHONPATH=str(REPO))
    cmd = (f"{sys.executable} -m tokenomics market --prices <(cat {prices}) --format csv >/dev/null && "
           f"{sys.executable} -m tokenomics price --deployment <(cat {dep}) --format csv")
    out = subprocess.run(["bash", "-c", cmd], env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("model,") and "llama-3.1-8b" in out.stdout


def test_byte_order_mark_is_dropped_from_toml_csv_and_json(tmp_path, capsys):
    bom = b"\xef\xbb\xbf"
    dep = tmp_path / "d.toml"
    dep.write_bytes(bom + b'model = "llama-3.1-8b"\nhardware = "h200"\n')
    with _deadline(60):
        main(["price", "--deployment", str(dep), "--format", "csv"])  # returns: exit 0
    assert capsys.readouterr().out.startswith("model,")
    prices = tmp_path / "p.csv"
    prices.write_bytes(bom + (catalog.data_dir() / "market_prices.csv").read_bytes())
    from tokenomics.market import load_prices

    assert list(load_prices(prices).columns)[0] == "provider"  # not '\ufeffprovider'
    from tokenomics.perf.profile import load_profile

    shipped = Path(catalog.data_dir()).parent / "profiles" / "h200.json"
    if not shipped.exists():
        from tokenomics.perf.profile import profiles_dir

        shipped = profiles_dir() / "h200.json"
    prof = tmp_path / "p.json"
    prof.write_bytes(bom + shipped.read_bytes())
    assert load_profile(prof).name == load_profile(shipped).name


def test_nul_bytes_are_not_text(tmp_path):
    f = tmp_path / "x.csv"
    f.write_bytes(b"a,b\n1,\x002\n")
    with pytest.raises(DataError, match="NUL byte on line 2"):
        read_text(f, "cases file")


def test_missing_file_names_what_was_expected(tmp_path):
    with pytest.raises(DataError, match=r"grid file '.*nope.toml' not found; expected an existing file"):
        read_text(tmp_path / "nope.toml", "grid file")


# ---------------------------------------------------------------- strict booleans

@pytest.mark.parametrize("value", ["no", "yes", "off", "", 2, 0.5, -1, [True], "1.0x"])
def test_flag_refuses_anything_but_true_false(value):
    from tokenomics._validate import flag

    with pytest.raises(TokenomicsError, match=r"^dp_attention must be true or false \(or 1 / 0\), got "):
        flag(value, "dp_attention")


@pytest.mark.parametrize("value,want", [(True, True), (False, False), (1, True), (0, False), ("TRUE", True),
                                        ("false", False), (" True ", True)])
def test_flag_accepts_true_false_and_0_1(value, want):
    import numpy as np

    from tokenomics._validate import flag

    assert flag(value, "x") is want
    assert flag(np.bool_(want), "x") is want


def test_dp_attention_no_in_a_deployment_file_is_refused_not_read_as_true(tmp_path, capsys):
    # bool("no") is True: read by truthiness, "no" priced wide expert parallelism
    dep = tmp_path / "d.toml"
    dep.write_text('model = "deepseek-v3"\nsystem = "gb200-nvl72"\ndp_attention = "no"\n')
    code, err = _run(["price", "--deployment", str(dep)], capsys)
    _one_line_exit_2(code, err, "dp_attention", "true or false", "'no'")


def test_dp_attention_false_as_text_means_false():
    from tokenomics.deployment import resolve

    as_text = resolve("deepseek-v3", system="gb200-nvl72", dp_attention="false")
    as_bool = resolve("deepseek-v3", system="gb200-nvl72", dp_attention=False)
    assert (as_text.parallel.tp, as_text.parallel.ep) == (as_bool.parallel.tp, as_bool.parallel.ep)
    wide = resolve("deepseek-v3", system="gb200-nvl72")
    assert wide.parallel.attn_dp > as_bool.parallel.attn_dp  # "false" did not give the wide-EP default


def test_library_boolean_keywords_are_strict():
    from tokenomics.deployment import resolve
    from tokenomics.econ.utilization import from_load_profile
    from tokenomics.perf.serving import serve

    dep = resolve("llama-3.1-8b", hardware="h200")
    with pytest.raises(TokenomicsError, match="fixed_lengths must be true or false.*'no'"):
        serve(dep, phase="serve", isl_tok=100, osl_tok=100, concurrency=4, fixed_lengths="no")
    with pytest.raises(TokenomicsError, match="check_memory must be true or false"):
        dep.decode(8, 1024, check_memory="off")
    with pytest.raises(TokenomicsError, match="autoscale must be true or false"):
        from_load_profile([8, 16], [278, 201.125], autoscale="yes")


# ---------------------------------------------------------------- typed TOML and JSON

DEEP = "x = " + "[" * 3000 + "]" * 3000 + "\n"  # past Python's recursion limit in tomllib

BAD_DEPLOYMENTS = {
    "deployment = 3\n": "deployment must be a table",
    'model = "llama-3.1-8b"\nhardware = "h200"\nengine = ["vllm"]\n': "engine must be text, got a list",
    DEEP: "nested too deeply",
    'model = "llama-3.1-8b"\nhardware = "h200"\ntp = 1.5\n': "tp must be a whole number",
    'model = "llama-3.1-8b"\nhardware = "h200"\ntp = true\n': "tp must be a whole number, got true/false",
    'model = 3\nhardware = "h200"\n': "model must be text, got a number 3",
    'model = "llama-3.1-8b"\nhardware = "h200"\nmem_frac = "high"\n': "mem_frac must be a number, got text",
    'model = "llama-3.1-8b"\nhardwre = "h200"\n': "unknown key 'hardwre'. Did you mean 'hardware'?",
    'model = "llama-3.1-8b"\n[engine]\nname = "vllm"\n': "engine must be text, got a table",
    'hardware = "h200"\n': "names no model",
    'model = "llama-3.1-8b"\nhardware = "h200"\n[deployment]\ntp = 1\n': "sits outside [deployment]",
}


@pytest.mark.parametrize("text", [t for t, n in BAD_DEPLOYMENTS.items() if n], ids=lambda t: t[:30])
def test_a_deployment_file_is_typed_before_use(text, tmp_path, capsys):
    f = tmp_path / "d.toml"
    f.write_text(text)
    code, err = _run(["price", "--deployment", str(f)], capsys)
    _one_line_exit_2(code, err, "deployment file", BAD_DEPLOYMENTS[text])


@pytest.mark.parametrize("text,needle", [
    (DEEP.replace("x =", '[grid]\nhardware ='), "nested too deeply"),
    ('[grid]\nhardware=["h200"]\nmodel=["llama-3.1-8b"]\nbatch=[1]\ntp=["\u00b2"]\n', "whole numbers >= 1, got '\u00b2'"),
    ('[grid]\nhardware=["h200"]\nmodel=["llama-3.1-8b"]\nbatch=[1]\n[sweep]\nchunk_configs=1.5\n', "chunk_configs"),
    ("grid = 3\n", "[grid] must be a table"),
])
def test_a_grid_file_is_typed_before_use(text, needle, tmp_path, capsys):
    f = tmp_path / "g.toml"
    f.write_text(text)
    code, err = _run(["sweep", str(f), "--no-progress"], capsys)
    _one_line_exit_2(code, err, needle)


@pytest.mark.parametrize("text,needle", [
    ('{"name": ' * 3000 + '1' + '}' * 3000, "nested too deeply"),
    ('{"name": "x", "metrics": ' + '[' * 20 + ']' * 20 + '}', "nested too deeply"),
    ('{"name": "x", "weight_bw_frak": 0.5}', "unknown key 'weight_bw_frak'. Did you mean 'weight_bw_frac'"),
    ('{"name": "x", "weight_bw_frac": "' + "a" * 10000 + '"}', "weight_bw_frac must be a number"),
])
def test_a_profile_json_is_typed_before_use(text, needle, tmp_path, capsys):
    f = tmp_path / "p.json"
    f.write_text(text)
    code, err = _run(["throughput", "--profile", str(f)], capsys)
    _one_line_exit_2(code, err, needle)
    assert len(err) < 600  # the 10,000-character cell is not echoed whole


# ---------------------------------------------------------------- property: one bad cell

from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

_SERVING_ROW = None


def _serving_row():
    global _SERVING_ROW
    if _SERVING_ROW is None:  # the first bundled MLPerf row: DeepSeek-R1 FP4 on 8 B200, offline
        import pandas as pd

        _SERVING_ROW = pd.read_csv(catalog.data_dir() / "serving_mlperf.csv", dtype=str, keep_default_na=False).head(1)
    return _SERVING_ROW.copy()


# cells no reading of the schema accepts: column -> values (text as a user could type it)
_WHOLE_BAD = ["x", "-3", "0", "1.5", "inf", "1e400", "=1+1", "\u00b2"]
_BAD_CELLS = {
    **{c: _WHOLE_BAD for c in ("n_gpus", "tp", "ep")},
    **{c: ["2", "-1", "0.5", "yes", "no", "inf"] for c in ("dp_attention", "disaggregated")},
    **{c: ["x", "-1", "0", "inf", "-inf", "1e400", "1,5"] for c in ("isl_tok", "osl_tok")},
    "measured_output_tok_per_s_per_gpu": ["fast", "-5", "0", "inf", "1e400"],
    "phase": ["decod", "", "=cmd|' /C calc'!A0", "OFFLINE\x1b[2J"],
    "hardware": ["h2000", "", "@SUM(1)"],
    "model": ["deepseek-r2", ""],
    "engine": ["tensort", "+x"],
}


@settings(max_examples=int(os.environ.get("TOKENOMICS_PROPERTY_EXAMPLES", "8")), deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.sampled_from(sorted(_BAD_CELLS)).flatmap(lambda c: st.tuples(st.just(c), st.sampled_from(_BAD_CELLS[c]))))
def test_a_serving_row_with_one_bad_cell_is_refused_in_one_line(tmp_path_factory, cell):
    """A serving-cases row with one impossible cell: exit 2 with one line naming the column (or
    the row refused by name and nothing scored from it), no traceback, no file written, quickly."""
    import io as _io

    col, bad = cell
    d = tmp_path_factory.mktemp("prop")
    df = _serving_row()
    df[col] = bad
    f = d / "cases.csv"
    f.write_text(df.to_csv(index=False))
    before = sorted(p.name for p in d.iterdir())
    t0 = time.perf_counter()
    out, err = _io.StringIO(), _io.StringIO()
    import contextlib

    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err), _deadline(60):
        try:
            main(["validate-serving", str(f), "--format", "csv"])
            code = 0
        except SystemExit as ex:
            code = ex.code or 0
    err_text = err.getvalue()
    assert time.perf_counter() - t0 < 60
    assert "Traceback" not in err_text
    assert sorted(p.name for p in d.iterdir()) == before  # nothing written
    lines = [x for x in err_text.splitlines() if x.strip()]
    if code == 2:
        assert len(lines) == 1 and lines[0].startswith("Error: "), err_text
        assert any(w in lines[0] for w in (col, "row 1", "line 2", "M001")), err_text  # names the cell or the row
    else:  # the row refused, the rest of the file (none here) scored: nothing predicted from it
        assert code == 0, err_text
        scored = out.getvalue()
        assert "predicted" not in scored.split("\n", 1)[-1].split(",status,")[0], scored
        assert any("row 1" in x or "M001" in x for x in lines), err_text


@pytest.mark.parametrize("rows,needle", [
    ([f"s{i % 50},2024-{1 + i % 12:02d},{1e9 + i},x" for i in range(100_001)], "100,001 rows; expected at most 100,000"),
    ([f"s{i},2024-01,1e9,x" for i in range(150)], "150 series; expected at most 100"),
    (["x" * 10000 + ",2024-01,1e9,x"], "at most 80 characters, got 10,000"),
    (['"a\nb",2024-01,1e9,x'], "series name must be printable"),
])
def test_an_added_history_is_bounded(rows, needle, tmp_path, capsys):
    # a 30,000-row history ran past 300 s at 2.5 GB: refused before any fit
    f = tmp_path / "h.csv"
    f.write_text("series,date,tokens_per_day,source\n" + "\n".join(rows) + "\n")
    t0 = time.perf_counter()
    code, err = _run(["forecast", "--add-history", str(f)], capsys)
    _one_line_exit_2(code, err, needle)
    assert time.perf_counter() - t0 < 10


@pytest.mark.parametrize("date", ["2035-01", "2100-06", "1000-01", "1999-12"])
def test_a_history_date_outside_the_forecast_span_is_refused(date, tmp_path, capsys):
    # 2035 crashed the fit (zero-size array), year 1000 overflowed pandas' timestamps
    from tokenomics.forecast.demand import END
    from tokenomics.forecast.history import LAST_DATE

    assert LAST_DATE == END
    f = tmp_path / "h.csv"
    f.write_text(f"series,date,tokens_per_day,source\nzz,{date},1e9,x\n")
    code, err = _run(["forecast", "--add-history", str(f)], capsys)
    # a date after today is no observation (said first); an earlier one outside the span is named as such
    _one_line_exit_2(code, err, f"row 1 (line 2): date '{date}' is after today" if date > "2030" else
                     f"date '{date}' of series 'zz' is outside 2000-01")


def _with_empty(dataset: str, col: str, tmp_path) -> Path:
    import csv
    import io as _io

    lines = (catalog.data_dir() / dataset).read_text().splitlines()[:2]
    rows = list(csv.reader(_io.StringIO("\n".join(lines))))
    rows[1][rows[0].index(col)] = ""
    f = tmp_path / f"empty_{col}.csv"
    with open(f, "w", newline="") as fh:
        csv.writer(fh, lineterminator="\n").writerows(rows)
    return f


@pytest.mark.parametrize("args,dataset,col", [
    (["validate"], "h200_cases.csv", "phase"), (["validate"], "h200_cases.csv", "execution"),
    (["calibrate"], "h200_cases.csv", "fusion"), (["validate-kernels"], "kernel_microbench.csv", "op"),
    (["validate-kernels"], "kernel_microbench.csv", "metric"),
])
def test_an_empty_word_cell_is_named_not_a_traceback(args, dataset, col, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    f = _with_empty(dataset, col, tmp_path)
    code, err = _run(args + [str(f)], capsys)
    _one_line_exit_2(code, err, f"row 1 (line 2): {col} is empty; expected one of")


def test_an_empty_vendor_in_the_engines_file_of_the_environment(tmp_path, capsys, monkeypatch):
    # every pricing command reads $TOKENOMICS_ENGINES: an empty vendor broke them all with a traceback
    monkeypatch.setenv("TOKENOMICS_ENGINES", str(_with_empty("engines.csv", "vendor", tmp_path)))
    code, err = _run(["price"], capsys)
    _one_line_exit_2(code, err, "vendor is empty")


@pytest.mark.parametrize("dataset,flag,cells,needle", [
    ("supernode_events.csv", "--supernode-events", {"chips_per_node": "0"}, "chips_per_node must be >= 2"),
    ("supernode_events.csv", "--supernode-events", {"chips_per_node": "1e12"}, "chips_per_node must be <= 1e+06"),
    ("supernode_events.csv", "--supernode-events", {"chips_per_node": "72.5"}, "chips_per_node must be a whole"),
    ("supernode_events.csv", "--supernode-events", {"units_low": "1e300"}, "units_low must be <= 1e+09"),
    ("supernode_events.csv", "--supernode-events", {"date": "1900-01"}, "date 1900 is outside 2000 to 2035"),
    ("megakernel_events.csv", "--megakernel-events", {"date": "2099-01-01"}, "date 2099 is outside 2000 to 2035"),
    ("megakernel_events.csv", "--megakernel-events", {"as_of": "1900"}, "as_of 1900 is outside 2000 to 2035"),
])
def test_watch_event_cells_have_physical_ranges(dataset, flag, cells, needle, tmp_path, capsys):
    import pandas as pd

    df = pd.read_csv(catalog.data_dir() / dataset, dtype=str, keep_default_na=False).head(3)
    for k, v in cells.items():
        df.loc[0, k] = v
    f = tmp_path / "events.csv"
    df.to_csv(f, index=False)
    code, err = _run(["watch", flag, str(f)], capsys)
    _one_line_exit_2(code, err, "row 1 (line 2)", needle)


@pytest.mark.parametrize("cells,needle", [
    ({"as_of": "2099-01-01"}, "as_of '2099-01-01' is after today"),
    ({"provider": ""}, "provider is empty"),
    ({"source": " "}, "source is empty"),
])
def test_a_market_price_list_names_its_bad_cell(cells, needle, tmp_path, capsys):
    import pandas as pd

    df = pd.read_csv(catalog.data_dir() / "market_prices.csv", dtype=str, keep_default_na=False).head(3)
    for k, v in cells.items():
        df.loc[0, k] = v
    f = tmp_path / "prices.csv"
    df.to_csv(f, index=False)
    try:
        main(["market", "--prices", str(f), "--format", "json"])
        code = 0
    except SystemExit as ex:
        code = ex.code
    err = capsys.readouterr().err
    assert code in (0, None), err  # the bad row is refused, the other two priced
    assert err.strip().splitlines() == [l for l in err.strip().splitlines() if l.startswith("refused: row 1 (line 2)")]
    assert needle in err and len(err.strip().splitlines()) == 1
    df.head(1).to_csv(f, index=False)  # nothing left to price: exit 2, one line
    code, err = _run(["market", "--prices", str(f)], capsys)
    _one_line_exit_2(code, err, "row 1 (line 2)", needle)
