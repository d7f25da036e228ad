"""One decode step of a model on a multi-chip system: per-chip compute + collectives + overlap.

:func:`system_step` composes

* the single-chip core (:func:`tokenomics.perf.decode_step`) for the per-chip work of one
  tensor/expert-parallel shard (weights, KV, launches; no communication), plus the extra expert
  reads of the busiest expert-parallel chip (:func:`expert_load`: the core counts the average);
* the collectives each step needs (:mod:`tokenomics.perf.comm`, counted by
  :func:`collective_counts`): per layer one tensor-parallel all-reduce after attention and one
  after the MLP or MoE block; under attention data parallelism (``ep > tp``) a MoE layer instead
  dispatches and combines its tokens with two all-to-alls; one all-gather of the logits (and in a
  LatentMoE two per MoE layer, :func:`latent_gathers`), and ``pp - 1`` point-to-point sends
  between pipeline stages;
* overlap of communication with the chip's memory traffic where the execution plan allows it:
  ``"prefetch"`` (megakernel: the next layer's weights stream into on-chip memory while the
  collectives that close this layer are in flight (the MLP / MoE all-reduce and output gather,
  ``closing_s`` of :func:`forward_comm_s`), bounded per layer by the time to read the weights
  known before routing (:func:`dense_layer_bytes_per_chip`) and by on-chip capacity / HBM rate;
  collectives inside the layer (the attention all-reduce, the latent gather) stay exposed, as
  in Inferact's K3 kernel, whose next-layer prefetch starts once the routed-expert sums are sent),
  ``"tile"`` (super operators: communication fused into tile-pipelined compute, bounded by the
  layer's memory time), ``"two-batch"`` (two-batch overlap, as DeepSeek's and SGLang's
  expert-parallel serving: the batch runs as two micro-batches whose compute and communication
  alternate, so a step costs ``2 * max(compute, communication)`` of one half-batch; each
  micro-batch reads the weights again, so it only pays where communication is large),
  ``"none"`` (a serving engine: a collective waits for the kernel before);
* speculative decoding (:mod:`tokenomics.perf.speculative`): a ``gamma + 1``-token verify step
  plus the draft on the same chips: ``gamma`` one-token steps of the draft module, or one
  ``gamma + 1``-row step of a block draft (DSpark), or nothing for a model-free draft.

Conventions: ``batch`` is the number of sequences of one model replica; with ``ep > tp`` the
attention runs data-parallel over ``ep / tp`` groups, which the core sees as the replica's batch
with ``context_tok * max(batch / (ep / tp), 1) / batch`` (the KV traffic of the busiest attention
group, at least one sequence) while the experts still see the whole batch.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .. import _validate as v
from .._display import Display
from ..catalog import data_dir, model as _model_lookup
from ..specs import ExecutionPlan, ModelSpec, plan as _plan
from ..specs import component_precisions, precision_bytes
from . import comm
from .memory import kv_bytes_per_seq_per_chip, usable_hbm_bytes
from .ops import expected_distinct_experts
from .parallel import ParallelPlan, System, check_fit, check_plan, memory_per_chip, system as _system
from .speculative import SpecDecode

OVERLAP_MODES = ("none", "prefetch", "tile", "two-batch")

#: Bytes per element of the expert-parallel dispatch (fp8, as DeepEP's low-latency dispatch) and
#: of every other activation message (bf16 combine, all-reduce, all-gather, p2p).
DISPATCH_BYTES = 1.0
ACT_BYTES = 2.0


@dataclass(frozen=True, repr=False)
class SystemStepResult(Display):
    """Result of :func:`system_step`; array fields broadcast over batch and context.

    Attributes
    ----------
    step_time_s : ndarray
        Wall time of one decode step of a replica, draft included [s].
    compute_s : ndarray
        Per-chip time of the verify step [s]: the single-chip core plus ``imbalance_s``.
    imbalance_s : ndarray
        Extra expert-weight reads of the busiest expert-parallel chip over the average [s].
    comm_s : ndarray
        All collectives of the step, summed, before overlap [s].
    overlap_s : ndarray
        Communication hidden behind memory traffic [s].
    comm_exposed_s : ndarray
        ``comm_s - overlap_s`` [s].
    draft_s : ndarray
        Draft module cost per step [s] (0 without speculation).
    tokens_per_step : float
        Expected tokens each sequence gains per step [tokens].
    tok_per_s_per_user, tok_per_s_per_replica, tok_per_s_per_chip : ndarray
        Throughput per sequence, per replica, per chip [tokens/s].
    n_allreduce, n_all_to_all, n_allgather, n_p2p : int
        Collectives per forward pass.
    hbm_bytes_per_forward : ndarray
        Distinct HBM bytes one verify forward pass reads across the replica [B]: weights touched
        plus the batch's KV cache (:func:`forward_hbm_bytes`; replicated reads not counted).
    hbm_bytes_per_chip : ndarray
        HBM bytes the core says one chip reads per verify step [B].
    weights_bytes_per_chip, kv_bytes_per_chip : ndarray
        Memory each chip holds [B].
    """

    _display_columns = ("tp", "ep", "pp", "dp", "batch", "context_tok", "step_time_s", "comm_exposed_s",
                        "tok_per_s_per_user", "tok_per_s_per_chip", "fits")

    system: System
    model: ModelSpec
    plan: ExecutionPlan
    parallel: ParallelPlan
    spec: SpecDecode | None
    ar_impl: str
    a2a_impl: str
    overlap: str
    batch: np.ndarray
    context_tok: np.ndarray
    step_time_s: np.ndarray
    compute_s: np.ndarray
    imbalance_s: np.ndarray
    comm_s: np.ndarray
    allreduce_s: np.ndarray
    all_to_all_s: np.ndarray
    overlap_s: np.ndarray
    comm_exposed_s: np.ndarray
    draft_s: np.ndarray
    engine_s: Any
    tokens_per_step: float
    tok_per_s_per_user: np.ndarray
    tok_per_s_per_replica: np.ndarray
    tok_per_s_per_chip: np.ndarray
    n_allreduce: int
    n_all_to_all: int
    n_allgather: int
    n_p2p: int
    hbm_bytes_per_forward: np.ndarray
    hbm_bytes_per_chip: np.ndarray
    weights_bytes_per_chip: float
    kv_bytes_per_chip: np.ndarray
    fits: np.ndarray
    core: Any = field(repr=False, default=None)

    @property
    def n_collectives(self) -> int:
        """Collectives per forward pass (all kinds)."""
        return self.n_allreduce + self.n_all_to_all + self.n_allgather + self.n_p2p

    @property
    def tpot_s(self) -> np.ndarray:
        """Time per output token one user sees [s]."""
        return self.step_time_s / self.tokens_per_step

    def breakdown(self, index: int = 0):
        """Where one configuration's step time goes (the ``index``-th, flattened), in rows that add
        up to ``step_time_s``.

        The chip's operators (:meth:`tokenomics.perf.step.StepResult.breakdown`, kernel
        boundaries or host launches last), then the deployment's own terms: the busiest expert-
        parallel chip's extra work, the time two-batch overlap or host-bound launches change the
        chip's step by, each kind of collective, the part of them hidden behind memory traffic
        (negative), the draft model and the engine's per-step cost. Rows under a millionth of the
        step are left out.

        Returns
        -------
        pandas.DataFrame
            ``op``, ``kind`` (the core's kinds, or ``imbalance``, ``overlap``, ``collective``,
            ``draft``, ``engine``), ``time_s`` [s], ``bound``, ``bytes`` [B], ``flop``, ``kernels``
            (per chip; NaN on the deployment's rows), ``share`` of the step [fraction].
        """
        import pandas as pd

        from .step import element_at

        shape = np.broadcast(self.step_time_s, self.batch, self.context_tok).shape

        def pick(a):
            return element_at(a, shape, index)

        core = self.core.breakdown(index)[["op", "kind", "time_s", "bound", "bytes", "flop", "kernels"]]
        core_s = float(core["time_s"].sum())
        allreduce, a2a, comm = pick(self.allreduce_s), pick(self.all_to_all_s), pick(self.comm_s)
        imbalance = pick(self.imbalance_s)
        extra = [
            ("expert imbalance (busiest chip)", "imbalance", imbalance),
            ("two micro-batches (weights read twice)" if self.overlap == "two-batch" else
             "host launches beyond the chip's work", "overlap", pick(self.compute_s) - core_s - imbalance),
            ("all-reduce", "collective", allreduce),
            ("all-to-all (dispatch + combine)", "collective", a2a),
            ("gathers and pipeline sends", "collective", comm - allreduce - a2a),
            ("collectives hidden behind memory traffic", "overlap", -pick(self.overlap_s)),
            ("draft model", "draft", pick(self.draft_s)),
            ("engine per-step cost", "engine", pick(self.engine_s)),
        ]
        step = pick(self.step_time_s)
        rows = [{"op": name, "kind": kind, "time_s": t, "bound": kind, "bytes": np.nan, "flop": np.nan,
                 "kernels": np.nan} for name, kind, t in extra if abs(t) > 1e-6 * step]
        df = pd.concat([core, pd.DataFrame(rows, columns=core.columns)], ignore_index=True) if rows else core.copy()
        df["share"] = df["time_s"] / step
        return df

    def to_frame(self):
        """One row per (batch, context) configuration."""
        import pandas as pd

        shape = np.broadcast(self.step_time_s, self.batch, self.context_tok).shape
        cols = {
            "system": self.system.name, "accelerator": self.system.accelerator.name,
            "model": self.model.name, "plan": self.plan.name, "tp": self.parallel.tp,
            "ep": self.parallel.ep, "pp": self.parallel.pp, "dp": self.parallel.dp,
            "chips": self.parallel.replica_chips, "ar_impl": self.ar_impl, "a2a_impl": self.a2a_impl,
            "overlap": self.overlap, "spec": self.spec.method if self.spec else "none",
            "batch": self.batch, "context_tok": self.context_tok,
            "step_time_s": self.step_time_s, "compute_s": self.compute_s,
            "imbalance_s": self.imbalance_s, "comm_s": self.comm_s,
            "overlap_s": self.overlap_s, "comm_exposed_s": self.comm_exposed_s,
            "draft_s": self.draft_s, "engine_s": self.engine_s, "tokens_per_step": self.tokens_per_step,
            "tpot_s": self.tpot_s, "tok_per_s_per_user": self.tok_per_s_per_user,
            "tok_per_s_per_replica": self.tok_per_s_per_replica, "tok_per_s_per_chip": self.tok_per_s_per_chip,
            "n_allreduce": self.n_allreduce, "n_all_to_all": self.n_all_to_all,
            "n_collectives": self.n_collectives, "hbm_bytes_per_forward": self.hbm_bytes_per_forward,
            "hbm_bytes_per_chip": self.hbm_bytes_per_chip,
            "weights_bytes_per_chip": self.weights_bytes_per_chip,
            "kv_bytes_per_chip": self.kv_bytes_per_chip, "fits": self.fits,
        }
        return pd.DataFrame({k: np.broadcast_to(np.asarray(val), shape).ravel() for k, val in cols.items()})


def collective_counts(model: ModelSpec, parallel: ParallelPlan) -> dict[str, int]:
    """Collectives per forward pass of ``model`` under ``parallel``.

    Where attention is tensor-parallel over the whole stage (no attention data parallelism),
    every chip holds every token after the attention all-reduce, so a MoE layer needs no
    dispatch: each chip runs its own experts (or its shard of every expert) on the tokens routed
    to them and one all-reduce sums the outputs, as vLLM and SGLang run TP + EP without DP
    attention. With attention data parallelism (``ep > tp``) each attention group holds only its
    own tokens, which an all-to-all dispatches to the experts' chips and another combines back.

    Returns
    -------
    dict
        ``allreduce`` (when ``tp > 1``: one per layer after attention and one per MLP or MoE
        layer, except MoE layers under attention data parallelism), ``all_to_all`` (dispatch +
        combine per MoE layer under attention data parallelism), ``allgather`` (when ``tp > 1``:
        the logits, and in a LatentMoE two per MoE layer: the latent after the tensor-parallel
        down projection, the hidden state after the up projection, as Inferact's K3 and Muse
        Spark megakernels gather them), ``p2p`` (``pp - 1``).

    Examples
    --------
    >>> from tokenomics.catalog import model
    >>> collective_counts(model("kimi-k3"), ParallelPlan(tp=8, ep=128))["all_to_all"]   # 92 x 2
    184
    >>> collective_counts(model("kimi-k3"), ParallelPlan(tp=16, ep=16))["allreduce"]    # 93 x 2
    186
    """
    tp1 = parallel.tp > 1
    dispatch = parallel.ep > 1 and parallel.attn_dp > 1 and model.is_moe
    mlp_allreduce = model.n_dense_layers + (0 if dispatch else model.n_moe_layers)
    return {
        "allreduce": (model.n_layers + mlp_allreduce) if tp1 else 0,
        "all_to_all": 2 * model.n_moe_layers if dispatch else 0,
        "allgather": (1 + latent_gathers(model)) if tp1 else 0,
        "p2p": parallel.pp - 1,
    }


def latent_gathers(model: ModelSpec) -> int:
    """All-gathers per forward a LatentMoE adds under tensor parallelism: its down projection
    is output-sharded (each chip computes a slice of the latent the experts need whole) and so is
    its up projection (a slice of the hidden state), two per MoE layer; 0 without a latent."""
    return 2 * model.n_moe_layers if model.moe_latent_dim and model.is_moe else 0


def expected_experts_touched(model: ModelSpec, tokens: Any) -> np.ndarray:
    """Distinct routed experts per MoE layer hit by ``tokens`` tokens, uniform routing
    (:func:`tokenomics.perf.ops.expected_distinct_experts` of the model's experts); 0 for a dense model.
    """
    if not model.is_moe:
        return np.zeros_like(np.asarray(tokens, dtype=float))
    return expected_distinct_experts(tokens, model.n_experts, model.experts_per_token)


@functools.cache
def _binom_cdf_ufunc() -> Any:
    """SciPy's private ``_binom_cdf`` ufunc, imported once; None where SciPy has none."""
    try:
        from scipy.special._ufuncs import _binom_cdf as cdf
    except ImportError:  # a SciPy without the private ufunc
        return None
    return cdf


def _binom_cdf(k: np.ndarray, n: int, p: np.ndarray) -> np.ndarray:
    """``scipy.stats.binom.cdf(k, n, p)`` for whole ``0 <= k < n``: the ufunc it evaluates, without
    its per-call argument checks and masking where every ``p`` is a probability (the same values);
    ``binom.cdf`` itself otherwise."""
    cdf = _binom_cdf_ufunc()
    if cdf is None or not bool(((p >= 0) & (p <= 1)).all()):
        from scipy.stats import binom

        return binom.cdf(k, n, p)
    return np.clip(cdf(np.floor(k), n, p), 0, 1)


def expert_load(model: ModelSpec, tokens: Any, ep: int) -> tuple[np.ndarray, np.ndarray]:
    """Mean and expected maximum of the distinct routed experts one chip must read per MoE layer.

    Each expert is touched with probability ``q = 1 - (1 - k/n)^tokens`` (uniform routing); a
    chip holds ``n / ep`` experts, so its load is Binomial(n/ep, q) and the busiest of ``ep``
    chips reads ``E[max] = sum_j (1 - F(j-1)^ep)`` experts. Decode latency follows the busiest chip.

    Examples
    --------
    >>> from tokenomics.catalog import model
    >>> mean, mx = expert_load(model("kimi-k3"), 1, 128)   # 16 of 896 experts, 7 per chip
    >>> round(float(mean), 4), round(float(mx), 2)         # mean 7 x 16 / 896
    (0.125, 1.58)
    """
    tok = np.asarray(tokens, dtype=float)
    if not model.is_moe:
        z = np.zeros_like(tok)
        return z, z
    n, k = model.n_experts, model.experts_per_token
    per = n // ep
    q = expected_distinct_experts(tok, n, k) / n  # the chance one expert is touched
    return per * q, _expected_max_binom(per, q, ep)


def _expected_max_binom(per: int, q: np.ndarray, ep: int) -> np.ndarray:
    """``E[max]`` of ``ep`` Binomial(``per``, ``q``) counts, ``sum_{j=1..per} (1 - F(j-1)^ep)``
    (:func:`expert_load`; array over ``q``).

    On larger one-axis grids the CDF runs only where a term can be below 1: a count far below the
    mean has ``F^ep`` under the rounding of 1.0 (Chernoff, ``F(a) <= exp(-per KL(a/per || q))``),
    so its term is 1.0 to the bit. Each mean's counts from its last skipped one run in one CDF
    call over the gathered (count, mean) pairs (element by element: the same values in any
    layout); every last skipped count's term is checked to be 1.0, else every element is
    computed. The same values either way.
    """
    def every_element() -> np.ndarray:
        j = np.arange(1, per + 1).reshape((-1,) + (1,) * q.ndim)
        return np.sum(1 - _binom_cdf(j - 1, per, q) ** ep, axis=0)

    cdf = _binom_cdf_ufunc()
    if cdf is None or not (q.ndim == 1 and ep >= 2 and per >= 8 and per * q.size >= 256
                           and ((q > 0) & (q <= 1)).all()):  # small grids, or a SciPy without the ufunc
        return every_element()
    a = np.arange(per, dtype=float)[:, None]  # the counts j - 1
    x = a / per
    with np.errstate(divide="ignore", invalid="ignore"):
        kl = np.where(x > 0, x * np.log(x / q), 0.0) + (1 - x) * np.log((1 - x) / (1 - q))
    # F(a)^ep below 2**-60 where a lies below the mean: 1 - F^ep rounds to 1.0
    skip = (x < q) & (per * kl * ep > 60 * math.log(2.0))
    # the counts skipped per mean: a prefix (the bound falls as the count nears the mean)
    rows = np.where(skip.all(axis=0), per, np.argmin(skip, axis=0))
    # each mean's counts from its last skipped one, in one CDF call over the gathered (count, mean)
    # pairs (the CDF and the power act element by element: the same values in any layout)
    r0 = np.maximum(rows - 1, 0)  # the last skipped count, computed and checked
    n_col = per - r0
    start = np.cumsum(n_col) - n_col  # each mean's first element in the gathered pairs
    col = np.repeat(np.arange(q.size), n_col)
    row = np.arange(col.size) - np.repeat(start - r0, n_col)
    t = 1 - np.clip(cdf(row.astype(float), per, q[col]), 0, 1) ** ep
    if not (t[start[rows > 0]] == 1.0).all():
        return every_element()
    terms = np.ones((per, q.size))
    terms[row, col] = t
    return np.sum(terms, axis=0)


EXPERT_BALANCING = ("none", "eplb")


#: The model whose measured skew stands in for models without their own (the DeepSeek-R1
#: measurement; same architecture as deepseek-v3).
SKEW_REFERENCE_MODEL = "deepseek-v3"


@functools.lru_cache(maxsize=None)
def _skew_reference(balancing: str, model_name: str, _dir: str) -> tuple[float, float, float, float]:
    """(imbalance ratio, EP size, slots per rank, reference experts) of the measured row used: the
    model's own where one is catalogued, else :data:`SKEW_REFERENCE_MODEL`'s."""
    from ..catalog import load

    df = load("expert_skew")
    df = df[(df["balancing"] == balancing) & (df["used"] == 1)]
    own = df[df["model"] == model_name]
    r = (own if len(own) else df[df["model"] == SKEW_REFERENCE_MODEL]).iloc[0]
    n_ref = _model_lookup(str(r["model"])).n_experts
    return float(r["imbalance_ratio"]), float(r["ep_ref"]), float(r["slots_per_rank_ref"]), float(n_ref)


@functools.lru_cache(maxsize=256)
def _expected_max_normal(n: float) -> float:
    """Expected maximum of ``n`` standard normal draws (Blom's approximation)."""
    from scipy.stats import norm

    return float(norm.ppf((n - 0.375) / (n + 0.25))) if n > 1 else 0.0


def expert_skew_frac(model: ModelSpec, ep: int, balancing: str = "none") -> float:
    """Routed tokens of the busiest of ``ep`` expert-parallel chips over the mean, minus one.

    Real routing is skewed (hot experts): NVIDIA measured DeepSeek-R1 at EP32 with 8 experts per
    GPU at 2.56x the mean without balancing and 1.11x with EPLB and 32 redundant experts
    (``datasets/expert_skew.csv``; a model with its own measured row, Kimi K3, uses that, every
    other model DeepSeek-R1's, an ASSUMPTION). Other layouts scale that figure by the statistics of a sum of
    independent expert loads: a chip's coefficient of variation falls as ``1 / sqrt(slots per
    chip)`` and the expected maximum over ``ep`` chips grows as the expected maximum of ``ep``
    normal draws. EPLB keeps the reference's redundancy (288 slots for 256 experts).

    Examples
    --------
    >>> from tokenomics.catalog import model
    >>> round(expert_skew_frac(model("deepseek-v3"), 32), 3)    # the measured point
    1.564
    >>> round(expert_skew_frac(model("deepseek-v3"), 8), 2)     # 32 experts per GPU
    0.54
    """
    v.one_of(balancing, "expert_balance", EXPERT_BALANCING)
    if ep <= 1 or not model.is_moe:
        return 0.0
    r_ref, ep_ref, slots_ref, n_ref = _skew_reference(balancing, model.name, str(data_dir()))
    redundancy = slots_ref * ep_ref / n_ref  # slots per expert of the reference layout
    slots = max(model.n_experts * redundancy / ep, 1.0)
    return r_ref * math.sqrt(slots_ref / slots) * _expected_max_normal(ep) / _expected_max_normal(ep_ref)


def expert_skew_s(core: Any, model: ModelSpec, ep: int, balancing: str = "none") -> np.ndarray:
    """Extra time of the busiest expert-parallel chip's expert GEMMs [s]: its routed tokens are
    ``1 + expert_skew_frac`` times the mean the core timed, which costs where the experts op is
    compute-bound (its weight read does not grow). In a megakernel the weights stream in behind
    the other operators' compute, so the extra GEMM work is exposed in full."""
    frac = expert_skew_frac(model, ep, balancing)
    zero = 0 * np.asarray(core.step_time_s, dtype=float)
    if frac <= 0:
        return zero
    extra = zero
    for x in core.op_times:
        if x.name == "experts":
            if core.plan.launch == "megakernel":
                extra = extra + frac * x.compute_s
            else:
                extra = extra + np.maximum(x.mem_s, x.compute_s * (1 + frac)) - np.maximum(x.mem_s, x.compute_s)
    return extra


def forward_hbm_bytes(model: "str | ModelSpec", batch: Any = 1, context_tok: Any = 4096,
                      tokens_per_step: Any = 1, weight_precision: str | None = None,
                      kv_precision: str = "bf16", expert_precision: str | None = None) -> np.ndarray:
    """HBM bytes one forward pass reads over the whole system [B], independent of sharding.

    Weights touched (every non-expert weight, shared experts, the expected distinct routed
    experts of ``batch * tokens_per_step`` tokens, the lm head) plus the KV cache of the batch.
    With a large batch every expert is touched and this tends to all weights + KV.
    """
    m = model if isinstance(model, ModelSpec) else _model_lookup(model)
    dense, expert = component_precisions(m, weight_precision, expert_precision)
    wb, eb = precision_bytes(dense), precision_bytes(expert)
    tok = np.asarray(batch, dtype=float) * np.asarray(tokens_per_step, dtype=float)
    base = m.dense_weight_bytes(wb, eb) + m.vocab * m.hidden * wb  # the lm head, not the embedding
    experts = m.n_moe_layers * expected_experts_touched(m, tok) * m.expert_params() * eb
    kv = np.asarray(batch, dtype=float) * kv_bytes_per_seq_per_chip(m, context_tok, kv_precision=kv_precision)
    return base + experts + kv


def dense_layer_bytes_per_chip(model: ModelSpec, tp: int, weight_precision: str | None = None,
                               expert_precision: str | None = None) -> float:
    """Weights of one layer a chip reads whatever the routing [B]: its tensor-parallel share of
    the attention, dense MLP, router, LatentMoE projections and shared experts (embeddings
    excluded), averaged over the layers. What a kernel can prefetch before the routing is known.

    Examples
    --------
    >>> from tokenomics.catalog import model
    >>> m = model("llama-3.1-8b")
    >>> dense_layer_bytes_per_chip(m, 1, "bf16") == m.non_expert_params() * 2 / m.n_layers
    True
    """
    dense, expert = component_precisions(model, weight_precision, expert_precision)
    return model.dense_weight_bytes(precision_bytes(dense), precision_bytes(expert)) / tp / model.n_layers


def forward_comm_s(model: ModelSpec, parallel: ParallelPlan, sys_: System, *, attn_group_tok: Any,
                   stage_tok: Any, logit_rows: Any, ar_impl: str = "nccl",
                   a2a_impl: str | None = None, ar_algo: str | None = None) -> dict[str, np.ndarray]:
    """Communication time of one forward pass [s], decode and prefill alike.

    ``collective_counts`` collectives, each timed by :func:`tokenomics.perf.comm.collective_time_s`:
    tensor-parallel all-reduces of the busiest attention group's hidden states
    (``attn_group_tok`` rows), the expert dispatch (``DISPATCH_BYTES`` per element) and combine
    (``ACT_BYTES``) all-to-alls of the stage's ``stage_tok`` tokens sent to top-k experts, the
    lm-head all-gather of ``logit_rows`` rows, and ``pp - 1`` point-to-point activations.

    ``ar_algo`` is the all-reduce algorithm (default: the implementation's; a megakernel that
    sends its partial sums straight to every peer runs ``oneshot``).

    Returns
    -------
    dict
        ``allreduce_s``, ``all_to_all_s``, ``allgather_s``, ``p2p_s`` and ``total_s``, and
        ``closing_s``: the part issued at the end of a layer, once its last weights are read (the
        MLP or MoE all-reduce, the LatentMoE hidden-state gather, the combine all-to-all), which
        a kernel can overlap with loading the next layer's weights (``overlap="prefetch"``).
    """
    m = model
    a2a_impl = a2a_impl or ar_impl
    counts = collective_counts(m, parallel)
    tp = parallel.tp
    rows = np.asarray(attn_group_tok, dtype=float)
    stage = np.asarray(stage_tok, dtype=float)
    zero = 0 * rows * stage
    one_ar = (comm.collective_time_s("allreduce", rows * m.hidden * ACT_BYTES, tp, sys_, ar_impl, ar_algo)
              if tp > 1 else zero)
    allreduce = counts["allreduce"] * one_ar
    closing = (counts["allreduce"] - m.n_layers) * one_ar if tp > 1 else zero  # the MLP / MoE ones
    a2a = zero
    if counts["all_to_all"]:
        # each (token, expert) pair reaches the expert's moe_tp slices, and each slice returns a
        # partial output
        k = max(m.experts_per_token, 1) * parallel.expert_tp
        tok_chip = stage / parallel.stage_chips
        width = m.moe_latent_dim or m.hidden  # LatentMoE dispatches the latent
        combine = m.n_moe_layers * comm.collective_time_s(
            "all_to_all", tok_chip * k * width * ACT_BYTES, parallel.stage_chips, sys_, a2a_impl)
        a2a = combine + m.n_moe_layers * comm.collective_time_s(
            "all_to_all", tok_chip * k * width * DISPATCH_BYTES, parallel.stage_chips, sys_, a2a_impl)
        closing = closing + combine
    gather = (comm.collective_time_s(
        "allgather", np.asarray(logit_rows, dtype=float) * m.vocab * ACT_BYTES, tp, sys_, ar_impl)
        if tp > 1 and m.vocab else zero)
    if tp > 1 and latent_gathers(m):  # LatentMoE: the latent before the experts, the hidden after
        hidden_gather = m.n_moe_layers * comm.collective_time_s("allgather", rows * m.hidden * ACT_BYTES, tp,
                                                                sys_, ar_impl)
        gather = gather + hidden_gather + m.n_moe_layers * comm.collective_time_s(
            "allgather", rows * m.moe_latent_dim * ACT_BYTES, tp, sys_, ar_impl)
        closing = closing + hidden_gather
    p2p = (counts["p2p"] * comm.collective_time_s("p2p", stage * m.hidden * ACT_BYTES, 2, sys_, ar_impl)
           if parallel.pp > 1 else zero)
    return {"allreduce_s": allreduce + zero, "all_to_all_s": a2a + zero, "allgather_s": gather + zero,
            "p2p_s": p2p + zero, "total_s": allreduce + a2a + gather + p2p + zero, "closing_s": closing + zero}


def _core_shape(b: Any, pp: int, spec: SpecDecode | None) -> tuple[Any, Any, int]:
    """``(microbatch, core batch, verify tokens)`` of a decode step of ``b`` sequences: whole
    sequences per pipeline stage, the single-chip core's batch (at least one) and the tokens each
    sequence verifies per step."""
    b_mb = np.ceil(b / pp)  # microbatch per pipeline stage (whole sequences)
    return b_mb, np.maximum(b_mb, 1.0), (spec.verify_tokens if spec else 1)


def system_kernels(system: "str | System", model: "str | ModelSpec", plan: "str | ExecutionPlan" = "engine",
                   parallel: ParallelPlan | None = None, batch: Any = 1, context_tok: Any = 4096,
                   spec: SpecDecode | None = None, *, weight_precision: str | None = None, kv_precision: str = "bf16",
                   expert_precision: str | None = None) -> float:
    """Kernel launches per chip of one decode step: the largest of :func:`system_step`'s
    ``core.n_kernels`` at the same arguments, from the core's operator inventory alone (nothing
    timed, :func:`tokenomics.perf.step.decode_kernels`) [kernels]."""
    from .step import decode_kernels

    sys_ = _system(system)
    m = model if isinstance(model, ModelSpec) else _model_lookup(model)
    parallel = ParallelPlan(tp=1, ep=1) if parallel is None else parallel
    _, b_core, t_verify = _core_shape(np.asarray(batch, dtype=float), parallel.pp, spec)
    return decode_kernels(sys_.accelerator, m, _plan(plan), batch=b_core, context_tok=context_tok,
                          tokens_per_step=t_verify, weight_precision=weight_precision, kv_precision=kv_precision,
                          tp=parallel.tp, ep=parallel.ep, attn_dp=int(parallel.attn_dp),
                          expert_precision=expert_precision)


def system_step(
    system: "str | System",
    model: "str | ModelSpec",
    plan: "str | ExecutionPlan" = "engine",
    parallel: ParallelPlan | None = None,
    batch: Any = 1,
    context_tok: Any = 4096,
    spec: SpecDecode | None = None,
    *,
    ar_impl: str = "nccl",
    a2a_impl: str | None = None,
    overlap: str = "none",
    weight_precision: str | None = None,
    kv_precision: str = "bf16",
    profile=None,
    check_memory: bool = True,
    expert_precision: str | None = None,
    engine_step_s: float = 0.0,
    expert_balance: str = "none",
    kernel_release: tuple[str, str] | None = None,
    ar_algo: str | None = None,
    mem_frac: float | None = None,
) -> SystemStepResult:
    """Time one decode step of ``model`` on ``system`` under a parallel plan.

    Parameters
    ----------
    system : str or System
        Catalog name (``"tpu-v7-16"``) or a :class:`~tokenomics.perf.parallel.System`.
    model : str or ModelSpec
    plan : str or ExecutionPlan
        Execution plan of each chip (``eager``, ``engine``, ``super``, ``megakernel``, ...).
    parallel : ParallelPlan, optional
        Defaults to ``tp = ep = n_chips`` (capped to what the model divides) on one replica.
    batch : int or array
        Sequences per replica.
    context_tok : int or array
        Cached tokens per sequence.
    spec : SpecDecode, optional
        Speculative decoding; ``None`` decodes one token per step.
    ar_impl, a2a_impl : str
        Fitted collective implementations (:func:`tokenomics.perf.comm.impls`) for all-reduce /
        all-gather and for the expert all-to-all (defaults to ``ar_impl``).
    ar_algo : str, optional
        All-reduce algorithm (:data:`tokenomics.perf.comm.AR_ALGOS`); default the implementation's.
    overlap : {"none", "prefetch", "tile", "two-batch"}
        Communication/memory overlap rule (module docstring).
    weight_precision, kv_precision, profile
        Passed to the single-chip core.
    check_memory : bool
        Raise :class:`~tokenomics.errors.DoesNotFitError` when no configuration fits per chip.
    mem_frac : float, optional
        Fraction of each chip's memory the engine may fill with weights and KV (its own setting);
        default the profile's (:func:`tokenomics.perf.memory.usable_hbm_bytes`).
    expert_precision : str, optional
        Routed/shared expert weights precision (default: as the weights).
    engine_step_s : float
        A serving engine's own cost per iteration (scheduling, sampling, kernel gaps) [s];
        :class:`tokenomics.deployment.Deployment` passes its engine's fitted value.
    kernel_release : (str, str), optional
        ``(engine, release)`` of the GEMM and fused-MoE kernels when older than the newest
        measured (:mod:`tokenomics.perf.kernel_versions`); default the newest.

    Returns
    -------
    SystemStepResult

    Examples
    --------
    >>> from tokenomics.perf.system import system_step
    >>> from tokenomics.perf.parallel import ParallelPlan
    >>> r = system_step("tpu-v7-16", "kimi-k3", "megakernel", ParallelPlan(tp=16, ep=16),
    ...                 batch=1, context_tok=8192, ar_impl="custom_oneshot")   # doctest: +SKIP
    >>> r.n_all_to_all                                                          # doctest: +SKIP
    184
    """
    from .step import decode_step

    sys_ = _system(system)
    m = model if isinstance(model, ModelSpec) else _model_lookup(model)
    p = _plan(plan)
    v.one_of(overlap, "overlap", OVERLAP_MODES)
    if overlap == "two-batch":
        return _two_batch_step(sys_, m, p, parallel, batch, context_tok, spec, ar_impl=ar_impl,
                               a2a_impl=a2a_impl, weight_precision=weight_precision,
                               kv_precision=kv_precision, profile=profile, check_memory=check_memory,
                               expert_precision=expert_precision, engine_step_s=engine_step_s,
                               expert_balance=expert_balance, kernel_release=kernel_release,
                               ar_algo=ar_algo, mem_frac=mem_frac)
    a2a_impl = a2a_impl or ar_impl
    comm.impl(ar_impl)
    comm.impl(a2a_impl)
    if parallel is None:
        parallel = ParallelPlan(tp=1, ep=1)
    v.count(batch, "batch")
    v.count(context_tok, "context_tok", minimum=0)
    check_memory = v.flag(check_memory, "check_memory")
    check_plan(m, parallel, sys_)
    if check_memory:
        mem = check_fit(m, sys_, parallel, batch, context_tok, weight_precision, kv_precision, expert_precision,
                        mem_frac=mem_frac)
    else:
        mem = memory_per_chip(m, parallel, batch, context_tok, weight_precision, kv_precision, expert_precision)
        mem["fits"] = np.asarray(mem["total_bytes"]) <= usable_hbm_bytes(sys_.accelerator, mem_frac=mem_frac)

    b = np.asarray(batch, dtype=float)
    ctx = np.asarray(context_tok, dtype=float)
    tp, ep, pp = parallel.tp, parallel.ep, parallel.pp
    b_mb, b_core, t_verify = _core_shape(b, pp, spec)
    # attention data-parallel over the stage's chips: each runs attention (and the dense parts)
    # for its own sequences (the busiest rank sets the time); routed experts see every token
    adp = int(parallel.attn_dp)
    core = decode_step(sys_.accelerator, m, p, batch=b_core,
                       context_tok=ctx, tokens_per_step=t_verify,
                       weight_precision=weight_precision, kv_precision=kv_precision,
                       profile=profile, tp=tp, ep=ep, attn_dp=adp, on_oom="ignore",
                       expert_precision=expert_precision, kernel_release=kernel_release)
    # the busiest expert-parallel chip reads more experts than the average the core assumes
    imbalance_s = 0 * np.asarray(core.step_time_s, dtype=float)
    if ep > 1 and m.is_moe:
        mean, emax = expert_load(m, b_mb * t_verify, ep)
        wbytes = precision_bytes(component_precisions(m, weight_precision, expert_precision)[1])
        rate = sys_.accelerator.hbm_bytes_per_s * core.profile.weight_bw_frac
        imbalance_s = (m.n_moe_layers * (emax - mean) * m.expert_params() / parallel.expert_tp
                       * wbytes / rate)
    # ... and, routing being skewed, more routed tokens than the mean (compute of its experts)
    skew_s = expert_skew_s(core, m, ep, expert_balance)
    read_imbalance_s = imbalance_s  # memory time (what overlap can hide behind)
    imbalance_s = imbalance_s + skew_s
    compute = np.asarray(core.step_time_s, dtype=float) + imbalance_s
    if p.launch == "eager":  # device work hides behind host launches until it exceeds them
        gpu, host = np.asarray(core.gpu_time_s, float), np.asarray(core.host_time_s, float)
        compute = compute - imbalance_s + np.maximum(gpu + imbalance_s, host) - np.maximum(gpu, host)

    counts = collective_counts(m, parallel)
    tok_step = np.maximum(b_mb, 1.0) * t_verify  # tokens in flight per stage per step
    tok_attn_group = tok_step / parallel.attn_dp
    c = forward_comm_s(m, parallel, sys_, attn_group_tok=np.maximum(tok_attn_group, t_verify),
                       stage_tok=tok_step, logit_rows=tok_attn_group, ar_impl=ar_impl, a2a_impl=a2a_impl,
                       ar_algo=ar_algo)
    allreduce_s, a2a_s, comm_s = c["allreduce_s"], c["all_to_all_s"], c["total_s"]

    # overlap of communication with the chip's memory traffic, per layer
    mem_layer = (np.asarray(core.mem_time_s, dtype=float) + read_imbalance_s) / m.n_layers
    comm_layer = (comm_s - c["p2p_s"]) / m.n_layers  # per-layer collectives (gathers included)
    if overlap == "none":
        hidden_layer = 0 * comm_layer
    elif overlap == "tile":
        hidden_layer = np.minimum(comm_layer, mem_layer)
    else:  # prefetch: the layer's closing collectives behind the next layer's known weights
        sram = sys_.accelerator.sram_bytes
        rate = sys_.accelerator.hbm_bytes_per_s * core.profile.weight_bw_frac
        cap = sram / rate if np.isfinite(sram) else 0.0
        dense_layer = dense_layer_bytes_per_chip(m, tp, weight_precision, expert_precision) / rate
        hidden_layer = np.minimum(np.minimum(c["closing_s"] / m.n_layers, dense_layer), cap)
    overlap_s = hidden_layer * m.n_layers
    exposed = comm_s - overlap_s

    draft_s = 0 * compute
    draft_m = spec.draft_model(m) if spec is not None and spec.gamma > 0 else None
    if draft_m is not None:
        # a block draft is one (gamma + 1)-row forward: a verify-shaped step of the draft with a
        # model-free draft of its own; a sequential draft is gamma one-token steps
        rows = SpecDecode("block", spec.draft_rows - 1, spec.alpha, 0) if spec.block else None
        own = spec.catalogued_draft(m) is not None
        # a draft model of its own is dense: tensor-parallel over each attention group's chips,
        # drafting that group's sequences
        d_par = ParallelPlan(tp=parallel.tp) if own else parallel
        d_batch = np.maximum(np.ceil(b / (parallel.attn_dp * pp)), 1.0) if own else batch
        d = system_step(sys_, draft_m, p, d_par, d_batch, context_tok, rows, ar_impl=ar_impl,
                        a2a_impl=a2a_impl, overlap=overlap,
                        weight_precision=None if own else weight_precision, kv_precision=kv_precision,
                        profile=profile, check_memory=False,
                        expert_precision=None if own else expert_precision,
                        expert_balance=expert_balance, kernel_release=kernel_release, ar_algo=ar_algo)
        draft_s = spec.draft_passes * d.step_time_s

    v.non_negative(engine_step_s, "engine_step_s")
    step = compute + exposed + draft_s + engine_step_s  # the engine's own cost per iteration
    e = spec.tokens_per_step if spec else 1.0
    per_user = e / step
    tok = b * e / step
    return SystemStepResult(
        system=sys_, model=m, plan=p, parallel=parallel, spec=spec, ar_impl=ar_impl,
        a2a_impl=a2a_impl, overlap=overlap, batch=b, context_tok=ctx, step_time_s=step,
        compute_s=compute, imbalance_s=imbalance_s, comm_s=comm_s, allreduce_s=allreduce_s, all_to_all_s=a2a_s,
        overlap_s=overlap_s, comm_exposed_s=exposed, draft_s=draft_s, engine_s=engine_step_s, tokens_per_step=e,
        tok_per_s_per_user=per_user, tok_per_s_per_replica=tok, tok_per_s_per_chip=tok / parallel.replica_chips,
        n_allreduce=counts["allreduce"], n_all_to_all=counts["all_to_all"],
        n_allgather=counts["allgather"], n_p2p=counts["p2p"],
        hbm_bytes_per_forward=forward_hbm_bytes(m, b, ctx, t_verify, weight_precision, kv_precision,
                                                expert_precision),
        hbm_bytes_per_chip=np.asarray(core.hbm_bytes, dtype=float),
        weights_bytes_per_chip=mem["weights_bytes"], kv_bytes_per_chip=mem["kv_bytes"],
        fits=np.asarray(mem["fits"]), core=core,
    )


def _two_batch_step(sys_, m, p, parallel, batch, context_tok, spec, *, engine_step_s: float, **kw):
    """Decode step under two-batch overlap (module docstring): micro-batches of ``ceil(batch / 2)``
    sequences alternate compute and communication; a batch of one runs without it."""
    import dataclasses

    full = system_step(sys_, m, p, parallel, batch, context_tok, spec, overlap="none",
                       engine_step_s=engine_step_s, **kw)
    b = np.asarray(batch, dtype=float)
    kw["check_memory"] = False
    half = system_step(sys_, m, p, parallel, np.maximum(np.ceil(b / 2), 1), context_tok, spec, overlap="none",
                       engine_step_s=0.0, **kw)
    use = b >= 2
    pick = lambda two, one: np.where(use, two, one)  # noqa: E731
    compute = pick(2 * half.compute_s, full.compute_s)
    comm_s = pick(2 * half.comm_s, full.comm_s)
    exposed = pick(2 * np.maximum(half.comm_s - half.compute_s, 0.0), full.comm_exposed_s)
    step = compute + exposed + full.draft_s + engine_step_s
    e = full.tokens_per_step
    tok = b * e / step
    return dataclasses.replace(
        full, overlap="two-batch", step_time_s=step, compute_s=compute, comm_s=comm_s,
        imbalance_s=pick(2 * half.imbalance_s, full.imbalance_s),
        allreduce_s=pick(2 * half.allreduce_s, full.allreduce_s), all_to_all_s=pick(2 * half.all_to_all_s, full.all_to_all_s),
        overlap_s=comm_s - exposed, comm_exposed_s=exposed, tok_per_s_per_user=e / step, tok_per_s_per_replica=tok,
        tok_per_s_per_chip=tok / parallel.replica_chips,
        hbm_bytes_per_chip=pick(2 * half.hbm_bytes_per_chip, full.hbm_bytes_per_chip))


def system_prefill(
    system: "str | System",
    model: "str | ModelSpec",
    plan: "str | ExecutionPlan",
    parallel: "ParallelPlan | None" = None,
    *,
    prompt_tok: Any = 1024,
    batch: Any = 1,
    weight_precision: str | None = None,
    kv_precision: str = "bf16",
    profile: Any = None,
    ar_impl: str = "nccl",
    a2a_impl: str | None = None,
    expert_precision: str | None = None,
    overlap: str = "none",
    expert_balance: str = "none",
    kernel_release: tuple[str, str] | None = None,
    ar_algo: str | None = None,
    spec: SpecDecode | None = None,
):
    """Prefill of ``batch`` prompts on a multi-chip system, communication included.

    Per-chip compute from :func:`tokenomics.perf.prefill` sharded ``tp``/``ep`` ways with
    attention data parallelism, plus the collectives of the forward pass over every prompt
    token: the tensor-parallel all-reduces (``collective_counts``) of each attention group's
    tokens and the expert-parallel dispatch and combine all-to-alls. Prefill communication is
    counted as exposed (not overlapped), an upper bound on its cost, except under
    ``overlap="two-batch"``: two micro-batches of ``ceil(batch / 2)`` prompts alternate compute and
    communication (``2 * max`` of one half's; a single prompt runs without it). Other overlap
    modes describe decode kernels and leave prefill unchanged. ``kernel_release`` and ``ar_algo``
    as :func:`system_step`. With speculative decoding (``spec``) the draft module prefills the
    same prompts after the target (its own KV cache and the hidden state its first draft starts
    from: SGLang's draft extend, TensorRT-LLM's MTP prefill), on the same chips, laid out as the
    decode step lays it out (:func:`system_step`); ``draft_s`` is that time, included in
    ``step_time_s``.

    Returns
    -------
    types.SimpleNamespace
        ``step_time_s`` (TTFT), ``compute_s``, ``comm_s``, ``draft_s`` (the draft's prefill, in
        ``step_time_s``), ``tok_per_s_per_replica`` (prompt tokens/s of the
        replica), ``tok_per_s_per_chip``, ``hbm_util_frac``, ``flop_util_frac`` (compute share
        applied), ``core``.
    """
    from types import SimpleNamespace

    from .step import prefill as _prefill

    sys_ = _system(system)
    m = model if isinstance(model, ModelSpec) else _model_lookup(model)
    p = _plan(plan)
    parallel = parallel or ParallelPlan(tp=1, ep=1)
    a2a_impl = a2a_impl or ar_impl
    b = np.asarray(batch, dtype=float)
    s = np.asarray(prompt_tok, dtype=float)
    adp = int(parallel.attn_dp)
    core = _prefill(sys_.accelerator, m, p, prompt_tok=prompt_tok, batch=batch,
                    weight_precision=weight_precision, kv_precision=kv_precision, profile=profile,
                    tp=parallel.tp, ep=parallel.ep, attn_dp=adp, on_oom="ignore",
                    expert_precision=expert_precision, kernel_release=kernel_release)
    comm_s = forward_comm_s(m, parallel, sys_, attn_group_tok=np.ceil(b / adp) * s, stage_tok=b * s,
                            logit_rows=np.ceil(b / adp), ar_impl=ar_impl, a2a_impl=a2a_impl,
                            ar_algo=ar_algo)["total_s"]
    compute = np.asarray(core.step_time_s, dtype=float) + expert_skew_s(core, m, parallel.ep, expert_balance)
    step = compute + comm_s
    v.one_of(overlap, "overlap", OVERLAP_MODES)
    if overlap == "two-batch":
        half = system_prefill(sys_, m, p, parallel, prompt_tok=prompt_tok, batch=np.maximum(np.ceil(b / 2), 1),
                              weight_precision=weight_precision, kv_precision=kv_precision, profile=profile,
                              ar_impl=ar_impl, a2a_impl=a2a_impl, expert_precision=expert_precision,
                              expert_balance=expert_balance, kernel_release=kernel_release, ar_algo=ar_algo)
        use = b >= 2
        compute = np.where(use, 2 * half.compute_s, compute)
        step = np.where(use, 2 * np.maximum(half.compute_s, half.comm_s), step)
        comm_s = np.where(use, 2 * half.comm_s, comm_s)
    draft_s = 0 * step
    draft_m = spec.draft_model(m) if spec is not None and spec.gamma > 0 else None
    if draft_m is not None:
        own = spec.catalogued_draft(m) is not None
        d_par = ParallelPlan(tp=parallel.tp) if own else parallel  # as system_step's draft
        d_batch = np.maximum(np.ceil(b / parallel.attn_dp), 1.0) if own else batch
        d = system_prefill(sys_, draft_m, p, d_par, prompt_tok=prompt_tok, batch=d_batch,
                           weight_precision=None if own else weight_precision, kv_precision=kv_precision,
                           profile=profile, ar_impl=ar_impl, a2a_impl=a2a_impl,
                           expert_precision=None if own else expert_precision, overlap=overlap,
                           expert_balance=expert_balance, kernel_release=kernel_release, ar_algo=ar_algo)
        draft_s = np.asarray(d.step_time_s, dtype=float)
        compute = compute + np.asarray(d.compute_s, dtype=float)
        comm_s = comm_s + np.asarray(d.comm_s, dtype=float)
        step = step + draft_s
    share = compute / step
    tok = b * s / step
    return SimpleNamespace(
        step_time_s=step, compute_s=compute, comm_s=comm_s, draft_s=draft_s, tok_per_s_per_replica=tok,
        tok_per_s_per_chip=tok / parallel.stage_chips,
        hbm_util_frac=np.asarray(core.hbm_util_frac, dtype=float) * share,
        flop_util_frac=np.asarray(core.flop_util_frac, dtype=float) * share, core=core)
