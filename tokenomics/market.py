"""List prices held against modelled cost: what serving each sourced API price costs, and the margin.

For each row of a market price table (``datasets/market_prices.csv``: provider, model, USD per
million input / cached input / output tokens, the provider's output speed where published), the
modelled cost to serve that model at that speed per user (:func:`tokenomics.chain.price` with
``target_tok_per_s_per_user``: the cheapest batch that still serves each user that fast) on a
stated deployment -- the resolver's default layout on a reference system (``dgx-h200``; a model
that does not fit there goes to ``gb200-nvl72``) -- and the implied gross margin::

    implied_margin_frac = 1 - modelled cost of a request / list price of that request

over the workload mix (``chat``: 1,024 input and 1,024 output tokens), input and output tokens
each at their own price, cache hits (``cache_hit_frac``) at the row's cached-input list price on
the revenue side and at the modelled prefix-cache cost on the cost side (the same token mix on
both sides; :func:`tokenomics.econ.pricing.gross_margin_frac`); ``output_margin_frac`` compares
output tokens alone.

Revenue is what the provider bills: a row with off-peak prices (``off_peak_*_usd_per_m_tok``, e.g.
DeepSeek's own API, 50-75 % off at UTC 16:30-00:30 from 2025-02-26 to 2025-09-05, and peak /
off-peak prices from 2026-08-16) bills each token type at the blend of its off-peak and standard
(peak) price weighted by the share of tokens billed off-peak (:func:`blended_price_usd_per_m_tok`);
that share is the row's ``off_peak_share_frac``, else its off-peak hours per week / 168 (a flat
hourly load: :func:`flat_load_off_peak_share_frac`), else ``market(off_peak_share_frac=...)`` for
every such row. ``billing`` says which (``flat`` or ``peak/off-peak, 33 % off-peak``).

What is priced is what the provider serves: the row's ``quantization`` where it names a precision,
else the precision that model's providers serve (``datasets/served_precision.csv``: the published
checkpoint they deploy, e.g. FP8 for Qwen3-235B), or ``weight_precision`` for every row
(``weight_precision`` and ``precision_source`` say which). The speed is the row's published one,
else the provider's measured speed (``datasets/served_speed.csv``), else
:data:`DEFAULT_TOK_PER_S_PER_USER` (``speed_source`` and ``speed_basis`` say which). ``speeds``
prices every row at several speeds as well and gives the speed at which the margin is zero. A
price below the modelled cost is flagged (``flag``), a speed the deployment cannot reach is said
in the row (costs NaN), nothing is dropped. Every row names its ``cost_basis``,
``output_convention`` and ``deployment``.

Examples
--------
>>> df = market()                                            # doctest: +SKIP
>>> df[["provider", "model", "list_usd_per_m_output_tok", "cost_usd_per_m_output_tok",
...     "implied_margin_frac", "flag"]]                      # doctest: +SKIP
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from . import _validate as v
from .econ.pricing import REFERENCE_TOK_PER_S_PER_USER
from .errors import DataError, DoesNotFitError, TargetSpeedError, ValidationError, unknown_name

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

#: Columns a market price table must have.
REQUIRED_COLUMNS = ("provider", "model", "input_usd_per_m_tok", "output_usd_per_m_tok", "source", "as_of")
#: Columns read when present.
OPTIONAL_COLUMNS = ("cached_input_usd_per_m_tok", "tok_per_s_per_user", "speed_source", "quantization",
                    "also_in", "note", "off_peak_input_usd_per_m_tok", "off_peak_cached_input_usd_per_m_tok",
                    "off_peak_output_usd_per_m_tok", "off_peak_hours_per_week", "off_peak_share_frac")
#: Each list price column and the column of its off-peak price (a row billed at off-peak / peak prices).
OFF_PEAK_PRICE_COLUMNS = {"input_usd_per_m_tok": "off_peak_input_usd_per_m_tok",
                          "cached_input_usd_per_m_tok": "off_peak_cached_input_usd_per_m_tok",
                          "output_usd_per_m_tok": "off_peak_output_usd_per_m_tok"}
#: Hours in a week [h]: the off-peak share under a flat hourly load is off-peak hours / this.
HOURS_PER_WEEK = 168.0
#: ``billing`` of a row billed at one price around the clock.
BILLING_FLAT = "flat"
#: Speculative decoding priced by default, per row (:func:`served_spec`): MTP on the models whose
#: checkpoint ships MTP heads (DeepSeek-V3, GLM-4.5, MiniMax-M2.5, Qwen3.5: ``mtp_modules`` in
#: ``datasets/models.csv``), as the labs' own serving stacks and the engines' recipes for them run it;
#: else the provider's own draft where it says it serves one and a measurement of speculation on
#: that model gives its acceptance (``datasets/served_speculation.csv``); the others without.
DEFAULT_SPEC = "served"
#: ``spec_source`` of each way a row's speculative decoding is chosen.
SPEC_FROM_CHECKPOINT = "the checkpoint's MTP heads"
SPEC_FROM_TABLE = "the provider's draft (served-speculation table)"
SPEC_FROM_OPTION = "the --spec option"
SPEC_NONE = "none"
#: Reference system for every row (the resolver picks layout, plan, precisions on it).
REFERENCE_SYSTEM = "dgx-h200"
#: Where a model does not fit the reference system.
FALLBACK_SYSTEM = "gb200-nvl72"
#: Speed per user priced where a provider publishes none [tokens/s]: the interactivity at which
#: InferenceX quotes DeepSeek-R1 serving costs (``tokenomics.econ.pricing.REFERENCE_TOK_PER_S_PER_USER``).
DEFAULT_TOK_PER_S_PER_USER = REFERENCE_TOK_PER_S_PER_USER
#: Default speeds taken [tokens/s per user]: a reader's pace (a few tok/s) to well past any
#: served decode speed (hundreds to a few thousand tok/s); outside it (1e-320, 1e308) is a slip.
DEFAULT_SPEED_RANGE_TOK_PER_S_PER_USER = (0.1, 1e5)

#: The least a list price can be [USD per million tokens]: a hundredth of a cent per million, about 1/100 of
#: the cheapest cached-input price listed (USD 0.014 in datasets/market_prices.csv); below it a cell
#: is a price per token or per 1K in a per-million column.
MIN_PLAUSIBLE_USD_PER_M_TOK = 1e-4
FLAG_BELOW_COST = "below modelled cost"
FLAG_UNREACHABLE = "speed unreachable"
FLAG_NO_FIT = "does not fit"
#: ``flag`` of a row that cannot be priced (a bad cell, a model the catalog lacks), with its reason.
FLAG_REFUSED = "refused"


def load_prices(prices: "pd.DataFrame | str | Path | None" = None, *,
                keep_bad_rows: bool = False) -> "pd.DataFrame":
    """The market price table, validated (bundled ``datasets/market_prices.csv`` by default).

    A model named as its provider or hub names it (``meta-llama/Meta-Llama-3.1-70B-Instruct``)
    is read as the catalog model it stands for (:func:`tokenomics.catalog.match_model_name`; an
    alias as the architecture it shares), and the row's ``note`` says how it was listed.

    Parameters
    ----------
    prices : DataFrame or path, optional
        Your own table with :data:`REQUIRED_COLUMNS` (and any of :data:`OPTIONAL_COLUMNS`).
    keep_bad_rows : bool
        Keep rows with a bad cell or an unknown model, each with its problems in a
        ``refused_reason`` column (``""`` on good rows), rather than refusing the table.

    Raises
    ------
    DataError
        Missing columns or no rows; unless ``keep_bad_rows``, every bad row in one line: a missing
        output price; a price or speed that is text, non-finite or not positive (an empty input,
        cached input or speed cell means 'not given'); a cached input price above the input price;
        a missing or unreadable ``as_of`` or ``date`` (``YYYY-MM-DD``, ``YYYY-MM`` or ``YYYY``); a
        model the catalog lacks (with suggestions); an unreadable file.
    """
    import pandas as pd

    from . import catalog
    from .io import exact_floats, raise_problems

    where = "datasets/market_prices.csv"
    if prices is None:
        df = catalog.load("market_prices")
    elif isinstance(prices, pd.DataFrame):
        df, where = prices.copy(), "market table"
    else:
        import io as _io

        from .io import read_text

        p = Path(prices)
        where = str(p)
        text = read_text(p, "market price file")
        try:  # only an empty cell is 'not given': the text 'nan' in a price cell is an error
            df = pd.read_csv(_io.StringIO(text), keep_default_na=False, na_values=[""], **exact_floats())
        except Exception as exc:  # noqa: BLE001 -- any parse failure is bad input
            raise DataError(f"market price file {p} is not a readable CSV: {str(exc).splitlines()[0]}") from None
    what = f"market price table {where}"
    df = _in_usd_per_m_tok(df)
    catalog.check_columns(df, REQUIRED_COLUMNS, what)
    if df.empty:
        raise DataError(f"{what} has no rows")
    df = df.reset_index(drop=True)
    for c in OPTIONAL_COLUMNS:
        if c not in df.columns:
            df[c] = np.nan
    problems = (_price_problems(df) + _off_peak_problems(df)
                + _date_problems(df, user_file=where != "datasets/market_prices.csv") + _model_problems(df))
    if not keep_bad_rows:
        raise_problems(what, problems, noun="problems")
        return df
    from .io import problem_lines

    reasons: dict[int, list[str]] = {}
    for i, detail in problems:
        reasons.setdefault(i, []).append(detail)
    df.attrs["what"] = what
    df["refused_reason"] = [problem_lines([(i, "; ".join(reasons[i]))])[0] if i in reasons else ""
                            for i in range(len(df))]
    return df


def _in_usd_per_m_tok(df: "pd.DataFrame") -> "pd.DataFrame":
    """A price list's prices in USD per million tokens: a leading ``$`` dropped from price cells
    (``"$0.50"``), then per-1K, per-token and spelled-out per-million columns as their per-million
    twins (:func:`tokenomics.units.price_list_per_million`); other text is left for the checks to name."""
    import pandas as pd

    from .units import price_list_per_million

    out = df.copy()
    for col in out.columns:
        if "usd_per_" in str(col) and not pd.api.types.is_numeric_dtype(out[col]):
            out[col] = out[col].astype(object).map(
                lambda x: x.strip().removeprefix("$").strip() if isinstance(x, str) else x)
    return price_list_per_million(out)


def _price_problems(df: "pd.DataFrame") -> "list[tuple[int, str]]":
    """Bad price and speed cells of a price table, ``(row, detail)``; the columns made numeric."""
    from .io import blank_cells, numeric_cell_problems

    out: list[tuple[int, str]] = []
    for c in ("input_usd_per_m_tok", "cached_input_usd_per_m_tok", "output_usd_per_m_tok", "tok_per_s_per_user"):
        vals, probs = numeric_cell_problems(df, c, minimum=0.0, strict_minimum=True,
                                            required=c == "output_usd_per_m_tok")
        out += [(int(i), str(probs.iloc[i])) for i in np.flatnonzero((probs != "").to_numpy())]
        df[c] = vals.to_numpy()
    for c in ("input_usd_per_m_tok", "cached_input_usd_per_m_tok", "output_usd_per_m_tok"):
        for i in np.flatnonzero(((df[c] > 0) & (df[c] < MIN_PLAUSIBLE_USD_PER_M_TOK)).to_numpy()):
            out.append((int(i), f"{c} {df[c].iloc[i]:.3g} is below any API list price (USD "
                                f"{MIN_PLAUSIBLE_USD_PER_M_TOK:g} per million tokens): a price per token or per "
                                f"1K in a per-million column? name the column {c.replace('_m_', '_')} "
                                f"(per token) or {c.replace('_m_', '_1k_')} (per 1K)"))
    for i in np.flatnonzero((df["cached_input_usd_per_m_tok"] > df["input_usd_per_m_tok"]).to_numpy()):
        out.append((int(i), "cached_input_usd_per_m_tok must not exceed input_usd_per_m_tok (a cache hit is not "
                            f"dearer than a miss), got {df['cached_input_usd_per_m_tok'].iloc[i]:g} > "
                            f"{df['input_usd_per_m_tok'].iloc[i]:g}"))
    for c in ("provider", "source"):  # who sells it, and where the price was read: both required
        for i in np.flatnonzero(blank_cells(df[c]).to_numpy()):
            out.append((int(i), f"{c} is empty; expected " + ("the provider's name" if c == "provider"
                                                              else "where the price was published (a URL)")))
    return out


def _date_problems(df: "pd.DataFrame", user_file: bool) -> "list[tuple[int, str]]":
    """Bad ``as_of`` (required) and ``date`` (effective date, optional) cells; in a user's file,
    dates after today too."""
    import datetime as _dt

    from .dates import parse_date
    from .io import blank_cells

    out: list[tuple[int, str]] = []
    today = np.datetime64(_dt.datetime.now(_dt.timezone.utc).date(), "D")
    for c in ("as_of", "date"):
        if c not in df.columns:
            continue
        for i, (d, empty) in enumerate(zip(df[c], blank_cells(df[c]).to_numpy())):
            parsed = None if empty else parse_date(d)
            if (c == "as_of" or not empty) and parsed is None:
                bad = f"missing {c}" if empty else f"bad {c} {str(d)!r}"
                out.append((i, f"{bad}; expected YYYY-MM-DD, YYYY-MM or YYYY"))
            elif user_file and parsed is not None and parsed[0] > today:
                out.append((i, f"{c} {str(d)!r} is after today ({today}); expected the date the price was read"))
    return out


def _model_problems(df: "pd.DataFrame") -> "list[tuple[int, str]]":
    """Rows naming a model the catalog lacks; the others' ``model`` set to the catalog name they
    stand for (:func:`tokenomics.catalog.match_model_name`), the listed name kept in ``note``."""
    from . import catalog

    out: list[tuple[int, str]] = []
    models, notes = [], []
    bundled = set(catalog.model_names())
    matched = {m: catalog.match_model_name(m) for m in set(df["model"].astype(str))}
    for i, (m, note) in enumerate(zip(df["model"].astype(str), df["note"])):
        name = matched[m]
        name = catalog.MODEL_ALIASES.get(name, name) if name not in bundled else name
        note = note if isinstance(note, str) else ""
        if name is None:
            hint = str(unknown_name("model", m, catalog.model_names())).split(" Known:")[0]
            close = hint.split(" Did you mean ")[1].rstrip("?") if " Did you mean " in hint else ""
            out.append((i, f"model {m!r} is not in the catalog ("
                           + (f"did you mean {close}? " if close else "")
                           + "an open model can be added: tokenomics models add CONFIG.json --name NAME)"))
            name = m
        elif name != m:
            note = f"listed as {m!r}" + (f"; {note}" if note else "")
        models.append(name)
        notes.append(note)
    df["model"], df["note"] = models, notes
    return out


def check_share_frac(value: Any, name: str, error: type = ValidationError) -> float:
    """``value`` as a share of tokens [fraction 0-1]; else a one-line ``error``
    (``"off_peak_share_frac: expected a fraction 0-1, got 79 (a percent? did you mean 0.79?)"``)."""
    try:
        x = float(value)
    except (TypeError, ValueError):
        raise error(f"{name}: expected a fraction 0-1, got {value!r:.40}") from None
    if isinstance(value, (bool, np.bool_, str, bytes)) or not (np.isfinite(x) and 0.0 <= x <= 1.0):
        hint = v.percent_hint(x) if np.isfinite(x) else ""
        shown = f"{value!r:.40}" if isinstance(value, (bool, np.bool_, str, bytes)) else f"{x:g}"
        raise error(f"{name}: expected a fraction 0-1, got {shown}" + (f" (a percent?{hint})" if hint else ""))
    return x


def _off_peak_problems(df: "pd.DataFrame") -> "list[tuple[int, str]]":
    """Bad off-peak cells of a price table (:func:`load_prices`), ``(row, detail)``; the columns
    made numeric in place."""
    from .io import numeric_cell_problems

    out: list[tuple[int, str]] = []

    def numeric(c: str, **kw: Any) -> None:
        vals, probs = numeric_cell_problems(df, c, required=False, **kw)
        out.extend((int(i), str(probs.iloc[i])) for i in np.flatnonzero((probs != "").to_numpy()))
        df[c] = vals.to_numpy()

    for c in OFF_PEAK_PRICE_COLUMNS.values():
        numeric(c, minimum=0.0, strict_minimum=True)
    numeric("off_peak_hours_per_week", minimum=0.0, maximum=HOURS_PER_WEEK)
    numeric("off_peak_share_frac")
    share = df["off_peak_share_frac"].to_numpy(float)
    for i in np.flatnonzero(np.isfinite(share) & ((share < 0) | (share > 1))):
        try:
            check_share_frac(share[i], "off_peak_share_frac", DataError)
        except DataError as exc:
            out.append((int(i), str(exc)))
    off = np.column_stack([np.isfinite(df[c].to_numpy(float)) for c in OFF_PEAK_PRICE_COLUMNS.values()])
    listed = np.column_stack([np.isfinite(df[c].to_numpy(float)) for c in OFF_PEAK_PRICE_COLUMNS])
    has_off = off.any(axis=1)
    for j, (c, oc) in enumerate(OFF_PEAK_PRICE_COLUMNS.items()):
        for i in np.flatnonzero(has_off & (off[:, j] != listed[:, j])):
            given, empty = (oc, c) if off[i, j] else (c, oc)
            out.append((int(i), f"{given} is given but {empty} is empty; expected an off-peak price for every "
                                "token type the row prices (or none: billed flat)"))
        for i in np.flatnonzero(df[oc].to_numpy(float) > df[c].to_numpy(float)):
            out.append((int(i), f"{oc} must not exceed {c} (the off-peak price is the lower one), got "
                                f"{df[oc].iloc[i]:g} > {df[c].iloc[i]:g}"))
    hit, miss = df["off_peak_cached_input_usd_per_m_tok"], df["off_peak_input_usd_per_m_tok"]
    for i in np.flatnonzero((hit > miss).to_numpy()):
        out.append((int(i), "off_peak_cached_input_usd_per_m_tok must not exceed off_peak_input_usd_per_m_tok "
                            f"(a cache hit is not dearer than a miss), got {hit.iloc[i]:g} > {miss.iloc[i]:g}"))
    window = np.isfinite(share) | np.isfinite(df["off_peak_hours_per_week"].to_numpy(float))
    for i in np.flatnonzero(has_off & ~window):
        out.append((int(i), "off-peak prices without off_peak_hours_per_week or off_peak_share_frac; expected the "
                            "hours a week billed off-peak (0-168, e.g. 56 for UTC 16:30-00:30 daily) or the share "
                            "of tokens billed off-peak (0-1)"))
    for i in np.flatnonzero(window & ~has_off):
        out.append((int(i), "an off-peak window (off_peak_hours_per_week or off_peak_share_frac) without an "
                            "off-peak price; expected off_peak_output_usd_per_m_tok (and the other off-peak prices)"))
    return out


def flat_load_off_peak_share_frac(off_peak_hours_per_week: Any) -> Any:
    """Share of a week's tokens billed off-peak when the load is the same every hour [fraction].

    ``off_peak_hours_per_week / 168``: DeepSeek's 2025 discount, UTC 16:30-00:30 every day, is
    8 x 7 = 56 h -> 1/3; its V4 peak hours, weekdays 09:00-12:00 and 14:00-18:00 Beijing, are
    5 x 7 = 35 h, so 133 h off-peak -> 0.7917.

    Parameters
    ----------
    off_peak_hours_per_week : float or array
        Hours of the week billed at the off-peak price [h, 0-168].
    """
    return np.asarray(off_peak_hours_per_week, float) / HOURS_PER_WEEK


def blended_price_usd_per_m_tok(price_usd_per_m_tok: Any, off_peak_usd_per_m_tok: Any,
                                off_peak_share_frac: Any) -> Any:
    """The price billed per token over a week of peak and off-peak hours [USD/M tokens].

    ``off_peak_share_frac x off-peak price + (1 - off_peak_share_frac) x price``; where there is no
    off-peak price (NaN) the price itself (billed flat).

    Parameters
    ----------
    price_usd_per_m_tok : float or array
        The standard (peak) list price [USD/M tokens].
    off_peak_usd_per_m_tok : float or array
        The off-peak list price [USD/M tokens]; NaN: none.
    off_peak_share_frac : float or array
        Share of the tokens billed off-peak [fraction 0-1].
    """
    p = np.asarray(price_usd_per_m_tok, float)
    off = np.asarray(off_peak_usd_per_m_tok, float)
    s = np.asarray(off_peak_share_frac, float)
    with np.errstate(invalid="ignore"):
        return np.where(np.isfinite(off), s * off + (1.0 - s) * p, p)


def billing_label(off_peak_share_frac: float) -> str:
    """``"flat"`` (NaN: no off-peak price) or ``"peak/off-peak, 79 % off-peak"``."""
    if not np.isfinite(off_peak_share_frac):
        return BILLING_FLAT
    return f"peak/off-peak, {off_peak_share_frac * 100:.0f} % off-peak"


#: Precision words a price list's ``quantization`` cell may use, and the catalogued precision each
#: names (``tokenomics.specs.PRECISION_BYTES``); the first one found in the cell is priced.
PRECISION_WORDS = {"nvfp4": "nvfp4", "mxfp4": "mxfp4", "fp4": "fp4", "fp8": "fp8", "float8": "fp8",
                   "e4m3": "fp8", "bf16": "bf16", "bfloat16": "bf16", "fp16": "fp16", "float16": "fp16",
                   "fp32": "fp32", "int8": "int8", "int4": "int4", "w4a16": "int4"}
#: Cells that say the precision is not known (the served-precision table is then used).
UNKNOWN_PRECISION_WORDS = ("", "unknown", "n/a", "na", "none", "-", "?")
PRECISION_FROM_ROW = "price list"
PRECISION_FROM_TABLE = "served-precision table"
PRECISION_FROM_OPTION = "weight_precision option"
SPEED_FROM_ROW = "price list"
SPEED_FROM_TABLE = "served-speed table"
SPEED_FROM_DEFAULT = "default"


def row_precision(cell: Any) -> tuple[str | None, str]:
    """The precision a price row's ``quantization`` cell names, and a note.

    Returns ``(precision, "")`` for a recognised word (:data:`PRECISION_WORDS`, e.g.
    ``"fp8 (native)"`` -> ``"fp8"``), ``(None, "")`` for an empty or 'unknown' cell and
    ``(None, "quantization '...' not recognised")`` for anything else (the row is then priced at the
    served precision and says so).
    """
    import re

    if cell is None or (isinstance(cell, float) and not np.isfinite(cell)):
        return None, ""
    text = str(cell).strip().lower()
    if text in UNKNOWN_PRECISION_WORDS:
        return None, ""
    found = re.search(r"(?<![a-z0-9])(" + "|".join(sorted(PRECISION_WORDS, key=len, reverse=True))
                      + r")(?![a-z0-9])", text)
    if found:
        return PRECISION_WORDS[found.group(1)], ""
    return None, f"quantization {str(cell)[:40]!r} not recognised (expected one of {', '.join(sorted(set(PRECISION_WORDS.values())))})"


def served_precision(model: str) -> tuple[str, str]:
    """(weight precision, source) the model's providers serve: ``datasets/served_precision.csv``,
    else the checkpoint's own (``datasets/models.csv`` ``native_precision``)."""
    from . import catalog

    table = catalog.load("served_precision")
    if model in table.index:
        return str(table.loc[model, "weight_precision"]), f"{PRECISION_FROM_TABLE} ({table.loc[model, 'source']})"
    return catalog.model(model).native_precision, "the checkpoint's own (datasets/models.csv native_precision)"


