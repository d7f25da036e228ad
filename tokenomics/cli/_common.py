"""Shared CLI plumbing: output formats, one-line errors. No arithmetic here."""

from __future__ import annotations

import json
import math
import sys
from enum import Enum
from typing import TYPE_CHECKING, Any


if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd


class Format(str, Enum):
    """Output format of a command: a rich table, CSV or JSON (both exactly ``.to_frame()``)."""

    table = "table"
    csv = "csv"
    json = "json"


FORMAT_HELP = "Output format: a table for people, or csv/json (exactly the library's DataFrame)."


def _jsonable(x: Any) -> Any:
    import numpy as np

    if isinstance(x, (np.integer,)):
        return int(x)
    if isinstance(x, (np.floating, float)):
        f = float(x)
        return None if math.isnan(f) or math.isinf(f) else f
    if isinstance(x, (np.bool_,)):
        return bool(x)
    if hasattr(x, "isoformat"):
        import pandas as pd

        if pd.isna(x):
            return None
        if hasattr(x, "hour") and not (x.hour or x.minute or x.second or x.microsecond):
            return x.date().isoformat()
        return x.isoformat()
    return x


def frame_to_json(df: "pd.DataFrame") -> str:
    """A JSON array with one object per row; NaN and NaT become null; dates ISO (``YYYY-MM-DD``)."""
    from ..io import iso_dates

    df = iso_dates(df)
    rows = [{str(k): _jsonable(v) for k, v in rec.items()} for rec in df.to_dict(orient="records")]
    return json.dumps(rows, indent=1)


def _fmt_cell(v: Any) -> str:
    if v is None:
        return ""
    if isinstance(v, float):
        if math.isnan(v):
            return ""
        if v != 0 and (abs(v) >= 1e9 or abs(v) < 1e-3):
            return f"{v:.4g}"
        return f"{v:,.0f}" if abs(v) >= 1000 else f"{v:.4g}"
    return str(v)


def emit(df: "pd.DataFrame", fmt: Format, title: str | None = None, caption: str | None = None) -> None:
    """Print a DataFrame as a rich table, CSV or JSON on stdout."""
    from ..io import iso_dates

    df = iso_dates(df)  # dates as YYYY-MM-DD in every format
    if fmt == Format.csv:
        sys.stdout.write(df.to_csv(index=False))
    elif fmt == Format.json:
        sys.stdout.write(frame_to_json(df) + "\n")
    else:
        from rich.console import Console
        from rich.table import Table

        table = Table(title=title, caption=caption, show_lines=False)
        for c in df.columns:
            table.add_column(str(c), overflow="fold")
        for rec in df.itertuples(index=False):
            table.add_row(*[_fmt_cell(v) for v in rec])
        Console(width=max(120, 12 * len(df.columns))).print(table)
