"""List the functions and methods of Python files longer than a limit, longest first.

    python tools/function_lengths.py tokenomics/deployment.py          # every function, longest first
    python tools/function_lengths.py --over 120 tokenomics/*.py        # only those over 120 lines; exit 1 if any

A function's length is its lines from the ``def`` (decorators not counted) to its last line,
docstring and blank lines included: what a reader scrolls through.
"""

from __future__ import annotations

import argparse
import ast
import sys
from pathlib import Path


def function_lengths(path: str | Path) -> list[tuple[str, int, int]]:
    """Every function and method of a Python file as ``(qualified name, first line, length [lines])``.

    Parameters
    ----------
    path : str or Path
        A Python source file.

    Returns
    -------
    list of (str, int, int)
        Nested functions and methods named ``outer.inner``; in the order they appear.
    """
    tree = ast.parse(Path(path).read_text(encoding="utf-8"), filename=str(path))
    out: list[tuple[str, int, int]] = []

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                name = f"{prefix}{child.name}"
                out.append((name, child.lineno, child.end_lineno - child.lineno + 1))
                visit(child, name + ".")
            elif isinstance(child, ast.ClassDef):
                visit(child, f"{prefix}{child.name}.")
            else:
                visit(child, prefix)

    visit(tree, "")
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("files", nargs="+", help="Python files")
    ap.add_argument("--over", type=int, default=0, help="list only functions longer than this [lines]; exit 1 if any")
    args = ap.parse_args(argv)
    rows = [(str(f), *r) for f in args.files for r in function_lengths(f) if r[2] > args.over]
    for f, name, line, n in sorted(rows, key=lambda r: -r[3]):
        print(f"{n:5d}  {f}:{line}  {name}")
    return 1 if args.over and rows else 0


if __name__ == "__main__":
    sys.exit(main())
