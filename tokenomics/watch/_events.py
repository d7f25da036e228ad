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


def event_schema(kind_column: str, known_kinds: tuple[str, ...], numeric: tuple[str, ...] = (),
                 limits: "dict[str, dict[str, Any]] | None" = None, extra: tuple = (),
                 not_after_today: bool = False) -> tuple:
    """The declared columns of an events file (:class:`tokenomics.io.Column`): ``date`` and
    ``as_of`` dates in :data:`FIRST_YEAR` to :data:`LAST_YEAR` (with ``not_after_today``, none
    later than today), the kind one of ``known_kinds``, ``numeric`` columns non-negative where
    given (or in the range ``limits`` gives), then ``extra``."""
    from ..io import Column

    nums = []
    for col in numeric:
        kw = {"minimum": 0.0, **(limits or {}).get(col, {})}
        nums.append(Column(col, "integer" if kw.pop("integer", False) else "number", required=False, optional=True,
                           **kw))
    dated = {"minimum": FIRST_YEAR, "maximum": LAST_YEAR, "not_after_today": not_after_today}
    return (Column("date", "date", **dated), Column(kind_column, "choice", choices=tuple(known_kinds)),
            Column("as_of", "date", optional=True, **dated), *nums, *extra)


def read_events(
    source: "str | os.PathLike | pd.DataFrame | None",
    dataset: str,
    kind_column: str,
    known_kinds: tuple[str, ...],
    required: tuple[str, ...],
    numeric: tuple[str, ...] = (),
    limits: "dict[str, dict[str, Any]] | None" = None,
    extra: tuple = (),
) -> "pd.DataFrame":
    """Read and validate an events table (its cells against :func:`event_schema`, every bad cell
    named in one message).

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
    extra : tuple of tokenomics.io.Column
        The file kind's other declared columns (``track``, ``level``, ...).

    Every ``date`` and ``as_of`` lies in :data:`FIRST_YEAR` to :data:`LAST_YEAR` (events of the
    accelerator market; 1900 or 2099 is a typo); in a file, none is after today.

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
        Missing columns, no rows, a bad number, a missing or bad ``date``, a bad ``as_of``, a
        date after today or an unknown kind; the message names each bad cell (row, line, column).
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
    from ..io import check_frame

    if "date_text" in df.columns:  # a table this function returned: its dates as the file gave them
        df["date"] = df["date_text"]
    in_file = source is not None and not isinstance(source, pd.DataFrame)  # a file records what was seen
    check_frame(df, event_schema(kind_column, known_kinds, numeric, limits, extra, not_after_today=in_file), what)
    dates, precs = [], []
    text = df["date_text"] if "date_text" in df.columns else df["date"]
    for d in text:
        parsed = parse_date(d)
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
