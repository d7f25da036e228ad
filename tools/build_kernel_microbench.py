"""Build tokenomics/datasets/kernel_microbench.csv: published attention and MoE kernel timings.

    python tools/build_kernel_microbench.py /path/to/ai-dynamo/aiconfigurator  (a git checkout)

Rows from NVIDIA aiconfigurator's per-operation timing databases (Apache-2.0), read at commit
AIC_COMMIT: H200 decode ("generation") attention of vLLM 0.24.0 (FlashAttention-3) and of
TensorRT-LLM 1.3.0rc20, H200 prefill ("context") attention of TensorRT-LLM 1.3.0rc20, and
H200 fused-MoE layers of vLLM 0.24.0 (unquantized Triton experts, balanced routing), TensorRT-LLM
1.3.0rc20's MLA decode attention on H100/H200/B200/B300/GB200/GB300 (mla_rows), at a grid
of shapes chosen here, and, for six NVIDIA chips, the fastest fused-MoE layer any engine's
table holds at large token counts (best_moe_rows: the fit set of the grouped-GEMM ceilings). Each collector times one call replayed in a CUDA graph (CUDA events,
collector/helper.py benchmark_with_power), so a row includes one graph launch and, for
vLLM decode, the KV-cache write kernel. The hand-curated rows (FlashMLA, FlashAttention-3 on
H100) are appended from MANUAL below, AMD fused-MoE timings from ROCm/aiter's tuned tables
from AITER_ROWS, and AMD's MI355X prefill attention from HazyResearch's HipKittens benchmark
(HIPKITTENS_AITER_FWD); each says where it was published.
"""

from __future__ import annotations

import sys
from itertools import product
from pathlib import Path

import pandas as pd
from _aiconfigurator import AIC_COMMIT, AIC_ROOT, files, table
from _aiconfigurator import as_of as aic_as_of

AIC_DATA = f"{AIC_ROOT}/h200_sxm"
AIC_URL = f"https://github.com/ai-dynamo/aiconfigurator/blob/{AIC_COMMIT}/{AIC_DATA}"
OUT = Path(__file__).resolve().parent.parent / "tokenomics" / "datasets" / "kernel_microbench.csv"

COLUMNS = ["bench_id", "hardware", "op", "kernel", "precision", "kv_precision", "batch", "kv_len_tok",
           "q_tok_per_seq", "n_q_heads", "n_kv_heads", "head_dim", "head_dim_v", "hidden", "expert_ffn_hidden",
           "n_experts", "experts_per_token", "metric", "value", "unit", "kind", "source", "as_of", "note"]

AIC_NOTE = ("MEASURED by NVIDIA's aiconfigurator collector: mean of 6 CUDA-graph replays of one call after 3 "
            "warm-ups; includes one graph launch (a few us) {extra}; L2 (50 MB) may hold small KV caches; "
            "collection date not recorded (as_of = the file's last commit)")


def _parquet(repo: Path, rel: str) -> pd.DataFrame:
    return table(repo, f"{AIC_DATA}/{rel}")


def _as_of(repo: Path, rel: str) -> str:
    return aic_as_of(repo, f"{AIC_DATA}/{rel}")


def decode_rows(repo: Path) -> list[dict]:
    rows = []
    grid = [  # (q heads, kv heads, head dim, batches, KV lengths, kv precision, shape label)
        (32, 8, 128, (1, 8, 32, 128), (1024, 4096, 16384, 65536), "bfloat16", "Llama-3.1-8B"),
        (8, 1, 128, (8, 64, 256), (1024, 8192, 32768), "bfloat16", "Llama-3.1-70B at TP8"),
        (32, 8, 128, (32,), (4096, 16384), "fp8", "Llama-3.1-8B, FP8 KV"),
    ]
    for rel, kernel, extra in (
            ("attention/vllm/0.24.0/generation_attention_perf.parquet", "vLLM 0.24.0 FlashAttention-3 (vllm_flash_attn_fa3)",
             "and vLLM's KV-cache write kernel"),
            ("attention/trtllm/1.3.0rc20/generation_attention_perf.parquet", "TensorRT-LLM 1.3.0rc20 attention (torch_flow)",
             "and TensorRT-LLM's attention-op glue")):
        d = _parquet(repo, rel)
        as_of = _as_of(repo, rel)
        if "kernel_source" in d and "vllm_flash_attn_fa3" in set(d["kernel_source"]):
            d = d[d["kernel_source"] == "vllm_flash_attn_fa3"]
        for nq, nkv, hd, batches, kvs, kvp, label in grid:
            for b in batches:
                for kv in kvs:
                    sel = d[(d.num_heads == nq) & (d.num_key_value_heads == nkv) & (d.head_dim == hd)
                            & (d.kv_cache_dtype == kvp) & (d.window_size == 0) & (d.batch_size == b)
                            & (d.step == kv - 1) & (d.attn_dtype == "bfloat16")]
                    if sel.empty:
                        continue
                    eng = "vllm" if "vllm" in rel else "trtllm"
                    rows.append({
                        "bench_id": f"h200-decode-{eng}-q{nq}kv{nkv}d{hd}-{'fp8kv-' if kvp == 'fp8' else ''}b{b}-kv{kv}",
                        "hardware": "h200", "op": "decode_attention", "kernel": kernel, "precision": "bf16",
                        "kv_precision": "fp8" if kvp == "fp8" else "bf16", "batch": b, "kv_len_tok": kv,
                        "q_tok_per_seq": 1, "n_q_heads": nq, "n_kv_heads": nkv, "head_dim": hd, "head_dim_v": hd,
                        "metric": "latency_s", "value": float(sel["latency"].mean()) * 1e-3, "unit": "s",
                        "kind": "measured", "source": f"{AIC_URL}/{rel}", "as_of": as_of,
                        "note": f"{label} attention shape; KV length = step + 1 (step cached positions and the new "
                                f"token); " + AIC_NOTE.format(extra=extra)})
    return rows


