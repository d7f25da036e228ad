"""CLI: ``tokenomics forecast``: token demand to 2030 (parse and format only)."""

from __future__ import annotations

from enum import Enum
from pathlib import Path
from typing import Annotated, Optional

import typer

from . import app
from ._common import FORMAT_HELP, Format, emit


class ScenarioChoice(str, Enum):
    low = "low"
    base = "base"
    high = "high"


class Show(str, Enum):
    forecast = "forecast"
    backtest = "backtest"
    scenarios = "scenarios"
    references = "references"
    infra = "infra"
    replay = "replay"
    added = "added"
    capacity = "capacity"
    elasticity = "elasticity"
    drivers = "drivers"
    roadmap = "roadmap"
    measurement = "measurement"


class Freq(str, Enum):
    annual = "annual"
    monthly = "monthly"


@app.command()
def forecast(
    series: Annotated[str, typer.Option("--series", "-s", help="Series name (google, china = national figure, doubao, openrouter, ...) or 'all'.")] = "all",
    fit_through: Annotated[Optional[str], typer.Option("--fit-through", help="Use only observations up to this month, YYYY-MM (--show replay: the last month-end replayed).")] = None,
    scenario: Annotated[Optional[ScenarioChoice], typer.Option("--scenario", help="Agentic scenario multiplying the trend (Bass share x Gartner 5-30x); default: trend only.")] = None,
    show: Annotated[Show, typer.Option("--show", help="What to print: the forecast, the backtest table (beside drift and a random walk), the scenario parameters, the reference lines comparison, the infrastructure to serve it, the capacity (demand against the chips and power of its region: what is served, which limit binds), the replay (what the forecast would have said at each month-end since 2025-06, scored on what was published later; about 20 s), (added, with --add-history) how the method fitted without the added rows forecasts them, the drivers (the structural model: adopters x tokens per adopter per day, tasks per adopter x tokens per task, beside the trend, with its rolling-origin score against drift and a random walk), the roadmap (the cost and list price of a frontier-class token each year on the cheapest system of the hardware roadmap), or the measurement (what each observation counts, how it was published and its error scale; the level shift estimated where a series changes definition; parts against their wholes).")] = Show.forecast,
    freq: Annotated[Freq, typer.Option("--freq", help="annual (December of each year) or monthly rows.")] = Freq.annual,
    system: Annotated[Optional[str], typer.Option("--system", help="--show infra, capacity: catalogued system serving the demand (tokenomics systems), one node each [default gb200-nvl72].")] = None,
    model: Annotated[Optional[str], typer.Option("--model", "-m", help="--show infra, capacity: model serving the demand (tokenomics models) [default deepseek-v3].")] = None,
    workload: Annotated[Optional[str], typer.Option("--workload", "-w", help="--show infra: request mix of the demand (datasets/workloads.csv) [default openrouter-2025: OpenRouter's mean request, late 2025, 6,000 in / 400 out].")] = None,
    target_tok_s_user: Annotated[Optional[float], typer.Option("--target-tok-s-user", help="--show infra: output tokens/s each user sees [default 35: InferenceX's DeepSeek-R1 quoting speed, as the watch's cost floor].")] = None,
    cost: Annotated[Optional[str], typer.Option("--cost", help="--show infra: cost basis, as for tokenomics price [default bottom-up].")] = None,
    serving: Annotated[Optional[str], typer.Option("--serving", help="--show infra: disaggregated (prefill and decode instances with KV transfer, the split serving the most tokens per chip; default) or colocated (one engine interleaving both: fewer users per chip at the target speed; every layout of the system tried).")] = None,
    electricity: Annotated[Optional[float], typer.Option("--electricity", help="--show infra, capacity: electricity price [USD/kWh] of the bottom-up cost [default: datasets/tco_params.csv electricity_usd_per_kwh]; kept as the electricity_usd_per_kwh column.")] = None,
    cache_hit: Annotated[float, typer.Option("--cache-hit", help="--show infra: share of input tokens served from a prefix cache, 0-1 (they skip prefill; DeepSeek reports 0.563) [default 0].")] = 0.0,
    execution: Annotated[Optional[str], typer.Option("--execution", "-e", help="--show infra: execution plan of the serving deployment: engine (default), graph, eager, super, megakernel, ... (tokenomics throughput --help).")] = None,
    deployment: Annotated[Optional[Path], typer.Option("--deployment", help="--show infra: TOML file describing the serving deployment, as for tokenomics price (--system, --model and --execution override it).")] = None,
    history: Annotated[Optional[Path], typer.Option("--history", help="CSV of observations (series, date, tokens_per_day) to use instead of datasets/token_demand.csv (up to 100,000 rows; a daily series is averaged to calendar months).")] = None,
    add_history: Annotated[Optional[Path], typer.Option("--add-history", help="CSV of observations (series, date YYYY-MM or YYYY-MM-DD, tokens_per_day, source; optionally part_of, the series it is counted in, and region, for --show infra: world (default), china, ...) added to the bundled ones (or to --history): a new series or more points for an existing one; an observation with the series and date of one already there replaces it (a warning names them).")] = None,
    drivers_file: Annotated[Optional[Path], typer.Option("--drivers", help="--show drivers: CSV of user counts and tokens per request (the columns of datasets/demand_drivers.csv: driver, series, metric, date, value) to use instead of the bundled ones.")] = None,
    roadmap: Annotated[Optional[Path], typer.Option("--roadmap", help="--show roadmap, capacity: CSV of serving systems by year (system, available_year, status shipping/announced, region world/china) to price instead of datasets/hardware_roadmap.csv.")] = None,
    price_path: Annotated[Optional[Path], typer.Option("--price-path", help="--show capacity: CSV of list prices by year (year, usd_per_m_output_tok; optionally region) to use instead of the roadmap's.")] = None,
    price_scale: Annotated[Optional[float], typer.Option("--price-scale", help="List prices as a multiple of those the forecast was fitted under (0.5: half the price): demand moves by price_scale ** elasticity, the estimate's uncertainty widening the intervals (--show forecast, capacity, infra).")] = None,
    elasticity: Annotated[Optional[float], typer.Option("--elasticity", help="With --price-scale: d log tokens / d log price to use instead of the estimate (--show elasticity), e.g. -1.0.")] = None,
    out: Annotated[Optional[Path], typer.Option("--out", help="Directory for annual and monthly CSV tables, backtest, references and a PNG fan chart.")] = None,
    fmt: Annotated[Format, typer.Option("--format", "-f", help=FORMAT_HELP)] = Format.table,
    force: Annotated[bool, typer.Option("--force", is_eager=True, help="With --out: write into a directory that holds other files, such as the current one (only this command's files are replaced).")] = False,
) -> None:
    """Forecast token demand to 2030-12 with 80/95 % intervals (backtest-weighted models)."""
    from ..forecast import forecast as run_forecast
    from ..forecast.infrastructure import plan_infrastructure
    from ..forecast.scenarios import reference_comparison, scenario_table

    from ..catalog import model_names
    from ..errors import ValidationError, unknown_name
    from ..forecast.history import add_history as merge_history, load_history, part_of, read_history
    from ..perf.parallel import system_names

    # checked even without --show infra: a typo is never ignored
    from ..forecast.infrastructure import SERVING_MODES

    if serving is not None and serving not in SERVING_MODES:
        raise unknown_name("serving mode", serving, SERVING_MODES)
    if system is not None and system not in system_names():
        raise unknown_name("system", system, system_names())
    if model is not None and model not in model_names():
        raise unknown_name("model", model, model_names())
    # the serving options describe the deployment behind --show infra and --show capacity: any
    # other view ignores them, so giving one there is refused rather than silently dropped
    if show == Show.roadmap:  # the roadmap prices one model at one speed: the other serving options say nothing
        serving_opts = (("--system", system), ("--cost", cost), ("--serving", serving), ("--cache-hit", cache_hit or None),
                        ("--execution", execution), ("--deployment", deployment), ("--workload", workload))
        given = [flag for flag, val in serving_opts if val is not None]
        if given:
            raise ValidationError(f"{given[0]} has no effect with --show roadmap: it prices every roadmap system "
                                  "for --model at --target-tok-s-user")
    elif show not in (Show.infra, Show.capacity):
        serving_opts = (("--system", system), ("--model", model), ("--target-tok-s-user", target_tok_s_user),
                        ("--cost", cost), ("--serving", serving), ("--cache-hit", cache_hit or None),
                        ("--execution", execution), ("--deployment", deployment))
        if show != Show.elasticity:  # the elasticity view reads the workload's lengths
            serving_opts += (("--workload", workload),)
        given = [flag for flag, val in serving_opts if val is not None]
        if given:
            raise ValidationError(
                f"{given[0]} has no effect with --show {show.value}: it describes the deployment serving the "
                "demand; add --show infra or --show capacity, or drop it")
    if electricity is not None:  # checked before any work
        from ..econ.tco import electricity_override

        if show not in (Show.infra, Show.capacity):
            raise ValidationError(f"--electricity prices the serving chips of --show infra or capacity, not --show {show.value}")
        electricity_override(cost, electricity)
    if drivers_file is not None and show != Show.drivers:
        raise ValidationError(f"--drivers feeds --show drivers, not --show {show.value}")
    if roadmap is not None and show not in (Show.roadmap, Show.capacity):
        raise ValidationError(f"--roadmap prices --show roadmap or capacity, not --show {show.value}")
    if price_path is not None and show != Show.capacity:
        raise ValidationError(f"--price-path prices --show capacity, not --show {show.value}")
    if elasticity is not None and price_scale is None:
        raise ValidationError("--elasticity needs --price-scale: it says how demand answers a price change")
    if price_scale is not None:
        from .._validate import finite, positive

        positive(finite(price_scale, "--price-scale"), "--price-scale")
        if show not in (Show.forecast, Show.capacity, Show.infra):
            raise ValidationError(f"--price-scale moves the forecast of --show forecast, capacity or infra, not --show {show.value}")
    dep = None
    if deployment is not None or execution is not None:  # checked even without --show infra
        from ..forecast.infrastructure import INFRA_MODEL, INFRA_SYSTEM
        from ._deploy import resolve_deployment

        dep = resolve_deployment(model=model, hardware=None,
                                 system=system or (None if deployment is not None else INFRA_SYSTEM),
                                 deployment_file=deployment, default_model=INFRA_MODEL, execution=execution)
    hist = read_history(history) if history is not None else None
    before = hist
    if add_history is not None:
        extra = read_history(add_history, require_source=True)
        before = load_history() if hist is None else hist
        hist = merge_history(before, extra)
    if show == Show.added:
        _show_added(before, hist, add_history is not None, fmt)
        return
    if show == Show.elasticity:
        _show_elasticity(workload, fmt)
        return
    if show == Show.roadmap:
        _show_roadmap(roadmap, model, target_tok_s_user, fmt)
        return
    if show == Show.measurement:
        _show_measurement(hist, series, fmt)
        return
    if show == Show.drivers:
        if scenario is not None or fit_through is not None:
            raise ValidationError(f"--show drivers fits every published point with the base agentic scenario; drop "
                                  f"{'--scenario' if scenario is not None else '--fit-through'}")
        _show_drivers(hist, series, fmt, drivers_file)
        return
    if show == Show.replay:
        if scenario is not None:
            from ..errors import ValidationError

            raise ValidationError("--show replay scores the trend forecasts; drop --scenario")
        _show_replay(hist, series, fit_through, out, fmt)
        return
    result = run_forecast(series, fit_through=fit_through,
                          scenario=scenario.value if scenario else None, history=hist)
    price_note = None
    if price_scale is not None:
        from ..forecast.elasticity import price_response

        result = price_response(result, price_scale, elasticity)
        m = result.monthly
        price_note = (f"prices x{price_scale:g}: demand x{float(m['demand_response_x'].iloc[0]):.3g} at elasticity "
                      f"{m['elasticity_basis'].iloc[0]}")
    caption = None
    if show == Show.forecast:
        df = result.to_frame(freq.value)
        title = f"Token demand, tokens/day ({freq.value}; {result.scenario or 'trend only'})"
        by_weights: dict[str, list[str]] = {}  # series sharing one set of weights, listed once
        for s, m in df.groupby("series", sort=False)["models"].last().items():  # the long run's
            by_weights.setdefault(m, []).append(s)
        caption = "model weights from the backtest: " + "; ".join(
            f"{m} ({', '.join(ss)})" for m, ss in by_weights.items())
        o = result.backtest.origins or {}
        if o.get("used", 0) < o.get("available", 0):  # a long history: say how the weights were sampled
            caption += (f" (rolling origins: {o['used']:,} of {o['available']:,}, at most "
                        f"{o['max_per_series']} per series, {o['spacing']})")
        h = result.history
        if "level_shift_dec" in h.columns:  # a series fitted on its latest definition: say so
            moved = h[h["level_shift_dec"].fillna(0.0) != 0.0].groupby("series", sort=True)
            if len(moved):
                caption += ("; fitted on each series' latest definition (--show measurement): " + ", ".join(
                    f"{n}'s figures through {g['date'].max():%Y-%m} moved {g['level_shift_dec'].iloc[-1]:+.2f} decades"
                    for n, g in moved))
        follows = sorted(df.loc[df["point_method"] == "drift", "series"].unique()) if "point_method" in df else []
        if follows:  # where the trend ensemble has not beaten drift on the series' own record
            from ..forecast.record import DRIFT_HORIZON_YEAR

            caption += ("; the trend has not beaten drift on its own backtest for " + ", ".join(follows)
                        + f": these follow last year's growth for {DRIFT_HORIZON_YEAR:g} year, then the trend's")
        if freq == Freq.annual:
            df, supply = _with_supply(result, df)
            title += "; served = min(demand, chips, power)"
            caption = supply + "; " + caption
    elif show == Show.backtest:
        bt = result.backtest
        cal = bt.calibration
        df = bt.coverage_by_horizon() if fmt != Format.json else bt.scored_points()
        title = ("Rolling-origin backtest: calibrated 80/95 % intervals scored out of sample, by "
                 "horizon; sample tuning = leave one tuning series out, holdout = series never "
                 "tuned on")
        spread = f" + ({cal.k_spread:.3g} d)^2" if cal.k_spread else ""
        caption = (f"calibration from {cal.n_points} pooled errors of {cal.n_series} tuning series ("
                   f"{cal.source}); scale = sqrt({cal.s0_log10:.3g}^2 (1 + L) + ({cal.s1_log10_per_year:.3g}"
                   f" h)^2{spread}) decades at horizon h years and leverage L of the fitted window "
                   f"(capped at {cal.max_leverage:.3g}), x{cal.q[0.8]:.2f} (80 %), "
                   f"x{cal.q[0.95]:.2f} (95 %); widths in decades; mae_vs_naive < 1 beats a random "
                   "walk in logs, mae_vs_drift < 1 beats drift (constant growth of the last year). "
                   + _benchmark_line(bt) + _structural_line(hist) + ". Held-out series (holdout = 1 in token_demand.csv) enter no weight or "
                   "calibration. Per model: --format csv --out DIR (backtest.csv); per scored point: "
                   "--format json")
    elif show == Show.scenarios:
        df, title = scenario_table(), "Agentic scenarios (datasets/demand_scenarios.csv)"
    elif show == Show.references:
        df, title = reference_comparison(result), "Forecast vs Goldman Sachs and article 2030 lines"
    else:
        stated = {k: x for k, x in (("system", system), ("model", model), ("workload", workload)) if x is not None}
        if dep is not None:  # the deployment stands for system and model
            stated = {"deployment": dep, **({"workload": workload} if workload is not None else {})}
        if serving is not None:
            stated["serving"] = serving
        if electricity is not None:
            stated["electricity_usd_per_kwh"] = electricity
    if show == Show.capacity:
        df, title, caption = _capacity_view(result, stated, target_tok_s_user, cost, cache_hit, fmt,
                                            roadmap=roadmap, price_path=price_path)
    elif show == Show.infra:
        df = plan_infrastructure(result, **stated, target_tok_per_s_per_user=target_tok_s_user, cost=cost,
                                 cache_hit_frac=cache_hit).to_frame()  # the library's defaults for the rest
        title = f"Serving the forecast: {df['deployment'].iloc[0]}, {df['workload'].iloc[0]}"
        caption = (f"{df['serving_mode'].iloc[0]}, {df['tok_per_s_per_user'].iloc[0]:.3g} tok/s per user; a chip serves "
                   f"{df['tok_per_s_per_chip'].iloc[0]:,.0f} tok/s of the workload's input and output "
                   f"tokens at {df['cost_usd_per_chip_h'].iloc[0]:.3g} USD/h ({df['cost_basis'].iloc[0]}), "
                   "as tokenomics price prices it; n_nodes counts systems; price_usd_per_m_tok is the "
                   "market price path (datasets/demand_scenarios.csv); dc_electricity_*: every data centre of "
                   "the series' region as the IEA projects it (base case, datasets/dc_electricity.csv), the share "
                   "of it the year's tokens take and the tokens/day all of it would serve on this deployment")
        wholes = part_of(load_history() if hist is None else hist)
        shown = set(df["series"])
        inside = [f"{p} in {wholes[p]}" for p in dict.fromkeys(df["series"]) if wholes.get(p) in shown]
        if inside:
            caption += "; counted inside another, so not to be added to it: " + ", ".join(inside)
        if cache_hit:
            caption += f"; {cache_hit:.0%} of input tokens hit a prefix cache and skip prefill"
        if _finite(df["electricity_usd_per_kwh"].iloc[0]):
            caption += f"; electricity USD {df['electricity_usd_per_kwh'].iloc[0]:g}/kWh"
        constant = ["deployment", "workload", "cost_basis", "cache_hit_frac", "serving", "tok_per_s_per_chip",
                    "cost_usd_per_chip_h", "tok_per_s_per_user", "electricity_usd_per_kwh"]  # one value a run: said in the caption
        df = df.drop(columns=constant) if fmt == Format.table else df
    if out is not None:  # every file in one directory swap: an interrupted run leaves the old set or the new
        extra = {"references.csv": reference_comparison(result)}
        if show == Show.infra:
            extra["infrastructure.csv"] = df
        paths = result.write(out, extra=extra)
        typer.echo(f"wrote {len(paths)} files to {Path(out).resolve()}", err=True)
    if result.skipped:
        skipped = "skipped: " + "; ".join(f"{k} ({v})" for k, v in result.skipped.items())
        caption = f"{caption}; {skipped}" if caption else skipped
        if fmt != Format.table:
            typer.echo(skipped, err=True)
    if "date" in df.columns and hasattr(df["date"], "dt"):
        df = df.assign(date=df["date"].dt.strftime("%Y-%m-%d"))
    if fmt == Format.table and show == Show.forecast:
        keep = {"series": "series", "date": "date", "tokens_per_day": "median",
                "tokens_per_day_lo_80": "lo 80%", "tokens_per_day_hi_80": "hi 80%",
                "tokens_per_day_lo_95": "lo 95%", "tokens_per_day_hi_95": "hi 95%"}
        if result.scenario:
            keep.update({"agentic_share_frac": "agentic share", "agentic_uplift": "uplift"})
        if "served_tokens_per_day" in df.columns:
            keep.update({"served_tokens_per_day": "served", "binding": "binding"})
        df = df[list(keep)].rename(columns=keep)
    if price_note:
        caption = f"{price_note}; {caption}" if caption else price_note
        if fmt != Format.table:
            typer.echo(price_note, err=True)
    emit(df, fmt, title=title, caption=caption)
    if show == Show.backtest and fmt == Format.table:
        emit(result.backtest.coverage_by_series(), fmt,
             title="The same intervals by series (each series' rolling-origin points)",
             caption="each series one vote: the mean of the series' rows, so a long series (the held-out "
                     "OpenRouter weeks) cannot stand for its sample; --out DIR writes backtest_series.csv")


