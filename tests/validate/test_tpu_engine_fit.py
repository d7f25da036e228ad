"""vLLM's TPU backend: fitted on Google's tpu-recipes serve rows (datasets/serving_tpu_2026-12.csv)."""

from __future__ import annotations

import numpy as np
import pytest

from tokenomics.catalog import data_dir, load
from tokenomics.perf.engines import engine_params
from tokenomics.validate.serving_cases import predict_cases


def test_the_tpu_rows_of_the_engines_table_are_the_fitted_ones():
    """A TPU deployment of vLLM prices with the Google rows (not the GPU engines' fallback)."""
    p = engine_params("vllm", "google")
    assert (p["engine"], p["vendor"]) == ("vllm", "google")
    assert "tools/fit_tpu_engine.py" in p["source"] and "serving_tpu_2026-12" in p["source"]
    assert p["kernel_overhead_s"] > engine_params("vllm", "nvidia")["kernel_overhead_s"]
    assert engine_params("default", "google")["kernel_overhead_s"] == pytest.approx(p["kernel_overhead_s"])


def test_every_fit_row_is_predicted_and_the_fit_is_centred():
    """The 7 fit rows predict; the median log(predicted / measured) after the fit is within 0.1
    of zero (measured 2026-12-07: +0.06; before the fit +0.21)."""
    pred = predict_cases(load("serving_tpu_2026-12"))
    assert (pred["status"] == "predicted").all()
    r = np.log(pred["predicted_output_tok_per_s_per_gpu"].astype(float) / pred["measured_output_tok_per_s_per_gpu"].astype(float))
    assert abs(float(np.median(r))) < 0.1


@pytest.mark.integration
def test_refitting_gives_the_stored_rows():
    from tokenomics.validate.fit_serving import fit_engines

    fit = fit_engines(data_dir() / "serving_tpu_2026-12.csv", source="x", as_of="x")
    got = fit[(fit["engine"] == "vllm") & (fit["vendor"] == "google")].iloc[0]
    stored = engine_params("vllm", "google")
    assert got["kernel_overhead_s"] == pytest.approx(stored["kernel_overhead_s"], rel=1e-3)
    assert got["ttft_overhead_s"] == pytest.approx(stored["ttft_overhead_s"], rel=1e-3)
