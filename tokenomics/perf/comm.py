"""Collectives with an alpha-beta model per topology, calibrated on public measurements.

A collective among ``p`` chips costs

    t = alpha_s + alpha_log2_s * log2(p) + steps * hop_latency_s + wire_bytes / (bw_frac * link_bytes_per_s)

* ``alpha_s``: fixed software/synchronisation cost of the implementation (fitted);
* ``alpha_log2_s``: growth with group size (fitted where the measurements span group sizes:
  DeepEP over RDMA); 0 elsewhere;
* ``steps``: latency steps of the algorithm on the fabric: ring all-reduce ``2(p-1)``, ring
  all-gather / reduce-scatter ``p-1``, tree ``2 ceil(log2 p)``, one-shot = the group's hop
  diameter, two-shot = twice that, direct all-to-all = the diameter (1 on a switch);
* ``wire_bytes``: bytes each chip sends: ring/two-shot all-reduce ``2(p-1)/p n``, one-shot
  ``(p-1) n``, tree ``2 n``, all-gather / reduce-scatter / all-to-all ``(p-1)/p n``;
* ``bw_frac``: achieved fraction of the per-chip link bandwidth (fitted).

Implementations (``impl``), each fitted on its own rows of ``datasets/collectives.csv``:

==============  ==========  =================================================================
impl            all-reduce  measured on
==============  ==========  =================================================================
nccl            ring        pynccl on H100 TP4/TP6 (vLLM PRs 24111, 24532)
custom_oneshot  one-shot    SGLang (TensorRT-LLM-derived) custom all-reduce, H100 TP8 (PR 2904)
vllm_custom     one-shot    vLLM custom all-reduce, H100 TP6/TP8 (PRs 2904, 24111)
symm_mem        two-shot    torch symmetric-memory multimem / NCCL symmetric, H100 (PRs 24111, 24532)
deepep_rdma     direct a2a  DeepEP V1 low-latency dispatch/combine over 400 Gb/s IB, EP8-256
deepep_ll       direct a2a  DeepEP low-latency dispatch/combine over NVLink, 8 B200 in one node
                            (aiconfigurator's SGLang 0.5.12 table)
ici_xla         two-shot    XLA all-gather on a TPU7x (Ironwood) 2x2x1 ICI mesh (Google's
                            accelerator-microbenchmarks); all-reduce as reduce-scatter +
                            all-gather, as XLA runs it on ICI
==============  ==========  =================================================================

``symm_mem`` is the symmetric-memory (one-sided load/store) variant with the lower latency; it is
also the stand-in for collectives issued from inside a megakernel. The fit subtracts the
calibration fabric's hop latency, so the same implementation moved to a mesh or torus pays its
own hops.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from .. import _validate as v
from ..catalog import data_dir
from ..errors import DataError, ValidationError, unknown_name
from .parallel import System

COLLECTIVES = ("allreduce", "allgather", "reducescatter", "all_to_all", "p2p")
ALGOS = ("ring", "tree", "oneshot", "twoshot", "direct")
#: Algorithms an all-reduce may be asked for: :data:`ALGOS` and ``auto`` (:func:`collective_time_s`).
AR_ALGOS = (*ALGOS, "auto")

#: The all-reduce algorithm of each implementation (how its measured bytes are counted).
IMPL_ALLREDUCE_ALGO = {"nccl": "ring", "custom_oneshot": "oneshot", "vllm_custom": "oneshot",
                       "symm_mem": "twoshot", "deepep_rdma": "ring", "deepep_ll": "ring",
                       "ici_xla": "twoshot", "pallas_ici": "twoshot"}


def wire_bytes(collective: str, algo: str, n_bytes: Any, p: Any) -> np.ndarray:
    """Bytes each chip puts on the wire [B] for a collective over ``p`` chips.

    ``n_bytes`` is the buffer size (all-reduce), the full gathered/scattered size (all-gather,
    reduce-scatter) or what one chip sends in total (all-to-all).

    Examples
    --------
    >>> float(wire_bytes("allreduce", "ring", 1e6, 8))   # 2 (p-1)/p n
    1750000.0
    >>> float(wire_bytes("allreduce", "oneshot", 1e6, 8))   # (p-1) n
    7000000.0
    """
    n = np.asarray(n_bytes, dtype=float)
    p = np.asarray(p, dtype=float)[()]  # one chip count: a numpy scalar (the same arithmetic, faster than 0-d)
    frac = (p - 1) / p
    if collective == "allreduce":
        if algo in ("ring", "twoshot", "direct"):
            return 2 * frac * n
        if algo == "oneshot":
            return (p - 1) * n
        if algo == "tree":
            return 2 * n * (p > 1)
        raise KeyError(algo)
    if collective in ("allgather", "reducescatter", "all_to_all"):
        return frac * n
    if collective == "p2p":
        return n * (p > 1)
    raise unknown_name("collective", collective, COLLECTIVES)


def latency_steps(collective: str, algo: str, p: Any, diameter: Any) -> np.ndarray:
    """Hop-latency steps of an algorithm (see the module docstring)."""
    p = np.asarray(p, dtype=float)[()]  # one chip count: a numpy scalar (the same arithmetic, faster than 0-d)
    d = np.asarray(diameter, dtype=float)
    if collective == "allreduce":
        if algo == "ring":
            return 2 * (p - 1)
        if algo == "tree":
            return 2 * np.ceil(np.log2(np.maximum(p, 1)))
        if algo == "twoshot":
            return 2 * d
        return d  # oneshot / direct
    if collective in ("allgather", "reducescatter"):
        return (p - 1) if algo == "ring" else d
    return d  # all_to_all, p2p


@dataclass(frozen=True)
class CollectiveImpl:
    """Fitted constants of one collective implementation.

    Attributes
    ----------
    name : str
    alpha_s : float
        Fixed cost per collective [s].
    alpha_log2_s : float
        Added cost per doubling of the group [s].
    bw_frac : float
        Achieved fraction of the link bandwidth [fraction; can exceed 1 where the switch reduces
        in-network].
    allreduce_algo : str
    n_points : int
        Measurements fitted.
    rms_rel_err_frac : float
        Root-mean-square relative error of the fit on those measurements.
    fitted_on : str
        Sources of the measurements.
    """

    name: str
    alpha_s: float
    alpha_log2_s: float
    bw_frac: float
    allreduce_algo: str
    n_points: int
    rms_rel_err_frac: float
    fitted_on: str


def _diameters(df) -> np.ndarray:
    """Hop diameter of each measurement's group: the ``diameter_hops`` column where given (mesh
    and torus fabrics), else 1 (a switch)."""
    if "diameter_hops" not in df:
        return np.ones(len(df))
    return df["diameter_hops"].astype(float).fillna(1.0).to_numpy()


def _fit_one(name: str, df) -> CollectiveImpl:
    from scipy.optimize import nnls

    algo = IMPL_ALLREDUCE_ALGO.get(name, "ring")
    p = df["n_chips"].to_numpy(float)
    n = df["message_bytes"].to_numpy(float)
    t = df["latency_s"].to_numpy(float)
    link = df["link_bytes_per_s"].to_numpy(float)
    hop = df["hop_latency_s"].fillna(0).to_numpy(float) if "hop_latency_s" in df else np.zeros_like(t)
    colls = df["collective"].tolist()
    algos = df["algo"].tolist()
    wire = np.array([float(wire_bytes(c, a, ni, pi)) for c, a, ni, pi in zip(colls, algos, n, p)])
    diam = _diameters(df)
    steps = np.array([float(latency_steps(c, a, pi, d)) for c, a, pi, d in zip(colls, algos, p, diam)])
    y = t - steps * hop
    spans_p = len(np.unique(p)) > 2
    cols = [np.ones_like(t)] + ([np.log2(p)] if spans_p else []) + [wire / link]
    A = np.column_stack(cols)
    # weight rows by 1/t so the fit is in relative error (small messages matter for decode)
    w = 1.0 / t
    x, _ = nnls(A * w[:, None], y * w)
    alpha = float(x[0])
    alpha_log2 = float(x[1]) if spans_p else 0.0
    inv_frac = float(x[-1])
    if inv_frac <= 0:
        raise DataError(f"collective fit for {name!r} found no bandwidth term; add larger messages")
    pred = A @ x + steps * hop
    rms = float(np.sqrt(np.mean(((pred - t) / t) ** 2)))
    srcs = "; ".join(sorted(set(df["source"].astype(str))))
    return CollectiveImpl(name, alpha, alpha_log2, 1.0 / inv_frac, algo, len(df), rms, srcs)


@functools.lru_cache(maxsize=4)
def _fits(path_key: str) -> dict[str, CollectiveImpl]:
    from ..catalog import load

    df = load("collectives")
    return {name: _fit_one(name, g) for name, g in df.groupby("impl")}


def impls() -> dict[str, CollectiveImpl]:
    """Fitted :class:`CollectiveImpl` for every implementation in ``datasets/collectives.csv``."""
    return _fits(str(data_dir()))


#: ``auto``: the faster of these at each message size (vLLM, SGLang and TRT-LLM switch from a
#: one-shot peer-memory all-reduce to NCCL as messages grow).
AUTO_IMPLS = ("nccl", "custom_oneshot")

#: ``auto`` inside one scale-up domain, by collective where it differs from :data:`AUTO_IMPLS`:
#: the expert all-to-all of attention-data-parallel ranks runs an engine's own dispatch/combine
#: kernels, measured as DeepEP's low-latency kernels over NVLink on B200 at DeepSeek-V3's shape
#: (~20 us fixed per call: routing metadata and barriers, which the all-reduce fits, at 5-10 us,
#: left out). TensorRT-LLM's NVLink two-sided all-to-all on GB200 NVL72 (aiconfigurator's
#: table, not fitted) agrees: its prepare + dispatch + combine per layer is 1.10x this fit's at
#: the median of EP8-64 and 1-8192 tokens per rank (0.89-1.25x; two one-token rows 1.4x, 2.0x).
SCALEUP_AUTO_IMPLS = {"all_to_all": ("deepep_ll",)}

#: ``auto`` for a group that crosses the scale-out network: only implementations that run over it
#: (the one-shot kernels read peers' memory over the scale-up fabric, which a NIC does not give):
#: NCCL for reductions and gathers; for the expert all-to-all, the RDMA kernels engines run
#: wide EP on across nodes (SGLang ``--moe-a2a-backend deepep``, TensorRT-LLM wide EP), measured
#: as DeepEP's low-latency dispatch/combine over 400 Gb/s InfiniBand at EP8-256.
SCALEOUT_AUTO_IMPLS = {"all_to_all": ("deepep_rdma",)}
SCALEOUT_AUTO_DEFAULT = ("nccl",)


def impl(name: "str | CollectiveImpl") -> CollectiveImpl:
    """One fitted implementation by name (``nccl``, ``custom_oneshot``, ``symm_mem``, ...)."""
    if isinstance(name, CollectiveImpl):
        return name
    if name == "auto":
        return impl(AUTO_IMPLS[0])  # validation only; collective_time_s takes the minimum
    fits = impls()
    if name not in fits:
        raise unknown_name("collective implementation", name, fits)
    return fits[name]


def fit_table() -> "pd.DataFrame":  # noqa: F821
    """The fitted constants with their provenance, one row per implementation."""
    import pandas as pd

    rows = []
    for f in impls().values():
        rows.append({"impl": f.name, "allreduce_algo": f.allreduce_algo, "alpha_s": f.alpha_s,
                     "alpha_log2_s": f.alpha_log2_s, "bw_frac": f.bw_frac, "n_points": f.n_points,
                     "rms_rel_err_frac": f.rms_rel_err_frac, "fitted_on": f.fitted_on})
    return pd.DataFrame(rows)


def calibration_table() -> "pd.DataFrame":  # noqa: F821
    """Each measurement of ``datasets/collectives.csv`` next to the fitted model's prediction."""
    from ..catalog import load

    df = load("collectives").copy()
    df["_diameter"] = _diameters(df)
    pred = []
    for _, r in df.iterrows():
        f = impl(r["impl"])
        steps = float(latency_steps(r["collective"], r["algo"], r["n_chips"], r["_diameter"]))
        wire = float(wire_bytes(r["collective"], r["algo"], r["message_bytes"], r["n_chips"]))
        pred.append(f.alpha_s + f.alpha_log2_s * math.log2(r["n_chips"]) + steps * r["hop_latency_s"]
                    + wire / (f.bw_frac * r["link_bytes_per_s"]))
    df["predicted_s"] = pred
    df["error_frac"] = df["predicted_s"] / df["latency_s"] - 1
    return df[["impl", "collective", "algo", "n_chips", "message_bytes", "latency_s",
               "predicted_s", "error_frac", "source"]]


