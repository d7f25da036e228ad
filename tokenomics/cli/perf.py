"""CLI commands of the performance core: catalogs, throughput, calibrate, validate."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

from . import app
from ._common import FORMAT_HELP, Format, emit, token_count
from ._deploy import (BalanceOpt, DeploymentOpt, DpAttnOpt, EngineOpt, EngineVersionOpt, EpOpt, MoeTpOpt, MemFracOpt, OverlapOpt, SpecOpt, SystemOpt, TpOpt,
                      describe,
                      resolve_deployment)


def _bundled(name: str):
    from ..catalog import REGISTRY, data_dir

    return data_dir() / REGISTRY[name].file


FormatOpt = Annotated[Format, typer.Option("--format", "-f", help=FORMAT_HELP)]


@app.command()
def hardware(fmt: FormatOpt = Format.table) -> None:
    """List catalogued accelerators (datasheet figures, dense FLOP/s, sources)."""
    from ..catalog import load

    df = load("accelerators")
    if fmt == Format.table:
        show = df[["name", "vendor", "year", "peak_bf16_flop_per_s", "peak_fp8_flop_per_s",
                   "peak_fp4_flop_per_s", "hbm_bytes", "hbm_bytes_per_s", "tdp_w", "as_of"]].copy()
        for c in ("peak_bf16_flop_per_s", "peak_fp8_flop_per_s", "peak_fp4_flop_per_s"):
            show[c] = show[c] / 1e12
        show["hbm_bytes"] = show["hbm_bytes"] / 1e9
        show["hbm_bytes_per_s"] = show["hbm_bytes_per_s"] / 1e12
        show.columns = ["name", "vendor", "year", "bf16 TFLOP/s", "fp8 TFLOP/s", "fp4 TFLOP/s",
                        "HBM GB", "HBM TB/s", "TDP W", "as_of"]
        emit(show, fmt, title="Accelerators (dense peaks; datasets/accelerators.csv)",
             caption="HBM GB: device memory as the driver reports it, in 10^9 bytes (an H200's 143,771 MiB "
                     "= 150.8 GB, marketed as 141 GB), what engines allocate weights and KV from")
    else:
        emit(df, fmt)


#: Most values one --batch or --context list may hold (each row is printed).
MAX_LIST = 10_000


def _int_list(text: str, name: str, minimum: int | None = None) -> list[int]:
    """Parse ``"1,8,32"`` into whole numbers >= ``minimum``; ``1.5``, ``inf`` or words are one
    line naming the option (never rounded silently)."""
    from ..errors import ValidationError

    parts = [x.strip() for x in str(text).split(",")]
    if not any(parts):
        raise ValidationError(f"{name} is empty; expected an integer or a comma-separated list like 1,8,32")
    if not all(parts):
        raise ValidationError(f"{name} {text!r} has an empty item between commas; expected a list like 1,8,32")
    if len(parts) > MAX_LIST:
        raise ValidationError(f"{name} lists {len(parts):,} values; at most {MAX_LIST:,}")
    vals = []
    for x in parts:
        try:
            f = float(token_count(x)) if x[-1:].lower() in ("k", "m") else float(x)
        except (ValueError, ValidationError):
            raise ValidationError(f"{name} must be an integer (8k = 8,192 allowed) or a comma-separated list of "
                                  f"them, got {x!r}") from None
        if not (f == f and abs(f) != float("inf")) or f != int(f):
            raise ValidationError(f"{name} must be an integer (whole number), got {x!r}")
        if minimum is not None and f < minimum:
            raise ValidationError(f"{name} must be an integer >= {minimum}, got {x!r}")
        vals.append(int(f))
    return vals


HardwareOpt = Annotated[Optional[str], typer.Option("--hardware", "-H", help="Accelerator name (see `tokenomics hardware`) [default h200, or the --deployment file's].")]
ModelOpt = Annotated[Optional[str], typer.Option("--model", "-m", help="Model name (see `tokenomics models`) [default llama-3.1-8b, or the --deployment file's].")]
ExecOpt = Annotated[Optional[str], typer.Option("--execution", "-e", help="Execution plan: eager, eager-fused, graph-unfused, graph, engine, super, megakernel [default: graph on one chip (the calibrated core); engine for a deployment (--system, --tp, --engine, ...); or the --deployment file's].")]
ProfileOpt = Annotated[str | None, typer.Option("--profile", help="Calibration profile: a shipped name or a JSON file from `tokenomics calibrate`.")]


@app.command()
def throughput(
    hardware: HardwareOpt = None,
    model: ModelOpt = None,
    batch: Annotated[str, typer.Option("--batch", "-b", help="Sequences per step; a list like 1,8,32 sweeps.")] = "1",
    context: Annotated[str, typer.Option("--context", "-c", help="Cached context per sequence [tokens], e.g. 1024 or 8k; a list like 1k,8k,32k sweeps.")] = "1024",
    execution: ExecOpt = None,
    tokens_per_step: Annotated[int, typer.Option(help="New tokens per sequence per step (speculative verify > 1).")] = 1,
    weight_precision: Annotated[str | None, typer.Option(help="Weight precision (bf16, fp8, int4, mxfp4); default: the model's native one.")] = None,
    kv_precision: Annotated[Optional[str], typer.Option(help="KV-cache precision [default bf16, or the --deployment file's].")] = None,
    prompt: Annotated[str, typer.Option(help="Also time the prefill of a prompt of this many tokens (TTFT), e.g. 8k; 0 = skip.")] = "0",
    breakdown: Annotated[bool, typer.Option("--breakdown/--no-breakdown", help="Show the per-operator breakdown (table format).")] = True,
    profile: ProfileOpt = None,
    system: SystemOpt = None,
    tp: TpOpt = None,
    ep: EpOpt = None,
    moe_tp: MoeTpOpt = None,
    dp_attention: DpAttnOpt = None,
    engine: EngineOpt = None,
    engine_version: EngineVersionOpt = None,
    spec: SpecOpt = None,
    overlap: OverlapOpt = None,
    expert_balance: BalanceOpt = None,
    mem_frac: MemFracOpt = None,
    deployment: DeploymentOpt = None,
    fmt: FormatOpt = Format.table,
) -> None:
    """Step time, tokens/s per user and per chip, bound and per-op breakdown of decode.

    One chip by default (the calibrated core); with --system, --tp, --ep, --spec or --deployment,
    the deployment's decode step with its collectives (tokens/s per chip and per replica).
    """
    import numpy as np

    from ..perf import decode_step, prefill

    from ..errors import ValidationError

    as_deployment = any(x is not None for x in (system, tp, ep, dp_attention, engine, engine_version, spec,
                                                overlap, expert_balance, mem_frac, deployment))
    given_hardware = hardware
    if deployment is None:  # a deployment file's own values win over these defaults, flags over both
        hardware, model = hardware or "h200", model or "llama-3.1-8b"
        if not as_deployment:  # one chip: the calibrated core's plan; a deployment: the resolver's (engine)
            execution, kv_precision = execution or "graph", kv_precision or "bf16"
    from .. import _validate as v
    from ..perf.step import MAX_SHAPE

    prompt = token_count(prompt, "--prompt")
    v.count(prompt, "prompt_tok (--prompt)", minimum=0, maximum=MAX_SHAPE)
    b = np.array(_int_list(batch, "--batch"))[:, None]  # ranges: checked by decode_step
    c = np.array(_int_list(context, "--context"))[None, :]
    if b.size * c.size > MAX_LIST:
        raise ValidationError(f"--batch x --context make {b.size * c.size:,} rows; at most {MAX_LIST:,}")
    if as_deployment:
        if tokens_per_step != 1:
            raise ValidationError(f"--tokens-per-step {tokens_per_step} times one chip's verify step; a deployment's "
                                  "verify steps come from --spec (e.g. --spec mtp, or mtp:2:0.8 = method:drafts:acceptance)")
        dep = resolve_deployment(model=model, hardware=given_hardware if system else hardware, system=system,
                                 deployment_file=deployment, execution=execution, tp=tp, ep=ep, moe_tp=moe_tp,
                                 dp_attention=dp_attention, engine=engine, engine_version=engine_version,
                                 spec=spec, overlap=overlap,
                                 expert_balance=expert_balance, weight_precision=weight_precision, kv_precision=kv_precision,
                                 mem_frac=mem_frac)
        rs = dep.decode(b, c, profile=profile)
        df = rs.to_frame()
        if prompt:
            df["ttft_s"] = float(np.max(dep.prefill(prompt, batch=1, profile=profile).step_time_s))
        if fmt != Format.table:
            emit(df, fmt)
            return
        show = df[["batch", "context_tok", "step_time_s", "comm_exposed_s", "tok_per_s_per_user",
                   "tok_per_s_per_chip", "tok_per_s_per_replica"]].copy()
        show["step_time_s"] *= 1e3
        show["comm_exposed_s"] *= 1e3
        show = show.rename(columns={"step_time_s": "step ms", "comm_exposed_s": "comm ms",
                                    "tok_per_s_per_user": "tok/s/user", "tok_per_s_per_chip": "tok/s/chip",
                                    "tok_per_s_per_replica": "tok/s/replica"})
        if prompt:
            show["TTFT ms"] = df["ttft_s"] * 1e3
        emit(show, fmt, title=dep.label(), caption=describe(dep))
        if breakdown:
            _emit_breakdown(rs.breakdown(len(df) - 1), df.iloc[-1], fmt,
                            caption="per chip; the deployment's own rows (collectives, overlap, draft, engine) "
                                    "after the chip's operators; the rows add up to the step")
        return
    r = decode_step(hardware, model, execution, batch=b, context_tok=c, tokens_per_step=tokens_per_step,
                    weight_precision=weight_precision, kv_precision=kv_precision, profile=profile)
    df = r.to_frame()
    if prompt:
        p = prefill(hardware, model, execution, prompt_tok=prompt, batch=1, weight_precision=weight_precision,
                    kv_precision=kv_precision, profile=profile)
        df["ttft_s"] = float(p.step_time_s)
    if fmt != Format.table:
        emit(df, fmt)
        return
    show = df[["batch", "context_tok", "step_time_s", "tok_per_s_per_user", "tok_per_s_per_chip", "bound",
               "n_kernels", "hbm_util_frac", "flop_util_frac"]].copy()
    show["step_time_s"] = show["step_time_s"] * 1e3
    show = show.rename(columns={"step_time_s": "step ms", "tok_per_s_per_user": "tok/s/user",
                                "tok_per_s_per_chip": "tok/s/chip", "n_kernels": "kernels",
                                "hbm_util_frac": "HBM util", "flop_util_frac": "FLOP util"})
    if prompt:
        show["TTFT ms"] = df["ttft_s"] * 1e3
    title = (f"{r.model.name} on {r.hardware.name}, plan {r.plan.name}, weights {r.weight_precision}, "
             f"KV {r.kv_precision}, profile {r.profile.name}")
    caption = None
    if r.model.is_moe and r.plan.expert_loop:
        caption = (f"plan {r.plan.name} times a reference implementation: each routed expert is its own kernel; "
                   "-e engine times a serving engine's fused MoE (what price and --system use)")
    emit(show, fmt, title=title, caption=caption)
    if breakdown:
        _emit_breakdown(r.breakdown(len(df) - 1), df.iloc[-1], fmt)


def _emit_breakdown(bd, last, fmt, caption: str | None = None) -> None:
    """The per-operator breakdown table of a step (its last configuration), in us, MB and GFLOP."""
    bd = bd[["op", "time_s", "share", "bound", "bytes", "flop", "kernels"]].copy()
    bd["time_s"] = bd["time_s"] * 1e6
    bd["bytes"] = bd["bytes"] / 1e6
    bd["flop"] = bd["flop"] / 1e9
    bd = bd.rename(columns={"time_s": "time us", "bytes": "MB", "flop": "GFLOP"})
    emit(bd, fmt, title=f"Per-operator breakdown at batch {int(last.batch)}, context {int(last.context_tok)}",
         caption=caption)


@app.command()
def calibrate(
    cases: Annotated[Optional[str], typer.Argument(help="CSV of measured steps in the schema of the bundled h200_cases.csv (default: that file), or a bundled set by name: h200_cases, h200_heldout.")] = None,
    out: Annotated[str, typer.Option("--out", "-o", help="Where to write the fitted profile (JSON).")] = "profile.json",
    microbench: Annotated[str | None, typer.Option(help="Microbenchmark CSV (GEMM curve, ceilings) to join the fit; default: the bundled H200 one for h200 cases.")] = None,
    name: Annotated[str | None, typer.Option(help="Profile name (default: the hardware).")] = None,
    fmt: FormatOpt = Format.table,
) -> None:
    """Fit hardware and execution-plan parameters to measured steps; write a profile.

    The KV read curve of decode attention comes from the bundled kernel_microbench.csv where it
    has that chip's decode-attention kernels (the H200), and is held in the fit.
    """
    import pandas as pd

    from ..catalog import load
    from ..io import check_output
    from ..validate.calibrate import fit_profile, predict_cases, read_cases, summarize

    check_output(out, suffixes=(".json",))
    cases = _cases_path(cases)
    df = read_cases(cases, need_measured=True)
    mb = _microbench_for(df, microbench)
    prof = fit_profile(df, microbench=mb, kernel_bench=load("kernel_microbench"), name=name,
                       source=f"fitted on {cases} by `tokenomics calibrate`")
    prof.save(out)
    params = pd.DataFrame([{"parameter": k, "value": val} for k, val in prof.params().items()])
    if fmt == Format.table:
        emit(params, fmt, title=f"Fitted profile {prof.name!r} -> {out}")
        free = [p for p in prof.metrics.get("unconstrained", "").split(",") if p]
        if free:
            needs = {"attn_flop_frac": "prefills", "graph_kernel_s": "CUDA-graph steps",
                     "eager_kernel_s": "eager steps", "eager_busy_kernel_s": "eager steps of a large model"}
            typer.echo("Not constrained by these cases, kept at the default: " + "; ".join(
                f"{p} = {getattr(prof, p):.4g}" + (f" (add {needs[p]})" if p in needs else "") for p in free))
        emit(summarize(predict_cases(df, prof)), fmt, title="In-sample error by execution mode")
    else:
        emit(params, fmt)


def _microbench_for(df, microbench: str | None):
    """The ceilings a fit starts from: the given CSV, else the bundled H200 ones for H200-only cases."""
    from ..catalog import load
    from ..validate.calibrate import read_microbench

    if microbench is not None:
        return read_microbench(microbench)
    return load("h200_microbench") if set(df["hardware"].astype(str)) == {"h200"} else None


HOLDOUT_HELP = ("none: predict every case with the profile (in sample for the bundled cases); regime: for each "
                "regime (see --regime), fit on the other cases and predict it; model: leave one model out.")


@app.command()
def validate(
    cases: Annotated[Optional[str], typer.Argument(help="CSV of steps in the schema of the bundled h200_cases.csv (default: that file), or a bundled set by name: h200_cases, h200_heldout (steps no fit saw).")] = None,
    profile: ProfileOpt = None,
    holdout: Annotated[str, typer.Option("--holdout", "--leave-out", help=HOLDOUT_HELP)] = "none",
    regime: Annotated[str | None, typer.Option("--regime", help="With --holdout regime: regimes to hold out, comma-separated (default: all): verify, large-batch, prefill, long-context, small-model, large-model, graph, unfused.")] = None,
    microbench: Annotated[str | None, typer.Option(help="With --holdout: microbenchmark CSV joining every fit; default: the bundled H200 one for h200 cases.")] = None,
    fmt: FormatOpt = Format.table,
) -> None:
    """Predict every case of a CSV and compare with its measured step time.

    With --holdout regime|model the profile is refitted without each regime (or model) and
    the held-out cases are predicted: the table shows every held-out case and the error by
    held-out regime and execution mode; csv and json give that summary, one row per regime and
    execution mode (median, p90, max absolute error, median predicted/measured). A CSV with a
    ``regime`` column (as the bundled h200_heldout) is also summarized by regime.
    """
    from ..errors import ValidationError, unknown_name
    from ..validate.calibrate import predict_cases, read_cases, summarize

    modes = ("none", "regime", "model")
    if holdout not in modes:
        raise unknown_name("--holdout mode", holdout, modes)
    if regime is not None and holdout != "regime":
        raise ValidationError("--regime needs --holdout regime")
    if microbench is not None and holdout == "none":
        raise ValidationError("--microbench needs --holdout regime|model (it joins the refits)")
    if profile is not None and holdout != "none":
        raise ValidationError("--profile and --holdout exclude each other: a hold-out fits its own profiles")
    cases = _cases_path(cases)
    df = read_cases(cases, need_measured=True)  # validation compares with measured steps
    if holdout != "none":
        _validate_holdout(df, cases, holdout, regime, microbench, fmt)
        return
    pred = predict_cases(df, profile)
    by_regime = "regime" in df.columns
    if by_regime:
        pred.insert(1, "regime", df["regime"].astype(str).to_numpy())
    if fmt != Format.table:
        emit(pred, fmt)
        return
    show = _step_table(pred, ["case_id", *(["regime"] if by_regime else []), "phase", "model", "execution",
                              "fusion", "batch", "context_tok", "tokens_per_step", "kernels_per_step"])
    emit(show, fmt, title=f"Predicted vs measured ({Path(cases).name})")
    if by_regime:
        emit(summarize(pred, by=("regime",)), fmt, title="Absolute relative error by regime and execution mode")
    emit(summarize(pred), fmt, title="Absolute relative error by execution mode")


#: Step sets shipped in datasets/ that ``validate`` and ``calibrate`` take by name.
_BUNDLED_CASES = ("h200_cases", "h200_heldout")


def _cases_path(cases: str | None) -> str:
    """The CSV a ``cases`` argument names: a path, a bundled step set's name, or (None) h200_cases."""
    from ..errors import unknown_name

    if cases is None or cases in _BUNDLED_CASES:
        return str(_bundled(cases or "h200_cases"))
    if not Path(cases).exists() and not cases.lower().endswith(".csv"):
        raise unknown_name("cases file or bundled step set", cases, _BUNDLED_CASES)
    return cases


