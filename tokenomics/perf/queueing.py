"""The waits of a request at a running engine: queueing and attention-DP lockstep arithmetic.

Closed forms on plain numbers (arrays broadcast), no deployment in sight; the serving models
(:func:`tokenomics.perf.serving.serve`, :func:`tokenomics.perf.serving.serve_disaggregated`)
feed them iteration times and loads and sum what they return:

* the time to first token (:func:`ttft_s`): overhead, admission, gate, prefill queue, own prefill
  and KV transfer;
* the queue for the prefill budget (:func:`queue_wait_s`: M/D/1, Pollaczek-Khinchine);
* TensorRT-LLM's attention-DP balance gate (:func:`adp_gate_s`, :func:`adp_gate_window`);
* the busiest of ``n`` attention-DP ranks, each receiving a Poisson number of prompt chunks, that
  every MoE layer's barrier makes the whole iteration wait for (:func:`adp_prefill_s`,
  :func:`expected_max_poisson`, :func:`expected_max_pass_s`);
* the batch at which a closed loop holds its requests in flight (:func:`closed_loop_batch`).
"""

from __future__ import annotations

import functools
import math
from typing import Any

import numpy as np


def expected_max_poisson(mean: Any, n: int) -> np.ndarray:
    """Mean of the largest of ``n`` independent Poisson counts of the same ``mean`` (array).

    ``E[max] = sum_{m >= 0} (1 - F(m)^n)``, ``F`` the Poisson CDF; ``mean`` for ``n = 1``.

    Examples
    --------
    >>> round(float(expected_max_poisson(0.1, 8)), 4)   # ~ P(any of 8 is >= 1) = 1 - e^-0.8, plus twos
    0.5888
    """
    q = np.asarray(mean, dtype=float)
    if int(n) <= 1:
        return q.copy()
    top = int(np.ceil(np.max(q, initial=0.0) + 12.0 * np.sqrt(np.max(q, initial=0.0)) + 20.0))
    m = np.arange(top + 1).reshape((-1,) + (1,) * q.ndim)
    if q.ndim == 1 and q.size >= 2:  # several means: the rows of 1.0 past the head add exact zeros
        return np.sum(1.0 - _poisson_cdf_head(m, q)[0] ** int(n), axis=0)
    return np.sum(1.0 - poisson_cdf(m, q) ** int(n), axis=0)


def expected_max_pass_s(mean: Any, n: int, first_s: float, each_s: float) -> np.ndarray:
    """Mean time of the longest of ``n`` prefill passes whose chunk counts are independent Poisson of
    the same ``mean`` [s] (array): a pass of ``m >= 1`` chunks takes ``max(first_s, m each_s)``
    (one chunk alone pays a whole pass, batched chunks their share), none takes 0.

    ``E[L(M_max)] = sum_{m >= 1} (L(m) - L(m - 1)) (1 - F(m - 1)^n)``, ``F`` the Poisson CDF; with
    ``each_s = first_s`` it is :func:`expected_max_poisson` x ``first_s``.

    Examples
    --------
    >>> round(float(expected_max_pass_s(0.1, 8, 1.0, 1.0)), 4), round(float(expected_max_pass_s(0.1, 8, 1.0, 0.25)), 4)
    (0.5888, 0.5507)
    """
    q = np.asarray(mean, dtype=float)
    first, each = float(first_s), min(float(each_s), float(first_s))
    q_max = float(q.max(initial=0.0))
    top = math.ceil(q_max + 12.0 * math.sqrt(q_max) + 20.0)
    before, step = _pass_steps(top, q.ndim, first, each)
    if q.ndim == 1 and q.size >= 2:
        # several means: a sum over the counts adds row by row, so the rows of F = 1.0 past the head
        # (terms of exactly 0) leave it as it is; one mean's sum is pairwise, and is left whole
        f, r = _poisson_cdf_head(before, q)
        return (step[:r] * (1.0 - f ** max(int(n), 1))).sum(axis=0)
    return (step * (1.0 - poisson_cdf(before, q) ** max(int(n), 1))).sum(axis=0)


