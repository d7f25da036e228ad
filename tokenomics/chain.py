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
from .errors import DataError, TokenomicsError, ValidationError, unknown_name


def workload_mix(name: str) -> tuple[int, int]:
    """(input_tok, output_tok) of a named workload mix (``datasets/workloads.csv``)."""
    from . import catalog

    df = catalog.load("workloads")
    if name not in df.index:
        raise unknown_name("workload", name, df.index)
    r = df.loc[name]
    return int(r["input_tok"]), int(r["output_tok"])


@dataclass(frozen=True, repr=False)
class PriceResult(Display):
    """Price, cost and energy of serving a model on a chip; arrays broadcast over the inputs.

    Attributes
    ----------
    tok_per_s : ndarray
        Decode output tokens/s per chip [tokens/s].
    tok_per_s_per_user : ndarray
        Output tokens/s each sequence sees (interactivity) [tokens/s].
    prefill_tok_per_s : ndarray
        Prompt tokens/s per chip while prefilling [tokens/s].
    board_power_w, prefill_board_power_w : ndarray
        Modelled board power while decoding / prefilling [W].
    cost_usd_per_chip_h : ndarray
        All-in cost of the chip-hour at the decode power [USD/h].
    price_usd_per_1k_input_tok, price_usd_per_1k_output_tok : ndarray
        Prices of prefill and decode tokens [USD/1K tokens], after utilization and margin.
    price_usd_per_1k_blended_tok : ndarray
        Price per 1K tokens of the workload mix, input and output counted together.
    energy_j_per_tok : ndarray
        Board energy per output token [J/token].
    facility_energy_j_per_tok : ndarray
        (Board + host) x PUE per output token [J/token].
    wh_per_1k_tok : ndarray
        Facility energy per 1K output tokens [Wh].
    """

    _display_columns = ("batch", "context_tok", "tok_per_s", "tok_per_s_per_user", "board_power_w",
                        "cost_usd_per_chip_h", "price_usd_per_1k_input_tok", "price_usd_per_1k_output_tok",
                        "energy_j_per_tok")

    hardware: str
    model: str
    execution: str
    workload: str
    input_tok: int
    output_tok: int
    cost_label: str
    n_chips: int
    batch: np.ndarray
    context_tok: np.ndarray
    tok_per_s: np.ndarray
    tok_per_s_per_user: np.ndarray
    prefill_tok_per_s: np.ndarray
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
    price_usd_per_1k_input_tok: np.ndarray
    price_usd_per_1k_output_tok: np.ndarray
    price_usd_per_1k_blended_tok: np.ndarray
    energy_j_per_tok: np.ndarray
    facility_energy_j_per_tok: np.ndarray
    wh_per_1k_tok: np.ndarray

    _ARRAYS = ("batch", "context_tok", "tok_per_s", "tok_per_s_per_user", "prefill_tok_per_s", "ttft_s",
               "bound", "hbm_util_frac", "flop_util_frac", "board_power_w", "prefill_board_power_w",
               "cost_usd_per_chip_h", "utilization_frac", "margin_frac", "price_usd_per_1k_input_tok",
               "price_usd_per_1k_output_tok", "price_usd_per_1k_blended_tok", "energy_j_per_tok",
               "facility_energy_j_per_tok", "wh_per_1k_tok")

    def to_frame(self):
        """One row per configuration: inputs, throughput, power, cost breakdown, prices, energy."""
        import pandas as pd

        arrays = {k: np.asarray(getattr(self, k)) for k in self._ARRAYS}
        arrays.update({k: np.asarray(val) for k, val in self.cost_breakdown_usd_per_chip_h.items()})
        shape = np.broadcast_shapes(*(a.shape for a in arrays.values()))
        n = int(np.prod(shape)) if shape else 1
        head = {"hardware": self.hardware, "model": self.model, "execution": self.execution,
                "workload": self.workload, "input_tok": self.input_tok, "output_tok": self.output_tok,
                "cost_model": self.cost_label, "n_chips": self.n_chips}
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


