"""CLI command ``tokenomics watch``: the three watch metrics. Parses and formats only."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

from . import app
from ._common import FORMAT_HELP, Format, emit


@app.command()
def watch(
    fmt: Annotated[Format, typer.Option("--format", "-f", help=FORMAT_HELP)] = Format.table,
    out: Annotated[Optional[Path], typer.Option("--out", help="Write watch.md and one PNG per metric into this directory.")] = None,
    n_boot: Annotated[int, typer.Option("--n-boot", help="Megakernel adoption dates: 0 for no interval; otherwise the bootstrap is exact, and draws this many resamples only for an events file with over 2,000 resample classes.")] = 200,
    n_draws: Annotated[int, typer.Option("--n-draws", help="Monte Carlo draws for the supernode ramp.")] = 400,
    seed: Annotated[int, typer.Option("--seed", help="Random seed of the supernode ramp's draws (the megakernel bootstrap is exact; it draws only beyond 2,000 resample classes).")] = 0,
    megakernel_events: Annotated[Optional[Path], typer.Option("--megakernel-events", help="Use this megakernel events CSV instead of the bundled one.")] = None,
    supernode_events: Annotated[Optional[Path], typer.Option("--supernode-events", help="Use this supernode events CSV instead of the bundled one.")] = None,
    prices: Annotated[Optional[Path], typer.Option("--prices", help="Use this API price list (CSV, the columns of datasets/api_prices.csv) instead of the bundled one: declines, cut events, forecast and the constant-quality index are recomputed from it (summary, price-index, price-paths).")] = None,
    show: Annotated[str, typer.Option("--show", help="summary (the three metrics); price-index (the constant-quality price index by half-year, 95% intervals); price-paths (the same model at the same provider over time); cost-basis (bottom-up owning cost per chip-hour vs InferenceX tiers vs rentals, with the input that explains the gap); cost-drivers (each input's value that would match the tier).")] = "summary",
    measure: Annotated[str, typer.Option("--measure", help="Price of --show price-index/price-paths: blended (chat mix) or output (USD per M tokens).")] = "blended",
    force: Annotated[bool, typer.Option("--force", is_eager=True, help="With --out: write into a directory that holds other files, such as the current one (only this command's files are replaced).")] = False,
) -> None:
    """Price cuts, megakernel adoption and domestic supernode deliveries: latest, trend, forecast, status."""
    from .._validate import one_of

    one_of(show, "--show", SHOWS)
    one_of(measure, "--measure", ("blended", "output"))
    if prices is not None and show in ("cost-basis", "cost-drivers"):
        from ..errors import ValidationError

        raise ValidationError(f"--prices applies to --show summary, price-index and price-paths, not {show}")
    if show != "summary":
        _show(show, measure, fmt, prices)
        return
    from ..watch import watch as run

    d = run(n_boot=n_boot, n_draws=n_draws, seed=seed, megakernel_events=megakernel_events,
            supernode_events=supernode_events, prices=prices)
    df = d.to_frame()
    if fmt == Format.table:
        price_src = "api_prices" if prices is None else f"prices from {prices.name}"
        emit(df[["metric", "latest", "trend", "forecast", "status", "as_of"]], fmt,
             title=f"Watch metrics (datasets: {price_src}, china_price_cuts, megakernel_events, supernode_events)")
    else:
        emit(df, fmt)
    if out is not None:
        paths = d.write(out)
        typer.echo("wrote " + ", ".join(str(p.resolve()) for p in paths), err=True)


#: Tables ``watch --show`` prints besides the summary.
SHOWS = ("summary", "price-index", "price-paths", "cost-basis", "cost-drivers")


def _show(show: str, measure: str, fmt: Format, prices: Optional[Path] = None) -> None:
    if show in ("price-index", "price-paths"):
        from ..watch import price_index as pi

        user = None
        if prices is not None:
            from ..watch.dashboard import indexable_prices
            from ..watch.prices import read_prices

            user, left_out = indexable_prices(read_prices(prices))
            if left_out:
                typer.echo(f"Warning: {left_out} price row(s) of {prices.name} name models without characteristics "
                           "in model_traits.csv; left out of the index", err=True)
        sample = pi.hedonic_sample(user, measure=measure)
        if show == "price-paths":
            emit(pi.like_for_like_paths(sample, measure=measure), fmt,
                 title=f"Like-for-like price paths, USD per M tokens ({measure}): the same model at the same provider")
            return
        d = pi.constant_quality_decline(sample, measure=measure, ci=0.95)
        emit(pi.price_index(sample, measure=measure, ci=0.95), fmt,
             title=f"Constant-quality API price index by half-year ({measure} price; first half-year = 1)",
             caption=(f"hedonic decline {d['decline_factor_per_year']:.2f}x/yr (95% CI {d['decline_factor_lo']:.2f}-"
                      f"{d['decline_factor_hi']:.2f}); same prices pooled {d['pooled_decline_factor_per_year']:.2f}x/yr "
                      f"({d['pooled_decline_factor_lo']:.2f}-{d['pooled_decline_factor_hi']:.2f}); n={d['n']}, "
                      f"{d['n_models']} models, {d['cov_type']} errors"))
        return
    from ..econ import tco

    if show == "cost-basis":
        df = tco.cost_basis_table()
        if fmt == Format.table:  # the columns a person reads; csv/json carry them all
            df = df[df["cost_basis"] == "bottom-up"][list(_COST_COLUMNS)].rename(columns=_COST_COLUMNS)
        emit(df, fmt, title="Owning cost per chip-hour (USD): bottom-up vs InferenceX 2026-07 tiers vs rentals",
             caption="driver: the one input that explains most of the gap to ref (in range: its value-to-match lies "
                     "inside its sourced range; else the largest share of the gap its range closes); all-cheap: every "
                     "input at the cheap end of its range at once")
    else:
        df = tco.gap_drivers()
        if fmt == Format.table:
            df = df[["hardware", "reference_usd_per_chip_h", "bottom_up_usd_per_chip_h", "input", "default", "lo", "hi",
                     "value_to_match", "in_range", "gap_closed_at_range_frac"]]
        emit(df, fmt, title="Each bottom-up input alone: the value that matches the InferenceX hyperscaler tier (2026-07)")


#: Columns of ``watch --show cost-basis`` as a table, and their short headers.
_COST_COLUMNS = {"hardware": "chip", "capex_usd": "capex", "bottom_up_usd_per_chip_h": "bottom-up",
                 "hyperscaler_owned_usd_per_chip_h": "hyperscaler", "neocloud_owned_usd_per_chip_h": "neocloud",
                 "rental_3yr_usd_per_chip_h": "rent 3yr", "rental_median_usd_per_chip_h": "rent median",
                 "bottom_up_all_cheap_usd_per_chip_h": "all-cheap", "reference_usd_per_chip_h": "ref",
                 "bottom_up_over_reference": "bottom-up/ref", "main_driver": "driver",
                 "main_driver_value_to_match": "value to match", "main_driver_in_range": "in range",
                 "main_driver_gap_closed_at_range_frac": "gap closed in range"}
