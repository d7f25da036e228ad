"""Loading and validating the dated event files behind the three watch metrics.

Dates may be a day (``2025-07-28``), a month (``2025-06``, read as the 15th) or a year (``2025``,
read as 1 July); the precision is kept in a ``date_precision`` column. A missing or unreadable
date, or an unknown ``kind``/``event``, is a :class:`~tokenomics.errors.DataError` naming the
row (1-based data row and file line) and the bad value.
"""

from __future__ import annotations

import os
import re
from typing import TYPE_CHECKING, Any

import numpy as np

from ..errors import DataError

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

_DAY = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_MONTH = re.compile(r"^\d{4}-\d{2}$")
_YEAR = re.compile(r"^\d{4}$")


def parse_date(value: Any) -> tuple["np.datetime64", str] | None:
    """Parse a day, month or year string; return (date, precision) or None if unreadable.

    A month is placed on its 15th, a year on 1 July (the middle of the stated period).
    """
    if value is None or (isinstance(value, float) and np.isnan(value)):
        return None
    s = str(value).strip()
    try:
        if _DAY.match(s):
            return np.datetime64(s, "D"), "day"
        if _MONTH.match(s):
            return np.datetime64(s + "-15", "D"), "month"
        if _YEAR.match(s):
            return np.datetime64(s + "-07-01", "D"), "year"
    except ValueError:
        return None
    return None


def decimal_year(dates: Any) -> np.ndarray:
    """Convert datetime64 values to decimal years [yr] (2025.0 is 1 January 2025)."""
    d = np.asarray(dates, dtype="datetime64[D]")
    years = d.astype("datetime64[Y]")
    start = years.astype("datetime64[D]")
    nxt = (years + 1).astype("datetime64[D]")
    return years.astype(int) + 1970 + (d - start).astype(float) / (nxt - start).astype(float)


def from_decimal_year(t: Any) -> np.ndarray:
    """Inverse of :func:`decimal_year`, to the day."""
    t = np.asarray(t, dtype=float)
    y = np.floor(t).astype(int)
    start = (y - 1970).astype("datetime64[Y]").astype("datetime64[D]")
    nxt = (y + 1 - 1970).astype("datetime64[Y]").astype("datetime64[D]")
    days = np.round((t - y) * (nxt - start).astype(float)).astype(int)
    return start + days.astype("timedelta64[D]")


def day(x: Any) -> str:
    """Any date-like value (numpy, pandas, string) as ``YYYY-MM-DD``."""
    return str(np.datetime64(x, "D"))


def iso(t: float) -> str:
    """A decimal year as an ISO date string (``''`` for NaN)."""
    if t is None or not np.isfinite(t):
        return ""
    return str(from_decimal_year(t))


def read_events(
    source: "str | os.PathLike | pd.DataFrame | None",
    dataset: str,
    kind_column: str,
    known_kinds: tuple[str, ...],
    required: tuple[str, ...],
    numeric: tuple[str, ...] = (),
) -> "pd.DataFrame":
    """Read and validate an events table.

    Parameters
    ----------
    source : path, DataFrame or None
        None loads the registered ``dataset`` from ``datasets/``.
    dataset : str
        Catalog name (also used in messages).
    kind_column : str
        Column holding the event kind (``kind`` or ``event``).
    known_kinds : tuple of str
        Accepted kinds.
    required : tuple of str
        Required columns.
    numeric : tuple of str
        Columns that must hold non-negative numbers where not empty (row named otherwise).

    Returns
    -------
    pandas.DataFrame
        The rows plus ``date_parsed`` (datetime64), ``t_year`` [yr] and ``date_precision``,
        with ``row`` (1-based data row in the file).
    """
    import pandas as pd

    from .. import catalog

    if source is None:
        df = catalog.load(dataset).reset_index(drop=True)
        what = catalog.REGISTRY[dataset].file
    elif isinstance(source, pd.DataFrame):
        df = source.reset_index(drop=True).copy()
        what = f"{dataset} table"
    else:
        from ..io import read_csv

        if not isinstance(source, (str, os.PathLike)):
            from ..errors import ValidationError

            raise ValidationError(f"{dataset} must be a path or a pandas DataFrame, got {type(source).__name__}")
        what = os.fspath(source)
        df = read_csv(source, f"{dataset} file", dtype={"date": str})
    catalog.check_columns(df, required, what=what)
    if df.empty:
        raise DataError(f"{what} has no rows")
    if numeric:
        from ..io import numeric_column

        for col in numeric:
            if col in df.columns:
                df[col] = numeric_column(df, col, what, minimum=0.0, required=False)
    dates, precs = [], []
    for i, (d, k) in enumerate(zip(df["date"], df[kind_column])):
        row = i + 1
        if d is None or (isinstance(d, float) and np.isnan(d)) or str(d).strip() == "":
            raise DataError(
                f"{what} row {row} (line {row + 1}): missing date; expected YYYY-MM-DD, YYYY-MM or YYYY"
            )
        parsed = parse_date(d)
        if parsed is None:
            raise DataError(
                f"{what} row {row} (line {row + 1}): bad date {str(d)!r}; expected YYYY-MM-DD, YYYY-MM or YYYY"
            )
        if str(k) not in known_kinds:
            import difflib

            close = difflib.get_close_matches(str(k), known_kinds, n=1)
            hint = f" Did you mean {close[0]!r}?" if close else ""
            raise DataError(
                f"{what} row {row} (line {row + 1}): unknown {kind_column} {str(k)!r}.{hint} "
                f"Known: {', '.join(known_kinds)}"
            )
        dates.append(parsed[0])
        precs.append(parsed[1])
    df["date"] = df["date"].astype(str)
    df["date_parsed"] = np.array(dates, dtype="datetime64[D]")
    df["t_year"] = decimal_year(df["date_parsed"].to_numpy()) if len(df) else np.array([], float)
    df["date_precision"] = precs
    df["row"] = np.arange(1, len(df) + 1)
    return df
