"""One decode step or one prefill on one accelerator (or one tensor/expert-parallel shard).

The public functions take names or spec objects and numpy-broadcastable ``batch``,
``context_tok`` and ``tokens_per_step``, so a sweep of a million configurations is one call.

Step time by launch mode (``plan.launch``):

* ``graph``: device time = sum over operators of max(memory time, compute time) + tiled-GEMM
  costs + ``graph_kernel_s`` per kernel;
* ``eager``: max(device time, host time) with host time = kernels x ``eager_kernel_s``: at
  small batch the host cannot launch kernels as fast as the GPU runs them (host-bound);
* ``megakernel``: one launch; no kernel boundaries. Each operator overlaps its own memory and
  compute; prefetching the next layer's weights into on-chip memory while the current layer
  computes adds overlap across operators, in proportion to the share of a layer's weights the
  on-chip memory holds (full overlap reaches max(sum of memory, sum of compute)); a barrier of
  ``megakernel_layer_s`` per layer.

MoE ``touched`` expert loops add one host synchronization per MoE layer.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .. import _validate as v
from .._display import Display
from ..catalog import accelerator as _accelerator
from ..catalog import model as _model
from ..errors import DoesNotFitError, ValidationError
from ..specs import (UNQUANTIZED_GEMMS, Accelerator, ExecutionPlan, ModelSpec, component_precisions, head_precision,
                     plan as _plan, precision_bytes)
from .memory import max_batch as _max_batch
from .memory import expert_tp_ways, resident_bytes, usable_hbm_bytes
from .parallel import check_layout
from .ops import (build_ops, counted_kernels, expected_distinct_experts, stackable, step_kernels, sum_rows,
                  timed_kernels)
from .profile import Profile, gemm_size_curve, load_profile
from .roofline import OpTime, op_times
from .kernels import (attention_unit_s, gemm_peak_flop_per_s, mla_kv_read_frac, moe_fixed_s, moe_gemm_ratio,
                      moe_stream_frac, tensor_path)


def _resolve(hardware, model, execution):
    hw = hardware if isinstance(hardware, Accelerator) else _accelerator(str(hardware))
    m = model if isinstance(model, ModelSpec) else _model(str(model))
    p = _plan(execution)
    return hw, m, p


def element_at(a, shape: tuple, index: int) -> float:
    """Element ``index`` of ``a`` broadcast to ``shape`` and flattened (``a`` itself for a scalar
    ``shape``): one configuration of a sweep's result arrays."""
    a = np.asarray(a, dtype=float)
    return float(np.broadcast_to(a, shape).ravel()[index]) if shape else float(a)


