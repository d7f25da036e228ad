"""The ``tokenomics`` command line: parse, call the library, format. No arithmetic here.

Each area registers its commands from its own module (``perf``, ``econ``, ``forecast``,
``watch``, ``sweep``); modules import heavy libraries only inside the command bodies so that
``tokenomics --help`` stays fast.
"""

from __future__ import annotations

import signal
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

def _version(value: bool) -> None:
    if value:
        from .. import __version__

        typer.echo(f"tokenomics {__version__}")
        raise typer.Exit()


@app.callback()
def _root(version: bool = typer.Option(False, "--version", callback=_version, is_eager=True,
                                       help="Print the version and exit.")) -> None:
    """The economics of LLM inference: step time, $ per token, J per token, demand to 2030."""


# Each module adds its commands to ``app`` on import.
from . import perf as _perf  # noqa: E402,F401

for _mod in ("models", "econ", "forecast", "watch", "sweep", "showdown", "market"):
    try:
        __import__(f"{__name__}.{_mod}")
    except ModuleNotFoundError as exc:  # an area not built yet
        if exc.name != f"{__name__}.{_mod}":
            raise


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised like Ctrl-C so that every ``finally`` (temporary files) runs."""


#: Signals received during this run (typer turns the KeyboardInterrupt they raise into a bare
#: exit code 130, so the entry point reads what happened here).
_SIGNALLED: list[int] = []


def _on_signal(signum, frame):  # pragma: no cover - exercised in a subprocess test
    _SIGNALLED.append(signum)
    raise Terminated() if signum == signal.SIGTERM else KeyboardInterrupt()


def _stopped_by_signal() -> None:
    """One line and the conventional code (143 SIGTERM, 130 Ctrl-C): every output is written
    atomically, so a stopped command leaves its old files or none, never a fragment."""
    term = signal.SIGTERM in _SIGNALLED
    typer.echo(f"{'Terminated' if term else 'Interrupted'}: stopped before finishing; no file half-written.",
               err=True)
    sys.exit(143 if term else 130)


def _one_line_warning(message, category, filename, lineno, file=None, line=None) -> None:
    text = " ".join(str(message).split())
    print(f"Warning: {text}", file=sys.stderr if file is None else file)


#: Commands whose ``--out`` is a directory (every other ``--out`` is a file).
OUT_DIRS = {"report", "watch", "forecast"}


def _check_out_callback(kind: str):
    def check(ctx, param, value):
        if value is not None:
            from ..io import check_output

            # --force is eager (parsed first): it lets a directory --out be the current one
            force = bool(ctx.params.get("force", False)) if kind == "dir" else None
            check_output(value, kind=kind, what="--out", force=force)
        return value

    return check


def _install_out_checks(cmd) -> None:
    """Check every ``--out`` while the command line is parsed, before a command body runs:
    a directory where a file belongs (or the reverse), or an unwritable place, is one line and
    exit 2 before any work."""
    for name, sub in getattr(cmd, "commands", {}).items():
        for param in sub.params:
            if param.name == "out" and param.callback is None:
                param.callback = _check_out_callback("dir" if name in OUT_DIRS else "file")


def _check_empty_out(args: list[str]) -> None:
    """An empty ``--out`` / ``-o`` is an error: a path type would read it as the current directory."""
    from ..errors import ValidationError

    for i, a in enumerate(args):
        empty = (a in ("--out", "-o") and i + 1 < len(args) and not args[i + 1].strip()) or (
            a.startswith("--out=") and not a[len("--out="):].strip())
        if empty:
            raise ValidationError("--out is empty; expected a path")


def _check_repeated(cmd, args: list[str]) -> None:
    """A single-valued option given twice (``-b 8 -b 16``, ``--dp-attention --no-dp-attention``)
    is an error, not "the last one wins": one line naming the option, before any work. Options
    that take several values (``report --hardware``) may repeat."""
    from ..errors import ValidationError

    while args and args[0] in getattr(cmd, "commands", {}):  # walk down to the command named
        cmd, args = cmd.commands[args[0]], args[1:]
    if getattr(cmd, "commands", None) or args is None:
        return
    params = {}
    for p in getattr(cmd, "params", []):
        if getattr(p, "param_type_name", "") != "option":
            continue
        for o in list(p.opts) + list(p.secondary_opts):
            params[o] = p
    seen: dict[str, str] = {}
    i = 0
    while i < len(args):
        a = args[i]
        if a == "--":
            break
        name, has_value = (a.split("=", 1)[0], True) if a.startswith("--") and "=" in a else (a, False)
        p = params.get(name)
        if p is None and a.startswith("-") and not a.startswith("--") and len(a) > 2:
            q = params.get(a[:2])  # -b16: a short option with its value attached
            p, name, has_value = (q, a[:2], True) if q is not None and not q.is_flag else (None, name, False)
        if p is not None:
            if not (p.multiple or p.count):
                if p.name in seen:
                    if seen[p.name] == name:
                        raise ValidationError(f"{name} given twice; it takes one value (the last would win silently): "
                                              "give it once")
                    raise ValidationError(f"{seen[p.name]} and {name} both given; they set the same option: give one")
                seen[p.name] = name
            if not p.is_flag and not p.count and not has_value:
                i += 1  # its value, which may itself start with '-'
        i += 1


def _usage_line(exc) -> str:
    """A click usage error as one line: the message and where to get help."""
    msg = " ".join(exc.format_message().split())
    ctx = getattr(exc, "ctx", None)
    where = f" (see `{ctx.command_path} --help`)" if ctx is not None else ""
    return f"Error: {msg}{where}"


def main(argv: list[str] | None = None) -> None:
    """Entry point: run the app; a :class:`TokenomicsError`, a usage error or a file system
    error (``OSError``) becomes one line on stderr and exit code 2; Ctrl-C and SIGTERM stop cleanly (exit 130 and 143) with no file
    half-written."""
    import warnings

    old_show, old = warnings.showwarning, {}
    warnings.showwarning = _one_line_warning
    _SIGNALLED.clear()
    for sig in (signal.SIGTERM, signal.SIGINT):
        try:
            old[sig] = signal.signal(sig, _on_signal)
        except ValueError:  # not in the main thread
            pass
    try:
        _main(argv)
    finally:  # embedders (tests) get their handlers back
        warnings.showwarning = old_show
        for sig, handler in old.items():
            signal.signal(sig, handler)


def _main(argv: list[str] | None) -> None:
    cmd = typer.main.get_command(app)
    _install_out_checks(cmd)
    if not (sys.argv[1:] if argv is None else list(argv)):  # bare `tokenomics`: the help, not an error
        argv = ["--help"]
    try:
        _check_empty_out(sys.argv[1:] if argv is None else list(argv))
        _check_repeated(cmd, sys.argv[1:] if argv is None else list(argv))
        rc = cmd.main(args=argv, prog_name="tokenomics", standalone_mode=False)
        if _SIGNALLED or rc == 130:  # typer answers KeyboardInterrupt with a bare 130
            _stopped_by_signal()
        if isinstance(rc, int) and rc:
            sys.exit(rc)
    except TokenomicsError as exc:
        typer.echo(f"Error: {_one(exc)}", err=True)
        sys.exit(2)
    except typer.Exit as exc:
        if _SIGNALLED or exc.exit_code == 130:
            _stopped_by_signal()
        sys.exit(exc.exit_code)
    except BrokenPipeError:  # a reader such as `head` closed the pipe: nothing more to say
        sys.exit(0)
    except OSError as exc:  # the file system refused (disk full, read-only, gone): one line, no traceback
        where = f": {exc.filename}" if getattr(exc, "filename", None) else ""
        typer.echo(f"Error: {_one(exc.strerror or exc)}{where}", err=True)
        sys.exit(2)
    except (typer.Abort, KeyboardInterrupt) as exc:
        term = isinstance(exc, Terminated) or isinstance(exc.__context__, Terminated)
        if term and signal.SIGTERM not in _SIGNALLED:
            _SIGNALLED.append(signal.SIGTERM)
        _stopped_by_signal()
    except Exception as exc:  # click usage errors (typer may vendor its own click)
        if _is_click_exception(exc):
            if isinstance(getattr(exc, "__context__", None), TokenomicsError):  # raised in a callback
                typer.echo(f"Error: {_one(exc.__context__)}", err=True)
            else:
                typer.echo(_usage_line(exc) if hasattr(exc, "ctx") else f"Error: {_one(exc.format_message())}",
                           err=True)
            sys.exit(2 if getattr(exc, "exit_code", 1) in (1, 2) else exc.exit_code)
        raise


def _one(msg) -> str:
    return " ".join(str(msg).split())


def _is_click_exception(exc: BaseException) -> bool:
    kinds = []
    for mod in ("typer._click.exceptions", "click.exceptions"):
        try:
            kinds.append(__import__(mod, fromlist=["ClickException"]).ClickException)
        except ImportError:
            continue
    return any(isinstance(exc, k) for k in kinds)
