"""What a serving engine delivers: steady-state continuous batching of a deployment.

An engine keeps ``concurrency`` requests in flight. Each iteration decodes one token (or a
speculative verify step) for every sequence past its prefill and processes a chunk of prompt
tokens mixed into the same batch (chunked prefill), plus a fixed per-iteration engine cost
(scheduler, sampling over the vocabulary, output processing; :func:`engine_step_s`). In steady
state every output token brings ``isl / osl`` prompt tokens with it, so with ``B`` sequences
decoding, each emitting ``tokens_per_step`` tokens an iteration, an iteration takes

    t_it = t_decode(B) + B * tokens_per_step * (isl / osl) * t_prefill_per_token + t_engine

and a request lives ``TTFT + osl * t_it``. A closed-loop benchmark client (InferenceMAX, vLLM
``benchmark_serving``: ``concurrency`` users, each sending a new request when its last one ends)
sends ``X = B * tokens_per_step / (osl * t_it)`` requests/s in steady state, and a new request's
TTFT (:func:`ttft_s`) is

    TTFT = overhead + 0.5 * recv_interval * t_it + gate + R / (1 - rho) + ceil(isl / chunk) * t_chunk

the engine's fitted per-request overhead outside the iterations (API server, tokenization,
streaming the first token; :func:`engine_params`); the wait for the scheduler to admit it (half an
iteration, or half its polling interval: SGLang ``--scheduler-recv-interval``); TensorRT-LLM's
attention-DP balance gate where the run enabled it (:func:`adp_gate_s`); the queue for the prefill
budget, each iteration (each attention-DP rank) admitting up to a chunk of prompt tokens, loaded
``rho = B / ranks * tokens_per_step * isl / osl / chunk`` by the arriving prompts (M/D/1, Pollaczek-Khinchine,
:func:`queue_wait_s`: residual ``R = rho * (isl / chunk) * t_it / 2``); and the iterations its own
prompt rides. Little's law closes the loop, ``C = X * (TTFT + osl * t_it / tokens_per_step) =
B + X * TTFT``, solved for ``B``: the smallest batch at which the requests in flight reach ``C``,
bracketed between two whole batches (the decode step is timed at whole batches, so ``B + X * TTFT``
may step down where the rounded batch steps up), then regula falsi (:meth:`_Colocated.solve`,
:func:`_closed_loop_batch`). Sequences beyond
a replica's slots (:func:`_slot_cap`: what its paged KV cache holds at their mean length
``isl + osl / 2``, and the engine's batch cap where the run set one) wait for a slot: then ``B``
is that cap and ``TTFT = (C - B) / X``. Then

* time per output token ``TPOT = t_it / tokens_per_step`` (speculative decoding emits
  ``tokens_per_step`` tokens per iteration), tokens/s per user ``1 / TPOT``;
* output tokens/s per GPU ``B * tokens_per_step / t_it / gpus``; total adds the prompt tokens.

With attention data-parallel ranks (wide expert parallelism, ``attn_dp > 1``) the prompt term is
not spread evenly: every MoE layer is a barrier across the ranks, so an iteration lasts as long as
its busiest rank, and a prompt prefilled on one rank holds the others (:func:`adp_prefill_s`: the
busiest rank's pass over its chunks, Poisson arrivals per rank, plus the experts' pass over every
rank's chunks; a chunk alone pays a whole pass, chunks batched up to the rank's prompt budget their
share of one, :func:`adp_prefill_batched_parts_s`; TensorRT-LLM's balance gate, where a run enabled
it, releases a window's prompts together, :func:`adp_gate_window`).

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
behind instead of in every TPOT. Engines that mix prompt chunks into the decode batch (vLLM,
TensorRT-LLM) settle into the staggered steady state above whatever the lengths.

Disaggregated serving (:func:`serve_disaggregated`) splits the GPUs into prefill instances and
decode instances. At a total concurrency ``C``, ``X`` requests/s flow through both: a decode
instance runs ``B`` sequences with no prompt tokens in its iterations (``t_it(B)`` from the
``decode`` phase above), so ``X = n_decode * B * tokens_per_step / (osl * t_it)``; a prefill
instance prefills batches of the prompts arriving while the previous batch ran (``prefill``
phase above); each prompt's KV cache (:func:`tokenomics.perf.memory.kv_bytes_per_seq_per_chip`)
then crosses the fabric to a decode GPU (scale-up link inside one NVLink/UB domain, scale-out NIC
across domains). ``TTFT`` is the same :func:`ttft_s`: the residual of the prefill batch running
on arrival, inflated by ``1 / (1 - X / X_cap)`` as the rate nears the prefill capacity
``X_cap = n_prefill * n_max / t_prefill(n_max)`` (the queue in front of prefill), plus the prompt's
own batch and the KV transfer; Little's law closes the loop, ``C = X * TTFT + n_decode * B``. The
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
from ..errors import ValidationError
from ..specs import precision_bytes

PHASES = ("serve", "offline", "decode", "prefill")


def chip_s_per_request(prefill_tok_per_s: Any, decode_tok_per_s: Any, input_tok: Any,
                       output_tok: Any) -> np.ndarray:
    """Chip time one request takes when its prompt and its output share the chips [s].

    ``input_tok / prefill_tok_per_s + output_tok / decode_tok_per_s``: the chips time-slice the
    two phases, each at its own throughput per chip (interference between them ignored).

    Parameters
    ----------
    prefill_tok_per_s, decode_tok_per_s : float or array
        Prompt and output tokens/s of one chip [tokens/s].
    input_tok, output_tok : float or array
        Tokens per request.

    Examples
    --------
    1,000 prompt tokens at 10,000 tok/s and 100 output tokens at 1,000 tok/s: 0.1 + 0.1 s.

    >>> float(chip_s_per_request(10_000, 1_000, 1_000, 100))
    0.2
    """
    v.positive(prefill_tok_per_s, "prefill_tok_per_s")
    v.positive(decode_tok_per_s, "decode_tok_per_s")
    v.non_negative(input_tok, "input_tok")
    v.non_negative(output_tok, "output_tok")
    return (np.asarray(input_tok, float) / np.asarray(prefill_tok_per_s, float)
            + np.asarray(output_tok, float) / np.asarray(decode_tok_per_s, float))


#: Environment variable naming an engines CSV (schema of ``datasets/engines.csv``, e.g. written
#: by ``tokenomics fit-serving --out``) whose rows take precedence over the bundled ones
#: everywhere the library prices an engine (:func:`read_engines`).
ENGINES_ENV = "TOKENOMICS_ENGINES"

#: Columns an engines table must have.
ENGINE_COLUMNS = ("engine", "vendor", "kernel_overhead_s", "ttft_overhead_s", "max_seqs")


def engine_params(engine: str, vendor: str = "", table: Any = None) -> dict[str, Any]:
    """Fitted per-iteration cost and sequence cap of a serving engine (``datasets/engines.csv``).

    The cost of an iteration beyond the kernels the core times (scheduling, sampling over the
    vocabulary, output processing, and the gaps between a graph's kernels) is modelled as
    ``kernel_overhead_s`` per kernel the iteration launches (the engine plan's kernel count of
    the deployment, :attr:`tokenomics.deployment.Deployment.engine_kernels`): a model with more
    kernels per layer (MLA, shared experts) pays more per layer than one with fewer (dense GQA).
    Rows are matched on (engine, vendor) first, then (engine, any vendor), then the ``default``
    engine of that vendor. Without ``table``: the bundled table, under the rows of the file
    ``$TOKENOMICS_ENGINES`` names where it is set (:data:`ENGINES_ENV`, :func:`read_engines`).

    Returns
    -------
    dict
        ``kernel_overhead_s`` [s per kernel per iteration], ``max_seqs`` [sequences],
        ``ttft_overhead_s`` [s per request: API server, tokenization, scheduling and streaming of
        the first token, outside the iterations], ``source``.
    """
    if table is None:
        import os

        from ..catalog import data_dir

        own = os.environ.get(ENGINES_ENV, "").strip()
        stamp = os.stat(own).st_mtime_ns if own and os.path.isfile(own) else 0  # an edited file is read again
        return dict(_engine_params_in_force(str(engine), str(vendor), str(data_dir()), own, stamp))
    return _engine_params(engine, vendor, table)


@functools.lru_cache(maxsize=64)
def _engine_params_in_force(engine: str, vendor: str, _dir: str, own: str, _stamp: int) -> tuple:
    from ..catalog import load

    if not own:
        return tuple(_engine_params(engine, vendor, load("engines")).items())
    from ..errors import DataError

    try:
        table = read_engines(own)
    except DataError as exc:  # name where the path came from: the user may not remember setting it
        raise DataError(f"${ENGINES_ENV}: {exc}; point it at an engines CSV (tokenomics fit-serving --out) "
                        f"or unset it") from None
    return tuple(_engine_params(engine, vendor, table).items())


def read_engines(source: Any) -> "pd.DataFrame":  # noqa: F821
    """An engines table of one's own (a CSV path or DataFrame in the schema of
    ``datasets/engines.csv``, as ``tokenomics fit-serving --out`` writes it) above the bundled
    rows: its rows are matched first, the bundled ones fill in engines and vendors it lacks.

    Engine names are those of :data:`tokenomics.deployment.ENGINES` (and the names published rows
    use for them), vendors the catalogued accelerators' or ``any``; costs are non-negative
    seconds, ``max_seqs`` at least 1. Anything else is one :class:`~tokenomics.errors.DataError`
    naming the row.
    """
    import pandas as pd

    from ..catalog import load
    from ..deployment import ENGINE_ALIASES, ENGINES
    from ..io import choice_column, numeric_column, read_csv

    what = "engines table"
    df = read_csv(source, what, required=ENGINE_COLUMNS).reset_index(drop=True)
    for col in ("kernel_overhead_s", "ttft_overhead_s"):
        df[col] = numeric_column(df, col, what, minimum=0.0)
    df["max_seqs"] = numeric_column(df, "max_seqs", what, minimum=1.0)
    names = tuple(ENGINES) + tuple(ENGINE_ALIASES)  # an unfitted engine's rows price as `default`
    df["engine"] = choice_column(df.assign(engine=df["engine"].astype(str).str.strip().str.lower()), "engine",
                                 what, names).map(priced_engine)
    bundled = load("engines")
    vendors = tuple(sorted(set(bundled["vendor"].astype(str)) | _vendors()))
    df["vendor"] = choice_column(df.assign(vendor=df["vendor"].astype(str).str.strip().str.lower()), "vendor",
                                 what, vendors)
    if "source" not in df:
        df["source"] = str(source) if not isinstance(source, pd.DataFrame) else "engines table"
    return pd.concat([df, bundled], ignore_index=True)


def _vendors() -> set[str]:
    """Vendors of the catalogued accelerators, lower case."""
    from ..catalog import load

    return set(load("accelerators")["vendor"].astype(str).str.lower())


def _engine_params(engine: str, vendor: str, df: Any) -> dict[str, Any]:
    eng = priced_engine(engine)
    vend = str(vendor).lower()
    for e, vd in ((eng, vend), (eng, "any"), ("default", vend), ("default", "any")):
        sel = df[(df["engine"] == e) & (df["vendor"] == vd)]
        if len(sel):
            r = sel.iloc[0]
            ttft0 = float(r["ttft_overhead_s"]) if "ttft_overhead_s" in r.index else 0.0
            return {"kernel_overhead_s": float(r["kernel_overhead_s"]), "max_seqs": float(r["max_seqs"]),
                    "ttft_overhead_s": ttft0 if math.isfinite(ttft0) else 0.0,
                    "source": str(r["source"]), "engine": e, "vendor": vd}
    raise ValidationError(f"no engine parameters for {engine!r}; known: {sorted(set(df['engine']))}")


def engine_step_s(engine: str, vendor: str, n_kernels: float) -> float:
    """Per-iteration engine cost of an iteration launching ``n_kernels`` kernels [s]."""
    return engine_params(engine, vendor)["kernel_overhead_s"] * float(n_kernels)


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
    from ..catalog import data_dir

    try:
        return _prefill_memo_cached(dep, prompt_tok, str(data_dir()))
    except TypeError:  # an unhashable deployment
        return None


@functools.lru_cache(maxsize=256)
def _prefill_memo_cached(dep, prompt_tok: int, _dir: str) -> dict:
    return {}


def expected_max_poisson(mean: Any, n: int) -> np.ndarray:
    """Mean of the largest of ``n`` independent Poisson counts of the same ``mean`` (array).

    ``E[max] = sum_{m >= 0} (1 - F(m)^n)``, ``F`` the Poisson CDF; ``mean`` for ``n = 1``.

    Examples
    --------
    >>> round(float(expected_max_poisson(0.1, 8)), 4)   # ~ P(any of 8 is >= 1) = 1 - e^-0.8, plus twos
    0.5888
    """
    # the Poisson CDF: what scipy.stats.poisson.cdf returns, without its argument checks
    from scipy.special import pdtr

    q = np.asarray(mean, dtype=float)
    if int(n) <= 1:
        return q.copy()
    top = int(np.ceil(np.max(q, initial=0.0) + 12.0 * np.sqrt(np.max(q, initial=0.0)) + 20.0))
    m = np.arange(top + 1).reshape((-1,) + (1,) * q.ndim)
    return np.sum(1.0 - pdtr(m, q) ** int(n), axis=0)


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
    # the Poisson CDF: what scipy.stats.poisson.cdf returns, without its argument checks
    from scipy.special import pdtr

    q = np.asarray(mean, dtype=float)
    first, each = float(first_s), min(float(each_s), float(first_s))
    top = int(np.ceil(np.max(q, initial=0.0) + 12.0 * np.sqrt(np.max(q, initial=0.0)) + 20.0))
    m = np.arange(1, top + 1).reshape((-1,) + (1,) * q.ndim)
    step = np.maximum(first, m * each) - np.where(m > 1, np.maximum(first, (m - 1) * each), 0.0)
    return np.sum(step * (1.0 - pdtr(m - 1, q) ** max(int(n), 1)), axis=0)


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
        A chunk's rank-local and expert-parallel time (:func:`adp_prefill_parts_s`) [s].
    window_iters : array_like
        Iterations prompts are held before they run (1: no gate) [iterations].
    batched_s : (float, float), optional
        What each chunk adds to a pass that batches several, ``(local, shared)``
        (:func:`adp_prefill_batched_parts_s`): a rank's pass of ``m`` chunks then takes ``max(local_s,
        m local)`` and the experts' pass over all ranks' chunks ``max(shared_s, m shared)``
        (:func:`expected_max_pass_s`; the experts' chunk count Poisson over the ranks). None: every
        chunk pays a whole pass.
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

    The one TTFT of :func:`serve` and :func:`serve_disaggregated`, the sum of what a closed-loop
    benchmark client waits for:

    * the engine's per-request overhead outside the iterations (API server, tokenization,
      streaming the first token; fitted, :func:`engine_params`);
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


def _closed_loop_batch(excess: Any, b_max: float, concurrency: float, rtol: float = 1e-7,
                       max_eval: int = 40, b_min: float = 0.0, f_min: float | None = None) -> tuple[float, bool]:
    """The batch of a closed loop: the root of ``excess(b) = requests in flight at batch b - C``
    (increasing in ``b``, ``-C`` at ``b = 0``) on ``(b_min, b_max]``; ``(b_max, True)`` when even
    ``b_max`` holds fewer requests than the concurrency (the rest queue for a slot).

    Safeguarded regula falsi (Illinois) on the bracket ``[b_min, b_max]`` (``f_min`` the excess at
    ``b_min``, ``-C`` at 0): ``excess`` is nearly linear in ``b`` (``b + X(b) TTFT(b) - C``), so a
    few evaluations reach ``|excess| <= rtol C``; an infinite excess (a saturated prefill queue)
    bisects.
    """
    def f(b: float) -> float:
        return float(np.asarray(excess(np.asarray([b], dtype=float)), dtype=float)[0])

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
        (:func:`adp_gate_s`); default no gate [iterations].
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
        from ..deployment import default_max_seqs

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
        # prompt tokens per decoding sequence per iteration: a sequence emits tps tokens an iteration,
        # so it finishes in osl / tps iterations and its successor's isl prompt tokens arrive in them
        self.prompt_per_seq = isl * self.tps / osl
        self._d = np.full(0, np.nan)  # decode iteration of each whole batch [s]; NaN: not computed
        self._req = np.full(0, np.nan)  # requests in flight at each whole batch [requests]

    @functools.cached_property
    def slot_cap(self) -> float:
        """:func:`_slot_cap` of the deployment at the mean context (memory only) [sequences]."""
        return _slot_cap(self.dep, self.ctx_mean)

    def _grow(self, top: int) -> None:
        if top >= self._d.size:
            n = max(top + 1, 2 * self._d.size)
            self._d = np.concatenate([self._d, np.full(n - self._d.size, np.nan)])
            self._req = np.concatenate([self._req, np.full(n - self._req.size, np.nan)])

    def decode_s(self, b: Any) -> np.ndarray:
        """:func:`_decode_iteration_s` at batches ``b`` (rounded, at least 1) [s]: the whole batches
        not yet computed in one call."""
        k = np.maximum(1, np.round(np.asarray(b, dtype=float))).astype(int)
        self._grow(int(np.max(k, initial=1)))
        new = np.unique(k[np.isnan(self._d[k])])
        if new.size:
            self._d[new] = _decode_iteration_s(self.dep, new, self.ctx_mean, self.t_eng, self.profile)
        return self._d[k]

    def state(self, b: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Iteration, TTFT in the engine and request rate per replica at batch ``b`` (arrays)."""
        b = np.asarray(b, dtype=float)
        n_ranks, isl, chunk = self.n_ranks, self.isl, self.chunk
        d = self.decode_s(b)
        if self.adp_parts is None:
            t_it = d + b * self.prompt_per_seq * self.t_pre_tok
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
                      prefill_s=self.n_chunks * (d + self.c_tok * self.t_pre_tok),
                      utilization_frac=rho, residual_s=0.5 * rho * isl / chunk * t_it,
                      recv_interval_iters=self.recv_interval_iters, gate_s=gate)
        return t_it, ttft, x

    def requests(self, b: Any) -> np.ndarray:
        """Requests in flight at batch ``b`` (Little's law: ``C = X (TTFT + osl t_it / tps) = B + X
        TTFT``) [requests] (array)."""
        b = np.asarray(b, dtype=float)
        _, ttft, x = self.state(b)
        return b + x * ttft

    def requests_at(self, k: Any) -> np.ndarray:
        """:meth:`requests` at whole batches ``k``, each computed once [requests]."""
        k = np.asarray(k, dtype=int)
        self._grow(int(np.max(k, initial=1)))
        new = np.unique(k[np.isnan(self._req[k])])
        if new.size:
            self._req[new] = self.requests(new)
        return self._req[k]

    def grid(self, b_max: float) -> np.ndarray:
        """Whole batches below ``b_max`` a solve weighs first: 1 to :data:`GRID_ALL`, then
        :data:`GRID_POINTS` geometric steps to the slots (the same for every concurrency)."""
        top = max(float(self.slot_cap), float(b_max), 1.0)
        g = np.arange(1, min(GRID_ALL, int(top)) + 1)
        if top > GRID_ALL:
            g = np.unique(np.concatenate([g, np.round(np.geomspace(GRID_ALL, top, GRID_POINTS)).astype(int)]))
        return g[g < b_max]

    def solve(self, concurrency: Any, b_max: Any) -> tuple[np.ndarray, np.ndarray]:
        """The closed loop's batch at each concurrency (:func:`_closed_loop_batch`), every
        concurrency at once: ``(batch, slot_bound)`` arrays.

        The requests in flight at whole batches bracket each root: first on :meth:`grid`, then on
        every whole batch inside the grid step that holds it (one vectorized decode call per
        level for all concurrencies); regula falsi then finds the root between two adjacent
        whole batches, where the decode iteration takes one of two known values.
        """
        cs = np.atleast_1d(np.asarray(concurrency, dtype=float))
        tops = np.broadcast_to(np.asarray(b_max, dtype=float), cs.shape)
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
                                          b_min=float(lo), f_min=f_lo)[0]
        return out_b, out_slot

    def result(self, concurrency: float, b_slots: float, phase: str = "serve") -> ServingResult:
        """:func:`serve` at one concurrency, ``b_slots`` sequences at most."""
        c = float(concurrency)
        (b,), (slot_bound,) = self.solve([c], [b_slots])
        return self._result(c, float(b), bool(slot_bound), phase)

    def _result(self, c: float, b: float, slot_bound: bool, phase: str = "serve") -> ServingResult:
        t_it, ttft, x = (float(a[0]) for a in self.state(np.asarray([b])))
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
        from ..catalog import data_dir

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
#: (SGLang ``Scheduler.get_next_batch_to_run``: "Run prefill first if possible", v0.5.x; mixing a
#: chunk into the decode batch is the opt-in ``--enable-mixed-chunk``). vLLM v1 schedules the
#: running requests first and fills the rest of the token budget with prompt chunks, and
#: TensorRT-LLM's in-flight batching mixes context and generation requests in one iteration:
#: both mix, so a fixed-length closed loop settles into the staggered steady state there.
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
        including the prefill queue and :func:`kv_transfer_s`; ``output_tok_per_s_per_gpu`` and
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
        runs; they queue for the instance's capacity (:func:`ttft_s`) as the rate nears it."""
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

    def state(b):
        """Decode iteration and request rate at ``b`` sequences per decode instance, and the TTFT."""
        b = np.asarray(b, dtype=float)
        t_it = _decode_iteration_s(decode_dep, b, float(round(ctx)), t_eng_d, profile)
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


