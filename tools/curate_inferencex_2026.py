"""Write tokenomics/datasets/serving_blind_2026.csv: InferenceX single-node DeepSeek-R1 runs of 2025-10 to 2026-06.

    python tools/curate_inferencex_2026.py /path/to/vngcloud/InferenceX-app  (a git checkout)

The rows come from ``packages/app/cypress/fixtures/api/benchmarks.json`` of the InferenceX
dashboard (SemiAnalysisAI/InferenceX-app; read in the vngcloud fork at commit FORK_COMMIT, the
stored snapshot that holds the file): a capture of the dashboard API, one object per benchmark
point, each with the container ``image``, the run's ``date`` and the GitHub Actions ``run_url``
of SemiAnalysisAI/InferenceX that measured it. Taken: the single-node, co-located DeepSeek-R1 rows
(198 with a measured output rate: TensorRT-LLM and SGLang on B200/B300/H200, SGLang on MI300X/MI325X/MI355X, AMD's
ATOM engine on MI355X) and the 208 disaggregated ones whose workers account for their GPUs
(``prefill_tp x prefill_num_workers`` = prefill GPUs, likewise decode; the other 27 carry v1-style
totals without a layout): Dynamo with TensorRT-LLM or SGLang on B200/B300/GB200/GB300/H100/H200 and
AMD's MoRI-SGLang on MI355X, in the schema of ``serving_public.csv``:

* ``tp``, ``ep``, ``dp_attention`` = the decode worker's (co-located: one worker holds the GPUs),
  ``n_gpus`` = ``tp`` (InferenceX's convention: ``tp`` counts the node's GPUs, ``ep`` <= ``tp``; the
  capture's ``num_decode_gpu`` is ``tp x ep`` on some rows, more GPUs than a node has); ``spec_decode`` as the row's ``spec_method`` (``mtp`` rows carry no
  acceptance: the engines' default MTP depth and the preset acceptance apply);
* disaggregated rows: ``n_prefill_gpus`` / ``n_decode_gpus`` from the capture; a worker with attention
  data parallelism is written ``prefill_tp`` 1, ``prefill_ep`` = its GPUs (the schema's DEP), else its
  ``tp``/``ep``; the published per-GPU output rate is per DECODE GPU and the total per GPU of the whole
  deployment (input x prefill GPUs + output x decode GPUs = total x all GPUs on these rows);
* measured output / total tokens/s per GPU = ``output_tput_per_gpu`` / ``tput_per_gpu``, tokens/s
  per user = ``median_intvty``, TTFT and TPOT the medians;
* ``engine_version`` from the image tag (``release:1.3.0rc14`` -> 1.3.0rc14, ``sglang:v0.5.12-cu130``
  -> 0.5.12, ``sgl-dev:sglang-0.5.9-...`` -> 0.5.9); empty where the row has no image or the tag
  holds no release (ATOM nightlies);
* KV precision and the schedulers' settings are not in the capture: empty (the engines' defaults);
* request lengths: InferenceX draws them in [0.8, 1.0] x nominal (``RANDOM_RANGE_RATIO: 0.8`` in
  ``.github/workflows/benchmark-tmpl.yml`` of SemiAnalysisAI/InferenceX), marked in ``note``.

These rows were found after the engine-release correction was built and are not used by any fit or
choice: ``tokenomics validate-serving tokenomics/datasets/serving_blind_2026.csv`` scores them blind.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pandas as pd

FORK_COMMIT = "7fe6d62ad57a3df061be692e86578c7111d880c7"
REL = "packages/app/cypress/fixtures/api/benchmarks.json"
OUT = Path(__file__).resolve().parent.parent / "tokenomics" / "datasets" / "serving_blind_2026.csv"


def release(image) -> str:
    """The engine release an image tag names, or "" (see the module docstring)."""
    if not isinstance(image, str):
        return ""
    for pat in (r"tensorrt-llm/release:v?(\d+\.\d+\.\d+(?:rc\d+)?(?:\.post\d+)?)",
                r"sglang(?:-rocm)?:v(\d+\.\d+\.\d+(?:\.post\d+)?)", r"sglang-(\d+\.\d+\.\d+(?:\.post\d+)?)"):
        m = re.search(pat, image)
        if m:
            return m.group(1)
    return ""


def build(repo: Path) -> pd.DataFrame:
    full = subprocess.run(["git", "-C", str(repo), "rev-parse", FORK_COMMIT], check=True, capture_output=True,
                          text=True).stdout.strip()
    blob = subprocess.run(["git", "-C", str(repo), "show", f"{full}:{REL}"], check=True, capture_output=True).stdout
    df = pd.json_normalize(json.loads(blob))
    dis = df["disagg"].astype(bool)
    single = ~dis & ~df["is_multinode"].astype(bool)
    # disaggregated rows whose workers account for their GPUs (the others hold v1-style totals)
    split = (dis & (df["prefill_num_workers"] > 0)
             & (df["prefill_tp"] * df["prefill_num_workers"] == df["num_prefill_gpu"])
             & (df["decode_tp"] * df["decode_num_workers"] == df["num_decode_gpu"]))
    df = df[(df["model"] == "dsr1") & (single | split)]
    df = df.sort_values(["disagg", "hardware", "framework", "precision", "isl", "osl", "decode_tp", "decode_ep",
                         "conc", "date"])
    rows = []
    for i, (_, r) in enumerate(df.iterrows(), start=1):
        met = lambda k: r.get(f"metrics.{k}")  # noqa: E731
        d = bool(r["disagg"])
        pre_dpa = bool(r["prefill_dp_attention"])
        rows.append({
            "case_id": f"X{i:03d}", "phase": "serve", "hardware": r["hardware"], "model": "deepseek-r1",
            "weight_precision": r["precision"], "kv_precision": "", "engine": r["framework"],
            "n_gpus": int(r["num_prefill_gpu"] + r["num_decode_gpu"]) if d else int(r["decode_tp"]),
            "tp": int(r["decode_tp"]), "ep": int(r["decode_ep"]),
            "dp_attention": int(bool(r["decode_dp_attention"])), "disaggregated": int(d),
            "n_prefill_gpus": int(r["num_prefill_gpu"]) if d else None,
            "n_decode_gpus": int(r["num_decode_gpu"]) if d else None,
            "prefill_tp": (1 if pre_dpa else int(r["prefill_tp"])) if d else None,
            "prefill_ep": (max(int(r["prefill_tp"]), int(r["prefill_ep"])) if pre_dpa else int(r["prefill_ep"])) if d else None,
            "spec_decode": r["spec_method"], "isl_tok": float(r["isl"]), "osl_tok": float(r["osl"]),
            "concurrency": float(r["conc"]),
            "measured_output_tok_per_s_per_gpu": met("output_tput_per_gpu"),
            "measured_total_tok_per_s_per_gpu": met("tput_per_gpu"),
            "measured_tok_per_s_per_user": met("median_intvty"),
            "measured_ttft_s": met("median_ttft"), "measured_tpot_s": met("median_tpot"),
            "engine_version": release(r["image"]),
            "source": (f"github:vngcloud/InferenceX-app@{full}:{REL} (fork of SemiAnalysisAI/InferenceX-app: "
                       f"InferenceX dashboard API capture); run {r['run_url']}"),
            "as_of": r["date"],
            "note": (f"DeepSeek-R1-0528 (deepseek-v3 architecture); InferenceX "
                     + (f"disaggregated run ({int(r['prefill_num_workers'])} prefill workers of {int(r['prefill_tp'])} "
                        f"GPUs, {int(r['decode_num_workers'])} decode workers of {int(r['decode_tp'])}; output tok/s per "
                        "DECODE GPU, total per GPU of the deployment)" if d else "single-node run")
                     + f" of {r['date']}, "
                     f"image {r['image'] if isinstance(r['image'], str) else 'not recorded'}. Median values; "
                     "tok_per_s_per_user = median interactivity. Random ISL/OSL in [0.8,1.0]x nominal. fp4 = "
                     "NVFP4 on NVIDIA, MXFP4 on AMD (weights); KV precision and scheduler settings not in the capture"),
        })
    out = pd.DataFrame(rows)
    return out[out["measured_output_tok_per_s_per_gpu"].notna()]


if __name__ == "__main__":
    from _build_main import run

    raise SystemExit(run(__doc__, build, OUT, sys.argv))
