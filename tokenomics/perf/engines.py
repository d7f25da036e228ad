"""The serving-engine registry: the engines the library knows, the names published results use
for them, what each does by default, its releases, and its fitted parameters.

* names: :data:`ENGINES` (``none``: no engine around the kernels; ``default``: a production engine
  with the fitted default iteration cost), :data:`UNFITTED_ENGINES` and :data:`ENGINE_ALIASES`
  (``dynamo-trt`` -> ``trt``); :func:`priced_engine` maps a published name to the engine whose
  parameters price it;
* defaults: the batch and prefill-chunk defaults each engine sets by chip
  (:func:`default_max_seqs`, :func:`default_prefill_chunk_tok`) and what it does under expert
  parallelism (:func:`engine_default`, ``datasets/engine_defaults.csv``: overlap, expert balancing);
* releases: ``engine@version`` names and the release in force at a date (:func:`split_engine`,
  :func:`release_in_force`, ``datasets/engine_releases.csv``; versions ordered by :func:`version_key`);
* fitted parameters: per-iteration kernel overhead, TTFT overhead and batch cap of each (engine,
  vendor) (:func:`engine_params`, :func:`engine_step_s`, ``datasets/engines.csv``, refitted by
  ``tools/fit_serving.py``).
"""

from __future__ import annotations

import datetime as _dt
import functools
import math
import re
from typing import Any

from ..errors import ValidationError

#: Chunked-prefill budget per step [tokens] where the engine sets no other
#: (:func:`default_prefill_chunk_tok`): TensorRT-LLM's ``max_num_tokens`` 8192, SGLang's
#: ``--chunked-prefill-size`` below 160 GiB (https://docs.sglang.ai/advanced_features/server_arguments.html)
#: and vLLM's online ``max_num_batched_tokens`` from 70 GiB.
DEFAULT_PREFILL_CHUNK_TOK = 8192


#: One gibibyte [bytes]: the engines' memory thresholds are in GiB.
GIB = 1024**3


#: vLLM's default ``max_num_seqs`` below 70 GiB of GPU memory and on the A100 [sequences]
#: (:func:`vllm_large_gpu`; from 70 GiB it is the engines table's ``max_seqs``, 1024).
VLLM_SMALL_GPU_MAX_SEQS = 256


def vllm_large_gpu(accelerator: Any) -> bool:
    """Whether vLLM takes its large-GPU batch defaults on ``accelerator``: at least 70 GiB of memory
    and not an A100 (``EngineArgs.get_batch_defaults``, vllm-project/vllm ``vllm/engine/arg_utils.py``,
    PR 12369 and its successors: "For GPUs like H100 and MI300x, use larger default values").

    >>> from tokenomics.catalog import accelerator
    >>> [vllm_large_gpu(accelerator(h)) for h in ("h100-sxm", "a100", "mi355x")]
    [True, False, True]
    """
    return float(accelerator.hbm_bytes) >= 70 * GIB and "a100" not in accelerator.name.lower()


def default_max_seqs(engine: str, accelerator: Any, table_max_seqs: float) -> float:
    """The sequences one engine instance runs at most when the deployment sets no cap [sequences]:
    the engines table's ``max_seqs`` (vLLM ``max_num_seqs`` 1024, TensorRT-LLM ``max_batch_size``
    2048, ...), except vLLM on a GPU below its large-GPU branch (:func:`vllm_large_gpu`), where it
    is :data:`VLLM_SMALL_GPU_MAX_SEQS`.

    >>> from tokenomics.catalog import accelerator
    >>> default_max_seqs("vllm", accelerator("mi355x"), 1024.0), default_max_seqs("vllm", accelerator("a100"), 1024.0)
    (1024.0, 256.0)
    """
    if engine == "vllm" and not vllm_large_gpu(accelerator):
        return float(min(table_max_seqs, VLLM_SMALL_GPU_MAX_SEQS))
    return float(table_max_seqs)


