"""What a serving engine delivers: steady-state continuous batching of a deployment.

An engine keeps ``concurrency`` requests in flight. Each iteration decodes one token (or a
speculative verify step) for every sequence past its prefill and processes a chunk of prompt
tokens mixed into the same batch (chunked prefill), plus a fixed per-iteration engine cost
(scheduler, sampling over the vocabulary, output processing; :func:`~tokenomics.perf.engines.engine_step_s`). In steady
state every output token brings ``isl / osl`` prompt tokens with it, so with ``B`` sequences
decoding, each emitting ``tokens_per_step`` tokens an iteration, an iteration takes

    t_it = t_decode(B) + B * tokens_per_step * (isl / osl) * t_prefill_per_token + t_engine

and a request lives ``TTFT + osl * t_it``. A closed-loop benchmark client (InferenceMAX, vLLM
``benchmark_serving``: ``concurrency`` users, each sending a new request when its last one ends)
sends ``X = B * tokens_per_step / (osl * t_it)`` requests/s in steady state, and a new request's
TTFT (:func:`~tokenomics.perf.queueing.ttft_s`) is

    TTFT = overhead + 0.5 * recv_interval * t_it + gate + R / (1 - rho) + ceil(isl / chunk) * t_chunk

the engine's fitted per-request overhead outside the iterations (API server, tokenization,
streaming the first token; :func:`~tokenomics.perf.engines.engine_params`); the wait for the
scheduler to admit it (half an iteration, or half its polling interval: SGLang
``--scheduler-recv-interval``); TensorRT-LLM's attention-DP balance gate where the run enabled it
(:func:`~tokenomics.perf.queueing.adp_gate_s`); the queue for the prefill budget, each iteration
(each attention-DP rank) admitting up to a chunk of prompt tokens, loaded ``rho = B / ranks *
tokens_per_step * isl / osl / chunk`` by the arriving prompts (M/D/1, Pollaczek-Khinchine,
:func:`~tokenomics.perf.queueing.queue_wait_s`: residual ``R = rho * (isl / chunk) * t_it / 2``);
and the iterations its own prompt rides. Little's law closes the loop, ``C = X * (TTFT + osl * t_it / tokens_per_step) =
B + X * TTFT``, solved for ``B``: the smallest batch at which the requests in flight reach ``C``,
bracketed between two whole batches (the decode step is timed at whole batches, so ``B + X * TTFT``
may step down where the rounded batch steps up), then regula falsi (:meth:`_Colocated.solve`,
:func:`~tokenomics.perf.queueing.closed_loop_batch`). Sequences beyond
a replica's slots (:func:`_slot_cap`: what its paged KV cache holds at their mean length
``isl + osl / 2``, and the engine's batch cap where the run set one) wait for a slot: then ``B``
is that cap and ``TTFT = (C - B) / X``. Then

* time per output token ``TPOT = t_it / tokens_per_step`` (speculative decoding emits
  ``tokens_per_step`` tokens per iteration), tokens/s per user ``1 / TPOT``;
* output tokens/s per GPU ``B * tokens_per_step / t_it / gpus``; total adds the prompt tokens.

With attention data-parallel ranks (wide expert parallelism, ``attn_dp > 1``) the prompt term is
not spread evenly: every MoE layer is a barrier across the ranks, so an iteration lasts as long as
its busiest rank, and a prompt prefilled on one rank holds the others
(:func:`~tokenomics.perf.queueing.adp_prefill_s`: the busiest rank's pass over its chunks, Poisson
arrivals per rank, plus the experts' pass over every rank's chunks; a chunk alone pays a whole
pass, chunks batched up to the rank's prompt budget their share of one,
:func:`adp_prefill_batched_parts_s`; TensorRT-LLM's balance gate, where a run enabled it, releases
a window's prompts together, :func:`~tokenomics.perf.queueing.adp_gate_window`). These waits are
closed forms on plain numbers and live in :mod:`tokenomics.perf.queueing`.

``offline`` runs every request at once: ``B`` is the largest batch that fits (capped by the
engine's maximum number of sequences and, when the benchmark states it, by the number of
requests it queued: 1,000 fixed-length requests run as one wave of 1,000 however many fit). When
it queued more requests ``N`` than run at once, the run ends by draining (:func:`drain_s`): once
the queue is empty the last ``B`` sequences, their remaining lengths spread evenly over
``[0, osl]``, finish over ``osl / tokens_per_step`` iterations at a batch shrinking from ``B`` to
0, so the run lasts ``N * osl * t_it / (B * tokens_per_step)`` minus the decode iterations those
``B * osl / 2`` tokens would have taken at full batch plus the draining iterations. A
``decode`` deployment (disaggregated decode workers) decodes ``B`` sequences at a given context with
no prefill; a ``prefill`` deployment processes prompt tokens only.

A benchmark whose requests all have the same lengths (``fixed_lengths``) on an engine that pauses
decode to prefill (SGLang) never staggers: its users are prefilled back to back, decode together
and return together (:func:`wave_serve`), so the prompts' work sits in the TTFT of the users
behind instead of in every TPOT. With varied lengths it staggers, but runs the prompts arriving
during an iteration in a pass of their own, decode paused: an iteration pays, with the probability
that a chunk arrived (Poisson), what that pass costs beyond its compute. Engines that mix prompt
chunks into the decode batch (vLLM, TensorRT-LLM) settle into the steady state above.

Disaggregated serving (:func:`serve_disaggregated`) splits the GPUs into prefill instances and
decode instances. At a total concurrency ``C``, ``X`` requests/s flow through both: a decode
instance runs ``B`` sequences with no prompt tokens in its iterations (``t_it(B)`` from the
``decode`` phase above), so ``X = n_decode * B * tokens_per_step / (osl * t_it)``; a prefill
instance prefills batches of the prompts arriving while the previous batch ran (``prefill``
phase above); each prompt's KV cache (:func:`tokenomics.perf.memory.kv_bytes_per_seq_per_chip`)
then crosses the fabric to a decode GPU (scale-up link inside one NVLink/UB domain, scale-out NIC
across domains). ``TTFT`` is the same :func:`~tokenomics.perf.queueing.ttft_s`: the residual of
the prefill batch running on arrival, inflated by ``1 / (1 - X / X_cap)`` as the rate nears the
prefill capacity ``X_cap = n_prefill * n_max / t_prefill(n_max)`` (the queue in front of prefill),
plus the prompt's own batch and the KV transfer; Little's law closes the loop, ``C = X * TTFT + n_decode * B``. The
decode batch ``B`` is at most a decode instance's slots (:func:`_slot_cap`); once that binds the
surplus requests wait and ``TTFT = (C - n_decode * B) / X``. Output tokens/s are reported
per decode GPU (the InferenceMAX convention for disaggregated runs) and per GPU of the whole
deployment (what a GPU-hour buys).
"""

from __future__ import annotations

import dataclasses
import functools
import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from .. import _validate as v
from ..catalog import data_dir
from ..errors import ValidationError
from .comm import kv_transfer_s
from .engines import engine_params
from .queueing import adp_gate_s, adp_gate_window, adp_prefill_s, expected_max_pass_s, ttft_s
from .queueing import closed_loop_batch as _closed_loop_batch

PHASES = ("serve", "offline", "decode", "prefill")


