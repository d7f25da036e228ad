"""Agentic demand: Bass diffusion of the agentic share and the Gartner token multiplier.

Demand is decomposed as ``chat tokens x (1 - s + s m)`` where ``s(t)`` is the share of tasks
done by agents and ``m`` the tokens an agentic task uses relative to a chat task (Gartner,
March 2026: 5-30x). ``s`` follows a Bass diffusion,

    s(t) = s_max * (1 - exp(-(p + q) tau)) / (1 + (q / p) exp(-(p + q) tau)),  tau = t - t_start,

with the coefficient of innovation ``p`` and of imitation ``q`` [1/year]. Priors and ranges
(low/base/high) live in ``datasets/demand_scenarios.csv`` with their sources.

The statistical trend fitted to history already contains the agentic adoption of the fit
window, and extrapolating it carries that growth forward. A scenario therefore multiplies the
trend by the uplift *beyond* the trend: ``U(t) / U(t_last) * exp(-g (t - t_last))`` with ``U = 1
- s + s m`` and ``g`` the mean log growth of ``U`` over the fit window (ASSUMPTION: the trend
carries that growth forward at a constant rate). Only the share of demand not already in the
trend is uplifted.

Scenarios are a seeded Monte Carlo (:func:`uplift_draws`): each parameter is drawn from a
triangular distribution on the log scale between its ``low`` and ``high`` values, with its mode
at the scenario's value (ASSUMPTION: the distribution shape; the ranges are those of
``datasets/demand_scenarios.csv``), and combined draw by draw with trend draws matching the
calibrated intervals (:mod:`.demand`).

Examples
--------
>>> from tokenomics.forecast.scenarios import bass_share
>>> float(bass_share(2025.0, p=0.03, q=0.38, share_max=1.0, start_year=2025.0))
0.0
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from .._validate import fraction, non_negative, one_of, positive

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

SCENARIOS: tuple[str, ...] = ("low", "base", "high")

#: Series that do not overlap and are summed in :func:`reference_comparison`.
DISJOINT_SUM: tuple[str, ...] = ("google", "china")


@dataclass(frozen=True)
class Scenario:
    """Parameters of one agentic-demand scenario.

    Attributes
    ----------
    name : str
    bass_p, bass_q : float
        Bass coefficients of innovation and imitation [1/year].
    share_max : float
        Ceiling of the agentic share of tasks [0-1].
    multiplier : float
        Tokens per agentic task over tokens per chat task (>= 1).
    start_year : float
        Decimal year when the agentic share starts from zero.
    """

    name: str
    bass_p: float
    bass_q: float
    share_max: float
    multiplier: float
    start_year: float

    def __post_init__(self):
        positive(self.bass_p, "bass_p")
        non_negative(self.bass_q, "bass_q")
        fraction(self.share_max, "share_max")
        positive(self.multiplier, "multiplier")
        positive(self.start_year, "start_year")

    def share(self, t_year) -> np.ndarray:
        """Agentic share of tasks at ``t_year`` [0-1]."""
        return bass_share(t_year, self.bass_p, self.bass_q, self.share_max, self.start_year)

    def uplift(self, t_year) -> np.ndarray:
        """Token multiplier over an all-chat world, ``1 - s + s m``."""
        s = self.share(t_year)
        return 1.0 - s + s * self.multiplier


def bass_share(t_year, p: float, q: float, share_max: float, start_year: float) -> np.ndarray:
    """Bass diffusion: cumulative adopted share at ``t_year`` (0 before ``start_year``).

    Parameters
    ----------
    t_year : array-like
        Times [decimal year].
    p, q : float
        Coefficients of innovation and imitation [1/year].
    share_max : float
        Market potential as a share [0-1].
    start_year : float
        Launch time [decimal year].

    Returns
    -------
    numpy.ndarray
        Share in [0, share_max].

    Examples
    --------
    With p = 0.03, q = 0.38 after 5 years: F = (1 - e^-2.05) / (1 + 12.667 e^-2.05) = 0.331.

    >>> round(float(bass_share(2030.0, 0.03, 0.38, 1.0, 2025.0)), 3)
    0.331
    """
    positive(p, "p")
    non_negative(q, "q")
    fraction(share_max, "share_max")
    tau = np.maximum(np.asarray(t_year, dtype=float) - start_year, 0.0)
    e = np.exp(-(p + q) * tau)
    return share_max * (1.0 - e) / (1.0 + (q / p) * e)


#: Parameters of ``demand_scenarios.csv`` drawn in the Monte Carlo, with the Scenario field.
_DRAWN = (("bass_p", "bass_p"), ("bass_q", "bass_q"), ("agentic_share_max", "share_max"),
          ("agentic_multiplier", "multiplier"))


def uplift_draws(sc: Scenario, t_year, t_hist, n: int, rng) -> tuple[np.ndarray, np.ndarray]:
    """Monte Carlo draws of the agentic share and of the uplift beyond the fitted trend.

    Parameters
    ----------
    sc : Scenario
        Its values are the modes of the parameter draws; ``low`` and ``high`` rows of the
        dataset bound them.
    t_year : array-like
        Forecast times [decimal year].
    t_hist : array-like
        Times of the fitted observations [decimal year] (first and last are used).
    n : int
        Number of draws.
    rng : numpy.random.Generator
        Seeded generator.

    Returns
    -------
    (numpy.ndarray, numpy.ndarray)
        Agentic share [0-1] and uplift factor, each of shape (n, len(t_year)).
    """
    tq = np.atleast_1d(np.asarray(t_year, dtype=float))[None, :]
    th = np.asarray(t_hist, dtype=float)
    t_first, t_last = float(th.min()), float(th.max())
    draws = {}
    for pname, field_name in _DRAWN:
        lo, hi = parameter(pname, "low"), parameter(pname, "high")
        mode = getattr(sc, field_name)
        a, b, c = np.log(lo), np.log(hi), np.log(min(max(mode, lo), hi))
        draws[field_name] = (np.exp(rng.triangular(a, c, b, size=n)) if b > a
                             else np.full(n, mode))[:, None]

    def share(t):
        tau = np.maximum(t - sc.start_year, 0.0)
        p, q = draws["bass_p"], draws["bass_q"]
        e = np.exp(-(p + q) * tau)
        return draws["share_max"] * (1.0 - e) / (1.0 + (q / p) * e)

    def uplift(t):
        s_ = share(t)
        return 1.0 - s_ + s_ * draws["multiplier"]

    u_last, u_first = uplift(np.array([[t_last]])), uplift(np.array([[t_first]]))
    g = np.log(u_last / u_first) / (t_last - t_first) if t_last > t_first else 0.0 * u_last
    excess = uplift(tq) / u_last * np.exp(-g * (tq - t_last))
    return np.broadcast_to(share(tq), excess.shape).copy(), excess


def _params() -> "pd.DataFrame":
    from ..catalog import load

    return load("demand_scenarios")


def parameter(name: str, scenario: str = "all") -> float:
    """One value from ``datasets/demand_scenarios.csv`` (``scenario='all'`` for shared ones)."""
    from ..errors import unknown_name

    df = _params()
    sub = df[(df["parameter"] == name) & (df["scenario"] == scenario)]
    if sub.empty:
        raise unknown_name("scenario parameter", f"{name}/{scenario}",
                           (df["parameter"] + "/" + df["scenario"]).unique())
    return float(sub["value"].iloc[0])


def scenario(name: str) -> Scenario:
    """The ``low``, ``base`` or ``high`` scenario with its priors from the dataset."""
    one_of(name, "scenario", SCENARIOS)
    return Scenario(
        name=name,
        bass_p=parameter("bass_p", name),
        bass_q=parameter("bass_q", name),
        share_max=parameter("agentic_share_max", name),
        multiplier=parameter("agentic_multiplier", name),
        start_year=parameter("bass_start_year", "all"),
    )


def scenario_table() -> "pd.DataFrame":
    """The three scenarios' parameters and their agentic share and uplift in 2026 and 2030."""
    import pandas as pd

    rows = []
    for n in SCENARIOS:
        s = scenario(n)
        rows.append({
            "scenario": n, "bass_p": s.bass_p, "bass_q": s.bass_q, "share_max": s.share_max,
            "multiplier": s.multiplier,
            "agentic_share_2026": float(s.share(2026.5)), "agentic_share_2030": float(s.share(2030.5)),
            "uplift_2026": float(s.uplift(2026.5)), "uplift_2030": float(s.uplift(2030.5)),
            "uplift_ratio_2030_2026": float(s.uplift(2030.5) / s.uplift(2026.5)),
        })
    return pd.DataFrame(rows)


