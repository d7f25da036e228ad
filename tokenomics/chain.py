"""The one place that wires the performance core to the economics.

:func:`price` takes hardware, model, execution plan, batch and context (numpy arrays broadcast:
a sweep is one call), runs the performance core for the decode step and for the prefill of the
workload's prompt, turns utilizations into board power (:mod:`tokenomics.econ.power`), board
power and a cost model into a cost per chip-hour (:mod:`tokenomics.econ.tco`), and throughputs
into prices per million input and output tokens and joules per token (:mod:`tokenomics.econ.pricing`).
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

import dataclasses
import functools
import math
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


#: Sequences decoded together per attention group (per replica on a plain tensor-parallel layout;
#: x the attention data-parallel ranks on a wide-EP one) when neither a batch nor a target speed
#: is given: the one default operating point of ``tk.price``, ``tokenomics price``, ``sweep-mc``,
#: the plots and the report (a convention of this package, not a measurement: a loaded
#: continuous-batching server, between the batch-1 latency point and the memory-bound maximum).
DEFAULT_BATCH_PER_ATTN_GROUP = 32


def default_batch(deployment: Any) -> int:
    """The batch priced when none is given: :data:`DEFAULT_BATCH_PER_ATTN_GROUP` per attention
    group of ``deployment`` [sequences per replica]."""
    return DEFAULT_BATCH_PER_ATTN_GROUP * int(deployment.parallel.attn_dp)


#: Output-token conventions: ``decode-only`` charges output tokens the decode time only (input
#: tokens pay for prefill); ``all-in`` charges the whole request's chip time, prefill included, to
#: its output tokens (InferenceX's cost per million output tokens) and input tokens nothing.
OUTPUT_CONVENTIONS = ("decode-only", "all-in")


#: The 80 % error band's columns of a price (:mod:`tokenomics.errorband`).
BAND_COLUMNS = ("tok_per_s_per_chip_lo", "tok_per_s_per_chip_hi", "usd_per_m_output_tok_lo",
                "usd_per_m_output_tok_hi", "error_regime")


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
        Facility energy per 1K output tokens [Wh] (``kwh_per_m_tok`` in ``to_frame()``).
    serving : str
        The serving mode priced (:data:`SERVING_MODES`): ``decode``, ``colocated`` or ``disaggregated``.
    serving_mode : str
        Its label in outputs: ``decode-only steady state``, ``co-located``, ``disaggregated 1P:3D``.
    concurrency : float
        Requests in flight of the operating point: per instance (co-located), over the whole
        prefill:decode group (disaggregated); NaN for the decode-only steady state (``batch``
        is its operating point) [requests].
    n_prefill_gpus, n_decode_gpus : float
        Disaggregated: GPUs of the prefill and of the decode instances (NaN otherwise).
    decode_tok_per_s_per_chip : ndarray or None
        Output tokens/s per chip-second spent decoding [tokens/s]: ``tok_per_s_per_chip`` in the
        decode-only steady state; co-located, the served rate over the decoding share of the
        iterations; disaggregated, per decode GPU. With ``prefill_tok_per_s_per_chip`` it splits
        a request's chip time (:func:`tokenomics.econ.disagg.chip_s_per_request`).
    electricity_usd_per_kwh : float or ndarray
        Electricity price of a bottom-up cost [USD/kWh]; NaN for a tier or flat cost (their
        power is inside the hourly price).
    capex_usd, capex_source : float, str
        A bottom-up cost's all-in capital cost per chip [USD] and where it comes from (a system,
        server or chip price of the datasets, or "given"); NaN and "" for a tier or flat cost.
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
    serving: str = "decode"
    serving_mode: str = "decode-only steady state"
    concurrency: float = float("nan")
    n_prefill_gpus: float = float("nan")
    n_decode_gpus: float = float("nan")
    decode_tok_per_s_per_chip: Any = None
    electricity_usd_per_kwh: Any = float("nan")
    capex_usd: Any = float("nan")
    capex_source: str = ""

    _ARRAYS = ("batch", "context_tok", "tok_per_s_per_chip", "tok_per_s_per_replica", "tok_per_s_per_user",
               "prefill_tok_per_s_per_chip", "prefill_batch", "ttft_s", "bound", "hbm_util_frac",
               "flop_util_frac", "board_power_w", "prefill_board_power_w", "cost_usd_per_chip_h",
               "utilization_frac", "margin_frac", "cache_hit_frac", "price_usd_per_1k_input_tok",
               "price_usd_per_1k_effective_input_tok", "price_usd_per_1k_output_tok",
               "price_usd_per_1k_blended_tok", "energy_j_per_tok", "facility_energy_j_per_tok", "wh_per_1k_tok",
               "electricity_usd_per_kwh")

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

    # ---- the 80 % error band (tokenomics.errorband) ----------------------------------------
    @functools.cached_property
    def _error_band(self) -> tuple[str, float, float]:
        from . import errorband

        regime = errorband.regime_of_deployment(self.deployment, getattr(self, "serving", "decode"))
        return errorband.band_of(regime)

    @property
    def error_regime(self) -> str:
        """The error regime whose band this result carries (``datasets/error_bands.csv``)."""
        return self._error_band[0]

    @property
    def tok_per_s_per_chip_lo(self) -> np.ndarray:
        """Low end of the 80 % band of ``tok_per_s_per_chip`` [tokens/s]."""
        from .errorband import throughput_band

        return throughput_band(self.tok_per_s_per_chip, *self._error_band[1:])[0]

    @property
    def tok_per_s_per_chip_hi(self) -> np.ndarray:
        """High end of the 80 % band of ``tok_per_s_per_chip`` [tokens/s]."""
        from .errorband import throughput_band

        return throughput_band(self.tok_per_s_per_chip, *self._error_band[1:])[1]

    def _usd_per_m_output_tok_at(self, tok_per_s_per_chip: Any) -> np.ndarray:
        """The output price were the chips to decode at ``tok_per_s_per_chip``: the priced output
        price with its decode share re-priced by the same cost function [USD per million tokens]."""
        from .econ.pricing import price_usd_per_1k_tok

        base = np.asarray(self.tok_per_s_per_chip, float)
        x = np.asarray(tok_per_s_per_chip, float)
        ok = np.isfinite(base) & (base > 0) & np.isfinite(x) & (x > 0)

        def dec(t):
            return np.asarray(price_usd_per_1k_tok(self.cost_usd_per_chip_h, np.where(ok, t, 1.0),
                                                   self.utilization_frac, self.margin_frac), float)

        return np.where(ok, self.usd_per_m_output_tok + (dec(x) - dec(base)) * 1e3, np.nan)

    @property
    def usd_per_m_output_tok_lo(self) -> np.ndarray:
        """Low end of the 80 % band of the output price, at the band's high throughput [USD per million tokens]."""
        return self._usd_per_m_output_tok_at(self.tok_per_s_per_chip_hi)

    @property
    def usd_per_m_output_tok_hi(self) -> np.ndarray:
        """High end of the 80 % band of the output price, at the band's low throughput [USD per million tokens]."""
        return self._usd_per_m_output_tok_at(self.tok_per_s_per_chip_lo)

    def to_frame(self):
        """One row per configuration: the deployment, throughput, power, cost, prices [USD per
        million tokens: ``usd_per_m_input_tok``, ``usd_per_m_output_tok``, ...], energy
        [``energy_j_per_tok``; ``kwh_per_m_tok`` facility energy per million output tokens]."""
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
        # the serving mode and its operating point, then the 80 % error band, last (the columns
        # before keep their places)
        df["capex_usd"], df["capex_source"] = float(np.asarray(self.capex_usd, float).ravel()[0]), self.capex_source
        for k in ("serving", "serving_mode", "concurrency", "n_prefill_gpus", "n_decode_gpus"):
            df[k] = getattr(self, k)
        for k in BAND_COLUMNS[:-1]:
            df[k] = np.broadcast_to(np.asarray(getattr(self, k), float), shape).ravel()
        df["error_regime"] = self.error_regime
        from .units import per_million

        return per_million(df)  # prices per million tokens, as everything a user reads


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
        from .catalog import accelerator_name as _canon
        from .perf.parallel import system as _system

        sys_hw = _system(system).accelerator.name if isinstance(system, str) else system.accelerator.name
        if getattr(hardware, "name", None) == sys_hw or (isinstance(hardware, str) and _canon(hardware) == sys_hw):
            hardware = None  # the same chip named twice: fine
    kw = {k: val for k, val in layout.items() if val is not None}
    return resolve(model, hardware=hardware, system=system, execution=execution, **kw)


