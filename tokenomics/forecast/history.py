"""Observed token volumes: loading, normalising and selecting series.

The history is a tidy long frame with one row per observation (``series``, ``date``,
``tokens_per_day``) read from ``datasets/token_demand.csv``. Dates are kept as the sources gave
them (irregular, sometimes month-only); a month-only date ``YYYY-MM`` stands for the middle of
that month (day 15). Time inside the models is in decimal years (:func:`decimal_year`).

Examples
--------
>>> from tokenomics.forecast.history import series
>>> s = series("google", fit_through="2025-12")
>>> len(s), round(float(s["tokens_per_day"].iloc[0]) / (9.7e12 / (365.25 / 12)), 4)
(4, 1.0)
"""

from __future__ import annotations

import functools
import re
from typing import TYPE_CHECKING

import numpy as np

from ..dates import decimal_year, from_decimal_year
from ..errors import DataError, ValidationError, unknown_name

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

#: Columns a history frame must have.
REQUIRED = ("series", "date", "tokens_per_day")

#: Fewest observations a series needs before anything is fitted to it.
MIN_OBS = 3

_DATE_RE = re.compile(r"^\d{4}(-\d{2}(-\d{2})?)?$")

#: Date text accepted in history rows: ``YYYY-MM`` or ``YYYY-MM-DD``.
_ROW_DATE_RE = re.compile(r"^\d{4}-\d{2}(-\d{2})?$")

#: Columns an added history file (``--add-history``) must have.
REQUIRED_ADDED = REQUIRED + ("source",)

#: Largest volume a history row may state [tokens/day]. The bundled maximum is 5e14 (Google,
#: 2026) and the whole world's 2030 forecast is of the same order, so 1e20 is five orders of
#: magnitude above any plausible observation: a row beyond it is a unit or exponent typo, and
#: its log-scale extrapolation overflows to ``inf`` in the forecast table.
MAX_TOKENS_PER_DAY = 1e20


def parse_date(value) -> "pd.Timestamp":
    """Turn ``YYYY``, ``YYYY-MM`` or ``YYYY-MM-DD`` into a Timestamp (:func:`tokenomics.dates.parse_date`).

    A year-only date means 1 July; a month-only date means the 15th of that month. Other text
    pandas reads as a date (``2025/06/30``) is taken as that day.

    Parameters
    ----------
    value : str or datetime-like
        The date as written in the source.

    Returns
    -------
    pandas.Timestamp

    Raises
    ------
    ValidationError
        An empty date, a month outside 01-12, a day the calendar lacks, or text that is no date.
    """
    import pandas as pd

    from ..dates import parse_date as parse

    if isinstance(value, pd.Timestamp):
        return value
    text = str(value).strip()
    if not text:
        raise ValidationError("date is empty; give YYYY-MM or YYYY-MM-DD, e.g. --fit-through 2025-12")
    parsed = parse(text)
    if parsed is not None:
        return pd.Timestamp(parsed[0])
    if _DATE_RE.match(text):
        parts = text.split("-")
        if len(parts) == 2:
            raise ValidationError(f"month must be 01-12, got {value!r}")
        raise ValidationError(f"not a calendar date: {value!r}")
    try:
        return pd.Timestamp(text)
    except (ValueError, TypeError):
        raise ValidationError(f"date must look like YYYY, YYYY-MM or YYYY-MM-DD, got {value!r}") from None


def month_end(value) -> "pd.Timestamp":
    """Last day of the month named by ``YYYY-MM`` (or of the month containing a full date)."""
    import pandas as pd

    ts = parse_date(value)
    return (ts + pd.offsets.MonthEnd(0)).normalize()


def date_of_decimal_year(year) -> "pd.DatetimeIndex":
    """The inverse of :func:`decimal_year`, to the day (:func:`tokenomics.dates.from_decimal_year`).

    >>> str(date_of_decimal_year(decimal_year(["2026-06-15"]))[0].date())
    '2026-06-15'
    """
    import pandas as pd

    return pd.DatetimeIndex(from_decimal_year(np.atleast_1d(np.asarray(year, dtype=float))).astype("datetime64[ns]"))


