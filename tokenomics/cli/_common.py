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

PER_HELP = ("Price unit: m (USD per million tokens, usd_per_m_* columns) or 1k (USD per thousand tokens, "
            "usd_per_k_* columns).")


#: Token-count suffixes: ``k`` = 1,024 and ``m`` = 1,048,576 tokens, as context windows and
#: benchmark lengths are named (an "8k" prompt is 8,192 tokens, "1k/1k" chat 1,024 in and out).
TOKEN_SUFFIXES = {"k": 1024, "m": 1024 * 1024}


def token_count(text, name: str | None = None) -> int | None:
    """A token count as people write it: ``8192``, ``8k`` (8,192), ``128K``, ``1.5k`` (1,536),
    ``1m`` (1,048,576), ``8,192``. A fraction of a token, a negative count or a word is a
    :class:`~tokenomics.errors.ValidationError` naming the option (``name``) and what was
    expected; ``None`` passes through (an option left out).

    >>> token_count("8k"), token_count("128k"), token_count("1m"), token_count("1,536"), token_count(512)
    (8192, 131072, 1048576, 1536, 512)
    """
    from ..errors import ValidationError

    if text is None or isinstance(text, int):
        return text
    what = f"{name} " if name else ""
    t = str(text).strip().lower().replace(",", "").replace("_", "")
    mult = 1
    if t and t[-1] in TOKEN_SUFFIXES:
        t, mult = t[:-1], TOKEN_SUFFIXES[t[-1]]
    try:
        x = float(t) * mult
    except ValueError:
        raise ValidationError(f"{what}{text!r} is not a token count; expected a whole number like 8192, or 8k, 128k, 1m "
                         "(k = 1,024 tokens, m = 1,048,576)") from None
    if not (x == x and abs(x) != float("inf")) or x != int(x):
        raise ValidationError(f"{what}{text!r} is not a whole number of tokens")
    return int(x)


def per_unit(per: str) -> str:
    """``--per`` checked and lower-cased: ``m`` or ``1k``."""
    from ..units import PER_UNITS
    from ..errors import ValidationError

    p = str(per).strip().lower()
    if p not in PER_UNITS:
        raise ValidationError(f"--per {per!r}: expected m (USD per million tokens) or 1k (USD per thousand tokens)")
    return p


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
    return _dumps_rows(rows)


def _dumps_rows(rows: list[dict[str, Any]]) -> str:
    """``json.dumps(rows, indent=1)`` for rows of plain values (text, numbers, booleans, None),
    each value through the C encoder's own functions rather than the indenting encoder's
    Python loop; anything else through ``json.dumps`` itself."""
    from json.encoder import encode_basestring_ascii as text

    def value(x: Any) -> str:
        if x is None:
            return "null"
        if x is True:
            return "true"
        if x is False:
            return "false"
        t = type(x)
        if t is str:
            return text(x)
        if t is int:
            return int.__repr__(x)
        if t is float and math.isfinite(x):
            return float.__repr__(x)
        raise TypeError

    try:
        objs = [",\n".join(f"  {text(k)}: {value(v)}" for k, v in row.items()).join((" {\n", "\n }")) if row
                else " {}" for row in rows]
    except TypeError:  # a value the indenting encoder writes its own way
        return json.dumps(rows, indent=1)
    return ",\n".join(objs).join(("[\n", "\n]")) if objs else "[]"


def _fmt_cell(v: Any) -> str:
    if v is None:
        return ""
    if isinstance(v, float):
        if math.isnan(v):
            return ""
        if v != 0 and (abs(v) >= 1e9 or abs(v) < 1e-3):
            return f"{v:.4g}"
        return f"{v:,.0f}" if abs(v) >= 1000 else f"{v:.4g}"
    from .._display import printable  # no escape sequences from input files reach the terminal

    return printable(str(v))


def emit(df: "pd.DataFrame", fmt: Format, title: str | None = None, caption: str | None = None) -> None:
    """Print a DataFrame as a rich table, CSV or JSON on stdout."""
    from ..io import iso_dates

    df = iso_dates(df)  # dates as YYYY-MM-DD in every format
    if fmt == Format.csv:
        from ..io import spreadsheet_safe

        sys.stdout.write(spreadsheet_safe(df).to_csv(index=False))
    elif fmt == Format.json:
        sys.stdout.write(frame_to_json(df) + "\n")
    else:
        from rich.console import Console
        from rich.markup import escape
        from rich.table import Table

        rows = [[_fmt_cell(v) for v in rec] for rec in df.itertuples(index=False)]
        width = table_width(len(df.columns))
        names = _fitted_headers([display_header(c) for c in df.columns],
                                [max((len(r[i]) for r in rows), default=0) for i in range(len(df.columns))], width)
        # plain text everywhere: "[us]" or "[f/(f+w)]" is a unit or a formula, not rich markup
        from .._display import printable

        table = Table(title=None if title is None else escape(printable(title)),
                      caption=None if caption is None else escape(printable(caption)), show_lines=False)
        for name in names:
            table.add_column(escape(name), overflow="fold")
        for row in rows:
            table.add_row(*(escape(c) for c in row))
        Console(width=width, soft_wrap=False).print(table)


