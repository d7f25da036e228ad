"""The core's per-operator times against published kernel microbenchmarks.

``datasets/kernel_microbench.csv`` holds timings of single kernels measured outside this
project: decode and prefill attention on the H200 (NVIDIA aiconfigurator's vLLM FlashAttention-3
and TensorRT-LLM databases), DeepSeek FlashMLA on H800/H100, FlashAttention-3 decode on an
H100, and vLLM fused-MoE layers. :func:`tokenomics.validate.kernel_microbench.predict_kernel_microbench` times the same operator at
the same shape, chip and precision with the core's roofline (:func:`tokenomics.perf.ops.build_ops`,
:func:`tokenomics.perf.roofline.op_times`) and the chip's profile, plus one kernel boundary per
kernel of the op in a CUDA graph (``graph_kernel_s``), since every benchmark replays its kernel
in a graph. Nothing here is fitted: it is an external check of regimes that
``datasets/h200_cases.csv`` does not contain (long context, MLA, MoE, engine kernels).
"""

from __future__ import annotations

import functools
import math
import os
from typing import TYPE_CHECKING, Any

import numpy as np

from .. import _validate as v
from ..catalog import accelerator
from ..errors import DataError
from ..io import Column
from ..specs import ModelSpec, precision_bytes
from ..specs import plan as _plan
from .ops import ENGINE_MOE, build_ops
from .profile import Profile, load_profile, tensor_path_ratio
from .roofline import op_times

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

#: Operators the check can time, and the metrics it compares.
OPS = ("decode_attention", "prefill_attention", "mla_decode_attention", "moe_experts")
METRICS = ("latency_s", "kv_bandwidth_bytes_per_s")
#: A benchmark whose bytes and FLOPs take less than this at datasheet peaks is launch-latency
#: sized: its kernel's fixed start-up, tail and the graph launch dominate what was timed [s].
SMALL_WORK_S = 10e-6


#: Declared columns of a kernel microbenchmark file (:class:`tokenomics.io.Column`); ``hardware``
#: is a catalogued accelerator.
KERNEL_BENCH_SCHEMA = (
    Column("bench_id", "text", required=False),
    Column("hardware", "text"),
    Column("op", "choice", choices=OPS),
    Column("batch", "integer", minimum=1),
    Column("kv_len_tok", "integer", minimum=0),
    Column("metric", "choice", choices=METRICS),
    Column("value", "number", minimum=0.0, strict_minimum=True, unit="s or B/s, as metric says"),
    Column("kind", "text", required=False),
    Column("source", "text", required=False),
)


def read_kernel_microbench(source=None) -> "pd.DataFrame":
    """Read a kernel microbenchmark CSV in the schema of ``datasets/kernel_microbench.csv``.

    Parameters
    ----------
    source : path or DataFrame, optional
        Default: the bundled dataset.

    Returns
    -------
    pandas.DataFrame
        Checked rows: known ``op``, ``metric`` and ``hardware``; positive ``value`` and ``batch``.

    Raises
    ------
    DataError
        One line naming every bad cell (row, line, column, value) of :data:`KERNEL_BENCH_SCHEMA`.
    """
    from ..catalog import load
    from ..errors import UnknownNameError
    from ..io import check_frame, frame_problems, read_csv, schema_columns

    if source is None:
        df = load("kernel_microbench")
        label = "kernel_microbench.csv"
    else:
        df = read_csv(source, "kernel microbench", required=schema_columns(KERNEL_BENCH_SCHEMA))
        label = "kernel microbench" if not isinstance(source, (str, os.PathLike)) else \
            f"kernel microbench {str(source)!r}"
    problems = frame_problems(df, KERNEL_BENCH_SCHEMA)
    chips = df["hardware"].astype(str)
    unknown = []
    for hw in dict.fromkeys(chips):
        try:
            accelerator(hw)
        except UnknownNameError as exc:  # an unknown chip: named once, at its first row, with suggestions
            unknown.append((int(np.flatnonzero((chips == hw).to_numpy())[0]), f"hardware: {exc}"))
    try:
        return check_frame(df, (), label, extra=problems + unknown)
    except DataError as exc:
        if problems:
            raise
        raise UnknownNameError(str(exc)) from None  # only unknown chips: the error a lookup gives


def int_cell(x: Any, default: int = 0) -> int:
    """A CSV cell as an int; ``default`` for a blank, NaN or non-numeric cell."""
    try:
        f = float(x)
    except (TypeError, ValueError):
        return default
    return default if math.isnan(f) else int(f)


def _int(row, col: str, default: int = 0) -> int:
    """Cell ``col`` of ``row`` as an int; ``default`` when absent, empty or not a number."""
    return int_cell(row.get(col), default)


def _name(row, col: str, default: str = "bf16") -> str:
    """Cell ``col`` of ``row`` as a precision name; ``default`` when absent or empty."""
    v = row.get(col)
    return v if isinstance(v, str) and v else default


