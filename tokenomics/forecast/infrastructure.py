"""From demand to infrastructure: chips, nodes, spend and capex needed to serve a forecast.

:func:`serving_requirements` is a pure, vectorised function of the demand, the throughput of
one chip, its all-in cost per hour, its capex and a price path. :func:`plan_infrastructure` applies
it to a :class:`~tokenomics.forecast.demand.ForecastResult` with the throughput and cost of a
deployment as the price chain prices it (:func:`serving_basis`: a model on a catalogued system at a
speed per user, serving the workload's input and output tokens), so a forecast is sized with the
same numbers ``tokenomics price`` prints.

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
from typing import TYPE_CHECKING, Any

import numpy as np

from .._display import Display
from .._validate import finite, fraction, one_of, positive
from ..econ.pricing import REFERENCE_TOK_PER_S_PER_USER, chip_h_usd_of_price, energy_j_per_tok as _energy_j_per_tok
from ..econ.pricing import price_usd_per_1k_tok as _price_per_1k
from ..econ.pricing import gross_margin_frac
from ..errors import ValidationError
from ..units import HOURS_PER_DAY, HOURS_PER_YEAR, J_PER_KWH, S_PER_DAY

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

#: The deployment that serves a forecast unless told otherwise: DeepSeek-V3 on a GB200 NVL72
#: rack at the speed per user at which InferenceX (and the watch's cost floor) price DeepSeek-R1
#: serving (``tokenomics.econ.pricing.REFERENCE_TOK_PER_S_PER_USER``).
INFRA_SYSTEM, INFRA_MODEL = "gb200-nvl72", "deepseek-v3"
#: Request mix of the demand being served (``datasets/workloads.csv``): OpenRouter's mean request
#: in late 2025, 6,000 prompt and 400 completion tokens (the token volumes forecast count both).
INFRA_WORKLOAD = "openrouter-2025"


@dataclass(frozen=True, repr=False)
class InfraResult(Display):
    """Yearly serving requirements; see :func:`serving_requirements` for the columns."""

    frame: "pd.DataFrame"

    def to_frame(self) -> "pd.DataFrame":
        """One row per year (and series): chips, nodes, cost, spend, capex, margins; prices
        (``cost_usd_per_m_tok``, ``price_usd_per_m_tok``) in USD per million tokens."""
        from ..units import per_million

        return per_million(self.frame)


def serving_requirements(tokens_per_day_end, tok_per_s_per_chip, cost_usd_per_chip_h,
                         price_usd_per_1k_tok, *, tokens_per_day_mean=None,
                         utilization_frac: float = 0.5, capex_usd_per_chip=np.nan,
                         n_chips_per_node: int = 1, life_years: float = 4.0,
                         facility_w_per_chip=np.nan, year=None) -> InfraResult:
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
    facility_w_per_chip : float, optional
        Grid power of one busy chip, (board + host) x PUE [W]; NaN leaves the power columns NaN.
    year : array-like, optional
        Labels for the rows.

    Returns
    -------
    InfraResult
        Columns ``year, tokens_per_day, n_chips, n_nodes, cost_usd, spend_usd,
        cost_usd_per_1k_tok, price_usd_per_1k_tok, gross_margin_frac, capex_usd``,
        ``facility_mw`` (the provisioned chips all busy: the grid connection they need [MW]) and
        ``energy_twh`` (the year's tokens at the busy chips' facility energy per token; idle
        capacity not counted [TWh]).

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
    tokens_per_year = mean * HOURS_PER_YEAR / HOURS_PER_DAY
    spend = tokens_per_year * price / 1000.0
    cost_1k = _price_per_1k(cost_h, tps, utilization_frac)
    prev = np.concatenate([[np.nan], n_chips[:-1]]) if n_chips.size > 1 else np.array([np.nan])
    if np.isfinite(capex_usd_per_chip):
        positive(capex_usd_per_chip, "capex_usd_per_chip")
        prev0 = np.where(np.isnan(prev), 0.0, prev)
        capex = (np.maximum(n_chips - prev0, 0.0) + prev0 / life_years) * capex_usd_per_chip
        capex = np.where(np.isnan(prev), np.nan, capex)  # first year: no installed base known
    else:
        capex = np.full_like(n_chips, np.nan)
    fac_w = float(facility_w_per_chip)
    if np.isfinite(fac_w):
        positive(fac_w, "facility_w_per_chip")
        facility_mw = n_chips * fac_w / 1e6
        energy_twh = tokens_per_year * _energy_j_per_tok(fac_w, tps) / J_PER_KWH / 1e9
    else:
        facility_mw = energy_twh = np.full_like(n_chips, np.nan)
    frame = pd.DataFrame({
        "year": np.arange(len(end)) if year is None else np.asarray(year),
        "tokens_per_day": end,
        "n_chips": n_chips,
        "n_nodes": n_chips / n_chips_per_node,
        "cost_usd": cost,
        "spend_usd": spend,
        "cost_usd_per_1k_tok": np.broadcast_to(cost_1k, end.shape).astype(float),
        "price_usd_per_1k_tok": np.broadcast_to(price, end.shape).astype(float),
        "gross_margin_frac": gross_margin_frac(price, np.broadcast_to(cost_1k, end.shape)),
        "capex_usd": capex,
        "facility_mw": np.broadcast_to(facility_mw, end.shape).astype(float),
        "energy_twh": np.broadcast_to(energy_twh, end.shape).astype(float),
    })
    return InfraResult(frame)


def dc_electricity_twh(region: str, years) -> np.ndarray:
    """Electricity of all data centres of a region in each year: the IEA's estimate for 2024 and
    its base-case projections (``datasets/dc_electricity.csv``) [TWh/yr].

    Between two dated rows consumption grows at a constant rate (``log twh`` linear in the
    year); outside the rows' first and last year the result is NaN (no projection is
    extrapolated).

    Parameters
    ----------
    region : str
        A region of the table (:func:`dc_regions`).
    years : array-like
        Calendar years.

    Returns
    -------
    numpy.ndarray
        [TWh] per year, NaN outside the table's years.

    Examples
    --------
    China, 102 TWh in 2024 and 277 TWh in 2030: 2027 is halfway in logs, 102 x (277/102)^0.5.

    >>> round(float(dc_electricity_twh("china", [2027])[0]), 1)
    168.1
    """
    from ..catalog import load
    from ..errors import unknown_name

    from .history import dc_regions

    known = dc_regions()
    if region not in known:
        raise unknown_name("region", region, known)
    y = np.atleast_1d(np.asarray(finite(years, "years"), dtype=float))
    rows = load("dc_electricity").query("region == @region").sort_values("year")
    yr, twh = rows["year"].to_numpy(dtype=float), rows["twh"].to_numpy(dtype=float)
    out = np.exp(np.interp(y, yr, np.log(twh)))
    return np.where((y >= yr[0]) & (y <= yr[-1]), out, np.nan)


def price_path(years, workload: str = INFRA_WORKLOAD) -> np.ndarray:
    """Price per 1K tokens of a workload by year, from a start price and a yearly decline [USD/1K tok].

    ``price(y) = p0 * (1 - d) ** (y + 0.5 - y0)``: ``p0`` the input and output list prices of
    ``datasets/demand_scenarios.csv`` blended by the workload's input and output tokens
    (:func:`tokenomics.econ.pricing.blended_usd_per_1k_tok`), ``d`` its yearly decline, ``y0`` the
    prices' ``as_of`` (2025-02 -> 2025.1).
    """
    from ..chain import workload_mix
    from ..econ.pricing import blended_usd_per_1k_tok
    from .scenarios import parameter

    i, o = workload_mix(workload)
    p0 = blended_usd_per_1k_tok(parameter("price_usd_per_1k_input_tok_2025"),
                                parameter("price_usd_per_1k_output_tok_2025"), i, o)
    return p0 * price_decline_factor(years)


def price_decline_factor(years) -> np.ndarray:
    """Mid-year list price over the start prices' (``datasets/demand_scenarios.csv``):
    ``(1 - d) ** (y + 0.5 - y0)``, ``d`` the yearly decline and ``y0`` the prices' ``as_of``."""
    from .history import decimal_year
    from .scenarios import _params, parameter

    d = parameter("price_decline_frac_per_year")
    row = _params().query("parameter == 'price_usd_per_1k_input_tok_2025'").iloc[0]
    y0 = float(decimal_year([row["as_of"]])[0])
    return (1.0 - d) ** (np.asarray(years, dtype=float) + 0.5 - y0)