def check_history(df: "pd.DataFrame") -> "pd.DataFrame":
    """Validate a history frame and return a clean copy sorted by series and date.

    Parameters
    ----------
    df : pandas.DataFrame
        Long frame with at least ``series``, ``date`` and ``tokens_per_day`` [tokens/day].

    Returns
    -------
    pandas.DataFrame
        Copy with ``date`` as Timestamps, sorted.

    Raises
    ------
    DataError
        Missing columns; an empty series name; a date that is not ``YYYY-MM`` or
        ``YYYY-MM-DD``; a volume that is not a positive finite number below
        :data:`MAX_TOKENS_PER_DAY`; two observations of one series on the same date.
    """
    import pandas as pd

    from ..catalog import check_columns
    from ..io import blank_cells

    check_columns(df, REQUIRED, what="history")
    out = df.copy()
    empty = blank_cells(out["series"]).to_numpy()
    if empty.any():
        i = int(np.flatnonzero(empty)[0])
        raise DataError(f"history row {i + 1} (dated {str(out['date'].iloc[i])!r}): series name is empty; "
                        "name the series of every observation")
    raw = out["date"].astype(object)
    parsed: dict = {}
    def series_of(d) -> str:  # the series of the first row dated d, for the message
        return out["series"].iloc[int(np.flatnonzero((raw == d).to_numpy())[0])]

    for d in pd.unique(raw):  # each distinct date once (a daily history repeats its days across series)
        if not isinstance(d, pd.Timestamp) and not _ROW_DATE_RE.match(str(d).strip()):
            raise DataError(f"date {str(d)!r} of series {series_of(d)!r} is not YYYY-MM or YYYY-MM-DD; "
                            "fix the row")
        try:
            parsed[d] = parse_date(d)
        except ValidationError as exc:
            raise DataError(f"series {series_of(d)!r}: {exc}") from None
        if not (FIRST_DATE <= parsed[d].strftime("%Y-%m") < LAST_DATE):
            raise DataError(f"date {str(d)!r} of series {series_of(d)!r} is outside {FIRST_DATE} to the forecast's end "
                            f"{LAST_DATE} (exclusive); expected an observation date")
    out["date"] = [parsed[d] for d in raw]

    vol = pd.to_numeric(out["tokens_per_day"], errors="coerce").to_numpy(float)
    for bad, rule in ((~np.isfinite(vol) | (vol <= 0), "positive and finite (volumes are fitted on a log scale)"),
                      (vol > MAX_TOKENS_PER_DAY, f"below {MAX_TOKENS_PER_DAY:g}, far above any plausible "
                                                 "volume (check the units, tokens per day, and the exponent)")):
        if bad.any():
            row = out.loc[bad].iloc[0]
            raise DataError(f"tokens_per_day must be {rule}, got {str(row['tokens_per_day'])!r} for series "
                            f"{row['series']!r} on {row['date']:%Y-%m-%d}; drop or correct the row")
    out["tokens_per_day"] = vol
    if "kind" in out.columns:
        check_kinds(out)
    dup = out.duplicated(["series", "date"], keep=False)
    if dup.any():
        row = out.loc[dup].iloc[0]
        raise DataError(
            f"series {row['series']!r} has {int(dup.sum())} observations dated "
            f"{row['date']:%Y-%m-%d}; keep one (or mark the others in_fit = 0), or use --history "
            "to replace the bundled observations instead of adding to them"
        )
    return monthly_means(out.sort_values(["series", "date"], kind="stable").reset_index(drop=True))


#: A series observed more often than this many times per calendar month it has observations in
#: (daily counts: about 30) is averaged to calendar-month means before it is fitted: the forecast's
#: step is a month, and day-to-day noise and weekday cycles are not what it forecasts. Weekly
#: counts (about 4 a month, as OpenRouter's bundled series) are kept as they are.
DENSE_OBS_PER_MONTH = 8.0


