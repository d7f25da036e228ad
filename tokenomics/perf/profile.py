"""Calibration profiles: the fitted hardware and execution-plan parameters of one accelerator.

A profile holds efficiencies (fractions of datasheet figures) and per-kernel costs. The H200
profile is fitted on ``datasets/h200_cases.csv`` plus the GEMM curve of
``datasets/h200_microbench.csv`` by :func:`tokenomics.validate.calibrate.fit_profile` and ships as
``datasets/profiles/h200.json``. Other accelerators get the H200 fractions and per-kernel costs
(a transfer assumption, recorded in the profile's ``source``) until measurements exist for them.
"""

from __future__ import annotations

import functools
import json
import math
import statistics
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any

from .. import _validate as v
from ..catalog import data_dir
from ..errors import DataError, ValidationError

#: Parameters a fit may change, with (lower, upper) bounds used by the optimizer.
FIT_BOUNDS: dict[str, tuple[float, float]] = {
    "weight_bw_frac": (0.4, 1.0),
    "kv_bw_frac": (0.2, 1.0),
    "flop_frac": (0.3, 1.0),
    "gemm_half_rows": (1.0, 2000.0),
    "attn_flop_frac": (0.1, 1.0),
    "gemm_tile_s": (0.0, 20e-6),
    "graph_kernel_s": (0.0, 10e-6),
    "eager_kernel_s": (1e-6, 60e-6),
    "eager_busy_kernel_s": (1e-6, 60e-6),
}


