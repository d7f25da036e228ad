"""What each serving engine does by default under expert parallelism: compute/communication
overlap and expert load balancing (``datasets/engine_defaults.csv``, one sourced row per engine
and setting).

A published serving row or a deployment that does not state ``overlap`` or ``expert_balance``
gets its engine's documented default: DeepSeek's own inference stack runs two micro-batches
that overlap the expert all-to-all with compute and places redundant experts by load (Huawei's
CloudMatrix-Infer balances experts by load); SGLang, vLLM and TensorRT-LLM leave both off unless asked
(``--enable-two-batch-overlap``, ``--enable-dbo``, ``--enable-eplb``).
"""

from __future__ import annotations

import functools

#: Settings :func:`engine_default` knows (``datasets/engine_defaults.csv`` ``setting``).
DEFAULT_SETTINGS = ("overlap", "expert_balance")


@functools.lru_cache(maxsize=1)
def _defaults() -> dict[tuple[str, str], tuple[str, str, str]]:
    from ..catalog import load

    return {(str(r.engine), str(r.setting)): (str(r.value), str(r.applies_to), str(r.source))
            for r in load("engine_defaults").itertuples()}


def engine_default(engine: str, setting: str, is_moe: bool, ep: int) -> tuple[str, str] | None:
    """What ``engine`` (a published engine name: ``sglang``, ``deepseek-internal``, ...) does by
    default for ``setting`` (``overlap`` or ``expert_balance``), and its source; None where the
    table says nothing or the condition (``moe_ep``: an MoE model at expert parallelism > 1)
    does not hold.

    >>> engine_default("deepseek-internal", "overlap", True, 32)[0]
    'two-batch'
    >>> engine_default("sglang", "overlap", True, 32)[0]
    'none'
    """
    from ..deployment import ENGINE_ALIASES

    raw = str(engine).strip().lower()
    hit = _defaults().get((raw, setting)) or _defaults().get((ENGINE_ALIASES.get(raw, raw), setting))
    if hit is None:
        return None
    value, applies, source = hit
    if applies == "moe_ep" and not (is_moe and int(ep) > 1):
        return None
    return value, source
