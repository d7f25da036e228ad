"""Kimi K3's and Qwen3.5's operators beyond q/k/v/o (stop 50): linear-attention decay and beta
projections, the engine's linear-attention core kernels, attention residuals, the latent norm and
the attention gate's multiply. Expected values are hand calculations from the checkpoints'
tensor shapes (models.csv notes) and the kernel inventory of aiconfigurator's kimi_k3.py."""

import numpy as np
import pytest

from tokenomics import catalog
from tokenomics.perf.ops import ENGINE_LINEAR_ATTN, build_ops, step_kernels
from tokenomics.specs import plan

K3 = catalog.model("kimi-k3")
Q35 = catalog.model("qwen3.5-397b-a17b")


def _ops(model, plan_name="engine", tp=8, **kw):
    ops = build_ops(model, plan(plan_name), batch=1, context_tok=1024, tp=tp, **kw)
    return {o.name: o for o in ops}, ops


def _f(x) -> float:
    return float(np.ravel(x)[0])


def test_kda_gate_projection_bytes_hand():
    # K3 at TP8, BF16: b_proj 96 x 7168 split 8 ways (12 rows) beside the replicated f_a_proj
    # 128 x 7168; f_b_proj 12288 x 128 split 8 ways (1536 x 128)
    by, _ = _ops(K3, weight_bytes_per_param=2.0)
    down, up = by["decay+beta(linear)"], by["decay up(linear)"]
    assert down.count == 69 and up.count == 69
    assert _f(down.weight_bytes) == pytest.approx(7168 * (12 + 128) * 2)
    assert _f(up.weight_bytes) == pytest.approx(128 * 1536 * 2)


def test_kda_gate_params_in_the_weights_hand():
    # per KDA layer: q, k, v, o 4 x 7168 x 12288; gates 7168 x (96 + 128) + 128 x 12288
    assert K3.linear_attention_params() == 4 * 7168 * 12288 + 7168 * (96 + 128) + 128 * 12288


def test_gated_deltanet_gates_hand():
    # Qwen3.5: in_proj_ba, hidden 4096 -> 2 x 64 value heads, split 8 ways; no bottleneck
    by, _ = _ops(Q35, weight_bytes_per_param=2.0)
    assert _f(by["decay+beta(linear)"].weight_bytes) == pytest.approx(4096 * 16 * 2)
    assert "decay up(linear)" not in by
    assert Q35.linear_gate_widths() == (128, 0)


def test_engine_kernels_of_a_kda_layer():
    """An engine KDA layer: q/k/v(+gate) GEMM, two gate GEMMs, conv + recurrence + gated norm,
    o GEMM = 7 kernels, not counting the layer's norms (aiconfigurator kimi_k3.py, SGLang path)."""
    by, _ = _ops(K3)
    per_layer = sum(_f(by[n].kernels) for n in ("qkv(linear)", "gate(linear out)", "decay+beta(linear)",
                                                   "decay up(linear)", "linear attention", "o(linear)"))
    assert per_layer == 1 + 0 + 1 + 1 + ENGINE_LINEAR_ATTN + 1 == 7


def test_k3_elementwise_ops_hand():
    by, _ = _ops(K3)
    assert by["attention residuals"].count == 2 * 93 and _f(by["attention residuals"].kernels) == 1
    # one row: 4 x 7168 read, 2 x 7168 written, BF16
    assert _f(by["attention residuals"].act_bytes) == pytest.approx(6 * 7168 * 2)
    assert by["latent norm"].count == 92 and _f(by["latent norm"].act_bytes) == pytest.approx(2 * 3584 * 2)
    # the 24 MLA layers multiply their gate into the 96 x 128 / 8 output
    assert by["gate multiply"].count == 24 and _f(by["gate multiply"].act_bytes) == pytest.approx(3 * 1536 * 2)


def test_engine_step_kernels_grow_by_the_new_ops_hand():
    """Against the same model without a decay bottleneck, attention residuals or latent norm, K3
    under the engine plan launches the 69 decay up-projections, 2 x 93 residual mixes and 92 latent
    norms more."""
    _, ops = _ops(K3)
    bare = K3.replace(linear_gate_rank=0, attn_residual_block=0, moe_latent_norm=False)
    _, bare_ops = _ops(bare)
    # the bare model still has Gated-DeltaNet-style per-head gates: one GEMM instead of two
    new = step_kernels(ops, K3, plan("engine"))
    old = step_kernels(bare_ops, bare, plan("engine"))
    assert new - old == pytest.approx(69 * 1 + 186 + 92)


def test_models_without_these_features_are_unchanged():
    by, _ = _ops(catalog.model("deepseek-v3"))
    assert not {"attention residuals", "latent norm", "gate multiply", "decay+beta(linear)"} & set(by)