def collective_time_s(collective: str, n_bytes: Any, p: int, system: System,
                      impl_name: "str | CollectiveImpl" = "nccl", algo: str | None = None) -> np.ndarray:
    """Time of one collective among ``p`` chips of ``system`` [s] (broadcasts over ``n_bytes``).

    Parameters
    ----------
    collective : {"allreduce", "allgather", "reducescatter", "all_to_all", "p2p"}
    n_bytes : float or array
        Message size [B] (see :func:`wire_bytes`).
    p : int
        Chips in the group (1 gives 0 s).
    system : System
        Fabric: link bandwidth, hop latency, topology; a group wider than the scale-up domain
        uses the scale-out bandwidth.
    impl_name : str or CollectiveImpl
        Fitted implementation.
    algo : str, optional
        Algorithm; defaults to the implementation's all-reduce algorithm (``direct`` for
        all-to-all, ``ring`` for all-gather/reduce-scatter under ``nccl``, else ``direct``).
        ``auto`` (all-reduce): the faster of one-shot and two-shot at each message size, as a
        kernel that switches from direct sends to reduce-scatter + all-gather as rows grow.

    Examples
    --------
    >>> from tokenomics.perf.parallel import system
    >>> t = collective_time_s("allreduce", 512, 8, system("dgx-h100"), "custom_oneshot")
    >>> 4e-6 < float(t) < 8e-6        # SGLang measured 5.9 us at 512 B, TP8 H100
    True
    """
    if collective not in COLLECTIVES:
        raise unknown_name("collective", collective, COLLECTIVES)
    if isinstance(impl_name, str) and impl_name == "auto":
        # engines pick the one-shot kernel for small messages and NCCL for large ones
        names = (SCALEOUT_AUTO_IMPLS.get(collective, SCALEOUT_AUTO_DEFAULT)
                 if system.crosses_scaleout(p) else SCALEUP_AUTO_IMPLS.get(collective, AUTO_IMPLS))
        return _least([collective_time_s(collective, n_bytes, p, system, name, algo) for name in names])
    if algo == "auto":
        if collective != "allreduce":
            algo = None
        else:
            return np.minimum(collective_time_s(collective, n_bytes, p, system, impl_name, "oneshot"),
                              collective_time_s(collective, n_bytes, p, system, impl_name, "twoshot"))
    v.non_negative(n_bytes, "n_bytes")
    v.count(p, "p")
    f = impl(impl_name)
    if algo is None:
        if collective == "allreduce":
            algo = f.allreduce_algo
        elif collective in ("allgather", "reducescatter"):
            algo = "ring" if f.allreduce_algo == "ring" else "direct"
        else:
            algo = "direct"
    if algo not in ALGOS:
        raise unknown_name("collective algorithm", algo, ALGOS)
    n = np.asarray(n_bytes, dtype=float)
    p = int(p)
    if p == 1:
        return np.zeros_like(n)
    if system.crosses_scaleout(p):
        if not system.scaleout_bytes_per_s > 0:
            raise ValidationError(
                f"a group of {p} chips exceeds {system.name}'s scale-up domain of "
                f"{system.domain_chips} and the system has no scale-out bandwidth")
        link = system.scaleout_bytes_per_s
        diameter = 1
    else:
        link = system.link_bytes_per_s
        diameter = system.diameter_hops(p)
    steps = latency_steps(collective, algo, p, diameter)
    wire = wire_bytes(collective, algo, n, p)
    return (f.alpha_s + f.alpha_log2_s * math.log2(p) + steps * system.hop_latency_s
            + wire / (f.bw_frac * link))