#: :func:`poisson_cdf` leaves to ``pdtr`` the grids of at least this many elements (below, the
#: skipped evaluations would not pay for the mask).
CDF_MASK_MIN = 256
#: A Poisson tail below this rounds the CDF to 1.0 exactly (half an ulp below 1 is 2**-54 ~ 5.6e-17).
CDF_ONE_TAIL = 1e-18
#: Extra elements below which a band of means joins the next (:func:`poisson_cdf`).
CDF_BAND_MERGE = 48


@functools.lru_cache(maxsize=512)
def _cdf_one_below(top: int) -> np.ndarray:
    """Per count ``m = 0 .. top - 1`` the mean below which the Poisson CDF ``F(m)`` is 1.0 in
    double precision (read-only): ``P(M > m) <= 2 q**(m+1) / (m+1)! < CDF_ONE_TAIL`` for ``q <=
    (m + 2) / 2`` (the tail's terms fall at least by half each), well under the rounding."""
    m = np.arange(top)
    lg = np.array([math.lgamma(k + 2.0) for k in range(top)])
    out = np.minimum((m + 2.0) / 2.0, np.exp((math.log(CDF_ONE_TAIL / 2.0) + lg) / (m + 1.0)))
    out.flags.writeable = False
    return out


def poisson_cdf(m: np.ndarray, q: np.ndarray) -> np.ndarray:
    """The Poisson CDF ``F(m)`` of mean ``q`` (``scipy.special.pdtr``, what ``scipy.stats.poisson.cdf``
    returns without its argument checks) of a column of counts ``m = 0 .. top - 1`` (shape ``(top,
    1, ...)``) against means ``q`` (array), shape ``(top,) + q.shape``.

    On larger grids of means (one axis) ``pdtr`` runs, per band of means, only on the counts up to
    the first where the band's ``F`` is 1.0 to the bit (:func:`_cdf_one_below`): that row is
    computed too and checked, and the rows past it, most of a grid of small means, are 1.0 (where
    a checked row is not all 1.0, every element is computed). Ascending means (a grid of batches)
    band by that row; others take one band. The same values either way.
    """
    f, r = _poisson_cdf_head(m, q)
    if r == m.shape[0]:
        return f
    out = np.ones((m.shape[0],) + q.shape)
    out[:r] = f
    return out


@functools.cache
def _pdtr() -> Any:
    """``scipy.special.pdtr``, imported once (SciPy loads on first use, not with the module)."""
    from scipy.special import pdtr

    return pdtr


def _poisson_cdf_head(m: np.ndarray, q: np.ndarray) -> tuple[np.ndarray, int]:
    """``(F, r)``: :func:`poisson_cdf`'s first ``r`` rows, every row past them 1.0 (``r`` the
    number of counts where only some bands are computed; every count where ``pdtr`` runs whole)."""
    pdtr = _pdtr()
    top = m.shape[0]
    if top * q.size < CDF_MASK_MIN or q.ndim != 1 or not (q >= 0.0).all() or not np.isfinite(q).all():
        return pdtr(m, q), top
    rows = np.searchsorted(_cdf_one_below(top), q, side="right") + 1  # through the first count whose F is 1.0
    if not (q[1:] >= q[:-1]).all():
        rows = np.full(q.size, rows.max())
    # bands of equal rows, a band merged into the next where computing its few extra rows is cheaper
    # than a pdtr call (~2 us, some 50 elements)
    starts = np.flatnonzero(rows[1:] != rows[:-1]) + 1
    bands = []
    s0 = 0
    for s1 in [*starts.tolist(), q.size]:
        if bands and (int(rows[s1 - 1]) - bands[-1][2]) * (bands[-1][1] - bands[-1][0]) < CDF_BAND_MERGE:
            bands[-1] = (bands[-1][0], s1, int(rows[s1 - 1]))
        else:
            bands.append((s0, s1, int(rows[s1 - 1])))
        s0 = s1
    head = min(max(r for _, _, r in bands), top)
    out = np.ones((head, q.size))
    for a, b, r in bands:
        r = min(r, top)
        out[:r, a:b] = pdtr(m[:r], q[a:b])
        if r < top and not (out[r - 1, a:b] == 1.0).all():
            return pdtr(m, q), top
    return out, head


