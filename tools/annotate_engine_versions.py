"""Fill the ``engine_version`` column of the serving datasets from what each source states.

    python tools/annotate_engine_versions.py

``engine_version`` is the engine release a published run used, where its source names it
(``tokenomics.perf.kernel_versions`` times TensorRT-LLM releases older than the newest measured
kernels with their own kernels' measured slowdown; other engines' releases are recorded only).

* InferenceMAX v1 rows (faradawn/InferenceMAX @ 7a9f000, ``.github/configs/nvidia-master.yaml`` and
  ``amd-master.yaml``, the ``image`` of each configuration): TensorRT-LLM DeepSeek-R1 on B200 and H200
  ``nvcr.io/nvidia/tensorrt-llm/release:1.1.0rc2.post2``; gpt-oss-120b on B200
  ``release:1.2.0rc0.post1``; gpt-oss-120b on H200 ``release:gpt-oss-dev`` (no release number: empty);
  SGLang ``lmsysorg/sglang:v0.5.3rc1-cu129-b200`` (B200), ``v0.5.2rc2-cu126`` (H200),
  ``rocm/7.0:...sgl-dev-v0.5.2...`` (MI300X/MI325X/MI355X); vLLM ``vllm/vllm-openai:v0.11.0`` (NVIDIA),
  ``rocm/7.0:...vllm_0.10.1...`` (AMD). The GB200 Dynamo rows ran
  ``nvcr.io/nvidia/ai-dynamo/tensorrtllm-runtime:0.5.1-rc0.pre3`` and a Dynamo SGLang squash file
  (``runners/launch_gb200-nv.sh``): neither names the engine release, so empty.
* NVIDIA/TensorRT-LLM issue 5929 rows: ``v0.21.0rc2`` (the issue's environment).
* TensorRT-LLM performance-overview rows (docs/source/performance/perf-overview.md @ 00f3768, the
  v1.0 overview: "NEW for v1.0"): ``1.0.0``.
* Everything else (Azure's trtllm-bench tables: TensorRT-LLM cloned from main, release not stated;
  NVIDIA's tech-blog rows; DeepSeek's production figures): empty.
"""

from __future__ import annotations

import csv
from pathlib import Path

import pandas as pd

DATA = Path(__file__).resolve().parent.parent / "tokenomics" / "datasets"
IMAX = "faradawn/InferenceMAX"


def engine_version(row) -> str:
    src, eng, hw, model = str(row["source"]), row["engine"], row["hardware"], row["model"]
    if IMAX in src:
        if eng == "trt":
            if model == "deepseek-r1":
                return "1.1.0rc2.post2"
            return "1.2.0rc0.post1" if model == "gpt-oss-120b" and hw == "b200" else ""
        if eng == "sglang":
            return {"b200": "0.5.3rc1", "h200": "0.5.2rc2"}.get(hw, "0.5.2" if hw.startswith("mi") else "")
        if eng == "vllm":
            return "0.10.1" if hw.startswith("mi") else "0.11.0"
        return ""
    if "TensorRT-LLM/issues/5929" in src:
        return "0.21.0rc2"
    if "perf-overview.md" in src:
        return "1.0.0"
    return ""


def main() -> None:
    for name in ("serving_public", "serving_holdout"):
        p = DATA / f"{name}.csv"
        df = pd.read_csv(p, dtype=str, keep_default_na=False)
        df["engine_version"] = [engine_version(r) for _, r in df.iterrows()]
        tmp = p.with_suffix(".tmp")
        df.to_csv(tmp, index=False, quoting=csv.QUOTE_MINIMAL, lineterminator="\n")
        tmp.replace(p)
        print(name, df["engine_version"].replace("", "(none)").value_counts().to_dict())


if __name__ == "__main__":
    main()