def _provider_key(name: Any) -> str:
    """A provider's name without its route (``"Novita (via HF Inference Providers)"`` -> ``"novita"``)."""
    import re

    return re.sub(r"\s*\(.*\)\s*$", "", str(name)).strip().lower()


def served_speed(provider: Any, model: str) -> tuple[float, str]:
    """(tokens/s per user, source) the provider is measured to serve ``model`` at
    (``datasets/served_speed.csv``); ``(nan, "")`` where none is."""
    from . import catalog

    t = catalog.load("served_speed")
    hit = t[(t["provider"].map(_provider_key) == _provider_key(provider)) & (t["model"] == model)]
    if hit.empty:
        return float("nan"), ""
    r = hit.iloc[0]
    return float(r["tok_per_s_per_user"]), f"{SPEED_FROM_TABLE} ({r['source']}, as of {r['as_of']})"


def ships_mtp_heads(model: str) -> bool:
    """Whether the model's checkpoint ships multi-token-prediction heads (``mtp_modules`` in
    ``datasets/models.csv``; NaN, unknown, is not a head)."""
    from . import catalog

    return bool(catalog.model(model).mtp_modules >= 1)


def served_spec(provider: Any, model: str) -> tuple[str, str]:
    """(speculative decoding, source) the provider serves ``model`` with: ``"mtp"`` where the
    checkpoint ships MTP heads, else the provider's draft from ``datasets/served_speculation.csv``
    (``eagle:GAMMA:ALPHA``, its acceptance from a measured speedup on that model), else ``"none"``."""
    from . import catalog

    if ships_mtp_heads(model):
        return "mtp", SPEC_FROM_CHECKPOINT
    t = catalog.load("served_speculation")
    hit = t[(t["provider"].map(_provider_key) == _provider_key(provider)) & (t["model"] == model)]
    if hit.empty:
        return "none", SPEC_NONE
    r = hit.iloc[0]
    return str(r["spec"]), (f"{SPEC_FROM_TABLE}: {r['provider']} says it serves a draft ({r['claim_source']}); "
                            f"acceptance from a {float(r['measured_speedup']):g}x measured single-user speedup "
                            f"({r['source']})")


