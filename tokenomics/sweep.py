"""Design-space sweeps: a grid file in, millions of priced configurations out, in chunks.

A grid is the Cartesian product of categorical axes (hardware, model, execution plan, workload,
cost model, precisions) and numeric axes (batch, context, utilization, margin, electricity
price). Categorical axes are few, so they are looped over; the numeric axes of one categorical
combination are evaluated by **one** broadcast call of :func:`tokenomics.chain.price` per chunk
(batch as a column vector, context as a row vector, prices as further axes), so a chunk of a
million configurations costs about as much as a few thousand step-time evaluations.

Chunks are deterministic (they depend only on the grid and ``chunk_configs``); every row has a
``config_id`` (its position in the full grid), so a sweep run on a Dask cluster
(:mod:`tokenomics.distributed`) gives exactly the rows of the single-process run, in the same
order. Results stream to Parquet (``pyarrow.parquet.ParquetWriter``) or CSV through a temporary
file that is renamed into place only when the last chunk is written: an interrupted sweep leaves
no output file.

Grid file (TOML)
----------------
::

    [grid]
    hardware = ["h200", "b200"]                 # catalog names
    model = ["llama-3.1-8b"]
    execution = ["graph", "engine"]              # default ["engine"], as tokenomics price
    workload = ["chat"]                          # default ["chat"]
    cost = ["default"]                           # default, bottom-up, a tier, or a flat "2.5" USD/chip-h
    weight_precision = ["native"]                # native = the model's own
    kv_precision = ["bf16"]
    batch = {start = 1, stop = 512, num = 64, scale = "log"}   # or a list
    context_tok = [1024, 4096, 16384]            # default: workload input + output / 2
    utilization_frac = {start = 0.3, stop = 1.0, num = 8}      # default from tco_params.csv
    margin_frac = [0.0, 0.3]                     # default from tco_params.csv
    electricity_usd_per_kwh = [0.05, 0.10]      # bottom-up cost only; default from tco_params.csv

    [slo]                                        # optional service-level objective
    min_tok_per_s_per_user = 30                  # decode speed each user sees [tok/s], at least
    max_ttft_s = 2.0                             # time to first token [s], at most

    [sweep]
    chunk_configs = 1000000                      # configurations per chunk

Every row keeps a ``meets_slo`` column (it fits and meets every ``[slo]`` bound; without an
``[slo]`` section it equals ``fits``); the per-combination summary counts ``n_meet_slo`` and
picks its cheapest configuration only among the rows that meet the SLO.

Limits (checked before any work): at most :data:`MAX_CONFIGS` configurations without
``force=True``, at most :data:`CSV_MAX_ROWS` rows to a CSV file (use Parquet beyond), and at most
:data:`IN_MEMORY_MAX_ROWS` rows for :func:`evaluate` (a DataFrame in memory).

Monte Carlo: :func:`monte_carlo` splits the draws into deterministic chunks seeded from one
:class:`numpy.random.SeedSequence`, so local and Dask runs agree sample for sample.
"""

from __future__ import annotations

import difflib
import functools
import itertools
import math
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from . import _validate as v
from ._display import Display
from .errors import TokenomicsError, UnknownNameError, ValidationError

#: Most configurations a sweep runs without ``force=True`` (about 10 minutes on 2 cores).
MAX_CONFIGS = 200_000_000
#: Most rows written to a CSV file (about 250 bytes a row: ~1.25 GB). Use Parquet beyond.
CSV_MAX_ROWS = 5_000_000
#: Most rows :func:`evaluate` returns as an in-memory DataFrame.
IN_MEMORY_MAX_ROWS = 2_000_000
#: Default configurations per chunk (one broadcast call each; ~200 MB of columns).
CHUNK_CONFIGS = 1_000_000
#: Most chunks a sweep runs without ``force=True`` (each costs ~1 ms of setup beyond its rows).
MAX_CHUNKS = 100_000
#: Most values on one numeric axis.
MAX_AXIS_LEN = 1_000_000
#: Most Monte Carlo draws of :func:`monte_carlo` (about 1.5 us a draw on one core: ~5 minutes).
MC_MAX_SAMPLES = 200_000_000
#: Most draws kept in memory (8 B each); beyond, percentiles are streamed from a histogram.
MC_KEEP_SAMPLES = 20_000_000

CATEGORICAL = ("hardware", "model", "execution", "workload", "cost", "weight_precision", "kv_precision",
               "system", "tp", "ep")
NUMERIC = ("batch", "context_tok", "utilization_frac", "margin_frac", "electricity_usd_per_kwh")
_CAT_DEFAULTS = {"execution": ("engine",), "workload": ("chat",), "cost": ("default",),
                 "weight_precision": ("native",), "kv_precision": ("bf16",)}
SLO_KEYS = ("min_tok_per_s_per_user", "max_ttft_s")
_SECTIONS = {"grid": CATEGORICAL + NUMERIC, "slo": SLO_KEYS, "sweep": ("chunk_configs",)}
_RANGE_KEYS = ("start", "stop", "num", "scale")

#: Output columns, in order (names as in :meth:`tokenomics.chain.PriceResult.to_frame`).
RESULT_COLUMNS = (
    "config_id", "hardware", "model", "execution", "workload", "cost_model", "weight_precision",
    "kv_precision", "system", "tp", "ep", "cost_basis", "batch", "context_tok", "utilization_frac", "margin_frac", "electricity_usd_per_kwh",
    "fits", "meets_slo", "bound", "tok_per_s_per_chip", "tok_per_s_per_user", "prefill_tok_per_s_per_chip", "ttft_s", "board_power_w",
    "cost_usd_per_chip_h", "usd_per_m_input_tok", "usd_per_m_output_tok",
    "usd_per_m_blended_tok", "energy_j_per_tok",
)
_PRICE_FIELDS = ("tok_per_s_per_chip", "tok_per_s_per_user", "prefill_tok_per_s_per_chip", "ttft_s", "board_power_w",
                 "cost_usd_per_chip_h", "usd_per_m_input_tok", "usd_per_m_output_tok",
                 "usd_per_m_blended_tok", "energy_j_per_tok")
_BOUNDS = ("communication", "compute", "host", "launch", "memory")


def _suggest(kind: str, key: str, known) -> TokenomicsError:
    close = difflib.get_close_matches(str(key), list(known), n=1, cutoff=0.5)
    hint = f" Did you mean {close[0]!r}?" if close else ""
    return ValidationError(f"Unknown {kind} {key!r}.{hint} Known: {', '.join(known)}")