def _supply_bound(cap) -> str:
    """The supply-bound series of a capacity frame, each from its first bound year with the limits
    that bind ("china from 2026 (chips/power)"), or "none"."""
    bound = cap[cap["supply_bound"]]
    return (", ".join(f"{s} from {int(g['year'].min())} ({'/'.join(dict.fromkeys(g['binding']))})"
                      for s, g in bound.groupby("series", sort=False)) or "none")


def _with_supply(result, df):
    """The annual demand table with what its region's chips and power serve beside each median
    (``served_tokens_per_day``, ``binding``: :func:`tokenomics.forecast.capacity.supply_capacity` at
    the library's defaults) and a caption naming the supply-bound series."""
    from ..errors import TokenomicsError
    from ..forecast.capacity import supply_capacity

    try:
        cap = supply_capacity(result).to_frame()
    except TokenomicsError as exc:  # a user's history the supply view cannot size: the trend alone, said so
        return df, f"medians are the demand trend; supply not sized ({exc})"
    year = df["date"].dt.year
    key = cap.set_index(["series", "year"])
    idx = list(zip(df["series"], year))
    df = df.assign(served_tokens_per_day=key["served_tokens_per_day"].reindex(idx).to_numpy(),
                   binding=key["binding"].reindex(idx).fillna("").to_numpy())
    said = _supply_bound(cap)
    return df, ("medians are the demand trend; served_tokens_per_day is what the region's chips and power serve "
                f"(--show capacity); supply-bound: {said}")