def _bench_model(row) -> ModelSpec:
    """A one-layer model holding the benchmarked operator's shape."""
    op = str(row["op"])
    if op == "moe_experts":
        h = _int(row, "hidden")
        return ModelSpec(name=str(row["bench_id"]), n_layers=1, hidden=h, n_q_heads=1, n_kv_heads=1, head_dim=h,
                         n_moe_layers=1, n_experts=_int(row, "n_experts"),
                         experts_per_token=_int(row, "experts_per_token"),
                         expert_ffn_hidden=_int(row, "expert_ffn_hidden"))
    nq, hd = _int(row, "n_q_heads"), _int(row, "head_dim")
    if op == "mla_decode_attention":
        dv = _int(row, "head_dim_v")  # the latent (kv_lora_rank); head_dim - dv is the rope part
        return ModelSpec(name=str(row["bench_id"]), n_layers=1, hidden=7168, n_q_heads=nq, n_kv_heads=nq,
                         head_dim=128, ffn_hidden=1, attention="mla", q_lora_rank=1536, kv_lora_rank=dv,
                         qk_rope_head_dim=hd - dv, qk_nope_head_dim=128, v_head_dim=128)
    return ModelSpec(name=str(row["bench_id"]), n_layers=1, hidden=nq * hd, n_q_heads=nq,
                     n_kv_heads=_int(row, "n_kv_heads"), head_dim=hd, ffn_hidden=1)


def kernel_op_time(row, profile: "Profile | str | None" = None, *, stream: bool = True,
                   mla: bool = True, blocks: bool = True, fixed: bool = True) -> dict[str, float | str]:
    """The core's time for one benchmarked operator.

    Parameters
    ----------
    row : mapping
        One row of :func:`read_kernel_microbench`.
    profile : Profile, str or None
        Default: the chip's shipped or transferred profile.
    stream : bool
        Time an MoE row's expert weights at the chip's fitted streaming rate
        (:func:`~tokenomics.perf.kernels.moe_stream_frac`); False: at the core's weight-read rate
        (what that fit compares with).
    mla : bool
        Time an MLA row's KV reads at the chip's fitted MLA rate
        (:func:`~tokenomics.perf.kernels.mla_kv_read_frac`); False: at the core's KV read rate (what
        that fit compares with).
    blocks : bool
        Charge a GQA decode-attention row its (sequence, KV head) blocks at the chip's measured
        cost (:func:`~tokenomics.perf.kernels.attention_unit_s`); False: its KV read alone.
    fixed : bool
        Add an MoE row's fixed fused-layer latency (:func:`~tokenomics.perf.kernels.moe_fixed_s`) to
        its kernel boundaries; False: the boundaries alone (what that fit compares with).

    Returns
    -------
    dict
        ``op_time_s`` (roofline time of the op) [s], ``kernel_s`` (its kernel boundaries in a
        graph) [s], ``time_s`` (their sum) [s], ``kv_bytes`` (KV cache, or expert weights, read)
        [B], ``ideal_s`` (bytes and FLOPs at datasheet peaks, or a decode kernel's blocks at
        their measured cost, the largest) [s], ``bound``
        (``memory`` or ``compute``).
    """
    hw = accelerator(str(row["hardware"]))
    prof = load_profile(profile, hw.name)
    m = _bench_model(row)
    op = str(row["op"])
    plan = _plan("engine")
    b = _int(row, "batch", 1)
    kvb = precision_bytes(_name(row, "kv_precision"))
    prec = _name(row, "precision")
    peak = datasheet = hw.peak_bf16_flop_per_s
    ceiling = stream_frac = 1.0
    if op == "prefill_attention":
        ops = build_ops(m, plan, batch=b, context_tok=_int(row, "kv_len_tok"), phase="prefill", kv_bytes_per_elem=kvb)
    elif op == "moe_experts":  # expert weights stored (and computed) at the row's precision
        wb = precision_bytes(prec)
        ops = build_ops(m, plan, batch=b, context_tok=0, kv_bytes_per_elem=kvb, weight_bytes_per_param=wb,
                        expert_bytes_per_param=wb)
        peak, datasheet = gemm_peak_flop_per_s(hw, prec)
        ceiling = moe_gemm_ratio(hw.name, prec, _int(row, "expert_ffn_hidden"))[0]
        stream_frac = moe_stream_frac(hw.name, prec)[0] if stream else 1.0
    else:
        q = max(_int(row, "q_tok_per_seq", 1), 1)
        ops = build_ops(m, plan, batch=b, context_tok=_int(row, "kv_len_tok") - q, tokens_per_step=q,
                        kv_bytes_per_elem=kvb)
    want = "experts" if op == "moe_experts" else "attention"
    mine = [o for o in ops if o.name == want]
    kv_frac = mla_kv_read_frac(hw.name, _name(row, "kv_precision")) if op == "mla_decode_attention" and mla else 1.0
    unit_s = attention_unit_s(hw.name)[0] if op == "decode_attention" and blocks else 0.0
    t = op_times(mine, hw, prof, peak, tiles=False, expert_ceiling_frac=ceiling, expert_stream_frac=stream_frac,
                 kv_read_frac=kv_frac, attn_unit_s=unit_s)[0]
    kernels = float(ENGINE_MOE) if op == "moe_experts" else float(np.max(t.kernels))
    kern_s = kernels * prof.graph_kernel_s
    if op == "moe_experts" and fixed:
        kern_s += moe_fixed_s(hw.name, prec)[0]
    read = float(np.max(mine[0].weight_bytes if op == "moe_experts" else mine[0].kv_bytes))
    ideal = max(float(t.bytes) / hw.hbm_bytes_per_s, float(t.flop) / datasheet,
                float(np.max(mine[0].work_units)) * unit_s)
    return {"op_time_s": float(t.time_s), "kernel_s": kern_s, "time_s": float(t.time_s) + kern_s,
            "kv_bytes": read, "ideal_s": ideal,
            "bound": "memory" if float(t.mem_s) >= float(t.compute_s) else "compute"}


