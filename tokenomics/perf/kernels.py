"""The core's per-operator times against published kernel microbenchmarks.

``datasets/kernel_microbench.csv`` holds timings of single kernels measured outside this
project: decode and prefill attention on the H200 (NVIDIA aiconfigurator's vLLM FlashAttention-3
and TensorRT-LLM databases), DeepSeek FlashMLA on H800/H100, FlashAttention-3 decode on an
H100, and vLLM fused-MoE layers. :func:`predict_kernel_microbench` times the same operator at
the same shape, chip and precision with the core's roofline (:func:`tokenomics.perf.ops.build_ops`,
:func:`tokenomics.perf.roofline.op_times`) and the chip's profile, plus one kernel boundary per
kernel of the op in a CUDA graph (``graph_kernel_s``), since every benchmark replays its kernel
in a graph. Nothing here is fitted: it is an external check of regimes that
``datasets/h200_cases.csv`` does not contain (long context, MLA, MoE, engine kernels).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ..catalog import accelerator
from ..errors import DataError
from ..specs import ModelSpec, precision_bytes
from ..specs import plan as _plan
from .calibrate import _int as _to_int
from .ops import ENGINE_MOE, build_ops
from .profile import Profile, load_profile
from .roofline import op_times
from .step import (attention_unit_s, gemm_peak_flop_per_s, mla_kv_read_frac, moe_ceiling_params, moe_gemm_ratio,
                   moe_fixed_s, moe_stream_frac)

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

#: Operators the check can time, and the metrics it compares.
OPS = ("decode_attention", "prefill_attention", "mla_decode_attention", "moe_experts")
METRICS = ("latency_s", "kv_bandwidth_bytes_per_s")
#: A benchmark whose bytes and FLOPs take less than this at datasheet peaks is launch-latency
#: sized: its kernel's fixed start-up, tail and the graph launch dominate what was timed [s].
SMALL_WORK_S = 10e-6


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
        One line naming the row and value.
    """
    from ..catalog import load
    from ..io import choice_column, numeric_column, read_csv

    if source is None:
        df = load("kernel_microbench")
        label = "kernel_microbench.csv"
    else:
        req = ("bench_id", "hardware", "op", "batch", "kv_len_tok", "metric", "value", "kind", "source")
        df = read_csv(source, "kernel microbench", required=req)
        label = "kernel microbench"
    for col, choices in (("op", OPS), ("metric", METRICS)):
        df[col] = choice_column(df, col, label, choices)
    df["value"] = numeric_column(df, "value", label, minimum=0.0, strict_minimum=True)
    df["batch"] = numeric_column(df, "batch", label, minimum=1, integer=True)
    df["kv_len_tok"] = numeric_column(df, "kv_len_tok", label, minimum=0, integer=True)
    for hw in sorted(set(df["hardware"].astype(str))):
        accelerator(hw)  # unknown chips: one line with suggestions
    return df


def _int(row, col: str, default: int = 0) -> int:
    """Cell ``col`` of ``row`` as an int; ``default`` when absent, empty or not a number."""
    return _to_int(row.get(col), default)


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
        (:func:`~tokenomics.perf.step.moe_stream_frac`); False: at the core's weight-read rate
        (what that fit compares with).
    mla : bool
        Time an MLA row's KV reads at the chip's fitted MLA rate
        (:func:`~tokenomics.perf.step.mla_kv_read_frac`); False: at the core's KV read rate (what
        that fit compares with).
    blocks : bool
        Charge a GQA decode-attention row its (sequence, KV head) blocks at the chip's measured
        cost (:func:`~tokenomics.perf.step.attention_unit_s`); False: its KV read alone.
    fixed : bool
        Add an MoE row's fixed fused-layer latency (:func:`~tokenomics.perf.step.moe_fixed_s`) to
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


