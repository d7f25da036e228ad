"""Capital recovery: turning a purchase price into a cost per hour.

An asset bought for ``capex_usd``, kept ``life_years`` and sold for ``residual_frac`` of its
price at the end costs, per year, the annuity that repays it at the cost of capital
``wacc_frac``::

    payment = (capex - residual / (1 + r)^n) * r / (1 - (1 + r)^-n)

With ``r = 0`` the capital recovery factor is exactly ``1 / n`` (straight-line). Functions take
scalars or numpy arrays and broadcast.

Examples
--------
>>> round(float(capital_recovery_factor(0.0, 4)), 6)
0.25
>>> round(float(capital_recovery_factor(0.10, 4)), 6)   # textbook CRF(10 %, 4 y) = 0.315471
0.315471
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import _validate as v
from ..errors import ValidationError
from ..units import HOURS_PER_YEAR

#: The largest cost of capital accepted [1/year]. A WACC above 100 %/year is a percent typed as
#: a number ("900" for 9 %) far more often than a real cost of capital.
MAX_WACC_FRAC = 1.0


def check_wacc(wacc_frac: Any) -> Any:
    """Validate a cost of capital given as a fraction per year (0-1)."""
    a = np.asarray(wacc_frac, dtype=float) if not isinstance(wacc_frac, str) else None
    if a is None:
        raise ValidationError(f"wacc_frac must be a number, got {wacc_frac!r}")
    if not np.all(np.isfinite(a)) or np.any(a < 0) or np.any(a > MAX_WACC_FRAC):
        first = float(np.ravel(a[~((a >= 0) & (a <= MAX_WACC_FRAC))] if a.ndim else a)[0])
        hint = ""
        if np.isfinite(first) and first > MAX_WACC_FRAC and max(2.0, MAX_WACC_FRAC) <= first <= 100:
            # the percent rule of tokenomics._validate.fraction: 2..100 reads as a percent
            hint = f" Fractions are 0-1 per year; did you mean {first / 100:g} ({first:g} %)?"
        raise ValidationError(
            f"wacc_frac must be a fraction per year in [0, {MAX_WACC_FRAC:g}], got {first:g}.{hint}"
        )
    return wacc_frac


def check_life(life_years: Any) -> Any:
    """Validate an economic life in years (> 0)."""
    a = np.asarray(life_years, dtype=float)
    if not np.all(np.isfinite(a)) or np.any(a <= 0):
        raise ValidationError(
            f"life_years must be a positive number of years, got {v._show(life_years)}. "
            "Hint: accelerators are typically depreciated over 3-6 years"
        )
    return life_years


def capital_recovery_factor(wacc_frac: Any, life_years: Any) -> np.ndarray:
    """Capital recovery factor: the annual payment that repays 1 USD over ``life_years``.

    Parameters
    ----------
    wacc_frac : float or array
        Cost of capital [1/year], a fraction (0.08 for 8 %).
    life_years : float or array
        Economic life [years], > 0 (need not be an integer).

    Returns
    -------
    numpy.ndarray
        ``r / (1 - (1 + r)^-n)`` [1/year]; exactly ``1 / n`` where ``r == 0``.
    """
    check_wacc(wacc_frac)
    check_life(life_years)
    r, n = np.broadcast_arrays(np.asarray(wacc_frac, dtype=float), np.asarray(life_years, dtype=float))
    out = np.empty(r.shape, dtype=float)
    zero = r == 0
    out[zero] = 1.0 / n[zero]
    rz, nz = r[~zero], n[~zero]
    out[~zero] = rz / -np.expm1(-nz * np.log1p(rz))
    return out if out.ndim else out[()]


def annual_capital_cost_usd(capex_usd: Any, wacc_frac: Any, life_years: Any,
                            residual_frac: Any = 0.0) -> np.ndarray:
    """Level annual payment that recovers an investment net of its discounted residual value.

    Parameters
    ----------
    capex_usd : float or array
        Purchase price [USD], >= 0.
    wacc_frac : float or array
        Cost of capital [1/year] (fraction).
    life_years : float or array
        Economic life [years].
    residual_frac : float or array
        Resale value at the end of life as a fraction of ``capex_usd`` [0-1].

    Returns
    -------
    numpy.ndarray
        [USD/year]. Equals ``-numpy_financial.pmt(r, n, capex, -residual)`` (payments at period end).
    """
    v.non_negative(capex_usd, "capex_usd")
    v.fraction(residual_frac, "residual_frac")
    crf = capital_recovery_factor(wacc_frac, life_years)
    r = np.asarray(wacc_frac, dtype=float)
    n = np.asarray(life_years, dtype=float)
    capex = np.asarray(capex_usd, dtype=float)
    pv_residual = capex * np.asarray(residual_frac, dtype=float) * np.exp(-n * np.log1p(r))
    return (capex - pv_residual) * crf


def capital_cost_usd_per_h(capex_usd: Any, wacc_frac: Any, life_years: Any,
                           residual_frac: Any = 0.0) -> np.ndarray:
    """Capital recovery per hour of calendar time [USD/h] (annual payment / 8760 h)."""
    return annual_capital_cost_usd(capex_usd, wacc_frac, life_years, residual_frac) / HOURS_PER_YEAR
