"""Build ``datasets/serving_trtllm_perf.csv`` from TensorRT-LLM's performance overview.

    python tools/curate_trtllm_perf.py            (writes the CSV)
    python tools/curate_trtllm_perf.py --check    (exit 1 if the CSV differs from what it would write)

NVIDIA publishes ``trtllm-bench`` offline max-throughput results (all requests queued at once,
fixed input and output lengths, stdev 0, random token ids) for its ModelOpt FP4/FP8 checkpoints in
``docs/source/performance/perf-overview.md``. The tables below are copied from that file at
github:NVIDIA/TensorRT-LLM@00f37686aa854010d68bcbd0f4ab000221541ca6 (the v1.0 edition, PyTorch
backend), the same file and commit eight rows of the fit set (``serving_public.csv`` P107-P114)
come from. Those eight (Llama 3.1 8B H100/H200 at 1000/1000 and 5000/500, Llama 3.1 405B at
1000/1000 on all four chips) are left out here; every other cell on a catalogued chip is a row.

What the file states and what is ASSUMED:

* metric: "Total Output Throughput (tokens/sec)" of the GPU group; a row's per-GPU rate is that
  over the group's GPUs (TP x PP, PP 1 in every table kept).
* precision: the column's FP4/FP8 (weights); ModelOpt checkpoints quantize the KV cache to FP8,
  as for the fit rows.
* MoE layout: the file gives TP only, and runs MoE models with ``--ep $ep_size`` and
  ``enable_attention_dp: true``. ASSUMED: expert parallelism over the whole TP group (EP = TP) and
  attention data parallelism where TP > 1.
* Llama 3.3 70B has Llama 3.1 70B's architecture (same config.json shapes), so it is priced as
  ``llama-3.1-70b``.
* Left out: the RTX 6000 Pro Blackwell Server Edition tables (PCIe card, not catalogued).

The later edition (``docs/source/developer-guide/perf-overview.md``, :data:`TABLES_V2`) prints output
tok/s per GPU and names each layout and model's options; its rows follow the v1.0 ones (T203 on).
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pandas as pd

OUT = Path(__file__).resolve().parent.parent / "tokenomics" / "datasets" / "serving_trtllm_perf.csv"
COMMIT = "00f37686aa854010d68bcbd0f4ab000221541ca6"
SOURCE = (f"github:NVIDIA/TensorRT-LLM@{COMMIT}:docs/source/performance/perf-overview.md "
          "(trtllm-bench offline max-throughput; 'Total Output Throughput (tokens/sec)' of the TP group)")
AS_OF = "2025"
ENGINE_VERSION = "1.0.0"

#: Table heading -> (catalogue model, MoE).
MODELS = {
    "Llama 4 Scout": ("llama-4-scout", True),
    "Llama 3.3 70B": ("llama-3.1-70b", False),
    "Qwen3-235B-A22B": ("qwen3-235b-a22b", True),
    "Qwen3-30B-A3B": ("qwen3-30b-a3b", True),
    "Llama 4 Maverick": ("llama-4-maverick", True),
    "Llama 3.1 405B": ("llama-3.1-405b", False),
    "Llama 3.1 8B": ("llama-3.1-8b", False),
}
HARDWARE = {"B200": "b200", "GB200": "gb200", "H200": "h200", "H100": "h100"}  # the other sets' spelling
#: (model, hardware, isl, osl) of the fit set's rows from the same file (serving_public.csv P107-P114).
IN_FIT = {("llama-3.1-8b", "h200", 1000, 1000), ("llama-3.1-8b", "h200", 5000, 500),
          ("llama-3.1-8b", "h100", 1000, 1000), ("llama-3.1-8b", "h100", 5000, 500),
          ("llama-3.1-405b", "b200", 1000, 1000), ("llama-3.1-405b", "gb200", 1000, 1000),
          ("llama-3.1-405b", "h200", 1000, 1000), ("llama-3.1-405b", "h100", 1000, 1000)}

#: ``$num_requests`` per (ISL, OSL), the file's "Preparing a Dataset" table.
N_REQUESTS = {(128, 128): 30000, (128, 2048): 3000, (128, 4096): 1500, (1000, 2000): 1500, (2048, 128): 3000,
              (2048, 2048): 1500, (5000, 500): 1500, (1000, 1000): 3000, (500, 2000): 3000, (20000, 2000): 1000}
#: trtllm-bench's own batch cap when the run sets none: ``finetune_setting`` caps the requests the KV
#: cache holds at 4,096 (tensorrt_llm/bench/build/tuning.py at the v1.0 line; the model's memory fit
#: applies the rest). It is per executor, so per attention-DP rank.
TRTLLM_BENCH_MAX_BATCH = 4096
#: ... but only for the quantizations it tunes (``TUNED_QUANTS``: NVFP4, FP8, block FP8, none). Any
#: other, such as gpt-oss's MXFP4, runs at ``TorchLlmArgs``' default ``max_batch_size``, 2,048
#: (``get_benchmark_engine_settings``, tensorrt_llm/bench/build/build.py).
TRTLLM_BENCH_UNTUNED_MAX_BATCH = 2048

#: The data-centre GPU tables of perf-overview.md @ 00f3768, as printed there.
TABLES = """
#### Llama 4 Scout

