"""Write docs/reference/cli.md (every command's --help) and docs/reference/api.md (the public names
of ``tokenomics`` with their signatures and docstrings), generated from the code.

    python tools/build_reference.py          # rewrite both files
    python tools/build_reference.py --check  # exit 1 if either is out of date (the test tier runs this)
"""

from __future__ import annotations

import inspect
import io
import os
import sys
from contextlib import redirect_stdout
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "docs" / "reference"


def _help(args: list[str]) -> str:
    from tokenomics.cli import main

    buf = io.StringIO()
    with redirect_stdout(buf):
        try:
            main([*args, "--help"])
        except SystemExit:
            pass
    return buf.getvalue().rstrip()


def cli_md() -> str:
    import typer

    from tokenomics.cli import app

    os.environ["COLUMNS"] = "100"
    group = typer.main.get_command(app)
    lines = ["# Command-line reference", "",
             "Generated from the code by `python tools/build_reference.py`; every command also answers `--help`.", "",
             "```text", _help([]), "```", ""]
    for name in sorted(group.commands):
        sub = group.commands[name]
        subs = sorted(getattr(sub, "commands", {}) or {})
        lines += [f"## `tokenomics {name}`", "", "```text", _help([name]), "```", ""]
        for s in subs:
            lines += [f"### `tokenomics {name} {s}`", "", "```text", _help([name, s]), "```", ""]
    return "\n".join(lines)


def api_md() -> str:
    import tokenomics as tk

    lines = ["# Python API reference", "",
             "The public names of `import tokenomics as tk` (`tk.__all__`), generated from their docstrings by "
             "`python tools/build_reference.py`. Modules list their own public functions.", ""]
    for name in tk.__all__:
        if name.startswith("__"):
            continue
        obj = getattr(tk, name)
        if inspect.ismodule(obj):
            doc = (inspect.getdoc(obj) or "").split("\n\n")[0]
            lines += [f"## `tk.{name}` (module `{obj.__name__}`)", "", doc, ""]
            pub = [n for n in getattr(obj, "__all__", []) if not n.startswith("_")]
            for n in pub:
                member = getattr(obj, n, None)
                first = (inspect.getdoc(member) or "").split("\n\n")[0].replace("\n", " ") if member is not None else ""
                lines.append(f"- `{name}.{n}`: {first}")
            lines.append("")
            continue
        try:
            sig = str(inspect.signature(obj))
        except (TypeError, ValueError):
            sig = ""
        kind = "class" if inspect.isclass(obj) else "function" if callable(obj) else "value"
        lines += [f"## `tk.{name}{sig if kind != 'value' else ''}`", "", f"*{kind}*", ""]
        doc = inspect.getdoc(obj) if kind != "value" else repr(obj)
        if doc:
            lines += ["```text", doc, "```", ""]
    return "\n".join(lines)


def main(check: bool) -> int:
    stale = []
    for fname, text in (("cli.md", cli_md()), ("api.md", api_md())):
        path = OUT / fname
        if check:
            if not path.exists() or path.read_text() != text + "\n":
                stale.append(str(path.relative_to(ROOT)))
        else:
            from tokenomics.io import write_text

            write_text(path, text + "\n")
            print(f"wrote {path.relative_to(ROOT)}")
    if stale:
        print(f"out of date: {', '.join(stale)} (run python tools/build_reference.py)", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main("--check" in sys.argv[1:]))
