"""The output head, embedding and routers stay BF16 in quantized checkpoints (stop 49): their bytes
and their tensor path are BF16's, whatever the other weights' precision."""

import numpy as np
import pytest

from tokenomics import catalog
from tokenomics.perf.memory import weight_bytes_per_chip
from tokenomics.perf.ops import build_ops
from tokenomics.perf.kernels import gemm_peak_flop_per_s
from tokenomics.perf.step import decode_step
from tokenomics.specs import head_bytes, head_precision, plan

L8 = catalog.model("llama-3.1-8b")
DSV3 = catalog.model("deepseek-v3")


def test_head_precision_rule():
    assert head_precision("fp8") == "bf16" and head_precision("nvfp4") == "bf16"
    assert head_precision("bf16") == "bf16" and head_precision("fp32") == "fp32"
    assert head_bytes(1.0) == 2.0 and head_bytes(0.5625) == 2.0 and head_bytes(4.0) == 4.0


def test_fp8_llama_weights_hand():
    # FP8 Llama 3.1 8B: every linear layer 1 B a weight, embedding and lm head (2 x 128256 x 4096) 2 B
    emb = 2 * 128256 * 4096
    body = L8.total_params() - emb
    assert weight_bytes_per_chip(L8, weight_precision="fp8") == pytest.approx(body * 1.0 + emb * 2.0)
    ops = {o.name: o for o in build_ops(L8, plan("engine"), batch=1, context_tok=1024, weight_bytes_per_param=1.0)}
    assert float(np.ravel(ops["lm_head"].weight_bytes)[0]) == pytest.approx(128256 * 4096 * 2)
    assert float(np.ravel(ops["qkv"].weight_bytes)[0]) == pytest.approx(4096 * (32 + 2 * 8) * 128 * 1.0)


def test_fp8_router_bytes_hand():
    # DeepSeek-V3 FP8: 58 routers of 256 x 7168 stay BF16
    ops = {o.name: o for o in build_ops(DSV3, plan("engine"), batch=1, context_tok=1024, weight_bytes_per_param=1.0)}
    r = ops["router"]
    assert r.count == 58 and float(np.ravel(r.weight_bytes)[0]) == pytest.approx(256 * 7168 * 2)


def test_fp8_head_computes_at_the_bf16_peak():
    """At 4,096 rows the FP8 Llama's lm head is compute-bound: it cannot beat its FLOPs at the
    H200's BF16 peak (it would at the FP8 peak, 1.8x the BF16 one)."""
    hw = catalog.accelerator("h200")
    r = decode_step("h200", L8, "engine", batch=4096, context_tok=1024, weight_precision="fp8", on_oom="ignore")
    head = next(x for x in r.op_times if x.name == "lm_head")
    flop = 2 * 4096 * 4096 * 128256
    bf16_peak, _ = gemm_peak_flop_per_s(hw, "bf16")
    fp8_peak, _ = gemm_peak_flop_per_s(hw, "fp8")
    assert fp8_peak > 1.5 * bf16_peak
    assert float(np.ravel(head.compute_s)[0]) >= flop / bf16_peak
