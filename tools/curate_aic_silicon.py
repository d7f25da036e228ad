"""Write tokenomics/datasets/serving_aic_silicon.csv from NVIDIA aiconfigurator's silicon references.

    python tools/curate_aic_silicon.py /path/to/ai-dynamo/aiconfigurator  (a git directory)

``tools/accuracy_tracking/silicon_refs.csv`` (added 2026-07-09, "silicon accuracy anchors" of the
project's prediction regression gate) holds 35 serving measurements NVIDIA's AIConfigurator team
keeps to check their own predictions: mean TTFT and TPOT of one deployment at a stated concurrency,
ISL and OSL, on H100/H200/B200/B300/GB200/GB300 with TensorRT-LLM, SGLang and vLLM. They were found
after every change to the model and are scored once, blind. Read at the commit :data:`COMMIT`:

* co-located (``mode`` agg) rows only: the disaggregated ones give worker counts but not the
  workers' tensor / expert parallel layout, which the prediction needs;
* ``tp`` = ``tp_size`` (attention tensor parallel), ``ep`` = ``moe_ep_size`` (``tp`` over ``ep``
  is the experts' tensor-parallel split, ``moe_tp_size``), GPUs = ``tp_size`` x ``attention_dp_size``
  (1 on every row), concurrency = ``batch_size`` (= the source's ``silicon_concurrency``);
* precisions as stated (``fp4`` is NVFP4); two Qwen3-32B rows state none: the checkpoint's BF16,
  ASSUMED; KV cache: the engines' default (not stated);
* models: DeepSeek-R1 and -V3 (``deepseek-v3`` architecture), Kimi-K2.5 (its text model is Kimi K2's
  architecture; the vision tower ignored), MiniMax-M2.5, Qwen3-32B, Qwen3-235B-A22B. Left out:
  Qwen3.5-397B-A17B (its Gated DeltaNet layers have 16 key and 64 value heads, which the catalog's
  linear-attention layer, one head count for both, does not express) and one DeepSeek-V3 row that
  repeats a DeepSeek-R1 row value for value;
* measured: ``measured_ttft_s`` and ``measured_tpot_s`` (the source's mean TTFT and TPOT);
  ``measured_output_tok_per_s_per_gpu`` is DERIVED for a closed-loop client keeping the concurrency
  in flight: concurrency x OSL / (TTFT + (OSL - 1) x TPOT) / GPUs.
"""

from __future__ import annotations

import io
import re
import subprocess
import sys
from pathlib import Path

import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from tokenomics.io import write_frame  # noqa: E402

COMMIT = "095f58a51c4ca8e61b66ec108d86f223f8d559ce"
PATH = "tools/accuracy_tracking/silicon_refs.csv"
OUT = Path(__file__).resolve().parent.parent / "tokenomics" / "datasets" / "serving_aic_silicon.csv"
HARDWARE = {"h100_sxm": "h100", "h200_sxm": "h200", "b200_sxm": "b200", "b300_sxm": "b300", "gb200": "gb200",
            "gb300": "gb300"}
MODELS = {"deepseek-ai/DeepSeek-R1": "deepseek-r1", "deepseek-ai/DeepSeek-V3": "deepseek-v3",
          "moonshotai/Kimi-K2.5": "kimi-k2", "MiniMaxAI/MiniMax-M2.5": "minimax-m2.5",
          "Qwen/Qwen3-32B": "qwen3-32b", "Qwen/Qwen3-235B-A22B-FP8": "qwen3-235b-a22b"}
ENGINES = {"trtllm": "trt", "sglang": "sglang", "vllm": "vllm"}
COLUMNS = ("case_id", "phase", "hardware", "model", "weight_precision", "kv_precision", "engine", "n_gpus", "tp",
           "ep", "dp_attention", "disaggregated", "n_prefill_gpus", "n_decode_gpus", "prefill_tp", "prefill_ep",
           "spec_decode", "isl_tok", "osl_tok", "concurrency", "n_requests", "context_tok", "prefill_tok_per_gpu",
           "measured_output_tok_per_s_per_gpu", "measured_total_tok_per_s_per_gpu", "measured_tok_per_s_per_user",
           "measured_ttft_s", "measured_tpot_s", "overlap", "cache_hit_frac", "expert_balance", "a2a_impl",
           "source", "as_of", "note", "recv_interval_iters", "adp_timeout_iters", "max_batch_size",
           "engine_version", "mem_frac")
MEASURE_KEYS = ("ttft", "tpot")


def _num(x) -> float:
    return float(x) if pd.notna(x) and str(x).strip() != "" else float("nan")