# ---------------------------------------------------------------------------------------------
# published serving results: read, express as deployments, predict, score
# ---------------------------------------------------------------------------------------------

#: Columns a serving-cases CSV must have (the schema of ../shared/calibration/serving_public.csv).
CASE_COLUMNS = ("case_id", "phase", "hardware", "model", "weight_precision", "kv_precision", "engine",
                "n_gpus", "tp", "ep", "dp_attention", "disaggregated", "spec_decode", "isl_tok", "osl_tok",
                "concurrency", "measured_output_tok_per_s_per_gpu")

#: Optional columns read when present: ``context_tok`` and ``prefill_tok_per_gpu`` (decode-only /
#: prefill-only rows), ``n_prefill_gpus``/``n_decode_gpus``/``prefill_tp``/``prefill_ep``
#: (disaggregated rows), ``measured_tok_per_s_per_user``, ``n_requests`` (offline rows: requests
#: queued by the benchmark; more than run at once end in a drain, :func:`drain_s`), ``cache_hit_frac`` (prefill rows: share of the input tokens served
#: from a KV/prefix cache, counted in the measured input rate), ``overlap`` (``two-batch`` where the run used two-batch overlap;
#: empty = none), ``expert_balance`` (``eplb`` where the run balanced experts; empty = none),
#: ``a2a_impl`` (the expert all-to-all kernels where the run names them, e.g. ``deepep_rdma`` for
#: DeepEP low-latency; empty = the resolver's choice),
#: ``recv_interval_iters`` (iterations between the scheduler's polls for new requests where the
#: run set one: SGLang ``--scheduler-recv-interval`` or ``--num-continuous-decode-steps``; empty = 1),
#: ``adp_timeout_iters`` (TensorRT-LLM ``attention_dp_config`` with ``enable_balance``: its
#: ``timeout_iters``; empty = no balance gate), ``max_batch_size`` (the engine's batch cap per
#: attention-DP rank where the run set one: the Dynamo TensorRT-LLM generation workers'
#: ``gen_batch_size``; empty = memory only), ``mem_frac`` (the fraction of each GPU's memory the
#: engine may fill with weights and KV cache where the run set one: vLLM ``gpu_memory_utilization``,
#: SGLang ``--mem-fraction-static``; empty = the profile's 0.9), ``engine_version`` (the engine release the run's
#: image held, e.g. ``1.1.0rc2``: TensorRT-LLM releases older than the newest measured kernels
#: get their kernels' measured slowdown, :mod:`tokenomics.perf.kernel_versions`; empty = the
#: newest), ``fixed_lengths`` (1 where every request had exactly the stated ISL/OSL: a client with
#: zero length spread and ``ignore_eos``; on a prefill-first engine the run goes in waves,
#: :func:`wave_serve`; empty = 0), ``moe_tp`` (tensor-parallel ways inside each routed expert
#: where the run split experts both ways under attention data parallelism, TensorRT-LLM
#: ``moe_tp_size``: the group is ``ep * moe_tp`` GPUs; empty = what ``tp`` and ``ep`` imply),
#: ``prefill_dp_attention`` (a disaggregated row's prefill instances: 1 attention data-parallel over
#: their group, 0 tensor-parallel; empty = what ``prefill_tp`` / ``prefill_ep`` imply,
#: :func:`case_prefill_deployment`), ``mtp_acceptance`` (the run's measured per-token acceptance of
#: its draft tokens, a fraction, replacing the acceptance of ``spec_decode`` and keeping its depth;
#: empty = the method's own), ``note`` (``[0.8,1.0]`` marks random lengths). Any other column is
#: ignored (:func:`ignored_columns`).

