"""Cost of one accelerator-hour: bottom-up (capex + opex) or an InferenceX preset tier.

Bottom-up, per chip and per calendar hour::

    capital      = capital recovery of the all-in capex (annuity at wacc_frac over life_years,
                   net of the discounted residual value) / 8760 h
    maintenance  = maintenance_frac_per_year * capex / 8760 h
    colocation   = colo_usd_per_kw_month * provisioned IT kW per chip / (8760 / 12) h
    electricity  = (board power + host share) * PUE * electricity_usd_per_kwh

Board power comes from the workload (:mod:`tokenomics.econ.power`); the host share is
``(server_to_chip_power_ratio - 1) * tdp_w`` and the provisioned IT power
``server_to_chip_power_ratio * tdp_w``. All-in capex per chip is the catalogued server price per
GPU divided by ``1 - network_capex_frac`` (networking share of the cluster); without a server
price, the chip price times ``server_to_chip_price_ratio``.

Preset tiers (:func:`preset`) are SemiAnalysis/InferenceX all-in $/GPU-hour figures
(hyperscaler-owned, neocloud-owned, 3-year rental) for the 2025-08 and 2026-07 surveys.
Every default comes from ``datasets/tco_params.csv``.
"""

from __future__ import annotations

import functools

import math
from dataclasses import dataclass, fields, replace
from typing import Any, Union

import numpy as np

from .. import _validate as v
from ..errors import DataError, UnknownNameError, ValidationError, unknown_name
from ..units import HOURS_PER_YEAR
from .finance import capital_cost_usd_per_h, check_life, check_wacc

HOURS_PER_MONTH = HOURS_PER_YEAR / 12

#: Highest electricity price accepted [USD/kWh]: ten times the dearest retail tariffs (under
#: 1 USD/kWh); above it a value is a unit mistake (per MWh, cents), not a price.
MAX_ELECTRICITY_USD_PER_KWH = 10.0

TIERS = ("hyperscaler-owned", "neocloud-owned", "rental-3yr", "retail")
VINTAGES = ("2025-08", "2026-07")


def _params():
    from .. import catalog

    df = catalog.load("tco_params")
    df["hardware"] = df["hardware"].fillna("").astype(str)
    df["tier"] = df["tier"].fillna("").astype(str)
    df["as_of"] = df["as_of"].astype(str)
    return df


def param(name: str, hardware: str = "", tier: str = "", *, default: Any = None,
          as_of: str | None = None) -> float:
    """One value of ``datasets/tco_params.csv`` (the latest ``as_of`` unless one is given).

    Parameters
    ----------
    name : str
        The ``parameter`` column, e.g. ``"pue"`` or ``"cost_usd_per_chip_h"``.
    hardware, tier : str
        Filters ('' for global parameters).
    default : float, optional
        Returned when no row matches; without it a :class:`DataError` is raised.
    """
    from ..catalog import data_dir

    index = _param_index(str(data_dir()))
    rows = index.get((name, hardware, tier), [])
    if as_of is not None:
        rows = [r for r in rows if r[0] == str(as_of)]
    if not rows:
        if default is not None:
            return default
        known = sorted({k[0] for k in index})
        if name not in known:
            raise unknown_name("tco parameter", name, known)
        raise DataError(f"datasets/tco_params.csv has no {name!r} for hardware={hardware!r} "
                        f"tier={tier!r} as_of={as_of!r}")
    return float(max(rows, key=lambda r: r[0])[1])  # the latest as_of


@functools.lru_cache(maxsize=8)
def _param_index(_dir: str) -> dict:
    """``(parameter, hardware, tier) -> [(as_of, value), ...]`` of tco_params.csv, read once."""
    df = _params()
    out: dict = {}
    for r in df[["parameter", "hardware", "tier", "as_of", "value"]].itertuples(index=False):
        out.setdefault((str(r[0]), r[1], r[2]), []).append((r[3], r[4]))
    return out


def _chip_row(name: Any):
    """Name, TDP and chip price of a catalogued accelerator, without the performance fields the
    full :class:`~tokenomics.specs.Accelerator` requires (costs need no FLOP/s) [W, USD]."""
    from types import SimpleNamespace

    from .. import catalog

    name = getattr(name, "name", None) or catalog.accelerator_name(name)  # any case, aliases
    df = catalog.load("accelerators")
    if name not in df.index:
        raise unknown_name("accelerator", name, df.index)
    r = df.loc[name]
    num = lambda x: float(x) if x == x and x is not None else float("nan")  # noqa: E731
    tdp = num(r.get("tdp_w"))
    if math.isnan(tdp):
        tdp = param("tdp_w", name, default=float("nan"))
    return SimpleNamespace(name=name, tdp_w=tdp, price_usd=num(r.get("price_usd")))


def facility_power_w(board_power_w: Any, host_power_w: Any, pue: Any) -> np.ndarray:
    """Power drawn from the grid per chip [W]: (board + its share of the host) x PUE.

    Parameters
    ----------
    board_power_w : float or array
        The accelerator board's power [W].
    host_power_w : float or array
        Its share of the host (CPUs, NICs, fans) [W].
    pue : float or array
        Facility power over IT power [1], >= 1.
    """
    return (np.asarray(board_power_w, float) + np.asarray(host_power_w, float)) * np.asarray(pue, float)