def price(hardware: Any, model: Any, execution: Any = "graph", *, batch: Any = 1,
          context_tok: Any = None, workload: str = "chat", cost: Any = None,
          system: str | None = None, utilization_frac: Any = None, margin_frac: Any = None,
          weight_precision: str | None = None, kv_precision: str = "bf16", prefill_batch: int = 1,
          power: Any = None, on_oom: str = "raise", parallel: Any = None,
          **cost_overrides: Any) -> PriceResult:
    """Price per 1K input and output tokens, cost per chip-hour and energy per token.

    Parameters
    ----------
    hardware, model, execution : str or spec
        As for :func:`tokenomics.perf.decode_step`.
    batch : int or array
        Sequences decoded together [sequences].
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
        A multi-chip system (``datasets/systems.csv``); decode is timed by
        :func:`tokenomics.perf.system.system_step` and prices stay per chip. ``hardware`` is
        then ignored (the system's accelerator is used).
    parallel : ParallelPlan, optional
        Split of the model over the system's chips (see :func:`_system_steps`).
    utilization_frac, margin_frac : float or array, optional
        Share of hours sold (0, 1] and gross margin [0, 1); defaults from ``tco_params.csv``
        (1 and 0: InferenceX's cost to serve).
    prefill_batch : int
        Prompts prefilled together.
    power : PowerModel, optional
        Override the board power model.
    on_oom : {"raise", "mask"}
        Configurations that do not fit raise :class:`DoesNotFitError`, or become NaN.
    **cost_overrides
        Fields of :class:`~tokenomics.econ.tco.CostInputs` (``capex_usd=``, ``wacc_frac=``, ...)
        for the bottom-up cost.

    Returns
    -------
    PriceResult
    """
    from .econ import pricing
    from .econ.tco import CostInputs, cost_model, param
    from .perf import decode_step, prefill

    in_tok, out_tok = workload_mix(workload)
    if context_tok is None:
        context_tok = in_tok + out_tok // 2
    if utilization_frac is None:
        utilization_frac = param("utilization_frac")
    if margin_frac is None:
        margin_frac = param("margin_frac")
    pricing.check_utilization(utilization_frac)
    pricing.check_margin(margin_frac)
    v.one_of(on_oom, "on_oom", ("raise", "mask"))
    if system is not None:
        dec, pre, n_chips = _system_steps(system, model, execution, batch, context_tok, in_tok,
                                          weight_precision, kv_precision, prefill_batch, on_oom, parallel)
    else:
        dec = decode_step(hardware, model, execution, batch=batch, context_tok=context_tok,
                          weight_precision=weight_precision, kv_precision=kv_precision, on_oom=on_oom)
        pre = prefill(hardware, model, execution, prompt_tok=in_tok, batch=prefill_batch,
                      weight_precision=weight_precision, kv_precision=kv_precision, on_oom=on_oom)
        n_chips = 1
    hw = dec.hardware
    if isinstance(cost, CostInputs) and cost_overrides:
        cost = cost.replace(**cost_overrides)
    cm = cost_model(hw, cost, **cost_overrides) if not isinstance(cost, CostInputs) else cost
    clip = lambda a: np.clip(np.nan_to_num(np.asarray(a, float), nan=0.0), 0.0, 1.0)  # noqa: E731
    try:
        pm = _resolve_power(hw, power)
        p_dec = pm.board_power_w(clip(dec.hbm_util_frac), clip(dec.flop_util_frac))
        p_pre = pm.board_power_w(clip(pre.hbm_util_frac), clip(pre.flop_util_frac))
    except DataError:
        if isinstance(cm, CostInputs):  # electricity needs power
            raise
        # a flat all-in $/chip-hour needs no power; energy per token is then unknown (NaN)
        p_dec = np.full(np.shape(dec.hbm_util_frac), np.nan)
        p_pre = np.full(np.shape(pre.hbm_util_frac), np.nan)
    p_dec_c, p_pre_c = np.nan_to_num(p_dec), np.nan_to_num(p_pre)
    tps = np.asarray(dec.tok_per_s_per_chip, float)
    pre_tps = np.asarray(pre.tok_per_s_per_chip, float)
    ok = np.isfinite(tps) & (tps > 0)
    safe_tps = np.where(ok, tps, 1.0)
    breakdown = cm.breakdown_usd_per_h(p_dec_c)
    cost_h = cm.cost_usd_per_chip_h(p_dec_c)
    cost_pre_h = cm.cost_usd_per_chip_h(p_pre_c)
    p_out = np.where(ok, pricing.price_usd_per_1k_tok(cost_h, safe_tps, utilization_frac, margin_frac), np.nan)
    p_in = pricing.price_usd_per_1k_tok(cost_pre_h, pre_tps, utilization_frac, margin_frac)
    blended = pricing.blended_usd_per_1k_tok(np.nan_to_num(p_in), np.where(ok, p_out, 0), in_tok, out_tok)
    blended = np.where(ok, blended, np.nan)
    e = np.where(ok, np.asarray(p_dec, float) / safe_tps, np.nan)
    fe = np.where(ok, cm.facility_power_w(p_dec) / safe_tps, np.nan)
    return PriceResult(
        hardware=hw.name, model=dec.model.name, execution=dec.plan.name, workload=workload,
        input_tok=in_tok, output_tok=out_tok, cost_label=getattr(cm, "label", "custom"), n_chips=n_chips,
        batch=dec.batch, context_tok=dec.context_tok, tok_per_s=tps,
        tok_per_s_per_user=np.asarray(dec.tok_per_s_per_user, float), prefill_tok_per_s=pre_tps,
        ttft_s=np.asarray(pre.step_time_s, float), bound=dec.bound, hbm_util_frac=dec.hbm_util_frac,
        flop_util_frac=dec.flop_util_frac, board_power_w=p_dec, prefill_board_power_w=p_pre,
        cost_usd_per_chip_h=cost_h, cost_breakdown_usd_per_chip_h=breakdown,
        utilization_frac=utilization_frac, margin_frac=margin_frac,
        price_usd_per_1k_input_tok=p_in, price_usd_per_1k_output_tok=p_out,
        price_usd_per_1k_blended_tok=blended, energy_j_per_tok=e, facility_energy_j_per_tok=fe,
        wh_per_1k_tok=pricing.wh_per_1k_tok(fe),
    )