#: How the chips serve a price's requests (``price(serving=...)``, ``tokenomics price --serving``):
#: ``decode`` prices the decode-only steady state at a fixed batch, prefill charged at its own
#: rate (no queueing, no engine iteration shared with prompts, no KV transfer); ``colocated`` one
#: engine interleaving prompt chunks with decoding (:func:`tokenomics.perf.serving.serve`: continuous
#: batching at a concurrency, the model ``validate-serving`` scores); ``disaggregated`` prefill
#: instances and decode instances with KV transfer (:func:`tokenomics.perf.serving.serve_disaggregated`).
SERVING_MODES = ("decode", "colocated", "disaggregated")

#: Prefill:decode instance splits a disaggregated price weighs when none is given (the one serving
#: the most output tokens per GPU is kept; 1:1 first among equals).
PD_SPLITS = tuple((p, d) for p in range(1, 9) for d in range(1, 9) if math.gcd(p, d) == 1)


@dataclass(frozen=True)
class OperatingPoint:
    """Where a deployment is priced: how its chips serve requests and at what load (every field
    a keyword of :func:`price`; ``price(deployment=dep, point=OperatingPoint(...))``).

    Attributes
    ----------
    serving : {"colocated", "disaggregated", "decode"}, optional
        Serving mode (:data:`SERVING_MODES`); default :func:`default_serving`.
    concurrency : float, optional
        Requests in flight per instance (per decode instance when disaggregated) [requests].
    target_tok_per_s_per_user : float, optional
        Serve each user at least this fast [tokens/s] (the most requests that still do).
    batch : int or array, optional
        Decode-only steady state: sequences per replica [sequences].
    context_tok : int or array, optional
        Decode-only steady state: cached tokens per sequence [tokens].
    prefill_batch : int, optional
        Decode-only steady state: prompts prefilled together.
    workload : str
        Request mix of ``datasets/workloads.csv``.
    isl_tok, osl_tok : int, optional
        Prompt and output tokens per request [tokens] (default the workload's).
    pd : (int, int), optional
        Disaggregated: prefill and decode instances.
    cache_hit_frac : float
        Share of input tokens served from a prefix cache [0-1].

    >>> OperatingPoint(serving="colocated", concurrency=64).kwargs()
    {'serving': 'colocated', 'concurrency': 64, 'workload': 'chat', 'cache_hit_frac': 0.0}
    """

    serving: str | None = None
    concurrency: float | None = None
    target_tok_per_s_per_user: float | None = None
    batch: Any = None
    context_tok: Any = None
    prefill_batch: Any = None
    workload: str = "chat"
    isl_tok: int | None = None
    osl_tok: int | None = None
    pd: tuple[int, int] | None = None
    cache_hit_frac: float = 0.0

    def kwargs(self) -> dict[str, Any]:
        """The :func:`price` keywords this point sets (fields left at None omitted)."""
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self) if getattr(self, f.name) is not None}


def _with_point(point: "OperatingPoint | None", given: OperatingPoint) -> OperatingPoint:
    """The operating point :func:`price` prices: ``given`` (its keywords as called), or ``point``
    where one is given; a field set both ways is one line naming it."""
    if point is None:
        return given
    if not isinstance(point, OperatingPoint):
        raise ValidationError(f"point must be an OperatingPoint, got {type(point).__name__}")
    both = [f.name for f in dataclasses.fields(OperatingPoint)
            if not _unset(getattr(given, f.name), f.default) and not _unset(getattr(point, f.name), f.default)]
    if both:
        raise ValidationError(f"{', '.join(both)} given both as a keyword and in point; give each once")
    return dataclasses.replace(point, **{f.name: getattr(given, f.name) for f in dataclasses.fields(OperatingPoint)
                                         if not _unset(getattr(given, f.name), f.default)})


def _unset(x: Any, default: Any) -> bool:
    """Whether an operating-point field holds its default (None, or the scalar default)."""
    return x is default or (isinstance(x, (int, float, str)) and not isinstance(x, bool) and x == default)


def default_serving(batch: Any = None, context_tok: Any = None, prefill_batch: Any = None,
                    cache_hit_frac: Any = 0.0) -> str:
    """The serving mode a price assumes where none is named: ``colocated`` (the model
    ``validate-serving`` scores), unless the operating point given is the decode-only steady
    state's (a ``batch``, a ``context_tok``, a ``prefill_batch`` or prefix-cache hits), then ``decode``.

    >>> default_serving(), default_serving(batch=64)
    ('colocated', 'decode')
    """
    decode_point = (batch is not None or context_tok is not None or prefill_batch is not None
                    or bool(np.any(np.asarray(cache_hit_frac, dtype=float) != 0)))
    return "decode" if decode_point else "colocated"