@dataclass(frozen=True, repr=False)
class StepResult(Display):
    """Result of :func:`decode_step` or :func:`prefill`. Array fields broadcast together.

    Attributes
    ----------
    step_time_s : ndarray
        Wall time of the step [s] (for prefill: TTFT).
    tok_per_s_per_replica : ndarray
        Tokens per second of the whole batch on this shard group [tokens/s].
    tok_per_s_per_user : ndarray
        Tokens per second one sequence sees [tokens/s].
    tok_per_s_per_chip : ndarray
        ``tok_per_s_per_replica`` / chips in the shard group [tokens/s].
    gpu_time_s, host_time_s, mem_time_s, compute_time_s, launch_time_s : ndarray
        Components [s]: device time, host time, summed per-op memory and compute times, and
        the launch/kernel-boundary costs inside the device time.
    n_kernels : ndarray
        Kernel launches per step.
    hbm_bytes, flop : ndarray
        Bytes moved and FLOPs per step per chip [B], [FLOP].
    weight_bytes, kv_bytes : ndarray
        Resident weights and KV cache per chip [B].
    hbm_util_frac, flop_util_frac : ndarray
        Achieved bytes/s and FLOP/s over datasheet figures during the step [fraction].
    bound : ndarray of str
        ``memory``, ``compute``, ``launch`` or ``host``.
    fits : ndarray of bool
        Whether weights plus KV fit in usable memory.
    """

    _display_columns = ("phase", "batch", "context_tok", "prompt_tok", "step_time_s", "tok_per_s_per_user",
                        "tok_per_s_per_replica", "tok_per_s_per_chip", "bound", "hbm_util_frac", "fits")

    hardware: Accelerator
    model: ModelSpec
    plan: ExecutionPlan
    profile: Profile
    phase: str
    batch: np.ndarray
    context_tok: np.ndarray
    tokens_per_step: np.ndarray
    step_time_s: np.ndarray
    gpu_time_s: np.ndarray
    host_time_s: np.ndarray
    mem_time_s: np.ndarray
    compute_time_s: np.ndarray
    launch_time_s: np.ndarray
    n_kernels: np.ndarray
    hbm_bytes: np.ndarray
    flop: np.ndarray
    weight_bytes: np.ndarray
    kv_bytes: np.ndarray
    tok_per_s_per_replica: np.ndarray
    tok_per_s_per_user: np.ndarray
    tok_per_s_per_chip: np.ndarray
    hbm_util_frac: np.ndarray
    flop_util_frac: np.ndarray
    bound: np.ndarray
    fits: np.ndarray
    n_chips: int = 1
    weight_precision: str = "bf16"
    kv_precision: str = "bf16"
    op_times: tuple[OpTime, ...] = field(default=(), repr=False, compare=False)

    @property
    def tpot_s(self) -> np.ndarray:
        """Time per output token of one user [s]."""
        return 1.0 / self.tok_per_s_per_user

    @property
    def ttft_s(self) -> np.ndarray:
        """Time to first token (prefill results) [s]."""
        return self.step_time_s

    def to_frame(self):
        """One row per configuration (pandas DataFrame)."""
        import pandas as pd

        shape = np.broadcast(self.step_time_s, self.batch, self.context_tok, self.tokens_per_step).shape
        cols: dict[str, Any] = {
            "hardware": self.hardware.name,
            "model": self.model.name,
            "execution": self.plan.name,
            "phase": self.phase,
            "n_chips": self.n_chips,
            "weight_precision": self.weight_precision,
            "kv_precision": self.kv_precision,
        }
        arrays = {
            "batch": self.batch, "context_tok": self.context_tok, "tokens_per_step": self.tokens_per_step,
            "step_time_s": self.step_time_s, "tpot_s": 1.0 / np.asarray(self.tok_per_s_per_user),
            "tok_per_s_per_user": self.tok_per_s_per_user,
            "tok_per_s_per_replica": self.tok_per_s_per_replica, "tok_per_s_per_chip": self.tok_per_s_per_chip,
            "bound": self.bound, "gpu_time_s": self.gpu_time_s, "host_time_s": self.host_time_s,
            "mem_time_s": self.mem_time_s, "compute_time_s": self.compute_time_s,
            "launch_time_s": self.launch_time_s, "n_kernels": self.n_kernels,
            "hbm_bytes": self.hbm_bytes, "flop": self.flop, "weight_bytes": self.weight_bytes,
            "kv_bytes": self.kv_bytes, "hbm_util_frac": self.hbm_util_frac,
            "flop_util_frac": self.flop_util_frac, "fits": self.fits,
        }
        data = {k: np.broadcast_to(np.asarray(a), shape).ravel() for k, a in arrays.items()}
        n = int(np.prod(shape)) if shape else 1
        df = pd.DataFrame({**{k: [val] * n for k, val in cols.items()}, **data})
        if self.phase == "prefill":
            df = df.rename(columns={"context_tok": "prompt_tok"})
        return df

    def breakdown(self, index: int = 0):
        """Per-operator DataFrame for one configuration (the ``index``-th, flattened).

        Columns: op, kind, time_s, mem_s, compute_s, tile_s, bytes, flop, kernels, bound, share.
        ``bound`` is ``memory`` or ``compute``, ``blocks`` for a decode attention whose
        (sequence, KV head) blocks outweigh its read (:func:`attention_unit_s`), or ``latency``
        for routed experts whose fused layers' fixed latency (:func:`moe_fixed_s`) outweighs their
        reads and FLOPs. A final
        ``launch`` row holds the kernel-boundary (graph) or host (eager) overhead.
        """
        import pandas as pd

        shape = np.broadcast(self.step_time_s, self.batch, self.context_tok, self.tokens_per_step).shape

        def pick(a):
            return element_at(a, shape, index)

        rows = []
        for t in self.op_times:
            mem, comp, blocks = pick(t.mem_s), pick(t.compute_s), pick(t.blocks_s)
            bound = "memory" if mem >= comp else ("blocks" if blocks >= comp else "compute")
            if pick(t.fixed_s) > max(mem, comp):
                bound = "latency"
            rows.append({"op": t.name, "kind": t.kind, "time_s": pick(t.time_s), "mem_s": mem,
                         "compute_s": comp, "tile_s": pick(t.tile_s), "bytes": pick(t.bytes),
                         "flop": pick(t.flop), "kernels": pick(t.kernels), "bound": bound})
        step = pick(self.step_time_s)
        rest = step - sum(r["time_s"] for r in rows)
        kind = "host" if self.plan.launch == "eager" and pick(self.host_time_s) > pick(self.gpu_time_s) else "launch"
        rows.append({"op": "launch/host overhead", "kind": kind, "time_s": rest, "mem_s": 0.0,
                     "compute_s": 0.0, "tile_s": 0.0, "bytes": 0.0, "flop": 0.0,
                     "kernels": pick(self.n_kernels), "bound": kind})
        df = pd.DataFrame(rows)
        df["share"] = df["time_s"] / step
        return df


