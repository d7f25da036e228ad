"""Fit vLLM's TPU backend into tokenomics/datasets/engines.csv: the (vllm, google) and (default, google) rows.

    python tools/fit_tpu_engine.py

The rows are ``datasets/serving_tpu_2026-12.csv`` (Google's tpu-recipes: Llama-3.3-70B on a v6e-8,
Qwen3-32B and Qwen3.5-397B on TPU7x, vLLM's TPU backend; serve rows at a stated concurrency),
fitted as ``tools/fit_serving.py`` fits the GPU engines (:func:`tokenomics.validate.fit_serving.fit_engines`:
the per-kernel iteration cost by least squares on log(predicted / measured) output tokens/s per
chip, the per-request TTFT overhead as the median TTFT gap). Only the Google rows of the table are
replaced; the GPU engines keep their fit. The sealed TPU set (``serving_sealed_2026-12d.csv``) is
never read here.
"""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pandas as pd

from tokenomics.catalog import data_dir, load
from tokenomics.io import write_frame
from tokenomics.validate.fit_serving import fit_engines

FIT_SET = "serving_tpu_2026-12"
OUT = Path(__file__).resolve().parent.parent / "tokenomics" / "datasets" / "engines.csv"


def main() -> None:
    fit = fit_engines(data_dir() / f"{FIT_SET}.csv",
                      source=f"fitted by tools/fit_tpu_engine.py on tokenomics/datasets/{FIT_SET}.csv "
                             "(Google's tpu-recipes: vLLM TPU serve rows on v6e and TPU7x)",
                      as_of=date.today().isoformat())
    google = fit[fit["vendor"] == "google"]
    table = load("engines").reset_index(drop=True)
    table = pd.concat([table[table["vendor"] != "google"], google], ignore_index=True)
    table = table.sort_values(["engine", "vendor"], kind="stable").reset_index(drop=True)
    write_frame(table, OUT)
    print(google.to_string())


if __name__ == "__main__":
    main()