@dataclass(frozen=True)
class Profile:
    """Fitted efficiencies and overheads of one accelerator under a software stack.

    Parameters
    ----------
    name : str
        Profile id (usually the accelerator name).
    weight_bw_frac : float
        Achieved / datasheet HBM bandwidth when streaming weights and activations [fraction].
    kv_bw_frac : float
        Achieved / datasheet bandwidth of decode attention reading the KV cache, for large reads
        (the asymptote of the KV read curve; every read when ``kv_bw_half_bytes`` is 0) [fraction].
    kv_bw_small_frac : float
        Achieved / datasheet bandwidth of decode attention for tiny KV reads (a kernel reading a
        few MB cannot fill the chip: launch ramp, tail, split-KV combine) [fraction]; used when
        ``kv_bw_half_bytes`` > 0.
    kv_bw_half_bytes : float
        KV bytes one attention kernel reads at which its bandwidth fraction is halfway from
        ``kv_bw_small_frac`` to ``kv_bw_frac``: fraction = small + (large - small) x W / (W + half)
        for a read of W bytes; 0 = one fraction for every read [B].
    flop_frac : float
        Achieved / datasheet dense peak of large GEMMs [fraction].
    gemm_half_rows : float
        GEMM rows (tokens) at which compute efficiency is half of ``flop_frac``; efficiency is
        ``flop_frac * m / (m + gemm_half_rows)`` [rows].
    attn_flop_frac : float
        Achieved / datasheet bf16 peak of prefill (flash) attention [fraction].
    gemm_tile_s : float
        Fixed cost of a tiled GEMM kernel (rows > 1) over a GEMV [s].
    graph_kernel_s : float
        Device-side cost per kernel boundary inside a CUDA graph (launch gap, ramp, drain) [s].
    eager_kernel_s : float
        Host cost per kernel launched eagerly into an idle GPU (Python + framework dispatch +
        launch) [s].
    eager_busy_kernel_s : float
        Host cost per eager kernel when kernels are large [s]. Measured on the H200, the host
        cost per eager kernel is lower for bigger models (fewer, heavier kernels). The host cost
        interpolates between the two by the model's active weights per chip, in seconds at the
        reference read rate, over the idle host time. Weights, not the step's work: the cost
        per kernel must not fall as batch, context or prompt grow, or a bigger (padded) step
        would be faster; and work, not time, so that faster hardware never makes a step slower.
    eager_ref_bytes_per_s : float
        Reference rate that turns weight bytes into work seconds (the H200's achieved 4.0 TB/s
        read from ``h200_microbench.csv``) [B/s].
    eager_ref_flop_per_s : float
        No longer used (the host cost depends on weights only); kept so that profile files
        written before still load [FLOP/s].
    sync_s : float
        Host-device synchronization round trip (MoE expert loops) [s].
    megakernel_layer_s : float
        In-kernel barrier per layer of a megakernel [s].
    usable_mem_frac : float
        Share of device memory available to weights and KV cache [fraction].
    source, fitted_on, as_of : str
        Provenance.
    """

    name: str
    weight_bw_frac: float = 0.83
    kv_bw_frac: float = 0.65
    kv_bw_small_frac: float = 0.0
    kv_bw_half_bytes: float = 0.0
    flop_frac: float = 0.75
    gemm_half_rows: float = 110.0
    attn_flop_frac: float = 0.45
    gemm_tile_s: float = 3.5e-6
    graph_kernel_s: float = 1.9e-6
    eager_kernel_s: float = 22e-6
    eager_busy_kernel_s: float = 12e-6
    eager_ref_bytes_per_s: float = 4.0e12
    eager_ref_flop_per_s: float = 7.42e14
    sync_s: float = 10.6e-6
    megakernel_layer_s: float = 1.9e-6
    usable_mem_frac: float = 0.9
    source: str = "initial guess"
    fitted_on: str = ""
    as_of: str = ""
    metrics: dict = field(default_factory=dict, compare=False)

    def __post_init__(self) -> None:
        for f in ("weight_bw_frac", "kv_bw_frac", "flop_frac", "attn_flop_frac", "usable_mem_frac"):
            v.fraction(getattr(self, f), f, allow_zero=False)
        v.positive(self.gemm_half_rows, "gemm_half_rows")
        v.non_negative(self.kv_bw_half_bytes, "kv_bw_half_bytes")
        if self.kv_bw_half_bytes > 0:
            v.fraction(self.kv_bw_small_frac, "kv_bw_small_frac", allow_zero=False)
        v.positive(self.eager_ref_bytes_per_s, "eager_ref_bytes_per_s")
        v.positive(self.eager_ref_flop_per_s, "eager_ref_flop_per_s")
        for f in ("gemm_tile_s", "graph_kernel_s", "eager_kernel_s", "eager_busy_kernel_s", "sync_s",
                  "megakernel_layer_s"):
            v.non_negative(getattr(self, f), f)

    def replace(self, **changes: Any) -> "Profile":
        return replace(self, **changes)

    def params(self) -> dict[str, float]:
        """The numeric parameters as a dict."""
        return {f.name: getattr(self, f.name) for f in fields(self)
                if f.name not in ("name", "source", "fitted_on", "as_of", "metrics")}

    def to_json(self) -> str:
        d = {f.name: getattr(self, f.name) for f in fields(self)}
        return json.dumps(d, indent=1, sort_keys=False)

    @classmethod
    def from_json(cls, text: str, origin: str = "profile") -> "Profile":
        from ..io import MAX_NESTING, _depth

        try:
            d = json.loads(text)
        except json.JSONDecodeError as exc:
            raise DataError(f"{origin} is not valid JSON: {exc.msg} at line {exc.lineno}") from None
        except (RecursionError, MemoryError):
            d = None
        if d is None and text.strip() != "null" or _depth(d, MAX_NESTING) > MAX_NESTING:
            raise DataError(f"{origin} is nested too deeply; expected a flat JSON object of profile parameters")
        if not isinstance(d, dict):
            raise DataError(f"{origin} must hold a JSON object of profile parameters, got a {type(d).__name__}")
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(d) - known)
        if unknown:
            import difflib

            close = difflib.get_close_matches(str(unknown[0]), sorted(known), n=2, cutoff=0.6)
            hint = f" Did you mean {', '.join(repr(c) for c in close)}?" if close else ""
            raise DataError(f"{origin} has unknown key {str(unknown[0])[:60]!r}.{hint} "
                            f"Expected some of {sorted(known)}")
        if "name" not in d:
            raise DataError(f"{origin} lacks 'name'")
        for k, val in d.items():
            if k in ("name", "source", "fitted_on", "as_of"):
                if not isinstance(val, str):
                    raise DataError(f"{origin}: {k} must be a string, got {repr(val)[:60]}")
            elif k == "metrics":
                if not isinstance(val, dict):
                    raise DataError(f"{origin}: metrics must be an object, got {repr(val)[:60]}")
            elif isinstance(val, bool) or not isinstance(val, (int, float)):
                raise DataError(f"{origin}: {k} must be a number, got {repr(val)[:60]}")
        try:
            return cls(**d)
        except ValidationError as exc:
            raise DataError(f"{origin}: {exc}") from None

    def save(self, path: str | Path) -> Path:
        """Write the profile as JSON, atomically."""
        from ..io import write_text

        return write_text(path, self.to_json() + "\n")