def monthly_means(history: "pd.DataFrame") -> "pd.DataFrame":
    """``history`` with each series denser than :data:`DENSE_OBS_PER_MONTH` averaged to one
    observation per calendar month (``tokens_per_day`` the mean of the month's, dated the 15th as
    a ``YYYY-MM`` date is; the other columns from the month's first row); sparser series as they
    are. A :class:`~tokenomics.errors.TokenomicsWarning` names the series averaged.

    >>> import pandas as pd
    >>> d = pd.DataFrame({"series": ["u"] * 62, "date": pd.date_range("2025-01-01", periods=62, freq="D"),
    ...                   "tokens_per_day": [1e9] * 31 + [2e9] * 28 + [3e9] * 3})
    >>> monthly_means(d)[["date", "tokens_per_day"]].astype(str).values.tolist()  # doctest: +SKIP
    [['2025-01-15', '1000000000.0'], ['2025-02-15', '2000000000.0'], ['2025-03-15', '3000000000.0']]
    """
    import warnings

    import pandas as pd

    from ..errors import TokenomicsWarning

    if history.empty:
        return history
    month = pd.DatetimeIndex(history["date"]).to_period("M")
    month = pd.Series(month, index=history.index)
    per = history.groupby("series")["date"].size() / month.groupby(history["series"]).nunique()
    dense = per.index[per > DENSE_OBS_PER_MONTH]
    if not len(dense):
        return history
    sel = history["series"].isin(dense).to_numpy()
    d = history[sel].assign(_month=month[sel])
    keys = ["series", "_month"]
    out = d.groupby(keys, sort=True).first()
    out["tokens_per_day"] = d.groupby(keys, sort=True)["tokens_per_day"].mean()
    out = out.reset_index()
    out["date"] = out["_month"].dt.to_timestamp() + pd.Timedelta(days=14)
    out = out.drop(columns="_month")[history.columns]
    named = ", ".join(f"{s} ({int((history['series'] == s).sum()):,} to {int((out['series'] == s).sum())})"
                      for s in list(dense)[:5]) + (f" and {len(dense) - 5} more" if len(dense) > 5 else "")
    warnings.warn(TokenomicsWarning(f"{len(dense)} series observed more often than {DENSE_OBS_PER_MONTH:g} times a "
                                    f"month averaged to calendar-month means (the forecast's step is a month): "
                                    f"{named}"), stacklevel=3)
    return (pd.concat([history[~sel], out], ignore_index=True)
            .sort_values(["series", "date"], kind="stable").reset_index(drop=True))


def part_of(history: "pd.DataFrame") -> dict[str, str]:
    """Series that are parts of another series of ``history`` (its optional ``part_of`` column:
    the whole a series' volume is counted in, e.g. ``openrouter-china`` -> ``openrouter``).

    Returns
    -------
    dict
        ``{part: whole}`` for every series with a non-blank ``part_of`` (empty without the column).

    Raises
    ------
    DataError
        A series naming two wholes, itself, a whole the history does not hold, or a cycle.
    """
    if "part_of" not in history.columns:
        return {}
    from ..io import blank_cells

    rows = history.loc[~blank_cells(history["part_of"]).to_numpy(), ["series", "part_of"]]
    names = set(history["series"].astype(str))
    out: dict[str, str] = {}
    for name, grp in rows.groupby("series", sort=True):
        wholes = sorted(set(grp["part_of"].astype(str).str.strip()))
        if len(wholes) > 1:
            raise DataError(f"series {name!r} is part_of {' and '.join(map(repr, wholes))}; give one whole per series")
        whole = wholes[0]
        if whole == name:
            raise DataError(f"series {name!r} is part_of itself; leave part_of empty or name the series it is counted in")
        if whole not in names:
            raise DataError(f"series {name!r} is part_of {whole!r}, which the history does not hold; name one of its "
                            "series or leave part_of empty")
        out[str(name)] = whole
    for name in out:
        seen, cur = {name}, name
        while cur in out:
            cur = out[cur]
            if cur in seen:
                raise DataError(f"part_of forms a cycle through series {name!r}; a whole cannot be part of its part")
            seen.add(cur)
    return out


