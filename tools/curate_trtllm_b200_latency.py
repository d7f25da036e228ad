"""Append the one-user DeepSeek-R1 B200 TensorRT-LLM measurements of issue NVIDIA/TensorRT-LLM#5929 to
tokenomics/datasets/serving_holdout.csv (held out: never fitted).

    python tools/curate_trtllm_b200_latency.py

The issue (2025-07-10, TensorRT-LLM v0.21.0rc2 built from source, 8 x B200 180 GB, LLMPerf against
trtllm-serve, batch size 1) tabulates ITL p50 and TTFT p50 of DeepSeek-R1 FP8 and FP4 at TP8 with
EP None (experts TP-sharded), EP4 and EP8, for 1600- and 8192-token prompts and 600 output tokens.
Output tok/s per GPU is DERIVED for one closed-loop user: 600 / (TTFT + 600 x ITL) / 8 GPUs.
"""

import csv
import io
from pathlib import Path

PATH = Path(__file__).resolve().parent.parent / "tokenomics" / "datasets" / "serving_holdout.csv"
SOURCE = "https://github.com/NVIDIA/TensorRT-LLM/issues/5929"
#: (precision, isl, {ep: (itl_s, ttft_s)}); ep 1 = "EP=None" (TP-sharded experts)
TABLE = [
    ("fp8", 1600, {1: (0.01378, 0.16463), 4: (0.01081, 0.13436), 8: (0.01100, 0.12411)}),
    ("fp4", 1600, {1: (0.00678, 0.16104), 4: (0.00661, 0.16018), 8: (0.00681, 0.17265)}),
    ("fp8", 8192, {1: (0.01453, 0.51583), 4: (0.01159, 0.37007), 8: (0.01178, 0.35281)}),
    ("fp4", 8192, {1: (0.00714, 0.39411), 4: (0.00697, 0.39012), 8: (0.00717, 0.44809)}),
]
OSL = 600
FIRST_ID = 381


def main() -> None:
    rows = list(csv.reader(open(PATH)))
    hdr = rows[0]
    if any(r[0] == f"S{FIRST_ID}" for r in rows[1:]):
        raise SystemExit(f"S{FIRST_ID} is already in {PATH.name}")
    k = FIRST_ID
    for prec, isl, cells in TABLE:
        for ep, (itl, ttft) in cells.items():
            d = dict.fromkeys(hdr, "")
            out_per_gpu = OSL / (ttft + OSL * itl) / 8
            d.update(case_id=f"S{k}", phase="serve", hardware="b200", model="deepseek-r1", weight_precision=prec,
                     engine="trt", n_gpus="8", tp="8", ep=str(ep), dp_attention="0", disaggregated="0",
                     spec_decode="none", isl_tok=f"{isl:.1f}", osl_tok=f"{OSL:.1f}", concurrency="1.0",
                     measured_output_tok_per_s_per_gpu=f"{out_per_gpu:.4f}", measured_tok_per_s_per_user=f"{1 / itl:.3f}",
                     measured_ttft_s=f"{ttft}", measured_tpot_s=f"{itl}", source=SOURCE, as_of="2025-07-10",
                     note=(f"DeepSeek-R1 {prec.upper()} on 8 x B200, TensorRT-LLM v0.21.0rc2 (trtllm-serve, LLMPerf), batch "
                           f"size 1, TP8 with EP {'None (experts TP-sharded)' if ep == 1 else ep}; ITL p50 {itl} s, TTFT p50 "
                           f"{ttft} s as the issue tabulates them. Output tok/s per GPU DERIVED for one closed-loop user: "
                           f"{OSL} / (TTFT + {OSL} x ITL) / 8. KV precision not stated (engine default)."))
            rows.append([d[h] for h in hdr])
            k += 1
    w = io.StringIO()
    csv.writer(w, lineterminator="\n").writerows(rows)
    PATH.write_text(w.getvalue())
    print(f"appended S{FIRST_ID}-S{k - 1} to {PATH}")


if __name__ == "__main__":
    main()