def profiles_dir() -> Path:
    return data_dir() / "profiles"


@functools.lru_cache(maxsize=8)
def _profiles_dir_str(data: Path) -> str:
    """``str(profiles_dir())`` under the data directory ``data`` (a profile is looked up per step)."""
    return str(data / "profiles")


def load_profile(profile: "str | Path | Profile | None", hardware: str = "h200") -> Profile:
    """Resolve a profile: an object, a JSON path, a shipped profile name, or the default.

    With ``profile=None`` the shipped profile of ``hardware`` is used if there is one, else the
    H200 profile transferred to that hardware (its ``source`` says so).
    """
    if isinstance(profile, Profile):
        return profile
    if profile is not None and not isinstance(profile, (str, Path)):
        raise ValidationError(f"profile must be a Profile, a JSON path or a shipped name, got {type(profile).__name__}")
    if profile is None:
        return _default_profile(str(hardware), _profiles_dir_str(data_dir()))
    p = Path(str(profile))
    if str(profile).strip() == "":
        raise ValidationError("profile is empty; expected a shipped name or a JSON file")
    if p.suffix == ".json" or p.exists():
        return _read(p)
    shipped = profiles_dir() / f"{profile}.json"
    if shipped.exists():
        return _read(shipped)
    known = sorted(x.stem for x in profiles_dir().glob("*.json"))
    raise ValidationError(f"Unknown profile {profile!r}: not a JSON file and not one of {known}")


#: Microbenchmark metrics that set a chip's achievable fractions (datasets/chip_microbench.csv).
READ_METRIC, GEMM_METRIC = "hbm_read_bytes_per_s", "gemm_peak_flop_per_s"

#: Host time per tiny eager PyTorch op (datasets/chip_microbench.csv): scales the eager per-kernel costs.
LAUNCH_METRIC = "launch_eager_s_per_kernel"

#: Measured sibling whose rows a chip without its own borrows, by vendor.
VENDOR_SIBLING = {"NVIDIA": "h200", "AMD": "mi300x", "HUAWEI": "ascend-910b"}

#: Chips of no named vendor that ``datasets/accelerators.csv`` states are ASSUMED like another:
#: the SD200 chip "ASSUMED equal to an Ascend 910B-class part" (its row's source).
ASSUMED_LIKE = {"sd200-chip": "ascend-910b"}


def _same_vendor(chip: str, hw) -> bool:
    """Whether catalogued ``chip`` is of ``hw``'s vendor (read from the catalog table, so a chip
    whose row lacks a field the performance model needs can still be asked)."""
    from ..catalog import load

    vendor = load("accelerators")["vendor"].astype(str).str.upper().get(chip, "")
    return vendor == hw.vendor.upper()


def _measured_chips(hw) -> tuple[str, ...]:
    """Chips whose microbenchmark rows stand for ``hw``, in order: its own, its measured sibling
    (:data:`ASSUMED_LIKE`, else :data:`VENDOR_SIBLING`), the H200."""
    sibling = ASSUMED_LIKE.get(hw.name) or VENDOR_SIBLING.get(hw.vendor.upper(), "h200")
    return tuple(dict.fromkeys((hw.name, sibling, "h200")))