#: aiconfigurator chip directories the builders read (MLA, decode-attention and fused-MoE tables) ->
#: catalog names.
AIC_CHIPS = {"h100_sxm": "h100-sxm", "h200_sxm": "h200", "b200_sxm": "b200", "b300_sxm": "b300", "gb200": "gb200",
             "gb300": "gb300"}
MLA_RELEASE = "1.3.0rc20"


def mla_rows(repo: Path, heads: tuple[int, ...] = (16,)) -> list[dict]:
    """TensorRT-LLM MLA decode ("generation") attention on six NVIDIA chips: DeepSeek-V3's 128 heads
    at TP8 (16 a GPU), latent 512 + rope 64, BF16 and FP8 KV caches, at memory-bound batches and
    lengths (the fit set of :func:`tokenomics.perf.kernels.mla_kv_read_frac`); ``heads`` other head
    counts a GPU of the same table (``tools/mla_heads.py``)."""
    rows = []
    for chip_dir, hw in AIC_CHIPS.items():
        rel = f"{AIC_ROOT}/{chip_dir}/mla/trtllm/{MLA_RELEASE}/generation_mla_perf.parquet"
        d = table(repo, rel)
        as_of = aic_as_of(repo, rel)
        url = f"https://github.com/ai-dynamo/aiconfigurator/blob/{AIC_COMMIT}/{rel}"
        for kvp, h, b, kv in product(("bfloat16", "fp8"), heads, (32, 128, 512), (2048, 8192, 32768)):
            sel = d[(d.num_heads == h) & (d.kv_cache_dtype == kvp) & (d.batch_size == b)
                    & (d.step == kv - 1) & (d.mla_dtype == "bfloat16")]
            if sel.empty:
                continue
            k = "fp8" if kvp == "fp8" else "bf16"
            rows.append({
                "bench_id": f"{hw}-mla-decode-trtllm-h{h}-{k}kv-b{b}-kv{kv}", "hardware": hw,
                "op": "mla_decode_attention", "kernel": f"TensorRT-LLM {MLA_RELEASE} MLA generation",
                "precision": "bf16", "kv_precision": k, "batch": b, "kv_len_tok": kv, "q_tok_per_seq": 1,
                "n_q_heads": h, "n_kv_heads": 1, "head_dim": 576, "head_dim_v": 512, "metric": "latency_s",
                "value": float(sel["latency"].mean()) * 1e-3, "unit": "s", "kind": "measured",
                "source": url, "as_of": as_of,
                "note": f"DeepSeek-V3 MLA at TP{128 // h} ({h} of 128 heads a GPU), absorbed decode; KV length = "
                        "step + 1; " + AIC_NOTE.format(extra="and TensorRT-LLM's MLA-op glue")})
    return rows


#: Decode-attention kernels whose work-unit cost the unit rows time: per engine, the table and the
#: kernel its default backend runs on Hopper and on Blackwell (aiconfigurator ``kernel_source``).
UNIT_KERNELS = (
    ("trtllm", "1.3.0rc20", {"hopper": "torch_flow", "blackwell": "torch_flow"}, "TensorRT-LLM 1.3.0rc20 attention"),
    ("vllm", "0.24.0", {"hopper": "vllm_flash_attn_fa3", "blackwell": "vllm_flashinfer_trtllmdecode"}, "vLLM 0.24.0 attention"),
    ("sglang", "0.5.14", {"hopper": "fa3", "blackwell": "trtllm_mha"}, "SGLang 0.5.14 attention"),
)
#: (q heads, KV heads, head dim, label) a GPU holds: the shapes of the catalogued GQA models
UNIT_SHAPES = ((32, 8, 128, "Llama-3.1-8B"), (64, 8, 64, "gpt-oss at TP1"), (8, 1, 128, "Llama-3.1-70B at TP8"))
#: (batch, KV length): a 2-token cache at 1,024 and 2,048 sequences, where the kernel's cost per
#: (sequence, KV head) work unit is all there is (the fit set of
#: :func:`tokenomics.perf.kernels.attention_unit_s`), and short caches at 256-1,024 sequences, where it
#: meets the KV read (predicted, not fitted)
UNIT_POINTS = ((1024, 2), (2048, 2), (256, 128), (256, 512), (1024, 128), (1024, 512))


