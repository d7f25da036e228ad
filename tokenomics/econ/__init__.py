"""Economics: cost of a chip-hour, price per 1K tokens, energy per token, uncertainty.

Modules
-------
finance      capital recovery (annuity; rate 0 exact), residual value
tco          bottom-up cost per chip-hour (capex + power + colocation + maintenance), InferenceX tiers, rent vs own,
             the cost bases of a chip, owning cost beside tiers and rentals
utilization  utilization implied by a daily load profile (autoscaling or a peak-sized fleet)
power        workload-dependent board power, fitted on measured H200 power
pricing      price per 1K input / output tokens, blends, margins, J/token, price at an interactivity target
uncertainty  tornado sensitivity and seeded Monte Carlo
disagg       disaggregated prefill/decode vs co-located serving (the HC2000 claim)

This package works on throughputs given to it; :mod:`tokenomics.chain` wires it to the
performance core.
"""

from .disagg import DisaggResult, compare
from .finance import annual_capital_cost_usd, capital_cost_usd_per_h, capital_recovery_factor
from .power import PowerModel, fit_power_model, power_model
from .pricing import (blended_usd_per_1k_tok, cost_usd_per_m_tok, energy_j_per_tok, gross_margin_frac,
                      price_at_interactivity, price_usd_per_1k_tok, wh_per_1k_tok)
from .tco import (CostInputs, TierCost, bases, cost_basis_table, cost_model, gap_drivers, owning_cost_table, param, preset, rent_vs_own,
                  tier_table)
from .utilization import from_load_profile
from .uncertainty import MonteCarlo, Tornado, monte_carlo, tornado

__all__ = [
    "CostInputs", "DisaggResult", "MonteCarlo", "PowerModel", "TierCost", "Tornado",
    "annual_capital_cost_usd", "bases", "blended_usd_per_1k_tok", "capital_cost_usd_per_h",
    "capital_recovery_factor", "compare", "cost_model", "cost_usd_per_m_tok", "energy_j_per_tok",
    "fit_power_model", "from_load_profile", "gross_margin_frac", "monte_carlo", "owning_cost_table", "cost_basis_table", "gap_drivers", "param", "power_model",
    "preset", "price_at_interactivity", "price_usd_per_1k_tok", "rent_vs_own", "tier_table", "tornado",
    "wh_per_1k_tok",
]