def precision_kwargs(model: str, precision: str | None) -> dict[str, str]:
    """The :func:`tokenomics.deployment.resolve` keywords that store ``model`` at ``precision``.

    The model's own precision keeps its checkpoint's split (e.g. gpt-oss: MXFP4 experts, BF16
    attention); a 4-bit format on a mixture-of-experts model applies to its routed experts, dense
    weights keeping their own (as the FP4 checkpoints providers serve store them: NVIDIA's
    DeepSeek-R1 NVFP4, gpt-oss MXFP4); any other precision applies to every weight.
    """
    from .catalog import model as _model
    from .specs import precision_bytes

    if precision is None:
        return {}
    m = _model(model)
    if precision == m.native_precision:
        return {}
    if m.is_moe and precision_bytes(precision) < 1.0:
        return {"expert_precision": precision}
    return {"weight_precision": precision}


def _deployment(model: str, system: str | None, spec: Any = None, precision: str | None = None):
    """The resolver's deployment of ``model`` at ``precision`` on the reference system (or the
    fallback), with ``spec`` (:func:`market`)."""
    from .deployment import _spec, resolve

    spec = _spec(spec)  # a preset or METHOD:GAMMA:ALPHA text (a row's served draft), or a SpecDecode
    if spec is not None and spec.method == "mtp" and not ships_mtp_heads(model):
        spec = None  # MTP where the checkpoint ships the heads; the others without
    kw = precision_kwargs(model, precision)
    if system is not None:
        return resolve(model, system=system, spec=spec, **kw)
    try:
        return resolve(model, system=REFERENCE_SYSTEM, spec=spec, **kw)
    except DoesNotFitError:
        return resolve(model, system=FALLBACK_SYSTEM, spec=spec, **kw)


