"""The cost and list price of a frontier-class token per year, from a hardware roadmap priced by the core.

For each year, the systems of ``datasets/hardware_roadmap.csv`` available by then (labelled
``shipping`` or ``announced``) are priced for one model at one speed per user, as the watch's cost
floor prices them (:func:`tokenomics.watch.prices.system_cost`: cheapest layout and batch,
prefill and decode disaggregated, bottom-up cost, no margin), and the cheapest gives the year's
cost. The list price is that cost marked up by the margin providers earn today: the median implied
gross margin of the bundled price list (:func:`tokenomics.market.market`, stored as
``market_margin_frac`` by ``tools/fit_market_margin.py``), held constant, since the list is one
snapshot and no trend in it is measured.

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
        Gross margin of the list price over cost [0-1); default ``market_margin_frac`` of
        ``datasets/demand_scenarios.csv`` (:func:`market_margin_frac` of the bundled list, fitted by
        ``tools/fit_market_margin.py``).

    Returns
    -------
    RoadmapPath
        Columns ``year``, ``system`` (the cheapest available), ``status``, ``cost_usd_per_m_output_tok``,
        ``usd_per_m_output_tok`` (list price = cost / (1 - margin)), ``margin_frac``,
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
    if margin_frac is None:
        from .scenarios import parameter

        margin = parameter("market_margin_frac")
        margin_basis = ("median implied margin of the bundled list prices (tokenomics market; "
                        "market_margin_frac in datasets/demand_scenarios.csv, tools/fit_market_margin.py)")
    else:
        margin, margin_basis = float(fraction(margin_frac, "margin_frac")), "stated"
        if margin >= 1:
            raise ValidationError(f"margin_frac must be below 1 (a list price infinitely above cost), got {margin:g}")
    costs = {s: system_cost(s, model, speed) for s in rm["system"]}
    rows = []
    for y in [int(y) for y in years]:
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
