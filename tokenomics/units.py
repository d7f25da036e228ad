"""Glossary of quantity names, unit constants and display formatters.

Inside the library every quantity is in base SI units (or USD, tokens) and carries its unit in
its name (``step_time_s``, ``hbm_bytes_per_s``, ``usd_per_m_output_tok``). Conversion to
"GB", "ms" or "TFLOP/s" happens only at the edges (CLI, reports) through the formatters here.
"""

from __future__ import annotations

import math

KB = 1e3
MB = 1e6
GB = 1e9
TB = 1e12
KIB = 2**10
MIB = 2**20
GIB = 2**30
TFLOP = 1e12
HOURS_PER_YEAR = 8760.0
HOURS_PER_DAY = 24.0
S_PER_H = 3600.0
S_PER_DAY = S_PER_H * HOURS_PER_DAY
J_PER_KWH = 3.6e6
DAYS_PER_MONTH = 365.25 / 12

#: Suffix -> (unit, meaning). A name's suffix tells its unit.
SUFFIXES: dict[str, tuple[str, str]] = {
    "_s": ("s", "seconds"),
    "_flop": ("FLOP", "floating-point operations (dense)"),
    "_flop_per_s": ("FLOP/s", "floating-point operations per second (dense)"),
    "_bytes": ("B", "bytes"),
    "_bytes_per_s": ("B/s", "bytes per second"),
    "_tok": ("tokens", "tokens"),
    "_tok_per_s": ("tokens/s", "tokens per second"),
    "_tok_per_s_per_chip": ("tokens/s", "tokens per second per accelerator"),
    "_tok_per_s_per_replica": ("tokens/s", "tokens per second of one model replica"),
    "_tok_per_s_per_user": ("tokens/s", "tokens per second one sequence sees"),
    "_tok_per_s_per_gpu": ("tokens/s", "tokens per second per GPU"),
    "_usd_per_m_tok": ("USD/M tokens", "US dollars per million tokens"),
    "_w": ("W", "watts"),
    "_j": ("J", "joules"),
    "_j_per_tok": ("J/token", "joules per token"),
    "_kwh": ("kWh", "kilowatt-hours"),
    "_usd": ("USD", "US dollars"),
    "_usd_per_h": ("USD/h", "US dollars per hour"),
    "_usd_per_1k_tok": ("USD/1K tokens", "US dollars per thousand tokens"),
    "_frac": ("1", "fraction in 0-1, never percent"),
}

#: Quantity names used across the package -> (unit, meaning).
GLOSSARY: dict[str, tuple[str, str]] = {
    "step_time_s": ("s", "wall time of one decode step (all sequences advance tokens_per_step tokens)"),
    "tpot_s": ("s", "time per output token seen by one user (step time / accepted tokens per step)"),
    "ttft_s": ("s", "time to first token: prefill of the prompt"),
    "tok_per_s_per_user": ("tokens/s", "output tokens per second seen by one sequence"),
    "tok_per_s_per_replica": ("tokens/s", "output tokens per second of one model replica (all its chips)"),
    "tok_per_s_per_chip": ("tokens/s", "output tokens per second per accelerator"),
    "hbm_bytes": ("B", "device memory capacity as the driver reports it"),
    "hbm_bytes_per_s": ("B/s", "datasheet memory bandwidth"),
    "peak_bf16_flop_per_s": ("FLOP/s", "datasheet dense bf16 tensor throughput"),
    "kv_bytes_per_tok": ("B", "KV-cache bytes one token adds across all layers"),
    "weight_bytes": ("B", "bytes of weights resident in memory"),
    "energy_j_per_tok": ("J/token", "accelerator board energy per output token"),
    "cost_usd_per_chip_h": ("USD/h", "all-in cost of one accelerator for one hour"),
    "usd_per_m_input_tok": ("USD/M tokens", "price of prefill (input) tokens"),
    "usd_per_m_output_tok": ("USD/M tokens", "price of decode (output) tokens"),
    "kwh_per_m_tok": ("kWh/M tokens", "facility energy per million output tokens"),
    "tokens_per_day": ("tokens/day", "token volume processed per day"),
    "utilization_frac": ("1", "share of hours the capacity is sold"),
    "wacc_frac": ("1", "weighted average cost of capital per year"),
}