#: Largest batch [sequences] and context [tokens] a step is computed for: far beyond any memory,
#: below where the operation counts overflow floating point.
MAX_SHAPE = 1e12


def _validate_shape_args(batch, context_tok, tokens_per_step, tp, ep, attn_dp=1):
    v.count(batch, "batch", maximum=MAX_SHAPE)
    v.count(context_tok, "context_tok", minimum=0, maximum=MAX_SHAPE)
    v.count(tokens_per_step, "tokens_per_step", maximum=MAX_SHAPE)
    v.count(tp, "tp")
    v.count(ep, "ep")
    v.count(attn_dp, "attn_dp")


def _older_kernels(times, ops, hw, m, wprec, eprec, kernel_release, moe_tokens, prof):
    """Op times with an older release's kernels.

    TensorRT-LLM (:mod:`.kernel_versions`): dense GEMMs add the release's penalty per GEMM call
    at the op's rows; the routed experts add the fused-MoE penalty per layer at the tokens one
    MoE layer takes per chip (``moe_tokens``). The modelled time a ratio scales includes the
    calls' kernel boundaries. SGLang and vLLM releases older than the serving fit's run every
    op's kernels of a mixture-of-experts model slower by
    :func:`~tokenomics.perf.engines.maturity_slowdown` (fitted on DeepSeek-R1, whose MLA and
    fine-grained MoE kernels matured through 2025; no old release was measured on a dense
    model, so a dense model keeps the newest kernels).
    """
    from .engines import maturity_slowdown
    from .kernel_versions import kernel_penalty, table_format

    engine, version = kernel_release
    slow = maturity_slowdown(engine, version) if m.is_moe else 1.0
    if slow > 1.0:
        return [_with_time(x, x.time_s * slow) for x in times]
    native = str(m.native_precision)
    checkpoint = wprec == native and (not m.is_moe or eprec == native)
    out = []
    for x, op in zip(times, ops):
        if x.kind != "gemm" or op.name in UNQUANTIZED_GEMMS:
            out.append(x)
            continue
        experts = op.name == "experts"
        prec = eprec if experts or op.name == "shared_expert" else wprec
        pen = kernel_penalty(hw.name, engine, version, "moe_experts" if experts else "gemm",
                             table_format(prec, native, checkpoint))
        if pen is None:
            out.append(x)
            continue
        calls = op.count if experts else op.count * op.n_gemm
        rows = moe_tokens if experts else op.rows
        extra = pen.extra_s(rows, x.time_s + x.kernels * prof.graph_kernel_s, calls)
        out.append(_with_time(x, x.time_s + extra))
    return out


def _op_totals(times: list[OpTime]) -> tuple:
    """Sums over the operators of their time, memory, compute and tile time, bytes and FLOPs, and
    of their own time (without the tile cost) where memory-bound and where compute-bound (by the
    larger of the two times): ``(time, mem, compute, tile, bytes, flop, mem_bound, compute_bound)``.

    Added in operator order, one at a time (:func:`~tokenomics.perf.ops.sum_rows`: each sum is a
    loop's to the bit), all eight at once where every field of every operator has one shape (from
    :func:`~tokenomics.perf.roofline.op_times`' ``stacked`` where the times are its own).
    """
    a = getattr(times, "stacked", None)
    if a is not None:
        a = a[:, [2, 0, 1, 3, 4, 5]]
    else:
        fields = [(x.time_s, x.mem_s, x.compute_s, x.tile_s, x.bytes, x.flop) for x in times]
        try:
            a = np.array(fields) if fields and stackable(fields[0][0]) else None
        except (TypeError, ValueError):  # fields of several shapes: the loop below
            a = None
    if a is not None and a.dtype == np.float64 and a.shape[:2] == (len(times), 6):
        own = a[:, 0] - a[:, 3]  # finite: the inputs are validated
        is_mem = a[:, 1] >= a[:, 2]
        a = np.concatenate([a, (own * is_mem)[:, None], (own * ~is_mem)[:, None]], axis=1)
        return tuple(sum_rows(a))
    op_sum = mem_sum = comp_sum = tile_sum = hbm = flop = mem_bound_time = comp_bound_time = 0.0
    for x in times:
        op_sum = op_sum + x.time_s
        mem_sum = mem_sum + x.mem_s
        comp_sum = comp_sum + x.compute_s
        tile_sum = tile_sum + x.tile_s
        hbm = hbm + x.bytes
        flop = flop + x.flop
        own = x.time_s - x.tile_s
        is_mem = x.mem_s >= x.compute_s
        mem_bound_time = mem_bound_time + own * is_mem
        comp_bound_time = comp_bound_time + own * ~is_mem
    return op_sum, mem_sum, comp_sum, tile_sum, hbm, flop, mem_bound_time, comp_bound_time


