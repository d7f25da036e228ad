"""AMD ATOM's own nightly serving benchmarks on the MI355X (datasets/serving_atom.csv)."""

from __future__ import annotations

import numpy as np
import pytest

from tokenomics.catalog import load
from tokenomics.validate.serving_cases import case_deployment, predict_cases


@pytest.fixture(scope="module")
def rows():
    return load("serving_atom")


def test_rows_are_the_dashboards_medians(rows):
    """Every row cites the ATOM dashboard's data file and its runs; its per-user rate is 1 / TPOT;
    total tokens/s per GPU exceed output tokens/s (prompts count too). Spot value: DeepSeek-R1 FP8
    TP8 at 4 users, 1K/1K, the median over its 20 runs of 2026-04-30 to 2026-05-24 of the mean TPOT
    (10.745 ms) and output throughput (356.3 tok/s on 8 GPUs), as tools/curate_atom_dashboard.py
    read them."""
    assert rows["case_id"].is_unique and len(rows) == 156
    assert rows["source"].str.startswith("github:ROCm/ATOM@").all()
    assert rows["source"].str.contains("benchmark-dashboard/data.js").all()
    assert rows["note"].str.contains("https://github.com/ROCm/ATOM/actions/runs/").all()
    assert rows["measured_tok_per_s_per_user"].to_numpy() == pytest.approx(
        1.0 / rows["measured_tpot_s"].to_numpy(), rel=1e-4)
    assert (rows["measured_total_tok_per_s_per_gpu"] > rows["measured_output_tok_per_s_per_gpu"]).all()
    t = rows.set_index("case_id").loc["T001"]
    assert (t["model"], t["weight_precision"], t["tp"], t["concurrency"]) == ("deepseek-r1", "fp8", 8, 4)
    assert t["measured_tpot_s"] == pytest.approx(0.010745)
    assert t["measured_output_tok_per_s_per_gpu"] * 8 == pytest.approx(356.32, rel=1e-4)
    # MTP runs (three draft tokens) say so, with the acceptance the dashboard does not record
    mtp = rows[rows["spec_decode"] == "mtp"]
    assert len(mtp) == 28 and mtp["note"].str.contains("acceptance not recorded").all()


def test_every_row_is_predicted_with_the_amd_default_engine(rows):
    """ATOM is fitted nowhere: each row is priced with the fitted AMD default engine, and every
    run kept its users in flight (Little's law on its own throughput, TTFT and TPOT, no model
    involved, within 10 %)."""
    assert {case_deployment(r).engine for _, r in rows.head(20).iterrows()} == {"default"}
    p = predict_cases(rows)
    assert p["status"].eq("predicted").all()
    assert np.isfinite(p["error_frac"]).all()
    assert (p["measured_concurrency_frac"] > 0.9).all()
