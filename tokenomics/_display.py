"""Compact text and HTML display of result objects (plain ``repr`` and Jupyter).

Every result class derives from :class:`Display` and names its headline columns of
``to_frame()`` in ``_display_columns``; nothing else is needed::

    @dataclass(frozen=True, repr=False)      # repr=False: the dataclass must not write __repr__
    class PriceResult(Display):
        _display_columns = ("batch", "tok_per_s_per_chip", "usd_per_m_output_tok")

``repr(result)`` is a title line (the class and the columns that take one value in every row,
such as hardware and model) followed by the headline columns, one line each for a single row or
as a table (first and last rows) for a sweep: a few hundred characters, never more than
:data:`MAX_REPR_CHARS`. ``result._repr_html_()`` is the same as a small HTML table (Jupyter shows
it). Column names carry their units (``_s``, ``_usd_per_1k_output_tok``, ``_j_per_tok``).
``to_frame()`` stays the full table.

pandas is imported only when a result is displayed.
"""

from __future__ import annotations

import html
import math
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

#: Upper bounds the display keeps to [characters].
MAX_REPR_CHARS = 2000
MAX_HTML_CHARS = 20000
#: Rows shown (first and last halves) in text and in HTML.
REPR_ROWS = 8
#: Widest table line in text [characters]; columns past it are left to ``to_frame()``.
REPR_WIDTH = 150
HTML_ROWS = 20
#: Longest text cell shown [characters]; longer text is cut with an ellipsis.
REPR_CELL_CHARS = 48
HTML_CELL_CHARS = 160
#: Columns that, when constant, go into the title line rather than the table.
IDENTITY_COLUMNS = ("hardware", "system", "accelerator", "model", "execution", "plan", "workload",
                    "cost_model", "phase", "n_chips", "weight_precision", "series", "scenario")


# C0 and C1 control characters, DEL, and the bidirectional overrides that reorder what a
# terminal shows (U+202A-U+202E, U+2066-U+2069)
_CONTROL = dict.fromkeys([*range(0x00, 0x20), *range(0x7F, 0xA0), *range(0x202A, 0x202F), *range(0x2066, 0x206A),
                          0x2028, 0x2029])
_CONTROL.update({ord("\t"): " ", ord("\n"): " ", ord("\r"): " "})


def printable(text: str) -> str:
    r"""``text`` without control characters, for a terminal: a tab or line break becomes a space,
    an escape sequence's ESC (and every other C0/C1 control or bidirectional override) is dropped,
    so text from an input file cannot recolour, move or rewrite what a table shows.

    >>> printable("ok\x1b[31mred\x1b[0m\nnext")
    'ok[31mred[0m next'
    """
    return text.translate(_CONTROL) if not text.isprintable() else text


def fmt_value(x: Any, width: int = REPR_CELL_CHARS) -> str:
    """One cell as short text: 4 significant digits, dates as ``YYYY-MM-DD``, long text cut.

    Examples
    --------
    >>> fmt_value(3456.789), fmt_value(123456.7), fmt_value(0.000123456), fmt_value(True), fmt_value("x" * 60, 10)
    ('3457', '123,457', '0.0001235', 'True', 'xxxxxxxxx…')
    """
    if x is None:
        return ""
    if isinstance(x, (bool, np.bool_)):
        return str(bool(x))
    if hasattr(x, "strftime"):
        try:
            return x.strftime("%Y-%m-%d") if not (x.hour or x.minute or x.second) else x.isoformat()
        except (AttributeError, ValueError):  # NaT
            return ""
    if isinstance(x, np.datetime64):
        return "" if np.isnat(x) else str(x.astype("datetime64[D]"))
    if isinstance(x, (int, np.integer)):
        return f"{int(x):,}" if abs(int(x)) >= 10000 else str(int(x))
    if isinstance(x, (float, np.floating)):
        f = float(x)
        if math.isnan(f):
            return ""
        if math.isinf(f):
            return "inf" if f > 0 else "-inf"
        if f != 0 and (abs(f) >= 1e7 or abs(f) < 1e-3):
            return f"{f:.4g}"
        if abs(f) >= 10000:
            return f"{f:,.0f}"
        if abs(f) >= 1000:  # years stay years: 2025, not 2,025
            return f"{f:.0f}"
        return f"{f:.4g}"
    s = printable(str(x))
    return s if len(s) <= width else s[: width - 1] + "…"


