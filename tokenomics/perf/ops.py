"""Operator inventory of one decode step or prefill: FLOPs, bytes and kernel launches per op.

The inventory is architecture arithmetic only (no hardware): for a model, a batch and a context
it lists every operator class of a layer with its multiplicity (how many layers have it), the
bytes it must move (weights, activations, KV cache), its dense FLOPs, the rows of its GEMMs and
the kernels it launches under a fusion level. All numeric fields broadcast over numpy arrays of
``batch``, ``context_tok`` and ``tokens_per_step``, so a sweep is one call.

Sharding seams for multi-chip systems: ``tp`` divides attention heads, dense and shared-expert
MLPs, the lm head and (GQA) KV heads; ``ep`` divides the routed experts. Quantities returned are
per chip.
"""

from __future__ import annotations

import math
from dataclasses import MISSING, dataclass, fields
from typing import Any

import numpy as np

from ..errors import ValidationError
from ..specs import LINEAR_STATE_BYTES_PER_ELEM, ExecutionPlan, ModelSpec, head_bytes
from .memory import expert_tp_ways

#: Bytes per activation element (bf16 activations throughout).
ACT_BYTES = 2.0

# Kernel launches per layer of the plain-PyTorch reference implementation used in the H200
# calibration runs (../shared/calibration/README.md). Counted with the CUDA profiler there:
# dense fused step = 28 per layer + 4 per step at batch 128 for both 1.5B and 8B models
# (452 = 16*28 + 4, 900 = 32*28 + 4); unfused = 31 per layer (+3 GEMMs). The 24 non-GEMM
# kernels per layer split into attention-side glue (norm, KV-cache writes, SDPA, residual) and
# MLP-side glue (norm, activation, multiply, residual); the split is an estimate.
REF_ATTN_GLUE = 14  # plus the SDPA kernel carried by the attention op
REF_MLP_NORM_RESIDUAL = 7  # the MLP block's RMSNorm and residual add, dense or MoE
REF_MLP_ACT = 2  # SiLU and multiply of a dense SwiGLU MLP
REF_STEP_EXTRA = 4
# MoE blocks of the reference implementation (estimated from its description in
# ../shared/calibration/README.md; no MoE kernel count was measured), beside the router GEMM
# (its own op): softmax, top-k, renormalise (2), output buffer, unique (2) = 7; per touched
# expert: token mask, nonzero (a host sync), gather, gate_up, SiLU-and-mul (2), down,
# routing-weight multiply, index_add = 9; ``all``: softmax, top-k, renormalise (2), dense
# routing weights (2), two einsums with their layout copies, SiLU-and-mul, weighted sum = 11.
REF_MOE_ROUTER = 7
REF_MOE_PER_TOUCHED_EXPERT = 9
REF_MOE_ALL = 11
# MLA adds latent projections and norms over the latent (estimate).
REF_MLA_EXTRA = 8

# Serving-engine kernels per layer (vLLM / TensorRT-LLM class: fused add+RMSNorm, fused QKV,
# fused rope + KV-cache write, flash-decoding attention, fused SiLU-and-mul, fused MoE).
# A dense GQA layer: qkv, attention, o, gate_up, down (5) + 2 fused add+norm + rope/cache (3)
# + silu_and_mul (1) = 9 kernels.
ENGINE_GLUE = 3
ENGINE_ACT = 1
ENGINE_MOE = 7  # fused top-k softmax, align, w13, act, w2, combine, shared-expert act
ENGINE_MLA_EXTRA = 2  # latent norms
# A linear-attention layer's core in an engine: short-convolution update, the recurrence and the
# gated RMSNorm of its output (SGLang's Kimi K3 path and vLLM's Gated DeltaNet path; aiconfigurator
# 095f58a aic-core/src/aiconfigurator_core/sdk/models/kimi_k3.py, generation ops, and vLLM
# model_executor/layers/kda.py); vLLM's SM100 Kimi K3 build folds the three into one kernel
# without speculative decoding. The output gate's projection rides in the q/k/v GEMM (K3's fused
# qkvg, Qwen3.5's in_proj_qkvz).
ENGINE_LINEAR_ATTN = 3
ENGINE_STEP_EXTRA = 4


