"""Build tokenomics/datasets/engine_kernel_versions.csv: how much slower an engine's older kernels are.

    python tools/build_engine_kernels.py /path/to/ai-dynamo/aiconfigurator  (a git checkout)

NVIDIA's aiconfigurator (Apache-2.0) times the same GEMM and fused-MoE calls on one chip for
several releases of one engine (TensorRT-LLM 1.2.0rc5 ... 1.3.0rc20, SGLang 0.5.9 ... 0.5.14,
vLLM 0.14.0 ... 0.24.0). For every older release of an engine on a chip, against the newest
later release that timed at least MIN_SHAPES of the same shapes in that format (the reference), and each weight format, this
writes per row count ``m`` (tokens of the call), over every shape both releases timed:

- ``added_latency_s`` for ``m`` <= 64 (latency-bound calls): the median of old - new [s];
- ``time_ratio`` for ``m`` >= 128 (work-bound calls): the median of old / new.

Negative medians (the older release faster) are kept as measured; the core uses them as they
are. MoE rows use balanced routing only (the core applies routing skew itself). Each collector
times one call replayed in a CUDA graph, so both releases include the same launch.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import numpy as np
import pandas as pd

from _aiconfigurator import AIC_COMMIT, AIC_ROOT
from _aiconfigurator import as_of as _as_of
from _aiconfigurator import files as _files
from _aiconfigurator import table as _table

from tokenomics.perf.engines import version_key

AIC_URL = f"https://github.com/ai-dynamo/aiconfigurator/tree/{AIC_COMMIT}/{AIC_ROOT}"
OUT = Path(__file__).resolve().parent.parent / "tokenomics" / "datasets" / "engine_kernel_versions.csv"

#: aiconfigurator system directory -> catalog name (NVIDIA chips the catalog holds).
CHIPS = {"h100_sxm": "h100-sxm", "h200_sxm": "h200", "b200_sxm": "b200", "b300_sxm": "b300",
         "gb200": "gb200", "gb300": "gb300"}
#: aiconfigurator framework directory -> engine name of ``datasets/engines.csv``.
#: TensorRT-LLM only: its tables form one consistent series (every release the same collector,
#: later releases never slower by more than noise on the shapes both timed). aiconfigurator's
#: SGLang and vLLM series do not: between releases single formats flip by 2-20x in both
#: directions (vLLM 0.19.0 MXFP4 MoE on B200 18x slower than 0.24.0, block-FP8 GEMMs 10x faster;
#: SGLang 0.5.9 MoE at 8192 tokens 0.6-0.7x of 0.5.14), kernel-path and collector changes rather
#: than kernel generations, so they are not used.
ENGINES = {"trtllm": "trt"}
#: Shapes two releases must both have timed (per format and row count) for a comparison.
MIN_SHAPES = 20
#: table dtype -> the catalog's weight-format name (``fp8_block``: 128x128 block scales).
GEMM_DTYPES = {"bfloat16": "bf16", "fp8": "fp8", "fp8_block": "fp8_block", "nvfp4": "nvfp4"}
MOE_DTYPES = {"bfloat16": "bf16", "fp8": "fp8", "fp8_block": "fp8_block", "nvfp4": "nvfp4",
              "w4a8_mxfp4_mxfp8": "mxfp4", "w4a16_mxfp4": "mxfp4"}
SMALL_ROWS = (1, 2, 4, 8, 16, 32, 64)
LARGE_ROWS = (128, 256, 512, 1024, 2048, 4096, 8192, 16384)

COLUMNS = ["hardware", "engine", "engine_version", "reference_version", "op", "precision", "rows", "metric",
           "value", "n_shapes", "kind", "source", "as_of", "note"]


def _pairs(old: pd.DataFrame, new: pd.DataFrame, op: str):
    if op == "gemm":
        keys, dtype_col, rows_col, dtypes = ["m", "n", "k"], "gemm_dtype", "m", GEMM_DTYPES
    else:
        keys = ["num_tokens", "hidden_size", "inter_size", "num_experts", "topk", "moe_tp_size", "moe_ep_size"]
        dtype_col, rows_col, dtypes = "moe_dtype", "num_tokens", MOE_DTYPES
        old, new = (d[d["distribution"] == "balanced"] for d in (old, new))
    for dt, ours in dtypes.items():
        a = old[old[dtype_col] == dt].groupby(keys)["latency"].min()  # the fastest kernel each release had
        b = new[new[dtype_col] == dt].groupby(keys)["latency"].min()
        j = pd.concat([a, b], axis=1, keys=["old", "new"]).dropna()
        if j.empty:
            continue
        yield ours, j.reset_index().rename(columns={rows_col: "rows"})


def build(repo: Path) -> pd.DataFrame:
    files = _files(repo)
    out = []
    for sysdir, chip in CHIPS.items():
        for fw, engine in ENGINES.items():
            for op, fname in (("gemm", "gemm_perf.parquet"), ("moe_experts", "moe_perf.parquet")):
                sub = "gemm" if op == "gemm" else "moe"
                pat = re.compile(rf"^{AIC_ROOT}/{sysdir}/{sub}/{fw}/([^/]+)/{fname}$")
                found = {m.group(1): f for f in files if (m := pat.match(f))}
                if len(found) < 2:
                    continue
                versions = sorted(found, key=version_key)
                tables = {ver: _table(repo, found[ver]) for ver in versions}
                for i, ver in enumerate(versions[:-1]):
                    as_of = _as_of(repo, found[ver])
                    # per format, the newest later release that timed enough of the same shapes
                    best: dict[str, tuple[str, pd.DataFrame]] = {}
                    for ref in reversed(versions[i + 1:]):
                        for prec, j in _pairs(tables[ver], tables[ref], op):
                            if prec not in best and len(j) >= MIN_SHAPES:
                                best[prec] = (ref, j)
                    for prec, (ref, j) in best.items():
                        for m_rows, metric, grid in ((j["rows"], "added_latency_s", SMALL_ROWS),
                                                     (j["rows"], "time_ratio", LARGE_ROWS)):
                            for r in grid:
                                g = j[m_rows == r]
                                if len(g) < MIN_SHAPES:
                                    continue
                                # tables store latency in ms
                                val = (float(np.median(g["old"] - g["new"])) * 1e-3 if metric == "added_latency_s"
                                       else float(np.median(g["old"] / g["new"])))
                                out.append({
                                    "hardware": chip, "engine": engine, "engine_version": ver, "reference_version": ref,
                                    "op": op, "precision": prec, "rows": r, "metric": metric,
                                    "value": float(f"{val:.4g}"), "n_shapes": int(len(g)), "kind": "measured",
                                    "source": f"{AIC_URL}/{sysdir}/{sub}/{fw}/{ver}/{fname} vs {ref}/{fname}",
                                    "as_of": as_of,
                                    "note": (f"median over the {len(g)} shapes both releases timed of "
                                             + ("(old - new) latency" if metric == "added_latency_s" else "old / new latency")
                                             + f" at {r} {'rows' if op == 'gemm' else 'tokens (balanced routing)'}; fastest "
                                             "kernel each release's table holds per shape; MEASURED by NVIDIA's "
                                             "aiconfigurator collector (CUDA-graph replays)"),
                                })
    return pd.DataFrame(out, columns=COLUMNS)


if __name__ == "__main__":
    from _build_main import run

    raise SystemExit(run(__doc__, build, OUT, sys.argv))