#: Region of a series whose ``region`` cell is blank (or a history without the column).
DEFAULT_REGION = "world"


def series_regions(history: "pd.DataFrame") -> dict[str, str]:
    """The region each series of ``history`` is served in (its optional ``region`` column: a
    region of ``datasets/dc_electricity.csv``, e.g. ``china`` for the NDA's national figure).

    Returns
    -------
    dict
        ``{series: region}`` for every series; :data:`DEFAULT_REGION` where the column is
        missing or every cell of the series is blank.

    Raises
    ------
    DataError
        A series naming two regions, or a region the electricity table does not hold.
    """
    from ..io import blank_cells

    names = list(dict.fromkeys(history["series"].astype(str)))
    out = dict.fromkeys(names, DEFAULT_REGION)
    if "region" not in history.columns:
        return out
    rows = history.loc[~blank_cells(history["region"]).to_numpy(), ["series", "region"]]
    for name, grp in rows.groupby("series", sort=True):
        regions = sorted(set(grp["region"].astype(str).str.strip()))
        if len(regions) > 1:
            raise DataError(f"series {name!r} has region {' and '.join(map(repr, regions))}; give one region "
                            "per series")
        out[str(name)] = regions[0]

    known = dc_regions()
    for name, region in out.items():
        if region not in known:
            raise DataError(f"series {name!r}: {unknown_name('region', region, known)}")
    return out


def load_history(include_excluded: bool = False) -> "pd.DataFrame":
    """All observations from ``datasets/token_demand.csv`` as a long frame.

    Parameters
    ----------
    include_excluded : bool
        Keep rows marked ``in_fit = 0`` (e.g. third-party estimates duplicating an official
        figure). Default False.

    Returns
    -------
    pandas.DataFrame
        Columns ``series, date, tokens_per_day, entity, metric, period, source, note``.
    """
    from ..catalog import load

    df = load("token_demand")
    if not include_excluded and "in_fit" in df.columns:
        df = df[df["in_fit"].astype(int) == 1]
    return check_history(df)


def series_names(history: "pd.DataFrame | None" = None) -> list[str]:
    """Names of the series in ``history`` (default: the bundled dataset), sorted."""
    h = load_history() if history is None else history
    return sorted(h["series"].unique())


def series(name: str, fit_through=None, history: "pd.DataFrame | None" = None) -> "pd.DataFrame":
    """Observations of one series, optionally only those up to the end of a month.

    Parameters
    ----------
    name : str
        Series name, e.g. ``"google"`` or ``"china"`` (the national figure).
    fit_through : str, optional
        ``YYYY-MM`` (or a date): keep observations dated on or before the end of that month.
    history : pandas.DataFrame, optional
        A long frame to select from instead of the bundled dataset (validated).

    Returns
    -------
    pandas.DataFrame
        The rows of that series, sorted by date, with a ``t_year`` column [decimal year].

    Raises
    ------
    UnknownNameError
        No such series (the message suggests the closest names).
    ValidationError
        Fewer than :data:`MIN_OBS` observations remain.
    """
    return select_series(load_history() if history is None else check_history(history), name, fit_through)


def select_series(h: "pd.DataFrame", name: str, fit_through=None) -> "pd.DataFrame":
    """:func:`series` of a history already validated by :func:`check_history` (not checked again:
    a forecast of many series checks its history once)."""
    names = sorted(h["series"].unique())
    if name not in names:
        raise unknown_name("series", name, names)
    s = h[h["series"] == name]
    n_all = len(s)
    if fit_through is not None:
        cutoff = month_end(fit_through)
        s = s[s["date"] <= cutoff]
    if len(s) < MIN_OBS:
        through = f" through {fit_through}" if fit_through is not None else ""
        raise ValidationError(
            f"series {name!r} has {len(s)} observation(s){through} (of {n_all}); at least "
            f"{MIN_OBS} are needed to fit a trend. Use a later --fit-through or another series."
        )
    s = s.reset_index(drop=True)
    s["t_year"] = decimal_year(s["date"])
    return s