| Sequence Length (ISL/OSL) | B200<br/>TP1 (FP4) | GB200<br/>TP1 (FP4) | H200<br/>TP4 (FP8) | H100<br/>TP4 (FP8) |
|---|---|---|---|---|
| 128/128 | 25,342 | 19,954 | 30,354 | |
| 128/2048 | 14,699 | 15,238 | 34,316 | 15,130 |
| 128/4096 | 8,932 | 9,556 | 21,332 | 8,603 |
| 500/2000 | 11,977 | 11,795 | 24,630 | 12,399 |
| 1000/1000 | 10,591 | 7,738 | 21,636 | 12,129 |
| 1000/2000 | 9,356 | 8,581 | 18,499 | 9,838 |
| 2048/128 | 3,137 | 3,295 | 3,699 | 3,253 |
| 2048/2048 | 7,152 | 7,464 | 14,949 | 7,972 |
| 5000/500 | 2,937 | 3,107 | 4,605 | 3,342 |
| 20000/2000 | 1,644 | 1,767 | 2,105 | |

#### Llama 3.3 70B

| Sequence Length (ISL/OSL) | B200<br/>TP1 (FP4) | GB200<br/>TP1 (FP4) | H200<br/>TP1 (FP8) | H100<br/>TP2 (FP8) |
|---|---|---|---|---|
| 128/128 | 11,147 | 12,189 | 3,803 | 6,378 |
| 128/2048 | 9,922 | 11,309 | 4,336 | 6,651 |
| 128/4096 | 6,831 | 7,849 | 2,872 | 4,199 |
| 500/2000 | 7,762 | 9,028 | 3,666 | 5,222 |
| 1000/1000 | 7,007 | 7,326 | 2,909 | 4,205 |
| 1000/2000 | 6,271 | 6,513 | 2,994 | 4,146 |
| 2048/128 | 1,339 | 1,450 | 442 | 762 |
| 2048/2048 | 4,783 | 5,646 | 2,003 | 3,082 |
| 5000/500 | 1,459 | 1,602 | 566 | 898 |
| 20000/2000 | 665 | 755 | 283 | 437 |

#### Qwen3-235B-A22B

| Sequence Length (ISL/OSL) | B200<br/>TP8 (FP4) | H200<br/>TP8 (FP8) | H100<br/>TP8 (FP8) |
|---|---|---|---|
| 128/128 | 63,362 | 30,429 | |
| 128/2048 | 66,057 | 42,821 | 19,658 |
| 128/4096 | 39,496 | 26,852 | 12,447 |
| 500/2000 | 57,117 | 28,026 | 18,351 |
| 1000/1000 | 42,391 | 23,789 | 14,898 |
| 1000/2000 | 34,105 | 22,061 | 15,136 |
| 2048/128 | 7,329 | 3,331 | |
| 2048/2048 | 26,854 | 16,672 | 9,924 |
| 5000/500 | 8,190 | 3,623 | 3,225 |
| 20000/2000 | 4,453 | 1,876 | |

#### Qwen3-30B-A3B

| Sequence Length (ISL/OSL) | B200<br/>TP1 (FP4) | GB200<br/>TP1 (FP4) |
|---|---|---|
| 128/128 | 39,827 | 24,107 |
| 128/2048 | 37,844 | 31,311 |
| 128/4096 | 24,953 | 26,337 |
| 500/2000 | 27,817 | 20,604 |
| 1000/1000 | 25,828 | 17,481 |
| 1000/2000 | 22,051 | 17,177 |
| 2048/128 | 6,251 | 6,595 |
| 2048/2048 | 17,554 | 14,719 |
| 5000/500 | 6,142 | 5,908 |
| 20000/2000 | 2,944 | 3,203 |