@dataclass(frozen=True)
class Op:
    """One operator class of a step.

    Attributes
    ----------
    name : str
        Operator name (``qkv``, ``attention``, ``experts``, ...).
    kind : str
        ``gemm``, ``attention``, ``elementwise`` or ``attention_prefill``.
    count : float
        How many times it runs per step (usually layers).
    weight_bytes, act_bytes, kv_bytes : ndarray
        Bytes read or written per occurrence [B].
    flop : ndarray
        Dense FLOPs per occurrence [FLOP].
    rows : ndarray
        GEMM rows (tokens) each weight matrix is multiplied with; sets GEMM efficiency.
    n_gemm : ndarray
        GEMM kernels per occurrence (each pays the tiled-GEMM fixed cost when rows > 1).
    kernels : ndarray
        Kernel launches per occurrence under the plan's fusion level.
    timing_extra_kernels : ndarray
        Split-K reduction kernels a skinny GEMM has at one row but no longer at ``rows``; the
        step timing charges them anyway (see :func:`timed_kernels`) so that a bigger batch
        never makes a step faster. Zero for every op without split-K.
    gemm_size : float
        ``sqrt(n k)`` of a dense GEMM's weight matrix on one chip [elements]
        (:func:`tokenomics.perf.profile.gemm_size_curve`); infinite for every other op.
    work_units : ndarray
        Decode attention (GQA): the (sequence, KV head) pairs one occurrence processes on a chip,
        each a block of the kernel with a fixed cost however short its cache
        (:func:`tokenomics.perf.kernels.attention_unit_s`). Zero for every other op.
    """

    name: str
    kind: str
    count: float
    weight_bytes: np.ndarray
    act_bytes: np.ndarray
    kv_bytes: np.ndarray
    flop: np.ndarray
    rows: np.ndarray
    n_gemm: np.ndarray
    kernels: np.ndarray
    tile_always: bool = False  # n_gemm already counts only the tiled GEMMs
    timing_extra_kernels: Any = 0.0
    gemm_size: float = float("inf")  # sqrt(n k) of a dense GEMM's weight matrix [elements]
    work_units: Any = 0.0  # decode attention: (sequence, KV head) pairs on the chip


_OP_FIELDS = tuple(f.name for f in fields(Op))
_OP_DEFAULTS = {f.name: f.default for f in fields(Op) if f.default is not MISSING}


def _new_op(*args: Any, **kwargs: Any) -> Op:
    """``Op(*args, **kwargs)`` without the frozen dataclass's per-field ``__init__`` (an :class:`Op`
    has no ``__post_init__``): a step builds ~15 of them."""
    new = object.__new__(Op)
    d = new.__dict__
    d.update(_OP_DEFAULTS)
    d.update(zip(_OP_FIELDS, args))
    d.update(kwargs)
    return new


def expected_distinct_experts(n_tokens, n_experts: int, top_k: int):
    """Expected number of distinct experts touched when ``n_tokens`` tokens each pick ``top_k``
    of ``n_experts`` (uniform routing): ``E * (1 - (1 - k/E) ** N)``.

    Examples
    --------
    >>> round(float(expected_distinct_experts(1, 256, 8)), 6)
    8.0
    >>> round(float(expected_distinct_experts(10_000, 256, 8)), 3)
    256.0
    """
    n = np.asarray(n_tokens, dtype=float)
    return n_experts * (1.0 - (1.0 - top_k / n_experts) ** n)


def _splitk_extra(m, k: float, n: float):
    """Extra split-K reduction kernels cuBLAS launches for skinny GEMMs (heuristic fitted to the
    counted kernels of the H200 runs: 8B has 2 extra per layer at batch <= 8, 1 at 32, 0 at 128;
    separate k/v projections (n <= 1024, k >= 4096) always add one)."""
    if not isinstance(m, float):  # a Python or numpy float goes straight to the scalar rules
        m = np.asarray(m, dtype=float)
    if isinstance(m, float) or m.ndim == 0:  # scalar fast path, same rules
        x = float(m)
        e = 1.0 if (x <= 8 and k >= 4096 and n <= k) else 0.0
        e += 1.0 if (8 < x <= 32 and k > 8192 and n <= k / 2) else 0.0
        e += 1.0 if (n <= 1024 and k >= 4096 and e == 0) else 0.0
        return np.float64(e)
    extra = np.where((m <= 8) & (k >= 4096) & (n <= k), 1.0, 0.0)
    extra = extra + np.where((m > 8) & (m <= 32) & (k > 8192) & (n <= k / 2), 1.0, 0.0)
    extra = extra + np.where((n <= 1024) & (k >= 4096), 1.0, 0.0) * (extra == 0)
    return extra


