"""CLI of the multi-chip area: ``systems``, ``showdown``, ``frontier``. Parse and format only."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

from . import app
from ._common import FORMAT_HELP, Format, emit
from ._deploy import DeploymentOpt, DpAttnOpt, EpOpt, SpecOpt, TpOpt, resolve_deployment

FormatOpt = Annotated[Format, typer.Option("--format", "-f", help=FORMAT_HELP)]


@app.command()
def systems(fmt: FormatOpt = Format.table) -> None:
    """List catalogued multi-chip systems (chip, count, topology, link bandwidth, sources)."""
    from ..perf.parallel import systems_table

    df = systems_table().reset_index(drop=True)
    if fmt == Format.table:
        show = df[["name", "accelerator", "n_chips", "topology", "dims", "domain_chips",
                   "link_bytes_per_s", "hop_latency_s", "kind", "as_of"]].copy()
        show["link_bytes_per_s"] = show["link_bytes_per_s"] / 1e9
        show["hop_latency_s"] = show["hop_latency_s"] * 1e6
        show.columns = ["name", "chip", "chips", "topology", "dims", "domain", "link GB/s (1 dir)",
                        "hop us", "kind", "as_of"]
        emit(show, fmt, title="Systems (datasets/systems.csv)")
    else:
        emit(df, fmt)


@app.command()
def showdown(
    fmt: FormatOpt = Format.table,
    waterfall: Annotated[bool, typer.Option("--waterfall/--no-waterfall", help="Show the waterfall from the unoptimized baseline.")] = True,
    sensitivity: Annotated[bool, typer.Option("--sensitivity", help="Show the full sensitivity table (table format) or print it instead of the figures (csv/json).")] = False,
) -> None:
    """The article's Kimi K3 table next to the model's, with a waterfall and sensitivities.

    --format csv|json prints one row per compared figure: system, metric, claimed, predicted,
    error_frac (exactly ShowdownResult.to_frame()).
    """
    from ..studies import showdown as sd

    if fmt != Format.table:
        emit(sd.sensitivity() if sensitivity else sd.showdown().to_frame(), fmt)
        return
    res = sd.showdown()
    t = res.table
    # the figures a reader compares; step time, collectives, HBM bytes and exposed communication
    # are in --format csv/json (the library's frame), so the table fits a terminal
    show = t[["system", "chips", "plan", "parallel", "spec"]].copy()
    show["tok/step"] = t["tokens_per_step"]
    show["ms/token"] = t["tpot_s"] * 1e3
    show["tok/s/user"] = t["tok_per_s_per_user"]
    show["claimed tok/s"] = t["claimed_tok_per_s_per_user"]
    show["error %"] = t["error_frac"] * 100
    show["verdict"] = t["verdict"]
    emit(show, fmt, title="Kimi K3 decode, one user: the article vs the model",
         caption="Parameters: datasets/plan_params.csv; nothing tuned per system. Error % of the claimed "
                 "metric (SD200: ms/token). --format csv adds step time, collectives, HBM bytes, exposed comm.")
    f = res.figures.iloc[len(t):].copy()
    f["error %"] = f["error_frac"] * 100
    emit(f[["system", "metric", "claimed", "predicted", "error %", "note"]], fmt,
         title="Other figures the article states")
    ms = sd.measured()
    ms["error %"] = ms["error_frac"] * 100
    ms["acceptance_length"] = ms["acceptance_length"].astype(object).where(ms["acceptance_length"].notna(), "")
    ms["experts"] = ms["expert_precision"].fillna("(scenario)")
    ms["dense"] = ms["dense_precision"].fillna("(scenario)")
    ms = ms.rename(columns={"acceptance_length": "accept. length", "measured_tok_per_s": "measured tok/s",
                            "predicted_tok_per_s": "predicted tok/s"})
    emit(ms[["model", "system", "experts", "dense", "batch", "spec", "accept. length", "measured tok/s",
             "predicted tok/s", "error %"]], fmt,
         title="Published megakernel measurements behind the TPU v7 and GB200 figures (not fitted)",
         caption="datasets/megakernel_bench.csv: Inferact's benchmarks (github:Inferact/tpu-megakernels): "
                 "Kimi K3 on both systems, Muse Spark 1.2 on 4 TPU7x chips; aggregate tokens/s.")
    c = sd.costs()
    c = c.rename(columns={"tok_per_s_per_user": "tok/s/user", "tok_per_s_per_replica": "tok/s (system)",
                          "cost_usd_per_chip_h": "USD/chip-h", "usd_per_m_output_tok": "USD per M output tok"})
    emit(c[["system", "chips", "plan", "batch", "tok/s/user", "tok/s (system)", "USD/chip-h",
            "USD per M output tok", "cost_model"]], fmt,
         title="What a Kimi K3 output token costs on each system (batch = concurrent users)",
         caption="'as ascend-910c': the SD200 chip has no public price; priced as an Ascend 910C in a "
                 "CloudMatrix 384 (datasets/tco_params.csv).")
    if waterfall:
        w = sd.waterfall()
        w = w.rename(columns={"tok_per_s_per_user": "tok/s/user", "cumulative_factor": "cumulative"})
        emit(w[["target", "step", "change", "category", "tok/s/user", "factor", "cumulative", "kind"]],
             fmt, title="Waterfall: unoptimized baseline -> each system (one change at a time)")
    s = sd.sensitivity()
    if not sensitivity:
        s = s.groupby("system", sort=False).head(3)
    s = s.copy()
    s["swing %"] = s["swing_frac"] * 100
    emit(s[["system", "metric", "assumption", "low_setting", "high_setting", "predicted_base",
            "predicted_low", "predicted_high", "swing %"]], fmt,
         title="Sensitivity: assumptions that move each predicted figure most")


@app.command()
def frontier(
    model: Annotated[Optional[str], typer.Option("--model", "-m", help="Catalog model, e.g. llama-3.1-70b [default llama-3.1-70b, or the --deployment file's].")] = None,
    hardware: Annotated[Optional[str], typer.Option("--hardware", "-H", help="Accelerator; picks the first catalogued system built from it.")] = None,
    system: Annotated[Optional[str], typer.Option("--system", "-s", help="Catalogued system, e.g. dgx-h200 (see `tokenomics systems`).")] = None,
    execution: Annotated[Optional[str], typer.Option("--execution", "-e", help="Execution plan of each chip [default engine, or the --deployment file's].")] = None,
    context: Annotated[str, typer.Option("--context", "-c", help="Cached tokens per sequence, e.g. 4096 or 4k.")] = "4096",
    weight_precision: Annotated[Optional[str], typer.Option("--weight-precision", help="Weight precision (default: the model's native).")] = None,
    plan: Annotated[Optional[str], typer.Option("--plan", "-p", hidden=True, help="Old spelling of --execution.")] = None,
    precision: Annotated[Optional[str], typer.Option("--precision", hidden=True, help="Old spelling of --weight-precision.")] = None,
    out: Annotated[Optional[Path], typer.Option("--out", "-o", help="Write a PNG of the frontier here.")] = None,
    mlperf: Annotated[bool, typer.Option("--mlperf", help="Instead: bracket the MLPerf rows of datasets/measured_public.csv (prompt lengths from datasets/mlperf_benchmarks.csv; point predictions of newer MLPerf results: validate-serving mlperf).")] = False,
    tp: TpOpt = None,
    ep: EpOpt = None,
    dp_attention: DpAttnOpt = None,
    spec: SpecOpt = None,
    deployment: DeploymentOpt = None,
    serving: Annotated[Optional[str], typer.Option("--measured", help="Measured serving results: a CSV (schema of serving_public.csv) or a bundled set of validate-serving (public, holdout, blind, mlperf, mlperf-server, mlperf-v61, trtllm-perf, lmsys, ascend, atom, aic, aic-sample): its measured points for this model and chip are listed and drawn over the frontier.")] = None,
    fmt: FormatOpt = Format.table,
) -> None:
    """Pareto frontier of tokens/s per user vs tokens/s per chip (batch x parallelism sweep).

    With --tp/--ep/--spec/--deployment only that deployment's layout is swept over batch.
    """
    from ..errors import ValidationError
    from ..perf import frontier as fr
    from ._common import token_count

    for new, old, a, b in (("--execution", "--plan", execution, plan),
                           ("--weight-precision", "--precision", weight_precision, precision)):
        if a is not None and b is not None and a != b:
            raise ValidationError(f"{new} {a} and {old} {b} disagree; give {new} only")
    plan = execution if execution is not None else plan  # --plan / --precision: old spellings, kept
    precision = weight_precision if weight_precision is not None else precision
    context = token_count(context, "--context")
    cases = None
    if mlperf:
        given = [f for f, val in (("--model", model), ("--hardware", hardware), ("--system", system),
                                  ("--execution", plan), ("--weight-precision", precision), ("--tp", tp), ("--ep", ep),
                                  ("--dp-attention", dp_attention), ("--spec", spec),
                                  ("--deployment", deployment), ("--measured", serving)) if val is not None]
        if given:
            raise ValidationError(f"--mlperf checks the bundled MLPerf rows and takes no deployment: drop "
                                  f"{', '.join(given)} (or drop --mlperf to draw a deployment's frontier)")
    if out is not None:  # checked before any work
        from ..io import check_output

        check_output(out, suffixes=(".png",))
        if mlperf:
            raise ValidationError("--mlperf prints a table and draws no frontier: drop --out, or drop --mlperf "
                                  "to draw the frontier of a deployment")
    if serving is not None:  # read before any work: a bad file is one line, nothing computed
        from ..catalog import check_columns
        from ..validate.serving_cases import read_cases
        from .perf import serving_source

        serving = serving_source(serving)
        cases = read_cases(serving)
        check_columns(cases, ("measured_tok_per_s_per_user", "measured_output_tok_per_s_per_gpu"),
                      what=f"--measured file {str(serving)!r} (the measured points to draw)")
    if mlperf:
        from ..validate.mlperf import mlperf_check

        df = mlperf_check()
        if fmt == Format.table:
            show = df.drop(columns=["source"]).copy()
            show["error_lower_frac"] = show["error_lower_frac"] * 100
            show["error_upper_frac"] = show["error_upper_frac"] * 100
            show = show.rename(columns={"error_lower_frac": "err lower %", "error_upper_frac": "err upper %"})
            emit(show, fmt, title="MLPerf Inference vs the model (lower: serial prefill; upper: decode only)")
        else:
            emit(df, fmt)
        return
    if deployment is None:  # a deployment file's own values win over these defaults, flags over both
        model, plan = model or "llama-3.1-70b", plan or "engine"
    if system is None and hardware is None and deployment is not None:
        sys_ = None  # the file names the chips
    elif system is None:
        if hardware is None:
            raise ValidationError("give --system (see `tokenomics systems`) or --hardware")
        sys_ = fr.system_for(hardware)
    else:
        from ..catalog import accelerator_name
        from ..perf.parallel import system as lookup

        sys_ = lookup(system)
        if hardware is not None and sys_.accelerator.name != accelerator_name(hardware):
            raise ValidationError(
                f"--hardware {hardware} conflicts with --system {system} (built from {sys_.accelerator.name})")
    if any(x is not None for x in (tp, ep, dp_attention, spec, deployment)):
        dep = resolve_deployment(model=model, hardware=None, system=sys_.name if sys_ else None, deployment_file=deployment,
                                 execution=plan, tp=tp, ep=ep, dp_attention=dp_attention, spec=spec,
                                 weight_precision=precision)
        res = fr.deployment_frontier(dep, context_tok=context)
    else:
        res = fr.frontier(sys_, model, plan, context_tok=context, weight_precision=precision)
    df = res.to_frame()
    measured = None
    if cases is not None:
        from ..catalog import accelerator_name, model as _catalog_model

        hw_name = res_system_accelerator(res)
        arch = _catalog_model(res.model).name
        same_model = cases["model"].map(lambda m: _catalog_model(str(m)).name == arch)
        chip = cases["hardware"].map(accelerator_name)
        on_chip = int((same_model & (chip == hw_name)).sum())
        measured = cases[same_model & (chip == hw_name) & cases["measured_tok_per_s_per_user"].notna()]
        chips = sorted(set(chip[same_model]))
        if len(measured):  # each row's own prediction (its layout, lengths, concurrency), as validate-serving
            from ..validate.serving_cases import predict_cases

            measured = predict_cases(measured)
    if out is not None:
        res.plot(out, measured=measured)
    if fmt == Format.table:
        show = df[["parallel", "batch", "tok_per_s_per_user", "tok_per_s_per_chip", "tok_per_s_system"]].copy()
        show["ms/token"] = df["step_time_s"] * 1e3
        emit(show, fmt, title=f"{res.model} on {res.system} ({res.plan}, {context} tokens context): Pareto frontier",
             caption=f"PNG: {out}" if out else None)
        if measured is not None and len(measured):
            show = measured[["case_id", "engine", "tp", "ep", "concurrency", "measured_tok_per_s_per_user",
                             "predicted_tok_per_s_per_user", "measured_output_tok_per_s_per_gpu",
                             "predicted_output_tok_per_s_per_gpu"]].copy()
            show["error %"] = measured["error_frac"] * 100
            show = show.rename(columns={"measured_tok_per_s_per_user": "tok/s/user",
                                        "predicted_tok_per_s_per_user": "pred tok/s/user",
                                        "measured_output_tok_per_s_per_gpu": "tok/s/GPU",
                                        "predicted_output_tok_per_s_per_gpu": "pred tok/s/GPU"})
            emit(show, fmt, title=f"Measured points of {serving.name} for this model and chip ({len(measured)}), "
                                  "each predicted at its own layout, lengths and concurrency",
                 caption="error %: predicted / measured - 1 of output tokens/s per GPU (per decode GPU for "
                         "disaggregated rows), as validate-serving scores it")
        elif measured is not None and on_chip:
            typer.echo(f"{serving.name} has {on_chip} row(s) of {res.model} on {hw_name}, none with a measured "
                       "tokens/s per user (offline rows), so none is drawn; validate-serving scores them")
        elif measured is not None:
            typer.echo(f"{serving.name} has no measured point of {res.model} on {hw_name}"
                      + (f" (its rows of this model: {', '.join(chips)})" if chips else " (nor of this model)"))
    else:
        emit(df, fmt)


def res_system_accelerator(res) -> str:
    """The accelerator of a frontier result's system."""
    from ..perf.parallel import system as lookup

    return lookup(res.system).accelerator.name
