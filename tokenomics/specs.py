"""Frozen, validated parameter holders: accelerators, model architectures, execution plans.

Classes here hold numbers; the physics lives in functions (:mod:`tokenomics.perf`). Every field
carries its unit in its name and is validated on construction, so a bad value fails where it is
made, with a one-line message.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields, replace
from typing import Any

import numpy as np

from . import _validate as v
from .errors import ValidationError, unknown_name

#: Bytes per stored element for each precision name. ``mxfp4`` counts the shared 8-bit scale of
#: each 32-element block (4 + 8/32 = 4.25 bits; OCP Microscaling Formats spec v1.0); ``nvfp4``
#: an FP8 scale per 16 elements (4 + 8/16 = 4.5 bits; NVIDIA's NVFP4, Blackwell). ``fp4`` is the
#: bare 4-bit format (no scales). ``fp8-mxfp4`` is an MoE expert stored as the TPU Kimi K3
#: megakernel holds it: gate and up projections reblocked losslessly from MXFP4 into FP8 with a
#: BF16 scale per 128-element block, the down projection left MXFP4 (github:Inferact/
#: tpu-megakernels, kimi/load.py and kimi/decode_megakernel.py): ``(2 x (1 + 2/128) + 4.25/8) / 3``.
#: ``int4-g128``: symmetric INT4 with an FP32 scale per 128 elements (4 + 32/128 bits; the same
#: repository's Muse Spark container, musespark/layout.py).
PRECISION_BYTES: dict[str, float] = {
    "fp32": 4.0,
    "bf16": 2.0,
    "fp16": 2.0,
    "fp8": 1.0,
    "int8": 1.0,
    "mxfp4": 4.25 / 8,
    "nvfp4": 4.5 / 8,
    "fp4": 0.5,
    "int4": 0.5,
    "fp8-mxfp4": (2 * (1 + 2 / 128) + 4.25 / 8) / 3,
    "int4-g128": 4.25 / 8,
}


#: Bytes per element of a linear-attention layer's recurrent state: FP32, as TensorRT-LLM forces
#: it for Kimi K3 ("KDA recurrent state must be fp32", NVIDIA/TensorRT-LLM PR 17332, 2026-08-07;
#: the fla KDA kernels carry the state in fp32).
LINEAR_STATE_BYTES_PER_ELEM = 4.0


def precision_bytes(name: str) -> float:
    """Bytes per element of a precision name (``'bf16'`` -> 2.0)."""
    if not isinstance(name, str):
        raise ValidationError(f"precision must be a name such as 'bf16', got {name!r:.60}")
    if name not in PRECISION_BYTES:
        raise unknown_name("precision", name, PRECISION_BYTES)
    return PRECISION_BYTES[name]


#: Weights stored unquantized in every catalogued checkpoint whatever the rest: the output head,
#: the embedding and the MoE routers (quantization ignore lists: DeepSeek-V3/R1's FP8 and NVIDIA's
#: NVFP4 checkpoints, ModelOpt FP8/FP4 Llama and Qwen, Kimi K3's compressed-tensors ``lm_head``;
#: routers are left out by ModelOpt and by the FP8 block-quantized releases). Their operators.
UNQUANTIZED_GEMMS = ("router", "lm_head")


def head_bytes(dense_bytes: float) -> float:
    """Bytes per element of the output head, embedding and routers next to dense weights of
    ``dense_bytes`` per element [B]: BF16's where those are quantized below 16 bits, else theirs
    (:data:`UNQUANTIZED_GEMMS`)."""
    return max(float(dense_bytes), precision_bytes("bf16"))


def head_precision(dense_precision: str) -> str:
    """:func:`head_bytes` as a precision name: ``dense_precision`` where it is at least 16 bits,
    else ``bf16``."""
    own = precision_bytes(dense_precision)
    return dense_precision if head_bytes(own) == own else "bf16"


def component_precisions(model: "ModelSpec", weight_precision: str | None = None,
                          expert_precision: str | None = None) -> tuple[str, str]:
    """(dense/attention, expert) storage precisions of a model's weights.

    A given ``weight_precision`` applies to the whole checkpoint unless ``expert_precision`` is
    also given; by default dense weights use the model's ``dense_precision`` (or native) and
    experts its native precision.
    """
    dense = weight_precision or model.dense_precision or model.native_precision
    expert = expert_precision or weight_precision or model.native_precision
    precision_bytes(dense)
    precision_bytes(expert)
    return dense, expert


def _nan(x: Any) -> float:
    try:
        f = float(x)
    except (TypeError, ValueError):
        return float("nan")
    return f


def _asdict(obj) -> dict[str, Any]:
    return {f.name: getattr(obj, f.name) for f in fields(obj)}


@dataclass(frozen=True)
class Accelerator:
    """One accelerator chip, datasheet figures in base units.

    Parameters
    ----------
    name : str
        Catalog id, e.g. ``"h200"``.
    peak_bf16_flop_per_s : float
        Dense bf16 tensor throughput [FLOP/s].
    hbm_bytes : float
        Accelerator memory capacity [B].
    hbm_bytes_per_s : float
        Datasheet memory bandwidth [B/s].
    peak_fp8_flop_per_s, peak_fp4_flop_per_s, peak_int4_flop_per_s, peak_int8_flop_per_s : float
        Dense throughput at lower precisions [FLOP/s]; NaN where the chip has no such path
        (``peak_int8_flop_per_s`` only where INT8 is a path of its own: a chip without FP8 tensor
        cores, such as Ascend; elsewhere INT8 runs at the FP8 rate).
    sram_bytes : float
        On-chip memory the program can use (L2, VMEM, SRAM) [B]; NaN if unknown.
    scaleup_bytes_per_s : float
        Scale-up interconnect bandwidth per chip as the datasheet states it [B/s].
    tdp_w : float
        Board power limit [W]; NaN if unknown.
    price_usd : float
        Indicative price per chip [USD]; NaN if unknown.
    """

    name: str
    peak_bf16_flop_per_s: float
    hbm_bytes: float
    hbm_bytes_per_s: float
    peak_fp8_flop_per_s: float = float("nan")
    peak_fp4_flop_per_s: float = float("nan")
    peak_int4_flop_per_s: float = float("nan")
    peak_int8_flop_per_s: float = float("nan")
    sram_bytes: float = float("nan")
    scaleup_bytes_per_s: float = float("nan")
    tdp_w: float = float("nan")
    price_usd: float = float("nan")
    display_name: str = ""
    vendor: str = ""
    source: str = ""
    as_of: str = ""

    def __post_init__(self) -> None:
        for f in ("peak_bf16_flop_per_s", "hbm_bytes", "hbm_bytes_per_s"):
            val = getattr(self, f)
            if val is None or (isinstance(val, float) and math.isnan(val)):
                raise ValidationError(
                    f"accelerator {self.name!r} has no {f} in the catalog; the performance model "
                    f"needs it (add a sourced value to datasets/accelerators.csv)"
                )
            v.positive(val, f"{self.name}.{f}")
        for f in ("peak_fp8_flop_per_s", "peak_fp4_flop_per_s", "peak_int4_flop_per_s",
                  "peak_int8_flop_per_s", "sram_bytes", "scaleup_bytes_per_s", "tdp_w", "price_usd"):
            val = _nan(getattr(self, f))
            if not math.isnan(val) and val <= 0:
                raise ValidationError(f"{self.name}.{f} must be positive or NaN, got {val:g}")

    def peak_flop_per_s(self, precision: str = "bf16") -> float:
        """Dense peak for a compute precision, falling back to the next wider path.

        A chip without an fp8 path computes fp8-stored weights in bf16, and so on.
        """
        return float(getattr(self, self.peak_flop_field(precision)))

    def peak_flop_field(self, precision: str = "bf16") -> str:
        """The datasheet field (tensor path) that computes ``precision``: the first of its paths
        the chip has, else ``peak_bf16_flop_per_s`` (see :meth:`peak_flop_per_s`)."""
        # W4A8 (int4 weights, 8-bit activations) runs 8-bit GEMMs where no 4-bit path exists
        order = {"fp4": ["peak_fp4_flop_per_s", "peak_int4_flop_per_s", "peak_fp8_flop_per_s"],
                 "int4": ["peak_int4_flop_per_s", "peak_fp4_flop_per_s", "peak_fp8_flop_per_s",
                          "peak_int8_flop_per_s"],
                 # MXFP4 is timed on the FP4 path, else FP8. The kernels differ (TensorRT-LLM's
                 # gpt-oss README: BF16 x MXFP4 on Hopper, MXFP8 x MXFP4 on Blackwell), but the
                 # routed experts' large-batch rate is fitted on measured MXFP4 MoE kernels per
                 # chip (perf.kernels.moe_gemm_ratio), so the path sets only their small-row slope;
                 # timing NVIDIA's on BF16 / FP8 instead moved gpt-oss's serving rows 0.91x ->
                 # 0.86x (AIConfigurator dump) and 1.56x -> 1.50x (TensorRT-LLM offline), not kept
                 "mxfp4": ["peak_fp4_flop_per_s", "peak_fp8_flop_per_s"],
                 "nvfp4": ["peak_fp4_flop_per_s"],
                 "fp8": ["peak_fp8_flop_per_s"], "int8": ["peak_int8_flop_per_s", "peak_fp8_flop_per_s"],
                 "fp8-mxfp4": ["peak_fp8_flop_per_s"],
                 "int4-g128": ["peak_int4_flop_per_s", "peak_fp4_flop_per_s", "peak_fp8_flop_per_s",
                               "peak_int8_flop_per_s"]}
        for f in order.get(precision, []):
            if not math.isnan(_nan(getattr(self, f))):
                return f
        return "peak_bf16_flop_per_s"

    @classmethod
    def from_row(cls, row) -> "Accelerator":
        kw = {f.name: row[f.name] for f in fields(cls) if f.name in row.index}
        for k, val in list(kw.items()):
            if k not in ("name", "display_name", "vendor", "source", "as_of"):
                kw[k] = _nan(val)
            else:
                kw[k] = "" if val is None or (isinstance(val, float) and math.isnan(val)) else str(val)
        return cls(**kw)

    def replace(self, **changes: Any) -> "Accelerator":
        """A copy with some fields changed (validated again)."""
        return replace(self, **changes)

    def to_dict(self) -> dict[str, Any]:
        return _asdict(self)


@dataclass(frozen=True)
class ModelSpec:
    """A decoder-only transformer's architecture (dense or MoE; GQA or MLA attention).

    Parameters
    ----------
    name : str
        Catalog id.
    n_layers : int
        Decoder layers.
    hidden : int
        Model width.
    n_q_heads, n_kv_heads, head_dim : int
        Attention heads (GQA). For MLA ``n_kv_heads`` is unused.
    ffn_hidden : int
        Intermediate size of dense (non-MoE) SwiGLU MLPs.
    vocab : int
        Vocabulary size; 0 means no embedding and no lm head.
    n_moe_layers : int
        Layers whose MLP is a mixture of experts (the last ``n_moe_layers`` layers).
    n_experts, experts_per_token, n_shared_experts, expert_ffn_hidden : int
        MoE layout: routed experts, top-k, always-on shared experts, expert intermediate size.
    attention : {"gqa", "mla"}
        Grouped-query or multi-head latent attention.
    q_lora_rank, kv_lora_rank, qk_rope_head_dim, qk_nope_head_dim, v_head_dim : int
        MLA dimensions (0 for GQA). The MLA KV cache holds ``kv_lora_rank + qk_rope_head_dim``
        elements per token per layer.
    tied_embeddings : bool
        Whether the lm head shares the embedding matrix (read once).
    sliding_window_tok, n_sliding_layers : int
        Layers that attend to at most ``sliding_window_tok`` past tokens.
    native_precision : str
        Precision the weights are published in (``bf16``, ``fp8``, ``int4``, ``mxfp4``); for an
        MoE model, the experts' precision.
    dense_precision : str
        Precision of the attention, dense and embedding weights when it differs from
        ``native_precision`` (gpt-oss: MXFP4 experts, BF16 elsewhere); empty = the same.
    n_linear_layers, linear_heads, linear_head_dim : int
        Hybrid models (Kimi K3, Kimi Linear): layers that run linear attention (Kimi Delta
        Attention) instead of ``attention``, with ``linear_heads`` heads of ``linear_head_dim``.
        They hold no KV cache but a fixed ``linear_head_dim^2`` state per head and sequence
        (FP32, :data:`LINEAR_STATE_BYTES_PER_ELEM`); q, k, v and o are full-rank projections.
    linear_key_heads : int
        Query / key heads of a linear-attention layer when fewer than its value heads
        (``linear_heads``; Qwen3.5's Gated DeltaNet: 16 key heads shared by 64 value heads, each
        value head keeping its own state); 0 = as many as ``linear_heads`` (Kimi Delta Attention).
    linear_gate_rank : int
        How a linear-attention layer computes its decay and beta gates. Kimi Delta Attention: a
        per-key decay through a rank-``linear_gate_rank`` bottleneck (``f_a: hidden -> rank``,
        ``f_b: rank -> linear width``) beside a per-head beta (``b: hidden -> heads``); 0 = Gated
        DeltaNet's per-head decay and beta (``hidden -> 2 x heads``).
    attn_output_gate : bool
        Every layer gates its attention output with a ``hidden -> attn width`` projection
        (Kimi K3's ``g_proj``).
    attn_residual_block : int
        Attention residuals (Kimi K3): each layer mixes the outputs of earlier blocks of this many
        layers into its attention and its MLP input (a norm and a learned query each) instead of
        plain residual adds; 0 = plain residuals.
    moe_latent_dim : int
        LatentMoE: routed experts run in a latent of this width, behind a ``hidden -> latent``
        down-projection and a ``latent -> hidden`` up-projection per MoE layer (dense precision);
        dispatch and combine move latent-width tokens. 0 = experts at ``hidden``.
    moe_latent_norm : bool
        LatentMoE normalizes the latent before the routed experts (an RMSNorm per MoE layer).
    shared_experts_dense : bool
        Shared experts are stored at the dense precision rather than the experts' (Kimi K3's
        checkpoint quantizes the routed experts only).
    mtp_modules : float
        Multi-token-prediction modules the checkpoint ships (``num_nextn_predict_layers`` of its
        config: DeepSeek-V3 and GLM-4.5 1; absent = 0); NaN where not known. ``--spec mtp`` needs
        at least one.
    """

    name: str
    n_layers: int
    hidden: int
    n_q_heads: int
    n_kv_heads: int
    head_dim: int
    ffn_hidden: int = 0
    vocab: int = 0
    n_moe_layers: int = 0
    n_experts: int = 0
    experts_per_token: int = 0
    n_shared_experts: int = 0
    expert_ffn_hidden: int = 0
    attention: str = "gqa"
    q_lora_rank: int = 0
    kv_lora_rank: int = 0
    qk_rope_head_dim: int = 0
    qk_nope_head_dim: int = 0
    v_head_dim: int = 0
    tied_embeddings: bool = False
    sliding_window_tok: int = 0
    n_sliding_layers: int = 0
    native_precision: str = "bf16"
    dense_precision: str = ""
    n_linear_layers: int = 0
    linear_heads: int = 0
    linear_head_dim: int = 0
    linear_key_heads: int = 0
    linear_gate_rank: int = 0
    attn_output_gate: bool = False
    attn_residual_block: int = 0
    moe_latent_dim: int = 0
    moe_latent_norm: bool = False
    shared_experts_dense: bool = False
    mtp_modules: float = float("nan")
    claimed_total_params: float = float("nan")
    claimed_active_params: float = float("nan")
    display_name: str = ""
    source: str = ""
    as_of: str = ""
    note: str = ""

    def __post_init__(self) -> None:
        for f in ("n_layers", "hidden", "n_q_heads", "head_dim"):
            v.count(getattr(self, f), f"{self.name}.{f}")
        for f in ("ffn_hidden", "vocab", "n_moe_layers", "n_experts", "experts_per_token",
                  "n_shared_experts", "expert_ffn_hidden", "q_lora_rank", "kv_lora_rank",
                  "qk_rope_head_dim", "qk_nope_head_dim", "v_head_dim", "sliding_window_tok",
                  "n_sliding_layers", "n_kv_heads", "n_linear_layers", "linear_heads",
                  "linear_head_dim", "linear_key_heads", "linear_gate_rank", "attn_residual_block",
                  "moe_latent_dim"):
            v.count(getattr(self, f), f"{self.name}.{f}", minimum=0)
        v.one_of(self.attention, f"{self.name}.attention", ("gqa", "mla"))
        if self.attention == "gqa" and (self.n_kv_heads < 1 or self.n_q_heads % self.n_kv_heads):
            raise ValidationError(
                f"{self.name}: n_q_heads ({self.n_q_heads}) must be a multiple of n_kv_heads "
                f"({self.n_kv_heads}) >= 1 for GQA"
            )
        if self.attention == "mla" and min(self.kv_lora_rank, self.v_head_dim) < 1:
            raise ValidationError(f"{self.name}: MLA needs kv_lora_rank and v_head_dim >= 1")
        if self.n_moe_layers > self.n_layers:
            raise ValidationError(
                f"{self.name}: n_moe_layers ({self.n_moe_layers}) exceeds n_layers ({self.n_layers})"
            )
        if self.n_moe_layers:
            if self.n_experts < 1 or self.expert_ffn_hidden < 1:
                raise ValidationError(f"{self.name}: MoE layers need n_experts and expert_ffn_hidden >= 1")
            if not 1 <= self.experts_per_token <= self.n_experts:
                raise ValidationError(
                    f"{self.name}: experts_per_token must be in [1, n_experts={self.n_experts}], "
                    f"got {self.experts_per_token}"
                )
        if self.n_moe_layers < self.n_layers and self.ffn_hidden < 1:
            raise ValidationError(f"{self.name}: dense layers need ffn_hidden >= 1")
        if self.n_sliding_layers + self.n_linear_layers > self.n_layers:
            raise ValidationError(f"{self.name}: n_sliding_layers + n_linear_layers exceeds n_layers")
        if self.n_linear_layers and min(self.linear_heads, self.linear_head_dim) < 1:
            raise ValidationError(f"{self.name}: linear-attention layers need linear_heads and linear_head_dim >= 1")
        if self.linear_key_heads > self.linear_heads:
            raise ValidationError(f"{self.name}: linear_key_heads ({self.linear_key_heads}) exceeds linear_heads "
                                  f"({self.linear_heads}); value heads share key heads, not the reverse")
        precision_bytes(self.native_precision)
        if self.dense_precision:
            precision_bytes(self.dense_precision)

    # ---- derived sizes ----------------------------------------------------------------------
    @property
    def is_moe(self) -> bool:
        return self.n_moe_layers > 0

    @property
    def n_dense_layers(self) -> int:
        return self.n_layers - self.n_moe_layers

    @property
    def n_attn_layers(self) -> int:
        """Layers that run ``attention`` (GQA or MLA, full or sliding) rather than linear attention."""
        return self.n_layers - self.n_linear_layers

    @property
    def attn_out_dim(self) -> int:
        """Width of the attention output before the o projection."""
        return self.n_q_heads * (self.v_head_dim if self.attention == "mla" else self.head_dim)

    @property
    def linear_width(self) -> int:
        """Width of a linear-attention layer's q, k, v and output (heads x head dim)."""
        return self.linear_heads * self.linear_head_dim

    @property
    def linear_qk_width(self) -> int:
        """Width of a linear-attention layer's q and k (key heads x head dim; ``linear_width``
        unless the layer has fewer key heads than value heads)."""
        return (self.linear_key_heads or self.linear_heads) * self.linear_head_dim

    def linear_attention_params(self) -> int:
        """Weights of one linear-attention layer: q, k, v and o projections and the decay and
        beta gates (:meth:`linear_gate_widths`); the output gate is counted by
        :meth:`gate_params`, short convolutions (4 taps a channel) are ignored."""
        down, rank = self.linear_gate_widths()
        return int(self.hidden * (2 * self.linear_qk_width + 2 * self.linear_width + down) + rank * self.linear_width)

    def linear_gate_widths(self, tp: float = 1) -> tuple[float, int]:
        """Output widths of a linear-attention layer's gate projections on one of ``tp``
        tensor-parallel ranks: (from ``hidden``: the beta per head plus the replicated decay
        bottleneck, or Gated DeltaNet's decay and beta per head; the bottleneck's rank, whose
        up-projection fills the rank's share of the linear width, 0 without one)."""
        if self.linear_gate_rank:
            return self.linear_heads / tp + self.linear_gate_rank, self.linear_gate_rank
        return 2 * self.linear_heads / tp, 0

    def gate_params(self, linear: bool = False) -> int:
        """The attention output gate of one layer (0 without ``attn_output_gate``)."""
        if not self.attn_output_gate:
            return 0
        return self.hidden * (self.linear_width if linear else self.attn_out_dim)

    def all_attention_params(self) -> int:
        """Attention weights of all layers: ``attention`` layers, linear ones and output gates."""
        return (self.n_attn_layers * (self.attention_params() + self.gate_params())
                + self.n_linear_layers * (self.linear_attention_params() + self.gate_params(linear=True)))

    def linear_state_bytes_per_seq(self) -> float:
        """Recurrent state one sequence keeps in all linear-attention layers [B]."""
        return float(self.n_linear_layers * self.linear_heads * self.linear_head_dim ** 2
                     * LINEAR_STATE_BYTES_PER_ELEM)

    def attention_params(self) -> int:
        """Attention weights of one layer (projections only)."""
        h = self.hidden
        if self.attention == "mla":
            qk = self.qk_nope_head_dim + self.qk_rope_head_dim
            q = (h * self.q_lora_rank + self.q_lora_rank * self.n_q_heads * qk) if self.q_lora_rank \
                else h * self.n_q_heads * qk
            kv_a = h * (self.kv_lora_rank + self.qk_rope_head_dim)
            kv_b = self.kv_lora_rank * self.n_q_heads * (self.qk_nope_head_dim + self.v_head_dim)
            return q + kv_a + kv_b + self.attn_out_dim * h
        qkv = h * (self.n_q_heads + 2 * self.n_kv_heads) * self.head_dim
        return qkv + self.attn_out_dim * h

    def expert_params(self) -> int:
        """Weights of one routed expert (SwiGLU: gate, up, down; in the latent under LatentMoE)."""
        return 3 * (self.moe_latent_dim or self.hidden) * self.expert_ffn_hidden

    def shared_expert_params(self) -> int:
        """Weights of one shared expert (SwiGLU at the full width)."""
        return 3 * self.hidden * self.expert_ffn_hidden

    def shared_bytes_per_param(self, dense_bytes: float, expert_bytes: float) -> float:
        """Storage of the shared experts [B per element]: the dense weights' with
        ``shared_experts_dense``, else the routed experts'."""
        return dense_bytes if self.shared_experts_dense else expert_bytes

    def dense_weight_bytes(self, dense_bytes: float, expert_bytes: float) -> float:
        """Bytes of the weights every token reads whatever the routing, embeddings excluded [B]:
        :meth:`non_expert_params` at ``dense_bytes`` per element (the routers at
        :func:`head_bytes`: stored unquantized) plus the shared experts at
        :meth:`shared_bytes_per_param`."""
        shared = self.n_moe_layers * self.n_shared_experts * self.shared_expert_params()
        router = self.n_moe_layers * self.router_params()
        return float((self.non_expert_params() - router) * dense_bytes + router * head_bytes(dense_bytes)
                     + shared * self.shared_bytes_per_param(dense_bytes, expert_bytes))

    def router_params(self) -> int:
        """Router (gate) weights of one MoE layer: hidden x routed experts."""
        return self.hidden * self.n_experts

    def latent_params(self) -> int:
        """LatentMoE down- and up-projections of one MoE layer (0 without a latent)."""
        return 2 * self.hidden * self.moe_latent_dim

    def dense_mlp_params(self) -> int:
        return 3 * self.hidden * self.ffn_hidden

    def embedding_params(self) -> int:
        """Embedding plus lm head (counted once when tied)."""
        return self.vocab * self.hidden * (1 if self.tied_embeddings else 2)

    def non_expert_params(self) -> int:
        """Weights every token reads whatever the routing, embeddings excluded: attention (all
        layers), dense MLPs, and in MoE layers the router and the LatentMoE projections."""
        return (self.all_attention_params() + self.n_dense_layers * self.dense_mlp_params()
                + self.n_moe_layers * (self.router_params() + self.latent_params()))

    def total_params(self) -> int:
        """All weights, from the architecture (norms and biases ignored)."""
        experts = self.n_moe_layers * (self.n_experts * self.expert_params()
                                       + self.n_shared_experts * self.shared_expert_params())
        return int(self.non_expert_params() + experts + self.embedding_params())

    def active_params(self) -> int:
        """Weights one token touches (routed top-k plus shared experts; lm head, not embedding)."""
        experts = self.n_moe_layers * (self.experts_per_token * self.expert_params()
                                       + self.n_shared_experts * self.shared_expert_params())
        return int(self.non_expert_params() + experts + self.vocab * self.hidden)

    def kv_elems_per_tok_layer(self) -> int:
        """KV-cache elements one token stores in one layer."""
        if self.attention == "mla":
            return self.kv_lora_rank + self.qk_rope_head_dim
        return 2 * self.n_kv_heads * self.head_dim

    def kv_bytes_per_tok(self, kv_bytes_per_elem: float = 2.0, context_tok: float | None = None) -> float:
        """KV-cache bytes per token across all layers [B].

        With ``context_tok`` given, sliding-window layers count only their window, so the result
        is the average per cached token at that context.
        """
        per_layer = self.kv_elems_per_tok_layer() * kv_bytes_per_elem
        full = self.n_attn_layers - self.n_sliding_layers  # linear-attention layers cache nothing
        if context_tok is None or not self.n_sliding_layers:
            return per_layer * self.n_attn_layers if context_tok is None else per_layer * (
                full + self.n_sliding_layers)
        ctx = np.maximum(np.asarray(context_tok, dtype=float), 1.0)
        win = np.minimum(ctx, self.sliding_window_tok)
        return per_layer * (full + self.n_sliding_layers * win / ctx)

    @classmethod
    def from_row(cls, row) -> "ModelSpec":
        kw: dict[str, Any] = {}
        for f in fields(cls):
            if f.name not in row.index:
                continue
            val = row[f.name]
            if f.type in ("int",):
                kw[f.name] = int(val) if not (isinstance(val, float) and math.isnan(val)) else 0
            elif f.type == "bool":
                kw[f.name] = str(val).strip().lower() in ("true", "1", "yes")
            elif f.type == "float":
                kw[f.name] = _nan(val)
            else:
                kw[f.name] = "" if val is None or (isinstance(val, float) and math.isnan(val)) else str(val)
        return cls(**kw)

    def replace(self, **changes: Any) -> "ModelSpec":
        """A copy with some fields changed (validated again)."""
        return replace(self, **changes)

    def to_dict(self) -> dict[str, Any]:
        return _asdict(self)