#: How the chips of a plan serve prompts and generation: ``disaggregated`` (prefill and decode
#: instances with KV transfer) or ``colocated`` (one engine interleaving both).
SERVING_MODES = ("disaggregated", "colocated")


def serving_basis(system: str = INFRA_SYSTEM, model: str = INFRA_MODEL, *, workload: str = INFRA_WORKLOAD,
                  target_tok_per_s_per_user: float | None = None, cost: Any = None,
                  deployment: Any = None, cache_hit_frac: float = 0.0,
                  serving: str = "disaggregated", electricity_usd_per_kwh: float | None = None) -> dict[str, Any]:
    """What one chip of a deployment serves and costs, as ``tokenomics price --serving`` prices it.

    The deployment is priced by :func:`tokenomics.chain.price` in the serving mode ``serving``
    at the target speed per user: ``disaggregated``, prefill and decode instances with KV
    transfer (:func:`tokenomics.perf.serving.serve_disaggregated`, the split and requests in flight
    that serve the most tokens per GPU with every user at the target); ``colocated``, one engine
    interleaving prompts and generation (:func:`tokenomics.perf.serving.serve_at_target`, the
    layout of the system serving the most tokens per chip). A chip serves the workload's tokens,
    input and output together, at

        tok_per_s_per_chip = (input_tok + output_tok) / chip_s_per_request

    (:func:`tokenomics.econ.disagg.chip_s_per_request` of the price's prefill and decode rates:
    the prefill GPUs' and decode GPUs' time per request; input tokens that hit a prefix cache,
    ``cache_hit_frac`` of them, skip prefill and count as served), and costs the chip-hour behind
    the workload's blended price (prefill and decode chip time each at its own power). Capex per
    chip and economic life are the bottom-up cost inputs of the chip (``tco_params.csv``; NaN
    capex where none is catalogued).

    Parameters
    ----------
    system : str
        Catalogued multi-chip system (``tokenomics systems``); one node is one system.
    model : str
        Catalogued model (``tokenomics models``).
    workload : str
        Request mix (``datasets/workloads.csv``).
    target_tok_per_s_per_user : float, optional
        Output tokens/s each user sees [tokens/s]; default
        ``tokenomics.econ.pricing.REFERENCE_TOK_PER_S_PER_USER`` (35).
    cost : optional
        Cost basis of :func:`tokenomics.chain.price` (default bottom-up).
    deployment : Deployment, optional
        Price exactly this deployment (``system`` and ``model`` are then ignored).
    cache_hit_frac : float
        Share of input tokens served from a prefix cache [0, 1) (DeepSeek reports 0.563,
        ``tco_params.csv``); default 0 (disaggregated sizing only).
    serving : {"disaggregated", "colocated"}
        How prompts and generation share the chips (:data:`SERVING_MODES`).
    electricity_usd_per_kwh : float, optional
        Electricity price of the bottom-up cost [USD/kWh]; default ``datasets/tco_params.csv``.

    Returns
    -------
    dict
        ``tok_per_s_per_chip`` [tokens/s, input and output], ``serving``, ``serving_mode``
        (``disaggregated 5P:1D``, ``co-located``), ``cost_usd_per_chip_h`` [USD/h],
        ``capex_usd_per_chip`` [USD], ``life_years``, ``n_chips_per_node``, ``deployment`` (its
        label), ``system``, ``workload``, ``tok_per_s_per_user``, ``decode_tok_per_s_per_chip``
        (output tokens/s per chip-second decoding), ``prefill_tok_per_s_per_chip`` (cache-miss
        input tokens/s per chip-second on prompts), ``cost_basis``, ``cache_hit_frac``,
        ``facility_w_per_chip`` (grid power of a busy chip: (board + host) x PUE of the cost
        model, prefill and decode weighted by their chip time [W]), ``electricity_usd_per_kwh``
        (of the cost; NaN for a tier or flat cost).
    """
    from ..chain import price
    from ..econ.tco import cost_model, electricity_override, has_capex, param
    from ..econ.disagg import chip_s_per_request

    one_of(serving, "serving", SERVING_MODES)
    if serving == "colocated" and cache_hit_frac:
        raise ValidationError("cache_hit_frac applies to disaggregated sizing only (a co-located engine's prefix cache "
                              "is not modelled); leave it 0 with serving='colocated'")
    elec = electricity_override(cost, electricity_usd_per_kwh)
    target = REFERENCE_TOK_PER_S_PER_USER if target_tok_per_s_per_user is None else target_tok_per_s_per_user
    kw = dict(deployment=deployment) if deployment is not None else dict(model=model, system=system)
    p = price(**kw, workload=workload, serving=serving, target_tok_per_s_per_user=target, cost=cost,
              utilization_frac=1.0, margin_frac=0.0, cache_hit_frac=cache_hit_frac, **elec)
    dep = p.deployment
    i, o = p.input_tok, p.output_tok
    rates = (p.prefill_tok_per_s_per_chip, p.decode_tok_per_s_per_chip)
    pre_s = chip_s_per_request(*rates, (1.0 - cache_hit_frac) * i, 0)  # a request's prefill chip time
    dec_s = chip_s_per_request(*rates, 0, o)  # and its decode chip time [s]
    tps = float((i + o) / (pre_s + dec_s))
    cost_h = float(chip_h_usd_of_price(p.price_usd_per_1k_blended_tok, tps))
    hw = dep.hardware.name
    # grid power of a busy chip, prefill and decode each weighted by its share of the chip time
    cm = cost_model(hw, cost, **elec)
    fac_w = float((pre_s * cm.facility_power_w(p.prefill_board_power_w)
                   + dec_s * cm.facility_power_w(p.board_power_w)) / (pre_s + dec_s))
    bottom_up = cost_model(hw) if has_capex(hw) else None
    return {
        "deployment": dep.label(), "system": dep.system.name, "workload": workload, "tok_per_s_per_chip": tps,
        "serving": serving, "serving_mode": p.serving_mode, "tok_per_s_per_user": float(np.asarray(p.tok_per_s_per_user)),
        "decode_tok_per_s_per_chip": float(np.asarray(p.decode_tok_per_s_per_chip)),
        "prefill_tok_per_s_per_chip": float(np.asarray(p.prefill_tok_per_s_per_chip)),
        "cost_usd_per_chip_h": cost_h, "cost_basis": p.cost_basis, "cache_hit_frac": float(cache_hit_frac),
        "capex_usd_per_chip": float(bottom_up.capex_usd) if bottom_up is not None else np.nan,
        "life_years": float(bottom_up.life_years) if bottom_up is not None else float(param("life_years")),
        "n_chips_per_node": int(dep.system.n_chips), "facility_w_per_chip": fac_w,
        "electricity_usd_per_kwh": float(np.asarray(p.electricity_usd_per_kwh, float)),
    }