def _capacity_prices(result, stated: dict, target, roadmap, price_path):
    """The list-price path of --show capacity and the phrase saying where it comes from: the user's
    --price-path, else the roadmap's cheapest system per year and region marked up by the market margin."""
    from ..forecast.roadmap import regional_cost_paths
    from ..io import read_csv

    if price_path is not None:
        return read_csv(price_path, "price path"), f"usd_per_m_output_tok from {price_path}"
    model = stated.get("model") or (stated["deployment"].model.name if "deployment" in stated else None)
    path = regional_cost_paths(sorted(set(result.monthly["date"].dt.year)), model=model, tok_per_s_per_user=target,
                               roadmap=None if roadmap is None else read_csv(roadmap, "hardware roadmap"))
    last = path.dropna(subset=["usd_per_m_output_tok"]).groupby("region")["system"].last()
    return path, ("usd_per_m_output_tok: the cheapest roadmap system of the region each year ("
                  + ", ".join(f"{r}: {s} by 2030" for r, s in last.items())
                  + f"; datasets/hardware_roadmap.csv, --show roadmap), marked up by the {path.attrs['margin_basis']}")


def _capacity_view(result, stated: dict, target, cost, cache_hit: float, fmt: Format, roadmap=None, price_path=None):
    """--show capacity: demand against the chips and power of its region, per series and year."""
    from ..forecast.capacity import supply_capacity

    prices, price_said = _capacity_prices(result, stated, target, roadmap, price_path)
    cap = supply_capacity(result, **stated, target_tok_per_s_per_user=target, cost=cost, cache_hit_frac=cache_hit,
                          price_path=prices)
    df = cap.to_frame()
    a = df.attrs
    said = _supply_bound(df)
    title = f"Demand against supply: {df['deployment'].iloc[0]}, served = min(demand, chips, power)"
    caption = (f"December rates [tokens/day]; chips: the region's installed AI accelerators (Epoch AI, "
               f"datasets/ai_compute_stock.csv; after 2025 +{a.get('growth', 1.3):.0%}/yr scenario), "
               f"{a['inference_compute_frac']:.0%} of them serving inference, at "
               f"{df['tok_per_s_per_chip'].iloc[0]:,.0f} tok/s per deployment chip; power: "
               f"{a['inference_power_frac']:.0%} of the region's data-centre electricity (IEA base case; "
               "scenario parameter) at the deployment's energy per token; chips_needed serve the median; "
               f"twh is the served rate's electricity over a year; {price_said}. Supply-bound (median above what "
               "chips or power allow; served is capped): "
               + said + ". A series that is part of its region is bounded by the whole region's supply, "
               "not sized by it; parameters in datasets/demand_scenarios.csv")
    if _finite(df["electricity_usd_per_kwh"].iloc[0]):
        caption += (f"; electricity USD {df['electricity_usd_per_kwh'].iloc[0]:g}/kWh (it moves the cost, not what "
                    "chips and power serve)")
    no_chips = sorted(set(df.loc[df["chips_tokens_per_day"].isna(), "region"]))
    if no_chips:
        caption += "; no chip limit (no sourced share of the world's accelerators) for: " + ", ".join(no_chips)
    keep = ["series", "region", "year", "demand_tokens_per_day", "served_tokens_per_day", "binding",
            "chips_tokens_per_day", "power_tokens_per_day", "chips_needed", "twh", "usd_per_m_output_tok"]
    return (df[keep] if fmt == Format.table else df), title, caption