def unit_rows(repo: Path) -> list[dict]:
    """Decode attention of many sequences with short caches on six NVIDIA chips, three engines."""
    rows = []
    for (fw, ver, kernels, label), (folder, hw) in product(UNIT_KERNELS, AIC_CHIPS.items()):
        rel = f"{AIC_ROOT}/{folder}/attention/{fw}/{ver}/generation_attention_perf.parquet"
        d = table(repo, rel)
        source = kernels["hopper" if hw in ("h100-sxm", "h200") else "blackwell"]
        d = d[(d.kernel_source == source) & (d.kv_cache_dtype == "bfloat16") & (d.attn_dtype == "bfloat16")
              & (d.window_size == 0)]
        as_of = aic_as_of(repo, rel)
        url = f"https://github.com/ai-dynamo/aiconfigurator/blob/{AIC_COMMIT}/{rel}"
        for (nq, nkv, hd, shape), (b, kv) in product(UNIT_SHAPES, UNIT_POINTS):
            sel = d[(d.num_heads == nq) & (d.num_key_value_heads == nkv) & (d.head_dim == hd) & (d.batch_size == b)
                    & (d.step == kv - 1)]
            if sel.empty:
                continue
            rows.append({
                "bench_id": f"{hw}-decode-{fw}-q{nq}kv{nkv}d{hd}-b{b}-kv{kv}", "hardware": hw, "op": "decode_attention",
                "kernel": f"{label} ({source})", "precision": "bf16", "kv_precision": "bf16", "batch": b,
                "kv_len_tok": kv, "q_tok_per_seq": 1, "n_q_heads": nq, "n_kv_heads": nkv, "head_dim": hd,
                "head_dim_v": hd, "metric": "latency_s", "value": float(sel["latency"].mean()) * 1e-3, "unit": "s",
                "kind": "measured", "source": url, "as_of": as_of,
                "note": f"{shape} attention shape, many sequences with a short cache; KV length = step + 1; "
                        + AIC_NOTE.format(extra="and the engine's attention-op glue")})
    return rows


def prefill_rows(repo: Path) -> list[dict]:
    rel = "attention/trtllm/1.3.0rc20/context_attention_perf.parquet"
    d = _parquet(repo, rel)
    as_of = _as_of(repo, rel)
    rows = []
    for b, isls in ((1, (1024, 4096, 8192, 16384)), (8, (1024, 4096))):
        for isl in isls:
            sel = d[(d.num_heads == 32) & (d.num_key_value_heads == 8) & (d.head_dim == 128) & (d.batch_size == b)
                    & (d.isl == isl) & (d.kv_cache_dtype == "bfloat16") & (d.attn_dtype == "bfloat16")
                    & (d.window_size == 0)]
            if sel.empty:
                continue
            rows.append({
                "bench_id": f"h200-prefill-trtllm-q32kv8d128-b{b}-isl{isl}", "hardware": "h200",
                "op": "prefill_attention", "kernel": "TensorRT-LLM 1.3.0rc20 context attention (torch_flow)",
                "precision": "bf16", "kv_precision": "bf16", "batch": b, "kv_len_tok": isl, "q_tok_per_seq": isl,
                "n_q_heads": 32, "n_kv_heads": 8, "head_dim": 128, "head_dim_v": 128, "metric": "latency_s",
                "value": float(sel["latency"].mean()) * 1e-3, "unit": "s", "kind": "measured",
                "source": f"{AIC_URL}/{rel}", "as_of": as_of,
                "note": "Llama-3.1-8B attention shape, causal prompt of kv_len_tok tokens; "
                        + AIC_NOTE.format(extra="and the KV-cache write")})
    return rows


def moe_rows(repo: Path) -> list[dict]:
    rel = "moe/vllm/0.24.0/moe_perf.parquet"
    d = _parquet(repo, rel)
    as_of = _as_of(repo, rel)
    d = d[(d.kernel_source == "vllm_unquantizedfusedmoe_triton_tritonexperts") & (d.moe_dtype == "bfloat16")
          & (d.distribution == "balanced") & (d.moe_tp_size == 1) & (d.moe_ep_size == 1)]
    rows = []
    for h, f, k, e, label in ((2048, 768, 8, 128, "Qwen3-30B-A3B"), (4096, 14336, 2, 8, "Mixtral-8x7B")):
        for n in (1, 16, 128, 1024, 8192):
            sel = d[(d.hidden_size == h) & (d.inter_size == f) & (d.topk == k) & (d.num_experts == e) & (d.num_tokens == n)]
            if sel.empty:
                continue
            rows.append({
                "bench_id": f"h200-moe-vllm-h{h}f{f}e{e}k{k}-t{n}", "hardware": "h200", "op": "moe_experts",
                "kernel": "vLLM 0.24.0 fused MoE, unquantized Triton experts", "precision": "bf16",
                "kv_precision": "", "batch": n, "kv_len_tok": 0, "q_tok_per_seq": 1, "hidden": h,
                "expert_ffn_hidden": f, "n_experts": e, "experts_per_token": k, "metric": "latency_s",
                "value": float(sel["latency"].mean()) * 1e-3, "unit": "s", "kind": "measured",
                "source": f"{AIC_URL}/{rel}", "as_of": as_of,
                "note": f"{label} expert shape, one MoE layer (batch = tokens), balanced routing, no TP/EP; "
                        + AIC_NOTE.format(extra="and top-k routing, alignment and combine kernels")})
    return rows