def serving_mode_label(serving: str, pd: tuple[int, int] | None = None) -> str:
    """What a price output calls its serving mode: ``decode-only steady state``, ``co-located``
    or ``disaggregated 1P:3D`` (prefill:decode instances)."""
    if serving == "disaggregated":
        return f"disaggregated {pd[0]}P:{pd[1]}D"
    return {"decode": "decode-only steady state", "colocated": "co-located"}[serving]


@dataclass(frozen=True)
class _Steady:
    """What a serving mode hands the economics (:func:`_priced`): throughput, the steps that set the
    chips' power, and the rates that split the chip time between input and output tokens.

    ``decode_rate`` is the output tokens/s per chip-second spent decoding and ``prefill_rate`` the
    input tokens/s per chip-second spent on prompts (decode-only: the two steady states' own rates;
    co-located: the served rates over each phase's share of the iterations; disaggregated: per
    decode GPU and per prefill GPU). ``prefill_busy_frac``: share of time the prefill chips work
    (disaggregated; idle power the rest), None where they always do.
    """

    dep: Any
    mode: str
    concurrency: float
    batch: Any
    context_tok: Any
    dec: Any
    pre: Any
    tok_per_s_per_chip: Any
    tok_per_s_per_replica: Any
    tok_per_s_per_user: Any
    decode_rate: Any
    prefill_rate: Any
    prefill_batch: Any
    ttft_s: Any
    prefill_busy_frac: Any = None
    n_prefill_gpus: float = float("nan")
    n_decode_gpus: float = float("nan")


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
          cache_hit_frac: Any = 0.0, serving: str | None = None, concurrency: float | None = None,
          isl_tok: int | None = None, osl_tok: int | None = None, pd: tuple[int, int] | None = None,
          point: OperatingPoint | None = None, **cost_overrides: Any) -> PriceResult:
    """Price per million input and output tokens, cost per chip-hour and energy per token of a deployment.

    Every price goes through here: the deployment's throughput in the chosen serving mode
    (communication, speculative decoding, overlap included), board power from what the chips do,
    a cost per chip-hour, then prices.

    Parameters
    ----------
    hardware, model, execution : str or spec
        Accelerator, model and execution plan; with ``system`` or the layout keywords they are
        resolved into a :class:`~tokenomics.deployment.Deployment` (production defaults:
        ``engine`` plan, a layout that fits, chunked prefill; see :mod:`tokenomics.deployment`).
    deployment : Deployment, optional
        Price exactly this deployment.
    point : OperatingPoint, optional
        The operating point as one object (its fields are the keywords below; give each once).
    serving : {"colocated", "disaggregated", "decode"}, optional
        How the chips serve requests (:data:`SERVING_MODES`): co-located continuous batching at
        ``concurrency`` (:func:`tokenomics.perf.serving.serve`, the model ``validate-serving``
        scores), prefill and decode instances with KV transfer at ``concurrency`` per decode
        instance (:func:`tokenomics.perf.serving.serve_disaggregated`) or the decode-only steady
        state at ``batch``. Default (:func:`default_serving`): ``colocated``, or ``decode`` where
        the decode steady state's operating point is given (``batch``, ``context_tok``,
        ``prefill_batch`` or a ``cache_hit_frac``).
    concurrency : float, optional
        ``colocated``: requests in flight per instance; ``disaggregated``: per decode instance
        [requests]. Default 32 per attention group, or the most that still serve each user
        ``target_tok_per_s_per_user`` (co-located).
    isl_tok, osl_tok : int, optional
        Prompt and output tokens per request [tokens]; default the workload's.
    pd : (int, int), optional
        ``disaggregated``: prefill and decode instances; default the split of :data:`PD_SPLITS`
        that serves the most output tokens per GPU.
    batch : int or array, optional
        Sequences decoded together per replica [sequences]; default
        :data:`DEFAULT_BATCH_PER_ATTN_GROUP` (32) per attention group (:func:`default_batch`,
        what ``tokenomics price`` prices), or the cheapest batch that meets
        ``target_tok_per_s_per_user``.
    context_tok : int or array, optional
        ``decode``: cached tokens each sequence attends to; default the prompt plus half the
        output (the average context over a request) [tokens].
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
        ``decode``: prompts prefilled together (default: the deployment's chunk / prompt length).
    target_tok_per_s_per_user : float, optional
        Serve each user this fast [tokens/s]: ``decode`` the cheapest batch, ``colocated`` the
        most requests in flight (:func:`tokenomics.perf.serving.serve_at_target`); where no
        layout is given, the layout of the chip's systems serving the most tokens per chip.
    utilization_frac, margin_frac : float or array, optional
        Share of hours sold (0, 1] and gross margin [0, 1); defaults from ``tco_params.csv``
        (1 and 0: InferenceX's cost to serve). Unsold hours pay idle-power electricity, sold
        ones busy power (see :func:`tokenomics.econ.utilization.from_load_profile` for a
        utilization implied by a daily load curve).
    cache_hit_frac : float, optional
        ``decode``: share of input tokens that hit a prefix cache [0, 1] and skip prefill compute
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
        With ``serving_mode`` and the operating point (``concurrency``, ``input_tok``, ``output_tok``).
    """
    dep = deployment_of(hardware, model, execution, deployment=deployment, system=system, parallel=parallel,
                        tp=tp, ep=ep, dp_attention=dp_attention, engine=engine, spec=spec,
                        weight_precision=weight_precision, expert_precision=expert_precision,
                        kv_precision=kv_precision, prefill_chunk_tok=prefill_chunk_tok, ar_impl=ar_impl,
                        a2a_impl=a2a_impl, overlap=overlap)
    op = _with_point(point, OperatingPoint(
        serving=serving, concurrency=concurrency, target_tok_per_s_per_user=target_tok_per_s_per_user, batch=batch,
        context_tok=context_tok, prefill_batch=prefill_batch, workload=workload, isl_tok=isl_tok, osl_tok=osl_tok,
        pd=pd, cache_hit_frac=cache_hit_frac))
    serving = op.serving or default_serving(op.batch, op.context_tok, op.prefill_batch, op.cache_hit_frac)
    v.one_of(serving, "serving", SERVING_MODES)
    v.one_of(output_convention, "output_convention", OUTPUT_CONVENTIONS)
    in_tok, out_tok = _lengths(op.workload, op.isl_tok, op.osl_tok)
    utilization_frac, margin_frac = _sold_and_margin(utilization_frac, margin_frac)
    v.fraction(op.cache_hit_frac, "cache_hit_frac")
    v.one_of(on_oom, "on_oom", ("raise", "mask"))
    target = op.target_tok_per_s_per_user
    bases = _target_bases(dep, parallel, tp, ep) if target is not None else []
    st = _served(dep, bases, serving, in_tok, out_tok, batch=op.batch, context_tok=op.context_tok,
                 prefill_batch=op.prefill_batch, cache_hit_frac=op.cache_hit_frac, concurrency=op.concurrency,
                 pd=op.pd, target=target, on_oom=on_oom)
    return _priced(st, cost, cost_overrides, power, utilization_frac, margin_frac, op.cache_hit_frac,
                   output_convention, op.workload, in_tok, out_tok)


