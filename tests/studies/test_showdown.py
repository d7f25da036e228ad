"""The Kimi K3 showdown: scenarios from plan_params.csv, honest verdicts, waterfall, CLI."""

import json

import numpy as np
import pytest
from typer.testing import CliRunner

from tokenomics.studies import showdown as sd
from tokenomics.cli import app, main


@pytest.fixture(scope="module")
def res():
    return sd.showdown()


def test_every_plan_parameter_is_documented():
    df = sd.plan_params()
    assert df["source"].notna().all() and (df["source"].str.len() > 0).all()
    assert set(df["kind"]) <= {"claimed", "measured", "derived", "assumed", "datasheet"}
    # one K3 specification for every system
    assert (df[df["param"] == "model"]["value"] == "kimi-k3").all()


def test_scenarios_use_one_spec_and_the_article_claims():
    scs = sd.scenarios()
    assert set(scs) == set(sd.SCENARIOS)
    claims = {n: (s.claimed_metric, s.claimed_value) for n, s in scs.items()}
    # ../shared/seed/FACTS.md
    assert claims["unoptimized"] == ("tok_per_s_per_user", 10.0)
    assert claims["sd200-ultra"] == ("step_time_s", 0.00585)
    assert claims["tpu-v7-megakernel"] == ("tok_per_s_per_user", 709.0)
    assert claims["gb200-16"] == ("tok_per_s_per_user", 452.0)


def test_tpu_and_gb200_run_the_published_benchmark_setting():
    """github:Inferact/tpu-megakernels: DSpark with one anchor and seven draft rows at a fixed
    acceptance length of 6 (README; scripts/benchmark_kimi_dspark.sh), 1-token prompts decoding
    1,000 tokens (mean context ~512); the TPU kernel's TP32-over-cores layout (experts in 8
    groups of 112, each split over 2 chips) with FP8 gate/up experts (kimi/load.py)."""
    scs = sd.scenarios()
    for name in ("tpu-v7-megakernel", "gb200-16"):
        sc = scs[name]
        assert (sc.spec_gamma, sc.spec_acceptance_length, sc.context_tok) == (7, 6.0, 512.0)
        r = sd.run_scenario(sc)
        assert r.tokens_per_step == pytest.approx(6.0) and r.spec.block
        assert r.spec.draft_model(r.model).name == "kimi-k3-dspark"
    tpu = scs["tpu-v7-megakernel"]
    assert (tpu.tp, tpu.ep, tpu.expert_precision) == (16, 8, "fp8-mxfp4")
    # the supernode scenarios keep the 8K benchmark setting and the checkpoint's experts
    assert scs["sd200-ultra"].context_tok == 8192.0 and scs["sd200-ultra"].expert_precision is None


def test_sd200_runs_the_latency_layout():
    """The SD200 single-user record runs attention TP32 (3 of K3's 96 heads a chip, the split of
    Inferact's published K3 kernel), the widest power-of-two split of the heads within 128 chips.
    On the checkpoint's ~110 GB of BF16 non-expert weights every doubling of TP shortens the step
    (the record's layout is the fastest the heads allow), while the unoptimized stack keeps TP8
    inside one 8-chip board. Its routed experts are split EP32 x TP4 (the same kernel splits each
    expert 4 ways, stop 49): at one user the busiest chip then reads quarter-experts, and the step is
    shorter than with each expert whole on one of 128 chips (EP128: 6.9 ms)."""
    scs = sd.scenarios()
    assert (scs["sd200-ultra"].tp, scs["sd200-ultra"].ep, scs["sd200-ultra"].moe_tp) == (32, 32, 4)
    whole = float(sd.run_scenario("sd200-ultra", ep=128, moe_tp=None).step_time_s)
    split = sd.run_scenario("sd200-ultra")
    assert split.parallel.expert_tp == 4 and float(split.step_time_s) < whole
    assert float(split.imbalance_s) < 0.5 * float(sd.run_scenario("sd200-ultra", ep=128, moe_tp=None).imbalance_s)
    assert scs["unoptimized"].tp == 8
    steps = [float(sd.run_scenario("sd200-ultra", tp=t).step_time_s) for t in (8, 16, 32)]
    assert steps[0] > steps[1] > steps[2]
    # hand calculation: at TP8 a chip reads >= 1/8 of ~110 GB of BF16 non-expert weights a token,
    # >= 8 ms at the assumed 1.6 TB/s -> the TP8 step cannot be a 5.85 ms record
    assert steps[0] > 0.008
    w = sd.waterfall("sd200-ultra")
    assert "layout" in set(w["category"])