#### Llama 4 Maverick

| Sequence Length (ISL/OSL) | B200<br/>TP8 (FP4) | H200<br/>TP8 (FP8) | H100<br/>TP8 (FP8) |
|---|---|---|---|
| 128/128 | 124,323 | 63,994 | |
| 128/2048 | 112,676 | 40,572 | 10,829 |
| 128/4096 | 68,170 | 24,616 | 6,744 |
| 500/2000 | | 37,835 | 10,108 |
| 1000/1000 | 79,617 | 31,782 | 9,677 |
| 1000/2000 | 63,766 | 34,734 | 9,151 |
| 2048/128 | 18,088 | 7,307 | |
| 2048/2048 | 52,195 | 20,957 | 6,916 |
| 5000/500 | | 8,456 | 3,457 |
| 20000/2000 | 12,678 | 4,106 | |

#### Llama 3.1 405B

| Sequence Length (ISL/OSL) | B200<br/>TP4 (FP4) | GB200<br/>TP4 (FP4) | H200<br/>TP8 (FP8) | H100<br/>TP8 (FP8) |
|---|---|---|---|---|
| 128/128 | 6,281 | 6,740 | 3,814 | 3,627 |
| 128/2048 | 8,020 | 8,151 | 5,348 | 4,340 |
| 128/4096 | 6,345 | 6,608 | 4,741 | 3,116 |
| 500/2000 | 6,244 | 6,540 | 4,724 | 3,994 |
| 1000/1000 | 5,209 | 5,389 | 3,330 | 2,919 |
| 1000/2000 | 4,933 | 5,135 | 3,722 | 2,895 |
| 2048/128 | 749 | 797 | 456 | 453 |
| 2048/2048 | 4,212 | 4,407 | 2,948 | 2,296 |
| 5000/500 | 1,048 | 1,112 | 650 | 610 |
| 20000/2000 | 672 | 739 | 505 | 345 |

#### Llama 3.1 8B

| Sequence Length (ISL/OSL) | H200<br/>TP1 (FP8) | H100<br/>TP1 (FP8) |
|---|---|---|
| 128/128 | 27,911 | 28,312 |
| 128/2048 | 26,221 | 22,714 |
| 128/4096 | 18,027 | 14,325 |
| 500/2000 | 20,770 | 17,660 |
| 1000/1000 | 17,744 | 15,220 |
| 1000/2000 | 16,828 | 13,899 |
| 2048/128 | 3,538 | 3,450 |
| 2048/2048 | 12,194 | 9,305 |
| 5000/500 | 3,902 | 3,459 |
| 20000/2000 | 1,804 | 1,351 |
"""

COLUMNS = ["case_id", "phase", "hardware", "model", "weight_precision", "kv_precision", "engine", "n_gpus", "tp",
           "ep", "dp_attention", "disaggregated", "n_prefill_gpus", "n_decode_gpus", "prefill_tp", "prefill_ep",
           "spec_decode", "isl_tok", "osl_tok", "concurrency", "n_requests", "max_batch_size",
           "measured_output_tok_per_s_per_gpu",
           "measured_total_tok_per_s_per_gpu", "measured_tok_per_s_per_user", "measured_ttft_s", "measured_tpot_s",
           "engine_version", "source", "as_of", "note"]

#: A column heading: chip, layout (TP, or DEP: attention DP with experts over the GPUs), GPUs, format.
_HEAD = re.compile(r"^(B200|GB200|H200|H100)<br/>(DEP|TP)(\d+) \((FP4|FP8)\)$")


def read_tables(text: str) -> list[dict]:
    """One dict per non-empty cell of markdown tables as the overview prints them: ``table`` (the
    heading above, any level), ``chip``, ``layout``, ``gpus``, ``precision``, ``isl``, ``osl`` and
    the printed ``value``."""
    cells, model, heads = [], None, None
    for line in text.splitlines():
        line = line.strip()
        if line.startswith("#"):
            model, heads = line.lstrip("#").strip(), None
        elif line.startswith("| Sequence Length"):
            heads = [_HEAD.match(h.strip()) for h in line.strip("|").split("|")[1:]]
            if not all(heads):
                raise ValueError(f"unreadable header in {model}: {line}")
        elif line.startswith("| ") and heads and "/" in line.split("|")[1]:
            parts = [p.strip() for p in line.strip("|").split("|")]
            isl, osl = (int(x) for x in parts[0].split("/"))
            for h, v in zip(heads, parts[1:]):
                if v:
                    cells.append({"table": model, "chip": h.group(1), "layout": h.group(2), "gpus": int(h.group(3)),
                                  "precision": h.group(4).lower(), "isl": isl, "osl": osl,
                                  "value": float(v.replace(",", ""))})
    return cells


def parse(text: str = TABLES) -> list[dict]:
    """The v1.0 edition's cells (:data:`TABLES`): ``value`` is tok/s of the ``gpus``-GPU TP group."""
    return read_tables(text)


