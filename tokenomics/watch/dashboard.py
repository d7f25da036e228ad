"""The watch dashboard: the three metrics of the article in one table, a Markdown report and PNGs.

:func:`watch` computes everything (prices, megakernel adoption, supernode deliveries) and returns
a frozen :class:`Dashboard`; ``.to_frame()`` has one row per metric with ``metric``, ``latest``,
``trend``, ``forecast``, ``status``, ``as_of``, ``sources`` (dataset rows behind the figures) and
the key numbers in unit-named columns. :meth:`Dashboard.write` writes ``watch.md`` and one PNG per
metric, atomically.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from .. import _validate as v
from .._display import Display
from ..errors import TokenomicsError
from ._events import as_dates, day, iso

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

#: Performance-core configuration for the megakernel speedup by batch (the Hazy Research
#: megakernel's model on the calibrated chip).
SPEEDUP_CONFIG = {"hardware": "h200", "model": "llama-3.2-1b", "context_tok": 1024,
                  "batch": (1, 2, 4, 8, 16, 32, 64, 128, 256)}
#: Years at which the supernode ramp is reported (1 January of each).
RAMP_YEARS = (2025.0, 2026.0, 2027.0, 2028.0)
CAPACITY_YEAR = 2027.0


@dataclass(frozen=True, repr=False)
class Dashboard(Display):
    """Everything behind the three watch metrics (DataFrames and fit objects)."""

    _display_columns = ("metric", "as_of", "latest", "forecast")

    price: Any
    price_forecast: dict
    adoption_index: Any
    adoption_fits: dict
    speedup: Any
    yields: Any
    production: Any
    ramp: Any
    capacity: Any
    summary: Any
    #: the hedonic index by half-year, the constant-quality decline and like-for-like paths
    price_index: Any = None
    constant_quality: Any = None
    price_paths: Any = None
    #: the price list the price metric was computed from (None: ``datasets/api_prices.csv``)
    prices: Any = None

    def to_frame(self) -> "pd.DataFrame":
        """One row per metric (price, megakernel, supernode)."""
        return self.summary.copy()

    def write(self, out_dir: "str | Path") -> list[Path]:
        """Write ``watch.md`` and ``watch_price.png``, ``watch_megakernel.png``,
        ``watch_supernode.png`` into ``out_dir`` (atomically); return the paths."""
        return write_report(self, out_dir)


def _pct(x: float) -> str:
    return f"{x * 100:+.0f}%"


def _price_row(pw, fc, cq: "dict | None" = None) -> dict[str, Any]:
    from .prices import FLOOR_MIN_TOK_PER_S_PER_USER

    ev = pw.events
    big = ev[(ev["region"] == "global") & ev["size_class"].astype(str).str.startswith("100b+")]
    if len(big):
        last_date = big["date"].max()
        last = big[big["date"] == last_date]
        latest = f"{day(last_date)}: " + ", ".join(f"{r.model_after} {_pct(r.change_frac)}" for r in last.itertuples())
    else:  # a user's price list with no two successive prices of one 100B+ line
        latest = "no 100B+ price change (a line with two dated prices)"
    recent = big.tail(10)
    latest += f"; last {len(recent)} 100B+ changes: {int((recent['direction'] == 'cut').sum())} cuts, " \
              f"{int((recent['direction'] == 'rise').sum())} rises"
    china = ev[ev["region"] == "china"]
    if len(china):
        c_last = china[china["date"] == china["date"].max()]
        c_year = china[china["date"] > china["date"].max() - np.timedelta64(365, "D")]
        when = day(c_last["date"].iloc[0])
        when = when[:7] if c_last["date_precision"].iloc[0] == "month" else when
        latest += (f"; China {when}: " + "; ".join(
                       f"{prov} {model} " + ", ".join(_pct(r.change_frac) + _TOKEN_TYPE.get(r.token_type, f" {r.token_type}")
                                                      for r in grp.itertuples())
                       for (prov, model), grp in c_last.groupby(["provider", "model_after"], sort=False))
                   + f" (year to then: {int((c_year['direction'] == 'cut').sum())} cuts, "
                     f"{int((c_year['direction'] == 'rise').sum())} rises)")
    lag = pw.lag
    big_dates = lag.get("observed_dates") or "date"
    trend = (f"100B+ list prices fall {lag['observed_decline_factor_per_year_100b']:.2f}x/yr "
             f"(90% CI {lag['observed_lo']:.2f}-{lag['observed_hi']:.2f}, OLS on log price, n={fc['n']}; "
             f"dated by {big_dates})")
    fr = pw.rates_by_tier.set_index("group")
    if "frontier" in fr.index:
        trend += f"; frontier tier {fr.loc['frontier', 'decline_factor_per_year']:.2f}x/yr"
    if cq is not None and "unavailable" in cq:
        trend += f"; constant-quality index not computed from this price list ({cq['unavailable']})"
        cq = None
    if cq is not None:
        trend += (f"; at constant quality (hedonic: size, open weights, context, provider; all sizes, chat-mix "
                  f"price) {cq['decline_factor_per_year']:.2f}x/yr ({cq['ci'] * 100:.0f}% CI "
                  f"{cq['decline_factor_lo']:.2f}-{cq['decline_factor_hi']:.2f}, n={cq['n']}, {cq['n_models']} models"
                  + (f", dated by {cq['dates']}" if cq.get("dates") else "")
                  + f"; same prices pooled {cq['pooled_decline_factor_per_year']:.2f}x/yr"
                  + (f"; {cq['left_out']} price rows of models without characteristics in model_traits.csv "
                     "left out" if cq.get("left_out") else "") + ")")
    forecast = (f"pooled 100B+ blended price {iso(fc['t_year'])}: ${fc['usd_per_m_tok']:.2f}/Mtok "
                f"(90% PI {fc['lo']:.2f}-{fc['hi']:.2f})")
    floor = pw.floor
    ok = floor[floor["status"] == "modelled"]
    if ok.empty:
        status = "cost floor and headroom: pending perf core (multi-chip system model); lag: pending"
        floor_val = np.nan
    else:
        floor_val = float(ok["cost_usd_per_m_tok"].min())
        best = ok.loc[ok["cost_usd_per_m_tok"].idxmin()]
        hr = pw.headroom.set_index("model")["headroom_x"]
        same = [m for m in hr.index if "DeepSeek-V3" in m or "deepseek" in m.lower()]
        status = (f"cost floor ${floor_val:.3f}/Mtok output ({best['system']}, {best['model']}, "
                  f"batch {int(best['batch'])}, {best.get('cost_basis', '')} cost, "
                  f">= {FLOOR_MIN_TOK_PER_S_PER_USER:g} tok/s/user); headroom {np.nanmin(hr):.1f}-{np.nanmax(hr):.0f}x"
                  + (f" ({same[0]} {hr[same[0]]:.1f}x)" if same else "") + "; ")
        others = ok[ok.index != best.name]
        if len(others):
            status += "; ".join(f"{r.system_class} ${r.cost_usd_per_m_tok:.3f}/Mtok ({r.system})"
                                for r in others.itertuples()) + "; "
        pend = floor[floor["status"] != "modelled"]
        if len(pend):
            status += ", ".join(f"{r.system_class} floor: {r.status}" for r in pend.itertuples()) + "; "
        if lag["lags"] is None:
            status += f"lag: {lag['status']}"
        else:
            status += (f"modelled cost falls {lag['modelled_cost_decline_factor_per_year']:.2f}x/yr "
                       f"({lag['status'].replace('modelled: ', '')}): "
                       + ("observed cuts lag it" if lag["lags"] else "no significant lag"))
        status += _trend_text(pw.cost_trend)
    rows = sorted({int(x) for s in big["rows"] for x in s.split()[1].split(",")})
    return {"metric": "price", "latest": latest, "trend": trend, "forecast": forecast, "status": status,
            "as_of": pw.as_of,
            "sources": "api_prices rows " + " ".join(map(str, rows)) + "; china_price_cuts rows "
                       + " ".join(s.split()[1] for s in ev.loc[ev["region"] == "china", "rows"]),
            "price_decline_factor_per_year": lag["observed_decline_factor_per_year_100b"],
            "price_decline_factor_lo": lag["observed_lo"], "price_decline_factor_hi": lag["observed_hi"],
            "cost_floor_usd_per_m_tok": floor_val,
            "cq_decline_factor_per_year": np.nan if cq is None else cq["decline_factor_per_year"],
            "cq_decline_factor_lo": np.nan if cq is None else cq["decline_factor_lo"],
            "cq_decline_factor_hi": np.nan if cq is None else cq["decline_factor_hi"],
            "cq_n": np.nan if cq is None else float(cq["n"]),
            "forecast_usd_per_m_tok": fc["usd_per_m_tok"], "forecast_lo_usd_per_m_tok": fc["lo"],
            "forecast_hi_usd_per_m_tok": fc["hi"]}


def _trend_text(trend: Any) -> str:
    """The modelled cost decline at each speed, without and with speculative decoding, in one clause
    (``tokenomics.watch.prices.cost_trend``); empty where there is none."""
    if trend is None or len(trend) == 0:
        return ""
    parts = []
    for spec, g in trend.groupby("spec", sort=False):
        vals = "/".join("n/a" if not np.isfinite(x) else f"{x:.1f}x" for x in g["modelled_cost_decline_factor_per_year"])
        speeds = "/".join(f"{x:g}" for x in g["tok_per_s_per_user"])
        parts.append(f"{vals} a year at {speeds} tok/s/user" + ("" if spec == "none" else f" with {spec}"))
    return "; the same modelled cost decline " + ", ".join(parts) + " (the speed sold decides it)"


#: How the price row names a China row's token type (``all``: every token type changed alike).
_TOKEN_TYPE = {"all": "", "output": " output", "input (cache-miss)": " input", "cache-hit input": " cache hit"}


def _megakernel_row(index, fits, speedup) -> dict[str, Any]:
    from .megakernels import LEVELS

    f = fits["all"]
    fam = index.groupby("family")["index_level"].max()
    fam_txt = ", ".join(f"{k} {int(val)}" for k, val in fam.items() if k != "all")
    latest = (f"level {f.latest_level} ({LEVELS[f.latest_level]}) since {f.latest_date}; by family: {fam_txt}")
    sp = speedup[np.isfinite(speedup["speedup"])]
    if len(sp):
        s0, s1 = sp.iloc[0], sp.iloc[-1]
        sp_txt = (f"modelled megakernel/graph decode speedup {s0['speedup']:.2f}x at batch {int(s0['batch'])} -> "
                  f"{s1['speedup']:.2f}x at batch {int(s1['batch'])} ({s0['hardware']}, {s0['model']})")
    else:
        sp_txt = "speedup by batch: pending perf core"
    trend = f"logistic k={f.k_per_year:.2f}/yr (bounds {f.k_bounds[0]:.2f}-{f.k_bounds[1]:.2f}); {sp_txt}"
    if np.isfinite(f.level3_year):
        if np.isfinite(f.level3_lo):
            forecast = (f"level 3 {iso(f.level3_year)} ({int(f.ci * 100)}% {iso(f.level3_lo)}..{iso(f.level3_hi)}); "
                        f"level 4 {iso(f.level4_year)} ({iso(f.level4_lo)}..{iso(f.level4_hi)})")
        else:  # n_boot = 0: the point fit alone
            forecast = (f"level 3 {iso(f.level3_year)}; level 4 {iso(f.level4_year)} "
                        "(no interval: no bootstrap resamples)")
    else:
        forecast = "no fit: " + f.status
    status = ("no merged opt-in megakernel path in a major engine yet" if f.latest_level < 2
              else LEVELS[f.latest_level]) + f"; fit: {f.status}"
    if f.late_end_note:
        status += "; " + f.late_end_note
    return {"metric": "megakernel", "latest": latest, "trend": trend, "forecast": forecast, "status": status,
            "as_of": f.as_of, "sources": "megakernel_events rows " + f.rows,
            "megakernel_level": float(f.latest_level), "level3_year": f.level3_year, "level3_lo": f.level3_lo,
            "level3_hi": f.level3_hi, "level4_year": f.level4_year, "level4_lo": f.level4_lo, "level4_hi": f.level4_hi,
            "speedup_batch1_x": float(sp.iloc[0]["speedup"]) if len(sp) else np.nan,
            "speedup_max_batch_x": float(sp.iloc[-1]["speedup"]) if len(sp) else np.nan}


def _supernode_row(yields, production, ramp, capacity) -> dict[str, Any]:
    rep = yields[yields["kind"] == "reported"]
    proj = yields[yields["kind"] == "projection"]
    pts = ramp.points
    latest = "; ".join(f"{day(r.date)} {r.event} " + (r.units_text if isinstance(r.units_text, str) and r.units_text
                                                   else f"{int(r.count_low)}+") for r in pts.itertuples()) + \
        f" (CloudMatrix 384); 910C die yield {rep['yield_frac'].iloc[-1]:.2f} ({day(rep['date'].iloc[-1])})"
    trend = f"910C yield {rep['yield_frac'].iloc[0]:.2f} -> {rep['yield_frac'].iloc[-1]:.2f}"
    if len(proj):
        p = proj.iloc[0]
        trend += (f"; logit line reaches {p['yield_frac']:.1f} on {day(p['date'])} "
                  f"({day(p['date_lo'])}..{day(p['date_hi'])})")
    prod = production.set_index("year")
    if 2026 in prod.index:
        trend += f"; 2026 Ascend output {prod.loc[2026, 'low_chips'] / 1e3:.0f}k-{prod.loc[2026, 'high_chips'] / 1e3:.0f}k (sources conflict)"
    fc = ramp.forecast.set_index("t_year")
    c = capacity.iloc[0]
    forecast = (f"cumulative systems {iso(CAPACITY_YEAR)}: {fc.loc[CAPACITY_YEAR, 'units_p50']:.0f} "
                f"({fc.loc[CAPACITY_YEAR, 'units_lo']:.0f}-{fc.loc[CAPACITY_YEAR, 'units_hi']:.0f}) -> "
                f"{c['tok_per_day_p50'] / 1e12:.0f}T tokens/day at the measured {c['tok_per_s_per_chip']:.0f} tok/s/NPU "
                f"({c['tok_per_day_lo'] / 1e12:.0f}-{c['tok_per_day_hi'] / 1e12:.0f}T)")
    if len(capacity) > 1 and np.isfinite(capacity.iloc[1]["tok_per_s_per_chip"]):
        m = capacity.iloc[1]
        forecast += f"; perf core: {m['tok_per_s_per_chip']:.0f} tok/s/NPU -> {m['tok_per_day_p50'] / 1e12:.0f}T/day"
    status = ("ramp bound by the supply ceiling (two dated counts, 300+ is sets sold not delivered); "
              f"K in {ramp.k_range[0]:.0f}-{ramp.k_range[1]:.0f} systems")
    rows = " ".join(str(r) for r in pts["row"]) + " " + " ".join(rep["row"]) + " " + " ".join(production["rows"]) + \
        f" {int(c['row'])}"
    return {"metric": "supernode", "latest": latest, "trend": trend, "forecast": forecast, "status": status,
            "as_of": ramp.as_of, "sources": "supernode_events rows " + " ".join(sorted(set(rows.split()), key=int)),
            "yield_frac": float(rep["yield_frac"].iloc[-1]),
            "units_p50": float(fc.loc[CAPACITY_YEAR, "units_p50"]), "units_lo": float(fc.loc[CAPACITY_YEAR, "units_lo"]),
            "units_hi": float(fc.loc[CAPACITY_YEAR, "units_hi"]),
            "capacity_tok_per_day": float(c["tok_per_day_p50"])}


#: Measured cost of one megakernel bootstrap resample (all families) and of one supernode ramp
#: draw on the dev box [s]; they size the estimate :func:`check_sizes` refuses beyond.
S_PER_BOOT = 0.035
S_PER_DRAW = 0.018
#: Longest estimated run :func:`watch` starts [s].
MAX_WATCH_S = 600.0


def check_sizes(n_boot: Any, n_draws: Any, seed: Any = 0, ci: Any = 0.9) -> float:
    """Check the sizes of a watch run before any work; return the estimated time [s].

    Raises a one-line :class:`~tokenomics.errors.ValidationError` for non-integers, negative
    seeds, ``ci`` outside (0, 1), or an estimate above :data:`MAX_WATCH_S`.
    """
    from ..errors import ValidationError

    v.fraction(ci, "ci", allow_zero=False, allow_one=False)
    v.draws(n_boot, "n_boot", ci=ci, allow_zero=True)
    v.draws(n_draws, "n_draws", ci=ci)
    v.seed(seed)
    est = n_boot * S_PER_BOOT + n_draws * S_PER_DRAW
    if est > MAX_WATCH_S:
        raise ValidationError(f"n_boot {int(n_boot):,} and n_draws {int(n_draws):,} would take ~{_human_s(est)} "
                              f"({S_PER_BOOT} s a resample, {S_PER_DRAW} s a draw); keep it under "
                              f"{MAX_WATCH_S / 60:.0f} min (e.g. n_boot <= {int(MAX_WATCH_S / 2 / S_PER_BOOT):,}, "
                              f"n_draws <= {int(MAX_WATCH_S / 2 / S_PER_DRAW):,})")
    return est


def _human_s(s: float) -> str:
    for unit, size in (("days", 86400.0), ("h", 3600.0), ("min", 60.0)):
        if s >= size:
            return f"{s / size:,.1f} {unit}"
    return f"{s:.0f} s"


def watch(n_boot: int = 200, n_draws: int = 400, seed: int = 0, ci: float = 0.9,
          megakernel_events: Any = None, supernode_events: Any = None, prices: Any = None) -> Dashboard:
    """Compute the three watch metrics from the bundled datasets (or your own files).

    Parameters
    ----------
    n_boot : int
        Megakernel adoption dates: 0 fits the curve once, without an interval; otherwise the
        bootstrap is exact (:func:`~tokenomics.watch.megakernels.fit_adoption`) unless an events
        file has more than ``MAX_EXACT_CLASSES`` resample classes, when it draws this many.
    n_draws : int
        Monte Carlo draws for the supernode ramp.
    seed : int
        Random seed of the supernode ramp's draws (and of a drawn megakernel bootstrap; the
        bundled events' is exact); results are reproducible for a given seed.
    ci : float
        Interval level [frac].
    megakernel_events, supernode_events : path or DataFrame, optional
        Replace the bundled event files (validated: an unknown kind or a missing date is a
        one-line :class:`~tokenomics.errors.DataError` naming the row).
    prices : path or DataFrame, optional
        Replace the bundled API price list (``datasets/api_prices.csv``, same columns; read by
        :func:`~tokenomics.watch.prices.read_prices`, every bad row named in one error). The whole
        price metric is recomputed from it: decline rates, cut events, headroom, the forecast and
        the constant-quality index (from its rows whose model has characteristics in
        ``model_traits.csv``, with the bundled third-party prices; the others are counted as
        left out).
    """
    import pandas as pd

    from . import megakernels as mk
    from . import prices as pr
    from . import supernodes as sn

    check_sizes(n_boot, n_draws, seed, ci)
    user_prices = None
    if prices is not None:
        user_prices = pr.read_prices(prices)
        pr.check_price_metric(user_prices, "prices file" if isinstance(prices, pd.DataFrame) else
                              f"prices file {str(prices)!r}")
    mke = mk.load_events(megakernel_events)  # the inputs first: a bad file fails before any work
    sne = sn.load_events(supernode_events)
    # the supernode figures next: too few yields, dated counts or benchmark rows in a user's file
    # are a one-line DataError before the price and megakernel work
    yields = sn.yield_trajectory(sne)
    production = sn.production_ranges(sne)
    ramp = sn.delivery_ramp(sne, years=RAMP_YEARS, n_draws=n_draws, ci=ci, seed=seed)
    meas, mrow = sn.measured_tok_per_s_per_chip(sne)
    pw = pr.price_watch(user_prices, ci=ci)
    fc = pr.forecast_price(user_prices, ci=ci)
    cq, pidx, paths = _price_index(user_prices)
    index = mk.adoption_index(mke)
    import warnings

    fits = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", category=Warning)
        for fam in ["all"] + sorted(index["family"].unique().tolist()):
            if fam != "all" or "all" not in fits:
                fits[fam] = mk.fit_adoption(mke, family=fam, n_boot=n_boot, ci=ci, seed=seed)
    cfg = SPEEDUP_CONFIG
    speedup = mk.expected_speedup(cfg["hardware"], cfg["model"], cfg["batch"], cfg["context_tok"])
    mod, mnote = sn.modelled_tok_per_s_per_chip()
    fcr = ramp.forecast.set_index("t_year").loc[CAPACITY_YEAR]
    cap = []
    for label, tps, note, row in (("measured (arXiv 2506.12708)", meas, "published decode rate, DeepSeek-R1", mrow),
                                  ("perf core", mod, mnote, 0)):
        cap.append({"basis": label, "tok_per_s_per_chip": tps, "date": iso(CAPACITY_YEAR),
                    "tok_per_day_p50": float(sn.implied_capacity(fcr["units_p50"], tps)) if np.isfinite(tps) else np.nan,
                    "tok_per_day_lo": float(sn.implied_capacity(fcr["units_lo"], tps)) if np.isfinite(tps) else np.nan,
                    "tok_per_day_hi": float(sn.implied_capacity(fcr["units_hi"], tps)) if np.isfinite(tps) else np.nan,
                    "note": note, "row": row})
    capacity = as_dates(pd.DataFrame(cap), ("date",))
    summary = as_dates(pd.DataFrame([_price_row(pw, fc, cq), _megakernel_row(index, fits, speedup),
                                     _supernode_row(yields, production, ramp, capacity)]), ("as_of",))
    if user_prices is not None:  # the rows cited are the user's file's, not the bundled table's
        name = "prices file" if isinstance(prices, pd.DataFrame) else f"{Path(prices).name}"
        summary.loc[0, "sources"] = summary.loc[0, "sources"].replace("api_prices rows", f"{name} rows", 1)
    return Dashboard(price=pw, price_forecast=fc, adoption_index=index, adoption_fits=fits, speedup=speedup,
                     yields=yields, production=production, ramp=ramp, capacity=capacity, summary=summary,
                     price_index=pidx, constant_quality=None if cq is None or "unavailable" in cq else cq,
                     price_paths=paths, prices=user_prices)


def indexable_prices(prices: "pd.DataFrame") -> "tuple[pd.DataFrame, int]":
    """The price rows the constant-quality index can take (list prices of a model with a row in
    ``model_traits.csv``; other kinds pass through, the index skips them), and how many list
    prices were left out."""
    from .price_index import _traits
    from .prices import TREND_KINDS

    keep = prices["model"].isin(_traits(None).index) | ~prices["price_kind"].isin(TREND_KINDS)
    return prices[keep].reset_index(drop=True), int((~keep).sum())


def _price_index(prices: "pd.DataFrame | None") -> tuple[Any, Any, Any]:
    """The constant-quality decline, index and like-for-like paths (blended price); from a user's
    price list, only over its rows with model characteristics (``left_out`` counts the others).
    Where a user's list allows no fit: ``({"unavailable": reason, ...}, None, None)``."""
    from .price_index import constant_quality_decline, hedonic_sample, like_for_like_paths, price_index

    left_out = 0
    if prices is not None:
        prices, left_out = indexable_prices(prices)
    try:
        hs = hedonic_sample(prices, measure="blended")
        cq = constant_quality_decline(hs, measure="blended", ci=0.95)
        pidx = price_index(hs, measure="blended", ci=0.95)
        paths = like_for_like_paths(hs, measure="blended")
    except (TokenomicsError, ValueError, np.linalg.LinAlgError) as exc:
        if prices is None:
            raise  # the bundled data always fits: a failure there is a bug, not a user's file
        return {"unavailable": " ".join(str(exc).split())[:200], "left_out": left_out}, None, None
    if left_out:
        cq = {**cq, "left_out": left_out}
    return cq, pidx, paths