def _shaped(x: Any, one: Any) -> Any:
    """``one * x`` for ``one`` equal to 1 everywhere: ``x`` itself where it has ``one``'s shape and type."""
    same = type(x) is type(one) and x.shape == one.shape and x.dtype == one.dtype  # numpy: one is 0 * m + 1
    return x if same else one * x


def _shard(x: int, parts: int, what: str) -> float:
    if parts < 1:
        raise ValidationError(f"{what} shard size must be >= 1, got {parts}")
    return x / parts


def build_ops(
    model: ModelSpec,
    plan: ExecutionPlan,
    *,
    batch,
    context_tok,
    tokens_per_step=1,
    phase: str = "decode",
    weight_bytes_per_param: float = 2.0,
    kv_bytes_per_elem: float = 2.0,
    tp: int = 1,
    ep: int = 1,
    attn_dp: int = 1,
    expert_bytes_per_param: float | None = None,
) -> list[Op]:
    """List the operators of one step.

    Parameters
    ----------
    model : ModelSpec
        Architecture.
    plan : ExecutionPlan
        Fusion level and MoE expert strategy (launch mode is used later, in timing).
    batch : array_like
        Sequences in the step.
    context_tok : array_like
        Decode: cached positions each sequence attends to. Prefill: prompt length.
    tokens_per_step : array_like
        Decode: new tokens per sequence (1, or a speculative verify step of several).
    phase : {"decode", "prefill"}
        Prefill processes ``context_tok`` tokens per sequence with causal attention and computes
        the lm head for the last token only.
    weight_bytes_per_param, kv_bytes_per_elem : float
        Storage precision [B per element].
    tp, ep : int
        Tensor- and expert-parallel shard sizes (per-chip quantities are returned).
    attn_dp : int
        Attention data parallelism inside an expert-parallel group (DeepSeek-style serving):
        each chip runs attention, dense MLPs, shared experts and the lm head for
        ``batch / attn_dp`` sequences with replicated weights, while the routed experts see all
        ``batch`` sequences' tokens spread over ``ep`` chips.
    expert_bytes_per_param : float, optional
        Storage of routed and shared expert weights [B per element]; default
        ``weight_bytes_per_param``. Routed experts are split over the group's
        ``max(tp * attn_dp, ep)`` chips: ``ep`` ways by expert, the rest by tensor parallelism
        inside each expert (``ep = 1``, ``tp > 1``: TP-sharded experts).

    Returns
    -------
    list of Op
    """
    # 0-d inputs become numpy scalars ([()]): scalar arithmetic is ~10x faster than 0-d arrays
    b = np.asarray(batch, dtype=float)[()]
    ctx = np.asarray(context_tok, dtype=float)[()]
    t = np.asarray(tokens_per_step, dtype=float)[()]
    if phase == "prefill":
        t = ctx
    m = b * t  # tokens of the whole group in the step (routed experts see all of them)
    if attn_dp < 1:
        raise ValidationError(f"attn_dp must be >= 1, got {attn_dp}")
    ba = np.ceil(b / attn_dp)  # whole sequences on the busiest attention rank
    ma = ba * t  # rows through the attention-side and dense GEMMs on that chip
    h = model.hidden
    wb = weight_bytes_per_param
    one = 0.0 * m + 1.0
    zero = 0.0 * m
    fused = plan.fusion != "unfused"
    ops: list[Op] = []

    eb = wb if expert_bytes_per_param is None else expert_bytes_per_param
    expert_tp = expert_tp_ways(tp * attn_dp, ep)  # the stage spans tp * attn_dp chips

    engine = plan.engine_fused

    twice: dict[int, Any] = {}  # (rows, 2.0 * rows) by the rows array's id (GEMMs share rows)
    n_gemms: dict[float, Any] = {}  # one * n_gemm by count (ops share read-only arrays)

    def gemm(name, count, k, n, rows=ma, n_gemm=1.0, ref_kernels=None, act_in=None, bytes_per_param=wb):
        k = float(k)
        n = float(n)
        if engine:  # an engine's split-K-free kernels: _assign_kernels sets every GEMM's count
            kern = dropped = zero
        else:
            extra = None if ref_kernels is not None else _splitk_extra(rows, k, n)
            kern = one * (ref_kernels if ref_kernels is not None else n_gemm + extra)
            # split-K extras fall as rows grow (non-increasing in m); timing keeps the one-row count
            dropped = one * (zero if ref_kernels is not None else _splitk_extra(1.0, k, n) - extra)
        act = (rows * (k + n) * ACT_BYTES) if act_in is None else act_in
        # one is 1 everywhere (x 1 is exact): it only gives a constant the step's shape
        kept = twice.get(id(rows))
        if kept is None or kept[0] is not rows:
            kept = twice[id(rows)] = (rows, 2.0 * rows)  # rows kept alive: its id stays its own
        rows2 = kept[1]
        ng = n_gemms.get(n_gemm) if type(n_gemm) is float else None
        if ng is None:
            ng = one * n_gemm
            if type(n_gemm) is float:
                n_gemms[n_gemm] = ng
        ops.append(_new_op(name, "gemm", count, one * (k * n * bytes_per_param), _shaped(act, one), zero,
                      rows2 * k * n, _shaped(rows, one), ng, kern, timing_extra_kernels=dropped,
                      gemm_size=math.sqrt(k * n)))

    L = model.n_layers
    La = model.n_attn_layers  # layers running ``model.attention`` (the rest: linear attention)
    # ---------------- attention block ------------------------------------------------------
    nq = _shard(model.n_q_heads, tp, "tp")
    if model.attention == "gqa":
        kv_heads = max(model.n_kv_heads / tp, 1.0)
        hd = model.head_dim
        q_n, kv_n = nq * hd, kv_heads * hd
        if fused:
            gemm("qkv", La, h, q_n + 2 * kv_n)
        else:
            gemm("q", La, h, q_n)
            gemm("k", La, h, kv_n)
            gemm("v", La, h, kv_n)
        kv_elems_layer = 2 * kv_heads * hd
        qk_dim, v_dim = hd, hd
        units = ba * kv_heads  # decode kernels run one block per (sequence, KV head)
    else:  # MLA (DeepSeek): latent KV cache, weight absorption at decode
        qk = model.qk_nope_head_dim + model.qk_rope_head_dim
        if model.q_lora_rank:
            gemm("q_a+kv_a", La, h, model.q_lora_rank + model.kv_lora_rank + model.qk_rope_head_dim)
            gemm("q_b", La, model.q_lora_rank, nq * qk)
        else:
            gemm("q+kv_a", La, h, nq * qk + model.kv_lora_rank + model.qk_rope_head_dim)
        # absorbed kv_b: q_nope @ W_UK and o_latent @ W_UV, per head (weights = kv_b)
        gemm("kv_b(absorbed)", La, model.kv_lora_rank, nq * (model.qk_nope_head_dim + model.v_head_dim),
             n_gemm=2.0, ref_kernels=2.0 * one)
        kv_elems_layer = model.kv_lora_rank + model.qk_rope_head_dim
        # MLA kernels: their per-sequence cost (aiconfigurator's MLA tables: 60-215 ns on Hopper by
        # heads) is a few % of a decode at 1k+ cached tokens; not charged
        units = zero
        if phase == "prefill":
            # prefill attends in the MHA form: kv_b expands the latent cache into per-head keys
            # (nope + rope) and values (the same kv_b FLOPs as the two absorbed products), and
            # the attention runs at those head dims, not the latent's (DeepSeek-V3 report,
            # section 2.1.1; the engines' MLA prefill kernels: FlashMLA / FlashInfer MHA paths)
            qk_dim, v_dim = qk, model.v_head_dim
        else:
            qk_dim, v_dim = model.kv_lora_rank + model.qk_rope_head_dim, model.kv_lora_rank
    # attention over the cache (sliding-window layers see at most the window)
    n_full = La - model.n_sliding_layers
    for name, count, window in (("attention", n_full, None),
                                ("attention(sliding)", model.n_sliding_layers, model.sliding_window_tok)):
        if count <= 0:
            continue
        if phase == "prefill":
            span = ctx if window is None else np.minimum(ctx, window)
            # causal: query i attends to min(i+1, window) keys; average ~ span/2 for full
            mean_keys = (ctx + 1) / 2 if window is None else np.minimum((ctx + 1) / 2, span)
            flop = 2.0 * ba * ctx * nq * mean_keys * (qk_dim + v_dim)
            kv = ba * ctx * kv_elems_layer * kv_bytes_per_elem  # written once
            act = 2 * ba * ctx * nq * (qk_dim + v_dim) * ACT_BYTES
            ops.append(_new_op(name, "attention_prefill", count, zero, act, kv, flop, ma, zero, one))
        else:
            keys = ctx if window is None else np.minimum(ctx, window)
            flop = 2.0 * ba * t * nq * keys * (qk_dim + v_dim)
            kv = ba * keys * kv_elems_layer * kv_bytes_per_elem + ba * t * kv_elems_layer * kv_bytes_per_elem
            act = 2 * ma * nq * (qk_dim + v_dim) * ACT_BYTES
            ops.append(_new_op(name, "attention", count, zero, act, kv, flop, ma, zero, one, work_units=one * units))
    gemm("o", La, model.attn_out_dim / tp, h)
    if model.attn_output_gate:
        gemm("gate(attn out)", La, h, model.attn_out_dim / tp)
    Ll = model.n_linear_layers
    if Ll:
        # linear attention (Kimi Delta Attention): full-rank q, k, v and o projections and a
        # recurrent state of head_dim^2 per head and sequence instead of a KV cache; decode reads
        # and writes the state once per step (~10 head_dim^2 FLOP per head and token: decay,
        # delta-rule update, readout); prefill runs chunks of 64 tokens (+ 4 x 64 x head_dim
        # FLOP per head and token inside a chunk) and writes the state once
        d = model.linear_head_dim
        lh = _shard(model.linear_heads, tp, "tp")
        lw = lh * d
        qkw = _shard(model.linear_qk_width, tp, "tp")  # q and k: fewer key heads in a Gated DeltaNet
        if fused:
            gemm("qkv(linear)", Ll, h, 2 * qkw + lw)
        else:
            for nm, w in (("q(linear)", qkw), ("k(linear)", qkw), ("v(linear)", lw)):
                gemm(nm, Ll, h, w)
        # decay and beta gates: Kimi Delta Attention's beta per head and decay bottleneck from
        # hidden, then the bottleneck up to every key channel; Gated DeltaNet's per head
        down, rank = model.linear_gate_widths(tp)
        gemm("decay+beta(linear)", Ll, h, down)
        if rank:
            gemm("decay up(linear)", Ll, rank, lw)
        state = ba * lh * d * d * LINEAR_STATE_BYTES_PER_ELEM
        per_tok = 10.0 * lh * d * d + (4.0 * 64 * lh * d if phase == "prefill" else 0.0)
        kv = state * (1.0 if phase == "prefill" else 2.0)
        ops.append(_new_op("linear attention", "attention_prefill" if phase == "prefill" else "attention", Ll,
                      zero, one * 4 * ma * lw * ACT_BYTES, one * kv, one * ma * per_tok, ma, zero, one))
        gemm("o(linear)", Ll, lw, h)
        if model.attn_output_gate:
            gemm("gate(linear out)", Ll, h, lw)
    if model.attn_output_gate and La:
        # sigmoid(gate) x attention output (linear layers gate inside their output norm)
        aw = model.attn_out_dim / tp
        ops.append(_new_op("gate multiply", "elementwise", La, zero, 3 * ma * aw * ACT_BYTES, zero, 5 * ma * aw,
                      ma, zero, one))
    # norms, residual adds, rope, cache writes: activation traffic only
    ops.append(_new_op("norms+residual", "elementwise", L, zero, 8 * ma * h * ACT_BYTES, zero, 10 * ma * h,
                  ma, zero, zero))
    if model.attn_residual_block:
        # attention residuals: before attention and before the MLP, a norm and a learned query
        # mix earlier blocks' outputs (aiconfigurator's kimi_k3.py: 2 per layer, 4 x hidden in,
        # 2 x hidden out)
        ops.append(_new_op("attention residuals", "elementwise", 2 * L, zero, 6 * ma * h * ACT_BYTES, zero,
                      10 * ma * h, ma, zero, one))

    # ---------------- MLP / MoE blocks -------------------------------------------------------
    nd = model.n_dense_layers
    if nd:
        f = _shard(model.ffn_hidden, tp, "tp")
        if fused:
            gemm("gate_up", nd, h, 2 * f)
        else:
            gemm("gate", nd, h, f)
            gemm("up", nd, h, f)
        gemm("down", nd, f, h)
        ops.append(_new_op("act(silu*up)", "elementwise", nd, zero, 3 * ma * f * ACT_BYTES, zero, 4 * ma * f,
                      ma, zero, zero))
    nmoe = model.n_moe_layers
    touched_local = zero
    if nmoe:
        E, k = model.n_experts, model.experts_per_token
        e_local = _shard(E, ep, "ep")
        ef = model.expert_ffn_hidden / expert_tp
        gemm("router", nmoe, h, E, ref_kernels=one, bytes_per_param=head_bytes(wb))  # stored unquantized
        if plan.expert_compute == "all":
            n_exp = e_local * one
            rows_per_exp = m  # every token through every expert
        else:
            n_exp = expected_distinct_experts(m, E, k) / ep
            routed = m * k / ep
            rows_per_exp = np.where(n_exp > 0, routed / np.maximum(n_exp, 1e-12), 0.0)[()]
        touched_local = n_exp
        hx = model.moe_latent_dim or h  # LatentMoE: experts run in the latent
        if model.moe_latent_dim:
            gemm("latent down", nmoe, h, hx / tp)
            gemm("latent up", nmoe, hx / tp, h)
            if model.moe_latent_norm:
                ops.append(_new_op("latent norm", "elementwise", nmoe, zero, 2 * ma * hx * ACT_BYTES, zero,
                              4 * ma * hx, ma, zero, one))
        w = n_exp * 3.0 * hx * ef * eb
        rows_total = n_exp * rows_per_exp
        flop = 2.0 * rows_total * 3.0 * hx * ef
        act = rows_total * (2 * hx + 3 * ef) * ACT_BYTES
        gemms_per_expert = 2.0 if fused else 3.0
        if plan.expert_loop:
            # experts that got >= 2 tokens run tiled GEMMs, the others GEMVs (binomial routing)
            q = k / E
            p0 = (1 - q) ** m
            p1 = m * q * (1 - q) ** np.maximum(m - 1, 0)
            n_gemm = gemms_per_expert * E * np.clip(1 - p0 - p1, 0, 1) / ep
        else:
            n_gemm = gemms_per_expert * np.where(rows_per_exp >= 1.5, 1.0, 0.0)[()] * one
        ops.append(_new_op("experts", "gemm", nmoe, w, act, zero, flop, rows_per_exp, n_gemm, zero, tile_always=True))
        if model.n_shared_experts:
            # shared experts are tensor-parallel over the attention group, whatever the routed
            # experts' split
            sf = _shard(model.n_shared_experts * model.expert_ffn_hidden, tp, "tp")
            gemm("shared_expert", nmoe, h, 3 * sf, n_gemm=2.0, ref_kernels=2.0 * one,
                 bytes_per_param=model.shared_bytes_per_param(wb, eb))
    # ---------------- embedding and lm head --------------------------------------------------
    if model.vocab:
        v = _shard(model.vocab, tp, "tp")
        ops.append(_new_op("embedding", "elementwise", 1, zero, ma * h * ACT_BYTES * 2, zero, zero, ma, zero, zero))
        head_rows = ba if phase == "prefill" else ma
        gemm("lm_head", 1, h, v, rows=head_rows, ref_kernels=one, bytes_per_param=head_bytes(wb))
        ops.append(_new_op("logits+sample", "elementwise", 1, zero, head_rows * v * ACT_BYTES, zero, 2 * head_rows * v,
                      head_rows, zero, zero))

    return _assign_kernels(ops, model, plan, m, touched_local)


