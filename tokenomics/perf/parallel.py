"""Multi-chip systems and parallelism plans: sharding and per-chip memory fit.

A :class:`System` is ``n_chips`` of one accelerator joined by a scale-up fabric (an NVLink
switch, a TPU ICI mesh or torus, a "hyper mesh", or 8-chip switch boards joined by RDMA). A
:class:`ParallelPlan` splits a model over those chips with tensor (``tp``), expert (``ep``),
pipeline (``pp``) and data (``dp``) parallelism. :func:`memory_per_chip` says what each chip must
hold and :func:`check_fit` raises a one-line :class:`~tokenomics.errors.DoesNotFitError` when it
does not fit.

Conventions
-----------
A model replica spans ``pp`` stages of ``g = max(tp, ep)`` chips. Attention, dense MLPs, shared
experts, the router and the embedding/lm head are split ``tp`` ways; routed experts ``ep`` ways.
When ``ep > tp`` attention runs data-parallel over the ``ep / tp`` attention groups (DeepSeek-style
"DP attention"), which splits the KV cache by sequence. MLA's latent KV cache is not split by
``tp`` (every head reads the whole latent); GQA's is split over up to ``n_kv_heads`` ways.

Examples
--------
>>> from tokenomics.perf.parallel import system, ParallelPlan, memory_per_chip
>>> s = system("tpu-v7-16")
>>> m = memory_per_chip("kimi-k3", ParallelPlan(tp=16, ep=16), batch=1, context_tok=8192)
>>> round(m["weights_bytes"] / 1e9)                     # doctest: +SKIP
86
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass, fields, replace
from typing import Any

import numpy as np

from .. import _validate as v
from ..errors import DoesNotFitError, ValidationError, unknown_name
from ..specs import Accelerator, ModelSpec
from .memory import max_batch, resident_bytes, usable_hbm_bytes

#: Scale-up fabric kinds. ``switch``: every chip one hop from every other through a switch.
#: ``torus3d``/``mesh3d``: 3D grid with / without wraparound links (diameter sum(d//2) / sum(d-1)).
#: ``hypermesh3d``: every dimension fully connected (diameter = number of dimensions > 1).
#: ``switch+rdma``: boards of ``domain_chips`` behind a switch, boards joined by RDMA NICs.
TOPOLOGIES = ("switch", "torus3d", "mesh3d", "hypermesh3d", "switch+rdma")


def _nan(x: Any) -> float:
    try:
        return float(x)
    except (TypeError, ValueError):
        return float("nan")


def _dims(text: Any, n: int) -> tuple[int, ...]:
    if text is None or (isinstance(text, float) and math.isnan(text)) or str(text).strip() == "":
        return (int(n),)
    try:
        return tuple(int(x) for x in str(text).lower().split("x"))
    except ValueError:
        raise ValidationError(f"system dims must look like '4x4x8', got {text!r}") from None


@dataclass(frozen=True)
class System:
    """``n_chips`` accelerators joined by a scale-up fabric (and optionally scale-out).

    Parameters
    ----------
    name : str
        Catalog id (``datasets/systems.csv``).
    accelerator : Accelerator
        The chip.
    n_chips : int
        Chips in the system.
    topology : {"switch", "torus3d", "mesh3d", "hypermesh3d", "switch+rdma"}
        Scale-up fabric kind (see :data:`TOPOLOGIES`).
    dims : tuple of int
        Grid shape for mesh/torus fabrics (product = ``n_chips``); ``(n_chips,)`` for switches.
    domain_chips : int
        Chips that share the scale-up fabric; groups larger than this use scale-out.
    link_bytes_per_s : float
        Scale-up bandwidth per chip, one direction, all links together [B/s].
    hop_latency_s : float
        Latency added per fabric hop (per ring step) [s].
    scaleout_bytes_per_s : float
        Scale-out (NIC) bandwidth per chip, one direction [B/s]; NaN if none.
    unified_memory_bytes : float
        Claimed unified-addressed accelerator memory [B]; NaN if not claimed.
    """

    name: str
    accelerator: Accelerator
    n_chips: int
    topology: str = "switch"
    dims: tuple[int, ...] = ()
    domain_chips: int = 0
    link_bytes_per_s: float = float("nan")
    hop_latency_s: float = 1e-6
    scaleout_bytes_per_s: float = float("nan")
    unified_memory_bytes: float = float("nan")
    display_name: str = ""
    kind: str = ""
    source: str = ""
    as_of: str = ""
    note: str = ""

    def __post_init__(self) -> None:
        v.count(self.n_chips, f"{self.name}.n_chips")
        if self.topology not in TOPOLOGIES:
            raise unknown_name("topology", self.topology, TOPOLOGIES)
        dims = self.dims or (self.n_chips,)
        object.__setattr__(self, "dims", tuple(int(d) for d in dims))
        if not self.domain_chips:
            object.__setattr__(self, "domain_chips", self.n_chips)
        v.count(self.domain_chips, f"{self.name}.domain_chips")
        v.positive(self.link_bytes_per_s, f"{self.name}.link_bytes_per_s")
        v.non_negative(self.hop_latency_s, f"{self.name}.hop_latency_s")
        if self.topology in ("torus3d", "mesh3d", "hypermesh3d"):
            if int(np.prod(self.dims)) != self.n_chips:
                raise ValidationError(
                    f"{self.name}: dims {'x'.join(map(str, self.dims))} hold {int(np.prod(self.dims))} "
                    f"chips, but n_chips is {self.n_chips}")
        if self.topology == "switch+rdma" and not self.scaleout_bytes_per_s > 0:
            raise ValidationError(f"{self.name}: a switch+rdma system needs scaleout_bytes_per_s > 0")

    # ---- fabric geometry ------------------------------------------------------------------
    def group_dims(self, p: int) -> tuple[int, ...]:
        """Shape of the smallest block of the grid holding a group of ``p`` chips.

        Raises :class:`ValidationError` when ``p`` chips cannot tile the grid.
        """
        p = int(p)
        if p < 1 or p > self.n_chips:
            raise ValidationError(
                f"a group of {p} chips does not fit {self.name} ({self.n_chips} chips)")
        if self.topology in ("switch", "switch+rdma"):
            return (p,)
        rem, out = p, []
        for d in self.dims:
            g = math.gcd(d, rem)
            out.append(g)
            rem //= g
        if rem != 1:
            raise ValidationError(
                f"a group of {p} chips does not tile {self.name}'s {'x'.join(map(str, self.dims))} "
                f"{self.topology}; use a group size that divides the grid")
        return tuple(out)

    def diameter_hops(self, p: int) -> int:
        """Largest hop count between two chips of a group of ``p`` chips."""
        if p <= 1:
            return 0
        if self.topology in ("switch", "switch+rdma"):
            return 1
        d = self.group_dims(p)
        if self.topology == "torus3d":
            return int(sum(x // 2 for x in d))
        if self.topology == "mesh3d":
            return int(sum(x - 1 for x in d))
        return int(sum(1 for x in d if x > 1))  # hypermesh3d

    def crosses_scaleout(self, p: int) -> bool:
        """Whether a group of ``p`` chips spans more than one scale-up domain."""
        return int(p) > self.domain_chips

    @property
    def hbm_bytes_total(self) -> float:
        return self.accelerator.hbm_bytes * self.n_chips

    @classmethod
    def from_row(cls, row, accelerator: Accelerator) -> "System":
        def s(k):
            val = row.get(k, "")
            return "" if val is None or (isinstance(val, float) and math.isnan(val)) else str(val)

        n = int(row["n_chips"])
        dom = _nan(row.get("domain_chips"))
        return cls(
            name=s("name"), accelerator=accelerator, n_chips=n, topology=s("topology"),
            dims=_dims(row.get("dims"), n), domain_chips=int(dom) if dom == dom else n,
            link_bytes_per_s=_nan(row.get("link_bytes_per_s")),
            hop_latency_s=_nan(row.get("hop_latency_s")),
            scaleout_bytes_per_s=_nan(row.get("scaleout_bytes_per_s")),
            unified_memory_bytes=_nan(row.get("unified_memory_bytes")),
            display_name=s("display_name"), kind=s("kind"), source=s("source"), as_of=s("as_of"),
            note=s("note"))

    def replace(self, **changes: Any) -> "System":
        """A copy with some fields changed (validated again)."""
        return replace(self, **changes)

    def to_dict(self) -> dict[str, Any]:
        d = {f.name: getattr(self, f.name) for f in fields(self)}
        d["accelerator"] = self.accelerator.name
        d["dims"] = "x".join(map(str, self.dims))
        return d


def systems_table() -> "pd.DataFrame":  # noqa: F821
    """The system catalog (``datasets/systems.csv``) as a DataFrame."""
    from ..catalog import load

    return load("systems")


def system(name: "str | System") -> System:
    """Look up a catalogued :class:`System` by name (or pass one through).

    A :class:`System` is frozen, so lookups are cached per data directory (as
    :func:`tokenomics.catalog.accelerator` is): one name gives the same object, and deployments
    built on it compare equal.
    """
    if isinstance(name, System):
        return name
    from ..catalog import canonical_name, data_dir

    return _system_cached(canonical_name(name), str(data_dir()))


@functools.lru_cache(maxsize=256)
def _system_cached(name: str, _dir: str) -> System:
    from ..catalog import accelerator

    df = systems_table()
    if name not in df.index:
        raise unknown_name("system", name, df.index)
    row = df.loc[name]
    return System.from_row(row, accelerator(str(row["accelerator"])))


def system_names() -> list[str]:
    """Names of catalogued systems."""
    return list(systems_table().index)


@dataclass(frozen=True)
class ParallelPlan:
    """How a model is split over chips.

    Parameters
    ----------
    tp : int
        Tensor-parallel ways (attention heads, dense and shared MLPs, lm head).
    ep : int
        Expert-parallel ways (routed experts).
    pp : int
        Pipeline stages.
    dp : int
        Independent model replicas.
    moe_tp : int, optional
        Tensor-parallel ways inside each routed expert, when it is not what the stage leaves
        (``max(tp, ep) / ep``): attention data-parallel groups whose experts are split both by
        expert and inside each expert (TensorRT-LLM ``moe_tp_size`` x ``moe_ep_size``; Inferact's
        Kimi K3 kernel: attention TP32, experts EP8 x TP4). The stage is then ``ep * moe_tp``
        chips, a multiple of ``tp``.

    Notes
    -----
    One stage spans ``max(tp, ep)`` chips (``ep * moe_tp`` with ``moe_tp``), so ``max(tp, ep)``
    must be a multiple of ``min(tp, ep)``; a replica spans ``pp`` stages; the plan uses
    ``dp * pp * stage_chips`` chips.
    """

    tp: int = 1
    ep: int = 1
    pp: int = 1
    dp: int = 1
    moe_tp: int | None = None

    def __post_init__(self) -> None:
        for f in ("tp", "ep", "pp", "dp"):
            v.count(getattr(self, f), f)
        object.__setattr__(self, "tp", int(self.tp))
        object.__setattr__(self, "ep", int(self.ep))
        object.__setattr__(self, "pp", int(self.pp))
        object.__setattr__(self, "dp", int(self.dp))
        if self.moe_tp is not None:
            v.count(self.moe_tp, "moe_tp")
            mtp = int(self.moe_tp)
            if (self.ep * mtp) % self.tp:
                raise ValidationError(
                    f"moe_tp={mtp} x ep={self.ep} = {self.ep * mtp} chips must be a multiple of tp={self.tp}: "
                    f"the experts' group is the stage, split into attention groups of tp chips")
            # the split the stage already implies is the default one
            implied = max(self.tp, self.ep) // self.ep if max(self.tp, self.ep) % min(self.tp, self.ep) == 0 else 0
            object.__setattr__(self, "moe_tp", None if mtp == implied else mtp)
        if self.moe_tp is None and max(self.tp, self.ep) % min(self.tp, self.ep):
            raise ValidationError(
                f"tp={self.tp} and ep={self.ep} must nest (one a multiple of the other); "
                f"a stage spans max(tp, ep) chips")

    @property
    def stage_chips(self) -> int:
        """Chips of one pipeline stage, ``max(tp, ep)`` (``ep * moe_tp`` when ``moe_tp`` is set)."""
        return self.ep * self.moe_tp if self.moe_tp is not None else max(self.tp, self.ep)

    @property
    def expert_tp(self) -> int:
        """Tensor-parallel ways inside each routed expert, ``stage_chips / ep``."""
        return self.stage_chips // self.ep

    @property
    def attn_dp(self) -> int:
        """Data-parallel attention groups inside a stage (``ep / tp`` when ``ep > tp``)."""
        return self.stage_chips // self.tp

    @property
    def replica_chips(self) -> int:
        return self.pp * self.stage_chips

    @property
    def n_chips(self) -> int:
        return self.dp * self.replica_chips

    def label(self) -> str:
        moe = f"x{self.moe_tp}" if self.moe_tp is not None else ""
        return f"tp{self.tp}-ep{self.ep}{moe}-pp{self.pp}-dp{self.dp}"

    def replace(self, **changes: Any) -> "ParallelPlan":
        return replace(self, **changes)

    def to_dict(self) -> dict[str, Any]:
        d = {"tp": self.tp, "ep": self.ep, "pp": self.pp, "dp": self.dp}
        if self.moe_tp is not None:
            d["moe_tp"] = self.moe_tp
        return d


def check_layout(model: ModelSpec, tp: int = 1, ep: int = 1, pp: int = 1) -> None:
    """Raise a one-line :class:`ValidationError` if ``tp``/``ep``/``pp`` do not divide the model.

    The one check every path uses (single-chip steps, systems, deployments).
    """
    for name, val in (("tp", tp), ("ep", ep), ("pp", pp)):
        v.count(val, name)
    if model.n_q_heads % tp:
        raise ValidationError(
            f"tp={tp} does not divide {model.name}'s {model.n_q_heads} attention heads; "
            f"pick tp from the divisors of {model.n_q_heads}")
    if model.attention == "gqa" and tp > 1:
        kv = model.n_kv_heads
        if (tp <= kv and kv % tp) or (tp > kv and tp % kv):
            raise ValidationError(
                f"tp={tp} does not split {model.name}'s {kv} KV heads evenly (need tp | {kv} or {kv} | tp)")
    if ep > 1 and not model.is_moe:
        raise ValidationError(f"ep={ep} needs a mixture-of-experts model; {model.name} is dense (use ep=1)")
    if ep > 1 and ep > model.n_experts:
        raise ValidationError(
            f"ep={ep} exceeds {model.name}'s {model.n_experts} routed experts; pick ep <= {model.n_experts}")
    if pp > model.n_layers:
        raise ValidationError(f"pp={pp} exceeds {model.name}'s {model.n_layers} layers")


def check_plan(model: ModelSpec, parallel: ParallelPlan, sys: System | None = None) -> None:
    """Raise a one-line :class:`ValidationError` if the plan does not divide the model or chips."""
    tp, ep, pp = parallel.tp, parallel.ep, parallel.pp
    check_layout(model, tp, ep, pp)
    if sys is not None:
        if parallel.n_chips > sys.n_chips:
            raise ValidationError(
                f"plan {parallel.label()} uses {parallel.n_chips} chips, more than {sys.name}'s "
                f"{sys.n_chips}; use a layout of at most {sys.n_chips} chips")
        sys.group_dims(parallel.stage_chips)  # the stage group must tile the fabric


def _model(m) -> ModelSpec:
    if isinstance(m, ModelSpec):
        return m
    from ..catalog import model as _lookup

    return _lookup(m)


def memory_per_chip(model: "str | ModelSpec", parallel: ParallelPlan, batch: Any = 1,
                    context_tok: Any = 4096, weight_precision: str | None = None,
                    kv_precision: str = "bf16", expert_precision: str | None = None) -> dict[str, Any]:
    """Bytes each chip holds under a parallel plan (see :mod:`tokenomics.perf.memory`).

    Parameters
    ----------
    batch : int or array
        Sequences in one model replica.
    context_tok : int or array
        Cached tokens per sequence.

    Returns
    -------
    dict
        ``weights_bytes`` [B], ``kv_bytes`` [B], ``total_bytes`` [B], ``kv_bytes_per_seq`` [B].
    """

    return resident_bytes(_model(model), batch=batch, context_tok=context_tok, tp=parallel.tp,
                          ep=parallel.ep, pp=parallel.pp, attn_dp=parallel.attn_dp, stage=parallel.stage_chips,
                          weight_precision=weight_precision, expert_precision=expert_precision,
                          kv_precision=kv_precision)


#: What a deployment whose weights exceed its chips' memory is refused with: serving it would stream
#: weights from host memory over the host link every step, which the core does not time.
WEIGHT_OFFLOAD = "weights offloaded to host memory are not modelled"


def check_fit(model: "str | ModelSpec", sys: System, parallel: ParallelPlan, batch: Any = 1,
              context_tok: Any = 4096, weight_precision: str | None = None,
              kv_precision: str = "bf16", expert_precision: str | None = None,
              mem_frac: float | None = None) -> dict[str, Any]:
    """Check that every chip holds its shard; raise :class:`DoesNotFitError` otherwise.

    Returns the :func:`memory_per_chip` dict plus ``usable_bytes`` and ``fits`` (a boolean
    array over batch/context; the error is raised only when no configuration fits).
    ``mem_frac``: the engine's memory fraction (:func:`tokenomics.perf.memory.usable_hbm_bytes`).
    """
    m = _model(model)
    check_plan(m, parallel, sys)
    mem = memory_per_chip(m, parallel, batch, context_tok, weight_precision, kv_precision, expert_precision)
    usable = usable_hbm_bytes(sys.accelerator, mem_frac=mem_frac)
    fits = np.asarray(mem["total_bytes"]) <= usable
    mem["usable_bytes"] = usable
    mem["fits"] = fits
    if not np.any(fits):
        prec = weight_precision or m.native_precision
        w = mem["weights_bytes"]
        kv = float(np.min(mem["kv_bytes"]))
        if w > usable:  # the weights alone: a run like this streams them from host memory
            raise DoesNotFitError(
                f"{m.name} at {prec} does not fit per chip on {sys.name} with {parallel.label()}: weights "
                f"{w / 1e9:.1f} GB > {usable / 1e9:.1f} GB usable of {sys.accelerator.hbm_bytes / 1e9:.0f} GB HBM; {WEIGHT_OFFLOAD}; "
                f"raise tp/ep/pp or lower the precision so the weights fit in HBM")
        raise DoesNotFitError(
            f"{m.name} at {prec} does not fit per chip on {sys.name} with {parallel.label()}: "
            f"weights {w / 1e9:.1f} GB + KV {kv / 1e9:.1f} GB > {usable / 1e9:.1f} GB usable of "
            f"{sys.accelerator.hbm_bytes / 1e9:.0f} GB; raise tp/ep/pp, shorten the context or "
            f"lower the precision")
    return mem


def max_batch_per_replica(model: "str | ModelSpec", sys: System, parallel: ParallelPlan,
                          context_tok: Any = 4096, weight_precision: str | None = None,
                          kv_precision: str = "bf16", expert_precision: str | None = None,
                          mem_frac: float | None = None) -> np.ndarray:
    """Largest batch per replica whose weights and KV fit every chip (0 if the weights alone don't);
    ``mem_frac`` as in :func:`check_fit`."""

    return max_batch(_model(model), usable_hbm_bytes(sys.accelerator, mem_frac=mem_frac), context_tok=context_tok,
                     tp=parallel.tp, ep=parallel.ep, pp=parallel.pp, attn_dp=parallel.attn_dp,
                     stage=parallel.stage_chips,
                     weight_precision=weight_precision, expert_precision=expert_precision,
                     kv_precision=kv_precision)