def _step_table(pred, columns: list[str]):
    """Predicted steps for people: the given columns, then predicted and measured ms and the error."""
    show = pred[columns + ["predicted_step_s", "measured_step_s", "error_frac"]].copy()
    show["predicted_step_s"] *= 1e3
    show["measured_step_s"] *= 1e3
    return show.rename(columns={"predicted_step_s": "predicted ms", "measured_step_s": "measured ms",
                                "tokens_per_step": "tok/step", "kernels_per_step": "kernels",
                                "error_frac": "error"})


def _validate_holdout(df, cases: str, holdout: str, regime: str | None, microbench: str | None, fmt: Format) -> None:
    """The --holdout branch of ``validate``: refit without each regime or model, score it."""
    from ..catalog import load
    from ..validate.calibrate import leave_one_model_out, leave_regime_out, summarize

    mb = _microbench_for(df, microbench)
    kb = load("kernel_microbench")
    if holdout == "regime":
        pred = leave_regime_out(df, mb, regime, kernel_bench=kb)
    else:
        pred = leave_one_model_out(df, mb, kernel_bench=kb)
    summ = summarize(pred, by=("held_out",))
    if fmt != Format.table:
        emit(summ, fmt)
        return
    show = _step_table(pred, ["held_out", "case_id", "phase", "model", "execution", "batch", "context_tok",
                              "tokens_per_step"])
    what = "regime" if holdout == "regime" else "model"
    emit(show, fmt, title=f"Held-out predictions ({Path(cases).name}): each {what} predicted by a fit without it")
    skipped = pred.attrs.get("skipped") or []
    cap = f"skipped (hold out no case or every case): {', '.join(skipped)}" if skipped else None
    emit(summ, fmt, title=f"Absolute relative error by held-out {what} and execution mode", caption=cap)


