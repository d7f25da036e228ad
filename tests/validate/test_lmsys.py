"""LMSYS's prefill-only and decode-only SGLang wide-EP results (datasets/serving_lmsys_phase.csv)."""

from __future__ import annotations

import numpy as np
import pytest

from tokenomics.catalog import load
from tokenomics.validate.serving_cases import predict_cases


@pytest.fixture(scope="module")
def rows():
    return load("serving_lmsys_phase")


def test_rows_are_the_blogs_figures(rows):
    """Per-GPU figures from the LMSYS posts: 'per-node throughputs of 57,674, 54,543, and 50,302
    tokens per second for prompt lengths of 1K, 2K, and 4K' on 4 x 8 H100 (divided by 8); '22,282
    tokens/sec per node for 2K inputs' on 9 x 8 H100 at 256 sequences a device; GB200 '13,386
    output tokens per second per GPU' (NVFP4 MoE, 48 ranks, 1408 a rank) and '18,471 input' tokens
    per second per GPU (FP8 MoE, 4 ranks)."""
    r = rows.set_index("case_id")
    assert len(r) == 6 and r["source"].str.startswith("https://lmsys.org/blog/").all()
    assert r.loc[["L001", "L002", "L003"], "measured_total_tok_per_s_per_gpu"].tolist() == \
        pytest.approx([57674 / 8, 54543 / 8, 50302 / 8])
    assert r.at["L004", "measured_output_tok_per_s_per_gpu"] == pytest.approx(22282 / 8)
    assert r.at["L004", "concurrency"] == 256 * 72 and r.at["L005", "concurrency"] == 1408 * 48
    assert r.at["L005", "measured_output_tok_per_s_per_gpu"] == 13386
    assert r.at["L006", "measured_total_tok_per_s_per_gpu"] == 18471


def test_every_row_is_predicted_and_prefill_follows_the_prompt_length(rows):
    """A prefill-only row with a prompt length and no output length is timed at its own prompt
    length (it once fell back to the 8,192-token chunk, so 1K, 2K and 4K prompts came out equal):
    longer prompts cost more attention per token, so input tokens/s falls from 1K to 4K, as
    measured (57,674 -> 50,302 per node)."""
    p = predict_cases(rows).set_index("case_id")
    assert p["status"].eq("predicted").all()
    pre = p.loc[["L001", "L002", "L003"], "predicted_total_tok_per_s_per_gpu"].to_numpy()
    assert np.all(np.diff(pre) < 0)
    assert np.isfinite(p["error_frac"]).all()