#: Kind of a row whose ``kind`` is blank, or of a history without the column (the kinds:
#: ``datasets/measurement_kinds.csv``; :mod:`tokenomics.forecast.measurement` uses their scales).
DEFAULT_KIND = "reported"


@functools.lru_cache(maxsize=1)
def kind_scales() -> dict[str, float]:
    """Measurement-error scale of each kind of observation [decades] (``datasets/measurement_kinds.csv``)."""
    from ..catalog import load

    t = load("measurement_kinds")
    return {str(k): float(v) for k, v in zip(t["kind"], t["scale_dec"])}


def kinds_of(history: "pd.DataFrame") -> "pd.Series":
    """Each row's kind text (blank: :data:`DEFAULT_KIND`)."""
    import pandas as pd

    from ..io import blank_cells

    if "kind" not in history.columns:
        return pd.Series(DEFAULT_KIND, index=history.index)
    k = history["kind"].astype(object)
    return k.where(~blank_cells(k), DEFAULT_KIND).astype(str).str.strip()


def check_kinds(history: "pd.DataFrame") -> None:
    """Raise :class:`~tokenomics.errors.DataError` naming the first row whose ``kind`` is not
    ``+``-joined known kinds (the message lists them, with the closest)."""
    known = sorted(kind_scales())
    kinds = kinds_of(history)
    for text in kinds.unique():
        for part in text.split("+"):
            if part.strip() not in known:
                i = int(np.flatnonzero((kinds == text).to_numpy())[0])
                row = history.iloc[i]
                raise DataError(f"series {row['series']!r} dated {str(row['date'])[:10]}: "
                                f"{unknown_name('kind', part.strip(), known)} (join several with +, "
                                f"e.g. lower_bound+secondary)")


#: Most rows and series a history file may hold: 100 series of two years of daily counts (a
#: denser series is averaged to months, :func:`monthly_means`); the bundled history has 14 series
#: of at most a few dozen points.
MAX_HISTORY_ROWS = 100_000
MAX_HISTORY_SERIES = 100
#: Longest series name [characters] (it labels tables, charts and file rows).
MAX_SERIES_NAME = 80


#: Observations are dated from this month up to (not including) the forecast's last month
#: (:data:`tokenomics.forecast.demand.END`): one later leaves nothing to forecast.
FIRST_DATE, LAST_DATE = "2000-01", "2030-12"


def history_schema(require_source: bool = False) -> "tuple[tuple, tuple]":
    """The declared columns of a history file (:class:`tokenomics.io.Column`): of every row (a
    series name; a ``source`` where ``require_source``; ``in_fit`` 0 or 1; an ``as_of`` not after
    today), and of the rows fitted (a ``date`` not after today, :func:`check_history` holding it
    in :data:`FIRST_DATE` to :data:`LAST_DATE`; ``tokens_per_day`` > 0 and at most :data:`MAX_TOKENS_PER_DAY` [tokens/day])."""
    from ..io import Column

    every = (
        Column("series", "text", expected="a series name on every observation"),
        *((Column("source", "text", expected="where the observation was published (cite it)"),)
          if require_source else ()),
        Column("in_fit", "integer", minimum=0, maximum=1, optional=True),
        Column("as_of", "date", required=False, optional=True, not_after_today=True),
    )
    fitted = (
        Column("date", "date", not_after_today=True,  # the forecast's span: check_history
               expected="an observation date YYYY-MM or YYYY-MM-DD"),
        Column("tokens_per_day", "number", minimum=0.0, strict_minimum=True, maximum=MAX_TOKENS_PER_DAY,
               expected=f"tokens per day positive and finite (volumes are fitted on a log scale), below "
                        f"{MAX_TOKENS_PER_DAY:g}, far above any plausible volume (check the units and the exponent)"),
    )
    return every, fitted


