"""The H200 step model on steps no fit saw: ``datasets/h200_heldout.csv``.

71 steps measured on one H200 on 2026-12-04 with ``tools/h200_steps.py`` (the calibration
harness of ``../shared/calibration/README.md`` rebuilt), in regimes ``h200_cases.csv`` lacks.
The shipped profile is fitted on ``h200_cases.csv`` alone; every expected value below is that
measurement scored by the shipped profile (docs/validation/serving.md, "The H200 step model on
steps no fit saw").
"""

import json

import numpy as np
import pytest
from typer.testing import CliRunner

from tokenomics import catalog
from tokenomics.cli import app, main
from tokenomics.econ.power import power_model
from tokenomics.validate.calibrate import predict_cases


@pytest.fixture(scope="module")
def pred():
    d = catalog.load("h200_heldout")
    p = predict_cases(d, "h200")
    p["regime"] = d["regime"].to_numpy()
    return p


def test_the_harness_is_the_calibration_harness():
    """Controls: configurations of h200_cases.csv measured again. In the run that gave most rows
    the CUDA-graph steps repeat the calibration run within 2 % (1.712 vs 1.683 ms, 7.626 vs
    7.628 ms), so the graph rows test the same harness on the same chip (across the session's
    five fresh machines these two steps took 1.71-1.92 and 7.63-8.17 ms). Eager steps and the prefill do not: eager time is the
    host's (this host ran them at 0.55-0.85x) and the prefill's glue kernels took 1.30x."""
    d = catalog.load("h200_heldout")
    cal = catalog.load("h200_cases").set_index("case_id")["measured_step_s"]
    c = d[d["regime"] == "control"].set_index(["model", "batch", "execution", "fusion"])["measured_step_s"]
    assert c[("dense-1b", 1, "graph", "fused_qkv_gateup")] / cal["h200-002"] == pytest.approx(1.0, abs=0.02)
    assert c[("dense-8b", 32, "graph", "fused_qkv_gateup")] / cal["h200-020"] == pytest.approx(1.0, abs=0.02)
    assert c[("dense-1b", 1, "eager", "fused_qkv_gateup")] / cal["h200-001"] < 0.9
    assert c[("dense-8b-layers", 1, "eager", "fused_qkv_gateup")] / cal["h200-049"] == pytest.approx(1.30, abs=0.02)


def test_graph_steps_in_unseen_regimes(pred):
    """26 CUDA-graph steps: 3B and 14B models, contexts 8k-131k, batch 256-512, one-sequence
    verify steps of 2-8 tokens, MoE layers computing every expert. Measured: median 2.6 %,
    p90 7.5 %, max 14.5 % (MoE 8x2 at batch 128), median predicted/measured 1.00."""
    g = pred[(pred["execution"] == "graph") & ~pred["regime"].isin(["control", "verify-batched"])]
    assert len(g) == 26
    assert set(g["regime"]) == {"other-size", "long-context", "large-batch", "verify-1-seq", "moe-all"}
    err = g["error_frac"].abs()
    assert err.median() == pytest.approx(0.026, abs=0.003)
    assert err.quantile(0.9) == pytest.approx(0.075, abs=0.01)
    assert err.max() == pytest.approx(0.145, abs=0.01)
    assert (1 + g["error_frac"]).median() == pytest.approx(1.00, abs=0.01)
    for regime, part in g.groupby("regime"):
        assert part["error_frac"].abs().max() < 0.16, regime


def test_batched_verify_steps_are_a_known_miss(pred):
    """Verify steps of 2-8 tokens for 32-128 sequences run 0.70-0.90x of measured: PyTorch's
    cuDNN attention runs q_len > 1 in 64-row query tiles per head (3.4 ms of a 11.6 ms step at
    32 x 4 tokens, 1.15 ms at one token, profiled), which the core does not model. Pinned so a
    change that moves it is seen."""
    v = pred[(pred["regime"] == "verify-batched") & (pred["execution"] == "graph")]
    assert len(v) == 5
    assert np.all((v["error_frac"] > -0.31) & (v["error_frac"] < -0.10))


def test_held_out_board_power():
    """Board power measured on 10 steps the power fit never saw (h200_heldout_power.csv: graph
    decode of 1-512 sequences, 1k-32k contexts, 1B-14B dense and a MoE; host-bound eager decode;
    compute-bound prefill) against the power model on the core's predicted step, as
    ``chain.price`` prices energy: -13 % to +18 %, median +6 %. The host-bound eager steps land
    within 7 % (idle power in the launch gaps, tokenomics.econ.power)."""
    import pandas as pd

    pw = catalog.load("h200_heldout_power")
    cases = pd.concat([catalog.load("h200_heldout"), catalog.load("h200_cases")]).set_index("case_id")
    pred = predict_cases(cases.loc[pw["case_id"]].reset_index(), "h200")
    watts = power_model("h200").board_power_w(pred["hbm_util_frac"], pred["flop_util_frac"])
    ratios = pd.Series(np.asarray(watts) / pw["board_power_w"].to_numpy(), index=pw["execution"] + "/" + pw["phase"])
    assert len(ratios) == 10
    assert ratios.min() == pytest.approx(0.87, abs=0.02)
    assert ratios.max() == pytest.approx(1.18, abs=0.02)
    assert ratios.median() == pytest.approx(1.06, abs=0.02)
    assert (ratios["eager/decode"] - 1).abs().max() < 0.08


def test_cli_validates_the_bundled_held_out_set_by_name():
    r = CliRunner().invoke(app, ["validate", "h200_heldout", "--format", "json"])
    assert r.exit_code == 0, r.output
    rows = json.loads(r.output)
    assert len(rows) == 71 and {"regime", "predicted_step_s", "measured_step_s"} <= set(rows[0])
    t = CliRunner().invoke(app, ["validate", "h200_heldout"])
    assert t.exit_code == 0 and "by regime" in t.output


@pytest.mark.parametrize("command", [["validate"], ["calibrate", "--out", "never.json"]])
def test_cli_suggests_the_bundled_step_sets(command, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as e:
        main([command[0], "h200_heldoot", *command[1:]])
    err = capsys.readouterr().err
    assert e.value.code == 2
    assert "Did you mean 'h200_heldout'" in err and "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "never.json").exists()