def _show_elasticity(workload, fmt: Format) -> None:
    """--show elasticity: the price elasticity of token volume, both specifications."""
    from ..forecast.elasticity import elasticity_table

    df = elasticity_table(workload=workload or "openrouter-2025")
    w = df.set_index("spec").loc["within"]
    verdict = ("supported: volume rises as the model's own price falls" if w["supported"] else
               f"NOT supported: the within-model estimate's 95 % interval ({w['lo_95']:.2f} to {w['hi_95']:.2f}) "
               f"does not lie below zero (only {int(w['n_models_price_changed'])} of {int(w['n_models'])} models changed "
               "price while listed). The forecast moves with price only when asked: --price-scale applies this estimate with its "
               "interval, or --elasticity a stated value")
    cap = (f"log(weekly tokens) on log(blended list price) by OLS, standard errors clustered by model; within = model "
           "and week fixed effects (a model's volume against its own price changes), cross_section = week fixed "
           "effects only (cheaper vs dearer models: quality sets both, not a demand response). Data: "
           f"{w['dataset']} ({int(w['n_obs'])} paid model-weeks, {int(w['n_weeks'])} weeks; top models only; weeks "
           "before 2026-02-09 carry that day's prices). half_price_demand_x: demand at half the price = 0.5^e, "
           f"with its 95 % interval. Verdict: {verdict}")
    emit(df, fmt, title="Price elasticity of token volume (OpenRouter model-weeks)", caption=cap)
    if fmt != Format.table:
        typer.echo(cap, err=True)


