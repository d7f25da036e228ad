"""Build tokenomics/datasets/gemm_shapes.csv: low-precision GEMM speed-up over BF16 by GEMM shape.

    python tools/build_gemm_shapes.py /path/to/ai-dynamo/aiconfigurator  (a git checkout)

For the six NVIDIA chips NVIDIA's aiconfigurator (Apache-2.0) times TensorRT-LLM 1.3.0rc20's Linear
layer on (H100, H200, B200, B300, GB200, GB300), one row per chip, tensor path (per-tensor FP8;
NVFP4 on Blackwell) and weight shape ``n x k`` (both in SIZES): the median over M_TOKENS rows
(compute-bound token counts) of BF16 latency / path latency at the same ``m, n, k``, the fastest
kernel each table holds per shape. Same collector, same harness, so its biases cancel, as in
:func:`tokenomics.perf.profile.tensor_path_ratio`.

The collected FP8 Linear quantizes its activations with a dynamically computed per-tensor scale
(collector/trtllm/collect_gemm.py: "the collected fp8 GEMM includes the compute-scale
overhead"); served FP8 checkpoints (ModelOpt) carry static activation scales, so the FP8 latency
here is the table's minus the same table set's ``compute_scale`` latency at that ``m, k`` (what
aiconfigurator itself does for static FP8). The activation quantization kernel stays in. NVFP4
latencies include the activation's FP4 quantization as collected.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pandas as pd
from _aiconfigurator import AIC_COMMIT, AIC_ROOT, as_of, table
from _build_main import run

OUT = Path(__file__).resolve().parent.parent / "tokenomics" / "datasets" / "gemm_shapes.csv"
RELEASE = "1.3.0rc20"
#: aiconfigurator system folder -> catalogue accelerator name.
CHIPS = {"h100_sxm": "h100-sxm", "h200_sxm": "h200", "b200_sxm": "b200", "b300_sxm": "b300",
         "gb200": "gb200", "gb300": "gb300"}
#: Token counts averaged over (every chip's table holds them; all compute-bound at these shapes).
M_TOKENS = (4096, 8192, 16384)
#: Weight dimensions (n and k) kept: the range of dense projections in the catalogued models.
SIZES = (1024, 1536, 2048, 3072, 4096, 6144, 8192, 12288, 16384)
#: Table dtype -> the precision name the row carries.
PATHS = {"fp8": "fp8", "nvfp4": "nvfp4"}


def _url(rel: str) -> str:
    return f"https://github.com/ai-dynamo/aiconfigurator/blob/{AIC_COMMIT}/{rel}"


def build(repo: Path) -> pd.DataFrame:
    rows = []
    for folder, chip in CHIPS.items():
        g_rel = f"{AIC_ROOT}/{folder}/gemm/trtllm/{RELEASE}/gemm_perf.parquet"
        s_rel = f"{AIC_ROOT}/{folder}/quantize/trtllm/{RELEASE}/computescale_perf.parquet"
        g = table(repo, g_rel)
        g = g[g["m"].isin(M_TOKENS) & g["n"].isin(SIZES) & g["k"].isin(SIZES)]
        g = g.groupby(["gemm_dtype", "m", "n", "k"], as_index=False)["latency"].min()
        lat = g.pivot_table(index=["m", "n", "k"], columns="gemm_dtype", values="latency").reset_index()
        cs = table(repo, s_rel)
        cs = cs[cs["quant_dtype"] == "fp8"].groupby(["m", "k"])["latency"].min()
        lat["fp8"] = lat["fp8"] - [cs.get((m, k), np.nan) for m, k in zip(lat["m"], lat["k"])]
        when = max(as_of(repo, g_rel), as_of(repo, s_rel))
        for dtype, prec in PATHS.items():
            if dtype not in lat:
                continue
            for (n, k), d in lat.groupby(["n", "k"]):
                sp = (d["bfloat16"] / d[dtype]).dropna()
                if len(sp) < len(M_TOKENS) or not np.all(sp > 0):
                    continue
                rows.append({
                    "hardware": chip, "precision": prec, "n": int(n), "k": int(k),
                    "speedup_vs_bf16": round(float(sp.median()), 4), "m_tok": " ".join(map(str, M_TOKENS)),
                    "kind": "measured",
                    "source": _url(g_rel) + (f" and {_url(s_rel)}" if dtype == "fp8" else ""),
                    "as_of": when,
                    "note": (f"median over m in {{{', '.join(map(str, M_TOKENS))}}} of BF16 / {prec.upper()} latency of "
                             f"TensorRT-LLM {RELEASE} Linear (fastest kernel per shape)"
                             + ("; FP8 minus the dynamic compute-scale latency (static activation scale)"
                                if dtype == "fp8" else "; includes the activation FP4 quantization")
                             + "; MEASURED by NVIDIA's aiconfigurator collector (CUDA-graph replays)"),
                })
    return pd.DataFrame(rows)


if __name__ == "__main__":
    sys.exit(run(__doc__, build, OUT, sys.argv))