#: KV-cache precision assumed when a published row does not say (vLLM/SGLang default ``auto`` =
#: the model's activation dtype, bf16).
DEFAULT_KV_PRECISION = "bf16"

#: InferenceX/InferenceMAX draw each request's lengths uniformly in [0.8, 1.0] x the nominal ISL/OSL
#: (README of ../shared/calibration): the mean is 0.9 x nominal.
RANDOM_LENGTH_MEAN_FRAC = 0.9


def mean_length_frac(note: Any) -> float:
    """Mean request length over the nominal ISL/OSL of a published row: :data:`RANDOM_LENGTH_MEAN_FRAC`
    where its ``note`` marks random lengths (``[0.8,1.0]``), else 1."""
    return RANDOM_LENGTH_MEAN_FRAC if "0.8,1.0" in str(note).replace(" ", "") else 1.0


def read_cases(path: Any) -> "pd.DataFrame":  # noqa: F821
    """Read a serving-cases CSV (or check a DataFrame) in the schema of ``datasets/serving_public.csv``;
    any refused row is an error (:func:`check_cases` keeps the good rows instead).

    Every way the file can be wrong is one line naming the case and the column
    (:func:`tokenomics.io.read_csv` for the file and its columns, :func:`check_cases` for the
    rows): the required columns (:data:`CASE_COLUMNS`) are present and there is at least one
    row; ``phase`` is one of :data:`PHASES`; the numbers are in range (:data:`CASE_CELLS`);
    hardware, model, engine, precisions and the other words are known; a disaggregated serve row
    gives its split; ``engine_version`` is a known release.

    Parameters
    ----------
    path : path or DataFrame
        The CSV file or its rows.

    Returns
    -------
    pandas.DataFrame
        A checked copy (text-typed numeric columns as numbers).

    Raises
    ------
    DataError
        One line naming the case, the column, the value and what was expected (the first refused
        row).
    """
    from ..errors import DataError

    df, refused = check_cases(path)
    if len(refused):
        r = refused.iloc[0]
        raise DataError(f"serving case {r['case_id']}: {r['reason']} ({r['where']})")
    return df


@dataclass(frozen=True)
class CellRule:
    """One numeric column of the serving-cases schema (:data:`CASE_CELLS`).

    Attributes
    ----------
    expected : str
        What a refusal says is expected.
    minimum, maximum : float, optional
        The range (inclusive unless ``strict_minimum`` / ``strict_maximum``).
    integer : bool
        Whole numbers only.
    required : bool
        An empty cell is refused (else it means "not given").
    fraction : bool
        A fraction: a value that reads as a percent gets "did you mean VALUE / 100?".
    """

    expected: str
    minimum: float | None = None
    maximum: float | None = None
    strict_minimum: bool = False
    strict_maximum: bool = False
    integer: bool = False
    required: bool = False
    fraction: bool = False


#: Sanity bounds of the schema (not physics: a cell beyond one is a typo or a unit slip, refused
#: rather than priced). 100,000 GPUs: more than any published serving deployment by far;
#: 10 M tokens: the longest context window published (Llama 4 Scout); 1e7 tokens/s per GPU:
#: ~200x the fastest published row (57,000); 1e6 requests in flight or sequences in a batch;
#: 1e5 s (a day) for a TTFT or TPOT.
MAX_GPUS, MAX_TOKENS, MAX_TOK_PER_S, MAX_REQUESTS, MAX_SECONDS = 100_000, 10_000_000, 1e7, 1_000_000, 1e5

#: Columns a disaggregated ``serve`` row needs: its prefill/decode split.
SPLIT_COLUMNS = ("n_prefill_gpus", "n_decode_gpus")