def _assign_kernels(ops: list[Op], model: ModelSpec, plan: ExecutionPlan, m, touched_local) -> list[Op]:
    """Set each op's kernel count for the plan's fusion level.

    ``unfused``/``fused_qkv_gateup`` follow the reference PyTorch implementation (GEMMs with
    their split-K extras, glue kernels on the norms op); ``engine`` uses a serving engine's fused
    kernels; ``super`` divides the engine count by ``fusion_factor``.
    """
    L, nd = model.n_layers, model.n_dense_layers
    out = []
    engine = plan.engine_fused
    zero = 0.0 * m
    filled: dict[float, Any] = {}  # np.full_like(m, x), one array per value (ops share read-only arrays)

    def full(x: float):
        a = filled.get(x)
        if a is None:
            a = filled[x] = np.full_like(m, x)
        return a

    maxima: dict[int, tuple[Any, float]] = {}  # (n_gemm, its largest) by the array's id (GEMMs share one)

    def gemm_count(n_gemm: Any) -> float:
        kept = maxima.get(id(n_gemm))
        if kept is None or kept[0] is not n_gemm:
            kept = maxima[id(n_gemm)] = (n_gemm, float(n_gemm.max()))
        return kept[1]

    for op in ops:
        kern = op.kernels
        dropped = op.timing_extra_kernels
        if engine or op.name == "experts":
            dropped = zero
        if op.name == "experts":
            if engine:
                kern = full(float(ENGINE_MOE))
            elif plan.expert_compute == "touched":
                kern = REF_MOE_ROUTER + REF_MOE_PER_TOUCHED_EXPERT * touched_local
            else:
                kern = full(float(REF_MOE_ALL))
        elif op.name == "norms+residual":
            # glue kernels of every layer are carried by this op (per layer)
            if engine:
                # fused add+RMSNorm x2 and fused rope+cache write; SiLU-and-mul in dense layers
                glue = ENGINE_GLUE + ENGINE_ACT * nd / L + (ENGINE_MLA_EXTRA if model.attention == "mla" else 0)
                kern = full(float(glue))
            else:
                extra = REF_MLA_EXTRA if model.attention == "mla" else 0
                # every layer's MLP norm + residual; dense layers' activation; MoE routing is the experts op
                kern = full((REF_ATTN_GLUE + extra) + REF_MLP_NORM_RESIDUAL + REF_MLP_ACT * nd / L)
        elif op.name in ("act(silu*up)", "embedding", "logits+sample"):
            kern = zero
        elif engine and op.kind == "gemm":
            # engines pick split-K-free kernels; the router is fused into the MoE kernels, a
            # linear layer's output gate into its q/k/v GEMM
            fused_away = op.name in ("router", "gate(linear out)")
            kern = full(0.0 if fused_away else gemm_count(op.n_gemm))
        elif engine and op.kind.startswith("attention"):
            kern = zero + (ENGINE_LINEAR_ATTN if op.name == "linear attention" else 1.0)
        out.append(_with_kernels(op, kern, dropped))
    return out