# ----------------------------------------------------------------------------------------------
# report


def price_points(prices: "pd.DataFrame | None" = None) -> "pd.DataFrame":
    """The list prices the price chart draws: the API prices (``prices``, default the bundled
    ones) of the kinds the trend is fitted on (:data:`~tokenomics.watch.prices.TREND_KINDS`),
    with a positive blended price."""
    from . import prices as pr

    p = pr.load_prices(prices)
    col = "blended_usd_per_m_tok" if "blended_usd_per_m_tok" in p.columns else "blended_usd_per_1k_tok"
    return p[p["price_kind"].isin(pr.TREND_KINDS) & (p[col] > 0)]


def _plot(d: Dashboard, metrics: tuple[str, ...], path: Path, figsize: tuple[float, float],
          width_ratios: tuple[float, ...] | None = None) -> None:
    """Draw ``metrics`` side by side with :func:`tokenomics.plot.watch`; save as PNG (atomically)."""
    from .. import plot
    from ..io import save_png

    kw = {"gridspec_kw": {"width_ratios": list(width_ratios)}} if width_ratios else {}
    fig, axes = plot._pyplot().subplots(1, len(metrics), figsize=figsize, squeeze=False, **kw)
    for metric, ax in zip(metrics, axes[0]):
        plot.watch(metric, d, ax=ax, prices=price_points(d.prices) if metric == "price" else None)
    fig.tight_layout()
    save_png(fig, path, bbox_inches="tight")