#: Weight formats :func:`moe_ceilings` reports.
CEILING_FORMATS = ("bf16", "fp8", "fp4", "mxfp4")


def moe_ceilings(hardware=None) -> "pd.DataFrame":
    """Grouped-GEMM ceilings of MoE layers by chip and weight format.

    Parameters
    ----------
    hardware : iterable of str, optional
        Chips; default every catalogued one.

    Returns
    -------
    pandas.DataFrame
        ``hardware``, ``weight_precision``, ``ceiling_frac`` (share of a dense GEMM's ceiling
        whole routed experts reach, :func:`tokenomics.perf.kernels.moe_gemm_ratio`; 1 = no
        measurement), ``slice_width_scale`` (``w`` of the narrow-slice form: how fast the ceiling
        falls as MoE tensor parallelism narrows each expert's slice; 0 = measured at one width)
        [columns], ``measured_on`` (the chip whose rows gave it, empty for none), and the fused
        layer's ``stream_frac`` (:func:`tokenomics.perf.kernels.moe_stream_frac`) and
        ``fixed_latency_s`` per call (:func:`tokenomics.perf.kernels.moe_fixed_s`) [s].
    """
    import pandas as pd

    from ..catalog import load

    chips = list(load("accelerators").index) if hardware is None else [accelerator(str(h)).name for h in hardware]
    rows = []
    for hw in chips:
        try:
            accelerator(hw)
        except Exception:  # noqa: BLE001 -- a catalogue row the performance model cannot take
            continue
        for prec in CEILING_FORMATS:
            c, _, w, chip = moe_ceiling_params(hw, prec)
            rows.append({"hardware": hw, "weight_precision": prec, "ceiling_frac": c, "slice_width_scale": w,
                         "measured_on": chip, "stream_frac": moe_stream_frac(hw, prec)[0],
                         "fixed_latency_s": moe_fixed_s(hw, prec)[0]})
    return pd.DataFrame(rows)


#: The KV read curve's parameters fitted by :func:`fit_kv_read_curve`.
KV_CURVE_PARAMS = ("kv_bw_frac", "kv_bw_small_frac", "kv_bw_half_bytes")
#: Shortest cache [tokens] of the rows a KV read curve is fitted on: below it a kernel of many
#: sequences costs its (sequence, KV head) blocks (:func:`tokenomics.perf.kernels.attention_unit_s`),
#: not its bytes.
KV_CURVE_MIN_KV_TOK = 1024


def kv_curve_rows(bench: "pd.DataFrame", hardware: str, kernel_contains: str | None = None) -> "pd.DataFrame":
    """The rows a KV read curve is fitted on: measured decode-attention latencies of ``hardware``
    with a bf16 KV cache of at least :data:`KV_CURVE_MIN_KV_TOK` tokens and one query token per
    sequence; optionally only kernels whose name contains ``kernel_contains``."""
    hw = accelerator(hardware)
    d = bench[(bench["hardware"].astype(str) == hw.name) & (bench["op"] == "decode_attention")
              & (bench["kind"] == "measured") & (bench["metric"] == "latency_s")
              & (bench["kv_len_tok"].astype(float) >= KV_CURVE_MIN_KV_TOK)
              & (bench["kv_precision"].fillna("bf16").astype(str) == "bf16")
              & (bench["q_tok_per_seq"].fillna(1).astype(int) == 1)]
    if kernel_contains is not None:
        d = d[d["kernel"].astype(str).str.contains(kernel_contains, regex=False)]
    return d


