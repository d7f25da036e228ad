"""Price elasticity of token demand, estimated from OpenRouter's per-model weekly volumes and prices.

``log(tokens) = e * log(price) + model effect + week effect + noise`` by least squares
(statsmodels OLS), standard errors clustered by model (a model's weeks are not independent
draws). ``price`` is the model's list price blended by a workload's input and output tokens
(:func:`tokenomics.econ.pricing.blended_usd_per_1k_tok`; default OpenRouter's mean request, 6,000
in / 400 out). Two specifications:

- ``within`` (model and week fixed effects): how one model's volume moves when its own price
  changes, against the week's market. This is the elasticity a price cut would act through; it is
  identified only by models whose price changed while they were listed;
- ``cross_section`` (week fixed effects only): cheaper models against dearer ones in the same
  week. Descriptive: models differ in quality, and quality sets both price and volume, so this is
  not a demand response.

The data are ``datasets/openrouter_model_weeks.csv``: the top models of each week only (selected on
volume), the weeks before 2026-02-09 carrying that day's prices. :attr:`Elasticity.supported`
says whether the estimate supports a downward-sloping demand curve (its 95 % interval below
zero); where it does not, the output says so, and no elasticity is assumed in its place.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from .._display import Display
from .._validate import one_of, positive

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

SPECS: tuple[str, ...] = ("within", "cross_section")

#: Dataset the estimate reads by default.
DATASET = "openrouter_model_weeks"


@dataclass(frozen=True, repr=False)
class Elasticity(Display):
    """One estimate of the price elasticity of token volume.

    Attributes
    ----------
    spec : str
        ``within`` or ``cross_section`` (:data:`SPECS`).
    estimate, lo_95, hi_95 : float
        Elasticity (d log tokens / d log price, dimensionless) and its 95 % interval
        (cluster-robust by model).
    n_obs, n_models, n_weeks : int
        Model-weeks, models and weeks used.
    n_models_price_changed : int
        Models whose blended price took more than one value (what identifies ``within``).
    dataset : str
        Where the data came from.
    """

    spec: str
    estimate: float
    lo_95: float
    hi_95: float
    n_obs: int
    n_models: int
    n_weeks: int
    n_models_price_changed: int
    dataset: str

    @property
    def supported(self) -> bool:
        """True when the 95 % interval lies below zero: volume rises as price falls."""
        return bool(self.hi_95 < 0)

    def demand_multiplier(self, price_ratio: float) -> tuple[float, float, float]:
        """Demand multiplier for prices times ``price_ratio``: ``ratio ** e`` with its 95 % interval.

        >>> [round(x, 3) for x in Elasticity("within", -1.0, -1.5, -0.5, 10, 2, 5, 2, "x").demand_multiplier(0.5)]
        [2.0, 1.414, 2.828]
        """
        r = float(positive(price_ratio, "price_ratio"))
        ends = sorted((r ** self.lo_95, r ** self.hi_95))
        return (r ** self.estimate, ends[0], ends[1])

    def to_frame(self) -> "pd.DataFrame":
        import pandas as pd

        m, lo, hi = self.demand_multiplier(0.5)
        return pd.DataFrame([{
            "spec": self.spec, "elasticity": self.estimate, "lo_95": self.lo_95, "hi_95": self.hi_95,
            "n_obs": self.n_obs, "n_models": self.n_models, "n_weeks": self.n_weeks,
            "n_models_price_changed": self.n_models_price_changed,
            "half_price_demand_x": m, "half_price_demand_x_lo_95": lo, "half_price_demand_x_hi_95": hi,
            "supported": self.supported, "dataset": self.dataset,
        }])


def model_weeks(data: "pd.DataFrame | None" = None, workload: str = "openrouter-2025") -> "pd.DataFrame":
    """The paid model-weeks with their blended price [USD per million tokens] and tokens.

    Parameters
    ----------
    data : pandas.DataFrame, optional
        Columns ``week, slug, total_tokens, input_usd_per_m_tok, output_usd_per_m_tok`` (``is_free``
        optional); default ``datasets/openrouter_model_weeks.csv``.
    workload : str
        Request mix blending input and output prices (``datasets/workloads.csv``).

    Returns
    -------
    pandas.DataFrame
        ``week, slug, total_tokens, usd_per_m_tok`` for rows with a positive price and volume.
    """
    from ..catalog import check_columns, load
    from ..chain import workload_mix
    from ..econ.pricing import blended_usd_per_1k_tok
    from ..errors import DataError

    df = load(DATASET) if data is None else data
    check_columns(df, ("week", "slug", "total_tokens", "input_usd_per_m_tok", "output_usd_per_m_tok"),
                  what="model-weeks")
    i, o = workload_mix(workload)
    pin, pout = (df[c].astype(float).to_numpy() for c in ("input_usd_per_m_tok", "output_usd_per_m_tok"))
    if (pin < 0).any() or (pout < 0).any():
        raise DataError("model-weeks: a negative price; prices are USD per million tokens, 0 or more")
    # per 1K -> per M is the same factor on both prices: blend them as given
    price = blended_usd_per_1k_tok(pin, pout, i, o)
    free = df["is_free"].astype(int).to_numpy() == 1 if "is_free" in df.columns else np.zeros(len(df), bool)
    tok = df["total_tokens"].astype(float).to_numpy()
    keep = (price > 0) & (tok > 0) & ~free
    out = df.loc[keep, ["week", "slug"]].copy()
    out["total_tokens"] = tok[keep]
    out["usd_per_m_tok"] = np.asarray(price)[keep]
    return out.reset_index(drop=True)


def estimate_elasticity(spec: str = "within", data: "pd.DataFrame | None" = None,
                        workload: str = "openrouter-2025") -> Elasticity:
    """Price elasticity of weekly token volume, with fixed effects, clustered by model.

    Parameters
    ----------
    spec : {"within", "cross_section"}
        Model and week fixed effects, or week fixed effects only (module docstring).
    data : pandas.DataFrame, optional
        Model-weeks (:func:`model_weeks`); default the bundled OpenRouter panel.
    workload : str
        Request mix blending input and output prices.

    Returns
    -------
    Elasticity

    Raises
    ------
    DataError
        Fewer than two models (or, for ``within``, no model whose price changed).
    """
    import pandas as pd
    import statsmodels.formula.api as smf

    from ..errors import DataError

    one_of(spec, "spec", SPECS)
    d = model_weeks(data, workload)
    d = d.assign(ly=np.log(d["total_tokens"]), lp=np.log(d["usd_per_m_tok"]))
    changed = int((d.groupby("slug")["lp"].nunique() > 1).sum())
    if d["slug"].nunique() < 2 or (spec == "within" and changed == 0):
        raise DataError(f"cannot estimate a {spec} elasticity: {d['slug'].nunique()} models, {changed} with a "
                        "price change (the within estimate needs a model whose price changed)")
    rhs = "lp + C(slug) + C(week)" if spec == "within" else "lp + C(week)"
    fit = smf.ols(f"ly ~ {rhs}", d).fit(cov_type="cluster", cov_kwds={"groups": pd.factorize(d["slug"])[0]})
    lo, hi = (float(v) for v in fit.conf_int(alpha=0.05).loc["lp"])
    label = DATASET if data is None else "given model-weeks"
    return Elasticity(spec, float(fit.params["lp"]), lo, hi, int(fit.nobs), int(d["slug"].nunique()),
                      int(d["week"].nunique()), changed, label)


def elasticity_table(data: "pd.DataFrame | None" = None, workload: str = "openrouter-2025") -> "pd.DataFrame":
    """Both specifications (:data:`SPECS`), one row each (:meth:`Elasticity.to_frame`)."""
    import pandas as pd

    return pd.concat([estimate_elasticity(s, data, workload).to_frame() for s in SPECS], ignore_index=True)


#: Two-sided levels of the forecast's intervals and their normal quantiles.
_Z = {"80": 1.2815515655446004, "95": 1.959963984540054}


def price_response(result, price_scale: float, elasticity: "float | Elasticity | None" = None):
    """The forecast's demand when list prices are ``price_scale`` times those it was fitted under.

    ``demand x price_scale ** e`` at every month. With the estimated elasticity (the default, the
    ``within`` estimate) its uncertainty widens each interval: on the log scale each bound's
    distance from the median is added in quadrature to ``z se |log price_scale|``, ``se`` from the
    estimate's 95 % interval. A stated number is taken as exact.

    Parameters
    ----------
    result : ForecastResult
        Output of :func:`tokenomics.forecast.forecast`.
    price_scale : float
        List prices as a multiple of the forecast's (0.5: half the price) [-], positive.
    elasticity : float or Elasticity, optional
        d log tokens / d log price [-]; default :func:`estimate_elasticity` ``("within")``.

    Returns
    -------
    ForecastResult
        The same forecast with the monthly rows moved and the columns ``price_scale``,
        ``elasticity``, ``elasticity_basis`` and ``demand_response_x`` (the median multiplier).

    Examples
    --------
    Half the price at an elasticity of -1 doubles demand (a stated elasticity: no added width).

    >>> import pandas as pd
    >>> from tokenomics.forecast.demand import ForecastResult
    >>> m = pd.DataFrame({"series": ["x"], "date": pd.to_datetime(["2030-12-15"]), "tokens_per_day": [1e12],
    ...                   "tokens_per_day_lo_80": [5e11], "tokens_per_day_hi_80": [2e12],
    ...                   "tokens_per_day_lo_95": [2.5e11], "tokens_per_day_hi_95": [4e12]})
    >>> r = price_response(ForecastResult(m, m, None, None, None, {}), 0.5, -1.0)
    >>> [round(float(r.monthly[c].iloc[0]) / 1e12, 6) for c in ("tokens_per_day", "tokens_per_day_hi_80")]
    [2.0, 4.0]
    """
    from dataclasses import replace

    from .._validate import finite

    x = float(positive(price_scale, "price_scale"))
    if elasticity is None:
        elasticity = estimate_elasticity("within")
    if isinstance(elasticity, Elasticity):
        e, se = elasticity.estimate, (elasticity.hi_95 - elasticity.lo_95) / (2 * _Z["95"])
        basis = (f"{elasticity.spec} estimate {e:.2f} (95 % CI {elasticity.lo_95:.2f} to {elasticity.hi_95:.2f}, "
                 f"{elasticity.dataset}; {'supported' if elasticity.supported else 'NOT supported: its interval does not lie below zero'})")
    else:
        e, se = float(finite(elasticity, "elasticity")), 0.0
        basis = f"stated {e:g}"
    m = result.monthly.copy()
    lx = np.log(x)
    med = np.log(m["tokens_per_day"].to_numpy(float))
    new_med = med + e * lx
    for lvl, z in _Z.items():
        for side, sign in (("lo", -1.0), ("hi", 1.0)):
            col = f"tokens_per_day_{side}_{lvl}"
            d = np.abs(np.log(m[col].to_numpy(float)) - med)
            m[col] = np.exp(new_med + sign * np.hypot(d, z * se * abs(lx)))
    m["tokens_per_day"] = np.exp(new_med)
    m["price_scale"], m["elasticity"], m["elasticity_basis"] = x, e, basis
    m["demand_response_x"] = x ** e
    return replace(result, monthly=m)
