"""MLA decode attention at 16-128 heads a GPU: TensorRT-LLM's measured kernels against the core.

    python tools/mla_heads.py AIC_REPO

``AIC_REPO`` is a git checkout of github.com/ai-dynamo/aiconfigurator holding ``AIC_COMMIT``. The
bundled ``mla_decode_attention`` rows (``datasets/kernel_microbench.csv``) are DeepSeek-V3 at TP8,
16 heads a GPU, where the kernel streams its latent cache. With attention data-parallel every GPU
runs all 128 heads and the kernel turns compute-bound; this prints, for the six NVIDIA chips of
the TensorRT-LLM 1.3.0rc20 table, the core's predicted over measured time by head count and KV
precision at batch 32-512 and KV 2k-32k, and the same for the compute-bound corner (batch >= 128,
KV >= 8k). Nothing here is fitted (docs/validation/serving.md, stop 43).
"""

from __future__ import annotations

import sys
from pathlib import Path

import pandas as pd
from build_kernel_microbench import mla_rows

from tokenomics.validate.kernel_microbench import predict_kernel_microbench


def main(argv: list[str]) -> None:
    if len(argv) != 1:
        sys.exit(__doc__.split("\n\n")[1])
    df = pd.DataFrame(mla_rows(Path(argv[0]), heads=(16, 32, 64, 128)))
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