@app.command("validate-kernels")
def validate_kernels(
    cases: Annotated[Optional[str], typer.Argument(help="CSV in the schema of the bundled kernel_microbench.csv (default: that file).")] = None,
    op: Annotated[Optional[str], typer.Option("--op", help="Only rows of this operator: decode_attention, prefill_attention, mla_decode_attention or moe_experts.")] = None,
    hardware: Annotated[Optional[str], typer.Option("--hardware", "-H", help="Only rows of this accelerator (see `tokenomics hardware`).")] = None,
    profile: ProfileOpt = None,
    fmt: FormatOpt = Format.table,
) -> None:
    """Time published kernel microbenchmarks with the core and score them.

    Each row (decode or prefill attention, MLA decode, a fused MoE layer) becomes one operator
    on its chip's profile, plus one graph kernel boundary per kernel; csv and json give every
    row with measured, predicted and error_frac. The table adds the error by operator and
    size, and the grouped-GEMM ceilings of MoE layers for the chips in the file. --op and
    --hardware keep the rows of one operator or one chip (example: tokenomics validate-kernels
    --op decode_attention -H b200).
    """
    from ..perf.kernels import OPS, moe_ceilings, read_kernel_microbench
    from ..validate.kernel_microbench import predict_kernel_microbench, summarize_kernel_microbench

    bench = read_kernel_microbench(cases)
    if op is not None or hardware is not None:
        from .. import _validate as v
        from ..catalog import accelerator
        from ..errors import DataError

        keep = bench["op"].astype(str) == v.one_of(op, "--op", OPS) if op is not None else True
        if hardware is not None:
            keep = keep & (bench["hardware"].astype(str) == accelerator(hardware).name)
        if not keep.any():
            raise DataError(f"no rows of {'op ' + op if op else 'any op'} on {hardware or 'any chip'} in "
                            f"{Path(cases).name if cases else 'kernel_microbench.csv'}; it holds ops "
                            f"{sorted(set(bench['op'].astype(str)))} on {sorted(set(bench['hardware'].astype(str)))}")
        bench = bench[keep]
    pred = predict_kernel_microbench(bench, profile)
    if fmt != Format.table:
        emit(pred, fmt)
        return
    name = Path(cases).name if cases else "kernel_microbench.csv"
    name += "".join(f", {k} {x}" for k, x in (("op", op), ("hardware", hardware)) if x)
    show = pred[["bench_id", "hardware", "op", "batch", "kv_len_tok", "measured", "predicted", "error_frac"]].copy()
    show["error_frac"] = show["error_frac"] * 100
    emit(show.rename(columns={"error_frac": "error %"}), fmt,
         title=f"Published kernel timings vs the core ({name}; latency in s, bandwidth claims in B/s)")
    emit(summarize_kernel_microbench(pred), fmt, title="Absolute error by operator and size",
         caption=("small: the op's bytes, FLOPs and decode-attention blocks take < 10 us at datasheet peaks and "
                  "measured block cost (launch-latency sized)"))
    if op not in (None, "moe_experts"):
        return
    c = moe_ceilings(sorted(set(pred["hardware"].astype(str))))
    wide = c.pivot(index="hardware", columns="weight_precision", values="ceiling_frac").reset_index()
    emit(wide, fmt, title="MoE grouped-GEMM ceilings (share of a dense GEMM's; 1 = not measured)",
         caption="fitted on the fastest public fused-MoE layers at >= 8192 tokens (perf.kernels.moe_gemm_ratio), for "
                 "whole experts; a slice f columns wide (MoE tensor parallelism) gets x [f/(f+w)] / [F/(F+w)], "
                 "w per chip and format in perf.kernels.moe_ceilings()")
    fixed = c.assign(fixed_us=c["fixed_latency_s"] * 1e6).pivot(index="hardware", columns="weight_precision",
                                                                 values="fixed_us").reset_index()
    emit(fixed, fmt, title="Fused MoE layer: fixed latency per call [us] (0 = not measured)",
         caption="fitted on the fastest public fused-MoE layers at 1-8 tokens, whole layers timed in a CUDA graph "
                 "(perf.kernels.moe_fixed_s); an engine plan pays it once per MoE layer")


