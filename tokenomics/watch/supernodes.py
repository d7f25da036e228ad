"""Watch metric 3: domestic (China) supernode deliveries.

From ``datasets/supernode_events.csv``:

* :func:`yield_trajectory`: reported die yields (Ascend 910C about 0.2 in 2024-09, about 0.4 in
  2025-02) and the date a straight line in logit(yield) reaches a target, with an interval from
  the dates' own precision (a month-only date may be anywhere in its month).
* :func:`production_ranges`: production plans and estimates per year kept as a low-high range
  where sources conflict (for example about 600k vs about 300k 910C-class units in 2026).
* :func:`delivery_ramp`: a logistic ramp of cumulative CloudMatrix 384 systems fitted in log
  space (``scipy.optimize.curve_fit`` with bounds) to the dated counts, with Monte Carlo
  intervals: counts stated as "N+" are drawn from [N, 1.5 N] (an assumption), and the ceiling K
  from [largest count, Ascend 910C supply through 2026 / 384 chips].
* :func:`implied_capacity`: systems x chips x decode tokens/s per chip x 86 400 s, with the
  published CloudMatrix-Infer measurement (1 943 tok/s per NPU, DeepSeek-R1) and the performance
  core's modelled figure side by side.
"""

from __future__ import annotations

import re
import warnings
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from .. import _validate as v
from .._display import Display
from ..errors import DataError, ValidationError, unknown_name
from ..units import S_PER_DAY
from ._events import as_dates, day, iso, read_events

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

#: Event kinds accepted in a supernode events file.
EVENTS: tuple[str, ...] = (
    "reported_yield", "annual_production", "production_plan", "production_estimate", "capacity_target",
    "capacity_report", "launch", "analyst_spec", "deployment", "inference_benchmark", "service_launch",
    "public_debut", "deliveries", "cumulative_sales", "roadmap", "chip_roadmap", "market_note", "global_debut",
)
REQUIRED = ("date", "vendor", "product", "event", "units_low", "value", "unit", "source", "as_of")
#: Spread assumed for counts stated as "N+": the true count is drawn from [N, N * (1 + this)].
PLUS_SPREAD_FRAC = 0.5


def load_events(events: "str | pd.DataFrame | None" = None) -> "pd.DataFrame":
    """Read and validate supernode events (default ``datasets/supernode_events.csv``)."""
    return read_events(events, "supernode_events", "event", EVENTS, REQUIRED,
                       numeric=("units_low", "value", "chips_per_node"), limits=LIMITS)


#: Physical ranges of the numeric cells (the largest supernode catalogued has 15,488 chips; no
#: vendor ships a billion units).
LIMITS = {"chips_per_node": {"minimum": 2, "maximum": 1e6, "integer": True},
          "units_low": {"minimum": 0, "maximum": 1e9}}


def _precision_halfwidth_years(prec: str) -> float:
    return {"day": 0.0, "month": 0.5 / 12.0, "year": 0.5}[prec]


