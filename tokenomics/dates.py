"""Calendar dates as the datasets write them, and decimal years.

Sources date their figures to a day (``2025-07-28``), a month (``2025-06``) or a year (``2025``).
A month stands for its 15th and a year for 1 July, the middle of the stated period; models and
plots work in decimal years (2025.0 is 1 January 2025). Every table that reads dates (the demand
history, the watch's event files, the market price table) parses them here.

Examples
--------
>>> day, precision = parse_date("2025-06")
>>> str(day), precision
('2025-06-15', 'month')
>>> parse_date("2025-13") is None
True
>>> round(float(decimal_year(["2025-07-02"])[0]), 4)   # (day 183 - 1) / 365
2025.4986
>>> str(from_decimal_year(2025.5))
'2025-07-02'
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np

_DAY = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_MONTH = re.compile(r"^\d{4}-\d{2}$")
_YEAR = re.compile(r"^\d{4}$")


def parse_date(value: Any) -> tuple[np.datetime64, str] | None:
    """A day, month or year as ``(date, precision)``; ``None`` where unreadable.

    Parameters
    ----------
    value : str or date-like
        ``YYYY-MM-DD``, ``YYYY-MM`` (read as the 15th) or ``YYYY`` (read as 1 July); a date
        object (``datetime``, ``pandas.Timestamp``, ``numpy.datetime64``) is a day.

    Returns
    -------
    (numpy.datetime64, str) or None
        The date [day] and its precision (``"day"``, ``"month"`` or ``"year"``); ``None`` for
        a missing value, other text or an impossible date (``2025-13``, ``2025-02-30``).
    """
    if value is None or (isinstance(value, float) and np.isnan(value)):
        return None
    if hasattr(value, "year") and hasattr(value, "month") or isinstance(value, np.datetime64):
        try:
            d = np.datetime64(value, "D")
        except (TypeError, ValueError):
            return None
        return None if np.isnat(d) else (d, "day")
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
    """Dates as decimal years [yr]: ``year + (day of year - 1) / days in the year``.

    Parameters
    ----------
    dates : array_like of date-like
        ISO strings, ``numpy.datetime64``, ``pandas.Timestamp`` or a ``DatetimeIndex``.

    Returns
    -------
    numpy.ndarray
        One decimal year per date [yr] (0-d for one date).
    """
    d = np.asarray(dates, dtype="datetime64[D]")
    years = d.astype("datetime64[Y]")
    start = years.astype("datetime64[D]")
    nxt = (years + 1).astype("datetime64[D]")
    return years.astype(int) + 1970 + (d - start).astype(float) / (nxt - start).astype(float)


def from_decimal_year(t: Any) -> np.ndarray:
    """The inverse of :func:`decimal_year`, to the day.

    Parameters
    ----------
    t : array_like
        Decimal years [yr].

    Returns
    -------
    numpy.ndarray
        ``datetime64[D]`` values (a 0-d array for a scalar).
    """
    t = np.asarray(t, dtype=float)
    y = np.floor(t).astype(int)
    start = (y - 1970).astype("datetime64[Y]").astype("datetime64[D]")
    nxt = (y + 1 - 1970).astype("datetime64[Y]").astype("datetime64[D]")
    days = np.round((t - y) * (nxt - start).astype(float)).astype(int)
    return start + days.astype("timedelta64[D]")