def default_prefill_chunk_tok(engine: str, accelerator: Any) -> int:
    """The prompt-token budget of one prefill step that ``engine`` sets by default on ``accelerator``.

    - SGLang ``--chunked-prefill-size``: 8192 below 160 GiB of GPU memory (H100, H200), 16384 from
      160 GiB (B200, MI300X) (``ServerArgs``, sgl-project/sglang ``python/sglang/srt/server_args.py``
      at 469c63e5); with attention data parallelism SGLang splits it among the ranks
      (:attr:`Deployment.prefill_chunk_per_rank_tok`);
    - vLLM ``max_num_batched_tokens`` of the API server: 8192 from 70 GiB (A100 excepted), 2048
      below (``EngineArgs.get_batch_defaults``, vllm-project/vllm PR 12369 and its successors);
    - TensorRT-LLM ``max_num_tokens`` and every other engine: :data:`DEFAULT_PREFILL_CHUNK_TOK`.

    Parameters
    ----------
    engine : str
        Engine name (:data:`ENGINES`).
    accelerator : Accelerator
        The chip (its ``hbm_bytes`` and ``name``).

    Returns
    -------
    int
        Prompt tokens per prefill step [tokens].

    Examples
    --------
    >>> from tokenomics.catalog import accelerator
    >>> [default_prefill_chunk_tok("sglang", accelerator(h)) for h in ("h200", "b200")]
    [8192, 16384]
    """
    mem = float(accelerator.hbm_bytes)
    if engine == "sglang":
        return 16384 if mem >= 160 * GIB else 8192
    if engine == "vllm":
        return 8192 if vllm_large_gpu(accelerator) else 2048
    return DEFAULT_PREFILL_CHUNK_TOK


#: ``none``: no serving engine around the kernels (the article's custom stacks: megakernels,
#: super operators); ``default``: a production engine with the fitted default iteration cost.
ENGINES = ("default", "vllm", "sglang", "trt", "none")


#: Engines that published serving rows name but no fitted parameters cover (AMD's ATOM, SGLang
#: with AMD's MoRI communication library, DeepSeek's in-house engine, Huawei's CloudMatrix-Infer):
#: priced with the fitted ``default`` engine of the chip's vendor.
UNFITTED_ENGINES = ("atom", "mori-sglang", "deepseek-internal", "cloudmatrix-infer")


#: Engine names in published results that map to one of :data:`ENGINES` (Dynamo runs the engine).
ENGINE_ALIASES = {"dynamo-trt": "trt", "dynamo-sglang": "sglang", "dynamo-vllm": "vllm", "trtllm": "trt",
                  "tensorrt-llm": "trt", "deepseek-internal": "default", "cloudmatrix-infer": "default",
                  # vLLM on TPUs: vLLM's scheduler over its TPU backend (the tpu-inference package)
                  "vllm-tpu": "vllm", "tpu-inference": "vllm"}


def version_key(version: str) -> tuple:
    """Sort key of a release string: ``1.3.0rc20`` < ``1.3.0`` < ``1.3.0.post1``.

    >>> version_key("1.1.0rc2.post2") < version_key("1.2.0rc5") < version_key("1.3.0rc20")
    True
    """
    m = re.match(r"^v?(\d+)\.(\d+)(?:\.(\d+))?(?:rc(\d+))?(?:\.post(\d+))?", str(version).strip())
    if not m:
        from ..errors import ValidationError

        raise ValidationError(f"engine_version {version!r} is not a release number (expected e.g. 1.1.0rc2 or 0.21.0)")
    a, b, c, rc, post = m.groups()
    return (int(a), int(b), int(c or 0), int(rc) if rc is not None else 10**6, int(post or 0))


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


def engine_schema(bundled: Any = None) -> tuple:
    """The declared columns of an engines file (:class:`tokenomics.io.Column`): ``engine`` one of
    :data:`ENGINES` or their aliases, ``vendor`` a catalogued accelerator's (or one of the bundled
    table's: ``any``), both read lower-cased; non-negative per-kernel and per-request costs [s];
    ``max_seqs`` >= 1."""
    from ..catalog import load
    from ..io import Column

    bundled = load("engines") if bundled is None else bundled
    vendors = tuple(sorted(set(bundled["vendor"].astype(str)) | _vendors()))
    return (
        Column("engine", "choice", choices=tuple(ENGINES) + tuple(ENGINE_ALIASES), fold_case=True),
        Column("vendor", "choice", choices=vendors, fold_case=True),
        Column("kernel_overhead_s", "number", minimum=0.0, unit="s per kernel per iteration"),
        Column("ttft_overhead_s", "number", minimum=0.0, unit="s per request"),
        Column("max_seqs", "number", minimum=1.0, unit="sequences"),
    )


def read_engines(source: Any) -> "pd.DataFrame":  # noqa: F821
    """An engines table of one's own (a CSV path or DataFrame in the schema of
    ``datasets/engines.csv``, as ``tokenomics fit-serving --out`` writes it) above the bundled
    rows: its rows are matched first, the bundled ones fill in engines and vendors it lacks.

    Engine names are those of :data:`ENGINES` (and the names published rows
    use for them), vendors the catalogued accelerators' or ``any``; costs are non-negative
    seconds, ``max_seqs`` at least 1 (:func:`engine_schema`). Anything else is one
    :class:`~tokenomics.errors.DataError` naming every bad cell (row, line, column).
    """
    import pandas as pd

    from ..catalog import load
    from ..io import check_frame, read_csv

    what = "engines table"
    df = read_csv(source, what, required=ENGINE_COLUMNS).reset_index(drop=True)
    label = what if isinstance(source, pd.DataFrame) else f"{what} {str(source)!r}"
    bundled = load("engines")
    check_frame(df, engine_schema(bundled), label)
    df["engine"] = df["engine"].map(priced_engine)
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


