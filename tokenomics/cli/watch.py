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
    force: Annotated[bool, typer.Option("--force", is_eager=True, help="With --out: write into a directory that holds other files, such as the current one (only this command's files are replaced).")] = False,
) -> None:
    """Price cuts, megakernel adoption and domestic supernode deliveries: latest, trend, forecast, status."""
    from ..watch import watch as run

    d = run(n_boot=n_boot, n_draws=n_draws, seed=seed, megakernel_events=megakernel_events,
            supernode_events=supernode_events)
    df = d.to_frame()
    if fmt == Format.table:
        emit(df[["metric", "latest", "trend", "forecast", "status", "as_of"]], fmt,
             title="Watch metrics (datasets: api_prices, china_price_cuts, megakernel_events, supernode_events)")
    else:
        emit(df, fmt)
    if out is not None:
        paths = d.write(out)
        typer.echo("wrote " + ", ".join(str(p.resolve()) for p in paths), err=True)
