"""From a chip-hour to a price per 1K tokens, and from watts to joules per token.

    price_usd_per_1k_tok = cost_usd_per_chip_h / (tok_per_s_per_chip * 3600 * utilization_frac)
                           * 1000 / (1 - margin_frac)

Input (prefill) and output (decode) tokens are priced from their own throughputs: a chip-second
spent on prefill produces ``prefill tok/s`` input tokens, one spent decoding ``decode tok/s``
output tokens. A workload mix (``input_tok``, ``output_tok`` per request) blends the two by the
tokens of a request. ``margin_frac`` is gross margin (1 - cost/price). All functions broadcast.

Examples
--------
InferenceX's formula, H100 at $1.30/GPU-h and 1,557 tok/s/GPU (0.9 M tok/s per MW x 1.73 kW):

>>> round(float(cost_usd_per_m_tok(1.30, 0.9e6 * 1.73e-3)), 3)
0.232
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import _validate as v
from ..errors import ValidationError
from ..units import S_PER_H


#: Speed per user at which serving costs are quoted where none is stated: InferenceX quotes
#: DeepSeek-R1 serving costs at about 35 tok/s/user (../shared/reference/economics_notes.md, A1).
#: The watch's cost floor, the market table's unpublished speeds and the forecast's
#: infrastructure all price at it.
REFERENCE_TOK_PER_S_PER_USER = 35.0


def check_utilization(utilization_frac: Any) -> Any:
    """Utilization is a fraction in (0, 1]; 60 means 0.6 (one-line error with the hint)."""
    return v.fraction(utilization_frac, "utilization_frac", allow_zero=False)


#: Smallest non-zero gross margin taken [fraction]: below it the margin moves no price by a
#: millionth (prices are shown to 3-4 significant figures), so such a value (1e-320) is a slip.
MIN_MARGIN_FRAC = 1e-6


def check_margin(margin_frac: Any) -> Any:
    """Gross margin is 0 or a fraction in [:data:`MIN_MARGIN_FRAC`, 1)."""
    v.fraction(margin_frac, "margin_frac", allow_one=False)
    a = np.asarray(margin_frac, float)
    tiny = (a > 0) & (a < MIN_MARGIN_FRAC)
    if np.any(tiny):
        raise ValidationError(f"margin_frac {float(a[tiny].ravel()[0]):.3g} is too small to change any price; "
                              f"expected 0 (cost to serve) or {MIN_MARGIN_FRAC:g} to below 1")
    return margin_frac


def price_usd_per_1k_tok(cost_usd_per_chip_h: Any, tok_per_s_per_chip: Any,
                         utilization_frac: Any = 1.0, margin_frac: Any = 0.0) -> np.ndarray:
    """Price of 1,000 tokens [USD/1K tokens].

    Parameters
    ----------
    cost_usd_per_chip_h : float or array
        All-in cost of a chip for one hour [USD/h], > 0.
    tok_per_s_per_chip : float or array
        Tokens one chip produces per second while busy [tokens/s], > 0.
    utilization_frac : float or array
        Share of hours the chip is busy and sold (0, 1]; price scales as 1/utilization.
    margin_frac : float or array
        Gross margin [0, 1); price = cost / (1 - margin).
    """
    v.positive(cost_usd_per_chip_h, "cost_usd_per_chip_h")
    v.positive(tok_per_s_per_chip, "tok_per_s_per_chip")
    check_utilization(utilization_frac)
    check_margin(margin_frac)
    cost = np.asarray(cost_usd_per_chip_h, float)
    tps = np.asarray(tok_per_s_per_chip, float)
    out = cost / (tps * S_PER_H * np.asarray(utilization_frac, float)) * 1e3 / (
        1 - np.asarray(margin_frac, float))
    return out if out.ndim else float(out)


def chip_h_usd_of_price(price_usd_per_1k_tok_: Any, tok_per_s_per_chip: Any) -> np.ndarray:
    """The chip-hour cost a price per 1K tokens recovers at full load and no margin [USD/h].

    The inverse of :func:`price_usd_per_1k_tok` at ``utilization_frac = 1``, ``margin_frac = 0``:
    ``price_usd_per_1k_tok * tok_per_s_per_chip * 3600 / 1000``. With a blended price and the
    chip's blended throughput it is the chip-hour averaged over the chip time of each phase.

    >>> round(float(chip_h_usd_of_price(price_usd_per_1k_tok(2.0, 500.0), 500.0)), 12)
    2.0
    """
    v.non_negative(price_usd_per_1k_tok_, "price_usd_per_1k_tok")
    v.positive(tok_per_s_per_chip, "tok_per_s_per_chip")
    return np.asarray(price_usd_per_1k_tok_, float) * np.asarray(tok_per_s_per_chip, float) * S_PER_H / 1e3


def cost_usd_per_m_tok(cost_usd_per_chip_h: Any, tok_per_s_per_chip: Any) -> np.ndarray:
    """InferenceX's ``cost_per_M = $/GPU-hr / (tokens_per_GPU_hour / 1e6)`` [USD/M tokens]."""
    return np.asarray(price_usd_per_1k_tok(cost_usd_per_chip_h, tok_per_s_per_chip)) * 1e3