LAUNCH_MODES = ("eager", "graph", "megakernel")
FUSIONS = ("unfused", "fused_qkv_gateup", "engine", "super")
EXPERT_COMPUTE = ("touched", "all")


@dataclass(frozen=True)
class ExecutionPlan:
    """How a step is executed: launch mode, kernel fusion, MoE expert strategy.

    Parameters
    ----------
    name : str
        Plan id.
    launch : {"eager", "graph", "megakernel"}
        ``eager``: every op launched from the host (host cost per kernel; host-bound when that
        exceeds GPU time). ``graph``: the step captured once and replayed (a small cost per
        kernel on the device). ``megakernel``: one launch per step; the next layer's weights are
        prefetched into on-chip memory while the current layer computes.
    fusion : {"unfused", "fused_qkv_gateup", "engine", "super"}
        Kernel fusion. ``unfused``/``fused_qkv_gateup`` are the plain-PyTorch reference
        implementation of the calibration runs; ``engine`` is a serving engine's fused kernels
        (fused norms, rope, activation); ``super`` divides the engine's count by
        ``fusion_factor`` (the article's "super operators").
    fusion_factor : float
        Kernel-count divisor for ``super`` fusion (>= 1; the article claims 10x).
    expert_compute : {"touched", "all"}
        MoE: loop over the distinct experts some token was routed to (reads only those, one
        host sync per layer), or compute every expert for every token in one batched op.
    kernels_per_step : float or None
        A measured kernel count that replaces the estimate.
    """

    name: str
    launch: str = "graph"
    fusion: str = "fused_qkv_gateup"
    fusion_factor: float = 1.0
    expert_compute: str = "touched"
    kernels_per_step: float | None = None
    description: str = ""

    def __post_init__(self) -> None:
        v.one_of(self.launch, "launch", LAUNCH_MODES)
        v.one_of(self.fusion, "fusion", FUSIONS)
        v.one_of(self.expert_compute, "expert_compute", EXPERT_COMPUTE)
        v.positive(self.fusion_factor, "fusion_factor")
        if self.fusion_factor < 1:
            raise ValidationError(f"fusion_factor must be >= 1 (a kernel-count divisor), got {self.fusion_factor:g}")
        if self.kernels_per_step is not None:
            v.positive(self.kernels_per_step, "kernels_per_step")

    @property
    def engine_fused(self) -> bool:
        """Whether the step runs a serving engine's fused kernels (``engine`` or ``super``
        fusion), not the plain-PyTorch reference implementation."""
        return self.fusion in ("engine", "super")

    @property
    def expert_loop(self) -> bool:
        """Whether a MoE layer is the reference implementation's loop over touched experts (each
        routed expert its own kernels, one host sync per expert), not a fused MoE kernel."""
        return self.expert_compute == "touched" and not self.engine_fused

    def replace(self, **changes: Any) -> "ExecutionPlan":
        return replace(self, **changes)

    def to_dict(self) -> dict[str, Any]:
        return _asdict(self)


