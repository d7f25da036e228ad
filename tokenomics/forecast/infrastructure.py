"""From demand to infrastructure: chips, nodes, spend and capex needed to serve a forecast.

:func:`serving_requirements` is a pure, vectorised function of the demand, the throughput of
one chip, its all-in cost per hour, its capex and a price path. :func:`plan_infrastructure` applies
it to a :class:`~tokenomics.forecast.demand.ForecastResult` with a system from
``datasets/serving_systems.csv`` (or the perf core for ``h200``).

Sizing rules (all per year):

- ``n_chips = tokens_per_day / 86400 / (tok_per_s_per_chip * utilization_frac)`` at the year-end
  daily rate (capacity must meet the December rate);
- ``cost_usd = n_chips_avg * cost_usd_per_chip_h * HOURS_PER_YEAR`` (8,760) with the chips needed for the year's
  mean rate (the running cost of serving);
- ``spend_usd = tokens_per_year * price_usd_per_1k_tok / 1000`` (what buyers pay);
- ``capex_usd = (max(n_chips - n_chips_prev, 0) + n_chips_prev / life_years) * capex_usd_per_chip``
  (growth plus replacement of the installed base at the end of its economic life).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from .._display import Display
from .._validate import fraction, positive
from ..econ.pricing import price_usd_per_1k_tok as _price_per_1k
from ..units import HOURS_PER_YEAR

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

S_PER_DAY = 86400.0

#: InferenceX tier and survey used for $/chip-hour when ``tokenomics.econ`` is available.
ECON_TIER, ECON_VINTAGE = "hyperscaler-owned", "2026-07"

#: Model and settings used when the perf core sizes an ``h200`` (see serving_systems.csv note).
H200_PERF = {"model": "llama-3.1-70b", "execution": "graph", "context_tok": 2048,
             "weight_precision": "fp8"}


@dataclass(frozen=True, repr=False)
class InfraResult(Display):
    """Yearly serving requirements; see :func:`serving_requirements` for the columns."""

    frame: "pd.DataFrame"

    def to_frame(self) -> "pd.DataFrame":
        """One row per year (and series): chips, nodes, cost, spend, capex, margins."""
        return self.frame.copy()


def serving_requirements(tokens_per_day_end, tok_per_s_per_chip, cost_usd_per_chip_h,
                         price_usd_per_1k_tok, *, tokens_per_day_mean=None,
                         utilization_frac: float = 0.5, capex_usd_per_chip=np.nan,
                         n_chips_per_node: int = 1, life_years: float = 4.0,
                         year=None) -> InfraResult:
    """Chips, nodes, running cost, buyers' spend and capex to serve a demand path.

    Parameters
    ----------
    tokens_per_day_end : array-like
        Daily token rate to provision for, per year (e.g. the December rate) [tokens/day].
    tok_per_s_per_chip : float or array-like
        Serving throughput of one chip at full load [tokens/s].
    cost_usd_per_chip_h : float or array-like
        All-in cost of one chip for one hour [USD/h].
    price_usd_per_1k_tok : float or array-like
        Price buyers pay per year [USD/1K tokens].
    tokens_per_day_mean : array-like, optional
        Mean daily rate over each year [tokens/day] (for cost and spend); default
        ``tokens_per_day_end``.
    utilization_frac : float
        Mean served load over provisioned capacity [0-1].
    capex_usd_per_chip : float
        Purchase cost per chip incl. its server share [USD]; NaN skips capex.
    n_chips_per_node : int
        Chips per node (8 for an HGX server, 72 for a GB200 NVL72 rack).
    life_years : float
        Economic life used for replacement capex [years].
    year : array-like, optional
        Labels for the rows.

    Returns
    -------
    InfraResult
        Columns ``year, tokens_per_day, n_chips, n_nodes, cost_usd, spend_usd,
        cost_usd_per_1k_tok, price_usd_per_1k_tok, gross_margin_frac, capex_usd``.

    Examples
    --------
    1e12 tokens/day at 1000 tok/s per chip and 50 % load: 1e12 / 86400 / 500 = 23,148 chips.

    >>> r = serving_requirements([1e12], 1000.0, 2.0, 0.001, utilization_frac=0.5)
    >>> round(float(r.frame["n_chips"][0]))
    23148
    """
    import pandas as pd

    end = np.atleast_1d(np.asarray(positive(tokens_per_day_end, "tokens_per_day_end"), dtype=float))
    mean = end if tokens_per_day_mean is None else np.atleast_1d(
        np.asarray(positive(tokens_per_day_mean, "tokens_per_day_mean"), dtype=float))
    tps = np.asarray(positive(tok_per_s_per_chip, "tok_per_s_per_chip"), dtype=float)
    cost_h = np.asarray(positive(cost_usd_per_chip_h, "cost_usd_per_chip_h"), dtype=float)
    price = np.asarray(positive(price_usd_per_1k_tok, "price_usd_per_1k_tok"), dtype=float)
    fraction(utilization_frac, "utilization_frac", allow_zero=False)
    positive(n_chips_per_node, "n_chips_per_node")
    positive(life_years, "life_years")

    served_per_chip = tps * utilization_frac  # tokens/s per provisioned chip
    n_chips = end / S_PER_DAY / served_per_chip
    n_chips_mean = mean / S_PER_DAY / served_per_chip
    cost = n_chips_mean * cost_h * HOURS_PER_YEAR
    spend = mean * HOURS_PER_YEAR / 24 * price / 1000.0
    cost_1k = _price_per_1k(cost_h, tps, utilization_frac)
    prev = np.concatenate([[np.nan], n_chips[:-1]]) if n_chips.size > 1 else np.array([np.nan])
    if np.isfinite(capex_usd_per_chip):
        positive(capex_usd_per_chip, "capex_usd_per_chip")
        prev0 = np.where(np.isnan(prev), 0.0, prev)
        capex = (np.maximum(n_chips - prev0, 0.0) + prev0 / life_years) * capex_usd_per_chip
        capex = np.where(np.isnan(prev), np.nan, capex)  # first year: no installed base known
    else:
        capex = np.full_like(n_chips, np.nan)
    frame = pd.DataFrame({
        "year": np.arange(len(end)) if year is None else np.asarray(year),
        "tokens_per_day": end,
        "n_chips": n_chips,
        "n_nodes": n_chips / n_chips_per_node,
        "cost_usd": cost,
        "spend_usd": spend,
        "cost_usd_per_1k_tok": np.broadcast_to(cost_1k, end.shape).astype(float),
        "price_usd_per_1k_tok": np.broadcast_to(price, end.shape).astype(float),
        "gross_margin_frac": 1.0 - np.broadcast_to(cost_1k, end.shape) / price,
        "capex_usd": capex,
    })
    return InfraResult(frame)


def price_path(years) -> np.ndarray:
    """Price per 1K tokens by year from the dataset's start price and yearly decline [USD/1K tok].

    ``price(y) = p0 * (1 - d) ** (y + 0.5 - y0)`` with ``p0``, ``d`` from
    ``datasets/demand_scenarios.csv`` (``y0`` = its ``as_of``, 2025-02 -> 2025.1).
    """
    from .scenarios import _params, parameter

    p0 = parameter("price_usd_per_1k_tok_2025")
    d = parameter("price_decline_frac_per_year")
    row = _params().query("parameter == 'price_usd_per_1k_tok_2025'").iloc[0]
    from .history import decimal_year

    y0 = float(decimal_year([row["as_of"]])[0])
    return p0 * (1.0 - d) ** (np.asarray(years, dtype=float) + 0.5 - y0)


def system_names() -> list[str]:
    """Systems in ``datasets/serving_systems.csv``."""
    from ..catalog import load

    return list(load("serving_systems").index)


def system(name: str) -> dict:
    """Serving parameters of a system; ``tok_per_s_per_chip`` from the perf core when blank."""
    from ..catalog import load
    from ..errors import unknown_name

    df = load("serving_systems")
    if name not in df.index:
        raise unknown_name("serving system", name, df.index)
    row = df.loc[name].to_dict()
    row["cost_source"] = "datasets/serving_systems.csv"
    from ..econ import preset  # the curated InferenceX tiers

    tier = preset(row["accelerator"], ECON_TIER, ECON_VINTAGE)
    row["cost_usd_per_chip_h"] = float(tier.cost_usd_per_h)
    row["cost_source"] = f"tokenomics.econ.preset({row['accelerator']!r}, {tier.label!r})"
    if not np.isfinite(float(row.get("tok_per_s_per_chip", np.nan))):
        from ..perf import decode_step, max_batch

        hw = row["accelerator"]
        batch = max_batch(hw, H200_PERF["model"], context_tok=H200_PERF["context_tok"],
                          weight_precision=H200_PERF["weight_precision"])
        r = decode_step(hw, H200_PERF["model"], H200_PERF["execution"], batch=batch,
                        context_tok=H200_PERF["context_tok"],
                        weight_precision=H200_PERF["weight_precision"])
        row["tok_per_s_per_chip"] = float(np.asarray(r.tok_per_s_per_chip))
        row["note"] = (f"throughput from tokenomics.perf.decode_step({hw}, {H200_PERF['model']}, "
                       f"{H200_PERF['weight_precision']}, batch={int(batch)}, "
                       f"context={H200_PERF['context_tok']})")
    return row


def plan_infrastructure(result, system_name: str = "b200", utilization_frac: float | None = None) -> InfraResult:
    """Yearly chips, nodes, cost, spend and capex to serve each series of a forecast.

    Parameters
    ----------
    result : ForecastResult
        Output of :func:`tokenomics.forecast.forecast`.
    system_name : str
        A system of ``datasets/serving_systems.csv`` (``h100``, ``b200``, ``gb200-nvl72``,
        ``h200`` via the perf core).
    utilization_frac : float, optional
        Mean load over capacity; default from ``datasets/demand_scenarios.csv``.

    Returns
    -------
    InfraResult
        :func:`serving_requirements` columns plus ``series``, ``system``, and ``n_chips_lo_80`` /
        ``n_chips_hi_80`` from the forecast's 80 % interval.
    """
    import pandas as pd

    from .scenarios import parameter

    sysrow = system(system_name)
    util = parameter("serving_utilization_frac") if utilization_frac is None else utilization_frac
    out = []
    m = result.monthly.copy()
    m["year"] = m["date"].dt.year
    for name, g in m.groupby("series", sort=False):
        dec = g[g["date"].dt.month == 12].set_index("year")
        mean = g.groupby("year")["tokens_per_day"].mean().reindex(dec.index)
        years = dec.index.to_numpy()
        kw = dict(utilization_frac=util, capex_usd_per_chip=float(sysrow["capex_usd_per_chip"]),
                  n_chips_per_node=int(sysrow["n_chips_per_node"]),
                  life_years=float(sysrow["life_years"]), year=years)
        args = (float(sysrow["tok_per_s_per_chip"]), float(sysrow["cost_usd_per_chip_h"]),
                price_path(years))
        r = serving_requirements(dec["tokens_per_day"].to_numpy(), *args,
                                 tokens_per_day_mean=mean.to_numpy(), **kw).frame
        lo = serving_requirements(dec["tokens_per_day_lo_80"].to_numpy(), *args, **kw).frame
        hi = serving_requirements(dec["tokens_per_day_hi_80"].to_numpy(), *args, **kw).frame
        r.insert(0, "series", name)
        r.insert(1, "system", system_name)
        r["tok_per_s_per_chip"] = float(sysrow["tok_per_s_per_chip"])
        r["cost_usd_per_chip_h"] = float(sysrow["cost_usd_per_chip_h"])
        r.insert(4, "n_chips_lo_80", lo["n_chips"].to_numpy())
        r.insert(5, "n_chips_hi_80", hi["n_chips"].to_numpy())
        r["scenario"] = result.scenario or "trend"
        out.append(r)
    return InfraResult(pd.concat(out, ignore_index=True))
