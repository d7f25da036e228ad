"""Fit serving-engine parameters on published serving results (the model
:mod:`tokenomics.perf.serving`, scored by :mod:`tokenomics.validate.serving_cases`).

Only engine parameters are fitted: the per-kernel iteration cost of each (engine, vendor) seen in
the fit set, and a per-request TTFT overhead per vendor shared by its engines. Hardware
efficiencies come from microbenchmarks (``perf.profile.transfer_profile``), never from these
rows. Engines or vendors absent from the fit set get the ``default`` row of their vendor: the
median of that vendor's fitted engines.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import ValidationError

Group = tuple[str, str]  # (engine, vendor)


def _with_defaults(values: dict[Group, float]) -> dict[Group, float]:
    """``values`` plus a ``default`` row per vendor (the median of its fitted engines) and
    ``(default, any)`` (the median of all); non-finite values are skipped, 0 where none is left."""
    def med(xs):
        xs = [x for x in xs if np.isfinite(x)]
        return float(np.median(xs)) if xs else 0.0

    out = dict(values)
    for vd in {g[1] for g in values}:
        out[("default", vd)] = med([x for g, x in values.items() if g[1] == vd])
    out[("default", "any")] = med(list(values.values()))
    return out


def _table(kernel_s: dict[Group, float], ttft_s: dict[Group, float], source: str, as_of: str):
    """An engines table (schema of ``datasets/engines.csv``) from per-group parameters with defaults."""
    import pandas as pd

    kernel_s, ttft_s = _with_defaults(kernel_s), _with_defaults(ttft_s)
    rows = []
    for (eng, vend), val in sorted(kernel_s.items()):
        ttft = ttft_s.get((eng, vend), 0.0)
        rows.append({"engine": eng, "vendor": vend, "kernel_overhead_s": float(val),
                     "ttft_overhead_s": float(ttft) if np.isfinite(ttft) else 0.0,
                     "max_seqs": MAX_SEQS.get(eng, 1024.0), "kind": "fitted", "source": source,
                     "as_of": as_of, "note": ""})
    return pd.DataFrame(rows)


#: Sequence caps (offline runs): vLLM ``max_num_seqs`` default 1024 on GPUs of 70 GiB and more (A100
#: excepted; 256 below: :func:`tokenomics.perf.engines.default_max_seqs`, from vLLM's
#: ``EngineArgs.get_batch_defaults``); TensorRT-LLM ``max_batch_size`` default 2048; SGLang and
#: others: ASSUMPTION 1024.
MAX_SEQS = {"vllm": 1024.0, "trt": 2048.0, "sglang": 1024.0, "default": 1024.0}


def fit_engines(cases: Any, *, source: str = "", as_of: str = "", profile: Any = None):
    """Fit each (engine, vendor)'s per-kernel iteration cost on ``cases`` (serve rows).

    Least squares on log(predicted / measured) output tokens/s per GPU, one parameter per
    (engine, vendor) group, bounded to [0, 200 us] per kernel; then each group's per-request
    TTFT overhead as the median of measured - predicted TTFT over all rows of its vendor (0 where
    none is measured; ``default`` rows take the medians).

    Returns
    -------
    pandas.DataFrame
        An engines table (schema of ``datasets/engines.csv``) including ``default`` rows.
    """
    from scipy.optimize import least_squares

    from ..catalog import accelerator
    from ..perf.engines import priced_engine
    from .serving_cases import predict_cases, read_cases

    df = read_cases(cases)
    df = df[df["phase"] == "serve"].reset_index(drop=True)
    if df.empty:
        raise ValidationError("fitting engine parameters needs serve rows (concurrency given)")
    vendor = df["hardware"].map(lambda h: accelerator(h).vendor.lower())
    engine = df["engine"].map(priced_engine)  # the engine whose row prices it (dynamo-trt: trt; atom: default)
    groups = sorted(set(zip(engine, vendor)))

    def table(x, ttft=None):
        return _table(dict(zip(groups, x)), ttft or {}, source, as_of)

    def resid(x):
        p = predict_cases(df, profile, engines=table(x))
        r = np.log(p["predicted_output_tok_per_s_per_gpu"].astype(float) / p["measured_output_tok_per_s_per_gpu"].astype(float))
        return np.nan_to_num(r.to_numpy(), nan=3.0)

    x0 = np.full(len(groups), 3e-6)
    fit = least_squares(resid, x0, bounds=(0.0, 2e-4), x_scale=1e-6, loss="soft_l1", f_scale=0.1,
                        diff_step=0.05, max_nfev=60)
    # per-request TTFT overhead: the median gap between measured and predicted TTFT over all rows
    # of the vendor, every engine pooled (one value per vendor: the median of a single engine's
    # few rows is taken over by the queueing collapses some rows show), never negative
    p = predict_cases(df, profile, engines=table(fit.x))
    gap = p["measured_ttft_s"].astype(float) - p["predicted_ttft_s"].astype(float) if "measured_ttft_s" in p else None
    per_vendor = {}
    for vd in set(vendor):
        gg = gap[vendor == vd].dropna() if gap is not None else []
        per_vendor[vd] = max(0.0, float(np.median(gg))) if len(gg) else float("nan")
    ttft = {g: per_vendor[g[1]] for g in groups}
    out = table(fit.x, ttft)
    n = {g: int(((engine == g[0]) & (vendor == g[1])).sum()) for g in groups}
    out["note"] = [f"fitted on {n[(r.engine, r.vendor)]} serve rows" if (r.engine, r.vendor) in n
                   else "median of this vendor's fitted engines (no rows of its own)" for r in out.itertuples()]
    return out


def leave_one_out(cases: Any, by: str = "hardware", *, profile: Any = None) -> "pd.DataFrame":  # noqa: F821
    """Refit the engine parameters without each ``by`` group and predict that group's rows.

    Returns
    -------
    pandas.DataFrame
        One row per held-out group: ``held_out``, ``n_cases``, ``median_abs_error_frac``,
        ``p90_abs_error_frac``, ``median_ratio`` (predicted / measured output tokens/s per GPU).
    """
    import pandas as pd

    from .serving_cases import predict_cases, read_cases

    df = read_cases(cases)
    rows = []
    for key, test in df.groupby(by):
        train = df[df[by] != key]
        if (train["phase"] == "serve").sum() == 0:
            continue
        table = fit_engines(train, source=f"leave-one-{by}-out ({key})", profile=profile)
        p = predict_cases(test, profile, engines=table)
        p = p[p["status"] == "predicted"]
        e = p["error_frac"].abs()
        rows.append({"held_out": key, "n_cases": len(p), "median_abs_error_frac": float(e.median()),
                     "p90_abs_error_frac": float(e.quantile(0.9)), "median_ratio": float(p["ratio"].median())})
    return pd.DataFrame(rows)
