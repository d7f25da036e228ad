"""Dataset registry and loaders.

Every default number the models use comes from a CSV in ``datasets/`` whose rows carry ``source``
and ``as_of``. This module finds those files, validates their columns and turns rows into the
frozen parameter objects of :mod:`tokenomics.specs`.

Examples
--------
>>> from tokenomics import catalog
>>> catalog.accelerator("h200").hbm_bytes   # 143,771 MiB, as the driver reports it
150754820096.0
>>> int(catalog.load("models").loc["llama-3.1-8b", "hidden"])
4096
"""

from __future__ import annotations

import functools
import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from .errors import DataError, unknown_name

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

    from .specs import Accelerator, ModelSpec


def data_dir() -> Path:
    """Directory holding the bundled datasets (``$TOKENOMICS_DATA`` overrides it)."""
    return _data_dir(os.environ.get("TOKENOMICS_DATA") or "")


@functools.lru_cache(maxsize=8)
def _data_dir(env: str) -> Path:
    if env:
        return Path(env)
    from importlib.resources import files

    return Path(str(files("tokenomics") / "datasets"))


@dataclass(frozen=True)
class DatasetInfo:
    """One registered dataset: file name, index column, required columns and a description."""

    file: str
    description: str
    index: str | None = None
    required: tuple[str, ...] = ()


#: Columns every serving-results dataset has (the schema of ../shared/calibration/serving_public.csv).
_SERVING_COLUMNS = ("case_id", "phase", "hardware", "model", "engine", "measured_output_tok_per_s_per_gpu", "source")