def test_measured_points_are_predicted_and_compared():
    """datasets/megakernel_bench.csv (Inferact's figures): 12 published Kimi K3 points and Muse
    Spark 1.2 at batch 1 (int4, NVFP4; bf16 and int8 dense) on 4 TPU7x chips, each predicted with
    its own model, layout, storage, batch and acceptance length; a sweep is one vectorized call."""
    m = sd.measured()
    assert len(m) == 15 and m["predicted_tok_per_s"].notna().all()
    # int8 dense weights (hand: half the bf16 dense bytes) make the same Muse Spark step faster
    muse = m[m.model == "muse-spark-1.2"].set_index(["expert_precision", "dense_precision"])
    assert muse.loc[("nvfp4", "int8"), "predicted_tok_per_s"] > muse.loc[("nvfp4", "bf16"), "predicted_tok_per_s"]
    assert (m["model"] == "kimi-k3").sum() == 12
    assert np.allclose(m["error_frac"], m["predicted_tok_per_s"] / m["measured_tok_per_s"] - 1)
    tpu6 = m[(m.system == "tpu-v7-16") & (m.spec == "dspark") & (m.acceptance_length == 6)]
    res = sd.showdown().results["tpu-v7-megakernel"]
    assert float(tpu6["predicted_tok_per_s"].iloc[0]) == pytest.approx(float(np.asarray(res.tok_per_s_per_user)))
    # a fixed acceptance length scales accepted tokens/s at the same step time: AL3 = AL6 / 2
    al3 = m[(m.system == "tpu-v7-16") & (m.acceptance_length == 3)]["predicted_tok_per_s"].iloc[0]
    assert al3 == pytest.approx(float(tpu6["predicted_tok_per_s"].iloc[0]) / 2)
    # more users never lower the system's throughput
    for _, g in m[(m.spec == "none") & (m.model == "kimi-k3")].groupby("system"):
        assert np.all(np.diff(g.sort_values("batch")["predicted_tok_per_s"].to_numpy()) > 0)


def test_figures_report_error_and_verdict_consistently(res):
    f = res.to_frame()
    assert {"system", "metric", "claimed", "predicted", "error_frac"} <= set(f.columns)
    main4 = f.iloc[:4]
    assert np.allclose(main4["error_frac"], main4["predicted"] / main4["claimed"] - 1)
    for _, r in main4.iterrows():
        assert r["within_tolerance"] == (abs(r["error_frac"]) <= 0.15)
        assert ("MISS" in r["note"]) == (not r["within_tolerance"])  # a miss says so
    # the model stays in the article's regime: every figure within a factor of 3 (sanity bound;
    # the SD200 step is 2.5x the claim with the checkpoint's BF16 attention on the assumed
    # TP8 boards, see README)
    assert (main4["predicted"] / main4["claimed"]).between(1 / 3, 3.0).all()


def test_table_and_results_agree(res):
    t = res.table
    for (name, r), row in zip(res.results.items(), t.itertuples()):
        assert row.tok_per_s_per_user == pytest.approx(float(np.asarray(r.tok_per_s_per_user)))
    assert (t["chips"] == [128, 128, 16, 16]).all()


def test_waterfall_ends_at_each_prediction(res):
    w = sd.waterfall()
    model_rows = w[w["kind"] == "model"]
    pred = {"sd200-ultra": "sd200-ultra", "tpu-v7-megakernel": "tpu-v7-megakernel", "gb200-16": "gb200-16"}
    for target, scen in pred.items():
        last = model_rows[model_rows["target"] == target].iloc[-1]
        expect = float(np.asarray(res.results[scen].tok_per_s_per_user))
        assert last["tok_per_s_per_user"] == pytest.approx(expect, rel=1e-9)
        rows = model_rows[model_rows["target"] == target]
        assert np.prod(rows["factor"]) == pytest.approx(last["cumulative_factor"])
    agent = w[w["kind"] == "claimed"]
    assert len(agent) == 1 and agent["factor"].iloc[0] == 1.5  # article: +50 %, labelled claimed


def test_sensitivity_covers_each_system_sorted():
    s = sd.sensitivity()
    assert set(s["system"]) == {"generic-supernode-128", "sd200-ultra", "tpu-v7-16", "gb200-16"}
    for _, g in s.groupby("system"):
        sw = g["swing_frac"].abs().to_numpy()
        assert np.all(sw[:-1] >= sw[1:])
    # more HBM bandwidth never makes a step slower (property of every scenario)
    hbm = s[s["assumption"] == "HBM bandwidth"]
    tps = hbm[hbm["metric"] == "tok_per_s_per_user"]
    assert (tps["predicted_high"] >= tps["predicted_low"] - 1e-9).all()


runner = CliRunner()


def test_cli_showdown_json_is_the_library_frame(res):
    out = runner.invoke(app, ["showdown", "--format", "json"])
    assert out.exit_code == 0, out.output
    data = json.loads(out.stdout)
    assert isinstance(data, list) and len(data) == len(res.figures)
    for obj in data:
        assert {"system", "metric", "claimed", "predicted", "error_frac"} <= set(obj)
    assert data[2]["predicted"] == pytest.approx(res.figures["predicted"].iloc[2])


def test_cli_showdown_table_and_systems():
    out = runner.invoke(app, ["showdown", "--no-waterfall"])
    assert out.exit_code == 0, out.output
    assert "sd200-ultra" in out.stdout and "Sensitivity" in out.stdout
    out = runner.invoke(app, ["systems", "--format", "csv"])
    assert out.exit_code == 0 and "tpu-v7-16" in out.stdout


