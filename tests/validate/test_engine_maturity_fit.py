"""The engine-maturity fit still holds on the rows it was fitted on (dstack's DeepSeek-R1 runs on
SGLang 0.4.2/0.4.3 and vLLM 0.7.3/0.7.4, datasets/serving_thirdparty_2026-12.csv): a change to the
step model that moves them needs `python tools/fit_engine_maturity.py` again. In-sample, so not an
accuracy claim (docs/validation/sealed.md holds the sealed score)."""

import numpy as np
import pytest

from tokenomics.catalog import load
from tokenomics.validate.serving_cases import predict_cases

pytestmark = pytest.mark.integration


def test_the_fitted_releases_are_predicted_at_their_measured_throughput():
    c = load("serving_thirdparty_2026-12")
    c = c[c["engine"].isin(["sglang", "vllm"])].reset_index(drop=True)
    p = predict_cases(c)
    assert (p["status"] == "predicted").all() and len(p) == 28
    r = p["predicted_output_tok_per_s_per_gpu"].astype(float) / p["measured_output_tok_per_s_per_gpu"].astype(float)
    assert float(np.median(r)) == pytest.approx(1.0, abs=0.03)  # the fit's condition (tools/fit_engine_maturity.py)