PLANS: dict[str, ExecutionPlan] = {
    p.name: p
    for p in [
        ExecutionPlan("eager", "eager", "unfused", description="PyTorch eager, one launch per op, separate q/k/v and gate/up GEMMs"),
        ExecutionPlan("eager-fused", "eager", "fused_qkv_gateup", description="PyTorch eager with fused qkv and gate_up GEMMs"),
        ExecutionPlan("graph-unfused", "graph", "unfused", description="CUDA graph replay of the unfused step"),
        ExecutionPlan("graph", "graph", "fused_qkv_gateup", description="CUDA graph replay, fused qkv and gate_up (the calibration runs)"),
        ExecutionPlan("eager-engine", "eager", "engine", description="serving-engine kernels launched eagerly from the host (no graph capture)"),
        ExecutionPlan("engine", "graph", "engine", description="serving engine (vLLM/TRT-LLM class): fused norms, rope, activation; CUDA graphs"),
        ExecutionPlan("super", "graph", "super", fusion_factor=10.0, description="'super operators': the engine's kernel count cut by 10x (article's claim)"),
        ExecutionPlan("megakernel", "megakernel", "super", description="one launch per step; weights prefetched into on-chip memory during compute"),
    ]
}
"""Named execution plans. ``plan("graph")`` returns one; ``ExecutionPlan(...)`` makes others."""


def plan(name: str | ExecutionPlan) -> ExecutionPlan:
    """Look up a named :class:`ExecutionPlan` (or pass one through)."""
    if isinstance(name, ExecutionPlan):
        return name
    if not isinstance(name, str):
        raise ValidationError(f"execution must be a plan name or an ExecutionPlan, got {name!r:.60}")
    name = name.strip().lower() if name.strip().lower() in PLANS else name
    if name not in PLANS:
        raise unknown_name("execution plan", name, PLANS)
    return PLANS[name]