def measured_launch(hardware: str) -> tuple[float, str]:
    """Measured host time per tiny eagerly launched op of a chip [s], and the chip it was measured on.

    From the ``launch_eager_s_per_kernel`` rows of ``datasets/chip_microbench.csv``: the chip's own
    row, else its measured sibling's (:data:`VENDOR_SIBLING`, :data:`ASSUMED_LIKE`; a vendor without
    one: the H200's); ``(nan, "")`` where neither has one.

    >>> round(measured_launch("ascend-910c")[0] * 1e6, 2), measured_launch("ascend-910c")[1]
    (12.14, 'ascend-910b')
    """
    from ..catalog import accelerator, load

    df = load("chip_microbench")
    hw = accelerator(hardware)
    for chip in _measured_chips(hw):
        sel = df[(df["hardware"] == chip) & (df["metric"] == LAUNCH_METRIC)]
        if len(sel):
            return float(sel["value"].astype(float).median()), chip
    return float("nan"), ""


#: Measured GEMM precisions (``chip_microbench.csv`` ``precision``) that run on each datasheet
#: tensor path (``Accelerator.peak_flop_field``); block-scaled FP8 is a distinct kernel, not the path's
#: best case, and ``fp16`` duplicates bf16.
PATH_PRECISIONS = {"peak_bf16_flop_per_s": ("bf16",), "peak_fp8_flop_per_s": ("fp8",),
                   "peak_fp4_flop_per_s": ("nvfp4", "fp4"), "peak_int8_flop_per_s": ("int8",)}


@functools.lru_cache(maxsize=256)
def tensor_path_ratio(hardware: str, field: str) -> float:
    """Measured large-GEMM efficiency of a chip's ``field`` tensor path over its bf16 path.

    For each source in ``datasets/chip_microbench.csv`` that timed both paths on the chip (one
    harness, so its own biases cancel): (best ``gemm_peak_flop_per_s`` of the path / the path's
    datasheet peak) / (best bf16 / bf16 datasheet); the median over such sources. A chip with
    none borrows its measured sibling's (:data:`VENDOR_SIBLING`, :data:`ASSUMED_LIKE`). Where
    neither has one, a path timed on the chip alone, with no bf16 GEMM from the same source (the
    Ascend 910C's INT8 GEMMs in the CloudMatrix-Infer paper), is set against the bf16 fraction the
    chip's profile carries (:func:`measured_fracs`); else the H200's ratio (another vendor's). 1.0
    where none applies, and for the bf16 path. The profile's compute fractions are the bf16
    path's, so the step multiplies a low-precision path's datasheet peak by this.

    >>> round(tensor_path_ratio("b200", "peak_fp4_flop_per_s"), 3)   # (4547/9000) / (1693/2250)
    0.671
    """
    from ..catalog import accelerator, load

    if field == "peak_bf16_flop_per_s" or field not in PATH_PRECISIONS:
        return 1.0
    try:
        hw = accelerator(hardware)
    except Exception:  # noqa: BLE001 -- a chip outside the catalog keeps its datasheet path
        return 1.0
    if not math.isfinite(float(getattr(hw, field))):  # the chip has no such path
        return 1.0
    df = load("chip_microbench")
    df = df[df["metric"] == GEMM_METRIC]
    own = df[(df["hardware"] == hw.name) & df["precision"].astype(str).isin(PATH_PRECISIONS[field])]
    for chip in _measured_chips(hw):
        if len(own) and not _same_vendor(chip, hw):
            break  # the chip's own lone timing beats another vendor's ratio
        mine = df[df["hardware"] == chip]
        if mine.empty:
            continue
        acc = accelerator(chip)
        ratios = []
        for _, d in mine.groupby("source"):
            prec = d["precision"].astype(str)
            path, bf16 = d[prec.isin(PATH_PRECISIONS[field])], d[prec == "bf16"]
            peak = float(getattr(acc, field))
            if len(path) and len(bf16) and math.isfinite(peak):
                ratios.append((float(path["value"].max()) / peak)
                              / (float(bf16["value"].max()) / float(acc.peak_bf16_flop_per_s)))
        if ratios:
            return float(statistics.median(ratios))
    if len(own):
        return (float(own["value"].max()) / float(getattr(hw, field))) / measured_fracs(hw.name)["gemm_frac"]
    return 1.0


#: Weight-size grid [elements, sqrt(n k)] :func:`gemm_size_curve` searches for its half-way size.
_SIZE_W_GRID = tuple(16.0 * 4096.0 ** (i / 480) for i in range(481))  # 16 .. 65,536, log-spaced


