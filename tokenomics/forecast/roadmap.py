"""The cost and list price of a frontier-class token per year, from a hardware roadmap priced by the core.

For each year, the systems of ``datasets/hardware_roadmap.csv`` available by then (labelled
``shipping`` or ``announced``) are priced for one model at one speed per user, as the watch's cost
floor prices them (:func:`tokenomics.watch.prices.system_cost`: cheapest layout and batch,
prefill and decode disaggregated, bottom-up cost, no margin), and the cheapest gives the year's
cost. The list price is that cost marked up by a margin path fitted on the bundled price list
(:func:`tokenomics.market.market`): the median implied gross margin (``market_margin_frac``) and
the median regression of each price's implied margin on the date it took effect
(:func:`market_margin_trend`, ``market_margin_trend_frac_per_year``; both stored by
``tools/fit_market_margin.py``). The path follows the trend where its 95 % interval excludes zero
and holds the median where it does not (:func:`margin_path`): on the bundled list the trend is not
distinguishable from zero, so the margin is held.

Engines get faster with each release, but only the past is measured
(``datasets/engine_maturity.csv``); the path holds today's engines, so after the newest system it
stays flat: a lower bound on how far cost can fall with the roadmap as stated.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from .._display import Display
from ..errors import ValidationError

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

#: Availability labels a roadmap row may carry.
STATUSES: tuple[str, ...] = ("shipping", "announced")

#: Model priced along the roadmap: a 671B-parameter MoE, the frontier-class open model the watch's
#: cost floor and the forecast's infrastructure view price.
ROADMAP_MODEL = "deepseek-v3"


def load_roadmap(data: "pd.DataFrame | None" = None) -> "pd.DataFrame":
    """Roadmap rows (``system, available_year, status, region``), validated.

    Parameters
    ----------
    data : pandas.DataFrame, optional
        A user's roadmap with those columns (``source`` optional); default the bundled file.

    Raises
    ------
    UnknownNameError
        A system not in the catalog (``tokenomics systems``) or a region without data-centre
        electricity data (``datasets/dc_electricity.csv``), with suggestions.
    ValidationError
        A missing column, a year that is not a whole number between 2000 and 2100, or a status
        other than :data:`STATUSES`.
    """
    from ..catalog import check_columns, load
    from ..errors import unknown_name
    from ..perf.parallel import system_names

    df = (load("hardware_roadmap") if data is None else data).copy()
    check_columns(df, ("system", "available_year", "status", "region"), what="hardware roadmap")
    from .history import dc_regions

    names, regions = system_names(), dc_regions()
    for i, r in enumerate(df.itertuples(index=False)):
        if r.system not in names:
            raise unknown_name("roadmap system", r.system, names)
        if r.region not in regions:
            raise unknown_name("roadmap region", r.region, regions)
        y = float(r.available_year) if str(r.available_year).strip() else float("nan")
        if not (np.isfinite(y) and y == int(y) and 2000 <= y <= 2100):
            raise ValidationError(f"hardware roadmap row {i + 1} ({r.system}): available_year {r.available_year!r} "
                                  "must be a year such as 2026")
        if r.status not in STATUSES:
            raise ValidationError(f"hardware roadmap row {i + 1} ({r.system}): status {r.status!r} must be one of "
                                  f"{', '.join(STATUSES)}")
    df["available_year"] = df["available_year"].astype(int)
    return df.reset_index(drop=True)


def market_margin_frac(prices: "pd.DataFrame | None" = None) -> tuple[float, int]:
    """Median implied gross margin of a price list [0-1] and the number of rows it is taken over
    (:func:`tokenomics.market.summary` of :func:`tokenomics.market.market` with its defaults)."""
    from ..market import market, summary

    s = summary(market(prices))
    if not s["n_priced"]:
        raise ValidationError("no row of the price list could be priced: no margin to mark the cost up by")
    return s["median_implied_margin_frac"], s["n_priced"]


#: Bounds of a trending margin path [fraction of the list price]: a list price at or below cost
#: (margin 0) is a loss leader no path should end in, and 0.95 is twenty times cost.
MARGIN_PATH_BOUNDS: tuple[float, float] = (0.0, 0.95)


def market_margin_trend(prices: "pd.DataFrame | None" = None) -> dict[str, float]:
    """Median regression of a price list's implied gross margins on the date each price took effect.

    ``statsmodels`` ``QuantReg`` (q = 0.5) of :func:`tokenomics.market.market`'s
    ``implied_margin_frac`` on the decimal year each price took effect
    (:func:`tokenomics.watch.prices.with_price_dates`: ``price_effective_date``, else ``date``, else
    ``as_of``; a month read as its 15th, a year as 1 July). A median, not a mean: implied
    margins run from far below zero (prices under the modelled cost) to 0.9.

    Parameters
    ----------
    prices : pandas.DataFrame, optional
        A market price table; default the bundled ``datasets/market_prices.csv``.

    Returns
    -------
    dict
        ``slope_frac_per_year`` and its 95 % interval ``slope_lo_95``, ``slope_hi_95`` [fraction
        of the list price per year], ``centre_year`` [decimal year] (the prices' mean date),
        ``first_year``, ``last_year`` and ``n`` (priced and dated rows).
    """
    import pandas as pd
    import statsmodels.api as sm

    from ..catalog import load
    from ..market import market
    from ..watch.prices import with_price_dates

    raw = load("market_prices") if prices is None else prices
    m = market(raw)
    if len(m) != len(raw):  # the market prices row for row; a date belongs to its own row
        raise ValidationError(f"the market priced {len(m)} rows of a {len(raw)}-row price list; cannot date their margins")
    t = with_price_dates(raw.reset_index(drop=True), "market price list")["t_year"].to_numpy(float)
    y = pd.to_numeric(m["implied_margin_frac"], errors="coerce").to_numpy(float)
    ok = np.isfinite(t) & np.isfinite(y)
    if ok.sum() < 3 or np.ptp(t[ok]) <= 0:
        raise ValidationError(f"a margin trend needs three or more priced rows over more than one date, got {int(ok.sum())}")
    centre = float(t[ok].mean())
    res = sm.QuantReg(y[ok], sm.add_constant(t[ok] - centre)).fit(q=0.5)
    lo, hi = (float(v) for v in np.asarray(res.conf_int(alpha=0.05))[1])
    return {"slope_frac_per_year": float(res.params[1]), "slope_lo_95": lo, "slope_hi_95": hi,
            "centre_year": centre, "first_year": float(t[ok].min()), "last_year": float(t[ok].max()),
            "n": int(ok.sum())}


def margin_path(years: Any, median_frac: float, trend: dict[str, float]) -> tuple[np.ndarray, str]:
    """The gross margin of the list price each year [fraction of the list price] and how it was set.

    The median ``median_frac`` moved by the trend's slope from its centre year where the slope's
    95 % interval excludes zero, bounded by :data:`MARGIN_PATH_BOUNDS`; held at the median where
    the interval includes zero (a trend the data cannot tell from none is not extrapolated).

    Parameters
    ----------
    years : array-like
        Calendar years (each read at its middle, ``year + 0.5``).
    median_frac : float
        Median implied margin [0-1).
    trend : dict
        :func:`market_margin_trend`'s ``slope_frac_per_year``, ``slope_lo_95``, ``slope_hi_95``,
        ``centre_year``.

    Returns
    -------
    (numpy.ndarray, str)
        The margin per year and ``"held"`` or ``"trend"``.

    Examples
    --------
    A trend of -0.05 a year (95 % -0.08 to -0.02) centred on mid-2026 from a 0.35 median:

    >>> m, how = margin_path([2026, 2028], 0.35, {"slope_frac_per_year": -0.05, "slope_lo_95": -0.08,
    ...                                          "slope_hi_95": -0.02, "centre_year": 2026.5})
    >>> [round(float(v), 3) for v in m], how
    ([0.35, 0.25], 'trend')
    """
    y = np.asarray(list(years), dtype=float) + 0.5
    if trend["slope_lo_95"] <= 0.0 <= trend["slope_hi_95"]:
        return np.full(y.shape, float(median_frac)), "held"
    m = float(median_frac) + trend["slope_frac_per_year"] * (y - trend["centre_year"])
    return np.clip(m, *MARGIN_PATH_BOUNDS), "trend"


def stored_margin_trend() -> dict[str, float]:
    """:func:`market_margin_trend` of the bundled list as ``tools/fit_market_margin.py`` stored it
    (``market_margin_trend_frac_per_year`` in ``datasets/demand_scenarios.csv``: ``base`` the slope,
    ``low`` / ``high`` its 95 % interval; ``market_margin_trend_centre_year``)."""
    from .scenarios import parameter

    name = "market_margin_trend_frac_per_year"
    return {"slope_frac_per_year": parameter(name, "base"), "slope_lo_95": parameter(name, "low"),
            "slope_hi_95": parameter(name, "high"),
            "centre_year": parameter("market_margin_trend_centre_year")}


def _pct(v: float) -> str:
    return f"{100 * v:+.0f}"


def margin_trend_text(trend: dict[str, float]) -> str:
    """``"+14 points a year (95 % -30 to +59)"``: a margin trend in percentage points of the list price."""
    return (f"{_pct(trend['slope_frac_per_year'])} points a year (95 % {_pct(trend['slope_lo_95'])} to "
            f"{_pct(trend['slope_hi_95'])})")


@dataclass(frozen=True, repr=False)
class RoadmapPath(Display):
    """Cost and list price per year along a hardware roadmap; see :func:`cost_path`."""

    frame: "pd.DataFrame"

    def to_frame(self) -> "pd.DataFrame":
        """One row per year."""
        return self.frame.copy()


def cost_path(years: Any = range(2024, 2031), *, model: str = ROADMAP_MODEL, tok_per_s_per_user: float | None = None,
              region: str = "world", roadmap: "pd.DataFrame | None" = None,
              margin_frac: float | None = None) -> RoadmapPath:
    """The cheapest modelled cost per million output tokens each year, and the list price it implies.

    Parameters
    ----------
    years : iterable of int
        Calendar years (a system counts from its ``available_year``).
    model : str
        Catalogued model priced on every system.
    tok_per_s_per_user : float, optional
        Output tokens/s each user sees [tokens/s]; default 35 (InferenceX's DeepSeek-R1 quoting
        speed, the watch's cost floor).
    region : str
        Roadmap rows of this region (``world``, ``china``).
    roadmap : pandas.DataFrame, optional
        A user's roadmap (:func:`load_roadmap`).
    margin_frac : float, optional
        Gross margin of the list price over cost [0-1), held every year; default the margin path of
        the bundled list (:func:`margin_path` of ``market_margin_frac`` and the stored
        :func:`market_margin_trend`, both fitted by ``tools/fit_market_margin.py``).

    Returns
    -------
    RoadmapPath
        Columns ``year``, ``system`` (the cheapest available), ``status``, ``cost_usd_per_m_output_tok``,
        ``usd_per_m_output_tok`` (list price = cost / (1 - margin)), ``margin_frac`` (that year's),
        ``n_systems_available``, ``n_systems_priced``, ``model``, ``tok_per_s_per_user``.
        A year with no priced system has NaN prices and says why in ``note``.
    """
    import pandas as pd

    from .._validate import finite, fraction
    from ..econ.pricing import REFERENCE_TOK_PER_S_PER_USER
    from ..watch.prices import system_cost

    rm = load_roadmap(roadmap)
    regions = sorted(rm["region"].unique())
    if region not in regions:
        from ..errors import unknown_name

        raise unknown_name("roadmap region", region, regions)
    rm = rm[rm["region"] == region]
    speed = REFERENCE_TOK_PER_S_PER_USER if tok_per_s_per_user is None else float(finite(tok_per_s_per_user, "tok_per_s_per_user"))
    years = [int(y) for y in years]
    if margin_frac is None:
        from .scenarios import parameter

        median, trend = parameter("market_margin_frac"), stored_margin_trend()
        margins, how = margin_path(years, median, trend)
        margin_basis = (f"median implied margin of the bundled list prices ({100 * median:.0f} %; tokenomics market), "
                        + ("held: its trend over the list's dates, " + margin_trend_text(trend)
                           + ", is not distinguishable from zero" if how == "held" else
                           "moved by its trend over the list's dates, " + margin_trend_text(trend))
                        + " (datasets/demand_scenarios.csv, tools/fit_market_margin.py)")
    else:
        margin = float(fraction(margin_frac, "margin_frac"))
        if margin >= 1:
            raise ValidationError(f"margin_frac must be below 1 (a list price infinitely above cost), got {margin:g}")
        margins, margin_basis = np.full(len(years), margin), "stated"
    costs = {s: system_cost(s, model, speed) for s in rm["system"]}
    rows = []
    for y, margin in zip(years, margins.tolist()):
        avail = rm[rm["available_year"] <= y]
        priced = [(costs[s]["cost_usd_per_m_tok"], s, st) for s, st in zip(avail["system"], avail["status"])
                  if costs[s]["status"] == "modelled"]
        if priced:
            cost, best, status = min(priced)
            note = ""
        else:
            cost, best, status = float("nan"), "", ""
            note = "no system available yet" if avail.empty else "no available system could be priced: " + "; ".join(
                f"{s}: {costs[s]['status']}" for s in avail["system"])[:300]
        rows.append({"year": y, "system": best, "status": status, "cost_usd_per_m_output_tok": cost,
                     "usd_per_m_output_tok": cost / (1.0 - margin), "margin_frac": margin,
                     "n_systems_available": int(len(avail)), "n_systems_priced": len(priced),
                     "model": model, "tok_per_s_per_user": speed, "note": note})
    frame = pd.DataFrame(rows)
    frame.attrs.update(margin_basis=margin_basis, region=region)
    return RoadmapPath(frame)


def regional_cost_paths(years: Any, *, model: str | None = None, tok_per_s_per_user: float | None = None,
                        roadmap: "pd.DataFrame | None" = None) -> "pd.DataFrame":
    """:func:`cost_path` of every region the roadmap names, one frame with a ``region`` column first
    (``attrs["margin_basis"]`` says where the margin came from)."""
    import pandas as pd

    rm = load_roadmap(roadmap)
    kw = {"model": model} if model else {}
    paths = [cost_path(years, tok_per_s_per_user=tok_per_s_per_user, region=r, roadmap=rm, **kw)
             for r in sorted(set(rm["region"]))]
    df = pd.concat([p.to_frame().assign(region=p.frame.attrs["region"]) for p in paths], ignore_index=True)
    df = df[["region"] + [c for c in df.columns if c != "region"]]
    df.attrs["margin_basis"] = paths[0].frame.attrs["margin_basis"]
    return df