#: Cases validate-serving's table lists one by one; a larger set shows its largest misses (every
#: row stays in ``--format csv`` / ``json``).
MAX_CASE_ROWS = 40

#: validate-serving's names for the bundled serving sets.
BUNDLED_SERVING = {"public": "serving_public", "holdout": "serving_holdout", "blind": "serving_blind_2026",
                   "mlperf": "serving_mlperf", "mlperf-server": "serving_mlperf_server",
                   "mlperf-v61": "serving_mlperf_v61", "trtllm-perf": "serving_trtllm_perf",
                   "lmsys": "serving_lmsys_phase", "ascend": "serving_ascend", "atom": "serving_atom", "aic": "serving_aic_silicon",
                   "aic-sample": "serving_aic_sample", "thirdparty": "serving_thirdparty_2026-12",
                   "tpu": "serving_tpu_2026-12"}


def serving_source(name: Optional[str], also: tuple[str, ...] = ()) -> Path:
    """A serving CSV named on the command line: a bundled set (:data:`BUNDLED_SERVING`; ``None``
    is the fit set) or a file; neither is one line naming both, with the closest set (or name of
    ``also``, the other names the command takes)."""
    if name is None or name in BUNDLED_SERVING:
        return _bundled(BUNDLED_SERVING[name or "public"])
    if not Path(name).exists():
        from ..errors import DataError, unknown_name

        raise DataError(f"serving cases file {name!r} not found. "
                        f"{unknown_name('bundled serving set', name, [*BUNDLED_SERVING, *also])}")
    return Path(name)