#: Registered datasets. Areas of the package add their entries here.
REGISTRY: dict[str, DatasetInfo] = {
    "accelerators": DatasetInfo(
        "accelerators.csv",
        "Accelerator datasheet figures in base units (dense FLOP/s per precision, HBM, SRAM, TDP).",
        index="name",
        required=("name", "peak_bf16_flop_per_s", "hbm_bytes", "hbm_bytes_per_s", "source", "as_of"),
    ),
    "models": DatasetInfo(
        "models.csv",
        "Model architectures (GQA/MLA attention, MoE layout, vocabulary); Kimi K3 fields assumed.",
        index="name",
        required=("name", "n_layers", "hidden", "n_q_heads", "n_kv_heads", "head_dim", "source", "as_of"),
    ),
    "h200_cases": DatasetInfo(
        "h200_cases.csv",
        "Measured decode and prefill steps on one H200 (the calibration set).",
        index=None,
        required=("case_id", "phase", "measured_step_s", "source"),
    ),
    "h200_heldout": DatasetInfo(
        "h200_heldout.csv",
        "Measured H200 steps in regimes the calibration set lacks (other sizes, long context, large batch, "
        "verify steps, MoE, longer prefills), held out of every fit.",
        index=None,
        required=("case_id", "phase", "measured_step_s", "regime", "source", "as_of"),
    ),
    "h200_heldout_power": DatasetInfo(
        "h200_heldout_power.csv",
        "Measured H200 board power during decode and prefill steps the power fit never saw.",
        index=None,
        required=("model", "batch", "context_tok", "board_power_w", "j_per_tok", "source", "as_of"),
    ),
    "h200_microbench": DatasetInfo(
        "h200_microbench.csv",
        "Measured H200 ceilings: HBM bandwidth, launch overheads, GEMM curve, board power.",
        index=None,
        required=("experiment", "value", "unit"),
    ),
    "kernel_microbench": DatasetInfo(
        "kernel_microbench.csv",
        "Published attention and fused-MoE kernel timings (H200 decode/prefill attention of vLLM and TensorRT-LLM, FlashMLA, FlashAttention-3) for checking the core's per-operator times.",
        index=None,
        required=("bench_id", "hardware", "op", "batch", "kv_len_tok", "metric", "value", "unit", "kind", "source", "as_of"),
    ),
    "engine_kernel_versions": DatasetInfo(
        "engine_kernel_versions.csv",
        "How much slower older TensorRT-LLM releases' GEMM and fused-MoE kernels are than the newest, per chip and format (aiconfigurator tables).",
        index=None,
        required=("hardware", "engine", "engine_version", "reference_version", "op", "precision", "rows", "metric",
                  "value", "source", "as_of"),
    ),
    "engine_maturity": DatasetInfo(
        "engine_maturity.csv",
        "How much slower an older SGLang or vLLM release runs a mixture-of-experts model's kernels than the releases the serving fit used: a log slowdown per year of release age before a reference release, fitted on published DeepSeek-R1 runs of early-2025 releases, not extrapolated past the oldest fitted release.",
        index=None,
        required=("engine", "reference_release", "reference_date", "oldest_fitted_date", "log_slowdown_per_year",
                  "source", "as_of"),
    ),
    "engine_releases": DatasetInfo(
        "engine_releases.csv",
        "Serving-engine releases (vLLM, SGLang, TensorRT-LLM) and the date each was published (PyPI), so a release or a date picks the engine in force.",
        index=None,
        required=("engine", "version", "release_date", "source", "as_of"),
    ),
    "engine_defaults": DatasetInfo(
        "engine_defaults.csv",
        "What each serving engine does by default for mixture-of-experts models under expert parallelism (compute/communication overlap, expert load balancing), with its source.",
        index=None,
        required=("engine", "setting", "value", "applies_to", "source", "as_of"),
    ),
    "measured_public": DatasetInfo(
        "measured_public.csv",
        "Published multi-chip measurements (MLPerf Llama-2-70B / Llama-3.1-405B, NCCL, DeepEP, vendor claims).",
        index=None,
        required=("system", "chips", "chip", "model", "metric", "value", "unit", "source", "as_of"),
    ),
    # --- systems and collectives (multi-chip area) ---
    "systems": DatasetInfo("systems.csv", "Multi-chip systems: chip, count, scale-up topology, link bandwidth, hop latency.", index="name", required=("name", "accelerator", "n_chips", "topology", "link_bytes_per_s", "source", "as_of")),
    "collectives": DatasetInfo("collectives.csv", "Measured collective latencies (NCCL, custom, symmetric-memory all-reduce; DeepEP all-to-all) used to fit the alpha-beta model.", index=None, required=("impl", "collective", "algo", "n_chips", "message_bytes", "latency_s", "link_bytes_per_s", "source", "as_of")),
    "plan_params": DatasetInfo("plan_params.csv", "Every parameter of the Kimi K3 showdown scenarios, with source or explicit assumption.", index=None, required=("scenario", "param", "value", "kind", "source", "as_of")),
    "spec_acceptance": DatasetInfo("spec_acceptance.csv", "Published speculative-decoding acceptance by draft position (the probability that the draft at a position is accepted given every earlier one was), from acceptance lengths measured at several draft depths.", index=None, required=("method", "model", "position", "acceptance_frac", "source", "as_of")),
    "megakernel_bench": DatasetInfo("megakernel_bench.csv", "Published decode throughput of Inferact's TPU megakernels: Kimi K3 behind the showdown's TPU v7 and GB200 figures (batch 1-8 without speculation; DSpark at fixed acceptance lengths) and Muse Spark 1.2 on 4 TPU7x chips.", index=None, required=("scenario", "model", "system", "tp", "ep", "expert_precision", "batch", "spec", "spec_gamma", "acceptance_length", "context_tok", "measured_tok_per_s", "kind", "source", "as_of")),
    "gemm_shapes": DatasetInfo(
        "gemm_shapes.csv",
        "Measured speed-up of FP8 and NVFP4 GEMMs over BF16 by weight shape on six NVIDIA chips (aiconfigurator tables): how much a faster tensor path gains on small GEMMs.",
        index=None,
        required=("hardware", "precision", "n", "k", "speedup_vs_bf16", "source", "as_of"),
    ),
    "chip_microbench": DatasetInfo(
        "chip_microbench.csv",
        "Measured ceilings per accelerator (HBM read bandwidth, large-GEMM FLOP/s, all-reduce bus bandwidth).",
        index=None,
        required=("hardware", "metric", "value", "unit", "source", "as_of"),
    ),
    "serving_public": DatasetInfo(
        "serving_public.csv",
        "37 published serving results (gpt-oss-120b on six chips, Llama-3.1 offline): the engine fit set.",
        index=None,
        required=_SERVING_COLUMNS,
    ),
    "serving_thirdparty_2026-12": DatasetInfo(
        "serving_thirdparty_2026-12.csv",
        "31 published runs of DeepSeek-R1 on 8 x H200 and 8 x MI300X with SGLang, vLLM and TensorRT-LLM releases of February-March 2025 (dstack's benchmark, 2025-03-18): the fit set of datasets/engine_maturity.csv, so kept out of the error bands.",
        index=None,
        required=_SERVING_COLUMNS,
    ),
    "serving_tpu_2026-12": DatasetInfo(
        "serving_tpu_2026-12.csv",
        "7 published runs of vLLM's TPU backend from Google's tpu-recipes (Llama-3.3-70B on TPU v6e-8 at 64/128 in flight; Qwen3-32B W8A8-FP8 on one TPU7x chip and Qwen3.5-397B-A17B-FP8 on four, InferenceX client, 2025-12..2026-07): the fit set of the vLLM-on-TPU engine parameters, so kept out of the error bands (docs/validation/tpu_sources.md).",
        index=None,
        required=_SERVING_COLUMNS,
    ),
    "serving_holdout": DatasetInfo(
        "serving_holdout.csv",
        "Published serving results kept out of every fit (DeepSeek-R1, Llama-3.1 on other chips/engines).",
        index=None,
        required=_SERVING_COLUMNS,
    ),
    "serving_blind_2026": DatasetInfo(
        "serving_blind_2026.csv",
        "406 InferenceX DeepSeek-R1 runs (198 single-node, 208 disaggregated; 2025-10..2026-06, engine releases from their images) found after the engine-release correction: a blind check, never fitted or used for a choice.",
        index=None,
        required=_SERVING_COLUMNS,
    ),
    "serving_mlperf": DatasetInfo(
        "serving_mlperf.csv",
        "134 MLPerf Inference v5.1/v6.0 closed Offline LLM results, each run once (Llama 2 70B, Llama 3.1 8B/405B, Mixtral, DeepSeek-R1, gpt-oss on H100..GB300, MI300X..MI355X), collected after the last model change: a blind check.",
        index=None,
        required=_SERVING_COLUMNS,
    ),
    "serving_mlperf_server": DatasetInfo(
        "serving_mlperf_server.csv",
        "MLPerf Inference v5.1/v6.0 closed Server and Interactive LLM results as serve rows (concurrency by Little's law from the logged rate and mean latency): a blind check of TTFT and TPOT under load.",
        index=None,
        required=_SERVING_COLUMNS,
    ),
    "serving_mlperf_v61": DatasetInfo(
        "serving_mlperf_v61.csv",
        "MLPerf Inference v6.1 closed Offline (offline rows) and Server (serve rows) LLM results of the chips and models the catalog holds, collected after every model change: a blind check on the newest round.",
        index=None,
        required=_SERVING_COLUMNS,
    ),
    "serving_trtllm_perf": DatasetInfo(
        "serving_trtllm_perf.csv",
        "325 TensorRT-LLM offline max-throughput results NVIDIA publishes in its performance overview (trtllm-bench; the v1.0 edition's 202: Llama 3.1 8B/405B, Llama 3.3 70B, Llama 4 Scout/Maverick, Qwen3-235B-A22B, Qwen3-30B-A3B, prompts of 128 to 20,000 tokens, the eight the fit set holds left out; the later edition's 123: DeepSeek-R1, gpt-oss-120b/20b, Llama 3.3 70B, Maverick, Qwen3 MoE at stated DEP/TP layouts, prompts and outputs to 32,768 tokens; H100, H200, B200, GB200): a check on models, layouts and lengths no fit used.",
        index=None,
        required=_SERVING_COLUMNS,
    ),
    "serving_lmsys_phase": DatasetInfo(
        "serving_lmsys_phase.csv",
        "6 prefill-only / decode-only throughputs of SGLang's wide-EP DeepSeek-V3 deployments published by LMSYS (96 H100, GB200 NVL72), collected after the last model change: a blind check of the phase model.",
        index=None,
        required=_SERVING_COLUMNS,
    ),
    "serving_ascend": DatasetInfo(
        "serving_ascend.csv",
        "14 Huawei Ascend 910C serving results: CloudMatrix-Infer's DeepSeek-R1 INT8 decode SLO sweep and prefill on CloudMatrix384, SGLang's Ascend best-practice DeepSeek-R1 TPOTs (W8A8, W4A8), vLLM-Ascend's Qwen3-235B W8A8 runs; collected after the last model change: a blind check on a vendor nothing is fitted on.",
        index=None,
        required=_SERVING_COLUMNS,
    ),
    "serving_atom": DatasetInfo(
        "serving_atom.csv",
        "156 co-located serving results of AMD's ATOM engine from its own nightly benchmark dashboard (ROCm/ATOM gh-pages: DeepSeek-R1 FP8/MXFP4 with and without MTP, gpt-oss-120b, Kimi-K2.5, Llama-3.3-70B, MiniMax-M2.5, Qwen3.5-397B on MI355X; medians over each configuration's runs); an engine nothing is fitted on, found after the last model change: a blind check.",
        index=None,
        required=_SERVING_COLUMNS,
    ),
    "serving_aic_silicon": DatasetInfo(
        "serving_aic_silicon.csv",
        "22 co-located serving measurements NVIDIA's AIConfigurator keeps as its silicon accuracy anchors (tools/accuracy_tracking/silicon_refs.csv: mean TTFT and TPOT of DeepSeek-R1/V3, Kimi-K2.5, MiniMax-M2.5, Qwen3-32B, Qwen3-235B and Qwen3.5-397B on H100..GB200 with TensorRT-LLM, SGLang and vLLM); found after every model change: a blind check on the peer's own points.",
        index=None,
        required=_SERVING_COLUMNS,
    ),
    "serving_aic_sample": DatasetInfo(
        "serving_aic_sample.csv",
        "2,504 co-located serving measurements from the NVIDIA dump AIConfigurator's silicon anchors are drawn from (aic-core/src/aiconfigurator_core/systems/silicon_sample.csv): mean TTFT and TPOT of ten catalogued models on H100..GB200 with TensorRT-LLM, SGLang and vLLM; expressible layouts, each measurement once; found after every model change: a blind check at scale.",
        index=None,
        required=_SERVING_COLUMNS,
    ),
    "error_bands": DatasetInfo(
        "error_bands.csv",
        "80 % error bands of predicted output tokens/s per GPU by error regime (chip family, engine, dense/MoE, co-located/disaggregated, speculative or not): 10th and 90th percentiles of log(predicted/measured) over published serving results no fit used (tools/build_error_bands.py).",
        index=None,
        required=("regime", "n_rows", "n_sources", "q10_log_ratio", "q90_log_ratio", "sources", "source", "as_of"),
    ),
    "third_party_band": DatasetInfo(
        "third_party_band.csv",
        "The 10th-90th percentile of log(predicted/measured) output tokens/s per GPU on runs third parties published of their own deployments (the sealed sets after their one score, each publication weighing the same; tools/build_third_party_band.py): every error band also spans it.",
        index=None,
        required=("n_rows", "n_sources", "q10_log_ratio", "q90_log_ratio", "sources", "source", "as_of"),
    ),
    "mlperf_benchmarks": DatasetInfo(
        "mlperf_benchmarks.csv",
        "MLPerf Inference LLM benchmarks: sample counts, reference mean output tokens, and mean input tokens (measured on the datasets; gpt-oss-120b's ASSUMED).",
        index="model",
        required=("model", "benchmark", "isl_tok", "isl_kind", "osl_tok", "performance_sample_count", "source", "as_of"),
    ),
    "engines": DatasetInfo(
        "engines.csv",
        "Serving engines: fitted per-iteration cost (scheduler, sampling, output) and sequence cap.",
        index=None,
        required=("engine", "vendor", "kernel_overhead_s", "max_seqs", "source", "as_of"),
    ),
    "expert_skew": DatasetInfo(
        "expert_skew.csv",
        "Measured expert-parallel load imbalance (busiest GPU's routed tokens over the mean), without and with EPLB.",
        index=None,
        required=("balancing", "ep_ref", "slots_per_rank_ref", "imbalance_ratio", "used", "source", "as_of"),
    ),
    # --- econ datasets ---
    "tco_params": DatasetInfo("tco_params.csv", "Cost of a chip-hour: InferenceX $/GPU-hour tiers (two survey vintages), capex, power, PUE, electricity, colocation, WACC.", index=None, required=("parameter", "hardware", "tier", "value", "unit", "source", "as_of")),
    "gpu_rental": DatasetInfo("gpu_rental.csv", "GPU rental prices 2023-2026 in USD per chip-hour (on-demand, reserved, contract indices).", index=None, required=("hardware", "usd_per_chip_h", "kind", "source", "as_of")),
    "power_model": DatasetInfo("power_model.csv", "Board power model coefficients (idle + HBM + FLOP terms), fitted on measured H200 power.", index="hardware", required=("hardware", "idle_w", "hbm_coef_w", "flop_coef_w", "tdp_w", "fitted_on", "source", "as_of")),
    "workloads": DatasetInfo("workloads.csv", "Workload mixes (input/output tokens per request): InferenceX chat, reasoning, summarization; OpenRouter mean request (2025).", index="name", required=("name", "input_tok", "output_tok", "source", "as_of")),
    # --- forecast datasets ---
    "token_demand": DatasetInfo(
        "token_demand.csv",
        "Observed token volumes per entity (Google, China national, Doubao, ...) in tokens/day; holdout = 1 marks series only scored, never tuned on.",
        index=None,
        required=("series", "date", "tokens_per_day", "in_fit", "source", "as_of", "note", "holdout", "search_pass"),
    ),
    "measurement_kinds": DatasetInfo(
        "measurement_kinds.csv",
        "Kinds of published token-volume figures (reported, lower bound, estimate, derived, secondary) and the measurement-error scale of each, in decades.",
        index=None,
        required=("kind", "scale_dec", "basis", "source", "as_of"),
    ),
    "demand_scenarios": DatasetInfo(
        "demand_scenarios.csv",
        "Agentic-demand priors (Bass p, q, Gartner 5-30x), reference lines, price path.",
        index=None,
        required=("parameter", "scenario", "value", "unit", "source", "as_of", "note"),
    ),
    "demand_drivers": DatasetInfo(
        "demand_drivers.csv",
        "Drivers of token demand per series: users of the product (adopters), published tokens per request, agentic shares; the structural demand model's data.",
        index=None,
        required=("driver", "series", "entity", "metric", "date", "value", "unit", "kind", "source", "as_of", "note"),
    ),
    "hardware_roadmap": DatasetInfo(
        "hardware_roadmap.csv",
        "Serving systems by the year they are available (shipping or announced) and region: the roadmap the forecast prices a frontier-class token along.",
        index=None,
        required=("system", "available_year", "status", "region", "source", "as_of", "note"),
    ),
    "dc_electricity": DatasetInfo(
        "dc_electricity.csv",
        "Electricity of all data centres by region, TWh per year: the IEA's 2024 estimates and base-case projections to 2030/2035 (the forecast's infrastructure view compares a series' energy with its region's).",
        index=None,
        required=("region", "year", "twh", "kind", "source", "as_of"),
    ),
    "ai_compute_stock": DatasetInfo(
        "ai_compute_stock.csv",
        "Installed AI accelerator compute in H100-equivalents by year (Epoch AI estimates): the chip supply the forecast's capacity view caps served tokens with.",
        index=None,
        required=("region", "year", "h100e", "kind", "source", "as_of"),
    ),
    "openrouter_model_weeks": DatasetInfo(
        "openrouter_model_weeks.csv",
        "OpenRouter's top models of each week, 2025-02 to 2026-05: weekly tokens and list prices (USD per M input/output tokens) as collected by openrouter-inference-stats; the price elasticity's data.",
        index=None,
        required=("week", "slug", "total_tokens", "input_usd_per_m_tok", "output_usd_per_m_tok", "is_free", "source", "as_of"),
    ),
    # --- watch datasets ---
    "api_prices": DatasetInfo("api_prices.csv", "API list prices, USD per million tokens, with tier, size class and model line (watch metric 1).", required=("date", "provider", "model", "line", "tier", "size_class", "price_kind", "input_usd_per_m_tok", "output_usd_per_m_tok", "blended_usd_per_m_tok", "source", "as_of")),
    "market_prices": DatasetInfo("market_prices.csv", "Third-party API list prices of open-weight models, USD per M input/cached/output tokens, with the provider's output speed where published (tokenomics market).", index=None, required=("provider", "model", "input_usd_per_m_tok", "cached_input_usd_per_m_tok", "output_usd_per_m_tok", "tok_per_s_per_user", "source", "as_of")),
    "served_precision": DatasetInfo("served_precision.csv", "The weight precision API providers serve each model at (the published checkpoint they deploy), priced by tokenomics market where a price row states none.", index="model", required=("model", "weight_precision", "source", "as_of")),
    "served_speed": DatasetInfo("served_speed.csv", "Published output speed per provider and model (median tokens/s of one request, measured by a router, gateway or benchmarker; claimed figures labelled), priced by tokenomics market where a price row states none.", index=None, required=("provider", "model", "tok_per_s_per_user", "source", "as_of")),
    "served_speculation": DatasetInfo("served_speculation.csv", "Speculative decoding a provider says it serves a model with, priced by tokenomics market where a sourced measurement of speculation on that model gives the acceptance.", index=None, required=("provider", "model", "gamma", "alpha_frac", "spec", "claim_source", "measured_speedup", "source", "as_of")),
    "model_traits": DatasetInfo("model_traits.csv", "Characteristics of priced models for the quality-adjusted price index: open weights, parameters, context window, MMLU where sourced.", index=None, required=("model", "open_weights", "total_params_b", "active_params_b", "context_tok", "mmlu_pct", "source", "as_of")),
    "china_price_cuts": DatasetInfo("china_price_cuts.csv", "China cloud price cuts, CNY and USD per million tokens, with the exchange rate and its source per row.", required=("date", "provider", "model", "price_before_cny_per_m_tok", "price_after_cny_per_m_tok", "cut_frac", "fx_cny_per_usd", "price_before_usd_per_m_tok", "price_after_usd_per_m_tok", "fx_source", "source", "as_of")),
    "megakernel_events": DatasetInfo("megakernel_events.csv", "Megakernel / persistent-kernel / CUDA-graph events with an assigned adoption level 0-4 (watch metric 2).", required=("date", "project", "hardware_family", "kind", "track", "level", "source", "as_of")),
    "supernode_events": DatasetInfo("supernode_events.csv", "Domestic (China) supernode events: yields, deliveries, production plans (watch metric 3).", required=("date", "vendor", "product", "event", "units_low", "value", "unit", "source", "as_of")),
}