@dataclass(frozen=True)
class CostInputs:
    """Bottom-up cost inputs of one accelerator (per chip).

    Parameters
    ----------
    hardware : str
        Accelerator name (for labels).
    capex_usd : float
        All-in capital cost per chip: its share of the server, networking and facility [USD].
    life_years : float
        Economic life [years] (> 0).
    wacc_frac : float
        Cost of capital [1/year], fraction (0.10 = 10 %).
    residual_frac : float
        Resale value at end of life [fraction of capex].
    maintenance_frac_per_year : float
        Maintenance and operations [fraction of capex per year].
    pue : float
        Power usage effectiveness (facility power / IT power) [>= 1].
    electricity_usd_per_kwh : float
        Electricity price [USD/kWh].
    colo_usd_per_kw_month : float
        Colocation price per provisioned IT kW [USD/kW-month].
    host_power_w : float
        Host (CPU, NIC, fans) power per chip [W].
    provisioned_it_w : float
        IT power reserved per chip, on which colocation is billed [W].
    """

    hardware: str
    capex_usd: float
    life_years: float
    wacc_frac: float
    residual_frac: float
    maintenance_frac_per_year: float
    pue: float
    electricity_usd_per_kwh: float
    colo_usd_per_kw_month: float
    host_power_w: float
    provisioned_it_w: float
    label: str = "bottom-up"
    capex_source: str = "given"

    def __post_init__(self) -> None:
        v.positive(self.capex_usd, "capex_usd")
        check_life(self.life_years)
        check_wacc(self.wacc_frac)
        v.fraction(self.residual_frac, "residual_frac")
        v.fraction(self.maintenance_frac_per_year, "maintenance_frac_per_year")
        v.positive(self.pue, "pue")
        if np.any(np.asarray(self.pue, dtype=float) < 1):
            raise ValidationError(f"pue must be >= 1 (facility power / IT power), got {v._show(self.pue)}")
        v.non_negative(self.electricity_usd_per_kwh, "electricity_usd_per_kwh")
        if np.any(np.asarray(self.electricity_usd_per_kwh, dtype=float) > MAX_ELECTRICITY_USD_PER_KWH):
            raise ValidationError(f"electricity_usd_per_kwh={v._show(self.electricity_usd_per_kwh)} is not a price of "
                                  f"electricity; expected 0-{MAX_ELECTRICITY_USD_PER_KWH:g} USD per kWh")
        v.non_negative(self.colo_usd_per_kw_month, "colo_usd_per_kw_month")
        v.non_negative(self.host_power_w, "host_power_w")
        v.non_negative(self.provisioned_it_w, "provisioned_it_w")

    @classmethod
    def for_hardware(cls, hardware: Any, **overrides: Any) -> "CostInputs":
        """Defaults for an accelerator from ``datasets/tco_params.csv`` (overrides win)."""
        from ..specs import Accelerator

        acc = hardware if isinstance(hardware, Accelerator) else _chip_row(hardware)
        names = {f.name for f in fields(cls)}
        bad = sorted(set(overrides) - names)
        if bad:
            raise unknown_name("cost input", bad[0], names)
        net = param("network_capex_frac")
        ratio_p = param("server_to_chip_power_ratio")
        tdp = acc.tdp_w if not math.isnan(acc.tdp_w) else param("tdp_w", acc.name, default=float("nan"))
        if "capex_usd" not in overrides:
            server = param("server_price_usd_per_chip", acc.name, default=float("nan"))
            system = param("system_price_usd_per_chip", acc.name, default=float("nan"))
            if not math.isnan(system):  # a whole-system price already includes the network
                overrides["capex_usd"] = system
                overrides.setdefault("capex_source", "system price per chip (datasets/tco_params.csv)")
            elif not math.isnan(server):
                overrides["capex_usd"] = server / (1 - net)
                overrides.setdefault("capex_source", "server price per chip / (1 - network share) "
                                                     "(datasets/tco_params.csv)")
            else:
                chip = acc.price_usd
                if math.isnan(chip):
                    chip = param("chip_price_usd", acc.name, default=float("nan"))
                if math.isnan(chip):
                    raise DataError(f"no bottom-up capex for {acc.name!r} (no server, system or chip price in "
                                    f"datasets/tco_params.csv or accelerators.csv); cost bases that exist for "
                                    f"{acc.name}: {', '.join(bases(acc.name))}. Hint: --cost <basis>, capex_usd=... (all-in "
                                    f"USD per chip) or a flat USD per chip-hour (--cost 2.0) where a command takes one "
                                    f"(price, market, forecast --show infra, a sweep grid's cost axis); report and "
                                    f"sweep-mc price bottom-up and need a chip_price_usd row in datasets/tco_params.csv")
                overrides["capex_usd"] = chip * param("server_to_chip_price_ratio")
                overrides.setdefault("capex_source", "chip price x server-to-chip price ratio "
                                                     "(datasets/accelerators.csv, tco_params.csv)")
        if "host_power_w" not in overrides or "provisioned_it_w" not in overrides:
            if math.isnan(tdp):
                raise DataError(f"no tdp_w for accelerator {acc.name!r}. Hint: pass host_power_w= "
                                f"and provisioned_it_w= (W per chip)")
            overrides.setdefault("host_power_w", (ratio_p - 1) * tdp)
            # a chip priced as part of a whole system takes that system's provisioned power per
            # chip (optics, CPUs) when one is catalogued
            all_in = float("nan")
            if not math.isnan(param("system_price_usd_per_chip", acc.name, default=float("nan"))):
                all_in = param("all_in_power_w", acc.name, "provisioned-incl-facility", default=float("nan"))
            # that figure is utility power (facility overhead included) while colocation is billed
            # on IT kW with the overhead priced in: take the overhead out (x 1 / PUE) once
            pue = overrides.get("pue", param("pue"))
            overrides.setdefault("provisioned_it_w", ratio_p * tdp if math.isnan(all_in) else all_in / pue)
        kw = dict(hardware=acc.name, life_years=param("life_years"), wacc_frac=param("wacc_frac"),
                  residual_frac=param("residual_frac"),
                  maintenance_frac_per_year=param("maintenance_frac_per_year"), pue=param("pue"),
                  electricity_usd_per_kwh=param("electricity_usd_per_kwh"),
                  colo_usd_per_kw_month=param("colo_usd_per_kw_month"))
        kw.update(overrides)
        return cls(**kw)

    def replace(self, **changes: Any) -> "CostInputs":
        return replace(self, **changes)

    def breakdown_usd_per_h(self, board_power_w: Any) -> dict[str, np.ndarray]:
        """Cost components per chip-hour [USD/h] at a board power [W] (broadcasts)."""
        v.non_negative(board_power_w, "board_power_w")
        cap = capital_cost_usd_per_h(self.capex_usd, self.wacc_frac, self.life_years, self.residual_frac)
        maint = np.asarray(self.maintenance_frac_per_year, float) * self.capex_usd / HOURS_PER_YEAR
        colo = np.asarray(self.colo_usd_per_kw_month, float) * self.provisioned_it_w / 1e3 / HOURS_PER_MONTH
        elec = self.facility_power_w(board_power_w) / 1e3 * self.electricity_usd_per_kwh
        return {"capital_usd_per_chip_h": cap, "maintenance_usd_per_chip_h": maint,
                "colo_usd_per_chip_h": colo, "electricity_usd_per_chip_h": elec}

    def cost_usd_per_chip_h(self, board_power_w: Any) -> np.ndarray:
        """All-in cost of one chip for one hour [USD/h]."""
        return sum(self.breakdown_usd_per_h(board_power_w).values())

    def facility_power_w(self, board_power_w: Any) -> np.ndarray:
        """Power drawn from the grid per chip: (board + host) * PUE [W]."""
        return facility_power_w(board_power_w, self.host_power_w, self.pue)