def read_history(path, require_source: bool = False) -> "pd.DataFrame":
    """Read a long CSV (``series, date, tokens_per_day``, extra columns kept) and validate it.

    Parameters
    ----------
    path : path-like
        CSV file.
    require_source : bool
        Also require a ``source`` column (files added with ``--add-history``).

    Raises
    ------
    DataError
        The file is missing, unreadable or has no rows; it lacks columns, or holds an empty
        series name or source, a bad date, a non-positive or implausibly large volume, a bad
        ``in_fit`` flag, a duplicated observation (the message names the file line) or a
        ``region`` that ``datasets/dc_electricity.csv`` does not hold.
    """
    from ..io import blank_cells, frame_problems, raise_problems, read_csv

    what = f"history file {str(path)!r}"
    df = read_csv(path, "history file", required=REQUIRED_ADDED if require_source else REQUIRED,
                  dtype={"date": str}).reset_index(drop=True)
    if len(df) > MAX_HISTORY_ROWS:
        raise DataError(f"{what} has {len(df):,} rows; expected at most {MAX_HISTORY_ROWS:,} (observations "
                        "of the series to forecast: daily counts are averaged to months)")
    rows, observed = history_schema(require_source)
    as_read = df.copy()
    problems = frame_problems(df, rows)
    names = df["series"].where(~blank_cells(df["series"]), "").astype(object).map(str)
    odd = ((names.str.len() > MAX_SERIES_NAME) | ~names.map(str.isprintable)).to_numpy()
    problems += [(int(i), f"series name must be printable text of at most {MAX_SERIES_NAME} characters, got "
                          f"{len(names.iloc[i]):,} characters {names.iloc[i][:30]!r}") for i in np.flatnonzero(odd)]
    # the rows fitted: their dates and volumes are checked (check_history reads them again)
    fitted = df["in_fit"].eq(1).to_numpy() if "in_fit" in df.columns else np.ones(len(df), bool)
    kept = df[fitted].copy()
    problems += [(int(kept.index[i]), d) for i, d in frame_problems(kept, observed)]
    raise_problems(what, problems)
    df = as_read  # the cells as read: the checks above changed nothing of a good file
    if names.str.strip().nunique() > MAX_HISTORY_SERIES:
        raise DataError(f"{what} has {names.str.strip().nunique():,} series; expected at most {MAX_HISTORY_SERIES} "
                        "(each is fitted and backtested on its own)")
    df = df[fitted]
    if df.empty:
        raise DataError(f"{what} has no row with in_fit = 1; nothing to fit")
    try:
        out = check_history(df)
        series_regions(out)  # a region the electricity table lacks is named here, not when sizing
        return out
    except DataError as exc:
        raise DataError(f"{what}: {exc}") from None


def add_history(base: "pd.DataFrame", extra: "pd.DataFrame") -> "pd.DataFrame":
    """Observations of ``extra`` added to ``base`` (new series or more points of existing ones).

    Parameters
    ----------
    base, extra : pandas.DataFrame
        Long history frames (validated).

    Returns
    -------
    pandas.DataFrame
        The validated union, sorted by series and date. Where an added observation has the
        series and date of one in ``base``, the added one is kept and the other dropped (a
        :class:`~tokenomics.errors.TokenomicsWarning` names them in one line).

    Raises
    ------
    DataError
        Two added observations share a series and date.
    """
    import warnings

    import pandas as pd

    from ..errors import TokenomicsWarning

    base, extra = check_history(base), check_history(extra)
    key = pd.MultiIndex.from_frame(base[["series", "date"]])
    same = key.isin(pd.MultiIndex.from_frame(extra[["series", "date"]]))
    if same.any():
        named = [f"{s} {d:%Y-%m-%d}" for s, d in zip(base.loc[same, "series"], base.loc[same, "date"])]
        more = f" and {len(named) - 5} more" if len(named) > 5 else ""
        warnings.warn(TokenomicsWarning(
            f"{len(named)} added observation(s) share a series and date with one already there "
            f"({', '.join(named[:5])}{more}): yours are kept, the others dropped"), stacklevel=2)
    return check_history(pd.concat([base.loc[~same], extra], ignore_index=True))


def dc_regions() -> list[str]:
    """Regions of ``datasets/dc_electricity.csv`` (``world``, ``china``, ``united-states``, ...)."""
    from ..catalog import load

    return sorted(set(load("dc_electricity")["region"].astype(str)))