def speed_column(tok_per_s_per_user: float) -> str:
    """Name of the column holding the implied margin at a speed (``market(speeds=...)``)."""
    return f"implied_margin_frac_at_{tok_per_s_per_user:g}_tok_per_s"


def margins(list_input: float, list_cached_input: float, list_output: float, cost_input: float,
            cost_output: float, input_tok: int, output_tok: int, cache_hit_frac: float = 0.0) -> tuple[float, float]:
    """(implied margin of a request, margin of its output tokens) of a list price over a modelled cost.

    Parameters
    ----------
    list_input, list_cached_input, list_output : float
        List prices [USD/M tokens]: cache-miss input (NaN: not given, the request margin is then
        the output margin), cache-hit input (NaN: not given, a hit is billed at the miss price),
        output.
    cost_input, cost_output : float
        Modelled cost [USD/M tokens]; ``cost_input`` is the effective one over cache hits and
        misses (:attr:`tokenomics.chain.PriceResult.usd_per_m_effective_input_tok`).
    input_tok, output_tok : int
        Tokens per request of the workload.
    cache_hit_frac : float
        Share of input tokens billed at the cached price [0-1].

    Returns
    -------
    tuple of float
        Both by :func:`tokenomics.econ.pricing.gross_margin_frac` [fraction]; NaN where the cost is.
    """
    from .econ.pricing import gross_margin_frac, usd_per_request

    if not (np.isfinite(cost_output) and np.isfinite(cost_input)):
        return float("nan"), float("nan")
    out_m = float(gross_margin_frac(list_output, cost_output))
    if not np.isfinite(list_input):
        return out_m, out_m
    hit_price = list_cached_input if np.isfinite(list_cached_input) else list_input
    billed_in = (1.0 - cache_hit_frac) * list_input + cache_hit_frac * hit_price
    revenue = usd_per_request(billed_in / 1e3, list_output / 1e3, input_tok, output_tok)
    cost = usd_per_request(cost_input / 1e3, cost_output / 1e3, input_tok, output_tok)
    return float(gross_margin_frac(revenue, cost)), out_m