@dataclass(frozen=True)
class TierCost:
    """A flat, all-in $/chip-hour (an InferenceX tier or a rental price).

    Parameters
    ----------
    hardware : str
    cost_usd_per_h : float
        All-in cost per chip-hour [USD/h] (power included).
    label : str
        Where it comes from, e.g. ``"hyperscaler-owned 2025-08"``.
    pue, host_power_w : float
        Used only for facility energy per token.
    """

    hardware: str
    cost_usd_per_h: float
    label: str = "flat"
    pue: float = 1.25
    host_power_w: float = 0.0
    source: str = ""

    def __post_init__(self) -> None:
        v.positive(self.cost_usd_per_h, "cost_usd_per_chip_h")
        v.positive(self.pue, "pue")

    def breakdown_usd_per_h(self, board_power_w: Any) -> dict[str, np.ndarray]:
        v.non_negative(board_power_w, "board_power_w")
        return {"all_in_usd_per_chip_h": np.broadcast_to(np.asarray(self.cost_usd_per_h, float),
                                                         np.shape(board_power_w)).copy()}

    def cost_usd_per_chip_h(self, board_power_w: Any) -> np.ndarray:
        return self.breakdown_usd_per_h(board_power_w)["all_in_usd_per_chip_h"]

    def facility_power_w(self, board_power_w: Any) -> np.ndarray:
        return facility_power_w(board_power_w, self.host_power_w, self.pue)


CostModel = Union[CostInputs, TierCost]


def preset(hardware: Any, tier: str = "hyperscaler-owned", vintage: str = "2025-08") -> TierCost:
    """An InferenceX $/GPU-hour tier for an accelerator (``datasets/tco_params.csv``).

    Parameters
    ----------
    hardware : str or Accelerator
    tier : {"hyperscaler-owned", "neocloud-owned", "rental-3yr", "retail"}
    vintage : str
        Survey: ``"2025-08"`` or ``"2026-07"`` (``"2026-09"`` for the uncertain retail tier).
    """
    name = getattr(hardware, "name", hardware)
    v.one_of(tier, "tier", TIERS)
    df = _params()
    sel = df[(df["parameter"] == "cost_usd_per_chip_h") & (df["hardware"] == name) & (df["tier"] == tier)]
    have = sorted(sel["as_of"].unique())
    sel = sel[sel["as_of"] == str(vintage)]
    if sel.empty:
        raise DataError(f"no InferenceX {tier} price for {name!r} in survey {vintage!r} (available vintages: "
                        f"{', '.join(have) or 'none'}); cost bases that exist for {name}: {', '.join(bases(name))}")
    r = sel.iloc[0]
    return TierCost(name, float(r["value"]), f"{tier} {vintage}", pue=param("pue"),
                    host_power_w=_host_power_w(name), source=str(r["source"]))


