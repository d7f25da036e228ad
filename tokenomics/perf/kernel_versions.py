"""How much slower an older engine release's GEMM and fused-MoE kernels are than the newest.

The core's GEMM and MoE ceilings are fitted on the newest kernels NVIDIA's aiconfigurator timed
(``datasets/chip_microbench.csv``, ``datasets/kernel_microbench.csv``). Published serving runs
often used an older release, whose kernels can be much slower on one chip and format: TensorRT-LLM
1.2.0rc5's block-FP8 GEMMs on B200 take 7 us more per call at one row than 1.3.0rc20's and 3.5x
as long at 8192 rows, where H200's are unchanged. ``datasets/engine_kernel_versions.csv``
(``tools/build_engine_kernels.py``) tabulates, per chip, engine release, operator (``gemm`` or
``moe_experts``) and weight format, the median over the shapes both releases timed of

- ``added_latency_s`` (old - new) at 1-64 rows: latency-bound calls, added per call;
- ``time_ratio`` (old / new) at 128-16384 rows: work-bound calls, multiplying the modelled time.

A deployment that states its ``engine_version`` gets these differences on top of the core's
times (:class:`KernelPenalty`); without one (the default) the newest kernels are assumed. A
release between two tabulated ones is placed between them by its release DATE
(``datasets/engine_releases.csv``): the penalty is interpolated linearly in date between the
older table's and the newer one's, and past the newest table towards zero at the reference
release's date. One older than every table takes the oldest (ASSUMPTION: older kernels are no
faster; nothing older is measured). Only the chip's own tables are used: no chip borrows
another's release history.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

from .engines import version_key

#: Row counts at or below which a call is latency-bound (``added_latency_s`` applies).
LATENCY_ROWS_MAX = 64

#: Engines (``datasets/engines.csv`` names; Dynamo runs are aliased to their engine by the
#: deployment) with per-release kernel tables.
TABLE_ENGINES = ("trt",)


@dataclass(frozen=True)
class KernelPenalty:
    """Extra time of one release's kernels over the newest, for one operator and weight format.

    Attributes
    ----------
    engine_version, reference_version : str
        The tabulated release used and the release it is compared with.
    newer_version, newer_weight : str, float
        Where the release lies between two measured points by date: the newer point (a table,
        or the reference, whose penalty is zero) and its weight in the interpolation (0: the
        table of ``engine_version`` as measured).
    latency_rows, added_latency_s : numpy.ndarray
        Row counts (1-64) and the median added latency per call there [s].
    work_rows, time_ratio : numpy.ndarray
        Row counts (128-16384) and the median old/new time there.
    """

    engine_version: str
    reference_version: str
    latency_rows: np.ndarray
    added_latency_s: np.ndarray
    work_rows: np.ndarray
    time_ratio: np.ndarray
    newer_version: str = ""
    newer_weight: float = 0.0

    def extra_s(self, rows, modelled_s, calls) -> np.ndarray:
        """Added time [s] of ``calls`` calls at ``rows`` rows whose modelled time is ``modelled_s``.

        At up to :data:`LATENCY_ROWS_MAX` rows: ``calls x added_latency_s(rows)`` (interpolated in
        log rows, clamped at the ends); above: ``(time_ratio(rows) - 1) x modelled_s``. Never
        more negative than ``-modelled_s`` (a kernel takes no time at worst).
        """
        r = np.maximum(np.asarray(rows, dtype=float), 1.0)
        t = np.asarray(modelled_s, dtype=float)
        lat = (np.interp(np.log(r), np.log(self.latency_rows), self.added_latency_s) * calls
               if len(self.latency_rows) else 0.0 * r)
        work = ((np.interp(np.log(r), np.log(self.work_rows), self.time_ratio) - 1.0) * t
                if len(self.work_rows) else 0.0 * r)
        return np.maximum(np.where(r <= LATENCY_ROWS_MAX, lat, work), -t)[()]


def table_format(precision: str, native_precision: str, checkpoint_native: bool) -> str | None:
    """The kernel-table format GEMMs on ``precision`` weights run in, or None if untabulated.

    FP8 weights of the model's own FP8 checkpoint (``checkpoint_native``: the deployment serves
    the checkpoint as published, dense layers and experts in its native precision) are that
    checkpoint's 128 x 128 block-scaled FP8 (``fp8_block``: DeepSeek-V3 and Kimi K2 publish
    ``weight_block_size [128, 128]``); other FP8 weights are per-tensor (``fp8``: ModelOpt FP8
    Llama checkpoints). A re-quantized checkpoint of an FP8 model (experts in NVFP4 or MXFP4)
    re-quantizes its dense layers too (NVIDIA DeepSeek-R1-0528-FP4-V2: attention output and MLPs
    in NVFP4, the other attention projections BF16, per its model card), so its dense GEMMs are
    not block-FP8.
    """
    if precision == "fp8":
        return "fp8_block" if native_precision == "fp8" and checkpoint_native else "fp8"
    return precision if precision in ("bf16", "nvfp4", "mxfp4") else None


@functools.lru_cache(maxsize=1)
def _table():
    from ..catalog import load

    return load("engine_kernel_versions")


@functools.lru_cache(maxsize=256)
def release_note(hardware: str, engine: str, engine_version: str, runs_engine: bool = True,
                 is_moe: bool = False) -> str:
    """One line on what a stated ``engine_version`` changes for ``engine`` on ``hardware``: the
    measured releases its GEMM and fused-MoE kernels are timed from, or why it changes nothing
    (the plan runs no engine kernels, the engine or chip has no tables, the release is the newest).

    >>> release_note("b200", "trt", "1.1.0rc2")
    'trt 1.1.0rc2 kernels timed as tabulated for 1.2.0rc5 (older than every table: ASSUMPTION no faster)'
    >>> release_note("h200", "vllm", "0.19.0")
    'vllm 0.19.0: no per-release kernel tables for vllm; the newest measured kernels are timed'
    >>> release_note("h200", "sglang", "0.4.3.post2", is_moe=True)
    "sglang 0.4.3.post2: a mixture-of-experts model's kernels run 2.88x slower than the serving fit's releases (datasets/engine_maturity.csv)"
    """
    from .engines import maturity_slowdown

    label = f"{engine} {engine_version}"
    if not runs_engine:
        return f"{label}: the plan runs no engine kernels, so the release changes nothing"
    slow = maturity_slowdown(engine, engine_version)
    if slow > 1.0:
        if is_moe:
            return (f"{label}: a mixture-of-experts model's kernels run {slow:.2f}x slower than the serving fit's "
                    "releases (datasets/engine_maturity.csv)")
        return (f"{label}: older than the serving fit's releases, but no old release was measured on a dense model; "
                "the newest measured kernels are timed")
    if engine not in TABLE_ENGINES:
        return f"{label}: no per-release kernel tables for {engine}; the newest measured kernels are timed"
    df = _table()
    df = df[(df["hardware"] == hardware) & (df["engine"] == engine)]
    if df.empty:
        return f"{label}: no {engine} release tables for {hardware}; the newest measured kernels are timed"
    pos = _placement(df, engine, engine_version)
    if pos is None:
        newest = max(df["reference_version"].unique(), key=version_key)
        return f"{label}: not older than the newest tabulated release ({newest}); the newest measured kernels are timed"
    ver, newer, w = pos
    if version_key(ver) > version_key(engine_version) and w == 0.0:
        return f"{label} kernels timed as tabulated for {ver} (older than every table: ASSUMPTION no faster)"
    if w == 0.0:
        return f"{label} kernels timed as tabulated for {ver} (datasets/engine_kernel_versions.csv)"
    return (f"{label} kernels timed between the tables of {ver} and {newer} by release date "
            f"({w:.0%} of the way to {newer}; datasets/engine_releases.csv)")


def _placement(df, engine: str, engine_version: str) -> tuple[str, str, float] | None:
    """Where ``engine_version`` lies among the measured releases of ``df`` (rows of
    ``datasets/engine_kernel_versions.csv`` for one chip): ``(table, newer, weight)``, the
    penalty being ``(1 - weight) x table + weight x newer`` (``newer`` a later table, or the
    newest reference release with no penalty). Between two measured releases the weight is
    linear in release date; a release without a known date takes the latest table at or below
    it (weight 0); one older than every table takes the oldest (weight 0). None when it is at
    least as new as the newest reference."""
    from .engines import release_date

    if df.empty:
        return None
    key = version_key(engine_version)
    newest_ref = max(df["reference_version"].unique(), key=version_key)
    if key >= version_key(newest_ref):
        return None
    versions = sorted(df["engine_version"].unique(), key=version_key)
    at_or_below = [v for v in versions if version_key(v) <= key]
    if not at_or_below:
        return versions[0], versions[0], 0.0
    lo = at_or_below[-1]
    points = versions[versions.index(lo) + 1:] + [newest_ref]
    hi = points[0]
    d, d_lo, d_hi = (release_date(engine, x) for x in (engine_version, lo, hi))
    if None in (d, d_lo, d_hi) or d_hi <= d_lo:
        return lo, hi, 0.0
    w = float(np.clip((d - d_lo).days / (d_hi - d_lo).days, 0.0, 1.0))
    return lo, hi, w


def _one_table(df, ver: str) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, str]:
    rows = df[df["engine_version"] == ver].sort_values("rows")
    lat = rows[rows["metric"] == "added_latency_s"]
    work = rows[rows["metric"] == "time_ratio"]
    return (lat["rows"].to_numpy(float), lat["value"].to_numpy(float), work["rows"].to_numpy(float),
            work["value"].to_numpy(float), str(rows["reference_version"].iloc[0]))


def _at(rows: np.ndarray, src_rows: np.ndarray, src_vals: np.ndarray, empty: float) -> np.ndarray:
    """``src_vals`` read at ``rows`` (interpolated in log rows, clamped); ``empty`` without data."""
    if not len(src_rows):
        return np.full(len(rows), empty)
    return np.interp(np.log(rows), np.log(src_rows), src_vals)


@functools.lru_cache(maxsize=512)
def kernel_penalty(hardware: str, engine: str, engine_version: str | None, op: str,
                   fmt: str | None) -> KernelPenalty | None:
    """The :class:`KernelPenalty` of ``engine_version`` for ``op`` in format ``fmt`` on ``hardware``.

    None when no version is given, the engine or chip has no tables, the release is at least as
    new as the newest tabulated reference, or the format is untabulated. A release between two
    measured ones is interpolated by release date (module docstring).

    >>> p = kernel_penalty("b200", "trt", "1.1.0rc2", "gemm", "fp8_block")
    >>> p.engine_version, round(float(p.extra_s(1, 0.0, 1)) * 1e6, 1)  # us per call at one row
    ('1.2.0rc5', 7.4)
    >>> kernel_penalty("b200", "trt", "1.3.0rc20", "gemm", "fp8_block") is None
    True
    """
    if not engine_version or fmt is None or engine not in TABLE_ENGINES:
        return None
    df = _table()
    df = df[(df["hardware"] == hardware) & (df["engine"] == engine) & (df["op"] == op)
            & (df["precision"] == fmt)]
    if df.empty:
        return None
    pos = _placement(df, engine, engine_version)
    if pos is None:
        return None
    ver, newer, w = pos
    lr, lv, wr, wv, ref = _one_table(df, ver)
    if w > 0.0:
        if newer in set(df["engine_version"]):
            nlr, nlv, nwr, nwv, _ = _one_table(df, newer)
            lv = (1 - w) * lv + w * _at(lr, nlr, nlv, 0.0)
            wv = 1.0 + (1 - w) * (wv - 1.0) + w * (_at(wr, nwr, nwv, 1.0) - 1.0)
        else:  # towards the reference release: no penalty there
            lv = (1 - w) * lv
            wv = 1.0 + (1 - w) * (wv - 1.0)
    return KernelPenalty(ver, ref, lr, lv, wr, wv, newer_version=newer if w > 0 else "", newer_weight=w)
