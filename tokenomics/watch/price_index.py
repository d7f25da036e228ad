"""A quality-adjusted (hedonic) API price index and like-for-like price paths.

A pooled fit of log price on time mixes two things: prices of a given model falling, and the mix
of models on sale changing (bigger or open-weight models arriving, cheap small ones leaving). Price
statisticians separate them with a *hedonic* regression: log price on the product's
characteristics plus time dummies; the time dummies are then the price change at constant
characteristics ("constant quality").

:func:`hedonic_sample` assembles the observations: list prices of ``datasets/api_prices.csv``
(the price kinds :data:`~tokenomics.watch.prices.TREND_KINDS`) and the dated third-party prices of
``datasets/market_prices.csv`` (rows already in ``api_prices.csv`` and rows dated only by a year
left out), each placed at the date its price took effect
(:func:`~tokenomics.watch.prices.price_date`: a catalogue row's ``price_effective_date``, else
its ``date``/``as_of``), each with the characteristics of ``datasets/model_traits.csv`` and
``datasets/models.csv``: log total and active parameters, open vs closed weights, log context
window, and the provider. A characteristic a model does not publish (a closed model's parameter
count, a context window the sources lack) enters as 0 with an "unknown" dummy, the usual
missing-indicator design, so the row still informs the time effects.

:func:`fit_hedonic` regresses ``ln(price_usd_per_m_tok)`` on those characteristics, provider fixed
effects and either half-year dummies (:func:`price_index`) or a linear time trend
(:func:`constant_quality_decline`), by OLS with cluster-robust standard errors (clusters = model;
HC1 when there are fewer than :data:`MIN_CLUSTERS` models). A public quality score (MMLU, from
Artificial Analysis as tabulated by Epoch AI, 2024-11) covers only the models scored then, so it
enters a separate specification on that subset (``quality=True``), never the headline.

:func:`like_for_like_paths` lists the same model at the same provider over time (and the China
cuts, which are before/after prices of one model): the matched-model view beside the index.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from .. import _validate as v
from ..errors import DataError, ValidationError

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

#: Price measures: ``output`` (USD per M output tokens) or ``blended`` (USD per M tokens at the
#: ``chat`` workload's input:output mix of ``datasets/workloads.csv``).
MEASURES = ("blended", "output")
#: Below this many models the standard errors are HC1 rather than clustered by model.
MIN_CLUSTERS = 10
#: Characteristics of the hedonic regression (``quality=True`` adds ``mmlu_pct``).
CHARACTERISTICS = ("log_total_params", "total_params_unknown", "log_active_params", "active_params_unknown",
                   "open_weights", "log_context_tok", "context_unknown")
#: Provider names that are one seller under two spellings.
_PROVIDER_ALIASES = {"Moonshot AI": "Moonshot"}


def _provider(name: str) -> str:
    name = str(name).replace(" (via HF Inference Providers)", "").strip()
    return _PROVIDER_ALIASES.get(name, name)


def _half(t_year: np.ndarray) -> list[str]:
    y = np.floor(t_year).astype(int)
    return [f"{a}H{1 if (t - a) < 0.5 else 2}" for a, t in zip(y, t_year)]


def _traits(traits: "pd.DataFrame | None") -> "pd.DataFrame":
    from .. import catalog

    df = catalog.load("model_traits") if traits is None else traits
    catalog.check_columns(df, catalog.REGISTRY["model_traits"].required, what="model traits")
    if df["model"].duplicated().any():
        dup = df.loc[df["model"].duplicated(), "model"].iloc[0]
        raise DataError(f"model_traits.csv: model {dup!r} listed twice; expected one row per priced model name")
    return df.set_index("model")


def _chat_mix() -> tuple[float, float]:
    from .. import catalog

    w = catalog.load("workloads").loc["chat"]
    return float(w["input_tok"]), float(w["output_tok"])


def hedonic_sample(prices: "pd.DataFrame | None" = None, market: "pd.DataFrame | None" = None,
                   traits: "pd.DataFrame | None" = None, measure: str = "blended",
                   include_market: bool = True) -> "pd.DataFrame":
    """The observations of the hedonic regression, one priced model at one provider and date.

    Parameters
    ----------
    prices, market, traits : DataFrame, optional
        Tables with the columns of ``datasets/api_prices.csv``, ``market_prices.csv`` and
        ``model_traits.csv`` (default: those files).
    measure : {"blended", "output"}
        ``output``: the output list price; ``blended``: input and output list prices at the chat
        mix (:func:`tokenomics.econ.pricing.blended_usd_per_1k_tok`), or the source's blended
        price where the source gives no split (``price_basis`` says which).
    include_market : bool
        Include ``market_prices.csv`` (False: the first-party list prices of ``api_prices.csv``
        alone). Every row is dated by :func:`~tokenomics.watch.prices.price_date`.

    Returns
    -------
    pandas.DataFrame
        ``file``, ``row``, ``provider``, ``model``, ``date``, ``date_basis`` (the date column
        used), ``t_year`` [yr], ``period``
        (half-year, e.g. ``2025H1``), ``price_usd_per_m_tok``, ``log_price``, ``price_basis``, the
        :data:`CHARACTERISTICS`, ``mmlu_pct`` (NaN where not sourced).
    """
    import pandas as pd

    from .. import catalog
    from ..econ.pricing import blended_usd_per_1k_tok
    from ._events import parse_date
    from .prices import TREND_KINDS, load_prices, price_date

    v.one_of(measure, "measure", MEASURES)
    tr = _traits(traits)
    models = catalog.load("models")
    i_tok, o_tok = _chat_mix()
    recs: list[dict[str, Any]] = []

    def add(file, row, provider, model, when, t_year, inp, out, blend_src, dated_by):
        if measure == "output":
            price, basis = out, "output list price"
        elif np.isfinite(inp) and np.isfinite(out):
            price = float(blended_usd_per_1k_tok(inp, out, i_tok, o_tok))
            basis = f"chat mix {i_tok:g}:{o_tok:g}"
        else:
            price, basis = blend_src, "source blend"
        if not (np.isfinite(price) and price > 0):
            return
        if model not in tr.index:
            raise DataError(f"{file} row {row}: model {model!r} has no row in model_traits.csv; "
                            "expected its open_weights, parameters and context window there")
        t = tr.loc[model]
        tot, act = float(t["total_params_b"]), float(t["active_params_b"])
        if model in models.index:  # a catalogued model: its parameter counts from models.csv
            tot = float(models.loc[model, "claimed_total_params"]) / 1e9
            act = float(models.loc[model, "claimed_active_params"]) / 1e9
        ctx, mmlu = float(t["context_tok"]), float(t["mmlu_pct"])
        recs.append({"file": file, "row": row, "provider": _provider(provider), "model": model, "date": when,
                     "date_basis": dated_by, "t_year": t_year, "price_usd_per_m_tok": price, "price_basis": basis,
                     "log_total_params": np.log(tot) if tot > 0 else 0.0, "total_params_unknown": float(not tot > 0),
                     "log_active_params": np.log(act) if act > 0 else 0.0, "active_params_unknown": float(not act > 0),
                     "open_weights": float(int(t["open_weights"]) == 1),
                     "log_context_tok": np.log(ctx) if ctx > 0 else 0.0, "context_unknown": float(not ctx > 0),
                     "mmlu_pct": mmlu})

    ap = load_prices(prices)
    ap = ap[ap["price_kind"].isin(TREND_KINDS)]
    num = lambda x: float(x) if pd.notna(x) else np.nan  # noqa: E731
    for r in ap.itertuples(index=False):
        add("api_prices.csv", int(r.row), r.provider, r.model, r.date_parsed, float(r.t_year),
            num(r.input_usd_per_m_tok), num(r.output_usd_per_m_tok), num(r.blended_usd_per_m_tok), r.date_basis)
    mp = catalog.load("market_prices") if market is None else market
    if not include_market:
        mp = mp.iloc[:0]
    catalog.check_columns(mp, catalog.REGISTRY["market_prices"].required, what="market prices")
    mp = mp.reset_index(drop=True)
    also = mp["also_in"].fillna("").astype(str) if "also_in" in mp.columns else pd.Series([""] * len(mp))
    dates, bases = price_date(mp)
    seen = set()
    for i, r in enumerate(mp.itertuples(index=False)):
        if "api_prices" in also.iloc[i]:
            continue  # the same price is an api_prices.csv row
        text = dates.iloc[i]
        p = parse_date(text)
        if p is None or p[1] == "year":
            continue  # dated by a year only: too coarse for half-year dummies
        key = (r.provider, r.model, str(text), r.input_usd_per_m_tok, r.output_usd_per_m_tok)
        if key in seen:
            continue  # the same quote listed twice
        seen.add(key)
        from ..dates import decimal_year

        add("market_prices.csv", i + 1, r.provider, r.model, p[0], float(decimal_year(p[0])),
            num(r.input_usd_per_m_tok), num(r.output_usd_per_m_tok), np.nan, bases.iloc[i])
    if not recs:
        raise DataError(f"no dated list price with a positive {measure} price to index")
    df = pd.DataFrame(recs)
    df["date"] = pd.to_datetime(df["date"])
    df["period"] = _half(df["t_year"].to_numpy(float))
    df["log_price"] = np.log(df["price_usd_per_m_tok"])
    return df.sort_values(["t_year", "file", "row"], kind="stable").reset_index(drop=True)


def _design(df: "pd.DataFrame", time: str, quality: bool, provider_effects: bool):
    """Regressors with collinear columns dropped (time first, then characteristics, then
    providers); returns (X, names kept, names dropped)."""
    import pandas as pd

    cols: dict[str, np.ndarray] = {"const": np.ones(len(df))}
    if time == "dummies":
        periods = sorted(df["period"].unique())
        for p in periods[1:]:
            cols[f"period[{p}]"] = (df["period"] == p).to_numpy(float)
    else:
        cols["t_year"] = df["t_year"].to_numpy(float) - float(df["t_year"].mean())
    chars = list(CHARACTERISTICS) + (["mmlu_pct"] if quality else [])
    for c in chars:
        cols[c] = df[c].to_numpy(float)
    if provider_effects:
        provs = df["provider"].value_counts().index.tolist()  # the most-priced provider is the base
        for p in sorted(provs[1:]):
            cols[f"provider[{p}]"] = (df["provider"] == p).to_numpy(float)
    kept, dropped, mat = [], [], np.empty((len(df), 0))
    for name, col in cols.items():
        trial = np.column_stack([mat, col])
        if np.ptp(col) == 0 and name != "const" or np.linalg.matrix_rank(trial) <= mat.shape[1]:
            dropped.append(name)
            continue
        mat, kept = trial, kept + [name]
    return pd.DataFrame(mat, columns=kept), kept, dropped


def fit_hedonic(sample: "pd.DataFrame", time: str = "dummies", quality: bool = False,
                provider_effects: bool = True, cluster: str = "model"):
    """OLS of ``log_price`` on the characteristics, provider effects and time, robust errors.

    Parameters
    ----------
    sample : DataFrame
        :func:`hedonic_sample`'s table (or one with its columns).
    time : {"dummies", "trend"}
        Half-year dummies (the index) or a linear trend in ``t_year`` [yr] (the decline per year).
    quality : bool
        Add ``mmlu_pct`` and keep only the rows that have one.
    provider_effects : bool
        Provider fixed effects.
    cluster : str
        Column whose groups the errors are clustered on (HC1 below :data:`MIN_CLUSTERS` groups).

    Returns
    -------
    (statsmodels results, dict)
        The fit and ``{"n", "n_models", "cov_type", "dropped", "first_date", "last_date"}``.
    """
    import statsmodels.api as sm

    v.one_of(time, "time", ("dummies", "trend"))
    df = sample
    if quality:
        df = df[np.isfinite(df["mmlu_pct"].to_numpy(float))]
    df = df.reset_index(drop=True)
    if len(df) < 3 or np.ptp(df["t_year"].to_numpy(float)) == 0:
        raise DataError(f"the hedonic regression needs at least 3 prices at 2+ dates; got {len(df)}")
    x, kept, dropped = _design(df, time, quality, provider_effects)
    if time == "trend" and "t_year" not in kept:
        raise DataError("the time trend is collinear with the characteristics; no constant-quality decline")
    groups = df[cluster].astype("category").cat.codes.to_numpy()
    n_groups = len(np.unique(groups))
    model = sm.OLS(df["log_price"].to_numpy(float), x)
    if n_groups >= MIN_CLUSTERS:
        res, cov = model.fit(cov_type="cluster", cov_kwds={"groups": groups}), f"cluster-robust by {cluster}"
    else:
        res, cov = model.fit(cov_type="HC1"), "HC1"
    info = {"n": int(len(df)), "n_models": int(df["model"].nunique()), "n_clusters": n_groups, "cov_type": cov,
            "dropped": dropped, "first_date": df["date"].min(), "last_date": df["date"].max(),
            "df_resid": float(res.df_resid)}
    if res.df_resid <= 0:
        raise DataError(f"the hedonic regression has {len(df)} prices for {len(kept)} coefficients; no interval")
    return res, info


def price_index(sample: "pd.DataFrame | None" = None, measure: str = "blended", ci: float = 0.95,
                quality: bool = False) -> "pd.DataFrame":
    """Constant-quality price index by half-year (first half-year with prices = 1).

    ``index = exp(coefficient of the half-year dummy)`` in the hedonic regression
    (:func:`fit_hedonic` with ``time="dummies"``), with its interval from the cluster-robust
    standard error. ``raw_index`` is the same ratio of geometric-mean prices without any
    adjustment, for comparison.

    Returns
    -------
    pandas.DataFrame
        ``period``, ``n``, ``index``, ``index_lo``, ``index_hi``, ``raw_index``, ``measure``.
    """
    import pandas as pd

    v.fraction(ci, "ci", allow_zero=False, allow_one=False)
    s = hedonic_sample(measure=measure) if sample is None else sample
    import warnings

    res, _ = fit_hedonic(s, time="dummies", quality=quality)
    use = s[np.isfinite(s["mmlu_pct"].to_numpy(float))] if quality else s
    gm = use.groupby("period")["log_price"].mean()
    periods = sorted(use["period"].unique())
    with warnings.catch_warnings():  # a one-price period has no clustered variance: NaN interval
        warnings.simplefilter("ignore", RuntimeWarning)
        ci_tab = np.asarray(res.conf_int(alpha=1 - ci))
    names = list(res.model.exog_names)
    out = []
    for p in periods:
        name = f"period[{p}]"
        if p == periods[0]:
            b, lo, hi = 0.0, 0.0, 0.0
        elif name in names:
            j = names.index(name)
            b, lo, hi = float(np.asarray(res.params)[j]), float(ci_tab[j][0]), float(ci_tab[j][1])
        else:
            b = lo = hi = np.nan
        n = int((use["period"] == p).sum())
        if n < 2 and p != periods[0]:  # one price: no clustered variance, whatever the solver returns
            lo = hi = np.nan
        out.append({"period": p, "n": n, "index": float(np.exp(b)),
                    "index_lo": float(np.exp(lo)), "index_hi": float(np.exp(hi)),
                    "raw_index": float(np.exp(gm[p] - gm[periods[0]])), "measure": measure})
    return pd.DataFrame(out)


def constant_quality_decline(sample: "pd.DataFrame | None" = None, measure: str = "blended", ci: float = 0.95,
                             quality: bool = False) -> dict[str, Any]:
    """Constant-quality price decline per year with its interval (hedonic, linear time trend).

    ``decline_factor_per_year = exp(-b)`` where ``b`` is the coefficient on time [1/yr] in
    :func:`fit_hedonic` with ``time="trend"``: 3 means prices at constant characteristics fall
    3x a year, below 1 that they rise. ``pooled_*`` is the same sample's fit on time alone (the
    mix effect included), ``matched_*`` a fit with one effect per model and provider (the
    like-for-like decline).

    Returns
    -------
    dict
        ``decline_factor_per_year``, ``decline_factor_lo``, ``decline_factor_hi``, ``n``,
        ``n_models``, ``cov_type``, ``dropped``, ``first_date``, ``last_date``, ``ci``,
        ``measure``, ``pooled_decline_factor_per_year`` (and ``_lo``/``_hi``),
        ``matched_decline_factor_per_year`` (and ``_lo``/``_hi``, ``matched_n``), ``dates``
        (how many observations each date column dated).
    """
    v.fraction(ci, "ci", allow_zero=False, allow_one=False)
    s = hedonic_sample(measure=measure) if sample is None else sample
    res, info = fit_hedonic(s, time="trend", quality=quality)
    out = dict(info, ci=ci, measure=measure, quality=quality, **_factor(res, "t_year", ci, ""))
    if "date_basis" in s.columns:
        from .prices import date_basis_text

        out["dates"] = date_basis_text(s["date_basis"])
    use = s[np.isfinite(s["mmlu_pct"].to_numpy(float))] if quality else s
    pooled, _ = _plain_fit(use, ci, matched=False)
    out.update(_factor(pooled, "t_year", ci, "pooled_"))
    try:
        matched, n_m = _plain_fit(use, ci, matched=True)
        out.update(_factor(matched, "t_year", ci, "matched_"), matched_n=n_m)
    except DataError:
        out.update(matched_decline_factor_per_year=np.nan, matched_decline_factor_lo=np.nan,
                   matched_decline_factor_hi=np.nan, matched_n=0)
    return out


def _factor(res, name: str, ci: float, prefix: str) -> dict[str, float]:
    j = list(res.model.exog_names).index(name)
    b = float(np.asarray(res.params)[j])
    lo, hi = (float(z) for z in np.asarray(res.conf_int(alpha=1 - ci))[j])
    return {f"{prefix}decline_factor_per_year": float(np.exp(-b)), f"{prefix}decline_factor_lo": float(np.exp(-hi)),
            f"{prefix}decline_factor_hi": float(np.exp(-lo))}


def _plain_fit(df: "pd.DataFrame", ci: float, matched: bool):
    """log price on time alone (pooled) or with one effect per (model, provider) (matched); same
    robust errors as :func:`fit_hedonic`. Matched uses only pairs priced at 2+ dates."""
    import pandas as pd
    import statsmodels.api as sm

    df = df.reset_index(drop=True)
    cols = {"const": np.ones(len(df)), "t_year": df["t_year"].to_numpy(float) - float(df["t_year"].mean())}
    if matched:
        pair = df["model"] + " @ " + df["provider"]
        spread = df.groupby(pair)["t_year"].transform(np.ptp)
        df = df[(spread > 0).to_numpy()].reset_index(drop=True)
        pair = df["model"] + " @ " + df["provider"]
        if df.empty or pair.nunique() < 2:
            raise DataError("no model priced at one provider on two dates")
        cols = {"t_year": df["t_year"].to_numpy(float) - float(df["t_year"].mean())}
        for p in sorted(pair.unique()):
            cols[f"pair[{p}]"] = (pair == p).to_numpy(float)
    x = pd.DataFrame(cols)
    groups = df["model"].astype("category").cat.codes.to_numpy()
    m = sm.OLS(df["log_price"].to_numpy(float), x)
    if len(np.unique(groups)) >= MIN_CLUSTERS:
        return m.fit(cov_type="cluster", cov_kwds={"groups": groups}), len(df)
    return m.fit(cov_type="HC1"), len(df)


def like_for_like_paths(sample: "pd.DataFrame | None" = None, measure: str = "blended",
                        china: "pd.DataFrame | None" = None) -> "pd.DataFrame":
    """Price paths of the same model at the same provider over time.

    Each (model, provider) priced on two or more dates in :func:`hedonic_sample` (the median
    quote of a date where a provider lists several), plus each China cut with a before and after
    price in USD. ``decline_factor_per_year = (first / last) ** (1 / years)``; a path inside one
    day (a China cut) has no rate.

    Returns
    -------
    pandas.DataFrame
        ``provider``, ``model``, ``n_dates``, ``first_date``, ``last_date``,
        ``first_usd_per_m_tok``, ``last_usd_per_m_tok``, ``change_frac``,
        ``decline_factor_per_year``, ``token_type``, ``file``.
    """
    import pandas as pd

    from .prices import load_china_cuts

    s = hedonic_sample(measure=measure) if sample is None else sample
    out = []
    for (model, prov), g in s.groupby(["model", "provider"], sort=True):
        by_date = g.groupby("date").agg(p=("price_usd_per_m_tok", "median"), t=("t_year", "first")).sort_index()
        if len(by_date) < 2:
            continue
        first, last = by_date.iloc[0], by_date.iloc[-1]
        yrs = float(last["t"] - first["t"])
        out.append({"provider": prov, "model": model, "n_dates": len(by_date), "first_date": by_date.index[0],
                    "last_date": by_date.index[-1], "first_usd_per_m_tok": float(first["p"]),
                    "last_usd_per_m_tok": float(last["p"]), "change_frac": float(last["p"] / first["p"] - 1),
                    "decline_factor_per_year": float((first["p"] / last["p"]) ** (1 / yrs)) if yrs > 0 else np.nan,
                    "token_type": measure, "file": ", ".join(sorted(g["file"].unique()))})
    ch = load_china_cuts(china)
    for r in ch.itertuples(index=False):
        b, a = r.price_before_usd_per_m_tok, r.price_after_usd_per_m_tok
        if not (pd.notna(b) and pd.notna(a) and b > 0):
            continue
        out.append({"provider": r.provider, "model": r.model, "n_dates": 2, "first_date": r.date_parsed,
                    "last_date": r.date_parsed, "first_usd_per_m_tok": float(b),
                    "last_usd_per_m_tok": float(a), "change_frac": float(a / b - 1),
                    "decline_factor_per_year": np.nan, "token_type": str(r.token_type), "file": "china_price_cuts.csv"})
    df = pd.DataFrame(out)
    if df.empty:
        raise ValidationError("no model is priced at one provider on two dates")
    return df.sort_values(["last_date", "provider"], kind="stable").reset_index(drop=True)
