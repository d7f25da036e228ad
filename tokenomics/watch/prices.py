"""Watch metric 1: price cuts (and rises) for 100B+ models.

Data: ``datasets/api_prices.csv`` (list prices in USD per million tokens, each row with a capability
``tier``, a ``size_class`` and a model ``line`` that links successive prices of one product) and
``datasets/china_price_cuts.csv`` (CNY cuts converted with a sourced exchange rate per row).

* :func:`decline_rates` fits log(price) = a + b t by OLS (statsmodels) per tier or per provider
  and reports the decline factor per year ``exp(-b)`` with a confidence interval. A factor below 1
  means prices rose.
* :func:`cut_events` lists each price change within a model line, and the China cuts, with the
  change as a fraction (negative = cut, positive = rise).
* :func:`cost_floor` asks the econ chain (``tokenomics.chain``) for the modelled cost per million
  output tokens of the same model class on SD200-class and GB200-class systems; a system the
  chain cannot model gets NaN and a status saying why, never an invented number.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from .. import _validate as v
from .._display import Display
from ..econ.pricing import REFERENCE_TOK_PER_S_PER_USER
from ..errors import DataError, TokenomicsError
from ._events import as_dates, day, iso, parse_date, with_dates

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

PENDING = "pending perf core"

#: Price kinds used for trend fits (promotional and off-peak prices are left out).
TREND_KINDS = ("list", "listing")

SIZE_100B = ("100b+", "100b+ (assumed)")


#: The date columns a price row may carry, in the order :func:`price_date` prefers them.
DATE_COLUMNS = ("price_effective_date", "date", "as_of")


def price_date(df: "pd.DataFrame") -> tuple["pd.Series", "pd.Series"]:
    """The date each price took effect, and which column gave it.

    A price-cut metric needs the date a price took effect, not the date a catalogue was last
    edited: ``price_effective_date`` (the change that set the price, from a catalogue's history)
    where a row has one, else ``date`` (the provider's or source's own date), else ``as_of``.
    Used by the price-decline fits, the cut events and the hedonic price index alike.

    Parameters
    ----------
    df : DataFrame
        Price rows with at least one of :data:`DATE_COLUMNS`.

    Returns
    -------
    (pandas.Series, pandas.Series)
        The date text per row (empty where no column has one) and the column it came from
        (``price_effective_date``, ``date`` or ``as_of``; empty where none).
    """
    import pandas as pd

    have = [c for c in DATE_COLUMNS if c in df.columns]
    if not have:
        raise DataError("price rows have no date column; expected one of " + ", ".join(DATE_COLUMNS))
    text = pd.Series([""] * len(df), index=df.index, dtype=object)
    basis = pd.Series([""] * len(df), index=df.index, dtype=object)
    for c in have:
        col = df[c]
        val = col.where(col.notna(), "").astype(str).str.strip()
        if pd.api.types.is_datetime64_any_dtype(col):
            val = col.dt.strftime("%Y-%m-%d").where(col.notna(), "")
        take = (text == "") & (val != "") & (val.str.lower() != "nan")
        text[take] = val[take]
        basis[take] = c
    return text, basis


def date_basis_text(basis: Any) -> str:
    """How many rows were dated by each column, e.g. ``5 price_effective_date, 28 date``."""
    import pandas as pd

    n = pd.Series(list(basis)).value_counts()
    return ", ".join(f"{int(n[c])} {c}" for c in DATE_COLUMNS if c in n.index)


def with_price_dates(df: "pd.DataFrame", what: str) -> "pd.DataFrame":
    """``df`` with ``date`` as datetime64 and ``date_text``, ``date_parsed``, ``t_year``,
    ``date_precision``, ``date_basis`` (the column :func:`price_date` took) and ``row`` (as
    :func:`~tokenomics.watch._events.read_events`)."""
    if "date_text" in df.columns:
        text = df["date_text"]
        basis = df["date_basis"] if "date_basis" in df.columns else ["date"] * len(df)
    else:
        text, basis = price_date(df)
    dates, precs = [], []
    for i, d in enumerate(text):
        p = parse_date(d)
        if p is None:
            raise DataError(f"{what} row {i + 1} (line {i + 2}): bad or missing date {d!r}")
        dates.append(p[0])
        precs.append(p[1])
    df = with_dates(df.copy(), text, dates)
    df["date_precision"] = precs
    df["date_basis"] = list(basis)
    df["row"] = np.arange(1, len(df) + 1)
    return df


def load_prices(prices: "pd.DataFrame | None" = None) -> "pd.DataFrame":
    """API list prices with parsed dates (``t_year`` [yr]) and the file row number.

    Parameters
    ----------
    prices : DataFrame, optional
        A table with the columns of ``datasets/api_prices.csv``; default: that file.
    """
    from .. import catalog

    df = catalog.load("api_prices") if prices is None else prices
    catalog.check_columns(df, catalog.REGISTRY["api_prices"].required, what="api prices")
    return with_price_dates(df.reset_index(drop=True), "api_prices.csv")


#: Price kinds a price row may carry (only :data:`TREND_KINDS` enter the trend fits).
PRICE_KINDS = ("list", "listing", "promo", "off-peak")
#: Size classes a price row may carry (:data:`SIZE_100B` enter the 100B+ figures).
SIZE_CLASSES = ("100b+", "100b+ (assumed)", "<100b", "unknown")
#: Most bad rows one error names.
MAX_BAD_ROWS_NAMED = 5


def read_prices(source: Any, what: str = "prices file") -> "pd.DataFrame":
    """A user's API price list, read and checked row by row (for ``watch --prices``).

    Parameters
    ----------
    source : path or DataFrame
        A CSV with the columns of ``datasets/api_prices.csv`` (read with the size-capped reader
        :func:`tokenomics.io.read_csv`), or such a table.
    what : str
        How messages name it.

    Returns
    -------
    pandas.DataFrame
        The rows as given (prices as floats), ready for :func:`load_prices` and the dashboard.

    Raises
    ------
    DataError
        Missing columns, no rows, or bad rows: one message naming each bad row (row, file line,
        column and what was expected), up to :data:`MAX_BAD_ROWS_NAMED` of them and a count of the
        rest. A row is bad when its date cannot be read, its provider or model is empty, its
        ``price_kind`` or ``size_class`` is not a known value, a price is not a number >= 0, or
        ``blended_usd_per_m_tok`` is missing or zero.
    """
    import difflib

    import pandas as pd

    from .. import catalog
    from ..io import blank_cells, numeric_cell_problems, read_csv

    df = read_csv(source, what, required=catalog.REGISTRY["api_prices"].required)
    label = what if isinstance(source, pd.DataFrame) else f"{what} {str(source)!r}"
    df = df.reset_index(drop=True)
    bad: dict[int, str] = {}

    def flag(mask, msgs) -> None:
        for i, msg in zip(np.flatnonzero(np.asarray(mask, bool)), msgs):
            bad.setdefault(int(i), msg)

    text, _ = price_date(df)
    flag([parse_date(t) is None for t in text],
         [f"date {t!r} cannot be read; expected YYYY-MM-DD (or YYYY-MM) in price_effective_date, date or as_of"
          for t in text[[parse_date(t) is None for t in text]]])
    for col in ("provider", "model", "tier"):
        empty = blank_cells(df[col])
        flag(empty, [f"{col} is empty"] * int(empty.sum()))
    for col, choices in (("price_kind", PRICE_KINDS), ("size_class", SIZE_CLASSES)):
        vals = df[col].where(~blank_cells(df[col]), "").astype(str).str.strip()
        off = ~vals.isin(choices)
        msgs = []
        for x in vals[off]:
            close = difflib.get_close_matches(x, choices, n=1)
            msgs.append(f"{col} must be one of {', '.join(choices)}, got {x!r}"
                        + (f". Did you mean {close[0]!r}?" if close else ""))
        flag(off, msgs)
    for col in ("input_usd_per_m_tok", "output_usd_per_m_tok", "blended_usd_per_m_tok"):
        blended = col == "blended_usd_per_m_tok"
        vals, probs = numeric_cell_problems(df, col, minimum=0.0, strict_minimum=blended, required=blended)
        flag(probs != "", [(p.split(", got")[0] if "is missing" in p else p) + "; expected USD per million tokens"
                           for p in probs[probs != ""]])
        df[col] = vals
    if bad:
        rows = sorted(bad)
        named = "; ".join(f"row {i + 1} (line {i + 2}): {bad[i]}" for i in rows[:MAX_BAD_ROWS_NAMED])
        more = f"; and {len(rows) - MAX_BAD_ROWS_NAMED} more" if len(rows) > MAX_BAD_ROWS_NAMED else ""
        raise DataError(f"{label}: {len(rows)} bad row{'s' if len(rows) > 1 else ''}: {named}{more}")
    return df


#: Fewest dated 100B+ list prices a price list needs for the price metric's decline and forecast.
MIN_100B_PRICES = 3


def check_price_metric(prices: "pd.DataFrame", label: str = "prices file") -> None:
    """Raise a one-line :class:`DataError` unless ``prices`` holds what the price metric fits:
    at least :data:`MIN_100B_PRICES` list prices of 100B+ models (``size_class`` in
    :data:`SIZE_100B`, ``price_kind`` in :data:`TREND_KINDS`) on two or more dates."""
    big = prices[prices["size_class"].isin(SIZE_100B) & prices["price_kind"].isin(TREND_KINDS)]
    dates = set(price_date(big)[0])
    if len(big) < MIN_100B_PRICES or len(dates) < 2:
        raise DataError(f"{label}: the price metric follows 100B+ models and needs at least {MIN_100B_PRICES} "
                        f"list prices (price_kind list or listing) with size_class {' or '.join(map(repr, SIZE_100B))} "
                        f"on two or more dates; found {len(big)} on {len(dates)} date(s)")


def load_china_cuts(cuts: "pd.DataFrame | None" = None) -> "pd.DataFrame":
    """China price cuts (CNY and USD per million tokens) with parsed dates."""
    from .. import catalog

    df = catalog.load("china_price_cuts") if cuts is None else cuts
    catalog.check_columns(df, catalog.REGISTRY["china_price_cuts"].required, what="china price cuts")
    return with_price_dates(df.reset_index(drop=True), "china_price_cuts.csv")


def _ols_decline(t: np.ndarray, price: np.ndarray, ci: float) -> dict[str, float]:
    import statsmodels.api as sm

    x = sm.add_constant(t - t.mean())
    res = sm.OLS(np.log(price), x).fit()
    b = float(res.params[1])
    lo_b, hi_b = (float(z) for z in res.conf_int(alpha=1 - ci)[1])
    return {
        "slope_per_year": b,
        "decline_factor_per_year": float(np.exp(-b)),
        "decline_factor_lo": float(np.exp(-hi_b)),
        "decline_factor_hi": float(np.exp(-lo_b)),
        "change_frac_per_year": float(np.exp(b) - 1.0),
        "r2": float(res.rsquared),
    }


def decline_rates(
    prices: "pd.DataFrame | None" = None,
    by: str = "tier",
    size_class: tuple[str, ...] | None = None,
    ci: float = 0.9,
    min_points: int = 3,
) -> "pd.DataFrame":
    """Log-linear price decline per year, per group, with a confidence interval.

    Fits ``ln(blended_usd_per_m_tok) = a + b * t`` by OLS within each group, on list prices
    (promotional and off-peak rows excluded). ``decline_factor_per_year = exp(-b)``: 10 means
    prices fall 10x a year; 0.5 means they double. The interval is the OLS interval on ``b``.
    Each price is placed at the date it took effect (:func:`price_date`).

    Parameters
    ----------
    prices : DataFrame, optional
        Price table (default ``datasets/api_prices.csv``).
    by : {"tier", "provider", "all"}
        Grouping column (``all``: one pooled fit).
    size_class : tuple of str, optional
        Keep only these ``size_class`` values; default: all rows for ``by="tier"`` and the
        100B+ rows (published or assumed) for ``by="provider"``.
    ci : float
        Confidence level (0-1) [frac]; 0.9 matches Epoch AI's published intervals.
    min_points : int
        Groups with fewer dated prices get NaN rates and a note.

    Returns
    -------
    pandas.DataFrame
        One row per group: ``group``, ``n``, ``first_date``, ``last_date``,
        ``decline_factor_per_year`` and its ``_lo``/``_hi``, ``change_frac_per_year``, ``r2``,
        ``rows`` (file rows used), ``dates`` (how many rows each date column dated, see
        :func:`price_date`), ``note``.
    """
    import pandas as pd

    v.one_of(by, "by", ("tier", "provider", "all"))
    v.fraction(ci, "ci", allow_zero=False, allow_one=False)
    v.count(min_points, "min_points", minimum=2)
    df = load_prices(prices)
    if size_class is None and by == "provider":
        size_class = SIZE_100B
    df = df[df["price_kind"].isin(TREND_KINDS) & (df["blended_usd_per_m_tok"] > 0)]
    if size_class is not None:
        df = df[df["size_class"].isin(size_class)]
    if by == "all":
        df = df.assign(all="pooled")
    out = []
    for g, sub in df.groupby(by, sort=True):
        rec: dict[str, Any] = {
            "by": by,
            "group": g,
            "scope": "all sizes" if size_class is None else "size_class in " + "/".join(size_class),
            "n": len(sub),
            "first_date": day(sub["date_parsed"].min()),
            "last_date": day(sub["date_parsed"].max()),
            "rows": " ".join(str(r) for r in sub["row"]),
            "dates": date_basis_text(sub["date_basis"]),
        }
        if len(sub) >= min_points and np.ptp(sub["t_year"].to_numpy()) > 0:
            rec.update(_ols_decline(sub["t_year"].to_numpy(float), sub["blended_usd_per_m_tok"].to_numpy(float), ci))
            rec["note"] = ""
        else:
            rec.update({k: np.nan for k in ("slope_per_year", "decline_factor_per_year", "decline_factor_lo",
                                            "decline_factor_hi", "change_frac_per_year", "r2")})
            rec["note"] = f"fewer than {min_points} dated prices"
        out.append(rec)
    return as_dates(pd.DataFrame(out), ("first_date", "last_date"))


def cut_events(prices: "pd.DataFrame | None" = None, china: "pd.DataFrame | None" = None) -> "pd.DataFrame":
    """Every price change within a model line, plus the China cuts.

    Within a ``line`` of ``api_prices.csv`` (successive prices of one product, e.g. ``o3`` or
    ``claude-opus``), each price is compared with the previous one (blended 3:1 USD per million
    tokens). ``change_frac = after / before - 1``: -0.8 is an 80 % cut, +1.0 a doubling.

    Returns
    -------
    pandas.DataFrame
        ``date``, ``region`` (global|china), ``provider``, ``line``, ``model_before``,
        ``model_after``, ``price_before_usd_per_m_tok``, ``price_after_usd_per_m_tok``,
        ``change_frac``, ``direction`` (cut|rise|flat), ``size_class``, ``source``, ``rows``,
        ``date_precision`` (day, month or year: a month is dated its 15th), ``token_type``
        (``blended`` for the global lines; China's rows as their file states it: ``output``,
        ``input (cache-miss)``, ``cache-hit input`` or ``all``), ``date_basis`` (the date column
        used, :func:`price_date`).
    """
    import pandas as pd

    df = load_prices(prices)
    df = df[df["line"].fillna("").astype(str) != ""]
    out = []
    for line, sub in df.sort_values("date_parsed", kind="stable").groupby("line", sort=True):
        prev = None
        for r in sub.itertuples(index=False):
            if prev is not None:
                before, after = float(prev.blended_usd_per_m_tok), float(r.blended_usd_per_m_tok)
                ch = after / before - 1.0
                out.append({
                    "date": day(r.date_parsed), "region": "global", "provider": r.provider, "line": line,
                    "model_before": prev.model, "model_after": r.model,
                    "price_before_usd_per_m_tok": before, "price_after_usd_per_m_tok": after,
                    "change_frac": ch, "size_class": r.size_class, "source": r.source,
                    "rows": f"api_prices {prev.row},{r.row}", "date_precision": r.date_precision,
                    "token_type": "blended", "date_basis": r.date_basis,
                })
            prev = r
    ch_df = load_china_cuts(china)
    for r in ch_df.itertuples(index=False):
        before, after = r.price_before_usd_per_m_tok, r.price_after_usd_per_m_tok
        if pd.notna(r.cut_frac):
            ch = -float(r.cut_frac)
        elif pd.notna(before) and pd.notna(after) and before > 0:
            ch = after / before - 1.0
        else:
            continue
        out.append({
            "date": day(r.date_parsed), "region": "china", "provider": r.provider, "line": "",
            "model_before": r.model, "model_after": r.model,
            "price_before_usd_per_m_tok": before, "price_after_usd_per_m_tok": after,
            "change_frac": ch, "size_class": "", "source": r.source,
            "rows": f"china_price_cuts {r.row}", "date_precision": r.date_precision,
            "token_type": str(r.token_type), "date_basis": r.date_basis,
        })
    res = pd.DataFrame(out).sort_values("date", kind="stable").reset_index(drop=True)
    res["direction"] = np.where(res["change_frac"] < -1e-9, "cut", np.where(res["change_frac"] > 1e-9, "rise", "flat"))
    return as_dates(res, ("date",))


#: Systems compared for the modelled cost floor: (label, system name in ``datasets/systems.csv``).
#: SD200 Ultra itself has no public price; the SD200-class floor is priced on the domestic
#: supernode that has one (CloudMatrix 384: USD 8.2 M claimed upper bound, datasets/tco_params.csv).
FLOOR_SYSTEMS: tuple[tuple[str, str], ...] = (("sd200-class", "cloudmatrix-384"), ("gb200-class", "gb200-nvl72"))
#: Older-generation system used for the modelled cost decline (``lag``): same model, same chain.
LAG_BASE_SYSTEM = "dgx-h200"
#: The floor is the cheapest operating point that still serves this many tokens/s per user
#: (``tokenomics.econ.pricing.REFERENCE_TOK_PER_S_PER_USER``: InferenceX's DeepSeek-R1 quotes).
FLOOR_MIN_TOK_PER_S_PER_USER = REFERENCE_TOK_PER_S_PER_USER
#: Every floor and the lag base are priced on this one cost basis (bottom-up capex + opex; every
#: floor system's chip has a sourced capex in ``datasets/tco_params.csv``), so a decline factor
#: compares throughput and capex, not survey tiers against bottom-up estimates.
FLOOR_COST_BASIS = "bottom-up"
#: Every floor, the lag base and the cost trend are served disaggregated (prefill and decode
#: instances with KV transfer, :func:`tokenomics.perf.serving.serve_disaggregated`): how the
#: cheapest large MoE fleets run (DeepSeek's own, Dynamo, SGLang PD), through the serving model
#: ``validate-serving`` scores.
FLOOR_SERVING = "disaggregated"
#: Speeds per user at which the modelled cost trend is also reported [tokens/s]: DeepSeek's published
#: fleet average (20-22 tok/s, day-6 post; ``datasets/market_prices.csv`` ``speed_source``),
#: InferenceX's DeepSeek-R1 cost point (:data:`FLOOR_MIN_TOK_PER_S_PER_USER`) and InferenceX's B200
#: quote at 50 tok/s/user (``../shared/reference/economics_notes.md``).
COST_TREND_SPEEDS: tuple[float, ...] = (20.0, float(FLOOR_MIN_TOK_PER_S_PER_USER), 50.0)
#: Speculative decoding the cost trend is reported with: none, and the ``mtp`` preset (one MTP draft
#: where the checkpoint ships the heads: DeepSeek-V3's does).
COST_TREND_SPECS: tuple[str | None, ...] = (None, "mtp")


def cost_floor(model: str = "deepseek-v3", systems=FLOOR_SYSTEMS, execution: str = "engine") -> "pd.DataFrame":
    """Modelled cost per million output tokens of a 100B+ model on SD200- and GB200-class systems.

    Calls :func:`tokenomics.chain.price` on the deployment :func:`tokenomics.deployment.resolve`
    picks for the named multi-chip ``system`` with ``margin_frac=0`` (cost, not price) and
    ``target_tok_per_s_per_user = FLOOR_MIN_TOK_PER_S_PER_USER``: the cheapest layout and batch
    that fit and still serve each user that fast, as ``tokenomics price --system SYSTEM -m MODEL
    --target-tok-s-user 35 --margin 0`` prints it. A system the chain cannot model (no price,
    does not fit, too slow for the target) gets NaN and a ``status`` saying why; no number is
    invented here.

    Returns
    -------
    pandas.DataFrame
        ``system_class``, ``system``, ``accelerator``, ``n_chips``, ``year``, ``model``,
        ``cost_usd_per_m_tok``, ``batch``, ``tok_per_s_per_user``, ``status``.
    """
    import pandas as pd

    rows = [_system_cost(label, name, model, execution) for label, name in systems]
    return pd.DataFrame(rows)


def system_cost(system: str, model: str = "deepseek-v3", tok_per_s_per_user: float = FLOOR_MIN_TOK_PER_S_PER_USER,
                spec: str | None = None, execution: str = "engine") -> dict[str, Any]:
    """Modelled cost of ``model`` on a catalogued multi-chip ``system`` at a speed per user, as the
    cost floor prices it (cheapest layout and batch, disaggregated, bottom-up, no margin).

    Returns
    -------
    dict
        ``system, accelerator, n_chips, year, model, cost_usd_per_m_tok`` [USD per million output
        tokens], ``batch, tok_per_s_per_user, parallel, cost_basis, status`` (``modelled`` or why not).
    """
    return _system_cost(system, system, model, execution, float(tok_per_s_per_user), spec)


def _system_cost(label: str, system: str, model: str, execution: str,
                 tok_per_s_per_user: float = FLOOR_MIN_TOK_PER_S_PER_USER, spec: str | None = None) -> dict[str, Any]:
    """The cost record of ``model`` on ``system`` at a speed per user (a copy: the floor, the lag and
    the cost trend price the same points, each once per process; every input is a bundled dataset)."""
    return dict(_system_cost_once(label, system, model, execution, float(tok_per_s_per_user), spec))


@functools.lru_cache(maxsize=256)
def _system_cost_once(label: str, system: str, model: str, execution: str, tok_per_s_per_user: float,
                      spec: str | None) -> dict[str, Any]:
    from .. import catalog

    rec: dict[str, Any] = {"system_class": label, "system": system, "accelerator": "", "n_chips": np.nan,
                           "year": np.nan, "model": model, "cost_usd_per_m_tok": np.nan, "batch": np.nan,
                           "tok_per_s_per_user": np.nan, "parallel": "", "cost_basis": "", "status": PENDING}
    try:
        sysrow = catalog.load("systems").loc[system]
        acc = str(sysrow["accelerator"])
        rec.update(accelerator=acc, n_chips=int(sysrow["n_chips"]))
        accs = catalog.load("accelerators")
        if acc in accs.index and "year" in accs.columns:
            rec["year"] = float(accs.loc[acc, "year"])
        from .. import chain
        from ..deployment import resolve

        # the production layout the resolver picks (wide EP with attention DP for MoE models),
        # or another of its layouts where that one is cheaper at the target speed
        dep = resolve(model, system=system, execution=execution, spec=spec)
        r = chain.price(deployment=dep, target_tok_per_s_per_user=tok_per_s_per_user, serving=FLOOR_SERVING,
                        margin_frac=0.0, on_oom="mask", cost=FLOOR_COST_BASIS)
        rec["cost_basis"] = r.cost_basis
    except TokenomicsError as exc:
        rec["status"] = f"{PENDING} ({exc})"[:240]
        return rec
    except (AttributeError, KeyError) as exc:
        rec["status"] = f"{PENDING} ({type(exc).__name__}: {exc})"[:160]
        return rec
    p = r.deployment.parallel
    rec["parallel"] = f"tp{p.tp}-ep{p.ep}"
    cost = float(np.max(r.usd_per_m_output_tok))
    if not np.isfinite(cost):
        rec["status"] = "does not fit at the batch that meets the target speed"
        return rec
    rec.update(cost_usd_per_m_tok=cost, batch=float(np.max(r.batch)),
               tok_per_s_per_user=float(np.max(r.tok_per_s_per_user)), status="modelled")
    return rec


@dataclass(frozen=True, repr=False)
class PriceWatch(Display):
    """Result of :func:`price_watch` (all tables are DataFrames)."""

    _display_columns = ("by", "group", "n", "first_date", "last_date", "decline_factor_per_year",
                        "decline_factor_lo", "decline_factor_hi")

    rates_by_tier: Any
    rates_by_provider: Any
    events: Any
    floor: Any
    headroom: Any
    as_of: str
    lag: dict = field(default_factory=dict)
    cost_trend: Any = None

    def to_frame(self) -> "pd.DataFrame":
        """Decline rates by tier and by provider in one table."""
        import pandas as pd

        return pd.concat([self.rates_by_tier, self.rates_by_provider], ignore_index=True)


def headroom(prices: "pd.DataFrame | None", floor: "pd.DataFrame", size_class=SIZE_100B) -> "pd.DataFrame":
    """List price over modelled cost for the latest price of each 100B+ line.

    ``headroom = output list price / modelled cost per million output tokens`` (cheapest system);
    NaN while the cost floor is pending.
    """
    df = load_prices(prices)
    df = df[df["size_class"].isin(size_class) & df["price_kind"].isin(TREND_KINDS)]
    df = df.sort_values("date_parsed").groupby("provider", sort=True).tail(1)
    cost = floor["cost_usd_per_m_tok"].min() if len(floor) else np.nan
    price = df["output_usd_per_m_tok"].where(df["output_usd_per_m_tok"].notna(), df["blended_usd_per_m_tok"])
    out = df[["date", "provider", "model", "row"]].copy()
    out["list_usd_per_m_output_tok"] = price.to_numpy(float)
    out["cost_floor_usd_per_m_tok"] = cost
    out["headroom_x"] = out["list_usd_per_m_output_tok"] / cost if np.isfinite(cost) and cost > 0 else np.nan
    out["status"] = "modelled" if np.isfinite(cost) else PENDING
    return out.reset_index(drop=True)


def lag_check(observed: Any, floor: "pd.DataFrame", model: str = "deepseek-v3",
              base_system: str = LAG_BASE_SYSTEM, execution: str = "engine") -> dict[str, Any]:
    """Do observed 100B+ price declines lag the modelled cost decline?

    Modelled cost decline per year = (cost on ``base_system`` / cheapest floor cost) ** (1 / years
    between their accelerators' launch years), same model and chain, both on
    :data:`FLOOR_COST_BASIS` at no less than :data:`FLOOR_MIN_TOK_PER_S_PER_USER` tokens/s per user
    (a comparison across cost bases is refused). ``lags`` is True when the observed decline
    factor's upper CI bound is below the modelled factor.
    """
    out = {"observed_decline_factor_per_year_100b": float(observed["decline_factor_per_year"]),
           "observed_lo": float(observed["decline_factor_lo"]), "observed_hi": float(observed["decline_factor_hi"]),
           "observed_dates": str(observed.get("dates", "")),
           "modelled_cost_decline_factor_per_year": np.nan, "lags": None, "status": PENDING}
    ok = floor[floor["status"] == "modelled"]
    if ok.empty:
        return out
    best = ok.loc[ok["cost_usd_per_m_tok"].idxmin()]
    base = _system_cost("base", base_system, model, execution)
    f, why = cost_decline_factor(base, best)
    if why:
        out["status"] = why
        return out
    out.update(modelled_cost_decline_factor_per_year=float(f), lags=bool(out["observed_hi"] < f),
               cost_basis=best["cost_basis"], min_tok_per_s_per_user=FLOOR_MIN_TOK_PER_S_PER_USER,
               status=f"modelled: {base_system} ({int(base['year'])}) -> {best['system']} ({int(best['year'])}), "
                      f"{best['cost_basis']} cost, >= {FLOOR_MIN_TOK_PER_S_PER_USER:g} tok/s/user")
    return out


def cost_decline_factor(base: Any, best: Any) -> tuple[float, str]:
    """Modelled cost decline per year from the older ``base`` system to the cheaper ``best`` one.

    ``(base cost / best cost) ** (1 / years between their accelerators' launch years)`` (both
    :func:`_system_cost` records); ``(nan, why)`` where either is not modelled, the years do not
    order them, or their cost bases differ (a comparison across bases is refused).
    """
    if base["status"] != "modelled" or best["status"] != "modelled" \
            or not (np.isfinite(base["year"]) and np.isfinite(best["year"])) or best["year"] <= base["year"]:
        return float("nan"), f"no modelled decline ({base['status']})"
    if base.get("cost_basis") != best.get("cost_basis"):
        return float("nan"), (f"no modelled decline: cost bases differ ({base['system']}: {base.get('cost_basis')}, "
                              f"{best['system']}: {best.get('cost_basis')})")
    return float((base["cost_usd_per_m_tok"] / best["cost_usd_per_m_tok"])
                 ** (1.0 / (best["year"] - base["year"]))), ""


def cost_trend(model: str = "deepseek-v3", speeds: Any = COST_TREND_SPEEDS, specs: Any = COST_TREND_SPECS,
               systems=FLOOR_SYSTEMS, base_system: str = LAG_BASE_SYSTEM,
               execution: str = "engine") -> "pd.DataFrame":
    """The modelled cost decline per year at several speeds per user, with and without speculative
    decoding: the figure :func:`lag_check` gives at one speed, with the assumptions it swings on.

    For each speed and speculative-decoding setting, the cost on ``base_system`` and on each floor
    system (the cheapest layout and batch that still serve each user that fast, bottom-up, as
    :func:`cost_floor`), and :func:`cost_decline_factor` from the base to the cheapest.

    Returns
    -------
    pandas.DataFrame
        ``tok_per_s_per_user`` [tokens/s], ``spec``, ``base_system``, ``base_usd_per_m_output_tok``,
        ``floor_system``, ``floor_usd_per_m_output_tok``, ``modelled_cost_decline_factor_per_year``,
        ``status``.
    """
    import pandas as pd

    rows = []
    for spec in specs:
        for speed in speeds:
            base = _system_cost("base", base_system, model, execution, float(speed), spec)
            floors = [_system_cost(lab, name, model, execution, float(speed), spec) for lab, name in systems]
            ok = [f for f in floors if f["status"] == "modelled"]
            best = min(ok, key=lambda f: f["cost_usd_per_m_tok"]) if ok else floors[0]
            f, why = cost_decline_factor(base, best)
            rows.append({"tok_per_s_per_user": float(speed), "spec": spec or "none", "base_system": base_system,
                         "base_usd_per_m_output_tok": base["cost_usd_per_m_tok"],
                         "floor_system": best["system"], "floor_usd_per_m_output_tok": best["cost_usd_per_m_tok"],
                         "modelled_cost_decline_factor_per_year": f,
                         "status": why or f"modelled: {base_system} ({int(base['year'])}) -> {best['system']} "
                                         f"({int(best['year'])}), {best['cost_basis']} cost"})
    return pd.DataFrame(rows)


def price_watch(prices: "pd.DataFrame | None" = None, china: "pd.DataFrame | None" = None,
                ci: float = 0.9, model: str = "deepseek-v3") -> PriceWatch:
    """All of watch metric 1: rates per tier/provider, cut events, cost floor, headroom, lag.

    ``lag`` compares the observed decline factor of 100B+ list prices with the modelled cost
    decline; it stays ``pending perf core`` until the chain can model more than one hardware
    generation. ``cost_trend`` gives that modelled decline at :data:`COST_TREND_SPEEDS` with and
    without speculative decoding (:func:`cost_trend`).
    """
    p = load_prices(prices)
    raw = p.drop(columns=["date_parsed", "t_year", "date_precision", "row"])
    by_tier = decline_rates(raw, by="tier", ci=ci)
    by_prov = decline_rates(raw, by="provider", ci=ci)
    ev = cut_events(raw, china)
    fl = cost_floor(model)
    hr = headroom(raw, fl)
    big = decline_rates(raw, by="all", size_class=SIZE_100B, ci=ci).iloc[0]
    lag = lag_check(big, fl, model)
    trend = cost_trend(model)
    # the newest price or price change of either table (China's changes are dated apart)
    as_of = max(iso(float(p["t_year"].max())), day(ev["date"].max()))
    return PriceWatch(by_tier, by_prov, ev, fl, hr, as_of=as_of, lag=lag, cost_trend=trend)


def forecast_price(prices: "pd.DataFrame | None" = None, years_ahead: float = 1.0, ci: float = 0.9,
                   size_class: tuple[str, ...] = SIZE_100B) -> dict[str, float]:
    """Pooled log-linear forecast of the 100B+ blended list price ``years_ahead`` after the newest row.

    Returns the predicted median price [USD per million tokens] with an OLS prediction interval
    (``lo``/``hi``), the target decimal year and the number of prices used.
    """
    import statsmodels.api as sm

    v.positive(years_ahead, "years_ahead")
    df = load_prices(prices)
    df = df[df["size_class"].isin(size_class) & df["price_kind"].isin(TREND_KINDS) & (df["blended_usd_per_m_tok"] > 0)]
    t = df["t_year"].to_numpy(float)
    t0 = t.mean()
    res = sm.OLS(np.log(df["blended_usd_per_m_tok"].to_numpy(float)), sm.add_constant(t - t0)).fit()
    target = float(t.max() + years_ahead)
    pr = res.get_prediction(np.array([[1.0, target - t0]])).summary_frame(alpha=1 - ci)
    return {"t_year": target, "usd_per_m_tok": float(np.exp(pr["mean"].iloc[0])),
            "lo": float(np.exp(pr["obs_ci_lower"].iloc[0])), "hi": float(np.exp(pr["obs_ci_upper"].iloc[0])),
            "n": int(len(df))}