def zero_margin_speed(speeds: Any, margin: Any) -> float:
    """The speed at which the margin first falls through zero, searching upwards [tokens/s per user].

    Linear in the margin between neighbouring speeds of ``speeds`` (sorted ascending); NaN where
    the margin is negative at the slowest speed, never falls below zero in the range, or the
    deployment cannot reach the speeds in between (NaN margins).
    """
    s, m = np.asarray(speeds, float), np.asarray(margin, float)
    if m.size == 0 or not np.isfinite(m[0]) or m[0] < 0:
        return float("nan")
    for i in range(1, m.size):
        if not np.isfinite(m[i]):
            return float("nan")
        if m[i] < 0:
            return float(s[i - 1] + (s[i] - s[i - 1]) * m[i - 1] / (m[i - 1] - m[i]))
    return float("nan")


def market(prices: "pd.DataFrame | str | Path | None" = None, *, system: str | None = None,
           default_tok_per_s_per_user: float = DEFAULT_TOK_PER_S_PER_USER, workload: str = "chat",
           output_convention: str = "decode-only", cost: Any = None, utilization_frac: Any = None,
           cache_hit_frac: float = 0.0, spec: str | None = DEFAULT_SPEC, weight_precision: str | None = None,
           speeds: Any = None, serving: str = "decode",
           electricity_usd_per_kwh: float | None = None,
           off_peak_share_frac: float | None = None) -> "pd.DataFrame":
    """Each list price beside the modelled cost to serve what the provider serves, and the margin.

    Parameters
    ----------
    prices : DataFrame or path, optional
        Market price table (:func:`load_prices`); default the bundled one.
    system : str, optional
        Price every row on this catalogued system (default :data:`REFERENCE_SYSTEM`, or
        :data:`FALLBACK_SYSTEM` for a model that does not fit it).
    default_tok_per_s_per_user : float
        Speed priced where neither the row nor ``datasets/served_speed.csv`` gives one [tokens/s
        per user].
    workload : str
        Request mix for the margin and the context length (``datasets/workloads.csv``).
    output_convention : {"decode-only", "all-in"}
        How the cost of output tokens is counted (:data:`tokenomics.chain.OUTPUT_CONVENTIONS`).
    cost : optional
        Cost basis (default bottom-up; see :func:`tokenomics.econ.tco.cost_model`).
    utilization_frac : float, optional
        Share of chip-hours sold (0, 1] (default 1: InferenceX's convention).
    cache_hit_frac : float
        Share of input tokens served from a prefix cache [0-1] (default 0): the modelled input
        cost is then the effective one and those tokens are billed at the row's
        ``cached_input_usd_per_m_tok`` (the miss price where the row gives none).
    spec : str, optional
        Speculative decoding. Default :data:`DEFAULT_SPEC` (``"served"``): what each provider
        serves (:func:`served_spec`: MTP where the checkpoint ships the heads, else the provider's
        own draft from ``datasets/served_speculation.csv``, else none). Otherwise one setting for
        every row (a preset or ``METHOD:GAMMA:ALPHA``, as :func:`tokenomics.deployment.resolve`
        takes it); an MTP method applies to the models whose checkpoint ships
        multi-token-prediction heads (``mtp_modules`` in ``datasets/models.csv``), the others are
        priced without. ``None`` or ``"none"`` prices every row without speculative decoding.
    weight_precision : str, optional
        Price every row at this weight precision (``tokenomics.specs.PRECISION_BYTES``: ``bf16``,
        ``fp8``, ``nvfp4``, ...) instead of the row's or the served one (:func:`precision_kwargs`).
    speeds : sequence of float, optional
        Also price every row at each of these speeds [tokens/s per user]: one column per speed
        (:func:`speed_column`) and ``zero_margin_tok_per_s_per_user``, the speed at which the
        implied margin falls to zero, searched over the speeds and the geometric midpoints
        between them (:func:`zero_margin_speed`).
    serving : {"decode", "colocated", "disaggregated"}
        How the chips serve each row's requests (:data:`tokenomics.chain.SERVING_MODES`): the
        decode-only steady state at the cheapest batch meeting the speed (default), co-located
        continuous batching at the most requests in flight meeting it, or prefill and decode
        instances (:func:`tokenomics.chain.price` ``serving``). ``colocated`` takes no
        ``cache_hit_frac``.
    electricity_usd_per_kwh : float, optional
        Electricity price of the bottom-up cost [USD/kWh] (default ``datasets/tco_params.csv``);
        kept as the ``electricity_usd_per_kwh`` column. Refused with a tier or flat ``cost``
        (those prices have no electricity term).
    off_peak_share_frac : float, optional
        Share of the tokens billed off-peak [fraction 0-1] on every row with off-peak prices
        (a load shape of your own); default the row's ``off_peak_share_frac``, else its
        ``off_peak_hours_per_week`` / 168 (:func:`flat_load_off_peak_share_frac`). Rows billed flat
        are not touched.

    Returns
    -------
    pandas.DataFrame
        One row per list price: ``provider``, ``model``, ``list_usd_per_m_input_tok``,
        ``list_usd_per_m_cached_input_tok``, ``list_usd_per_m_output_tok``,
        ``list_usd_per_m_billed_input_tok`` (input billed over hits and misses, at the blended
        prices), ``billing`` (``flat`` or ``peak/off-peak, 33 % off-peak``), ``off_peak_share_frac``
        (NaN where flat), ``list_usd_per_m_blended_input_tok``,
        ``list_usd_per_m_blended_cached_input_tok``, ``list_usd_per_m_blended_output_tok`` (the
        prices the revenue is billed at: :func:`blended_price_usd_per_m_tok`; the list prices where
        flat),
        ``weight_precision``, ``precision_source``, ``tok_per_s_per_user`` (the speed priced),
        ``speed_source``, ``speed_basis``, ``spec_decode`` (the speculative decoding priced: ``mtp``,
        ``eagle:GAMMA:ALPHA``, ``none``), ``spec_source``, ``modelled_tok_per_s_per_user``, ``batch``,
        ``cost_usd_per_m_input_tok``, ``cost_usd_per_m_output_tok``, ``implied_margin_frac``,
        ``output_margin_frac``, the margins at ``speeds`` and ``zero_margin_tok_per_s_per_user``
        (with ``speeds``), ``flag``, ``deployment``, ``cost_basis``, ``output_convention``,
        ``utilization_frac``, ``cache_hit_frac``, ``workload``, ``source``, ``as_of``, ``also_in``,
        ``note``, then ``serving_mode`` (``decode-only steady state``, ``co-located``, ``disaggregated
        P:D``) and ``concurrency`` (requests in flight per instance; NaN for the decode-only steady
        state), ``electricity_usd_per_kwh`` (the electricity price of the cost; NaN for a tier or
        flat cost).
    """
    import pandas as pd

    from . import chain
    from .econ import pricing
    from .specs import precision_bytes

    df = load_prices(prices, keep_bad_rows=True)
    if (df["refused_reason"] != "").all():  # nothing to price: the table is refused, every row named
        from .io import MAX_PROBLEMS_NAMED

        lines = list(df["refused_reason"])
        more = f"; and {len(lines) - MAX_PROBLEMS_NAMED} more" if len(lines) > MAX_PROBLEMS_NAMED else ""
        raise DataError(f"{df.attrs['what']} {lines[0]}" if len(lines) == 1 else
                        f"{df.attrs['what']}: nothing can be priced, {len(lines)} rows refused: "
                        f"{'; '.join(lines[:MAX_PROBLEMS_NAMED])}{more}")
    v.positive(default_tok_per_s_per_user, "default_tok_per_s_per_user")
    lo, hi = DEFAULT_SPEED_RANGE_TOK_PER_S_PER_USER
    if not lo <= float(default_tok_per_s_per_user) <= hi:
        raise ValidationError(f"default speed {float(default_tok_per_s_per_user):.3g} tok/s per user is outside the "
                              f"range taken, {lo:g} to {hi:g} tok/s per user")
    v.one_of(output_convention, "output_convention", chain.OUTPUT_CONVENTIONS)
    v.fraction(cache_hit_frac, "cache_hit_frac")
    if off_peak_share_frac is not None:
        off_peak_share_frac = check_share_frac(off_peak_share_frac, "off_peak_share_frac")
    v.one_of(serving, "serving", chain.SERVING_MODES)
    if serving != "decode":  # what the serving mode takes, checked before any row is priced
        chain._check_oracle_args(serving, None, None, None, cache_hit_frac, None, default_tok_per_s_per_user, None)
    if weight_precision is not None:
        precision_bytes(weight_precision)  # an unknown name is one line naming the known ones
    from .econ.tco import electricity_override

    elec = electricity_override(cost, electricity_usd_per_kwh)
    grid: list[float] = []
    if speeds is not None:
        want = np.atleast_1d(np.asarray(speeds, float)).ravel()
        v.positive(want, "speeds")
        want = np.unique(want)
        grid = sorted(set(want.tolist()) | set(np.sqrt(want[:-1] * want[1:]).tolist()))
    if utilization_frac is not None:
        pricing.check_utilization(utilization_frac)
    if system is not None:
        from . import catalog

        if system not in catalog.load("systems").index:
            raise unknown_name("system", system, catalog.load("systems").index)
    in_tok, out_tok = chain.workload_mix(workload)
    from .deployment import _spec

    per_row = isinstance(spec, str) and spec.strip().lower() == DEFAULT_SPEC  # what each provider serves
    try:  # a SpecDecode or None; a bad one is one line before any row is priced
        given = None if per_row else _spec(spec)
    except ValidationError as exc:
        raise type(exc)(str(exc).replace("; use none, ", f"; use {DEFAULT_SPEC} (what each provider serves), none, ", 1)) from None
    deps: dict[tuple, Any] = {}
    costs: dict[tuple, dict[str, Any]] = {}
    kw = {"workload": workload, "cost": cost, "utilization_frac": utilization_frac,
          "output_convention": output_convention, "cache_hit_frac": cache_hit_frac, "serving": serving, **elec}

    def cost_at(model: str, prec: str | None, spec_text: str, speed: float) -> dict[str, Any]:
        key = (model, prec, spec_text, speed)
        if key not in costs:
            costs[key] = _cost_at(model, speed, system, deps, spec_text if per_row else given, prec, **kw)
        return costs[key]

    def row_spec(provider: Any, model: str) -> tuple[str, str]:
        if per_row:
            return served_spec(provider, model)
        if given is None:
            return "none", SPEC_NONE
        if given.method == "mtp" and not ships_mtp_heads(model):
            return "none", f"{SPEC_NONE} (the checkpoint ships no MTP heads)"
        return str(spec).strip().lower(), SPEC_FROM_OPTION

    rows = []
    for i, r in enumerate(df.itertuples(index=False)):
        model = str(r.model)
        if r.refused_reason:
            rows.append(_refused_record(r))
            continue
        if weight_precision is not None:
            prec, psrc = weight_precision, PRECISION_FROM_OPTION
        else:
            prec, why = row_precision(r.quantization)
            if prec is not None:
                psrc = f"{PRECISION_FROM_ROW} ({str(r.quantization)[:60]})"
            else:
                prec, psrc = served_precision(model)
                if why:
                    psrc = f"{psrc}; the row's {why}"
                    import warnings

                    from .errors import TokenomicsWarning

                    warnings.warn(TokenomicsWarning(f"market price table row {i + 1} ({r.provider}, {model}): {why}; "
                                                    f"priced at the served precision {prec}"), stacklevel=2)
        if np.isfinite(r.tok_per_s_per_user):
            speed, ssrc, basis = float(r.tok_per_s_per_user), SPEED_FROM_ROW, "published"
        else:
            speed, where = served_speed(r.provider, model)
            if np.isfinite(speed):
                ssrc, basis = SPEED_FROM_TABLE, f"measured: {where}"
            else:
                speed, ssrc = float(default_tok_per_s_per_user), SPEED_FROM_DEFAULT
                basis = f"default {default_tok_per_s_per_user:g} tok/s/user (not published)"
        share = float("nan")
        if np.isfinite(r.off_peak_output_usd_per_m_tok):  # billed at off-peak / peak prices
            share = (off_peak_share_frac if off_peak_share_frac is not None
                     else r.off_peak_share_frac if np.isfinite(r.off_peak_share_frac)
                     else float(flat_load_off_peak_share_frac(r.off_peak_hours_per_week)))
        lin, lcached, lout = (float(blended_price_usd_per_m_tok(getattr(r, c), getattr(r, oc), share))
                              for c, oc in OFF_PEAK_PRICE_COLUMNS.items())
        hit_price = lcached if np.isfinite(lcached) else lin
        rec: dict[str, Any] = {
            "provider": r.provider, "model": model, "list_usd_per_m_input_tok": r.input_usd_per_m_tok,
            "list_usd_per_m_cached_input_tok": r.cached_input_usd_per_m_tok,
            "list_usd_per_m_output_tok": r.output_usd_per_m_tok,
            "list_usd_per_m_billed_input_tok": (1 - cache_hit_frac) * lin + cache_hit_frac * hit_price,
            "billing": billing_label(share), "off_peak_share_frac": share,
            "list_usd_per_m_blended_input_tok": lin, "list_usd_per_m_blended_cached_input_tok": lcached,
            "list_usd_per_m_blended_output_tok": lout,
            "weight_precision": prec, "precision_source": psrc,
            "tok_per_s_per_user": speed, "speed_source": ssrc, "speed_basis": basis,
        }
        rec["spec_decode"], rec["spec_source"] = stext, spsrc = row_spec(r.provider, model)
        c = cost_at(model, prec, stext, speed)
        rec.update({k: val for k, val in c.items() if not k.startswith("_")})
        cin, cout = c["cost_usd_per_m_input_tok"], c["cost_usd_per_m_output_tok"]
        rec["implied_margin_frac"], rec["output_margin_frac"] = margins(
            lin, lcached, lout, cin, cout, in_tok, out_tok, cache_hit_frac)
        if np.isfinite(rec["implied_margin_frac"]):
            below = [w for w, m in (("request", rec["implied_margin_frac"]), ("output", rec["output_margin_frac"]))
                     if m < 0]
            if below:
                rec["flag"] = f"{FLAG_BELOW_COST} ({', '.join(below)})"
        if grid:
            curve = []
            for s in grid:
                cs = cost_at(model, prec, stext, s)
                curve.append(margins(lin, lcached, lout, cs["cost_usd_per_m_input_tok"],
                                     cs["cost_usd_per_m_output_tok"], in_tok, out_tok, cache_hit_frac)[0])
            for s in want:
                rec[speed_column(float(s))] = curve[grid.index(float(s))]
            rec["zero_margin_tok_per_s_per_user"] = zero_margin_speed(grid, curve)
        rec.update({"workload": workload, "source": r.source, "as_of": str(r.as_of),
                    "also_in": "" if not isinstance(r.also_in, str) else r.also_in,
                    "note": "" if not isinstance(r.note, str) else r.note})
        rows.append(rec)
    curve_cols = ([speed_column(float(s)) for s in want] + ["zero_margin_tok_per_s_per_user"]) if grid else []
    cols = ["provider", "model", "list_usd_per_m_input_tok", "list_usd_per_m_cached_input_tok",
            "list_usd_per_m_output_tok", "list_usd_per_m_billed_input_tok", "billing", "off_peak_share_frac",
            "list_usd_per_m_blended_input_tok", "list_usd_per_m_blended_cached_input_tok",
            "list_usd_per_m_blended_output_tok", "weight_precision",
            "precision_source", "tok_per_s_per_user", "speed_source", "speed_basis", "spec_decode",
            "spec_source", "modelled_tok_per_s_per_user", "batch", "cost_usd_per_m_input_tok", "cost_usd_per_m_output_tok",
            "implied_margin_frac", "output_margin_frac", *curve_cols, "flag", "deployment", "cost_basis",
            "output_convention", "utilization_frac", "cache_hit_frac", "workload", "source", "as_of",
            "also_in", "note", "serving_mode", "concurrency", "electricity_usd_per_kwh"]
    out = pd.DataFrame(rows)
    for c in cols:
        if c not in out.columns:
            out[c] = np.nan
    out["flag"] = out["flag"].fillna("").astype(str)
    return out[cols]


