"""The data each :mod:`tokenomics.plot` function draws, computed from names in one call.

:mod:`tokenomics.plot` draws only what it is given; these helpers run the model for a notebook::

    import tokenomics as tk
    from tokenomics import plotdata

    ax = tk.plot.frontier(plotdata.frontier(["h100-sxm", "h200", "b200"], "llama-3.1-8b"))
    tk.plot.price_breakdown(plotdata.breakdown(["h200", "b200"], "llama-3.1-8b"), tiers=plotdata.tiers())
    tk.plot.tornado(plotdata.tornado("h200", "llama-3.1-8b"), label="h200 / llama-3.1-8b")
    tk.plot.forecast(tk.forecast.forecast("google"), references=plotdata.references())
    tk.plot.watch("price", tk.watch.watch(), prices=plotdata.watch_prices())

Each returns a frame or the library's own result object, so the same data can be inspected,
filtered or saved before it is drawn.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from .errors import ValidationError

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

    from .econ.uncertainty import Tornado

def _names(x: Any) -> list:
    return list(x) if isinstance(x, (list, tuple)) else [x]


def frontier(hardware: Any, model: Any, execution: str = "engine", *, workload: str = "chat",
             system: Any = None, **price_kwargs: Any) -> "dict[str, pd.DataFrame]":
    """Batch sweeps to draw with :func:`tokenomics.plot.frontier`: ``{label: frame}``, one per
    accelerator (or system) and model, each :func:`tokenomics.chain.frontier` ``.to_frame()``.

    Parameters
    ----------
    hardware, model : str or list of str
        Accelerator and model names (or catalog objects). ``hardware`` may be None when
        ``system`` names the systems.
    system : str or list of str, optional
        Multi-chip systems (``tokenomics systems``), one curve each, labelled by the system; the
        layout is what :func:`tokenomics.deployment.resolve` picks unless ``tp``/``ep`` are given.
    execution, workload, **price_kwargs
        As :func:`tokenomics.chain.frontier` (``weight_precision``, ``cost``, ...).

    Examples
    --------
    >>> tk.plot.frontier(tk.plotdata.frontier(None, "llama-3.1-70b", system=["dgx-h200", "dgx-b200"]))  # doctest: +SKIP
    """
    from . import chain

    if model is None:
        raise ValidationError("frontier needs a model (e.g. 'llama-3.1-8b')")
    out = {}
    if system is not None:
        hws = [None] if hardware is None else _names(hardware)
        if len(hws) != 1:
            raise ValidationError("with system=..., give one hardware name or None (each system names its chip)")
        for sy in _names(system):
            for m in _names(model):
                r = chain.frontier(hws[0], m, execution, workload=workload, system=sy, **price_kwargs)
                out[f"{getattr(sy, 'name', sy)} / {getattr(m, 'name', m)} ({execution})"] = r.to_frame()
        return out
    for hw in _names(hardware):
        for m in _names(model):
            r = chain.frontier(hw, m, execution, workload=workload, **price_kwargs)
            out[f"{getattr(hw, 'name', hw)} / {getattr(m, 'name', m)} ({execution})"] = r.to_frame()
    return out


def breakdown(hardware: Any, model: Any, execution: str = "engine", *, batch: int | None = None,
              workload: str = "chat", **price_kwargs: Any) -> "pd.DataFrame":
    """One priced row per accelerator (``price(...).to_frame()``, first batch) for
    :func:`tokenomics.plot.price_breakdown`: ``hardware`` and the ``*_usd_per_chip_h`` components.

    Parameters
    ----------
    hardware : str or list of str
        Accelerators.
    model : str
        Model whose decode power sets the power cost.
    execution, batch, workload, **price_kwargs
        As :func:`tokenomics.chain.price` (``batch`` None: its default operating point).
    """
    import pandas as pd

    from . import chain

    if model is None:
        raise ValidationError("breakdown needs a model (e.g. 'llama-3.1-8b')")
    kw = dict(price_kwargs, workload=workload)
    if batch is not None:
        kw["batch"] = batch
    rows = [chain.price(hw, model, execution, **kw).to_frame().iloc[[0]]
            for hw in _names(hardware)]
    return pd.concat(rows, ignore_index=True)


def tiers() -> "pd.DataFrame":
    """InferenceX tier costs per chip-hour beside the bottom-up estimate
    (:func:`tokenomics.econ.tco.tier_table`), the marks of :func:`tokenomics.plot.price_breakdown`."""
    from .econ import tco

    return tco.tier_table()


def tornado(hardware: str, model: str, execution: str = "engine", *, batch: int | None = None,
            **price_kwargs: Any) -> "Tornado":
    """The one-at-a-time sensitivity of a price (:func:`tokenomics.econ.uncertainty.tornado`) at
    the board power and throughput :func:`tokenomics.chain.price` gives, with bottom-up costs,
    for :func:`tokenomics.plot.tornado`."""
    from . import chain
    from .econ import tco, uncertainty

    kw = dict(price_kwargs)
    if batch is not None:
        kw["batch"] = batch
    p = chain.price(hardware, model, execution, **kw)
    ci = tco.CostInputs.for_hardware(hardware)
    return uncertainty.tornado(ci, float(np.ravel(p.board_power_w)[0]), float(np.ravel(p.tok_per_s_per_chip)[0]))


def references() -> "pd.DataFrame":
    """Published token-demand reference lines (:func:`tokenomics.forecast.scenarios.reference_lines`)
    for :func:`tokenomics.plot.forecast`."""
    from .forecast.scenarios import reference_lines

    return reference_lines()


def watch_prices() -> "pd.DataFrame":
    """The API list prices the watch price chart draws
    (:func:`tokenomics.watch.dashboard.price_points`)."""
    from .watch.dashboard import price_points

    return price_points()