def fit_kv_read_curve(bench=None, hardware: str = "h200", *, profile: "Profile | str | None" = None,
                      kernel_contains: str | None = None) -> dict[str, float]:
    """Fit the KV read curve (:func:`tokenomics.perf.roofline.kv_read_efficiency`) of one chip on
    published decode-attention kernel timings.

    Each row of :func:`kv_curve_rows` is predicted as :func:`kernel_op_time` (the op's roofline
    time plus its graph kernel boundary) plus ``harness_s``, one constant per fit for what the
    benchmark adds around the kernel (its graph launch, a KV-cache write); least squares on the
    relative error of the latency. The large-read fraction is capped at the best bandwidth any
    row reached (KV bytes / latency / datasheet): the asymptote is not identified beyond the
    largest read. The other profile parameters stay at ``profile``'s.

    Parameters
    ----------
    bench : path or DataFrame, optional
        Default: ``datasets/kernel_microbench.csv``.
    hardware : str
        The chip.
    profile : Profile or str, optional
        The other parameters (default: the chip's shipped or transferred profile).
    kernel_contains : str, optional
        Fit only on kernels whose name contains this (to hold other kernels out).

    Returns
    -------
    dict
        ``kv_bw_frac`` and ``kv_bw_small_frac`` [fraction], ``kv_bw_half_bytes`` [B],
        ``harness_s`` [s], ``n_rows`` and ``median_abs_error_frac`` of the fit.

    Raises
    ------
    DataError
        Fewer than 6 rows to fit on.
    """
    from scipy.optimize import least_squares

    df = read_kernel_microbench(bench)
    rows = kv_curve_rows(df, hardware, kernel_contains)
    if len(rows) < 6:
        raise DataError(f"{len(rows)} measured bf16 decode-attention rows for {hardware!r}; a KV read curve needs >= 6")
    hw = accelerator(hardware)
    base = load_profile(profile, hw.name)
    meas = rows["value"].to_numpy(float)
    recs = [r for _, r in rows.iterrows()]
    kv = np.array([kernel_op_time(r, base)["kv_bytes"] for r in recs])
    cap = float(np.max(kv / meas)) / hw.hbm_bytes_per_s

    def make(x) -> Profile:
        return base.replace(kv_bw_frac=float(x[0]), kv_bw_small_frac=float(x[1]), kv_bw_half_bytes=float(x[2]) * 1e8)

    def resid(x):
        prof = make(x)
        return (np.array([kernel_op_time(r, prof)["time_s"] for r in recs]) + x[3] * 1e-6) / meas - 1.0

    sol = least_squares(resid, [0.9 * cap, 0.5 * cap, 1.0, 5.0], bounds=([0.05, 0.02, 1e-3, 0.0], [cap, cap, 1e3, 50.0]),
                        x_scale="jac")
    prof = make(sol.x)
    return {"kv_bw_frac": prof.kv_bw_frac, "kv_bw_small_frac": prof.kv_bw_small_frac,
            "kv_bw_half_bytes": prof.kv_bw_half_bytes, "harness_s": float(sol.x[3]) * 1e-6, "n_rows": len(rows),
            "median_abs_error_frac": float(np.median(np.abs(resid(sol.x))))}


# ---- per-kernel calibrations the step model uses: tensor paths, fused-MoE ceilings, MLA and
# attention rates, each fitted on the published kernel timings of its chip ----------------------

def tensor_path(hw, weight_precision: str) -> str:
    """The datasheet tensor path (``Accelerator`` field, e.g. ``peak_fp4_flop_per_s``) GEMMs on
    ``weight_precision`` weights run on (:meth:`Accelerator.peak_flop_field`)."""
    return hw.peak_flop_field(_compute_precision(weight_precision))


def gemm_peak_flop_per_s(hw, weight_precision: str) -> tuple[float, float]:
    """Tensor peak the GEMMs on ``weight_precision`` weights are timed at [FLOP/s].

    The chip's datasheet path for that precision (:meth:`Accelerator.peak_flop_field`: fp8
    weights on the fp8 path, int8 on an INT8 path where the chip lists one (Ascend) and else the
    fp8 path, fp4 formats on the fp4 path, a missing path falling back to the next wider one),
    times its measured share of peak relative to bf16
    (:func:`tokenomics.perf.profile.tensor_path_ratio`): the profile's compute fractions are the
    bf16 path's.

    Returns
    -------
    (float, float)
        The peak to time with and the datasheet peak of that path [FLOP/s].
    """
    path = tensor_path(hw, weight_precision)
    datasheet = float(getattr(hw, path))
    return datasheet * tensor_path_ratio(hw.name, path), datasheet


#: Token count from which a ``moe_experts`` row of ``datasets/kernel_microbench.csv`` times the
#: grouped GEMMs compute-bound (its expert weights take under a quarter of the measured time on
#: every chip timed), so it measures the grouped GEMM rate :func:`moe_gemm_ratio` is fitted on.
MOE_RATIO_MIN_TOKENS = 8192


def _moe_fit(hardware: str, weight_precision: str, lo_tok: float, hi_tok: float, per_row) -> tuple[float, str]:
    """The median of ``per_row(row, chip)`` over the ``moe_experts`` rows of
    ``datasets/kernel_microbench.csv`` with ``lo_tok``-``hi_tok`` tokens, capped at 1, for
    :func:`moe_gemm_ratio` and :func:`moe_stream_frac`: rows in the same weight format, else in the
    tensor path's own formats (``profile.PATH_PRECISIONS``: an MXFP4 kernel does not stand for
    NVFP4); the chip's own rows, else its vendor sibling's (``profile.VENDOR_SIBLING``,
    ``profile.ASSUMED_LIKE``); ``(1.0, "")`` where the vendor has none (other vendors do not borrow
    NVIDIA's). ``per_row`` returns None for a row that says nothing."""
    rows, chip = _moe_rows(hardware, weight_precision, lo_tok, hi_tok, per_row)
    if not rows:
        return 1.0, ""
    return min(1.0, float(np.median([v for _, v in rows]))), chip