def electricity_override(cost: Any, electricity_usd_per_kwh: Any) -> dict[str, float]:
    """``{"electricity_usd_per_kwh": x}`` to pass to :func:`cost_model` / :func:`tokenomics.chain.price`,
    or ``{}`` when none is given; checked: a non-negative number [USD/kWh], and only with the
    bottom-up cost (``cost`` None or ``"bottom-up"``: a tier or flat price has no electricity term)."""
    if electricity_usd_per_kwh is None:
        return {}
    v.non_negative(electricity_usd_per_kwh, "electricity_usd_per_kwh")
    if cost not in (None, "bottom-up"):
        raise ValidationError(f"electricity_usd_per_kwh applies to the bottom-up cost; cost {cost!r} is a "
                              "price per chip-hour with no electricity term (drop --cost or --electricity)")
    return {"electricity_usd_per_kwh": float(electricity_usd_per_kwh)}


def has_capex(hardware: Any) -> bool:
    """True when a bottom-up capex (server, system or chip price) is catalogued for the chip."""
    name = getattr(hardware, "name", hardware)
    if any(not math.isnan(param(p, name, default=float("nan")))
           for p in ("system_price_usd_per_chip", "server_price_usd_per_chip", "chip_price_usd")):
        return True
    try:
        return not math.isnan(_chip_row(name).price_usd)
    except Exception:  # noqa: BLE001 -- an uncatalogued name has no capex
        return False


def bases(hardware: Any) -> list[str]:
    """Cost bases that exist for an accelerator: ``bottom-up`` (where a capex is catalogued),
    each InferenceX tier and vintage (``hyperscaler-owned@2025-08``, ...), and ``flat``
    (a USD per chip-hour you give)."""
    name = getattr(hardware, "name", hardware)
    out = ["bottom-up"] if has_capex(name) else []
    df = _params()
    t = df[(df["parameter"] == "cost_usd_per_chip_h") & (df["hardware"] == name)]
    out += [f"{r.tier}@{r.as_of}" for r in t.sort_values(["tier", "as_of"]).itertuples()]
    return out + ["flat USD per chip-hour (e.g. --cost 2.0)"]


#: Flat costs taken [USD per chip-hour]: three orders of magnitude either side of the catalogued
#: bases (0.69 to 10.6 USD per chip-hour across the chips of ``cost_basis_table``, bottom-up to
#: the rental median); a value outside (1e-320, 1e308) is a slip, not a cost.
FLAT_COST_RANGE_USD_PER_CHIP_H = (1e-3, 1e4)


def cost_model(hardware: Any, cost: Any = None, **overrides: Any) -> CostModel:
    """Resolve a cost specification into a cost model.

    ``cost`` may be None or ``"bottom-up"`` (the default basis for every chip:
    :meth:`CostInputs.for_hardware`; a chip without a catalogued capex raises a one-line
    :class:`DataError` listing the bases that exist for it, see :func:`bases`), a tier name
    (``"hyperscaler-owned"``, optionally ``"neocloud-owned@2026-07"``), a number (flat USD per
    chip-hour), or a :class:`CostInputs` / :class:`TierCost` passed through.
    """
    if isinstance(cost, (CostInputs, TierCost)):
        return cost
    if cost is None or cost == "bottom-up":
        return CostInputs.for_hardware(hardware, **overrides)
    if isinstance(cost, str):
        tier, at, vintage = cost.partition("@")
        if tier in TIERS:
            if at and not vintage.strip():
                raise ValidationError(f"cost basis {cost!r} names no survey after '@'; give {tier} (the 2025-08 "
                                      f"survey) or {tier}@2026-07")
            return preset(hardware, tier, vintage or "2025-08")
        try:
            cost = float(cost)
        except ValueError:
            import difflib

            name = getattr(hardware, "name", hardware)
            close = difflib.get_close_matches(tier, ("bottom-up",) + TIERS, n=2, cutoff=0.5)
            hint = f" Did you mean {', '.join(repr(c) for c in close)}?" if close else ""
            raise UnknownNameError(f"unknown cost model (basis) {cost!r} for {name}.{hint} Cost bases that exist "
                                   f"for {name}: {', '.join(bases(name))}") from None
    name = getattr(hardware, "name", hardware)
    v.positive(cost, "cost_usd_per_chip_h")
    lo, hi = FLAT_COST_RANGE_USD_PER_CHIP_H
    if not lo <= float(cost) <= hi:
        raise ValidationError(f"flat cost {float(cost):.3g} USD per chip-hour is outside the range taken, {lo:g} to "
                              f"{hi:g} (the catalogued cost bases run from about 0.7 to 11)")
    # a flat all-in rate still draws host power from the facility (energy per token)
    return TierCost(name, float(cost), "flat", pue=param("pue"), host_power_w=_host_power_w(name))


