"""Time per operator from achievable bandwidth and achievable FLOP/s.

Each operator takes the longer of its memory time and its compute time (roofline), with
achievable rather than datasheet ceilings:

* memory time = bytes / (``hbm_bytes_per_s`` x ``weight_bw_frac``); the KV-cache reads of decode
  attention at the KV read curve's fraction (:func:`kv_read_efficiency`): a kernel reading a few
  MB reaches a small share of the bandwidth, one reading GBs nearly all of it, as published
  decode-attention kernels measure (``datasets/kernel_microbench.csv``);
* GEMM compute time = FLOPs / (peak x ``flop_frac`` x m / (m + ``gemm_half_rows``)): small GEMMs
  (few rows m) cannot fill the tensor cores, as the measured H200 GEMM curve shows;
* a tiled GEMM (m > 1) pays ``gemm_tile_s`` over a GEMV;
* a decode-attention kernel also pays its (sequence, KV head) blocks at the chip's measured cost
  per block (``attn_unit_s``), however short the caches: ``hypot(read, blocks)``.

Launch costs (per kernel, per step) are added in :mod:`tokenomics.perf.step`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ..specs import UNQUANTIZED_GEMMS, Accelerator
from .ops import Op, stackable
from .profile import Profile


@dataclass(frozen=True)
class OpTime:
    """Timing of one operator class, per step (already multiplied by its count)."""

    name: str
    kind: str
    mem_s: np.ndarray
    compute_s: np.ndarray
    time_s: np.ndarray
    tile_s: np.ndarray
    bytes: np.ndarray
    flop: np.ndarray
    kernels: np.ndarray
    blocks_s: Any = 0.0  # decode attention: its (sequence, KV head) blocks at their measured cost
    fixed_s: Any = 0.0  # routed experts: the fused MoE layers' fixed latency (in time_s)


def gemm_efficiency(rows, profile: Profile, ceiling_frac: float = 1.0):
    """Achieved / datasheet GEMM throughput at ``rows`` rows: ``flop_frac * c * m / (m + m_half * c)``.

    ``c`` (``ceiling_frac``) lowers the large-``m`` ceiling to ``c * flop_frac`` and leaves the
    small-``m`` slope ``flop_frac * m / m_half`` alone: a grouped (MoE) GEMM that reaches a
    smaller share of the tensor peak than one dense GEMM (``c`` from
    :func:`tokenomics.perf.kernels.moe_gemm_ratio`) still costs the same per row when it has few.

    Examples
    --------
    >>> from tokenomics.perf.profile import Profile
    >>> float(gemm_efficiency(100.0, Profile("x", flop_frac=0.8, gemm_half_rows=100.0)))
    0.4
    >>> float(gemm_efficiency(100.0, Profile("x", flop_frac=0.8, gemm_half_rows=100.0), 0.5))  # 0.8*0.5*100/150
    0.26666666666666666
    """
    m = np.maximum(np.asarray(rows, dtype=float), 1e-9)
    return profile.flop_frac * ceiling_frac * m / (m + profile.gemm_half_rows * ceiling_frac)


def kv_read_efficiency(read_bytes, profile: Profile):
    """Achieved / datasheet bandwidth of a decode-attention kernel reading ``read_bytes`` of KV cache.

    ``small + (large - small) * W / (W + half)`` with ``small = kv_bw_small_frac``,
    ``large = kv_bw_frac`` and ``half = kv_bw_half_bytes``; ``kv_bw_frac`` for every read when
    ``half`` is 0.

    Examples
    --------
    >>> from tokenomics.perf.profile import Profile
    >>> p = Profile("x", kv_bw_frac=0.9, kv_bw_small_frac=0.3, kv_bw_half_bytes=1e8)
    >>> round(float(kv_read_efficiency(1e8, p)), 12)
    0.6
    >>> float(kv_read_efficiency(1e8, Profile("y", kv_bw_frac=0.8)))
    0.8
    """
    w = np.asarray(read_bytes, dtype=float)
    if profile.kv_bw_half_bytes <= 0:
        return profile.kv_bw_frac + 0.0 * w
    lo, hi = profile.kv_bw_small_frac, profile.kv_bw_frac
    return lo + (hi - lo) * w / (w + profile.kv_bw_half_bytes)


def op_times(
    ops: list[Op],
    hw: Accelerator,
    profile: Profile,
    compute_peak_flop_per_s: float,
    *,
    hbm_bytes_per_s=None,
    tiles: bool = True,
    expert_ceiling_frac: float = 1.0,
    expert_stream_frac: float = 1.0,
    kv_read_frac: float = 1.0,
    gemm_size_curve: tuple[float, float] = (1.0, 0.0),
    attn_unit_s: float = 0.0,
    expert_fixed_s: float = 0.0,
    dense_peak_flop_per_s: float | None = None,
    head_peak_flop_per_s: float | None = None,
) -> list[OpTime]:
    """Per-operator memory, compute and total time for one step.

    Parameters
    ----------
    ops : list of Op
        From :func:`tokenomics.perf.ops.build_ops`.
    hw : Accelerator
        Datasheet figures.
    profile : Profile
        Achievable fractions and per-kernel costs.
    compute_peak_flop_per_s : float
        Dense peak at the GEMMs' compute precision [FLOP/s].
    hbm_bytes_per_s : array_like, optional
        Override of the datasheet bandwidth (for sweeps over bandwidth) [B/s].
    tiles : bool
        Charge the tiled-GEMM fixed cost (False inside a megakernel).
    expert_ceiling_frac : float
        Ceiling of the routed experts' grouped GEMMs (operator ``experts``) as a share of a dense
        GEMM's (:func:`gemm_efficiency`); 1 = as fast as a dense GEMM.
    expert_stream_frac : float
        Rate at which the routed experts' fused MoE kernels stream their weights, as a share of
        the profile's weight-read rate (:func:`tokenomics.perf.kernels.moe_stream_frac`); 1 = as
        fast as a dense GEMM reads its weights.
    kv_read_frac : float
        Rate at which the decode attention reads its KV cache, as a share of
        :func:`kv_read_efficiency` (:func:`tokenomics.perf.kernels.mla_kv_read_frac` for MLA); the
        bytes stay what the cache holds.
    gemm_size_curve : (float, float)
        ``(gain, w)`` of :func:`tokenomics.perf.profile.gemm_size_curve`: a dense GEMM of weight
        size ``s = sqrt(n k)`` computes at ``min(1, gain * s / (s + w))`` of
        ``compute_peak_flop_per_s``; ``w = 0``: no size effect (the bf16 path, or no data).
    attn_unit_s : float
        Cost of one (sequence, KV head) block of a decode-attention kernel
        (:func:`tokenomics.perf.kernels.attention_unit_s`) [s]. The kernel takes
        ``hypot(max(mem, compute), work_units * attn_unit_s)``: many sequences of a few tokens cost
        what their blocks cost, not what their bytes do, and where both are comparable the blocks'
        fixed work overlaps the read only in part (the exponent 2 is the median of the ones that
        fit aiconfigurator's decode-attention grids best, 1.4-3.0 over 13 chip-engine tables). The
        blocks count on the compute side of the op; 0 = no such cost.
    expert_fixed_s : float
        Fixed latency of one fused MoE layer call beyond its kernel boundaries
        (:func:`tokenomics.perf.kernels.moe_fixed_s`), added to the routed experts' time per layer [s].
    dense_peak_flop_per_s : float, optional
        Tensor peak of every GEMM but the routed experts' [FLOP/s], where their weights are stored
        in another precision than the experts' (gpt-oss: BF16 attention, MXFP4 experts); default
        ``compute_peak_flop_per_s`` for all. ``gemm_size_curve`` is then this path's.
    head_peak_flop_per_s : float, optional
        Tensor peak of the GEMMs whose weights stay unquantized (the routers and the output head,
        :data:`tokenomics.specs.UNQUANTIZED_GEMMS`) where that path differs from the dense
        weights' (an FP8 checkpoint's BF16 head) [FLOP/s]; they then take no size curve. Default
        the dense GEMMs' peak.
    """
    size_gain, size_w = gemm_size_curve
    bw = hw.hbm_bytes_per_s if hbm_bytes_per_s is None else np.asarray(hbm_bytes_per_s, dtype=float)
    w_bw = bw * profile.weight_bw_frac
    attn_peak = hw.peak_bf16_flop_per_s * profile.attn_flop_frac
    dense_peak = compute_peak_flop_per_s if dense_peak_flop_per_s is None else dense_peak_flop_per_s
    head_peak = dense_peak if head_peak_flop_per_s is None else head_peak_flop_per_s
    effs: dict[tuple[int, float], Any] = {}  # gemm_efficiency by rows array and ceiling (ops share rows)
    rows_kept = []  # the rows arrays effs is keyed by, alive while it is
    parts = []  # each op's (mem, compute, time, tile, bytes, flop, kernels), before its count
    extra = []  # each op's (blocks, fixed)
    for op in ops:
        own = None  # an op's time when it is not max(mem, compute)
        blocks = fixed = 0.0
        byts = op.weight_bytes + op.act_bytes + op.kv_bytes
        if op.kind == "gemm":
            expert = op.name == "experts"
            mem = (op.weight_bytes + op.act_bytes) / (w_bw * expert_stream_frac if expert else w_bw)
            ceiling = expert_ceiling_frac if expert else 1.0
            own_path = op.name in UNQUANTIZED_GEMMS and head_peak_flop_per_s is not None
            peak = compute_peak_flop_per_s if expert else (head_peak if own_path else dense_peak)
            key = (id(op.rows), ceiling)
            eff = effs.get(key)
            if eff is None:
                eff = effs[key] = gemm_efficiency(op.rows, profile, ceiling)
                rows_kept.append(op.rows)
            comp = op.flop / (peak * eff)
            if size_w > 0 and not expert and not own_path:  # a small GEMM gains less from a fast tensor path
                comp = comp / _size_frac(size_gain, op.gemm_size, size_w)
            if tiles:
                tiled = op.n_gemm if op.tile_always else np.where(op.rows >= 1.5, op.n_gemm, 0.0)[()]
                tile = tiled * profile.gemm_tile_s
            else:
                tile = 0.0 * mem
            if expert and expert_fixed_s > 0:
                fixed = expert_fixed_s
                own = np.maximum(mem, comp) + fixed
        elif op.kind == "attention":
            mem = op.kv_bytes / (bw * kv_read_efficiency(op.kv_bytes, profile) * kv_read_frac) + op.act_bytes / w_bw
            comp = op.flop / attn_peak
            tile = 0.0 * mem
            if attn_unit_s > 0:  # the blocks' fixed cost overlaps the cache read only in part
                blocks = op.work_units * attn_unit_s
                own = np.hypot(np.maximum(mem, comp), blocks)
                comp = np.maximum(comp, blocks)
        elif op.kind == "attention_prefill":
            mem = (op.kv_bytes + op.act_bytes) / w_bw
            comp = op.flop / attn_peak
            tile = 0.0 * mem
        else:
            mem = op.act_bytes / w_bw
            comp = op.flop / (hw.peak_bf16_flop_per_s * 0.05)  # vector units, never binding here
            tile = 0.0 * mem
        t = (np.maximum(mem, comp) if own is None else own) + tile
        parts.append((mem, comp, t, tile, byts, op.flop, op.kernels))
        extra.append((blocks, fixed))
    scaled = _times_counts(parts, [op.count for op in ops])
    out = OpTimes(_op_time(op.name, op.kind, *x, op.count * b, op.count * f) for op, x, (b, f) in zip(ops, scaled, extra))
    out.stacked = scaled if isinstance(scaled, np.ndarray) else None
    return out


class OpTimes(list):
    """:func:`op_times`' list of :class:`OpTime`, with ``stacked``: their ``(mem_s, compute_s, time_s,
    tile_s, bytes, flop, kernels)`` in one array over (operator, field, ...) where every field has
    one shape (the step sums them without gathering them again), else None."""

    stacked: Any = None


def _size_frac(gain: float, size: Any, w: float) -> Any:
    """``min(1, gain * s / (s + w))`` of :func:`tokenomics.perf.profile.gemm_size_curve` at a
    GEMM's weight size ``s`` (one float where ``s`` is one, else an array)."""
    x = gain * size / (size + w)
    if type(x) is float:  # np.minimum's value, NaN kept
        return 1.0 if x >= 1.0 else x
    return np.minimum(1.0, x)