def _with_time(x: OpTime, time_s: Any) -> OpTime:
    """``dataclasses.replace(x, time_s=time_s)`` without its per-field ``__init__`` round trip (an
    :class:`OpTime` has no ``__post_init__``)."""
    new = object.__new__(OpTime)
    fields = new.__dict__
    fields.update(x.__dict__)
    fields["time_s"] = time_s
    return new


def _does_not_fit_message(hw, m, wbytes, kvbytes_per_seq, usable, batch, ctx, wprec, n_chips):
    from ..units import fmt_bytes

    have = usable
    need_w = float(np.max(wbytes))
    free = have - need_w
    if free <= 0:
        return (f"{m.name} at {wprec} needs {fmt_bytes(need_w)} of weights per chip; {n_chips} x {hw.name} "
                f"hold {fmt_bytes(have)} usable each: no room for weights, let alone KV. "
                f"Use more chips (tp/ep), or a smaller precision")
    bmax = int(np.floor(free / float(np.max(kvbytes_per_seq)))) if np.max(kvbytes_per_seq) > 0 else 0
    if bmax == 0:
        return (f"{m.name} at {wprec}: not one sequence of {int(np.max(ctx)):,} tokens fits on {hw.name} "
                f"({fmt_bytes(float(np.max(kvbytes_per_seq)))} of KV each, {fmt_bytes(free)} left after "
                f"{fmt_bytes(need_w)} of weights per chip); use a shorter context, more chips or a smaller "
                "KV precision")
    return (f"{m.name} at {wprec} needs {fmt_bytes(need_w)} of weights per chip; {hw.name} holds "
            f"{fmt_bytes(have)} usable, leaving {fmt_bytes(free)} for KV: batch <= {bmax} at "
            f"{int(np.max(ctx))} context (asked for batch {int(np.max(batch))})")


def _launches(ops, m: ModelSpec, p: ExecutionPlan, phase: str, b):
    """``(reported, timed)`` kernel launches of a step of ``ops``: what a profiler counts
    (:attr:`StepResult.n_kernels`; a megakernel is one) and the kernel boundaries the timing
    charges (:func:`~tokenomics.perf.ops.timed_kernels`; unused by a megakernel)."""
    if p.launch == "megakernel":
        return 1.0 + 0 * b, 1.0 + 0 * b
    if p.kernels_per_step is not None:
        kernels = np.asarray(float(p.kernels_per_step)) + 0 * b
        return kernels, kernels
    counted = counted_kernels(ops) or (None, None)  # both sums in one pass where they stack
    reported = step_kernels(ops, m, p, phase, counted[0])
    return reported, timed_kernels(ops, m, p, phase, reported, counted[1])  # timed: never falls as batch grows


def decode_kernels(hardware, model, execution, *, batch=1, context_tok=1024, tokens_per_step=1,
                   weight_precision: str | None = None, kv_precision: str = "bf16", tp: int = 1, ep: int = 1,
                   attn_dp: int = 1, expert_precision: str | None = None) -> float:
    """Kernel launches of one decode step: the largest of :func:`decode_step`'s ``n_kernels`` at
    the same arguments, from the operator inventory alone (nothing timed) [kernels]."""
    hw, m, p = _resolve(hardware, model, execution)
    _validate_shape_args(batch, context_tok, tokens_per_step, tp, ep, attn_dp)
    check_layout(m, tp, ep)
    wprec, eprec = component_precisions(m, weight_precision, expert_precision)
    b = np.asarray(batch, dtype=float)[()]
    ops = _step_ops(m, p, wprec, eprec, kv_precision, b=b, ctx=np.asarray(context_tok, dtype=float)[()],
                    t=np.asarray(tokens_per_step, dtype=float)[()], phase="decode", tp=tp, ep=ep, attn_dp=attn_dp)
    return float(np.max(_launches(ops, m, p, "decode", b)[0]))


