"""Write tokenomics/datasets/serving_mlperf.csv: MLPerf Inference v5.1 and v6.0 Offline LLM results.

    python tools/curate_mlperf.py <mlcommons/inference_results_v5.1 git dir> <inference_results_v6.0 git dir>
    python tools/curate_mlperf.py --v61 <intel-ai-tce/inference_results_v6.1 checkout>

The two results repositories are read at fixed commits (ROUNDS; v6.0 in the gbeezybez fork, whose
``closed/`` tree and ``summary_results.json`` are those of MLCommons' "Publishing Results" commit)
by ``tools/_mlperf_extract.py``: every closed-division datacenter LLM result with its log summary,
system description, weight precision and, where the submission's engine configuration states it,
its parallelism. Taken here: the **Offline** results (LoadGen queues every sample at once, so the
engine runs at the largest batch it allows; Server and Interactive results are throughput at a
Poisson arrival rate that meets p99 latency limits, which this schema cannot state) of the models
and chips the catalog holds, in the schema of ``serving_public.csv``:

* ``hardware``: H100/H200 SXM, B200, B300, GB200, GB300, MI300X, MI325X, MI355X (H200 NVL,
  MI350X, virtualized and mixed-chip systems are left out); ``model``: llama2-70b-99/-99.9 ->
  llama-2-70b, llama3.1-405b, llama3.1-8b, mixtral-8x7b, deepseek-r1, gpt-oss-120b;
* ``weight_precision`` as the submission's ``weight_data_types`` (``fp4`` is NVFP4 on NVIDIA,
  MXFP4 on AMD); a result without it is left out;
* ``engine``: TensorRT(-LLM) -> trt, vLLM -> vllm, SGLang -> sglang, anything else (PyTorch,
  ATOM harnesses) -> default (the vendor's fitted median);
* layout ``tp``/``ep``, ``dp_attention`` (``enable_attention_dp``), ``kv_precision``
  (``kv_cache_dtype``) and ``max_batch_size`` (NVIDIA ``gpu_batch_size``, AMD ``max_num_seqs``)
  from the engine configuration where it states them; a result with pipeline parallelism > 1 is
  left out (the schema has no ``pp``). Where no configuration states the layout, a dense model
  takes the smallest power-of-two TP whose weight share is at most half a chip's memory
  (ASSUMPTION: offline runs leave the rest to the KV cache) and an MoE model is left out;
* ``n_gpus`` = the system's accelerators (all instances together), ``n_requests`` = the
  requests LoadGen queued (``samples_per_query`` of the log: the dataset's samples repeated to fill
  the minimum duration), ``osl_tok`` = the run's own mean output length (logged
  tokens/s over samples/s), ``isl_tok`` = the benchmark's mean input length of ``datasets/mlperf_benchmarks.csv`` (an
  assumption when these rows were curated; since stop 31 the datasets' measured means, written into
  the rows of both files);
* ``measured_output_tok_per_s_per_gpu`` = logged tokens per second (output tokens) / ``n_gpus``.

``serving_mlperf_server.csv`` holds the **Server** and **Interactive** results of the same systems
as ``serve`` rows (Poisson arrivals at the submitter's target rate; p99 TTFT/TPOT limits): the
concurrency the run held, DERIVED by Little's law as completed samples/s x mean latency, the mean
TTFT as logged and TPOT DERIVED as (mean latency - mean TTFT) / (mean output tokens - 1); the
closed-loop serving model at that concurrency stands in for the open-loop arrivals. DeepSeek-R1
Interactive is left out (v6.0 requires MTP speculative decoding there; no acceptance is logged).

One run counts once (:func:`drop_repeated_runs`, stop 38): a submitter may file the same
performance run under both accuracy targets of a benchmark (``llama2-70b-99`` and ``-99.9``, the
same log values in both directories); the ``-99.9`` copy is dropped where its ``-99`` twin holds
the same measured values (48 Offline and 73 Server/Interactive rows were such copies). The bundled
files were deduplicated in place by that function (case ids renumbered in order, as a rebuild does).

These rows were collected after the last model change (stop 23) and are scored once, blind:
``tokenomics validate-serving mlperf`` and ``mlperf-server``.

``--v61`` writes ``serving_mlperf_v61.csv`` from the v6.1 round (:data:`ROUND_V61`; stop 44): its
Offline rows, then its Server rows, by the same rules plus the two of :func:`round_rows`. The
checkout may be a plain directory, including an excerpt of one that holds only the files the
reader parses, at their paths (``tokenomics/datasets/README.md`` says how the bundled file was made).
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _mlperf_extract as X  # noqa: E402

OUT = Path(__file__).resolve().parent.parent / "tokenomics" / "datasets" / "serving_mlperf.csv"
OUT_SERVER = OUT.with_name("serving_mlperf_server.csv")

#: (round, repository, commit, publication date of the round).
ROUNDS = (("v5.1", "mlcommons/inference_results_v5.1", "965182b03376a00fcae415c54e560e1c83937932", "2025-09-09"),
          ("v6.0", "gbeezybez/inference_results_v6.0", "4d3916ac9cf474b679cdfcf492d43a0559418ad1", "2026-03-26"))
#: The v6.1 round, in the intel-ai-tce fork (a full copy of its ``closed/`` tree); as_of = the runs'
#: logged test date (LoadGen ``test_datetime`` 2026-07-03 of NVIDIA's B300 Llama 2 Offline run):
#: the round's publication date was not found in a stored source.
ROUND_V61 = ("v6.1", "intel-ai-tce/inference_results_v6.1", "5174fca85775b97127da8e3ff07f1bb776880fc4", "2026-07")
OUT_V61 = OUT.with_name("serving_mlperf_v61.csv")

HARDWARE = (("GB300", "gb300"), ("GB200", "gb200"), ("B300", "b300"), ("B200", "b200"),
            ("H200-SXM", "h200"), ("H100-SXM", "h100"), ("MI355X", "mi355x"), ("MI325X", "mi325x"),
            ("MI300X", "mi300x"))
MODELS = {"llama2-70b-99": "llama-2-70b", "llama2-70b-99.9": "llama-2-70b", "llama3.1-405b": "llama-3.1-405b",
          "llama3.1-8b": "llama-3.1-8b", "mixtral-8x7b": "mixtral-8x7b", "deepseek-r1": "deepseek-r1",
          "gpt-oss-120b": "gpt-oss-120b"}


def _hardware(acc: str) -> str | None:
    if re.search(r"virtuali|NVL-|\(x\d+\)| and |, ", acc, re.I):
        return None
    for key, name in HARDWARE:
        if key.lower() in acc.lower():
            return name
    return None


def _engine(name: str) -> str:
    n = name.lower()
    return ("trt" if "tensorrt" in n or n.startswith("trt") else "vllm" if "vllm" in n
            else "sglang" if "sglang" in n else "default")


def _configs(row: dict) -> list[str]:
    paths = []
    for part in str(row.get("config_path", "")).split("; "):
        if part.startswith(("tp/pp/ep<-", "engine cfg (no tp/pp/ep found)<-")):
            paths += part.split("<-", 1)[1].split("|")
    return paths


def _product(expr: str) -> int:
    """``"128 * 7"`` -> 896: the configurations write some batch sizes as products."""
    out = 1
    for f in expr.split("*"):
        out *= int(f.strip())
    return out


def _settings(src, paths: list[str], serve_yaml: bool = False) -> dict:
    """kv_cache_dtype, enable_attention_dp and the max batch an engine configuration states
    (``serve_yaml``: also TensorRT-LLM serve files' ``max_batch_size`` and ``kv_cache_config.dtype``)."""
    text = "\n".join(src.read(p) or "" for p in paths)
    out = {}
    kv = set(re.findall(r"kv_cache_dtype['\"]?\s*[:=]\s*['\"]?(fp8|bf16|fp16|auto|nvfp4)", text, re.I))
    if serve_yaml:  # TensorRT-LLM serve files: kv_cache_config: {dtype: ...}
        for _, block in re.findall(r"^([ \t]*)kv_cache_config\s*:\s*\n((?:\1[ \t]+\S.*(?:\n|$))*)", text, re.M):
            kv |= set(re.findall(r"^\s*dtype\s*:\s*['\"]?(fp8|bf16|fp16|auto|nvfp4)", block, re.I | re.M))
    if len(kv) == 1:
        out["kv_precision"] = kv.pop().lower().replace("auto", "")
    dpa = set(re.findall(r"enable_attention_dp['\"]?\s*[:=]\s*(True|False|true|false)", text))
    if len(dpa) == 1:
        out["dp_attention"] = int(dpa.pop().lower() == "true")
    mb = set(_product(x) for x in re.findall(r"gpu_batch_size\s*:\s*\{[^}]*?:\s*([\d\s*]+)", text))
    mb |= set(int(x) for x in re.findall(r"^\s*max_num_seqs\s*:\s*(\d+)", text, re.M))
    if serve_yaml:
        mb |= set(int(x) for x in re.findall(r"^\s*max_batch_size\s*:\s*(\d+)", text, re.M))
    if len(mb) == 1:
        out["max_batch_size"] = mb.pop()
    return out


def _dense_tp(model: str, precision: str, hardware: str) -> int:
    from tokenomics.catalog import accelerator, model as _model
    from tokenomics.perf.memory import weight_bytes_per_chip

    acc = accelerator(hardware)  # the catalog resolves aliases (h100 -> h100-sxm)
    if precision == "fp4":  # as the serving rows read it (validate.serving_cases.case_deployment)
        precision = "mxfp4" if acc.vendor.upper() == "AMD" else "nvfp4"
    weights = weight_bytes_per_chip(_model(model), weight_precision=precision)
    tp = 1
    while weights / tp > 0.5 * acc.hbm_bytes and tp < 8:
        tp *= 2
    return tp


def build(gitdirs: list[Path], scenario: str = "Offline") -> pd.DataFrame:
    """The ``Offline`` rows (``serving_mlperf.csv``) or the ``Server`` and ``Interactive`` ones
    (``serving_mlperf_server.csv``) of both rounds."""
    scenarios = ("Offline",) if scenario == "Offline" else ("Server", "Interactive")
    out = []
    for rnd, gd in zip(ROUNDS, gitdirs):
        out += round_rows(X.source(gd, rnd[2]), rnd, scenarios)
    df = pd.DataFrame(out).sort_values(["model", "hardware", "as_of", "note"], kind="stable")
    df["case_id"] = [f"{'M' if scenario == 'Offline' else 'MS'}{i + 1:03d}" for i in range(len(df))]
    return drop_repeated_runs(df.reset_index(drop=True))


def build_v61(path: Path) -> pd.DataFrame:
    """``serving_mlperf_v61.csv``: the v6.1 round's Offline rows, then its Server rows (case ids
    ``V001``...), from a checkout of :data:`ROUND_V61` (a git directory or a plain tree)."""
    src, parts = X.source(path, ROUND_V61[2]), []
    for scenarios in (("Offline",), ("Server",)):
        rows = round_rows(src, ROUND_V61, scenarios)
        if rows:
            parts.append(pd.DataFrame(rows).sort_values(["model", "hardware", "note"], kind="stable"))
    df = pd.concat(parts, ignore_index=True)
    df["case_id"] = [f"V{i + 1:03d}" for i in range(len(df))]
    return drop_repeated_runs(df)


def round_rows(src, round_: tuple[str, str, str, str], scenarios: tuple[str, ...]) -> list[dict]:
    """The rows of one round (``(round, repository, commit, as_of)``) in ``scenarios``, read from
    ``src`` (:func:`_mlperf_extract.source`); case ids are left empty.

    The v6.1 round's submissions configure TensorRT-LLM with ``trtllm-serve-*.yaml`` files, so for
    it (only: the v5.1 / v6.0 files rebuild as they were) rules are added: a result whose engine
    configuration is a disaggregated one (``*disagg*`` files) is left out (the schema needs the
    prefill / decode split, which those files do not state), and the batch cap and KV precision also
    come from the serve file's ``max_batch_size`` and ``kv_cache_config.dtype``."""
    from tokenomics.catalog import load, model as _model

    v61 = round_[0] == "v6.1"
    bench = load("mlperf_benchmarks")
    out = []
    rnd, repo, commit, as_of = round_
    for r in X.extract(rnd, src, repo, commit, as_of):
        if r["scenario"] not in scenarios or r["valid"] != "VALID" or r["benchmark"] not in MODELS:
            continue
        hw = _hardware(str(r["accelerator"]))
        prec = str(r["precision"]).strip().lower()
        if hw is None or prec not in ("fp4", "mxfp4", "fp8", "bf16", "fp16"):
            continue
        model = MODELS[r["benchmark"]]
        if str(r["pp"]) not in ("", "1"):
            continue
        if model == "deepseek-r1" and r["scenario"] == "Interactive":
            continue  # v6.0 rules require MTP speculative decoding there; its acceptance is not logged
        if v61 and any("disagg" in c.rsplit("/", 1)[-1] for c in _configs(r)):
            continue  # a disaggregated deployment: its prefill / decode split is not stated
        s = _settings(src, _configs(r), serve_yaml=v61)
        moe = _model(model).is_moe
        tp = int(r["tp"]) if str(r["tp"]).isdigit() else None
        ep = int(r["ep"]) if str(r["ep"]).isdigit() else 1
        how = "layout from the engine configuration"
        if tp is None:
            if moe:
                continue
            tp, how = _dense_tp(model, prec, hw), "layout not stated: smallest TP holding the weights in half the memory (ASSUMPTION)"
        n = int(r["n_accelerators"])
        tok = float(r["result_tok_per_s"])
        isl = float(bench.loc[model, "isl_tok"])
        isl_how = ("the dataset's mean input length" if bench.loc[model, "isl_kind"] == "measured"
                   else "an ASSUMPTION: no published mean")
        row = dict(
            case_id="", phase="offline", hardware=hw, model=model,
            weight_precision="fp4" if prec == "mxfp4" else prec, kv_precision=s.get("kv_precision", ""),
            engine=_engine(str(r["engine"])), n_gpus=n, tp=tp, ep=ep if moe else 1,
            dp_attention=s.get("dp_attention", 0), disaggregated=0, n_prefill_gpus="", n_decode_gpus="",
            prefill_tp="", prefill_ep="", spec_decode="none", isl_tok=isl, osl_tok="",
            concurrency="", n_requests="", max_batch_size=s.get("max_batch_size", ""),
            measured_output_tok_per_s_per_gpu=round(tok / n, 3), measured_total_tok_per_s_per_gpu="",
            measured_tok_per_s_per_user="", measured_ttft_s="", measured_tpot_s="", engine_version="",
            source=f"github:{repo}@{commit[:7]}/{r['log_path']}", as_of=as_of)
        if r["scenario"] == "Offline":
            sps = float(r["_sps"])
            row.update(osl_tok=round(tok / sps, 1), n_requests=int(r["_samples_per_query"]))
            run = f"{tok:g} output tok/s on {n} accelerators, {sps:g} samples/s"
        else:
            if not (r["_csps"] and r["_mean_latency"] and r["_mean_ttft"]):
                continue
            sps, lat_s, ttft_s = float(r["_csps"]), int(r["_mean_latency"]) / 1e9, int(r["_mean_ttft"]) / 1e9
            osl = tok / sps
            tpot = (lat_s - ttft_s) / (osl - 1)
            row.update(phase="serve", osl_tok=round(osl, 1), concurrency=round(sps * lat_s, 1),
                       measured_ttft_s=round(ttft_s, 4), measured_tpot_s=round(tpot, 5),
                       measured_tok_per_s_per_user=round(1 / tpot, 3))
            run = (f"{tok:g} completed output tok/s on {n} accelerators, {sps:g} completed samples/s, "
                   f"mean latency {lat_s:.3f} s, mean TTFT {ttft_s:.4f} s (p99 limits TTFT "
                   f"{r['ttft_constraint_s']} s / TPOT {r['tpot_constraint_s']} s); concurrency DERIVED = "
                   "samples/s x mean latency (Little's law), TPOT DERIVED = (mean latency - mean TTFT) / "
                   "(mean output - 1)")
        row["note"] = (f"MLPerf Inference {rnd} closed {r['category']}, {r['submitter']} {r['system']} "
                       f"({r['benchmark']}, {r['scenario']}): {run}; engine {r['engine']} {r['engine_version']}; "
                       f"{how}; isl_tok = mlperf_benchmarks.csv ({isl_how})")
        out.append(row)
    return out


#: Measured columns two filings of one run share.
RUN_COLUMNS = ("n_gpus", "measured_output_tok_per_s_per_gpu", "measured_ttft_s", "measured_tpot_s")


def drop_repeated_runs(df: pd.DataFrame) -> pd.DataFrame:
    """``df`` without the ``-99.9`` rows that repeat their ``-99`` twin's run: the same system
    directory and scenario (``source`` with the benchmark's accuracy suffix ``-99`` for ``-99.9``)
    and the same measured values (:data:`RUN_COLUMNS`). Case ids renumbered in order."""
    cols = [c for c in RUN_COLUMNS if c in df.columns]
    runs = {(str(r["source"]),) + tuple(str(r[c]) for c in cols) for _, r in df.iterrows()}
    twin = df["source"].astype(str).str.replace(r"-99\.9/", "-99/", regex=True)
    repeat = [("-99.9/" in str(r["source"])) and ((t,) + tuple(str(r[c]) for c in cols)) in runs
              for (_, r), t in zip(df.iterrows(), twin)]
    out = df[~pd.Series(repeat, index=df.index)].reset_index(drop=True)
    prefix = str(df["case_id"].iloc[0]).rstrip("0123456789") if len(df) else "M"
    out["case_id"] = [f"{prefix}{i + 1:03d}" for i in range(len(out))]
    return out


def _write(df: pd.DataFrame, out: Path) -> None:
    tmp = out.with_suffix(".tmp")
    df.to_csv(tmp, index=False, lineterminator="\n")
    tmp.replace(out)
    print(f"wrote {len(df)} rows to {out}")


def main(argv: list[str]) -> int:
    if len(argv) == 3 and argv[1] == "--v61":
        _write(build_v61(Path(argv[2])), OUT_V61)
        return 0
    if len(argv) != 3:
        print("\n".join(line.strip() for line in __doc__.splitlines()[2:5]), file=sys.stderr)
        return 2
    for scenario, out in (("Offline", OUT), ("Server", OUT_SERVER)):
        _write(build([Path(argv[1]), Path(argv[2])], scenario), out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