def yield_trajectory(events: "str | pd.DataFrame | None" = None, product: str = "Ascend 910C",
                     target_frac: float = 0.6) -> "pd.DataFrame":
    """Reported die yields of ``product`` and the logit-linear date for ``target_frac``.

    Parameters
    ----------
    events : path or DataFrame, optional
        Supernode events.
    product : str
        Product whose ``reported_yield`` rows are used.
    target_frac : float
        Yield to project [frac]; 0.6 is the target the 2025-02-26 row reports.

    Returns
    -------
    pandas.DataFrame
        The yield rows (``kind='reported'``) plus one ``kind='projection'`` row with the date of
        ``target_frac`` and its ``date_lo``/``date_hi`` from the dates' precision. The projection
        needs two or more reported yields at different dates.
    """
    import pandas as pd

    v.fraction(target_frac, "target_frac", allow_zero=False, allow_one=False)
    df = load_events(events)
    y = df[(df["event"] == "reported_yield") & (df["product"] == product)].sort_values("t_year")
    if y.empty:
        raise DataError(f"supernode events: no reported_yield rows for product {product!r}; the yield "
                        "trajectory needs at least one")
    rows = [{"kind": "reported", "date": day(r.date_parsed), "yield_frac": float(r.value), "date_lo": "",
             "date_hi": "", "logit_slope_per_year": np.nan, "row": str(r.row), "note": r.note}
            for r in y.itertuples(index=False)]
    if y["t_year"].nunique() >= 2:
        t = y["t_year"].to_numpy(float)
        f = y["value"].to_numpy(float)
        hw = np.array([_precision_halfwidth_years(p) for p in y["date_precision"]])
        lg = np.log(f / (1 - f))
        tgt = np.log(target_frac / (1 - target_frac))

        def cross(tt):
            b, a = np.polyfit(tt, lg, 1)
            return (tgt - a) / b, b

        t_mid, slope = cross(t)
        corners = [cross(t + hw * np.array(s))[0] for s in np.array(np.meshgrid(*[[-1, 1]] * len(t))).T.reshape(-1, len(t))]
        rows.append({"kind": "projection", "date": iso(t_mid), "yield_frac": target_frac,
                     "date_lo": iso(min(corners)), "date_hi": iso(max(corners)), "logit_slope_per_year": slope,
                     "row": " ".join(str(r) for r in y["row"]),
                     "note": "straight line in logit(yield) through the reported points; interval from date precision only"})
    return as_dates(pd.DataFrame(rows), ("date", "date_lo", "date_hi"))


_YEAR_IN_UNIT = re.compile(r"(20\d\d)")


def production_ranges(events: "str | pd.DataFrame | None" = None) -> "pd.DataFrame":
    """Production plans, estimates and actuals per year as low-high ranges (conflicts kept).

    Returns
    -------
    pandas.DataFrame
        ``year``, ``low_chips``, ``high_chips``, ``n_sources``, ``what`` (each source's scope),
        ``rows``.
    """
    import pandas as pd

    df = load_events(events)
    p = df[df["event"].isin(["production_plan", "production_estimate", "annual_production"])]
    recs = []
    for r in p.itertuples(index=False):
        m = _YEAR_IN_UNIT.search(str(r.unit))
        year = int(m.group(1)) if m else int(str(r.date)[:4])
        recs.append({"year": year, "chips": float(r.value), "what": f"{r.product}: {r.unit} ({r.vendor})",
                     "row": r.row})
    t = pd.DataFrame(recs, columns=["year", "chips", "what", "row"])  # the columns even with no rows
    out = t.groupby("year").agg(low_chips=("chips", "min"), high_chips=("chips", "max"),
                                n_sources=("chips", "size"), what=("what", "; ".join),
                                rows=("row", lambda s: " ".join(str(x) for x in s))).reset_index()
    return out


def _log_logistic(t, r, tm, K):
    return np.log(K) - np.log1p(np.exp(-r * (t - tm)))


@dataclass(frozen=True, repr=False)
class DeliveryRamp(Display):
    """Monte Carlo logistic ramp of cumulative systems delivered (or sold)."""

    product: str
    points: Any  # DataFrame of the dated counts used
    forecast: Any  # DataFrame: date, t_year, units_lo, units_p50, units_hi
    curve: Any  # the same, monthly from the first dated count to the last forecast year
    k_range: tuple[float, float]
    n_draws: int
    n_ok: int
    as_of: str

    def to_frame(self) -> "pd.DataFrame":
        """The forecast table."""
        return self.forecast.copy()