def _host_power_w(name: str) -> float:
    """Host (CPU, NIC, fans) power per chip: ``(server_to_chip_power_ratio - 1) * TDP`` [W]."""

    try:
        tdp = _chip_row(name).tdp_w
    except Exception:  # noqa: BLE001 -- an uncatalogued name: no host power known
        tdp = float("nan")
    if math.isnan(tdp):
        tdp = param("tdp_w", name, default=float("nan"))
    return 0.0 if math.isnan(tdp) else (param("server_to_chip_power_ratio") - 1) * tdp


def tier_table(vintages: tuple[str, ...] = VINTAGES):
    """InferenceX tiers beside the bottom-up estimate (at TDP * 0.75 board power), per chip-hour.

    Returns
    -------
    pandas.DataFrame
        hardware, vintage, hyperscaler-owned, neocloud-owned, rental-3yr, bottom_up [USD/h].
    """
    import pandas as pd


    if isinstance(vintages, str):
        vintages = (vintages,)
    if not isinstance(vintages, (list, tuple)) or not all(isinstance(x, str) for x in vintages):
        raise ValidationError(f"vintages must be a list of dates such as '2026-07', got {vintages!r:.60}")
    df = _params()
    t = df[df["parameter"] == "cost_usd_per_chip_h"]
    t = t[t["as_of"].isin(vintages)]
    wide = t.pivot_table(index=["hardware", "as_of"], columns="tier", values="value").reset_index()
    wide = wide.rename(columns={"as_of": "vintage"})
    bu = []
    for hw in wide["hardware"]:
        try:
            acc = _chip_row(hw)
            ci = CostInputs.for_hardware(hw)
            bu.append(float(ci.cost_usd_per_chip_h(power_at_typical(acc))))
        except Exception as exc:  # noqa: BLE001 -- a missing price leaves the cell empty
            if not isinstance(exc, (DataError, ValidationError)):
                raise
            bu.append(float("nan"))
    wide["bottom_up_usd_per_chip_h"] = bu
    wide.columns.name = None
    return pd.DataFrame(wide)


#: Inputs whose source range :func:`owning_cost_table` swings (towards a cheaper chip-hour):
#: the other end of each ``tco_params.csv`` range.
GAP_DRIVERS: tuple[tuple[str, str, str], ...] = (
    ("wacc_frac", "wacc_frac", "lo"), ("residual_frac", "residual_frac", "hi"),
    ("maintenance_frac_per_year", "maintenance_frac_per_year", "lo"),
    ("network_capex_frac", "network_capex_frac", "lo"), ("life_years", "life_years", "hi"),
    ("pue", "pue", "lo"), ("electricity_usd_per_kwh", "electricity_usd_per_kwh", "lo"),
    ("colo_usd_per_kw_month", "colo_usd_per_kw_month", "lo"),
)


def _param_range(name: str, end: str) -> float:
    df = _params()
    sel = df[(df["parameter"] == name) & (df["hardware"] == "") & (df["tier"] == "")].sort_values("as_of")
    return float(sel.iloc[-1][end])


def owning_cost_table(hardware: Any = None, vintage: str = "2026-07"):
    """Bottom-up owning cost per chip-hour beside the InferenceX tiers and rental rates, with the
    inputs that drive the gap.

    For each chip with a catalogued capex: the bottom-up cost at the typical draw (0.75 x TDP)
    and its components; the InferenceX ``hyperscaler-owned``/``neocloud-owned``/``rental-3yr``
    tiers of ``vintage``; the median of the other rental rates in ``datasets/gpu_rental.csv``
    (on-demand and reserved listings, all dates); and, for each input of :data:`GAP_DRIVERS`,
    the bottom-up cost with that input at the cheap end of its source range (the rest at
    defaults) -- the drop says how much of the gap that input can explain.

    Parameters
    ----------
    hardware : sequence of str, optional
        Chips (default: every chip with an InferenceX tier or a capex).
    vintage : str
        InferenceX survey (``"2025-08"`` or ``"2026-07"``).

    Returns
    -------
    pandas.DataFrame
        One row per chip: ``capex_usd``, ``bottom_up_usd_per_chip_h``, the four components,
        ``hyperscaler_owned_usd_per_chip_h``, ``neocloud_owned_usd_per_chip_h``,
        ``rental_3yr_usd_per_chip_h``, ``rental_median_usd_per_chip_h``, ``n_rentals``,
        ``bottom_up_over_hyperscaler``, ``bottom_up_at_<input>_usd_per_chip_h`` per driver,
        ``bottom_up_all_cheap_usd_per_chip_h`` (every driver at once), ``cost_basis``.
    """
    import pandas as pd

    from .. import catalog

    v.one_of(vintage, "vintage", VINTAGES)
    df = _params()
    tiers = df[df["parameter"] == "cost_usd_per_chip_h"]
    rent = catalog.load("gpu_rental")
    if hardware is None:
        names = sorted(set(tiers["hardware"]) | {h for h in df["hardware"].unique() if h and has_capex(h)})
    else:
        names = [str(h) for h in hardware]
    rows = []
    for hw in names:
        rec: dict[str, Any] = {"hardware": hw}
        tv = tiers[(tiers["hardware"] == hw) & (tiers["as_of"] == vintage)].set_index("tier")["value"]
        for t in ("hyperscaler-owned", "neocloud-owned", "rental-3yr"):
            rec[t.replace("-", "_") + "_usd_per_chip_h"] = float(tv.get(t, np.nan))
        other = rent[(rent["hardware"] == hw) & ~rent["kind"].astype(str).str.contains("costr")]
        rec["rental_median_usd_per_chip_h"] = float(other["usd_per_chip_h"].median()) if len(other) else np.nan
        rec["n_rentals"] = int(len(other))
        if not has_capex(hw):
            rec["cost_basis"] = "no capex catalogued: " + ", ".join(bases(hw))
            rows.append(rec)
            continue
        chip = _chip_row(hw)
        p = power_at_typical(chip)
        ci = CostInputs.for_hardware(hw)
        rec["capex_usd"] = float(ci.capex_usd)
        rec["board_power_w"] = float(p)
        rec.update({k: float(val) for k, val in ci.breakdown_usd_per_h(p).items()})
        base = float(ci.cost_usd_per_chip_h(p))
        rec["bottom_up_usd_per_chip_h"] = base
        rec["bottom_up_over_hyperscaler"] = base / rec["hyperscaler_owned_usd_per_chip_h"]
        cheap: dict[str, float] = {}
        for label, name, end in GAP_DRIVERS:
            val = _param_range(name, end)
            if name == "network_capex_frac":
                # the capex was divided by (1 - default share); redo it with the cheap share
                kw = {"capex_usd": ci.capex_usd * (1 - param(name)) / (1 - val)} \
                    if not math.isnan(param("server_price_usd_per_chip", hw, default=float("nan"))) else {}
            else:
                kw = {name: val}
            cheap.update(kw)
            rec[f"bottom_up_at_{label}_usd_per_chip_h"] = float(ci.replace(**kw).cost_usd_per_chip_h(p))
        rec["bottom_up_all_cheap_usd_per_chip_h"] = float(ci.replace(**cheap).cost_usd_per_chip_h(p))
        rec["cost_basis"] = "bottom-up"
        rows.append(rec)
    return pd.DataFrame(rows)


