""":func:`mlperf_check` compares the latency-throughput frontier
(:func:`tokenomics.perf.frontier.frontier`) with the public MLPerf Inference results in
``datasets/measured_public.csv`` (a copy of ``../shared/reference/measured_public.csv``)
(Llama-2-70B and Llama-3.1-405B on H100, H200, B200, GB200, GB300, MI300X, MI325X): offline = the
highest tokens/s on the frontier; server and interactive = the highest tokens/s whose per-user rate
meets the benchmark's TPOT limit. Two bounds: decode only (prefill fully hidden) and decode plus a
serial compute-bound prefill of each prompt. Scheduling and TTFT limits are not modelled.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ..errors import DataError
from ..perf.frontier import frontier
from ..perf.parallel import system as _system

#: MLPerf chip label -> catalogued system; model label -> catalog model and TPOT limits.
_MLPERF_SYSTEMS = {"H100-SXM-80GB": "dgx-h100", "H200-SXM-141GB": "dgx-h200",
                   "B200-SXM-180GB": "dgx-b200", "GB200-186GB": "gb200-nvl72",
                   "GB300-288GB": "gb300-nvl72", "MI300X": "mi300x-8", "MI325X": "mi325x-8"}
#: MLPerf model label -> catalog model; its mean prompt and output tokens come from
#: ``datasets/mlperf_benchmarks.csv`` (prompt lengths: the official datasets' means, measured).
#: Decode runs at prompt + output / 2 of context.
_MLPERF_MODELS = {"Llama-2-70B": "llama-2-70b", "Llama-3.1-405B": "llama-3.1-405b"}
#: Per-user rate the scenario requires [tokens/s] (1 / TPOT limit; MLPerf rules via the notes).
_MLPERF_MIN_RATE = {("llama-2-70b", "server"): 1 / 0.2, ("llama-2-70b", "interactive"): 1 / 0.04,
                    ("llama-3.1-405b", "server"): 1 / 0.175, ("llama-3.1-405b", "interactive"): 12.5,
                    }



def _shared_reference() -> Path:
    from ..catalog import data_dir

    return data_dir() / "measured_public.csv"


def mlperf_rows(path: "str | Path | None" = None):
    """The multi-chip MLPerf Llama rows of ``measured_public.csv`` this module can model."""
    import pandas as pd

    from ..io import exact_floats

    p = Path(path) if path else _shared_reference()
    if not p.exists():
        raise DataError(f"MLPerf reference not found at {p}; pass the path to measured_public.csv")
    import io as _io

    from ..io import read_text

    df = pd.read_csv(_io.StringIO(read_text(p, "MLPerf reference")), **exact_floats())
    df = df[df["system"].str.contains("MLPerf", na=False)]
    from ..catalog import load

    bench = load("mlperf_benchmarks")
    rows = []
    for _, r in df.iterrows():
        mkey = next((k for k in _MLPERF_MODELS if str(r["model"]).startswith(k)), None)
        if mkey is None or r["chip"] not in _MLPERF_SYSTEMS:
            continue
        metric = str(r["metric"]).split("_")[0]
        if metric not in ("offline", "server", "interactive"):
            continue
        if "interactive" in str(r["model"]).lower():
            metric = "interactive"
        model = _MLPERF_MODELS[mkey]
        prompt, out = float(bench.loc[model, "isl_tok"]), float(bench.loc[model, "osl_tok"])
        ctx = int(prompt + out // 2)
        prec = "fp4" if r["chip"] in ("B200-SXM-180GB", "GB200-186GB", "GB300-288GB") else "fp8"
        rows.append({"system": r["system"], "chips": int(r["chips"]), "chip": r["chip"],
                     "model": model, "context_tok": ctx, "prompt_tok": prompt, "output_tok": out,
                     "precision": prec, "scenario": metric,
                     "measured_tok_per_s": float(r["value"]), "date": r["date"],
                     "source": r["source"]})
    return pd.DataFrame(rows).drop_duplicates(["system", "model", "scenario", "measured_tok_per_s"])


def mlperf_check(path: "str | Path | None" = None, plan: str = "engine"):
    """Frontier predictions next to the MLPerf measurements, with the error of each.

    Returns
    -------
    pandas.DataFrame
        ``system, chips, model, scenario, precision, measured_tok_per_s, lower_tok_per_s,
        upper_tok_per_s, error_lower_frac, error_upper_frac, bracketed``: the upper bound is
        decode only (prefill hidden in idle compute, as chunked prefill does at best); the lower
        bound adds each prompt's compute-bound prefill serially.
    """
    rows = mlperf_rows(path)
    from ..econ.disagg import chip_s_per_request
    from ..perf.parallel import ParallelPlan
    from ..perf.system import system_prefill

    cache: dict = {}
    preds, decode_only = [], []
    for _, r in rows.iterrows():
        sys_ = _system(_MLPERF_SYSTEMS[r["chip"]])
        if r["chips"] != sys_.n_chips:
            sys_ = sys_.replace(name=f"{sys_.accelerator.name}-x{r['chips']}", n_chips=int(r["chips"]),
                                dims=(int(r["chips"]),), domain_chips=int(r["chips"]))
        key = (sys_.name, r["model"], r["precision"])
        if key not in cache:
            cache[key] = frontier(sys_, r["model"], plan, context_tok=r["context_tok"],
                                  weight_precision=r["precision"], kv_precision="fp8", max_pp=1)
            # prefill of the prompts on tensor-parallel groups of up to 8 chips, their
            # all-reduces included
            g = min(sys_.n_chips, 8)
            pf = system_prefill(sys_, r["model"], plan, ParallelPlan(tp=g, ep=1),
                                prompt_tok=int(r["prompt_tok"]), batch=8,
                                weight_precision=r["precision"], kv_precision="fp8")
            cache[key + ("prefill",)] = float(np.asarray(pf.tok_per_s_per_replica)) * sys_.n_chips / g
        f = cache[key]
        prefill_tok_per_s = cache[key + ("prefill",)]
        rate = _MLPERF_MIN_RATE.get((r["model"], r["scenario"]), 0.0)
        decode = f.best_tok_per_s(rate)
        # output tokens/s when each request also pays its prompt's prefill on the same chips
        preds.append(r["output_tok"] / float(chip_s_per_request(prefill_tok_per_s, decode, r["prompt_tok"],
                                                                r["output_tok"])))
        decode_only.append(decode)
    out = rows.copy()
    out["upper_tok_per_s"] = decode_only
    out["lower_tok_per_s"] = preds
    out["error_upper_frac"] = out["upper_tok_per_s"] / out["measured_tok_per_s"] - 1
    out["error_lower_frac"] = out["lower_tok_per_s"] / out["measured_tok_per_s"] - 1
    out["bracketed"] = (out["lower_tok_per_s"] <= out["measured_tok_per_s"]) & (
        out["measured_tok_per_s"] <= out["upper_tok_per_s"])
    return out[["system", "chips", "model", "scenario", "precision", "measured_tok_per_s",
                "lower_tok_per_s", "upper_tok_per_s", "error_lower_frac", "error_upper_frac",
                "bracketed", "source"]]
