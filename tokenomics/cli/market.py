"""CLI command ``tokenomics market``: list prices beside modelled cost. Parses and formats only."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

from . import app
from ._common import FORMAT_HELP, Format, emit
from .econ import AutoscaleOpt, CacheHitOpt, OutputConventionOpt, UtilProfileOpt, utilization_of

#: Columns of the table view (csv/json carry every column of ``tokenomics.market.market``).
TABLE_COLUMNS = ["provider", "model", "list_usd_per_m_input_tok", "list_usd_per_m_output_tok", "weight_precision",
                 "spec_decode", "tok_per_s_per_user", "cost_usd_per_m_input_tok", "cost_usd_per_m_output_tok", "implied_margin_frac",
                 "flag"]
#: Most speeds ``--speeds`` takes (each is a layout search per model).
MAX_SPEEDS = 8
#: Short headers of the table view.
TABLE_NAMES = {"list_usd_per_m_input_tok": "list in", "list_usd_per_m_output_tok": "list out",
               "weight_precision": "precision", "spec_decode": "spec", "tok_per_s_per_user": "tok/s/user", "cost_usd_per_m_input_tok": "cost in",
               "cost_usd_per_m_output_tok": "cost out", "implied_margin_frac": "margin"}


@app.command()
def market(
    prices: Annotated[Optional[Path], typer.Option("--prices", help="Your own market price CSV (columns provider, model, input_usd_per_m_tok, output_usd_per_m_tok, source, as_of; optional cached_input_usd_per_m_tok, tok_per_s_per_user, off_peak_input/cached_input/output_usd_per_m_tok with off_peak_hours_per_week or off_peak_share_frac). Models may be named as the provider or Hugging Face names them (meta-llama/Meta-Llama-3.1-70B-Instruct); a row that cannot be priced (a bad cell, a model the catalog lacks) is listed with its reason and the rest are priced; exit 2 only when none can be [default: the bundled datasets/market_prices.csv].")] = None,
    system: Annotated[Optional[str], typer.Option("--system", "-s", help="Price every row on this system [default: dgx-h200, or gb200-nvl72 for a model that does not fit].")] = None,
    default_speed: Annotated[Optional[float], typer.Option("--default-speed", help="Tokens/s per user priced where a provider publishes no speed [default 35: InferenceX's DeepSeek-R1 cost point].")] = None,
    workload: Annotated[str, typer.Option("--workload", "-w", help="Request mix for the margin: chat (1k/1k), reasoning (1k/8k), summarization (8k/1k), openrouter-2025 (6k/400: OpenRouter's mean request, late 2025).")] = "chat",
    cost: Annotated[Optional[str], typer.Option("--cost", help="Cost basis [default bottom-up]: bottom-up, an InferenceX tier (hyperscaler-owned@2026-07, ...) or a flat USD per chip-hour.")] = None,
    utilization: Annotated[Optional[float], typer.Option("--utilization", "-u", help="Share of chip-hours sold, 0-1 [default 1].")] = None,
    utilization_profile: UtilProfileOpt = None,
    autoscale: AutoscaleOpt = False,
    cache_hit: CacheHitOpt = 0.0,
    output_convention: OutputConventionOpt = "decode-only",
    weight_precision: Annotated[Optional[str], typer.Option("--weight-precision", help="Price every row at this weight precision (bf16, fp8, nvfp4, mxfp4, int4, ...) [default: the row's quantization, else the precision the model's providers serve: datasets/served_precision.csv].")] = None,
    speeds: Annotated[Optional[str], typer.Option("--speeds", help="Also price every row at these speeds, tok/s per user, comma-separated (e.g. 20,35,50): the implied margin at each and the speed at which it is zero.")] = None,
    serving: Annotated[str, typer.Option("--serving", help="How the chips serve each row's requests: decode (default: the decode-only steady state at the cheapest batch meeting the speed), colocated (continuous batching, the model validate-serving scores: the most requests in flight meeting the speed) or disaggregated (prefill and decode instances with KV transfer).")] = "decode",
    spec: Annotated[Optional[str], typer.Option("--spec", help="Speculative decoding: served (default: what each provider serves: MTP where the checkpoint ships the heads, DeepSeek-V3, GLM-4.5, MiniMax-M2.5, Qwen3.5; else the provider's own draft where it says it serves one and a measured speedup on that model gives the acceptance, datasets/served_speculation.csv; the others without), mtp (MTP only), none, or METHOD:GAMMA:ALPHA for every row.")] = None,
    electricity: Annotated[Optional[float], typer.Option("--electricity", help="Electricity price [USD/kWh] of the bottom-up cost [default: datasets/tco_params.csv electricity_usd_per_kwh]; kept as the electricity_usd_per_kwh column.")] = None,
    off_peak_share: Annotated[Optional[float], typer.Option("--off-peak-share", help="Share of tokens billed off-peak, 0-1, on every row with off-peak prices (off_peak_*_usd_per_m_tok: DeepSeek's own API) [default: the row's off_peak_share_frac, else its off_peak_hours_per_week / 168, a flat hourly load]. Rows billed flat are not touched.")] = None,
    fmt: Annotated[Format, typer.Option("--format", "-f", help=FORMAT_HELP)] = Format.table,
) -> None:
    """Each sourced API list price beside the modelled cost to serve at the provider's speed, and the implied gross margin.

    Example: tokenomics market --format json
    """
    from .. import chain
    from .. import market as mk

    u = utilization_of(utilization, utilization_profile, autoscale)
    want = None if speeds is None else _speeds(speeds)
    if off_peak_share is not None:
        off_peak_share = mk.check_share_frac(off_peak_share, "--off-peak-share")
    if default_speed is None:
        default_speed = mk.DEFAULT_TOK_PER_S_PER_USER
    df = mk.market(prices, system=system, default_tok_per_s_per_user=default_speed, workload=workload,
                   output_convention=output_convention, cost=cost, utilization_frac=u, cache_hit_frac=cache_hit,
                   spec=mk.DEFAULT_SPEC if spec is None else spec, weight_precision=weight_precision, speeds=want, serving=serving,
                   electricity_usd_per_kwh=electricity, off_peak_share_frac=off_peak_share)
    refused = df["flag"].str.startswith(mk.FLAG_REFUSED)
    if fmt != Format.table:
        emit(df, fmt)
        for line in df.loc[refused, "flag"]:  # one line each on stderr; stdout stays the frame
            typer.echo(line, err=True)
        return
    s = mk.summary(df)
    n_off = int((~df["billing"].isin([mk.BILLING_FLAT, ""])).sum())
    how_share = ("--off-peak-share" if off_peak_share is not None
                 else "the row's share, else off-peak hours / 168: a flat load")
    deps = "; ".join(sorted(d for d in df["deployment"].unique() if d))
    basis = ", ".join(sorted(b for b in df["cost_basis"].unique() if b))
    curve = [mk.speed_column(x) for x in (want or [])]
    shown = [c for c in TABLE_COLUMNS[:-1]  # the spec column where some row is priced with speculative decoding
             if c != "spec_decode" or df["spec_decode"].isin(["none", ""]).mean() < 1]
    view = df[shown + curve + (["zero_margin_tok_per_s_per_user"] if want else []) + ["flag"]]
    view = view.rename(columns={**TABLE_NAMES, **{c: f"margin @{x:g}" for c, x in zip(curve, want or [])},
                                "zero_margin_tok_per_s_per_user": "zero margin at"})
    view["flag"] = (df["flag"].str.replace(mk.FLAG_BELOW_COST, "BELOW COST", regex=False)
                    .str.replace(r"speed unreachable: the fastest on this deployment is ([\d.]+) tok/s per user.*",
                                 r"unreachable (max \1 tok/s/user)", regex=True)
                    .str.replace(r"does not fit:.*", "does not fit", regex=True)
                    .str.replace(r"^refused: .*", "refused (below)", regex=True))
    emit(view, fmt,
         title=(f"{s['n_prices']} list prices, {s['n_models']} models (USD per M tokens"
                + (f"; {s['n_refused']} refused" if s["n_refused"] else "") + "): median implied margin "
                f"{s['median_implied_margin_frac']:.0%}, {s['n_below_cost']} below modelled cost, "
                f"{s['n_unreachable']} at speeds the deployment cannot reach; cost basis {basis}, "
                f"{output_convention} output, {workload} mix, "
                + (f"electricity USD {electricity:g}/kWh, " if electricity is not None else "")
                + f"{'disaggregated' if serving == 'disaggregated' else chain.serving_mode_label(serving)} serving"
                + _spec_words(mk.DEFAULT_SPEC if spec is None else spec)
                + "".join(f"; median margin at {x:g} tok/s/user {s['median_' + c]:.0%}" for c, x in zip(curve, want or []))),
         caption=((f"precision: --weight-precision {weight_precision}; " if weight_precision else
                   "precision: the row's, else the one the model's providers serve (datasets/served_precision.csv); ")
                  + 
                  f"speed: the row's, else the provider's measured one (datasets/served_speed.csv: "
                  f"{(df['speed_source'] == mk.SPEED_FROM_TABLE).sum()} rows), else {default_speed:g} tok/s/user "
                  f"({s['n_default_speed']} rows); "
                  + (f"revenue: {n_off} rows billed at peak / off-peak prices, blended by the share billed off-peak "
                     f"({how_share}; "
                     "list in / out are the peak, standard-hours, prices); " if n_off else "")
                  + f"deployments: {deps}; datasets/market_prices.csv, tco_params.csv"))
    if refused.any():
        why = df.loc[refused, ["provider", "model", "flag"]].rename(columns={"flag": "reason"})
        why["reason"] = why["reason"].str.replace(rf"^{mk.FLAG_REFUSED}: ", "", regex=True)
        emit(why, fmt, title=f"Refused rows: {int(refused.sum())} of {len(df)} not priced",
             caption="fix a row (or add its model: tokenomics models add CONFIG.json --name NAME) to price it")


def _spec_words(spec: str) -> str:
    """How the title names the speculative decoding priced."""
    from .. import market as mk

    text = str(spec).strip().lower()
    if text in ("", "none", "off"):
        return ", no speculative decoding"
    if text == mk.DEFAULT_SPEC:
        return ", speculative decoding as each provider serves it (--spec none: without)"
    if text == "mtp":
        return ", MTP speculative decoding where the checkpoint ships the heads (--spec none: without)"
    return f", speculative decoding {spec}"


def _speeds(text: str) -> list[float]:
    """Parse ``--speeds 20,35,50`` (positive tok/s per user, at most :data:`MAX_SPEEDS`)."""
    from ..errors import ValidationError

    parts = [x.strip() for x in str(text).split(",")]
    if not all(parts):
        raise ValidationError(f"--speeds {text!r} has an empty item; expected positive tok/s per user like 20,35,50")
    if len(parts) > MAX_SPEEDS:
        raise ValidationError(f"--speeds lists {len(parts)} speeds; at most {MAX_SPEEDS} (each is a layout search)")
    out = []
    for x in parts:
        try:
            f = float(x)
        except ValueError:
            raise ValidationError(f"--speeds must be positive tok/s per user like 20,35,50, got {x!r}") from None
        if not (f > 0 and f != float("inf")):
            raise ValidationError(f"--speeds must be positive, finite tok/s per user like 20,35,50, got {x!r}")
        out.append(f)
    return sorted(set(out))