def blended_usd_per_1k_tok(price_input: Any, price_output: Any, input_tok: Any,
                           output_tok: Any) -> np.ndarray:
    """Price per 1K tokens of a request mix, input and output tokens counted together.

    Parameters
    ----------
    price_input, price_output : float or array
        [USD/1K tokens].
    input_tok, output_tok : float or array
        Tokens per request (e.g. 1024 / 8192 for reasoning).
    """
    v.non_negative(price_input, "price_input")
    v.non_negative(price_output, "price_output")
    v.non_negative(input_tok, "input_tok")
    v.positive(output_tok, "output_tok")
    i, o = np.asarray(input_tok, float), np.asarray(output_tok, float)
    return (np.asarray(price_input, float) * i + np.asarray(price_output, float) * o) / (i + o)


def usd_per_request(price_input: Any, price_output: Any, input_tok: Any, output_tok: Any) -> np.ndarray:
    """Price of one request [USD]."""
    return (np.asarray(price_input, float) * np.asarray(input_tok, float)
            + np.asarray(price_output, float) * np.asarray(output_tok, float)) / 1e3


def gross_margin_frac(price: Any, cost: Any) -> np.ndarray:
    """Gross margin ``1 - cost / price`` of selling at ``price`` what costs ``cost``."""
    v.positive(price, "price")
    v.non_negative(cost, "cost")
    return 1 - np.asarray(cost, float) / np.asarray(price, float)


def energy_j_per_tok(board_power_w: Any, tok_per_s_per_chip: Any) -> np.ndarray:
    """Accelerator board energy per token [J/token] = board power / tokens per second."""
    v.non_negative(board_power_w, "board_power_w")
    v.positive(tok_per_s_per_chip, "tok_per_s_per_chip")
    out = np.asarray(board_power_w, float) / np.asarray(tok_per_s_per_chip, float)
    return out if out.ndim else float(out)


def wh_per_1k_tok(energy_j_per_token: Any) -> np.ndarray:
    """Convert J/token to Wh per 1,000 tokens (1 Wh = 3,600 J)."""
    return np.asarray(energy_j_per_token, float) * 1e3 / 3600.0


def price_at_interactivity(tok_per_s_per_user: Any, price_usd_per_1k: Any, target_tok_per_s_per_user: Any):
    """Cheapest price that still gives each user at least a target speed.

    Along a batch sweep, per-user speed falls and cost per token falls as the batch grows; the
    price at an interactivity target is the lowest price among configurations whose per-user
    speed meets it (log-interpolated between neighbouring points of the frontier).

    Parameters
    ----------
    tok_per_s_per_user, price_usd_per_1k : array
        The sweep (one entry per configuration).
    target_tok_per_s_per_user : float or array
        Required output tokens/s per user.

    Returns
    -------
    numpy.ndarray
        Price [USD/1K tokens]; NaN where no configuration is fast enough.
    """
    s = np.asarray(tok_per_s_per_user, float).ravel()
    p = np.asarray(price_usd_per_1k, float).ravel()
    if s.shape != p.shape or s.size == 0:
        raise ValidationError("tok_per_s_per_user and price_usd_per_1k must be non-empty and the same length")
    v.positive(s, "tok_per_s_per_user")
    v.positive(p, "price_usd_per_1k")
    v.positive(target_tok_per_s_per_user, "target_tok_per_s_per_user")
    # Pareto frontier: for each speed, the cheapest price among configurations at least as fast.
    order = np.argsort(-s)
    s_sorted, p_sorted = s[order], np.minimum.accumulate(p[order])
    t = np.atleast_1d(np.asarray(target_tok_per_s_per_user, float))
    # log-linear interpolation on increasing speed
    xs, ys = np.log(s_sorted[::-1]), np.log(p_sorted[::-1])
    out = np.exp(np.interp(np.log(t), xs, ys))
    out[t > s.max()] = np.nan
    out[t < s.min()] = p.min()
    return out if np.ndim(target_tok_per_s_per_user) else float(out[0])