#: The fused-MoE rows' chip order (the same chips; the order the file has always listed them in)
AIC_MOE_CHIPS = {k: AIC_CHIPS[k] for k in ("h100_sxm", "h200_sxm", "b200_sxm", "gb200", "b300_sxm", "gb300")}
MOE_SHAPE_NAMES = {"dsv3": "DeepSeek-V3", "gptoss120b": "gpt-oss-120b"}
#: (shape, hidden, expert FFN, experts, top-k, EP, MoE TP, aiconfigurator moe_dtypes, precision): the
#: formats the serving rows use (block-FP8 and NVFP4 DeepSeek; MXFP4 gpt-oss, run with MXFP8 or BF16
#: activations, an engine's choice), each whole expert on one GPU (EP8 / one GPU)
#: Token counts of the small fused-MoE rows (see :data:`MOE_TOKENS`).
MOE_SMALL_TOKENS = (1, 2, 4, 8)
MOE_SHAPES = (
    ("dsv3", 7168, 2048, 256, 8, 8, 1, ("fp8_block",), "fp8"),
    ("dsv3", 7168, 2048, 256, 8, 8, 1, ("nvfp4",), "nvfp4"),
    ("gptoss120b", 2880, 2880, 128, 4, 1, 1, ("w4a8_mxfp4_mxfp8", "w4a16_mxfp4"), "mxfp4"),
)
#: The same layers with every expert split over MoE-TP GPUs (each GPU holds a 1/TP slice of every
#: expert: the layout of a tensor-parallel deployment without expert parallelism), at
#: :data:`MOE_TP_TOKENS`: the 8192-16384-token rows fit how the grouped GEMMs' ceiling falls as
#: each expert's slice narrows (``perf.kernels.moe_gemm_ratio``), the 1-8-token ones the fused layer's
#: fixed latency (``perf.kernels.moe_fixed_s``); the 1024-4096 ones are predicted.
MOE_TP_SHAPES = (
    ("dsv3", 7168, 2048, 256, 8, 1, 8, ("fp8_block",), "fp8"),
    ("dsv3", 7168, 2048, 256, 8, 1, 8, ("nvfp4",), "nvfp4"),
    ("gptoss120b", 2880, 2880, 128, 4, 1, 2, ("w4a8_mxfp4_mxfp8", "w4a16_mxfp4"), "mxfp4"),
    ("gptoss120b", 2880, 2880, 128, 4, 1, 4, ("w4a8_mxfp4_mxfp8", "w4a16_mxfp4"), "mxfp4"),
    ("gptoss120b", 2880, 2880, 128, 4, 1, 8, ("w4a8_mxfp4_mxfp8", "w4a16_mxfp4"), "mxfp4"),
)
MOE_TP_TOKENS = MOE_SMALL_TOKENS + (1024, 4096, 8192, 16384)
MOE_FORMAT = {"fp8_block": "FP8, 128x128 block scales", "nvfp4": "NVFP4",
              "w4a8_mxfp4_mxfp8": "MXFP4 weights, MXFP8 activations", "w4a16_mxfp4": "MXFP4 weights, BF16 activations"}
MOE_FRAMEWORKS = {"trtllm": "TensorRT-LLM", "sglang": "SGLang", "vllm": "vLLM"}


#: Token counts of the fastest-MoE rows: 8192-16384 fit the grouped-GEMM ceilings
#: (``perf.kernels.MOE_RATIO_MIN_TOKENS``), 64-512 the expert weights' streaming rate
#: (``perf.kernels.MOE_STREAM_TOKENS``), 1-8 the fused layer's fixed latency
#: (``perf.kernels.MOE_FIXED_TOKENS``), the rest are predicted. At 16-32 tokens the collector's
#: balanced routing touches every local expert (32 routed pairs over 32 experts: all 32), where
#: random routing touches ~64 %: not the regime a model of random routing predicts, so left out;
#: at 1-8 tokens (at most a quarter of the local experts routed to) the two touch nearly the same
#: experts (8 tokens x top-4 over 128: 32 balanced, 28.7 random).
MOE_TOKENS = MOE_SMALL_TOKENS + (64, 128, 256, 512, 1024, 4096, 8192, 16384)