@dataclass(frozen=True)
class ServingResult:
    """Steady-state serving figures of one deployment at one operating point (arrays broadcast).

    Attributes
    ----------
    batch : ndarray
        Sequences decoding in an iteration (steady state) [sequences].
    iteration_s : ndarray
        One engine iteration [s].
    tpot_s, ttft_s : ndarray
        Time per output token and to first token [s].
    tok_per_s_per_user : ndarray
        ``1 / tpot_s`` [tokens/s].
    output_tok_per_s_per_gpu, total_tok_per_s_per_gpu : ndarray
        Output (and input + output) tokens/s per GPU of the instance [tokens/s]; disaggregated:
        per GPU of the whole deployment, prefill and decode GPUs together.
    output_tok_per_s_per_decode_gpu : ndarray or None
        Disaggregated only: output tokens/s per decode GPU [tokens/s].
    kv_transfer_s : float
        Disaggregated only: moving one prompt's KV cache from its prefill to its decode GPUs, part
        of ``ttft_s`` [s] (0 otherwise).
    concurrency : float
        The requests in flight per instance :func:`serve_at_target` settled on [requests] (NaN
        where the caller stated the operating point).
    """

    phase: str
    batch: np.ndarray
    iteration_s: np.ndarray
    tpot_s: np.ndarray
    ttft_s: np.ndarray
    tok_per_s_per_user: np.ndarray
    output_tok_per_s_per_gpu: np.ndarray
    total_tok_per_s_per_gpu: np.ndarray
    engine_step_s: float
    output_tok_per_s_per_decode_gpu: np.ndarray | None = None
    kv_transfer_s: float = 0.0
    concurrency: float = float("nan")


def _engine_cost_s(dep, engines: Any = None) -> tuple[dict[str, Any], float]:
    """The engine's parameters and its cost per iteration of ``dep`` [s] (``engines``: fitting)."""
    ep = engine_params(dep.engine if dep.engine != "none" else "default", dep.hardware.vendor, engines)
    t_eng = dep.engine_step_s  # inside every decode step of the deployment
    if engines is not None and t_eng > 0:  # fitting: an engines table other than the bundled one
        t_eng = ep["kernel_overhead_s"] * dep.engine_kernels
    return ep, t_eng


def _prefill_iteration_s(dep, isl: float, batch: Any, t_eng: float, profile=None) -> np.ndarray:
    """One prefill-only iteration of ``batch`` prompts of ``isl`` tokens per replica, engine cost
    included [s] (array over ``batch``)."""
    pre = dep.prefill(int(round(isl)), batch=batch, profile=profile)
    return np.asarray(pre.step_time_s, dtype=float) + t_eng


def _prefill_per_token_s(dep, isl: float, chunk: float, profile=None) -> float:
    """Compute time per prompt token inside a mixed iteration [s/token]: a chunk of ``chunk``
    tokens of ``isl``-token prompts, less the weight read the decode part already pays."""
    prompt = int(round(min(isl, chunk)))
    n = int(np.max(dep.prefill_batch(prompt)))
    tokens = n * prompt
    return float(_prefill_steps_s(dep, prompt, [n], profile)[0]) / tokens


def _prefill_steps_s(dep, prompt_tok: int, batches: Any, profile=None) -> np.ndarray:
    """Prefill step of each of ``batches`` prompts of ``prompt_tok`` tokens per replica [s] (one
    :meth:`~tokenomics.deployment.Deployment.prefill` call; with the bundled calibration each
    step is kept per deployment, so a caller may ask for the steps it will need in one call)."""
    b = [int(x) for x in np.ravel(batches)]
    memo = _prefill_memo(dep, int(prompt_tok)) if profile is None else None
    new = b if memo is None else sorted({x for x in b if x not in memo})
    if new:
        t = np.asarray(dep.prefill(int(prompt_tok), batch=np.asarray(new), profile=profile).step_time_s, float)
        t = t * np.ones(len(new))
        if memo is None:
            return t
        memo.update(zip(new, t.tolist()))
    return np.array([memo[x] for x in b])


def _prefill_memo(dep, prompt_tok: int) -> dict | None:
    """The kept prefill steps of a deployment by batch (:func:`_prefill_steps_s`); None where the
    deployment cannot be a cache key."""
    try:
        return _prefill_memo_cached(dep, prompt_tok, str(data_dir()))
    except TypeError:  # an unhashable deployment
        return None


@functools.lru_cache(maxsize=256)
def _prefill_memo_cached(dep, prompt_tok: int, _dir: str) -> dict:
    return {}


def adp_prefill_parts_s(dep, chunk_tok: float, profile=None) -> tuple[float, float]:
    """A prefill chunk's time on an attention-data-parallel deployment, split into what one rank
    runs alone and what every rank shares [s]: ``(local_s, shared_s)``.

    A chunk's attention, projections and dense layers run on the rank that holds its prompt; its
    routed experts are spread over the expert-parallel group. From the core's own prefill of one
    chunk (on one rank) and of one chunk per rank: ``t(1) = local + shared``, ``t(n) = local +
    n shared`` (the busiest rank holds one chunk either way).
    """
    n = int(dep.parallel.attn_dp)
    c = int(round(chunk_tok))
    t = _prefill_steps_s(dep, c, [1, n], profile)
    shared = max(float(t[1] - t[0]) / (n - 1), 0.0) if n > 1 else 0.0
    return max(float(t[0]) - shared, 0.0), shared