#: Inputs :func:`gap_drivers` solves for, one at a time: (input, unit, search bracket). Capex and
#: the network share act on the all-in capex; utilization divides the cost per calendar hour.
RECONCILE_INPUTS: tuple[tuple[str, str, tuple[float, float]], ...] = (
    ("capex_usd", "USD/chip", (1.0, 1e6)), ("life_years", "years", (0.5, 30.0)),
    ("wacc_frac", "1/year", (0.0, 1.0)), ("network_capex_frac", "fraction", (0.0, 0.95)),
    ("utilization_frac", "fraction", (0.01, 1.0)), ("electricity_usd_per_kwh", "USD/kWh", (0.0, 2.0)),
    ("pue", "ratio", (1.0, 3.0)), ("colo_usd_per_kw_month", "USD/kW-month", (0.0, 2000.0)),
    ("maintenance_frac_per_year", "fraction/year", (0.0, 0.5)), ("residual_frac", "fraction", (0.0, 1.0)),
)


def _input_cost(ci: "CostInputs", hw: str, name: str, value: float, power_w: float) -> float:
    """Bottom-up cost per chip-hour [USD/h] with one input set to ``value`` (the rest default)."""
    if name == "utilization_frac":  # cost per used hour: the calendar-hour cost over utilization
        return float(ci.cost_usd_per_chip_h(power_w)) / value
    if name == "network_capex_frac":
        if math.isnan(param("server_price_usd_per_chip", hw, default=float("nan"))):
            return float(ci.cost_usd_per_chip_h(power_w))  # a system or chip price: no network share applied
        return float(ci.replace(capex_usd=ci.capex_usd * (1 - param(name)) / (1 - value)).cost_usd_per_chip_h(power_w))
    return float(ci.replace(**{name: value}).cost_usd_per_chip_h(power_w))


def _input_default_range(ci: "CostInputs", name: str) -> tuple[float, float, float]:
    if name == "capex_usd":
        rel = param("capex_rel_range_frac")
        return ci.capex_usd, ci.capex_usd * (1 - rel), ci.capex_usd * (1 + rel)
    if name in {f.name for f in fields(CostInputs)} or name in ("network_capex_frac", "utilization_frac"):
        df = _params()
        sel = df[(df["parameter"] == name) & (df["hardware"] == "") & (df["tier"] == "")].sort_values("as_of")
        if len(sel):
            r = sel.iloc[-1]
            default = float(getattr(ci, name)) if hasattr(ci, name) else float(r["value"])
            lo = float(r["lo"]) if r["lo"] == r["lo"] else default
            hi = float(r["hi"]) if r["hi"] == r["hi"] else default
            return default, lo, hi
    val = float(getattr(ci, name))
    return val, val, val


def _solve(f, target: float, lo: float, hi: float) -> float:
    """The x in [lo, hi] with f(x) = target for a monotone f (NaN when not bracketed)."""
    flo, fhi = f(lo) - target, f(hi) - target
    if not (np.isfinite(flo) and np.isfinite(fhi)) or flo * fhi > 0:
        return float("nan")
    while hi - lo > 1e-7 * (abs(lo) + abs(hi) + 1e-3):
        mid = 0.5 * (lo + hi)
        fm = f(mid) - target
        if fm == 0:
            return mid
        if (fm < 0) == (flo < 0):
            lo, flo = mid, fm
        else:
            hi = mid
    return 0.5 * (lo + hi)