def plan_infrastructure(result, system: str = INFRA_SYSTEM, *, model: str = INFRA_MODEL,
                        workload: str = INFRA_WORKLOAD, target_tok_per_s_per_user: float | None = None,
                        cost: Any = None, deployment: Any = None, cache_hit_frac: float = 0.0,
                        utilization_frac: float | None = None, serving: str = "disaggregated",
                        electricity_usd_per_kwh: float | None = None) -> InfraResult:
    """Yearly chips, nodes, cost, spend and capex to serve each series of a forecast.

    Parameters
    ----------
    result : ForecastResult
        Output of :func:`tokenomics.forecast.forecast`.
    system, model, workload, target_tok_per_s_per_user, cost, deployment, cache_hit_frac, serving, electricity_usd_per_kwh
        The deployment serving the demand and how it is priced (:func:`serving_basis`):
        by default DeepSeek-V3 on a GB200 NVL72 rack at 35 tokens/s per user, disaggregated
        (``serving_mode`` names the prefill:decode split).
    utilization_frac : float, optional
        Mean load over capacity; default from ``datasets/demand_scenarios.csv``.

    Returns
    -------
    InfraResult
        :func:`serving_requirements` columns plus ``series``, ``system``, ``deployment``,
        ``workload``, ``tok_per_s_per_user``, ``n_chips_lo_80`` / ``n_chips_hi_80`` from
        the forecast's 80 % interval, and the year's energy beside all data-centre electricity of
        the series' ``region`` (the history's ``region`` column, default ``world``):
        ``dc_electricity_twh`` (the IEA's projection, :func:`dc_electricity_twh` [TWh]),
        ``dc_electricity_share_frac`` (``energy_twh`` over it; above 1 the trend needs more
        electricity than every data centre of the region is projected to use) and
        ``dc_electricity_tokens_per_day`` (the mean daily tokens all of it would serve on this
        deployment [tokens/day]).
    """
    import pandas as pd

    from .history import DEFAULT_REGION, series_regions
    from .scenarios import parameter

    regions = series_regions(result.history)
    basis = serving_basis(system, model, workload=workload, target_tok_per_s_per_user=target_tok_per_s_per_user,
                          cost=cost, deployment=deployment, cache_hit_frac=cache_hit_frac, serving=serving,
                          electricity_usd_per_kwh=electricity_usd_per_kwh)
    util = parameter("serving_utilization_frac") if utilization_frac is None else utilization_frac
    out = []
    m = result.monthly.copy()
    m["year"] = m["date"].dt.year
    for name, g in m.groupby("series", sort=False):
        dec = g[g["date"].dt.month == 12].set_index("year")
        mean = g.groupby("year")["tokens_per_day"].mean().reindex(dec.index)
        years = dec.index.to_numpy()
        kw = dict(utilization_frac=util, capex_usd_per_chip=float(basis["capex_usd_per_chip"]),
                  n_chips_per_node=int(basis["n_chips_per_node"]),
                  facility_w_per_chip=float(basis["facility_w_per_chip"]),
                  life_years=float(basis["life_years"]), year=years)
        args = (float(basis["tok_per_s_per_chip"]), float(basis["cost_usd_per_chip_h"]),
                price_path(years, workload) * getattr(result, "price_scale", 1.0))
        r = serving_requirements(dec["tokens_per_day"].to_numpy(), *args,
                                 tokens_per_day_mean=mean.to_numpy(), **kw).frame
        lo = serving_requirements(dec["tokens_per_day_lo_80"].to_numpy(), *args, **kw).frame
        hi = serving_requirements(dec["tokens_per_day_hi_80"].to_numpy(), *args, **kw).frame
        r.insert(0, "series", name)
        r.insert(1, "system", basis["system"])
        r["tok_per_s_per_chip"] = float(basis["tok_per_s_per_chip"])
        r["cost_usd_per_chip_h"] = float(basis["cost_usd_per_chip_h"])
        for k in ("tok_per_s_per_user", "deployment", "workload", "cost_basis", "cache_hit_frac", "serving",
                  "electricity_usd_per_kwh"):
            r[k] = basis[k]
        r.insert(4, "n_chips_lo_80", lo["n_chips"].to_numpy())
        r.insert(5, "n_chips_hi_80", hi["n_chips"].to_numpy())
        # the year's energy beside the electricity of every data centre of the series' region
        region = regions.get(name, DEFAULT_REGION)
        r["region"] = region
        r["dc_electricity_twh"] = dc_electricity_twh(region, years)
        r["dc_electricity_share_frac"] = r["energy_twh"] / r["dc_electricity_twh"]
        r["dc_electricity_tokens_per_day"] = mean.to_numpy() / r["dc_electricity_share_frac"]
        r["scenario"] = result.scenario or "trend"
        r["serving_mode"] = basis["serving_mode"]
        out.append(r)
    return InfraResult(pd.concat(out, ignore_index=True))
