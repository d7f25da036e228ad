"""CLI commands of the economics area: ``price`` and ``report``. Parsing and formatting only."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

from . import app
from ._common import FORMAT_HELP, Format, emit
from ._deploy import (BalanceOpt, DeploymentOpt, DpAttnOpt, EngineOpt, EngineVersionOpt, EpOpt, MoeTpOpt, ExpertPrecOpt, KvPrecOpt, MemFracOpt, OverlapOpt,
                      PrefillBatchOpt,
                      PrefillChunkOpt, SpecOpt, SystemOpt, TargetOpt, TpOpt, describe, resolve_deployment)

FormatOpt = Annotated[Format, typer.Option("--format", "-f", help=FORMAT_HELP)]
UtilProfileOpt = Annotated[Optional[str], typer.Option("--utilization-profile", help="Daily load curve as hours:load pairs summing to 24 h, e.g. 8:278,16:201.125 (DeepSeek's fleet: 226.75 average of 278 peak nodes); the utilization is mean load / paid capacity.")]
AutoscaleOpt = Annotated[bool, typer.Option("--autoscale/--no-autoscale", help="With --utilization-profile: capacity follows the load (released chips are not charged).")]
CacheHitOpt = Annotated[float, typer.Option("--cache-hit", help="Share of input tokens served from the prefix cache, 0-1 (they skip prefill; DeepSeek reports 0.563) [default 0].")]
OutputConventionOpt = Annotated[str, typer.Option("--output-convention", help="decode-only (input tokens pay prefill) or all-in (InferenceX: prefill charged to output tokens).")]


def utilization_of(utilization: Optional[float], profile: Optional[str], autoscale: bool) -> Optional[float]:
    """--utilization or the one a --utilization-profile implies (not both)."""
    from ..errors import ValidationError

    if profile is None:
        if autoscale:
            raise ValidationError("--autoscale needs --utilization-profile")
        return utilization
    if utilization is not None:
        raise ValidationError("give either --utilization or --utilization-profile, not both")
    from ..econ.utilization import from_load_profile, parse_profile

    h, load = parse_profile(profile)
    return from_load_profile(h, load, autoscale=autoscale)


def _units(names):
    from ..units import GLOSSARY, SUFFIXES

    out = []
    for n in names:
        if n in GLOSSARY:
            out.append(GLOSSARY[n][0])
            continue
        unit = ""
        if "_usd_per_1k_" in n:
            out.append("USD/1K tokens")
            continue
        if n.startswith("usd_per_m_"):
            out.append("USD/M tokens")
            continue
        if n.startswith("wh_per_1k"):
            out.append("Wh/1K tokens")
            continue
        for suf in sorted(SUFFIXES, key=len, reverse=True):
            if n.endswith(suf):
                unit = SUFFIXES[suf][0]
                break
        out.append("USD/h" if n.endswith("_usd_per_chip_h") else unit)
    return out


@app.command()
def price(
    hardware: Annotated[Optional[str], typer.Option("--hardware", "-H", help="Accelerator name (tokenomics hardware) [default h200 unless --system].")] = None,
    model: Annotated[Optional[str], typer.Option("--model", "-m", help="Model name (tokenomics models) [default llama-3.1-8b].")] = None,
    batch: Annotated[Optional[int], typer.Option("--batch", "-b", help="Sequences decoded together per replica [default: 32 per attention group].")] = None,
    context: Annotated[Optional[int], typer.Option("--context", "-c", help="Context tokens per sequence during decode [default: workload input + output/2].")] = None,
    execution: Annotated[Optional[str], typer.Option("--execution", "-e", help="Execution plan: engine (default), graph, eager, super, megakernel, ...")] = None,
    system: SystemOpt = None,
    tp: TpOpt = None,
    ep: EpOpt = None,
    moe_tp: MoeTpOpt = None,
    dp_attention: DpAttnOpt = None,
    engine: EngineOpt = None,
    engine_version: EngineVersionOpt = None,
    spec: SpecOpt = None,
    prefill_chunk: PrefillChunkOpt = None,
    prefill_batch: PrefillBatchOpt = None,
    deployment: DeploymentOpt = None,
    target: TargetOpt = None,
    workload: Annotated[str, typer.Option("--workload", "-w", help="Request mix: chat (1k/1k), reasoning (1k/8k), summarization (8k/1k), openrouter-2025 (6k/400: OpenRouter's mean request, late 2025).")] = "chat",
    cost: Annotated[Optional[str], typer.Option("--cost", help="[default: bottom-up for every chip; a chip without a catalogued capex is an error listing its bases; the cost_basis column says which] bottom-up, an InferenceX tier (hyperscaler-owned, neocloud-owned, rental-3yr; add @2026-07 for the later survey) or a flat USD per chip-hour.")] = None,
    utilization: Annotated[Optional[float], typer.Option("--utilization", "-u", help="Share of hours sold, 0-1 [default 1].")] = None,
    utilization_profile: UtilProfileOpt = None,
    autoscale: AutoscaleOpt = False,
    cache_hit: CacheHitOpt = 0.0,
    margin: Annotated[Optional[float], typer.Option("--margin", help="Gross margin, 0-1 [default 0: cost to serve].")] = None,
    weight_precision: Annotated[Optional[str], typer.Option("--weight-precision", help="bf16, fp8, int4, ... [default: the model's].")] = None,
    expert_precision: ExpertPrecOpt = None,
    kv_precision: KvPrecOpt = None,
    mem_frac: MemFracOpt = None,
    overlap: OverlapOpt = None,
    expert_balance: BalanceOpt = None,
    output_convention: OutputConventionOpt = "decode-only",
    layouts: Annotated[bool, typer.Option("--layouts", help="With --target-tok-s-user: every layout the search weighs, each at its cheapest batch that still serves the target (or how fast it gets), cheapest first.")] = False,
    fmt: FormatOpt = Format.table,
) -> None:
    """Price per million input and output tokens, cost per chip-hour and joules per token of a deployment.

    Example: tokenomics price --system gb200-nvl72 -m deepseek-v3 --target-tok-s-user 40 --format json
    """
    import json

    from .. import chain
    from ._common import _jsonable

    if layouts:  # checked before any work
        from ..errors import ValidationError

        if target is None:
            raise ValidationError("--layouts compares the layouts at a target speed; give --target-tok-s-user too")
        if batch is not None:
            raise ValidationError("--layouts picks each layout's batch for the target speed; drop --batch")

    dep = resolve_deployment(model=model, hardware=hardware, system=system, deployment_file=deployment,
                             default_model="llama-3.1-8b", default_hardware="h200", execution=execution,
                             tp=tp, ep=ep, moe_tp=moe_tp, dp_attention=dp_attention, engine=engine,
                             engine_version=engine_version, spec=spec, prefill_chunk_tok=prefill_chunk, weight_precision=weight_precision,
                             expert_precision=expert_precision, kv_precision=kv_precision, overlap=overlap,
                             expert_balance=expert_balance, mem_frac=mem_frac)
    utilization = utilization_of(utilization, utilization_profile, autoscale)
    if layouts:
        opts = chain.layout_options(
            deployment=dep, target_tok_per_s_per_user=target, context_tok=context, workload=workload, cost=cost,
            utilization_frac=utilization, margin_frac=margin, prefill_batch=prefill_batch,
            output_convention=output_convention, cache_hit_frac=cache_hit)
        if fmt == Format.table:  # the label names the system, layout and replicas
            opts = opts[["deployment", "batch", "tok_per_s_per_user", "tok_per_s_per_chip", "usd_per_m_output_tok",
                         "status"]]
        none = not (opts["status"] == "cheapest").any()
        emit(opts, fmt, title=f"Layouts of {dep.model.name} at {target:g} tok/s per user ({workload}), cheapest first",
             caption="each at its cheapest batch that still serves the target; " +
                     ("no layout reaches it (tokenomics price refuses it)" if none
                      else "'cheapest' is the one tokenomics price picks"))
        return
    if batch is None and target is None:
        batch = 32 * int(dep.parallel.attn_dp)
    r = chain.price(deployment=dep, batch=batch, context_tok=context, workload=workload, cost=cost,
                    utilization_frac=utilization, margin_frac=margin, prefill_batch=prefill_batch,
                    target_tok_per_s_per_user=target, output_convention=output_convention,
                    cache_hit_frac=cache_hit)
    df = r.to_frame()
    dep = r.deployment  # a target speed may have picked another layout
    if fmt == Format.json:
        rec = {str(k): _jsonable(val) for k, val in df.iloc[0].to_dict().items()}
        rec["deployment"] = dep.label()
        rec["picked"] = list(dep.picked)
        typer.echo(json.dumps(rec, indent=1))
    elif fmt == Format.csv:
        emit(df, fmt)
    else:
        import pandas as pd

        row = df.iloc[0]
        keep = [c for c in df.columns if not c.startswith("price_usd_per_1k")]
        show = pd.DataFrame({"quantity": keep, "value": [row[c] for c in keep], "unit": _units(keep)})
        emit(show, fmt, title=f"{dep.label()}: batch {int(row['batch'])}, {workload}, "
                              f"{row['cost_basis']} cost, {row['output_convention']}",
             caption=describe(dep) + "; tokenomics/datasets/tco_params.csv, power_model.csv")


@app.command()
def report(
    out: Annotated[Path, typer.Option("--out", "-o", help="Directory for report.md, report.html and PNG figures.")],
    hardware: Annotated[Optional[list[str]], typer.Option("--hardware", "-H", help="Accelerators (repeat) [default: h100-sxm h200 b200 mi300x].")] = None,
    model: Annotated[Optional[list[str]], typer.Option("--model", "-m", help="Models (repeat) [default: llama-3.1-8b, llama-3.1-70b at fp8].")] = None,
    execution: Annotated[Optional[str], typer.Option("--execution", "-e", help="Execution plan [default: engine].")] = None,
    workload: Annotated[str, typer.Option("--workload", "-w", help="Request mix for the frontier curves.")] = "chat",
    weight_precision: Annotated[Optional[str], typer.Option("--weight-precision", help="Weight precision for every model [default: per model].")] = None,
    seed: Annotated[int, typer.Option("--seed", help="Monte Carlo seed.")] = 0,
    n_samples: Annotated[int, typer.Option("--samples", help="Monte Carlo draws.")] = 5000,
    system: SystemOpt = None,
    tp: TpOpt = None,
    ep: EpOpt = None,
    dp_attention: DpAttnOpt = None,
    engine: EngineOpt = None,
    spec: SpecOpt = None,
    prefill_chunk: PrefillChunkOpt = None,
    force: Annotated[bool, typer.Option("--force", is_eager=True, help="With --out: write into a directory that holds other files, such as the current one (only this command's files are replaced).")] = False,
) -> None:
    """Pricing report (Markdown + standalone HTML + PNG figures), written atomically to --out; ends with what a Kimi K3 token costs on the article's systems, the demand forecast and what serving it takes."""
    from ..report import build_report, price_view, write_report

    rep = build_report(hardware=tuple(hardware) if hardware else None,
                       models=tuple(model) if model else None, execution=execution or "engine", workload=workload,
                       weight_precision=weight_precision, seed=seed, n_samples=n_samples,
                       layout={"system": system, "tp": tp, "ep": ep, "dp_attention": dp_attention, "engine": engine,
                               "spec": spec, "prefill_chunk_tok": prefill_chunk})
    paths = write_report(out, report=rep)
    if rep.skipped:  # priced what it could; say on stderr what it could not (report.md lists why)
        typer.echo(f"Warning: {len(rep.skipped)} configuration(s) skipped (see 'Skipped' in report.md): "
                   + "; ".join(s.split(":")[0] for s in rep.skipped), err=True)
    head = price_view(rep.prices)[["config", "batch", "tok_per_s_per_chip", "usd_per_m_input_tok",
                                   "usd_per_m_output_tok", "energy_j_per_tok"]]
    emit(head, Format.table, title=f"{rep.title} (USD per million tokens)")
    for p in paths:
        typer.echo(str(p.resolve()))