#: Measured figures a serving row may give: empty where not measured, else positive and finite.
MEASURED_COLUMNS = ("measured_output_tok_per_s_per_gpu", "measured_total_tok_per_s_per_gpu",
                    "measured_tok_per_s_per_user", "measured_ttft_s", "measured_tpot_s")

_GPU_COUNT = CellRule(f"a whole number >= 1 (at most {MAX_GPUS:,})", 1, MAX_GPUS, integer=True, required=True)
_GPU_SPLIT = CellRule(f"a whole number >= 1 (at most {MAX_GPUS:,}), or empty", 1, MAX_GPUS, integer=True)
_FLAG = CellRule("0 or 1 (empty = 0)", 0, 1, integer=True)
_MEASURED_RATE = CellRule(f"a positive number up to {MAX_TOK_PER_S:g} tokens/s, or empty where not measured",
                          0, MAX_TOK_PER_S, strict_minimum=True)
_MEASURED_TIME = CellRule(f"a positive number of seconds up to {MAX_SECONDS:g}, or empty where not measured",
                          0, MAX_SECONDS, strict_minimum=True)
_TOKENS = CellRule(f"a positive number of tokens up to {MAX_TOKENS:,}, or empty", 0, MAX_TOKENS, strict_minimum=True)

#: The numeric cells of a serving-cases file, declared once: column -> :class:`CellRule`. A row
#: with a cell outside its rule is refused (:func:`check_cases`); a column the file lacks is not
#: checked. ``concurrency`` may be a mean (MLPerf Server rows: requests in flight by Little's
#: law), so it need not be whole, but at least one request is in flight.
CASE_CELLS: dict[str, CellRule] = {
    "n_gpus": _GPU_COUNT, "tp": _GPU_COUNT, "ep": _GPU_COUNT,
    **{c: _GPU_SPLIT for c in SPLIT_COLUMNS + ("prefill_tp", "prefill_ep")},
    **{c: _FLAG for c in ("dp_attention", "disaggregated", "fixed_lengths", "prefill_dp_attention")},
    "isl_tok": _TOKENS, "osl_tok": _TOKENS, "context_tok": _TOKENS,
    "prefill_tok_per_gpu": CellRule(f"a positive number of prompt tokens per GPU up to {MAX_TOKENS:,}, or empty",
                                    0, MAX_TOKENS, strict_minimum=True),
    "concurrency": CellRule(f"requests in flight, a number from 1 to {MAX_REQUESTS:,}, or empty",
                            1, MAX_REQUESTS),
    "n_requests": CellRule("a whole number of requests >= 1, or empty", 1, 1e9, integer=True),
    "max_batch_size": CellRule(f"a whole number of sequences from 1 to {MAX_REQUESTS:,}, or empty",
                               1, MAX_REQUESTS, integer=True),
    "recv_interval_iters": CellRule(f"a positive number of iterations up to {MAX_REQUESTS:,}, or empty",
                                    0, MAX_REQUESTS, strict_minimum=True),
    "adp_timeout_iters": CellRule(f"a positive number of iterations up to {MAX_REQUESTS:,}, or empty",
                                  0, MAX_REQUESTS, strict_minimum=True),
    "moe_tp": CellRule(f"a positive number of GPUs up to {MAX_GPUS:,}, or empty", 0, MAX_GPUS, strict_minimum=True),
    "mem_frac": CellRule("a fraction in (0, 1], or empty", 0, 1, strict_minimum=True, fraction=True),
    "cache_hit_frac": CellRule("a fraction in [0, 1), or empty", 0, 1, strict_maximum=True, fraction=True),
    "mtp_acceptance": CellRule("the per-token acceptance of the draft tokens, a fraction in [0, 1], or empty",
                               0, 1, fraction=True),
    **{c: _MEASURED_RATE for c in MEASURED_COLUMNS if c.startswith("measured_") and "tok_per_s" in c},
    **{c: _MEASURED_TIME for c in ("measured_ttft_s", "measured_tpot_s")},
}

#: Columns read when present besides :data:`CASE_COLUMNS` (module comment above
#: :data:`DEFAULT_KV_PRECISION`), and the ones only carried along (``source``, ``as_of``, ``note``).
OPTIONAL_COLUMNS = ("n_prefill_gpus", "n_decode_gpus", "prefill_tp", "prefill_ep", "prefill_dp_attention",
                    "context_tok", "prefill_tok_per_gpu", "n_requests", "max_batch_size", "recv_interval_iters",
                    "adp_timeout_iters", "mem_frac", "cache_hit_frac", "mtp_acceptance", "moe_tp", "fixed_lengths",
                    "overlap", "expert_balance", "a2a_impl", "engine_version", "measured_total_tok_per_s_per_gpu",
                    "measured_tok_per_s_per_user", "measured_ttft_s", "measured_tpot_s", "source", "as_of", "note")

#: Columns of :func:`check_cases`'s refusals: where (``line`` of the file, 1 = header; ``where``
#: the same in words), which case, which column (empty where the row as a whole), and why.
REFUSED_COLUMNS = ("line", "case_id", "column", "reason", "where")


def ignored_columns(df: "pd.DataFrame") -> list[str]:  # noqa: F821
    """Columns of a serving-cases table the schema does not know (ignored when scoring)."""
    known = set(CASE_COLUMNS) | set(OPTIONAL_COLUMNS)
    return [str(c) for c in df.columns if str(c) not in known]


def ignored_columns_note(columns: list[str]) -> str:
    """One line naming the ignored columns, each with the schema's closest column where one is
    close (a misspelt optional column would otherwise be silently left out).

    >>> ignored_columns_note(["rig", "overlapp"])
    "ignored 2 columns outside the serving-cases schema: rig, overlapp (did you mean 'overlap'?)"
    """
    import difflib

    known = list(CASE_COLUMNS) + list(OPTIONAL_COLUMNS)
    named = []
    for c in columns:
        close = difflib.get_close_matches(c.strip().lower(), known, n=1, cutoff=0.8)
        named.append(f"{c} (did you mean {close[0]!r}?)" if close else c)
    return (f"ignored {len(columns)} column{'s' if len(columns) != 1 else ''} outside the serving-cases schema: "
            f"{', '.join(named)}")


def _percent_reason(col: str, x: float) -> str | None:
    """The refusal of a fraction cell that reads as a percent, else None."""
    hint = v.percent_hint(x)
    return f"{col}: fraction expected, got {x:g} — did you mean {x / 100:g}?" if hint else None


def _acceptance_length_reason(row: Any, x: float) -> str | None:
    """The refusal of an ``mtp_acceptance`` above 1 that reads as an acceptance length (tokens per
    verify step, 1 to draft tokens + 1, as SGLang reports it), with the per-token acceptance it
    stands for (:func:`tokenomics.perf.speculative.alpha_for_acceptance_length`); else None."""
    from ..deployment import _spec
    from ..errors import TokenomicsError
    from .speculative import alpha_for_acceptance_length

    try:
        spec = _spec(str(row.get("spec_decode", "") or ""))
    except TokenomicsError:
        return None
    if spec is None or not (math.isfinite(x) and 1 < x <= spec.gamma + 1):
        return None
    alpha = alpha_for_acceptance_length(x, spec.gamma)
    return (f"mtp_acceptance: the per-token acceptance (a fraction) expected, got {x:g}; an acceptance length "
            f"of {x:g} tokens per step with {spec.gamma} draft token{'s' if spec.gamma > 1 else ''} is a "
            f"per-token acceptance of {alpha:.3g}")


def _cell_problems(df: "pd.DataFrame") -> "dict[int, tuple[str, str]]":  # noqa: F821
    """Check the numeric cells of serving rows (:data:`CASE_CELLS`) in place (a column read as
    text is stored back as numbers); the first bad cell of each row: position -> (column, reason)."""
    import pandas as pd

    from ..io import numeric_cell_problems

    out: dict[int, tuple[str, str]] = {}
    for col, rule in CASE_CELLS.items():
        if col not in df.columns:
            continue
        vals, probs = numeric_cell_problems(df, col, minimum=rule.minimum, maximum=rule.maximum,
                                            strict_minimum=rule.strict_minimum, integer=rule.integer,
                                            required=rule.required)
        if rule.strict_maximum and rule.maximum is not None:
            at = (vals >= rule.maximum) & (probs == "")
            probs[at] = [f"{col} must be < {rule.maximum:g}, got {x!r}" for x in df[col][at]]
        for i in (probs != "").to_numpy().nonzero()[0]:
            if int(i) in out:
                continue
            x = float(vals.iloc[i])
            reason = (_acceptance_length_reason(df.iloc[i], x) if col == "mtp_acceptance" else None) \
                or (_percent_reason(col, x) if rule.fraction and math.isfinite(x) else None) \
                or f"{probs.iloc[i]}; expected {rule.expected}"
            out[int(i)] = (col, reason)
        if not pd.api.types.is_numeric_dtype(df[col]):
            df[col] = vals
    return out


def check_cells(df: "pd.DataFrame", label: str = "serving cases") -> "pd.DataFrame":  # noqa: F821
    """Check the numeric cells of serving rows (:data:`CASE_CELLS`) in place; return ``df``.

    Parameters
    ----------
    df : DataFrame
        Serving rows (file row ``i`` on line ``i + 2``).
    label : str
        How messages name the table (``"serving cases file 'x.csv'"``).

    Returns
    -------
    pandas.DataFrame
        ``df`` (a column read as text stored back as numbers).

    Raises
    ------
    DataError
        ``serving case ID: COLUMN is not a number, got 'abc'; expected ... (LABEL row N, line M)``
        for the first bad row.
    """
    from ..errors import DataError

    bad = _cell_problems(df)
    if bad:
        i = min(bad)
        where = f"{label} row {i + 1}, line {i + 2}"
        if "case_id" not in df.columns:
            raise DataError(f"{where}: {bad[i][1]}")
        raise DataError(f"serving case {df['case_id'].iloc[i]}: {bad[i][1]} ({where})")
    return df