def _system_steps(system, model, execution, batch, context_tok, in_tok, weight_precision,
                  kv_precision, prefill_batch, on_oom, parallel=None):
    """Decode on a multi-chip system (tokenomics.perf.system) and prefill on its chips.

    Decode: :func:`tokenomics.perf.system.system_step` with ``parallel`` (default: expert
    parallel over every chip for MoE models, and the widest tensor parallelism n, n/2, ... that
    the model accepts). The chips' utilization is the core's
    utilization times the share of the step they compute (``compute_s / step_time_s``), so
    exposed communication draws idle-level power. Prefill:
    :func:`tokenomics.perf.system.system_prefill` (sharded compute plus its collectives).
    """
    from types import SimpleNamespace

    from .perf import system as sysmod
    from .perf.parallel import ParallelPlan

    sys_ = sysmod._system(system)
    from .catalog import model as catalog_model

    m = model if not isinstance(model, str) else catalog_model(model)
    n = int(sys_.n_chips)
    kw = dict(batch=batch, context_tok=context_tok, weight_precision=weight_precision, kv_precision=kv_precision)
    if parallel is not None:
        dec = sysmod.system_step(sys_, m, execution, parallel, **kw)
    else:
        last: Exception | None = None
        dec = None
        tp = n
        while tp >= 1 and dec is None:
            try:
                dec = sysmod.system_step(sys_, m, execution, ParallelPlan(tp=tp, ep=n if m.is_moe else 1), **kw)
            except TokenomicsError as exc:
                last = exc
            tp //= 2
        if dec is None:
            raise last
    core = dec.core
    busy = np.clip(np.asarray(dec.compute_s, float) / np.asarray(dec.step_time_s, float), 0.0, 1.0)
    pre = sysmod.system_prefill(sys_, m, execution, dec.parallel, prompt_tok=in_tok, batch=prefill_batch,
                                weight_precision=weight_precision, kv_precision=kv_precision)
    view = SimpleNamespace(
        hardware=sys_.accelerator, model=m, plan=dec.plan, batch=dec.batch, context_tok=dec.context_tok,
        tok_per_s_per_chip=dec.tok_per_s_per_chip, tok_per_s_per_user=dec.tok_per_s_per_user,
        hbm_util_frac=np.asarray(core.hbm_util_frac, float) * busy,
        flop_util_frac=np.asarray(core.flop_util_frac, float) * busy,
        bound=np.where(busy < 0.5, "communication", core.bound))
    return view, pre, int(dec.parallel.replica_chips)