def delivery_ramp(events: "str | pd.DataFrame | None" = None, product: str = "CloudMatrix 384",
                  chips_per_node: int = 384, years=(2025.0, 2026.0, 2027.0, 2028.0), n_draws: int = 400,
                  ci: float = 0.9, seed: int = 0) -> DeliveryRamp:
    """Fit a logistic ramp to the dated system counts of ``product`` with Monte Carlo intervals.

    The dated counts are the ``deployment`` (at least 1 system live), ``deliveries`` and
    ``cumulative_sales`` rows whose product contains ``product``. The ceiling K is drawn from
    [largest count, (Ascend 910C supply planned for 2025 + high/low 2026 figure) / chips_per_node].

    Parameters
    ----------
    years : sequence of float
        Decimal years at which to report the cumulative count (2026.0 = 1 January 2026).
    n_draws : int
        Monte Carlo draws.
    ci : float
        Interval level [frac].
    """
    import pandas as pd
    from scipy.optimize import curve_fit

    v.fraction(ci, "ci", allow_zero=False, allow_one=False)
    v.draws(n_draws, "n_draws", ci=ci)
    v.count(chips_per_node, "chips_per_node")
    df = load_events(events)
    sel = df[df["product"].astype(str).str.contains(product, regex=False)]
    pts = sel[sel["event"].isin(["deployment", "deliveries", "cumulative_sales"])].copy()
    pts["count_low"] = np.where(pts["event"] == "deployment", 1.0, pts["units_low"].astype(float))
    pts = pts[np.isfinite(pts["count_low"])].sort_values("t_year")
    if len(pts) < 2:
        raise DataError(f"supernode events: need at least 2 dated counts of {product!r} (deployment rows, "
                        f"or deliveries/cumulative_sales rows with units_low) to fit the ramp, found {len(pts)}")
    plus = pts["units_text"].fillna("").astype(str).str.contains(r"\+|>", regex=True).to_numpy()
    ranges = production_ranges(df.drop(columns=["date_parsed", "t_year", "date_precision", "row"]))
    r25 = ranges[ranges["year"] == 2025]
    r26 = ranges[ranges["year"] == 2026]
    # 910C-specific 2025 plan (the lower 2025 figure is the 910C plan; 805k covers all Ascend)
    c25 = float(r25["low_chips"].iloc[0]) if len(r25) else 0.0
    k_hi_lo = (c25 + float(r26["low_chips"].iloc[0])) / chips_per_node if len(r26) else np.nan
    k_hi_hi = (c25 + float(r26["high_chips"].iloc[0])) / chips_per_node if len(r26) else np.nan
    t = pts["t_year"].to_numpy(float)
    n0 = pts["count_low"].to_numpy(float)
    k_min = float(n0.max())
    if not np.isfinite(k_hi_hi) or k_hi_hi <= k_min:
        k_hi_lo = k_hi_hi = 10 * k_min
    rng = np.random.default_rng(seed)
    grid_out = np.asarray(years, float)
    fine = np.arange(t.min(), max(grid_out.max(), t.max()) + 1e-9, 1.0 / 12.0)
    grid = np.concatenate([grid_out, fine])
    sims = []
    for _ in range(n_draws):
        n = np.where(plus, n0 * (1 + PLUS_SPREAD_FRAC * rng.random(len(n0))), n0)
        k_cap = rng.uniform(k_hi_lo, k_hi_hi)
        K = rng.uniform(max(n.max() * 1.01, k_min), max(k_cap, n.max() * 1.02))
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                popt, _ = curve_fit(lambda tt, r, tm: _log_logistic(tt, r, tm, K), t, np.log(n),
                                    p0=(8.0, t.max()), bounds=([0.1, t.min() - 1], [60.0, t.max() + 10]),
                                    maxfev=20000)
        except (RuntimeError, ValueError):
            continue
        sims.append(np.exp(_log_logistic(grid, popt[0], popt[1], K)))
    sims = np.array(sims)
    a = (1 - ci) / 2
    allq = pd.DataFrame({
        "date": [iso(g) for g in grid], "t_year": grid,
        "units_lo": np.quantile(sims, a, axis=0), "units_p50": np.quantile(sims, 0.5, axis=0),
        "units_hi": np.quantile(sims, 1 - a, axis=0),
    })
    fc = allq.iloc[:len(grid_out)].reset_index(drop=True)
    curve = allq.iloc[len(grid_out):].reset_index(drop=True)
    as_dates(fc, ("date",))
    as_dates(curve, ("date",))
    p = pts[["date", "event", "units_text", "count_low", "row", "note"]].reset_index(drop=True)
    p["date"] = pts["date_parsed"].to_numpy("datetime64[ns]")
    return DeliveryRamp(product=product, points=p, forecast=fc, curve=curve, k_range=(k_min, float(k_hi_hi)),
                        n_draws=n_draws, n_ok=len(sims), as_of=iso(float(df["t_year"].max())))