def _show_roadmap(roadmap, model, target, fmt: Format) -> None:
    """--show roadmap: the cheapest modelled cost and the list price of a frontier-class token per year."""
    from ..forecast.roadmap import regional_cost_paths
    from ..io import read_csv

    df = regional_cost_paths(range(2024, 2031), model=model, tok_per_s_per_user=target,
                             roadmap=None if roadmap is None else read_csv(roadmap, "hardware roadmap"))
    m = df.iloc[0]
    cap = (f"{m['model']} at {m['tok_per_s_per_user']:g} tok/s per user on the cheapest system of the roadmap "
           f"available each year ({'given file' if roadmap else 'datasets/hardware_roadmap.csv'}; status: shipping or "
           "announced), priced as the watch's cost floor (cheapest layout and batch, prefill and decode "
           f"disaggregated, bottom-up cost); list price = cost / (1 - margin), margin the {df.attrs['margin_basis']}. "
           "Engines held at today's releases: after the newest system the path is flat")
    if fmt == Format.table:  # the two prices share a unit: named apart, the unit said in the title
        df = df.drop(columns=["model", "tok_per_s_per_user"]).rename(
            columns={"cost_usd_per_m_output_tok": "cost", "usd_per_m_output_tok": "list price"})
    emit(df, fmt, title="Cost and list price of a frontier-class output token along the hardware roadmap "
                        "[USD per million output tokens]", caption=cap)
    if fmt != Format.table:
        typer.echo(cap, err=True)


