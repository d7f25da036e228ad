"""CLI commands ``tokenomics sweep`` and ``tokenomics sweep-mc``. Parsing and formatting only."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Annotated, Optional

import typer

from . import app
from ._common import FORMAT_HELP, PER_HELP, Format, emit, per_unit, token_count

FormatOpt = Annotated[Format, typer.Option("--format", "-f", help=FORMAT_HELP)]
EngineOpt = Annotated[str, typer.Option("--engine", help="local (one process) or dask (a dask.distributed cluster).")]
SchedulerOpt = Annotated[Optional[str], typer.Option("--scheduler", help="Dask scheduler address, e.g. tcp://host:8786 [default: a LocalCluster].")]
PerOpt = Annotated[str, typer.Option("--per", help=PER_HELP)]
WorkersOpt = Annotated[Optional[int], typer.Option("--workers", help="Workers of the LocalCluster (dask engine without --scheduler) [default 2].")]


def _cluster(engine: str, scheduler: Optional[str], workers: Optional[int]) -> int:
    """The worker count; cluster options are refused with the local engine (they would do nothing)."""
    from .. import _validate as v
    from ..errors import ValidationError

    v.one_of(engine, "engine", ("local", "dask"))
    if engine != "dask":
        given = [f for f, val in (("--scheduler", scheduler), ("--workers", workers)) if val is not None]
        if given:
            raise ValidationError(f"{' and '.join(given)} apply to --engine dask; the local engine runs in this process")
        return 2
    workers = 2 if workers is None else workers
    from ..distributed import check_cluster_args

    check_cluster_args(scheduler, workers)
    return workers


class _Bar:
    """A rich progress bar on stderr that appears only once a sweep has run for a second."""

    def __init__(self, enabled: bool, label: str):
        self.enabled, self.label = enabled, label
        self.t0 = time.monotonic()
        self.progress = None
        self.task = None

    def __call__(self, done: int, total: int) -> None:
        if not self.enabled:
            return
        if self.progress is None:
            if time.monotonic() - self.t0 < 1.0:
                return
            from rich.console import Console
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

            self.progress = Progress(TextColumn(self.label), BarColumn(), MofNCompleteColumn(),
                                     TimeRemainingColumn(), console=Console(stderr=True))
            self.progress.start()
            self.task = self.progress.add_task(self.label, total=total)
        self.progress.update(self.task, completed=done)

    def close(self) -> None:
        if self.progress is not None:
            self.progress.stop()


@app.command()
def sweep(
    grid: Annotated[Path, typer.Argument(help="Grid file (TOML): [grid] axes and [sweep] chunk_configs.")],
    out: Annotated[Optional[Path], typer.Option("--out", "-o", help="Stream every configuration to this .parquet or .csv file (written atomically).")] = None,
    engine: EngineOpt = "local",
    scheduler: SchedulerOpt = None,
    workers: WorkersOpt = None,
    force: Annotated[bool, typer.Option("--force", help="Allow grids larger than the configured maximum.")] = False,
    progress: Annotated[bool, typer.Option("--progress/--no-progress", help="Progress bar on stderr for sweeps longer than a second.")] = True,
    per: PerOpt = "m",
    fmt: FormatOpt = Format.table,
) -> None:
    """Price every configuration of a grid (chips x models x plans x batch x context x prices).

    Prints one summary row per categorical combination (cheapest output price and where).
    An [slo] section (min_tok_per_s_per_user, max_ttft_s) marks each row meets_slo and picks the
    cheapest only among rows that meet it;
    --out streams all rows in chunks. Example: tokenomics sweep examples/grid_example.toml --out results.parquet
    """
    from ..sweep import load_grid, run

    per = per_unit(per)
    workers = _cluster(engine, scheduler, workers)
    g = load_grid(grid)
    bar = _Bar(progress, "sweep")
    try:  # Ctrl-C or SIGTERM: the entry point says so in one line (exit 130 / 143); no output file
        r = run(g, out, engine=engine, scheduler=scheduler, n_workers=workers, force=force, progress=bar, per=per)
    finally:
        bar.close()
    df = r.to_frame()
    caption = (f"{r.n_configs:,} configurations in {r.n_chunks} chunks, {r.elapsed_s:.2f} s "
               f"({r.configs_per_s:,.0f} configs/s, engine {r.engine})"
               + (f"; rows in {r.out}" if r.out else ""))
    bounds = [f"{label} {val:g}" for label, val in (("tok/s per user >=", g.min_tok_per_s_per_user),
                                                     ("TTFT s <=", g.max_ttft_s)) if val is not None]
    if bounds:
        caption += f"; cheapest among rows meeting the SLO ({', '.join(bounds)})"
    if fmt == Format.table:
        layout = [c for c in ("system", "tp", "ep") if df[c].nunique() > 1 or set(df[c]) - {"none", "auto"}]
        price_col = "best_usd_per_m_output_tok" if per == "m" else "best_usd_per_k_output_tok"
        varied = [c for c in ("workload", "kv_precision") if df[c].nunique() > 1]  # rows stay distinct
        slo = ["n_meet_slo"] if g.min_tok_per_s_per_user is not None or g.max_ttft_s is not None else []
        show = df[["hardware", "model", *layout, "execution", "weight_precision", *varied, "cost", "n_fit", *slo, price_col,
                   "best_batch", "best_context_tok", "max_tok_per_s_per_chip"]]
        emit(show, fmt, title=f"Sweep of {grid.name} (decode-only steady state)", caption=caption)
    else:
        emit(df, fmt)
        typer.echo(caption, err=True)


@app.command("sweep-mc")
def sweep_mc(
    hardware: Annotated[str, typer.Option("--hardware", "-H", help="Accelerator name.")] = "h200",
    model: Annotated[str, typer.Option("--model", "-m", help="Model name.")] = "llama-3.1-8b",
    execution: Annotated[Optional[str], typer.Option("--execution", "-e", help="Execution plan [default: engine, as price].")] = None,
    batch: Annotated[Optional[int], typer.Option("--batch", "-b", help="Sequences decoded together per replica [default: 32 per attention group, as price].")] = None,
    context: Annotated[Optional[str], typer.Option("--context", "-c", help="Decode context tokens, e.g. 8192 or 8k [default: workload input + output/2].")] = None,
    workload: Annotated[str, typer.Option("--workload", "-w", help="Request mix (chat, reasoning, summarization).")] = "chat",
    n_samples: Annotated[int, typer.Option("--samples", help="Monte Carlo draws.")] = 1_000_000,
    chunk_samples: Annotated[int, typer.Option("--chunk-samples", help="Draws per chunk (each seeded from --seed).")] = 250_000,
    seed: Annotated[int, typer.Option("--seed", help="Random seed.")] = 0,
    engine: EngineOpt = "local",
    scheduler: SchedulerOpt = None,
    workers: WorkersOpt = None,
    per: PerOpt = "m",
    fmt: FormatOpt = Format.table,
) -> None:
    """Seeded, chunked Monte Carlo of the output-token price over the bottom-up cost inputs
    (same samples on the local and dask engines)."""
    from ..sweep import price_monte_carlo
    from ..units import in_unit

    per = per_unit(per)
    context = token_count(context, "--context")
    workers = _cluster(engine, scheduler, workers)
    r = price_monte_carlo(hardware, model, execution, batch=batch, context_tok=context, workload=workload,
                          n_samples=n_samples, seed=seed, chunk_samples=chunk_samples, engine=engine,
                          scheduler=scheduler, n_workers=workers)
    unit = "USD per million output tokens" if per == "m" else "USD per 1K output tokens"
    emit(in_unit(r.to_frame(), per), fmt, title=f"Monte Carlo price of {model} on {hardware} ({unit})",
         caption=f"{r.elapsed_s:.2f} s, engine {r.engine}")
