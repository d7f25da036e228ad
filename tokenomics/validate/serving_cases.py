"""Published serving results checked against the serving model: read a serving-cases file
(schema, cell rules, refusals), express each row as a deployment, predict it with
:func:`tokenomics.perf.serving.serve` / :func:`~tokenomics.perf.serving.serve_disaggregated`, and
score the predictions (:func:`summarize`, :func:`summarize_within`, the unfitted sets pooled).

This is the validation harness of the serving model, apart from the model itself
(:mod:`tokenomics.perf.serving`).
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
from ..perf.engines import priced_engine
from ..perf.serving import PHASES, _slot_cap, serve, serve_disaggregated
from ..specs import precision_bytes

#: Columns a serving-cases CSV must have (the schema of ../shared/calibration/serving_public.csv).
CASE_COLUMNS = ("case_id", "phase", "hardware", "model", "weight_precision", "kv_precision", "engine",
                "n_gpus", "tp", "ep", "dp_attention", "disaggregated", "spec_decode", "isl_tok", "osl_tok",
                "concurrency", "measured_output_tok_per_s_per_gpu")

#: Optional columns read when present: ``context_tok`` and ``prefill_tok_per_gpu`` (decode-only /
#: prefill-only rows), ``n_prefill_gpus``/``n_decode_gpus``/``prefill_tp``/``prefill_ep``
#: (disaggregated rows), ``measured_tok_per_s_per_user``, ``n_requests`` (offline rows: requests
#: queued by the benchmark; more than run at once end in a drain, :func:`~tokenomics.perf.serving.drain_s`), ``cache_hit_frac`` (prefill rows: share of the input tokens served
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
#: :func:`~tokenomics.perf.serving.wave_serve`; empty = 0), ``moe_tp`` (tensor-parallel ways inside each routed expert
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
    row; ``phase`` is one of :data:`~tokenomics.perf.serving.PHASES`; the numbers are in range (:data:`CASE_CELLS`);
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
        One line naming the case, the column, the value and what was expected, for every refused
        row (the first :data:`tokenomics.io.MAX_PROBLEMS_NAMED` and how many more).
    """
    import pandas as pd

    from ..errors import DataError
    from ..io import raise_problems

    df, refused = check_cases(path)
    if len(refused) == 1:
        r = refused.iloc[0]
        raise DataError(f"serving case {r['case_id']}: {r['reason']} ({r['where']})")
    label = "serving cases" if isinstance(path, pd.DataFrame) else f"serving cases file {str(path)!r}"
    raise_problems(label, [(int(i), f"serving case {r['case_id']}: {r['reason']}") for i, r in refused.iterrows()],
                   noun="refused rows")
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
    from ..perf.speculative import alpha_for_acceptance_length

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
    from ..perf.engines import ENGINE_ALIASES, version_key

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
    from ..perf.engines import ENGINE_ALIASES, version_key

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


def _catalog_model_names(df: "pd.DataFrame") -> None:  # noqa: F821
    """Models named as a hub or provider names them (``deepseek-ai/DeepSeek-R1-0528``,
    ``meta-llama/Llama-3.1-70B-Instruct``) set, in place, to the catalog model they stand for
    (:func:`tokenomics.catalog.match_model_name`); a catalog name in any case, and a name that
    matches nothing, are left for the checks."""
    from ..catalog import canonical_name, match_model_name

    names = df["model"].astype(str)
    for name in names.unique():
        hit = match_model_name(name)
        if hit is not None and canonical_name(hit) != canonical_name(name):
            df.loc[(names == name).to_numpy(), "model"] = hit


def _name_problems(df: "pd.DataFrame") -> "dict[int, tuple[str, str]]":  # noqa: F821
    """Every row's hardware, model, engine, precisions and the optional words are ones the library
    knows (the catalog's own lookups, aliases included; a close-match hint otherwise): position ->
    (column, reason) of the first unknown name of each row."""
    from ..catalog import accelerator, model
    from ..deployment import COLLECTIVES, _spec
    from ..errors import TokenomicsError, unknown_name
    from ..perf.engines import ENGINE_ALIASES, ENGINES, UNFITTED_ENGINES
    from ..perf.system import EXPERT_BALANCING, OVERLAP_MODES
    from ..specs import PRECISION_BYTES

    engines = set(ENGINES) | set(ENGINE_ALIASES) | set(UNFITTED_ENGINES)

    def hardware(name: str) -> None:
        try:
            accelerator(name)
        except TokenomicsError as exc:
            from ..perf.parallel import system

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
    anything else wrong refuses its row only: a phase not in :data:`~tokenomics.perf.serving.PHASES`, a ``case_id`` used
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
    _catalog_model_names(df)
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
    from ..catalog import accelerator
    from ..catalog import model as _model
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
    from ..perf.engines import engine_default, engines_with_releases

    # the run's release where its priced engine has a release table (a row of an engine priced
    # as the default one records its release, which changes nothing)
    version = _cell(row, "engine_version") if engine in engines_with_releases() else None
    dflt = {k: (engine_default(row["engine"], k, m.is_moe, ep) or ("none", ""))[0] for k in ("overlap", "expert_balance")}
    return resolve(m, hardware=hw, tp=tp, ep=ep, execution="engine", engine=engine,
                   kv_precision=kv, spec=spec,
                   overlap=_cell(row, "overlap") or dflt["overlap"],
                   expert_balance=_cell(row, "expert_balance") or dflt["expert_balance"],
                   a2a_impl=_cell(row, "a2a_impl"), engine_version=version,
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
    from ..perf.parallel import check_fit

    try:
        check_fit(dep.model, dep.system, dep.parallel, 1, max(1, int(round(context_tok))),
                  dep.weight_precision, dep.kv_precision, dep.expert_precision, mem_frac=1.0)
    except DoesNotFitError as exc:
        raise DoesNotFitError(f"serving case {row['case_id']}: {exc}") from None


def predict_case(row: Any, profile: Any = None, engines: Any = None) -> dict[str, float]:
    """Predicted serving figures of one published row (see :func:`~tokenomics.perf.serving.serve`, :func:`~tokenomics.perf.serving.serve_disaggregated`).

    ``predicted_output_tok_per_s_per_gpu`` uses the denominator of the published figure: for a
    disaggregated ``serve`` row the decode GPUs (InferenceMAX divides output throughput by the
    decode GPUs, input throughput by the prefill GPUs and total throughput by all GPUs);
    ``predicted_output_tok_per_s_per_deployment_gpu`` divides by every GPU of the deployment
    (what a GPU-hour buys), and ``predicted_total_tok_per_s_per_gpu`` too. ``assumption`` says
    what the row left open and the prediction assumed (``""`` where nothing): a decode row with
    neither its concurrency nor its tokens/s per user runs at the KV-full batch (as many
    sequences as its KV cache holds, :func:`~tokenomics.perf.serving._slot_cap`), the schema's "as many as fit".

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
    columns = list(df.columns)
    for i, values in zip(df.index, df.values):  # each row's cells as iterrows gives them, in a dict
        row = dict(zip(columns, values))
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