def rows() -> pd.DataFrame:
    """The v1.0 edition's cells but the fit set's eight, in the serving schema (no case ids yet)."""
    out = []
    for c in parse():
        model, moe = MODELS[c["table"]]
        hw, tp = HARDWARE[c["chip"]], c["gpus"]
        if (model, hw, c["isl"], c["osl"]) in IN_FIT:
            continue
        layout = f"EP{tp} with attention DP (ASSUMED, EP = TP)" if moe and tp > 1 else f"TP{tp}"
        arch = " Llama 3.3 70B, priced as llama-3.1-70b (same architecture)." if c["table"] == "Llama 3.3 70B" else ""
        out.append({
            "phase": "offline", "hardware": hw, "model": model, "weight_precision": c["precision"],
            "kv_precision": "fp8", "engine": "trt", "n_gpus": tp, "tp": tp, "ep": tp if moe else 1,
            "dp_attention": int(moe and tp > 1), "disaggregated": 0, "spec_decode": "none",
            "isl_tok": float(c["isl"]), "osl_tok": float(c["osl"]),
            "n_requests": float(N_REQUESTS[(c["isl"], c["osl"])]), "max_batch_size": float(TRTLLM_BENCH_MAX_BATCH),
            "measured_output_tok_per_s_per_gpu": round(c["value"] / tp, 3),
            "engine_version": ENGINE_VERSION, "source": SOURCE, "as_of": AS_OF,
            "note": (f"Offline max throughput (all requests queued; concurrency = whatever fits). "
                     f"{c['value']:,.0f} tok/s for the {c['chip']} TP{tp} group, divided by {tp}; {layout}. "
                     f"nvidia/ ModelOpt {c['precision'].upper()} checkpoint (FP8 KV cache). "
                     f"ISL/OSL fixed (stdev 0).{arch}"),
        })
    return pd.DataFrame(out)


# ---- the later edition: docs/source/developer-guide/perf-overview.md ------------------------------
COMMIT_V2 = "585c756579dc4d01f21fc13c2f604cdb461ac4f0"
SOURCE_V2 = (f"github:NVIDIA/TensorRT-LLM@{COMMIT_V2}:docs/source/developer-guide/perf-overview.md "
             "(trtllm-bench offline max-throughput; 'Per GPU Output Throughput (tps/gpu)')")
#: ASSUMED: the edition names no release; its wording lies between the v1.0 file above and the 1.2.0
#: documentation's. Every TensorRT-LLM release before 1.2.0rc5 takes the same kernel tables
#: (tokenomics.perf.kernel_versions), so 1.0 and 1.1 price alike.
ENGINE_VERSION_V2 = "1.1.0"
#: Table heading -> (catalogue model, MoE).
MODELS_V2 = {
    "Deepseek R1 0528": ("deepseek-r1", True),
    "GPT-OSS 120B": ("gpt-oss-120b", True),
    "GPT-OSS 20B": ("gpt-oss-20b", True),
    "LLaMA v3.3 70B": ("llama-3.1-70b", False),
    "LLaMA v4 Maverick": ("llama-4-maverick", True),
    "Qwen3 235B A22B": ("qwen3-235b-a22b", True),
    "Qwen3 30B A3B": ("qwen3-30b-a3b", True),
}
#: The file's "Number of Requests" table; 1000/1000 is not in it (ASSUMED 3,000, as for 1024/1024
#: and as the v1.0 edition ran 1000/1000).
N_REQUESTS_V2 = {(1024, 1024): 3000, (8192, 1024): 1500, (1024, 8192): 1500, (32768, 1024): 1000,
                 (1024, 32768): 1000, (1000, 1000): 3000}