def _numeric_axis(name: str, spec: Any) -> np.ndarray:
    """A numeric axis from a list or a ``{start, stop, num, scale}`` table."""
    if isinstance(spec, dict):
        for k in spec:
            if k not in _RANGE_KEYS:
                raise _suggest(f"key in {name}", k, _RANGE_KEYS)
        missing = [k for k in ("start", "stop", "num") if k not in spec]
        if missing:
            raise ValidationError(f"{name} range needs start, stop and num; missing {missing}")
        num = spec["num"]
        if isinstance(num, bool) or not isinstance(num, (int, float)):
            raise ValidationError(f"{name}.num must be a whole number, got {num!r}")
        v.count(num, f"{name}.num", minimum=0)
        if num > MAX_AXIS_LEN:
            raise ValidationError(f"{name}.num is {num:,}; an axis holds at most {MAX_AXIS_LEN:,} values")
        scale = spec.get("scale", "linear")
        if not isinstance(scale, str):
            raise ValidationError(f"{name}.scale must be \"linear\" or \"log\", got {scale!r}")
        v.one_of(scale, f"{name}.scale", ("linear", "log"))
        for key in ("start", "stop"):
            if isinstance(spec[key], bool) or not isinstance(spec[key], (int, float)):
                raise ValidationError(f"{name}.{key} must be a number, got {spec[key]!r}")
        lo, hi = v.finite(float(spec["start"]), f"{name}.start"), v.finite(float(spec["stop"]), f"{name}.stop")
        if scale == "log":
            v.positive([lo, hi], f"{name} (log scale) start/stop")
            arr = np.geomspace(lo, hi, int(num))
        else:
            arr = np.linspace(lo, hi, int(num))
    elif isinstance(spec, (list, tuple)):
        if len(spec) > MAX_AXIS_LEN:
            raise ValidationError(f"{name} has {len(spec):,} values; an axis holds at most {MAX_AXIS_LEN:,}")
        if any(isinstance(x, (bool, str)) for x in spec):
            raise ValidationError(f"{name} must be a list of numbers, got {spec!r:.80}")
        try:
            arr = np.asarray(spec, dtype=float)
        except (TypeError, ValueError):
            raise ValidationError(f"{name} must be a list of numbers, got {spec!r}") from None
        if arr.ndim != 1:
            raise ValidationError(f"{name} must be a flat list of numbers, got {spec!r:.80}")
    elif isinstance(spec, (int, float)) and not isinstance(spec, bool):
        arr = np.asarray([float(spec)])
    else:
        raise ValidationError(f"{name} must be a list of numbers or {{start, stop, num, scale}}, got {spec!r}")
    if arr.size == 0:
        raise ValidationError(f"axis {name!r} is empty; give it at least one value")
    if name in ("batch", "context_tok"):
        arr = np.unique(np.round(arr))  # integer axes: rounded, sorted, de-duplicated
        v.count(arr, name, minimum=1 if name == "batch" else 0)
    elif name == "utilization_frac":
        v.fraction(arr, name, allow_zero=False)
    elif name == "margin_frac":
        v.fraction(arr, name, allow_one=False)
    else:
        v.non_negative(arr, name)
    return arr