def batch_grid(hardware: Any, model: Any, context_tok: Any, *, weight_precision: str | None = None,
               kv_precision: str = "bf16", n_max: int = 4096) -> np.ndarray:
    """Batches 1, 2, 4, ... up to the largest that fits (inclusive) [sequences]."""
    from .perf import max_batch

    top = int(np.min(max_batch(hardware, model, context_tok=context_tok,
                               weight_precision=weight_precision, kv_precision=kv_precision)))
    top = min(top, n_max)
    if top < 1:
        from .errors import DoesNotFitError

        name = getattr(model, "name", model)
        raise DoesNotFitError(f"{name} does not fit on one {getattr(hardware, 'name', hardware)} "
                              f"at context {int(np.max(context_tok))} (even batch 1)")
    grid = 2 ** np.arange(0, int(np.log2(top)) + 1)
    return np.unique(np.append(grid, top)).astype(int)


def frontier(hardware: Any, model: Any, execution: Any = "graph", *, context_tok: Any = None,
             workload: str = "chat", batches: Any = None, **kwargs: Any) -> PriceResult:
    """Price along the latency-throughput frontier: one :func:`price` call over a batch sweep."""
    in_tok, out_tok = workload_mix(workload)
    ctx = in_tok + out_tok // 2 if context_tok is None else context_tok
    if batches is None:
        batches = batch_grid(hardware, model, ctx, weight_precision=kwargs.get("weight_precision"),
                             kv_precision=kwargs.get("kv_precision", "bf16"))
    v.count(batches, "batches")
    return price(hardware, model, execution, batch=np.asarray(batches), context_tok=ctx,
                 workload=workload, on_oom="mask", **kwargs)


def price_at_interactivity(hardware: Any, model: Any, execution: Any = "graph", *,
                           tok_per_s_per_user: Any, **kwargs: Any):
    """Price per 1K output tokens at a required per-user speed (tokens/s per user).

    Returns
    -------
    pandas.DataFrame
        tok_per_s_per_user, price_usd_per_1k_output_tok (NaN where no batch is fast enough),
        and the cheapest and dearest points of the frontier.
    """
    import pandas as pd

    from .econ.pricing import price_at_interactivity as pai

    f = frontier(hardware, model, execution, **kwargs)
    ok = np.isfinite(f.price_usd_per_1k_output_tok)
    s, p = f.tok_per_s_per_user[ok], f.price_usd_per_1k_output_tok[ok]
    t = np.atleast_1d(np.asarray(tok_per_s_per_user, float))
    return pd.DataFrame({"hardware": f.hardware, "model": f.model, "execution": f.execution,
                         "tok_per_s_per_user": t, "price_usd_per_1k_output_tok": pai(s, p, t),
                         "frontier_min_price": float(p.min()), "frontier_max_price": float(p.max())})


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