def _moe_rows(hardware: str, weight_precision: str, lo_tok: float, hi_tok: float, per_row):
    """``([(row, per_row(row, chip)), ...], chip)``: the rows :func:`_moe_fit` takes (``([], "")``
    for none)."""
    from ..catalog import load
    from .profile import ASSUMED_LIKE, PATH_PRECISIONS, VENDOR_SIBLING

    try:
        hw = accelerator(hardware)
    except Exception:  # noqa: BLE001 -- a chip outside the catalog: no measurement stands for it
        return [], ""
    path = tensor_path(hw, weight_precision)
    df = load("kernel_microbench")
    tok = df["batch"].astype(float)
    df = df[(df["op"] == "moe_experts") & (tok >= lo_tok) & (tok <= hi_tok)]
    sibling = ASSUMED_LIKE.get(hw.name) or VENDOR_SIBLING.get(hw.vendor.upper())
    for chip in dict.fromkeys(c for c in (hw.name, sibling) if c):
        mine = df[df["hardware"] == chip]
        if mine.empty:
            continue
        acc = accelerator(chip)
        prec_col = mine["precision"].astype(str)
        same = prec_col == weight_precision
        if not same.any():  # another format: the path's own formats only (bf16; fp8; fp4/nvfp4)
            on_path = prec_col.map(lambda x: tensor_path(acc, x) == path)
            same = on_path & prec_col.isin(PATH_PRECISIONS.get(path, ()))
        vals = [(r, x) for r, x in ((r, per_row(r, chip)) for _, r in mine[same].iterrows()) if x is not None]
        if vals:
            return vals, chip
    return [], ""


def moe_gemm_ratio(hardware: str, weight_precision: str, expert_ffn_per_chip: float | None = None) -> tuple[float, str]:
    """Ceiling of an MoE layer's grouped GEMMs as a share of the modelled dense GEMM ceiling.

    Ragged per-expert tiles, scale handling and the permute and finalize kernels make a fused
    MoE layer slower than one dense GEMM of the same FLOPs. For each ``moe_experts`` row of
    ``datasets/kernel_microbench.csv`` with at least :data:`MOE_RATIO_MIN_TOKENS` tokens in the
    same weight format (else in the tensor path's own formats, ``profile.PATH_PRECISIONS``: an
    MXFP4 kernel does not stand for NVFP4): the ceiling ``c`` of
    :func:`~tokenomics.perf.roofline.gemm_efficiency` at which the path's
    :func:`gemm_peak_flop_per_s` x ``gemm_efficiency(m, c)`` equals the achieved FLOP/s
    (``2 x tokens x top-k x 3 x hidden x expert FFN`` over the measured time), ``m`` = rows per
    expert = ``tokens x top-k / experts``; the median over rows, capped at 1. The rows are the
    fastest kernel any engine's collector timed (``tools/build_kernel_microbench.py``), so this
    is the chip's capability, not one engine's. The chip's own rows, else its vendor sibling's
    (``profile.VENDOR_SIBLING``, ``profile.ASSUMED_LIKE``); 1.0 where the vendor has none (no
    evidence either way; other vendors do not borrow NVIDIA's).

    **Narrow expert slices.** With experts split over MoE-TP GPUs, each GPU multiplies by a
    ``expert_ffn_per_chip``-wide slice of every expert, and the grouped GEMMs fall further from
    the ceiling (narrow tiles, more experts per kernel): the same layers timed at MoE TP2-TP8
    (``*-tp*`` rows) run 1.1-1.6x (Hopper) and 1.1-2.8x (Blackwell) longer than whole experts.
    The ceiling at a slice width ``f`` is ``c x [f / (f + w)] / [F / (F + w)]``, ``c`` the median
    over the rows of the widest slice ``F`` measured (whole experts), ``w`` [columns] the median
    over the narrower rows of the width at which that form reproduces the row. Slices at least
    ``F`` wide keep ``c`` (ASSUMPTION: no gain is extrapolated beyond the widest slice measured);
    chips with rows at one width only keep ``c`` at every width.

    Parameters
    ----------
    expert_ffn_per_chip : float, optional
        Width of the expert slice one chip multiplies by [columns]: the expert FFN width over the
        MoE tensor-parallel ways. None: a whole expert (``c``).

    Returns
    -------
    (float, str)
        The ratio and the chip it was measured on (``""`` for none).

    >>> r, chip = moe_gemm_ratio("b200", "fp8"); chip, round(r, 2)   # DeepGEMM block-FP8, DeepSeek-V3 EP8
    ('b200', 0.68)
    >>> round(moe_gemm_ratio("b200", "fp8", 256)[0], 2)   # DeepSeek-V3's 2048-wide experts at MoE TP8
    0.23
    >>> moe_gemm_ratio("tpu-v7", "bf16")
    (1.0, '')
    """
    c, wide, w, chip = moe_ceiling_params(str(hardware), str(weight_precision))
    if expert_ffn_per_chip is None:
        return c, chip
    f = float(v.positive(expert_ffn_per_chip, "expert_ffn_per_chip"))
    if f >= wide or w == 0.0:  # nothing narrower measured, or no gain beyond the widest slice measured
        return c, chip
    return c * (f / (f + w)) / (wide / (wide + w)), chip


