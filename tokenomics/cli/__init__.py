"""The ``tokenomics`` command line: parse, call the library, format. No arithmetic here.

Each area registers its commands from its own module (``perf``, ``econ``, ``forecast``,
``watch``, ``sweep``); modules import heavy libraries only inside the command bodies so that
``tokenomics --help`` stays fast.
"""

from __future__ import annotations

import sys

import typer

from ..errors import TokenomicsError

app = typer.Typer(
    name="tokenomics",
    help="The economics of LLM inference: step time, $ per token, J per token, demand to 2030.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,  # plain help text: rich help rendering costs ~0.2 s at start-up
)

# Each module adds its commands to ``app`` on import.
from . import perf as _perf  # noqa: E402,F401

for _mod in ("econ", "forecast", "watch", "sweep", "showdown", "market"):
    try:
        __import__(f"{__name__}.{_mod}")
    except ModuleNotFoundError as exc:  # an area not built yet
        if exc.name != f"{__name__}.{_mod}":
            raise


def main(argv: list[str] | None = None) -> None:
    """Entry point: run the app; a :class:`TokenomicsError` becomes one line and exit code 2."""
    try:
        rc = app(args=argv, standalone_mode=False)
        if isinstance(rc, int) and rc:
            sys.exit(rc)
    except TokenomicsError as exc:
        typer.echo(f"Error: {exc}", err=True)
        sys.exit(2)
    except typer.Exit as exc:
        sys.exit(exc.exit_code)
    except typer.Abort:
        typer.echo("Aborted.", err=True)
        sys.exit(1)
    except Exception as exc:  # click usage errors (typer may vendor its own click)
        if _is_click_exception(exc):
            exc.show()
            sys.exit(exc.exit_code)
        raise


def _is_click_exception(exc: BaseException) -> bool:
    kinds = []
    for mod in ("typer._click.exceptions", "click.exceptions"):
        try:
            kinds.append(__import__(mod, fromlist=["ClickException"]).ClickException)
        except ImportError:
            continue
    return any(isinstance(exc, k) for k in kinds)