@functools.lru_cache(maxsize=1)
def known_releases() -> dict[str, tuple[str, ...]]:
    """Engine releases the library knows, by engine (aliases as their engine: ``dynamo-trt`` ->
    ``trt``), oldest first: those of ``datasets/engine_kernel_versions.csv`` and those the bundled
    serving sets' published runs name (each row cites its run)."""
    from ..catalog import REGISTRY, load
    from ..deployment import ENGINE_ALIASES
    from .kernel_versions import version_key

    seen: dict[str, set[str]] = {}
    frames = [load(n)[["engine", "engine_version"]] for n in REGISTRY if n.startswith("serving_")]
    kt = load("engine_kernel_versions")
    frames += [kt[["engine", c]].rename(columns={c: "engine_version"}) for c in ("engine_version", "reference_version")]
    for f in frames:
        f = f.dropna()
        for eng, ver in zip(f["engine"].astype(str), f["engine_version"].astype(str)):
            ver = ver.strip()
            if ver and ver.lower() != "nan":
                seen.setdefault(ENGINE_ALIASES.get(eng.strip().lower(), eng.strip().lower()), set()).add(ver)
    out = {}
    for eng, vers in seen.items():
        ok = []
        for x in vers:
            try:
                version_key(x)
                ok.append(x)
            except ValidationError:
                continue
        out[eng] = tuple(sorted(ok, key=version_key))
    return out


def release_problem(engine: str, version: str) -> str | None:
    """Why a row's ``engine_version`` cannot be used, or None: not a release number, or newer
    than every release the library knows of its engine (:func:`known_releases`, listed). A
    release older than the newest known one is taken (its kernels as the oldest table at or
    above it, :mod:`tokenomics.perf.kernel_versions`); an engine with no known releases takes
    any release number."""
    from ..deployment import ENGINE_ALIASES
    from .kernel_versions import version_key

    try:
        key = version_key(version)
    except ValidationError as exc:
        return str(exc)
    eng = ENGINE_ALIASES.get(str(engine).strip().lower(), str(engine).strip().lower())
    known = known_releases().get(eng, ())
    if known and key > version_key(known[-1]):
        return (f"engine_version {version!r} is newer than every {eng} release tokenomics knows (newest "
                f"{known[-1]}); known: {', '.join(known)}; leave it empty for the newest measured kernels")
    return None


def _name_problems(df: "pd.DataFrame") -> "dict[int, tuple[str, str]]":  # noqa: F821
    """Every row's hardware, model, engine, precisions and the optional words are ones the library
    knows (the catalog's own lookups, aliases included; a close-match hint otherwise): position ->
    (column, reason) of the first unknown name of each row."""
    from ..catalog import accelerator, model
    from ..deployment import COLLECTIVES, ENGINE_ALIASES, ENGINES, UNFITTED_ENGINES, _spec
    from ..errors import TokenomicsError, unknown_name
    from ..specs import PRECISION_BYTES
    from .system import EXPERT_BALANCING, OVERLAP_MODES

    engines = set(ENGINES) | set(ENGINE_ALIASES) | set(UNFITTED_ENGINES)

    def hardware(name: str) -> None:
        try:
            accelerator(name)
        except TokenomicsError as exc:
            from .parallel import system

            try:  # a system named where its chip belongs
                chip = system(name).accelerator.name
            except TokenomicsError:
                raise exc from None
            raise ValidationError(f"hardware {name!r} is a system; the hardware column names its chip: "
                                  f"{chip!r} (n_gpus, tp and ep give the layout)") from None

    def engine(name: str) -> None:
        if name not in engines:
            raise unknown_name("engine", name, engines)

    def precision(kind: str, empty_ok: bool):
        def check(name: str) -> None:
            if not (name.lower() in PRECISION_BYTES or empty_ok and name.lower() in ("", "nan", "none")):
                raise unknown_name(kind, name, PRECISION_BYTES)
        return check

    def word(kind: str, words: tuple[str, ...], empty_ok: bool = True):
        def check(name: str) -> None:
            if name.strip().lower() not in words + (("", "nan") if empty_ok else ()):
                raise unknown_name(kind, "" if name == "nan" else name, words)
        return check

    def spec(name: str) -> None:
        _spec(name)

    lookups = {"phase": word("phase", PHASES, empty_ok=False), "hardware": hardware, "model": model, "engine": engine,
               "weight_precision": precision("weight precision", False),
               "kv_precision": precision("KV precision", True), "spec_decode": spec,
               "overlap": word("overlap", OVERLAP_MODES), "expert_balance": word("expert balance", EXPERT_BALANCING),
               "a2a_impl": word("all-to-all implementation", COLLECTIVES)}
    out: dict[int, tuple[str, str]] = {}
    for col, lookup in lookups.items():
        if col not in df.columns:
            continue
        names = df[col].astype(str).fillna("nan")  # pandas >= 3 keeps an empty cell NaN through astype(str)
        for name in names.unique():
            if col == "spec_decode" and name.strip().lower() in ("", "nan"):
                continue
            try:
                lookup(name)
            except TokenomicsError as exc:
                for i in (names == name).to_numpy().nonzero()[0]:
                    out.setdefault(int(i), (col, str(exc)))
    return out


def _row_problem(row: Any) -> tuple[str, str] | None:
    """What makes one row unusable beyond its cells and names: ``(column, reason)`` or None (a
    disaggregated serve row without its split, a release tokenomics does not know, settings that
    contradict the row)."""
    if _is_disaggregated_serve(row):
        missing = [c for c in SPLIT_COLUMNS if not _num(row.get(c)) > 0]
        if missing:
            return missing[0], f"a disaggregated serve row needs its prefill/decode split; missing {', '.join(missing)}"
    elif math.isfinite(_num(row.get("prefill_dp_attention"))):
        return ("prefill_dp_attention", "prefill_dp_attention sets the prefill instances of a disaggregated serve "
                "row (disaggregated 1); this row is not one (dp_attention sets its layout)")
    version = _cell(row, "engine_version")
    if version:
        why = release_problem(str(row["engine"]), version)
        if why:
            return "engine_version", why
    acc = _num(row.get("mtp_acceptance"))
    spec = str(row.get("spec_decode", "none") or "none").strip().lower()
    if math.isfinite(acc) and spec in ("none", "nan", "", "off"):
        return ("mtp_acceptance", f"mtp_acceptance {acc:g} needs speculative decoding, but spec_decode is "
                f"{row.get('spec_decode')!r}; give spec_decode (e.g. mtp) or leave mtp_acceptance empty")
    return None


#: Cell texts pandas reads as a missing value; in a numeric cell of a file they are refused, not
#: taken as "not given" (an empty cell says that).
NA_WORDS = frozenset({"nan", "-nan", "na", "n/a", "#n/a", "null", "none", "<na>", "#na", "nat"})


def _na_word_problems(path: Any, df: "pd.DataFrame") -> "dict[int, tuple[str, str]]":  # noqa: F821
    """Numeric cells of a serving-cases file (:data:`CASE_CELLS`) that spell a missing value
    (``NaN``, ``NA``, ``null``, ...: :data:`NA_WORDS`) where an empty cell would mean "not given":
    position -> (column, reason). A DataFrame's NaN is an empty cell (nothing to tell apart)."""
    import io as _io
    import os

    import pandas as pd

    if isinstance(path, pd.DataFrame) or not os.path.isfile(path):
        return {}
    from ..io import read_text

    raw = pd.read_csv(_io.StringIO(read_text(path, "serving cases file")), dtype=str, keep_default_na=False,
                      na_filter=False)
    out: dict[int, tuple[str, str]] = {}
    if len(raw) != len(df):  # pragma: no cover - the same text, read twice
        return out
    for col, rule in CASE_CELLS.items():
        if col not in raw.columns:
            continue
        words = raw[col].astype(str).str.strip()
        for i in words.str.lower().isin(NA_WORDS).to_numpy().nonzero()[0]:
            out.setdefault(int(i), (col, f"{col} is {words.iloc[i]!r}, not a number; expected {rule.expected} "
                                         f"(an empty cell where not given)"))
    return out