def _with_kernels(op: Op, kernels: Any, timing_extra_kernels: Any) -> Op:
    """``dataclasses.replace(op, kernels=..., timing_extra_kernels=...)`` without its per-field
    ``__init__`` round trip (an :class:`Op` has no ``__post_init__``): a step builds ~30 of them."""
    new = object.__new__(Op)
    fields = new.__dict__
    fields.update(op.__dict__)
    fields["kernels"], fields["timing_extra_kernels"] = kernels, timing_extra_kernels
    return new


def step_kernels(ops: list[Op], model: ModelSpec, plan: ExecutionPlan, phase: str = "decode", counted: Any = None):
    """Kernel launches of one step under the plan (before launch mode): sum over ops plus the
    per-step extras (embedding, final norm, sampling); ``super`` divides by ``fusion_factor``.
    ``counted``: the ops' counted kernels (:func:`counted_kernels`' first) where the caller has them."""
    total = _sum_counted(ops, [op.kernels for op in ops]) if counted is None else counted
    engine = plan.engine_fused
    # per-step extras: embedding, lm head (counted as an op), sampling, final norm; only the
    # final norm without a vocabulary
    extra = (ENGINE_STEP_EXTRA if engine else REF_STEP_EXTRA) - 1 if model.vocab else 1
    total = total + extra
    if plan.fusion == "super":
        total = total / plan.fusion_factor
    return total


