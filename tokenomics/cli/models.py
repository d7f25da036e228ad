"""CLI commands ``tokenomics models``: list, show and add model architectures. Parses and formats only."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

from . import app
from ._common import FORMAT_HELP, Format, emit

FormatOpt = Annotated[Format, typer.Option("--format", "-f", help=FORMAT_HELP)]

models_app = typer.Typer(
    help="Model architectures: the bundled catalog and your own (`models add CONFIG.json --name NAME`).",
    no_args_is_help=False,
    add_completion=False,
    rich_markup_mode=None,
)
app.add_typer(models_app, name="models")


def _frame():
    """Every model (bundled, then the user's) with computed sizes and where it comes from."""
    from ..catalog import load, model, user_model_names

    df = load("models")
    specs = [model(n) for n in df["name"]]
    df["total_params"] = [m.total_params() for m in specs]
    df["active_params"] = [m.active_params() for m in specs]
    df["kv_bytes_per_tok_bf16"] = [m.kv_bytes_per_tok(2.0) for m in specs]
    mine = set(user_model_names())
    df["origin"] = ["user" if n in mine else "bundled" for n in df["name"]]
    return df


def _emit_list(fmt: Format) -> None:
    from ..catalog import user_models_path

    df = _frame()
    if fmt == Format.table:
        show = df[["name", "attention", "n_layers", "hidden", "n_experts", "experts_per_token",
                   "native_precision"]].copy()
        show["total B"] = df["total_params"] / 1e9
        show["active B"] = df["active_params"] / 1e9
        show["KV kB/tok (bf16)"] = df["kv_bytes_per_tok_bf16"] / 1e3
        show["origin"] = df["origin"]
        emit(show, fmt, title="Models (datasets/models.csv and your own; parameters computed from the architecture)",
             caption=f"your models: {user_models_path()} (add one: tokenomics models add CONFIG.json --name NAME)")
    else:
        emit(df, fmt)


@models_app.callback(invoke_without_command=True)
def models(ctx: typer.Context, fmt: FormatOpt = Format.table) -> None:
    """List catalogued model architectures (bundled and your own) with computed total and active parameters."""
    if ctx.invoked_subcommand is None:
        _emit_list(fmt)


@models_app.command("list")
def list_models(fmt: FormatOpt = Format.table) -> None:
    """List catalogued model architectures (bundled and your own) with computed total and active parameters."""
    _emit_list(fmt)


def _show(name: str, fmt: Format) -> None:
    import pandas as pd

    from ..catalog import model

    m = model(name)
    d = m.to_dict()
    d.update(total_params=m.total_params(), active_params=m.active_params(),
             kv_bytes_per_tok_bf16=m.kv_bytes_per_tok(2.0),
             linear_state_bytes_per_seq=m.linear_state_bytes_per_seq())
    if fmt == Format.table:
        rows = [(k, v) for k, v in d.items() if k not in ("note", "source")]
        emit(pd.DataFrame(rows, columns=["field", "value"]).astype({"value": str}), fmt,
             title=f"{m.name}: {m.display_name}", caption=f"source: {m.source}\n{m.note}".strip())
    else:
        emit(pd.DataFrame([d]), fmt)


@models_app.command("show")
def show(name: Annotated[str, typer.Argument(help="Model name (bundled or your own).")],
         fmt: FormatOpt = Format.table) -> None:
    """One model's architecture, sizes and source."""
    _show(name, fmt)


@models_app.command("add")
def add(
    config: Annotated[Path, typer.Argument(help="A Hugging Face config.json, or a checkpoint directory holding one.")],
    name: Annotated[str, typer.Option("--name", "-n", help="Name to price it by (price -m NAME).")],
    source: Annotated[Optional[str], typer.Option("--source", help="Where the config comes from (a URL or repo id); default: the config file's absolute path.")] = None,
    display_name: Annotated[Optional[str], typer.Option("--display-name", help="Human-readable name; default: NAME.")] = None,
    force: Annotated[bool, typer.Option("--force", help="Replace a model of the same name (bundled or yours).")] = False,
    fmt: FormatOpt = Format.table,
) -> None:
    """Add a model from its Hugging Face config.json to your models file ($TOKENOMICS_HOME/models.csv,
    default ~/.tokenomics/models.csv); then `price -m NAME`, `validate-serving` and the library take it."""
    import datetime as _dt

    from ..catalog import add_user_model
    from ..hf_config import model_from_hf_config

    spec = model_from_hf_config(config, name, display_name=display_name or "",
                                source=source or "", as_of=_dt.date.today().isoformat())
    path = add_user_model(spec, force=force)
    df = _frame()
    df = df[df["name"] == name]
    if fmt == Format.table:
        show = df[["name", "attention", "n_layers", "n_moe_layers", "n_sliding_layers", "n_linear_layers",
                   "n_experts", "experts_per_token", "native_precision"]].copy()
        show["total B"] = df["total_params"] / 1e9
        show["active B"] = df["active_params"] / 1e9
        show["KV kB/tok (bf16)"] = df["kv_bytes_per_tok_bf16"] / 1e3
        emit(show, fmt, title=f"Added {name} (all fields: tokenomics models show {name})")
    else:
        emit(df, fmt)
    typer.echo(f"added {name!r} to {path}", err=True)