def _served(dep, bases: list, serving: str, in_tok: int, out_tok: int, *, batch: Any, context_tok: Any,
            prefill_batch: Any, cache_hit_frac: Any, concurrency: Any, pd: Any, target: Any, on_oom: str) -> "_Steady":
    """The serving steady state :func:`price` prices: ``serving``'s throughput at its operating point
    (``bases``: the layouts a target-speed search weighs)."""
    if serving == "decode":
        if concurrency is not None or pd is not None:
            raise ValidationError("concurrency and pd set a co-located or disaggregated operating point; the "
                                  "decode-only steady state takes batch (or give serving='colocated')")
        context_tok = in_tok + out_tok // 2 if context_tok is None else context_tok
        return _decode_steady(dep, bases, batch, context_tok, in_tok, prefill_batch, target, on_oom)
    _check_oracle_args(serving, batch, context_tok, prefill_batch, cache_hit_frac, concurrency, target, pd)
    if serving == "colocated":
        return _colocated_steady(dep, bases, in_tok, out_tok, concurrency, target)
    return _disaggregated_steady(dep, in_tok, out_tok, concurrency, pd, target, float(cache_hit_frac))


def _sold_and_margin(utilization_frac: Any, margin_frac: Any) -> tuple[Any, Any]:
    """Share of hours sold and gross margin: as given (checked), else ``tco_params.csv``'s."""
    from .econ import pricing
    from .econ.tco import param

    if utilization_frac is None:
        utilization_frac = param("utilization_frac")
    if margin_frac is None:
        margin_frac = param("margin_frac")
    pricing.check_utilization(utilization_frac)
    pricing.check_margin(margin_frac)
    return utilization_frac, margin_frac


def _lengths(workload: str, isl_tok: Any, osl_tok: Any) -> tuple[int, int]:
    """Prompt and output tokens of a request: the workload's, each replaced where given."""
    in_tok, out_tok = workload_mix(workload)
    if isl_tok is not None:
        v.count(isl_tok, "isl_tok")
        in_tok = int(isl_tok)
    if osl_tok is not None:
        v.count(osl_tok, "osl_tok")
        out_tok = int(osl_tok)
    return in_tok, out_tok


def _check_oracle_args(serving: str, batch: Any, context_tok: Any, prefill_batch: Any, cache_hit_frac: Any,
                       concurrency: Any, target: Any, pd: Any) -> None:
    """The arguments a co-located or disaggregated price takes: one request mix at one operating point."""
    given = [n for n, x in (("batch", batch), ("context_tok", context_tok), ("prefill_batch", prefill_batch))
             if x is not None]
    if given:
        raise ValidationError(f"{', '.join(given)} set the decode-only steady state; serving={serving!r} sets its "
                              "batches from the concurrency and each sequence's context from isl/osl: drop them")
    if serving == "colocated" and np.any(np.asarray(cache_hit_frac, float) != 0):
        raise ValidationError("cache_hit_frac applies to the decode-only steady state and disaggregated serving (a "
                              "co-located engine's prefix cache is not in the serving model); leave it 0 with "
                              "serving='colocated'")
    if np.ndim(cache_hit_frac) or float(cache_hit_frac) >= 1:
        raise ValidationError(f"serving={serving!r} takes one cache_hit_frac below 1, got {cache_hit_frac!r}")
    if concurrency is not None and target is not None:
        raise ValidationError("give either concurrency or target_tok_per_s_per_user, not both")
    if concurrency is not None:
        v.positive(concurrency, "concurrency")
        if np.ndim(concurrency):
            raise ValidationError(f"concurrency must be one number of requests in flight, got {concurrency!r}")
    if pd is not None:
        if serving != "disaggregated":
            raise ValidationError("pd (prefill:decode instances) applies to serving='disaggregated'")
        if len(tuple(pd)) != 2 or any(int(x) != x or x < 1 for x in pd):
            raise ValidationError(f"pd must be two whole numbers of instances >= 1 (prefill, decode), got {pd!r}")


def _prefill_of(dep, in_tok: int, prefill_batch: Any):
    """The prefill batch (the chunk budget, at most what memory holds, or as given) and its step."""
    from .errors import DoesNotFitError

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
    return pb, dep.prefill(in_tok, batch=pb)


def _decode_steady(dep, bases: list, batch: Any, context_tok: Any, in_tok: int, prefill_batch: Any,
                   target: Any, on_oom: str) -> _Steady:
    """The decode-only steady state: decode at ``batch`` (or the cheapest batch meeting ``target``),
    prefill of the workload's prompt at its own rate."""
    from .errors import DoesNotFitError

    if target is not None:
        if batch is not None:
            raise ValidationError("give either batch or target_tok_per_s_per_user, not both")
        if bases:
            dep, batch = _cheapest_layout_for_target(bases, target, context_tok)
        else:
            batch = dep.batch_for_target(target, int(np.max(context_tok)))
    if batch is None:
        batch = default_batch(dep)
    v.count(batch, "batch")
    dec = dep.decode(batch, context_tok, check_memory=False)
    fits = np.asarray(dec.fits)
    if on_oom == "raise" and not np.all(fits):
        from .perf.parallel import check_fit

        check_fit(dep.model, dep.system, dep.parallel, np.max(batch), np.max(context_tok), dep.weight_precision,
                  dep.kv_precision, dep.expert_precision)
        raise DoesNotFitError(f"{dep.label()}: batch {int(np.max(batch))} at context {int(np.max(context_tok))} "
                              f"does not fit; the largest that fits is {int(np.min(dep.max_batch(context_tok)))}")
    pb, pre = _prefill_of(dep, in_tok, prefill_batch)
    tps = np.where(fits, np.asarray(dec.tok_per_s_per_chip, float), np.nan)
    return _Steady(dep=dep, mode=serving_mode_label("decode"), concurrency=float("nan"), batch=dec.batch,
                   context_tok=dec.context_tok, dec=dec, pre=pre, tok_per_s_per_chip=tps,
                   tok_per_s_per_replica=np.where(fits, np.asarray(dec.tok_per_s_per_replica, float), np.nan),
                   tok_per_s_per_user=np.where(fits, np.asarray(dec.tok_per_s_per_user, float), np.nan),
                   decode_rate=tps, prefill_rate=np.asarray(pre.tok_per_s_per_chip, float), prefill_batch=np.asarray(pb),
                   ttft_s=np.asarray(pre.step_time_s, float))


