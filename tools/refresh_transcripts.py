"""Re-run the `$ tokenomics ...` transcripts of README.md and the guides and write today's output.

    python tools/refresh_transcripts.py docs/guide/cli-basics.md [DOC ...] [--only SUBSTRING]

A transcript that shows a whole table (its ``┏`` top border) is replaced by the command's whole
output, printed as wide as the table shown; a transcript that shows chosen rows (or a ``| grep``) keeps those rows,
each replaced by today's row of the same first cell. The prose around them is not touched: read
the diff, and fix any sentence that quotes a number that moved (``tests/docs/test_readme.py`` checks the
rows, not the prose).
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _run(cmd: str, width: int) -> list[str]:
    env = {**os.environ, "COLUMNS": str(width), "NO_COLOR": "1", "TERM": "dumb"}
    args = [sys.executable, "-m", "tokenomics", *shlex.split(cmd)[1:]]
    res = subprocess.run(args, cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    if res.returncode != 0:
        raise SystemExit(f"{cmd}: exit {res.returncode}: {res.stderr.strip()[-300:]}")
    return res.stdout.rstrip("\n").splitlines()


def _first_cell(row: str) -> str:
    return row.strip().strip("│").split("│")[0].strip()


def refresh(doc: Path, only: str | None = None) -> int:
    lines = doc.read_text().splitlines()
    out: list[str] = []
    i, changed = 0, 0
    while i < len(lines):
        line = lines[i]
        out.append(line)
        i += 1
        if not line.startswith("$ tokenomics") or " | cut" in line or (only and only not in line):
            continue
        j = i
        while j < len(lines) and not lines[j].startswith(("$ ", "```")):
            j += 1
        block = lines[i:j]
        rows = [b for b in block if b.startswith("│")]
        if not rows or (block and block[0].startswith("Error:")):
            continue
        cmd = re.sub(r"\s+#.*$", "", line[2:].split(" | ")[0]).strip()
        width = max(len(b) for b in block)
        today = _run(cmd, width)
        if " | " not in line and any(b.startswith("┏") for b in block):
            new = today
        else:
            by_cell = {_first_cell(r): r for r in today if r.startswith("│")}
            new = [by_cell.get(_first_cell(b), b) if b.startswith("│") else b for b in block]
        changed += new != block
        out.extend(new)
        i = j
    doc.write_text("\n".join(out) + "\n")
    return changed


def main(argv: list[str]) -> None:
    only = None
    if "--only" in argv:
        k = argv.index("--only")
        only = argv[k + 1]
        argv = argv[:k] + argv[k + 2:]
    for name in argv:
        n = refresh(ROOT / name, only)
        print(f"{name}: {n} transcript(s) changed")


if __name__ == "__main__":
    main(sys.argv[1:])