def _reference(rec: dict, target: str) -> tuple[float, str]:
    """The market figure the bottom-up cost is reconciled with: the InferenceX ``target`` tier, else
    the median rental rate."""
    key = target.replace("-", "_") + "_usd_per_chip_h"
    if np.isfinite(rec.get(key, np.nan)):
        return float(rec[key]), target
    if np.isfinite(rec.get("rental_median_usd_per_chip_h", np.nan)):
        return float(rec["rental_median_usd_per_chip_h"]), "rental median"
    return float("nan"), ""


def gap_drivers(hardware: Any = None, vintage: str = "2026-07", target: str = "hyperscaler-owned"):
    """What one bottom-up input would have to be for the owning cost to match the market.

    For each chip of :func:`owning_cost_table` with a capex, and each input of
    :data:`RECONCILE_INPUTS`, the value that makes the bottom-up cost per chip-hour equal the
    InferenceX ``target`` tier of ``vintage`` (or, for a chip without one, the median rental rate),
    the other inputs at their defaults; whether that value lies inside the input's sourced range
    in ``datasets/tco_params.csv``; and the share of the gap the range's cheap end closes.

    Returns
    -------
    pandas.DataFrame
        ``hardware``, ``reference`` (what is matched), ``reference_usd_per_chip_h``,
        ``bottom_up_usd_per_chip_h``, ``input``, ``unit``, ``default``, ``lo``, ``hi``,
        ``value_to_match`` (NaN: that input alone cannot close the gap), ``change_frac``
        (value_to_match / default - 1), ``in_range``, ``gap_closed_at_range_frac``.
    """
    import pandas as pd

    v.one_of(target, "target", ("hyperscaler-owned", "neocloud-owned", "rental-3yr"))
    table = owning_cost_table(hardware, vintage)
    rows = []
    for rec in table.to_dict("records"):
        if rec.get("cost_basis") != "bottom-up":
            continue
        hw = rec["hardware"]
        ref, ref_label = _reference(rec, target)
        ci = CostInputs.for_hardware(hw)
        p = float(rec["board_power_w"])
        base = float(rec["bottom_up_usd_per_chip_h"])
        for name, unit, (a, b) in RECONCILE_INPUTS:
            default, lo, hi = _input_default_range(ci, name)
            f = (lambda x, n=name, c=ci, h=hw, w=p: _input_cost(c, h, n, x, w))
            val = _solve(f, ref, a, b) if np.isfinite(ref) else float("nan")
            ends = [f(x) for x in (lo, hi)]
            cheap = min(ends)
            closed = (base - cheap) / (base - ref) if np.isfinite(ref) and base != ref else float("nan")
            rows.append({"hardware": hw, "reference": ref_label, "reference_usd_per_chip_h": ref,
                         "bottom_up_usd_per_chip_h": base, "input": name, "unit": unit, "default": default,
                         "lo": lo, "hi": hi, "value_to_match": val,
                         "change_frac": val / default - 1 if np.isfinite(val) and default else float("nan"),
                         "in_range": bool(np.isfinite(val) and min(lo, hi) - 1e-12 <= val <= max(lo, hi) + 1e-12),
                         "gap_closed_at_range_frac": closed})
    return pd.DataFrame(rows)