def check_cases(path: Any) -> "tuple[pd.DataFrame, pd.DataFrame]":  # noqa: F821
    """Read a serving-cases CSV (or check a DataFrame) row by row: the rows, and the ones refused.

    A file that cannot be read as a table at all (missing, not a CSV, without the required
    columns :data:`CASE_COLUMNS`, without rows) is one :class:`~tokenomics.errors.DataError`;
    anything else wrong refuses its row only: a phase not in :data:`PHASES`, a ``case_id`` used
    twice (every row that uses it), a cell outside :data:`CASE_CELLS`, an unknown hardware,
    model, engine, precision, speculative-decoding, overlap, expert-balance or all-to-all word (the
    closest known ones suggested), an unknown ``engine_version`` (:func:`release_problem`), a
    disaggregated serve row without its split. Columns outside the schema are ignored
    (:func:`ignored_columns`).

    Parameters
    ----------
    path : path or DataFrame
        The CSV file or its rows.

    Returns
    -------
    tuple of pandas.DataFrame
        Every row (text-typed numeric columns as numbers; a bad cell NaN), and one row per
        refused row (:data:`REFUSED_COLUMNS`), indexed by the row's position, in file order.

    Raises
    ------
    DataError
        The file as a whole cannot be read.
    """
    import pandas as pd

    from ..io import read_csv

    what = "serving cases" if isinstance(path, pd.DataFrame) else "serving cases file"
    df = read_csv(path, what, required=CASE_COLUMNS).reset_index(drop=True)
    label = what if isinstance(path, pd.DataFrame) else f"{what} {str(path)!r}"
    problems: dict[int, tuple[str, str]] = {}
    ids = df["case_id"].astype(str)
    dup = ids.duplicated(keep=False).to_numpy()
    for i in dup.nonzero()[0]:
        lines = [int(j) + 2 for j in (ids == ids.iloc[i]).to_numpy().nonzero()[0][:3]]
        problems[int(i)] = ("case_id", f"case_id {ids.iloc[i]!r} appears more than once (lines "
                                       f"{', '.join(map(str, lines))}); every case needs its own id")
    for found in (_name_problems(df), _na_word_problems(path, df), _cell_problems(df)):
        for i, p in found.items():
            problems.setdefault(i, p)
    for i, row in df.iterrows():
        if int(i) not in problems:
            p = _row_problem(row)
            if p is not None:
                problems[int(i)] = p
    rows = [{"line": i + 2, "case_id": ids.iloc[i], "column": col, "reason": reason,
             "where": f"{label} row {i + 1}, line {i + 2}"} for i, (col, reason) in sorted(problems.items())]
    refused = pd.DataFrame(rows, columns=list(REFUSED_COLUMNS), index=sorted(problems))
    return df, refused


def _is_disaggregated_serve(row: Any) -> bool:
    return str(row.get("phase")) == "serve" and _num(row.get("disaggregated", 0)) == 1


def check_split(row: Any) -> None:
    """A disaggregated ``serve`` row must give its prefill/decode split (:data:`SPLIT_COLUMNS`).

    Raises
    ------
    ValidationError
        One line naming the case and the missing columns.
    """
    if not _is_disaggregated_serve(row):
        return
    missing = [c for c in SPLIT_COLUMNS if not _num(row.get(c)) > 0]
    if missing:
        raise ValidationError(f"serving case {row['case_id']}: a disaggregated serve row needs its prefill/decode "
                              f"split; missing {', '.join(missing)}")


def _num(x: Any) -> float:
    try:
        f = float(x)
    except (TypeError, ValueError):
        return float("nan")
    return f


def case_deployment(row: Any):
    """The :class:`~tokenomics.deployment.Deployment` a published serving row describes.

    ``dp_attention`` 1: attention data-parallel over the EP group (tp 1 inside); ``ep`` 1 with
    ``tp`` > 1 on an MoE model: TP-sharded experts; an optional ``moe_tp`` splits each expert that
    many ways besides (the group is ``ep * moe_tp`` GPUs). ``fp4`` is NVFP4 on NVIDIA and MXFP4 on AMD;
    for an MoE model the row's weight precision is the experts' (attention keeps the model's own).
    """
    from ..catalog import accelerator, model as _model
    from ..deployment import resolve

    hw = accelerator(str(row["hardware"]))
    m = _model(str(row["model"]))
    prec = str(row["weight_precision"]).lower()
    if prec == "fp4":
        prec = "mxfp4" if hw.vendor.upper() == "AMD" else "nvfp4"
    tp, ep = int(_num(row["tp"]) or 1), int(_num(row["ep"]) or 1)
    dpa = _num(row.get("dp_attention", 0)) == 1
    moe_tp = _num(row.get("moe_tp"))
    if math.isfinite(moe_tp) and moe_tp != int(moe_tp):
        raise ValidationError(f"serving case {row.get('case_id')}: moe_tp={moe_tp:g} must be a whole number of GPUs")
    moe_tp = int(moe_tp) if m.is_moe and math.isfinite(moe_tp) and moe_tp >= 1 else None
    if dpa:
        tp, ep = 1, (ep if moe_tp else max(tp, ep))
    if not m.is_moe:
        ep = 1
    kw = _row_precisions(m, prec)
    spec = str(row.get("spec_decode", "none") or "none").lower()
    spec = None if spec in ("none", "nan") else spec
    acc = _num(row.get("mtp_acceptance"))
    if spec is not None and math.isfinite(acc):  # the run's measured acceptance, its own draft depth
        from ..deployment import _spec

        spec = _spec(spec).replace(alpha=acc)  # a single rate: drops any by-position acceptance
    kv = str(row["kv_precision"]).lower()
    kv = DEFAULT_KV_PRECISION if kv in ("", "nan", "none") else kv  # not published: the engines' default
    engine = priced_engine(row["engine"])
    # optional cells; empty = the engines' defaults (collectives wait, no EPLB even at wide EP,
    # where the resolver would pick it for a production deployment: a benchmark states what it
    # ran; the resolver's all-to-all: NCCL or one-shot by message size), except where the named
    # engine overlaps or balances by default (datasets/engine_defaults.csv: DeepSeek's own stack)
    from .engine_defaults import engine_default

    dflt = {k: (engine_default(row["engine"], k, m.is_moe, ep) or ("none", ""))[0] for k in ("overlap", "expert_balance")}
    return resolve(m, hardware=hw, tp=tp, ep=ep, execution="engine", engine=engine,
                   kv_precision=kv, spec=spec,
                   overlap=_cell(row, "overlap") or dflt["overlap"],
                   expert_balance=_cell(row, "expert_balance") or dflt["expert_balance"],
                   a2a_impl=_cell(row, "a2a_impl"), engine_version=_cell(row, "engine_version"),
                   mem_frac=_frac_cell(row, "mem_frac"), moe_tp=moe_tp, **kw)


def _row_precisions(m: Any, prec: str) -> dict[str, str]:
    """The weight storage a published row's precision stands for (``Deployment`` keywords).

    A dense model's checkpoint is stored in it throughout. A wider-than-8-bit MoE checkpoint
    quantized to an 8-bit format (Qwen3-235B-A22B-FP8, ModelOpt's FP8 Llama 4) quantizes every
    linear layer but the output head and router; one quantized to a 4-bit format (NVIDIA's NVFP4
    DeepSeek-R1, gpt-oss's MXFP4), or an 8-bit one already stored in 8 bits, quantizes the routed
    experts and keeps the rest as the checkpoint had it. A model that states its non-expert
    precision (``models.csv`` ``dense_precision``: gpt-oss, Kimi K3) keeps it.
    """
    whole = not m.is_moe or (not m.dense_precision and precision_bytes(prec) == 1
                             and precision_bytes(m.native_precision) > 1)
    return {"weight_precision": prec} if whole else {"expert_precision": prec}


def priced_engine(name: Any) -> str:
    """The engine whose parameters price a published row's engine name: the name itself for one
    of :data:`tokenomics.deployment.ENGINES`, the engine an alias names (``dynamo-trt`` -> ``trt``,
    :data:`~tokenomics.deployment.ENGINE_ALIASES`), else ``default`` (an engine never fitted, such
    as ``atom``: the fitted default of the chip's vendor).

    >>> priced_engine("dynamo-sglang"), priced_engine("atom"), priced_engine("vllm")
    ('sglang', 'default', 'vllm')
    """
    from ..deployment import ENGINE_ALIASES, ENGINES

    engine = ENGINE_ALIASES.get(str(name).strip().lower(), str(name).strip().lower())
    return engine if engine in ENGINES else "default"


def _frac_cell(row: Any, name: str) -> float | None:
    """An optional fraction cell of a serving row; ``None`` when absent or empty."""
    x = _num(row.get(name))
    return x if x > 0 else None


def _cell(row: Any, name: str) -> str | None:
    """An optional text cell of a serving row, lower-cased; ``None`` when absent or empty."""
    text = str(row.get(name, "") or "").strip().lower()
    return None if text in ("", "nan") else text


def case_prefill_deployment(row: Any):
    """The prefill instance of a disaggregated row: ``prefill_tp`` / ``prefill_ep`` (``prefill_tp``
    1 or empty with ``prefill_ep`` > 1: attention data-parallel, as :func:`case_deployment` reads
    ``dp_attention``); with neither given, the decode instance's layout. ``prefill_dp_attention``,
    where the row gives it, says how the prefill instances run attention over that group, as
    ``dp_attention`` does for the decode instances: 1 data-parallel (tp 1 inside the group), 0
    tensor-parallel over the whole group."""
    t, e = _num(row.get("prefill_tp")), _num(row.get("prefill_ep"))
    dpa = _num(row.get("prefill_dp_attention"))
    if not (t > 0 or e > 0 or math.isfinite(dpa)):
        return case_deployment(row)
    r = dict(row)
    if t > 0 or e > 0:
        t, e = (int(t) if t > 0 else 1), (int(e) if e > 0 else 1)
    else:
        t, e = int(_num(row["tp"]) or 1), int(_num(row["ep"]) or 1)
    if not math.isfinite(dpa):
        r.update(tp=t, ep=e, dp_attention=0)
    elif dpa == 1:
        r.update(tp=t, ep=e, dp_attention=1)
    else:
        r.update(tp=max(t, e), ep=e, dp_attention=0)
    return case_deployment(r)


#: What :func:`predict_case` returns for a row (:func:`predict_cases` keeps every one as a column).
PREDICTED_COLUMNS = ("predicted_output_tok_per_s_per_gpu", "predicted_output_tok_per_s_per_deployment_gpu",
                     "predicted_total_tok_per_s_per_gpu", "predicted_tok_per_s_per_user", "predicted_tpot_s",
                     "predicted_ttft_s", "predicted_batch", "deployment")