#: The data-centre GPU tables of developer-guide/perf-overview.md @ 585c756, as printed there
#: (output tokens/s per GPU; DEPn = n GPUs, attention data parallel with experts over the n).
TABLES_V2 = """
# Deepseek R1 0528

| Sequence Length (ISL/OSL) | B200<br/>DEP4 (FP4) | GB200<br/>DEP4 (FP4) | H200<br/>DEP8 (FP8) |
|---|---|---|---|
| 1000/1000 | 6,463 | 6,939 | 1,627 |
| 1024/1024 | 6,430 | 6,924 | 1,620 |
| 1024/8192 | 3,862 | 4,379 | 1,218 |
| 1024/32768 | 1,451 | 1,465 | 438 |
| 8192/1024 | 1,168 | 1,192 | |

# GPT-OSS 120B

| Sequence Length (ISL/OSL) | B200<br/>DEP2 (FP4) | GB200<br/>TP1 (FP4) | H200<br/>TP1 (FP8) | H100<br/>DEP4 (FP8) |
|---|---|---|---|---|
| 1000/1000 | 25,943 | 27,198 | 6,868 | 4,685 |
| 1024/1024 | 25,870 | 26,609 | 6,798 | 4,715 |
| 1024/8192 | 17,289 | 14,800 | 3,543 | |
| 1024/32768 | 6,279 | 5,556 | | 1,177 |
| 8192/1024 | 6,111 | 6,835 | 1,828 | 1,169 |
| 32768/1024 | 1,392 | 1,645 | 519 | 333 |

# GPT-OSS 20B

| Sequence Length (ISL/OSL) | B200<br/>TP1 (FP4) | GB200<br/>TP1 (FP4) | H200<br/>TP1 (FP8) | H100<br/>TP1 (FP8) |
|---|---|---|---|---|
| 1000/1000 | 53,812 | 55,823 | 13,858 | 11,557 |
| 1024/1024 | 53,491 | 56,528 | 13,890 | 11,403 |
| 1024/8192 | 34,702 | 38,100 | 12,743 | 8,617 |
| 1024/32768 | 14,589 | 16,463 | | |
| 8192/1024 | 11,904 | 12,941 | 4,015 | 3,366 |
| 32768/1024 | 2,645 | 2,905 | 915 | 785 |

# LLaMA v3.3 70B

| Sequence Length (ISL/OSL) | B200<br/>TP1 (FP4) | GB200<br/>TP1 (FP4) | H200<br/>TP2 (FP8) | H100<br/>TP2 (FP8) |
|---|---|---|---|---|
| 1000/1000 | 6,920 | 7,769 | 2,587 | 2,209 |
| 1024/1024 | 6,842 | 7,751 | 2,582 | |
| 1024/8192 | 3,242 | 3,805 | 2,009 | |
| 8192/1024 | 1,362 | 1,491 | 537 | 398 |
| 32768/1024 | 274 | 302 | 120 | |

# LLaMA v4 Maverick

| Sequence Length (ISL/OSL) | B200<br/>DEP4 (FP4) | GB200<br/>DEP4 (FP4) | H200<br/>DEP8 (FP8) |
|---|---|---|---|
| 1000/1000 | 11,337 | 11,828 | 4,146 |
| 1024/1024 | 11,227 | 11,905 | 4,180 |
| 1024/8192 | 5,174 | 5,508 | 1,157 |
| 1024/32768 | 2,204 | 2,300 | 679 |
| 8192/1024 | 3,279 | 3,444 | 1,276 |
| 32768/1024 | 859 | 963 | |

# Qwen3 235B A22B

| Sequence Length (ISL/OSL) | B200<br/>DEP4 (FP4) | GB200<br/>DEP4 (FP4) | H200<br/>DEP4 (FP8) | H100<br/>DEP8 (FP8) |
|---|---|---|---|---|
| 1000/1000 | 5,764 | 6,172 | 3,288 | 1,932 |
| 1024/1024 | 5,756 | 5,862 | 3,268 | 1,935 |
| 1024/8192 | 3,389 | 3,423 | 1,417 | 873 |
| 1024/32768 | 1,255 | | | |
| 8192/1024 | 1,410 | 1,464 | 627 | |
| 32768/1024 | 319 | 333 | 134 | |

# Qwen3 30B A3B

| Sequence Length (ISL/OSL) | B200<br/>TP1 (FP4) | GB200<br/>TP1 (FP4) |
|---|---|---|
| 1000/1000 | 26,971 | 22,856 |
| 1024/1024 | 26,611 | 22,201 |
| 1024/8192 | 13,497 | 14,272 |
| 1024/32768 | 4,494 | 4,925 |
| 8192/1024 | 5,735 | 6,201 |
| 32768/1024 | 1,265 | 1,380 |
"""