EnginesOpt = Annotated[Optional[Path], typer.Option("--engines", help="Engines CSV of your own (as `tokenomics fit-serving --out` writes it): its rows price the engines it names, the bundled ones the rest [default: datasets/engines.csv, under $TOKENOMICS_ENGINES where set].")]


def _engines_table(path: Optional[Path]):
    """The engines table ``--engines`` names, above the bundled rows; ``None`` without one."""
    if path is None:
        return None
    from ..perf.engines import read_engines

    return read_engines(path)


#: Columns of validate-serving's CSV and JSON rows (and ``--out``), in order: every input row once,
#: scored or refused (:func:`serving_rows`).
SERVING_ROW_COLUMNS = ("set", "case_id", "csv_line", "phase", "hardware", "model", "weight_precision", "engine",
                       "n_gpus", "tp", "ep", "dp_attention", "disaggregated", "n_prefill_gpus", "n_decode_gpus",
                       "spec_decode", "isl_tok", "osl_tok", "concurrency", "deployment", "status",
                       "predicted_output_tok_per_s_per_gpu", "predicted_output_tok_per_s_per_deployment_gpu",
                       "predicted_total_tok_per_s_per_gpu", "predicted_tok_per_s_per_user", "predicted_tpot_s",
                       "predicted_ttft_s", "predicted_batch", "measured_output_tok_per_s_per_gpu",
                       "measured_total_tok_per_s_per_gpu", "measured_tok_per_s_per_user", "measured_tpot_s",
                       "measured_ttft_s", "error_frac", "ttft_error_frac", "measured_concurrency_frac",
                       "error_regime", "predicted_output_tok_per_s_per_gpu_lo", "predicted_output_tok_per_s_per_gpu_hi",
                       "assumption", "refused_column", "refused_reason")