def best_moe_rows(repo: Path) -> list[dict]:
    """The fastest fused-MoE layer any engine's collector timed, per chip, shape, format and token count.

    The grouped GEMMs of an MoE layer reach a smaller share of the tensor peak than one dense
    GEMM (ragged per-expert tiles, scale handling, permute and finalize kernels); these rows
    measure how much, per chip and weight format, with the best public kernel: over every
    engine and version aiconfigurator collected (TensorRT-LLM, SGLang, vLLM) and every kernel
    each timed, the fastest per token count. (Engines differ by up to 2x on one chip; a serving
    recipe picks its engine's fastest backend, so the best kernel is the chip's capability.)
    EP8 of 256 experts with balanced routing leaves each GPU 32 experts and, on average, one
    routed pair per token: shown as a 32-expert, top-1 layer (same weights, rows per expert and
    FLOPs). The MoE-TP layouts (:data:`MOE_TP_SHAPES`) keep every expert on every GPU, each a
    1/TP slice: shown with the slice's width as ``expert_ffn_hidden``.
    """
    paths = files(repo)
    rows = []
    for folder, hw in AIC_MOE_CHIPS.items():
        found = []
        for rel in paths:
            parts = rel[len(AIC_ROOT) + 1:].split("/")  # chip/moe/framework/version/file
            if parts[:2] != [folder, "moe"] or parts[-1] != "moe_perf.parquet" or parts[2] not in MOE_FRAMEWORKS:
                continue
            d = table(repo, rel)
            if "distribution" not in d:
                continue
            d = d[d.distribution == "balanced"].assign(framework=parts[2], version=parts[3], rel=rel)
            found.append(d)
        if not found:
            continue
        d = pd.concat(found, ignore_index=True)
        shapes = [(s, MOE_TOKENS) for s in MOE_SHAPES] + [(s, MOE_TP_TOKENS) for s in MOE_TP_SHAPES]
        for (shape, h, f, e, k, ep, tp, dtypes, prec), token_counts in shapes:
            sel_shape = d[(d.hidden_size == h) & (d.inter_size == f) & (d.num_experts == e) & (d.topk == k)
                          & (d.moe_ep_size == ep) & (d.moe_tp_size == tp) & d.moe_dtype.isin(dtypes)]
            layout = f"ep{ep}" if tp == 1 else f"tp{tp}"
            split = (f"at EP{ep}, balanced routing, {{n}} tokens: per GPU {e // ep} experts and {{pairs}} routed pairs, "
                     f"shown as n_experts {e // ep}, experts_per_token {k // ep}" if tp == 1 else
                     f"at MoE TP{tp} (each GPU holds a 1/{tp} slice, {f // tp} wide, of all {e} experts), balanced "
                     f"routing, {{n}} tokens: shown as expert_ffn_hidden {f // tp} (the slice)")
            for n in token_counts:
                sel = sel_shape[sel_shape.num_tokens == n]
                if sel.empty:
                    continue
                timed = sel.groupby(["framework", "version", "moe_dtype", "kernel_source", "rel"])["latency"].mean()
                (fw, ver, dtype, kernel, rel), lat = timed.idxmin(), timed.min()
                as_of = aic_as_of(repo, rel)
                rows.append({
                    "bench_id": f"{hw}-moe-best-{prec}-{shape}-{layout}-t{n}", "hardware": hw, "op": "moe_experts",
                    "kernel": f"{MOE_FRAMEWORKS[fw]} {ver} fused MoE ({kernel}), {MOE_FORMAT[dtype]}",
                    "precision": prec, "kv_precision": "", "batch": n, "kv_len_tok": 0, "q_tok_per_seq": 1,
                    "hidden": h, "expert_ffn_hidden": f // tp, "n_experts": e // ep, "experts_per_token": k // ep,
                    "metric": "latency_s", "value": float(lat) * 1e-3, "unit": "s", "kind": "measured",
                    "source": f"https://github.com/ai-dynamo/aiconfigurator/blob/{AIC_COMMIT}/{rel}", "as_of": as_of,
                    "note": (f"{MOE_SHAPE_NAMES[shape]} expert shape (hidden {h}, expert FFN {f}, {e} experts, top {k}) "
                             + split.format(n=n, pairs=n * k // ep) + "; the fastest of "
                             f"{len(timed)} (engine, version, format, kernel) timings at this point; "
                             + AIC_NOTE.format(extra="and routing, permute and finalize kernels"))})
    return rows


FLASHMLA_H100 = "https://github.com/deepseek-ai/FlashMLA/issues/19"
MANUAL = [
    # DeepSeek's FlashMLA README: "up to 3000 GB/s in memory-bound configuration ... on H800 SXM5"
    {"bench_id": "h800-flashmla-claim-bandwidth", "hardware": "h800", "op": "mla_decode_attention",
     "kernel": "DeepSeek FlashMLA (BF16, paged KV, block 64)", "precision": "bf16", "kv_precision": "bf16",
     "batch": 128, "kv_len_tok": 4096, "q_tok_per_seq": 1, "n_q_heads": 16, "n_kv_heads": 1, "head_dim": 576,
     "head_dim_v": 512, "metric": "kv_bandwidth_bytes_per_s", "value": 3.0e12, "unit": "B/s", "kind": "claimed",
     "source": "https://github.com/deepseek-ai/FlashMLA/blob/b31bfe72a83ea205467b3271a5845440a03ed7cb/README.md",
     "as_of": "2025-02-24",
     "note": "CLAIMED by the authors: 'up to 3000 GB/s in memory-bound configuration' on H800 SXM5 (3.35 TB/s "
             "datasheet), CUDA 12.6-12.8; 'up to' = the best shape of their test grid; shape columns are that "
             "grid's memory-bound corner (b=128, s_k=4096, h_q=16), not stated with the claim"},
    # FlashMLA's own benchmark run by a third party on an H100 (Modal), CUDA 12.6
    *[{"bench_id": f"h100-flashmla-b128-sk4096-hq{hq}", "hardware": "h100-sxm", "op": "mla_decode_attention",
       "kernel": "DeepSeek FlashMLA (BF16, paged KV, block 64)", "precision": "bf16", "kv_precision": "bf16",
       "batch": 128, "kv_len_tok": 4096, "q_tok_per_seq": 1, "n_q_heads": hq, "n_kv_heads": 1, "head_dim": 576,
       "head_dim_v": 512, "metric": "latency_s", "value": ms * 1e-3, "unit": "s", "kind": "measured",
       "source": FLASHMLA_H100, "as_of": "2025-02-24",
       "note": f"MEASURED by a user with FlashMLA's tests/test_flash_mla.py on a Modal H100 (PyTorch 2.6, CUDA 12.6), "
               f"causal, fixed length; reported {ms} ms, {gbs} GB/s; GPU variant (SXM/PCIe) inferred from the "
               f"reported bandwidth; one run, no spread given"}
      for hq, ms, gbs in ((16, 0.215, 2826), (32, 0.218, 2813), (64, 0.223, 2789))],
    # FlashAttention-3 paged decode on an H100, from a GitHub issue
    *[{"bench_id": f"h100-fa3-decode-q32kv32d128-b16-kv{kv}", "hardware": "h100-sxm", "op": "decode_attention",
       "kernel": "FlashAttention-3 flash_attn_with_kvcache (paged KV, page 8)", "precision": "bf16",
       "kv_precision": "bf16", "batch": 16, "kv_len_tok": kv, "q_tok_per_seq": 1, "n_q_heads": 32, "n_kv_heads": 32,
       "head_dim": 128, "head_dim_v": 128, "metric": "latency_s", "value": us * 1e-6, "unit": "s",
       "kind": "measured", "source": "https://github.com/Dao-AILab/flash-attention/issues/1572", "as_of": "2025-04-11",
       "note": f"MEASURED by a user (comment of 2025-04-11) with CUDA graphs: {us} us; page size 8 is small for FA3 "
               f"(the thread reports the gap to ideal grows with length); MHA, 32 KV heads"}
      for kv, us in ((128, 27.6), (2000, 292.0), (4000, 567.2))],
]


# AMD fused-MoE layers from ROCm/aiter's tuned-config tables: device time of the winning kernel
# measured by aiter's FmoeTuner (101 runs, rotating buffers, random = near-uniform routing), MoE
# GEMMs only (no token sorting, no separate activation-quant kernel), so a lower bound on a
# serving engine's MoE layer. Chip from the table's cu_num (304 = MI300X/MI325X, 256 = MI355X)
# and the commit message. Rows whose time repeats across token counts (copied or mocked in
# the source) were left out; the values were read at the commit that added them.
AITER = "https://github.com/ROCm/aiter/blob/{commit}/aiter/configs/{path}"
AITER_NOTE = ("MEASURED by AMD's aiter FmoeTuner (kernel device time, 101 runs, rotating buffers; random "
              "routing scores, so near-uniform expert load); MoE GEMMs only: excludes moe_sorting and, for "
              "two-stage kernels, the activation-quant kernel; {what}; row keyed cu_num={cu}, token={n}, "
              "model_dim={h}, inter_dim={f}, expert={e}, topk={k}")
AITER_ROWS = [
    # (chip, cu_num, what, precision, kernel, hidden, inter per GPU, experts, top-k, path, as_of,
    #  commit that added the rows, ((tokens, us), ...), {tokens: commit where a later one added it})
    ("mi300x", 304, "Qwen3-235B-A22B TP8 shape, tuned on MI300X", "bf16", "aiter 2-stage CK fused MoE (BF16)",
     4096, 192, 128, 8, "model_configs/qwen3_235b_bf16_tuned_fmoe.csv", "2026-05-28",
     "64b51cd2f447021c99d7545b91d0b5f8132cd542",
     ((1, 32.71), (4, 53.37), (16, 116.72), (64, 171.60), (256, 194.35)), {}),
    ("mi300x", 304, "Qwen3-235B-A22B TP4 shape", "bf16", "aiter 2-stage CK fused MoE (BF16)",
     4096, 384, 128, 8, "model_configs/qwen3_235b_bf16_tuned_fmoe.csv", "2026-05-28",
     "128419db858f73c27f58acb77325deb03213c997",
     ((1, 34.06), (4, 84.43), (16, 218.24), (64, 338.29), (256, 356.61)), {}),
    ("mi355x", 256, "DeepSeek-V3/R1 TP8 shape, no shared-expert fusion", "fp8",
     "aiter 2-stage CK fused MoE (FP8 a8w8, 1x128 activation / 128x128 weight block scales)",
     7168, 256, 256, 8, "tuned_fmoe.csv", "2025-11-24", "3ac8e1a3f6bb1781342551adfbf2e007e84f5d19",
     ((1, 54.38), (4, 66.09), (16, 112.68), (64, 212.99), (256, 249.58)),
     {64: "9f3a1138ba0c", 256: "9f3a1138ba0c"}),
    ("mi355x", 256, "DeepSeek-R1 MXFP4 TP8 shape with the shared expert fused (257 experts, top 9)", "mxfp4",
     "aiter 2-stage fused MoE (MXFP4 weights and activations, 1x32 e8m0 scales)",
     7168, 256, 257, 9, "model_configs/dsv3_fp4_tuned_fmoe.csv", "2026-08-13", "804761163fe9",
     ((1, 18.89), (4, 26.16), (16, 59.58), (64, 137.17), (256, 140.26)),
     {1: "ea7d7b659ac319bc727e008c0ee71ccfb45b9df4", 64: "2d21a9f239a7", 256: "82612d2f9ad2"}),
    # the same MXFP4 layers at prefill and verify sizes, the TP4 slice and whole experts (EP8: 33
    # local experts, top 8 local), from the retuned tables (82612d2, 2026-08-13): the 8192-16384-
    # token rows fit the chip's MXFP4 grouped-GEMM ceiling and how it falls with the slice
    # (perf.kernels.moe_gemm_ratio), the 1024-4096-token ones are predicted
    ("mi355x", 256, "DeepSeek-R1 MXFP4 TP8 shape with the shared expert fused (257 experts, top 9)", "mxfp4",
     "aiter 2-stage fused MoE (MXFP4 weights and activations, 1x32 e8m0 scales)",
     7168, 256, 257, 9, "model_configs/dsv3_fp4_tuned_fmoe.csv", "2026-08-13",
     "82612d2f9ad236167fa26871b62ea1f178aa9a97",
     ((1024, 195.5295), (4096, 430.7707), (8192, 716.9447), (16384, 1350.5468)), {}),
    ("mi355x", 256, "DeepSeek-R1 MXFP4 TP4 shape with the shared expert fused (257 experts, top 9)", "mxfp4",
     "aiter 2-stage fused MoE (MXFP4 weights and activations, 1x32 e8m0 scales)",
     7168, 512, 257, 9, "model_configs/dsv3_fp4_tuned_fmoe.csv", "2026-08-13",
     "82612d2f9ad236167fa26871b62ea1f178aa9a97",
     ((1024, 317.8619), (4096, 671.5476), (8192, 1094.9279), (16384, 1964.8217)), {}),
    ("mi355x", 256, "DeepSeek-R1 MXFP4 EP8 shape with the shared expert fused (33 local experts, top 8 local)",
     "mxfp4", "aiter 2-stage fused MoE (MXFP4 weights and activations, 1x32 e8m0 scales)",
     7168, 2048, 33, 8, "model_configs/dsv3_fp4_tuned_fmoe.csv", "2026-08-13",
     "82612d2f9ad236167fa26871b62ea1f178aa9a97",
     ((1024, 371.8622), (4096, 1161.7062), (8192, 2178.1958), (16384, 4252.6745)), {}),
    # FP8 block-scale layers at narrow expert slices, same split (1024-4096 predicted, 8192-16384
    # fit): DeepSeek-V3's TP4 slice on the MI355X and MiMo-V2.5-Pro's TP8 slice on the MI300X
    # (gfx942; with the EP8 rows below, how the MI300X ceiling falls with the slice)
    ("mi355x", 256, "DeepSeek-V3 TP4 shape with the shared expert fused (257 experts, top 9)", "fp8",
     "aiter 1-stage fused MoE (FP8, 1x128 activation / 128x128 weight block scales)",
     7168, 512, 257, 9, "model_configs/a8w8_blockscale_tuned_fmoe_ds_v3.csv", "2026-05-05",
     "1638f9e7a913cf55ac527917ef3c5d9d0b09d671", ((1024, 673.6803), (4096, 1294.01), (8192, 2305.846)), {}),
    ("mi300x", 304, "MiMo-V2.5-Pro TP8 shape (384 experts, top 8), gfx942", "fp8",
     "aiter 1-stage fused MoE (FP8, 1x128 activation / 128x128 weight block scales)",
     6144, 256, 384, 8, "model_configs/mimo_v2_5_pro_tuned_fmoe.csv", "2026-07-27",
     "ebc905b03175d4365b16221a523e512601226666", ((4096, 1069.7621), (8192, 1412.0369), (16384, 2680.6649)), {}),
    # EP8 of DeepSeek-V3 with the shared expert fused (33 local experts, top 9): the tuner draws all
    # nine picks from the local experts, so these time the grouped GEMMs at large row counts
    ("mi300x", 304, "DeepSeek-V3 EP8 shape with the shared expert fused (33 local experts, all top-9 local)",
     "fp8", "aiter 2-stage CK fused MoE (FP8 a8w8, 1x128 activation / 128x128 weight block scales)",
     7168, 2048, 33, 9, "model_configs/a8w8_blockscale_tuned_fmoe_ds_v3.csv", "2026-07-23",
     "84493f0e5b083b02c9ff3d60961f58bae547045a",
     ((1024, 1091.0448), (4096, 3549.0971), (8192, 6928.7099), (16384, 13796.9001)), {}),
]


def aiter_rows() -> list[dict]:
    rows = []
    for (hw, cu, what, prec, kernel, h, f, e, k, path, as_of, commit0, points, later) in AITER_ROWS:
        for n, us in points:
            commit = later.get(n, commit0)
            rows.append({
                "bench_id": f"{hw}-moe-aiter-{prec}-h{h}f{f}e{e}k{k}-t{n}", "hardware": hw, "op": "moe_experts",
                "kernel": kernel, "precision": prec, "kv_precision": "", "batch": n, "kv_len_tok": 0,
                "q_tok_per_seq": 1, "hidden": h, "expert_ffn_hidden": f, "n_experts": e, "experts_per_token": k,
                "metric": "latency_s", "value": us * 1e-6, "unit": "s", "kind": "measured",
                "source": AITER.format(commit=commit, path=path), "as_of": as_of,
                "note": AITER_NOTE.format(what=what, cu=cu, n=n, h=h, f=f, e=e, k=k)})
    return rows


# AMD's production prefill attention on the MI355X: aiter.flash_attn_func (the hand-written v3
# assembly forward), the "ref" timings of HazyResearch's HipKittens benchmark (analysis/attn/fwd/
# benchmark/test_python.py: 100 timed calls after 500 warm-ups, CUDA events, fresh random inputs
# each call), causal GQA with 64 query and 8 KV heads of 128, batch 16 (15 at 16,384 tokens). Not
# fitted: the MI355X prefill attention rate is the H200's carried by the chips' GEMM ceilings.
HIPKITTENS_COMMIT = "f09e9685c4c6aaa41fb3ebd4fe4ca664938589e1"
HIPKITTENS = ("https://github.com/HazyResearch/HipKittens/blob/" + HIPKITTENS_COMMIT
              + "/analysis/attn/fwd/benchmark/mi355x_gqa_causal_fwd.json")
#: (prompt tokens, batch, AITER mean time [ms]) read from that file's ``avg_time_ref``
HIPKITTENS_AITER_FWD = ((1024, 16, 0.3843743097782135), (2048, 16, 1.1683108520507812),
                        (4096, 16, 3.9950390529632567), (8192, 16, 14.6035013961792),
                        (16384, 15, 52.939962501525876))


def hipkittens_rows() -> list[dict]:
    return [{
        "bench_id": f"mi355x-prefill-aiter-q64kv8d128-b{b}-isl{n}", "hardware": "mi355x", "op": "prefill_attention",
        "kernel": "aiter flash_attn_func (v3 assembly forward), causal", "precision": "bf16", "kv_precision": "bf16",
        "batch": b, "kv_len_tok": n, "q_tok_per_seq": n, "n_q_heads": 64, "n_kv_heads": 8, "head_dim": 128,
        "head_dim_v": 128, "metric": "latency_s", "value": ms * 1e-3, "unit": "s", "kind": "measured",
        "source": HIPKITTENS, "as_of": "2025-11-20",
        "note": ("MEASURED by HazyResearch's HipKittens attention benchmark on an MI355X: AMD's aiter "
                 "flash_attn_func as the reference kernel, mean of 100 calls after 500 warm-ups (CUDA events), "
                 "causal GQA prompt of kv_len_tok tokens per sequence, no KV-cache write")}
        for n, b, ms in HIPKITTENS_AITER_FWD]


def main(argv: list[str]) -> None:
    if len(argv) != 2:
        sys.exit(__doc__)
    repo = Path(argv[1])
    df = pd.DataFrame(decode_rows(repo) + unit_rows(repo) + mla_rows(repo) + prefill_rows(repo) + moe_rows(repo) + best_moe_rows(repo)
                      + MANUAL + aiter_rows() + hipkittens_rows(),
                      columns=COLUMNS)
    for c in ("batch", "kv_len_tok", "q_tok_per_seq", "n_q_heads", "n_kv_heads", "head_dim", "head_dim_v",
              "hidden", "expert_ffn_hidden", "n_experts", "experts_per_token"):
        df[c] = df[c].astype("Int64")
    df.to_csv(OUT, index=False, float_format="%.6g")
    print(f"wrote {OUT}: {len(df)} rows")


if __name__ == "__main__":
    main(sys.argv)