def test_cli_frontier_writes_png(tmp_path):
    png = tmp_path / "fig.png"
    out = runner.invoke(app, ["frontier", "--hardware", "h200", "--model", "llama-3.1-70b",
                              "--precision", "fp8", "--out", str(png), "--format", "csv"])
    assert out.exit_code == 0, out.output
    assert png.read_bytes()[:4] == b"\x89PNG"
    assert out.stdout.splitlines()[0].startswith("parallel,")


@pytest.mark.parametrize(
    "argv, needle",
    [
        (["frontier", "--system", "dgx-h20"], "Unknown system 'dgx-h20'"),
        (["frontier", "--system", "dgx-h100", "--model", "kimi-k3"], "does not fit"),
        (["frontier", "--system", "dgx-h100", "--hardware", "h200"], "conflicts"),
        (["frontier"], "give --system"),
    ],
)
def test_cli_bad_input_exits_2_with_one_line(argv, needle, capsys):
    with pytest.raises(SystemExit) as e:
        main(argv)
    assert e.value.code == 2
    err = capsys.readouterr().err.strip()
    assert needle in err and len(err.splitlines()) == 1


def test_k3_cost_per_token_table():
    """Cost per output token = chips x USD/chip-h / (tok/s x 3600) (hand identity), falls with
    concurrency, and a chip without a public price says what it was priced as."""
    from tokenomics.studies import showdown as sd

    c = sd.costs((1, 64))
    assert set(c["system"]) == {"generic-supernode-128", "sd200-ultra", "tpu-v7-16", "gb200-16"}
    for _, r in c.iterrows():
        assert r["usd_per_m_output_tok"] == pytest.approx(
            r["chips"] * r["cost_usd_per_chip_h"] / (r["tok_per_s_per_replica"] * 3600) * 1e6, rel=1e-9)
    for _, g in c.groupby("system"):
        assert g.sort_values("batch")["usd_per_m_output_tok"].is_monotonic_decreasing
    sd200 = c[c["system"] == "sd200-ultra"]
    assert sd200["cost_model"].str.contains("as ascend-910c").all()


def test_cli_frontier_draws_a_bundled_serving_set_by_name():
    # --serving takes validate-serving's set names: 'aic' holds one Qwen3-32B TensorRT-LLM run on
    # one H100 (N021: 32 users, ISL 1024 / OSL 128, TPOT 36.15 ms -> 27.66 tok/s per user, 1 / TPOT)
    r = runner.invoke(app, ["frontier", "--system", "dgx-h100", "--model", "qwen3-32b", "--measured", "aic",
                            "--format", "csv"])
    assert r.exit_code == 0, r.output
    r = runner.invoke(app, ["frontier", "--system", "dgx-h100", "--model", "qwen3-32b", "--measured", "aic"])
    assert r.exit_code == 0, r.output
    assert "N021" in r.output and "27.66" in r.output


def test_cli_frontier_predicts_each_measured_point_as_validate_serving_does(tmp_path):
    # each measured row of the overlay is predicted at its own layout, lengths and concurrency by
    # the one function validate-serving uses (predict_cases), so the two commands agree to the digit
    from tokenomics.validate.serving_cases import predict_cases
    from tokenomics.catalog import data_dir

    expect = predict_cases(data_dir() / "serving_aic_silicon.csv").set_index("case_id")
    png = tmp_path / "f.png"
    r = runner.invoke(app, ["frontier", "--system", "dgx-h100", "--model", "qwen3-32b", "--measured", "aic",
                            "-o", str(png)])
    assert r.exit_code == 0, r.output
    assert png.stat().st_size > 0
    row = next(line for line in r.output.splitlines() if "N021" in line)
    cells = [c.strip() for c in row.split("│") if c.strip()]
    assert f"{expect.loc['N021', 'predicted_tok_per_s_per_user']:.4g}" in cells
    assert f"{expect.loc['N021', 'error_frac'] * 100:.4g}" in cells


def test_cli_frontier_says_when_a_serving_set_has_no_point_of_the_chip():
    # 'aic' has Qwen3-32B on H100 and GB200 but not on H200: one line naming where it has them,
    # not an empty table
    r = runner.invoke(app, ["frontier", "--system", "dgx-h200", "--model", "qwen3-32b", "--measured", "aic"])
    assert r.exit_code == 0, r.output
    assert "no measured point of qwen3-32b on h200" in r.output and "h100-sxm" in r.output
    assert "Measured points of" not in r.output


def test_cli_frontier_says_why_offline_rows_are_not_drawn():
    # TensorRT-LLM's tables hold Qwen3-30B-A3B on B200, but as offline rows without a per-user rate:
    # one line saying so, not "no measured point" next to a list that names the chip
    r = runner.invoke(app, ["frontier", "--hardware", "b200", "--model", "qwen3-30b-a3b", "--tp", "1",
                            "--measured", "trtllm-perf"])
    assert r.exit_code == 0, r.output
    assert "16 row(s) of qwen3-30b-a3b on b200, none with a measured tokens/s per user" in r.output
    assert "no measured point" not in r.output and "Measured points of" not in r.output
