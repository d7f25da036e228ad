"""Supply constraints: how many of the forecast's tokens the chips and power of a region can serve.

For each series and year (the December daily rate, as :func:`~tokenomics.forecast.infrastructure.plan_infrastructure`
provisions), three limits on the tokens served a day:

- ``demand``: the forecast's median;
- ``chips``: the region's installed AI accelerators (:func:`ai_compute_h100e`, H100-equivalents by
  peak 8-bit operations), the share of them serving inference, converted to chips of the serving
  deployment by their peak 8-bit FLOP/s and run at the deployment's tokens/s per chip and the
  serving utilisation, exactly as ``plan_infrastructure`` sizes its ``n_chips``;
- ``power``: the region's data-centre electricity (the IEA's base case,
  :func:`~tokenomics.forecast.infrastructure.dc_electricity_twh`) times the share of it token
  serving may use, at the deployment's facility energy per token (``plan_infrastructure``'s
  ``dc_electricity_tokens_per_day``).

``served = min(demand, chips, power)`` and ``binding`` names the smallest. The chip and power
limits are those of the whole region: a series that is a part of its region's traffic (one
provider) is bounded by them, not sized by them, so for it a ``demand`` binding says only that the
region could serve it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from .._display import Display
from .._validate import finite, fraction

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

#: Limits a served rate can hit, in the order ties are named.
BINDINGS: tuple[str, ...] = ("demand", "chips", "power")

#: Accelerator the installed base is counted in (``datasets/ai_compute_stock.csv``: H100-equivalents).
H100E_CHIP = "h100-sxm"


def ai_compute_h100e(region: str, years, growth_frac_per_year: float | None = None) -> np.ndarray:
    """Installed AI accelerators of a region at the end of each year [H100-equivalents].

    The world's stock is ``datasets/ai_compute_stock.csv`` (Epoch AI estimates; between dated
    rows it grows at a constant rate); after its last row it grows by ``growth_frac_per_year``
    (default the scenario parameter ``ai_compute_growth_frac_per_year`` of
    ``datasets/demand_scenarios.csv``: Epoch's 2019-2024 rate, 2.3x a year). ``china`` is the
    world's stock times ``china_share_of_ai_compute_frac`` (15 %, its share of AI supercomputer
    performance). Other regions: NaN (no sourced share).

    Parameters
    ----------
    region : str
        ``world`` or ``china``; other regions of ``dc_electricity.csv`` give NaN.
    years : array-like
        Calendar years (the stock at each year's end).
    growth_frac_per_year : float, optional
        Growth after the last dated row [1/year]; 1.3 is 2.3x a year.

    Returns
    -------
    numpy.ndarray
        [H100-equivalents] per year; NaN before the first dated row.

    Examples
    --------
    15 million at the end of 2025, growing 2.3x a year: 15e6 x 2.3 = 34.5 million in 2026.

    >>> round(float(ai_compute_h100e("world", [2026])[0]) / 1e6, 1)
    34.5
    """
    from ..catalog import load
    from .history import dc_regions
    from .scenarios import parameter

    if region not in dc_regions():
        from ..errors import unknown_name

        raise unknown_name("region", region, dc_regions())
    y = np.atleast_1d(np.asarray(finite(years, "years"), dtype=float))
    g = parameter("ai_compute_growth_frac_per_year") if growth_frac_per_year is None else float(
        finite(growth_frac_per_year, "growth_frac_per_year"))
    if g <= -1:
        from ..errors import ValidationError

        raise ValidationError(f"growth_frac_per_year must be above -1 (a stock cannot vanish), got {g:g}")
    rows = load("ai_compute_stock").query("region == 'world'").sort_values("year")
    yr, n = rows["year"].to_numpy(float), rows["h100e"].to_numpy(float)
    out = np.exp(np.interp(y, yr, np.log(n))) * np.where(y > yr[-1], (1.0 + g) ** (y - yr[-1]), 1.0)
    out = np.where(y >= yr[0], out, np.nan)
    if region == "world":
        return out
    if region == "china":
        return out * parameter("china_share_of_ai_compute_frac")
    return np.full_like(out, np.nan)


def _h100e_per_chip(accelerator: Any) -> float:
    """H100-equivalents one chip of ``accelerator`` counts for: its peak 8-bit FLOP/s over the H100's
    (Epoch's normalisation), NaN where the catalog has no FP8 or INT8 peak."""
    from ..catalog import accelerator as acc

    def peak(a):
        v = float(a.peak_fp8_flop_per_s)
        return v if np.isfinite(v) and v > 0 else float(a.peak_int8_flop_per_s)

    return peak(accelerator) / peak(acc(H100E_CHIP))


@dataclass(frozen=True, repr=False)
class CapacityResult(Display):
    """Served tokens per series and year under chip and power limits; see :func:`supply_capacity`."""

    frame: "pd.DataFrame"

    def to_frame(self) -> "pd.DataFrame":
        """One row per series and year."""
        return self.frame.copy()

    def supply_bound(self) -> "pd.DataFrame":
        """The rows whose median demand exceeds what chips or power can serve."""
        return self.frame[self.frame["supply_bound"]].copy()


def supply_capacity(result, *, inference_compute_frac: float | None = None,
                    inference_power_frac: float | None = None, growth_frac_per_year: float | None = None,
                    price_path: "pd.DataFrame | None" = None, **deployment: Any) -> CapacityResult:
    """Demand, the chip and power limits of its region, and what is served, per series and year.

    Parameters
    ----------
    result : ForecastResult
        Output of :func:`tokenomics.forecast.forecast`.
    inference_compute_frac : float, optional
        Share of the installed AI accelerators serving inference [0-1]; default
        ``inference_share_of_ai_compute_frac`` (0.67, Deloitte, claimed).
    inference_power_frac : float, optional
        Share of the region's data-centre electricity token serving may use [0-1]; default the
        scenario parameter ``inference_share_of_dc_electricity_frac`` (0.3, not sourced).
    growth_frac_per_year : float, optional
        Growth of the installed base after its last dated row (:func:`ai_compute_h100e`).
    price_path : pandas.DataFrame, optional
        List prices by year (``year``, ``usd_per_m_output_tok``; optionally ``region``, else one
        path for every region), e.g. :func:`tokenomics.forecast.roadmap.cost_path`'s; default
        :func:`output_price_path`. Years or regions it lacks get NaN.
    **deployment
        The serving deployment, as :func:`~tokenomics.forecast.infrastructure.plan_infrastructure`
        takes it (``system``, ``model``, ``workload``, ``target_tok_per_s_per_user``, ...).

    Returns
    -------
    CapacityResult
        Columns ``series, region, year``, ``demand_tokens_per_day`` (the December median),
        ``chips_tokens_per_day`` and ``power_tokens_per_day`` (the limits), ``served_tokens_per_day``
        (their minimum) [tokens/day], ``binding`` (:data:`BINDINGS`), ``supply_bound`` (served below
        demand), ``chips_needed`` (deployment chips for the demand, ``plan_infrastructure``'s
        ``n_chips``), ``chips_available`` (deployment-chip equivalents of the region's inference
        accelerators), ``h100e_installed``, ``twh`` (the served rate's electricity over a year
        [TWh]), ``dc_electricity_twh`` (all of the region's data centres [TWh]) and
        ``usd_per_m_output_tok`` (the market's output list price that year, :func:`output_price_path`,
        times the forecast's ``price_scale``),
        ``deployment``, ``tok_per_s_per_chip`` and ``electricity_usd_per_kwh`` (the cost's electricity
        price: it moves the cost, not what the chips and power serve).
    """
    from ..perf.parallel import system as system_of
    from .infrastructure import INFRA_SYSTEM, plan_infrastructure
    from .scenarios import parameter

    comp = parameter("inference_share_of_ai_compute_frac") if inference_compute_frac is None else inference_compute_frac
    powf = parameter("inference_share_of_dc_electricity_frac") if inference_power_frac is None else inference_power_frac
    fraction(comp, "inference_compute_frac", allow_zero=False)
    fraction(powf, "inference_power_frac", allow_zero=False)
    infra = plan_infrastructure(result, **deployment).to_frame()
    dep = deployment.get("deployment")
    sysname = dep.system.name if dep is not None else deployment.get("system", INFRA_SYSTEM)
    per_chip = _h100e_per_chip(system_of(sysname).accelerator)
    demand = infra["tokens_per_day"].to_numpy(float)
    years = infra["year"].to_numpy(float)
    h100e = np.concatenate([ai_compute_h100e(r, [y], growth_frac_per_year) for r, y in zip(infra["region"], years)])
    chips_avail = h100e * comp / per_chip
    # plan_infrastructure's n_chips serve the demand: the same chips' rate per chip scales to the available ones
    chips_cap = demand / infra["n_chips"].to_numpy(float) * chips_avail
    power_cap = infra["dc_electricity_tokens_per_day"].to_numpy(float) * powf
    caps = np.vstack([demand, chips_cap, power_cap])
    filled = np.where(np.isfinite(caps), caps, np.inf)
    which = np.argmin(filled, axis=0)
    served = filled[which, np.arange(len(demand))]
    dc_twh = infra["dc_electricity_twh"].to_numpy(float)
    twh = dc_twh * served / infra["dc_electricity_tokens_per_day"].to_numpy(float)
    import pandas as pd

    frame = pd.DataFrame({
        "series": infra["series"], "region": infra["region"], "year": infra["year"].astype(int),
        "demand_tokens_per_day": demand, "chips_tokens_per_day": chips_cap, "power_tokens_per_day": power_cap,
        "served_tokens_per_day": served, "binding": np.asarray(BINDINGS)[which],
        "supply_bound": which > 0,
        "chips_needed": infra["n_chips"].to_numpy(float), "chips_available": chips_avail,
        "h100e_installed": h100e, "twh": twh, "dc_electricity_twh": dc_twh,
        "usd_per_m_output_tok": (output_price_path(years) * 1e3 if price_path is None  # per 1K -> per million
                                 else _path_prices(price_path, infra["region"], years)) * getattr(result, "price_scale", 1.0),
        "deployment": infra["deployment"], "tok_per_s_per_chip": infra["tok_per_s_per_chip"],
        "electricity_usd_per_kwh": infra["electricity_usd_per_kwh"],
    })
    growth = parameter("ai_compute_growth_frac_per_year") if growth_frac_per_year is None else growth_frac_per_year
    frame.attrs.update(inference_compute_frac=float(comp), inference_power_frac=float(powf), growth=float(growth))
    return CapacityResult(frame)


def _path_prices(path: "pd.DataFrame", regions, years) -> np.ndarray:
    """``usd_per_m_output_tok`` of ``path`` at each (region, year) [USD per million output tokens]."""
    from ..catalog import check_columns

    check_columns(path, ("year", "usd_per_m_output_tok"), what="price path")
    p = np.asarray(path["usd_per_m_output_tok"], dtype=float)
    if np.any(p[np.isfinite(p)] <= 0):
        from ..errors import ValidationError

        raise ValidationError("price path: usd_per_m_output_tok must be positive [USD per million output tokens]")
    if "region" in path.columns:
        key = dict(zip(zip(path["region"].astype(str), path["year"].astype(int)), p))
        return np.array([key.get((str(r), int(y)), np.nan) for r, y in zip(regions, years)], dtype=float)
    key = dict(zip(path["year"].astype(int), p))
    return np.array([key.get(int(y), np.nan) for y in years], dtype=float)


def output_price_path(years) -> np.ndarray:
    """Market list price of output tokens by year [USD/1K output tokens]: the output price of
    ``datasets/demand_scenarios.csv`` on the same yearly decline as
    :func:`~tokenomics.forecast.infrastructure.price_path`."""
    from .infrastructure import price_decline_factor
    from .scenarios import parameter

    return parameter("price_usd_per_1k_output_tok_2025") * price_decline_factor(years)