def _refused_record(r: Any) -> dict[str, Any]:
    """The output row of a price row that cannot be priced: its listing, and why in ``flag``."""
    return {"provider": r.provider, "model": r.model, "list_usd_per_m_input_tok": r.input_usd_per_m_tok,
            "list_usd_per_m_cached_input_tok": r.cached_input_usd_per_m_tok,
            "list_usd_per_m_output_tok": r.output_usd_per_m_tok, "flag": f"{FLAG_REFUSED}: {r.refused_reason}",
            "source": r.source, "as_of": str(r.as_of), "also_in": r.also_in if isinstance(r.also_in, str) else "",
            "note": r.note if isinstance(r.note, str) else "", "billing": "", "precision_source": "",
            "speed_source": "", "speed_basis": "", "spec_decode": "", "spec_source": "", "deployment": "", "cost_basis": "", "serving_mode": ""}


def _cost_at(model: str, speed: float, system: str | None, deps: dict, spec: Any = None,
             precision: str | None = None, **kw: Any) -> dict[str, Any]:
    """Modelled cost of ``model`` at ``precision`` and ``speed`` tokens/s per user (one chain call)."""
    from . import chain

    out: dict[str, Any] = {"modelled_tok_per_s_per_user": np.nan, "batch": np.nan,
                           "cost_usd_per_m_input_tok": np.nan, "cost_usd_per_m_output_tok": np.nan,
                           "flag": "", "deployment": "", "cost_basis": "",
                           "output_convention": kw["output_convention"], "utilization_frac": np.nan,
                           "cache_hit_frac": kw["cache_hit_frac"],
                           "serving_mode": ("disaggregated" if kw.get("serving") == "disaggregated"
                                            else chain.serving_mode_label(kw.get("serving", "decode"))),
                           "concurrency": np.nan, "electricity_usd_per_kwh": np.nan}
    try:
        key = (model, precision, spec)  # spec: a text or a frozen SpecDecode, both hashable
        if key not in deps:
            deps[key] = _deployment(model, system, spec, precision)
        dep = deps[key]
    except DoesNotFitError as exc:
        out["flag"] = f"{FLAG_NO_FIT}: {exc}"
        return out
    out["deployment"] = dep.label()
    try:
        r = chain.price(deployment=dep, target_tok_per_s_per_user=speed, margin_frac=0.0, **kw)
    except TargetSpeedError as exc:
        fastest = str(exc).split("the fastest is ")[-1]
        out["flag"] = f"{FLAG_UNREACHABLE}: the fastest on this deployment is {fastest}"
        return out
    except DoesNotFitError as exc:
        out["flag"] = f"{FLAG_NO_FIT}: {exc}"
        return out
    out["deployment"] = r.deployment.label()  # the layout priced (chosen for the speed)
    out.update(modelled_tok_per_s_per_user=float(np.ravel(r.tok_per_s_per_user)[0]),
               batch=int(np.ravel(r.batch)[0]),
               cost_usd_per_m_input_tok=float(np.ravel(r.usd_per_m_effective_input_tok)[0]),
               cost_usd_per_m_output_tok=float(np.ravel(r.usd_per_m_output_tok)[0]),
               cost_basis=r.cost_basis, utilization_frac=float(np.ravel(np.asarray(r.utilization_frac, float))[0]),
               serving_mode=r.serving_mode, concurrency=float(r.concurrency),
               electricity_usd_per_kwh=float(np.ravel(np.asarray(r.electricity_usd_per_kwh, float))[0]))
    return out