def adp_prefill_batched_parts_s(dep, chunk_tok: float, profile=None,
                                parts: tuple[float, float] | None = None) -> tuple[float, float]:
    """What each chunk adds to a rank's prefill pass when several are prefilled together [s]:
    ``(local_s, shared_s)`` per chunk, from the chunks one rank's prompt-token budget holds.

    Engines batch the waiting prompts of a rank into one pass up to its budget
    (:attr:`Deployment.prefill_chunk_per_rank_tok`), ``k = budget // chunk_tok`` chunks: a pass of
    ``k`` chunks on every rank takes ``t(n k)`` where ``k`` separate passes of one chunk a rank take
    ``k t(n)``. Each of :func:`adp_prefill_parts_s`'s parts is scaled by that share, ``t(n k) /
    (k t(n))`` (1 at ``k = 1``: a chunk of the whole budget is its own pass), the way the mixed
    iteration without attention DP prices a prompt token (:func:`_prefill_per_token_s`). ``parts``:
    :func:`adp_prefill_parts_s`'s result where the caller has it already.
    """
    loc, sh = adp_prefill_parts_s(dep, chunk_tok, profile) if parts is None else parts
    n = int(dep.parallel.attn_dp)
    c = int(round(chunk_tok))
    k = max(1, int(dep.prefill_chunk_per_rank_tok) // max(c, 1))
    if k == 1:
        return loc, sh
    t = _prefill_steps_s(dep, c, [n, n * k], profile)
    share = min(float(t[1]) / (k * float(t[0])), 1.0)
    return loc * share, sh * share


def _decode_iteration_s(dep, batch: Any, context_tok: float, t_eng: float, profile=None) -> np.ndarray:
    """Decode iteration of ``batch`` sequences per replica (rounded, at least 1), engine cost
    included [s] (array over ``batch``)."""
    b = np.maximum(1, np.round(np.asarray(batch, dtype=float))).astype(int)
    t = dep.decode(b, context_tok, check_memory=False, profile=profile, engine_step_s=t_eng).step_time_s
    return np.asarray(t, dtype=float) * np.ones(b.shape)


#: Quadrature points of the draining batch's iteration time (midpoint rule over its share left).
DRAIN_POINTS = 16


def drain_s(dep: Any, n_requests: float, batch: float, osl_tok: float, iteration_s: float,
            context_tok: float, t_eng: float, profile: Any = None) -> float:
    """Duration of an offline run of ``n_requests`` requests, ``batch`` at a time, ending in a
    drain (module docstring) [s].

    Steady state emits ``batch * tokens_per_step`` tokens every ``iteration_s``. When the queue
    empties, the ``batch`` sequences in flight have ``osl * U`` tokens left (``U`` uniform on
    ``[0, 1)``), so they finish over ``osl / tokens_per_step`` iterations at a batch falling
    linearly from ``batch`` to 0: the run is ``N * osl / (B * tps) * iteration_s``, minus the
    ``osl / (2 tps)`` full-batch decode iterations those ``B * osl / 2`` tokens would have
    taken, plus the draining iterations (their mean decode time over the shrinking batch,
    midpoint rule with :data:`DRAIN_POINTS` points). Prefill work is unchanged: every prompt is
    still prefilled once.

    Parameters
    ----------
    dep : Deployment
    n_requests : float
        Requests the benchmark queued, more than ``batch`` [requests].
    batch : float
        Sequences in flight in steady state [sequences].
    osl_tok : float
        Output tokens per request [tokens].
    iteration_s : float
        Steady-state iteration (decode plus its share of prefill) [s].
    context_tok : float
        Mean KV length of a decoding sequence [tokens].
    t_eng : float
        Engine cost per iteration [s].
    profile : optional
        Calibration profile.
    """
    tps = dep.spec.tokens_per_step if dep.spec else 1.0
    n, b, osl = float(n_requests), float(batch), float(osl_tok)
    left = (np.arange(DRAIN_POINTS) + 0.5) / DRAIN_POINTS
    d = _decode_iteration_s(dep, np.append(b * left, b), context_tok, t_eng, profile)
    return n * osl / (b * tps) * float(iteration_s) + osl / tps * (float(np.mean(d[:-1])) - 0.5 * float(d[-1]))


def _slot_cap(dep, context_tok: float, max_batch_per_rank: float | None = None) -> float:
    """Sequences one instance of ``dep`` runs at most [sequences]: what its paged KV cache holds at
    the sequences' mean length ``context_tok`` (steady state: half the output generated), and the
    engine's ``max_batch_size`` per attention-DP rank where the run set one (TensorRT-LLM
    ``max_batch_size``, SGLang ``--max-running-requests``, vLLM ``--max-num-seqs``)."""
    cap = float(np.min(dep.max_batch(int(round(context_tok)))))
    return cap if max_batch_per_rank is None else min(cap, _run_cap(dep, max_batch_per_rank))


def _run_cap(dep, max_batch_per_rank: float) -> float:
    """Sequences one instance may run under the run's own cap per attention-DP rank [sequences]."""
    v.positive(max_batch_per_rank, "max_batch_per_rank")
    return float(max_batch_per_rank) * int(dep.parallel.attn_dp)


def serve(deployment: Any, *, isl_tok: float, osl_tok: float, concurrency: float | None = None,
          phase: str = "serve", context_tok: float | None = None, batch: float | None = None,
          prefill_tok: float | None = None, profile: Any = None,
          engines: Any = None, n_requests: float | None = None, recv_interval_iters: float = 1.0,
          adp_timeout_iters: float | None = None, max_batch_per_rank: float | None = None,
          fixed_lengths: bool = False) -> ServingResult:
    """Steady-state serving of ``deployment`` (module docstring).

    Parameters
    ----------
    deployment : Deployment
    isl_tok, osl_tok : float
        Mean input and output tokens per request [tokens].
    concurrency : float, optional
        Requests in flight per instance (``serve``; ``decode``: sequences per decode instance).
    phase : {"serve", "offline", "decode", "prefill"}
    context_tok : float, optional
        ``decode``: mean KV length [tokens] (default ``isl + osl / 2``).
    batch : float, optional
        ``decode``/``offline``: sequences per instance instead of ``concurrency`` / the largest fit.
    prefill_tok : float, optional
        ``prefill``: prompt tokens per instance per prefill batch (default: the chunk).
    engines : pandas.DataFrame, optional
        An engines table in the schema of ``datasets/engines.csv`` (fitting); default the bundled one.
    n_requests : float, optional
        ``offline``: requests the benchmark queued (caps the batch; more than the batch end in a
        drain, :func:`drain_s`); default unbounded (steady state).
    recv_interval_iters : float
        Iterations between the scheduler's polls for new requests (SGLang
        ``--scheduler-recv-interval``; default 1: every iteration) [iterations].
    adp_timeout_iters : float, optional
        TensorRT-LLM attention-DP balance ``timeout_iters`` where the run enabled it
        (:func:`~tokenomics.perf.queueing.adp_gate_s`); default no gate [iterations].
    max_batch_per_rank : float, optional
        The engine's batch cap per attention-DP rank where the run set one: ``serve``
        (:func:`_slot_cap`; default memory only) and ``offline`` (in place of the engine's
        default ``max_seqs``) [sequences].
    fixed_lengths : bool
        ``serve``: every request has exactly ``isl_tok`` / ``osl_tok`` tokens (a benchmark
        client with zero length spread and ``ignore_eos``); on a prefill-first engine the closed
        loop then runs in synchronized waves (:func:`wave_serve`). Default False: lengths vary,
        requests stagger.
    """
    v.one_of(phase, "phase", PHASES)
    fixed_lengths = v.flag(fixed_lengths, "fixed_lengths")
    v.positive(isl_tok, "isl_tok")
    v.positive(osl_tok, "osl_tok")
    v.positive(recv_interval_iters, "recv_interval_iters")
    if adp_timeout_iters is not None:
        v.positive(adp_timeout_iters, "adp_timeout_iters")
    dep = deployment
    ep, t_eng = _engine_cost_s(dep, engines)
    gpus = dep.replica_chips
    tps = dep.spec.tokens_per_step if dep.spec else 1.0
    isl, osl = float(isl_tok), float(osl_tok)
    if phase == "prefill":
        n = int(np.max(dep.prefill_batch(int(round(isl))))) if prefill_tok is None else max(1, round(prefill_tok / isl))
        t = float(np.max(_prefill_iteration_s(dep, isl, n, t_eng, profile)))
        tok_s = n * isl / t / gpus
        z = np.asarray(float("nan"))
        return ServingResult(phase, np.asarray(n), np.asarray(t), z, np.asarray(t), z, np.asarray(0.0),
                             np.asarray(tok_s), t_eng)
    ctx_mean = float(round(isl + osl / 2.0 if context_tok is None else float(context_tok)))
    if phase == "decode":
        b = float(batch if batch is not None else concurrency)
        v.positive(b, "batch")
        t_it = float(_decode_iteration_s(dep, b, ctx_mean, t_eng, profile)[()])
        out = b * tps / t_it / gpus
        return ServingResult(phase, np.asarray(b), np.asarray(t_it), np.asarray(t_it / tps), np.asarray(float("nan")),
                             np.asarray(tps / t_it), np.asarray(out), np.asarray(out * (1 + isl / osl)), t_eng)
    if phase == "offline":
        fit = float(np.min(dep.max_batch(isl + osl)))
        # the run's own max_batch_size in place of the engine's default cap
        from .engines import default_max_seqs

        seqs = (default_max_seqs(dep.engine, dep.hardware, ep["max_seqs"]) if max_batch_per_rank is None
                else _run_cap(dep, max_batch_per_rank))
        c = min(fit, seqs) if batch is None else float(batch)
        if n_requests is not None and math.isfinite(float(n_requests)):
            v.positive(n_requests, "n_requests")
            c = min(c, float(n_requests))
        if c < 1:
            raise ValidationError(f"{dep.label()}: not one request of {isl:.0f}+{osl:.0f} tokens fits")
        b_slots = c
    else:
        if concurrency is None:
            raise ValidationError("serve needs a concurrency (requests in flight)")
        c = float(concurrency)
        v.positive(c, "concurrency")
        if runs_in_waves(dep, fixed_lengths):
            return wave_serve(dep, isl_tok=isl, osl_tok=osl, concurrency=c, t_eng=t_eng,
                              overhead_s=ep["ttft_overhead_s"], profile=profile, max_batch_per_rank=max_batch_per_rank)
    model = _colocated_model(dep, isl, osl, ctx_mean, ep, t_eng, profile, engines, recv_interval_iters,
                             adp_timeout_iters)
    if phase != "offline":
        cap = model.slot_cap if max_batch_per_rank is None else _slot_cap(dep, ctx_mean, max_batch_per_rank)
        b_slots = min(c, max(1.0, cap))  # the rest wait for a slot
    res = model.result(c, b_slots, phase)
    if phase == "offline" and n_requests is not None and math.isfinite(float(n_requests)) and float(n_requests) > float(res.batch):
        b, t_it = float(res.batch), float(res.iteration_s)
        run_s = drain_s(dep, float(n_requests), b, osl, t_it, ctx_mean, t_eng, profile)
        out = float(n_requests) * osl / run_s / gpus
        res = dataclasses.replace(res, output_tok_per_s_per_gpu=np.asarray(out),
                                  total_tok_per_s_per_gpu=np.asarray(out * (1 + isl / osl)))
    return res


#: Whole batches a closed-loop solve evaluates at once before it refines (:meth:`_Colocated.solve`):
#: every batch up to :data:`GRID_ALL`, then a geometric grid of :data:`GRID_POINTS` points up to
#: the slots.
GRID_ALL = 64
GRID_POINTS = 96
#: :func:`serve_at_target` decodes the whole batches inside the grid step where the speed falls
#: below the target, up to ``k_hi``, together with the ``1 + k_hi // PAST_STEP`` batches past it: the
#: concurrencies it then solves hold a little more than their batch (``C = B + X TTFT``), so their
#: solve reads a few batches beyond the step (in the same call: a decode call costs ~1 ms whatever
#: its size there, ~1 us a batch).
PAST_STEP = 64


class _Colocated:
    """Co-located serving of one deployment at one request mix (module docstring): what does not
    depend on the concurrency, computed once, and the decode iteration of each whole batch asked
    for, computed in one vectorized call per batch of new sizes and kept.

    :func:`serve` and :func:`serve_at_target` solve the closed loop with it; one instance serves
    every concurrency of a target-speed search (and, cached by :func:`_colocated_model`, every row
    of a validation set on the same deployment and lengths).
    """

    def __init__(self, dep: Any, isl: float, osl: float, ctx_mean: float, ep: dict, t_eng: float, profile: Any,
                 recv_interval_iters: float, adp_timeout_iters: float | None) -> None:
        self.dep, self.isl, self.osl, self.ctx_mean = dep, isl, osl, ctx_mean
        self.ep, self.t_eng, self.profile = ep, t_eng, profile
        self.recv_interval_iters, self.adp_timeout_iters = recv_interval_iters, adp_timeout_iters
        self.tps = dep.spec.tokens_per_step if dep.spec else 1.0
        self.gpus = dep.replica_chips
        self.chunk = chunk = float(dep.prefill_chunk_per_rank_tok)  # a rank's prompt-token budget per iteration
        self.n_ranks = int(dep.parallel.attn_dp)
        self.c_tok = min(isl, chunk)  # prompt tokens of one prefill chunk
        if self.n_ranks > 1 and profile is None:  # the prefill steps read below, in one call
            c = int(round(self.c_tok))
            _prefill_steps_s(dep, c, [int(np.max(dep.prefill_batch(c))), 1, self.n_ranks,
                                      self.n_ranks * max(1, int(dep.prefill_chunk_per_rank_tok) // max(c, 1))])
        self.t_pre_tok = _prefill_per_token_s(dep, isl, chunk, profile)
        # attention-DP ranks run in lockstep (adp_prefill_s); TensorRT-LLM's balance gate, where the
        # run enabled it, holds prompts for a window (adp_gate_window) so that they run together
        self.adp_parts = adp_prefill_parts_s(dep, self.c_tok, profile) if self.n_ranks > 1 else None
        self.adp_batched = (adp_prefill_batched_parts_s(dep, self.c_tok, profile, parts=self.adp_parts)
                            if self.n_ranks > 1 else None)
        self.n_chunks = math.ceil(isl / chunk)
        # SGLang prefills first: a waiting chunk runs in a pass of its own, decode paused, paying beyond
        # its compute what a forward pass pays alone (weight read, launches, the engine's iteration cost)
        alone = (float(_prefill_iteration_s(dep, self.c_tok, [1], t_eng, profile)[0]) - self.c_tok * self.t_pre_tok
                 if str(dep.engine) in PREFILL_FIRST_ENGINES and self.n_ranks == 1 else 0.0)
        self.pass_alone_s = max(0.0, alone)
        # prompt tokens per decoding sequence per iteration: a sequence emits tps tokens an iteration,
        # so it finishes in osl / tps iterations and its successor's isl prompt tokens arrive in them
        self.prompt_per_seq = isl * self.tps / osl
        self._d = np.full(0, np.nan)  # decode iteration of each whole batch [s]; NaN: not computed
        self._req = np.full(0, np.nan)  # requests in flight at each whole batch [requests]
        self._st = np.full((3, 0), np.nan)  # :meth:`state` at each whole batch (iteration, TTFT, rate)
        self._grids: dict[float, np.ndarray] = {}  # :meth:`grid` by its top
        self._solved: dict[tuple, tuple[np.ndarray, np.ndarray]] = {}  # :meth:`solve` by its arguments

    @functools.cached_property
    def slot_cap(self) -> float:
        """:func:`_slot_cap` of the deployment at the mean context (memory only) [sequences]."""
        return _slot_cap(self.dep, self.ctx_mean)

    def _grow(self, top: int) -> None:
        if top >= self._d.size:
            n = max(top + 1, 2 * self._d.size)
            self._d = np.concatenate([self._d, np.full(n - self._d.size, np.nan)])
            self._req = np.concatenate([self._req, np.full(n - self._req.size, np.nan)])
            self._st = np.concatenate([self._st, np.full((3, n - self._st.shape[1]), np.nan)], axis=1)

    def decode_s(self, b: Any) -> np.ndarray:
        """:func:`_decode_iteration_s` at batches ``b`` (rounded, at least 1) [s]: the whole batches
        not yet computed in one call."""
        k = np.maximum(1, np.round(np.asarray(b, dtype=float))).astype(int)
        self._grow(int(k.max(initial=1)))
        missing = np.isnan(self._d[k])
        if missing.any():
            new = np.unique(k[missing])
            self._d[new] = _decode_iteration_s(self.dep, new, self.ctx_mean, self.t_eng, self.profile)
        return self._d[k]

    def state(self, b: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Iteration, TTFT in the engine and request rate per replica at batch ``b`` (arrays); at
        whole batches each computed once (the batches not yet computed in one call)."""
        b = np.asarray(b, dtype=float)
        if b.ndim != 1 or not b.size or not ((b == np.floor(b)).all() and b.min() >= 1):
            return self._state(b)
        k = b.astype(int)
        self._grow(int(k.max()))
        missing = np.isnan(self._st[0, k])
        if missing.any():
            new = np.unique(k[missing])
            self._st[:, new] = np.broadcast_arrays(*self._state(new.astype(float)))
        st = self._st[:, k]
        return st[0], st[1], st[2]

    def _state(self, b: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        n_ranks, isl, chunk = self.n_ranks, self.isl, self.chunk
        d = self.decode_s(b)
        if self.adp_parts is None:
            # a pass follows an iteration in which a chunk arrived (Poisson, b tps / osl chunks on average)
            passes = -np.expm1(-b * self.tps / self.osl * self.n_chunks) if self.pass_alone_s else 0.0
            t_it = d + b * self.prompt_per_seq * self.t_pre_tok + passes * self.pass_alone_s
        else:
            q = b / n_ranks * self.prompt_per_seq / self.c_tok  # chunks reaching a rank per iteration
            window = (adp_gate_window(n_ranks * q * self.c_tok / isl, n_ranks, self.adp_timeout_iters)
                      if self.adp_timeout_iters else 1.0)  # prompts per iteration, iterations
            t_it = d + adp_prefill_s(q, n_ranks, *self.adp_parts, window_iters=window, batched_s=self.adp_batched)
        x = b * self.tps / (self.osl * t_it)  # requests/s per replica
        gate = adp_gate_s(x, n_ranks, self.adp_timeout_iters * t_it) if self.adp_timeout_iters else 0.0
        # each attention rank admits up to a chunk of prompt tokens per iteration: the arriving
        # prompts load that budget by rho, one prompt occupies it for isl / chunk iterations
        rho = b / n_ranks * self.prompt_per_seq / chunk
        ttft = ttft_s(overhead_s=self.ep["ttft_overhead_s"], iteration_s=t_it,
                      prefill_s=self.n_chunks * ((self.pass_alone_s or d) + self.c_tok * self.t_pre_tok),
                      utilization_frac=rho, residual_s=0.5 * rho * isl / chunk * t_it,
                      recv_interval_iters=self.recv_interval_iters, gate_s=gate)
        return t_it, ttft, x

    def _state_one(self, b: float) -> tuple[float, float, float]:
        """:meth:`state` at one batch as plain numbers: a whole batch as kept; a fractional one (the
        solves) with attention DP and no gate by :meth:`_state`'s operations in its order (its
        products by the window 1.0 and sums with no gate or transfer, exact, left out)."""
        if not math.isfinite(b):
            return tuple(float(a[0]) for a in self.state(np.asarray([b])))
        k = max(1, round(b))
        st, dk = self._st, (self._d[k] if k < self._d.size else math.nan)
        if b == k and not math.isnan(st[0, k] if k < self._d.size else math.nan):
            return float(st[0, k]), float(st[1, k]), float(st[2, k])
        if b == k or self.adp_parts is None or self.adp_timeout_iters:
            return tuple(float(a[0]) for a in self.state(np.asarray([b])))
        d = float(self.decode_s([b])[0]) if math.isnan(dk) else float(dk)
        n, (loc, sh), (loc_each, sh_each) = self.n_ranks, self.adp_parts, self.adp_batched
        q, rho = b / n * self.prompt_per_seq / self.c_tok, b / n * self.prompt_per_seq / self.chunk
        t_it = d + float((expected_max_pass_s(np.asarray([q]), n, loc, loc_each)
                          + expected_max_pass_s(np.asarray([int(n) * q]), 1, sh, sh_each))[0])
        wait = (0.5 * rho * self.isl / self.chunk * t_it) / (1.0 - min(rho, 1.0)) if rho < 1.0 else math.inf
        ttft = (float(self.ep["ttft_overhead_s"]) + 0.5 * float(self.recv_interval_iters) * t_it + wait
                + self.n_chunks * ((self.pass_alone_s or d) + self.c_tok * self.t_pre_tok))
        return t_it, ttft, b * self.tps / (self.osl * t_it)

    def requests(self, b: Any) -> np.ndarray:
        """Requests in flight at batch ``b`` (Little's law: ``C = X (TTFT + osl t_it / tps) = B + X
        TTFT``) [requests] (array)."""
        b = np.asarray(b, dtype=float)
        _, ttft, x = self.state(b)
        return b + x * ttft

    def requests_at(self, k: Any) -> np.ndarray:
        """:meth:`requests` at whole batches ``k``, each computed once [requests]."""
        k = np.asarray(k, dtype=int)
        self._grow(int(k.max(initial=1)))
        missing = np.isnan(self._req[k])
        if missing.any():
            new = np.unique(k[missing])
            self._req[new] = self.requests(new)
        return self._req[k]

    def grid(self, b_max: float) -> np.ndarray:
        """Whole batches below ``b_max`` a solve weighs first: 1 to :data:`GRID_ALL`, then
        :data:`GRID_POINTS` geometric steps to the slots (the same for every concurrency; built once)."""
        top = max(float(self.slot_cap), float(b_max), 1.0)
        if top not in self._grids:
            g = np.arange(1, min(GRID_ALL, int(top)) + 1)
            if top > GRID_ALL:
                g = np.unique(np.concatenate([g, np.round(np.geomspace(GRID_ALL, top, GRID_POINTS)).astype(int)]))
            self._grids[top] = g
        g = self._grids[top]
        return g[g < b_max]

    def solve(self, concurrency: Any, b_max: Any) -> tuple[np.ndarray, np.ndarray]:
        """The closed loop's batch at each concurrency (:func:`~.queueing.closed_loop_batch`), every
        concurrency at once: ``(batch, slot_bound)`` arrays.

        The requests in flight at whole batches bracket each root: first on :meth:`grid`, then on
        every whole batch inside the grid step that holds it (one vectorized decode call per
        level for all concurrencies); regula falsi then finds the root between two adjacent
        whole batches, where the decode iteration takes one of two known values. Each answer is
        kept by its arguments: the whole-batch values it read are kept and never change, so a
        repeated solve (a warm target-speed search) returns what solving again would.
        """
        cs = np.atleast_1d(np.asarray(concurrency, dtype=float))
        tops = np.broadcast_to(np.asarray(b_max, dtype=float), cs.shape)
        key = (tuple(cs.tolist()), tuple(tops.tolist()))
        if key in self._solved:  # the same answer: every value it read is kept as it was
            return tuple(a.copy() for a in self._solved[key])
        out_b, out_slot = self._solve(cs, tops)
        self._solved[key] = (out_b.copy(), out_slot.copy())
        return out_b, out_slot

    def _solve(self, cs: np.ndarray, tops: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`solve` of concurrencies ``cs`` at most ``tops`` sequences each (arrays), not kept."""
        out_b, out_slot = np.empty(cs.shape), np.zeros(cs.shape, dtype=bool)
        # level 1: the common grid and each concurrency's top
        g = self.grid(float(np.max(tops)))
        self.decode_s(np.concatenate([g, tops, np.floor(tops)]))  # one call: the grid and the tops
        r_g = self.requests_at(g) if g.size else np.zeros(0)
        # requests in flight at the top: at least the batch, so only a top below the concurrency
        # (the slots) can hold fewer than it
        short = tops < cs
        r_top = np.full(cs.shape, np.inf)
        if short.any():
            r_top[short] = self.requests(tops[short])
        brackets = []
        for i, (c, top) in enumerate(zip(cs, tops)):
            if r_top[i] < c:  # even the slots hold fewer: the rest wait for a slot
                out_b[i], out_slot[i] = top, True
                continue
            g_i, r_i = g[g < top], r_g[g < top]
            hit = np.flatnonzero(r_i >= c)
            n_lo = int(hit[0]) if hit.size else g_i.size  # grid batches below the root
            lo = int(g_i[n_lo - 1]) if n_lo > 0 else 0
            hi = float(g_i[n_lo]) if hit.size else float(top)
            brackets.append((i, lo, hi))
        # level 2: every whole batch inside each bracket, one call for all of them
        inner = [np.arange(lo + 1, int(math.ceil(hi))) for _, lo, hi in brackets]
        if inner and sum(a.size for a in inner):
            ks = np.concatenate(inner)
            self.decode_s(np.concatenate([ks, ks + 1]))
            self.requests_at(ks)
        for (i, lo, hi), ks in zip(brackets, inner):
            c = cs[i]
            if ks.size:
                r_k = self.requests_at(ks)
                hit = np.flatnonzero(r_k >= c)
                if hit.size:
                    lo, hi = (int(ks[hit[0] - 1]) if hit[0] > 0 else lo), float(ks[hit[0]])
                else:
                    lo = int(ks[-1])
            f_lo = -c if lo == 0 else float(self.requests_at([lo])[0]) - c
            out_b[i] = _closed_loop_batch(lambda b, c=c: self.requests(b) - c, hi, c, rtol=1e-12, max_eval=200,
                                          b_min=float(lo), f_min=f_lo,
                                          excess_one=lambda b, c=float(c): b + math.prod(self._state_one(b)[1:]) - c)[0]
        return out_b, out_slot

    def result(self, concurrency: float, b_slots: float, phase: str = "serve") -> ServingResult:
        """:func:`serve` at one concurrency, ``b_slots`` sequences at most."""
        c = float(concurrency)
        (b,), (slot_bound,) = self.solve([c], [b_slots])
        return self._result(c, float(b), bool(slot_bound), phase)

    def _result(self, c: float, b: float, slot_bound: bool, phase: str = "serve") -> ServingResult:
        t_it, ttft, x = self._state_one(float(b))
        if slot_bound:  # the surplus waits for a slot: what is not decoding is waiting (Little's law)
            ttft = (c - b) / x
        tps, isl, osl = self.tps, self.isl, self.osl
        out = b * tps / t_it / self.gpus
        return ServingResult(phase, np.asarray(b), np.asarray(t_it), np.asarray(t_it / tps), np.asarray(ttft),
                             np.asarray(tps / t_it), np.asarray(out), np.asarray(out * (1 + isl / osl)), self.t_eng)


@functools.lru_cache(maxsize=32)
def _colocated_cached(dep: Any, isl: float, osl: float, ctx_mean: float, ttft_overhead_s: float, t_eng: float,
                      recv_interval_iters: float, adp_timeout_iters: float | None, _dir: str) -> _Colocated:
    return _Colocated(dep, isl, osl, ctx_mean, {"ttft_overhead_s": ttft_overhead_s}, t_eng, None,
                      recv_interval_iters, adp_timeout_iters)


def _colocated_model(dep: Any, isl: float, osl: float, ctx_mean: float, ep: dict, t_eng: float, profile: Any,
                     engines: Any, recv_interval_iters: float, adp_timeout_iters: float | None) -> _Colocated:
    """The :class:`_Colocated` of a deployment and request mix: kept across calls (per data
    directory) for the bundled engines and calibration, built afresh for a fit's own."""
    if profile is None and engines is None:
        try:
            return _colocated_cached(dep, isl, osl, ctx_mean, float(ep["ttft_overhead_s"]), float(t_eng),
                                     float(recv_interval_iters),
                                     None if adp_timeout_iters is None else float(adp_timeout_iters), str(data_dir()))
        except TypeError:  # an unhashable deployment
            pass
    return _Colocated(dep, isl, osl, ctx_mean, ep, t_eng, profile, recv_interval_iters, adp_timeout_iters)


def serve_at_target(deployment: Any, *, isl_tok: float, osl_tok: float, tok_per_s_per_user: float,
                    profile: Any = None) -> ServingResult | None:
    """Co-located serving with the most requests in flight per instance at which every user still
    sees ``tok_per_s_per_user``: :func:`serve` at the largest whole concurrency that meets it.

    A user's speed falls as requests are added (each iteration carries more sequences and their
    prompt chunks) until the KV cache is full; beyond that the extra requests wait for a slot and
    nothing changes in the iterations, so the answer lies from one request to the slots the cache
    holds. The speed is a function of the batch alone (``tokens_per_step / t_it(B)``) and the
    requests in flight grow with the batch (``C(B) = B + X(B) TTFT(B)``), so the search runs on
    the batch: the whole batches of a geometric grid, then every whole batch inside the grid step
    where the speed falls below the target (two vectorized passes), bracket the fastest batch
    ``k`` that meets it; the concurrencies from ``C(k)`` to ``C(k + 1)`` are then solved
    exactly (:func:`serve`) and the largest that meets the target kept. Where the speed does not
    fall monotonically with the requests, bisection on whole requests decides.

    Parameters
    ----------
    deployment : Deployment
    isl_tok, osl_tok : float
        Mean input and output tokens per request [tokens].
    tok_per_s_per_user : float
        Output tokens/s each user must see [tokens/s].

    Returns
    -------
    ServingResult or None
        The steady state at that concurrency (its ``concurrency``); None where even one request is
        served slower.
    """
    v.positive(tok_per_s_per_user, "tok_per_s_per_user")
    v.positive(isl_tok, "isl_tok")
    v.positive(osl_tok, "osl_tok")
    target = float(tok_per_s_per_user)
    dep = deployment
    isl, osl = float(isl_tok), float(osl_tok)
    ep, t_eng = _engine_cost_s(dep)
    model = _colocated_model(dep, isl, osl, float(round(isl + osl / 2.0)), ep, t_eng, profile, None, 1.0, None)
    cap = max(1.0, model.slot_cap)

    def run(c: float) -> ServingResult:  # serve(deployment, concurrency=c)
        return dataclasses.replace(model.result(c, min(c, cap)), concurrency=float(c))

    # the batch where the speed falls below the target: the grid, then every whole batch in its step;
    # the decode alone (a lower bound of the iteration) rules out the batches far beyond it
    t_max = model.tps / target  # the longest iteration that still meets the target [s]
    g = model.grid(cap)
    slow = model.decode_s(g) > t_max
    if slow.any():
        g = g[: int(np.argmax(slow)) + 1]
    fast = model.state(g)[0] <= t_max
    # one request decodes at most one sequence: its iteration is at most batch 1's
    lo = None if g.size and fast[0] else run(1.0)
    if lo is not None and float(lo.tok_per_s_per_user) < target:
        return None
    c_hi = max(1, int(model.slot_cap))
    hi = None
    if fast.all():  # fast enough up to the slots: the most requests there are
        hi = run(float(c_hi))
        if float(hi.tok_per_s_per_user) >= target:
            return hi
    j = int(np.argmin(fast)) if not fast.all() else g.size  # first grid batch too slow
    k_lo = int(g[j - 1]) if j > 0 else 0
    k_hi = int(g[j]) if j < g.size else max(int(math.ceil(cap)), k_lo + 1)
    ks = np.arange(k_lo + 1, k_hi)
    if ks.size and (ks[-1] >= model._d.size or np.isnan(model._d[ks[-1]])):
        # a step not decoded yet: the batches just past it ride along (the solve below reads some)
        model.decode_s(np.concatenate([ks, np.arange(k_hi + 1, k_hi + 2 + k_hi // PAST_STEP)]))
    fast = model.state(ks)[0] <= t_max if ks.size else np.zeros(0, dtype=bool)
    n = int(np.argmin(fast)) if not fast.all() else ks.size
    k = int(ks[n - 1]) if n > 0 else k_lo  # the fastest whole batch that meets the target; k + 1 does not
    # the concurrencies whose batch lies from k to k + 1, each solved as serve solves it
    c_from = max(1, int(math.floor(float(model.requests_at([k])[0]) if k >= 1 else 1.0)))
    c_to = min(c_hi, int(math.ceil(float(model.requests_at([k + 1])[0]))))
    cands = np.arange(c_from, c_to + 1, dtype=float)
    if 0 < cands.size <= 64:
        b, _ = model.solve(cands, np.minimum(cands, cap))
        ok = model.tps / model.state(b)[0] >= target
        n_ok = int(np.argmin(ok)) if not ok.all() else ok.size
        # monotone: the candidates up to the answer meet the target, none after it (nor c_to + 1)
        if n_ok > 0 and not ok[n_ok:].any() and (
                n_ok < ok.size or c_to == c_hi or float(run(float(c_to + 1)).tok_per_s_per_user) < target):
            c = float(cands[n_ok - 1])  # serve's solve at this concurrency, done above
            return dataclasses.replace(model._result(c, float(b[n_ok - 1]), False), concurrency=c)
    # not monotone: bisection on whole requests, lo meets the target, hi does not
    hi = run(float(c_hi)) if hi is None else hi
    if float(hi.tok_per_s_per_user) >= target:
        return hi
    lo = run(1.0) if lo is None else lo
    c_lo = 1
    while c_hi - c_lo > 1:
        mid = (c_lo + c_hi) // 2
        r = run(float(mid))
        if float(r.tok_per_s_per_user) >= target:
            c_lo, lo = mid, r
        else:
            c_hi = mid
    return lo


#: Engines whose scheduler runs a prefill batch whenever prompts wait, pausing decode until none do
#: (SGLang ``Scheduler.get_next_batch_to_run``: "Run prefill first if possible", v0.5.x; mixing is the
#: opt-in ``--enable-mixed-chunk``). vLLM v1 fills the token budget left by the running requests with
#: prompt chunks, and TensorRT-LLM's in-flight batching mixes context and generation requests.
PREFILL_FIRST_ENGINES = frozenset({"sglang"})


def runs_in_waves(dep: Any, fixed_lengths: bool) -> bool:
    """Whether a closed-loop benchmark of ``dep`` runs in synchronized waves (:func:`wave_serve`):
    every request has the same prompt and output length (``fixed_lengths``) and the engine pauses
    decode to prefill (:data:`PREFILL_FIRST_ENGINES`)."""
    return bool(fixed_lengths) and str(dep.engine) in PREFILL_FIRST_ENGINES


def wave_serve(dep: Any, *, isl_tok: float, osl_tok: float, concurrency: float, t_eng: float,
               overhead_s: float, profile: Any = None, max_batch_per_rank: float | None = None) -> ServingResult:
    """Serving when a fixed-length closed loop runs in synchronized waves (figures per GPU of one replica).

    A closed-loop client starts its ``C`` users together. When every request has the same
    lengths and the engine prefills before it decodes (:func:`runs_in_waves`), the ``B``
    requests a replica holds are prefilled back to back, ``n`` prompts an iteration
    (:meth:`~tokenomics.deployment.Deployment.prefill_batch`), then decode together for
    ``(osl - 1) / tokens_per_step`` iterations, finish in the same iteration and come back
    together: the waves never stagger. Per wave, with ``T_j`` the end of the ``j``-th prefill
    iteration, ``P`` the last one and ``d`` a decode iteration of ``B`` sequences:

        cycle = overhead + P + (osl - 1) / tps * d,   TTFT = overhead + mean_j T_j,
        TPOT = (P - mean_j T_j + (osl - 1) / tps * d) / (osl - 1)

    (each request waits for the prompts prefilled after its own before its second token), and
    the replica emits ``B * osl`` tokens per cycle. The prefill work is the steady state's; it
    moves from every request's TPOT into the TTFT of the requests behind it. ``B`` is at most
    what the KV cache holds at the wave's peak length ``isl + osl`` (all sequences grow
    together); users beyond it wait, ``(C - B) / X`` on top of TTFT (Little's law).

    Parameters
    ----------
    dep : Deployment
    isl_tok, osl_tok : float
        Prompt and output tokens of every request [tokens].
    concurrency : float
        Users of this replica [requests].
    t_eng : float
        Engine cost per iteration [s].
    overhead_s : float
        The engine's per-request overhead outside the iterations [s].
    profile : optional
        Calibration profile.
    max_batch_per_rank : float, optional
        The run's batch cap per attention-DP rank [sequences].
    """
    tps = dep.spec.tokens_per_step if dep.spec else 1.0
    isl, osl, c = float(isl_tok), float(osl_tok), float(concurrency)
    b = min(c, max(1.0, _slot_cap(dep, isl + osl, max_batch_per_rank)))
    n_req = max(1, int(round(b)))
    chunks = math.ceil(isl / float(dep.prefill_chunk_per_rank_tok))
    per_it = int(np.max(dep.prefill_batch(int(round(isl)))))  # prompts per prefill iteration
    sizes = np.full(n_req // per_it, per_it)
    if n_req % per_it:
        sizes = np.append(sizes, n_req % per_it)
    # a prompt longer than the chunk takes ``chunks`` iterations, each paying the engine cost
    t_pre = _prefill_iteration_s(dep, isl, sizes, t_eng, profile) + (chunks - 1) * t_eng
    ends = np.cumsum(t_pre)
    wait = float(np.sum(sizes * ends) / n_req)  # mean end of a request's own prefill
    d = float(_decode_iteration_s(dep, b, round(isl + osl / 2.0), t_eng, profile)[()])
    decode_s = max(osl - 1.0, 0.0) / tps * d
    cycle = float(overhead_s) + float(ends[-1]) + decode_s
    x = b / cycle  # requests/s
    ttft = float(overhead_s) + wait + ((c - b) / x if c > b else 0.0)
    tpot = (float(ends[-1]) - wait + decode_s) / (osl - 1.0) if osl > 1 else d / tps
    out = b * osl / cycle / dep.replica_chips
    return ServingResult("serve", np.asarray(b), np.asarray(d), np.asarray(tpot), np.asarray(ttft),
                         np.asarray(1.0 / tpot), np.asarray(out), np.asarray(out * (1 + isl / osl)), t_eng)


def serve_disaggregated(prefill_dep: Any, decode_dep: Any, *, n_prefill_gpus: float, n_decode_gpus: float,
                        isl_tok: float, osl_tok: float, concurrency: float, context_tok: float | None = None,
                        profile: Any = None, engines: Any = None,
                        max_batch_per_rank: float | None = None, cache_hit_frac: float = 0.0) -> ServingResult:
    """Steady-state disaggregated prefill/decode serving at a total concurrency (module docstring).

    Parameters
    ----------
    prefill_dep, decode_dep : Deployment
        One prefill instance and one decode instance (their ``replica_chips`` GPUs each).
    n_prefill_gpus, n_decode_gpus : float
        GPUs of all prefill and of all decode instances [GPUs].
    isl_tok, osl_tok : float
        Mean input and output tokens per request [tokens].
    concurrency : float
        Requests in flight over the whole deployment (closed loop) [requests].
    context_tok : float, optional
        Mean KV length a decode step attends to [tokens] (default ``isl + osl / 2``).
    profile, engines
        As :func:`serve`.
    max_batch_per_rank : float, optional
        The decode engine's batch cap per attention-DP rank (TensorRT-LLM generation workers'
        ``max_batch_size``) where the run set one; default memory only [sequences].
    cache_hit_frac : float
        Share of each prompt's tokens the prefill instances find in a prefix cache [0, 1): they
        compute only the rest (attention over the cached prefix not counted: ASSUMPTION); the
        whole prompt's KV cache still moves to the decode instance. Default 0.

    Returns
    -------
    ServingResult
        ``batch`` sequences per decode instance, ``iteration_s`` one decode iteration, ``ttft_s``
        including the prefill queue and :func:`~tokenomics.perf.comm.kv_transfer_s`; ``output_tok_per_s_per_gpu`` and
        ``total_tok_per_s_per_gpu`` per GPU of the whole deployment,
        ``output_tok_per_s_per_decode_gpu`` per decode GPU.
    """
    v.positive(isl_tok, "isl_tok")
    v.positive(osl_tok, "osl_tok")
    v.positive(concurrency, "concurrency")
    for name, n, dep in (("n_prefill_gpus", n_prefill_gpus, prefill_dep), ("n_decode_gpus", n_decode_gpus, decode_dep)):
        v.positive(n, name)
        if float(n) < dep.replica_chips:
            raise ValidationError(f"{name}={float(n):g} is fewer than one instance of {dep.replica_chips} GPUs "
                                  f"({dep.label()})")
    v.fraction(cache_hit_frac, "cache_hit_frac", allow_one=False)
    isl, osl, c = float(isl_tok), float(osl_tok), float(concurrency)
    isl_p = isl * (1.0 - float(cache_hit_frac))  # prompt tokens a prefill instance computes
    n_pi = float(n_prefill_gpus) / prefill_dep.replica_chips  # prefill instances
    n_di = float(n_decode_gpus) / decode_dep.replica_chips  # decode instances
    tps = decode_dep.spec.tokens_per_step if decode_dep.spec else 1.0
    ctx = isl + osl / 2.0 if context_tok is None else float(context_tok)

    # prefill instance: iteration time of every batch size up to its prefill budget
    ep_p, t_eng_p = _engine_cost_s(prefill_dep, engines)
    n_arr = np.arange(1, int(np.max(prefill_dep.prefill_batch(max(1, int(round(isl_p)))))) + 1)
    t_arr = _prefill_iteration_s(prefill_dep, max(1.0, isl_p), n_arr, t_eng_p, profile) * np.ones(n_arr.shape)
    x_cap = n_pi * n_arr[-1] / t_arr[-1]  # prefill capacity [requests/s]
    t_kv = kv_transfer_s(prefill_dep, decode_dep, isl, float(n_prefill_gpus) + float(n_decode_gpus))

    def prefill_ttft(x: float) -> float:
        """TTFT at a request rate ``x``: a prefill batch holds the prompts that arrive while one
        runs; they queue for the instance's capacity (:func:`~tokenomics.perf.queueing.ttft_s`) as the rate nears it."""
        lam = x / n_pi
        ok = n_arr >= lam * t_arr
        i = int(np.argmax(ok)) if ok.any() else len(n_arr) - 1
        busy = min(1.0, lam * t_arr[i] / n_arr[i])  # share of time the instance prefills
        # an idle instance starts at once (no iteration to wait for); a busy one's running batch is
        # the residual work, inflated by the queue as the rate nears capacity (1 / (1 - x / x_cap))
        return float(ttft_s(overhead_s=ep_p["ttft_overhead_s"], iteration_s=t_arr[i], prefill_s=t_arr[i],
                            utilization_frac=x / x_cap, residual_s=0.5 * busy * t_arr[i], busy_frac=0.0,
                            transfer_s=t_kv))

    t_eng_d = _engine_cost_s(decode_dep, engines)[1]
    kept: dict[tuple, np.ndarray] = {}  # the decode iteration at each whole batch one batch at a time

    def decode_at(b: np.ndarray) -> np.ndarray:
        """:func:`_decode_iteration_s` at ``b``; one batch at a time (the solve's evaluations, whose
        batches round to the same few whole batches), each whole batch computed once."""
        if b.size != 1:
            return _decode_iteration_s(decode_dep, b, float(round(ctx)), t_eng_d, profile)
        k = (int(np.maximum(1, np.round(b)).astype(int).ravel()[0]), b.shape)  # the whole batch it is timed at
        if k not in kept:
            kept[k] = _decode_iteration_s(decode_dep, b, float(round(ctx)), t_eng_d, profile)
        return kept[k].copy()

    def state(b):
        """Decode iteration and request rate at ``b`` sequences per decode instance, and the TTFT."""
        b = np.asarray(b, dtype=float)
        t_it = decode_at(b)
        x = n_di * b * tps / (osl * t_it)
        return t_it, np.asarray([prefill_ttft(float(xi)) for xi in np.ravel(x)]).reshape(x.shape), x

    def excess(b):
        _, ttft, x = state(b)
        return n_di * b + x * ttft - c  # Little's law: C = X TTFT + n_decode B

    # B at most the slots of a decode instance (memory at the mean context, the engine's batch cap)
    b_cap = _slot_cap(decode_dep, ctx, max_batch_per_rank)
    if b_cap < 1:
        raise ValidationError(f"{decode_dep.label()}: not one sequence of {isl:.0f}+{osl:.0f} tokens fits")
    b, slot_bound = _closed_loop_batch(excess, min(c / n_di, b_cap), c)
    t_it, ttft, x = (float(a[0]) for a in state(np.asarray([b])))
    if slot_bound:  # what is not decoding waits (for a decode slot): Little's law, as in serve
        ttft = (c - n_di * b) / x
    out_tok_s = x * osl  # [tokens/s] of the whole deployment
    n_gpus = float(n_prefill_gpus) + float(n_decode_gpus)
    return ServingResult("disaggregated", np.asarray(b), np.asarray(t_it), np.asarray(t_it / tps), np.asarray(ttft),
                         np.asarray(tps / t_it), np.asarray(out_tok_s / n_gpus),
                         np.asarray(out_tok_s * (1 + isl / osl) / n_gpus), t_eng_d,
                         output_tok_per_s_per_decode_gpu=np.asarray(out_tok_s / float(n_decode_gpus)),
                         kv_transfer_s=t_kv)
