"""NVIDIA AIConfigurator's silicon accuracy anchors (datasets/serving_aic_silicon.csv), scored blind."""

from __future__ import annotations

import numpy as np
import pytest

from tokenomics.catalog import load, model


@pytest.fixture(scope="module")
def rows():
    return load("serving_aic_silicon")


def test_every_anchor_is_predicted(rows):
    from tokenomics.validate.serving_cases import predict_cases

    pred = predict_cases(rows)
    assert len(pred) == 22 and (pred["status"] == "predicted").all()


def test_throughput_is_derived_from_the_measured_latencies(rows):
    # N001: DeepSeek-R1 on 8 H200, 16 users, ISL 1024 / OSL 8192, TTFT 616.878 ms, TPOT 11.389 ms
    # (silicon_refs.csv): 16 x 8192 / (0.616878 + 8191 x 0.011389262) / 8 = 174.47 tok/s per GPU by hand
    r = rows.set_index("case_id").loc["N001"]
    assert r["measured_output_tok_per_s_per_gpu"] == pytest.approx(16 * 8192 / (0.616878 + 8191 * 0.011389262) / 8,
                                                                   rel=1e-5)
    assert r["measured_output_tok_per_s_per_gpu"] == pytest.approx(174.47, abs=0.01)


def test_no_anchor_is_counted_twice(rows):
    key = ["hardware", "engine", "isl_tok", "osl_tok", "concurrency", "tp", "ep", "measured_ttft_s", "measured_tpot_s"]
    assert not rows.duplicated(key).any()


def test_added_models_match_their_published_sizes():
    # Qwen3-32B: 32.8B parameters (model card); MiniMax-M2.5: ~229B total, ~10B active (MiniMax's release)
    assert model("qwen3-32b").total_params() == pytest.approx(32.8e9, rel=0.01)
    m = model("minimax-m2.5")
    assert m.total_params() == pytest.approx(229e9, rel=0.01) and m.active_params() == pytest.approx(10.4e9, rel=0.02)


def test_sample_rows_are_distinct_expressible_and_derived_by_hand():
    # serving_aic_sample.csv: each measurement once, at most 8 GPUs a row, attention DP only without
    # attention TP, and throughput = concurrency x OSL / (TTFT + (OSL - 1) x TPOT) / GPUs on every row
    s = load("serving_aic_sample")
    assert len(s) == 2504
    # one run filed under two names of one architecture (DeepSeek-R1 / -V3) is one measurement too
    assert not s.duplicated(["measured_output_tok_per_s_per_gpu", "measured_ttft_s", "measured_tpot_s"]).any()
    assert not s.duplicated(["model", "hardware", "engine", "engine_version", "isl_tok", "osl_tok", "concurrency",
                             "measured_ttft_s", "measured_tpot_s"]).any()
    assert (s["n_gpus"] <= 8).all() and ((s["dp_attention"] == 0) | (s["tp"] == 1)).all()
    # nor one measurement kept in full in one source file and rounded to 0.01 ms in another
    # (e.g. Kimi-K2.5 NVFP4 on 8 B200, vLLM 0.17.0: TTFT 163.72509 ms and 163.73 ms, TPOT 7.42326 / 7.42 ms)
    key = ["model", "hardware", "engine", "engine_version", "isl_tok", "osl_tok", "concurrency", "tp", "ep"]
    for _, g in s.groupby(key, dropna=False):
        v = g[["measured_ttft_s", "measured_tpot_s"]].to_numpy()
        close = (np.abs(v[:, None, :] - v[None, :, :]) <= 5e-6 + 1e-12).all(axis=2)
        assert close.sum() == len(g), g["case_id"].tolist()
    derived = s["concurrency"] * s["osl_tok"] / (s["measured_ttft_s"] + (s["osl_tok"] - 1) * s["measured_tpot_s"])
    assert (derived / s["n_gpus"]).to_numpy() == pytest.approx(s["measured_output_tok_per_s_per_gpu"].to_numpy(),
                                                                 rel=1e-4)


def test_a_seeded_slice_of_the_sample_is_predicted():
    from tokenomics.validate.serving_cases import predict_cases

    pred = predict_cases(load("serving_aic_sample").sample(40, random_state=0))
    assert (pred["status"] == "predicted").all()


def test_gated_deltanet_shares_key_heads_by_hand():
    # Qwen3.5-397B-A17B (config.json): hidden 4096, Gated DeltaNet with 16 query/key heads and 64
    # value heads of 128. One linear layer's q, k, v, o: 4096 x (2 x 16 x 128 + 2 x 64 x 128)
    # = 83,886,080 weights (Kimi Delta Attention, equal heads, would be 4 x 4096 x 8192), plus
    # in_proj_ba 4096 x 2 x 64 (decay and beta per value head)
    from tokenomics.specs import plan
    from tokenomics.perf.ops import build_ops

    m = model("qwen3.5-397b-a17b")
    assert m.linear_attention_params() == 4096 * (2 * 16 * 128 + 2 * 64 * 128) + 4096 * 128 == 84_410_368
    # Kimi K3 adds b_proj 96 x 7168, f_a_proj 128 x 7168 and f_b_proj 12288 x 128
    assert model("kimi-k3").linear_attention_params() == 4 * 7168 * 96 * 128 + 7168 * (96 + 128) + 128 * 12288
    ops = {o.name: o for o in build_ops(m, plan("graph"), batch=1, context_tok=1024, tp=4)}
    # fused q/k/v projection, tp 4: weights 4096 x (2 x 4 x 128 + 16 x 128) per layer, 45 layers, bf16
    assert float(np.ravel(ops["qkv(linear)"].weight_bytes)[0]) * ops["qkv(linear)"].count == pytest.approx(
        45 * 4096 * (2 * 4 * 128 + 16 * 128) * 2)