def _require_one_sequence(row: Any, dep: Any, context_tok: float) -> None:
    """A row whose layout cannot hold its weights and one sequence of ``context_tok`` tokens even
    in all of each chip's memory is an error naming the case
    (:class:`~tokenomics.errors.DoesNotFitError`), not a prediction. (All of it: a published run
    that ran may have given its engine more than the default share, ``mem_frac``.)"""
    from ..errors import DoesNotFitError
    from .parallel import check_fit

    try:
        check_fit(dep.model, dep.system, dep.parallel, 1, max(1, int(round(context_tok))),
                  dep.weight_precision, dep.kv_precision, dep.expert_precision, mem_frac=1.0)
    except DoesNotFitError as exc:
        raise DoesNotFitError(f"serving case {row['case_id']}: {exc}") from None


def predict_case(row: Any, profile: Any = None, engines: Any = None) -> dict[str, float]:
    """Predicted serving figures of one published row (see :func:`serve`, :func:`serve_disaggregated`).

    ``predicted_output_tok_per_s_per_gpu`` uses the denominator of the published figure: for a
    disaggregated ``serve`` row the decode GPUs (InferenceMAX divides output throughput by the
    decode GPUs, input throughput by the prefill GPUs and total throughput by all GPUs);
    ``predicted_output_tok_per_s_per_deployment_gpu`` divides by every GPU of the deployment
    (what a GPU-hour buys), and ``predicted_total_tok_per_s_per_gpu`` too. ``assumption`` says
    what the row left open and the prediction assumed (``""`` where nothing): a decode row with
    neither its concurrency nor its tokens/s per user runs at the KV-full batch (as many
    sequences as its KV cache holds, :func:`_slot_cap`), the schema's "as many as fit".

    Raises
    ------
    TokenomicsError
        The row cannot be predicted (one line naming the case; ``column`` attribute where one
        column is at fault).
    """
    dep = case_deployment(row)
    frac = mean_length_frac(row.get("note", ""))
    isl, osl = _num(row["isl_tok"]) * frac, _num(row["osl_tok"]) * frac
    phase = str(row["phase"])
    no_lengths = not (isl > 0 and osl > 0)  # a decode row's total tokens/s needs both
    if phase in ("decode", "prefill"):
        # a phase-only row needs no output length; without a prompt length (production rows):
        # decode at the published mean KV length, prefill of chunk-sized prompts (only the
        # prompt-token throughput is compared)
        if not isl > 0:
            ctx = _num(row.get("context_tok"))
            isl = ctx if ctx > 0 else float(dep.prefill_chunk_tok)
        if not osl > 0:
            osl = 1.0
    n_gpus = _num(row["n_gpus"]) or dep.replica_chips
    conc = _num(row["concurrency"])
    if no_lengths and phase in ("serve", "offline"):
        empty = [c for c in ("isl_tok", "osl_tok") if not _num(row[c]) > 0]
        raise _refusal(row, empty[0], f"a {phase} row needs its prompt and output lengths; "
                                      f"{' and '.join(empty)} empty (expected positive numbers of tokens)")
    if phase == "serve" and not conc > 0:
        got = "an empty cell" if math.isnan(conc) else repr(row["concurrency"])
        raise _refusal(row, "concurrency", f"a serve row needs its concurrency (requests in flight), a positive "
                                           f"number; got {got}")
    check_split(row)
    ctx = _num(row.get("context_tok")) if phase == "decode" else float("nan")
    _require_one_sequence(row, dep, isl if phase == "prefill" else (ctx if ctx > 0 else isl + osl))
    if _is_disaggregated_serve(row):
        _require_one_sequence(row, case_prefill_deployment(row), isl)
    if not _is_disaggregated_serve(row) and n_gpus < dep.replica_chips:
        raise _refusal(row, "n_gpus", f"n_gpus {n_gpus:g} is fewer than the {dep.replica_chips} chips its layout "
                                      f"spans ({dep.label()}); expected n_gpus >= tp x pp (or ep)")
    if not _is_disaggregated_serve(row) and n_gpus % dep.replica_chips:
        raise _refusal(row, "n_gpus", f"n_gpus {n_gpus:g} is not a whole number of instances of its "
                                      f"{dep.replica_chips}-GPU layout (tp {dep.parallel.tp}, ep {dep.parallel.ep}); "
                                      f"expected a multiple of {dep.replica_chips}")
    replicas = max(1.0, n_gpus / dep.replica_chips)
    per_all = None  # output tokens/s per GPU of the whole deployment, where it differs
    assumption = ""
    max_batch = _num(row.get("max_batch_size"))
    max_batch = max_batch if max_batch > 0 else None
    if _is_disaggregated_serve(row):
        n_pre, n_dec = _num(row["n_prefill_gpus"]), _num(row["n_decode_gpus"])
        r = serve_disaggregated(case_prefill_deployment(row), dep, n_prefill_gpus=n_pre, n_decode_gpus=n_dec,
                                isl_tok=isl, osl_tok=osl, concurrency=conc, profile=profile, engines=engines,
                                max_batch_per_rank=max_batch)
        # the published per-GPU output of a disaggregated run counts decode GPUs (InferenceMAX)
        per_all = r.output_tok_per_s_per_gpu
        r = dataclasses.replace(r, output_tok_per_s_per_gpu=r.output_tok_per_s_per_decode_gpu)
    elif phase == "serve":
        recv, adp = _num(row.get("recv_interval_iters")), _num(row.get("adp_timeout_iters"))
        r = serve(dep, isl_tok=isl, osl_tok=osl, concurrency=conc / replicas, profile=profile, engines=engines,
                  recv_interval_iters=recv if recv > 0 else 1.0, adp_timeout_iters=adp if adp > 0 else None,
                  max_batch_per_rank=max_batch, fixed_lengths=_num(row.get("fixed_lengths", 0)) == 1)
    elif phase == "offline":
        n_req = _num(row.get("n_requests"))
        r = serve(dep, isl_tok=isl, osl_tok=osl, phase="offline", profile=profile, engines=engines,
                  n_requests=n_req / replicas if math.isfinite(n_req) else None, max_batch_per_rank=max_batch)
    elif phase == "decode":
        user = _num(row.get("measured_tok_per_s_per_user"))
        if math.isfinite(conc):
            b = conc / max(1.0, (_num(row.get("n_decode_gpus")) or n_gpus) / dep.replica_chips)
        elif math.isfinite(user):  # the batch that gives each user the measured speed
            b = dep.batch_for_target(user, int(round(_num(row.get("context_tok")) or isl + osl / 2)))
        else:  # neither: as many as fit (the schema), the batch the KV cache holds
            b = _slot_cap(dep, ctx if ctx > 0 else isl + osl / 2.0, max_batch)
            if not b >= 1:
                raise _refusal(row, "concurrency", "a decode row without its concurrency runs as many sequences "
                                                   "as fit, and not one fits in the KV cache")
            assumption = (f"concurrency not stated: decode at the KV-full batch, {b:.0f} sequences per "
                          f"instance (as many as fit)")
        r = serve(dep, isl_tok=isl, osl_tok=osl, phase="decode", batch=b,
                  context_tok=ctx if math.isfinite(ctx) else None, profile=profile, engines=engines)
    else:
        tok = _num(row.get("prefill_tok_per_gpu"))
        r = serve(dep, isl_tok=isl, osl_tok=osl, phase="prefill",
                  prefill_tok=tok * dep.replica_chips if math.isfinite(tok) else None, profile=profile, engines=engines)
    f = lambda a: float(np.asarray(a, float).ravel()[0])  # noqa: E731
    total = f(r.total_tok_per_s_per_gpu) if not (no_lengths and phase == "decode") else float("nan")
    hit = _num(row.get("cache_hit_frac"))
    if phase == "prefill" and math.isfinite(hit):
        # prompt tokens served from a prefix/KV cache count as input but need no compute
        v.fraction(hit, "cache_hit_frac", allow_one=False)
        total = total / (1.0 - hit)
    per_all = r.output_tok_per_s_per_gpu if per_all is None else per_all
    rec = dict(zip(PREDICTED_COLUMNS, (f(r.output_tok_per_s_per_gpu), f(per_all), total, f(r.tok_per_s_per_user),
                                       f(r.tpot_s), f(r.ttft_s), f(r.batch), dep.label())))
    rec["assumption"] = assumption
    return rec


def _refusal(row: Any, column: str, text: str) -> ValidationError:
    """A row's refusal naming its case, with the ``column`` at fault as an attribute."""
    exc = ValidationError(f"serving case {row.get('case_id')}: {text}")
    exc.column = column
    return exc


#: Buckets of :func:`measured_concurrency_frac` (lower edges; a run that held its concurrency is ~1).
CONCURRENCY_BUCKETS = ((0.9, ">= 0.9"), (0.75, "0.75-0.9"), (0.0, "< 0.75"))


def measured_concurrency_frac(cases: "pd.DataFrame") -> "pd.Series":  # noqa: F821
    """Concurrency the published figures imply, over the stated concurrency [fraction] (serve rows).

    Little's law on the measurements alone, no model: requests/s = output tokens/s (per GPU x
    the GPUs the figure counts: decode GPUs of a disaggregated row) / mean output length, times
    the request's time in flight ``TTFT + (OSL - 1) * TPOT``, over ``concurrency``. A closed-loop
    run that kept its concurrency in flight gives ~1 (a little below: the published TTFT and TPOT
    are medians, Little's law needs means); well below 1, the published throughput, TTFT and TPOT
    cannot all describe a steady state at that concurrency (the benchmark did not keep it in
    flight), and no serving model can match all three. NaN where a figure is missing.

    >>> import pandas as pd
    >>> row = dict(phase="serve", disaggregated=0, n_gpus=2, concurrency=4, osl_tok=1000,
    ...            measured_output_tok_per_s_per_gpu=100.0, measured_ttft_s=1.0, measured_tpot_s=0.019)
    >>> round(float(measured_concurrency_frac(pd.DataFrame([row]))[0]), 3)   # 0.2 req/s x 19.98 s / 4
    0.999
    """
    import pandas as pd

    def col(name: str) -> "pd.Series":
        return pd.to_numeric(cases[name], errors="coerce") if name in cases else pd.Series(np.nan, index=cases.index)

    note = cases["note"] if "note" in cases else pd.Series("", index=cases.index)
    osl = col("osl_tok") * note.map(mean_length_frac)
    disagg = (col("disaggregated") == 1).to_numpy()
    gpus = np.where(disagg, col("n_decode_gpus"), col("n_gpus"))
    rate = col("measured_output_tok_per_s_per_gpu") * gpus / osl  # requests/s
    frac = rate * (col("measured_ttft_s") + (osl - 1.0) * col("measured_tpot_s")) / col("concurrency")
    return frac.where(cases["phase"].astype(str) == "serve")


