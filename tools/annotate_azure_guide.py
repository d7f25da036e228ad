"""Fill the run settings of the Azure benchmarking guide's offline rows from the guide's own harness.

    python tools/annotate_azure_guide.py

The Azure AI benchmarking guide (github:Azure/AI-benchmarking-guide,
``Benchmarks/NVIDIA/LLMBenchmark.py``) runs ``trtllm-bench throughput`` on 1,000 fixed-length
requests per input/output pair, on ONE engine per model, built by ``trtllm-bench build --dataset``
with the dataset of the pair with the largest ``isl + osl`` (2,048 / 2,048 in its result tables).
``trtllm-bench build`` sets the engine's ``max_batch_size`` from that dataset with a published
heuristic (github:NVIDIA/TensorRT-LLM ``tensorrt_llm/bench/build/tuning.py``,
``calc_engine_setting`` and ``finetune_setting``):

* KV cache bytes per token ``2 * layers * max(tp, kv_heads) * head_dim * 1`` (FP8 KV: the build
  forces FP8 KV with ``--quantization FP8``), over all ``tp`` GPUs;
* requests the KV cache holds: ``0.95 * (tp * device_memory - params * 1 B) / (bytes per token *
  (isl + osl))``, with ``device_memory`` NVML's total [GiB];
* ``max_batch_size`` = that, rounded UP to a multiple of 32 below 256 (at least 64), of 128 below
  1,024, of 256 above (capped at 4,096).

Every engine therefore ran the short pairs (128 / 128 ...) at the batch cap sized for 2,048 /
2,048, which is what limited them. The rule is the one TensorRT-LLM 0.17's documentation shows
(docs/source/performance/perf-benchmarking.md, a build log of 2025-01-18: "Max batch size and max
num tokens are not provided, use tuning heuristics or pre-defined setting"; Llama 3.1 has no
pre-defined setting) and that later releases keep; the guide's H100/H200 results were committed
on 2024-12-13 with a TensorRT-LLM cloned from main that month, so the rule is ASSUMED to hold
for them too. This computes that cap for each TensorRT-LLM row of
``serving_holdout.csv`` whose ``source`` names the guide and writes it to ``max_batch_size``
(sequences per engine: the rows run tensor parallelism only, one attention rank), naming the
rule in the row's ``note``. Nothing is fitted: the rule is TensorRT-LLM's, the inputs the model
card and the GPU.

The MI300X rows ran vLLM's ``benchmark_throughput.py`` from the guide's AMD harness
(github:samuel-bohman/AI-benchmarking-guide@ca9286d ``Benchmarks/AMD/LLMBenchmark.py``, the
version of 2025-02-04 that committed the MI300X results, unchanged in these flags through
2025-03: ``--kv-cache-dtype fp8 --gpu-memory-utilization 0.90 --max-num-seqs {max_num_seq}``,
with ``max_num_seqs: [3000]`` in ``config.json``@89b87f0 for all three Llama models): so those rows
take ``max_batch_size`` 3,000 and ``kv_precision`` fp8 (the 0.90 memory fraction is the default) instead of vLLM's
defaults (256 sequences, a BF16 cache).

Idempotent: a second run changes nothing.
"""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd

from tokenomics import catalog
from tokenomics.io import write_frame

DATA = Path(__file__).resolve().parent.parent / "tokenomics" / "datasets"
FILE = "serving_holdout.csv"
#: The pair with the largest isl + osl in the guide's result tables: the engine's build dataset.
BUILD_ISL_TOK, BUILD_OSL_TOK = 2048, 2048
#: trtllm-bench's default kv_cache_gpu_mem_fraction inside calc_engine_setting.
BUILD_KV_FRAC = 0.95
#: NVML total memory [MiB] (``nvidia-smi`` memory.total as public listings print it; the guide's
#: result files name the same GPUs: "H100 80GB HBM3", "H200 141GB", "GB200 185GB").
NVML_TOTAL_MIB = {"h100": 81559, "h200": 143771, "gb200": 189471}
MARK = "Batch cap from trtllm-bench build"
#: The AMD harness's vLLM flags (module docstring).
VLLM_HARNESS = {"max_batch_size": 3000.0, "kv_precision": "fp8"}  # 0.90 memory: the default
VLLM_MARK = "Harness settings from github:samuel-bohman/AI-benchmarking-guide@ca9286d"


def round_batch(requests: float) -> int:
    """trtllm-bench's optimistic rounding of the requests the KV cache holds (module docstring)."""
    raw = min(float(requests), 4096.0)
    if raw < 256:
        return max(64, 32 * math.ceil(raw / 32))
    if raw < 1024:
        return 128 * math.ceil(raw / 128)
    return 256 * math.ceil(raw / 256)


def build_batch_cap(model: str, hardware: str, tp: int, isl_tok: int = BUILD_ISL_TOK,
                    osl_tok: int = BUILD_OSL_TOK) -> int:
    """``max_batch_size`` trtllm-bench build gives an FP8 engine of ``model`` on ``tp`` GPUs
    [sequences]."""
    spec = catalog.model(model)
    kv_gib_per_tok = 2 * spec.n_layers * max(tp, spec.n_kv_heads) * spec.head_dim * 1.0 / 2**30
    weights_gib = spec.claimed_total_params * 1.0 / 2**30
    free_gib = tp * NVML_TOTAL_MIB[hardware] / 1024 - weights_gib
    return round_batch(BUILD_KV_FRAC * free_gib / (kv_gib_per_tok * (isl_tok + osl_tok)))


def _add_note(df: pd.DataFrame, i, mark: str, text: str) -> None:
    """Append ``mark text`` to row ``i``'s note unless the mark is already there (idempotent)."""
    note = str(df.at[i, "note"]) if pd.notna(df.at[i, "note"]) else ""
    if mark not in note:
        df.at[i, "note"] = f"{note} {mark} {text}".strip()


def annotate(df: pd.DataFrame) -> pd.DataFrame:
    """The guide's rows with their engines' settings filled (a copy; module docstring)."""
    out = df.copy()
    rows = out["source"].astype(str).str.contains("AI-benchmarking-guide") & (out["engine"] == "trt")
    for i in out.index[rows]:
        cap = build_batch_cap(out.at[i, "model"], out.at[i, "hardware"], int(out.at[i, "tp"]))
        out.at[i, "max_batch_size"] = float(cap)
        _add_note(out, i, MARK, f"(github:NVIDIA/TensorRT-LLM tensorrt_llm/bench/build/tuning.py) on the guide's "
                                f"{BUILD_ISL_TOK}/{BUILD_OSL_TOK} build dataset: {cap} sequences "
                                "(tools/annotate_azure_guide.py).")
    amd = out["source"].astype(str).str.contains("AI-benchmarking-guide") & (out["engine"] == "vllm")
    for i in out.index[amd]:
        for col, value in VLLM_HARNESS.items():
            out.at[i, col] = value
        _add_note(out, i, VLLM_MARK, "Benchmarks/AMD/LLMBenchmark.py (--kv-cache-dtype fp8 --gpu-memory-utilization "
                                     "0.90 --max-num-seqs 3000 from config.json@89b87f0; tools/annotate_azure_guide.py).")
    return out


def main() -> None:
    path = DATA / FILE
    df = pd.read_csv(path)
    new = annotate(df)
    changed = sum(not new.loc[i].equals(df.loc[i]) for i in df.index)
    write_frame(new, path)
    print(f"{FILE}: {changed} rows changed")


if __name__ == "__main__":
    main()