def _holds_request(dep, in_tok: int, out_tok: int) -> bool:
    """Whether one request of ``in_tok + out_tok`` tokens fits next to ``dep``'s weights."""
    return bool(np.min(dep.max_batch(in_tok + out_tok)) >= 1)


def _require_request(dep, in_tok: int, out_tok: int) -> None:
    """Raise :class:`~tokenomics.errors.DoesNotFitError` unless one request of ``in_tok + out_tok``
    tokens fits: naming the weights against the usable memory where the weights alone do not fit."""
    if _holds_request(dep, in_tok, out_tok):
        return
    from .errors import DoesNotFitError
    from .perf.parallel import check_fit

    check_fit(dep.model, dep.system, dep.parallel, 1, in_tok + out_tok, dep.weight_precision, dep.kv_precision,
              dep.expert_precision, mem_frac=dep.mem_frac)
    raise DoesNotFitError(f"{dep.label()}: not one request of {in_tok}+{out_tok} tokens fits next to the weights")


def _colocated_result(dep, bases: list, in_tok: int, out_tok: int, concurrency: Any, target: Any):
    """(deployment, :class:`~tokenomics.perf.serving.ServingResult`) of co-located serving: at the
    stated concurrency, or at the most requests that keep each user at ``target`` on the layout of
    ``bases`` (every candidate of the chip's systems) serving the most output tokens per chip."""
    from .perf.serving import serve, serve_at_target

    if target is None:
        _require_request(dep, in_tok, out_tok)
        c = float(32 * int(dep.parallel.attn_dp) if concurrency is None else concurrency)
        return dep, dataclasses.replace(serve(dep, isl_tok=in_tok, osl_tok=out_tok, concurrency=c), concurrency=c)
    cands = [c for c in (_layouts_of(bases) if bases else [dep]) if _holds_request(c, in_tok, out_tok)]
    best = None
    for cand in cands:
        r = serve_at_target(cand, isl_tok=in_tok, osl_tok=out_tok, tok_per_s_per_user=float(target))
        if r is not None and (best is None or float(r.output_tok_per_s_per_gpu) > float(best[1].output_tok_per_s_per_gpu)):
            best = (cand, r)
    if best is None:
        raise TargetSpeedError(
            f"no concurrency serves {float(target):g} tok/s per user co-located with {dep.model.name} "
            f"({in_tok} in / {out_tok} out) on any of the {len(cands)} layouts tried, even to one user; "
            "ask for a lower target, or add speculative decoding (spec)")
    return best


def _colocated_steady(dep, bases: list, in_tok: int, out_tok: int, concurrency: Any, target: Any) -> _Steady:
    """Co-located continuous batching (:func:`tokenomics.perf.serving.serve`): output tokens/s per
    chip as the serving model predicts them; the iteration time splits into decoding (the decode
    step at the served batch) and the prompts' chunks riding in it."""
    dep, r = _colocated_result(dep, bases, in_tok, out_tok, concurrency, target)
    ctx = float(round(in_tok + out_tok / 2.0))  # the serving model's mean context
    dec = dep.decode(max(1, int(round(float(r.batch)))), ctx, check_memory=False, engine_step_s=r.engine_step_s)
    pre_frac = float(np.clip(1.0 - float(np.max(dec.step_time_s)) / float(r.iteration_s), 0.0, 1.0))
    out = float(r.output_tok_per_s_per_gpu)
    inp = out * in_tok / out_tok  # input tokens/s per chip
    pb, pre = _prefill_of(dep, in_tok, None)
    return _Steady(dep=dep, mode=serving_mode_label("colocated"), concurrency=float(r.concurrency),
                   batch=np.asarray(float(r.batch)), context_tok=np.asarray(ctx), dec=dec,
                   pre=pre, tok_per_s_per_chip=np.asarray(out), tok_per_s_per_replica=np.asarray(out * dep.replica_chips),
                   tok_per_s_per_user=np.asarray(float(r.tok_per_s_per_user)),
                   decode_rate=np.asarray(out / max(1.0 - pre_frac, 1e-12)),
                   prefill_rate=np.asarray(inp / pre_frac if pre_frac > 0 else np.inf),
                   prefill_batch=np.asarray(float("nan")), ttft_s=np.asarray(float(r.ttft_s)))


def _disaggregated_split(dep, in_tok: int, out_tok: int, concurrency: Any, pd: Any, hit: float):
    """((P, D), result) of :func:`tokenomics.perf.serving.serve_disaggregated` at ``concurrency``
    per decode instance: the split ``pd``, else the one of :data:`PD_SPLITS` serving the most
    output tokens per GPU."""
    from .perf.serving import serve_disaggregated

    c = float(32 * int(dep.parallel.attn_dp) if concurrency is None else concurrency)
    n = dep.replica_chips
    best = None
    for p, d in ([tuple(int(x) for x in pd)] if pd is not None else PD_SPLITS):
        r = serve_disaggregated(dep, dep, n_prefill_gpus=p * n, n_decode_gpus=d * n, isl_tok=in_tok,
                                osl_tok=out_tok, concurrency=c * d, cache_hit_frac=hit)
        r = dataclasses.replace(r, concurrency=c * d)
        if best is None or float(r.output_tok_per_s_per_gpu) > float(best[1].output_tok_per_s_per_gpu):
            best = ((p, d), r)
    return best


