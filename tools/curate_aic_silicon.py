"""Write tokenomics/datasets/serving_aic_silicon.csv from NVIDIA aiconfigurator's silicon references.

    python tools/curate_aic_silicon.py /path/to/ai-dynamo/aiconfigurator  (a git directory)

``tools/accuracy_tracking/silicon_refs.csv`` (added 2026-07-09, "silicon accuracy anchors" of the
project's prediction regression gate) holds 35 serving measurements NVIDIA's AIConfigurator team
keeps to check their own predictions: mean TTFT and TPOT of one deployment at a stated concurrency,
ISL and OSL, on H100/H200/B200/B300/GB200/GB300 with TensorRT-LLM, SGLang and vLLM. They were found
after every change to the model and are scored once, blind. Read at the commit :data:`COMMIT`:

* co-located (``mode`` agg) rows only: the disaggregated ones give worker counts but not the
  workers' tensor / expert parallel layout, which the prediction needs;
* ``tp`` = ``tp_size`` (attention tensor parallel), ``ep`` = ``moe_ep_size`` (``tp`` over ``ep``
  is the experts' tensor-parallel split, ``moe_tp_size``), GPUs = ``tp_size`` x ``attention_dp_size``
  (1 on every row), concurrency = ``batch_size`` (= the source's ``silicon_concurrency``);
* precisions as stated (``fp4`` is NVFP4); two Qwen3-32B rows state none: the checkpoint's BF16,
  ASSUMED; KV cache: the engines' default (not stated);
* models: DeepSeek-R1 and -V3 (``deepseek-v3`` architecture), Kimi-K2.5 (its text model is Kimi K2's
  architecture, catalogued as the alias kimi-k2.5; the vision tower ignored), MiniMax-M2.5, Qwen3-32B, Qwen3-235B-A22B, Qwen3.5-397B-A17B.
  Left out: one DeepSeek-V3 row that repeats a DeepSeek-R1 row value for value;
* measured: ``measured_ttft_s`` and ``measured_tpot_s`` (the source's mean TTFT and TPOT);
  ``measured_output_tok_per_s_per_gpu`` is DERIVED for a closed-loop client keeping the concurrency
  in flight: concurrency x OSL / (TTFT + (OSL - 1) x TPOT) / GPUs; ``measured_tok_per_s_per_user``
  DERIVED as 1 / TPOT (InferenceX's "interactivity");
* ``fixed_lengths`` 1: the source does not record its client, but AIConfigurator's own benchmark
  harness sends every request with exactly the ISL and OSL (``aiperf`` with
  ``--isl-stddev 0 --osl-stddev 0``, ``ignore_eos``, ``min_tokens`` = ``max_tokens``:
  ``src/aiconfigurator/generator/config/backend_templates/benchmark/bench_run.sh.j2`` with the
  ``BenchConfig.isl_stddev`` / ``osl_stddev`` defaults 0 of ``generator/config/deployment_config.yaml``,
  and ``generator/sflow.py``, at :data:`COMMIT`): ASSUMED for every row.

    python tools/curate_aic_silicon.py --sample /path/to/ai-dynamo/aiconfigurator

writes ``serving_aic_sample.csv`` the same way from the whole measurement dump the anchors were
drawn from (``aic-core/src/aiconfigurator_core/systems/silicon_sample.csv`` at :data:`COMMIT`,
5,221 rows), keeping co-located rows of catalogued models whose layout the schema expresses and
whose fields agree: attention TP x DP GPUs with no DP (``dp_attention`` 0, experts TP x EP = the
attention TP) or DP without attention TP (``dp_attention`` 1, experts TP x EP = the DP; experts split
inside as well go to ``ep`` = the MoE EP and ``moe_tp`` = the MoE TP, stop 49), at most 8
GPUs (the dump re-encodes some runs with 16-64 "TP" ranks next to the same measurement at 8);
each measurement once (the dump repeats many across its source files, some rounded to 0.01 ms in one file and
kept in full in another: the same TTFT and TPOT within :data:`SAME_S` count once, also where the dump files
one run under two names of one architecture, DeepSeek-R1 and DeepSeek-V3: the first kept). gpt-oss-120b rows labelled
NVFP4 are its MXFP4 checkpoint (no NVFP4 one is catalogued); a row with no precision is its
checkpoint's BF16, ASSUMED.
"""

from __future__ import annotations

import io
import re
import subprocess
import sys
from pathlib import Path

import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from tokenomics.io import write_frame  # noqa: E402