#: Width scale of the narrow-slice form past which a row's slowdown is taken as proportional to its
#: width (the ceiling falls with the slice, ``w`` >> ``f``) [columns].
MOE_WIDTH_CAP = 1e6


@functools.lru_cache(maxsize=256)
def moe_ceiling_params(hardware: str, weight_precision: str) -> tuple[float, float, float, str]:
    """The fitted parameters behind :func:`moe_gemm_ratio` for one chip and weight format.

    Returns
    -------
    (float, float, float, str)
        ``c``, the ceiling of whole experts (share of the dense GEMM ceiling); ``F``, their width
        [columns]; ``w``, the narrow-slice width scale [columns] (0 with one width measured);
        and the chip measured. ``(1.0, inf, 0.0, "")`` where nothing was measured.
    """
    def ceiling(r, chip):
        acc, prof, prec = accelerator(chip), load_profile(None, chip), str(r["precision"])
        tok, k, e = float(r["batch"]), float(r["experts_per_token"]), float(r["n_experts"])
        flop = 2.0 * tok * k * 3.0 * float(r["hidden"]) * float(r["expert_ffn_hidden"])
        # achieved share a of the path peak = ff c m / (m + h c), solved for the ceiling c
        a = flop / float(r["value"]) / (gemm_peak_flop_per_s(acc, prec)[0] * prof.flop_frac)
        rows = tok * k / e
        return a * rows / (rows - a * prof.gemm_half_rows) if rows > a * prof.gemm_half_rows else 1.0

    rows, chip = _moe_rows(hardware, weight_precision, MOE_RATIO_MIN_TOKENS, np.inf, ceiling)
    if not rows:
        return 1.0, np.inf, 0.0, ""
    width = np.array([float(r["expert_ffn_hidden"]) for r, _ in rows])
    cs = np.array([x for _, x in rows])
    wide = float(width.max())
    c = min(1.0, float(np.median(cs[width == wide])))
    ws = []
    for f, cf in zip(width[width < wide], cs[width < wide]):
        rho = c / min(1.0, cf)  # how much lower the narrow slice's ceiling is
        # c_f / c = [f / (f + w)] / [F / (F + w)], solved for w
        ws.append(0.0 if rho <= 1.0 else
                  MOE_WIDTH_CAP if rho * f >= wide else wide * f * (rho - 1.0) / (wide - rho * f))
    return c, wide, (float(np.median(ws)) if ws else 0.0), chip


#: Token counts of the ``moe_experts`` rows :func:`moe_stream_frac` is fitted on: decode-sized
#: layers whose expert weights take most of the time (memory-bound on every chip timed), from
#: where random routing touches most local experts (below 64 the aiconfigurator collector's
#: balanced routing touches every one, which a model of random routing does not predict).
MOE_STREAM_TOKENS = (64, 512)


@functools.lru_cache(maxsize=256)
def moe_stream_frac(hardware: str, weight_precision: str) -> tuple[float, str]:
    """Rate at which a fused MoE layer streams its expert weights, as a share of the core's
    weight-read rate (the profile's ``weight_bw_frac`` of datasheet bandwidth).

    A decode-sized MoE layer reads each touched expert's weights once; the fastest public
    kernels do it more slowly than a dense GEMM (per-expert tiles and scale loads, token
    permute and finalize). For each ``moe_experts`` row of ``datasets/kernel_microbench.csv`` with
    :data:`MOE_STREAM_TOKENS` tokens that the core times as memory-bound, in the same weight
    format (else the tensor path's own formats, as :func:`moe_gemm_ratio`): the core's expert
    weight-read time over the measured time less the row's kernel boundaries and the layer's fixed
    latency (:func:`moe_fixed_s`); the median over rows, capped at 1. The chip's own rows, else
    its vendor sibling's; 1.0 where the vendor has none.

    Returns
    -------
    (float, str)
        The share and the chip it was measured on (``""`` for none).

    >>> f, chip = moe_stream_frac("b200", "nvfp4"); chip, round(f, 2)   # DeepSeek-V3 EP8, 64-512 tokens
    ('b200', 0.89)
    >>> moe_stream_frac("tpu-v7", "bf16")
    (1.0, '')
    """

    return _moe_fit(hardware, weight_precision, *MOE_STREAM_TOKENS,
                    lambda r, chip: _streaming_share(r, kernel_op_time(r, stream=False)))