def _scaled(value: float, unit: str, steps: list[tuple[float, str]], digits: int = 3) -> str:
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return "n/a"
    for factor, prefix in steps:
        if abs(value) >= factor:
            return f"{value / factor:.{digits}g} {prefix}{unit}"
    factor, prefix = steps[-1]
    return f"{value / factor:.{digits}g} {prefix}{unit}"


_SI = [(1e15, "P"), (1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k"), (1.0, "")]


def fmt_bytes(n: float) -> str:
    """Format bytes with SI prefixes: ``fmt_bytes(1.41e11) == '141 GB'``."""
    return _scaled(n, "B", _SI)


def fmt_bytes_per_s(n: float) -> str:
    """Format a bandwidth: ``fmt_bytes_per_s(4.8e12) == '4.8 TB/s'``."""
    return _scaled(n, "B/s", _SI)


def fmt_flop_per_s(n: float) -> str:
    """Format a FLOP rate: ``fmt_flop_per_s(9.89e14) == '989 TFLOP/s'``."""
    return _scaled(n, "FLOP/s", _SI)


def fmt_s(t: float) -> str:
    """Format a duration in s, ms or us: ``fmt_s(5.85e-3) == '5.85 ms'``."""
    if t is None or not math.isfinite(t):
        return "n/a"
    if abs(t) >= 1:
        return f"{t:.3g} s"
    if abs(t) >= 1e-3:
        return f"{t * 1e3:.3g} ms"
    return f"{t * 1e6:.3g} us"


def fmt_count(n: float) -> str:
    """Format a large count with SI prefixes: ``fmt_count(2.8e12) == '2.8 T'``."""
    return _scaled(n, "", _SI).strip()


def fmt_usd(x: float) -> str:
    """Format dollars: ``fmt_usd(0.00123) == '$0.00123'``, ``fmt_usd(31000) == '$31,000'``."""
    if x is None or not math.isfinite(x):
        return "n/a"
    if abs(x) >= 100:
        return f"${x:,.0f}"
    return f"${x:.3g}"


#: Per-1K price and energy name pieces -> their per-million names (the factor is 1,000 for
#: prices; ``wh_per_1k_tok`` and ``kwh_per_m_tok`` are the same number).
_PER_1K = (("usd_per_1k_", "usd_per_m_", 1e3),
           ("cny_per_1k_", "cny_per_m_", 1e3), ("wh_per_1k_tok", "kwh_per_m_tok", 1.0))

#: Per-million name pieces -> the per-1K names ``--per 1k`` prints.
_PER_M = (("usd_per_m_", "usd_per_k_", 1e-3), ("cny_per_m_", "cny_per_k_", 1e-3), ("kwh_per_m_tok", "wh_per_k_tok", 1.0))


def is_per_thousand(name: str) -> bool:
    """Whether a column name is a per-1K-token quantity (``_per_1k_``, ``per_k_``)."""
    n = str(name).lower()
    return "_per_1k" in n or "per_k_" in n or n.endswith("per_k")


def _scaled_cells(cells, k: float):
    """``cells`` x ``k``; in a column of text as read (a user's file), the cells that are not
    numbers are left as they are, for the file's checks to name."""
    import pandas as pd

    if pd.api.types.is_numeric_dtype(cells):
        return cells.astype(float) * k
    num = pd.to_numeric(cells, errors="coerce")
    return cells.astype(object).where(num.isna(), num * k)


def per_million(df):
    """A frame with every per-1K-token price (and energy) column as its per-million twin.

    ``*_usd_per_1k_*`` becomes ``*_usd_per_m_*`` (x 1,000); ``wh_per_1k_tok`` becomes
    ``kwh_per_m_tok`` (the same number); where the per-million twin already exists (with or
    without a ``price_`` prefix: ``price_usd_per_1k_output_tok`` and ``usd_per_m_output_tok``)
    the per-1K column is dropped. Prices are
    in USD per million tokens in everything a user reads; the library keeps per-1K only inside.

    >>> import pandas as pd
    >>> per_million(pd.DataFrame({"cost_usd_per_1k_tok": [0.00015], "wh_per_1k_tok": [0.5]})).to_dict("list")
    {'cost_usd_per_m_tok': [0.15], 'kwh_per_m_tok': [0.5]}
    """
    out = df.copy()
    for col in list(out.columns):
        for old, new, k in _PER_1K:
            if old in str(col):
                name = str(col).replace(old, new)
                if name in out.columns or name.removeprefix("price_") in out.columns:
                    out = out.drop(columns=[col])
                else:
                    out[col] = _scaled_cells(out[col], k)
                    out = out.rename(columns={col: name})
                break
    return out


#: Price-list column name pieces a provider's or a reader's file may use -> the per-million name, and
#: the factor to USD per million tokens: per token (an API's raw pricing), per 1K as
#: ``--per 1k`` prints it, and per million spelled out. Longest first (``usd_per_token`` before
#: ``usd_per_tok``).
_PRICE_LIST_UNITS = (("usd_per_million_", "usd_per_m_", 1.0), ("usd_per_1m_", "usd_per_m_", 1.0),
                     ("usd_per_token", "usd_per_m_tok", 1e6), ("usd_per_tok", "usd_per_m_tok", 1e6),
                     ("usd_per_k_", "usd_per_m_", 1e3))


def price_list_per_million(df):
    """A price list with every price column in USD per million tokens: the per-1K columns
    (:func:`per_million`) and the other spellings of a price unit a list may carry
    (:data:`_PRICE_LIST_UNITS`: ``input_usd_per_tok`` x 1e6, ``output_usd_per_k_tok`` x 1e3,
    ``input_usd_per_1m_tok``); where the per-million column already exists the other is dropped.

    >>> import pandas as pd
    >>> price_list_per_million(pd.DataFrame({"input_usd_per_tok": [5e-7], "output_usd_per_k_tok": [0.002]})).to_dict("list")
    {'input_usd_per_m_tok': [0.5], 'output_usd_per_m_tok': [2.0]}
    """
    import pandas as pd

    scaled = [str(c).replace(old, new) for c in df.columns for old, new, _ in _PER_1K if old in str(c)]
    out = per_million(df)
    for col in list(out.columns):
        for old, new, k in _PRICE_LIST_UNITS:
            if old in str(col) and "usd_per_m_" not in str(col):
                name = str(col).replace(old, new)
                if name in out.columns:
                    out = out.drop(columns=[col])
                else:
                    out[col] = _scaled_cells(out[col], k)
                    out = out.rename(columns={col: name})
                    scaled.append(name)
                break
    for col in set(scaled) & set(out.columns):  # 2.3e-7 x 1e6 is 0.23, not 0.22999999999999998
        num = pd.to_numeric(out[col], errors="coerce")
        tidy = num.map(lambda x: float(f"{x:.12g}") if pd.notna(x) else x)
        all_numbers = int(num.notna().sum()) == int(out[col].notna().sum())
        out[col] = tidy if all_numbers else out[col].astype(object).where(num.isna(), tidy)
    return out


def per_thousand(df):
    """The inverse of :func:`per_million` for a reader who asks for per-1K (``--per 1k``):
    ``usd_per_m_output_tok`` becomes ``usd_per_k_output_tok`` (/ 1,000), ``kwh_per_m_tok``
    ``wh_per_k_tok``.

    >>> import pandas as pd
    >>> per_thousand(pd.DataFrame({"usd_per_m_output_tok": [0.15]})).to_dict("list")
    {'usd_per_k_output_tok': [0.00015]}
    """
    out = df.copy()
    names = {}
    for col in out.columns:
        for old, new, k in _PER_M:
            if old in str(col):
                out[col] = out[col].astype(float) * k
                names[col] = str(col).replace(old, new)
                break
    return out.rename(columns=names)


#: Price units a user may ask for (``--per``): per million tokens (the default) or per 1K.
PER_UNITS = ("m", "1k")


def in_unit(df, per: str = "m"):
    """``df`` (per-million columns) in the price unit ``per``: ``"m"`` (as is) or ``"1k"``."""
    from .errors import ValidationError

    per = str(per).lower()
    if per not in PER_UNITS:
        raise ValidationError(f"--per {per!r}: expected m (USD per million tokens) or 1k (per thousand)")
    return per_million(df) if per == "m" else per_thousand(per_million(df))
