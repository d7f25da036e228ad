"""Fill the ``search_pass`` column of ``datasets/token_demand.csv`` from the rows' notes, once.

    python tools/fill_search_pass.py [--check]

``search_pass`` is the number of the data search pass that added a row (``datasets/README.md``
describes each pass): tests select the rows a pass added, and score them with the method fitted
without them, by this column instead of by note text. The notes keep their wording. The markers
below are the notes' own phrases for the passes that added rows, read against the README's
account of each pass; two passes that added one row each whose notes name no pass are keyed by
the row (series, date) the README names. Rows that match nothing keep a blank cell: they were in
the dataset before the third pass. The first marker that matches wins (a note may mention an
earlier pass that rejected or re-dated the figure). The file is rewritten atomically with the
csv module, so every other cell keeps its bytes; ``--check`` only reports what would change.
"""

from __future__ import annotations

import argparse
import csv
import io
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CSV = ROOT / "tokenomics" / "datasets" / "token_demand.csv"

#: (phrase in the note, search pass), most specific first.
MARKERS: tuple[tuple[str, int], ...] = (
    ("stop 52, after the method freeze", 16),
    ("stop 51, after the method freeze", 15),
    ("stop 50, after the method freeze", 14),
    ("stop 49, after the method freeze", 13),
    ("ninth search pass, after stop 23", 9),
    ("after stop 20's method freeze", 6),
    ("stop 20 after the leverage term", 5),
    ("stop 18", 3),
)

#: Rows whose note names no pass: (series, date) -> pass (datasets/README.md, eleventh and twelfth passes).
BY_ROW: dict[tuple[str, str], int] = {("fireworks", "2025-06"): 11, ("openai", "2023-11"): 12}


def search_pass(series: str, date: str, note: str) -> str:
    """The pass that added a row, as the cell's text ('' when before the third pass)."""
    if (series, date) in BY_ROW:
        return str(BY_ROW[(series, date)])
    for phrase, n in MARKERS:
        if phrase in note:
            return str(n)
    return ""


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="report what would change; write nothing")
    args = ap.parse_args(argv)
    text = CSV.read_text(encoding="utf-8")
    rows = list(csv.reader(io.StringIO(text)))
    head = rows[0]
    if "search_pass" not in head:
        head.append("search_pass")
        rows = [head] + [r + [""] for r in rows[1:]]
    i_s, i_d, i_n, i_p = (head.index(c) for c in ("series", "date", "note", "search_pass"))
    changed = 0
    for r in rows[1:]:
        new = search_pass(r[i_s], r[i_d], r[i_n])
        changed += r[i_p] != new
        r[i_p] = new
    print(f"{changed} rows' search_pass set", file=sys.stderr)
    if not args.check:
        from tokenomics.io import write_text

        buf = io.StringIO()
        csv.writer(buf, lineterminator="\n").writerows(rows)
        write_text(CSV, buf.getvalue())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
