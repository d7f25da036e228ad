"""The one oracle for what a chip must hold: weight shard and KV-cache shard.

Every path (single-chip steps, multi-chip systems, frontiers, resolvers, max batch) asks this
module; no other module computes resident bytes (a contract test keeps it so).

Layout conventions (one model replica = ``pp`` stages of ``max(tp, ep)`` chips):

* attention, dense MLPs, shared experts, the router and the embedding/lm head are split ``tp``
  ways; with attention data parallelism (``attn_dp = max(tp, ep) / tp`` groups) they are
  replicated across the groups;
* routed experts are split over the stage's ``max(tp, ep)`` chips (``ep * moe_tp`` with an
  explicit ``ParallelPlan.moe_tp``): ``ep`` ways by expert and the remaining ``stage / ep`` ways
  by tensor parallelism inside each expert (``ep = 1`` with
  ``tp > 1`` is the vLLM/SGLang default of TP-sharded experts). When ``ep`` does not divide the
  expert count every chip holds ``ceil(n_experts / ep)`` expert slots (the spare slots hold
  redundant copies of hot experts, as DeepSeek's EPLB does);
* the KV cache is split by sequence over the ``attn_dp`` groups, by layer over ``pp`` stages, and
  by KV head over ``min(tp, n_kv_heads)`` chips for GQA (a KV head is replicated when ``tp``
  exceeds the KV heads); MLA's latent cache is not split by ``tp``; sliding-window layers hold
  at most their window.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..specs import ModelSpec, component_precisions, head_bytes, precision_bytes
from .profile import load_profile


def usable_hbm_bytes(accelerator: Any, profile: Any = None, mem_frac: float | None = None) -> float:
    """Device memory a serving engine may fill with weights and KV [B].

    ``hbm_bytes x mem_frac``: the engine's own setting where a deployment states one (vLLM
    ``gpu_memory_utilization``, SGLang ``--mem-fraction-static``), else the profile's
    ``usable_mem_frac`` (0.9 in every shipped profile: vLLM's default; the rest holds
    activations, workspace and the runtime).
    """
    if mem_frac is not None:
        from .. import _validate as v

        v.fraction(mem_frac, "mem_frac", allow_zero=False)  # a share of the chip: 2.0 would price a batch that does not fit
        return float(accelerator.hbm_bytes) * float(mem_frac)
    prof = load_profile(profile, accelerator.name)
    return float(accelerator.hbm_bytes) * prof.usable_mem_frac


def expert_tp_ways(tp: int, ep: int) -> float:
    """Tensor-parallel ways inside each routed expert: a stage of ``max(tp, ep)`` chips splits the
    experts ``ep`` ways by expert and the rest inside each expert, ``max(tp, ep) / ep``."""
    return max(int(tp), int(ep)) / int(ep)


def expert_slots_per_chip(model: ModelSpec, ep: int) -> int:
    """Routed-expert slots one chip holds: ``ceil(n_experts / ep)`` (redundant copies fill the rest)."""
    if not model.is_moe:
        return 0
    return int(math.ceil(model.n_experts / int(ep)))


def weight_bytes_per_chip(model: ModelSpec, *, tp: int = 1, ep: int = 1, pp: int = 1,
                          weight_precision: str | None = None,
                          expert_precision: str | None = None, stage: int | None = None) -> float:
    """Weight bytes resident on one chip [B].

    Parameters
    ----------
    model : ModelSpec
    tp, ep, pp : int
        Tensor-, expert- and pipeline-parallel sizes.
    stage : int, optional
        Chips of one pipeline stage (default ``max(tp, ep)``); the routed experts are split
        ``stage / ep`` ways inside each expert (``ParallelPlan.moe_tp``).
    weight_precision : str, optional
        Storage precision of the dense and attention weights (default: the model's native one).
    expert_precision : str, optional
        Storage precision of the routed and shared experts (default: ``weight_precision``).
    """
    m = model
    wprec, eprec = component_precisions(m, weight_precision, expert_precision)
    wb = precision_bytes(wprec)
    eb = precision_bytes(eprec)
    routed = m.n_moe_layers * expert_slots_per_chip(m, ep) * m.expert_params() / expert_tp_ways(stage or tp, ep)
    # the embedding and output head stay unquantized (head_bytes)
    return float(((m.dense_weight_bytes(wb, eb) + m.embedding_params() * head_bytes(wb)) / tp + routed * eb) / pp)


def kv_bytes_per_seq_per_chip(model: ModelSpec, context_tok: Any, *, tp: int = 1, pp: int = 1,
                              kv_precision: str = "bf16") -> np.ndarray:
    """KV-cache bytes one sequence of ``context_tok`` cached tokens leaves on each chip that holds it
    (with linear-attention layers, their fixed recurrent state, split over tensor-parallel heads) [B]."""
    m = model
    ctx = np.asarray(context_tok, dtype=float)
    split = (min(int(tp), m.n_kv_heads) if m.attention == "gqa" else 1) * int(pp)
    # a sequence with nothing cached has no state yet
    state = (ctx > 0) * m.linear_state_bytes_per_seq() / (min(int(tp), max(m.linear_heads, 1)) * int(pp))
    return ctx * m.kv_bytes_per_tok(precision_bytes(kv_precision), ctx) / split + state


def resident_bytes(model: ModelSpec, *, batch: Any = 1, context_tok: Any = 1024, tp: int = 1,
                   ep: int = 1, pp: int = 1, attn_dp: int = 1, weight_precision: str | None = None,
                   expert_precision: str | None = None, kv_precision: str = "bf16",
                   stage: int | None = None) -> dict[str, Any]:
    """Weights and KV cache resident on the busiest chip [B].

    Parameters
    ----------
    batch : array_like
        Sequences of the stage group (all attention-DP groups together); the busiest group holds
        ``ceil(batch / attn_dp)`` of them.
    context_tok : array_like
        Cached tokens per sequence (sliding-window layers hold at most their window).

    Returns
    -------
    dict
        ``weights_bytes`` (float), ``kv_bytes`` and ``total_bytes`` (arrays over batch/context),
        ``kv_bytes_per_seq`` (per sequence on one chip).
    """
    w = weight_bytes_per_chip(model, tp=tp, ep=ep, pp=pp, weight_precision=weight_precision,
                              expert_precision=expert_precision, stage=stage or int(tp) * int(attn_dp))
    per_seq = kv_bytes_per_seq_per_chip(model, context_tok, tp=tp, pp=pp, kv_precision=kv_precision)
    seqs = np.ceil(np.asarray(batch, dtype=float) / int(attn_dp))
    kv = seqs * per_seq
    return {"weights_bytes": w, "kv_bytes": kv, "total_bytes": w + kv, "kv_bytes_per_seq": per_seq}


def max_batch(model: ModelSpec, usable_bytes: float, *, context_tok: Any = 1024, tp: int = 1,
              ep: int = 1, pp: int = 1, attn_dp: int = 1, weight_precision: str | None = None,
              expert_precision: str | None = None, kv_precision: str = "bf16", stage: int | None = None):
    """Largest batch of the stage group whose weights and KV fit ``usable_bytes`` per chip (0 if none)."""
    r = resident_bytes(model, batch=1, context_tok=context_tok, tp=tp, ep=ep, pp=pp, attn_dp=1,
                       weight_precision=weight_precision, expert_precision=expert_precision,
                       kv_precision=kv_precision, stage=stage or int(tp) * int(attn_dp))
    free = usable_bytes - r["weights_bytes"]
    per = np.maximum(np.asarray(r["kv_bytes_per_seq"], dtype=float), 1e-30)
    out = np.floor(np.maximum(free, 0.0) / per) * int(attn_dp)
    return out.astype(int) if np.ndim(out) else int(out)