def summary(df: "pd.DataFrame") -> dict[str, Any]:
    """Counts and the median implied margin of a :func:`market` table (and, where it was priced at
    ``speeds``, ``median_<speed column>``: the median over the rows priced at each speed)."""
    ok = df["implied_margin_frac"].notna()
    out = {"n_prices": int(len(df)), "n_models": int(df["model"].nunique()), "n_priced": int(ok.sum()),
           "median_implied_margin_frac": float(df.loc[ok, "implied_margin_frac"].median()) if ok.any() else np.nan,
           "n_below_cost": int(df["flag"].str.startswith(FLAG_BELOW_COST).sum()),
           "n_unreachable": int(df["flag"].str.startswith(FLAG_UNREACHABLE).sum()),
           "n_default_speed": int(df["speed_basis"].str.startswith("default", na=False).sum()),
           "n_refused": int(df["flag"].str.startswith(FLAG_REFUSED).sum())}
    for c in df.columns:
        if c.startswith("implied_margin_frac_at_"):
            col = df[c].astype(float)
            out[f"median_{c}"] = float(col.median()) if col.notna().any() else np.nan
    return out


__all__ = ["DEFAULT_SPEC", "DEFAULT_TOK_PER_S_PER_USER", "FALLBACK_SYSTEM", "HOURS_PER_WEEK", "OFF_PEAK_PRICE_COLUMNS",
           "REFERENCE_SYSTEM", "REQUIRED_COLUMNS", "billing_label", "blended_price_usd_per_m_tok",
           "check_share_frac", "flat_load_off_peak_share_frac", "load_prices", "margins", "market", "precision_kwargs", "row_precision", "served_precision",
           "served_spec", "served_speed", "ships_mtp_heads", "speed_column", "summary", "zero_margin_speed"]