def register(name: str, info: DatasetInfo) -> None:
    """Register a dataset so :func:`load` can find it."""
    REGISTRY[name] = info


def datasets() -> "pd.DataFrame":
    """Table of registered datasets with file and description."""
    import pandas as pd

    return pd.DataFrame(
        [{"dataset": k, "file": v.file, "description": v.description} for k, v in REGISTRY.items()]
    )


@functools.lru_cache(maxsize=64)
def _load_cached(name: str, path: str) -> "pd.DataFrame":
    import pandas as pd

    from .io import exact_floats

    import io as _io

    from .io import read_text

    info = REGISTRY[name]
    if not os.path.exists(path):
        raise DataError(f"dataset {name!r} not found at {path}")
    text = read_text(path, f"dataset {name!r}")
    try:
        df = pd.read_csv(_io.StringIO(text), **exact_floats())
    except (pd.errors.ParserError, pd.errors.EmptyDataError, ValueError) as exc:
        raise DataError(f"dataset {name!r} at {path} cannot be parsed as CSV: {str(exc).splitlines()[0]}") from None
    check_columns(df, info.required, what=info.file)
    if info.index:
        df = df.set_index(info.index, drop=False)
        df.index.name = None
    return df


def load(name: str) -> "pd.DataFrame":
    """Load a registered dataset as a DataFrame (a copy; safe to modify).

    ``"models"`` holds the bundled architectures and then the user's own
    (:func:`user_models_path`, added with ``tokenomics models add``); a user row named like a
    bundled one replaces it.

    Parameters
    ----------
    name : str
        A key of :data:`REGISTRY`, e.g. ``"accelerators"``.

    Returns
    -------
    pandas.DataFrame
        The rows, indexed by the dataset's index column when it has one.
    """
    if name not in REGISTRY:
        raise unknown_name("dataset", name, REGISTRY)
    if name == "models":
        return _models_frame(str(data_dir() / REGISTRY[name].file), _user_models_key()).copy()
    return _load_cached(name, str(data_dir() / REGISTRY[name].file)).copy()