COMMIT = "095f58a51c4ca8e61b66ec108d86f223f8d559ce"
PATH = "tools/accuracy_tracking/silicon_refs.csv"
OUT = Path(__file__).resolve().parent.parent / "tokenomics" / "datasets" / "serving_aic_silicon.csv"
HARDWARE = {"h100_sxm": "h100", "h200_sxm": "h200", "b200_sxm": "b200", "b300_sxm": "b300", "gb200": "gb200",
            "gb300": "gb300"}
MODELS = {"deepseek-ai/DeepSeek-R1": "deepseek-r1", "deepseek-ai/DeepSeek-V3": "deepseek-v3",
          "moonshotai/Kimi-K2.5": "kimi-k2.5", "MiniMaxAI/MiniMax-M2.5": "minimax-m2.5",
          "Qwen/Qwen3-32B": "qwen3-32b", "Qwen/Qwen3-235B-A22B-FP8": "qwen3-235b-a22b",
          "Qwen/Qwen3.5-397B-A17B": "qwen3.5-397b-a17b"}
#: The dump's further models (the anchors hold none of them).
SAMPLE_MODELS = {**MODELS, "openai/gpt-oss-120b": "gpt-oss-120b", "meta-llama/Llama-3.1-70B": "llama-3.1-70b",
                 "meta-llama/Llama-3.1-8B-Instruct": "llama-3.1-8b", "nvidia/Llama-3.1-8B-Instruct-FP8": "llama-3.1-8b",
                 "nvidia/DeepSeek-R1-NVFP4": "deepseek-r1", "nvidia/Qwen3-32B-NVFP4": "qwen3-32b"}
SAMPLE_PATH = "aic-core/src/aiconfigurator_core/systems/silicon_sample.csv"
SAMPLE_OUT = OUT.with_name("serving_aic_sample.csv")
#: The dump's weight quantization names -> the serving schema's precisions.
QUANT = {"fp8": "fp8", "fp8_block": "fp8", "nvfp4": "fp4", "int4_wo": "int4"}
ENGINES = {"trtllm": "trt", "sglang": "sglang", "vllm": "vllm"}
COLUMNS = ("case_id", "phase", "hardware", "model", "weight_precision", "kv_precision", "engine", "n_gpus", "tp",
           "ep", "dp_attention", "disaggregated", "n_prefill_gpus", "n_decode_gpus", "prefill_tp", "prefill_ep",
           "spec_decode", "isl_tok", "osl_tok", "concurrency", "n_requests", "context_tok", "prefill_tok_per_gpu",
           "measured_output_tok_per_s_per_gpu", "measured_total_tok_per_s_per_gpu", "measured_tok_per_s_per_user",
           "measured_ttft_s", "measured_tpot_s", "overlap", "cache_hit_frac", "expert_balance", "a2a_impl",
           "source", "as_of", "note", "recv_interval_iters", "adp_timeout_iters", "max_batch_size",
           "engine_version", "mem_frac", "fixed_lengths", "moe_tp")
MEASURE_KEYS = ("ttft", "tpot")
#: Two of the dump's TTFT (or TPOT) values this close are one measurement [s]: half of the 0.01 ms to
#: which some of its source files round what others keep in full.
SAME_S = 5e-6 + 1e-12


def _release(version) -> str:
    """The engine release a row names, or '' for none or a build that is not a release (a nightly)."""
    v = "" if pd.isna(version) else str(version).strip()
    return v if re.match(r"^\d+\.\d+", v) else ""


def _num(x) -> float:
    return float(x) if pd.notna(x) and str(x).strip() != "" else float("nan")


def _meta(r) -> dict:
    """The ``key=value`` provenance fields of a row's ``silicon_data_source``."""
    return dict(kv.split("=", 1) for kv in (p.strip() for p in str(r.silicon_data_source).split(";")) if "=" in kv)


def _arch(name: str) -> str:
    """The catalog architecture a model name runs (DeepSeek-R1 and -V3: one)."""
    from tokenomics.catalog import model

    return model(name).name


def _repeat_of(seen: dict, key: tuple, ttft_s: float, tpot_s: float, rid: str) -> str | None:
    """The id of an earlier row of ``key`` with the same TTFT and TPOT (within :data:`SAME_S`):
    one measurement the dump files twice (two build labels, two checkpoint names of one
    architecture, or kept in full in one file and rounded to 0.01 ms in another). ``None`` for a
    new measurement, which is recorded under ``key``."""
    for a, b, first in seen.get(key, ()):
        if abs(ttft_s - a) <= SAME_S and abs(tpot_s - b) <= SAME_S:
            return first
    seen.setdefault(key, []).append((ttft_s, tpot_s, rid))
    return None