def rows(refs: pd.DataFrame) -> list[dict]:
    out, seen, skipped = [], {}, []
    for r in refs.itertuples(index=False):
        if r.mode != "agg":
            skipped.append(f"{r.id} (disaggregated: no worker layout)")
            continue
        if r.model_path not in MODELS:
            skipped.append(f"{r.id} ({r.model_path} not catalogued)")
            continue
        key = (r.system, r.backend, r.backend_version, r.isl, r.osl, r.batch_size, r.tp_size, r.moe_tp_size,
               r.moe_ep_size, round(r.silicon_ttft_ms, 6), round(r.silicon_tpot_ms, 6))
        if key in seen:
            skipped.append(f"{r.id} (repeats {seen[key]} value for value)")
            continue
        seen[key] = r.id
        tp = int(_num(r.tp_size))
        dp = int(_num(r.attention_dp_size)) if pd.notna(r.attention_dp_size) else 1
        ep = max(int(_num(r.moe_ep_size)) if pd.notna(r.moe_ep_size) else 1, 1)
        gpus = tp * dp
        conc, isl, osl = float(r.batch_size), float(r.isl), float(r.osl)
        ttft, tpot = r.silicon_ttft_ms / 1e3, r.silicon_tpot_ms / 1e3
        prec = str(r.precision).strip().lower() if pd.notna(r.precision) else "bf16"
        meta = dict(kv.split("=", 1) for kv in (p.strip() for p in str(r.silicon_data_source).split(";")) if "=" in kv)
        measured = meta.get("measured", "")[:10]
        version = "" if pd.isna(r.backend_version) else str(r.backend_version)
        why = ("precision not stated: the checkpoint's BF16 ASSUMED; " if pd.isna(r.precision) else "")
        out.append(dict(
            case_id=f"N{len(out) + 1:03d}", phase="serve", hardware=HARDWARE[r.system], model=MODELS[r.model_path],
            weight_precision=prec, kv_precision="", engine=ENGINES[r.backend], n_gpus=gpus, tp=tp,
            ep=ep if MODELS[r.model_path] != "qwen3-32b" else 1, dp_attention=0 if dp == 1 else 1, disaggregated=0,
            spec_decode="none", isl_tok=isl, osl_tok=osl, concurrency=conc,
            measured_output_tok_per_s_per_gpu=round(conc * osl / (ttft + (osl - 1) * tpot) / gpus, 4),
            measured_ttft_s=round(ttft, 6), measured_tpot_s=round(tpot, 6),
            source=f"github:ai-dynamo/aiconfigurator@{COMMIT}:{PATH} (id {r.id})",
            as_of=measured or "2026-07-09", engine_version=version,
            note=(f"{r.model_path} on {tp * dp} x {r.system} with {r.backend} {version or '(release not stated)'}, "
                  f"co-located, attention TP{tp}, MoE TP{int(_num(r.moe_tp_size)) if pd.notna(r.moe_tp_size) else 1} x "
                  f"EP{ep}, {int(conc)} concurrent requests, ISL {int(isl)} / OSL {int(osl)}; "
                  f"{meta.get('image', 'image not stated').replace('#', '/')}; source file "
                  f"{meta.get('source_file', '?')}, measured {measured or 'not stated'}, wip={meta.get('wip', 'not stated')}. "
                  f"{why}Mean TTFT and TPOT as measured; measured_output_tok_per_s_per_gpu DERIVED = concurrency x "
                  "OSL / (TTFT + (OSL - 1) x TPOT) / GPUs (a closed-loop client keeping the concurrency in flight). "
                  "NVIDIA aiconfigurator's silicon accuracy anchors (tools/curate_aic_silicon.py)."),
        ))
    print("left out:", "; ".join(skipped))
    return out


if __name__ == "__main__":
    if len(sys.argv) != 2:
        raise SystemExit(__doc__.split("\n\n")[1])
    repo = sys.argv[1]
    repo = repo if Path(repo, "HEAD").exists() else str(Path(repo) / ".git")
    text = subprocess.run(["git", "--git-dir", repo, "show", f"{COMMIT}:{PATH}"], check=True, capture_output=True,
                          text=True).stdout
    refs = pd.read_csv(io.StringIO(text))
    df = pd.DataFrame(rows(refs)).reindex(columns=list(COLUMNS))
    write_frame(df, OUT)
    print(f"{len(df)} rows -> {OUT.relative_to(OUT.parents[2])}")
    assert not any(re.search(r"\bnan\b", str(n)) for n in df["note"])
