"""Bad input and faults (issue 13): every command answers bad input with exit 2, exactly one
line on stderr, no traceback, no file written, quickly; the library raises one-line
:class:`TokenomicsError` subclasses; nothing is half-written, nothing hangs, memory is bounded
before work.

The CLI cases run in-process through :func:`tokenomics.cli.main` (a subprocess per case would
cost ~1 s of start-up each); the SIGTERM test is the one subprocess.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pytest

from tokenomics import catalog, sweep
from tokenomics.cli import main
from tokenomics.errors import TokenomicsError, TokenomicsWarning

REPO = Path(__file__).resolve().parents[2]
CASES = catalog.data_dir() / "h200_cases.csv"
HEADER = CASES.read_text().splitlines()[0]
ROW0 = CASES.read_text().splitlines()[1]


def _cases_with(**changes) -> str:
    """The header and the first bundled case with some cells replaced."""
    cols = HEADER.split(",")
    import csv
    import io

    row = next(csv.reader(io.StringIO(ROW0)))
    for k, v in changes.items():
        row[cols.index(k)] = v
    buf = io.StringIO()
    csv.writer(buf, lineterminator="\n").writerow(row)
    return HEADER + "\n" + buf.getvalue()


SERVING = catalog.data_dir() / "serving_holdout.csv"


def _mlperf_with(col: str, value) -> bytes:
    """The first bundled MLPerf serving row with one cell replaced."""
    import pandas as pd

    df = pd.read_csv(catalog.data_dir() / "serving_mlperf.csv").head(1).copy()
    df[col] = value
    return df.to_csv(index=False).encode()


def _mlperf_cells(**cells) -> bytes:
    """The first bundled MLPerf serving row (DeepSeek-R1 FP4 on 8 B200) with several cells replaced."""
    import pandas as pd

    df = pd.read_csv(catalog.data_dir() / "serving_mlperf.csv").head(1).copy()
    for col, value in cells.items():
        df[col] = value
    return df.to_csv(index=False).encode()


def _disagg_without(*cols: str) -> bytes:
    """The header of the held-out serving cases and its first disaggregated serve row with
    ``cols`` emptied."""
    import pandas as pd

    df = pd.read_csv(SERVING)
    row = df[(df["disaggregated"] == 1) & (df["phase"] == "serve")].head(1).copy()
    row.loc[:, list(cols)] = float("nan")
    return row.to_csv(index=False).encode()


MK_HEADER = "date,project,hardware_family,kind,track,level,source,as_of"
SN_HEADER = "date,vendor,product,chips_per_node,event,units_low,units_text,value,unit,source,as_of,note"

# name -> file content (bytes) written into the case's tmp dir before the run
FILES: dict[str, bytes] = {
    "empty.csv": b"",
    "blank.csv": b"\n\n",
    "latin1.csv": "date,caf\xe9\n2025,\xe9\n".encode("latin-1"),
    "ragged.csv": (HEADER + "\n" + ROW0 + ",extra,cells\n").encode(),
    "header_only.csv": (HEADER + "\n").encode(),
    "text_measured.csv": _cases_with(measured_step_s="fast").encode(),
    "zero_measured.csv": _cases_with(measured_step_s="0").encode(),
    "neg_measured.csv": _cases_with(measured_step_s="-0.01").encode(),
    "inf_measured.csv": _cases_with(measured_step_s="inf").encode(),
    "phase_decod.csv": _cases_with(phase="decod").encode(),
    "zero_bytes.csv": _cases_with(weight_bytes_per_param="0").encode(),
    "neg_chips.csv": _cases_with(n_chips="-2").encode(),
    "frac_batch.csv": _cases_with(batch="1.5").encode(),
    "missing_col.csv": b"case_id,phase\nx,decode\n",
    "number.json": b"3",
    "list.json": b"[1, 2]",
    "badjson.json": b"{name: h200",
    "words.json": b'{"name": "x", "weight_bw_frac": "high"}',
    "nan.json": b'{"name": "x", "weight_bw_frac": NaN}',
    "binary.bin": bytes(range(256)),
    "bad.toml": b"[grid\nhardware = ",
    "start_a.toml": b'[grid]\nhardware=["h200"]\nmodel=["llama-3.1-8b"]\nbatch={start="a", stop=8, num=4}\n',
    "num_text.toml": b'[grid]\nhardware=["h200"]\nmodel=["llama-3.1-8b"]\nbatch={start=1, stop=8, num="4"}\n',
    "batch_words.toml": b'[grid]\nhardware=["h200"]\nmodel=["llama-3.1-8b"]\nbatch=["a", "b"]\n',
    "batch_frac.toml": b'[grid]\nhardware=["h200"]\nmodel=["llama-3.1-8b"]\nbatch=[0.2]\n',
    "typo_hw.toml": b'[grid]\nhardware=["h2000"]\nmodel=["llama-3.1-8b"]\nbatch=[1]\n',
    "no_model.toml": b'[grid]\nhardware=["h200"]\nbatch=[1]\n',
    "chunks1.toml": (b'[grid]\nhardware=["h200"]\nmodel=["llama-3.1-8b"]\nbatch={start=1, stop=20000, num=20000}\n'
                     b'context_tok={start=1, stop=1000, num=1000}\n[sweep]\nchunk_configs=1\n'),
    "huge.toml": (b'[grid]\nhardware=["h200"]\nmodel=["llama-3.1-8b"]\nbatch={start=1, stop=512, num=1000}\n'
                  b'context_tok={start=1, stop=100000, num=1000}\nmargin_frac={start=0, stop=0.5, num=1000}\n'),
    "cc_text.toml": b'[grid]\nhardware=["h200"]\nmodel=["llama-3.1-8b"]\nbatch=[1]\n[sweep]\nchunk_configs="many"\n',
    "ok.toml": b'[grid]\nhardware=["h200"]\nmodel=["llama-3.1-8b"]\nbatch=[1, 8]\n',
    "no_measured.csv": ("\n".join(",".join(c for i, c in enumerate(line.split(",")) if i != HEADER.split(",").index("measured_step_s"))
                                   for line in [HEADER, ROW0]) + "\n").encode(),
    "two_cases.csv": ("\n".join(CASES.read_text().splitlines()[:3]) + "\n").encode(),
    "batch_1p5.toml": b'[grid]\nhardware=["h200"]\nmodel=["llama-3.1-8b"]\nbatch=[1.5]\n',
    "mk_words.csv": (MK_HEADER + "\n2025-01,p,nvidia,research_paper,megakernel,high,s,2025-01\n").encode(),
    "mk_header.csv": (MK_HEADER + "\n").encode(),
    "mk_baddate.csv": (MK_HEADER + "\nsoon,p,nvidia,research_paper,megakernel,1,s,2025-01\n").encode(),
    "sn_words.csv": (SN_HEADER + "\n2025-01,v,p,,deliveries,many,,lots,chips,s,2025-01,\n").encode(),
    "disagg_nosplit.csv": _disagg_without("n_prefill_gpus", "n_decode_gpus"),
    "neg_batch_cap.csv": _mlperf_with("max_batch_size", -5),
    "typo_hw.csv": _mlperf_with("hardware", "h2000"),
    "typo_model.csv": _mlperf_with("model", "llama-2-7b0"),
    "typo_engine.csv": _mlperf_with("engine", "tensort"),
    "too_small.csv": _mlperf_cells(tp=1, ep=1, dp_attention=0, n_gpus=1),
    "zero_requests.csv": _mlperf_with("n_requests", 0),
    "pct_mem_frac.csv": _mlperf_with("mem_frac", 95),
    "disagg_nodecode.csv": _disagg_without("n_decode_gpus"),
    "adir/keep": b"",
    "afile": b"not a directory",
}


def _prepare(tmp: Path) -> None:
    for name, data in FILES.items():
        p = tmp / name
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(data)


T = "throughput"
C = "calibrate"
V = "validate"
# (args, substring expected in the one line); paths are relative to the case's tmp dir
CLI_CASES: list[tuple[list[str], str]] = [
    # -- usage errors from click: one line, not the usage block
    (["no-such-command"], "No such command"),
    ([T, "--bogus"], "No such option"),
    ([T, "-b"], "requires an argument"),
    ([T, "--tokens-per-step", "two"], "Invalid value"),
    (["sweep-mc", "--samples", "1e13"], "Invalid value"),
    (["watch", "--n-boot", "1e8"], "Invalid value"),
    (["hardware", "--format", "xml"], "Invalid value"),
    # -- throughput: raw values
    ([T, "-b", "1.5"], "whole number"),
    ([T, "-c", "100.7"], "whole number"),
    ([T, "-b", "inf"], "whole number"),
    ([T, "-b", "nan"], "whole number"),
    ([T, "-b", "x"], "--batch must be an integer"),
    ([T, "-b", ""], "--batch is empty"),
    ([T, "-b", ",,"], "--batch is empty"),
    ([T, "-b", "0"], "batch must be an integer >= 1"),
    ([T, "-b", "1e30"], "batch"),
    ([T, "-c", "-1"], "context_tok must be an integer >= 0"),
    ([T, "-b", ",".join(["1"] * 20001)], "at most"),
    ([T, "--tokens-per-step", "0"], "tokens_per_step"),
    ([T, "--system", "dgx-h200", "--tokens-per-step", "3"], "come from --spec"),
    ([T, "--prompt", "-5"], "prompt_tok"),
    ([T, "-H", "h2000"], "Unknown accelerator 'h2000'"),
    ([T, "-m", "llama-9"], "Unknown model"),
    ([T, "-e", "turbo"], "Unknown execution plan"),
    ([T, "--kv-precision", "fp7"], "Unknown precision"),
    ([T, "--weight-precision", "fp7"], "Unknown precision"),
    ([T, "--profile", "nope"], "Unknown profile"),
    ([T, "--profile", ""], "profile is empty"),
    ([T, "--profile", "missing.json"], "not found"),
    ([T, "--profile", "adir"], "is a directory"),
    ([T, "--profile", "number.json"], "JSON object"),
    ([T, "--profile", "list.json"], "JSON object"),
    ([T, "--profile", "badjson.json"], "not valid JSON"),
    ([T, "--profile", "words.json"], "must be a number"),
    ([T, "--profile", "nan.json"], "weight_bw_frac"),
    ([T, "--profile", "binary.bin"], "not UTF-8"),
    # -- calibrate: the cases reader, the microbench reader, --out before work
    ([C, "missing.csv"], "not found"),
    ([C, "adir"], "is a directory"),
    ([C, "empty.csv"], "is empty"),
    ([C, "blank.csv"], "is empty"),
    ([C, "latin1.csv"], "not UTF-8"),
    ([C, "binary.bin"], "not UTF-8"),
    ([C, "ragged.csv"], "not a rectangular CSV"),
    ([C, "header_only.csv"], "no rows"),
    ([C, "missing_col.csv"], "missing columns"),
    ([C, "text_measured.csv"], "measured_step_s is not a number"),
    ([C, "zero_measured.csv"], "measured_step_s must be > 0"),
    ([C, "neg_measured.csv"], "measured_step_s must be > 0"),
    ([C, "inf_measured.csv"], "measured_step_s is not finite"),
    ([C, "phase_decod.csv"], "Did you mean 'decode'"),
    ([C, "zero_bytes.csv"], "weight_bytes_per_param must be > 0"),
    ([C, "neg_chips.csv"], "n_chips must be >= 1"),
    ([C, "frac_batch.csv"], "batch must be a whole number"),
    ([C, "--microbench", "missing.csv"], "not found"),
    ([C, "--microbench", "adir"], "is a directory"),
    ([C, "--microbench", "empty.csv"], "is empty"),
    ([C, "-o", "adir"], "must be a file path"),
    ([C, "-o", "afile/p.json"], "is a file, not a directory"),
    ([C, "-o", "p.txt"], "must end in .json"),
    ([C, "-o", ""], "--out is empty"),
    # -- validate
    ([V, "missing.csv"], "not found"),
    ([V, "adir"], "is a directory"),
    ([V, "latin1.csv"], "not UTF-8"),
    ([V, "ragged.csv"], "not a rectangular CSV"),
    ([V, "neg_measured.csv"], "measured_step_s must be > 0"),
    ([V, "inf_measured.csv"], "measured_step_s is not finite"),
    ([V, "phase_decod.csv"], "phase must be one of"),
    ([V, "--profile", "number.json"], "JSON object"),
    # -- validate-serving: a disaggregated row without its P:D split
    (["validate-serving", "disagg_nosplit.csv"], "missing n_prefill_gpus, n_decode_gpus"),
    (["validate-serving", "disagg_nodecode.csv", "--format", "csv"], "split; missing n_decode_gpus"),
    (["validate-serving", "neg_batch_cap.csv"], "max_batch_size must be >= 1, got -5; expected a whole number of sequences"),
    (["validate-serving", "typo_hw.csv"], "Unknown accelerator 'h2000'. Did you mean"),
    (["validate-serving", "typo_model.csv"], "Unknown model 'llama-2-7b0'. Did you mean 'llama-2-70b'"),
    (["validate-serving", "typo_engine.csv"], "Unknown engine 'tensort'. Did you mean"),
    (["validate-serving", "too_small.csv", "--format", "csv"], "does not fit per chip"),
    (["validate-serving", "zero_requests.csv", "--format", "json"], "n_requests must be >= 1, got 0; expected a whole number of requests"),
    (["price", "--mem-frac", "90"], "mem_frac must be in (0, 1], got 90. Fractions are 0-1; did you mean 0.9?"),
    (["validate-serving", "pct_mem_frac.csv"], "mem_frac: fraction expected, got 95 — did you mean 0.95?"),
    # -- sweep: the grid reader, sizes, --out, engines
    (["sweep", "missing.toml"], "not found"),
    (["sweep", "adir"], "is a directory"),
    (["sweep", "binary.bin"], "not UTF-8"),
    (["sweep", "bad.toml"], "not valid TOML"),
    (["sweep", "start_a.toml"], "batch.start must be a number"),
    (["sweep", "num_text.toml"], "batch.num must be a whole number"),
    (["sweep", "batch_words.toml"], "batch must be a list of numbers"),
    (["sweep", "batch_frac.toml"], "batch"),
    (["sweep", "typo_hw.toml"], "Unknown accelerator"),
    (["sweep", "no_model.toml"], "needs [grid] model"),
    (["sweep", "chunks1.toml"], "chunks"),
    (["sweep", "huge.toml"], "more than"),
    (["sweep", "cc_text.toml"], "chunk_configs must be a whole number"),
    (["sweep", "ok.toml", "--out", "adir"], "must be a file path"),
    (["sweep", "ok.toml", "--out", "r.xlsx"], ".parquet or .csv"),
    (["sweep", "ok.toml", "--out", "afile/r.csv"], "is a file, not a directory"),
    (["sweep", "ok.toml", "--engine", "spark"], "engine must be one of"),
    (["sweep", "ok.toml", "--engine", "dask", "--workers", "0"], "workers must be an integer >= 1"),
    (["sweep", "ok.toml", "--engine", "dask", "--workers", "-1"], "workers must be an integer >= 1"),
    (["sweep", "ok.toml", "--engine", "dask", "--scheduler", "tcp://host"], "port required"),
    # -- sweep-mc: sizes before work, engines
    (["sweep-mc", "--samples", "10000000000000"], "would take"),
    # a P5-P95 interval needs one draw in each 5 % tail: 2 / (1 - 0.9) = 20 draws (hand calculation)
    (["sweep-mc", "--samples", "5"], "n_samples 5 is too few for a 90% interval: give at least 20"),
    (["sweep-mc", "--samples", "19"], "n_samples 19 is too few for a 90% interval: give at least 20"),
    (["sweep-mc", "--chunk-samples", "0"], "chunk_samples"),
    (["sweep-mc", "--chunk-samples", "1000000000"], "per chunk"),
    (["sweep-mc", "--samples", "100000000", "--chunk-samples", "10"], "chunks"),
    (["sweep-mc", "--seed", "-1"], "seed must be an integer >= 0"),
    (["sweep-mc", "--engine", "dask", "--workers", "0"], "workers must be an integer >= 1"),
    (["sweep-mc", "--engine", "dask", "--workers", "-1"], "workers must be an integer >= 1"),
    (["sweep-mc", "--engine", "dask", "--scheduler", "localhost"], "port required"),
    (["sweep-mc", "-H", "h2000"], "Unknown accelerator"),
    # -- watch: sizes before work, event files, --out
    (["watch", "--n-boot", "100000000"], "would take"),
    (["watch", "--n-draws", "100000000"], "would take"),
    (["watch", "--n-boot", "-1"], "n_boot must be an integer >= 0"),
    (["watch", "--n-draws", "5"], "n_draws 5 is too few for a 90% interval: give at least 20"),
    (["watch", "--n-boot", "1"], "n_boot 1 is too few for a 90% interval: give at least 20 (one draw in each "
                                 "5% tail) or 0 for none"),
    (["watch", "--seed", "-1"], "seed must be an integer >= 0"),
    (["watch", "--out", "afile"], "must be a directory"),
    (["watch", "--megakernel-events", "adir"], "is a directory"),
    (["watch", "--megakernel-events", "empty.csv"], "is empty"),
    (["watch", "--megakernel-events", "latin1.csv"], "not UTF-8"),
    (["watch", "--megakernel-events", "mk_header.csv"], "no rows"),
    (["watch", "--megakernel-events", "mk_words.csv"], "level is not a number, got 'high'; expected a whole number 0-4"),
    (["watch", "--megakernel-events", "mk_baddate.csv"], "bad date"),
    (["watch", "--megakernel-events", "missing.csv"], "not found"),
    (["watch", "--supernode-events", "sn_words.csv"], "units_low is not a number"),
    (["watch", "--supernode-events", "ragged.csv"], "not a rectangular CSV"),
    # -- report: names and numbers before work, --out before work
    (["report", "-o", "rep", "--samples", "-10"], "n_samples"),
    (["report", "-o", "rep", "--samples", "10"], "n_samples (Monte Carlo draws) 10 is too few for a 90% interval"),
    (["report", "-o", "rep", "--samples", "100000000"], "at most"),
    (["report", "-o", "rep", "-H", "h200", "-H", "h2000"], "Unknown accelerator 'h2000'"),
    (["report", "-o", "rep", "-m", "llama-9"], "Unknown model"),
    (["report", "-o", "rep", "-e", "turbo"], "Unknown execution plan"),
    (["report", "-o", "rep", "-w", "chats"], "Unknown workload"),
    (["report", "-o", "rep", "--weight-precision", "fp7"], "Unknown precision"),
    (["report", "-o", "rep", "--seed", "-1"], "seed must be an integer >= 0"),
    (["report", "-o", "afile"], "must be a directory"),
    (["report", "-o", "afile/sub"], "is a file, not a directory"),
    # -- commands owned elsewhere: only what already holds
    (["price", "-H", "h2000"], "Unknown accelerator"),
    # a model no chip of the default system holds: the catalogued systems that do (B300 288 GB,
    # MI325X 256 GB, MI355X 288 GB hold Kimi K3's ~200 GB a chip over 8 chips; H200's 141 GB do not)
    (["price", "-m", "kimi-k3", "--system", "dgx-h200"], "catalogued ones that hold it: dgx-b300, mi325x-8, mi355x-8"),
    (["price", "-b", "nan"], "Invalid value"),
    # -- --layouts compares layouts at a target speed, each at its own batch
    (["price", "--layouts"], "--layouts compares the layouts at a target speed; give --target-tok-s-user too"),
    (["price", "--layouts", "--target-tok-s-user", "35", "-b", "8"], "drop --batch"),
    (["forecast", "--out", "afile"], "must be a directory"),
    (["frontier", "--out", "adir"], "must be a file path"),
    (["frontier", "-s", "dgx-h200", "--out", "f.txt"], "--out must end in .png, got 'f.txt'"),
    (["frontier", "--mlperf", "--out", "f.png"], "--mlperf prints a table and draws no frontier"),
    # -- a place no one can create files in (Linux /proc: permission bits do not stop root, the
    #    file system does), refused before any work rather than as a traceback at the write
    (["forecast", "--out", "/proc/tk_out"], "--out '/proc/tk_out' is inside the system directory /proc"),
    (["watch", "--out", "/proc/tk_out"], "--out '/proc/tk_out' is inside the system directory /proc"),
    (["report", "-o", "/proc/tk_out"], "--out '/proc/tk_out' is inside the system directory /proc"),
    (["sweep", "ok.toml", "--out", "/proc/tk_out.csv"], "--out '/proc/tk_out.csv' is inside the system directory /proc"),
    # -- stop 36 sweep: an empty --out is no path (a path type reads it as the current directory)
    (["report", "-o", ""], "--out is empty"),
    (["forecast", "--out", "", "-s", "google"], "--out is empty"),
    (["watch", "--out="], "--out is empty"),
    # -- the prefill chunk: 0 is not 'the default', a huge one is refused, not an overflow
    (["price", "--prefill-chunk", "0"], "prefill_chunk_tok must be an integer >= 1, got 0"),
    (["price", "--prefill-chunk", "99999999999999999999"], "prefill_chunk_tok must be an integer <="),
    (["report", "-o", "rep", "--prefill-chunk", "99999999999999999999"], "prefill_chunk_tok must be an integer <="),
    # -- a prefill batch whose KV cannot fit (Llama-3.1-8B on one H200 holds 891 prompts of 1K)
    (["price", "--prefill-batch", "100000"], "largest that fits is 891"),
    # -- METHOD:GAMMA:ALPHA says which part is wrong
    (["price", "--spec", "mtp:0:0.5"], "GAMMA (draft tokens per step) must be an integer >= 1"),
    (["price", "--spec", ":3:0.7"], "names no method"),
    (["price", "--spec", "eagle:3:70"], "ALPHA (per-token acceptance) must be a fraction in 0-1, got '70'; did you mean 0.7?"),
    (["price", "--spec", "eagle:3"], "no published acceptance by draft position for 'eagle' (known: mtp); give it as eagle:GAMMA:ALPHA"),
    # -- empty items between commas are typos, not skipped
    (["price", "--utilization-profile", "8:278,,16:201"], "empty segment between commas"),
    (["validate", "--holdout", "regime", "--regime", "verify,,graph"], "empty name between commas"),
    # -- throughput: the hardware a system conflicts with, list typos, quantities named right
    ([T, "-H", "b200", "-s", "dgx-h200"], "--hardware b200 conflicts with --system dgx-h200"),
    ([T, "--engine-version", "abc"], "is not a release number"),
    ([T, "-b", "1,,2"], "has an empty item between commas"),
    ([T, "--prompt", "99999999999999999999"], "prompt_tok (--prompt) must be an integer <="),
    ([T, "--prompt", "100000000"], "not one sequence of 100,000,000 tokens fits on h200"),
    ([T, "--tokens-per-step", "99999999999999999999"], "tokens_per_step must be an integer <="),
    ([T, "--mem-frac", "0.01"], "does not fit on h200-ib-32"),
    # -- validate compares with measurements; options that do nothing are refused
    ([V, "--microbench", "missing.csv"], "--microbench needs --holdout"),
    ([V, "no_measured.csv"], "missing columns ['measured_step_s']"),
    ([V, "two_cases.csv", "--holdout", "model"], "needs cases of at least 2 models"),
    # -- MTP needs the checkpoint's MTP module (Llama 3.1 8B ships none; DeepSeek-V3 one)
    (["price", "--spec", "mtp"], "llama-3.1-8b ships no multi-token-prediction module"),
    # -- options that would do nothing are refused
    (["sweep", "ok.toml", "--workers", "4"], "--workers apply to --engine dask"),
    (["sweep-mc", "--scheduler", "tcp://x:1"], "--scheduler apply to --engine dask"),
    (["frontier", "--mlperf", "-m", "foo"], "--mlperf checks the bundled MLPerf rows and takes no deployment: drop --model"),
    (["price", "--cost", "hyperscaler-owned@"], "names no survey after '@'"),
    # -- listed grid batches must be whole (a range's values are rounded)
    (["sweep", "batch_1p5.toml"], "batch must be an integer >= 1, got 1.5"),
]


def _snapshot(d: Path) -> set[str]:
    return {str(p.relative_to(d)) for p in d.rglob("*")}


@pytest.mark.parametrize("args, needle", CLI_CASES, ids=[" ".join(a)[:60] for a, _ in CLI_CASES])
def test_cli_bad_input_one_line_exit_2_no_file(tmp_path, monkeypatch, capsys, args, needle):
    _prepare(tmp_path)
    monkeypatch.chdir(tmp_path)
    before = _snapshot(tmp_path)
    t0 = time.perf_counter()
    with pytest.raises(SystemExit) as exc:
        main(list(args))
    elapsed = time.perf_counter() - t0
    err = capsys.readouterr().err
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert exc.value.code == 2, err
    assert len(lines) == 1, err
    assert "Traceback" not in err
    assert needle in lines[0], lines[0]
    assert _snapshot(tmp_path) == before  # no output file, no temporary left
    assert elapsed < 15.0  # refused before any work (generous: shared CI cores)


# ---------------------------------------------------------------- library: typed, one-line errors
def _lib_cases(tmp: Path):
    from tokenomics import report as rp
    from tokenomics.distributed import check_cluster_args
    from tokenomics.econ.tco import cost_model
    from tokenomics.perf import Profile, decode_step, load_profile
    from tokenomics.econ.tco import tier_table
    from tokenomics.econ.uncertainty import monte_carlo as econ_mc
    from tokenomics.perf import max_batch
    from tokenomics.validate.calibrate import fit_profile, leave_one_model_out, predict_cases, read_cases, summarize
    from tokenomics.perf.profile import Profile as P
    from tokenomics.watch import megakernels, supernodes
    from tokenomics.watch.dashboard import watch

    cm = cost_model("h200", "bottom-up")
    ds = lambda **kw: (lambda: decode_step("h200", "llama-3.1-8b", "graph", **kw))  # noqa: E731
    return [
        ("negative bandwidth", ds(hbm_bytes_per_s=-4.8e12)),
        ("zero bandwidth", ds(hbm_bytes_per_s=0.0)),
        ("NaN bandwidth", ds(hbm_bytes_per_s=float("nan"))),
        ("bandwidth as text", ds(hbm_bytes_per_s="fast")),
        ("accepted negative", ds(tokens_per_step=4, accepted_tok_per_step=-2)),
        ("accepted > verified", ds(tokens_per_step=4, accepted_tok_per_step=5)),
        ("fractional batch", ds(batch=1.5)),
        ("batch as text", ds(batch="8")),
        ("batch as bool", ds(batch=True)),
        ("batch array with text", ds(batch=np.array(["1", "2"]))),
        ("context NaN", ds(context_tok=float("nan"))),
        ("profile as a number", ds(profile=3)),
        ("memory fraction as a percent", lambda: __import__("tokenomics.deployment", fromlist=["resolve"]).resolve(
            "llama-3.1-8b", hardware="h200", mem_frac=90)),
        ("memory fraction zero", lambda: __import__("tokenomics.deployment", fromlist=["resolve"]).resolve(
            "llama-3.1-8b", hardware="h200", mem_frac=0.0)),
        ("profile file missing", ds(profile=str(tmp / "nope.json"))),
        ("profile JSON a number", lambda: P.from_json("3")),
        ("profile JSON list", lambda: P.from_json("[]")),
        ("profile value text", lambda: P.from_json('{"name": "x", "flop_frac": "a"}')),
        ("profile as percent", lambda: Profile("x", weight_bw_frac=80)),
        ("load_profile empty", lambda: load_profile("")),
        ("read_cases a number", lambda: read_cases(3)),
        ("read_cases a directory", lambda: read_cases(str(tmp))),
        ("predict_cases path missing", lambda: predict_cases(str(tmp / "x.csv"))),
        ("predict_cases a list", lambda: predict_cases([1, 2])),
        ("fit_profile needs measured", lambda: fit_profile(read_cases(CASES).drop(columns=["measured_step_s"]))),
        ("load_grid a number", lambda: sweep.load_grid(3)),
        ("load_grid a directory", lambda: sweep.load_grid(tmp)),
        ("grid with text axis", lambda: sweep.parse_grid({"grid": {"hardware": ["h200"], "model": ["llama-3.1-8b"],
                                                                   "batch": {"start": "a", "stop": 2, "num": 2}}})),
        ("mc 1e13 samples", lambda: sweep.monte_carlo(cm, 500.0, 2000.0, n_samples=10**13)),
        ("mc float samples", lambda: sweep.monte_carlo(cm, 500.0, 2000.0, n_samples="many")),
        ("mc seed -1", lambda: sweep.monte_carlo(cm, 500.0, 2000.0, n_samples=100, seed=-1)),
        ("mc dask 0 workers", lambda: sweep.monte_carlo(cm, 500.0, 2000.0, n_samples=100, engine="dask", n_workers=0)),
        ("cluster no port", lambda: check_cluster_args("tcp://host", 2)),
        ("cluster workers text", lambda: check_cluster_args(None, "2")),
        ("watch n_boot 1e8", lambda: watch(n_boot=10**8)),
        ("watch n_draws 1e8", lambda: watch(n_draws=10**8)),
        ("watch ci 90", lambda: watch(ci=90)),
        ("events a number", lambda: megakernels.load_events(3)),
        ("events a directory", lambda: supernodes.load_events(str(tmp))),
        ("report typo hardware", lambda: rp.build_report(hardware=("h200", "h2000"))),
        ("report samples -10", lambda: rp.build_report(n_samples=-10)),
        ("report hardware a number", lambda: rp.build_report(hardware=3)),
        ("write_report to a file", lambda: rp.write_report(CASES, report=None)),
        ("write_report report=3", lambda: rp.write_report(tmp / "r", report=3)),
        ("render_markdown a number", lambda: rp.render_markdown(3, {})),
        ("price_view a number", lambda: rp.price_view(3)),
        ("sweep.run a number", lambda: sweep.run(3)),
        ("sweep.evaluate a word", lambda: sweep.evaluate(str(tmp / "none.toml"))),
        ("Grid hardware a number", lambda: sweep.Grid(hardware=3, model=("llama-3.1-8b",), batch=[1])),
        ("Grid batch text", lambda: sweep.Grid(hardware=("h200",), model=("llama-3.1-8b",), batch="a")),
        ("Grid chunk_configs text", lambda: sweep.Grid(hardware=("h200",), model=("llama-3.1-8b",), batch=[1],
                                                       chunk_configs="x")),
        ("summarize a number", lambda: summarize(3)),
        ("summarize raw cases", lambda: summarize(catalog.load("h200_cases"))),
        ("leave_one_model_out a number", lambda: leave_one_model_out(3)),
        ("max_batch context text", lambda: max_batch("h200", "llama-3.1-8b", context_tok="a")),
        ("weight precision a list", ds(weight_precision=["bf16"])),
        ("execution a number", lambda: decode_step("h200", "llama-3.1-8b", 3)),
        ("model a list", lambda: catalog.model([1])),
        ("accelerator None", lambda: catalog.accelerator(None)),
        ("tier_table a number", lambda: tier_table(3)),
        ("monte_carlo cost a number", lambda: econ_mc(3, 500.0, 2000.0)),
    ]


def test_library_bad_arguments_raise_one_line_tokenomics_errors(tmp_path):
    failures = []
    cases = _lib_cases(tmp_path)
    for label, call in cases:
        try:
            call()
        except TokenomicsError as exc:
            if "\n" in str(exc) or not str(exc):
                failures.append(f"{label}: message not one line: {exc!r}")
        except Exception as exc:  # noqa: BLE001 - the point: no untyped exception
            failures.append(f"{label}: {type(exc).__name__}: {exc}")
        else:
            failures.append(f"{label}: accepted")
    assert not failures, "\n".join(failures)
    assert len(cases) >= 55


# ---------------------------------------------------------------- defect classes
def test_percent_hint_only_for_values_that_look_like_percents():
    """Rule (tokenomics._validate.fraction): 2..100 reads as a percent; 1.5 does not."""
    from tokenomics import _validate as v
    from tokenomics.errors import ValidationError

    with pytest.raises(ValidationError, match="did you mean 0.8"):
        v.fraction(80, "u")
    with pytest.raises(ValidationError) as exc:
        v.fraction(1.5, "u")
    assert "did you mean" not in str(exc.value)
    with pytest.raises(ValidationError) as exc:
        v.fraction(250, "u")
    assert "did you mean" not in str(exc.value)


def test_mc_chunking_with_a_small_tail_folds_it_into_the_last_chunk():
    """250,005 draws in chunks of 250,000 crashed (sizes[-2] += sizes.pop() on two chunks);
    1,000,005 in chunks of 250,000 put the 5-draw tail into the wrong chunk."""
    from tokenomics.econ.tco import cost_model

    cm = cost_model("h200", "bottom-up")
    a = sweep.monte_carlo(cm, 500.0, 2000.0, n_samples=25_005, chunk_samples=25_000)
    assert a.n_chunks == 1 and a.samples_usd_per_1k_tok.size == 25_005
    b = sweep.monte_carlo(cm, 500.0, 2000.0, n_samples=30_005, chunk_samples=10_000)
    assert b.n_chunks == 3 and b.samples_usd_per_1k_tok.size == 30_005
    # the first two chunks are exactly the 10,000-draw chunks of a 30,000-draw run
    c = sweep.monte_carlo(cm, 500.0, 2000.0, n_samples=30_000, chunk_samples=10_000)
    np.testing.assert_array_equal(b.samples_usd_per_1k_tok[:20_000], c.samples_usd_per_1k_tok[:20_000])


def test_mc_streams_percentiles_beyond_the_kept_draws(monkeypatch):
    """Above MC_KEEP_SAMPLES the draws are not kept; the streamed percentiles match the exact
    ones of the same draws to 1e-4 (2^16 log bins)."""
    from tokenomics.econ.tco import cost_model

    cm = cost_model("h200", "bottom-up")
    exact = sweep.monte_carlo(cm, 500.0, 2000.0, n_samples=40_000, chunk_samples=10_000, seed=2)
    monkeypatch.setattr(sweep, "MC_KEEP_SAMPLES", 1_000)
    streamed = sweep.monte_carlo(cm, 500.0, 2000.0, n_samples=40_000, chunk_samples=10_000, seed=2)
    assert streamed.samples_usd_per_1k_tok is None
    assert int(streamed.to_frame()["n_samples"][0]) == 40_000
    for q in ("p5", "p50", "p95"):
        assert getattr(streamed, q) == pytest.approx(getattr(exact, q), rel=1e-4)


def test_grid_chunks_are_counted_without_being_built():
    g = sweep.parse_grid({"grid": {"hardware": ["h200"], "model": ["llama-3.1-8b"], "batch": list(range(1, 11)),
                                   "context_tok": [1, 2, 3]}, "sweep": {"chunk_configs": 2}})
    assert g.n_chunks == len(g.chunks()) == 20  # one chunk per (batch, context pair of at most 2)
    g = sweep.parse_grid({"grid": {"hardware": ["h200"], "model": ["llama-3.1-8b"], "batch": list(range(1, 11)),
                                   "context_tok": [1, 2, 3]}, "sweep": {"chunk_configs": 7}})
    assert g.n_chunks == len(g.chunks()) == 5  # two batch rows of 3 contexts per chunk


def test_stale_temp_files_of_dead_writers_are_removed_and_reported(tmp_path):
    from tokenomics.io import write_text

    dead = tmp_path / ".out.csv.999999999.abc123.tmp"  # pid above any pid_max: no such process
    dead.write_bytes(b"x" * 1000)
    alive = tmp_path / f".out.csv.{os.getpid()}.def456.tmp"  # a live writer: left alone
    alive.write_bytes(b"y")
    legacy_old = tmp_path / ".out.csv.k3j2h1g0.tmp"  # no pid (earlier versions), 2 days untouched
    legacy_old.write_bytes(b"z")
    os.utime(legacy_old, (time.time() - 2 * 86400, time.time() - 2 * 86400))
    legacy_new = tmp_path / ".out.csv.a1b2c3d4.tmp"  # no pid, fresh: maybe a live writer
    legacy_new.write_bytes(b"w")
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        write_text(tmp_path / "out.csv", "a\n")
    assert not dead.exists() and alive.exists()
    assert not legacy_old.exists() and legacy_new.exists()
    assert any(issubclass(x.category, TokenomicsWarning) and "interrupted write" in str(x.message) for x in w)
    assert (tmp_path / "out.csv").read_text() == "a\n"


@pytest.fixture(scope="module")
def small_report():
    from tokenomics import report as rp

    return rp.build_report(hardware=("h200",), models=("llama-3.1-8b",), n_samples=100)


def test_report_directory_is_swapped_whole_or_not_at_all(tmp_path, monkeypatch, small_report):
    from tokenomics import report as rp

    out = tmp_path / "rep"
    rep = small_report
    first = rp.write_report(out, report=rep)
    old = {p.name: p.read_bytes() for p in out.iterdir()}
    assert {p.name for p in first} == set(old)

    def boom(*a, **k):
        raise KeyboardInterrupt  # killed while rendering, after the figures were drawn

    monkeypatch.setattr(rp, "render_html", boom)
    with pytest.raises(KeyboardInterrupt):
        rp.write_report(out, report=rep)
    assert {p.name: p.read_bytes() for p in out.iterdir()} == old  # the old report, untouched
    assert [p.name for p in tmp_path.iterdir()] == ["rep"]  # no temporary directory left


@pytest.mark.slow
def test_report_into_a_directory_with_other_files_keeps_them(tmp_path, small_report):
    from tokenomics import report as rp

    (tmp_path / "notes.txt").write_text("mine")
    rp.write_report(tmp_path, report=small_report)
    assert (tmp_path / "notes.txt").read_text() == "mine" and (tmp_path / "report.md").exists()


@pytest.mark.slow
def test_sigterm_during_sweep_leaves_no_file_and_no_temporary(tmp_path):
    grid = tmp_path / "g.toml"
    grid.write_text('[grid]\nhardware=["h200", "b200", "mi300x", "h100-sxm"]\nmodel=["llama-3.1-8b", "llama-3.1-70b"]\n'
                    'batch={start=1, stop=512, num=512}\ncontext_tok={start=128, stop=131072, num=400}\n'
                    'margin_frac={start=0, stop=0.5, num=60}\n[sweep]\nchunk_configs=200000\n')
    # ~98 M configurations: minutes of work, so the signal lands mid-sweep on any machine (at 16 M
    # a fast machine finished inside the 6 s and the test saw exit 0)
    env = dict(os.environ, PYTHONPATH=str(REPO))
    p = subprocess.Popen([sys.executable, "-m", "tokenomics", "sweep", str(grid), "--out", str(tmp_path / "r.parquet"),
                          "--no-progress"], cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    time.sleep(6.0)
    p.send_signal(signal.SIGTERM)
    _, err = p.communicate(timeout=60)
    assert p.returncode == 143, err
    assert b"Traceback" not in err
    assert sorted(x.name for x in tmp_path.iterdir()) == ["g.toml"]


# ---------------------------------------------------------------- raw values, generated
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

RAW = st.one_of(st.floats(allow_nan=True, allow_infinity=True), st.integers(-10, 10**20), st.text(max_size=6),
                st.booleans(), st.none(), st.lists(st.integers(-2, 3), max_size=3))


@settings(max_examples=150, deadline=None)
@given(RAW)
def test_batch_is_accepted_only_as_whole_positive_numbers(x):
    from tokenomics.perf import decode_step

    try:
        decode_step("h200", "dense-1b", "graph", batch=x, on_oom="ignore")
    except TokenomicsError as exc:
        assert "\n" not in str(exc)
        return
    vals = np.ravel(np.asarray(x, dtype=float))  # accepted: every value a whole number >= 1
    assert not isinstance(x, (str, bool)) and vals.size and np.all(vals >= 1) and np.all(vals == np.round(vals))


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet="0123456789.,-+einfaNx ", max_size=12))
def test_cli_integer_lists_are_parsed_exactly_or_refused(text):
    from tokenomics.cli.perf import _int_list
    from tokenomics.errors import ValidationError

    try:
        vals = _int_list(text, "--batch")
    except ValidationError as exc:
        assert "\n" not in str(exc)
        return
    parts = [p.strip() for p in text.split(",") if p.strip()]
    assert vals == [int(float(p)) for p in parts] and all(float(p) == int(float(p)) for p in parts)


def test_unreadable_file_is_one_line(tmp_path, monkeypatch):
    """Tests run as root here, where chmod 000 does not stop a read: the denial is simulated."""
    from tokenomics.errors import DataError
    from tokenomics.io import read_text

    p = tmp_path / "cases.csv"
    p.write_text("a\n1\n")

    def deny(*args, **kwargs):
        raise PermissionError(13, "Permission denied")

    import tokenomics.io as tio

    with monkeypatch.context() as m:  # the reader opens with os.open (after a stat that succeeds)
        m.setattr(tio.os, "open", deny)
        with pytest.raises(DataError, match="is not readable") as exc:
            read_text(p, "cases file")
    assert "\n" not in str(exc.value)


def test_huge_grid_with_one_config_per_chunk_is_refused_before_building_chunks():
    """20 M configurations, chunk_configs = 1: 20 M chunk objects (~5.5 GB) were built before
    the first row. Now the count is arithmetic, the limit is checked first, and chunks are
    generated one at a time even with force."""
    g = sweep.parse_grid({"grid": {"hardware": ["h200"], "model": ["llama-3.1-8b"],
                                   "batch": {"start": 1, "stop": 20000, "num": 20000},
                                   "context_tok": {"start": 1, "stop": 1000, "num": 1000}},
                          "sweep": {"chunk_configs": 1}})
    t0 = time.perf_counter()
    assert g.n_chunks == 20_000_000
    from tokenomics.errors import ValidationError

    with pytest.raises(ValidationError, match="20,000,000 chunks"):
        g.check()
    it = g.iter_chunks()
    first = next(it)
    assert (first.b0, first.b1, first.c0, first.c1) == (0, 1, 0, 1)
    assert time.perf_counter() - t0 < 2.0


def test_atomic_dir_never_renames_the_working_directory(tmp_path, monkeypatch):
    """`report --out .` with only report files in the working directory: swapping the directory
    would leave the shell in a deleted directory; the files are moved in one by one instead."""
    from tokenomics.io import atomic_dir

    monkeypatch.chdir(tmp_path)
    for text in ("old", "new"):
        with atomic_dir(".", owned=("report.md",)) as tmp:
            (tmp / "report.md").write_text(text)
    assert Path.cwd() == tmp_path and tmp_path.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["report.md"]
    assert (tmp_path / "report.md").read_text() == "new"


def test_a_file_system_error_mid_run_is_one_line_exit_2(tmp_path, monkeypatch, capsys):
    """A write the file system refuses after the checks passed (disk full, a read-only mount)
    is one line naming the error and the file, exit 2, no traceback."""
    import tokenomics.io as tio

    def full(*args, **kwargs):
        raise OSError(28, "No space left on device", str(tmp_path / "out" / "forecast_annual.csv"))

    monkeypatch.setattr(tio, "write_frame", full)
    with pytest.raises(SystemExit) as exc:
        main(["forecast", "-s", "google", "--out", str(tmp_path / "out")])
    err = capsys.readouterr().err
    assert exc.value.code == 2
    assert [ln for ln in err.splitlines() if ln.strip()] == [
        f"Error: No space left on device: {tmp_path / 'out' / 'forecast_annual.csv'}"]


@pytest.mark.parametrize("kw, needle", [
    (dict(batch=10**300), "batch must be an integer <= 1e+12 (far beyond any memory), got 1e+300"),
    (dict(batch=[1, 5e13]), "batch must be an integer <= 1e+12 (far beyond any memory), got 5e+13 (element of an array)"),
    (dict(batch=1, context_tok=2e12), "context_tok must be an integer <= 1e+12"),
])
def test_astronomical_shapes_are_refused_not_overflowed(kw, needle):
    """Even with the memory check off, a batch or context past 1e12 is an error, not an
    operation count that overflows to inf (hypothesis found 10**300 warning its way to NaN)."""
    from tokenomics.perf import decode_step

    with pytest.raises(TokenomicsError) as exc:
        decode_step("h200", "dense-1b", "graph", on_oom="ignore", **kw)
    assert needle in str(exc.value) and "\n" not in str(exc.value)


def test_fit_with_fewer_measurements_than_parameters_is_refused(tmp_path):
    """Two cases and no microbenchmarks cannot place nine parameters: one line naming the counts."""
    from tokenomics.errors import DataError
    from tokenomics.validate.calibrate import fit_profile

    two = tmp_path / "two.csv"
    two.write_text("\n".join(CASES.read_text().splitlines()[:3]) + "\n")
    with pytest.raises(DataError, match="needs at least as many measurements; got 2 cases"):
        fit_profile(two)