@functools.lru_cache(maxsize=1024)
def _pass_steps(top: int, ndim: int, first: float, each: float) -> tuple[np.ndarray, np.ndarray]:
    """``(m - 1, L(m) - L(m - 1))`` for ``m = 1 .. top`` of :func:`expected_max_pass_s`, a pass of
    ``m`` chunks taking ``L(m) = max(first, m each)`` [s] (read-only column arrays over ``ndim``
    further axes; kept: a serving solve asks for the same passes many times)."""
    m = np.arange(1, top + 1).reshape((-1,) + (1,) * ndim)
    step = np.maximum(first, m * each) - np.where(m > 1, np.maximum(first, (m - 1) * each), 0.0)
    before = m - 1
    before.flags.writeable = False
    step.flags.writeable = False
    return before, step


def adp_prefill_s(chunks_per_rank: Any, n_ranks: int, local_s: float, shared_s: float,
                  window_iters: Any = 1.0, batched_s: tuple[float, float] | None = None) -> np.ndarray:
    """Prefill time per lockstep iteration of ``n_ranks`` attention-DP ranks [s] (array).

    Every MoE layer is a barrier across the ranks, so an iteration lasts as long as its busiest
    rank (TensorRT-LLM tech blog 10, "ADP Balance Strategy": ``time_i = max_m time_{i,m}``; ranks
    prefilling while the others only decode dominate the iteration). With prompts reaching ranks
    at random, each rank gets a Poisson number of chunks (mean ``chunks_per_rank`` an iteration):
    the busiest rank's local work is ``E[max] * local_s`` (:func:`expected_max_poisson`), the
    experts' ``n_ranks * chunks_per_rank * shared_s``. Rare prompts cost a whole chunk on one
    rank while the others wait; frequent ones spread evenly (``E[max] -> chunks_per_rank``).
    A balance gate that holds prompts for ``window_iters`` iterations and releases them together
    (:func:`adp_gate_window`) pays the busiest rank's share of a window's chunks once a window.

    Parameters
    ----------
    chunks_per_rank : array_like
        Prefill chunks reaching one rank per iteration (mean) [chunks].
    n_ranks : int
        Attention data-parallel ranks.
    local_s, shared_s : float
        A chunk's rank-local and expert-parallel time
        (:func:`~tokenomics.perf.serving.adp_prefill_parts_s`) [s].
    window_iters : array_like
        Iterations prompts are held before they run (1: no gate) [iterations].
    batched_s : (float, float), optional
        What each chunk adds to a pass that batches several, ``(local, shared)``
        (:func:`~tokenomics.perf.serving.adp_prefill_batched_parts_s`): a rank's pass of ``m`` chunks
        then takes ``max(local_s, m local)`` and the experts' pass over all ranks' chunks
        ``max(shared_s, m shared)`` (:func:`expected_max_pass_s`; the experts' chunk count Poisson
        over the ranks). None: every chunk pays a whole pass.
    """
    q = np.asarray(chunks_per_rank, dtype=float)
    w = np.maximum(np.asarray(window_iters, dtype=float), 1.0)
    if batched_s is None:
        return expected_max_poisson(q * w, n_ranks) / w * float(local_s) + int(n_ranks) * q * float(shared_s)
    loc_each, sh_each = batched_s
    return (expected_max_pass_s(q * w, n_ranks, local_s, loc_each)
            + expected_max_pass_s(int(n_ranks) * q * w, 1, shared_s, sh_each)) / w


