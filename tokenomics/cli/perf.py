"""CLI commands of the performance core: catalogs, throughput, calibrate, validate."""

from __future__ import annotations

from typing import Annotated

import typer

from . import app
from ._common import FORMAT_HELP, Format, emit

FormatOpt = Annotated[Format, typer.Option("--format", "-f", help=FORMAT_HELP)]


@app.command()
def hardware(fmt: FormatOpt = Format.table) -> None:
    """List catalogued accelerators (datasheet figures, dense FLOP/s, sources)."""
    from ..catalog import load

    df = load("accelerators")
    if fmt == Format.table:
        show = df[["name", "vendor", "year", "peak_bf16_flop_per_s", "peak_fp8_flop_per_s",
                   "peak_fp4_flop_per_s", "hbm_bytes", "hbm_bytes_per_s", "tdp_w", "as_of"]].copy()
        for c in ("peak_bf16_flop_per_s", "peak_fp8_flop_per_s", "peak_fp4_flop_per_s"):
            show[c] = show[c] / 1e12
        show["hbm_bytes"] = show["hbm_bytes"] / 1e9
        show["hbm_bytes_per_s"] = show["hbm_bytes_per_s"] / 1e12
        show.columns = ["name", "vendor", "year", "bf16 TFLOP/s", "fp8 TFLOP/s", "fp4 TFLOP/s",
                        "HBM GB", "HBM TB/s", "TDP W", "as_of"]
        emit(show, fmt, title="Accelerators (dense peaks; datasets/accelerators.csv)")
    else:
        emit(df, fmt)


@app.command()
def models(fmt: FormatOpt = Format.table) -> None:
    """List catalogued model architectures with computed total and active parameters."""
    from ..catalog import load, model

    df = load("models")
    specs = [model(n) for n in df["name"]]
    df["total_params"] = [m.total_params() for m in specs]
    df["active_params"] = [m.active_params() for m in specs]
    df["kv_bytes_per_tok_bf16"] = [m.kv_bytes_per_tok(2.0) for m in specs]
    if fmt == Format.table:
        show = df[["name", "attention", "n_layers", "hidden", "n_experts", "experts_per_token",
                   "native_precision"]].copy()
        show["total B"] = df["total_params"] / 1e9
        show["active B"] = df["active_params"] / 1e9
        show["KV kB/tok (bf16)"] = df["kv_bytes_per_tok_bf16"] / 1e3
        emit(show, fmt, title="Models (datasets/models.csv; parameters computed from the architecture)")
    else:
        emit(df, fmt)