def _times_counts(parts: list[tuple], counts: list[Any]) -> Any:
    """Each op's ``parts`` times its count (``c * x`` of each), in one multiplication where every
    part of every op has the same shape (the values are the same either way): one array over
    (operator, part, ...), else a list of tuples."""
    try:
        a = np.array(parts) if parts and stackable(parts[0][0]) else None
    except (TypeError, ValueError):  # parts of several shapes: one product each
        a = None
    if a is None or a.dtype != np.float64 or a.shape[:2] != (len(parts), 7):
        return [tuple(c * x for x in p) for p, c in zip(parts, counts)]
    c = np.array(counts, dtype=float).reshape((-1,) + (1,) * (a.ndim - 1))
    return a * c


def _op_time(name: str, kind: str, mem_s: Any, compute_s: Any, time_s: Any, tile_s: Any, byts: Any, flop: Any,
             kernels: Any, blocks_s: Any, fixed_s: Any) -> OpTime:
    """``OpTime(...)`` without the frozen dataclass's per-field ``__init__`` (an :class:`OpTime`
    has no ``__post_init__``): a step builds one per operator."""
    new = object.__new__(OpTime)
    new.__dict__.update(name=name, kind=kind, mem_s=mem_s, compute_s=compute_s, time_s=time_s, tile_s=tile_s,
                        bytes=byts, flop=flop, kernels=kernels, blocks_s=blocks_s, fixed_s=fixed_s)
    return new
