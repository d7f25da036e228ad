"""Write the one-user DeepSeek-R1 B200 TensorRT-LLM rows S377-S392 of tokenomics/datasets/serving_holdout.csv
(held out: never fitted). Re-running replaces those rows with the same values.

    python tools/curate_trtllm_b200_latency.py

* S377-S380, NVIDIA's tech blog "Pushing Latency Boundaries: Optimizing DeepSeek-R1 Performance on
  NVIDIA B200 GPUs", table "Autoregressive MTP Layers": 8 x B200, ISL 1k / OSL 2k, one user, 111
  TPS/user without MTP and 198 / 250 / 253 with 1 / 2 / 3 draft tokens at the published acceptance
  lengths 1.92 / 2.58 / 2.82 tokens per step; attention TP8 in bf16, experts NVFP4 at the blog's
  ``--tp 8 --ep 4`` stage. Output tok/s per GPU DERIVED as TPS/user / 8 (the prompt's TTFT ignored).
* S381-S392, issue NVIDIA/TensorRT-LLM#5929 (2025-07-10, v0.21.0rc2, LLMPerf against trtllm-serve,
  batch size 1): ITL p50 and TTFT p50 of DeepSeek-R1 FP8 and FP4 at TP8 with EP None (experts
  TP-sharded, written ep 1), EP4 and EP8, 1600- and 8192-token prompts, 600 output tokens. Output
  tok/s per GPU DERIVED for one closed-loop user: 600 / (TTFT + 600 x ITL) / 8.
"""

import csv
import io
from pathlib import Path

from scipy.optimize import brentq

PATH = Path(__file__).resolve().parent.parent / "tokenomics" / "datasets" / "serving_holdout.csv"
BLOG = ("github:NVIDIA/TensorRT-LLM@01c4ece911eb569e72cf4177f83238a0520641c2:docs/source/blogs/tech_blog/"
        "blog1_Pushing_Latency_Boundaries_Optimizing_DeepSeek-R1_Performance_on_NVIDIA_B200_GPUs.md")
#: (MTP draft tokens, published acceptance length [tokens/step], TPS/user)
BLOG_MTP = [(0, 1.0, 111.0), (1, 1.92, 198.0), (2, 2.58, 250.0), (3, 2.82, 253.0)]
ISSUE = "https://github.com/NVIDIA/TensorRT-LLM/issues/5929"
#: (precision, isl, {ep: (itl_s, ttft_s)}); ep 1 = "EP=None" (TP-sharded experts)
ISSUE_TABLE = [
    ("fp8", 1600, {1: (0.01378, 0.16463), 4: (0.01081, 0.13436), 8: (0.01100, 0.12411)}),
    ("fp4", 1600, {1: (0.00678, 0.16104), 4: (0.00661, 0.16018), 8: (0.00681, 0.17265)}),
    ("fp8", 8192, {1: (0.01453, 0.51583), 4: (0.01159, 0.37007), 8: (0.01178, 0.35281)}),
    ("fp4", 8192, {1: (0.00714, 0.39411), 4: (0.00697, 0.39012), 8: (0.00717, 0.44809)}),
]
ISSUE_OSL = 600


def acceptance(gamma: int, length: float) -> float:
    """Per-token acceptance ``a`` with ``(1 - a^(gamma+1)) / (1 - a) = length`` (tokens per step)."""
    return brentq(lambda a: (1 - a ** (gamma + 1)) / (1 - a) - length, 1e-9, 1 - 1e-9)


def blog_rows() -> list[dict]:
    rows = []
    for i, (g, acc, tps) in enumerate(BLOG_MTP):
        spec, what = "none", "no speculative decoding"
        if g:
            a = acceptance(g, acc)
            spec = f"mtp:{g}:{a:.4f}"
            what = (f"MTP with {g} autoregressive draft token(s), published acceptance length {acc} tokens per "
                    f"step; per-token acceptance {a:.4f} solves (1-a^{g + 1})/(1-a) = {acc}")
        rows.append(dict(
            case_id=f"S{377 + i}", phase="serve", hardware="b200", model="deepseek-r1", weight_precision="fp4",
            kv_precision="bf16", engine="trt", n_gpus="8", tp="8", ep="4", dp_attention="0", disaggregated="0",
            spec_decode=spec, isl_tok="1024.0", osl_tok="2048.0", concurrency="1.0",
            measured_output_tok_per_s_per_gpu=f"{tps / 8:.4f}", measured_tok_per_s_per_user=f"{tps}",
            measured_tpot_s=f"{1 / tps:.6f}", source=BLOG, as_of="2025-05",
            note=("DeepSeek-R1 min-latency (one user) on 8 x B200 with TensorRT-LLM (NVIDIA tech blog 1, table "
                  f"'Autoregressive MTP Layers'): {tps:g} TPS/user, ISL 1k / OSL 2k; {what}. Attention TP8 in bf16 "
                  "(KV bf16 as the blog's precision table), MoE experts NVFP4 at the blog's EP4TP2 stage (--tp 8 "
                  "--ep 4). Output tok/s per GPU DERIVED = TPS/user x 1 user / 8 GPUs (the 1k-token prompt's TTFT, "
                  "~1 % of a 2k-token request, ignored).")))
    return rows


def issue_rows() -> list[dict]:
    rows, k = [], 381
    for prec, isl, cells in ISSUE_TABLE:
        for ep, (itl, ttft) in cells.items():
            out = ISSUE_OSL / (ttft + ISSUE_OSL * itl) / 8
            rows.append(dict(
                case_id=f"S{k}", phase="serve", hardware="b200", model="deepseek-r1", weight_precision=prec,
                engine="trt", n_gpus="8", tp="8", ep=str(ep), dp_attention="0", disaggregated="0",
                spec_decode="none", isl_tok=f"{isl:.1f}", osl_tok=f"{ISSUE_OSL:.1f}", concurrency="1.0",
                measured_output_tok_per_s_per_gpu=f"{out:.4f}", measured_tok_per_s_per_user=f"{1 / itl:.3f}",
                measured_ttft_s=f"{ttft}", measured_tpot_s=f"{itl}", source=ISSUE, as_of="2025-07-10",
                note=(f"DeepSeek-R1 {prec.upper()} on 8 x B200, TensorRT-LLM v0.21.0rc2 (trtllm-serve, LLMPerf), batch "
                      f"size 1, TP8 with EP {'None (experts TP-sharded)' if ep == 1 else ep}; ITL p50 {itl} s, TTFT "
                      f"p50 {ttft} s as the issue tabulates them. Output tok/s per GPU DERIVED for one closed-loop "
                      f"user: {ISSUE_OSL} / (TTFT + {ISSUE_OSL} x ITL) / 8. KV precision not stated (engine default).")))
            k += 1
    return rows


def main() -> None:
    rows = list(csv.reader(open(PATH)))
    hdr = rows[0]
    new = blog_rows() + issue_rows()
    ids = {r["case_id"] for r in new}
    kept = [r for r in rows[1:] if r[0] not in ids]
    out = [hdr] + kept + [[r.get(h, "") for h in hdr] for r in new]
    w = io.StringIO()
    csv.writer(w, lineterminator="\n").writerows(out)
    PATH.write_text(w.getvalue())
    print(f"wrote {len(new)} rows ({min(ids)}-{max(ids)}) to {PATH}")


if __name__ == "__main__":
    main()