@dataclass(frozen=True, eq=False)
class Grid:
    """A sweep's design space: categorical axes (looped) x numeric axes (broadcast).

    Parameters
    ----------
    hardware, model : tuple of str
        Catalog names.
    execution, workload, cost, weight_precision, kv_precision : tuple of str
        Plans, workload mixes, cost models (``default``, ``bottom-up``, a tier such as
        ``hyperscaler-owned@2026-07``, or a flat USD per chip-hour as text), precisions
        (``native`` = the model's own).
    batch : ndarray
        Sequences decoded together [sequences].
    context_tok : ndarray or None
        Decode context [tokens]; None: the workload's input + output / 2.
    utilization_frac, margin_frac : ndarray or None
        Share of hours sold (0, 1] and gross margin [0, 1); None: ``tco_params.csv`` defaults.
    electricity_usd_per_kwh : ndarray or None
        Electricity price [USD/kWh] (bottom-up cost models only); None: the dataset default.
    system : tuple of str
        Multi-chip systems (``tokenomics systems``); ``none`` prices the bare accelerator. A
        system must be built from the grid's hardware.
    tp, ep : tuple of str
        Layouts (``auto`` = what :func:`tokenomics.deployment.resolve` picks, or an integer).
    min_tok_per_s_per_user : float or None
        Service-level objective: decode speed per user [tok/s] a row must reach to meet it.
    max_ttft_s : float or None
        Service-level objective: time to first token [s] a row must not exceed to meet it.
    chunk_configs : int
        Configurations per chunk.
    """

    hardware: tuple[str, ...]
    model: tuple[str, ...]
    batch: np.ndarray
    execution: tuple[str, ...] = ("engine",)
    workload: tuple[str, ...] = ("chat",)
    cost: tuple[str, ...] = ("default",)
    weight_precision: tuple[str, ...] = ("native",)
    kv_precision: tuple[str, ...] = ("bf16",)
    system: tuple[str, ...] = ("none",)
    tp: tuple[str, ...] = ("auto",)
    ep: tuple[str, ...] = ("auto",)
    context_tok: np.ndarray | None = None
    utilization_frac: np.ndarray | None = None
    margin_frac: np.ndarray | None = None
    electricity_usd_per_kwh: np.ndarray | None = None
    min_tok_per_s_per_user: float | None = None
    max_ttft_s: float | None = None
    chunk_configs: int = CHUNK_CONFIGS

    def __post_init__(self) -> None:
        for name in CATEGORICAL:
            vals = getattr(self, name)
            if isinstance(vals, str):
                vals = (vals,)
            if not isinstance(vals, (list, tuple)) or not all(isinstance(x, str) for x in vals):
                raise ValidationError(f"{name} must be a name or a list of names, got {vals!r:.80}")
            vals = tuple(vals)
            if not vals:
                raise ValidationError(f"axis {name!r} is empty; give it at least one value")
            object.__setattr__(self, name, vals)
        for name in ("tp", "ep"):
            for x in getattr(self, name):
                if x != "auto" and not (x.isascii() and x.isdigit() and int(x) >= 1):
                    raise ValidationError(f"{name} values must be 'auto' or whole numbers >= 1, got {x!r}")
        if any(x != "none" for x in self.system):
            from .perf.parallel import system as _system

            for sy in self.system:
                if sy == "none":
                    continue
                acc = _system(sy).accelerator.name
                bad = [h for h in self.hardware if h != acc]
                if bad:
                    raise ValidationError(f"system {sy} is built from {acc}; the hardware axis holds {bad}: "
                                          f"give hardware = [\"{acc}\"] with it (one grid per accelerator)")
        if self.batch is None:
            raise ValidationError("batch is required: give the batch axis (a list or a range)")
        for name in NUMERIC:
            val = getattr(self, name)
            if val is None:
                continue
            if isinstance(val, (str, bytes, dict)):
                raise ValidationError(f"{name} must be numbers, got {val!r:.80}")
            object.__setattr__(self, name, _numeric_axis(name, list(np.ravel(val))))
        for name in SLO_KEYS:
            val = getattr(self, name)
            if val is None:
                continue
            if isinstance(val, bool) or not isinstance(val, (int, float, np.integer, np.floating)) \
                    or not math.isfinite(float(val)) or float(val) <= 0:
                raise ValidationError(f"[slo] {name} must be a positive number "
                                      f"({'tok/s' if name.startswith('min_tok') else 'seconds'}), got {val!r:.80}")
            object.__setattr__(self, name, float(val))
        if isinstance(self.chunk_configs, (bool, str)):
            raise ValidationError(f"chunk_configs must be a whole number, got {self.chunk_configs!r}")
        v.count(self.chunk_configs, "chunk_configs")

    # -- shape ------------------------------------------------------------------------------
    @property
    def combos(self) -> list[tuple[str, ...]]:
        """Categorical combinations, in output order."""
        return list(itertools.product(*(getattr(self, n) for n in CATEGORICAL)))

    @property
    def numeric_shape(self) -> tuple[int, ...]:
        """Lengths of the numeric axes (1 for an axis left at its default)."""
        return tuple(1 if getattr(self, n) is None else len(getattr(self, n)) for n in NUMERIC)

    @property
    def n_configs(self) -> int:
        """Configurations in the grid."""
        return len(self.combos) * int(np.prod(self.numeric_shape))

    @property
    def n_chunks(self) -> int:
        """Chunks :meth:`iter_chunks` yields (computed without building them)."""
        nb, nc, *rest = self.numeric_shape
        inner = int(np.prod(rest))
        if nc * inner <= self.chunk_configs:
            per_combo = -(-nb // max(1, self.chunk_configs // (nc * inner)))
        else:
            per_combo = nb * -(-nc // max(1, self.chunk_configs // inner))
        n_combos = 1
        for name in CATEGORICAL:
            n_combos *= len(getattr(self, name))
        return n_combos * per_combo

    def iter_chunks(self) -> Iterator["Chunk"]:
        """Deterministic chunks, one at a time: slices of the batch axis (and of context when
        one batch row is larger than ``chunk_configs``) within each categorical combination."""
        nb, nc, *rest = self.numeric_shape
        inner = int(np.prod(rest))
        per_combo = nb * nc * inner
        i = 0
        for ci in range(len(self.combos)):
            base = ci * per_combo
            if nc * inner <= self.chunk_configs:
                step = max(1, self.chunk_configs // (nc * inner))
                for b0 in range(0, nb, step):
                    b1 = min(nb, b0 + step)
                    yield Chunk(i, ci, b0, b1, 0, nc, base + b0 * nc * inner)
                    i += 1
            else:
                cstep = max(1, self.chunk_configs // inner)
                for b0 in range(nb):
                    for c0 in range(0, nc, cstep):
                        c1 = min(nc, c0 + cstep)
                        yield Chunk(i, ci, b0, b0 + 1, c0, c1, base + (b0 * nc + c0) * inner)
                        i += 1

    def chunks(self) -> list["Chunk"]:
        """Every chunk of :meth:`iter_chunks`, as a list (small grids)."""
        return list(self.iter_chunks())

    def check(self, out: str | Path | None = None, *, force: bool = False, in_memory: bool = False) -> None:
        """Resolve every name and check the size limits; raises before any work starts."""
        force, in_memory = v.flag(force, "force"), v.flag(in_memory, "in_memory")
        from . import catalog
        from .chain import workload_mix as _workload
        from .econ.tco import CostInputs
        from .specs import plan as _plan, precision_bytes

        for h in self.hardware:
            catalog.accelerator(h)
        for m in self.model:
            catalog.model(m)
        for p in self.execution:
            _plan(p)
        for w in self.workload:
            _workload(w)
        for prec in self.weight_precision:
            if prec != "native":
                precision_bytes(prec)
        for prec in self.kv_precision:
            precision_bytes(prec)
        for h in self.hardware:
            for c in self.cost:
                cm = _cost_model(h, c, None)
                if self.electricity_usd_per_kwh is not None and not isinstance(cm, CostInputs):
                    raise ValidationError(
                        f"electricity_usd_per_kwh is an axis but cost {c!r} for {h} is a flat "
                        f"{cm.label} price with no electricity term; use cost = ['bottom-up']")
        n = self.n_configs
        if out is not None:
            suffix = Path(out).suffix.lower()
            if suffix not in (".parquet", ".csv"):
                raise ValidationError(f"sweep output must end in .parquet or .csv, got {Path(out).name!r}")
            if suffix == ".csv" and n > CSV_MAX_ROWS:
                raise ValidationError(f"grid has {n:,} configurations; CSV output is limited to "
                                      f"{CSV_MAX_ROWS:,} rows. Hint: write .parquet instead")
        if in_memory and n > IN_MEMORY_MAX_ROWS:
            raise ValidationError(f"grid has {n:,} configurations; an in-memory DataFrame is limited to "
                                  f"{IN_MEMORY_MAX_ROWS:,} rows. Hint: stream to a file with run(grid, out=...)")
        if n > MAX_CONFIGS and not force:
            raise ValidationError(f"grid has {n:,} configurations, more than {MAX_CONFIGS:,}. "
                                  f"Hint: shrink an axis, or pass --force")
        nch = self.n_chunks
        if nch > MAX_CHUNKS and not force:
            raise ValidationError(f"grid splits into {nch:,} chunks of at most {self.chunk_configs:,} configurations "
                                  f"(more than {MAX_CHUNKS:,}, ~{nch / 1000 / 60:,.0f} min of chunk overhead). "
                                  f"Hint: raise [sweep] chunk_configs, or pass --force")

    def to_dict(self) -> dict[str, Any]:
        """The grid as a TOML-like dict (numeric axes as lists)."""
        g: dict[str, Any] = {n: list(getattr(self, n)) for n in CATEGORICAL}
        for n in NUMERIC:
            val = getattr(self, n)
            if val is not None:
                g[n] = val.tolist()
        doc = {"grid": g, "sweep": {"chunk_configs": self.chunk_configs}}
        slo = {n: getattr(self, n) for n in SLO_KEYS if getattr(self, n) is not None}
        if slo:
            doc["slo"] = slo
        return doc


@dataclass(frozen=True)
class Chunk:
    """One unit of work: a categorical combination and a batch (x context) slice."""

    index: int
    combo: int
    b0: int
    b1: int
    c0: int
    c1: int
    first_id: int


def parse_grid(doc: dict[str, Any]) -> Grid:
    """Build a :class:`Grid` from a parsed grid document (``{"grid": {...}, "sweep": {...}}``).

    Unknown sections or keys raise a one-line error with the closest known name.
    """
    if not isinstance(doc, dict):
        raise ValidationError(f"grid document must be a table, got {type(doc).__name__}")
    for sec in doc:
        if sec not in _SECTIONS:
            raise _suggest("grid file section", sec, tuple(_SECTIONS))
        if not isinstance(doc[sec], dict):
            raise ValidationError(f"[{sec}] must be a table of keys")
        for key in doc[sec]:
            if sec != "slo" and key in SLO_KEYS:
                raise ValidationError(f"{key} is a service-level objective, not a [{sec}] key: "
                                      f"put it under an [slo] section")
            if key not in _SECTIONS[sec]:
                raise _suggest(f"key in [{sec}]", key, _SECTIONS[sec])
    g = dict(doc.get("grid", {}))
    for req in ("hardware", "model", "batch"):
        if req not in g:
            raise ValidationError(f"grid file needs [grid] {req} = [...]; it is missing")
    kw: dict[str, Any] = {}
    for name in CATEGORICAL:
        if name in g:
            val = g[name]
            val = [val] if isinstance(val, (str, int, float)) else val
            if not isinstance(val, (list, tuple)) or not all(isinstance(x, (str, int, float)) for x in val):
                raise ValidationError(f"{name} must be a list of names, got {val!r:.80}")
            if not val:
                raise ValidationError(f"axis {name!r} is empty; give it at least one value")
            kw[name] = tuple(str(x) for x in val)
    for name in NUMERIC:
        if name in g:
            if name in ("batch", "context_tok") and isinstance(g[name], list) and g[name] \
                    and not any(isinstance(x, (bool, str)) for x in g[name]):
                v.count(g[name], name, minimum=1 if name == "batch" else 0)  # listed: whole (a range is rounded)
            kw[name] = _numeric_axis(name, g[name])
    if "chunk_configs" in doc.get("sweep", {}):
        cc = doc["sweep"]["chunk_configs"]
        if isinstance(cc, bool) or not isinstance(cc, (int, float)):
            raise ValidationError(f"[sweep] chunk_configs must be a whole number, got {cc!r}")
        kw["chunk_configs"] = cc
    for name in SLO_KEYS:
        if name in doc.get("slo", {}):
            kw[name] = doc["slo"][name]
    return Grid(**kw)


def load_grid(path: str | Path) -> Grid:
    """Read a TOML grid file (see the module docstring)."""
    from .io import load_document

    if not isinstance(path, (str, Path)):
        raise ValidationError(f"grid file must be a path, got {type(path).__name__}")
    p = Path(path)
    try:  # read capped, parsed, nesting at most io.MAX_NESTING deep
        doc = load_document(p, "grid file", "toml")
    except TokenomicsError as exc:  # kept a ValidationError, as before
        raise ValidationError(str(exc)) from None
    try:
        return parse_grid(doc)
    except UnknownNameError as exc:  # the file named in front of what is wrong in it
        raise type(exc)(f"grid file {str(p)!r}: {exc}") from None
    except ValidationError as exc:
        raise ValidationError(f"grid file {str(p)!r}: {exc}") from None


# -- evaluation ------------------------------------------------------------------------------

@functools.lru_cache(maxsize=256)
def _cost_model(hardware: str, cost: str, electricity: tuple | None):
    from .econ.tco import cost_model

    if cost == "default":
        cm = cost_model(hardware, None)
    else:
        cm = cost_model(hardware, cost)
    if electricity is not None:
        cm = cm.replace(electricity_usd_per_kwh=np.asarray(electricity, float).reshape(1, 1, 1, 1, -1))
    return cm


@functools.lru_cache(maxsize=256)
def _combo_setup(combo: tuple[str, ...], electricity: tuple | None) -> dict[str, Any]:
    """Resolved specs and scalar results shared by every chunk of a combination."""
    from . import catalog
    from .chain import workload_mix as _workload
    from .econ.power import power_model
    from .econ.tco import param
    from .perf import prefill
    from .specs import plan as _plan

    from .chain import cost_basis
    from .deployment import resolve

    h, m, e, w, c, wp, kp, sy, tp, ep = combo
    hw, mdl, pl = catalog.accelerator(h), catalog.model(m), _plan(e)
    wprec = None if wp == "native" else wp
    in_tok, out_tok = _workload(w)
    cm = _cost_model(h, c, electricity)
    try:
        pm = power_model(hw)
    except TokenomicsError:
        pm = None
    layout = {"tp": None if tp == "auto" else int(tp), "ep": None if ep == "auto" else int(ep)}
    if sy == "none" and layout["tp"] is None and layout["ep"] is None:
        from .perf.parallel import ParallelPlan
        from .deployment import Deployment, _one_chip_system

        # one chip, as the sweep has always priced a bare accelerator
        dense, expert = (wprec or mdl.dense_precision or mdl.native_precision), (wprec or mdl.native_precision)
        dep = Deployment(model=mdl, system=_one_chip_system(hw), parallel=ParallelPlan(), execution=pl,
                         weight_precision=dense, expert_precision=expert, kv_precision=kp)
    else:
        dep = resolve(mdl, hardware=hw if sy == "none" else None, system=None if sy == "none" else sy,
                      execution=pl, weight_precision=wprec, kv_precision=kp, **layout)
    pre = prefill(hw, mdl, pl, prompt_tok=in_tok, batch=1, weight_precision=wprec, kv_precision=kp,
                  tp=dep.parallel.tp, ep=dep.parallel.ep, attn_dp=dep.parallel.attn_dp, on_oom="mask")
    return dict(hw=hw, model=mdl, plan=pl, wprec=wprec or mdl.native_precision, wprec_arg=wprec, kp=kp,
                workload=w, in_tok=in_tok, out_tok=out_tok, cost=cm, power=pm, deployment=dep,
                cost_basis=cost_basis(cm), prefill_fits=bool(np.all(pre.fits)),
                util_default=param("utilization_frac"), margin_default=param("margin_frac"))


def _axis(grid: Grid, name: str, default: Any) -> np.ndarray:
    val = getattr(grid, name)
    return np.asarray([default], float) if val is None else val


def _evaluate_chunk(grid: Grid, chunk: Chunk):
    """Evaluate one chunk; returns ``(pyarrow.Table, summary dict)``."""
    import pyarrow as pa

    from .chain import price

    combo = grid.combos[chunk.combo]
    elec = None if grid.electricity_usd_per_kwh is None else tuple(grid.electricity_usd_per_kwh.tolist())
    s = _combo_setup(combo, elec)
    b = _axis(grid, "batch", 1)[chunk.b0:chunk.b1]
    c = _axis(grid, "context_tok", s["in_tok"] + s["out_tok"] // 2)[chunk.c0:chunk.c1]
    u = _axis(grid, "utilization_frac", s["util_default"])
    mg = _axis(grid, "margin_frac", s["margin_default"])
    if grid.electricity_usd_per_kwh is None:
        cm = s["cost"]
        e = np.asarray([getattr(cm, "electricity_usd_per_kwh", np.nan)], float)
    else:
        e = grid.electricity_usd_per_kwh
    shape = (b.size, c.size, u.size, mg.size, e.size)
    n = int(np.prod(shape))
    B, C = b.reshape(-1, 1, 1, 1, 1), c.reshape(1, -1, 1, 1, 1)
    U, M = u.reshape(1, 1, -1, 1, 1), mg.reshape(1, 1, 1, -1, 1)
    cols: dict[str, np.ndarray] = {}
    if s["prefill_fits"]:
        r = price(deployment=s["deployment"], batch=B, context_tok=C, workload=s["workload"],
                  cost=s["cost"], utilization_frac=U, margin_frac=M, power=s["power"], on_oom="mask")
        vals = {"tok_per_s_per_chip": r.tok_per_s_per_chip, "tok_per_s_per_user": r.tok_per_s_per_user,
                "prefill_tok_per_s_per_chip": r.prefill_tok_per_s_per_chip, "ttft_s": r.ttft_s, "board_power_w": r.board_power_w,
                "cost_usd_per_chip_h": r.cost_usd_per_chip_h,
                "usd_per_m_input_tok": r.usd_per_m_input_tok,
                "usd_per_m_output_tok": r.usd_per_m_output_tok,
                "usd_per_m_blended_tok": r.usd_per_m_blended_tok,
                "energy_j_per_tok": r.energy_j_per_tok}
        bound = np.asarray(r.bound)
        cost_label = r.cost_label
    else:  # the model does not fit even for one prompt: nothing is priced
        vals = {k: np.nan for k in _PRICE_FIELDS}
        bound = np.asarray("memory")
        cost_label = getattr(s["cost"], "label", "custom")

    def flat(a, dtype=float):
        a = np.asarray(a, dtype=dtype)
        if a.ndim < 5:
            a = a.reshape(a.shape + (1,) * (5 - a.ndim)) if a.ndim else a
        return np.broadcast_to(a, shape).ravel()

    def const(value: str):
        return pa.DictionaryArray.from_arrays(np.zeros(n, np.int8), pa.array([value]))

    cols["config_id"] = np.arange(chunk.first_id, chunk.first_id + n, dtype=np.int64)
    for name, value in (("hardware", combo[0]), ("model", combo[1]), ("execution", combo[2]),
                        ("workload", combo[3]), ("cost_model", cost_label), ("weight_precision", s["wprec"]),
                        ("kv_precision", s["kp"]), ("system", combo[7]), ("cost_basis", s["cost_basis"])):
        cols[name] = const(value)
    cols["tp"] = np.full(n, s["deployment"].parallel.tp, np.int64)
    cols["ep"] = np.full(n, s["deployment"].parallel.ep, np.int64)
    cols["batch"] = flat(B, np.int64)
    cols["context_tok"] = flat(C, np.int64)
    cols["utilization_frac"] = flat(U)
    cols["margin_frac"] = flat(M)
    cols["electricity_usd_per_kwh"] = flat(e.reshape(1, 1, 1, 1, -1))
    tps = flat(vals["tok_per_s_per_chip"])
    cols["fits"] = np.isfinite(tps)
    codes = np.searchsorted(np.asarray(_BOUNDS), bound).astype(np.int8)
    cols["bound"] = pa.DictionaryArray.from_arrays(flat(codes, np.int8), pa.array(_BOUNDS))
    cols["tok_per_s_per_chip"] = tps
    for k in RESULT_COLUMNS[RESULT_COLUMNS.index("tok_per_s_per_user"):]:
        cols[k] = flat(vals[k])
    cols["meets_slo"] = meets_slo(cols["fits"], cols["tok_per_s_per_user"], cols["ttft_s"],
                                  grid.min_tok_per_s_per_user, grid.max_ttft_s)
    table = pa.table({k: cols[k] for k in RESULT_COLUMNS})
    return table, _chunk_summary(chunk, cols, n)


def meets_slo(fits, tok_per_s_per_user, ttft_s, min_tok_per_s_per_user: float | None = None,
              max_ttft_s: float | None = None) -> np.ndarray:
    """Which configurations meet a service-level objective (vectorized over any shape).

    Parameters
    ----------
    fits : array of bool
        The configuration fits in memory.
    tok_per_s_per_user : array
        Decode speed each user sees [tok/s].
    ttft_s : array
        Time to first token [s].
    min_tok_per_s_per_user, max_ttft_s : float or None
        The objective's bounds [tok/s], [s]; None: no bound. An unpriced (NaN) value misses a bound.

    Returns
    -------
    ndarray of bool
    """
    ok = np.asarray(fits, bool).copy()
    if min_tok_per_s_per_user is not None:
        ok &= np.asarray(tok_per_s_per_user, float) >= min_tok_per_s_per_user
    if max_ttft_s is not None:
        ok &= np.asarray(ttft_s, float) <= max_ttft_s
    return ok


def _chunk_summary(chunk: Chunk, cols: dict[str, Any], n: int) -> dict[str, Any]:
    ok = cols["meets_slo"]
    price_out = np.where(ok, cols["usd_per_m_output_tok"], np.nan)
    n_fit = int(np.count_nonzero(cols["fits"]))
    n_ok = int(np.count_nonzero(ok))
    out = {"combo": chunk.combo, "n_configs": n, "n_fit": n_fit, "n_meet_slo": n_ok, "best_usd_per_m_output_tok": np.nan,
           "best_config_id": -1, "best_batch": -1, "best_context_tok": -1, "best_utilization_frac": np.nan,
           "best_margin_frac": np.nan, "max_tok_per_s_per_chip": np.nan}
    if n_ok and np.isfinite(price_out).any():
        i = int(np.nanargmin(price_out))
        out.update(best_usd_per_m_output_tok=float(price_out[i]),
                   best_config_id=int(cols["config_id"][i]), best_batch=int(cols["batch"][i]),
                   best_context_tok=int(cols["context_tok"][i]),
                   best_utilization_frac=float(cols["utilization_frac"][i]),
                   best_margin_frac=float(cols["margin_frac"][i]),
                   max_tok_per_s_per_chip=float(np.nanmax(np.where(ok, cols["tok_per_s_per_chip"], np.nan))))
    return out


def _merge(acc: dict[str, Any] | None, new: dict[str, Any]) -> dict[str, Any]:
    """Fold chunk summaries in chunk order (ties keep the earlier configuration)."""
    if acc is None:
        return dict(new)
    out = dict(acc)
    out["n_configs"] += new["n_configs"]
    out["n_fit"] += new["n_fit"]
    out["n_meet_slo"] += new["n_meet_slo"]
    if np.isfinite(new["best_usd_per_m_output_tok"]) and not (
            new["best_usd_per_m_output_tok"] >= acc["best_usd_per_m_output_tok"]):
        for k in new:
            if k.startswith("best_"):
                out[k] = new[k]
    out["max_tok_per_s_per_chip"] = float(np.nanmax([acc["max_tok_per_s_per_chip"], new["max_tok_per_s_per_chip"]])) if (
        np.isfinite(acc["max_tok_per_s_per_chip"]) or np.isfinite(new["max_tok_per_s_per_chip"])) else np.nan
    return out


@dataclass(frozen=True, repr=False)
class SweepResult(Display):
    """What a sweep did: per-combination summary, size, time and where the rows went.

    Attributes
    ----------
    summary : pandas.DataFrame
        One row per categorical combination: n_configs, n_fit, n_meet_slo (rows that fit and meet
        the grid's ``[slo]``; all fitting rows without one), the cheapest output-token price among
        them (``best_usd_per_m_output_tok`` [USD/M tokens]) and the configuration that reaches it,
        and their highest tok/s per chip.
    n_configs, n_chunks : int
    elapsed_s : float
        Wall time of the evaluation and writing [s].
    configs_per_s : float
        ``n_configs / elapsed_s`` [configurations/s].
    engine : str
        ``local`` or ``dask``.
    out : str or None
        Output file, if any.
    """

    summary: Any = field(repr=False)
    n_configs: int
    n_chunks: int
    elapsed_s: float
    configs_per_s: float
    engine: str
    out: str | None

    def to_frame(self):
        """The per-combination summary (pandas DataFrame)."""
        return self.summary.copy()


def result_schema():
    """The Arrow schema of sweep rows (categorical columns dictionary-encoded)."""
    import pyarrow as pa

    d = pa.dictionary(pa.int8(), pa.string())
    types = {"config_id": pa.int64(), "batch": pa.int64(), "context_tok": pa.int64(), "fits": pa.bool_(),
             "meets_slo": pa.bool_(),
             "tp": pa.int64(), "ep": pa.int64()}
    cat = {"hardware", "model", "execution", "workload", "cost_model", "weight_precision", "kv_precision", "bound",
           "system", "cost_basis"}
    return pa.schema([(c, d if c in cat else types.get(c, pa.float64())) for c in RESULT_COLUMNS])


class _Sink:
    """Streams chunk tables to a Parquet or CSV file opened on a temporary path."""

    def __init__(self, tmp: Path, suffix: str, per: str = "m"):
        import pyarrow as pa

        self.suffix, self.per = suffix, per
        self.schema = result_schema()
        if per != "m":  # prices per thousand tokens, as asked: usd_per_k_* columns
            self.schema = pa.schema([f.with_name(f.name.replace("usd_per_m_", "usd_per_k_")) for f in self.schema])
        if suffix == ".parquet":
            import pyarrow.parquet as pq

            # dictionary-encode only the categorical columns: trying it on float columns costs 3x
            cat = [f.name for f in self.schema if pa.types.is_dictionary(f.type)]
            self.writer = pq.ParquetWriter(str(tmp), self.schema, compression="snappy", use_dictionary=cat)
        else:
            import pyarrow.csv as pcsv

            self.plain = pa.schema([(f.name, pa.string() if pa.types.is_dictionary(f.type) else f.type)
                                    for f in self.schema])
            self.writer = pcsv.CSVWriter(str(tmp), self.plain)

    def write(self, table) -> None:
        if self.per != "m":
            table = _per_thousand_table(table)
        if self.suffix == ".parquet":
            self.writer.write_table(table.cast(self.schema))
        else:
            self.writer.write_table(table.cast(self.plain))

    def close(self) -> None:
        self.writer.close()


def _as_grid(grid: Any) -> Grid:
    """A Grid, or one read from a TOML path or parsed from a dict; anything else is an error."""
    if isinstance(grid, Grid):
        return grid
    if isinstance(grid, (str, Path)):
        return load_grid(grid)
    if isinstance(grid, dict):
        return parse_grid(grid)
    raise ValidationError(f"grid must be a Grid, a TOML path or a grid dict, got {type(grid).__name__}")


def iter_chunks(grid: Grid, *, engine: str = "local", scheduler: str | None = None,
                n_workers: int = 2, processes: bool = True,
                dask_client: Any = None) -> Iterator[tuple[Any, dict[str, Any]]]:
    """Evaluate every chunk in order; yields ``(pyarrow.Table, summary)`` per chunk.

    ``dask_client`` (a ``distributed.Client``) reuses a running cluster for the dask engine.
    """
    grid = _as_grid(grid)
    v.one_of(engine, "engine", ("local", "dask"))
    chunks = grid.iter_chunks()
    fn = functools.partial(_evaluate_chunk, grid)
    if engine == "local":
        return (fn(ch) for ch in chunks)
    from .distributed import map_ordered

    return map_ordered(fn, chunks, scheduler=scheduler, n_workers=n_workers, processes=processes,
                       dask_client=dask_client)


def run(grid: Grid, out: str | Path | None = None, *, engine: str = "local", scheduler: str | None = None,
        n_workers: int = 2, processes: bool = True, force: bool = False,
        progress: Callable[[int, int], None] | None = None, dask_client: Any = None,
        per: str = "m") -> SweepResult:
    """Evaluate a grid chunk by chunk, streaming rows to ``out`` (``.parquet`` or ``.csv``).

    Prices are in USD per million tokens (``usd_per_m_*`` columns); ``per="1k"`` writes and
    summarizes them per thousand tokens instead (``usd_per_k_*``).

    Parameters
    ----------
    grid : Grid
        The design space (:func:`load_grid`, :func:`parse_grid`).
    out : path, optional
        Output file; written to a temporary file renamed into place at the end, so an
        interrupted sweep leaves no file. Without it only the summary is kept.
    engine : {"local", "dask"}
        Single process, or a dask.distributed cluster (``scheduler`` address, else a
        LocalCluster of ``n_workers`` workers). Both give identical rows.
    force : bool
        Allow more than :data:`MAX_CONFIGS` configurations.
    dask_client : distributed.Client, optional
        Reuse a running cluster (dask engine) instead of starting one.
    progress : callable, optional
        Called as ``progress(configs_done, configs_total)`` after each chunk.

    Returns
    -------
    SweepResult
    """
    import pandas as pd

    from .io import atomic_path

    grid = _as_grid(grid)
    v.one_of(engine, "engine", ("local", "dask"))
    from .units import PER_UNITS, in_unit

    v.one_of(per, "per", PER_UNITS)
    force, processes = v.flag(force, "force"), v.flag(processes, "processes")
    if engine == "dask" and dask_client is None:
        from .distributed import check_cluster_args

        check_cluster_args(scheduler, n_workers)
    if out is not None:
        from .io import check_output

        check_output(out, suffixes=(".parquet", ".csv"), what="sweep output")
    grid.check(out, force=force)
    total = grid.n_configs
    combos = grid.combos
    t0 = time.perf_counter()
    summaries: dict[int, dict[str, Any]] = {}
    done = 0
    n_chunks = 0

    def consume(sink: _Sink | None) -> None:
        nonlocal done, n_chunks
        for table, summ in iter_chunks(grid, engine=engine, scheduler=scheduler, n_workers=n_workers,
                                       processes=processes, dask_client=dask_client):
            if sink is not None:
                sink.write(table)
            summaries[summ["combo"]] = _merge(summaries.get(summ["combo"]), summ)
            done += summ["n_configs"]
            n_chunks += 1
            del table
            if progress is not None:
                progress(done, total)

    if out is None:
        consume(None)
    else:
        with atomic_path(out) as tmp:
            sink = _Sink(tmp, Path(out).suffix.lower(), per=per)
            try:
                consume(sink)
            finally:
                sink.close()
    elapsed = time.perf_counter() - t0
    rows = []
    for ci, combo in enumerate(combos):
        s = dict(summaries[ci])
        s.pop("combo")
        rows.append({**dict(zip(CATEGORICAL, combo)), **s})
    summary = in_unit(pd.DataFrame(rows), per)
    return SweepResult(summary, total, n_chunks, elapsed, total / elapsed if elapsed > 0 else math.inf,
                       engine, None if out is None else str(out))


def _per_thousand_table(table):
    """A chunk's rows with prices per thousand tokens: ``usd_per_m_*`` -> ``usd_per_k_*`` (/ 1,000)."""
    import pyarrow.compute as pc

    for i, name in enumerate(table.column_names):
        if "usd_per_m_" in name:
            table = table.set_column(i, name.replace("usd_per_m_", "usd_per_k_"),
                                     pc.divide(table.column(i), 1e3))
    return table


def evaluate(grid: Grid, *, engine: str = "local", scheduler: str | None = None, n_workers: int = 2,
             processes: bool = True, dask_client: Any = None):
    """Every configuration of a (small) grid as one DataFrame (at most :data:`IN_MEMORY_MAX_ROWS`)."""
    import pyarrow as pa

    grid = _as_grid(grid)
    grid.check(in_memory=True)
    tables = [t for t, _ in iter_chunks(grid, engine=engine, scheduler=scheduler, n_workers=n_workers,
                                        processes=processes, dask_client=dask_client)]
    schema = result_schema()
    return pa.concat_tables([t.cast(schema) for t in tables]).to_pandas()


def evaluate_loop(grid: Grid, config_ids) -> Any:
    """The same configurations, one Python call each (the baseline the benchmark compares with).

    Each configuration is priced by its own :func:`tokenomics.chain.price` call with scalar
    batch, context, utilization and margin; specs, cost and power models are resolved once per
    combination, as a fair loop would. Returns a DataFrame with ``config_id``, ``bound`` and the
    numeric result columns of :func:`evaluate`.
    """
    import pandas as pd

    from .chain import price

    nb, nc, nu, nm, ne = grid.numeric_shape
    per_combo = nb * nc * nu * nm * ne
    elec = None if grid.electricity_usd_per_kwh is None else tuple(grid.electricity_usd_per_kwh.tolist())
    rows = []
    for cid in np.asarray(config_ids, dtype=np.int64).ravel():
        ci, rest = divmod(int(cid), per_combo)
        ib, ic, iu, im, ie = (int(i) for i in np.unravel_index(rest, (nb, nc, nu, nm, ne)))
        s = _combo_setup(grid.combos[ci], elec)
        b = float(_axis(grid, "batch", 1)[ib])
        c = float(_axis(grid, "context_tok", s["in_tok"] + s["out_tok"] // 2)[ic])
        u = float(_axis(grid, "utilization_frac", s["util_default"])[iu])
        m = float(_axis(grid, "margin_frac", s["margin_default"])[im])
        cm = s["cost"]
        if elec is not None:
            cm = cm.replace(electricity_usd_per_kwh=float(elec[ie]))
        row = {"config_id": int(cid), "batch": int(b), "context_tok": int(c), "utilization_frac": u,
               "margin_frac": m, "electricity_usd_per_kwh": float(getattr(cm, "electricity_usd_per_kwh", np.nan))}
        if s["prefill_fits"]:
            r = price(deployment=s["deployment"], batch=int(b), context_tok=int(c), workload=s["workload"],
                      cost=cm, utilization_frac=u, margin_frac=m, power=s["power"], on_oom="mask")
            row.update({k: float(np.asarray(getattr(r, k))) for k in _PRICE_FIELDS})
            row["bound"] = str(np.asarray(r.bound))
        else:
            row.update({k: np.nan for k in _PRICE_FIELDS})
            row["bound"] = "memory"
        row["fits"] = bool(np.isfinite(row["tok_per_s_per_chip"]))
        row["meets_slo"] = bool(meets_slo(row["fits"], row["tok_per_s_per_user"], row["ttft_s"],
                                          grid.min_tok_per_s_per_user, grid.max_ttft_s))
        rows.append(row)
    return pd.DataFrame(rows)


# -- Monte Carlo -----------------------------------------------------------------------------

@dataclass(frozen=True, repr=False)
class MonteCarloSweep(Display):
    """A chunked, seeded Monte Carlo of the price per output token (``to_frame()``: USD per million tokens).

    Attributes
    ----------
    samples_usd_per_1k_tok : ndarray or None
        Every draw, in chunk order [USD/1K tokens]; None beyond :data:`MC_KEEP_SAMPLES` draws
        (the percentiles are then streamed).
    p5, p50, p95 : float
        Percentiles [USD/1K tokens]: exact when the draws are kept, else from a streamed
        histogram of 2^16 log-spaced bins (relative error below 1e-4).
    seed, n_chunks : int
    engine : str
    elapsed_s : float
    n_samples : int
        Draws made.
    """

    samples_usd_per_1k_tok: np.ndarray | None = field(repr=False)
    p5: float
    p50: float
    p95: float
    seed: int
    n_chunks: int
    engine: str
    elapsed_s: float
    n_samples: int = 0

    def to_frame(self):
        import pandas as pd

        n = self.n_samples or (0 if self.samples_usd_per_1k_tok is None else self.samples_usd_per_1k_tok.size)
        from .units import per_million

        return per_million(pd.DataFrame([{"n_samples": n, "seed": self.seed,
                                          "n_chunks": self.n_chunks, "engine": self.engine,
                                          "price_usd_per_1k_tok_p5": self.p5, "price_usd_per_1k_tok_p50": self.p50,
                                          "price_usd_per_1k_tok_p95": self.p95}]))


def _mc_chunk(args):
    cost, power, tps, util, margin, n, seed = args
    from .econ.uncertainty import monte_carlo as mc

    return mc(cost, power, tps, utilization_frac=util, margin_frac=margin, n_samples=n,
              seed=seed).samples_usd_per_1k_tok


def monte_carlo(cost: Any, board_power_w: float, tok_per_s_per_chip: float, *, n_samples: int = 1_000_000,
                seed: int = 0, chunk_samples: int = 250_000, utilization_frac: float = 1.0,
                margin_frac: float = 0.0, engine: str = "local", scheduler: str | None = None,
                n_workers: int = 2, processes: bool = True, dask_client: Any = None) -> MonteCarloSweep:
    """Seeded Monte Carlo of :func:`tokenomics.econ.uncertainty.monte_carlo`, split into chunks.

    Chunk ``i`` draws ``chunk_samples`` samples with the seed
    ``SeedSequence(seed).spawn(n_chunks)[i]``: the chunking and the seeds depend only on
    ``n_samples``, ``chunk_samples`` and ``seed``, so the local and Dask engines return the
    same samples in the same order. (The stream differs from one unchunked call with ``seed``.)
    """
    n, cs = _check_mc_args(n_samples, chunk_samples, seed, engine, scheduler, n_workers)
    n_chunks = math.ceil(n / cs)
    sizes = [cs] * (n_chunks - 1) + [n - cs * (n_chunks - 1)]
    if len(sizes) > 1 and sizes[-1] < 10:  # fold a tiny tail into the chunk before it
        tail = sizes.pop()
        sizes[-1] += tail
        n_chunks -= 1
    seeds = [int(s.generate_state(1, np.uint32)[0]) for s in np.random.SeedSequence(int(seed)).spawn(n_chunks)]
    work = ((cost, board_power_w, tok_per_s_per_chip, utilization_frac, margin_frac, k, s)
            for k, s in zip(sizes, seeds))
    t0 = time.perf_counter()
    if engine == "local":
        parts = (_mc_chunk(w) for w in work)
    else:
        from .distributed import map_ordered

        parts = map_ordered(_mc_chunk, work, scheduler=scheduler, n_workers=n_workers, processes=processes,
                            dask_client=dask_client)
    if n <= MC_KEEP_SAMPLES:
        samples = np.concatenate(list(parts))
        p5, p50, p95 = np.percentile(samples, [5, 50, 95])
    else:
        samples = None
        p5, p50, p95 = _streamed_percentiles(parts, (5, 50, 95))
    return MonteCarloSweep(samples, float(p5), float(p50), float(p95), int(seed), n_chunks, engine,
                           time.perf_counter() - t0, n)


#: Most draws in one chunk (about 100 B of working memory a draw).
MC_MAX_CHUNK_SAMPLES = 5_000_000
#: Most chunks of one Monte Carlo run.
MC_MAX_CHUNKS = 100_000
#: Measured cost of one draw on one core (econ.uncertainty.monte_carlo; 1.46 us on the dev box) [s].
MC_S_PER_SAMPLE = 1.5e-6


def _check_mc_args(n_samples, chunk_samples, seed, engine, scheduler, n_workers) -> tuple[int, int]:
    """Check Monte Carlo sizes before any draw; returns (n_samples, chunk_samples) as ints."""
    v.draws(n_samples, "n_samples")  # P5-P95
    v.whole(chunk_samples, "chunk_samples", minimum=10)
    v.seed(seed)
    v.one_of(engine, "engine", ("local", "dask"))
    n, cs = int(n_samples), int(chunk_samples)
    if n > MC_MAX_SAMPLES:
        raise ValidationError(f"n_samples {n:,} would take ~{n * MC_S_PER_SAMPLE / 3600:,.1f} h on one core; "
                              f"at most {MC_MAX_SAMPLES:,} draws (~{MC_MAX_SAMPLES * MC_S_PER_SAMPLE / 60:.0f} min)")
    if cs > MC_MAX_CHUNK_SAMPLES:
        raise ValidationError(f"chunk_samples {cs:,} would need ~{cs * 100 / 1e9:.1f} GB per chunk; "
                              f"at most {MC_MAX_CHUNK_SAMPLES:,}")
    if math.ceil(n / cs) > MC_MAX_CHUNKS:
        raise ValidationError(f"{n:,} draws in chunks of {cs:,} make {math.ceil(n / cs):,} chunks; at most "
                              f"{MC_MAX_CHUNKS:,}. Hint: raise chunk_samples")
    if engine == "dask":
        from .distributed import check_cluster_args

        check_cluster_args(scheduler, n_workers)
    return n, cs


def _streamed_percentiles(parts, qs) -> list[float]:
    """Percentiles of every value of an iterable of arrays, holding one array at a time.

    The first array sets 2^16 log-spaced bins over [min / 4, max x 4] (prices are positive);
    later values outside fall into end bins counted at the range's edge. Within a bin the
    value is interpolated linearly in log space.
    """
    counts = None
    edges = None
    for a in parts:
        a = np.asarray(a, float)
        a = a[np.isfinite(a) & (a > 0)]
        if counts is None:
            if a.size == 0:
                continue
            lo, hi = float(a.min()) / 4, float(a.max()) * 4
            edges = np.geomspace(lo, hi, 2**16 + 1)
            counts = np.zeros(2**16, np.int64)
        idx = np.clip(np.searchsorted(edges, a, side="right") - 1, 0, counts.size - 1)
        counts += np.bincount(idx, minlength=counts.size)
    if counts is None:
        return [float("nan")] * len(qs)
    cum = np.cumsum(counts)
    out = []
    for q in qs:
        target = q / 100 * (cum[-1] - 1) + 1
        i = int(np.searchsorted(cum, target))
        prev = cum[i - 1] if i else 0
        frac = (target - prev) / max(counts[i], 1)
        out.append(float(np.exp(np.log(edges[i]) + frac * (np.log(edges[i + 1]) - np.log(edges[i])))))
    return out


def price_monte_carlo(hardware: str, model: str, execution: str | None = None, *, batch: int | None = None,
                      context_tok: int | None = None, workload: str = "chat", n_samples: int = 1_000_000,
                      seed: int = 0, chunk_samples: int = 250_000, engine: str = "local",
                      scheduler: str | None = None, n_workers: int = 2, processes: bool = True) -> MonteCarloSweep:
    """Monte Carlo of the output-token price of one serving point over the bottom-up cost inputs.

    Throughput and board power come from :func:`tokenomics.chain.price` at the point (``execution``
    None = its default, the ``engine`` plan, and ``batch`` None its default batch, so the median
    matches ``tokenomics price``); the cost
    inputs (capex, life, WACC, ..., utilization) are drawn as in
    :func:`tokenomics.econ.uncertainty.monte_carlo`, chunked and seeded as in :func:`monte_carlo`.
    """
    from .chain import price
    from .econ.tco import cost_model

    _check_mc_args(n_samples, chunk_samples, seed, engine, scheduler, n_workers)
    cm = cost_model(hardware, "bottom-up")
    r = price(hardware, model, execution, batch=batch, context_tok=context_tok, workload=workload, cost=cm)
    return monte_carlo(cm, float(np.ravel(r.board_power_w)[0]), float(np.ravel(r.tok_per_s_per_chip)[0]),
                       n_samples=n_samples, seed=seed, chunk_samples=chunk_samples, engine=engine,
                       scheduler=scheduler, n_workers=n_workers, processes=processes)
