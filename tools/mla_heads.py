"""MLA decode attention at 16-128 heads a GPU: TensorRT-LLM's measured kernels against the core.

    python tools/mla_heads.py AIC_REPO

``AIC_REPO`` is a git checkout of github.com/ai-dynamo/aiconfigurator holding ``AIC_COMMIT``. The
bundled ``mla_decode_attention`` rows (``datasets/kernel_microbench.csv``) are DeepSeek-V3 at TP8,
16 heads a GPU, where the kernel streams its latent cache. With attention data-parallel every GPU
runs all 128 heads and the kernel turns compute-bound; this prints, for the six NVIDIA chips of
the TensorRT-LLM 1.3.0rc20 table, the core's predicted over measured time by head count and KV
precision at batch 32-512 and KV 2k-32k, and the same for the compute-bound corner (batch >= 128,
KV >= 8k). Nothing here is fitted (docs/serving-validation.md, stop 43).
"""

from __future__ import annotations

import sys
from pathlib import Path

import pandas as pd
from _aiconfigurator import AIC_ROOT, table
from build_kernel_microbench import MLA_CHIPS, MLA_RELEASE, mla_rows

from tokenomics.perf.kernels import predict_kernel_microbench


def rows(repo: Path, heads=(16, 32, 64, 128)) -> pd.DataFrame:
    """Kernel-microbench rows of the MLA generation table at ``heads`` heads a GPU (the schema of
    :func:`build_kernel_microbench.mla_rows`, whose 16-head rows they extend)."""
    template = pd.DataFrame(mla_rows(repo)).iloc[0]
    out = []
    for chip_dir, hw in MLA_CHIPS.items():
        d = table(repo, f"{AIC_ROOT}/{chip_dir}/mla/trtllm/{MLA_RELEASE}/generation_mla_perf.parquet")
        for kvp in ("bfloat16", "fp8"):
            for h in heads:
                for b in (32, 128, 512):
                    for kv in (2048, 8192, 32768):
                        sel = d[(d.num_heads == h) & (d.kv_cache_dtype == kvp) & (d.batch_size == b)
                                & (d.step == kv - 1) & (d.mla_dtype == "bfloat16")]
                        if sel.empty:
                            continue
                        r = template.copy()
                        k = "fp8" if kvp == "fp8" else "bf16"
                        r.update({"bench_id": f"{hw}-mla-decode-trtllm-h{h}-{k}kv-b{b}-kv{kv}", "hardware": hw,
                                  "n_q_heads": h, "kv_precision": k, "batch": b, "kv_len_tok": kv,
                                  "value": float(sel["latency"].mean()) * 1e-3})
                        out.append(r)
    return pd.DataFrame(out)


def main(argv: list[str]) -> None:
    if len(argv) != 1:
        sys.exit(__doc__.split("\n\n")[1])
    df = rows(Path(argv[0]))
    p = predict_kernel_microbench(df)
    p["heads"], p["kv"] = df["n_q_heads"].to_numpy(), df["kv_precision"].to_numpy()
    p["ratio"] = p["predicted"] / p["measured"]
    big = (df["batch"].to_numpy() >= 128) & (df["kv_len_tok"].to_numpy() >= 8192)
    pd.set_option("display.width", 160)
    for label, part in (("all batch 32-512, KV 2k-32k", p), ("compute-bound corner: batch >= 128, KV >= 8k", p[big])):
        t = part.groupby(["hardware", "kv", "heads"])["ratio"].median().unstack("heads").round(2)
        print(f"predicted / measured, median, {label}\n{t.to_string()}\n")


if __name__ == "__main__":
    main(sys.argv[1:])