# ---- the user's own models ------------------------------------------------------------------

def user_home() -> Path:
    """Directory of the user's own catalog files: ``$TOKENOMICS_HOME``, else ``~/.tokenomics``."""
    return Path(_user_file(os.environ.get("TOKENOMICS_HOME") or "")).parent


@functools.lru_cache(maxsize=8)
def _user_file(env: str) -> str:
    """The user-models file for a ``$TOKENOMICS_HOME`` value (``""``: ``~/.tokenomics``)."""
    return str((Path(env).expanduser() if env.strip() else Path.home() / ".tokenomics") / "models.csv")


def user_models_path() -> Path:
    """The user-models CSV (same columns as the bundled ``models.csv``): ``user_home()/models.csv``."""
    return user_home() / "models.csv"


#: The user-models file's last stat per path: (monotonic time, key). A lookup stats the file at
#: most once a second, so a model lookup stays a few microseconds.
_USER_KEYS: dict[str, tuple[float, tuple[str, int, int]]] = {}


def _user_models_key() -> tuple[str, int, int]:
    """(path, modification time, size) of the user-models file, so a cached lookup sees an edit
    (within a second; at once after :func:`add_user_model`); size -1 when there is none."""
    import time

    p = _user_file(os.environ.get("TOKENOMICS_HOME") or "")
    now = time.monotonic()
    hit = _USER_KEYS.get(p)
    if hit is not None and now - hit[0] < 1.0:
        return hit[1]
    try:
        st = os.stat(p)
        key = (p, st.st_mtime_ns, st.st_size)
    except (FileNotFoundError, NotADirectoryError):
        key = (p, 0, -1)
    _USER_KEYS[p] = (now, key)
    return key