def _plot_price(d: Dashboard, path: Path) -> None:
    _plot(d, ("price",), path, (9, 5.5))


def _plot_megakernel(d: Dashboard, path: Path) -> None:
    _plot(d, ("megakernel", "speedup"), path, (12, 5), (2, 1))


def _plot_supernode(d: Dashboard, path: Path) -> None:
    _plot(d, ("yield", "supernode"), path, (12, 5))


def _md_table(df: "pd.DataFrame", floatfmt: str = ".4g") -> str:
    cols = [str(c) for c in df.columns]
    lines = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    for rec in df.itertuples(index=False):
        cells = []
        for x in rec:
            if hasattr(x, "strftime") or isinstance(x, np.datetime64):
                cells.append(day(x))
            elif isinstance(x, (float, np.floating)):
                cells.append("" if not np.isfinite(x) else format(float(x), floatfmt))
            else:
                cells.append(str(x).replace("|", "/"))
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def write_report(d: Dashboard, out_dir: "str | Path") -> list[Path]:
    """Write the Markdown report and one PNG per metric into ``out_dir``; return the paths.

    The directory is written atomically (:func:`tokenomics.io.atomic_dir`): an interrupted run
    leaves the old files or the new ones, never a mix."""
    from ..io import atomic_dir, check_output

    final = check_output(out_dir, kind="dir")
    with atomic_dir(final, owned=WATCH_FILES) as tmp:
        paths = _write_into(d, tmp)
    return [final / p.name for p in paths]