def _served(r, *, case_id: str, name: str, prec: str, tp: int, ep: int, dp: int, version: str, source: str,
            as_of: str, note: str, moe_tp: int | None = None) -> dict:
    """One co-located serving row of the schema: the measured mean TTFT and TPOT and the output
    tokens/s per GPU DERIVED from them for a closed-loop client keeping the concurrency in flight."""
    gpus, conc, osl = tp * dp, float(r.batch_size), float(r.osl)
    ttft, tpot = _num(r.silicon_ttft_ms) / 1e3, _num(r.silicon_tpot_ms) / 1e3
    return dict(
        case_id=case_id, phase="serve", hardware=HARDWARE[r.system], model=name, weight_precision=prec,
        kv_precision="", engine=ENGINES[r.backend], n_gpus=gpus, tp=tp if dp == 1 else 1, ep=ep,
        dp_attention=int(dp > 1), disaggregated=0, spec_decode="none", isl_tok=float(r.isl), osl_tok=osl,
        concurrency=conc, measured_output_tok_per_s_per_gpu=round(conc * osl / (ttft + (osl - 1) * tpot) / gpus, 4),
        measured_tok_per_s_per_user=round(1.0 / tpot, 4),  # 1 / TPOT, as InferenceX's interactivity
        measured_ttft_s=round(ttft, 9), measured_tpot_s=round(tpot, 9), source=source, as_of=as_of,
        engine_version=version, note=note, fixed_lengths=1, moe_tp=moe_tp)


def rows(refs: pd.DataFrame) -> list[dict]:
    out, seen, skipped = [], {}, []
    for r in refs.itertuples(index=False):
        if r.mode != "agg":
            skipped.append(f"{r.id} (disaggregated: no worker layout)")
            continue
        if r.model_path not in MODELS:
            skipped.append(f"{r.id} ({r.model_path} not catalogued)")
            continue
        key = (_arch(MODELS[r.model_path]), r.system, r.backend, r.backend_version, r.isl, r.osl, r.batch_size,
               r.tp_size, r.moe_tp_size, r.moe_ep_size)
        first = _repeat_of(seen, key, _num(r.silicon_ttft_ms) / 1e3, _num(r.silicon_tpot_ms) / 1e3, r.id)
        if first is not None:
            skipped.append(f"{r.id} (repeats {first} value for value)")
            continue
        tp = int(_num(r.tp_size))
        dp = int(_num(r.attention_dp_size)) if pd.notna(r.attention_dp_size) else 1
        ep = max(int(_num(r.moe_ep_size)) if pd.notna(r.moe_ep_size) else 1, 1)
        conc, isl, osl = float(r.batch_size), float(r.isl), float(r.osl)
        prec = str(r.precision).strip().lower() if pd.notna(r.precision) else "bf16"
        meta = _meta(r)
        measured = meta.get("measured", "")[:10]
        version = "" if pd.isna(r.backend_version) else str(r.backend_version)
        why = ("precision not stated: the checkpoint's BF16 ASSUMED; " if pd.isna(r.precision) else "")
        out.append(_served(
            r, case_id=f"N{len(out) + 1:03d}", name=MODELS[r.model_path], prec=prec, tp=tp,
            ep=ep if MODELS[r.model_path] != "qwen3-32b" else 1, dp=dp, version=version,
            source=f"github:ai-dynamo/aiconfigurator@{COMMIT}:{PATH} (id {r.id})", as_of=measured or "2026-07-09",
            note=(f"{r.model_path} on {tp * dp} x {r.system} with {r.backend} {version or '(release not stated)'}, "
                  f"co-located, attention TP{tp}, MoE TP{int(_num(r.moe_tp_size)) if pd.notna(r.moe_tp_size) else 1} x "
                  f"EP{ep}, {int(conc)} concurrent requests, ISL {int(isl)} / OSL {int(osl)}; "
                  f"{meta.get('image', 'image not stated').replace('#', '/')}; source file "
                  f"{meta.get('source_file', '?')}, measured {measured or 'not stated'}, wip={meta.get('wip', 'not stated')}. "
                  f"{why}Mean TTFT and TPOT as measured; measured_output_tok_per_s_per_gpu DERIVED = concurrency x "
                  "OSL / (TTFT + (OSL - 1) x TPOT) / GPUs (a closed-loop client keeping the concurrency in flight). "
                  "NVIDIA aiconfigurator's silicon accuracy anchors (tools/curate_aic_silicon.py)."),
        ))
    print("left out:", "; ".join(skipped))
    return out