def serving_rows(pred):
    """validate-serving's rows for CSV, JSON and ``--out``: :data:`SERVING_ROW_COLUMNS` of
    :func:`tokenomics.validate.serving_cases.predict_cases` (the one place the output is assembled)."""
    return pred[[c for c in SERVING_ROW_COLUMNS if c in pred.columns]].reset_index(drop=True)


def _refused_line(pred, strict: bool) -> str:
    """One line for a file validate-serving will not score: the first refused row's reason,
    then the other refused rows by line, case and column."""
    bad = pred[pred["status"] != "predicted"]
    first = bad.iloc[0]
    where = f"line {first['csv_line']}" + (f" of {first['set']}" if "set" in bad else "")
    head = f"serving case {first['case_id']}: {first['refused_reason']} ({where})"
    if strict and len(bad) < len(pred):
        head += f"; {len(bad)} of {len(pred)} rows refused, and --strict scores none"
    elif len(pred) > 1:
        head += f"; all {len(pred)} rows refused, nothing to score"
    more = [f"line {r['csv_line']} ({r['case_id']}{', ' + r['refused_column'] if r['refused_column'] else ''})"
            for _, r in bad.iloc[1:6].iterrows()]
    if more:
        head += f"; also {', '.join(more)}" + (f" and {len(bad) - 6} more" if len(bad) > 6 else "")
    return head