def _show_measurement(hist, series: str, fmt: Format) -> None:
    """--show measurement: per series (table) or per observation (csv, json) what is measured and how
    well, with the level shift estimated at each definition change."""
    import pandas as pd

    from ..forecast.history import load_history, select_series
    from ..forecast.measurement import kind_scales, level_shifts, observations

    h = load_history() if hist is None else hist
    if series != "all":
        select_series(h, series)  # an unknown name is named with suggestions
        h = h[h["series"] == series]
    obs = observations(h)
    shifts = level_shifts(h)
    said = "; ".join(
        f"{r.series} from {r.date:%Y-%m-%d} ({r.to_definition}): {r.shift_dec:+.2f} decades (95 % {r.shift_lo95_dec:+.2f} "
        f"to {r.shift_hi95_dec:+.2f}) over {r.from_definition}, {r.n_before} + {r.n_after} observations" if r.applied
        else f"{r.series} from {r.date:%Y-%m-%d}: not estimated ({r.why}); fitted as published"
        for r in shifts.itertuples()) or "none"
    cap = ("kind: how the figure was published (datasets/measurement_kinds.csv), scale in decades (1 sd): "
           + ", ".join(f"{k} {v:g}" for k, v in kind_scales().items())
           + "; joined kinds add in quadrature. Definition changes (the jump is a level shift, estimated by WLS with "
             "an intervention dummy over the year around the change; the earlier observations are moved onto the "
             f"latest definition before any fit): {said}. share_of_whole: a part over its whole at that date")
    if fmt == Format.table:
        rows = []
        for name, g in obs.groupby("series", sort=True):
            kinds = g["kind"].value_counts()
            share = g["share_of_whole_frac"]
            rows.append({"series": name, "observations": len(g), "definitions": g["definition"].nunique(),
                         "kinds": ", ".join(f"{k} {n}" for k, n in kinds.items()),
                         "median_scale_dec": float(g["scale_dec"].median()),
                         "level_shift_dec": float(g["level_shift_dec"].max()),
                         "whole": g["whole"].iloc[0],
                         "max_share_of_whole": float(share.max()) if share.notna().any() else float("nan")})
        emit(pd.DataFrame(rows), fmt, title="What each series measures", caption=cap)
        return
    emit(obs.assign(date=obs["date"].dt.strftime("%Y-%m-%d")), fmt,
         title="What each observation measures", caption=cap)
    typer.echo(cap, err=True)