#: Token counts of the ``moe_experts`` rows :func:`moe_fixed_s` is fitted on: layers so small that
#: their expert weights take a few microseconds and at most a quarter of the local experts are
#: routed to (where the collector's balanced routing and random routing touch nearly the same).
MOE_FIXED_TOKENS = (1, 8)

#: Source of the ``moe_experts`` rows that time a whole fused MoE layer as an engine runs it
#: (routing, permute, grouped GEMMs and finalize, replayed in a CUDA graph): NVIDIA's
#: aiconfigurator collector. AMD's aiter tuner times the GEMM kernels alone (device time, sorting
#: and activation quantization excluded), which says nothing about a layer's fixed latency.
WHOLE_LAYER_SOURCE = "github.com/ai-dynamo/aiconfigurator"


@functools.lru_cache(maxsize=256)
def moe_fixed_s(hardware: str, weight_precision: str) -> tuple[float, str]:
    """Fixed latency of one fused MoE layer beyond its kernel boundaries and its weight reads [s].

    A fused MoE layer's routing, token permute, grouped GEMMs and finalize do not start and end
    like single kernels: with one to eight tokens the fastest public kernels take 10-30 us longer
    on Hopper than the layer's kernel boundaries and weight reads (fewer expert tiles than SMs:
    the weights stream at a fraction of the rate a full layer reaches), and on Blackwell 1-3 us
    (NVFP4, MXFP4) to 15-17 us (block-FP8).
    For each ``moe_experts`` row of ``datasets/kernel_microbench.csv`` with
    :data:`MOE_FIXED_TOKENS` tokens, in the same weight format (else the tensor path's own
    formats, as :func:`moe_gemm_ratio`) that times the whole layer (:data:`WHOLE_LAYER_SOURCE`):
    the measured time less the core's time of the layer (kernel boundaries, and weights at the
    core's weight-read rate); the median over rows, at least 0. The chip's own rows, else its
    vendor sibling's; 0 where the vendor has none (AMD: no whole-layer timing published). The
    streaming rate (:func:`moe_stream_frac`) is fitted with this latency taken off, so the two
    add up at every size. Charged once per MoE layer call by an engine's (or super-fused) plan.

    Returns
    -------
    (float, str)
        The latency [s] and the chip it was measured on (``""`` for none).

    >>> t, chip = moe_fixed_s("h200", "mxfp4"); chip, round(t * 1e6)   # gpt-oss-120b shapes, EP1-TP8
    ('h200', 22)
    >>> moe_fixed_s("tpu-v7", "bf16")
    (0.0, '')
    """

    def gap(r, chip):
        if WHOLE_LAYER_SOURCE not in str(r["source"]):
            return None
        return float(r["value"]) - kernel_op_time(r, stream=False, fixed=False)["time_s"]

    rows, chip = _moe_rows(hardware, weight_precision, *MOE_FIXED_TOKENS, gap)
    if not rows:
        return 0.0, ""
    return max(0.0, float(np.median([x for _, x in rows]))), chip


def _streaming_share(row, timed: dict) -> float | None:
    """The core's op time over a kernel row's measured time less its kernel boundaries and fixed
    latency, for a row the core (``timed``: :func:`tokenomics.perf.kernels.kernel_op_time` without
    the fitted rate) times as memory-bound; None for any other row."""
    busy = float(row["value"]) - timed["kernel_s"]
    return timed["op_time_s"] / busy if timed["bound"] == "memory" and busy > 0 else None


#: Batch and KV length from which an ``mla_decode_attention`` row of ``datasets/kernel_microbench.csv``
#: reads enough KV cache to measure the kernel's streaming rate (launch and tail effects small).
MLA_FIT_MIN_BATCH, MLA_FIT_MIN_KV_TOK = 32, 2048


@functools.lru_cache(maxsize=64)
def mla_kv_read_frac(hardware: str, kv_precision: str) -> float:
    """Rate at which an MLA decode-attention kernel streams its latent KV cache, as a share of the
    core's KV read rate (:func:`tokenomics.perf.roofline.kv_read_efficiency`, fitted on GQA kernels).

    For each measured ``mla_decode_attention`` row of ``datasets/kernel_microbench.csv`` of the
    chip with a KV cache of the same width (one byte or two) and at least
    :data:`MLA_FIT_MIN_BATCH` sequences of :data:`MLA_FIT_MIN_KV_TOK` tokens that the core times
    as memory-bound: the core's time over the measured time less the row's kernel boundaries; the
    median over rows, capped at 1. The chip's own rows only; 1.0 without any. TensorRT-LLM's MLA
    kernels on the Blackwell chips stream a BF16 cache at 0.77-0.78 of the rate the core's GQA
    curve gives and an FP8 cache at 0.87-0.89; on Hopper BF16 at the full rate, FP8 at 0.72 (H200)
    and 0.95 (H100).

    >>> round(mla_kv_read_frac("b200", "bf16"), 2)   # aiconfigurator, TensorRT-LLM 1.3.0rc20
    0.77
    >>> mla_kv_read_frac("mi355x", "fp8")
    1.0
    """
    from ..catalog import load

    width = precision_bytes(kv_precision) <= 1
    df = load("kernel_microbench")  # rows name catalog chips; any other chip has none
    df = df[(df["op"] == "mla_decode_attention") & (df["hardware"].astype(str) == str(hardware))
            & (df["kind"] == "measured") & (df["metric"] == "latency_s")
            & (df["batch"].astype(float) >= MLA_FIT_MIN_BATCH) & (df["kv_len_tok"].astype(float) >= MLA_FIT_MIN_KV_TOK)]
    shares = [_streaming_share(r, kernel_op_time(r, mla=False)) for _, r in df.iterrows()
              if (precision_bytes(_name(r, "kv_precision")) <= 1) == width]
    shares = [x for x in shares if x is not None]
    return float(min(1.0, np.median(shares))) if shares else 1.0


