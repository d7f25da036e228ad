"""Fit hardware and execution-plan parameters on measured steps, and validate predictions.

The fit changes only parameters of the hardware and of the execution plans (achievable
bandwidth fractions, GEMM efficiency curve, per-kernel costs in a graph and in eager mode),
never per-model factors: :func:`fit_profile` minimises the relative error of every measured
case with :func:`scipy.optimize.least_squares` (soft-L1 robust loss, so a few noisy eager runs
do not drag the rest), plus the large-GEMM points of the H200 microbenchmark, plus a weak pull of
every parameter towards its start (:data:`ANCHOR_WEIGHT`), so a parameter the cases do not
exercise keeps its default (listed in the profile's ``metrics["unconstrained"]``).

Cases follow the schema of ``datasets/h200_cases.csv`` (see ``../shared/calibration/README.md``).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Callable

import numpy as np

from ..catalog import accelerator
from ..errors import DataError
from ..io import Column
from ..perf.kernels import int_cell
from ..perf.profile import FIT_BOUNDS, Profile, load_profile
from ..specs import ExecutionPlan, ModelSpec

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

CASE_COLUMNS = (
    "case_id", "phase", "hardware", "n_layers", "hidden", "ffn_hidden", "n_q_heads", "n_kv_heads",
    "head_dim", "vocab", "n_experts", "experts_per_token", "expert_ffn_hidden",
    "weight_bytes_per_param", "kv_bytes_per_elem", "batch", "context_tok", "tokens_per_step",
    "execution", "fusion",
)
_PREC = {4.0: "fp32", 2.0: "bf16", 1.0: "fp8", 0.5: "int4"}


_INT_COLUMNS = {  # column: (minimum, required)
    "n_layers": (1, True), "hidden": (1, True), "ffn_hidden": (0, True), "n_q_heads": (1, True),
    "n_kv_heads": (1, True), "head_dim": (1, True), "vocab": (0, True), "n_experts": (0, False),
    "experts_per_token": (0, False), "expert_ffn_hidden": (0, False), "batch": (1, True),
    "context_tok": (0, True), "tokens_per_step": (1, True), "n_chips": (1, False),
}
_CHOICES = {"phase": ("decode", "prefill"), "execution": ("eager", "graph", "megakernel"),
            "fusion": ("unfused", "fused_qkv_gateup", "engine", "super")}


def case_schema(need_measured: bool = False) -> "tuple":
    """The declared columns of a cases file (:class:`tokenomics.io.Column`): counts as whole
    numbers in range, bytes per parameter and per KV element 4, 2, 1 or 0.5, ``phase``,
    ``execution`` and ``fusion`` known words, ``kernels_per_step`` >= 1 and ``measured_step_s``
    > 0 [s] where given (every row with ``need_measured``), ``expert_compute`` touched or all."""
    precision = "4, 2, 1 or 0.5 (fp32, bf16, fp8, int4)"
    return (
        Column("phase", "choice", choices=_CHOICES["phase"]),
        *(Column(c, "integer", minimum=lo, required=req, optional=c not in CASE_COLUMNS)
          for c, (lo, req) in _INT_COLUMNS.items()),
        *(Column(c, "number", minimum=0.0, strict_minimum=True, values=tuple(_PREC), expected=precision)
          for c in ("weight_bytes_per_param", "kv_bytes_per_elem")),
        Column("execution", "choice", choices=_CHOICES["execution"]),
        Column("fusion", "choice", choices=_CHOICES["fusion"]),
        Column("kernels_per_step", "number", minimum=1.0, required=False, optional=True),
        Column("measured_step_s", "number", minimum=0.0, strict_minimum=True, unit="s", required=need_measured,
               optional=not need_measured),
        Column("expert_compute", "choice", choices=("touched", "all"), required=False, optional=True,
               expected="touched, all or empty"),
    )


def read_cases(source, *, need_measured: bool = False) -> "pd.DataFrame":
    """Read a cases CSV (or check a DataFrame) in the schema of ``datasets/h200_cases.csv``.

    Every cell is checked against :func:`case_schema` and a prefill needs ``context_tok`` >= 1;
    a file with bad cells is refused whole (a fit needs every row), with each bad cell named.

    Parameters
    ----------
    source : path or DataFrame
        The CSV file or its rows.
    need_measured : bool
        Require a ``measured_step_s`` in every row.

    Returns
    -------
    pandas.DataFrame
        A checked copy with numeric columns as numbers.

    Raises
    ------
    DataError
        One line naming the file and each bad cell (row, line, column, what was expected).
    """

    import numpy as np

    from ..io import check_frame, frame_problems, read_csv, schema_columns

    what = "cases" if not isinstance(source, (str, bytes)) and not hasattr(source, "__fspath__") else "cases file"
    schema = case_schema(need_measured)
    req = tuple(dict.fromkeys(CASE_COLUMNS + schema_columns(schema)))
    df = read_csv(source, what, required=req)
    label = what if what == "cases" else f"cases file {str(source)!r}"
    problems = frame_problems(df, schema)
    bad_rows = {i for i, _ in problems}
    pre = [(int(i), "a prefill needs context_tok (the prompt) >= 1, got 0") for i in
           np.flatnonzero(((df["phase"] == "prefill") & (df["context_tok"] < 1)).to_numpy()) if int(i) not in bad_rows]
    return check_frame(df, (), label, extra=[*problems, *pre])


def case_model(row) -> ModelSpec:
    """The architecture of one case row."""
    n_exp = int_cell(row.get("n_experts"))
    return ModelSpec(
        name=str(row.get("model", "case")), n_layers=int_cell(row["n_layers"]), hidden=int_cell(row["hidden"]),
        n_q_heads=int_cell(row["n_q_heads"]), n_kv_heads=int_cell(row["n_kv_heads"]), head_dim=int_cell(row["head_dim"]),
        ffn_hidden=int_cell(row["ffn_hidden"]), vocab=int_cell(row["vocab"]),
        n_moe_layers=int_cell(row["n_layers"]) if n_exp else 0, n_experts=n_exp,
        experts_per_token=int_cell(row.get("experts_per_token")), expert_ffn_hidden=int_cell(row.get("expert_ffn_hidden")),
        native_precision=_PREC.get(float(row["weight_bytes_per_param"]), "bf16"),
    )


def case_plan(row, use_measured_kernels: bool = True) -> ExecutionPlan:
    """The execution plan of one case row (measured kernel count used when present)."""
    ec = row.get("expert_compute")
    ec = "touched" if not isinstance(ec, str) or not ec else ec
    k = row.get("kernels_per_step")
    kps = float(k) if use_measured_kernels and k is not None and not (isinstance(k, float) and math.isnan(k)) else None
    return ExecutionPlan(name=f"{row['execution']}/{row['fusion']}", launch=str(row["execution"]),
                         fusion=str(row["fusion"]), expert_compute=ec, kernels_per_step=kps)


def predict_cases(cases: "pd.DataFrame", profile: Profile | str | None = None,
                  use_measured_kernels: bool = True, *, _checked: bool = False) -> "pd.DataFrame":
    """Predict every case; returns the per-case table.

    Columns: case_id, phase, model, execution, fusion, batch, context_tok, tokens_per_step,
    kernels_per_step (used), kernels_estimated (bool), predicted_step_s, measured_step_s,
    error_frac (predicted / measured - 1), bound, hbm_util_frac and flop_util_frac (the predicted
    step's bytes and FLOPs over its time at datasheet rates, what board power is priced from).
    """
    import pandas as pd

    from ..perf.step import decode_step, prefill

    if not _checked:
        cases = read_cases(cases)
    rows = []
    for _, row in cases.iterrows():
        hw = accelerator(str(row["hardware"]))
        prof = load_profile(profile, hw.name)
        m = case_model(row)
        p = case_plan(row, use_measured_kernels)
        kv = _PREC.get(float(row["kv_bytes_per_elem"]), "bf16")
        tp = max(int_cell(row.get("n_chips"), 1), 1)
        if str(row["phase"]) == "prefill":
            r = prefill(hw, m, p, prompt_tok=int_cell(row["context_tok"]), batch=int_cell(row["batch"]),
                        kv_precision=kv, profile=prof, on_oom="ignore", tp=tp)
        else:
            r = decode_step(hw, m, p, batch=int_cell(row["batch"]), context_tok=int_cell(row["context_tok"]),
                            tokens_per_step=int_cell(row["tokens_per_step"], 1), kv_precision=kv, profile=prof,
                            on_oom="ignore", tp=tp)
        meas = float(row["measured_step_s"]) if "measured_step_s" in row and pd.notna(row.get("measured_step_s")) else np.nan
        pred = float(r.step_time_s)
        rows.append({
            "case_id": row["case_id"], "phase": row["phase"], "model": m.name, "execution": row["execution"],
            "fusion": row["fusion"], "batch": int_cell(row["batch"]), "context_tok": int_cell(row["context_tok"]),
            "tokens_per_step": int_cell(row["tokens_per_step"], 1),
            "kernels_per_step": float(r.n_kernels), "kernels_estimated": p.kernels_per_step is None,
            "predicted_step_s": pred, "measured_step_s": meas, "error_frac": pred / meas - 1.0,
            "bound": str(r.bound), "hbm_util_frac": float(r.hbm_util_frac), "flop_util_frac": float(r.flop_util_frac),
        })
    return pd.DataFrame(rows)


def summarize(pred: "pd.DataFrame", by: tuple[str, ...] = ()) -> "pd.DataFrame":
    """Absolute relative error and bias per execution mode (and overall).

    Parameters
    ----------
    pred : DataFrame
        The table of :func:`predict_cases` (or of :func:`leave_regime_out`).
    by : tuple of str
        Columns to group by before the execution mode (``("held_out",)`` for a hold-out table).

    Returns
    -------
    pandas.DataFrame
        One row per group and execution mode plus an ``all`` row per group: ``n_cases``,
        ``median_abs_error_frac``, ``p90_abs_error_frac``, ``max_abs_error_frac`` [fraction] and
        ``median_ratio`` (median predicted / measured).
    """
    import pandas as pd

    if not isinstance(pred, pd.DataFrame):
        raise DataError(f"summarize needs the DataFrame of predict_cases, got {type(pred).__name__}")
    need = {"error_frac", "execution", *by}
    if not need <= set(pred.columns):
        raise DataError(f"summarize needs the DataFrame of predict_cases (columns {', '.join(sorted(need))}); "
                        f"got columns {list(pred.columns)[:8]}")
    d = pred.dropna(subset=["error_frac"]).copy()
    d["abs_err"] = d["error_frac"].abs()
    groups = list(d.groupby(list(by), sort=False)) if by else [((), d)]
    out = []
    for key, part in groups:
        key = key if isinstance(key, tuple) else (key,)
        for mode, g in list(part.groupby("execution")) + [("all", part)]:
            out.append({**dict(zip(by, key)), "execution": mode, "n_cases": len(g),
                        "median_abs_error_frac": float(g["abs_err"].median()),
                        "p90_abs_error_frac": float(g["abs_err"].quantile(0.9)),
                        "max_abs_error_frac": float(g["abs_err"].max()),
                        "median_ratio": float((1.0 + g["error_frac"]).median())})
    return pd.DataFrame(out)


#: Declared columns of a microbenchmark file (:class:`tokenomics.io.Column`); the rows the fit
#: uses also need ``value`` and ``seconds`` (:func:`read_microbench`).
MICROBENCH_SCHEMA = (
    Column("experiment", "text", required=False),
    Column("value", "number", minimum=0.0, strict_minimum=True, required=False),
    Column("seconds", "number", minimum=0.0, strict_minimum=True, required=False, unit="s"),
    Column("note", "text", required=False),
)


def read_microbench(source) -> "pd.DataFrame":
    """Read a microbenchmark CSV (or check a DataFrame) in the schema of
    ``datasets/h200_microbench.csv``: ``experiment``, ``value``, ``seconds``, ``note``; the rows
    the fit uses (``gemm``, ``gemm_peak``, ``hbm_read_reduce``, ``launch_graph``) need positive
    finite numbers, and ``gemm`` rows a note starting ``m=<rows>``."""
    import numpy as np

    from ..io import check_frame, frame_problems, read_csv, schema_columns

    what = "microbench" if not isinstance(source, (str, bytes)) and not hasattr(source, "__fspath__") else "microbench file"
    df = read_csv(source, what, required=schema_columns(MICROBENCH_SCHEMA))
    label = what if what == "microbench" else f"microbench file {str(source)!r}"
    used = df["experiment"].astype(str).isin(("gemm", "gemm_peak", "hbm_read_reduce", "launch_graph")).to_numpy()
    problems = frame_problems(df, MICROBENCH_SCHEMA)
    bad = {(i, d.split(" ")[0]) for i, d in problems}
    for col in ("value", "seconds"):
        problems += [(int(i), f"{col} is missing in a {df['experiment'].iloc[i]} row; expected "
                              f"{MICROBENCH_SCHEMA[1 if col == 'value' else 2].expectation()}")
                     for i in np.flatnonzero(used & df[col].isna().to_numpy()) if (int(i), col) not in bad]
    for i in np.flatnonzero((df["experiment"].astype(str) == "gemm").to_numpy()):
        note = str(df["note"].iloc[i])
        try:
            m = int(note.split(";")[0].split("=")[1])
            ok = note.startswith("m=") and m >= 1
        except (IndexError, ValueError):
            ok = False
        if not ok:
            problems.append((int(i), f"note: a gemm row needs a note 'm=<rows>;...', got {note!r}"))
    return check_frame(df, (), label, extra=problems)


def _gemm_points(microbench: "pd.DataFrame | None"):
    """Large-GEMM rows of the microbenchmark: (m, k, n, seconds). Rows below m=512 are
    dominated by per-call overheads of that benchmark and are left out."""
    if microbench is None:
        return []
    pts = []
    for _, r in microbench.iterrows():
        if r["experiment"] == "gemm":
            m = int(str(r["note"]).split(";")[0].split("=")[1])
            if m >= 512:
                pts.append((m, 8192, 8192, float(r["seconds"])))
        elif r["experiment"] == "gemm_peak":
            pts.append((8192, 8192, 8192, float(r["seconds"])))
    return pts


def microbench_priors(microbench: "pd.DataFrame | None", hw) -> dict[str, tuple[float, float]]:
    """Measured ceilings as soft priors: parameter -> (value, relative sigma).

    The read-only HBM reduce gives ``weight_bw_frac`` (4.00 TB/s over the 4.8 TB/s datasheet on
    the H200), the 8192^3 GEMM gives ``flop_frac``; a tiny kernel in a CUDA graph gives a weak
    prior on ``graph_kernel_s`` (real kernels also ramp up and drain, so sigma is 100 %).
    """
    if microbench is None:
        return {}
    pri = {}
    for _, r in microbench.iterrows():
        if r["experiment"] == "hbm_read_reduce":
            pri["weight_bw_frac"] = (float(r["value"]) / hw.hbm_bytes_per_s, 0.05)
        elif r["experiment"] == "gemm_peak":
            pri["flop_frac"] = (float(r["value"]) / hw.peak_bf16_flop_per_s, 0.05)
        elif r["experiment"] == "launch_graph":
            pri["graph_kernel_s"] = (float(r["value"]), 1.0)
    return pri


def _gemm_time(m, k, n, hw, prof) -> float:
    from ..perf.ops import Op
    from ..perf.roofline import op_times

    one = np.asarray(1.0)
    op = Op("gemm", "gemm", 1, one * k * n * 2, one * m * (k + n) * 2, 0 * one, one * 2 * m * k * n,
            one * m, one, one)
    return float(op_times([op], hw, prof, hw.peak_bf16_flop_per_s)[0].time_s)


#: Weight of each fitted parameter's pull towards its start value, per optimizer unit (fractions,
#: microseconds, hundreds of GEMM rows). A parameter the cases do not constrain (the attention
#: FLOP efficiency when every compute-bound case is held out) otherwise drifts wherever the
#: finite-difference noise of its flat direction sends it: with ``x_scale="jac"``, a 1e-16 change
#: in how a CSV's floats were parsed moved a held-out regime's eager error from 28 % to 12 %.
#: Against relative-error residuals of 0.01-0.1 it moves a constrained parameter by ~1e-6 of
#: itself; a free one stays at its start (the profile default).
ANCHOR_WEIGHT = 1e-3


def fit_profile(
    cases: "pd.DataFrame",
    *,
    hardware: str | None = None,
    microbench: "pd.DataFrame | None" = None,
    kernel_bench: "pd.DataFrame | None" = None,
    start: Profile | None = None,
    params: tuple[str, ...] = tuple(FIT_BOUNDS),
    name: str | None = None,
    source: str = "",
) -> Profile:
    """Fit a profile's parameters to measured cases (least squares on relative error).

    Parameters
    ----------
    cases : DataFrame
        Rows in the ``h200_cases.csv`` schema with ``measured_step_s``.
    hardware : str, optional
        Accelerator; default: the cases' ``hardware`` (must be one).
    microbench : DataFrame, optional
        ``h200_microbench.csv``-style rows; its large-GEMM points join the fit.
    kernel_bench : DataFrame or path, optional
        Published kernel timings (``kernel_microbench.csv`` schema). With >= 6 measured bf16
        decode-attention rows of the hardware, the KV read curve (``kv_bw_frac``,
        ``kv_bw_small_frac``, ``kv_bw_half_bytes``) is fitted on them first
        (:func:`tokenomics.perf.kernels.fit_kv_read_curve`) and held: the measured steps only
        read KV caches of up to ~0.5 GB per layer and cannot place the curve's large-read end.
        Without such rows the KV bandwidth stays one fitted fraction.
    start : Profile, optional
        Starting point (default: the profile defaults).
    params : tuple of str
        Which parameters to fit (others stay at ``start``).

    Returns
    -------
    Profile
        With ``fitted_on`` listing the case ids and ``metrics`` the in-sample errors and
        ``unconstrained`` (comma-separated names of the parameters no case, GEMM point or prior
        moves at the solution; they stay at ``start``).
    """
    from scipy.optimize import least_squares

    cases = read_cases(cases, need_measured=True)
    hws = sorted(set(cases["hardware"].astype(str)))
    if hardware is None:
        if len(hws) != 1:
            raise DataError(f"cases mix hardware {hws}; fit one accelerator at a time (pass hardware=)")
        hardware = hws[0]
    cases = cases[cases["hardware"].astype(str) == hardware]
    if cases.empty:
        raise DataError(f"no cases for hardware {hardware!r}; the cases hold {hws}")
    hw = accelerator(hardware)
    base = start or Profile(name or hardware)
    unknown = [p for p in params if p not in FIT_BOUNDS]
    if unknown:
        raise DataError(f"cannot fit {unknown}; fittable: {sorted(FIT_BOUNDS)}")
    curve_note = ""
    if kernel_bench is not None:
        from ..perf.kernels import (
            KV_CURVE_PARAMS,
            fit_kv_read_curve,
            kv_curve_rows,
            read_kernel_microbench,
        )

        kb = read_kernel_microbench(kernel_bench)
        if len(kv_curve_rows(kb, hw.name)) >= 6:
            curve = fit_kv_read_curve(kb, hw.name, profile=base)
            base = base.replace(**{k: curve[k] for k in KV_CURVE_PARAMS})
            params = tuple(p for p in params if p != "kv_bw_frac")
            curve_note = f" + KV read curve fitted on {curve['n_rows']} decode-attention rows of kernel_microbench.csv"
    # scale parameters to O(1) for the optimizer
    scale = np.array([1e-6 if p.endswith("_s") else (100.0 if p == "gemm_half_rows" else 1.0) for p in params])
    x0 = np.array([getattr(base, p) for p in params]) / scale
    lo = np.array([FIT_BOUNDS[p][0] for p in params]) / scale
    hi = np.array([FIT_BOUNDS[p][1] for p in params]) / scale
    x0 = np.clip(x0, lo + 1e-9, hi - 1e-9)
    if microbench is not None:
        microbench = read_microbench(microbench)
    gemm_pts = _gemm_points(microbench)
    priors = {k: val for k, val in microbench_priors(microbench, hw).items() if k in params}
    meas = cases["measured_step_s"].to_numpy(float)
    n_obs = len(cases) + len(gemm_pts) + len(priors)
    if n_obs < len(params):
        raise DataError(f"fitting {len(params)} parameters ({', '.join(params)}) needs at least as many "
                        f"measurements; got {len(cases)} cases, {len(gemm_pts)} GEMM points and {len(priors)} "
                        "microbenchmark priors (add cases, pass --microbench, or fit fewer parameters)")

    def make(x) -> Profile:
        return base.replace(**{p: float(val) for p, val in zip(params, x * scale)})

    def resid(x):
        prof = make(x)
        pred = predict_cases(cases, prof, _checked=True)["predicted_step_s"].to_numpy(float)
        r = list(pred / meas - 1.0)
        r += [_gemm_time(m, k, n, hw, prof) / s - 1.0 for m, k, n, s in gemm_pts]
        r += [(getattr(prof, k) / val - 1.0) * (0.05 / sig) for k, (val, sig) in priors.items()]
        r += list(ANCHOR_WEIGHT * (x - x0))
        return np.asarray(r)

    sol = least_squares(resid, x0, bounds=(lo, hi), loss="soft_l1", f_scale=0.1, x_scale="jac", max_nfev=200,
                        ftol=1e-12, xtol=1e-12, gtol=1e-12)
    prof = make(sol.x)
    pred = predict_cases(cases, prof, _checked=True)
    summ = summarize(pred)
    metrics = {f"{r.execution}_median_abs_error_frac": round(r.median_abs_error_frac, 4) for r in summ.itertuples()}
    metrics.update({f"{r.execution}_p90_abs_error_frac": round(r.p90_abs_error_frac, 4) for r in summ.itertuples()})
    # parameters no case, GEMM point or prior moves at the solution: kept at their start by the anchor
    moved = np.max(np.abs(sol.jac[:n_obs]), axis=0) if n_obs else np.zeros(len(params))
    metrics["unconstrained"] = ",".join(p for p, m in zip(params, moved) if m < 1e-9)
    import datetime as _dt

    return prof.replace(
        # no megakernel measurement exists: an in-kernel layer barrier is taken to cost what a
        # kernel boundary costs inside a graph (an explicit assumption)
        megakernel_layer_s=prof.graph_kernel_s,
        name=name or hardware,
        source=source or "fitted by tokenomics.validate.calibrate.fit_profile (scipy least_squares, soft-L1 on relative error)",
        fitted_on=",".join(map(str, cases["case_id"])) + (
            " + microbench large-GEMM points and priors " + ",".join(sorted(priors)) if gemm_pts else "") + curve_note,
        as_of=_dt.date.today().isoformat(),
        metrics=metrics,
    )


#: Regimes of :func:`leave_regime_out`: name -> (what it holds out, test on the cases' columns).
#: Every test reads only case columns, so any cases CSV of the schema can be split the same way.
REGIMES: dict[str, tuple[str, Callable[["pd.DataFrame"], "pd.Series"]]] = {
    "verify": ("decode steps of several new tokens per sequence (tokens_per_step > 1)",
               lambda d: (d["phase"] == "decode") & (d["tokens_per_step"] > 1)),
    "large-batch": ("steps of batch >= 128", lambda d: d["batch"] >= 128),
    "prefill": ("prefills (phase prefill)", lambda d: d["phase"] == "prefill"),
    "long-context": ("steps attending to >= 4096 positions (context_tok; a prefill's prompt)",
                     lambda d: d["context_tok"] >= 4096),
    "small-model": ("models of hidden size <= 2048", lambda d: d["hidden"] <= 2048),
    "large-model": ("models of hidden size >= 4096", lambda d: d["hidden"] >= 4096),
    "graph": ("CUDA-graph steps (fit on eager runs only)", lambda d: d["execution"] == "graph"),
    "unfused": ("unfused plans (separate q/k/v and gate/up GEMMs)", lambda d: d["fusion"] == "unfused"),
}


def _leave_out(cases: "pd.DataFrame", microbench: "pd.DataFrame | None", kernel_bench: "pd.DataFrame | None",
               groups: list[tuple[str, np.ndarray]]) -> "pd.DataFrame":
    """Fit on the cases outside each group and predict the group's cases; one table for all.

    The KV read curve (from ``kernel_bench``, independent of the cases) is fitted once and held
    in every fit. Returns the columns of :func:`predict_cases` plus ``held_out`` (the group's
    label) and ``n_fit`` (cases the fit saw).
    """
    import pandas as pd

    start, params = None, tuple(FIT_BOUNDS)
    hws = sorted(set(cases["hardware"].astype(str)))
    if kernel_bench is not None and len(hws) == 1:
        from ..perf.kernels import (
            KV_CURVE_PARAMS,
            fit_kv_read_curve,
            kv_curve_rows,
            read_kernel_microbench,
        )

        kernel_bench = read_kernel_microbench(kernel_bench)
        hw = accelerator(hws[0]).name
        if len(kv_curve_rows(kernel_bench, hw)) >= 6:
            base = Profile(hws[0])
            curve = fit_kv_read_curve(kernel_bench, hw, profile=base)
            start = base.replace(**{k: curve[k] for k in KV_CURVE_PARAMS})
            params = tuple(p for p in params if p != "kv_bw_frac")
    outs = []
    for label, mask in groups:
        train, test = cases[~mask], cases[mask]
        prof = fit_profile(train, microbench=microbench, start=start, params=params)
        p = predict_cases(test, prof, _checked=True)
        p["held_out"] = label
        p["n_fit"] = len(train)
        outs.append(p)
    return pd.concat(outs, ignore_index=True)


def leave_one_model_out(cases: "pd.DataFrame", microbench: "pd.DataFrame | None" = None,
                        kernel_bench: "pd.DataFrame | None" = None) -> "pd.DataFrame":
    """Fit on all models but one, predict the held-out model's cases; repeat for each model.

    ``microbench`` and ``kernel_bench`` join every fit as in :func:`fit_profile`. Returns the
    table of :func:`predict_cases` with ``held_out`` (the model label) and ``n_fit``.
    """
    cases = read_cases(cases, need_measured=True)
    if "model" not in cases.columns:
        raise DataError("leave_one_model_out needs a model column naming each case's model")
    if microbench is not None:
        microbench = read_microbench(microbench)
    labels = cases["model"].astype(str)
    if labels.nunique() < 2:
        raise DataError(f"leaving one model out needs cases of at least 2 models; these hold only "
                        f"{sorted(set(labels))}")
    return _leave_out(cases, microbench, kernel_bench, [(m, (labels == m).to_numpy()) for m in sorted(set(labels))])


def leave_regime_out(
    cases: "pd.DataFrame",
    microbench: "pd.DataFrame | None" = None,
    regimes: "tuple[str, ...] | list[str] | str | None" = None,
    kernel_bench: "pd.DataFrame | None" = None,
) -> "pd.DataFrame":
    """Regime-out validation: fit without one regime of the cases, predict it; for each regime.

    Parameters
    ----------
    cases : DataFrame or path
        Measured steps in the ``h200_cases.csv`` schema (``measured_step_s`` in every row).
    microbench : DataFrame, optional
        ``h200_microbench.csv``-style ceilings and GEMM points; they join every fit (they are
        not a regime of the cases).
    kernel_bench : DataFrame or path, optional
        Published kernel timings; the KV read curve fitted on them joins every fit (see
        :func:`fit_profile`).
    regimes : sequence of str or comma-separated str, optional
        Names from :data:`REGIMES`; default all of them. Without a name, a regime that selects
        no case or every case of ``cases`` is skipped (nothing to predict or to fit on), and its
        name is listed in ``attrs["skipped"]``; a named one is an error.

    Returns
    -------
    pandas.DataFrame
        The table of :func:`predict_cases` for every held-out case, with ``held_out`` (the
        regime) and ``n_fit`` (cases the fit saw); a case in several regimes appears once per
        regime. ``summarize(table, by=("held_out",))`` gives the errors by regime.

    Raises
    ------
    UnknownNameError
        An unknown regime (one line, with the closest names).
    DataError
        A named regime that holds out no case or every case.
    """
    from ..errors import unknown_name

    named = regimes is not None
    if regimes is None:
        names = list(REGIMES)
    else:
        names = [x.strip() for x in regimes.split(",")] if isinstance(regimes, str) else [str(x).strip() for x in regimes]
        if not any(names):
            raise DataError(f"no regime named; choose from {', '.join(REGIMES)}")
        if not all(names):
            raise DataError(f"regime list {regimes!r} has an empty name between commas; choose from "
                            f"{', '.join(REGIMES)}")
    for n in names:
        if n not in REGIMES:
            raise unknown_name("regime", n, REGIMES)
    cases = read_cases(cases, need_measured=True)
    if microbench is not None:
        microbench = read_microbench(microbench)
    groups, skipped = [], []
    for n in dict.fromkeys(names):
        mask = np.asarray(REGIMES[n][1](cases), dtype=bool)
        if 0 < mask.sum() < len(cases):
            groups.append((n, mask))
        elif named:
            what = "no case" if mask.sum() == 0 else "every case"
            raise DataError(f"regime {n!r} ({REGIMES[n][0]}) holds out {what} of the {len(cases)}; "
                            "nothing to " + ("predict" if mask.sum() == 0 else "fit on"))
        else:
            skipped.append(n)
    if not groups:
        raise DataError(f"no regime splits these {len(cases)} cases into a fit set and a held-out set")
    out = _leave_out(cases, microbench, kernel_bench, groups)
    out.attrs["skipped"] = skipped
    return out