def _least(times: list[Any]) -> Any:
    """``np.min(times, axis=0)`` of arrays of one shape: their elementwise minimum (a numpy scalar
    where they are 0-d), without stacking them first."""
    out = times[0]
    for t in times[1:]:
        out = np.minimum(out, t)
    return out[()] if isinstance(out, np.ndarray) and out.ndim == 0 else (out.copy() if len(times) == 1 else out)


def kv_transfer_s(prefill_dep: Any, decode_dep: Any, isl_tok: float, n_gpus: float) -> float:
    """Time to move one prompt's KV cache from its prefill GPUs to its decode GPUs [s].

    Each prefill GPU that holds a shard of the sequence's cache sends it over its own link, in
    parallel: the shard is :func:`tokenomics.perf.memory.kv_bytes_per_seq_per_chip` at the prefill
    layout (split by KV head for GQA, whole for MLA), the bandwidth the decode system's scale-up
    link when the ``n_gpus`` of the deployment fit one scale-up domain, else its scale-out NIC
    (the scale-up link where no NIC is catalogued), plus one hop of latency.
    """
    from .memory import kv_bytes_per_seq_per_chip

    sys_ = decode_dep.system
    link = sys_.link_bytes_per_s
    if sys_.crosses_scaleout(int(math.ceil(n_gpus))) and sys_.scaleout_bytes_per_s > 0:
        link = sys_.scaleout_bytes_per_s
    p = prefill_dep.parallel
    shard = float(kv_bytes_per_seq_per_chip(prefill_dep.model, float(isl_tok), tp=p.tp, pp=p.pp,
                                            kv_precision=prefill_dep.kv_precision))
    return shard / float(link) + float(sys_.hop_latency_s)