def _show_drivers(hist, series: str, fmt: Format, drivers_file=None) -> None:
    """--show drivers: the structural decomposition per series and year, and its rolling-origin score."""
    from ..forecast.structural import backtest_summary, drivers, structural_backtest

    from ..io import read_csv

    data = None if drivers_file is None else read_csv(drivers_file, "drivers file")
    df = drivers(series, history=hist, data=data).to_frame()
    pts = structural_backtest(history=hist, data=data)
    summ = backtest_summary(pts)
    if len(summ) > 1 and summ["n_points"].iloc[1] == summ["n_points"].iloc[0]:
        summ = summ.iloc[:1]  # every point within a year: one line
    score = "; ".join(
        f"{r.horizon}: median |error| {r.model_median_abs_err_dec:.2f} decades vs drift {r.drift_median_abs_err_dec:.2f}, "
        f"random walk {r.rw_median_abs_err_dec:.2f}; 80 % interval holds {r.coverage_80:.0%}, 95 % {r.coverage_95:.0%} "
        f"({r.n_points} points, {r.n_series} series)" for r in summ.itertuples()) or "no origin has enough data"
    from ..forecast.structural import load_drivers

    ag = load_drivers(data)
    ag = ag[ag["driver"] == "agentic_share"]
    shares = (f"; published shares of agentic use run higher than the scenario's: {ag['value'].min():.0%}-"
              f"{ag['value'].max():.0%} ({len(ag)} figures of "
              f"{'-'.join(dict.fromkeys(str(int(y)) for y in (ag['t_year'].min(), ag['t_year'].max())))}: "
              "automation-style conversations and API records, reasoning models' share of routed tokens; "
              "datasets/demand_drivers.csv), not the same definition as a share of tasks" if len(ag) else "")
    cap = ("tokens/day = adopters (logistic toward the region's people online, OLS on published user counts) x tokens "
           "per adopter per day (last year's growth, decaying at 1/year); tokens per adopter = tasks per adopter per "
           "day x tokens per task (published tokens per request on the same damped path). Intervals: Monte Carlo of "
           "the fit's uncertainty. trend = the trend forecast's median. agentic share: the base scenario's Bass share of "
           f"tasks (it starts at 0 in 2025, an assumption){shares}. Rolling-origin score, fitted on what was "
           f"published by each origin: {score}")
    if fmt == Format.table:
        keep = ["series", "year", "tokens_per_day", "tokens_per_day_lo_80", "tokens_per_day_hi_80",
                "trend_tokens_per_day", "adopters", "tokens_per_adopter_per_day",
                "tokens_per_task", "tasks_per_adopter_per_day", "agentic_share_frac"]
        df = df[keep]
    emit(df, fmt, title="Demand drivers: the structural model beside the trend", caption=cap)
    if fmt != Format.table:
        typer.echo(cap, err=True)


def _structural_line(hist) -> str:
    """The structural model's rolling-origin score on its own points, beside drift and the random walk
    (empty where no series has the user counts it needs)."""
    from ..forecast.structural import backtest_summary, structural_backtest

    b = backtest_summary(structural_backtest(history=hist))
    if b.empty:
        return ""
    r = b.iloc[0]
    return (f"; structural model (users x tokens per user, --show drivers): median |error| "
            f"{r.model_median_abs_err_dec:.2f} decades vs drift {r.drift_median_abs_err_dec:.2f}, random walk "
            f"{r.rw_median_abs_err_dec:.2f} ({int(r.n_points)} points, {int(r.n_series)} series)")


