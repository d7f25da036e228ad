"""One-off curation: ../shared/reference/accelerators.csv -> datasets/accelerators.csv (base units).

Kept for provenance; the package never runs it. Re-run only when the reference file changes:
    python tools/curate_accelerators.py ../shared/reference/accelerators.csv
Rows and cells added afterwards by hand (the sd200-chip row, TPU v7 VMEM; see datasets/README.md,
"accelerators.csv (multi-chip additions)"; the GPUs' driver-reported hbm_bytes) must then be
re-applied.
"""
import sys

import pandas as pd

IDS = {
    "NVIDIA A100 SXM4 80GB": "a100",
    "NVIDIA H100 SXM5 80GB": "h100-sxm",
    "NVIDIA H200 SXM 141GB": "h200",
    "NVIDIA B200 (HGX/DGX, 1000W)": "b200",
    "NVIDIA B300 (HGX Blackwell Ultra)": "b300",
    "NVIDIA GB200 (per Blackwell GPU, NVL72)": "gb200",
    "NVIDIA GB300 (per Blackwell Ultra GPU, NVL72)": "gb300",
    "AMD Instinct MI300X": "mi300x",
    "AMD Instinct MI325X": "mi325x",
    "AMD Instinct MI355X": "mi355x",
    "Google TPU v5e": "tpu-v5e",
    "Google TPU v5p": "tpu-v5p",
    "Google TPU v6e (Trillium)": "tpu-v6e",
    "Google TPU7x (Ironwood)": "tpu-v7",
    "AWS Trainium2": "trainium2",
    "AWS Trainium3": "trainium3",
    "Huawei Ascend 910B": "ascend-910b",
    "Huawei Ascend 910C": "ascend-910c",
    "Cambricon MLU370-X8": "mlu370-x8",
    "Cambricon MLU290-M5": "mlu290-m5",
}
GIB_HBM = {"tpu-v5p", "tpu-v6e", "tpu-v7", "trainium2"}  # vendor states GiB
MIB_SRAM = {"tpu-v5e"}
INT4_IN_FP4 = {"a100", "mlu370-x8", "mlu290-m5"}

src = pd.read_csv(sys.argv[1])
out = pd.DataFrame()
out["name"] = src["name"].map(IDS)
out["display_name"] = src["name"]
out["vendor"] = src["vendor"]
out["year"] = src["year"]
out["peak_bf16_flop_per_s"] = src["bf16_tflops"] * 1e12
out["peak_fp8_flop_per_s"] = src["fp8_tflops"] * 1e12
fp4 = src["fp4_tflops"] * 1e12
is_int4 = out["name"].isin(INT4_IN_FP4)
out["peak_fp4_flop_per_s"] = fp4.where(~is_int4)
out["peak_int4_flop_per_s"] = fp4.where(is_int4)
# INT8 as a path of its own (Ascend) is set by hand, like hbm_bytes (datasets/README.md): re-apply
out["peak_int8_flop_per_s"] = float("nan")
out["hbm_bytes"] = [
    g * (2**30 if n in GIB_HBM else 1e9) for g, n in zip(src["hbm_gb"], out["name"])
]
out["hbm_bytes_per_s"] = src["hbm_tbps"] * 1e12
out["sram_bytes"] = [
    m * (2**20 if n in MIB_SRAM else 1e6) for m, n in zip(src["sram_mb"], out["name"])
]
# the reference quotes bidirectional aggregate GB/s; keep it as stated and say so
out["scaleup_bytes_per_s"] = src["scaleup_gbps_per_chip"] * 1e9
out["tdp_w"] = src["tdp_w"]
out["price_usd"] = src["price_usd"]
out["source"] = src["source"]
out["as_of"] = src["year"].astype(str)
out["note"] = src["note"]
out.to_csv("tokenomics/datasets/accelerators.csv", index=False)
print(out[["name", "peak_bf16_flop_per_s", "hbm_bytes", "hbm_bytes_per_s", "tdp_w"]])
