"""Utilization implied by a daily load curve: the share of paid chip-hours that serve tokens.

A fleet sized for its daily peak sells, on average, ``mean load / peak`` of its hours::

    utilization_frac = mean_t load(t) / mean_t capacity(t)

Without autoscaling the capacity is the peak (times ``1 + headroom_frac``) all day. With
autoscaling, capacity follows the load (``load * (1 + headroom_frac)``, never below
``min_capacity_frac`` of the peak capacity) and released chips are not charged to inference
(they are resold or, as at DeepSeek, run research and training jobs).

DeepSeek's V3/R1 fleet (2025-02-27/28, open-infra-index day 6) occupied 278 H800 nodes at peak
and 226.75 on average over 24 h: a fleet that kept its peak all day sold
``226.75 / 278 = 0.816`` of its hours.

Examples
--------
>>> round(from_load_profile([8, 16], [278, 201.125]), 4)     # DeepSeek day-6: 226.75 / 278
0.8156
>>> from_load_profile([8, 16], [278, 201.125], autoscale=True)
1.0
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import _validate as v
from ..errors import DataError, ValidationError
from ..units import HOURS_PER_DAY

#: Tolerance on the hours of a load profile summing to one day [h].
DAY_TOL_H = 1e-6


def check_profile(hours: Any, load: Any) -> tuple[np.ndarray, np.ndarray]:
    """Validate a daily load profile: positive durations that sum to 24 h, non-negative loads.

    Parameters
    ----------
    hours : array
        Duration of each segment [h], > 0, summing to 24.
    load : array
        Load in each segment (nodes, requests/s, tokens/s: any unit, same for all) [>= 0].

    Returns
    -------
    (ndarray, ndarray)
        The hours and loads as float arrays.
    """
    h = np.atleast_1d(np.asarray(hours, float))
    ld = np.atleast_1d(np.asarray(load, float))
    if h.shape != ld.shape or h.ndim != 1:
        raise ValidationError(f"a load profile needs one load per segment: {h.size} durations, {ld.size} loads")
    v.positive(h, "load profile hours")
    v.non_negative(ld, "load profile load")
    total = float(h.sum())
    if abs(total - HOURS_PER_DAY) > DAY_TOL_H:
        raise ValidationError(f"a load profile must cover one day: its hours sum to {total:g}, not 24")
    if not np.any(ld > 0):
        raise ValidationError("a load profile needs some load (every segment is 0)")
    return h, ld


def from_load_profile(hours: Any, load: Any, *, autoscale: bool = False, headroom_frac: float = 0.0,
                      min_capacity_frac: float = 0.0) -> float:
    """Share of paid chip-hours that serve load, for a daily load profile.

    Parameters
    ----------
    hours, load : array
        The profile (see :func:`check_profile`).
    autoscale : bool
        Capacity follows the load (released chips are not charged); else it stays at the peak.
    headroom_frac : float
        Spare capacity kept above the load [fraction, >= 0].
    min_capacity_frac : float
        Autoscaling never goes below this share of the peak capacity [0-1].

    Returns
    -------
    float
        Utilization in (0, 1].
    """
    h, ld = check_profile(hours, load)
    autoscale = v.flag(autoscale, "autoscale")
    v.non_negative(headroom_frac, "headroom_frac")
    v.fraction(min_capacity_frac, "min_capacity_frac")
    ld = ld / ld.max()  # the unit cancels; relative loads cannot overflow
    peak_cap = float(ld.max()) * (1 + headroom_frac)
    cap = np.maximum(ld * (1 + headroom_frac), min_capacity_frac * peak_cap) if autoscale \
        else np.full_like(ld, peak_cap)
    u = float(np.sum(h * ld) / np.sum(h * cap))
    return min(1.0, u)


def parse_profile(text: str) -> tuple[np.ndarray, np.ndarray]:
    """Parse ``"hours:load,hours:load,..."`` (e.g. ``"8:278,16:201.125"``) into a checked profile."""
    segs = [p.strip() for p in str(text).split(",")]
    if not any(segs):
        raise DataError(f"empty load profile {text!r}; give hours:load pairs, e.g. 8:278,16:201.125")
    if not all(segs):
        raise DataError(f"load profile {text!r} has an empty segment between commas; give hours:load "
                        "pairs, e.g. 8:278,16:201.125")
    hours, load = [], []
    for seg in segs:
        a, sep, b = seg.partition(":")
        try:
            if not sep:
                raise ValueError
            hours.append(float(a))
            load.append(float(b))
        except ValueError:
            raise DataError(f"load profile segment {seg!r} is not hours:load (e.g. 8:278)") from None
    h, ld = check_profile(hours, load)
    if np.all(ld == ld[0]):  # 24:1, or 8:5,16:5: no peak above the mean
        raise DataError(f"load profile {text!r} is flat (the same load all day): it gives utilization 1, as "
                        "without it; give segments with different loads (e.g. 8:278,16:201.125) or --utilization")
    return h, ld


def deepseek_fleet_utilization() -> float:
    """DeepSeek's V3/R1 fleet on 2025-02-27/28: average / peak nodes (``tco_params.csv``) [0-1]."""
    from .tco import param

    return param("fleet_avg_nodes", "deepseek-v3") / param("fleet_peak_nodes", "deepseek-v3")
