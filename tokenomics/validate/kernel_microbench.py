"""The per-operator times of the core checked against published kernel microbenchmarks
(``datasets/kernel_microbench.csv``): each row timed by :func:`tokenomics.perf.kernels.kernel_op_time`
and compared with its measurement, then summarized by operator and size."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..errors import DataError
from ..perf.kernels import SMALL_WORK_S, kernel_op_time, read_kernel_microbench

if TYPE_CHECKING:
    import pandas as pd

    from ..perf.profile import Profile


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