def predict_kernel_microbench(bench=None, profile: "Profile | str | None" = None) -> "pd.DataFrame":
    """Compare the core's per-operator times with published kernel microbenchmarks.

    Parameters
    ----------
    bench : path or DataFrame, optional
        Rows in the schema of ``datasets/kernel_microbench.csv``; default: that dataset.
    profile : Profile or str, optional
        One profile for every row; default: each chip's own (shipped or transferred).

    Returns
    -------
    pandas.DataFrame
        One row per benchmark: ``bench_id``, ``hardware``, ``op``, ``kernel``, ``kind``
        (measured or claimed), ``batch``, ``kv_len_tok``, ``metric``, ``measured``,
        ``predicted`` (same unit), ``error_frac`` (predicted / measured - 1), ``bound``,
        ``size`` (``small`` where the op's bytes and FLOPs take < 10 us at datasheet peaks, and a
        decode kernel's blocks at their measured cost too, where a benchmark is dominated by launch
        latency, else ``large``), ``measured_bytes_per_s`` and
        ``predicted_bytes_per_s`` (KV or expert bytes over the time) [B/s].
    """
    import pandas as pd

    df = read_kernel_microbench(bench)
    rows = []
    for _, r in df.iterrows():
        p = kernel_op_time(r, profile)
        meas = float(r["value"])
        if r["metric"] == "latency_s":
            pred = p["time_s"]
            meas_bw = p["kv_bytes"] / meas
        else:  # an achieved-bandwidth claim: the core's bandwidth in the op's own time
            pred = p["kv_bytes"] / p["op_time_s"]
            meas_bw = meas
        rows.append({
            "bench_id": r["bench_id"], "hardware": r["hardware"], "op": r["op"], "kernel": r.get("kernel", ""),
            "kind": r["kind"], "batch": int(r["batch"]), "kv_len_tok": int(r["kv_len_tok"]), "metric": r["metric"],
            "measured": meas, "predicted": pred, "error_frac": pred / meas - 1.0, "bound": p["bound"],
            "size": "small" if p["ideal_s"] < SMALL_WORK_S else "large",
            "measured_bytes_per_s": meas_bw, "predicted_bytes_per_s": p["kv_bytes"] / p["time_s"]
            if r["metric"] == "latency_s" else pred,
        })
    return pd.DataFrame(rows)


def summarize_kernel_microbench(pred: "pd.DataFrame") -> "pd.DataFrame":
    """Median and p90 absolute error and median predicted/measured by operator and size.

    Parameters
    ----------
    pred : DataFrame
        The table of :func:`predict_kernel_microbench`.

    Returns
    -------
    pandas.DataFrame
        Rows per ``op`` and ``size`` plus an ``all`` row per op: ``n``,
        ``median_abs_error_frac``, ``p90_abs_error_frac``, ``max_abs_error_frac`` [fraction],
        ``median_ratio``.
    """
    import pandas as pd

    if not isinstance(pred, pd.DataFrame) or not {"op", "size", "error_frac"} <= set(pred.columns):
        raise DataError("summarize_kernel_microbench needs the DataFrame of predict_kernel_microbench")
    out = []
    for op, g in pred.groupby("op", sort=False):
        for size, h in list(g.groupby("size")) + [("all", g)]:
            e = h["error_frac"]
            out.append({"op": op, "size": size, "n": len(h), "median_abs_error_frac": float(e.abs().median()),
                        "p90_abs_error_frac": float(e.abs().quantile(0.9)),
                        "max_abs_error_frac": float(e.abs().max()), "median_ratio": float((1 + e).median())})
    return pd.DataFrame(out)


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
        whole routed experts reach, :func:`tokenomics.perf.step.moe_gemm_ratio`; 1 = no
        measurement), ``slice_width_scale`` (``w`` of the narrow-slice form: how fast the ceiling
        falls as MoE tensor parallelism narrows each expert's slice; 0 = measured at one width)
        [columns], ``measured_on`` (the chip whose rows gave it, empty for none), and the fused
        layer's ``stream_frac`` (:func:`tokenomics.perf.step.moe_stream_frac`) and
        ``fixed_latency_s`` per call (:func:`tokenomics.perf.step.moe_fixed_s`) [s].
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
#: sequences costs its (sequence, KV head) blocks (:func:`tokenomics.perf.step.attention_unit_s`),
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