def _benchmark_line(bt) -> str:
    """Median |error| of the forecast, drift and the random walk per sample, in one phrase."""
    b = bt.benchmarks()
    return "; ".join(f"{r.sample}: median |error| {r.model_median_abs_err_dec:.2f} decades vs drift "
                     f"{r.drift_median_abs_err_dec:.2f}, random walk {r.rw_median_abs_err_dec:.2f} "
                     f"({r.n_points} points; beats drift on {r.beats_drift_frac:.0%}, follows it on "
                     f"{r.follows_drift_frac:.0%})"
                     for r in b.itertuples())


def _show_added(before, after, have_added: bool, fmt: Format) -> None:
    """--show added: the added rows scored by the method frozen on the history without them."""
    from ..errors import ValidationError
    from ..forecast.backtest import score_new_points

    if not have_added:
        raise ValidationError("--show added scores the rows of --add-history FILE; pass one "
                              "(columns series, date, tokens_per_day, source)")
    s = score_new_points(before, after)
    if s.empty:
        raise ValidationError("no added row can be forecast: a series needs 3 earlier observations "
                              "before an added point")
    from ..forecast.history import date_of_decimal_year

    n_points = len(s[["series", "target_year"]].drop_duplicates())
    s = s.assign(origin=date_of_decimal_year(s["origin_year"]).strftime("%Y-%m-%d"),
                 target=date_of_decimal_year(s["target_year"]).strftime("%Y-%m-%d"))
    keep = ["series", "sample", "origin", "target", "horizon_year", "predicted_log10",
            "actual_log10", "error_log10", "naive_error_log10", "width_95_log10", "in_80", "in_95"]
    cap = (f"{len(s)} rolling-origin scores of {n_points} added points: "
           f"{s['in_80'].mean():.0%} inside the 80 % intervals, {s['in_95'].mean():.0%} inside the 95 % "
           f"ones; mean |error| {s['error_log10'].abs().mean():.2f} decades vs "
           f"{s['naive_error_log10'].abs().mean():.2f} for a random walk; weights and calibration "
           "fitted without the added rows")
    emit(s[keep], fmt, title="Added observations forecast by the method fitted without them", caption=cap)
    if fmt != Format.table:
        typer.echo(cap, err=True)


def _show_replay(hist, series: str, fit_through, out, fmt: Format) -> None:
    """--show replay: forecasts made at each past month-end, scored on what was published later."""
    import numpy as np

    from ..errors import ValidationError, unknown_name
    from ..forecast import realtime_backtest
    from ..forecast.backtest import replay_coverage
    from ..forecast.history import load_history, series_names
    from ..io import write_frame

    h = load_history() if hist is None else hist
    if series != "all" and series not in series_names(h):
        raise unknown_name("series", series, series_names(h))
    import warnings

    from ..errors import ConvergenceWarning

    with warnings.catch_warnings():  # about past fits; the table scores what they printed
        warnings.simplefilter("ignore", ConvergenceWarning)
        scores = realtime_backtest(last=fit_through, history=hist)
    if series != "all" and not scores.empty:
        scores = scores[scores["series"] == series]
    if scores.empty:
        raise ValidationError("nothing to replay: no forecast made at a month-end from 2025-06"
                              + (f" to {fit_through}" if fit_through else "") + " has a later observation")
    table = replay_coverage(scores, history=h)
    year = scores["fit_through"].str[:4]
    parts = [f"cut-offs in {y}: {int(m.sum())} scores, {scores.loc[m, 'in_80'].mean():.0%} / "
             f"{scores.loc[m, 'in_95'].mean():.0%} covered at {np.median(scores.loc[m, 'width_95_log10']):.2f} decades"
             for y in sorted(year.unique()) for m in [year == y]]
    cap = (f"{len(scores)} scores of forecasts made at {scores['fit_through'].nunique()} month-ends "
           f"({scores['fit_through'].min()} to {scores['fit_through'].max()}), each with only the data "
           "published by then (weights and calibration included); " + "; ".join(parts)
           + f"; median |error| {scores['error_log10'].abs().median():.2f} decades vs drift "
           f"{scores['drift_error_log10'].abs().median():.2f} (last year's growth, continued: mae_vs_drift < 1 beats it)"
           + ". Cut-offs overlap, so scores are not independent; holdout = series never tuned on")
    if out is not None:
        from ..io import atomic_dir

        with atomic_dir(out, owned=("replay.csv", "replay_coverage.csv")) as tmp:
            paths = [write_frame(scores, tmp / "replay.csv"), write_frame(table, tmp / "replay_coverage.csv")]
        typer.echo(f"wrote {len(paths)} files to {Path(out).resolve()}", err=True)
    emit(table, fmt, title="Month-end replay: the forecasts the product would have printed, scored by horizon",
         caption=cap)
    if fmt != Format.table:
        typer.echo(cap, err=True)


def _finite(x) -> bool:
    import math

    return math.isfinite(float(x))
