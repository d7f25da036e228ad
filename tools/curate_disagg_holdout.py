"""Append InferenceMAX v1's GB200 disaggregated Dynamo rows to ``serving_holdout.csv`` (held out).

Usage::

    git --git-dir=<InferenceMAX>.git show 7a9f0000...:official_data/agg_dsr1_1k1k.json > 1k1k.json
    git --git-dir=<InferenceMAX>.git show 7a9f0000...:official_data/agg_dsr1_8k1k.json > 8k1k.json
    python tools/curate_disagg_holdout.py 1k1k.json 8k1k.json

The artifact (github:faradawn/InferenceMAX@7a9f000, ``official_data/agg_dsr1_*.json``) gives for each
disaggregated run only its total GPUs (in ``tp``) and three throughputs whose denominators
differ (``utils/process_result.py`` at that commit): ``output_tput_per_gpu`` = output tok/s /
decode GPUs, ``input_tput_per_gpu`` = input tok/s / prefill GPUs, ``tput_per_gpu`` = all tok/s /
all GPUs. With ``P + D = N`` the split follows exactly::

    D = N * (tput_per_gpu - input_tput_per_gpu) / (output_tput_per_gpu - input_tput_per_gpu)

(every row gives a whole number). The layouts of each split come from the runner of the same commit
(``runners/launch_gb200-nv.sh``: ``submit_disagg.sh`` arguments ctx_num, gen_num, gen_tp, mode
``tep``/``dep``, MTP depth) and from Dynamo's launch scripts it runs: TensorRT-LLM context workers
are 4-GPU DEP4 (attention data parallel, EP4; fp8 KV cache), generation workers TEP8 (TP8
attention, EP8) or DEP``gen_tp``; SGLang (``components/backends/sglang/slurm_jobs/scripts/
gb200-fp8.sh``) runs 8-GPU DEP8 prefill workers and one DEP``D`` decode worker, KV dtype not set.
Never fit anything on these rows.
"""

from __future__ import annotations

import csv
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
HOLDOUT = ROOT / "tokenomics" / "datasets" / "serving_holdout.csv"
SRC = "github:faradawn/InferenceMAX@7a9f0000072e8f2f75455144c08e896efaf50e32:official_data/agg_dsr1_{}.json"


def _decode_layout(fw: str, isl: int, p: int, d: int, conc: int) -> tuple[str, int]:
    """(mode, decode instance GPUs) of a run, from the runner's submit_disagg.sh lines."""
    if fw == "dynamo-sglang":
        return "dep", d  # one decode worker over all decode GPUs
    # TRT-LLM: TEP8 generation workers only in the low-latency sweeps (1 context worker of 4 GPUs,
    # gen_num x TP8 workers: 1k/1k 4 x 8 at concurrency <= 144, 8k/1k 3 x 8)
    if p == 4 and ((isl == 1024 and d == 32 and conc <= 144) or (isl == 8192 and d == 24)):
        return "tep", 8
    return "dep", d


def rows(path: Path, isl_osl: str, first_id: int) -> list[dict]:
    isl = 8192 if isl_osl == "8k1k" else 1024
    out = []
    data = [r for r in json.loads(path.read_text()) if r["hw"] == "gb200"]
    data.sort(key=lambda r: (r["framework"], r["mtp"], r["tp"], r["conc"]))
    for r in data:
        n = int(r["tp"])
        d = n * (r["tput_per_gpu"] - r["input_tput_per_gpu"]) / (r["output_tput_per_gpu"] - r["input_tput_per_gpu"])
        assert abs(d - round(d)) < 0.01, (r, d)
        d = int(round(d))
        p = n - d
        fw = r["framework"]
        mode, inst = _decode_layout(fw, isl, p, d, int(r["conc"]))
        trt = fw == "dynamo-trtllm"
        pre = 4 if trt else 8
        name = "DeepSeek-R1-0528" if "0528" in r["model"] else "DeepSeek-R1"
        note = (f"{name} (deepseek-v3 architecture; artifact model {r['model']}); InferenceMAX v1 official GB200 NVL72 disaggregated "
                f"Dynamo result (committed 2025-11-13 in 7a175041). Split recovered from the artifact's three "
                f"per-GPU figures (output/decode GPUs, input/prefill GPUs, total/all GPUs: utils/process_result.py): "
                f"{p} prefill GPUs as {p // pre} x DEP{pre} {'context' if trt else 'prefill'} workers, {d} decode GPUs "
                f"as {d // inst} x {mode.upper()}{inst}; layouts from runners/launch_gb200-nv.sh and Dynamo's "
                f"{'TRT-LLM performance_sweeps' if trt else 'SGLang gb200-fp8.sh'} launch. "
                f"measured_output_tok_per_s_per_gpu is per DECODE GPU, measured_total_tok_per_s_per_gpu per GPU "
                f"of the whole deployment. Median values; tok_per_s_per_user = median interactivity (1/TPOT). "
                f"Random ISL/OSL in [0.8,1.0]x nominal. "
                + ("fp4 = NVFP4 (weights); fp8 KV cache (kv_cache_config dtype fp8); MTP depth 1-3 by config, "
                   "acceptance not published" if trt else "FP8 block-scaled weights; KV dtype not set (engine default)"))
        out.append({
            "case_id": f"S{first_id + len(out):03d}", "phase": "serve", "hardware": "gb200", "model": "deepseek-r1",
            "weight_precision": r["precision"], "kv_precision": "fp8" if trt else "",
            "engine": "dynamo-trt" if trt else "dynamo-sglang", "n_gpus": float(n),
            "tp": inst, "ep": inst, "dp_attention": int(mode == "dep"), "disaggregated": 1,
            "n_prefill_gpus": float(p), "n_decode_gpus": float(d), "prefill_tp": 1.0, "prefill_ep": float(pre),
            "spec_decode": "mtp" if r.get("mtp") == "on" else "none",
            "isl_tok": float(isl), "osl_tok": 1024.0, "concurrency": float(r["conc"]),
            "context_tok": "", "prefill_tok_per_gpu": "",
            "measured_output_tok_per_s_per_gpu": round(r["output_tput_per_gpu"], 2),
            "measured_total_tok_per_s_per_gpu": round(r["tput_per_gpu"], 2),
            "measured_tok_per_s_per_user": round(r["median_intvty"], 2),
            "measured_ttft_s": round(r["median_ttft"], 4), "measured_tpot_s": round(r["median_tpot"], 5),
            "source": SRC.format(isl_osl), "as_of": "2025-11", "note": note,
        })
    return out


def main(argv: list[str]) -> None:
    with HOLDOUT.open(newline="") as f:
        reader = csv.DictReader(f)
        cols = reader.fieldnames
        have = list(reader)
    if any(r["disaggregated"] == "1" and r["phase"] == "serve" for r in have):
        raise SystemExit("serving_holdout.csv already holds disaggregated serve rows")
    next_id = max(int(r["case_id"][1:]) for r in have) + 1
    new = []
    for path in argv:
        tag = "8k1k" if "8k1k" in Path(path).name else "1k1k"
        new += rows(Path(path), tag, next_id + len(new))
    with HOLDOUT.open("a", newline="") as f:
        w = csv.DictWriter(f, fieldnames=cols, lineterminator="\n")
        for r in new:
            w.writerow(r)
    print(f"appended {len(new)} rows ({new[0]['case_id']}-{new[-1]['case_id']})")


if __name__ == "__main__":
    main(sys.argv[1:])
