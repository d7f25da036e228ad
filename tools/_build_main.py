"""Shared command line of the dataset builders that read one git checkout: ``python tools/X.py <checkout>``."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Callable

import pandas as pd


def run(doc: str, build: Callable[[Path], pd.DataFrame], out: Path, argv: list[str]) -> int:
    """Build from the checkout named in ``argv`` and write ``out`` atomically (exit 2 without one)."""
    if len(argv) != 2:
        print(doc.splitlines()[2].strip(), file=sys.stderr)
        return 2
    df = build(Path(argv[1]))
    tmp = out.with_suffix(".tmp")
    df.to_csv(tmp, index=False, lineterminator="\n")
    tmp.replace(out)
    print(f"wrote {len(df)} rows to {out}")
    return 0