@app.command("validate-serving")
def validate_serving(
    cases: Annotated[Optional[str], typer.Argument(help="CSV in the schema of ../shared/calibration/serving_public.csv (default: the bundled fit set; 'holdout' for the bundled held-out rows; 'blind' for the 2026 InferenceX rows found after the engine-release change; 'mlperf' for the MLPerf v5.1/v6.0 Offline results, 'mlperf-server' for their Server and Interactive results; 'mlperf-v61' for the v6.1 round's Offline and Server results; 'trtllm-perf' for TensorRT-LLM's published offline max-throughput tables (models and lengths the fit set lacks); 'lmsys' for LMSYS's prefill-only and decode-only SGLang wide-EP results; 'ascend' for Huawei Ascend 910C results: CloudMatrix-Infer's decode and prefill points and SGLang's Ascend best-practice runs; 'atom' for AMD's ATOM engine on the MI355X from its own nightly benchmark dashboard; 'aic' for the co-located silicon references NVIDIA's AIConfigurator checks itself against, 'aic-sample' for the 2,504 co-located rows of the measurement dump they come from; 'thirdparty' for dstack's DeepSeek-R1 runs on SGLang, vLLM and TensorRT-LLM releases of early 2025 (the engine-maturity fit set); 'tpu' for Google's tpu-recipes runs of vLLM's TPU backend on TPU v6e and TPU7x (the vLLM-on-TPU fit set); 'unfitted' for every one of them no fit used, pooled, scored by set).")] = None,
    profile: ProfileOpt = None,
    engines: EnginesOpt = None,
    out: Annotated[Optional[Path], typer.Option("--out", help="Also write every row, scored or refused, to this .csv or .json (atomically): the columns of --format csv, refused rows with refused_column and refused_reason.")] = None,
    strict: Annotated[bool, typer.Option("--strict", help="Exit 2 if any row is refused (default: score the rest, list the refused rows, exit 2 only when no row can be scored).")] = False,
    fmt: FormatOpt = Format.table,
) -> None:
    """Predict published serving results (tokens/s per GPU and per user, TPOT, TTFT) and score them.

    Each row becomes a deployment (chips, tp/ep/attention DP, engine, precisions, MTP) served in
    steady-state continuous batching at its concurrency (serve; in synchronized waves where the
    row marks fixed_lengths 1 and the engine prefills first, SGLang), as prefill and decode instances
    with KV transfer (a disaggregated serve row: output tokens/s per decode GPU, as published),
    at the largest batch that fits (offline), or as a decode-only / prefill-only deployment
    (a decode row without its concurrency: at the KV-full batch, as many as fit).
    Each serve row also gets measured_concurrency_frac: the concurrency its own published
    throughput, TTFT and TPOT imply by Little's law, over the stated one (no model involved).
    Each prediction carries its 80 % error band (predicted_output_tok_per_s_per_gpu_lo/_hi, the
    error_regime it comes from; datasets/error_bands.csv), and the table ends with the share of
    the file's measurements inside their band.
    Rows are scored independently: a row with an impossible cell or a name tokenomics does not
    know is refused with its reason (a suggestion for a misspelt name) and the rest are scored;
    columns outside the schema are ignored, with a note.
    """
    from ..errors import ValidationError
    from ..validate.serving_cases import predict_cases, predict_unfitted, summarize, summarize_within

    if out is not None:
        from ..io import check_output

        check_output(out, suffixes=(".csv", ".json"))
    if cases == "unfitted":  # every bundled set no fit used, pooled (the README's headline accuracy)
        pred, name = predict_unfitted(profile, engines=_engines_table(engines)), "every unfitted bundled set"
    else:
        cases = str(serving_source(cases, also=("unfitted",)))
        pred, name = predict_cases(cases, profile, engines=_engines_table(engines)), Path(cases).name
    ok = pred["status"] == "predicted"
    if not ok.all() and (strict or not ok.any()):
        raise ValidationError(_refused_line(pred, strict))
    from ..errorband import band_columns, coverage

    ignored = pred.attrs.get("ignored_columns") or []
    pred = pred.join(band_columns(pred))  # each predicted rate's 80 % error band
    rows = serving_rows(pred)
    if out is not None:
        from ..io import write_frame

        write_frame(rows, out)
        typer.echo(f"wrote {len(rows)} rows ({int((~ok).sum())} refused) to {out}", err=True)
    if ignored:
        from ..validate.serving_cases import ignored_columns_note

        typer.echo(f"Note: {ignored_columns_note(ignored)}", err=True)
    if fmt != Format.table:
        emit(rows, fmt)
        return
    scored = pred[ok]
    cols = [c for c in ("set", "case_id") if c in scored] + ["phase", "hardware", "model", "engine", "tp", "ep",
            "concurrency", "measured_output_tok_per_s_per_gpu", "predicted_output_tok_per_s_per_gpu",
            "measured_tok_per_s_per_user", "predicted_tok_per_s_per_user", "error_frac"]
    show = scored.reindex(columns=cols)  # an optional measured column the file lacks: empty
    show["error_frac"] = show["error_frac"] * 100
    pre = (scored["phase"] == "prefill").to_numpy()  # a prefill-only row is scored on its input tokens/s
    for col in ("measured", "predicted"):
        c = f"{col}_output_tok_per_s_per_gpu"
        show[c] = show[c].where(~pre, scored.get(f"{col}_total_tok_per_s_per_gpu", float("nan")))
    show = show.rename(columns={"measured_output_tok_per_s_per_gpu": "meas tok/s/GPU",
                                "predicted_output_tok_per_s_per_gpu": "pred tok/s/GPU",
                                "measured_tok_per_s_per_user": "meas tok/s/user",
                                "predicted_tok_per_s_per_user": "pred tok/s/user", "error_frac": "error %"})
    notes = ["tok/s/GPU: output tokens, input tokens for prefill-only rows"] if pre.any() else []
    kv_full = scored[scored["assumption"].astype(str) != ""]
    if len(kv_full):
        notes.append(f"decode rows without a stated concurrency ({', '.join(map(str, kv_full['case_id'][:10]))}"
                     f"{', ...' if len(kv_full) > 10 else ''}) run at the KV-full batch, as many as fit")
    title = f"Published serving results vs the model ({name})"
    if len(show) > MAX_CASE_ROWS:  # a wall of rows helps no one: the largest misses, every row in csv/json
        show = show.loc[show["error %"].abs().sort_values(ascending=False).index[:MAX_CASE_ROWS]]
        title += f": the {MAX_CASE_ROWS} largest misses of {len(scored)} rows"
        notes.append("--format csv or json lists every row")
    emit(show, fmt, title=title, caption="; ".join(notes) or None)
    groups = ("set",) if "set" in pred else ()  # the pooled sets: each set's own line first
    s = summarize(pred, by=groups + ("hardware", "model", "engine", "weight_precision", "phase", "measured_concurrency"))
    emit(s, fmt, title="Absolute error of output tokens/s per GPU (median, p90) and median predicted/measured",
         caption=(f"{s.attrs['n_not_predicted']} rows not predicted. measured_concurrency: the concurrency "
                  "the published throughput, TTFT and TPOT imply by Little's law over the stated one (serve "
                  "rows; ~1 when the run kept it in flight; no model involved)"))
    w = summarize_within(pred, within="model", by=("hardware",))
    emit(w, fmt, title="The same, each row over its model's median predicted/measured (chip against chip)",
         caption="what is left once whatever a model's rows share is divided out (e.g. a benchmark's prompt length)")
    for q in ("ttft", "tpot"):
        t = summarize(pred, by=("engine", "disaggregated"), quantity=q)
        emit(t, fmt, title=f"Absolute error of {q.upper()} (median, p90) and median predicted/measured, "
                           "rows that measured it")
    cov, n_cov = coverage(pred)
    if n_cov:
        typer.echo(f"80 % error band: {cov * 100:.0f} % of the {n_cov} measured rates lie inside their band "
                   "(predicted_output_tok_per_s_per_gpu_lo/_hi; a calibrated band holds 70-90 % on "
                   "publications it was not built on)")
    if not ok.all():
        bad = pred[~ok]
        table = bad[[c for c in ("set",) if c in bad] + ["csv_line", "case_id", "refused_column", "refused_reason"]]
        table = table.rename(columns={"csv_line": "line", "refused_column": "column", "refused_reason": "reason"})
        # the suggestion, not the whole list of known names (--format json keeps it)
        table["reason"] = table["reason"].astype(str).str.replace(r"(Did you mean [^?]*\?) Known: .*$", r"\1",
                                                                  regex=True)
        emit(table, fmt, title=f"Refused rows: {len(bad)} of {len(pred)} not scored",
             caption="fix a row and run again to score it; --strict makes any refused row exit 2")