def parse_v2(text: str = TABLES_V2) -> list[dict]:
    """The later edition's cells (:data:`TABLES_V2`): ``value`` is output tok/s per GPU as printed."""
    return read_tables(text)


def rows_v2() -> pd.DataFrame:
    """The later edition's cells in the serving schema (no case ids yet)."""
    out = []
    for c in parse_v2():
        model, moe = MODELS_V2[c["table"]]
        hw, n, dep = HARDWARE[c["chip"]], c["gpus"], c["layout"] == "DEP"
        gpt_oss = model.startswith("gpt-oss")
        hopper = hw in ("h100", "h200")
        # weights: gpt-oss runs OpenAI's own MXFP4 checkpoint on every chip; the rest NVIDIA's
        # ModelOpt FP4 / FP8 checkpoints (DeepSeek-R1 on Hopper: deepseek-ai's block-FP8 one)
        wprec = "mxfp4" if gpt_oss else c["precision"]
        # KV: the file's gpt-oss and DeepSeek options state FP8 ("Hopper: use auto" for gpt-oss);
        # ModelOpt checkpoints quantize it to FP8
        kv = "bf16" if gpt_oss and hopper else "fp8"
        cfg = ("enable_attention_dp, KV FP8 (Hopper: auto), CUTLASS MoE (Hopper: TRITON)" if gpt_oss else
               "enable_attention_dp, attention_dp_config enable_balance with timeout_iters 60, CUTLASS MoE, KV FP8"
               if model == "deepseek-r1" else "enable_attention_dp" if moe else "cuda graphs only")
        out.append({
            "phase": "offline", "hardware": hw, "model": model, "weight_precision": wprec, "kv_precision": kv,
            "engine": "trt", "n_gpus": n, "tp": n, "ep": n if (moe and dep) else 1, "dp_attention": int(dep and n > 1),
            "disaggregated": 0, "spec_decode": "none", "isl_tok": float(c["isl"]), "osl_tok": float(c["osl"]),
            "n_requests": float(N_REQUESTS_V2[(c["isl"], c["osl"])]),
            "max_batch_size": float(TRTLLM_BENCH_UNTUNED_MAX_BATCH if wprec == "mxfp4" else TRTLLM_BENCH_MAX_BATCH),
            "measured_output_tok_per_s_per_gpu": c["value"],
            "engine_version": ENGINE_VERSION_V2, "source": SOURCE_V2, "as_of": "2025",
            "note": (f"Offline max throughput, later edition: {c['value']:,.0f} output tok/s per GPU on "
                     f"{c['chip']} {c['layout']}{n} ({c['precision'].upper()} in the table); the file's options: "
                     f"{cfg}. ISL/OSL fixed (stdev 0). Engine release ASSUMED 1.1.0 (not stated)."
                     + (" Llama 3.3 70B, priced as llama-3.1-70b (same architecture)." if c["table"] == "LLaMA v3.3 70B"
                        else "")),
        })
    return pd.DataFrame(out)


def all_rows() -> pd.DataFrame:
    """Both editions, case ids T001 on (the v1.0 edition first)."""
    df = pd.concat([rows(), rows_v2()], ignore_index=True)
    df.insert(0, "case_id", [f"T{i:03d}" for i in range(1, len(df) + 1)])
    return df.reindex(columns=COLUMNS)


def main(argv: list[str]) -> int:
    df = all_rows()
    if "--check" in argv:
        same = OUT.exists() and OUT.read_text() == df.to_csv(index=False)
        print("up to date" if same else f"{OUT.name} differs from the tables")
        return 0 if same else 1
    OUT.write_text(df.to_csv(index=False))
    print(f"wrote {OUT} ({len(df)} rows)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