def _read_user_models(path: str) -> "pd.DataFrame":
    import pandas as pd

    from .io import exact_floats

    try:
        df = pd.read_csv(path, **exact_floats())
    except pd.errors.EmptyDataError:
        raise DataError(f"user models file {path} is empty; delete it or add a model with "
                        "`tokenomics models add`") from None
    except (pd.errors.ParserError, UnicodeDecodeError) as exc:
        raise DataError(f"user models file {path} is not a readable CSV ({' '.join(str(exc).split())[:120]})") from None
    check_columns(df, REGISTRY["models"].required, what=f"user models file {path}")
    return df


@functools.lru_cache(maxsize=16)
def _models_frame(bundled: str, user_key: tuple[str, int, int]) -> "pd.DataFrame":
    """Bundled models, then the user's (replacing bundled rows of the same name)."""
    import pandas as pd

    df = _load_cached("models", bundled)
    path, _, size = user_key
    if size < 0:
        return df
    user = _read_user_models(path).set_index("name", drop=False)
    user.index.name = None
    if user.index.has_duplicates:
        raise DataError(f"user models file {path} names {user.index[user.index.duplicated()][0]!r} twice")
    return pd.concat([df.drop(index=[n for n in user.index if n in df.index]), user])


def bundled_model_names() -> list[str]:
    """Names of the models shipped with tokenomics (and their aliases)."""
    df = _load_cached("models", str(data_dir() / REGISTRY["models"].file))
    return list(df.index) + list(MODEL_ALIASES)