#: KV length [tokens] up to which a ``decode_attention`` row of ``datasets/kernel_microbench.csv``
#: times the kernel's work units alone (the cache read is negligible), and the batch from which
#: its blocks fill the chip many times over.
ATTN_UNIT_MAX_KV_TOK, ATTN_UNIT_MIN_BATCH = 16, 1024


@functools.lru_cache(maxsize=64)
def attention_unit_s(hardware: str) -> tuple[float, str]:
    """Cost of one (sequence, KV head) block of a GQA decode-attention kernel on a chip [s].

    Decode-attention kernels run one block (or a few split-KV blocks) per sequence and KV head;
    each pays a fixed cost (loading its queries, the softmax bookkeeping, writing its output)
    however short its cache, so a step of thousands of short sequences takes what its blocks
    cost, not what its bytes do (:func:`tokenomics.perf.roofline.op_times`: ``hypot(read, blocks)``).
    Engines' kernels only: the reference PyTorch kernel of the graph and eager plans shows no such
    cost in the H200's measured steps.

    From the measured ``decode_attention`` rows of ``datasets/kernel_microbench.csv`` with a cache
    of at most :data:`ATTN_UNIT_MAX_KV_TOK` tokens and at least :data:`ATTN_UNIT_MIN_BATCH`
    sequences: for each kernel and head shape timed at two such batches, the latency's slope per
    added (sequence, KV head) pair (the difference cancels the harness's fixed cost); the median
    over kernels and shapes. A chip without rows borrows those of a measured chip of its own
    vendor (:func:`tokenomics.perf.profile._measured_chips`; kernel libraries differ by vendor);
    ``(0.0, "")`` (no block cost) where none has any, and for a chip outside the catalog.
    aiconfigurator's tables (TensorRT-LLM, vLLM and SGLang default kernels) give 21-38 ns a block
    on the H100/H200 and 8.7-12.5 ns on the Blackwell chips.

    Returns
    -------
    (float, str)
        The cost [s per (sequence, KV head)] and the chip whose rows gave it.

    >>> c, chip = attention_unit_s("h200"); chip, round(c * 1e9, 1)
    ('h200', 31.4)
    >>> attention_unit_s("mi355x")
    (0.0, '')
    """
    from ..catalog import accelerator, load
    from .profile import _measured_chips, _same_vendor

    try:
        hw = accelerator(hardware)
    except Exception:  # noqa: BLE001 -- a chip outside the catalog: no measurement stands for it
        return 0.0, ""
    df = load("kernel_microbench")
    df = df[(df["op"] == "decode_attention") & (df["kind"] == "measured") & (df["metric"] == "latency_s")
            & (df["kv_len_tok"].astype(float) <= ATTN_UNIT_MAX_KV_TOK)
            & (df["batch"].astype(float) >= ATTN_UNIT_MIN_BATCH)]
    for chip in _measured_chips(hw):
        if not _same_vendor(chip, hw):
            continue
        mine = df[df["hardware"].astype(str) == chip]
        slopes = []
        for _, g in mine.groupby(["kernel", "n_q_heads", "n_kv_heads", "head_dim", "kv_precision", "kv_len_tok"],
                                 dropna=False):
            if g["batch"].nunique() < 2:
                continue
            lo, hi = g.loc[g["batch"].astype(float).idxmin()], g.loc[g["batch"].astype(float).idxmax()]
            units = (float(hi["batch"]) - float(lo["batch"])) * float(hi["n_kv_heads"])
            slopes.append((float(hi["value"]) - float(lo["value"])) / units)
        if slopes:
            return float(np.median(slopes)), chip
    return 0.0, ""


def _compute_precision(weight_precision: str) -> str:
    """The tensor-path precision GEMMs on ``weight_precision`` weights compute at."""
    return {"int4": "int4", "fp4": "fp4", "mxfp4": "mxfp4", "nvfp4": "nvfp4", "fp8": "fp8",
            "int8": "int8", "fp8-mxfp4": "fp8", "int4-g128": "int4-g128"}.get(weight_precision, "bf16")