def sample_rows(refs: pd.DataFrame) -> pd.DataFrame:
    """The dump's expressible co-located rows (module docstring), one per measurement."""
    out, seen, why = [], {}, {}

    def skip(reason: str) -> None:
        why[reason] = why.get(reason, 0) + 1

    for r in refs.itertuples(index=False):
        if r.mode != "agg":
            skip("disaggregated")
            continue
        name = SAMPLE_MODELS.get(r.model_path)
        if name is None:
            skip(f"{r.model_path} not catalogued")
            continue
        tp = int(_num(r.tp_size))
        dp = int(_num(r.attention_dp_size)) if pd.notna(r.attention_dp_size) and _num(r.attention_dp_size) > 0 else 1
        mtp = int(_num(r.moe_tp_size)) if pd.notna(r.moe_tp_size) and _num(r.moe_tp_size) > 0 else 1
        mep = int(_num(r.moe_ep_size)) if pd.notna(r.moe_ep_size) and _num(r.moe_ep_size) > 0 else 1
        moe = name not in ("llama-3.1-70b", "llama-3.1-8b", "qwen3-32b")
        if dp > 1 and tp > 1:
            skip("attention TP inside DP groups (not expressible)")
            continue
        if tp * dp > 8 or (moe and mtp * mep != tp * dp):
            skip("layout fields disagree or exceed one node")
            continue
        ttft, tpot = _num(r.silicon_ttft_ms) / 1e3, _num(r.silicon_tpot_ms) / 1e3
        if not (ttft > 0 and tpot > 0 and _num(r.batch_size) > 0):
            skip("no measurement")
            continue
        key = (_arch(name), r.system, r.backend, _release(r.backend_version), r.isl, r.osl, r.batch_size)
        if _repeat_of(seen, key, ttft, tpot, r.id) is not None:
            skip("repeats a measurement")
            continue
        quant = str(r.gemm_quant_mode).strip().lower() if pd.notna(r.gemm_quant_mode) else ""
        prec = QUANT.get(quant, "bf16")
        if name == "gpt-oss-120b" and prec == "fp4":
            prec = "mxfp4"
        meta = _meta(r)
        measured = meta.get("measured", "")[:10]
        version = _release(r.backend_version)
        shown = version or (r.backend_version if pd.notna(r.backend_version) else "(release not stated)")
        # attention DP whose experts are also split inside (MoE TP x EP over the DP ranks): ``moe_tp``
        split = moe and dp > 1 and mtp > 1
        out.append(_served(
            r, case_id=f"M{len(out) + 1:04d}", name=name, prec=prec, tp=tp,
            ep=(mep if dp == 1 or split else dp) if moe else 1, moe_tp=mtp if split else None,
            dp=dp, version=version, source=f"github:ai-dynamo/aiconfigurator@{COMMIT}:{SAMPLE_PATH} (id {r.id})",
            as_of=measured or "2026-08-21",
            note=(f"{r.model_path} on {tp * dp} x {r.system} with {r.backend} {shown}, co-located, attention TP{tp} x "
                  f"DP{dp}, MoE TP{mtp} x EP{mep}, quantization {quant or 'not stated (BF16 ASSUMED)'}, "
                  f"{int(r.batch_size)} concurrent requests, ISL {int(r.isl)} / OSL {int(r.osl)}; source "
                  f"{meta.get('source_file', str(r.silicon_data_source).split(';')[0])}, measured "
                  f"{measured or 'not stated'}. Throughput DERIVED from the measured TTFT and TPOT "
                  "(datasets/README.md, serving_aic_sample.csv)."),
        ))
    print("left out:", "; ".join(f"{k}: {v}" for k, v in sorted(why.items(), key=lambda kv: -kv[1])))
    return pd.DataFrame(out).reindex(columns=list(COLUMNS))


def _git_csv(repo: str, path: str) -> pd.DataFrame:
    text = subprocess.run(["git", "--git-dir", repo, "show", f"{COMMIT}:{path}"], check=True, capture_output=True,
                          text=True).stdout
    return pd.read_csv(io.StringIO(text))


if __name__ == "__main__":
    args = [a for a in sys.argv[1:] if a != "--sample"]
    if len(args) != 1:
        raise SystemExit(__doc__.split("\n\n")[1])
    repo = args[0] if Path(args[0], "HEAD").exists() else str(Path(args[0]) / ".git")
    if "--sample" in sys.argv:
        df, out = sample_rows(_git_csv(repo, SAMPLE_PATH)), SAMPLE_OUT
    else:
        df, out = pd.DataFrame(rows(_git_csv(repo, PATH))).reindex(columns=list(COLUMNS)), OUT
    assert not any(re.search(r"\bnan\b", str(n)) for n in df["note"])
    df["moe_tp"] = pd.to_numeric(df["moe_tp"]).astype("Int64")  # a whole number where set
    write_frame(df, out)
    print(f"{len(df)} rows -> {out.relative_to(out.parents[2])}")
