"""Token demand to 2030: history, statsmodels/scipy trend models, backtests, agentic scenarios,
and the infrastructure needed to serve the forecast.

Public API (imported lazily, so ``import tokenomics.forecast`` does not load statsmodels):

- :func:`forecast` -> :class:`ForecastResult` (``.to_frame("annual"|"monthly")``, ``.write``,
  ``.fan_chart``)
- :func:`run_backtest` -> :class:`BacktestResult` (``.to_frame()``: errors vs naive/drift, coverage,
  weights; ``.coverage_by_horizon()``: calibrated intervals scored on the tuning series leaving
  one series out, and on the held-out series (``holdout = 1``) never tuned on)
- :func:`realtime_backtest`: forecasts as of each past month-end scored on later observations;
  :func:`replay_coverage` tabulates them by sample and horizon
- :func:`load_history`, :func:`series`, :func:`series_names`
- :func:`scenario`, :func:`scenario_table`, :func:`reference_lines`, :func:`bass_share`
- :func:`serving_requirements`, :func:`plan_infrastructure`, :func:`price_path`
- :func:`supply_capacity` -> :class:`CapacityResult`: demand against the chips and power of its
  region, what is served and which limit binds; :func:`ai_compute_h100e`
- :func:`estimate_elasticity` -> :class:`Elasticity`, :func:`elasticity_table`: the price
  elasticity of token volume from OpenRouter's per-model weeks (statsmodels, fixed effects);
  :func:`price_response`: the forecast's demand at another price level
- :func:`level_shifts`, :func:`on_latest_definition`, :func:`observations`: what each observation
  measures (definition, kind, measurement-error scale) and the level shift estimated where a
  series changes definition (statsmodels WLS with an intervention dummy)
- :func:`cost_path` -> :class:`RoadmapPath`: the cost and list price of a frontier-class token per
  year along the hardware roadmap, priced by the core
- :func:`drivers` -> :class:`DriversResult`: the structural model (adopters x tokens per adopter per
  day, tasks per adopter x tokens per task) beside the trend; :func:`structural_backtest` scores
  it by rolling origin against drift and a random walk

(The submodules ``backtest`` and ``infrastructure`` share their names with the areas, so the
functions are called ``run_backtest`` and ``plan_infrastructure``.)

Examples
--------
>>> from tokenomics.forecast import forecast
>>> r = forecast("google", fit_through="2025-12")         # doctest: +SKIP
>>> r.to_frame("annual")[["date", "tokens_per_day"]]      # doctest: +SKIP
"""

from __future__ import annotations

import importlib

_EXPORTS = {
    "forecast": "demand", "forecast_series": "demand", "ForecastResult": "demand",
    "fan_chart": "demand", "realtime_backtest": "demand",
    "run_backtest": "backtest", "BacktestResult": "backtest", "replay_coverage": "backtest",
    "load_history": "history", "series": "history", "series_names": "history",
    "check_history": "history",
    "scenario": "scenarios", "scenario_table": "scenarios", "reference_lines": "scenarios",
    "bass_share": "scenarios", "Scenario": "scenarios", "SCENARIOS": "scenarios",
    "serving_requirements": "infrastructure", "plan_infrastructure": "infrastructure",
    "price_path": "infrastructure", "InfraResult": "infrastructure",
    "MODELS": "models", "fit": "models",
    "estimate_elasticity": "elasticity", "elasticity_table": "elasticity", "Elasticity": "elasticity",
    "supply_capacity": "capacity", "CapacityResult": "capacity", "ai_compute_h100e": "capacity",
    "price_response": "elasticity",
    "drivers": "structural", "DriversResult": "structural", "structural_backtest": "structural",
    "fit_structural": "structural", "load_drivers": "structural",
    "level_shifts": "measurement", "on_latest_definition": "measurement", "observations": "measurement",
    "cost_path": "roadmap", "regional_cost_paths": "roadmap", "load_roadmap": "roadmap", "RoadmapPath": "roadmap",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str):
    if name in _EXPORTS:
        mod = importlib.import_module(f"{__name__}.{_EXPORTS[name]}")
        return getattr(mod, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return sorted(list(globals()) + __all__)