@functools.lru_cache(maxsize=256)
def gemm_size_curve(hardware: str, field: str) -> tuple[float, float, str]:
    """How a low-precision tensor path's GEMM speed falls with the weight matrix's size.

    ``datasets/gemm_shapes.csv`` holds, per chip, path and weight shape ``n x k``, the measured
    speed-up of the path over BF16 at the same shape and compute-bound token counts (one harness,
    as in :func:`tensor_path_ratio`). Its rows are fitted (least squares on the log) with
    ``speedup(s) = a * s / (s + w)``, ``s = sqrt(n k)``: small GEMMs gain less from a faster
    tensor path, since the fixed work around the MMA (activation quantization, scales, prologue,
    tail) does not shrink with it. The step then times a GEMM of size ``s`` at
    ``min(1, gain * s / (s + w))`` of the path's large-GEMM rate (``gain = a`` over that rate's
    own speed-up, the best measured, so no size gains over it).

    A chip without rows borrows those of a measured chip of its own vendor, in the order of
    :func:`tensor_path_ratio` (kernel libraries differ by vendor: AMD chips do not borrow NVIDIA's);
    ``(1.0, 0.0, "")`` (no size effect) where none has rows, and for the bf16 path, whose size
    behaviour the profile's fitted compute fraction already holds.

    Returns
    -------
    (float, float, str)
        ``gain`` (dimensionless), ``w`` [elements] and the chip the rows came from.

    >>> g, w, chip = gemm_size_curve("b200", "peak_fp4_flop_per_s")
    >>> chip, round(min(1.0, g * 4096 / (4096 + w)), 2), round(min(1.0, g * 16384 / (16384 + w)), 2)
    ('b200', 0.63, 1.0)
    """
    import numpy as np

    from ..catalog import accelerator, load

    if field == "peak_bf16_flop_per_s" or field not in PATH_PRECISIONS:
        return 1.0, 0.0, ""
    try:
        hw = accelerator(hardware)
    except Exception:  # noqa: BLE001 -- a chip outside the catalog keeps the plain path
        return 1.0, 0.0, ""
    if not math.isfinite(float(getattr(hw, field))):
        return 1.0, 0.0, ""
    df = load("gemm_shapes")
    for chip in _measured_chips(hw):
        d = df[(df["hardware"] == chip) & df["precision"].astype(str).isin(PATH_PRECISIONS[field])]
        if d.empty or not _same_vendor(chip, hw):
            continue
        size = np.sqrt(d["n"].to_numpy(float) * d["k"].to_numpy(float))
        log_sp = np.log(d["speedup_vs_bf16"].to_numpy(float))
        w = np.asarray(_SIZE_W_GRID)[:, None]
        shape = np.log(size / (size + w))
        a = (log_sp - shape).mean(axis=1)  # the best scale for each half-way size
        sse = ((log_sp - shape - a[:, None]) ** 2).sum(axis=1)
        i = int(np.argmin(sse))
        acc = accelerator(chip)
        best = tensor_path_ratio(chip, field) * float(getattr(acc, field)) / float(acc.peak_bf16_flop_per_s)
        return float(np.exp(a[i]) / best), float(_SIZE_W_GRID[i]), chip
    return 1.0, 0.0, ""


def measured_fracs(hardware: str) -> dict[str, Any]:
    """Measured / datasheet HBM read bandwidth and bf16 GEMM throughput of a chip.

    From ``datasets/chip_microbench.csv``: the largest ``hbm_read_bytes_per_s`` row and the
    largest bf16 ``gemm_peak_flop_per_s`` row, over the accelerator's datasheet figures. A chip
    without a row borrows the fraction of a measured sibling (:data:`VENDOR_SIBLING`,
    :data:`ASSUMED_LIKE`; else the H200), and says so.

    Returns
    -------
    dict
        ``read_frac``, ``gemm_frac`` [fraction] and ``read_from``, ``gemm_from`` (chip names).
    """
    from ..catalog import accelerator, load

    df = load("chip_microbench")
    hw = accelerator(hardware)

    def frac(metric: str, datasheet: str, precision: str | None) -> tuple[float, str]:
        for chip in _measured_chips(hw):
            sel = df[(df["hardware"] == chip) & (df["metric"] == metric)]
            if precision:
                sel = sel[sel["precision"].astype(str) == precision]
            if len(sel):
                acc = accelerator(chip)
                return float(sel["value"].astype(float).max()) / float(getattr(acc, datasheet)), chip
        return float("nan"), ""

    r, rf = frac(READ_METRIC, "hbm_bytes_per_s", None)
    g, gf = frac(GEMM_METRIC, "peak_bf16_flop_per_s", "bf16")
    return {"read_frac": r, "gemm_frac": g, "read_from": rf, "gemm_from": gf}


