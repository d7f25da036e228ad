"""Speculative decoding (DSpark, MTP, EAGLE-style drafts): tokens per step and the draft's cost.

A draft proposes ``gamma`` tokens; the target verifies ``gamma + 1`` positions in one multi-token
step and keeps the accepted prefix plus one token of its own. With an i.i.d. per-token acceptance
rate ``alpha`` the expected tokens per step are (Leviathan et al. 2023, eq. 1,
https://arxiv.org/abs/2211.17192)

    E = (1 - alpha**(gamma + 1)) / (1 - alpha)        (E = gamma + 1 when alpha = 1)

Measured acceptance falls with the draft position (a draft head trained to predict one token ahead
guesses the third worse than the first), so a setting may instead carry the acceptance of each
position given the earlier ones, ``p_1 .. p_gamma`` (``datasets/spec_acceptance.csv``), and then

    E = 1 + p_1 + p_1 p_2 + ... + p_1 ... p_gamma      (:func:`tokens_per_step_by_position`)

The verify step runs ``batch * (gamma + 1)`` rows through every GEMM of the target
(:func:`tokenomics.perf.ops.build_ops`), so at large batch it is compute-bound and a deeper draft
costs time that a small batch hides behind the weight read. A draft module also processes each
prompt once when it is prefilled (``system_prefill``'s draft prefill), which the first token pays.

The verify step costs what the performance core says a ``gamma + 1``-token step costs. The draft
runs on the same chips and is one of:

- a catalogued draft model (``draft``), e.g. ``kimi-k3-dspark``, the published DSpark draft of
  Kimi K3; the method's draft for a target is found as ``<target>-<method>`` in ``models.csv``;
- otherwise ``draft_layers`` layers of the target's own architecture plus its lm head (MTP heads);
- no model at all when ``draft_layers`` is 0 (prompt lookup / n-gram drafting).

Sequential drafts (MTP, EAGLE) pay ``gamma`` one-token draft steps; a block draft (``block``:
DFlash / DSpark, an anchor token followed by ``gamma`` mask tokens in one forward) pays one
``gamma + 1``-row step of the draft.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from .. import _validate as v
from ..errors import ValidationError
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


def tokens_per_step_by_position(acceptance: Any) -> float:
    """Expected tokens per verify step when position ``k`` is accepted with probability ``p_k``
    given positions ``1 .. k-1`` were: ``1 + sum_k prod_{j<=k} p_j``.

    Parameters
    ----------
    acceptance : sequence of float
        ``p_1 .. p_gamma`` [fraction, 0-1].

    Returns
    -------
    float
        Expected tokens per step [tokens], in ``[1, gamma + 1]``.

    Examples
    --------
    >>> round(tokens_per_step_by_position([0.92, 0.7174, 0.3636]), 4)   # 1 + 0.92 + 0.66 + 0.24
    2.82
    >>> tokens_per_step_by_position([0.5, 0.5, 0.5]) == float(expected_tokens_per_step(0.5, 3))
    True
    """
    p = np.asarray(acceptance, dtype=float).ravel()
    v.fraction(p, "acceptance")
    return float(1.0 + np.sum(np.cumprod(p)))


def position_acceptance(method: str, gamma: int) -> tuple[float, ...]:
    """Published acceptance of draft positions ``1 .. gamma`` of ``method``, each given the earlier
    ones accepted (``datasets/spec_acceptance.csv``).

    Raises
    ------
    ValidationError
        The method has no published acceptance by position, or none as deep as ``gamma``.

    Examples
    --------
    >>> position_acceptance("mtp", 2)
    (0.92, 0.7174)
    """
    from ..catalog import load

    v.count(gamma, "gamma", minimum=1)
    df = load("spec_acceptance")
    rows = df[df["method"].astype(str).str.lower() == str(method).lower()].sort_values("position")
    known = sorted(set(df["method"].astype(str)))
    if rows.empty:
        raise ValidationError(f"no published acceptance by draft position for {method!r} (known: "
                              f"{', '.join(known)}); give it as {method}:GAMMA:ALPHA")
    pos = rows["position"].astype(int).tolist()
    if pos[: int(gamma)] != list(range(1, int(gamma) + 1)):
        raise ValidationError(f"{method} acceptance is published for draft positions 1-{max(pos)}, not "
                              f"{int(gamma)}; give it as {method}:{int(gamma)}:ALPHA")
    return tuple(float(x) for x in rows["acceptance_frac"].iloc[: int(gamma)])


def alpha_for_acceptance_length(acceptance_length: float, gamma: int) -> float:
    """The per-token acceptance whose expected tokens per step (:func:`expected_tokens_per_step`)
    equal ``acceptance_length``, the inverse of that function.

    Parameters
    ----------
    acceptance_length : float
        Tokens emitted per verify step (accepted drafts plus the target's own) [tokens], in
        ``[1, gamma + 1]``.
    gamma : int
        Draft tokens per step [tokens].

    Returns
    -------
    float
        Per-token acceptance rate [fraction].

    Examples
    --------
    >>> round(alpha_for_acceptance_length(1.875, 3), 6)   # (1 - 0.5^4) / 0.5
    0.5
    >>> alpha_for_acceptance_length(3.0, 1)
    Traceback (most recent call last):
    ...
    tokenomics.errors.ValidationError: acceptance_length 3.0 outside [1, gamma + 1] = [1, 2]
    """
    v.count(gamma, "gamma", minimum=0)
    al = float(v.positive(acceptance_length, "acceptance_length"))
    g = int(gamma)
    if not 1.0 <= al <= g + 1:
        raise ValidationError(f"acceptance_length {al} outside [1, gamma + 1] = [1, {g + 1}]")
    if al == g + 1:  # every draft accepted
        return 1.0
    lo, hi = 0.0, 1.0  # E(alpha) is increasing in alpha: bisection to float precision
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if float(expected_tokens_per_step(mid, g)) < al else (lo, mid)
    return 0.5 * (lo + hi)


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
        Transformer layers of the target used as the draft module when no catalogued draft model
        applies (MTP heads: 1); 0 = a draft without a model (prompt lookup).
    block : bool
        The draft proposes all ``gamma`` tokens in one forward over ``gamma + 1`` rows (DFlash,
        DSpark) instead of ``gamma`` sequential one-token steps.
    draft : str or None
        A ``models.csv`` model to draft with. ``None``: ``<target>-<method>`` when catalogued,
        else ``draft_layers`` layers of the target.
    position_acceptance : tuple of float or None
        Acceptance of each draft position given the earlier ones, ``p_1 .. p_gamma`` [fraction]
        (:func:`position_acceptance`); when given it sets :attr:`tokens_per_step` and ``alpha``
        is the single rate with the same expected tokens per step.
    """

    method: str = "dspark"
    gamma: int = 4
    alpha: float = 0.778
    draft_layers: int = 1
    block: bool = False
    draft: str | None = None
    position_acceptance: tuple[float, ...] | None = None

    def __post_init__(self) -> None:
        v.count(self.gamma, "gamma", minimum=0)
        v.fraction(self.alpha, "alpha")
        v.count(self.draft_layers, "draft_layers", minimum=0)
        if self.position_acceptance is not None:
            pa = tuple(float(x) for x in self.position_acceptance)
            if len(pa) != int(self.gamma):
                raise ValidationError(f"position_acceptance has {len(pa)} values for {int(self.gamma)} draft "
                                      "positions; give one per draft token")
            v.fraction(np.asarray(pa), "position_acceptance")
            object.__setattr__(self, "position_acceptance", pa)

    @classmethod
    def by_position(cls, method: str, gamma: int, **fields: Any) -> "SpecDecode":
        """The setting of ``gamma`` draft tokens at ``method``'s published acceptance by position
        (:func:`position_acceptance`); ``alpha`` is the equivalent single rate.

        Examples
        --------
        >>> s = SpecDecode.by_position("mtp", 3, draft_layers=1)
        >>> round(s.tokens_per_step, 4), round(s.alpha, 3)   # 1 + 0.92 + 0.66 + 0.24
        (2.82, 0.77)
        """
        pa = position_acceptance(method, gamma)
        e = tokens_per_step_by_position(pa)
        return cls(method=method, gamma=int(gamma), alpha=alpha_for_acceptance_length(e, int(gamma)),
                   position_acceptance=pa, **fields)

    @classmethod
    def from_acceptance_length(cls, acceptance_length: float, gamma: int, **fields: Any) -> "SpecDecode":
        """The setting whose expected tokens per verify step equal a published acceptance length
        (:func:`alpha_for_acceptance_length`); ``fields`` are the other :class:`SpecDecode` fields.

        Examples
        --------
        >>> round(SpecDecode.from_acceptance_length(1.875, 3).alpha, 6)   # (1 - 0.5^4) / 0.5
        0.5
        """
        return cls(gamma=int(gamma), alpha=alpha_for_acceptance_length(acceptance_length, gamma), **fields)

    @property
    def tokens_per_step(self) -> float:
        """Expected tokens per verify step [tokens]: by position where the setting carries
        :attr:`position_acceptance`, else at the single rate ``alpha``."""
        if self.position_acceptance is not None:
            return tokens_per_step_by_position(self.position_acceptance)
        return float(expected_tokens_per_step(self.alpha, self.gamma))

    @property
    def verify_tokens(self) -> int:
        """Positions the target computes per step, ``gamma + 1``."""
        return int(self.gamma) + 1

    @property
    def draft_rows(self) -> int:
        """Rows of one draft forward: ``gamma + 1`` for a block draft, else 1 [tokens]."""
        return int(self.gamma) + 1 if self.block else 1

    @property
    def draft_passes(self) -> int:
        """Draft forwards per verify step: 1 for a block draft, else ``gamma``."""
        return 1 if self.block else int(self.gamma)

    def catalogued_draft(self, target: ModelSpec) -> str | None:
        """Name of the draft's own ``models.csv`` model (``draft``, else ``<target>-<method>``
        when catalogued), or ``None`` when the draft is built from the target."""
        from ..catalog import model_names

        if self.draft is not None:
            return self.draft
        own = f"{target.name}-{self.method}"
        return own if own in model_names() else None

    def draft_model(self, target: ModelSpec) -> ModelSpec | None:
        """The draft module as a :class:`ModelSpec`, or ``None`` for a draft without a model.

        ``draft`` or the catalogued ``<target>-<method>`` when there is one; otherwise
        ``draft_layers`` layers of the target (MoE if the target's last layers are; full attention
        of the target's kind, as MTP layers are, even in a hybrid with linear-attention layers),
        sharing its vocabulary and lm head. Kept per speculative plan, target and data directory
        (every decode step of a deployment asks for it)."""
        from ..catalog import data_dir

        try:
            return _draft_model(self, target, str(data_dir()))
        except TypeError:  # an unhashable plan or model
            return _draft_model.__wrapped__(self, target, "")

    def replace(self, **changes: Any) -> "SpecDecode":
        """A copy with ``changes``; a new ``alpha`` (or ``gamma``) without new
        ``position_acceptance`` drops the published by-position acceptance."""
        if ("alpha" in changes or "gamma" in changes) and "position_acceptance" not in changes:
            changes["position_acceptance"] = None
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


@functools.lru_cache(maxsize=256)
def _draft_model(spec: SpecDecode, target: ModelSpec, _dir: str) -> ModelSpec | None:
    """:meth:`SpecDecode.draft_model` (``_dir``: the data directory the catalogued drafts come from)."""
    from ..catalog import model as _model

    own = spec.catalogued_draft(target)
    if own is not None:
        return _model(own)
    n = int(spec.draft_layers)
    if n == 0:
        return None
    return replace(target, name=f"{target.name}-draft{n}", n_layers=n,
                   n_moe_layers=min(n, target.n_moe_layers),
                   n_sliding_layers=min(target.n_sliding_layers, n), n_linear_layers=0,
                   display_name=f"{spec.method} draft of {target.name}")
