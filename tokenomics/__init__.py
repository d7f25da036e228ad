"""tokenomics: the economics of LLM inference.

perf (step time, tokens/s, bound) -> econ (USD per chip-hour, USD per 1K tokens, J per token)
-> forecast (token demand to 2030) and watch (price cuts, megakernel adoption, supernode
deliveries) -> reports and the ``tokenomics`` CLI.

Nothing heavy is imported at ``import tokenomics``; the names below load on first use.

Examples
--------
>>> import tokenomics as tk
>>> r = tk.decode_step("h200", "llama-3.1-8b", "graph", batch=32, context_tok=1024)
>>> round(float(r.tok_per_s_per_replica), -2) > 3000
True
>>> p = tk.price("h200", "llama-3.1-8b", "graph", batch=32)          # doctest: +SKIP
>>> p.to_frame()[["price_usd_per_1k_output_tok", "energy_j_per_tok"]] # doctest: +SKIP
"""

from __future__ import annotations

import importlib
from typing import Any

from .errors import (  # noqa: F401  (light; part of the public API)
    DataError,
    DoesNotFitError,
    TokenomicsError,
    TokenomicsWarning,
    UnknownNameError,
    ValidationError,
)

__version__ = "0.3.0"

_LAZY: dict[str, tuple[str, str | None]] = {
    # catalogs and parameter holders
    "catalog": ("tokenomics.catalog", None),
    "accelerator": ("tokenomics.catalog", "accelerator"),
    "model": ("tokenomics.catalog", "model"),
    "load": ("tokenomics.catalog", "load"),
    "Accelerator": ("tokenomics.specs", "Accelerator"),
    "ModelSpec": ("tokenomics.specs", "ModelSpec"),
    "model_from_hf_config": ("tokenomics.hf_config", "model_from_hf_config"),
    "ExecutionPlan": ("tokenomics.specs", "ExecutionPlan"),
    "PLANS": ("tokenomics.specs", "PLANS"),
    # performance core
    "decode_step": ("tokenomics.perf.step", "decode_step"),
    "prefill": ("tokenomics.perf.step", "prefill"),
    "max_batch": ("tokenomics.perf.step", "max_batch"),
    "Profile": ("tokenomics.perf.profile", "Profile"),
    "system_step": ("tokenomics.perf.system", "system_step"),
    "ParallelPlan": ("tokenomics.perf.parallel", "ParallelPlan"),
    "SpecDecode": ("tokenomics.perf.speculative", "SpecDecode"),
    # a deployment: chips, layout, engine, precisions; resolved with production defaults
    "Deployment": ("tokenomics.deployment", "Deployment"),
    "resolve": ("tokenomics.deployment", "resolve"),
    # perf -> econ
    "price": ("tokenomics.chain", "price"),
    "OperatingPoint": ("tokenomics.chain", "OperatingPoint"),
    "chain": ("tokenomics.chain", None),
    "econ": ("tokenomics.econ", None),
    # forecast, watch, showdown, sweeps
    "forecast": ("tokenomics.forecast", None),
    "watch": ("tokenomics.watch", None),
    "perf": ("tokenomics.perf", None),
    "showdown": ("tokenomics.studies.showdown", None),
    "sweep": ("tokenomics.sweep", None),
    # figures (matplotlib loads on the first plot)
    "plot": ("tokenomics.plot", None),
    "plotdata": ("tokenomics.plotdata", None),
}

__all__ = sorted(list(_LAZY) + ["DataError", "DoesNotFitError", "TokenomicsError", "TokenomicsWarning",
                                "UnknownNameError", "ValidationError", "__version__"])


def __getattr__(name: str) -> Any:
    if name not in _LAZY:
        raise AttributeError(f"module 'tokenomics' has no attribute {name!r}")
    mod_name, attr = _LAZY[name]
    mod = importlib.import_module(mod_name)
    value = mod if attr is None else getattr(mod, attr)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return __all__