def priced_engine(name: Any) -> str:
    """The engine whose parameters price a published row's engine name: the name itself for one
    of :data:`ENGINES`, the engine an alias names (``dynamo-trt`` -> ``trt``,
    :data:`ENGINE_ALIASES`), else ``default`` (an engine never fitted, such
    as ``atom``: the fitted default of the chip's vendor).

    >>> priced_engine("dynamo-sglang"), priced_engine("atom"), priced_engine("vllm")
    ('sglang', 'default', 'vllm')
    """
    
    engine = ENGINE_ALIASES.get(str(name).strip().lower(), str(name).strip().lower())
    return engine if engine in ENGINES else "default"


#: Settings :func:`engine_default` knows (``datasets/engine_defaults.csv`` ``setting``).
DEFAULT_SETTINGS = ("overlap", "expert_balance")


@functools.lru_cache(maxsize=1)
def _defaults() -> dict[tuple[str, str], tuple[str, str, str]]:
    from ..catalog import load

    return {(str(r.engine), str(r.setting)): (str(r.value), str(r.applies_to), str(r.source))
            for r in load("engine_defaults").itertuples()}


def engine_default(engine: str, setting: str, is_moe: bool, ep: int) -> tuple[str, str] | None:
    """What ``engine`` (a published engine name: ``sglang``, ``deepseek-internal``, ...) does by
    default for ``setting`` (``overlap`` or ``expert_balance``), and its source; None where the
    table says nothing or the condition (``moe_ep``: an MoE model at expert parallelism > 1)
    does not hold.

    >>> engine_default("deepseek-internal", "overlap", True, 32)[0]
    'two-batch'
    >>> engine_default("sglang", "overlap", True, 32)[0]
    'none'
    """
    
    raw = str(engine).strip().lower()
    hit = _defaults().get((raw, setting)) or _defaults().get((ENGINE_ALIASES.get(raw, raw), setting))
    if hit is None:
        return None
    value, applies, source = hit
    if applies == "moe_ep" and not (is_moe and int(ep) > 1):
        return None
    return value, source


@functools.lru_cache(maxsize=1)
def _releases_table() -> dict[str, list[tuple[tuple, str, _dt.date]]]:
    """Releases per engine as (version key, version, date), oldest version first."""
    from ..catalog import load

    out: dict[str, list] = {}
    for r in load("engine_releases").itertuples():
        out.setdefault(str(r.engine), []).append(
            (version_key(str(r.version)), str(r.version), _dt.date.fromisoformat(str(r.release_date))))
    return {e: sorted(v) for e, v in out.items()}


def engines_with_releases() -> tuple[str, ...]:
    """Engines (``datasets/engines.csv`` names) whose releases are tabulated."""
    return tuple(sorted(_releases_table()))


def known_releases(engine: str) -> list[str]:
    """The releases of ``engine`` a user may name, oldest first: the published ones and those
    whose kernels were measured (``datasets/engine_kernel_versions.csv``: release candidates
    timed by NVIDIA's aiconfigurator that never reached PyPI); empty if none are tabulated."""
    return list(_known_releases(engine))


@functools.lru_cache(maxsize=64)
def _known_releases(engine: str) -> tuple[str, ...]:
    """:func:`known_releases`, read once per engine (bundled tables only)."""
    from ..catalog import load

    if engine not in _releases_table():
        return ()
    k = load("engine_kernel_versions")
    k = k[k["engine"] == engine]
    names = {v for _, v, _ in _releases_table()[engine]} | set(k["engine_version"].astype(str)) | set(k["reference_version"].astype(str))
    return tuple(sorted(names, key=version_key))


