"""CLI options that describe a deployment, shared by price, throughput, frontier and report."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Optional

import typer

SystemOpt = Annotated[Optional[str], typer.Option("--system", "-s", help="Catalogued multi-chip system (tokenomics systems), e.g. gb200-nvl72.")]
TpOpt = Annotated[Optional[int], typer.Option("--tp", help="Tensor-parallel size [default: resolved].")]
EpOpt = Annotated[Optional[int], typer.Option("--ep", help="Expert-parallel size (MoE) [default: resolved].")]
MoeTpOpt = Annotated[Optional[int], typer.Option("--moe-tp", help="With --tp/--ep: tensor-parallel ways inside each routed expert besides --ep (TensorRT-LLM moe_tp_size; the group is ep x moe-tp chips) [default: what tp and ep imply].")]
DpAttnOpt = Annotated[Optional[bool], typer.Option("--dp-attention/--no-dp-attention", help="MoE: attention data-parallel across the EP group (wide EP) [default: yes].")]
EngineOpt = Annotated[Optional[str], typer.Option("--engine", help="Serving engine: default, vllm, sglang, trt; NAME@RELEASE (sglang@0.4.3) prices that release.")]
EngineVersionOpt = Annotated[Optional[str], typer.Option("--engine-version", help="The engine's release, e.g. 1.1.0rc2: under the engine plan, older TensorRT-LLM GEMM and MoE kernels are timed as measured for that release, placed by release date between the measured ones [default: the newest].")]
SpecOpt = Annotated[Optional[str], typer.Option("--spec", help="Speculative decoding: none, mtp, dspark, METHOD:GAMMA:ALPHA, or METHOD:GAMMA at the published acceptance by draft position (mtp:3).")]
PrefillChunkOpt = Annotated[Optional[str], typer.Option("--prefill-chunk", help="Prompt tokens per prefill step, e.g. 8192 or 8k (SGLang: --chunked-prefill-size, split among attention-DP ranks) [default: the engine's: 8192; SGLang 16384 from 160 GiB of GPU memory; vLLM 2048 below 70 GiB].")]
PrefillBatchOpt = Annotated[Optional[int], typer.Option("--prefill-batch", help="Prompts prefilled together [default: chunk / prompt length].")]
DeploymentOpt = Annotated[Optional[Path], typer.Option("--deployment", help="TOML file describing the deployment (flags override it).")]
TargetOpt = Annotated[Optional[float], typer.Option("--target-tok-s-user", help="Price the cheapest batch that still gives each user this many tokens/s.")]
ExpertPrecOpt = Annotated[Optional[str], typer.Option("--expert-precision", help="Routed/shared expert weights precision [default: the weights'].")]
OverlapOpt = Annotated[Optional[str], typer.Option("--overlap", help="Communication overlap: none, two-batch (two micro-batches, wide EP), tile, prefetch [default none].")]
BalanceOpt = Annotated[Optional[str], typer.Option("--expert-balance", help="Expert-parallel load balancing: none (measured routing skew on the busiest chip) or eplb [default none].")]
KvPrecOpt = Annotated[Optional[str], typer.Option("--kv-precision", help="KV-cache precision [default bf16].")]
MemFracOpt = Annotated[Optional[float], typer.Option("--mem-frac", help="Share of each chip's memory the engine may fill with weights and KV cache, 0-1 (vLLM gpu_memory_utilization, SGLang --mem-fraction-static) [default 0.9].")]


def resolve_deployment(*, model: Optional[str], hardware: Optional[str], system: Optional[str],
                       deployment_file: Optional[Path], default_model: str | None = None,
                       default_hardware: str | None = None, **layout: Any):
    """One Deployment from CLI flags (and an optional TOML file; flags win)."""
    from ..deployment import check_expert_groups, from_file, resolve

    kw = {k: val for k, val in layout.items() if val is not None}
    if deployment_file is not None:
        return from_file(deployment_file, model=model, hardware=hardware, system=system, **kw)
    if hardware is None and system is None:
        hardware = default_hardware
    dep = resolve(model or default_model, hardware=hardware, system=system, **kw)
    check_expert_groups(dep, ep_given="ep" in kw, balance_given="expert_balance" in kw)
    return dep


def describe(dep) -> str:
    """Caption: what the resolver picked on the user's behalf."""
    return ("picked: " + "; ".join(dep.picked)) if dep.picked else "as given"