def user_model_names() -> list[str]:
    """Names in the user-models file (none when it does not exist)."""
    path, _, size = _user_models_key()
    return [] if size < 0 else [str(n) for n in _read_user_models(path)["name"]]


def add_user_model(spec: "ModelSpec", *, force: bool = False) -> Path:
    """Add a model architecture to the user-models file (written atomically) and return its path.

    Parameters
    ----------
    spec : ModelSpec
        The architecture (e.g. from :func:`tokenomics.hf_config.model_from_hf_config`); its ``source``,
        ``as_of`` and ``note`` are kept.
    force : bool
        Replace a model of the same name: a bundled one (the user's row wins) or the user's own.

    Raises
    ------
    ValidationError
        The name is not a catalog name (letters, digits, ``.``, ``_``, ``-``), or it is taken and
        ``force`` is false.
    """
    import re

    import pandas as pd

    from .errors import ValidationError
    from .io import write_frame

    name = spec.name
    if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]{0,79}", name or ""):
        raise ValidationError(f"model name {name!r} must be 1-80 letters, digits, '.', '_' or '-' "
                              "(starting with a letter or digit), e.g. 'my-model-7b'")
    if not force:
        if name in bundled_model_names():
            raise ValidationError(f"model name {name!r} is a bundled model; choose another --name, or pass "
                                  "--force to replace it with yours")
        if name in user_model_names():
            raise ValidationError(f"model name {name!r} is already in {user_models_path()}; choose another "
                                  "--name, or pass --force to replace it")
    columns = list(_load_cached("models", str(data_dir() / REGISTRY["models"].file)).columns)
    d = spec.to_dict()
    row = {c: d.get(c, "") for c in columns}
    for c, val in row.items():
        if isinstance(val, bool):
            row[c] = "true" if val else "false"
    path = user_models_path()
    if _user_models_key()[2] >= 0:
        old = _read_user_models(str(path))
        old = old[old["name"].astype(str) != name]
        df = pd.concat([old, pd.DataFrame([row])], ignore_index=True)[columns]
    else:
        df = pd.DataFrame([row], columns=columns)
    path.parent.mkdir(parents=True, exist_ok=True)
    write_frame(df, path)
    _USER_KEYS.clear()
    _models_frame.cache_clear()
    _model_cached.cache_clear()
    return path