def split_engine(engine: str | None, engine_version: str | None = None) -> tuple[str | None, str | None]:
    """``"sglang@0.4.3"`` -> ``("sglang", "0.4.3")``; a name without ``@`` passes through.

    A release given with ``@`` must be one the table lists (else a one-line error listing the
    known releases), and must not conflict with a separately given ``engine_version``.

    >>> split_engine("sglang@0.4.3")
    ('sglang', '0.4.3')
    >>> split_engine("sglang@2025-02")  # a date: the newest release published by its end
    ('sglang', '0.4.3.post2')
    >>> split_engine("trt", "1.1.0rc2")
    ('trt', '1.1.0rc2')
    """
    if engine is None or "@" not in str(engine):
        return engine, engine_version
    name, _, ver = str(engine).strip().partition("@")
    name, ver = name.strip().lower(), ver.strip().lstrip("v")
    
    name = ENGINE_ALIASES.get(name, name)
    if engine_version and str(engine_version).strip() != ver:
        raise ValidationError(f"--engine {engine} conflicts with --engine-version {engine_version}; give the release once")
    known = known_releases(name)
    if not known:
        raise ValidationError(f"engine {name!r} has no tabulated releases (engines with releases: "
                              f"{', '.join(engines_with_releases())}); give the engine without @VERSION")
    if re.match(r"^\d{4}(-\d{1,2}(-\d{1,2})?)?$", ver):  # sglang@2025-02: the release in force then
        at = release_in_force(name, ver)
        if at is None:
            raise ValidationError(f"no {name} release was published by {ver} (the first: {known[0]})")
        return name, at
    if ver not in known:
        raise ValidationError(f"{name} release {ver!r} is not known; known {name} releases: {', '.join(known)}")
    return name, ver


def release_date(engine: str, version: str) -> _dt.date | None:
    """The day ``engine`` ``version`` was published; a release the table does not list (a
    container build such as ``1.1.0rc2.post2``) takes the date of the latest listed release at or
    below it. None when nothing of ``engine`` at or below it is tabulated."""

    key = version_key(version)
    rows = [d for k, _, d in _releases_table().get(engine, []) if k <= key]
    exact = [d for k, v, d in _releases_table().get(engine, []) if v == version]
    return exact[0] if exact else (rows[-1] if rows else None)


def period_end(as_of: str) -> _dt.date | None:
    """The last day of an ``as_of`` period: ``2025`` -> 2025-12-31, ``2025-02`` -> 2025-02-28,
    ``2025-02-14`` -> itself; None when it is not a date."""
    m = re.match(r"^\s*(\d{4})(?:-(\d{1,2}))?(?:-(\d{1,2}))?", str(as_of or ""))
    if not m:
        return None
    y, mo, d = int(m.group(1)), m.group(2), m.group(3)
    if d:
        return _dt.date(y, int(mo), int(d))
    if mo:
        nxt = _dt.date(y + int(mo) // 12, int(mo) % 12 + 1, 1)
        return nxt - _dt.timedelta(days=1)
    return _dt.date(y, 12, 31)


def release_in_force(engine: str, as_of: str) -> str | None:
    """The newest release of ``engine`` published by the end of the ``as_of`` period (a
    result published then ran that release or an older one); None when the engine has no
    tabulated releases or ``as_of`` is not a date.

    >>> release_in_force("sglang", "2025-02")
    '0.4.3.post2'
    """
    end = period_end(as_of)
    rows = _releases_table().get(engine, [])
    if end is None or not rows:
        return None
    hits = [(k, v) for k, v, d in rows if d <= end]
    return max(hits)[1] if hits else None


@functools.lru_cache(maxsize=8)
def _maturity_rows() -> dict[str, tuple[_dt.date, _dt.date, float]]:
    from ..catalog import load

    out = {}
    for r in load("engine_maturity").itertuples():
        out[str(r.engine)] = (_dt.date.fromisoformat(str(r.reference_date)),
                              _dt.date.fromisoformat(str(r.oldest_fitted_date)), float(r.log_slowdown_per_year))
    return out


def maturity_slowdown(engine: str, version: str | None) -> float:
    """How much slower ``engine`` ``version`` runs a step's kernels than the releases the serving
    fit used (``datasets/engine_maturity.csv``) [ratio >= 1].

    ``exp(log_slowdown_per_year * age)``, ``age`` the years from the release's date
    (:func:`release_date`) back to the reference release's, held at the oldest fitted release's
    age (no extrapolation to older releases); 1 for the reference release or newer, for an
    engine the table does not list (TensorRT-LLM: its kernel tables, :mod:`.kernel_versions`) and
    for a release of unknown date.

    >>> maturity_slowdown("sglang", "0.5.9")
    1.0
    """
    if not version:
        return 1.0
    row = _maturity_rows().get(priced_engine(engine))
    when = release_date(priced_engine(engine), str(version)) if row is not None else None
    if row is None or when is None:
        return 1.0
    ref, oldest, rate = row
    age_y = min((ref - when).days, (ref - oldest).days) / 365.25
    return float(math.exp(rate * age_y)) if age_y > 0 else 1.0

