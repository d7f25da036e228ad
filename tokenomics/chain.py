"""The one place that wires the performance core to the economics.

:func:`price` takes hardware, model, execution plan, batch and context (numpy arrays broadcast:
a sweep is one call), runs the performance core for the decode step and for the prefill of the
workload's prompt, turns utilizations into board power (:mod:`tokenomics.econ.power`), board
power and a cost model into a cost per chip-hour (:mod:`tokenomics.econ.tco`), and throughputs
into prices per 1K input and output tokens and joules per token (:mod:`tokenomics.econ.pricing`).
It returns a frozen :class:`PriceResult` with ``.to_frame()``; no I/O, no state.

Pricing is per chip: for single-accelerator serving (n independent replicas), or, with
``system``, per chip of a multi-chip replica timed by :mod:`tokenomics.perf.system`.

Examples
--------
>>> r = price("h200", "llama-3.1-8b", "graph", batch=32, context_tok=1024)
>>> 0.05 < float(r.energy_j_per_tok) < 0.2       # measured 0.108 J/token
True
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from . import _validate as v
from ._display import Display
from .errors import DataError, TargetSpeedError, ValidationError, unknown_name


def workload_mix(name: str) -> tuple[int, int]:
    """(input_tok, output_tok) of a named workload mix (``datasets/workloads.csv``)."""
    from . import catalog

    df = catalog.load("workloads")
    if name not in df.index:
        raise unknown_name("workload", name, df.index)
    r = df.loc[name]
    return int(r["input_tok"]), int(r["output_tok"])


#: Output-token conventions: ``decode-only`` charges output tokens the decode time only (input
#: tokens pay for prefill); ``all-in`` charges the whole request's chip time, prefill included, to
#: its output tokens (InferenceX's cost per million output tokens) and input tokens nothing.
OUTPUT_CONVENTIONS = ("decode-only", "all-in")


@dataclass(frozen=True, repr=False)
class PriceResult(Display):
    """Price, cost and energy of serving a deployment; arrays broadcast over the inputs.

    Attributes
    ----------
    deployment : tokenomics.deployment.Deployment
        What was priced (layout, plan, precisions, ...).
    tok_per_s_per_chip : ndarray
        Decode output tokens/s per chip [tokens/s].
    tok_per_s_per_replica : ndarray
        Decode output tokens/s of one model replica [tokens/s].
    tok_per_s_per_user : ndarray
        Output tokens/s each sequence sees (interactivity) [tokens/s].
    prefill_tok_per_s_per_chip : ndarray
        Prompt tokens/s per chip while prefilling [tokens/s].
    board_power_w, prefill_board_power_w : ndarray
        Modelled board power while decoding / prefilling [W].
    cost_usd_per_chip_h : ndarray
        All-in cost of the chip-hour at the decode power [USD/h].
    cost_basis : str
        ``bottom-up``, an InferenceX tier (``hyperscaler-owned@2025-08``) or ``flat``.
    output_convention : str
        See :data:`OUTPUT_CONVENTIONS`.
    price_usd_per_1k_input_tok, price_usd_per_1k_output_tok : ndarray
        Prices of prefill (cache-miss input) and decode tokens [USD/1K tokens], after utilization
        and margin.
    cache_hit_frac : float
        Share of input tokens served from a prefix cache; they skip prefill compute.
    price_usd_per_1k_effective_input_tok : ndarray
        Input price averaged over cache hits and misses: ``(1 - cache_hit_frac) * input``
        [USD/1K tokens] (a cached token's storage and reload are not modelled: ASSUMPTION).
    price_usd_per_1k_blended_tok : ndarray
        Price per 1K tokens of the workload mix, input and output counted together.
    energy_j_per_tok : ndarray
        Board energy per output token [J/token].
    facility_energy_j_per_tok : ndarray
        (Board + host) x PUE per output token [J/token].
    wh_per_1k_tok : ndarray
        Facility energy per 1K output tokens [Wh].
    """

    _display_columns = ("tp", "ep", "batch", "context_tok", "tok_per_s_per_chip", "tok_per_s_per_user",
                        "board_power_w", "cost_usd_per_chip_h", "usd_per_m_input_tok", "usd_per_m_output_tok",
                        "energy_j_per_tok", "cost_basis")

    deployment: Any
    workload: str
    input_tok: int
    output_tok: int
    cost_label: str
    cost_basis: str
    output_convention: str
    batch: np.ndarray
    context_tok: np.ndarray
    tok_per_s_per_chip: np.ndarray
    tok_per_s_per_replica: np.ndarray
    tok_per_s_per_user: np.ndarray
    prefill_tok_per_s_per_chip: np.ndarray
    prefill_batch: np.ndarray
    ttft_s: np.ndarray
    bound: np.ndarray
    hbm_util_frac: np.ndarray
    flop_util_frac: np.ndarray
    board_power_w: np.ndarray
    prefill_board_power_w: np.ndarray
    cost_usd_per_chip_h: np.ndarray
    cost_breakdown_usd_per_chip_h: dict = field(repr=False)
    utilization_frac: Any
    margin_frac: Any
    cache_hit_frac: Any
    price_usd_per_1k_input_tok: np.ndarray
    price_usd_per_1k_effective_input_tok: np.ndarray
    price_usd_per_1k_output_tok: np.ndarray
    price_usd_per_1k_blended_tok: np.ndarray
    energy_j_per_tok: np.ndarray
    facility_energy_j_per_tok: np.ndarray
    wh_per_1k_tok: np.ndarray

    _ARRAYS = ("batch", "context_tok", "tok_per_s_per_chip", "tok_per_s_per_replica", "tok_per_s_per_user",
               "prefill_tok_per_s_per_chip", "prefill_batch", "ttft_s", "bound", "hbm_util_frac",
               "flop_util_frac", "board_power_w", "prefill_board_power_w", "cost_usd_per_chip_h",
               "utilization_frac", "margin_frac", "cache_hit_frac", "price_usd_per_1k_input_tok",
               "price_usd_per_1k_effective_input_tok", "price_usd_per_1k_output_tok",
               "price_usd_per_1k_blended_tok", "energy_j_per_tok", "facility_energy_j_per_tok", "wh_per_1k_tok")

    # ---- conveniences: names users look for ----------------------------------------------
    @property
    def hardware(self) -> str:
        return self.deployment.hardware.name

    @property
    def model(self) -> str:
        return self.deployment.model.name

    @property
    def execution(self) -> str:
        return self.deployment.execution.name

    @property
    def n_chips(self) -> int:
        """Chips of one model replica."""
        return self.deployment.replica_chips

    @property
    def usd_per_m_input_tok(self) -> np.ndarray:
        """Input price [USD per million tokens]."""
        return np.asarray(self.price_usd_per_1k_input_tok, float) * 1e3

    @property
    def usd_per_m_effective_input_tok(self) -> np.ndarray:
        """Input price over cache hits and misses [USD per million tokens]."""
        return np.asarray(self.price_usd_per_1k_effective_input_tok, float) * 1e3

    @property
    def usd_per_m_output_tok(self) -> np.ndarray:
        """Output price [USD per million tokens]."""
        return np.asarray(self.price_usd_per_1k_output_tok, float) * 1e3

    @property
    def usd_per_m_blended_tok(self) -> np.ndarray:
        """Blended price of the workload mix [USD per million tokens]."""
        return np.asarray(self.price_usd_per_1k_blended_tok, float) * 1e3

    def to_frame(self):
        """One row per configuration: the deployment, throughput, power, cost, prices, energy."""
        import pandas as pd

        arrays = {k: np.asarray(getattr(self, k)) for k in self._ARRAYS}
        for k in ("usd_per_m_input_tok", "usd_per_m_effective_input_tok", "usd_per_m_output_tok",
                  "usd_per_m_blended_tok"):
            arrays[k] = getattr(self, k)
        arrays.update({k: np.asarray(val) for k, val in self.cost_breakdown_usd_per_chip_h.items()})
        shape = np.broadcast_shapes(*(a.shape for a in arrays.values()))
        n = int(np.prod(shape)) if shape else 1
        d = self.deployment.to_dict()
        head = {**d, "n_chips": d["replica_chips"], "workload": self.workload, "input_tok": self.input_tok,
                "output_tok": self.output_tok, "cost_model": self.cost_label, "cost_basis": self.cost_basis,
                "output_convention": self.output_convention}
        df = pd.DataFrame({**{k: [val] * n for k, val in head.items()},
                           **{k: np.broadcast_to(a, shape).ravel() for k, a in arrays.items()}})
        return df


def _resolve_power(hw, power):
    from .econ.power import PowerModel, power_model

    if power is None:
        return power_model(hw)
    if isinstance(power, PowerModel):
        return power
    raise ValidationError(f"power must be a PowerModel or None, got {type(power).__name__}")


def cost_basis(cm: Any) -> str:
    """The cost basis of a cost model: ``bottom-up``, ``<tier>@<vintage>`` or ``flat``."""
    from .econ.tco import CostInputs

    if isinstance(cm, CostInputs):
        return "bottom-up"
    label = str(getattr(cm, "label", "custom"))
    return "flat" if label.startswith("flat") or getattr(cm, "tier", "") == "flat" else label


def deployment_of(hardware: Any = None, model: Any = None, execution: Any = None, *, deployment: Any = None,
                  system: Any = None, parallel: Any = None, **layout: Any):
    """The :class:`~tokenomics.deployment.Deployment` a pricing call describes.

    ``deployment`` passes through (with no other layout argument); otherwise
    :func:`tokenomics.deployment.resolve` fills what ``hardware``/``system``/``model`` and the
    layout keywords (``tp``, ``ep``, ``dp_attention``, ``engine``, ``spec``, precisions,
    collectives, ``prefill_chunk_tok``) leave open.
    """
    from .deployment import Deployment, resolve

    if deployment is not None:
        if not isinstance(deployment, Deployment):
            raise ValidationError(f"deployment must be a Deployment, got {type(deployment).__name__}")
        extra = {k: val for k, val in layout.items() if val is not None}
        if extra:
            deployment = deployment.replace(**extra)
        return deployment
    if model is None:
        raise ValidationError("give a model (e.g. llama-3.1-8b) or a deployment")
    if parallel is not None:
        layout.setdefault("tp", parallel.tp)
        layout.setdefault("ep", parallel.ep)
        layout.setdefault("pp", parallel.pp)
    if system is not None and hardware is not None:
        from .perf.parallel import system as _system

        sys_hw = _system(system).accelerator.name if isinstance(system, str) else system.accelerator.name
        if getattr(hardware, "name", hardware) == sys_hw:
            hardware = None  # the same chip named twice: fine
    kw = {k: val for k, val in layout.items() if val is not None}
    return resolve(model, hardware=hardware, system=system, execution=execution, **kw)


def price(hardware: Any = None, model: Any = None, execution: Any = None, *, batch: Any = None,
          context_tok: Any = None, workload: str = "chat", cost: Any = None,
          system: Any = None, utilization_frac: Any = None, margin_frac: Any = None,
          weight_precision: str | None = None, kv_precision: str | None = None,
          expert_precision: str | None = None, prefill_batch: Any = None,
          power: Any = None, on_oom: str = "raise", parallel: Any = None, deployment: Any = None,
          tp: int | None = None, ep: int | None = None, dp_attention: bool | None = None,
          engine: str | None = None, spec: Any = None, prefill_chunk_tok: int | None = None,
          ar_impl: str | None = None, a2a_impl: str | None = None, overlap: str | None = None,
          target_tok_per_s_per_user: float | None = None, output_convention: str = "decode-only",
          cache_hit_frac: Any = 0.0, **cost_overrides: Any) -> PriceResult:
    """Price per 1K input and output tokens, cost per chip-hour and energy per token of a deployment.

    Every price goes through here: the deployment's decode step (communication, speculative
    decoding, overlap included) and its batched prefill, board power from what the chips do, a
    cost per chip-hour, then prices.

    Parameters
    ----------
    hardware, model, execution : str or spec
        Accelerator, model and execution plan; with ``system`` or the layout keywords they are
        resolved into a :class:`~tokenomics.deployment.Deployment` (production defaults:
        ``engine`` plan, a layout that fits, chunked prefill; see :mod:`tokenomics.deployment`).
    deployment : Deployment, optional
        Price exactly this deployment.
    batch : int or array, optional
        Sequences decoded together per replica [sequences]; default 1, or the cheapest batch
        that meets ``target_tok_per_s_per_user``.
    context_tok : int or array, optional
        Cached tokens each sequence attends to during decode; default: the workload's input
        plus half its output (the average context over a request) [tokens].
    workload : str
        Request mix from ``datasets/workloads.csv`` (``chat`` 1k/1k, ``reasoning`` 1k/8k,
        ``summarization`` 8k/1k); prefill is timed on its prompt length.
    cost : None, str, float, CostInputs or TierCost
        ``None``/``"bottom-up"`` (capex + opex defaults), an InferenceX tier
        (``"hyperscaler-owned"``, ``"neocloud-owned@2026-07"``, ``"rental-3yr"``), a flat
        USD per chip-hour, or a cost object.
    system : str, optional
        A multi-chip system (``datasets/systems.csv``).
    parallel : ParallelPlan, optional
        Layout (same as ``tp``/``ep``/``pp``).
    tp, ep, dp_attention, engine, spec, prefill_chunk_tok, ar_impl, a2a_impl, overlap,
    weight_precision, expert_precision, kv_precision
        Deployment fields (:func:`tokenomics.deployment.resolve`).
    prefill_batch : int, optional
        Prompts prefilled together (default: the deployment's chunk / prompt length).
    target_tok_per_s_per_user : float, optional
        Pick the cheapest batch that still serves each user this fast [tokens/s].
    utilization_frac, margin_frac : float or array, optional
        Share of hours sold (0, 1] and gross margin [0, 1); defaults from ``tco_params.csv``
        (1 and 0: InferenceX's cost to serve). Unsold hours pay idle-power electricity, sold
        ones busy power (see :func:`tokenomics.econ.utilization.from_load_profile` for a
        utilization implied by a daily load curve).
    cache_hit_frac : float, optional
        Share of input tokens that hit a prefix cache [0, 1] and skip prefill compute
        (DeepSeek reports 0.563: ``tco_params.csv`` ``cache_hit_frac``); default 0.
    output_convention : {"decode-only", "all-in"}
        See :data:`OUTPUT_CONVENTIONS`.
    power : PowerModel, optional
        Override the board power model.
    on_oom : {"raise", "mask"}
        Configurations that do not fit raise :class:`DoesNotFitError`, or become NaN.
    **cost_overrides
        Fields of :class:`~tokenomics.econ.tco.CostInputs` (``capex_usd=``, ``wacc_frac=``, ...).

    Returns
    -------
    PriceResult
    """
    from .econ import pricing
    from .econ.tco import CostInputs, cost_model, param
    from .errors import DoesNotFitError

    dep = deployment_of(hardware, model, execution, deployment=deployment, system=system, parallel=parallel,
                        tp=tp, ep=ep, dp_attention=dp_attention, engine=engine, spec=spec,
                        weight_precision=weight_precision, expert_precision=expert_precision,
                        kv_precision=kv_precision, prefill_chunk_tok=prefill_chunk_tok, ar_impl=ar_impl,
                        a2a_impl=a2a_impl, overlap=overlap)
    v.one_of(output_convention, "output_convention", OUTPUT_CONVENTIONS)
    in_tok, out_tok = workload_mix(workload)
    context_tok = _context_tok(workload, context_tok)
    if utilization_frac is None:
        utilization_frac = param("utilization_frac")
    if margin_frac is None:
        margin_frac = param("margin_frac")
    pricing.check_utilization(utilization_frac)
    pricing.check_margin(margin_frac)
    v.fraction(cache_hit_frac, "cache_hit_frac")
    v.one_of(on_oom, "on_oom", ("raise", "mask"))
    if target_tok_per_s_per_user is not None:
        if batch is not None:
            raise ValidationError("give either batch or target_tok_per_s_per_user, not both")
        bases = _target_bases(dep, parallel, tp, ep)
        if bases:
            dep, batch = _cheapest_layout_for_target(bases, target_tok_per_s_per_user, context_tok)
        else:
            batch = dep.batch_for_target(target_tok_per_s_per_user, int(np.max(context_tok)))
    if batch is None:
        batch = 1
    v.count(batch, "batch")
    dec = dep.decode(batch, context_tok, check_memory=False)
    fits = np.asarray(dec.fits)
    if on_oom == "raise" and not np.all(fits):
        from .perf.parallel import check_fit

        check_fit(dep.model, dep.system, dep.parallel, np.max(batch), np.max(context_tok), dep.weight_precision,
                  dep.kv_precision, dep.expert_precision)
        raise DoesNotFitError(f"{dep.label()}: batch {int(np.max(batch))} at context {int(np.max(context_tok))} "
                              f"does not fit; the largest that fits is {int(np.min(dep.max_batch(context_tok)))}")
    room = np.maximum(np.min(dep.max_batch(in_tok)), 1)  # prompts whose KV fits next to the weights
    if prefill_batch is None:  # the chunk budget, at most what memory holds
        pb = np.minimum(dep.prefill_batch(in_tok), room)
    else:
        pb = np.asarray(prefill_batch)
        v.count(pb, "prefill_batch")
        if np.any(pb > room):
            raise DoesNotFitError(f"{dep.label()}: a prefill batch of {int(np.max(pb))} prompts of "
                                  f"{int(np.max(in_tok))} tokens does not fit next to the weights; the "
                                  f"largest that fits is {int(room)}")
    pre = dep.prefill(in_tok, batch=pb)
    hw = dep.hardware
    if isinstance(cost, CostInputs) and cost_overrides:
        cost = cost.replace(**cost_overrides)
    cm = cost_model(hw, cost, **cost_overrides) if not isinstance(cost, CostInputs) else cost
    clip = lambda a: np.clip(np.nan_to_num(np.asarray(a, float), nan=0.0), 0.0, 1.0)  # noqa: E731
    # chips compute for compute_s of each step; exposed communication draws idle-level power
    busy = np.clip(np.asarray(dec.compute_s, float) / np.asarray(dec.step_time_s, float), 0.0, 1.0)
    core = dec.core
    hbm_u = np.asarray(core.hbm_util_frac, float) * busy
    flop_u = np.asarray(core.flop_util_frac, float) * busy
    try:
        pm = _resolve_power(hw, power)
        p_dec = pm.board_power_w(clip(hbm_u), clip(flop_u))
        p_pre = pm.board_power_w(clip(pre.hbm_util_frac), clip(pre.flop_util_frac))
    except DataError:
        if isinstance(cm, CostInputs):  # electricity needs power
            raise
        # a flat all-in $/chip-hour needs no power; energy per token is then unknown (NaN)
        p_dec = np.full(np.shape(hbm_u), np.nan)
        p_pre = np.full(np.shape(pre.hbm_util_frac), np.nan)
    # a chip-hour not sold draws idle power: charge each sold hour its busy power plus its share
    # of the unsold hours' idle power (electricity is linear in power)
    u = np.asarray(utilization_frac, float)
    try:
        p_idle = _resolve_power(hw, power).board_power_w(0.0, 0.0)
    except DataError:
        p_idle = np.nan
    p_dec_c = np.nan_to_num(u * np.asarray(p_dec, float) + (1 - u) * p_idle)
    p_pre_c = np.nan_to_num(u * np.asarray(p_pre, float) + (1 - u) * p_idle)
    tps = np.where(fits, np.asarray(dec.tok_per_s_per_chip, float), np.nan)
    pre_tps = np.asarray(pre.tok_per_s_per_chip, float)
    ok = np.isfinite(tps) & (tps > 0)
    safe_tps = np.where(ok, tps, 1.0)
    # an overflow (electricity at 1e308 USD/kWh) becomes inf, refused by finite_result below in one line
    with np.errstate(over="ignore"):
        breakdown = cm.breakdown_usd_per_h(p_dec_c)
        cost_h = cm.cost_usd_per_chip_h(p_dec_c)
        cost_pre_h = cm.cost_usd_per_chip_h(p_pre_c)
        p_in = pricing.price_usd_per_1k_tok(cost_pre_h, pre_tps, utilization_frac, margin_frac)
        p_out_dec = pricing.price_usd_per_1k_tok(cost_h, safe_tps, utilization_frac, margin_frac)
        hit = np.asarray(cache_hit_frac, float)
        if output_convention == "all-in":
            # the request's prefill chip time (cache misses only) is charged to its output tokens;
            # input tokens pay nothing
            p_out_dec = p_out_dec + p_in * (1 - hit) * in_tok / out_tok
            p_in = 0 * p_in
        p_eff_in = (1 - hit) * p_in
        p_out = np.where(ok, p_out_dec, np.nan)
        blended = pricing.blended_usd_per_1k_tok(np.nan_to_num(p_eff_in), np.where(ok, p_out, 0), in_tok, out_tok)
        blended = np.where(ok, blended, np.nan)
        e = np.where(ok, np.asarray(p_dec, float) / safe_tps, np.nan)
        fe = np.where(ok, cm.facility_power_w(p_dec) / safe_tps, np.nan)
    bound = np.where(busy < 0.5, "communication", core.bound)
    with np.errstate(over="ignore", invalid="ignore"):  # the per-million figures users read, as to_frame scales them
        per_m = {"usd_per_m_input_tok": np.asarray(p_in, float) * 1000,
                 "usd_per_m_output_tok": np.asarray(p_out, float) * 1000,
                 "usd_per_m_blended_tok": np.asarray(blended, float) * 1000}
    v.finite_result(f"price of {dep.model.name} on {hw.name}",
                    {"cost_usd_per_chip_h": cost_h, **per_m, "energy_j_per_tok": e},
                    {k: getattr(cm, k) for k in ("electricity_usd_per_kwh", "capex_usd", "life_years", "pue", "colo_usd_per_kw_month",
                                                  "host_power_w", "cost_usd_per_chip_h")
                     if hasattr(cm, k)} | {"utilization_frac": utilization_frac, "margin_frac": margin_frac,
                                          "tok_per_s_per_chip": tps})
    return PriceResult(
        deployment=dep, workload=workload, input_tok=in_tok, output_tok=out_tok,
        cost_label=getattr(cm, "label", "custom"), cost_basis=cost_basis(cm),
        output_convention=output_convention, batch=dec.batch, context_tok=dec.context_tok,
        tok_per_s_per_chip=tps, tok_per_s_per_replica=np.where(fits, np.asarray(dec.tok_per_s_per_replica, float), np.nan),
        tok_per_s_per_user=np.where(fits, np.asarray(dec.tok_per_s_per_user, float), np.nan),
        prefill_tok_per_s_per_chip=pre_tps, prefill_batch=np.asarray(pb), ttft_s=np.asarray(pre.step_time_s, float),
        bound=bound, hbm_util_frac=hbm_u, flop_util_frac=flop_u, board_power_w=p_dec, prefill_board_power_w=p_pre,
        cost_usd_per_chip_h=cost_h, cost_breakdown_usd_per_chip_h=breakdown,
        utilization_frac=utilization_frac, margin_frac=margin_frac, cache_hit_frac=cache_hit_frac,
        price_usd_per_1k_input_tok=p_in, price_usd_per_1k_effective_input_tok=p_eff_in,
        price_usd_per_1k_output_tok=p_out,
        price_usd_per_1k_blended_tok=blended, energy_j_per_tok=e, facility_energy_j_per_tok=fe,
        wh_per_1k_tok=pricing.wh_per_1k_tok(fe),
    )


_LAYOUT_KEYS = ("system", "parallel", "deployment", "tp", "ep", "dp_attention", "engine", "spec",
                "prefill_chunk_tok", "ar_impl", "a2a_impl", "overlap", "weight_precision",
                "expert_precision", "kv_precision")


def _context_tok(workload: str, context_tok: Any) -> Any:
    """The decode context [tokens]: as given, else the workload's input plus half its output (the
    average context over a request)."""
    in_tok, out_tok = workload_mix(workload)
    return in_tok + out_tok // 2 if context_tok is None else context_tok


def _target_bases(dep, parallel: Any = None, tp: Any = None, ep: Any = None) -> list:
    """The deployments whose layouts a target-speed search weighs: where the resolver picked the
    layout (the user gave none), ``dep`` and the same on the chip's larger systems
    (:func:`tokenomics.deployment.on_larger_systems`); empty where the user gave the layout."""
    if parallel is not None or tp is not None or ep is not None or not any(
            str(x).startswith("layout") for x in dep.picked):
        return []
    from .deployment import on_larger_systems

    return [dep, *on_larger_systems(dep)]


def _layouts_of(bases: list) -> list:
    """Every candidate layout (:func:`tokenomics.deployment.layout_candidates`) of ``bases``."""
    from .deployment import layout_candidates

    return [c for base in bases for c in layout_candidates(base)]


def _cheapest(found: list) -> tuple | None:
    """The entry of :func:`_search_layouts` that serves the most tokens per chip (the lowest price
    per token; the first of equals, i.e. the earlier, smaller system); None if none is fast enough."""
    ok = [f for f in found if f[1] is not None]
    return max(ok, key=lambda f: f[2]) if ok else None


def _search_layouts(cands, target: float, context_tok: Any) -> list[tuple]:
    """Each candidate deployment at a target speed: ``(deployment, batch, tok/s per chip, fastest
    tok/s per user, error)``; ``batch`` and ``tok/s per chip`` are None where no batch is fast enough
    (``fastest`` then its speed at batch 1) or the layout cannot run the request (``error``)."""
    ctx = int(np.max(context_tok))
    out = []
    for cand in cands:
        try:
            b = cand.batch_for_target(target, ctx)
        except TargetSpeedError as exc:
            user = float(np.max(cand.decode(1, ctx, check_memory=False).tok_per_s_per_user))
            out.append((cand, None, None, user, exc))
            continue
        except ValidationError as exc:  # a layout that cannot run this at all
            out.append((cand, None, None, None, exc))
            continue
        tps = float(np.max(cand.decode(b, ctx, check_memory=False).tok_per_s_per_chip))
        out.append((cand, b, tps, None, None))
    return out


def _cheapest_layout_for_target(bases: list, target: float, context_tok: Any):
    """Among the layouts of :func:`tokenomics.deployment.layout_candidates` of each deployment in
    ``bases`` (the resolver's, then the same on larger systems of the chip), the one whose
    cheapest batch at the target speed serves the most tokens per chip (the lowest price per
    token; on a tie the earlier, smaller system)."""
    found = _search_layouts(_layouts_of(bases), target, context_tok)
    best = _cheapest(found)
    if best is not None:
        return best[0], best[1]
    slow = [f for f in found if f[3] is not None]
    if not slow:
        raise found[-1][4]
    cand, _, _, user, _ = max(slow, key=lambda f: f[3])
    spec = "" if cand.spec is not None else "; speculative decoding (spec) would serve each user faster"
    raise TargetSpeedError(
        f"no batch reaches {target:g} tok/s per user with {cand.model.name} on any of the {len(found)} layouts "
        f"tried ({', '.join(dict.fromkeys(b.system.name for b in bases))}); the fastest is {user:.1f} tok/s "
        f"per user at batch 1 ({cand.label()}){spec}")


def layout_options(hardware: Any = None, model: Any = None, execution: Any = None, *,
                   target_tok_per_s_per_user: float, **kwargs: Any) -> "pd.DataFrame":
    """Every layout the target-speed search of :func:`price` weighs, each priced at its cheapest
    batch that still serves every user ``target_tok_per_s_per_user`` (what ``tokenomics price
    --target-tok-s-user X --layouts`` prints).

    Where the resolver picked the layout, the candidates are
    :func:`tokenomics.deployment.layout_candidates` of it and of the chip's larger systems (as
    :func:`price` searches them); a layout the user gave is the only row. ``kwargs`` are
    :func:`price`'s (``workload``, ``context_tok``, ``cost``, layout keywords, ...).

    Returns
    -------
    pandas.DataFrame
        One row per layout, cheapest first: ``deployment``, ``system``, ``tp``, ``ep``,
        ``replicas``, ``batch``, ``tok_per_s_per_user`` [tokens/s], ``tok_per_s_per_chip``
        [tokens/s], ``usd_per_m_output_tok`` [USD/M tokens], ``status`` (``cheapest`` for the one
        :func:`price` picks; ``too slow: ...`` with the layout's fastest speed, NaN prices).
    """
    import pandas as pd

    v.positive(target_tok_per_s_per_user, "target tok/s per user")
    layout = {k: kwargs.pop(k) for k in list(kwargs) if k in _LAYOUT_KEYS}
    dep = deployment_of(hardware, model, execution, **layout)
    bases = _target_bases(dep, layout.get("parallel"), layout.get("tp"), layout.get("ep"))
    ctx = _context_tok(kwargs.get("workload", "chat"), kwargs.pop("context_tok", None))
    found = _search_layouts(_layouts_of(bases) if bases else [dep], float(target_tok_per_s_per_user), ctx)
    best = (_cheapest(found) or (None,))[0]
    rows = []
    for cand, b, _, user, err in found:
        row = {"deployment": cand.layout_label(), "system": cand.system.name, "tp": int(cand.parallel.tp),
               "ep": int(cand.parallel.ep), "replicas": cand.replicas,
               "batch": np.nan, "tok_per_s_per_user": np.nan, "tok_per_s_per_chip": np.nan,
               "usd_per_m_output_tok": np.nan, "status": ""}
        if b is None:
            row["status"] = (f"too slow: {user:.1f} tok/s per user at batch 1" if user is not None
                             else f"cannot run: {err}")
        else:
            r = price(deployment=cand, batch=b, context_tok=ctx, **kwargs)
            row.update(batch=float(b), tok_per_s_per_user=float(np.ravel(r.tok_per_s_per_user)[0]),
                       tok_per_s_per_chip=float(np.ravel(r.tok_per_s_per_chip)[0]),
                       usd_per_m_output_tok=float(np.ravel(r.usd_per_m_output_tok)[0]),
                       status="cheapest" if cand is best else "")
        rows.append(row)
    return pd.DataFrame(rows).sort_values("usd_per_m_output_tok", kind="stable", na_position="last").reset_index(drop=True)


def frontier(hardware: Any = None, model: Any = None, execution: Any = None, *, context_tok: Any = None,
             workload: str = "chat", batches: Any = None, **kwargs: Any) -> PriceResult:
    """Price along the latency-throughput frontier: one :func:`price` call over a batch sweep."""
    ctx = _context_tok(workload, context_tok)
    layout = {k: kwargs.pop(k) for k in list(kwargs) if k in _LAYOUT_KEYS}
    dep = deployment_of(hardware, model, execution, **layout)
    if batches is None:
        batches = dep.batch_grid(ctx)
    v.count(batches, "batches")
    return price(deployment=dep, batch=np.asarray(batches), context_tok=ctx, workload=workload,
                 on_oom="mask", **kwargs)


def price_at_interactivity(hardware: Any = None, model: Any = None, execution: Any = None, *,
                           tok_per_s_per_user: Any, **kwargs: Any):
    """Price per 1K output tokens at each required per-user speed (tokens/s per user).

    Each speed is priced by :func:`price` with ``target_tok_per_s_per_user``: the cheapest batch
    that serves every user at least that fast and, where no layout is given, the cheapest layout
    of the chip's systems (the answer of ``tokenomics price --target-tok-s-user``). ``kwargs`` are
    :func:`price`'s (``workload``, ``context_tok``, layout keywords, ...).

    Returns
    -------
    pandas.DataFrame
        One row per speed: tok_per_s_per_user (the target) [tokens/s], deployment (its layout),
        batch, served_tok_per_s_per_user [tokens/s], price_usd_per_1k_output_tok [USD/1K tokens]
        (NaN, with an empty deployment, where nothing is fast enough), and frontier_min_price /
        frontier_max_price: the cheapest and dearest points of the batch sweep of the resolver's
        own layout (:func:`frontier`) [USD/1K tokens].
    """
    import pandas as pd

    t = np.atleast_1d(np.asarray(tok_per_s_per_user, float))
    v.positive(t, "tok_per_s_per_user")
    f = frontier(hardware, model, execution, **kwargs)
    ok = np.isfinite(f.price_usd_per_1k_output_tok)
    p = f.price_usd_per_1k_output_tok[ok]
    kwargs.pop("batches", None)  # the frontier's sweep, not a price keyword
    rows = []
    for target in t:
        try:
            r = price(hardware, model, execution, target_tok_per_s_per_user=float(target), **kwargs)
        except TargetSpeedError:
            rows.append({"deployment": "", "batch": np.nan, "served_tok_per_s_per_user": np.nan,
                         "price_usd_per_1k_output_tok": np.nan})
            continue
        rows.append({"deployment": r.deployment.layout_label(), "batch": float(np.ravel(r.batch)[0]),
                     "served_tok_per_s_per_user": float(np.ravel(r.tok_per_s_per_user)[0]),
                     "price_usd_per_1k_output_tok": float(np.ravel(r.price_usd_per_1k_output_tok)[0])})
    out = pd.DataFrame(rows)
    out.insert(0, "tok_per_s_per_user", t)
    for i, (k, val) in enumerate((("hardware", f.hardware), ("model", f.model), ("execution", f.execution))):
        out.insert(i, k, val)
    out["frontier_min_price"], out["frontier_max_price"] = float(p.min()), float(p.max())
    return out


def disaggregated(prefill_hardware: Any, decode_hardware: Any, model: Any, execution: Any = "graph", *,
                  workloads: tuple[str, ...] = ("chat", "reasoning", "summarization"), batch: int = 64,
                  cost_prefill: Any = None, cost_decode: Any = None, target_ratio: float = 10.0,
                  weight_precision: str | None = None):
    """Disaggregated prefill (on ``prefill_hardware``) and decode (on ``decode_hardware``) versus
    co-located serving on ``prefill_hardware``, for each workload (the HC2000 10x claim).

    Decode runs at ``batch`` (clipped to what fits on each chip) at each workload's average
    context. Capex and costs are bottom-up unless given.

    Returns
    -------
    tokenomics.econ.disagg.DisaggResult
        Broadcast over the workloads.
    """
    from .econ.disagg import compare
    from .econ.tco import CostInputs, cost_model
    from .perf import decode_step, max_batch, prefill

    rows = [workload_mix(w) for w in workloads]
    i = np.array([r[0] for r in rows], float)
    o = np.array([r[1] for r in rows], float)
    ctx = (i + o // 2).astype(int)

    def dec_tps(hw):
        mb = np.asarray(max_batch(hw, model, context_tok=ctx, weight_precision=weight_precision))
        b = np.minimum(batch, mb)
        if np.any(b < 1):
            from .errors import DoesNotFitError

            raise DoesNotFitError(f"{getattr(model, 'name', model)} does not fit on one "
                                  f"{getattr(hw, 'name', hw)} at context {int(ctx.max())}")
        return np.asarray(decode_step(hw, model, execution, batch=b, context_tok=ctx,
                                      weight_precision=weight_precision).tok_per_s_per_chip, float)

    pre = np.asarray(prefill(prefill_hardware, model, execution, prompt_tok=i.astype(int), batch=1,
                             weight_precision=weight_precision).tok_per_s_per_chip, float)
    d_p, d_d = dec_tps(prefill_hardware), dec_tps(decode_hardware)
    cp = cost_model(prefill_hardware, cost_prefill)
    cd = cost_model(decode_hardware, cost_decode)
    for c, name in ((cp, prefill_hardware), (cd, decode_hardware)):
        if not isinstance(c, CostInputs):
            raise ValidationError(f"disaggregated needs bottom-up costs with capex for {name}; got a flat tier")
    from .econ.tco import power_at_typical
    from . import catalog

    hp = catalog.accelerator(getattr(prefill_hardware, "name", prefill_hardware))
    hd = catalog.accelerator(getattr(decode_hardware, "name", decode_hardware))
    return compare(pre, d_p, d_d, cp.capex_usd, cd.capex_usd,
                   cp.cost_usd_per_chip_h(power_at_typical(hp)), cd.cost_usd_per_chip_h(power_at_typical(hd)),
                   i, o, prefill_hardware=hp.name, decode_hardware=hd.name, target_ratio=target_ratio)