def measured_tok_per_s_per_chip(events: "str | pd.DataFrame | None" = None, product: str = "CloudMatrix 384") -> tuple[float, int]:
    """Published decode tokens/s per chip for ``product`` (an ``inference_benchmark`` row) and its row."""
    df = load_events(events)
    b = df[(df["event"] == "inference_benchmark") & df["product"].astype(str).str.contains(product, regex=False)
           & df["unit"].astype(str).str.contains("decode tokens/s per NPU", regex=False)]
    if b.empty:
        raise DataError(f"supernode events: no inference_benchmark row for {product!r} with unit "
                        "'decode tokens/s per NPU'; the implied capacity needs one")
    r = b.iloc[0]
    return float(r["value"]), int(r["row"])


#: The published serving row whose configuration the perf-core rate uses: CloudMatrix-Infer's
#: headline decode point (``datasets/serving_ascend.csv``: DeepSeek-R1 W8A8, EP320 over 160 Ascend
#: 910C, MTP at 70 %, microbatch overlap, 4K KV; 1,943 tok/s per NPU at TPOT 49.4 ms).
CLOUDMATRIX_DECODE_CASE = "A003"


def modelled_tok_per_s_per_chip(tpot_slo_s: float = 0.05, case: str = CLOUDMATRIX_DECODE_CASE) -> tuple[float, str]:
    """Performance-core decode tokens/s per chip of the published CloudMatrix configuration.

    The :class:`~tokenomics.deployment.Deployment` the serving validation builds for ``case`` of
    ``datasets/serving_ascend.csv`` (:func:`tokenomics.validate.serving_cases.case_deployment`: the same
    physics ``tokenomics validate-serving ascend`` scores, communication and engine cost included),
    at the cheapest batch whose TPOT stays within ``tpot_slo_s``
    (:meth:`~tokenomics.deployment.Deployment.batch_for_target`) and the row's KV length.

    Returns
    -------
    (float, str)
        Tokens/s per chip and a note naming the configuration; NaN and the reason when no batch
        meets the target.
    """
    from ..catalog import load
    from ..validate.serving_cases import case_deployment

    v.positive(tpot_slo_s, "tpot_slo_s")
    rows = load("serving_ascend").set_index("case_id", drop=False)
    if case not in rows.index:
        raise unknown_name("serving_ascend case", case, rows.index)
    row = rows.loc[case]
    dep = case_deployment(row)
    ctx = float(row["context_tok"])
    try:
        b = dep.batch_for_target(1.0 / tpot_slo_s, ctx)
    except ValidationError as exc:
        return np.nan, str(exc)
    r = dep.decode(b, ctx, check_memory=False)
    return float(np.asarray(r.tok_per_s_per_chip)), (
        f"modelled: {dep.label()}, {b / dep.replica_chips:.3g} sequences/chip, KV {ctx:.0f}, "
        f"TPOT <= {tpot_slo_s * 1e3:.0f} ms (datasets/serving_ascend.csv {case})")


def implied_capacity(units: Any, tok_per_s_per_chip: Any, chips_per_node: int = 384) -> Any:
    """Inference capacity [tokens/day] of ``units`` systems running decode all day.

    ``units * chips_per_node * tok_per_s_per_chip * 86400``; an upper bound (no idle time).

    Examples
    --------
    >>> float(implied_capacity(300, 1943.0))   # 300 CloudMatrix 384 at the published rate
    19339223040000.0
    """
    v.non_negative(units, "units")
    v.non_negative(tok_per_s_per_chip, "tok_per_s_per_chip")
    return np.asarray(units, float) * chips_per_node * np.asarray(tok_per_s_per_chip, float) * S_PER_DAY
