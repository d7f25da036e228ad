"""How sure is a price? One-at-a-time sensitivity (tornado) and seeded Monte Carlo.

Both vary the bottom-up cost inputs of :class:`tokenomics.econ.tco.CostInputs` (plus
utilization) over the ``lo``/``hi`` ranges of ``datasets/tco_params.csv`` (capex: +/-
``capex_rel_range_frac``) and recompute the price per 1K output tokens at a fixed throughput and
board power. The Monte Carlo draws every input from a triangular distribution (lo, default, hi)
at once, vectorized, with a seeded :class:`numpy.random.Generator`.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from .. import _validate as v
from .._display import Display
from ..errors import ValidationError
from .pricing import price_usd_per_1k_tok
from .tco import CostInputs, _params, param

#: Inputs varied by default (the numeric fields of CostInputs with a range, plus utilization).
INPUTS = ("capex_usd", "life_years", "wacc_frac", "residual_frac", "maintenance_frac_per_year",
          "pue", "electricity_usd_per_kwh", "colo_usd_per_kw_month", "utilization_frac")


def default_ranges(cost: CostInputs, utilization_frac: float = 1.0) -> dict[str, tuple[float, float, float]]:
    """(low, base, high) for each input: ranges from ``datasets/tco_params.csv``.

    The base is the value in ``cost`` (which may differ from the dataset default); a range that
    does not contain the base is widened to include it.
    """
    df = _params()
    out: dict[str, tuple[float, float, float]] = {}
    rel = param("capex_rel_range_frac")
    out["capex_usd"] = (cost.capex_usd * (1 - rel), cost.capex_usd, cost.capex_usd * (1 + rel))
    for name in INPUTS[1:]:
        base = utilization_frac if name == "utilization_frac" else float(getattr(cost, name))
        r = df[(df["parameter"] == name) & (df["hardware"] == "")].iloc[0]
        lo, hi = float(r["lo"]), float(r["hi"])
        out[name] = (min(lo, base), base, max(hi, base))
    return out


@dataclass(frozen=True, repr=False)
class Tornado(Display):
    """One-at-a-time sensitivity of a price.

    Attributes
    ----------
    base_usd_per_1k_tok : float
        Price with every input at its base value.
    table : pandas.DataFrame
        input, low, base, high, price_at_low, price_at_high, swing_usd_per_1k_tok (sorted by
        swing, largest first).
    """

    _display_columns = ("input", "low", "base", "high", "usd_per_m_output_tok_at_low",
                        "usd_per_m_output_tok_at_high", "swing_usd_per_m_tok")

    base_usd_per_1k_tok: float
    table: Any

    @property
    def base_usd_per_m_tok(self) -> float:
        """Price with every input at its base value [USD per million tokens]."""
        return self.base_usd_per_1k_tok * 1e3

    def to_frame(self):
        """input, low, base, high, usd_per_m_output_tok_at_low / _at_high and swing_usd_per_m_tok
        [USD per million tokens], largest swing first."""
        from ..units import per_million

        t = self.table.rename(columns={"price_at_low": "usd_per_m_output_tok_at_low",
                                       "price_at_high": "usd_per_m_output_tok_at_high"})
        for c in ("usd_per_m_output_tok_at_low", "usd_per_m_output_tok_at_high"):
            t[c] = t[c].astype(float) * 1e3
        return per_million(t)


def _price(cost: CostInputs, values: dict[str, Any], board_power_w: Any, tok_per_s_per_chip: Any,
           margin_frac: Any) -> np.ndarray:
    util = values.pop("utilization_frac")
    c = replace(cost, **values)
    return price_usd_per_1k_tok(c.cost_usd_per_chip_h(board_power_w), tok_per_s_per_chip, util, margin_frac)


def tornado(cost: CostInputs, board_power_w: float, tok_per_s_per_chip: float, *,
            utilization_frac: float = 1.0, margin_frac: float = 0.0,
            ranges: dict[str, tuple[float, float, float]] | None = None) -> Tornado:
    """Price swing when each input alone moves from its low to its high value.

    Parameters
    ----------
    cost : CostInputs
        Bottom-up cost inputs (the base case).
    board_power_w : float
        Board power while serving [W].
    tok_per_s_per_chip : float
        Throughput [tokens/s] the price is computed at.
    ranges : dict, optional
        ``{input: (low, base, high)}``; defaults to :func:`default_ranges`.
    """
    import pandas as pd

    if not isinstance(cost, CostInputs):
        raise ValidationError("tornado needs bottom-up CostInputs (a flat $/chip-hour tier has no inputs to vary)")
    rng = ranges or default_ranges(cost, utilization_frac)
    base_vals = {k: b for k, (_, b, _) in rng.items()}
    base = float(_price(cost, dict(base_vals), board_power_w, tok_per_s_per_chip, margin_frac))
    rows = []
    for name, (lo, b, hi) in rng.items():
        p = []
        for x in (lo, hi):
            vals = dict(base_vals)
            vals[name] = x
            p.append(float(_price(cost, vals, board_power_w, tok_per_s_per_chip, margin_frac)))
        rows.append({"input": name, "low": lo, "base": b, "high": hi, "price_at_low": p[0],
                     "price_at_high": p[1], "swing_usd_per_1k_tok": abs(p[1] - p[0])})
    table = pd.DataFrame(rows).sort_values("swing_usd_per_1k_tok", ascending=False, ignore_index=True)
    return Tornado(base, table)


@dataclass(frozen=True, repr=False)
class MonteCarlo(Display):
    """Distribution of a price over uncertain inputs.

    Attributes
    ----------
    samples_usd_per_1k_tok : numpy.ndarray
        One price per draw.
    p5, p50, p95 : float
        Percentiles [USD/1K tokens].
    seed : int
    """

    samples_usd_per_1k_tok: np.ndarray
    p5: float
    p50: float
    p95: float
    seed: int

    def to_frame(self):
        import pandas as pd

        from ..units import per_million

        return per_million(pd.DataFrame([{"n_samples": self.samples_usd_per_1k_tok.size, "seed": self.seed,
                                          "price_usd_per_1k_tok_p5": self.p5, "price_usd_per_1k_tok_p50": self.p50,
                                          "price_usd_per_1k_tok_p95": self.p95}]))


def monte_carlo(cost: CostInputs, board_power_w: float, tok_per_s_per_chip: float, *,
                utilization_frac: float = 1.0, margin_frac: float = 0.0, n_samples: int = 10_000,
                seed: int = 0, ranges: dict[str, tuple[float, float, float]] | None = None) -> MonteCarlo:
    """Seeded Monte Carlo: every input triangular(low, base, high), all drawn at once.

    Returns
    -------
    MonteCarlo
        P5 / P50 / P95 of the price per 1K tokens. The same seed gives the same numbers.
    """
    if not isinstance(cost, CostInputs):
        raise ValidationError("monte_carlo needs bottom-up CostInputs (a flat tier has no inputs to vary)")
    v.draws(n_samples, "n_samples")  # P5-P95
    v.count(seed, "seed", minimum=0)
    rng = ranges or default_ranges(cost, utilization_frac)
    gen = np.random.default_rng(int(seed))
    vals = {}
    for name, (lo, b, hi) in rng.items():
        vals[name] = gen.triangular(lo, b, hi, int(n_samples)) if hi > lo else np.full(int(n_samples), b)
    prices = np.asarray(_price(cost, vals, board_power_w, tok_per_s_per_chip, margin_frac), float)
    p5, p50, p95 = np.percentile(prices, [5, 50, 95])
    return MonteCarlo(prices, float(p5), float(p50), float(p95), int(seed))