def _step_ops(m: ModelSpec, p: ExecutionPlan, wprec: str, eprec: str, kv_precision: str, *, b, ctx, t, phase: str,
              tp: int, ep: int, attn_dp: int) -> list:
    """The operator inventory of a step (:func:`~tokenomics.perf.ops.build_ops`) at the weights',
    experts' and KV cache's precisions."""
    return build_ops(m, p, batch=b, context_tok=ctx, tokens_per_step=t, phase=phase,
                     weight_bytes_per_param=precision_bytes(wprec), kv_bytes_per_elem=precision_bytes(kv_precision),
                     tp=tp, ep=ep, attn_dp=attn_dp, expert_bytes_per_param=precision_bytes(eprec))


def _run(hardware, model, execution, *, batch, context_tok, tokens_per_step, phase, weight_precision,
         kv_precision, profile, tp, ep, hbm_bytes_per_s, accepted_tok_per_step, on_oom, attn_dp=1,
         expert_precision=None, kernel_release=None) -> StepResult:
    hw, m, p = _resolve(hardware, model, execution)
    if phase == "prefill":  # named as the caller named it
        v.count(context_tok, "prompt_tok")
    _validate_shape_args(batch, context_tok, tokens_per_step, tp, ep, attn_dp)
    check_layout(m, tp, ep)  # the heads, KV heads and experts a layout must divide
    if hbm_bytes_per_s is not None:
        v.positive(hbm_bytes_per_s, "hbm_bytes_per_s")
    if accepted_tok_per_step is not None:
        v.positive(accepted_tok_per_step, "accepted_tok_per_step")
        over = np.asarray(accepted_tok_per_step, dtype=float) > np.asarray(tokens_per_step, dtype=float)
        if np.any(over):
            raise ValidationError(f"accepted_tok_per_step cannot exceed tokens_per_step (tokens verified per "
                                  f"step), got {np.max(accepted_tok_per_step):g} > {np.min(tokens_per_step):g}")
    v.one_of(on_oom, "on_oom", ("raise", "mask", "ignore"))
    wprec, eprec = component_precisions(m, weight_precision, expert_precision)
    wb = precision_bytes(wprec)
    prof = load_profile(profile, hw.name)
    b = np.asarray(batch, dtype=float)[()]  # 0-d -> numpy scalar: fast scalar arithmetic
    ctx = np.asarray(context_tok, dtype=float)[()]
    t = np.asarray(tokens_per_step, dtype=float)[()] if phase == "decode" else np.float64(1.0)
    n_chips = int(max(tp * attn_dp, ep))

    ops = _step_ops(m, p, wprec, eprec, kv_precision, b=b, ctx=ctx, t=t, phase=phase, tp=tp, ep=ep, attn_dp=attn_dp)
    # GEMMs compute on the tensor path of their own weights' precision: the routed experts on the
    # experts' (the FLOPs that dominate an MoE, and the utilization's datasheet peak), every other
    # GEMM on the non-expert weights' (gpt-oss's BF16 attention beside MXFP4 experts)
    gemm_prec = eprec if m.is_moe else wprec
    peak, datasheet_peak = gemm_peak_flop_per_s(hw, gemm_prec)
    dense_peak = peak if gemm_prec == wprec else gemm_peak_flop_per_s(hw, wprec)[0]
    # ... and the routers and output head on the path of their unquantized weights
    hprec = head_precision(wprec)
    head_peak = None if tensor_path(hw, hprec) == tensor_path(hw, wprec) else gemm_peak_flop_per_s(hw, hprec)[0]
    # ... and small dense GEMMs gain less from a fast tensor path than large ones
    size_curve = gemm_size_curve(hw.name, tensor_path(hw, wprec))[:2]
    # the routed experts' grouped GEMMs at their measured ceiling
    expert_ceiling = 1.0
    if m.is_moe:  # at the width of the expert slice one chip multiplies by (build_ops' split)
        expert_ceiling = moe_gemm_ratio(hw.name, eprec, m.expert_ffn_hidden / expert_tp_ways(tp * attn_dp, ep))[0]
    mega = p.launch == "megakernel"
    # ... streaming their weights at the fused MoE kernels' measured rate (a megakernel streams
    # them with its own DMA pipeline)
    expert_stream = moe_stream_frac(hw.name, eprec)[0] if m.is_moe and not mega else 1.0
    # the GEMV -> tiled-GEMM cliff is a property of the reference cuBLAS path; engine kernels and
    # megakernels use tile shapes chosen for small batches
    tiles = p.fusion in ("unfused", "fused_qkv_gateup") and not mega
    # an MLA decode reads its latent cache at the MLA kernels' measured rate
    kv_frac = mla_kv_read_frac(hw.name, kv_precision) if m.attention == "mla" and phase == "decode" else 1.0
    # ... and an engine's decode-attention kernel pays its measured cost per (sequence, KV head)
    # block (the reference PyTorch kernel of the graph and eager plans shows none in the H200's
    # measured steps: batch 256-512 at 1k context within 0-5 % without it)
    unit_s = attention_unit_s(hw.name)[0] if phase == "decode" and p.engine_fused else 0.0
    # ... and each fused MoE layer call its measured fixed latency (the reference plans' expert
    # loop and a megakernel run no fused MoE kernel)
    expert_fixed = moe_fixed_s(hw.name, eprec)[0] if m.is_moe and p.engine_fused and not mega else 0.0
    times = op_times(ops, hw, prof, peak, hbm_bytes_per_s=hbm_bytes_per_s, tiles=tiles,
                     expert_ceiling_frac=expert_ceiling, expert_stream_frac=expert_stream, kv_read_frac=kv_frac,
                     gemm_size_curve=size_curve, attn_unit_s=unit_s, expert_fixed_s=expert_fixed,
                     dense_peak_flop_per_s=dense_peak, head_peak_flop_per_s=head_peak)
    if kernel_release is not None:
        moe_tokens = b * (t if phase == "decode" else ctx) / attn_dp  # tokens one MoE layer takes per chip
        times = _older_kernels(times, ops, hw, m, wprec, eprec, kernel_release, moe_tokens, prof)

    kernels, k_time = _launches(ops, m, p, phase, b)
    # every per-step total in one pass over the operators; an operator's own time (without its
    # tile cost) counts as memory- or compute-bound by the larger of its two times
    op_sum, mem_sum, comp_sum, tile_sum, hbm, flop, mem_bound_time, comp_bound_time = _op_totals(times)
    syncs = 0.0
    if m.n_moe_layers and p.expert_loop and not mega:
        # the reference expert loop syncs with the host once per touched expert (nonzero)
        syncs = m.n_moe_layers * expected_distinct_experts(b * t, m.n_experts, m.experts_per_token) / ep

    if mega:
        weights_layer = sum(float(np.max(o.weight_bytes)) * o.count for o in ops) / m.n_layers
        sram = hw.sram_bytes if np.isfinite(hw.sram_bytes) else 0.0
        overlap = min(1.0, sram / weights_layer) if weights_layer > 0 else 1.0
        launch = m.n_layers * prof.megakernel_layer_s + prof.graph_kernel_s
        # each operator overlaps its own memory and compute as a kernel would; prefetching the
        # next layer's weights on-chip adds overlap across operators, up to the perfect-overlap
        # bound max(sum mem, sum compute), in proportion to how much of a layer fits on-chip
        per_op = sum(np.maximum(x.mem_s, x.compute_s) for x in times)
        ideal = np.maximum(mem_sum, comp_sum)
        gpu = per_op - overlap * (per_op - ideal) + launch
        host = np.full_like(gpu, prof.eager_kernel_s)
        step = gpu
    else:
        launch = k_time * prof.graph_kernel_s + tile_sum
        gpu = op_sum + k_time * prof.graph_kernel_s
        if p.launch == "eager":
            # host cost per kernel: the idle rate, lowered toward the busy rate by the weights a
            # kernel streams (the model's active weights per chip at the reference rate over the
            # idle host time). Weights, not the step's work: a cost per kernel that fell with
            # batch, context or prompt would make a bigger step faster (host = kernels x cost is
            # then non-decreasing in the kernel count and constant in batch and context).
            weight_work_s = m.active_params() * wb / tp / prof.eager_ref_bytes_per_s
            busy = np.clip(weight_work_s / np.maximum(k_time * prof.eager_kernel_s, 1e-12), 0.0, 1.0)
            host = k_time * (prof.eager_busy_kernel_s + (prof.eager_kernel_s - prof.eager_busy_kernel_s) * (1 - busy))
            step = np.maximum(gpu, host) + syncs * prof.sync_s
        else:
            host = np.full_like(gpu, prof.eager_kernel_s)  # one graph launch
            step = gpu + syncs * prof.sync_s

    overhead = step - (mem_bound_time + comp_bound_time)
    bound = np.where(mem_bound_time >= comp_bound_time, "memory", "compute")
    bound = np.where(overhead > np.maximum(mem_bound_time, comp_bound_time), "launch", bound)
    if p.launch == "eager":
        bound = np.where(host > gpu, "host", bound)

    mem = resident_bytes(m, batch=b, context_tok=ctx + (t if phase == "decode" else 0), tp=tp, ep=ep,
                         attn_dp=attn_dp, weight_precision=wprec, expert_precision=eprec,
                         kv_precision=kv_precision)
    weights, kv = mem["weights_bytes"], mem["kv_bytes"]
    usable = usable_hbm_bytes(hw, prof)
    fits = (weights + kv) <= usable
    if on_oom == "raise" and not np.all(fits):
        kv_per_seq = kv / np.maximum(np.ceil(b / attn_dp), 1)
        raise DoesNotFitError(_does_not_fit_message(hw, m, weights, kv_per_seq, usable, b, ctx, wprec, n_chips))

    acc = t if accepted_tok_per_step is None else np.asarray(accepted_tok_per_step, dtype=float)
    if phase == "prefill":
        tok = b * ctx / step
        per_user = ctx / step
    else:
        tok = b * acc / step
        per_user = acc / step
    if on_oom == "mask":
        step = np.where(fits, step, np.nan)
        tok = np.where(fits, tok, np.nan)
        per_user = np.where(fits, per_user, np.nan)
    zero = 0 * step
    bw = hw.hbm_bytes_per_s if hbm_bytes_per_s is None else np.asarray(hbm_bytes_per_s)
    v.finite_result(f"{phase} step of {m.name} on {hw.name}", {"step_time_s": step, "tok_per_s_per_replica": tok},
                    {"hbm_bytes_per_s": bw, "peak_flop_per_s": datasheet_peak, "hbm_bytes": hw.hbm_bytes,
                     "batch": b, "context_tok": ctx}, valid=fits if on_oom == "mask" else None)
    return StepResult(
        hardware=hw, model=m, plan=p, profile=prof, phase=phase,
        batch=b, context_tok=ctx, tokens_per_step=t,
        step_time_s=step, gpu_time_s=gpu, host_time_s=host + zero, mem_time_s=mem_sum + zero,
        compute_time_s=comp_sum + zero, launch_time_s=launch + zero, n_kernels=kernels + zero,
        hbm_bytes=hbm + zero, flop=flop + zero, weight_bytes=weights + zero, kv_bytes=kv + zero,
        tok_per_s_per_replica=tok, tok_per_s_per_user=per_user, tok_per_s_per_chip=tok / n_chips,
        hbm_util_frac=hbm / step / (hw.hbm_bytes_per_s if hbm_bytes_per_s is None else np.asarray(hbm_bytes_per_s)),
        flop_util_frac=flop / step / datasheet_peak,
        bound=bound, fits=np.asarray(fits),
        n_chips=n_chips, weight_precision=wprec, kv_precision=kv_precision, op_times=tuple(times),
    )


