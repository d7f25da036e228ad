"""Loading and validating the dated event files behind the three watch metrics.

Dates may be a day (``2025-07-28``), a month (``2025-06``, read as the 15th) or a year (``2025``,
read as 1 July); the precision is kept in a ``date_precision`` column. A missing or unreadable
date or ``as_of``, or an unknown ``kind``/``event``, is a :class:`~tokenomics.errors.DataError`
naming the row (1-based data row and file line) and the bad value.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

import numpy as np

from ..dates import decimal_year, from_decimal_year, parse_date  # noqa: F401 -- re-exported to the watch modules
from ..errors import DataError

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd


def day(x: Any) -> str:
    """Any date-like value (numpy, pandas, string) as ``YYYY-MM-DD`` (``''`` for none)."""
    if x is None or (isinstance(x, str) and not x.strip()):
        return ""
    try:
        d = np.datetime64(x, "D")
    except (TypeError, ValueError):
        import pandas as pd

        if pd.isna(x):
            return ""
        d = np.datetime64(pd.Timestamp(x).date(), "D")
    return "" if np.isnat(d) else str(d)


def dates(values: Any) -> "pd.Series":
    """Date-like values (ISO text, ``''`` or NaN for none, numpy/pandas dates) as a datetime64
    Series (``NaT`` for none): the date columns of every table the watch functions return."""
    import pandas as pd

    s = pd.Series(values, dtype=object) if not isinstance(values, pd.Series) else values.astype(object)
    s = s.map(lambda x: None if x is None or (isinstance(x, str) and not x.strip()) else x)
    return pd.to_datetime(s, format="ISO8601").astype("datetime64[ns]").reset_index(drop=True)


def as_dates(df: "pd.DataFrame", columns: tuple[str, ...]) -> "pd.DataFrame":
    """``df`` with ``columns`` (those present) turned into datetime64 by :func:`dates`."""
    for c in columns:
        if c in df.columns:
            df[c] = dates(df[c]).to_numpy()
    return df


def iso(t: float) -> str:
    """A decimal year as an ISO date string (``''`` for NaN)."""
    if t is None or not np.isfinite(t):
        return ""
    return str(from_decimal_year(t))


#: Years an event (and its ``as_of``) may carry.
FIRST_YEAR, LAST_YEAR = 2000, 2035


def read_events(
    source: "str | os.PathLike | pd.DataFrame | None",
    dataset: str,
    kind_column: str,
    known_kinds: tuple[str, ...],
    required: tuple[str, ...],
    numeric: tuple[str, ...] = (),
    limits: "dict[str, dict[str, Any]] | None" = None,
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
    limits : dict, optional
        Column -> keywords of :func:`tokenomics.io.numeric_column` that replace the default
        (non-negative) for that column: a physical range, whole numbers.

    Every ``date`` and ``as_of`` lies in :data:`FIRST_YEAR` to :data:`LAST_YEAR` (events of the
    accelerator market; 1900 or 2099 is a typo).

    Returns
    -------
    pandas.DataFrame
        The rows with ``date`` as datetime64 (a month on its 15th, a year on 1 July), the file's
        text in ``date_text``, ``date_parsed`` (the same datetime64, kept for older callers),
        ``t_year`` [yr], ``date_precision`` (day|month|year) and ``row`` (1-based data row).
        A table this function returned can be passed again: its ``date_text`` is re-read.

    Raises
    ------
    DataError
        Missing columns, no rows, a bad number, a missing or bad ``date``, a bad ``as_of`` or
        an unknown kind; the message names the row.
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
                kw = {"minimum": 0.0, **(limits or {}).get(col, {})}
                df[col] = numeric_column(df, col, what, required=False, **kw)
    dates, precs = [], []
    text = df["date_text"] if "date_text" in df.columns else df["date"]
    for i, (d, k) in enumerate(zip(text, df[kind_column])):
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
        if "as_of" in df.columns and parse_date(df["as_of"].iloc[i]) is None:
            raise DataError(
                f"{what} row {row} (line {row + 1}): bad as_of {str(df['as_of'].iloc[i])!r}; "
                "expected YYYY-MM-DD, YYYY-MM or YYYY"
            )
        for name, val in (("date", parsed[0]), ("as_of", parse_date(df["as_of"].iloc[i])[0] if "as_of" in df.columns
                                                 else None)):
            year = None if val is None else int(str(np.datetime64(val, "D"))[:4])
            if year is not None and not FIRST_YEAR <= year <= LAST_YEAR:
                raise DataError(f"{what} row {row} (line {row + 1}): {name} {year} is outside {FIRST_YEAR} to "
                                f"{LAST_YEAR}; expected the date of the event")
        dates.append(parsed[0])
        precs.append(parsed[1])
    with_dates(df, text, dates)
    df["date_precision"] = precs
    df["row"] = np.arange(1, len(df) + 1)
    return df


def with_dates(df: "pd.DataFrame", text: Any, dates: list) -> "pd.DataFrame":
    """Set ``date`` (datetime64), ``date_text``, ``date_parsed`` and ``t_year`` [yr] on ``df`` in place."""
    parsed = np.array(dates, dtype="datetime64[D]")
    df["date_text"] = [day(d) if hasattr(d, "year") or isinstance(d, np.datetime64) else str(d).strip()
                       for d in text]
    df["date"] = parsed.astype("datetime64[ns]")
    df["date_parsed"] = parsed.astype("datetime64[ns]")
    df["t_year"] = decimal_year(parsed) if len(df) else np.array([], float)
    return df
