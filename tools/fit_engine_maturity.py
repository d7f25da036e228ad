"""Fit tokenomics/datasets/engine_maturity.csv: how much slower older SGLang and vLLM releases run.

    python tools/fit_engine_maturity.py

The rows are ``datasets/serving_thirdparty_2026-12.csv`` (dstack's DeepSeek-R1 runs on 8 x H200 and
8 x MI300X, SGLang 0.4.2-0.4.3 and vLLM 0.7.3-0.7.4, February-March 2025) predicted with the newest
kernels (no maturity slowdown). The model: an older release runs every op's kernels
``exp(rate * age)`` times slower, ``age`` the years from its release to the reference release (the
oldest release of the serving fit set, vLLM 0.10.1), held at the oldest fitted release's age. One
rate for SGLang and vLLM (both engines' rows, both chips), found so the median of
log(predicted / measured) output tokens/s per GPU over the SGLang and vLLM rows is zero (a fixed
point: the rate moves by the remaining median log error over the median age, five passes).
TensorRT-LLM's rows are not fitted (its releases are timed by its kernel tables).
"""

from __future__ import annotations

import subprocess
import sys
from datetime import date
from pathlib import Path

import numpy as np
import pandas as pd

from tokenomics.catalog import load
from tokenomics.io import write_frame
from tokenomics.perf import engines

OUT = Path(__file__).resolve().parent.parent / "tokenomics" / "datasets" / "engine_maturity.csv"
FIT_SET = "serving_thirdparty_2026-12"
FITTED = ("sglang", "vllm")
REFERENCE = ("vllm", "0.10.1")  # the oldest release of the serving fit set (datasets/serving_public.csv)


#: One pass: the median log(predicted / measured) of the fitted engines' rows with the table as written.
_PASS = f"""
import numpy as np
from tokenomics.catalog import load
from tokenomics.validate.serving_cases import predict_cases
c = load({FIT_SET!r}); c = c[c["engine"].isin({FITTED!r})].reset_index(drop=True)
p = predict_cases(c)
print(float(np.median(np.log(p["predicted_output_tok_per_s_per_gpu"].astype(float)
                             / p["measured_output_tok_per_s_per_gpu"].astype(float)))))
"""


def _table(rate: float, ref: date, oldest: date) -> pd.DataFrame:
    src = f"tools/fit_engine_maturity.py on tokenomics/datasets/{FIT_SET}.csv"
    return pd.DataFrame([{"engine": e, "reference_release": " ".join(REFERENCE), "reference_date": ref.isoformat(),
                          "oldest_fitted_date": oldest.isoformat(), "log_slowdown_per_year": round(rate, 6),
                          "kind": "fitted", "source": src, "as_of": date.today().isoformat(),
                          "note": ("one rate for SGLang and vLLM, fitted on dstack's DeepSeek-R1 runs (8 x H200, 8 x MI300X, "
                                   "SGLang 0.4.2.post4 / 0.4.3.post2, vLLM 0.7.3 / 0.7.4 dev builds): median "
                                   "log(predicted/measured) output tok/s per GPU zero; releases older than the oldest "
                                   "fitted one take its slowdown")} for e in FITTED])


def main() -> None:
    cases = load(FIT_SET)
    rows = cases[cases["engine"].isin(FITTED)].reset_index(drop=True)
    ref = engines.release_date(*REFERENCE)
    when = [engines.release_date(e, v) for e, v in zip(rows["engine"], rows["engine_version"])]
    oldest = min(when)
    age = np.array([(ref - d).days / 365.25 for d in when])
    rate = 0.0
    for i in range(5):  # each pass in a fresh process: the serving model caches per deployment
        write_frame(_table(rate, ref, oldest), OUT)
        med = float(subprocess.run([sys.executable, "-c", _PASS], check=True, capture_output=True,
                                   text=True).stdout.split()[-1])
        print(f"pass {i}: rate {rate:.4f} per year: median predicted/measured {np.exp(med):.3f}")
        rate += med / float(np.median(age))
    write_frame(_table(rate, ref, oldest), OUT)
    print(f"wrote {OUT}: log slowdown {rate:.4f} per year (reference {REFERENCE[0]} {REFERENCE[1]} {ref}, oldest fitted "
          f"{oldest}: the oldest fitted release runs {np.exp(rate * float(age.max())):.2f}x slower)")


if __name__ == "__main__":
    main()