def decode_step(
    hardware: str | Accelerator,
    model: str | ModelSpec,
    execution: str | ExecutionPlan = "graph",
    *,
    batch=1,
    context_tok=1024,
    tokens_per_step=1,
    weight_precision: str | None = None,
    kv_precision: str = "bf16",
    profile: str | Profile | None = None,
    tp: int = 1,
    ep: int = 1,
    attn_dp: int = 1,
    hbm_bytes_per_s=None,
    accepted_tok_per_step=None,
    on_oom: str = "raise",
    expert_precision: str | None = None,
    kernel_release: tuple[str, str] | None = None,
) -> StepResult:
    """Time one decode step: every sequence of the batch advances ``tokens_per_step`` tokens.

    Parameters
    ----------
    hardware : str or Accelerator
        Catalog name (``"h200"``) or an :class:`~tokenomics.specs.Accelerator`.
    model : str or ModelSpec
        Catalog name (``"llama-3.1-8b"``) or a :class:`~tokenomics.specs.ModelSpec`.
    execution : str or ExecutionPlan
        Plan name (``"eager"``, ``"graph"``, ``"engine"``, ``"super"``, ``"megakernel"``) or
        an :class:`~tokenomics.specs.ExecutionPlan`.
    batch : array_like
        Sequences decoded together [sequences].
    context_tok : array_like
        Cached positions each sequence attends to [tokens].
    tokens_per_step : array_like
        New tokens per sequence in the step (> 1 for a speculative verify step) [tokens].
    weight_precision, kv_precision : str
        Storage precisions (``bf16``, ``fp8``, ``int4``, ``mxfp4``, ...). Weights default to the
        model's native precision.
    profile : str, Path or Profile, optional
        Calibration profile; default: the shipped profile for the hardware.
    tp, ep : int
        Tensor- and expert-parallel shard sizes; results are per shard group, communication
        excluded (see :mod:`tokenomics.perf.system`).
    attn_dp : int
        Attention data parallelism inside the expert-parallel group: each chip runs attention
        for ``batch / attn_dp`` sequences (weights replicated; the busiest chip's whole
        sequences, ``ceil(batch / attn_dp)``, set the time) while routed experts see every
        token of the group; the group has ``max(tp * attn_dp, ep)`` chips and ``batch`` counts
        the whole group's sequences.
    hbm_bytes_per_s : array_like, optional
        Override the datasheet bandwidth (sweeps) [B/s].
    accepted_tok_per_step : array_like, optional
        Tokens per sequence kept per step (speculative decoding); defaults to
        ``tokens_per_step``.
    on_oom : {"raise", "mask", "ignore"}
        What to do when weights plus KV do not fit: raise a :class:`DoesNotFitError`, set
        times to NaN (``fits`` False), or ignore.
    kernel_release : (str, str), optional
        ``(engine, release)`` whose GEMM and fused-MoE kernels the step runs, when older than the
        newest measured (:mod:`tokenomics.perf.kernel_versions`); default the newest.

    Returns
    -------
    StepResult

    Examples
    --------
    >>> r = decode_step("h200", "llama-3.1-8b", "graph", batch=1, context_tok=1024)
    >>> 4e-3 < float(r.step_time_s) < 8e-3
    True
    """
    return _run(hardware, model, execution, batch=batch, context_tok=context_tok,
                tokens_per_step=tokens_per_step, phase="decode", weight_precision=weight_precision,
                kv_precision=kv_precision, profile=profile, tp=tp, ep=ep, hbm_bytes_per_s=hbm_bytes_per_s,
                accepted_tok_per_step=accepted_tok_per_step, on_oom=on_oom, attn_dp=attn_dp,
                expert_precision=expert_precision, kernel_release=kernel_release)