def _disaggregated_at_target(dep, in_tok: int, out_tok: int, target: float, pd: Any, hit: float):
    """((P, D), result) of disaggregated serving with the most requests in flight that keep each
    user at ``target`` tokens/s, on the split ``pd`` or the one serving the most output tokens per GPU.

    A user's speed is the decode instance's at its batch, so the batch ``b*`` that meets the
    target fixes each decode instance's request rate; the prefill instances keep up with it where
    ``P / D`` is at least that rate over one prefill instance's capacity. The two smallest such
    splits of :data:`PD_SPLITS` are weighed (the largest where none keeps up); on each, the
    concurrency per decode instance is the largest whole number from ``b*`` to ``2 b*`` whose
    users still see the target (bisection: the speed falls as requests are added). At most as
    many requests wait for prefill as decode: near a prefill instance's capacity, more requests
    in flight would only lengthen the queue (TTFT) for a vanishing gain in throughput.
    """
    from .perf.serving import serve, serve_disaggregated

    ctx = int(round(in_tok + out_tok / 2.0))
    b_star = dep.batch_for_target(float(target), ctx)
    isl_p = max(1.0, in_tok * (1.0 - hit))  # prompt tokens a prefill instance computes
    dec_tok_s = float(serve(dep, isl_tok=in_tok, osl_tok=out_tok, phase="decode", batch=b_star).output_tok_per_s_per_gpu)
    pre_tok_s = float(serve(dep, isl_tok=isl_p, osl_tok=out_tok, phase="prefill").total_tok_per_s_per_gpu)
    # requests/s a decode instance finishes at b* over those a prefill instance prefills (per GPU)
    ratio = (dec_tok_s / out_tok) / (pre_tok_s / isl_p)
    splits = sorted(PD_SPLITS, key=lambda s: s[0] / s[1])
    keep_up = [s for s in splits if s[0] / s[1] >= ratio]
    cands = [tuple(int(x) for x in pd)] if pd is not None else (keep_up[:2] or splits[-1:])
    n = dep.replica_chips
    best = None
    for p, d in cands:
        def run(c: int, p: int = p, d: int = d):
            r = serve_disaggregated(dep, dep, n_prefill_gpus=p * n, n_decode_gpus=d * n, isl_tok=in_tok,
                                    osl_tok=out_tok, concurrency=float(c * d), cache_hit_frac=hit)
            return dataclasses.replace(r, concurrency=float(c * d))

        lo, r_lo = b_star, run(b_star)  # at most b* decoding: every user at the target
        hi, r_hi = 2 * b_star, run(2 * b_star)  # at most as many waiting for prefill as decoding
        if float(r_hi.tok_per_s_per_user) >= target:
            lo, r_lo, hi = hi, r_hi, None
        while hi is not None and hi - lo > 1:
            mid = (lo + hi) // 2
            r = run(mid)
            if float(r.tok_per_s_per_user) >= target:
                lo, r_lo = mid, r
            else:
                hi = mid
        if best is None or float(r_lo.output_tok_per_s_per_gpu) > float(best[1].output_tok_per_s_per_gpu):
            best = ((p, d), r_lo)
    return best


def _disaggregated_steady(dep, in_tok: int, out_tok: int, concurrency: Any, pd: Any, target: Any,
                          hit: float) -> _Steady:
    """Prefill and decode instances of ``dep`` with KV transfer
    (:func:`tokenomics.perf.serving.serve_disaggregated`) at ``concurrency`` per decode instance or
    at the target speed; cache hits skip prefill (input prices are per cache-miss token)."""
    _require_request(dep, in_tok, out_tok)
    if target is None:
        (p, d), r = _disaggregated_split(dep, in_tok, out_tok, concurrency, pd, hit)
    else:
        (p, d), r = _disaggregated_at_target(dep, in_tok, out_tok, float(target), pd, hit)
    n = dep.replica_chips
    ctx = float(round(in_tok + out_tok / 2.0))
    dec = dep.decode(max(1, int(round(float(r.batch)))), ctx, check_memory=False, engine_step_s=r.engine_step_s)
    pb, pre = _prefill_of(dep, max(1, int(round(in_tok * (1.0 - hit)))), None)
    out = float(r.output_tok_per_s_per_gpu)
    requests_s = out * (p + d) * n / out_tok
    pre_rate = requests_s * in_tok * (1.0 - hit) / (p * n)  # cache-miss input tokens/s per prefill GPU
    busy = min(1.0, pre_rate / float(np.max(pre.tok_per_s_per_chip)))
    return _Steady(dep=dep, mode=serving_mode_label("disaggregated", (p, d)), concurrency=float(r.concurrency),
                   batch=np.asarray(float(r.batch)), context_tok=np.asarray(ctx), dec=dec,
                   pre=pre, tok_per_s_per_chip=np.asarray(out), tok_per_s_per_replica=np.asarray(out * (p + d) * n),
                   tok_per_s_per_user=np.asarray(float(r.tok_per_s_per_user)),
                   decode_rate=np.asarray(float(r.output_tok_per_s_per_decode_gpu)), prefill_rate=np.asarray(pre_rate),
                   prefill_batch=np.asarray(pb), ttft_s=np.asarray(float(r.ttft_s)), prefill_busy_frac=busy,
                   n_prefill_gpus=float(p * n), n_decode_gpus=float(d * n))


def _board_powers(hw, power: Any, cm: Any, st: _Steady):
    """Board power while decoding and while prefilling, idle power, the decode step's HBM and
    FLOP utilization and its busy share [W, W, W, -, -, -]; NaN powers where a flat cost needs none."""
    from .econ.tco import CostInputs

    clip = lambda a: np.clip(np.nan_to_num(np.asarray(a, float), nan=0.0), 0.0, 1.0)  # noqa: E731
    dec, pre = st.dec, st.pre
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
    try:
        p_idle = _resolve_power(hw, power).board_power_w(0.0, 0.0)
    except DataError:
        p_idle = np.nan
    if st.prefill_busy_frac is not None:  # prefill chips that wait for prompts draw idle power
        p_pre = st.prefill_busy_frac * np.asarray(p_pre, float) + (1 - st.prefill_busy_frac) * p_idle
    return p_dec, p_pre, p_idle, hbm_u, flop_u, busy


