"""Latency-throughput frontier of a model on a multi-chip system.

:func:`frontier` sweeps batch size and every parallel plan the model and system allow (tensor,
expert and pipeline parallel sizes; the remaining chips as data-parallel replicas), keeps the
configurations whose weights and KV cache fit each chip, and returns the Pareto frontier of
tokens/s per user against tokens/s per chip. Each parallel plan is one vectorized call over the
batch sizes.

:func:`mlperf_check` compares the frontier with the public MLPerf Inference results in
``datasets/measured_public.csv`` (a copy of ``../shared/reference/measured_public.csv``) (Llama-2-70B and Llama-3.1-405B on H100, H200,
B200, GB200, GB300, MI300X, MI325X): offline = the highest tokens/s on the frontier; server and
interactive = the highest tokens/s whose per-user rate meets the benchmark's TPOT limit. Two
bounds: decode only (prefill fully hidden) and decode plus a serial compute-bound prefill of each
prompt. Scheduling and TTFT limits are not modelled.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from .._display import Display
from ..errors import DataError, TokenomicsError, ValidationError
from ..specs import ModelSpec
from .parallel import ParallelPlan, System, check_plan, system as _system

#: Default batch sizes swept (sequences per replica).
BATCHES = np.unique(np.round(np.geomspace(1, 2048, 34))).astype(int)


def _divisors(n: int) -> list[int]:
    return [d for d in range(1, n + 1) if n % d == 0]


def parallel_plans(model: ModelSpec, sys_: System, max_pp: int = 8) -> list[ParallelPlan]:
    """Every :class:`ParallelPlan` that divides the model and tiles the system's chips."""
    out = []
    n = sys_.n_chips
    eps = _divisors(n) if model.is_moe else [1]
    for tp in _divisors(n):
        for ep in eps:
            for pp in [d for d in _divisors(n) if d <= max_pp]:
                try:
                    par = ParallelPlan(tp=tp, ep=ep, pp=pp)
                    if n % par.replica_chips:
                        continue
                    par = par.replace(dp=n // par.replica_chips)
                    check_plan(model, par, sys_)
                except TokenomicsError:
                    continue
                out.append(par)
    return out


def system_for(hardware: str) -> System:
    """The first catalogued system built from ``hardware`` (``"h200"`` -> ``dgx-h200``)."""
    from .parallel import systems_table

    df = systems_table()
    hits = df[df["accelerator"] == hardware]
    if hits.empty:
        from ..catalog import accelerator

        accelerator(hardware)  # unknown name -> suggestions
        raise ValidationError(f"no catalogued system is built from {hardware!r}; pass --system")
    return _system(str(hits.index[0]))


def pareto_mask(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Points not dominated in (x, y), both to maximize.

    Examples
    --------
    >>> pareto_mask(np.array([1, 2, 3, 2.5]), np.array([3, 2, 1, 1.5])).tolist()
    [True, True, True, True]
    >>> pareto_mask(np.array([1, 2, 1]), np.array([1, 2, 3])).tolist()
    [False, True, True]
    """
    x = np.asarray(x, float)
    y = np.asarray(y, float)
    order = np.lexsort((-y, -x))  # x descending, ties by y descending
    keep = np.zeros(len(x), bool)
    best_y = -np.inf
    for i in order:
        if y[i] > best_y:
            keep[i] = True
            best_y = y[i]
    return keep


@dataclass(frozen=True, repr=False)
class FrontierResult(Display):
    """All feasible configurations and their Pareto frontier.

    Attributes
    ----------
    points : pandas.DataFrame
        Every (parallel plan, batch) that fits: ``parallel, tp, ep, pp, dp, batch,
        tok_per_s_per_user, tok_per_s_per_chip, tok_per_s, step_time_s, on_frontier``.
    system, model, plan : str
    """

    _display_columns = ("parallel", "batch", "tok_per_s_per_user", "tok_per_s_per_chip", "step_time_s")

    points: Any
    system: str
    model: str
    plan: str

    @property
    def frontier(self):
        """The Pareto-optimal rows, sorted by tokens/s per user."""
        f = self.points[self.points["on_frontier"]]
        return f.sort_values("tok_per_s_per_user").reset_index(drop=True)

    def to_frame(self):
        """The frontier (what ``tokenomics frontier --format csv|json`` prints)."""
        return self.frontier.copy()

    def best_tok_per_s(self, min_tok_per_s_per_user: float = 0.0) -> float:
        """Highest system tokens/s among points giving each user at least the given rate."""
        p = self.points[self.points["tok_per_s_per_user"] >= min_tok_per_s_per_user]
        return float(p["tok_per_s_system"].max()) if len(p) else float("nan")

    def plot(self, path: "str | Path", measured: Any = None) -> Path:
        """Write a PNG of all points and the frontier (atomically); drawn by :func:`tokenomics.plot.frontier`.

        ``measured``: a frame with ``measured_tok_per_s_per_user`` and
        ``measured_output_tok_per_s_per_gpu`` (rows of a serving CSV) drawn over the frontier, as
        given: check its cells first (:func:`tokenomics.validate.serving_cases.check_cells`, or read
        the rows with :func:`~tokenomics.validate.serving_cases.read_cases`). Where it also
        holds ``predicted_tok_per_s_per_user`` and ``predicted_output_tok_per_s_per_gpu``
        (:func:`tokenomics.validate.serving_cases.predict_cases` of those rows, each at its own layout,
        lengths and concurrency), each prediction is drawn as a circle joined to its measurement.
        """
        from .. import plot
        from ..io import read_csv, save_png

        if measured is not None:
            cols = ("measured_tok_per_s_per_user", "measured_output_tok_per_s_per_gpu")
            measured = read_csv(measured, "measured points", required=cols, allow_empty=True)

        _, ax = plot._pyplot().subplots(figsize=(7.5, 5.0), dpi=110)
        plot.frontier(self, y="tok_per_s_per_chip", ax=ax,
                      title=f"{self.model} on {self.system} ({self.plan}): latency-throughput frontier")
        if measured is not None and len(measured):
            mx, my = measured["measured_tok_per_s_per_user"], measured["measured_output_tok_per_s_per_gpu"]
            pcols = ("predicted_tok_per_s_per_user", "predicted_output_tok_per_s_per_gpu")
            if all(c in measured.columns for c in pcols):
                px = measured[pcols[0]].astype(float)
                py = measured[pcols[1]].astype(float)
                ok = np.isfinite(px) & np.isfinite(py) & (px > 0) & (py > 0)
                for x0, y0, x1, y1 in zip(mx[ok], my[ok], px[ok], py[ok]):
                    ax.plot([x0, x1], [y0, y1], color="grey", lw=0.6, zorder=4)
                ax.scatter(px[ok], py[ok], marker="o", facecolors="none", edgecolors="tab:red", s=26,
                           zorder=5, label="predicted for each measured row (its own layout)")
            ax.scatter(mx, my, marker="x", color="black", s=30, zorder=6, label="measured (serving CSV)")
            ax.legend(loc="lower left", fontsize=8)
        save_png(ax.figure, path, dpi=100, bbox_inches="tight")
        return Path(path)


def frontier(system: "str | System", model: "str | ModelSpec", plan: str = "engine", *,
             batches: Any = None, context_tok: float = 4096, ar_impl: str = "auto",
             a2a_impl: str | None = None, weight_precision: str | None = None,
             kv_precision: str = "bf16", spec=None, max_pp: int = 8, plans: Any = None,
             expert_precision: str | None = None, ar_algo: str | None = None, overlap: str = "none",
             engine_step_s: float = 0.0, expert_balance: str = "none",
             kernel_release: tuple[str, str] | None = None) -> FrontierResult:
    """Pareto frontier of tokens/s per user vs tokens/s per chip for ``model`` on ``system``.

    Parameters
    ----------
    system : str or System
    model : str or ModelSpec
    plan : str
        Execution plan of each chip.
    batches : array of int, optional
        Batch sizes per replica to sweep (default :data:`BATCHES`).
    context_tok : float
        Cached tokens per sequence.
    ar_impl, a2a_impl : str
        Collective implementations.
    weight_precision, kv_precision : str
    spec : SpecDecode, optional
    max_pp : int
        Largest pipeline depth tried.
    plans : list of ParallelPlan, optional
        Only these layouts (e.g. one deployment's); default: every plan that divides the model.
    expert_precision : str, optional
        Routed/shared expert weights precision.
    ar_algo, overlap, engine_step_s, expert_balance, kernel_release
        As :func:`tokenomics.perf.system.system_step` (a deployment's frontier passes its own, so
        each point is the deployment's ``decode``).

    Raises
    ------
    DoesNotFitError
        When no plan and batch fits the chips' memory.
    """
    import pandas as pd

    from ..catalog import model as _model
    from ..errors import DoesNotFitError
    from .memory import usable_hbm_bytes
    from .parallel import memory_per_chip
    from .system import system_step

    sys_ = _system(system)
    m = model if isinstance(model, ModelSpec) else _model(model)
    b = np.asarray(BATCHES if batches is None else batches, dtype=float)
    frames = []
    plans = parallel_plans(m, sys_, max_pp=max_pp) if plans is None else list(plans)
    if not plans:
        raise ValidationError(f"no parallel plan divides {m.name} over {sys_.name}'s {sys_.n_chips} chips")
    usable = usable_hbm_bytes(sys_.accelerator)
    for par in plans:
        mem = memory_per_chip(m, par, b, context_tok, weight_precision, kv_precision, expert_precision)
        ok = np.asarray(mem["total_bytes"]) <= usable
        if not ok.any():
            continue
        r = system_step(sys_, m, plan, par, batch=b[ok], context_tok=context_tok, spec=spec,
                        ar_impl=ar_impl, a2a_impl=a2a_impl, weight_precision=weight_precision,
                        kv_precision=kv_precision, check_memory=False, expert_precision=expert_precision,
                        ar_algo=ar_algo, overlap=overlap, engine_step_s=engine_step_s,
                        expert_balance=expert_balance, kernel_release=kernel_release)
        frames.append(pd.DataFrame({
            "parallel": par.label(), "tp": par.tp, "ep": par.ep, "pp": par.pp, "dp": par.dp,
            "batch": b[ok].astype(int), "step_time_s": np.broadcast_to(r.step_time_s, b[ok].shape),
            "tok_per_s_per_user": np.broadcast_to(r.tok_per_s_per_user, b[ok].shape),
            "tok_per_s_per_chip": np.broadcast_to(r.tok_per_s_per_chip, b[ok].shape),
            "tok_per_s_system": np.broadcast_to(r.tok_per_s_per_chip, b[ok].shape) * sys_.n_chips,
        }))
    if not frames:
        prec = weight_precision or m.native_precision
        raise DoesNotFitError(
            f"{m.name} at {prec} does not fit {sys_.name} ({sys_.n_chips} x {sys_.accelerator.name}) "
            f"with any parallel plan at {context_tok:g} tokens of context; use a bigger system or "
            f"a lower precision")
    pts = pd.concat(frames, ignore_index=True)
    pts = pts[np.isfinite(pts["tok_per_s_per_user"])].reset_index(drop=True)
    pts["on_frontier"] = pareto_mask(pts["tok_per_s_per_user"].to_numpy(), pts["tok_per_s_per_chip"].to_numpy())
    name = getattr(plan, "name", plan)
    return FrontierResult(pts, sys_.name, m.name, str(name))


# ---- check against MLPerf ------------------------------------------------------------------

#: MLPerf chip label -> catalogued system; model label -> catalog model and TPOT limits.
_MLPERF_SYSTEMS = {"H100-SXM-80GB": "dgx-h100", "H200-SXM-141GB": "dgx-h200",
                   "B200-SXM-180GB": "dgx-b200", "GB200-186GB": "gb200-nvl72",
                   "GB300-288GB": "gb300-nvl72", "MI300X": "mi300x-8", "MI325X": "mi325x-8"}
#: MLPerf model label -> catalog model; its mean prompt and output tokens come from
#: ``datasets/mlperf_benchmarks.csv`` (prompt lengths: the official datasets' means, measured).
#: Decode runs at prompt + output / 2 of context.
_MLPERF_MODELS = {"Llama-2-70B": "llama-2-70b", "Llama-3.1-405B": "llama-3.1-405b"}
#: Per-user rate the scenario requires [tokens/s] (1 / TPOT limit; MLPerf rules via the notes).
_MLPERF_MIN_RATE = {("llama-2-70b", "server"): 1 / 0.2, ("llama-2-70b", "interactive"): 1 / 0.04,
                    ("llama-3.1-405b", "server"): 1 / 0.175, ("llama-3.1-405b", "interactive"): 12.5,
                    }


def deployment_frontier(dep: Any, *, context_tok: float = 4096, batches: Any = None) -> FrontierResult:
    """:func:`frontier` of one :class:`~tokenomics.deployment.Deployment`'s layout: every point
    is the deployment's own decode step (its precisions, speculation, collectives, overlap, engine
    cost, expert balance and kernel release) at a swept batch."""
    return frontier(dep.system, dep.model, dep.execution, batches=batches, context_tok=context_tok,
                    weight_precision=dep.weight_precision, kv_precision=dep.kv_precision,
                    expert_precision=dep.expert_precision, spec=dep.spec, plans=[dep.parallel],
                    ar_impl=dep.ar_impl, a2a_impl=dep.a2a_impl, ar_algo=dep.ar_algo or None,
                    overlap=dep.overlap, engine_step_s=dep.engine_step_s,
                    expert_balance=dep.expert_balance, kernel_release=dep.kernel_release)


def _shared_reference() -> Path:
    from ..catalog import data_dir

    return data_dir() / "measured_public.csv"


def mlperf_rows(path: "str | Path | None" = None):
    """The multi-chip MLPerf Llama rows of ``measured_public.csv`` this module can model."""
    import pandas as pd

    from ..io import exact_floats

    p = Path(path) if path else _shared_reference()
    if not p.exists():
        raise DataError(f"MLPerf reference not found at {p}; pass the path to measured_public.csv")
    df = pd.read_csv(p, **exact_floats())
    df = df[df["system"].str.contains("MLPerf", na=False)]
    from ..catalog import load

    bench = load("mlperf_benchmarks")
    rows = []
    for _, r in df.iterrows():
        mkey = next((k for k in _MLPERF_MODELS if str(r["model"]).startswith(k)), None)
        if mkey is None or r["chip"] not in _MLPERF_SYSTEMS:
            continue
        metric = str(r["metric"]).split("_")[0]
        if metric not in ("offline", "server", "interactive"):
            continue
        if "interactive" in str(r["model"]).lower():
            metric = "interactive"
        model = _MLPERF_MODELS[mkey]
        prompt, out = float(bench.loc[model, "isl_tok"]), float(bench.loc[model, "osl_tok"])
        ctx = int(prompt + out // 2)
        prec = "fp4" if r["chip"] in ("B200-SXM-180GB", "GB200-186GB", "GB300-288GB") else "fp8"
        rows.append({"system": r["system"], "chips": int(r["chips"]), "chip": r["chip"],
                     "model": model, "context_tok": ctx, "prompt_tok": prompt, "output_tok": out,
                     "precision": prec, "scenario": metric,
                     "measured_tok_per_s": float(r["value"]), "date": r["date"],
                     "source": r["source"]})
    return pd.DataFrame(rows).drop_duplicates(["system", "model", "scenario", "measured_tok_per_s"])


def mlperf_check(path: "str | Path | None" = None, plan: str = "engine"):
    """Frontier predictions next to the MLPerf measurements, with the error of each.

    Returns
    -------
    pandas.DataFrame
        ``system, chips, model, scenario, precision, measured_tok_per_s, lower_tok_per_s,
        upper_tok_per_s, error_lower_frac, error_upper_frac, bracketed``: the upper bound is
        decode only (prefill hidden in idle compute, as chunked prefill does at best); the lower
        bound adds each prompt's compute-bound prefill serially.
    """
    rows = mlperf_rows(path)
    from .parallel import ParallelPlan
    from .serving import chip_s_per_request
    from .system import system_prefill

    cache: dict = {}
    preds, decode_only = [], []
    for _, r in rows.iterrows():
        sys_ = _system(_MLPERF_SYSTEMS[r["chip"]])
        if r["chips"] != sys_.n_chips:
            sys_ = sys_.replace(name=f"{sys_.accelerator.name}-x{r['chips']}", n_chips=int(r["chips"]),
                                dims=(int(r["chips"]),), domain_chips=int(r["chips"]))
        key = (sys_.name, r["model"], r["precision"])
        if key not in cache:
            cache[key] = frontier(sys_, r["model"], plan, context_tok=r["context_tok"],
                                  weight_precision=r["precision"], kv_precision="fp8", max_pp=1)
            # prefill of the prompts on tensor-parallel groups of up to 8 chips, their
            # all-reduces included
            g = min(sys_.n_chips, 8)
            pf = system_prefill(sys_, r["model"], plan, ParallelPlan(tp=g, ep=1),
                                prompt_tok=int(r["prompt_tok"]), batch=8,
                                weight_precision=r["precision"], kv_precision="fp8")
            cache[key + ("prefill",)] = float(np.asarray(pf.tok_per_s_per_replica)) * sys_.n_chips / g
        f = cache[key]
        prefill_tok_per_s = cache[key + ("prefill",)]
        rate = _MLPERF_MIN_RATE.get((r["model"], r["scenario"]), 0.0)
        decode = f.best_tok_per_s(rate)
        # output tokens/s when each request also pays its prompt's prefill on the same chips
        preds.append(r["output_tok"] / float(chip_s_per_request(prefill_tok_per_s, decode, r["prompt_tok"],
                                                                r["output_tok"])))
        decode_only.append(decode)
    out = rows.copy()
    out["upper_tok_per_s"] = decode_only
    out["lower_tok_per_s"] = preds
    out["error_upper_frac"] = out["upper_tok_per_s"] / out["measured_tok_per_s"] - 1
    out["error_lower_frac"] = out["lower_tok_per_s"] / out["measured_tok_per_s"] - 1
    out["bracketed"] = (out["lower_tok_per_s"] <= out["measured_tok_per_s"]) & (
        out["measured_tok_per_s"] <= out["upper_tok_per_s"])
    return out[["system", "chips", "model", "scenario", "precision", "measured_tok_per_s",
                "lower_tok_per_s", "upper_tok_per_s", "error_lower_frac", "error_upper_frac",
                "bracketed", "source"]]
