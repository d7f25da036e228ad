"""Refit tokenomics/datasets/engines.csv on the serving fit set (tokenomics/datasets/serving_public.csv).

    python tools/fit_serving.py
"""

from pathlib import Path

from tokenomics.catalog import data_dir
from tokenomics.io import write_frame
from tokenomics.validate.fit_serving import fit_engines

cases = data_dir() / "serving_public.csv"
t = fit_engines(cases, source="fitted by tools/fit_serving.py on tokenomics/datasets/serving_public.csv "
                              "(InferenceMAX v1 gpt-oss-120b serve rows; ../shared/calibration)",
                as_of="2026-12-04")
out = Path(__file__).resolve().parent.parent / "tokenomics" / "datasets" / "engines.csv"
write_frame(t, out)
print(t.to_string())
