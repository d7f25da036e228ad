"""List prices held against modelled cost: what serving each sourced API price costs, and the margin.

For each row of a market price table (``datasets/market_prices.csv``: provider, model, USD per
million input / cached input / output tokens, the provider's output speed where published), the
modelled cost to serve that model at that speed per user (:func:`tokenomics.chain.price` with
``target_tok_per_s_per_user``: the cheapest batch that still serves each user that fast) on a
stated deployment -- the resolver's default layout on a reference system (``dgx-h200``; a model
that does not fit there goes to ``gb200-nvl72``) -- and the implied gross margin::

    implied_margin_frac = 1 - modelled cost of a request / list price of that request

over the workload mix (``chat``: 1,024 input and 1,024 output tokens), input and output tokens
each at their own price; ``output_margin_frac`` compares output tokens alone. Where the speed
is not published, :data:`DEFAULT_TOK_PER_S_PER_USER` is used and ``speed_basis`` says so. A
price below the modelled cost is flagged (``flag``), a speed the deployment cannot reach is
said in the row (costs NaN), nothing is dropped. Every row names its ``cost_basis``,
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
from .errors import DataError, DoesNotFitError, TargetSpeedError, unknown_name

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

#: Columns a market price table must have.
REQUIRED_COLUMNS = ("provider", "model", "input_usd_per_m_tok", "output_usd_per_m_tok", "source", "as_of")
#: Columns read when present.
OPTIONAL_COLUMNS = ("cached_input_usd_per_m_tok", "tok_per_s_per_user", "speed_source", "quantization",
                    "also_in", "note")
#: Reference system for every row (the resolver picks layout, plan, precisions on it).
REFERENCE_SYSTEM = "dgx-h200"
#: Where a model does not fit the reference system.
FALLBACK_SYSTEM = "gb200-nvl72"
#: Speed per user priced where a provider publishes none [tokens/s]: the interactivity at which
#: InferenceX quotes DeepSeek-R1 serving costs (``tokenomics.econ.pricing.REFERENCE_TOK_PER_S_PER_USER``).
DEFAULT_TOK_PER_S_PER_USER = REFERENCE_TOK_PER_S_PER_USER

FLAG_BELOW_COST = "below modelled cost"
FLAG_UNREACHABLE = "speed unreachable"
FLAG_NO_FIT = "does not fit"


def load_prices(prices: "pd.DataFrame | str | Path | None" = None) -> "pd.DataFrame":
    """The market price table, validated (bundled ``datasets/market_prices.csv`` by default).

    Parameters
    ----------
    prices : DataFrame or path, optional
        Your own table with :data:`REQUIRED_COLUMNS` (and any of :data:`OPTIONAL_COLUMNS`).

    Raises
    ------
    DataError
        Missing columns; a missing output price; a price or speed that is text, non-finite or
        not positive (an empty input, cached input or speed cell means 'not given'); a cached
        input price above the input price; a missing or unreadable ``as_of`` or ``date``
        (``YYYY-MM-DD``, ``YYYY-MM`` or ``YYYY``); an unreadable file (one line naming the first
        bad row).
    UnknownNameError
        A model not in ``datasets/models.csv``.
    """
    import pandas as pd

    from . import catalog
    from .dates import parse_date
    from .io import blank_cells, exact_floats, numeric_column

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
    catalog.check_columns(df, REQUIRED_COLUMNS, what)
    if df.empty:
        raise DataError(f"{what} has no rows")
    for c in OPTIONAL_COLUMNS:
        if c not in df.columns:
            df[c] = np.nan
    for c in ("input_usd_per_m_tok", "cached_input_usd_per_m_tok", "output_usd_per_m_tok", "tok_per_s_per_user"):
        df[c] = numeric_column(df, c, what, minimum=0.0, strict_minimum=True,
                               required=c == "output_usd_per_m_tok").to_numpy()
    dearer = np.flatnonzero((df["cached_input_usd_per_m_tok"] > df["input_usd_per_m_tok"]).to_numpy())
    if dearer.size:
        i = int(dearer[0])
        raise DataError(f"{what} row {i + 1} (line {i + 2}): cached_input_usd_per_m_tok must not exceed "
                        f"input_usd_per_m_tok (a cache hit is not dearer than a miss), got "
                        f"{df['cached_input_usd_per_m_tok'].iloc[i]:g} > {df['input_usd_per_m_tok'].iloc[i]:g}")
    for c in ("as_of", "date"):  # as_of is required; an empty effective date means 'not given'
        blank = blank_cells(df[c]).to_numpy() if c in df.columns else ()
        for i, (d, empty) in enumerate(zip(df.get(c, ()), blank)):
            if (c == "as_of" or not empty) and parse_date(d) is None:
                bad = f"missing {c}" if empty else f"bad {c} {str(d)!r}"
                raise DataError(f"{what} row {i + 1} (line {i + 2}): {bad}; expected YYYY-MM-DD, YYYY-MM or YYYY")
    for c in ("provider", "source"):  # who sells it, and where the price was read: both required
        empty = np.flatnonzero(blank_cells(df[c]).to_numpy())
        if empty.size:
            i = int(empty[0])
            raise DataError(f"{what} row {i + 1} (line {i + 2}): {c} is empty; expected "
                            + ("the provider's name" if c == "provider" else "where the price was published (a URL)"))
    if where != "datasets/market_prices.csv":  # a price list of yours: not dated after today
        import datetime as _dt

        today = np.datetime64(_dt.datetime.now(_dt.timezone.utc).date(), "D")
        for c in ("as_of", "date"):
            for i, d in enumerate(df.get(c, ())):
                parsed = parse_date(d)
                if parsed is not None and parsed[0] > today:
                    raise DataError(f"{what} row {i + 1} (line {i + 2}): {c} {str(d)!r} is after today ({today}); "
                                    "expected the date the price was read")
    known = set(catalog.model_names())
    for m in df["model"].astype(str):
        if m not in known:
            raise unknown_name("model (in the market price table)", m, known)
    return df.reset_index(drop=True)


def _deployment(model: str, system: str | None, spec: Any = None):
    """The resolver's deployment of ``model`` on the reference system (or the fallback), with
    ``spec`` (:func:`market`)."""
    from .catalog import model as _model
    from .deployment import resolve

    if spec is not None and spec.method == "mtp" and not _model(model).mtp_modules:
        spec = None  # MTP where the checkpoint ships the heads; the others are priced without
    if system is not None:
        return resolve(model, system=system, spec=spec)
    try:
        return resolve(model, system=REFERENCE_SYSTEM, spec=spec)
    except DoesNotFitError:
        return resolve(model, system=FALLBACK_SYSTEM, spec=spec)


def market(prices: "pd.DataFrame | str | Path | None" = None, *, system: str | None = None,
           default_tok_per_s_per_user: float = DEFAULT_TOK_PER_S_PER_USER, workload: str = "chat",
           output_convention: str = "decode-only", cost: Any = None, utilization_frac: Any = None,
           cache_hit_frac: float = 0.0, spec: str | None = None) -> "pd.DataFrame":
    """Each list price beside the modelled cost to serve at the provider's speed, and the margin.

    Parameters
    ----------
    prices : DataFrame or path, optional
        Market price table (:func:`load_prices`); default the bundled one.
    system : str, optional
        Price every row on this catalogued system (default :data:`REFERENCE_SYSTEM`, or
        :data:`FALLBACK_SYSTEM` for a model that does not fit it).
    default_tok_per_s_per_user : float
        Speed priced where a row publishes none [tokens/s per user].
    workload : str
        Request mix for the margin and the context length (``datasets/workloads.csv``).
    output_convention : {"decode-only", "all-in"}
        How the cost of output tokens is counted (:data:`tokenomics.chain.OUTPUT_CONVENTIONS`).
    cost : optional
        Cost basis (default bottom-up; see :func:`tokenomics.econ.tco.cost_model`).
    utilization_frac : float, optional
        Share of chip-hours sold (0, 1] (default 1: InferenceX's convention).
    cache_hit_frac : float
        Share of input tokens served from a prefix cache [0-1] (default 0); the modelled input
        cost is then the effective one.
    spec : str, optional
        Speculative decoding of every deployment (a preset or ``METHOD:GAMMA:ALPHA``, as
        :func:`tokenomics.deployment.resolve` takes it); an MTP method applies to the models whose
        checkpoint ships multi-token-prediction heads (``mtp_modules`` in ``datasets/models.csv``),
        the others are priced without. Default none.

    Returns
    -------
    pandas.DataFrame
        One row per list price: ``provider``, ``model``, ``list_usd_per_m_input_tok``,
        ``list_usd_per_m_cached_input_tok``, ``list_usd_per_m_output_tok``,
        ``tok_per_s_per_user`` (the speed priced), ``speed_basis``, ``modelled_tok_per_s_per_user``,
        ``batch``, ``cost_usd_per_m_input_tok``, ``cost_usd_per_m_output_tok``,
        ``implied_margin_frac``, ``output_margin_frac``, ``flag``, ``deployment``, ``cost_basis``,
        ``output_convention``, ``utilization_frac``, ``cache_hit_frac``, ``workload``, ``source``,
        ``as_of``, ``also_in``, ``note``.
    """
    import pandas as pd

    from . import chain
    from .econ import pricing

    df = load_prices(prices)
    v.positive(default_tok_per_s_per_user, "default_tok_per_s_per_user")
    v.one_of(output_convention, "output_convention", chain.OUTPUT_CONVENTIONS)
    v.fraction(cache_hit_frac, "cache_hit_frac")
    if utilization_frac is not None:
        pricing.check_utilization(utilization_frac)
    if system is not None:
        from . import catalog

        if system not in catalog.load("systems").index:
            raise unknown_name("system", system, catalog.load("systems").index)
    in_tok, out_tok = chain.workload_mix(workload)
    from .deployment import _spec

    spec = _spec(spec)  # a SpecDecode or None; a bad one is one line before any row is priced
    deps: dict[str, Any] = {}
    costs: dict[tuple[str, float], dict[str, Any]] = {}
    rows = []
    for r in df.itertuples(index=False):
        model = str(r.model)
        published = bool(np.isfinite(r.tok_per_s_per_user))
        speed = float(r.tok_per_s_per_user) if published else float(default_tok_per_s_per_user)
        rec: dict[str, Any] = {
            "provider": r.provider, "model": model, "list_usd_per_m_input_tok": r.input_usd_per_m_tok,
            "list_usd_per_m_cached_input_tok": r.cached_input_usd_per_m_tok,
            "list_usd_per_m_output_tok": r.output_usd_per_m_tok, "tok_per_s_per_user": speed,
            "speed_basis": "published" if published else f"default {default_tok_per_s_per_user:g} tok/s/user "
                                                         f"(not published)",
        }
        key = (model, speed)
        if key not in costs:
            costs[key] = _cost_at(model, speed, system, deps, spec, workload=workload, cost=cost,
                                  utilization_frac=utilization_frac, output_convention=output_convention,
                                  cache_hit_frac=cache_hit_frac)
        c = costs[key]
        rec.update({k: val for k, val in c.items() if not k.startswith("_")})
        lin, lout = r.input_usd_per_m_tok, r.output_usd_per_m_tok
        cin, cout = c["cost_usd_per_m_input_tok"], c["cost_usd_per_m_output_tok"]
        if np.isfinite(cout):
            rec["output_margin_frac"] = 1.0 - cout / lout
            if np.isfinite(lin):
                rec["implied_margin_frac"] = 1.0 - (cin * in_tok + cout * out_tok) / (lin * in_tok + lout * out_tok)
            else:
                rec["implied_margin_frac"] = rec["output_margin_frac"]
            below = [w for w, m in (("request", rec["implied_margin_frac"]), ("output", rec["output_margin_frac"]))
                     if m < 0]
            if below:
                rec["flag"] = f"{FLAG_BELOW_COST} ({', '.join(below)})"
        else:
            rec["output_margin_frac"] = rec["implied_margin_frac"] = np.nan
        rec.update({"workload": workload, "source": r.source, "as_of": str(r.as_of),
                    "also_in": "" if not isinstance(r.also_in, str) else r.also_in,
                    "note": "" if not isinstance(r.note, str) else r.note})
        rows.append(rec)
    cols = ["provider", "model", "list_usd_per_m_input_tok", "list_usd_per_m_cached_input_tok",
            "list_usd_per_m_output_tok", "tok_per_s_per_user", "speed_basis", "modelled_tok_per_s_per_user",
            "batch", "cost_usd_per_m_input_tok", "cost_usd_per_m_output_tok", "implied_margin_frac",
            "output_margin_frac", "flag", "deployment", "cost_basis", "output_convention", "utilization_frac",
            "cache_hit_frac", "workload", "source", "as_of", "also_in", "note"]
    out = pd.DataFrame(rows)
    for c in cols:
        if c not in out.columns:
            out[c] = np.nan
    out["flag"] = out["flag"].fillna("").astype(str)
    return out[cols]


def _cost_at(model: str, speed: float, system: str | None, deps: dict, spec: Any = None,
             **kw: Any) -> dict[str, Any]:
    """Modelled cost of ``model`` at ``speed`` tokens/s per user (one cached chain call)."""
    from . import chain

    out: dict[str, Any] = {"modelled_tok_per_s_per_user": np.nan, "batch": np.nan,
                           "cost_usd_per_m_input_tok": np.nan, "cost_usd_per_m_output_tok": np.nan,
                           "flag": "", "deployment": "", "cost_basis": "",
                           "output_convention": kw["output_convention"], "utilization_frac": np.nan,
                           "cache_hit_frac": kw["cache_hit_frac"]}
    try:
        if model not in deps:
            deps[model] = _deployment(model, system, spec)
        dep = deps[model]
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
               cost_basis=r.cost_basis, utilization_frac=float(np.ravel(np.asarray(r.utilization_frac, float))[0]))
    return out


def summary(df: "pd.DataFrame") -> dict[str, Any]:
    """Counts and the median implied margin of a :func:`market` table."""
    ok = df["implied_margin_frac"].notna()
    return {"n_prices": int(len(df)), "n_models": int(df["model"].nunique()), "n_priced": int(ok.sum()),
            "median_implied_margin_frac": float(df.loc[ok, "implied_margin_frac"].median()) if ok.any() else np.nan,
            "n_below_cost": int(df["flag"].str.startswith(FLAG_BELOW_COST).sum()),
            "n_unreachable": int(df["flag"].str.startswith(FLAG_UNREACHABLE).sum()),
            "n_default_speed": int(df["speed_basis"].str.startswith("default").sum())}


__all__ = ["DEFAULT_TOK_PER_S_PER_USER", "FALLBACK_SYSTEM", "REFERENCE_SYSTEM", "REQUIRED_COLUMNS",
           "load_prices", "market", "summary"]