#: Files :func:`write_report` writes.
WATCH_FILES = ("watch.md", "watch_price.png", "watch_megakernel.png", "watch_supernode.png")


def _write_into(d: Dashboard, out: Path) -> list[Path]:
    from ..io import write_text

    pngs = {"price": out / "watch_price.png", "megakernel": out / "watch_megakernel.png",
            "supernode": out / "watch_supernode.png"}
    _plot_price(d, pngs["price"])
    _plot_megakernel(d, pngs["megakernel"])
    _plot_supernode(d, pngs["supernode"])
    s = d.summary
    md = ["# Watch metrics", "", "Generated by `tokenomics watch`; every figure traces to the dataset rows in "
          "`sources`. Intervals are 90 %.", ""]
    for rec in s.itertuples(index=False):
        md += [f"## {rec.metric}", "", f"- **latest**: {rec.latest}", f"- **trend**: {rec.trend}",
               f"- **forecast**: {rec.forecast}", f"- **status**: {rec.status}", f"- **as of**: {day(rec.as_of)}",
               f"- **sources**: {rec.sources}", "", f"![{rec.metric}]({pngs[rec.metric].name})", ""]
        if rec.metric == "price":
            cols = ["group", "n", "first_date", "last_date", "decline_factor_per_year", "decline_factor_lo",
                    "decline_factor_hi", "r2", "note"]
            md += ["Decline factor per year by tier and by provider (100B+):", "",
                   _md_table(d.price.to_frame()[["by"] + cols]), "",
                   "Price changes within a model line (negative = cut):", "",
                   _md_table(d.price.events[["date", "region", "provider", "model_before", "model_after",
                                             "change_frac", "direction", "rows"]]), "",
                   "Modelled cost floor:", "", _md_table(d.price.floor), ""]
            if d.price.cost_trend is not None and len(d.price.cost_trend):
                md += ["Modelled cost decline per year by speed per user, with and without speculative decoding:",
                       "", _md_table(d.price.cost_trend), ""]
            if d.price_index is not None:
                md += ["Constant-quality (hedonic) price index by half-year, chat-mix price, 95 % interval "
                       "(raw_index: the unadjusted geometric mean):", "", _md_table(d.price_index), "",
                       "Like-for-like price paths (same model, same provider):", "",
                       _md_table(d.price_paths), ""]
        elif rec.metric == "megakernel":
            fits = [f.to_frame() for f in d.adoption_fits.values()]
            import pandas as pd

            md += ["Adoption fits per family:", "",
                   _md_table(pd.concat(fits, ignore_index=True).drop(columns=["rows"])), "",
                   "Expected decode speedup by batch (performance core):", "",
                   _md_table(d.speedup), ""]
        else:
            md += ["Die yield:", "", _md_table(d.yields.drop(columns=["note"])), "",
                   "Production (ranges where sources conflict):", "", _md_table(d.production), "",
                   "Cumulative systems (logistic ramp, Monte Carlo):", "", _md_table(d.ramp.forecast), "",
                   "Implied capacity:", "", _md_table(d.capacity), ""]
    md_path = write_text(out / "watch.md", "\n".join(md) + "\n")
    return [md_path, *pngs.values()]
