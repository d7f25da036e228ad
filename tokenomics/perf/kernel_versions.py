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
release between two tabulated ones takes the latest table at or below it; one older than every
table takes the oldest (ASSUMPTION: older kernels are no faster; nothing older is tabulated).
Only the chip's own tables are used: no chip borrows another's release history.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

import numpy as np

#: Row counts at or below which a call is latency-bound (``added_latency_s`` applies).
LATENCY_ROWS_MAX = 64

#: Engines (``datasets/engines.csv`` names; Dynamo runs are aliased to their engine by the
#: deployment) with per-release kernel tables.
TABLE_ENGINES = ("trt",)


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


@dataclass(frozen=True)
class KernelPenalty:
    """Extra time of one release's kernels over the newest, for one operator and weight format.

    Attributes
    ----------
    engine_version, reference_version : str
        The tabulated release used and the release it is compared with.
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
def release_note(hardware: str, engine: str, engine_version: str, runs_engine: bool = True) -> str:
    """One line on what a stated ``engine_version`` changes for ``engine`` on ``hardware``: the
    tabulated release its GEMM and fused-MoE kernels are timed as, or why it changes nothing (the
    plan runs no engine kernels, the engine or chip has no tables, the release is the newest).

    >>> release_note("b200", "trt", "1.1.0rc2")
    'trt 1.1.0rc2 kernels timed as tabulated for 1.2.0rc5 (older than every table: ASSUMPTION no faster)'
    >>> release_note("h200", "vllm", "0.19.0")
    'vllm 0.19.0: no per-release kernel tables for vllm; the newest measured kernels are timed'
    """
    label = f"{engine} {engine_version}"
    if not runs_engine:
        return f"{label}: the plan runs no engine kernels, so the release changes nothing"
    if engine not in TABLE_ENGINES:
        return f"{label}: no per-release kernel tables for {engine}; the newest measured kernels are timed"
    df = _table()
    df = df[(df["hardware"] == hardware) & (df["engine"] == engine)]
    if df.empty:
        return f"{label}: no {engine} release tables for {hardware}; the newest measured kernels are timed"
    ver = _tabulated_release(df, engine_version)
    if ver is None:
        newest = max(df["reference_version"].unique(), key=version_key)
        return f"{label}: not older than the newest tabulated release ({newest}); the newest measured kernels are timed"
    if version_key(ver) > version_key(engine_version):
        return f"{label} kernels timed as tabulated for {ver} (older than every table: ASSUMPTION no faster)"
    return f"{label} kernels timed as tabulated for {ver} (datasets/engine_kernel_versions.csv)"


def _tabulated_release(df, engine_version: str) -> str | None:
    """The release of ``df`` (rows of ``datasets/engine_kernel_versions.csv``) whose tables time
    ``engine_version``: the latest at or below it, or the oldest when it is older than all (module
    docstring); None when it is at least as new as the newest reference."""
    key = version_key(engine_version)
    if df.empty or key >= max(version_key(v) for v in df["reference_version"].unique()):
        return None
    versions = sorted(df["engine_version"].unique(), key=version_key)
    at_or_below = [v for v in versions if version_key(v) <= key]
    return at_or_below[-1] if at_or_below else versions[0]


@functools.lru_cache(maxsize=512)
def kernel_penalty(hardware: str, engine: str, engine_version: str | None, op: str,
                   fmt: str | None) -> KernelPenalty | None:
    """The :class:`KernelPenalty` of ``engine_version`` for ``op`` in format ``fmt`` on ``hardware``.

    None when no version is given, the engine or chip has no tables, the release is at least as
    new as the newest tabulated reference, or the format is untabulated.

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
    ver = _tabulated_release(df, engine_version)
    if ver is None:
        return None
    rows = df[df["engine_version"] == ver].sort_values("rows")
    lat = rows[rows["metric"] == "added_latency_s"]
    work = rows[rows["metric"] == "time_ratio"]
    return KernelPenalty(ver, str(rows["reference_version"].iloc[0]),
                         lat["rows"].to_numpy(float), lat["value"].to_numpy(float),
                         work["rows"].to_numpy(float), work["value"].to_numpy(float))