def _priced(st: _Steady, cost: Any, cost_overrides: dict, power: Any, utilization_frac: Any, margin_frac: Any,
            cache_hit_frac: Any, output_convention: str, workload: str, in_tok: int, out_tok: int) -> PriceResult:
    """Cost per chip-hour, prices and energy of a serving steady state: decode chip time charged to
    output tokens, prompt chip time to input tokens (all-in: both to output tokens)."""
    from .econ import pricing
    from .econ.tco import CostInputs, cost_model

    dep = st.dep
    hw = dep.hardware
    if isinstance(cost, CostInputs) and cost_overrides:
        cost = cost.replace(**cost_overrides)
    cm = cost_model(hw, cost, **cost_overrides) if not isinstance(cost, CostInputs) else cost
    p_dec, p_pre, p_idle, hbm_u, flop_u, busy = _board_powers(hw, power, cm, st)
    # a chip-hour not sold draws idle power: charge each sold hour its busy power plus its share
    # of the unsold hours' idle power (electricity is linear in power)
    u = np.asarray(utilization_frac, float)
    p_dec_c = np.nan_to_num(u * np.asarray(p_dec, float) + (1 - u) * p_idle)
    p_pre_c = np.nan_to_num(u * np.asarray(p_pre, float) + (1 - u) * p_idle)
    tps = st.decode_rate
    pre_tps = st.prefill_rate
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
        # energy per token: the power while decoding (not the hour's mean) over the tokens it makes
        has_w = ok & np.isfinite(np.asarray(p_dec, float))
        busy_w = np.where(has_w, np.asarray(p_dec, float), 0.0)
        e = np.where(has_w, pricing.energy_j_per_tok(busy_w, safe_tps), np.nan)
        fe = np.where(has_w, pricing.energy_j_per_tok(cm.facility_power_w(busy_w), safe_tps), np.nan)
    bound = np.where(busy < 0.5, "communication", st.dec.core.bound)
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
        output_convention=output_convention, batch=st.batch, context_tok=st.context_tok,
        tok_per_s_per_chip=st.tok_per_s_per_chip, tok_per_s_per_replica=st.tok_per_s_per_replica,
        tok_per_s_per_user=st.tok_per_s_per_user,
        prefill_tok_per_s_per_chip=pre_tps, prefill_batch=st.prefill_batch, ttft_s=st.ttft_s,
        bound=bound, hbm_util_frac=hbm_u, flop_util_frac=flop_u, board_power_w=p_dec, prefill_board_power_w=p_pre,
        cost_usd_per_chip_h=cost_h, cost_breakdown_usd_per_chip_h=breakdown,
        utilization_frac=utilization_frac, margin_frac=margin_frac, cache_hit_frac=cache_hit_frac,
        price_usd_per_1k_input_tok=p_in, price_usd_per_1k_effective_input_tok=p_eff_in,
        price_usd_per_1k_output_tok=p_out,
        price_usd_per_1k_blended_tok=blended, energy_j_per_tok=e, facility_energy_j_per_tok=fe,
        wh_per_1k_tok=pricing.wh_per_1k_tok(fe), serving=_SERVING_OF[st.mode.split()[0]], serving_mode=st.mode,
        concurrency=st.concurrency, n_prefill_gpus=st.n_prefill_gpus, n_decode_gpus=st.n_decode_gpus,
        decode_tok_per_s_per_chip=tps,
        electricity_usd_per_kwh=np.asarray(getattr(cm, "electricity_usd_per_kwh", np.nan), float),
        capex_usd=np.asarray(getattr(cm, "capex_usd", np.nan), float), capex_source=str(getattr(cm, "capex_source", "")),
    )


