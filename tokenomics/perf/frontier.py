"""Latency-throughput frontier of a model on a multi-chip system.

:func:`frontier` sweeps batch size and every parallel plan the model and system allow (tensor,
expert and pipeline parallel sizes; the remaining chips as data-parallel replicas), keeps the
configurations whose weights and KV cache fit each chip, and returns the Pareto frontier of
tokens/s per user against tokens/s per chip. Each parallel plan is one vectorized call over the
batch sizes.

The frontier is checked against the public MLPerf Inference results by
:func:`tokenomics.validate.mlperf.mlperf_check`.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from .._display import Display
from ..errors import TokenomicsError, ValidationError
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