def _n_distinct(col: "pd.Series") -> int:
    """Distinct values of a column, a missing value counting as one (unhashable cells as text)."""
    try:
        return int(col.nunique(dropna=False))
    except TypeError:
        return int(col.map(repr).nunique(dropna=False))


class Display:
    """Mixin: compact ``__repr__`` and ``_repr_html_`` from ``to_frame()``.

    Class attributes (override in the result class)
    -----------------------------------------------
    _display_columns : tuple of str
        Headline columns of ``to_frame()``, in order; empty means the first 10 columns.
    _display_title : str
        Name shown in the title line (default: the class name).
    """

    _display_columns: ClassVar[tuple[str, ...]] = ()
    _display_title: ClassVar[str] = ""

    # --- the data shown ----------------------------------------------------------------------
    def _display_frame(self) -> "tuple[str, pd.DataFrame, int, list[tuple[str, str]]]":
        """(title, headline table, rows in the full table, other scalar fields as (name, text))."""
        df = self.to_frame()  # type: ignore[attr-defined]
        n = len(df)
        title = self._display_title or type(self).__name__
        ident, in_title = [], set()
        for c in IDENTITY_COLUMNS:
            if c in df.columns and n and _n_distinct(df[c]) == 1:
                val = df[c].iloc[0]
                in_title.add(c)
                ident.append(fmt_value(val) if isinstance(val, str) else f"{c}={fmt_value(val)}")
            elif c not in df.columns and isinstance(getattr(self, c, None), str) and getattr(self, c):
                ident.append(getattr(self, c))  # e.g. FrontierResult.system, .model
        ident = list(dict.fromkeys(ident))  # a one-chip system is named after its chip: say it once
        if ident:
            title += ": " + " · ".join(ident)
        title += f" ({n} row{'s' if n != 1 else ''})"
        extra = self._scalar_fields(df, ident)
        cols = [c for c in self._display_columns if c in df.columns and c not in in_title]
        if not cols:
            cols = [c for c in df.columns if c not in in_title][:10]
        cols = [c for c in cols if not (n and df[c].isna().all())]  # nothing to show
        return title, df[cols], n, extra

    def _scalar_fields(self, df: "pd.DataFrame", ident: list[str]) -> list[tuple[str, str]]:
        """Scalar dataclass fields not already shown (e.g. a tornado's base price, a sweep's time)."""
        import dataclasses

        if not dataclasses.is_dataclass(self):
            return []
        out = []
        for f in dataclasses.fields(self):
            val = getattr(self, f.name, None)
            if not f.repr or f.name in df.columns or f.name.startswith("_") or val is None:
                continue
            name = f.name
            if "_per_1k_" in name:  # prices are read per million tokens: the per-M twin, or this x 1,000
                name = name.replace("price_usd_per_1k_", "usd_per_m_").replace("usd_per_1k_", "usd_per_m_")
                if name in df.columns or "usd_per_m_" not in name:
                    continue
                if isinstance(val, (int, float, np.integer, np.floating)):
                    val = float(val) * 1e3
            if isinstance(val, (str, bool, int, float, np.integer, np.floating)) and fmt_value(val) not in ident:
                out.append((name, fmt_value(val)))
        return out[:8]

    @staticmethod
    def _rows(df: "pd.DataFrame", k: int) -> "tuple[pd.DataFrame, pd.DataFrame | None]":
        if len(df) <= k:
            return df, None
        return df.head(k // 2), df.tail(k - k // 2)

    # --- text --------------------------------------------------------------------------------
    def __repr__(self) -> str:
        try:
            title, df, n, extra_fields = self._display_frame()
        except Exception as exc:  # a display must never raise
            return f"<{type(self).__name__} (no table: {type(exc).__name__}: {exc})>"
        extra = ["  " + ", ".join(f"{k} {v}" for k, v in extra_fields)] if extra_fields else []
        if n == 1:
            w = max(len(str(c)) for c in df.columns) if len(df.columns) else 0
            lines = [title, *extra] + [f"  {str(c):<{w}}  {fmt_value(df[c].iloc[0])}" for c in df.columns]
        else:
            const = [(c, fmt_value(df[c].iloc[0])) for c in df.columns
                     if n > 1 and _n_distinct(df[c]) == 1]
            if len(const) < len(df.columns):
                df = df.drop(columns=[c for c, _ in const])
            else:
                const = []
            head, tail = self._rows(df, REPR_ROWS)
            cells = [[fmt_value(v) for v in r] for r in head.itertuples(index=False)]
            if tail is not None:
                cells.append(["…"] * len(df.columns))
                cells += [[fmt_value(v) for v in r] for r in tail.itertuples(index=False)]
            names = [str(c) for c in df.columns]
            widths = [max([len(h)] + [len(r[i]) for r in cells]) for i, h in enumerate(names)]
            keep, total = 0, 2
            for wd in widths:
                if keep and total + wd + 2 > REPR_WIDTH:
                    break
                keep, total = keep + 1, total + wd + 2
            lines = [title, *extra]
            if const:
                lines.append("  every row: " + ", ".join(f"{c} {v}" for c, v in const))
            lines.append("  " + "  ".join(h.rjust(wd) for h, wd in zip(names[:keep], widths)))
            lines += ["  " + "  ".join(v.rjust(wd) for v, wd in zip(r[:keep], widths)) for r in cells]
            if keep < len(names):
                lines.append("  not shown: " + ", ".join(names[keep:]))
        lines.append("  .to_frame(): full table")
        text = "\n".join(lines)
        if len(text) > MAX_REPR_CHARS:
            text = text[: MAX_REPR_CHARS - 2] + " …"
        return text

    # --- HTML (Jupyter) ----------------------------------------------------------------------
    def _repr_html_(self) -> str:
        try:
            title, df, n, extra_fields = self._display_frame()
        except Exception as exc:  # a display must never raise
            return f"<p>{html.escape(type(self).__name__)}: no table ({html.escape(str(exc))})</p>"
        esc = html.escape
        head, tail = self._rows(df, HTML_ROWS)

        def tr(values, tag="td"):
            return "<tr>" + "".join(f"<{tag}>{esc(fmt_value(v, HTML_CELL_CHARS))}</{tag}>" for v in values) + "</tr>"

        rows = [tr(r) for r in head.itertuples(index=False)]
        if tail is not None:
            rows.append(f"<tr><td colspan='{len(df.columns)}' style='text-align:center'>… "
                        f"{n - len(head) - len(tail)} more rows …</td></tr>")
            rows += [tr(r) for r in tail.itertuples(index=False)]
        extra = ", ".join(f"{k} {v}" for k, v in extra_fields)
        title_html = f"<b>{esc(title)}</b>" + (f"<br><small>{esc(extra)}</small>" if extra else "")
        out = (f"<div class='tokenomics-result'>{title_html}"
               "<table style='font-size:12px;border-collapse:collapse'>"
               f"<thead>{tr(df.columns, 'th')}</thead><tbody>{''.join(rows)}</tbody></table>"
               "<small><code>.to_frame()</code>: full table</small></div>")
        if len(out) > MAX_HTML_CHARS:  # very long text cells: fall back to the plain text
            out = f"<pre>{esc(self.__repr__())}</pre>"
        return out


# ---------------------------------------------------------------------------------------------
# for reading: display names with units and numbers without e-notation (reports, tables)

#: Columns whose names are written out whole in a table header (units in words).
DISPLAY_NAMES = {
    "config": "configuration", "n_samples": "draws", "n_chips": "GPUs", "chips": "chips",
    "energy_j_per_tok": "energy (J per token)", "wh_per_1k_tok": "energy (kWh per M tokens)",
    "kwh_per_m_tok": "energy (kWh per M tokens)", "board_power_w": "board power (W)",
    "frontier_cost_range_x": "dearest / cheapest point of the sweep (x)",
    "bottom_up_usd_per_chip_h": "bottom-up (USD per chip-hour)",
    "cost_usd_per_chip_h": "cost (USD per chip-hour)",
    "tokens_per_day": "tokens per day", "facility_mw": "grid power (MW)", "energy_twh": "energy (TWh a year)",
    "cost_usd": "running cost (USD a year)", "dc_electricity_twh": "region's data-centre electricity (TWh)",
    "dc_electricity_share_frac": "share of region's data-centre electricity (%)",
    "dc_electricity_tokens_per_day": "tokens per day on all of it",
    "rel_err_frac": "model vs measured (%)", "measured_j_per_tok": "measured (J per token)",
    "model_j_per_tok": "model (J per token)", "instance_ratio": "prefill / decode instances",
    "capacity_ratio_same_capex": "throughput at equal capex, disaggregated / colocated (x)",
    "required_decode_tok_per_s_per_usd_ratio": "decode tok/s per USD needed (x)",
    "target_ratio": "claimed saving (x)", "target_possible": "claim possible",
    "breakeven_utilization_frac": "break-even utilization (%)", "utilization_frac": "utilization (%)",
    "swing_usd_per_m_tok": "swing (USD per M output tokens)",
    "usd_per_m_output_tok_at_low": "USD per M output tokens at low",
    "usd_per_m_output_tok_at_high": "USD per M output tokens at high",
    "max_decode_capex_usd_per_chip_for_target": "decode capex per chip for the claim (USD)",
    "pue": "PUE", "wacc_frac": "WACC (%)", "colo_usd_per_kw_month": "colocation (USD per kW-month)",
    "colo_usd_per_chip_h": "colocation (USD per chip-hour)",
    "cost_disagg_usd_per_m_output_tok": "disaggregated (USD per M output tokens)",
    "cost_colocated_usd_per_m_output_tok": "colocated (USD per M output tokens)",
    "prefill_hardware": "prefill chip", "decode_hardware": "decode chip",
    "input_tok": "input tokens", "output_tok": "output tokens", "context_tok": "context (tokens)",
}

#: Name endings -> (words, unit) for names not in :data:`DISPLAY_NAMES` (longest first).
_UNIT_SUFFIXES = (
    ("_usd_per_chip_h", "USD per chip-hour"), ("_usd_per_used_h", "USD per used hour"), ("_usd_per_h", "USD/h"),
    ("_usd_per_kw_month", "USD per kW-month"), ("_usd_per_kwh", "USD per kWh"), ("_frac_per_year", "% a year"),
    ("_usd_per_chip", "USD per chip"), ("_j_per_tok", "J per token"), ("_usd", "USD"), ("_frac", "%"),
    ("_twh", "TWh"), ("_mw", "MW"), ("_w", "W"), ("_years", "years"), ("_tok", "tokens"), ("_s", "s"), ("_x", "x"),
)


def display_name(name: Any) -> str:
    """A column name as a header people read: words, the unit in brackets, no underscores.

    Examples
    --------
    >>> display_name("usd_per_m_output_tok"), display_name("tok_per_s_per_chip")
    ('USD per M output tokens', 'tok/s per chip')
    >>> display_name("usd_per_m_out_at_20_tok_s_user"), display_name("n_chips_lo_80")
    ('USD per M output tokens at 20 tok/s per user', 'GPUs, 80 % low')
    >>> display_name("capital_usd_per_chip_h"), display_name("price_usd_per_m_tok_p50")
    ('capital (USD per chip-hour)', 'USD per M output tokens, P50')
    """
    import re

    n = str(name)
    if n in DISPLAY_NAMES:
        return DISPLAY_NAMES[n]
    m = re.fullmatch(r"(.+?)_(lo|hi)_(\d+)", n)
    if m:
        return f"{display_name(m.group(1))}, {m.group(3)} % {'low' if m.group(2) == 'lo' else 'high'}"
    m = re.fullmatch(r"(.+?)_p(\d+)", n)
    if m:
        base = "usd_per_m_output_tok" if m.group(1) == "price_usd_per_m_tok" else m.group(1)
        return f"{display_name(base)}, P{m.group(2)}"
    m = re.fullmatch(r"(usd_per_m_out|layout)_at_([\d.]+)_tok_s_user", n)
    if m:
        head = "USD per M output tokens" if m.group(1) == "usd_per_m_out" else "layout"
        return f"{head} at {m.group(2)} tok/s per user"
    m = re.fullmatch(r"(?:price_)?(?:cost_)?usd_per_(m|1k)_(?:(\w+)_)?tok", n)
    if m and "usd_per" in n:
        per = "M" if m.group(1) == "m" else "1K"
        kind = f"{m.group(2).replace('_', ' ')} " if m.group(2) else ""
        return f"USD per {per} {kind}tokens"
    m = re.fullmatch(r"(\w+?)_usd_per_(m|1k)_(\w+)_tok", n)
    if m:
        per = "M" if m.group(2) == "m" else "1K"
        return f"{m.group(1).replace('_', ' ')} (USD per {per} {m.group(3).replace('_', ' ')} tokens)"
    m = re.fullmatch(r"tok_per_s_per_(\w+)", n)
    if m:
        return f"tok/s per {m.group(1).replace('_', ' ')}"
    if n.startswith("n_"):
        return display_name(n[2:])
    for suffix, unit in _UNIT_SUFFIXES:
        if n.endswith(suffix) and len(n) > len(suffix):
            return f"{n[: -len(suffix)].replace('_', ' ')} ({unit})"
    return n.replace("_", " ")


_SUPERSCRIPT = str.maketrans("0123456789-", "⁰¹²³⁴⁵⁶⁷⁸⁹⁻")


def fmt_number(x: Any, digits: int = 3) -> str:
    """A number for reading: ``digits`` significant digits, thousands separators, no
    e-notation below 10^12 (above it ``1.23×10¹⁵``); integers, and whole numbers below 100,000,
    exact; NaN empty.

    Examples
    --------
    >>> fmt_number(356_789.0), fmt_number(0.14234), fmt_number(12.345), fmt_number(2048)
    ('357,000', '0.142', '12.3', '2,048')
    >>> fmt_number(31_512.4), fmt_number(1.6e17), fmt_number(7.3e-05), fmt_number(float("nan"))
    ('31,500', '1.6×10¹⁷', '0.000073', '')
    """
    if x is None:
        return ""
    if isinstance(x, (bool, np.bool_)):
        return "yes" if x else "no"
    if isinstance(x, (int, np.integer)):
        return f"{int(x):,}"
    if not isinstance(x, (float, np.floating)):
        return fmt_value(x, HTML_CELL_CHARS)
    f = float(x)
    if math.isnan(f):
        return ""
    if math.isinf(f):
        return "∞" if f > 0 else "-∞"
    if f == 0:
        return "0"
    if f.is_integer() and abs(f) < 1e5:  # token counts, batches, capex in whole dollars: exact
        return f"{int(f):,}"
    mag = math.floor(math.log10(abs(f)))
    if mag >= 12 or mag < -9:
        mant, exp = f"{f:.{digits - 1}e}".split("e")
        mant = mant.rstrip("0").rstrip(".")
        return f"{mant}×10{str(int(exp)).translate(_SUPERSCRIPT)}"
    r = round(f, digits - 1 - mag)  # 356,789 -> 357,000; 0.14234 -> 0.142
    decimals = max(0, digits - 1 - math.floor(math.log10(abs(r)))) if r else 0
    s = f"{r:,.{decimals}f}"
    return s.rstrip("0").rstrip(".") if "." in s else s