def concurrency_bucket(frac: "pd.Series") -> "pd.Series":  # noqa: F821
    """:data:`CONCURRENCY_BUCKETS` label of each :func:`measured_concurrency_frac` ("not measured": NaN)."""
    out = frac.map(lambda x: "not measured")
    for edge, label in reversed(CONCURRENCY_BUCKETS):
        out = out.where(~(frac >= edge), label)
    return out


def predict_cases(cases: Any, profile: Any = None, engines: Any = None) -> "pd.DataFrame":  # noqa: F821
    """Predict every row of a serving-cases table; errors against the measurements.

    Rows are scored independently: a row the schema refuses (:func:`check_cases`) or the model
    cannot take (a layout that does not fit, ...) is kept with ``status`` ``refused`` and why, and
    the other rows are predicted exactly as they would be alone.

    Returns
    -------
    pandas.DataFrame
        The input columns plus ``predicted_*`` figures, ``deployment``, ``assumption`` (what the
        prediction assumed where the row left it open, :func:`predict_case`), ``status``
        (``predicted`` or ``refused``), ``refused_column`` / ``refused_reason`` (the column at
        fault, empty where the row as a whole, and the one-line reason; empty for predicted rows),
        ``csv_line`` (the row's line in the file, the header being line 1), ``error_frac`` =
        predicted / measured - 1 of the output tokens/s per GPU (for prefill rows: of the total,
        i.e. input, tokens/s per GPU) and ``ratio``, and ``ttft_error_frac`` / ``ttft_ratio`` of
        the TTFT where it is measured (NaN elsewhere), ``measured_concurrency_frac``
        (:func:`measured_concurrency_frac`) and its bucket ``measured_concurrency``
        (:data:`CONCURRENCY_BUCKETS`, or ``not measured``). ``attrs["ignored_columns"]``: the
        input's columns outside the schema (:func:`ignored_columns`).

    Raises
    ------
    DataError
        The file as a whole cannot be read (:func:`check_cases`).
    """
    import pandas as pd

    from ..errors import TokenomicsError

    df, refused = check_cases(cases)
    rows = []
    for i, row in df.iterrows():
        if i in refused.index:
            r = refused.loc[i]
            rec = {"status": "refused", "refused_column": r["column"], "refused_reason": r["reason"]}
        else:
            try:
                rec = predict_case(row, profile, engines)
                rec.update(status="predicted", refused_column="", refused_reason="")
            except TokenomicsError as exc:
                rec = {"status": "refused", "refused_column": getattr(exc, "column", ""),
                       "refused_reason": str(exc).removeprefix(f"serving case {row['case_id']}: ")}
        rec["csv_line"] = int(i) + 2
        rows.append(rec)
    out = pd.concat([df, pd.DataFrame(rows, index=df.index)], axis=1)
    for col in PREDICTED_COLUMNS + ("assumption",):  # present even when no row could be predicted
        if col not in out.columns:
            out[col] = np.nan if col.startswith("predicted_") else ""
    out["assumption"] = out["assumption"].fillna("")
    meas = out["measured_output_tok_per_s_per_gpu"].astype(float)
    pred = out.get("predicted_output_tok_per_s_per_gpu", pd.Series(np.nan, index=out.index)).astype(float)
    pre = out["phase"] == "prefill"
    if "measured_total_tok_per_s_per_gpu" in out:
        meas = meas.where(~pre, out["measured_total_tok_per_s_per_gpu"].astype(float))
        pred = pred.where(~pre, out.get("predicted_total_tok_per_s_per_gpu", pred).astype(float))
    out["error_frac"] = pred / meas - 1
    out["ratio"] = pred / meas
    nan = pd.Series(np.nan, index=out.index)
    for q in ("ttft", "tpot"):
        pred_s = pd.to_numeric(out.get(f"predicted_{q}_s", nan), errors="coerce")
        out[f"{q}_ratio"] = pred_s / pd.to_numeric(out.get(f"measured_{q}_s", nan), errors="coerce")
        out[f"{q}_error_frac"] = out[f"{q}_ratio"] - 1
    out["measured_concurrency_frac"] = measured_concurrency_frac(out)
    out["measured_concurrency"] = concurrency_bucket(out["measured_concurrency_frac"])
    out.attrs["ignored_columns"] = ignored_columns(df)
    return out


#: The bundled serving sets no fit used: every published row the accuracy claims are made on
#: (``serving_public`` is the fit set; AIConfigurator's 22 anchors are rows of ``serving_aic_sample``,
#: counted there once).
UNFITTED_SETS = ("serving_holdout", "serving_blind_2026", "serving_mlperf", "serving_mlperf_server",
                 "serving_mlperf_v61", "serving_trtllm_perf", "serving_lmsys_phase", "serving_ascend", "serving_atom",
                 "serving_aic_sample")


def pool_sets(preds: "dict[str, pd.DataFrame]") -> "pd.DataFrame":  # noqa: F821
    """Predictions of several sets (:func:`predict_cases` of each, by set name) as one frame with a
    ``set`` column first; ``case_id`` stays the set's own."""
    import pandas as pd

    out = pd.concat([p.assign(set=name) for name, p in preds.items()], ignore_index=True)
    out = out[["set"] + [c for c in out.columns if c != "set"]]
    out.attrs["ignored_columns"] = sorted({c for p in preds.values() for c in p.attrs.get("ignored_columns", [])})
    return out


def predict_unfitted(profile: Any = None, engines: Any = None) -> "pd.DataFrame":  # noqa: F821
    """:func:`predict_cases` of every set of :data:`UNFITTED_SETS`, pooled (:func:`pool_sets`):
    the frame the headline "all unfitted rows" accuracy is read from (``summarize(...,
    by=("set",))``). About 45 s on one core: 4,177 rows."""
    from ..catalog import load

    return pool_sets({name: predict_cases(load(name), profile, engines) for name in UNFITTED_SETS})


def summarize(pred: "pd.DataFrame", by: tuple[str, ...] = ("hardware", "engine", "phase"),  # noqa: F821
              quantity: str = "output") -> "pd.DataFrame":  # noqa: F821
    """Median and 90th-percentile absolute error and median predicted/measured, overall and by group.

    ``quantity`` ``output``: output tokens/s per GPU (``error_frac``); ``ttft`` / ``tpot``: time
    to first token / per output token (``ttft_error_frac``, ``tpot_error_frac``); each over the
    rows that measured it (``n_cases`` counts those: a TPOT-only row is not an output case).
    """
    import pandas as pd

    v.one_of(quantity, "quantity", ("output", "ttft", "tpot"))
    err, ratio = ("error_frac", "ratio") if quantity == "output" else (f"{quantity}_error_frac", f"{quantity}_ratio")
    ok = pred[pred["status"] == "predicted"]
    ok = ok[np.isfinite(ok[err].astype(float))]
    rows = []

    def add(group: str, key: str, d):
        e = d[err].abs()
        rows.append({"group": group, "value": key, "n_cases": int(len(d)),
                     "median_abs_error_frac": float(e.median()) if len(d) else float("nan"),
                     "p90_abs_error_frac": float(e.quantile(0.9)) if len(d) else float("nan"),
                     "median_ratio": float(d[ratio].median()) if len(d) else float("nan")})

    add("all", "all", ok)
    for col in by:
        for key, d in ok.groupby(col, sort=True):
            add(col, str(key), d)
    df = pd.DataFrame(rows)
    df.attrs["n_not_predicted"] = int((pred["status"] != "predicted").sum())
    return df


def summarize_within(pred: "pd.DataFrame", within: str = "model",  # noqa: F821
                     by: tuple[str, ...] = ("hardware",)) -> "pd.DataFrame":  # noqa: F821
    """:func:`summarize` of each row's predicted/measured over its ``within`` group's median.

    What remains once whatever a group shares is divided out: for MLPerf results, whatever the
    rows of one benchmark share (its prompt length, ``datasets/mlperf_benchmarks.csv``; the
    reference harness), the error of one chip against the others on the same benchmark.

    Examples
    --------
    >>> import pandas as pd
    >>> p = pd.DataFrame({"status": ["predicted"] * 3, "model": ["a", "a", "a"], "hardware": ["x", "y", "z"],
    ...                   "ratio": [0.8, 1.0, 1.2]})
    >>> round(float(summarize_within(p).iloc[0]["median_abs_error_frac"]), 6)  # 0.8, 1.0, 1.2 around 1.0
    0.2
    """
    ok = pred[pred["status"] == "predicted"].copy()
    ok["ratio"] = ok["ratio"] / ok.groupby(within)["ratio"].transform("median")
    ok["error_frac"] = ok["ratio"] - 1
    out = summarize(ok, by=by)
    out.attrs["n_not_predicted"] = int((pred["status"] != "predicted").sum())
    return out