def check_columns(df: "pd.DataFrame", required, what: str = "table") -> None:
    """Raise :class:`DataError` naming the missing columns, if any."""
    from .io import missing_columns

    missing_columns(df, required, what)


def _name(name, kind: str) -> None:
    """Names are strings: a number or a list is a wrong type, not an unknown name."""
    if not isinstance(name, str):
        from .errors import ValidationError

        raise ValidationError(f"{kind} must be a name (text) or a spec object, got {name!r:.60}")


#: Names published results and users write for a catalogued accelerator.
ACCELERATOR_ALIASES = {"h100": "h100-sxm", "h100_sxm": "h100-sxm"}


def canonical_name(name: str) -> str:
    """A name as the catalogs spell every name: lower case, no surrounding blanks (``"H200"``,
    ``" Llama-3.1-8B"`` and ``"h200"`` name one thing)."""
    return str(name).strip().lower()


def accelerator_name(name: str) -> str:
    """The catalog's name for ``name`` (case-insensitive; :data:`ACCELERATOR_ALIASES` resolved)."""
    key = canonical_name(name)
    return ACCELERATOR_ALIASES.get(key, key)


def accelerator(name: str) -> "Accelerator":
    """Look up an accelerator by name (``"h200"``, ``"tpu-v7"``, ...), with suggestions.

    Aliases in :data:`ACCELERATOR_ALIASES` (``"h100"``) resolve to the catalogued chip. Specs are
    frozen, so lookups are cached per data directory (a scalar step costs microseconds).
    """
    _name(name, "accelerator")
    return _accelerator_cached(accelerator_name(name), str(data_dir()))


@functools.lru_cache(maxsize=256)
def _accelerator_cached(name: str, _dir: str) -> "Accelerator":
    from .specs import Accelerator

    df = _load_cached("accelerators", str(data_dir() / REGISTRY["accelerators"].file))
    if name not in df.index:
        raise unknown_name("accelerator", name, df.index)
    return Accelerator.from_row(df.loc[name])


#: Published models that share a catalogued architecture (../shared/calibration/README.md:
#: "deepseek-r1 has deepseek-v3's architecture; llama-3.3-70b has llama-3.1-70b's").
MODEL_ALIASES = {"deepseek-r1": "deepseek-v3", "deepseek-r1-0528": "deepseek-v3", "deepseek-v3.1": "deepseek-v3",
                 "llama-3.3-70b": "llama-3.1-70b",
                 # Kimi K2-Thinking: Kimi K2.5's checkpoint scheme (INT4 routed experts, the rest BF16) on
                 # Kimi K2's text architecture
                 "kimi-k2-thinking": "kimi-k2.5",
                 # DeepSeek-V3.2-Exp: DeepSeek-V3.2's shapes and sparse-attention indexer (deepseek_v32: 61
                 # layers, MLA, 256 experts, indexer 64 heads of 128, top-2048); the row reads V3.2's config.json
                 "deepseek-v3.2-exp": "deepseek-v3.2"}


#: Words a provider or hub adds to a model's name that do not change its architecture: the tuning
#: (instruct, chat, thinking, reasoning; an alias such as kimi-k2-thinking is matched first), a
#: same-architecture update (terminus), a serving tier (turbo, tput, instant, versatile), the stored precision (fp8, ...),
#: a hub suffix (hf) and a release tag (latest, preview); dated and versioned releases are matched
#: by pattern (:data:`_RELEASE_TOKEN`).
_LISTING_WORDS = frozenset({"instruct", "chat", "it", "hf", "turbo", "tput", "instant", "versatile", "latest",
                            "thinking", "reasoning", "terminus",
                            "preview", "fp8", "bf16", "fp16", "fp4", "nvfp4", "mxfp4", "int4", "int8", "awq",
                            "gptq", "w4a16", "w8a8", "dynamic", "fast", "free"})
_RELEASE_TOKEN = r"(?:\d{4}|\d{6}|\d{8}|v\d+(?:\.\d+)*)"
#: Size words after a name that already fixes the size (``llama-4-maverick-17b-128e``).
_SIZE_TOKEN = r"(?:\d+(?:\.\d+)?[bme]|a\d+(?:\.\d+)?b|\d+x\d+b)"