def cost_basis_table(hardware: Any = None, vintage: str = "2026-07", target: str = "hyperscaler-owned"):
    """Bottom-up owning cost vs the InferenceX tiers vs rental prices per chip, with the gap's driver.

    One row per chip of :func:`owning_cost_table`. ``main_driver`` is the single input that
    explains most of the gap to ``reference``: among the inputs whose value-to-match lies inside
    their sourced range (:func:`gap_drivers`), the one that needs the smallest relative change;
    when none does, the one whose range closes the largest share of the gap (and
    ``main_driver_in_range`` is False: no single sourced input explains the gap alone).

    Returns
    -------
    pandas.DataFrame
        ``hardware``, ``capex_usd``, ``bottom_up_usd_per_chip_h``, the InferenceX tiers,
        ``rental_median_usd_per_chip_h``, ``n_rentals``, ``bottom_up_all_cheap_usd_per_chip_h``
        (every input of :data:`GAP_DRIVERS` at the cheap end of its range at once), ``reference``,
        ``reference_usd_per_chip_h``, ``bottom_up_over_reference``, ``main_driver``,
        ``main_driver_default``, ``main_driver_value_to_match``, ``main_driver_in_range``,
        ``main_driver_gap_closed_at_range_frac``, ``cost_basis``.
    """
    import pandas as pd

    base = owning_cost_table(hardware, vintage)
    drivers = gap_drivers(hardware, vintage, target)
    keep = ["hardware", "capex_usd", "bottom_up_usd_per_chip_h", "hyperscaler_owned_usd_per_chip_h",
            "neocloud_owned_usd_per_chip_h", "rental_3yr_usd_per_chip_h", "rental_median_usd_per_chip_h",
            "n_rentals", "bottom_up_all_cheap_usd_per_chip_h", "cost_basis"]
    out = base[[c for c in keep if c in base.columns]].copy()
    extra = []
    for rec in out.to_dict("records"):
        d = drivers[drivers["hardware"] == rec["hardware"]]
        e: dict[str, Any] = {"reference": "", "reference_usd_per_chip_h": np.nan, "bottom_up_over_reference": np.nan,
                             "main_driver": "", "main_driver_default": np.nan, "main_driver_value_to_match": np.nan,
                             "main_driver_in_range": False, "main_driver_gap_closed_at_range_frac": np.nan}
        if len(d) and np.isfinite(d["reference_usd_per_chip_h"].iloc[0]):
            e["reference"] = d["reference"].iloc[0]
            e["reference_usd_per_chip_h"] = float(d["reference_usd_per_chip_h"].iloc[0])
            e["bottom_up_over_reference"] = rec["bottom_up_usd_per_chip_h"] / e["reference_usd_per_chip_h"]
            inr = d[d["in_range"]]
            best = inr.loc[inr["change_frac"].abs().idxmin()] if len(inr) else \
                d.loc[d["gap_closed_at_range_frac"].fillna(-np.inf).idxmax()]
            e.update(main_driver=best["input"], main_driver_default=float(best["default"]),
                     main_driver_value_to_match=float(best["value_to_match"]), main_driver_in_range=bool(best["in_range"]),
                     main_driver_gap_closed_at_range_frac=float(best["gap_closed_at_range_frac"]))
        extra.append(e)
    return pd.concat([out.reset_index(drop=True), pd.DataFrame(extra)], axis=1)


def power_at_typical(acc) -> float:
    """Average draw of 0.75 x TDP (Epoch AI ``server_avg_to_tdp_ratio``) [W]; for tables only."""
    return 0.75 * acc.tdp_w


#: The rental price owning is compared with when none is given: InferenceX's 3-year rental tier
#: of its July 2026 survey (``datasets/tco_params.csv``), what ``tokenomics rent-vs-own`` and the
#: report use.
RENT_TIER = ("rental-3yr", "2026-07")


def default_rent_usd_per_chip_h(hardware: Any) -> float:
    """The rental price of :data:`RENT_TIER` for ``hardware`` [USD/chip-hour]."""
    return float(preset(hardware, *RENT_TIER).cost_usd_per_h)


def rent_vs_own(own: CostModel, rent_usd_per_chip_h: Any = None, utilization_frac: Any = 1.0,
                board_power_w: Any = None):
    """Owning versus renting by the hour.

    An owned chip costs its full hourly cost whether busy or not, so per *used* hour it costs
    ``own / utilization``; an on-demand rental is paid only for used hours. Rents and
    utilizations broadcast against each other (one rent per utilization, or one for all).

    Parameters
    ----------
    own : CostInputs or TierCost
    rent_usd_per_chip_h : float or array, optional
        Rental price [USD/chip-hour], > 0; default :func:`default_rent_usd_per_chip_h` (InferenceX
        3-year rental, July 2026 survey).
    utilization_frac : float or array
        Share of hours used (0, 1].
    board_power_w : float, optional
        Board power of the owned chip [W]; default the typical draw, 0.75 x TDP (Epoch AI);
        never 0 W (an owned chip pays electricity).

    Returns
    -------
    pandas.DataFrame
        utilization_frac, own_usd_per_used_h, rent_usd_per_used_h, breakeven_utilization_frac,
        cheaper ('own' or 'rent').
    """
    import pandas as pd

    v.fraction(utilization_frac, "utilization_frac", allow_zero=False)
    if rent_usd_per_chip_h is None:
        rent_usd_per_chip_h = default_rent_usd_per_chip_h(own.hardware)
    v.positive(rent_usd_per_chip_h, "rent_usd_per_chip_h")
    if board_power_w is None:

        try:
            tdp = _chip_row(own.hardware).tdp_w
        except Exception:  # noqa: BLE001 -- an uncatalogued name
            tdp = float("nan")
        if math.isnan(tdp):
            tdp = param("tdp_w", own.hardware, default=float("nan"))
        if math.isnan(tdp) and isinstance(own, CostInputs):
            raise DataError(f"no tdp_w for {own.hardware!r}; pass board_power_w= (W)")
        board_power_w = 0.0 if math.isnan(tdp) else 0.75 * tdp
    u_in = np.atleast_1d(np.asarray(utilization_frac, float))
    r_in = np.atleast_1d(np.asarray(rent_usd_per_chip_h, float))
    try:
        u, rent = np.broadcast_arrays(u_in, r_in)
    except ValueError:
        raise ValidationError(f"give one rent or one per utilization: {r_in.size} rents for "
                              f"{u_in.size} utilizations") from None
    own_h = float(np.asarray(own.cost_usd_per_chip_h(board_power_w)))
    own_used = own_h / u
    return pd.DataFrame({"utilization_frac": u, "own_usd_per_used_h": own_used, "rent_usd_per_used_h": rent,
                         "breakeven_utilization_frac": own_h / rent,
                         "cheaper": np.where(own_used <= rent, "own", "rent")})
