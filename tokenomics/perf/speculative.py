"""Speculative decoding (DSpark, MTP, EAGLE-style drafts): tokens per step and the draft's cost.

A draft proposes ``gamma`` tokens; the target verifies ``gamma + 1`` positions in one multi-token
step and keeps the accepted prefix plus one token of its own. With an i.i.d. per-token acceptance
rate ``alpha`` the expected tokens per step are (Leviathan et al. 2023, eq. 1,
https://arxiv.org/abs/2211.17192)

    E = (1 - alpha**(gamma + 1)) / (1 - alpha)        (E = gamma + 1 when alpha = 1)

The verify step costs what the performance core says a ``gamma + 1``-token step costs; the draft
costs ``gamma`` sequential steps of a draft module (MTP / DSpark style: ``draft_layers`` layers of
the target's own architecture plus its lm head, on the same chips).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from .. import _validate as v
from ..specs import ModelSpec


def expected_tokens_per_step(alpha: Any, gamma: Any) -> np.ndarray:
    """Expected tokens emitted per verify step, ``(1 - alpha^(gamma+1)) / (1 - alpha)``.

    Parameters
    ----------
    alpha : float or array
        Per-token acceptance rate [fraction, 0-1].
    gamma : int or array
        Draft length [tokens] (0 = no speculation).

    Returns
    -------
    ndarray
        Expected tokens per step [tokens], in ``[1, gamma + 1]``.

    Examples
    --------
    >>> float(expected_tokens_per_step(0.5, 3))   # (1 - 1/16) / (1/2)
    1.875
    >>> float(expected_tokens_per_step(1.0, 4))
    5.0
    """
    v.fraction(alpha, "alpha")
    v.count(gamma, "gamma", minimum=0)
    a = np.asarray(alpha, dtype=float)
    g = np.asarray(gamma, dtype=float)
    safe = np.where(a < 1, a, 0.5)
    e = (1 - safe ** (g + 1)) / (1 - safe)
    return np.where(a < 1, e, g + 1)


@dataclass(frozen=True)
class SpecDecode:
    """A speculative-decoding setting.

    Parameters
    ----------
    method : str
        Label (``dspark``, ``mtp``, ``eagle``).
    gamma : int
        Draft tokens per step.
    alpha : float
        Per-token acceptance rate [fraction].
    draft_layers : int
        Transformer layers of the draft module (MTP and DSpark heads: 1).
    """

    method: str = "dspark"
    gamma: int = 4
    alpha: float = 0.778
    draft_layers: int = 1

    def __post_init__(self) -> None:
        v.count(self.gamma, "gamma", minimum=0)
        v.fraction(self.alpha, "alpha")
        v.count(self.draft_layers, "draft_layers")

    @property
    def tokens_per_step(self) -> float:
        """Expected tokens per verify step [tokens]."""
        return float(expected_tokens_per_step(self.alpha, self.gamma))

    @property
    def verify_tokens(self) -> int:
        """Positions the target computes per step, ``gamma + 1``."""
        return int(self.gamma) + 1

    def draft_model(self, target: ModelSpec) -> ModelSpec:
        """The draft module as a :class:`ModelSpec`: ``draft_layers`` layers of the target
        (MoE if the target's last layers are; full attention of the target's kind, as MTP layers
        are, even in a hybrid with linear-attention layers), sharing its vocabulary and lm head."""
        n = int(self.draft_layers)
        return replace(target, name=f"{target.name}-draft{n}", n_layers=n,
                       n_moe_layers=min(n, target.n_moe_layers),
                       n_sliding_layers=min(target.n_sliding_layers, n), n_linear_layers=0,
                       display_name=f"{self.method} draft of {target.name}")

    def replace(self, **changes: Any) -> "SpecDecode":
        return replace(self, **changes)


def speedup(alpha: Any, gamma: Any, verify_cost_ratio: Any, draft_cost_ratio: Any) -> np.ndarray:
    """Speed-up over plain decoding: ``E / (verify_cost_ratio + gamma * draft_cost_ratio)``.

    ``verify_cost_ratio`` is the ``gamma+1``-token step over a 1-token step; ``draft_cost_ratio``
    one draft step over a 1-token target step.

    Examples
    --------
    >>> round(float(speedup(0.8, 4, 1.1, 0.05)), 3)   # E = 3.3616; 3.3616 / 1.3
    2.586
    """
    e = expected_tokens_per_step(alpha, gamma)
    return e / (np.asarray(verify_cost_ratio, float) + np.asarray(gamma, float)
                * np.asarray(draft_cost_ratio, float))
