"""Watch metric 2: megakernel adoption.

``datasets/megakernel_events.csv`` holds dated events, each with an adoption ``level`` assigned by
hand (see ``datasets/README.md``): 0 paper, blog or code outside a major engine; 1 request or RFC
in a major engine; 2 merged opt-in path; 3 default in one major engine; 4 default across engines.
Events belong to a ``track`` (``megakernel`` for whole-model megakernels; ``persistent_kernel``,
``cuda_graph``, ``symmetric_memory`` and ``dsl`` for the neighbouring steps) and a
``hardware_family`` (nvidia, amd, tpu, ascend, apple).

* :func:`adoption_index` is the running maximum of the level over time, per family and overall.
* :func:`fit_adoption` fits a logistic ``L(t) = 4 / (1 + exp(-k (t - t50)))`` by bounded least
  squares (``scipy.optimize.curve_fit``) to the monthly-sampled index and bootstraps the dates
  at which level 3 and level 4 are reached (``L >= level - 0.5``). The bootstrap is exact
  (:func:`bootstrap_classes`): the fit depends on a resample only through its earliest event and
  its earliest event at or above each level, so the resamples fall into a few classes whose
  probabilities have a closed form; the intervals are the quantiles of that exact distribution,
  the same for every seed. (Drawn resamples were not: a few per cent of them drop the early
  level-1 RFCs and fit the slowest rate, so the 95th percentile fell between 2030 and 2042 by
  seed, even at 1,000 resamples.)
* :func:`expected_speedup` asks the performance core for decode speedup of ``megakernel`` over
  ``graph`` execution by batch size.

The growth-rate bounds: the fastest is the pace the ``cuda_graph`` track itself showed in the
data (level 2 to 3, opt-in full CUDA graph to vLLM default, computed from the file); the slowest
is p + q = 0.41 per year, the mean Bass parameters of the Sultan, Farley and Lehmann (1990)
meta-analysis (p = 0.03, q = 0.38; ``../shared/reference/watch_metrics_notes.md`` section 4).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from .. import _validate as v
from .._display import Display
from ..errors import ConvergenceWarning, ValidationError
from ..io import Column
from ._events import as_dates, day, iso, read_events

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

#: Event kinds accepted in a megakernel events file.
KINDS: tuple[str, ...] = (
    "research_release", "research_paper", "research_code", "production_research_release",
    "dsl_release", "dsl_adoption", "adoption_request", "adoption_proposal", "framework_integration",
    "port", "production_use", "persistent_kernel", "cuda_graph", "symmetric_memory",
    "regression_note", "roadmap", "vendor_adoption_claim",
)
TRACKS: tuple[str, ...] = ("megakernel", "persistent_kernel", "cuda_graph", "symmetric_memory", "dsl")
#: Hardware families accepted in ``hardware_family`` (``datasets/README.md``); a typo would
#: otherwise start a family of its own in the adoption index.
FAMILIES: tuple[str, ...] = ("nvidia", "amd", "tpu", "ascend", "apple")
#: Values of the optional ``major_engine`` column.
MAJOR_ENGINE: tuple[str, ...] = ("yes", "no")
LEVELS = {0: "paper or blog", 1: "request or RFC in a major engine", 2: "merged opt-in path",
          3: "default in one major engine", 4: "default across engines"}
MAX_LEVEL = 4.0
#: Slowest logistic rate [1/yr]: Bass p + q = 0.03 + 0.38 (Sultan, Farley & Lehmann 1990, via
#: ../shared/reference/watch_metrics_notes.md section 4).
K_SLOWEST_PER_YEAR = 0.03 + 0.38
REQUIRED = ("date", "project", "hardware_family", "kind", "track", "level", "source", "as_of")
#: Most resample classes :func:`fit_adoption` enumerates exactly (one curve fit each, ~10 ms);
#: beyond it draws ``n_boot`` resamples (seeded) and fits each distinct class once.
MAX_EXACT_CLASSES = 2000


#: Declared columns of a megakernel events file besides its dates and kind
#: (:func:`tokenomics.watch._events.event_schema`).
SCHEMA = (
    Column("hardware_family", "choice", choices=FAMILIES),
    Column("track", "choice", choices=TRACKS),
    Column("level", "integer", minimum=0, maximum=MAX_LEVEL, expected="a whole number 0-4"),
    Column("major_engine", "choice", choices=MAJOR_ENGINE, optional=True),
)


def load_events(events: "str | pd.DataFrame | None" = None) -> "pd.DataFrame":
    """Read and validate megakernel events (default ``datasets/megakernel_events.csv``).

    Raises
    ------
    DataError
        A row with a missing or bad date or ``as_of``, an unknown ``kind``, a level outside 0-4,
        an unknown track or ``hardware_family``, or a ``major_engine`` other than yes/no; the
        message names every bad cell (row, line, column, and the closest known name).
    """
    df = read_events(events, "megakernel_events", "kind", KINDS, REQUIRED, extra=SCHEMA)
    df["level"] = df["level"].astype(int)
    return df


def adoption_index(events: "str | pd.DataFrame | None" = None, track: str = "megakernel") -> "pd.DataFrame":
    """Adoption-level index over time per hardware family and overall (``family='all'``).

    The index at an event is the highest level reached so far in that family (and track).

    Returns
    -------
    pandas.DataFrame
        ``family``, ``date``, ``t_year`` [yr], ``event_level``, ``index_level``, ``project``,
        ``row`` (file row).
    """
    import pandas as pd

    v.one_of(track, "track", TRACKS)
    df = load_events(events)
    df = df[df["track"] == track].sort_values(["date_parsed", "row"], kind="stable")
    out = []
    for fam, sub in [("all", df)] + list(df.groupby("hardware_family", sort=True)):
        idx = np.maximum.accumulate(sub["level"].to_numpy()) if len(sub) else np.array([], int)
        out.append(pd.DataFrame({
            "family": fam, "date": sub["date_parsed"].to_numpy("datetime64[ns]"), "t_year": sub["t_year"].to_numpy(),
            "event_level": sub["level"].to_numpy(), "index_level": idx,
            "project": sub["project"].to_numpy(), "row": sub["row"].to_numpy(),
        }))
    return pd.concat(out, ignore_index=True)


def _logistic(t, k, t50):
    return MAX_LEVEL / (1.0 + np.exp(-k * (t - t50)))


def level_time(level: float, k: float, t50: float) -> float:
    """Decimal year at which the logistic index first reaches ``level - 0.5`` (rounds to ``level``)."""
    target = level - 0.5
    return t50 - np.log(MAX_LEVEL / target - 1.0) / k


def fastest_rate_per_year(events: "pd.DataFrame") -> float:
    """Logistic rate [1/yr] implied by the CUDA-graph track's move from level 2 to level 3.

    ``t(2.5) - t(1.5) = ln((4/1.5 - 1) / (4/2.5 - 1)) / k``, so ``k = 1.0217 / dt``.
    """
    g = events[events["track"] == "cuda_graph"]
    t2 = g.loc[g["level"] >= 2, "t_year"].min()
    t3 = g.loc[g["level"] >= 3, "t_year"].min()
    if not (np.isfinite(t2) and np.isfinite(t3)) or t3 <= t2:
        return 3.0
    return float(np.log((MAX_LEVEL / 1.5 - 1) / (MAX_LEVEL / 2.5 - 1)) / (t3 - t2))


def _monthly(sub: "pd.DataFrame", t_end: float) -> tuple[np.ndarray, np.ndarray]:
    t0 = float(sub["t_year"].min())
    grid = np.arange(t0, t_end + 1e-9, 1.0 / 12.0)
    if grid.size < 2:
        grid = np.array([t0, max(t_end, t0 + 1.0 / 12.0)])
    ts = sub["t_year"].to_numpy(float)
    lv = sub["level"].to_numpy(float)
    order = np.argsort(ts, kind="stable")
    ts, lv = ts[order], np.maximum.accumulate(lv[order])
    pos = np.searchsorted(ts, grid, side="right") - 1
    return grid, np.where(pos >= 0, lv[np.clip(pos, 0, None)], 0.0)


def _fit_once(t, y, k_lo, k_hi, t_lo, t_hi):
    from scipy.optimize import curve_fit

    p0 = (np.sqrt(k_lo * k_hi), min(max(t[-1] + 2.0, t_lo + 1e-3), t_hi - 1e-3))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        popt, _ = curve_fit(_logistic, t, y, p0=p0, bounds=([k_lo, t_lo], [k_hi, t_hi]), maxfev=20000)
    return float(popt[0]), float(popt[1])


def bootstrap_classes(t_year: Any, level: Any, max_classes: int | None = MAX_EXACT_CLASSES
                      ) -> "tuple[np.ndarray, np.ndarray] | None":
    """Exact distribution of the events bootstrap, grouped by what the adoption fit sees.

    A resample draws ``n`` of the ``n`` events with replacement. The running-max index of a
    resample, and so its fit, depends only on its earliest event ``x0`` and, for each level
    ``l = 1..4``, its earliest event at level ``>= l`` (``x_l``, or none). The probability of a
    class ``(x0, x1, ..., x4)`` is, by inclusion-exclusion over the required events ``R`` with
    the events that must be missing ``E`` (those before ``x0`` and those at level ``>= l``
    before ``x_l``),

    ``P = sum_{j=0}^{|R|} (-1)^j C(|R|, j) ((n - |E| - j) / n)^n``.

    Parameters
    ----------
    t_year : array_like
        Event dates [yr].
    level : array_like
        Event adoption levels 0-4.
    max_classes : int or None
        Give up (return ``None``) beyond this many classes; ``None``: no limit.

    Returns
    -------
    (numpy.ndarray, numpy.ndarray) or None
        ``members`` (classes x 5 event positions, -1 for none; positions index the inputs) and
        ``prob`` (per class, summing to 1).
    """
    from math import comb

    t = np.asarray(t_year, float).ravel()
    lv_f = np.asarray(level, float).ravel()
    if t.size != lv_f.size or t.size == 0:
        raise ValidationError(f"bootstrap_classes needs one level per date; got {t.size} dates and {lv_f.size} levels")
    if not np.isfinite(t).all():
        raise ValidationError("bootstrap_classes: every date must be a finite decimal year")
    if not np.isin(lv_f, np.arange(int(MAX_LEVEL) + 1)).all():
        raise ValidationError(f"bootstrap_classes: levels must be integers 0-{int(MAX_LEVEL)}; got {sorted(set(lv_f.tolist()))}")
    n = t.size
    order, lv_s = _time_order(t, lv_f.astype(int))
    at_or_above = [np.flatnonzero(lv_s >= lvl) for lvl in range(int(MAX_LEVEL) + 1)]
    keys: list[tuple[int, ...]] = []

    def walk(lvl: int, prev: int, xs: tuple[int, ...]) -> bool:
        if max_classes is not None and len(keys) > max_classes:
            return False
        if lvl > MAX_LEVEL:
            keys.append(xs)
            return True
        if prev < 0:  # no event at the level below: none at this one either
            return walk(lvl + 1, -1, xs + (-1,))
        if lv_s[prev] >= lvl:  # the earliest event at the level below also reaches this level
            return walk(lvl + 1, prev, xs + (prev,))
        for c in at_or_above[lvl][at_or_above[lvl] > prev]:
            if not walk(lvl + 1, int(c), xs + (int(c),)):
                return False
        return walk(lvl + 1, -1, xs + (-1,))

    for x0 in range(n):
        if not walk(1, x0, (x0,)):
            return None
    prob = np.empty(len(keys))
    for i, xs in enumerate(keys):
        missing = np.zeros(n, bool)
        missing[:xs[0]] = True
        for lvl in range(1, int(MAX_LEVEL) + 1):
            lim = xs[lvl] if xs[lvl] >= 0 else n
            missing[at_or_above[lvl][at_or_above[lvl] < lim]] = True
        r = len({x for x in xs if x >= 0})
        m = n - int(missing.sum())
        prob[i] = sum((-1) ** j * comb(r, j) * ((m - j) / n) ** n for j in range(r + 1))
    members = np.array(keys, int).reshape(-1, int(MAX_LEVEL) + 1)
    members = np.where(members >= 0, order[np.clip(members, 0, None)], -1)
    return members, prob


def _time_order(t_year: Any, level: Any) -> "tuple[np.ndarray, np.ndarray]":
    """Positions of the events in time order (ties by position) and their levels in that order."""
    t = np.asarray(t_year, float)
    order = np.lexsort((np.arange(t.size), t))
    return order, np.asarray(level, int)[order]


def _sampled_classes(t_year: np.ndarray, level: np.ndarray, n_boot: int, seed: int
                     ) -> "tuple[np.ndarray, np.ndarray]":
    """Monte Carlo stand-in for :func:`bootstrap_classes`: ``n_boot`` seeded resamples."""
    n = np.asarray(t_year).size
    order, lv_s = _time_order(t_year, level)
    d = np.random.default_rng(seed).integers(0, n, (n_boot, n))
    cols = [d.min(axis=1)] + [np.where(lv_s[d] >= lvl, d, n).min(axis=1) for lvl in range(1, int(MAX_LEVEL) + 1)]
    keys = np.stack(cols, axis=1)
    uniq, counts = np.unique(keys, axis=0, return_counts=True)
    members = np.where(uniq < n, order[np.clip(uniq, 0, n - 1)], -1)
    return members, counts / n_boot


def _weighted_quantile(values: np.ndarray, weights: np.ndarray, q: Any) -> np.ndarray:
    """Inverse of the weighted empirical distribution: the smallest value whose cumulative
    weight reaches ``q`` (the bootstrap percentile)."""
    o = np.argsort(values, kind="stable")
    cw = np.cumsum(weights[o]) / weights.sum()
    return values[o][np.minimum(np.searchsorted(cw, np.asarray(q) - 1e-12), values.size - 1)]


@dataclass(frozen=True, repr=False)
class AdoptionFit(Display):
    """Logistic adoption fit for one family and track, with bootstrap intervals.

    Dates are decimal years [yr]; ``*_lo``/``*_hi`` bound the central ``ci`` interval.
    ``boot_method`` says how the bootstrap was computed (exact over its resample classes, or
    drawn); ``slowest_rate_frac`` / ``fastest_rate_frac`` are the bootstrap probabilities that the
    fitted rate sits at its slowest / fastest bound [frac]; ``late_end_note`` names what the
    resamples behind level 3's late end share: their first event above level 0 (the bundled
    events: 9 % of the bootstrap starts its rise only at the newest RFC, 2026-09-03, and fits a
    midpoint near 2041).
    """

    family: str
    track: str
    n_events: int
    latest_level: int
    latest_date: str
    as_of: str
    k_per_year: float
    t50_year: float
    k_bounds: tuple[float, float]
    level3_year: float
    level3_lo: float
    level3_hi: float
    level4_year: float
    level4_lo: float
    level4_hi: float
    n_boot: int
    ci: float
    status: str
    rows: str
    boot_method: str = ""
    slowest_rate_frac: float = float("nan")
    fastest_rate_frac: float = float("nan")
    late_end_note: str = ""

    def to_frame(self) -> "pd.DataFrame":
        """One row; dates (``latest_date``, ``as_of``, ``t50``, ``level3_*``, ``level4_*``) as datetime64."""
        import pandas as pd

        return as_dates(pd.DataFrame([{
            "family": self.family, "track": self.track, "n_events": self.n_events,
            "latest_level": self.latest_level, "latest_date": self.latest_date, "as_of": self.as_of,
            "k_per_year": self.k_per_year, "k_lo_bound": self.k_bounds[0], "k_hi_bound": self.k_bounds[1],
            "t50": iso(self.t50_year),
            "level3_date": iso(self.level3_year), "level3_lo": iso(self.level3_lo), "level3_hi": iso(self.level3_hi),
            "level4_date": iso(self.level4_year), "level4_lo": iso(self.level4_lo), "level4_hi": iso(self.level4_hi),
            "n_boot": self.n_boot, "boot_method": self.boot_method,
            "slowest_rate_frac": self.slowest_rate_frac, "fastest_rate_frac": self.fastest_rate_frac,
            "late_end_note": self.late_end_note,
            "ci": self.ci, "status": self.status, "rows": self.rows,
        }]), ("latest_date", "as_of", "t50", "level3_date", "level3_lo", "level3_hi", "level4_date", "level4_lo",
              "level4_hi"))

    def predict(self, t_year: Any) -> np.ndarray:
        """Fitted index level at decimal years ``t_year``."""
        return _logistic(np.asarray(t_year, float), self.k_per_year, self.t50_year)


def fit_adoption(
    events: "str | pd.DataFrame | None" = None,
    family: str = "all",
    track: str = "megakernel",
    n_boot: int = 200,
    ci: float = 0.9,
    seed: int = 0,
    horizon_years: float = 30.0,
) -> AdoptionFit:
    """Fit the logistic adoption curve and bootstrap the level-3 and level-4 dates.

    Parameters
    ----------
    events : path or DataFrame, optional
        Events table (default ``datasets/megakernel_events.csv``).
    family : str
        ``"all"`` or a ``hardware_family`` (nvidia, amd, tpu, ascend, apple).
    track : str
        Which track to fit (``"megakernel"`` by default).
    n_boot : int
        0: point fit only, no interval. Otherwise the bootstrap is exact (every resample class,
        :func:`bootstrap_classes`) up to :data:`MAX_EXACT_CLASSES` classes, and beyond that
        ``n_boot`` drawn resamples.
    ci : float
        Interval level [frac].
    seed : int
        Random seed of the drawn bootstrap (unused when it is exact).
    horizon_years : float
        Upper bound on the midpoint ``t50``, in years after the newest event [yr].

    Returns
    -------
    AdoptionFit
        ``status`` says when the fit is bound-driven (few points from the left tail only).
    """
    v.fraction(ci, "ci", allow_zero=False, allow_one=False)
    v.draws(n_boot, "n_boot", ci=ci, allow_zero=True)
    v.positive(horizon_years, "horizon_years")
    v.one_of(track, "track", TRACKS)
    df = load_events(events)
    t_end = float(df["t_year"].max())
    sub = df[df["track"] == track]
    if family != "all":
        fams = sorted(df["hardware_family"].unique())
        if family not in fams:
            from ..errors import unknown_name

            raise unknown_name("hardware family", family, fams + ["all"])
        sub = sub[sub["hardware_family"] == family]
    if len(sub) == 0:
        raise ValidationError(f"no {track} events for family {family!r}; nothing to fit")
    k_lo, k_hi = K_SLOWEST_PER_YEAR, max(fastest_rate_per_year(df), K_SLOWEST_PER_YEAR * 1.01)
    t_lo, t_hi = float(sub["t_year"].min()), t_end + horizon_years
    latest = int(sub["level"].max())
    latest_date = day(sub.loc[sub["level"] == latest, "date_parsed"].min())
    base = dict(family=family, track=track, n_events=len(sub), latest_level=latest, latest_date=latest_date,
                as_of=iso(t_end), k_bounds=(k_lo, k_hi), n_boot=n_boot, ci=ci,
                rows=" ".join(str(r) for r in sub["row"]))
    if len(sub) < 3 or latest == 0:
        nan = np.nan
        return AdoptionFit(k_per_year=nan, t50_year=nan, level3_year=nan, level3_lo=nan, level3_hi=nan,
                           level4_year=nan, level4_lo=nan, level4_hi=nan,
                           status=f"insufficient data ({len(sub)} events, max level {latest}); no fit",
                           boot_method="none (no fit)", **base)
    t, y = _monthly(sub, t_end)
    k, t50 = _fit_once(t, y, k_lo, k_hi, t_lo, t_hi)
    l3, l4 = level_time(3, k, t50), level_time(4, k, t50)
    b3, b4, w, kb_all, first = [], [], [], [], []
    method = "none (n_boot 0)"
    if n_boot:
        ty, lvl = sub["t_year"].to_numpy(float), sub["level"].to_numpy(int)
        classes = bootstrap_classes(ty, lvl, MAX_EXACT_CLASSES)
        if classes is None:
            classes = _sampled_classes(ty, lvl, n_boot, seed)
            method = f"{n_boot} drawn resamples ({len(classes[1])} classes; seed {seed})"
        else:
            method = f"exact ({len(classes[1])} resample classes)"
        fitted: dict[tuple[float, ...], tuple[float, float] | None] = {}
        for members, p in zip(*classes):
            if members[1] < 0 or p <= 0:
                continue  # no event above level 0 in this resample: no signal
            idx = members[members >= 0]
            key = tuple(ty[idx]) + tuple(lvl[idx])
            if key not in fitted:
                tb, yb = _monthly(sub.iloc[idx], t_end)
                try:
                    fitted[key] = _fit_once(tb, yb, k_lo, k_hi, float(ty[idx].min()), t_hi)
                except (RuntimeError, ValueError):
                    fitted[key] = None
            if fitted[key] is None:
                continue
            kb, tb50 = fitted[key]
            b3.append(level_time(3, kb, tb50))
            b4.append(level_time(4, kb, tb50))
            w.append(p)
            kb_all.append(kb)
            first.append(int(members[1]))  # the resample's first event above level 0
    a = (1 - ci) / 2
    wa = np.asarray(w, float)
    q3 = _weighted_quantile(np.asarray(b3), wa, [a, 1 - a]) if w else (np.nan, np.nan)
    q4 = _weighted_quantile(np.asarray(b4), wa, [a, 1 - a]) if w else (np.nan, np.nan)
    kb_arr = np.asarray(kb_all, float)
    late_note = ""
    if w:  # what the resamples behind level 3's late end share: their first event above level 0
        b3a, fa = np.asarray(b3), np.asarray(first)
        driver = int(fa[int(np.argmin(np.abs(b3a - q3[1])))])
        ev = sub.iloc[driver]
        share = float(wa[fa == driver].sum() / wa.sum())
        late_note = (f"level 3's late end comes from the resamples ({share:.0%} of the bootstrap) whose first event "
                     f"above level 0 is {day(ev['date_parsed'])} ({ev['project']}, row {ev['row']})")
    slow_frac = float(wa[np.isclose(kb_arr, k_lo, rtol=1e-3)].sum() / wa.sum()) if w else np.nan
    fast_frac = float(wa[np.isclose(kb_arr, k_hi, rtol=1e-3)].sum() / wa.sum()) if w else np.nan
    status = "fitted"
    if np.isclose(k, k_lo, rtol=1e-3) or np.isclose(k, k_hi, rtol=1e-3):
        status = "rate at its bound: left-tail data only, the date is driven by the bound"
        warnings.warn(f"megakernel adoption fit ({family}): growth rate k={k:.3g}/yr sits at its bound "
                      f"[{k_lo:.3g}, {k_hi:.3g}]; the level-3/4 dates follow the bound, not the data.",
                      ConvergenceWarning, stacklevel=2)
    return AdoptionFit(k_per_year=k, t50_year=t50, level3_year=l3, level3_lo=float(q3[0]), level3_hi=float(q3[1]),
                       level4_year=l4, level4_lo=float(q4[0]), level4_hi=float(q4[1]), status=status,
                       boot_method=method, slowest_rate_frac=slow_frac, fastest_rate_frac=fast_frac,
                       late_end_note=late_note, **base)


def expected_speedup(
    hardware: Any = "h200",
    model: Any = "llama-3.2-1b",
    batch: Any = (1, 2, 4, 8, 16, 32, 64, 128, 256),
    context_tok: Any = 1024,
) -> "pd.DataFrame":
    """Decode speedup of megakernel over CUDA-graph execution by batch size (performance core).

    ``speedup = step_time_s(graph) / step_time_s(megakernel)``.

    Returns
    -------
    pandas.DataFrame
        ``hardware``, ``model``, ``batch``, ``context_tok``, ``graph_step_s``,
        ``megakernel_step_s``, ``speedup``, ``bound_graph``, ``bound_megakernel``, ``status``.
    """
    import pandas as pd

    b = np.atleast_1d(np.asarray(batch))
    v.count(b, "batch")
    hw_name = getattr(hardware, "name", hardware)
    m_name = getattr(model, "name", model)
    from ..perf import decode_step
    g = decode_step(hardware, model, "graph", batch=b, context_tok=context_tok)
    m = decode_step(hardware, model, "megakernel", batch=b, context_tok=context_tok)
    gs = np.broadcast_to(np.asarray(g.step_time_s, float), b.shape)
    ms = np.broadcast_to(np.asarray(m.step_time_s, float), b.shape)
    return pd.DataFrame({"hardware": hw_name, "model": m_name, "batch": b, "context_tok": context_tok,
                         "graph_step_s": gs, "megakernel_step_s": ms, "speedup": gs / ms,
                         "bound_graph": np.broadcast_to(np.asarray(g.bound), b.shape),
                         "bound_megakernel": np.broadcast_to(np.asarray(m.bound), b.shape),
                         "status": "modelled"})