def _sum_counted(ops: list[Op], values: list[Any]) -> Any:
    """``sum(op.count * x for op, x in zip(ops, values))``, added in operator order (the same
    value), the products in one multiplication where every value is a float array of one shape."""
    try:
        a = np.array(values) if values and stackable(values[0]) else None
    except (TypeError, ValueError):  # values of several shapes
        a = None
    if a is None or a.dtype != np.float64 or not any(isinstance(x, (np.ndarray, np.generic)) for x in values):
        return sum(op.count * x for op, x in zip(ops, values))  # plain numbers stay plain
    return sum_rows(a * np.array([op.count for op in ops], dtype=float).reshape((-1,) + (1,) * (a.ndim - 1)))


#: Largest array [elements] the step stacks one per operator into one array (:func:`sum_rows`,
#: :func:`tokenomics.perf.roofline.op_times`): below it numpy's fixed cost per call dominates and
#: one call over the stack saves it; above it the stacked copies cost more than they save (the
#: values are the same either way).
STACK_MAX_ELEMS = 512


def stackable(x: Any) -> bool:
    """Whether the per-operator arrays shaped like ``x`` are small enough to stack (:data:`STACK_MAX_ELEMS`)."""
    return np.size(x) <= STACK_MAX_ELEMS


def sum_rows(a: np.ndarray) -> Any:
    """``0.0 + a[0] + a[1] + ...`` over the first axis, added in that order (the same value to
    the bit, signed zeros included): numpy sums along an axis that is not the fastest in memory
    one element after another (pairwise summation only runs along the fastest one), so where
    each row holds two elements or more one ``np.add.reduce`` over the C-ordered rows does it; a
    loop otherwise."""
    flat = np.ascontiguousarray(a).reshape(a.shape[0], -1)  # rows in C order: the first axis the slowest
    if flat.shape[1] >= 2:
        return np.add.reduce(flat, axis=0).reshape(a.shape[1:]) + 0.0
    total = 0.0 + a[0]
    for row in a[1:]:
        total = total + row
    return total