@app.command("fit-serving")
def fit_serving(
    cases: Annotated[Optional[str], typer.Argument(help="Serving CSV whose serve rows to fit on, in the schema validate-serving reads, or a bundled set's name [default: the bundled fit set, which gives datasets/engines.csv back].")] = None,
    out: Annotated[Optional[Path], typer.Option("--out", help="Write the fitted engines table to this .csv (atomically) for validate-serving --engines, or for every command through TOKENOMICS_ENGINES=FILE.")] = None,
    leave_one_out: Annotated[Optional[str], typer.Option("--leave-one-out", help="Also refit without each value of this column (hardware, model or engine) and predict the rows left out: the error to expect on rows the fit has not seen (one refit per value; with --format csv/json this table is what is printed).")] = None,
    profile: ProfileOpt = None,
    fmt: FormatOpt = Format.table,
) -> None:
    """Fit the serving engines' parameters on serving measurements, as datasets/engines.csv is fitted.

    One per-kernel iteration cost per engine and vendor the rows name (least squares on
    log predicted/measured output tokens/s per GPU of the serve rows) and one per-request TTFT
    overhead per vendor; an engine no parameters cover (ATOM, MoRI-SGLang, ...) is fitted as its
    vendor's `default`, as it is priced. Prints the table and the rows' error with the bundled
    engines and with the fitted ones; with --out, writes the table. Example:
    tokenomics fit-serving my_runs.csv --out my_engines.csv && TOKENOMICS_ENGINES=my_engines.csv tokenomics price ...
    """
    from datetime import date

    import pandas as pd

    from .. import _validate as v
    from ..io import check_output, write_frame
    from ..validate.fit_serving import fit_engines
    from ..validate.fit_serving import leave_one_out as _loo
    from ..validate.serving_cases import predict_cases

    path = serving_source(cases)
    if leave_one_out is not None:
        v.one_of(leave_one_out, "--leave-one-out", ("hardware", "model", "engine"))
    if out is not None:
        check_output(out, suffixes=(".csv",))
    table = fit_engines(path, source=f"fitted by tokenomics fit-serving on {path.name}",
                        as_of=date.today().isoformat(), profile=profile)
    if out is not None:
        write_frame(table, out)
    if fmt != Format.table:  # one frame: the engines, or the leave-one-out scores when asked for
        emit(_loo(path, by=leave_one_out, profile=profile) if leave_one_out else table, fmt)
        return
    rows = []
    for label, eng in (("bundled engines", None), ("fitted engines", table)):
        p = predict_cases(path, profile, engines=eng)
        p = p[(p["phase"] == "serve") & (p["status"] == "predicted")]
        e = p["error_frac"].abs()
        rows.append({"engines": label, "serve_rows": len(p), "median_abs_error_frac": e.median(),
                     "p90_abs_error_frac": e.quantile(0.9), "median_ratio": p["ratio"].median()})
    cols = ["engine", "vendor", "kernel_overhead_s", "ttft_overhead_s", "max_seqs", "note"]
    emit(table[cols], fmt, title=f"Engine parameters fitted on {path.name}",
         caption=(f"written to {out}" if out is not None else "--out FILE.csv writes it")
         + "; `default` rows: the median of the vendor's fitted engines, for engines with no row")
    emit(pd.DataFrame(rows), fmt, title="Output tokens/s per GPU of those serve rows, predicted / measured - 1",
         caption="in-sample: an error measured on the rows fitted says how well they are fitted, not how "
                 "well other rows will be predicted" + ("" if leave_one_out else "; --leave-one-out hardware "
                                                        "tells that"))
    if leave_one_out is not None:
        emit(_loo(path, by=leave_one_out, profile=profile), fmt,
             title=f"Leave one {leave_one_out} out: refitted without it, its rows predicted",
             caption="out of sample for the engine parameters (hardware efficiencies come from microbenchmarks)")