@functools.lru_cache(maxsize=64)
def _default_profile(hardware: str, directory: str) -> Profile:
    path = Path(directory) / f"{hardware}.json"
    if path.exists():
        return _read(path)
    base = _read(Path(directory) / "h200.json")
    return transfer_profile(base, hardware)


def transfer_profile(base: Profile, hardware: str) -> Profile:
    """The H200 profile carried to another chip by its measured ceilings.

    Achievable bandwidth fractions (the KV read curve's both ends) scale with the chip's measured
    HBM read fraction over the H200's, the curve's half-way read size stays the H200's, GEMM and attention compute fractions with its measured large-GEMM fraction over the
    H200's (:func:`measured_fracs`); the eager per-kernel costs with its measured host time per
    eagerly launched op over the H200's (:func:`measured_launch`, where the chip or its sibling has
    one); graph and other per-kernel costs stay the H200's (a transfer assumption).
    """
    try:
        mine, ref = measured_fracs(hardware), measured_fracs(base.name)
    except Exception:  # noqa: BLE001 -- an uncatalogued chip keeps the plain transfer
        return base.replace(name=hardware, source=f"transferred from the H200 profile ({base.source})")
    kb = mine["read_frac"] / ref["read_frac"] if math.isfinite(mine["read_frac"]) else 1.0
    kf = mine["gemm_frac"] / ref["gemm_frac"] if math.isfinite(mine["gemm_frac"]) else 1.0
    (la, la_from), (lr, _) = measured_launch(hardware), measured_launch(base.name)
    ke = la / lr if math.isfinite(la) and math.isfinite(lr) and la_from != base.name else 1.0
    launch = (f"eager per-kernel costs x{ke:.3f} (eager op launch, from {la_from}), graph and other "
              "per-kernel costs transferred from the H200") if ke != 1.0 else "per-kernel costs transferred from the H200"
    clip = lambda x: min(max(x, 0.05), 1.0)  # noqa: E731
    return base.replace(
        name=hardware, weight_bw_frac=clip(base.weight_bw_frac * kb), kv_bw_frac=clip(base.kv_bw_frac * kb),
        kv_bw_small_frac=clip(base.kv_bw_small_frac * kb) if base.kv_bw_half_bytes > 0 else base.kv_bw_small_frac,
        flop_frac=clip(base.flop_frac * kf), attn_flop_frac=clip(base.attn_flop_frac * kf),
        eager_kernel_s=base.eager_kernel_s * ke, eager_busy_kernel_s=base.eager_busy_kernel_s * ke,
        source=(f"H200 profile scaled to {hardware} by measured ceilings (datasets/chip_microbench.csv): "
                f"bandwidth x{kb:.3f} (HBM read, from {mine['read_from']}), compute x{kf:.3f} "
                f"(bf16 GEMM, from {mine['gemm_from']}); {launch}"))


def _read(path: Path) -> Profile:
    import stat

    from ..io import read_text

    try:
        st = Path(path).stat()
    except OSError:  # let the reader say what is wrong, in one line
        read_text(path, "profile file")
        raise
    if not stat.S_ISREG(st.st_mode):  # refused by the reader, or a shell pipe read once (not cached)
        return Profile.from_json(read_text(path, "profile file"), origin=f"profile file {str(path)!r}")
    return _read_cached(str(path), st.st_mtime_ns, st.st_size)


@functools.lru_cache(maxsize=64)
def _read_cached(path: str, _mtime_ns: int, _size: int) -> Profile:
    from ..io import read_text

    return Profile.from_json(read_text(path, "profile file"), origin=f"profile file {path!r}")
