"""CLI commands of the economics area: ``price`` and ``report``. Parsing and formatting only."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

from . import app
from ._common import FORMAT_HELP, PER_HELP, Format, emit, per_unit, token_count
from ._deploy import (BalanceOpt, DeploymentOpt, DpAttnOpt, EngineOpt, EngineVersionOpt, EpOpt, MoeTpOpt, ExpertPrecOpt, KvPrecOpt, MemFracOpt, OverlapOpt,
                      PrefillBatchOpt,
                      PrefillChunkOpt, SpecOpt, SystemOpt, TargetOpt, TpOpt, describe, resolve_deployment)

FormatOpt = Annotated[Format, typer.Option("--format", "-f", help=FORMAT_HELP)]
UtilProfileOpt = Annotated[Optional[str], typer.Option("--utilization-profile", help="Daily load curve as hours:load pairs summing to 24 h, e.g. 8:278,16:201.125 (DeepSeek's fleet: 226.75 average of 278 peak nodes); the utilization is mean load / paid capacity.")]
AutoscaleOpt = Annotated[bool, typer.Option("--autoscale/--no-autoscale", help="With --utilization-profile: capacity follows the load (released chips are not charged).")]
CacheHitOpt = Annotated[float, typer.Option("--cache-hit", help="Share of input tokens served from the prefix cache, 0-1 (they skip prefill; DeepSeek reports 0.563) [default 0].")]
OutputConventionOpt = Annotated[str, typer.Option("--output-convention", help="decode-only (input tokens pay prefill) or all-in (InferenceX: prefill charged to output tokens).")]
ServingOpt = Annotated[Optional[str], typer.Option("--serving", help="How the chips serve requests: colocated (one engine interleaving prompts and decoding at --concurrency: the model validate-serving scores; default), disaggregated (prefill and decode instances with KV transfer, split --pd) or decode (decode-only steady state at --batch, prefill priced apart; the default where --batch, --context, --prefill-batch, --cache-hit or --layouts is given).")]
ConcurrencyOpt = Annotated[Optional[float], typer.Option("--concurrency", help="colocated: requests in flight per instance; disaggregated: per decode instance [default: 32 per attention group, or the most that meet --target-tok-s-user].")]
IslOpt = Annotated[Optional[int], typer.Option("--isl", help="Prompt tokens per request [default: the workload's].")]
OslOpt = Annotated[Optional[int], typer.Option("--osl", help="Output tokens per request [default: the workload's].")]
PdOpt = Annotated[Optional[str], typer.Option("--pd", help="disaggregated: prefill:decode instances, e.g. 1:3 [default: the split serving the most output tokens per GPU].")]


def parse_pd(text: Optional[str]) -> Optional[tuple[int, int]]:
    """``--pd P:D`` as (prefill, decode) instances; one line naming the value otherwise."""
    from ..errors import ValidationError

    if text is None:
        return None
    parts = text.replace(" ", "").split(":")
    if len(parts) != 2 or not all(x.isdigit() and int(x) >= 1 for x in parts):
        raise ValidationError(f"--pd {text!r}: expected prefill:decode instances as two whole numbers >= 1, e.g. 1:3")
    return int(parts[0]), int(parts[1])


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
        if "usd_per_k_" in n:
            out.append("USD/1K tokens")
            continue
        if "usd_per_m_" in n:
            out.append("USD/M tokens")
            continue
        if n.startswith("kwh_per_m"):
            out.append("kWh/M tokens")
            continue
        if n.startswith("wh_per_k"):
            out.append("Wh/1K tokens")
            continue
        if n in ("batch",):
            out.append("sequences")
            continue
        if n == "context_tok":
            out.append("tokens")
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
    context: Annotated[Optional[str], typer.Option("--context", "-c", help="Context tokens per sequence during decode, e.g. 8192 or 8k [default: workload input + output/2].")] = None,
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
    electricity: Annotated[Optional[float], typer.Option("--electricity", help="Electricity price [USD/kWh] of a bottom-up cost [default: datasets/tco_params.csv electricity_usd_per_kwh]; kept as the electricity_usd_per_kwh column.")] = None,
    weight_precision: Annotated[Optional[str], typer.Option("--weight-precision", help="bf16, fp8, int4, ... [default: the model's].")] = None,
    expert_precision: ExpertPrecOpt = None,
    kv_precision: KvPrecOpt = None,
    mem_frac: MemFracOpt = None,
    overlap: OverlapOpt = None,
    expert_balance: BalanceOpt = None,
    output_convention: OutputConventionOpt = "decode-only",
    serving: ServingOpt = None,
    concurrency: ConcurrencyOpt = None,
    isl: IslOpt = None,
    osl: OslOpt = None,
    pd: PdOpt = None,
    layouts: Annotated[bool, typer.Option("--layouts", help="With --target-tok-s-user: every layout the search weighs, each at its cheapest batch that still serves the target (or how fast it gets), cheapest first.")] = False,
    per: Annotated[str, typer.Option("--per", help=PER_HELP)] = "m",
    show_all: Annotated[bool, typer.Option("--all", help="Table format: every field of the result (throughput, power, cost components, prices, energy), not only the headline.")] = False,
    fmt: FormatOpt = Format.table,
) -> None:
    """Price per million input and output tokens, cost per chip-hour and joules per token of a deployment.

    Example: tokenomics price --system gb200-nvl72 -m deepseek-v3 --target-tok-s-user 40 --format json
    """
    import json

    from .. import chain
    from ..units import in_unit
    from ._common import _jsonable

    split = parse_pd(pd)
    per = per_unit(per)
    elec = {} if electricity is None else {"electricity_usd_per_kwh": electricity}
    context = token_count(context, "--context")
    prefill_chunk = token_count(prefill_chunk, "--prefill-chunk")
    if layouts:  # checked before any work
        from ..errors import ValidationError

        if serving not in (None, "decode"):
            raise ValidationError("--layouts compares the layouts of the decode-only steady state; drop --serving")
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
            output_convention=output_convention, cache_hit_frac=cache_hit, **elec)
        opts = in_unit(opts, per)
        if fmt == Format.table:  # the label names the system, layout and replicas
            opts = opts[["deployment", "batch", "tok_per_s_per_user", "tok_per_s_per_chip",
                         "usd_per_m_output_tok" if per == "m" else "usd_per_k_output_tok", "status"]]
        none = not (opts["status"] == "cheapest").any()
        emit(opts, fmt, title=f"Layouts of {dep.model.name} at {target:g} tok/s per user ({workload}), cheapest first",
             caption="each at its cheapest batch that still serves the target; " +
                     ("no layout reaches it (tokenomics price refuses it)" if none
                      else "'cheapest' is the one tokenomics price picks"))
        return
    r = chain.price(deployment=dep, batch=batch, context_tok=context, workload=workload, cost=cost,
                    utilization_frac=utilization, margin_frac=margin, prefill_batch=prefill_batch,
                    target_tok_per_s_per_user=target, output_convention=output_convention,
                    cache_hit_frac=cache_hit, serving=serving, concurrency=concurrency, isl_tok=isl, osl_tok=osl,
                    pd=split, **elec)
    df = in_unit(r.to_frame(), per)
    dep = r.deployment  # a target speed may have picked another layout
    if fmt == Format.json:  # an array of records, as every command prints
        rec = {str(k): _jsonable(val) for k, val in df.iloc[0].to_dict().items()}
        rec["deployment"] = dep.label()
        rec["picked"] = list(dep.picked)
        typer.echo(json.dumps([rec], indent=1))
    elif fmt == Format.csv:
        emit(df, fmt)
    else:
        import pandas as pd

        from ._common import _fmt_cell

        row = df.iloc[0]
        if show_all:
            keep = list(df.columns)
        else:
            head = HEADLINE if r.serving == "decode" else tuple(c if c != "batch" else "concurrency" for c in HEADLINE)
            keep = [c for c in head if c in df.columns or _per_k(c) in df.columns]
            keep = [c if c in df.columns else _per_k(c) for c in keep]
        value = [row[c] for c in keep]
        if not show_all:  # the 80 % error band beside the numbers it bounds
            for c in ("tok_per_s_per_chip", "usd_per_m_output_tok"):
                if c in keep and c + "_lo" in df.columns and pd.notna(row[c]):
                    end = lambda x: f"{x:,.0f}" if abs(x) >= 1000 else f"{x:.3g}"  # noqa: E731
                    value[keep.index(c)] = f"{_fmt_cell(row[c])} ({end(row[c + '_lo'])}-{end(row[c + '_hi'])}, 80 %)"
        show = pd.DataFrame({"quantity": [_label(c) for c in keep], "value": value, "unit": _units(keep)})
        if not show_all:
            show = pd.concat([pd.DataFrame({"quantity": ["deployment", "serving"], "value": [dep.label(), r.serving_mode],
                                            "unit": ["", ""]}), show], ignore_index=True)
        point = (f"batch {int(row['batch'])}" if r.serving == "decode" else
                 f"{row['concurrency']:g} requests in flight, {r.input_tok}/{r.output_tok} tokens")
        emit(show, fmt, title=f"{dep.label()}: {r.serving_mode}, {point}, {workload}, "
                              f"{row['cost_basis']} cost, output tokens pay "
                              + ("their decode time" if row['output_convention'] == "decode-only" else "all chip time"),
             caption=describe(dep) + "; tokenomics/datasets/tco_params.csv, power_model.csv"
                     + ("" if show_all else "; --all for every field"))


#: The rows ``tokenomics price`` shows by default (``--all``: every column of the result).
HEADLINE = ("batch", "context_tok", "workload", "tok_per_s_per_chip", "tok_per_s_per_user", "ttft_s",
            "usd_per_m_input_tok", "usd_per_m_output_tok", "energy_j_per_tok", "cost_usd_per_chip_h")

#: Display names of the headline rows (the unit column says the unit).
_LABELS = {"batch": "batch (sequences per replica)", "context_tok": "context per sequence",
           "workload": "workload", "tok_per_s_per_chip": "output tok/s per chip",
           "tok_per_s_per_user": "output tok/s per user", "ttft_s": "time to first token",
           "usd_per_m_input_tok": "price per M input tokens", "usd_per_m_output_tok": "price per M output tokens",
           "usd_per_k_input_tok": "price per 1K input tokens", "usd_per_k_output_tok": "price per 1K output tokens",
           "energy_j_per_tok": "energy per output token", "cost_usd_per_chip_h": "cost per chip-hour",
           "concurrency": "requests in flight"}


def _per_k(name: str) -> str:
    return name.replace("usd_per_m_", "usd_per_k_")


def _label(name: str) -> str:
    return _LABELS.get(name, name)


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
                               "spec": spec, "prefill_chunk_tok": token_count(prefill_chunk, "--prefill-chunk")})
    paths = write_report(out, report=rep)
    if rep.skipped:  # priced what it could; say on stderr what it could not (report.md lists why)
        typer.echo(f"Warning: {len(rep.skipped)} configuration(s) skipped (see 'Skipped' in report.md): "
                   + "; ".join(s.split(":")[0] for s in rep.skipped), err=True)
    head = price_view(rep.prices)[["config", "batch", "tok_per_s_per_chip", "usd_per_m_input_tok",
                                   "usd_per_m_output_tok", "energy_j_per_tok"]]
    emit(head, Format.table, title=f"{rep.title} (USD per million tokens)")
    for p in paths:
        typer.echo(str(p.resolve()))


@app.command("rent-vs-own")
def rent_vs_own(
    hardware: Annotated[str, typer.Option("--hardware", "-H", help="Accelerator name (tokenomics hardware).")] = "h200",
    rent: Annotated[Optional[float], typer.Option("--rent", help="Rental price [USD per chip-hour] [default: InferenceX 3-year rental, July 2026 survey].")] = None,
    utilization: Annotated[str, typer.Option("--utilization", "-u", help="Shares of hours the chip is busy, 0-1, comma-separated.")] = "0.25,0.5,0.75,1",
    board_power: Annotated[Optional[float], typer.Option("--board-power", help="Board power of the owned chip while serving [W] [default: 0.75 x TDP].")] = None,
    electricity: Annotated[Optional[float], typer.Option("--electricity", help="Electricity price [USD/kWh] [default: datasets/tco_params.csv].")] = None,
    fmt: FormatOpt = Format.table,
) -> None:
    """Own a chip or rent it: cost per used hour at each utilization and the break-even utilization.

    An owned chip costs its whole hourly cost (bottom-up: capex, power, colocation, maintenance)
    whether busy or not; a rental is paid for used hours only. Owning is cheaper above
    breakeven_utilization_frac. Example: tokenomics rent-vs-own -H b200 --rent 3.5
    """
    from ..econ import tco
    from ..errors import ValidationError

    try:
        u = [float(x) for x in utilization.split(",") if x.strip()]
    except ValueError:
        raise ValidationError(f"--utilization {utilization!r}: expected fractions like 0.5,0.8,1") from None
    own = tco.CostInputs.for_hardware(hardware, **({} if electricity is None else
                                                   {"electricity_usd_per_kwh": electricity}))
    df = tco.rent_vs_own(own, rent, u, board_power)
    basis = "as given" if rent is not None else \
        f"InferenceX {tco.RENT_TIER[0]} ({tco.RENT_TIER[1]} survey)"
    df.insert(0, "hardware", own.hardware)
    df.insert(1, "rent_basis", basis)
    df["electricity_usd_per_kwh"] = own.electricity_usd_per_kwh
    if fmt != Format.table:
        emit(df, fmt)
        return
    be = float(df["breakeven_utilization_frac"].iloc[0])
    emit(df.drop(columns=["hardware", "rent_basis", "electricity_usd_per_kwh"]), fmt,
         title=f"Own or rent {own.hardware}: rent {float(df['rent_usd_per_used_h'].iloc[0]):.3g} USD/h ({basis})",
         caption=(f"owning is cheaper above {be:.0%} utilization" if be <= 1 else
                  f"renting is cheaper at any utilization (break-even {be:.2f} > 1)")
                 + "; own: bottom-up cost (datasets/tco_params.csv)")
