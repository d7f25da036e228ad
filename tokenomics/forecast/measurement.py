"""What each token-volume observation measures: its definition, its kind, its error, and the level
shift where a series changes definition.

A published token count is a measurement, not the demand itself. Each row of the history may say

* ``definition``: what the figure counts (scope and who measured it, e.g. "national daily token
  consumption (National Data Administration)"). Where a series' definition changes, the jump at the
  change is a level shift, not growth: it is estimated (:func:`level_shifts`, an intervention dummy
  in a statsmodels WLS regression) and the earlier observations are moved onto the latest
  definition (:func:`on_latest_definition`) before any trend is fitted, so the forecast extrapolates
  the growth within one definition from the level of the newest.
* ``kind``: how the figure was published, ``+``-joined (``datasets/measurement_kinds.csv``):
  ``reported`` (the entity's own figure), ``lower_bound`` ("over X", used as X), ``estimate`` (a
  third party's), ``derived`` (computed from a stated multiple or a period total), ``secondary``
  (read in press or digests). Each kind has a measurement-error scale in decades; a row's scale is
  the root sum of squares of its kinds' (:func:`scale_dec`). The scales weight the level-shift
  regression and give its interval.

:func:`observations` tabulates every observation with its definition, kind, scale, the shift
applied and, for a part of another series (``part_of``), its share of the whole at that date
(a part never exceeds its whole: a share above 1 is a measurement problem, flagged).

Examples
--------
>>> from tokenomics.forecast.measurement import level_shifts
>>> from tokenomics.forecast.history import load_history
>>> s = level_shifts(load_history())
>>> s[["series", "date"]].astype(str).values.tolist()
[['china', '2026-06-15']]
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ..dates import decimal_year
from .history import kind_scales, kinds_of, part_of

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

#: Observations of the older definition that estimate a shift: those within this many years
#: before the change (at least :data:`MIN_BEFORE`, the latest ones), and of the newer definition
#: within this many years after its first observation.
SHIFT_WINDOW_YEAR = 1.0
#: Fewest observations of the older definition that estimate a shift (a level and a growth rate).
MIN_BEFORE = 2
def scale_dec(history: "pd.DataFrame") -> np.ndarray:
    """Measurement-error scale of each row [decades]: the root sum of squares of its kinds' scales.

    >>> import pandas as pd
    >>> round(float(scale_dec(pd.DataFrame({"kind": ["lower_bound+secondary"]}))[0]), 4)
    0.05
    """
    scales = kind_scales()
    kinds = kinds_of(history)
    per_text = {text: float(np.sqrt(sum(scales[p.strip()] ** 2 for p in text.split("+"))))
                for text in kinds.unique()}
    return kinds.map(per_text).to_numpy(float)


def _definitions(s: "pd.DataFrame") -> np.ndarray | None:
    """One series' definition per row (blanks take the previous row's, then the next's), or None
    where the series has one definition (or none stated)."""
    from ..io import blank_cells

    if "definition" not in s.columns:
        return None
    d = s["definition"].astype(object).where(~blank_cells(s["definition"]))
    d = d.ffill().bfill()
    if d.isna().all() or d.nunique() <= 1:
        return None
    return d.astype(str).str.strip().to_numpy()


def _segments(defs: np.ndarray) -> list[tuple[int, int]]:
    """``(start, stop)`` row ranges of consecutive equal definitions."""
    change = np.flatnonzero(defs[1:] != defs[:-1]) + 1
    bounds = np.concatenate([[0], change, [len(defs)]])
    return list(zip(bounds[:-1], bounds[1:]))


def _shift(t: np.ndarray, y: np.ndarray, w: np.ndarray, new: np.ndarray) -> tuple[float, float, int]:
    """Level shift of the newer definition over the older, ``(shift, se, dof)`` [decades]: statsmodels
    WLS of ``log10 y = a + b (t - t0) + shift * new`` weighted by ``1 / scale**2``. Its variance is
    the larger of the measurement scales' alone (``(X'WX)^-1``) and the residuals' (where a degree
    of freedom is left): a shift estimated from two points and one is as uncertain as the
    measurements make it, and no less uncertain than its residuals say."""
    import statsmodels.api as sm

    t0 = t[new][0]
    x = np.column_stack([np.ones_like(t), t - t0, new.astype(float)])
    res = sm.WLS(y, x, weights=1.0 / w ** 2).fit()
    var = float(res.normalized_cov_params[2, 2])
    dof = int(round(res.df_resid))
    if dof >= 1:
        var = max(var, float(res.cov_params()[2, 2]))
    return float(res.params[2]), float(np.sqrt(var)), dof


def _series_shifts(s: "pd.DataFrame") -> tuple[np.ndarray, list[dict]]:
    """One series' cumulative shift onto its latest definition per row [decades] and a record of
    each change; ``s`` sorted by date."""
    n = len(s)
    shift = np.zeros(n)
    defs = _definitions(s)
    if defs is None:
        return shift, []
    t = decimal_year(s["date"])
    y = np.log10(s["tokens_per_day"].to_numpy(float))
    w = scale_dec(s)
    segs = _segments(defs)
    records = []
    for (a, b), (_, c) in zip(reversed(segs[:-1]), reversed(segs[1:])):  # latest change first
        yy = y + shift  # the newer segments already on the latest definition
        before = np.arange(a, b)
        near = before[t[before] >= t[b] - SHIFT_WINDOW_YEAR]
        before = near if len(near) >= MIN_BEFORE else before[-MIN_BEFORE:]
        after = np.arange(b, c)
        after = after[t[after] <= t[b] + SHIFT_WINDOW_YEAR]
        rec = {"series": str(s["series"].iloc[0]), "date": s["date"].iloc[b], "from_definition": defs[a],
               "to_definition": defs[b], "n_before": int(len(before)), "n_after": int(len(after))}
        if len(before) < MIN_BEFORE:
            records.append({**rec, "shift_dec": np.nan, "shift_lo95_dec": np.nan, "shift_hi95_dec": np.nan,
                            "applied": False,
                            "why": f"{len(before)} observation(s) of the older definition; {MIN_BEFORE} needed"})
            break  # the older observations cannot be put on the newer definition
        rows = np.concatenate([before, after])
        d, se, dof = _shift(t[rows], yy[rows], w[rows], rows >= b)
        shift[:b] += d
        records.append({**rec, "shift_dec": d, "shift_lo95_dec": d - 1.96 * se, "shift_hi95_dec": d + 1.96 * se,
                        "applied": True, "why": ("WLS on the measurement scales" if dof < 1 else
                                                 f"WLS, {dof} residual degree(s) of freedom")})
    return shift, records[::-1]


def level_shifts(history: "pd.DataFrame") -> "pd.DataFrame":
    """Each definition change in a validated history, with its estimated level shift.

    Parameters
    ----------
    history : pandas.DataFrame
        Long frame (:func:`~tokenomics.forecast.history.check_history`) with a ``definition`` column
        (none: no changes).

    Returns
    -------
    pandas.DataFrame
        One row per change: ``series``, ``date`` (first observation of the newer definition),
        ``from_definition``, ``to_definition``, ``shift_dec`` (log10 of the newer definition's level
        over the older's at the change [decades]), ``shift_lo95_dec``, ``shift_hi95_dec``,
        ``n_before``, ``n_after`` (observations that estimate it), ``applied`` (False where too few
        older observations: then that series is fitted as published) and ``why``.
    """
    import pandas as pd

    cols = ["series", "date", "from_definition", "to_definition", "shift_dec", "shift_lo95_dec",
            "shift_hi95_dec", "n_before", "n_after", "applied", "why"]
    records = []
    if "definition" in history.columns:
        for _, s in history.groupby("series", sort=True):
            records += _series_shifts(s.sort_values("date", kind="stable"))[1]
    return pd.DataFrame(records, columns=cols)


def on_latest_definition(history: "pd.DataFrame") -> "pd.DataFrame":
    """``history`` with every series on its latest definition: the observations before a definition
    change moved by the estimated level shift (:func:`level_shifts`).

    Returns
    -------
    pandas.DataFrame
        The same rows; ``tokens_per_day`` on the latest definition, ``tokens_per_day_published`` as
        published and ``level_shift_dec`` the shift applied [decades] (0 for most rows). A history
        without definition changes is returned unchanged (no columns added).
    """
    if "definition" not in history.columns or "tokens_per_day_published" in history.columns:
        return history
    out, changed = history, False
    for _, s in history.groupby("series", sort=False):
        if _definitions(s) is None:
            continue
        s = s.sort_values("date", kind="stable")
        shift = _series_shifts(s)[0]
        if not shift.any():
            continue
        if not changed:
            out = history.copy()
            out["tokens_per_day_published"] = out["tokens_per_day"].astype(float)
            out["level_shift_dec"] = 0.0
            changed = True
        out.loc[s.index, "level_shift_dec"] = shift
        out.loc[s.index, "tokens_per_day"] = s["tokens_per_day"].to_numpy(float) * 10.0 ** shift
    return out


def observations(history: "pd.DataFrame") -> "pd.DataFrame":
    """Every observation with what it measures and how well (``tokenomics forecast --show measurement``).

    Returns
    -------
    pandas.DataFrame
        ``series, date, definition, kind, scale_dec, tokens_per_day_published, level_shift_dec,
        tokens_per_day`` (on the latest definition), ``whole`` (the series it is part of) and
        ``share_of_whole_frac`` (the part over its whole at that date, the whole interpolated
        log-linearly between its observations on its latest definition; NaN outside them);
        ``exceeds_whole`` flags a share above 1.
    """
    h = on_latest_definition(history).sort_values(["series", "date"], kind="stable").reset_index(drop=True)
    out = h[["series", "date"]].copy()
    out["definition"] = (h["definition"].astype(object).fillna("") if "definition" in h.columns else "")
    out["kind"] = kinds_of(h).to_numpy()
    out["scale_dec"] = scale_dec(h)
    out["tokens_per_day_published"] = h.get("tokens_per_day_published", h["tokens_per_day"]).to_numpy(float)
    out["level_shift_dec"] = h["level_shift_dec"].to_numpy(float) if "level_shift_dec" in h.columns else 0.0
    out["tokens_per_day"] = h["tokens_per_day"].to_numpy(float)
    wholes = part_of(h)
    out["whole"] = out["series"].map(wholes).astype(object).fillna("")
    share = np.full(len(out), np.nan)
    t = decimal_year(out["date"])
    for part, whole in wholes.items():
        rows = np.flatnonzero((out["series"] == part).to_numpy())
        w = out[out["series"] == whole]
        if w.empty:
            continue
        tw, yw = decimal_year(w["date"]), np.log(w["tokens_per_day"].to_numpy(float))
        inside = (t[rows] >= tw.min()) & (t[rows] <= tw.max())
        share[rows[inside]] = out["tokens_per_day"].to_numpy(float)[rows[inside]] / np.exp(
            np.interp(t[rows[inside]], tw, yw))
    out["share_of_whole_frac"] = share
    out["exceeds_whole"] = share > 1.0
    return out
