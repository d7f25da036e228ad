"""Append measured NVLink expert all-to-all rows to tokenomics/datasets/collectives.csv.

    python tools/curate_nvlink_a2a.py /path/to/ai-dynamo/aiconfigurator  (a git checkout)

Rows from NVIDIA aiconfigurator's communication databases (Apache-2.0) at commit AIC_COMMIT (the
commit tools/build_kernel_microbench.py reads): ``deepep_ll``, the DeepEP low-latency dispatch
(FP8) and combine (BF16) kernels that engines run for expert parallelism with attention
data-parallel ranks, on 8 B200 GPUs of one NVLink node, SGLang 0.5.12 image
(``comm/sglang/0.5.12/wideep_deepep_ll_perf.parquet``), DeepSeek-V3's shape (hidden 7168, top-8 of
256 experts), every token count it holds (1-1024 tokens per rank).

``message_bytes`` is what one rank sends: tokens per rank x top-8 x 7168 x bytes per element
(1 for the FP8 dispatch, 2 for the BF16 combine), as the deepep_rdma rows count it. The script
replaces earlier rows of the implementation, so rerunning it is idempotent.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pandas as pd
from _aiconfigurator import AIC_COMMIT, AIC_ROOT, as_of, table

AIC_URL = f"https://github.com/ai-dynamo/aiconfigurator/blob/{AIC_COMMIT}/{AIC_ROOT}"
OUT = Path(__file__).resolve().parent.parent / "tokenomics" / "datasets" / "collectives.csv"

HIDDEN, TOPK, N_EXPERTS = 7168, 8, 256
NVLINK5_BYTES_PER_S = 900e9  # one direction per GPU (1.8 TB/s bidirectional), as systems.csv


def _parquet(repo: Path, rel: str) -> pd.DataFrame:
    return table(repo, f"{AIC_ROOT}/{rel}")


def _as_of(repo: Path, rel: str) -> str:
    return as_of(repo, f"{AIC_ROOT}/{rel}")


def _row(impl: str, n: int, tokens: int, elem_bytes: float, latency_s: float, chip: str, fabric: str,
         source: str, as_of: str, note: str) -> dict:
    return {"impl": impl, "collective": "all_to_all", "algo": "direct", "n_chips": n,
            "message_bytes": float(tokens * TOPK * HIDDEN * elem_bytes), "latency_s": latency_s,
            "chip": chip, "fabric": fabric, "link_bytes_per_s": NVLINK5_BYTES_PER_S, "hop_latency_s": 1e-6,
            "kind": "measured", "source": source, "as_of": as_of, "note": note}


def deepep_rows(repo: Path) -> list[dict]:
    rel = "b200_sxm/comm/sglang/0.5.12/wideep_deepep_ll_perf.parquet"
    d = _parquet(repo, rel)
    d = d[(d.hidden_size == HIDDEN) & (d.num_topk == TOPK) & (d.num_experts == N_EXPERTS) & (d.node_num == 1)]
    rows, as_of = [], _as_of(repo, rel)
    for _, r in d.sort_values("num_token").iterrows():
        t = int(r["num_token"])
        for op, b, col in (("dispatch", 1.0, "dispatch_avg_t_us"), ("combine", 2.0, "combine_avg_t_us")):
            rows.append(_row("deepep_ll", 8, t, b, float(r[col]) * 1e-6, "B200", "NVLink5/NVSwitch (one node)",
                             f"{AIC_URL}/{rel}", as_of,
                             f"DeepEP low-latency {op} ({'FP8' if b == 1 else 'BF16'}), {t} tokens/rank, hidden "
                             f"{HIDDEN}, top-{TOPK} of {N_EXPERTS}, EP8 in one node, SGLang 0.5.12 image; MEASURED "
                             f"by aiconfigurator's collector (mean over CUDA-event timed calls)"))
    return rows


def main(argv: list[str]) -> None:
    if len(argv) != 2:
        raise SystemExit(__doc__)
    repo = Path(argv[1])
    new = pd.DataFrame(deepep_rows(repo))
    impls = set(new["impl"])
    with OUT.open(newline="") as f:  # keep each line's own ending
        lines = f.read().splitlines(keepends=True)
    header, body = lines[0], [ln for ln in lines[1:] if ln.split(",", 1)[0] not in impls]
    cols = header.strip().split(",")
    text = new.reindex(columns=cols).to_csv(index=False, header=False, lineterminator="\n")
    with OUT.open("w", newline="") as f:  # earlier rows kept byte for byte
        f.write(header + "".join(body) + text)
    print(f"{OUT}: {len(new)} rows of {sorted(impls)}, {len(body) + len(new)} in all")


if __name__ == "__main__":
    main(sys.argv)