_SERVING_OF = {"decode-only": "decode", "co-located": "colocated", "disaggregated": "disaggregated"}


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
             workload: str = "chat", batches: Any = None, serving: str = "decode", concurrencies: Any = None,
             **kwargs: Any) -> PriceResult:
    """Price along the latency-throughput frontier: one :func:`price` call over a batch sweep.

    ``serving="colocated"`` or ``"disaggregated"`` sweeps the requests in flight instead
    (``concurrencies``, default the batches 1, 2, 4, ... that fit; per decode instance when
    disaggregated): one :func:`price` per concurrency in that serving mode, returned as one result
    over the points (``serving_mode`` and ``concurrency`` per point in ``to_frame()``).
    """
    v.one_of(serving, "serving", SERVING_MODES)
    layout = {k: kwargs.pop(k) for k in list(kwargs) if k in _LAYOUT_KEYS}
    dep = deployment_of(hardware, model, execution, **layout)
    if serving != "decode":
        given = [n for n, x in (("batches", batches), ("context_tok", context_tok)) if x is not None]
        if given:
            raise ValidationError(f"{', '.join(given)} sweep the decode-only steady state; serving={serving!r} sweeps "
                                  "concurrencies (requests in flight) and takes each sequence's context from isl/osl")
        if concurrencies is None:
            in_tok, out_tok = _lengths(workload, kwargs.get("isl_tok"), kwargs.get("osl_tok"))
            concurrencies = dep.batch_grid(in_tok + out_tok // 2)
        v.count(concurrencies, "concurrencies")
        return _stacked([price(deployment=dep, workload=workload, serving=serving, concurrency=float(c), **kwargs)
                         for c in np.ravel(concurrencies)])
    if concurrencies is not None:
        raise ValidationError("concurrencies sweep serving='colocated' or 'disaggregated'; the decode-only steady "
                              "state sweeps batches")
    ctx = _context_tok(workload, context_tok)
    if batches is None:
        batches = dep.batch_grid(ctx)
    v.count(batches, "batches")
    return price(deployment=dep, batch=np.asarray(batches), context_tok=ctx, workload=workload,
                 on_oom="mask", **kwargs)


def _stacked(results: list) -> PriceResult:
    """Scalar prices of one deployment (:func:`price`) as one :class:`PriceResult` over their
    points, in order: each array field (and the operating point) one value per point."""
    first = results[0]
    keep = {"deployment", "workload", "input_tok", "output_tok", "cost_label", "cost_basis", "output_convention",
            "serving", "cost_breakdown_usd_per_chip_h"}
    upd: dict[str, Any] = {}
    for f in dataclasses.fields(PriceResult):
        vals = [getattr(r, f.name) for r in results]
        if f.name in keep or vals[0] is None:
            continue
        if f.name == "serving_mode":
            upd[f.name] = vals[0] if len(set(vals)) == 1 else np.array(vals)
        else:
            upd[f.name] = np.array([np.ravel(np.asarray(x))[0] for x in vals])
    upd["cost_breakdown_usd_per_chip_h"] = {k: np.array([np.ravel(np.asarray(r.cost_breakdown_usd_per_chip_h[k]))[0]
                                                         for r in results])
                                            for k in first.cost_breakdown_usd_per_chip_h}
    return dataclasses.replace(first, **upd)


def price_at_interactivity(hardware: Any = None, model: Any = None, execution: Any = None, *,
                           tok_per_s_per_user: Any, **kwargs: Any):
    """Price per million output tokens at each required per-user speed (tokens/s per user).

    Each speed is priced by :func:`price` with ``target_tok_per_s_per_user``: the most requests in
    flight (or the largest batch) that serve every user at least that fast and, where no layout is
    given, the cheapest layout of the chip's systems (the answer of ``tokenomics price
    --target-tok-s-user``), in :func:`price`'s serving mode (``serving``, default
    :func:`default_serving`). ``kwargs`` are :func:`price`'s (``workload``, ``serving``, layout
    keywords, ...).

    Returns
    -------
    pandas.DataFrame
        One row per speed: tok_per_s_per_user (the target) [tokens/s], deployment (its layout),
        batch, served_tok_per_s_per_user [tokens/s], usd_per_m_output_tok [USD/M tokens]
        (NaN, with an empty deployment, where nothing is fast enough), and
        frontier_min_usd_per_m_output_tok / frontier_max_usd_per_m_output_tok: the cheapest and
        dearest points of the resolver's own layout swept in the same serving mode
        (:func:`frontier`) [USD/M tokens].
    """
    import pandas as pd

    t = np.atleast_1d(np.asarray(tok_per_s_per_user, float))
    v.positive(t, "tok_per_s_per_user")
    if kwargs.get("serving") is None:
        kwargs["serving"] = default_serving(batch=kwargs.get("batches"), context_tok=kwargs.get("context_tok"),
                                            prefill_batch=kwargs.get("prefill_batch"),
                                            cache_hit_frac=kwargs.get("cache_hit_frac", 0.0))
    f = frontier(hardware, model, execution, **kwargs)
    ok = np.isfinite(f.usd_per_m_output_tok)
    p = f.usd_per_m_output_tok[ok]
    kwargs.pop("batches", None)  # the frontier's sweep, not a price keyword
    rows = []
    for target in t:
        try:
            r = price(hardware, model, execution, target_tok_per_s_per_user=float(target), **kwargs)
        except TargetSpeedError:
            rows.append({"deployment": "", "batch": np.nan, "served_tok_per_s_per_user": np.nan,
                         "usd_per_m_output_tok": np.nan})
            continue
        rows.append({"deployment": r.deployment.layout_label(), "batch": float(np.ravel(r.batch)[0]),
                     "served_tok_per_s_per_user": float(np.ravel(r.tok_per_s_per_user)[0]),
                     "usd_per_m_output_tok": float(np.ravel(r.usd_per_m_output_tok)[0])})
    out = pd.DataFrame(rows)
    out.insert(0, "tok_per_s_per_user", t)
    for i, (k, val) in enumerate((("hardware", f.hardware), ("model", f.model), ("execution", f.execution))):
        out.insert(i, k, val)
    out["frontier_min_usd_per_m_output_tok"], out["frontier_max_usd_per_m_output_tok"] = float(p.min()), float(p.max())
    return out


def disaggregated(prefill_hardware: Any, decode_hardware: Any, model: Any, execution: Any = "graph", *,
                  workloads: tuple[str, ...] = ("chat", "reasoning", "summarization"), batch: int = 64,
                  cost_prefill: Any = None, cost_decode: Any = None, target_ratio: float = 10.0,
                  weight_precision: str | None = None):
    """Disaggregated prefill (on ``prefill_hardware``) and decode (on ``decode_hardware``) versus
    co-located serving on ``prefill_hardware``, for each workload (the HC2000 10x claim).

    One chip of each kind serves the model (``tp`` 1). The rates are the serving model's, as
    ``validate-serving`` scores it: a prefill instance at full load and a decode instance at
    ``batch`` sequences (clipped to what fits) are the instances of
    :func:`tokenomics.perf.serving.serve_disaggregated`; co-located, the P chip serves ``batch``
    requests in flight with their prompts in its decode iterations
    (:func:`tokenomics.perf.serving.serve`). The chip-hours are priced by :func:`price` at the
    power of what each chip does (P co-located, D decoding); capex and costs are bottom-up
    unless given.

    Returns
    -------
    tokenomics.econ.disagg.DisaggResult
        Broadcast over the workloads.
    """
    from .econ.disagg import compare
    from .econ.pricing import chip_h_usd_of_price
    from .econ.tco import CostInputs, cost_model
    from .errors import DoesNotFitError
    from .perf.serving import serve

    deps = [deployment_of(hw, model, execution, tp=1, ep=1, weight_precision=weight_precision)
            for hw in (prefill_hardware, decode_hardware)]
    cp = cost_model(deps[0].hardware, cost_prefill)
    cd = cost_model(deps[1].hardware, cost_decode)
    for c, name in ((cp, prefill_hardware), (cd, decode_hardware)):
        if not isinstance(c, CostInputs):
            raise ValidationError(f"disaggregated needs bottom-up costs with capex for {name}; got a flat tier")
    rows = []
    for w in workloads:
        i, o = workload_mix(w)
        ctx = i + o // 2
        b = []
        for dep in deps:
            fit = int(np.min(dep.max_batch(ctx)))
            if fit < 1:
                raise DoesNotFitError(f"{dep.model.name} does not fit on one {dep.hardware.name} at context {ctx}")
            b.append(min(int(batch), fit))
        pre = float(serve(deps[0], isl_tok=i, osl_tok=o, phase="prefill").total_tok_per_s_per_gpu)
        dec_p, dec_d = (float(serve(dep, isl_tok=i, osl_tok=o, phase="decode", batch=bb).output_tok_per_s_per_gpu)
                        for dep, bb in zip(deps, b))
        col = price(deployment=deps[0], workload=w, serving="colocated", concurrency=b[0], cost=cp,
                    utilization_frac=1.0, margin_frac=0.0, output_convention="all-in")
        cost_p = float(chip_h_usd_of_price(col.price_usd_per_1k_output_tok, col.tok_per_s_per_chip))
        cost_d = float(price(deployment=deps[1], workload=w, batch=b[1], cost=cd, utilization_frac=1.0,
                             margin_frac=0.0).cost_usd_per_chip_h)
        rows.append((i, o, pre, dec_p, dec_d, cost_p, cost_d, o / float(col.tok_per_s_per_chip)))
    i, o, pre, dec_p, dec_d, cost_p, cost_d, n_c = (np.array(x, float) for x in zip(*rows))
    return compare(pre, dec_p, dec_d, cp.capex_usd, cd.capex_usd, cost_p, cost_d, i, o,
                   prefill_hardware=deps[0].hardware.name, decode_hardware=deps[1].hardware.name,
                   target_ratio=target_ratio, colocated_chip_s_per_request=n_c)