def prefill(
    hardware: str | Accelerator,
    model: str | ModelSpec,
    execution: str | ExecutionPlan = "graph",
    *,
    prompt_tok=1024,
    batch=1,
    weight_precision: str | None = None,
    kv_precision: str = "bf16",
    profile: str | Profile | None = None,
    tp: int = 1,
    ep: int = 1,
    attn_dp: int = 1,
    hbm_bytes_per_s=None,
    on_oom: str = "raise",
    expert_precision: str | None = None,
    kernel_release: tuple[str, str] | None = None,
) -> StepResult:
    """Time the prefill of ``batch`` prompts of ``prompt_tok`` tokens (TTFT = ``step_time_s``).

    The lm head runs for the last position of each prompt only; attention is causal.
    ``tok_per_s_per_replica`` counts prompt tokens processed per second; ``kernel_release`` as
    :func:`decode_step`.
    """
    return _run(hardware, model, execution, batch=batch, context_tok=prompt_tok, tokens_per_step=1,
                phase="prefill", weight_precision=weight_precision, kv_precision=kv_precision,
                profile=profile, tp=tp, ep=ep, hbm_bytes_per_s=hbm_bytes_per_s,
                accepted_tok_per_step=None, on_oom=on_oom, attn_dp=attn_dp,
                expert_precision=expert_precision, kernel_release=kernel_release)


def max_batch(
    hardware: str | Accelerator,
    model: str | ModelSpec,
    *,
    context_tok=1024,
    weight_precision: str | None = None,
    kv_precision: str = "bf16",
    profile: str | Profile | None = None,
    tp: int = 1,
    ep: int = 1,
    attn_dp: int = 1,
    expert_precision: str | None = None,
):
    """Largest batch whose weights plus KV cache fit in usable memory (0 if none fits).

    Returns an integer array broadcast over ``context_tok``; with ``attn_dp`` > 1 it counts
    the whole group's sequences.
    """
    hw, m, _ = _resolve(hardware, model, "graph")
    check_layout(m, tp, ep)
    v.count(attn_dp, "attn_dp")
    prof = load_profile(profile, hw.name)
    v.count(context_tok, "context_tok", minimum=0)
    ctx = np.asarray(context_tok, dtype=float)
    v.count(ctx, "context_tok", minimum=0)
    return _max_batch(m, usable_hbm_bytes(hw, prof), context_tok=ctx + 1, tp=tp, ep=ep, attn_dp=attn_dp,
                      weight_precision=weight_precision, expert_precision=expert_precision,
                      kv_precision=kv_precision)