def reference_lines() -> "pd.DataFrame":
    """The external 2030 reference points, each with its source.

    Columns ``reference, tokens_per_day, tokens_per_month, growth_2026_2030, source, note``.
    """
    import pandas as pd

    from ..units import DAYS_PER_MONTH

    df = _params()
    rows = []
    for key, label in (("goldman_2030", "Goldman Sachs 2030 (~120 quadrillion/month)"),
                       ("article_2030", "article: 'ten trillion per month'")):
        r = df[df["parameter"] == key].iloc[0]
        rows.append({"reference": label, "tokens_per_day": float(r["value"]),
                     "tokens_per_month": float(r["value"]) * DAYS_PER_MONTH,
                     "growth_2026_2030": parameter("goldman_growth_2026_2030") if key == "goldman_2030" else np.nan,
                     "source": r["source"], "note": r["note"]})
    return pd.DataFrame(rows)


def reference_comparison(result) -> "pd.DataFrame":
    """Where a forecast lands against the Goldman Sachs and article reference lines.

    For each series of ``result`` (a :class:`~tokenomics.forecast.demand.ForecastResult`) and,
    when both are present, for ``google + china`` (sum of medians of two disjoint series; a lower
    bound on the world, since OpenAI, Microsoft, Meta and others are missing; Doubao is part of
    the China figure and is not added), the December 2030 rate, its growth over December 2026,
    and its ratio to the references.

    Returns
    -------
    pandas.DataFrame
        Columns ``series, scenario, tokens_per_day_2030, tokens_per_month_2030,
        growth_2026_2030, goldman_growth_2026_2030, share_of_goldman_2030, times_article_2030``.
    """
    import pandas as pd

    from ..units import DAYS_PER_MONTH

    refs = reference_lines()
    goldman = float(refs["tokens_per_day"].iloc[0])
    article = float(refs["tokens_per_day"].iloc[1])
    g24 = parameter("goldman_growth_2026_2030")
    m = result.monthly
    rows = []

    def add(label, s26, s30):
        rows.append({
            "series": label, "scenario": result.scenario or "trend",
            "tokens_per_day_2030": s30, "tokens_per_month_2030": s30 * DAYS_PER_MONTH,
            "growth_2026_2030": s30 / s26 if s26 > 0 else np.nan,
            "goldman_growth_2026_2030": g24,
            "share_of_goldman_2030": s30 / goldman,
            "times_article_2030": s30 / article,
        })

    ends = {}
    for name in dict.fromkeys(m["series"]):
        g = m[m["series"] == name]
        g = g.set_index(g["date"].dt.strftime("%Y-%m"))["tokens_per_day"]
        if "2026-12" not in g.index or "2030-12" not in g.index:
            continue
        ends[name] = (float(g["2026-12"]), float(g["2030-12"]))
        add(name, *ends[name])
    if all(k in ends for k in DISJOINT_SUM):
        add(" + ".join(DISJOINT_SUM), sum(ends[k][0] for k in DISJOINT_SUM),
            sum(ends[k][1] for k in DISJOINT_SUM))
    return pd.DataFrame(rows)