def _listing_candidates(name: str) -> list[str]:
    """Normalised spellings of a listed model name, most literal first."""
    import re

    s = str(name).strip().lower().replace("_", "-").replace(" ", "-")
    s = s.rsplit("/", 1)[-1]  # hub organisation or provider path (meta-llama/..., accounts/x/models/...)
    s = re.sub(r"^meta-(?=llama)", "", s)
    s = re.sub(r"^llama(\d)", r"llama-\1", s)                      # llama3.1-8b
    s = re.sub(r"^llama-v(\d+)p(\d+)", r"llama-\1.\2", s)            # llama-v3p1-405b (Fireworks)
    s = re.sub(r"^llama-v(\d+)-", r"llama-\1-", s)                  # llama-v3-70b-instruct (Fireworks)
    s = re.sub(r"^gemma(\d)", r"gemma-\1", s)                       # gemma2-9b-it (Groq)
    s = re.sub(r"^qwen-?(\d)", r"qwen\1", s)
    out = [s]
    while True:  # drop listing words and release tags from the end
        parts = s.rsplit("-", 1)
        if len(parts) < 2 or not (parts[1] in _LISTING_WORDS or re.fullmatch(_RELEASE_TOKEN, parts[1])):
            break
        s = parts[0]
        out.append(s)
    return out


def match_model_name(name: str) -> str | None:
    """The catalog name (or alias) a provider's or hub's model name stands for; None where none does.

    A price list names models as its provider does (``meta-llama/Meta-Llama-3.1-70B-Instruct``,
    ``accounts/fireworks/models/deepseek-v3-0324``, ``Qwen3-235B-A22B-Instruct-2507-tput``,
    ``llama3.1-8b``). The organisation, the tuning, serving-tier and precision words and dated or
    versioned release tags are dropped, and a size repeated after a name that fixes it
    (``llama-4-maverick-17b-128e``); what is left must be a catalog name or alias. Nothing else
    is guessed: ``glm-4.5-air`` (another architecture, not catalogued) matches nothing, nor does
    ``deepseek-r1-distill-llama-70b`` match ``deepseek-r1``.

    >>> match_model_name("meta-llama/Meta-Llama-3.1-70B-Instruct-Turbo")
    'llama-3.1-70b'
    >>> match_model_name("Qwen/Qwen3-235B-A22B-Instruct-2507-tput")
    'qwen3-235b-a22b'
    >>> match_model_name("glm-4.5-air") is None
    True
    """
    import re

    known = {canonical_name(k): k for k in (*model_names(), *user_model_names(), *MODEL_ALIASES)}
    cands = _listing_candidates(name)
    for c in cands:
        if c in known:
            return known[c]
    tail = rf"(?:-(?:{_SIZE_TOKEN}|{_RELEASE_TOKEN}|{'|'.join(sorted(_LISTING_WORDS))}))+"
    for c in cands:
        hits = [k for k in known if re.fullmatch(re.escape(k) + tail, c)]
        if hits:
            return known[max(hits, key=len)]
    return None


def model(name: str) -> "ModelSpec":
    """Look up a model architecture by name (``"llama-3.1-8b"``, ``"kimi-k3"``, ...); cached.

    Aliases in :data:`MODEL_ALIASES` resolve to the architecture they share.
    """
    _name(name, "model")
    name, key = canonical_name(name), _user_models_key()
    # an alias names the architecture it shares, unless the user's own model took the name
    if name in MODEL_ALIASES and (key[2] < 0 or name not in _models_frame(
            str(data_dir() / REGISTRY["models"].file), key).index):
        name = MODEL_ALIASES[name]
    return _model_cached(name, str(data_dir()), key)


@functools.lru_cache(maxsize=256)
def _model_cached(name: str, _dir: str, user_key: tuple[str, int, int] = ("", 0, -1)) -> "ModelSpec":
    from .specs import ModelSpec

    df = _models_frame(str(data_dir() / REGISTRY["models"].file), user_key)
    if name not in df.index:
        err = unknown_name("model", name, df.index)
        err.args = (f"{err.args[0]} (a model not listed: tokenomics models add CONFIG.json --name {name})",)
        raise err
    return ModelSpec.from_row(df.loc[name])


def accelerator_names() -> list[str]:
    """Names of catalogued accelerators."""
    return list(_load_cached("accelerators", str(data_dir() / REGISTRY["accelerators"].file)).index)


def model_names() -> list[str]:
    """Names of catalogued models (read from the kept table: no copy of it)."""
    return list(_models_frame(str(data_dir() / REGISTRY["models"].file), _user_models_key()).index)


def accelerator_vendor(name: str) -> str:
    """Vendor of a catalogued accelerator (``datasets/accelerators.csv``), ``""`` for a name it
    does not hold (read from the kept table: no copy of it)."""
    acc = _load_cached("accelerators", str(data_dir() / REGISTRY["accelerators"].file))
    return str(acc.loc[name, "vendor"]) if name in acc.index else ""
