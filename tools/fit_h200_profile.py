"""Regenerate the shipped H200 profile (datasets/profiles/h200.json) from the bundled measurements.

    python tools/fit_h200_profile.py

Equivalent to `tokenomics calibrate datasets/h200_cases.csv --out datasets/profiles/h200.json`.
"""
from tokenomics import catalog
from tokenomics.validate.calibrate import fit_profile

prof = fit_profile(
    catalog.load("h200_cases"),
    microbench=catalog.load("h200_microbench"),
    kernel_bench=catalog.load("kernel_microbench"),
    source=("fitted on datasets/h200_cases.csv (../shared/calibration: H200 SXM, PyTorch 2.11 + CUDA 13) "
            "and the large-GEMM and ceiling rows of datasets/h200_microbench.csv; KV read curve of decode "
            "attention fitted on the H200 decode-attention rows of datasets/kernel_microbench.csv "
            "(tools/fit_h200_profile.py)"),
)
prof.save("tokenomics/datasets/profiles/h200.json")
print(prof.to_json())