def counted_kernels(ops: list[Op]) -> tuple[Any, Any] | None:
    """``(sum(op.count * op.kernels), sum(op.count * op.timing_extra_kernels))`` in operator order
    (:func:`_sum_counted`'s values) from one stacked array, where every one of them is a float
    array of one shape (one axis or more) small enough to stack; else None."""
    values = [op.kernels for op in ops] + [op.timing_extra_kernels for op in ops]
    x0 = values[0] if ops else None
    if type(x0) is not np.ndarray or not x0.ndim or not stackable(x0):
        return None
    for x in values:
        if type(x) is not np.ndarray or x.shape != x0.shape or x.dtype != np.float64:
            return None
    n = len(ops)
    a = np.array(values).reshape((2, n) + x0.shape) * np.array(
        [op.count for op in ops], dtype=float).reshape((1, n) + (1,) * x0.ndim)
    both = sum_rows(a.swapaxes(0, 1))  # over the operators, in their order
    return both[0], both[1]


def timed_kernels(ops: list[Op], model: ModelSpec, plan: ExecutionPlan, phase: str = "decode", reported: Any = None,
                  counted_extra: Any = None):
    """Kernel boundaries the step *timing* charges: :func:`step_kernels` plus the split-K
    reduction kernels a reference GEMM launches at one row but drops at more rows.

    cuBLAS gives up split-K only when the plain kernel is at least as fast, so charging the
    one-row count keeps the step time non-decreasing in batch, context and prompt (a dropped
    kernel would otherwise make a bigger batch faster); the reported kernel count stays
    :func:`step_kernels` (what a profiler counts; ``reported``: its value where the caller has it).
    """
    extra = _sum_counted(ops, [op.timing_extra_kernels for op in ops]) if counted_extra is None else counted_extra
    if plan.fusion == "super":
        extra = extra / plan.fusion_factor
    return (step_kernels(ops, model, plan, phase) if reported is None else reported) + extra