def table_width(n_columns: int = 0) -> int:
    """Characters a table may use: the terminal's width (as rich measures it, ``COLUMNS`` where
    set); written to a pipe or a file, 120 characters or 12 per column, whichever is more (the
    width the transcripts in the documentation were taken at)."""
    from rich.console import Console

    isatty = getattr(sys.stdout, "isatty", None)
    return Console().width if isatty is not None and isatty() else max(120, 12 * n_columns)


#: Name pieces -> how a table header writes them (units in the words people use).
_HEADER_PIECES = (("_usd_per_used_h", " USD per used h"), ("usd_per_m_", "USD/M "), ("usd_per_k_", "USD/1K "), ("tok_per_s_per_", "tok/s/"),
                  ("_j_per_tok", " J/tok"), ("_usd_per_chip_h", " USD/chip-h"), ("_usd_per_h", " USD/h"),
                  ("_per_s", "/s"), ("_frac", " (0-1)"))

#: Headers written out whole.
_HEADERS = {"context_tok": "context tok", "n_fit": "configs that fit", "n_meet_slo": "configs meeting SLO",
            "n_configs": "configs",
            "best_batch": "best batch", "best_context_tok": "best context tok", "cost": "cost basis",
            "energy_j_per_tok": "J/tok", "board_power_w": "board W", "ttft_s": "TTFT s", "tpot_s": "TPOT s",
            "step_time_s": "step s"}


def display_header(name) -> str:
    """A column name as a table header: ``tok_per_s_per_chip`` -> ``tok/s/chip``,
    ``best_usd_per_m_output_tok`` -> ``best USD/M output tok``; a name that already reads
    (``step ms``, ``HBM GB``) is kept.

    >>> display_header("usd_per_m_output_tok"), display_header("tok_per_s_per_user"), display_header("HBM GB")
    ('USD/M output tok', 'tok/s/user', 'HBM GB')
    """
    n = str(name)
    if n in _HEADERS:
        return _HEADERS[n]
    if " " in n or "_" not in n:
        return n
    for old, new in _HEADER_PIECES:
        n = n.replace(old, new)
    return " ".join(n.replace("_", " ").split())


def _fitted_headers(names: list[str], cell_chars: list[int], width: int) -> list[str]:
    r"""Column headers for a table ``width`` characters wide: while the table is wider than that
    (and rich would fold, cutting ``coverage_80`` into ``coverage_8`` / ``0``), the header that
    overhangs its cells most is narrowed by breaking it after an underscore (:func:`_wrap_header`),
    one step at a time so the broken headers even out; headers of a table that fits stay on one
    line.

    >>> _fitted_headers(["case_id", "median_width_95_log10"], [4, 6], 200)
    ['case_id', 'median_width_95_log10']
    >>> _fitted_headers(["case_id", "median_width_95_log10"], [4, 6], 30)
    ['case_id', 'median_width_95_\nlog10']
    >>> _fitted_headers(["case_id", "median_width_95_log10"], [4, 6], 20)
    ['case_\nid', 'median_\nwidth_\n95_log10']
    """
    out = list(names)

    def line(name: str) -> int:
        return max(len(x) for x in name.split("\n"))

    while sum(max(line(n), c) + 3 for n, c in zip(out, cell_chars)) + 1 > width:
        over = [line(n) - max(c, _longest_word(n)) for n, c in zip(out, cell_chars)]
        i = max(range(len(out)), key=over.__getitem__)
        if over[i] <= 0:
            break
        out[i] = _wrap_header(names[i], line(out[i]) - 1)  # a step at a time: broken headers even out
    return out


def _pieces(name: str) -> list[str]:
    """A header cut where it may break: after an underscore, before a space (kept on the piece)."""
    import re

    return re.findall(r" ?[^_ ]*_| ?[^_ ]+", name.replace("\n", " ")) or [name]


def _longest_word(name: str) -> int:
    """Longest piece of a header between its breaks [characters]."""
    return max(len(p.strip()) for p in _pieces(name))


def _wrap_header(name: str, limit: int) -> str:
    r"""``name`` broken after underscores and at spaces into lines of at most ``limit``
    characters (or its longest piece), never inside a piece.

    >>> _wrap_header("median_width_95_log10", 6)
    'median_\nwidth_\n95_\nlog10'
    >>> _wrap_header("coverage_80", 6), _wrap_header("n", 9), _wrap_header("meas tok/s/GPU", 6)
    ('coverage_\n80', 'n', 'meas\ntok/s/GPU')
    """
    parts = _pieces(name)
    limit = max(limit, _longest_word(name))
    lines = [parts[0].strip()]
    for part in parts[1:]:
        if len(lines[-1]) + len(part) <= limit:
            lines[-1] += part
        else:
            lines.append(part.strip())
    return "\n".join(lines)