def queue_wait_s(utilization_frac: Any, residual_s: Any) -> np.ndarray:
    """Mean wait before service in a single-server queue with Poisson arrivals [s] (array).

    Pollaczek-Khinchine: ``W = R / (1 - rho)``, ``R`` the mean residual work an arrival finds
    (M/D/1, one request's service ``S``: ``R = rho S / 2``); infinite once ``rho >= 1``.

    Parameters
    ----------
    utilization_frac : array_like
        Offered load over capacity ``rho`` [fraction].
    residual_s : array_like
        Mean residual work found on arrival [s].
    """
    rho = np.asarray(utilization_frac, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(rho < 1.0, np.asarray(residual_s, float) / (1.0 - np.minimum(rho, 1.0)), np.inf)


def adp_gate_s(rate_req_s: Any, n_ranks: int, timeout_s: Any) -> np.ndarray:
    """Mean wait of a new request at TensorRT-LLM's attention-DP balance gate [s] (array).

    With ``attention_dp_config.enable_balance`` a rank holding a new prompt waits until every
    attention-DP rank holds one, at most ``timeout_iters`` iterations (TensorRT-LLM tech blog 10,
    "ADP Balance Strategy": "when a rank becomes available for context processing while others
    remain in generation phases, it waits up to timeout_iters iterations until all other ranks
    have context tasks"). A rank's first waiting prompt opens its window, which closes when all
    ``n_ranks`` ranks hold a prompt -- new requests go to the rank a request just left, i.e. a
    random rank, so that takes ``n_ranks * H(n_ranks - 1)`` arrivals (coupon collector) -- or at
    the timeout. The ``n = 1 + (X / n_ranks) * window`` prompts that reach that rank in its window
    wait from the whole window (the first) down to nothing (the last): ``window * (n + 1) / (2 n)``
    on average (the whole timeout when prompts reach a rank more rarely than once per window).

    Parameters
    ----------
    rate_req_s : array_like
        Requests/s reaching the instance [requests/s].
    n_ranks : int
        Attention data-parallel ranks (1: no gate).
    timeout_s : array_like
        ``timeout_iters`` x the iteration time [s].
    """
    x = np.asarray(rate_req_s, dtype=float)
    if int(n_ranks) <= 1:
        return np.zeros(np.broadcast(x, np.asarray(timeout_s)).shape)
    window = adp_gate_window(x, n_ranks, timeout_s)
    n = 1.0 + x / n_ranks * window
    return window * (n + 1.0) / (2.0 * n)


def adp_gate_window(rate: Any, n_ranks: int, timeout: Any) -> np.ndarray:
    """How long TensorRT-LLM's attention-DP balance gate holds prompts (:func:`adp_gate_s`): until
    all ``n_ranks`` ranks hold one, ``n_ranks * H(n_ranks - 1)`` random arrivals (coupon collector)
    at ``rate``, or the ``timeout``, whichever comes first (array; in the units of ``timeout``,
    ``rate`` per that unit)."""
    arrivals = n_ranks * float(np.sum(1.0 / np.arange(1, int(n_ranks))))
    with np.errstate(divide="ignore"):
        return np.minimum(np.asarray(timeout, float), arrivals / np.asarray(rate, dtype=float))


def ttft_s(*, overhead_s: float, iteration_s: Any, prefill_s: Any, utilization_frac: Any, residual_s: Any,
           busy_frac: Any = 1.0, recv_interval_iters: float = 1.0, gate_s: Any = 0.0,
           transfer_s: float = 0.0) -> np.ndarray:
    """Time to first token of a request reaching a running engine [s] (arrays broadcast).

    The one TTFT of :func:`~tokenomics.perf.serving.serve` and
    :func:`~tokenomics.perf.serving.serve_disaggregated`, the sum of what a closed-loop benchmark
    client waits for:

    * the engine's per-request overhead outside the iterations (API server, tokenization,
      streaming the first token; fitted, :func:`~tokenomics.perf.engines.engine_params`);
    * the next admission point: half an iteration if the engine is busy (``busy_frac``), times
      the scheduler's polling interval (SGLang ``--scheduler-recv-interval``; 1 = every iteration);
    * an admission gate (:func:`adp_gate_s`; 0 without one);
    * the queue for prefill (:func:`queue_wait_s`): co-located, each iteration admits up to a
      budget of prompt tokens, ``utilization_frac`` of which the arriving prompts use, one prompt
      holding it for ``isl / budget`` iterations (M/D/1 residual); disaggregated, the prefill
      instance's load and the residual of the batch running on arrival;
    * its own prefill iterations (``prefill_s``) and, disaggregated, the KV transfer.

    Parameters
    ----------
    overhead_s : float
        Per-request engine overhead [s].
    iteration_s : array_like
        The iteration the request arrives during [s].
    prefill_s : array_like
        The iterations that carry its prompt [s].
    utilization_frac, residual_s : array_like
        Load on the prefill server [fraction] and the residual work an arrival finds there [s].
    busy_frac : array_like
        Share of time the engine runs an iteration [fraction] (1 for a co-located engine).
    recv_interval_iters : float
        Iterations between the scheduler's polls for new requests [iterations].
    gate_s : array_like
        Admission gate wait [s].
    transfer_s : float
        KV-cache transfer to the decode GPUs (disaggregated) [s].
    """
    admit_s = 0.5 * np.asarray(busy_frac, float) * float(recv_interval_iters) * np.asarray(iteration_s, float)
    return (float(overhead_s) + admit_s + np.asarray(gate_s, float) + queue_wait_s(utilization_frac, residual_s)
            + np.asarray(prefill_s, float) + float(transfer_s))


def closed_loop_batch(excess: Any, b_max: float, concurrency: float, rtol: float = 1e-7,
                      max_eval: int = 40, b_min: float = 0.0, f_min: float | None = None,
                      excess_one: Any = None) -> tuple[float, bool]:
    """The batch of a closed loop (:func:`~tokenomics.perf.serving.serve`,
    :func:`~tokenomics.perf.serving.serve_disaggregated`): the root of ``excess(b) = requests in
    flight at batch b - C`` (increasing in ``b``, ``-C`` at ``b = 0``) on ``(b_min, b_max]``; ``(b_max, True)`` when even
    ``b_max`` holds fewer requests than the concurrency (the rest queue for a slot).

    Safeguarded regula falsi (Illinois) on the bracket ``[b_min, b_max]`` (``f_min`` the excess at
    ``b_min``, ``-C`` at 0): ``excess`` is nearly linear in ``b`` (``b + X(b) TTFT(b) - C``), so a
    few evaluations reach ``|excess| <= rtol C``; an infinite excess (a saturated prefill queue)
    bisects. ``excess_one``: the same excess at one batch as a plain number, where the caller has it.
    """
    f = excess_one or (lambda b: float(np.asarray(excess(np.asarray([b], dtype=float)), dtype=float)[0]))

    c = float(concurrency)
    lo, f_lo = float(b_min), (-c if f_min is None else float(f_min))
    hi, f_hi = float(b_max), f(float(b_max))
    if f_hi < 0:
        return hi, True
    side = 0
    for _ in range(int(max_eval)):
        m = 0.5 * (lo + hi) if not math.isfinite(f_hi) else (lo * f_hi - hi * f_lo) / (f_hi - f_lo)
        if not lo < m < hi:
            m = 0.5 * (lo + hi)
        fm = f(m)
        if abs(fm) <= rtol * c or hi - lo <= rtol * hi:
            return m, False
        if fm > 0:
            hi, f_hi = m, fm
            if side == -1 and math.isfinite(f_lo):
                f_lo *= 0.5
            side = -1
        else:
            lo, f_lo = m, fm
            if side == 1 and math.isfinite(f_hi):
                f_hi *= 0.5
            side = 1
    return 0.5 * (lo + hi), False
