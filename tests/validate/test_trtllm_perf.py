"""TensorRT-LLM's published offline max-throughput tables (datasets/serving_trtllm_perf.csv)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from tokenomics import catalog
from tokenomics.catalog import load
from tokenomics.cli import app

TOOLS = Path(__file__).resolve().parents[2] / "tools"


@pytest.fixture(scope="module")
def rows():
    return load("serving_trtllm_perf")


def test_rows_are_the_tables(rows):
    """Spot values copied from perf-overview.md @ 00f3768 by hand: Llama 3.3 70B on two H100s (TP2,
    FP8) at 128/128 gives 6,378 tok/s, 3,189 a GPU; Llama 4 Scout on four H200s (TP4, FP8) at
    128/128 gives 30,354, 7,588.5 a GPU, with the MoE layout ASSUMED (EP4, attention DP); Qwen3-30B-A3B
    on one GB200 at 20000/2000 gives 3,203. The request counts are the file's dataset table."""
    assert rows["case_id"].is_unique and len(rows) == 325
    assert (rows["phase"] == "offline").all() and (rows["engine"] == "trt").all()
    v1 = rows["source"].str.startswith("github:NVIDIA/TensorRT-LLM@00f37686aa854010d68bcbd0f4ab000221541ca6:")
    v2 = rows["source"].str.startswith("github:NVIDIA/TensorRT-LLM@585c756579dc4d01f21fc13c2f604cdb461ac4f0:")
    assert v1.sum() == 202 and v2.sum() == 123 and (v1 | v2).all()
    by = rows[v1].set_index(["model", "hardware", "isl_tok", "osl_tok"])
    r = by.loc[("llama-3.1-70b", "h100", 128.0, 128.0)]
    assert (r["tp"], r["ep"], r["dp_attention"], r["weight_precision"]) == (2, 1, 0, "fp8")
    assert r["measured_output_tok_per_s_per_gpu"] == pytest.approx(3189.0)
    assert "Llama 3.3 70B" in r["note"] and r["n_requests"] == 30000
    r = by.loc[("llama-4-scout", "h200", 128.0, 128.0)]
    assert (r["tp"], r["ep"], r["dp_attention"]) == (4, 4, 1) and "ASSUMED" in r["note"]
    assert r["measured_output_tok_per_s_per_gpu"] == pytest.approx(7588.5)
    r = by.loc[("qwen3-30b-a3b", "gb200", 20000.0, 2000.0)]
    assert r["measured_output_tok_per_s_per_gpu"] == pytest.approx(3203.0) and r["n_requests"] == 1000
    # trtllm-bench's own cap (finetune_setting); its default for quantizations it does not tune (MXFP4)
    oss = rows["weight_precision"] == "mxfp4"
    assert (rows.loc[~oss, "max_batch_size"] == 4096).all() and (rows.loc[oss, "max_batch_size"] == 2048).all()


def test_later_edition_rows_are_its_tables(rows):
    """The later edition prints output tok/s per GPU and names the layout: DeepSeek-R1 on four B200
    as DEP4 (attention DP, experts over the four) at 1000/1000: 6,463; gpt-oss-120b on one H200 at
    1024/1024: 6,798, OpenAI's MXFP4 checkpoint with the KV cache at the Hopper default (BF16, the
    file's "Hopper: use auto"); the release is ASSUMED (1.1.0)."""
    v2 = rows[rows["source"].str.contains("developer-guide/perf-overview.md")]
    by = v2.set_index(["model", "hardware", "isl_tok", "osl_tok"])
    r = by.loc[("deepseek-r1", "b200", 1000.0, 1000.0)]
    assert (r["n_gpus"], r["tp"], r["ep"], r["dp_attention"], r["weight_precision"], r["kv_precision"]) == (
        4, 4, 4, 1, "fp4", "fp8")
    assert r["measured_output_tok_per_s_per_gpu"] == pytest.approx(6463.0) and r["n_requests"] == 3000
    r = by.loc[("gpt-oss-120b", "h200", 1024.0, 1024.0)]
    assert (r["tp"], r["weight_precision"], r["kv_precision"]) == (1, "mxfp4", "bf16")
    assert r["measured_output_tok_per_s_per_gpu"] == pytest.approx(6798.0)
    assert (v2["engine_version"].astype(str) == "1.1.0").all() and v2["note"].str.contains("ASSUMED 1.1.0").all()
    assert len(by.loc["gpt-oss-20b"]) == 22 and by.loc[("gpt-oss-20b", "h100", 32768.0, 1024.0)][
        "measured_output_tok_per_s_per_gpu"] == pytest.approx(785.0)


def test_fit_rows_are_left_out(rows):
    """The eight cells of the same file the fit set holds (serving_public.csv P107-P114) are not here."""
    fit = load("serving_public")
    fit = fit[fit["source"].astype(str).str.contains("perf-overview.md")]
    rows = rows[rows["source"].str.contains("performance/perf-overview.md")]
    assert len(fit) == 8
    key = ["model", "hardware", "isl_tok", "osl_tok"]
    both = fit[key].merge(rows[key], on=key)
    assert both.empty


def test_curation_reproduces_the_csv(rows):
    """tools/curate_trtllm_perf.py writes exactly the bundled CSV (its --check)."""
    sys.path.insert(0, str(TOOLS))
    try:
        import curate_trtllm_perf as cur
    finally:
        sys.path.remove(str(TOOLS))
    assert cur.main(["--check"]) == 0
    assert len(cur.parse()) == 210  # every non-empty data-centre cell, the fit set's eight included
    assert len(cur.parse_v2()) == 123


def test_new_models_match_their_checkpoints():
    """Parameter counts from the config.json shapes, by hand: Llama 4 Scout 48 layers x (attention
    62.9 M + 17 experts x 3 x 5120 x 8192) + 2 x 202048 x 5120 embeddings = 107.8 B (Meta: 109 B with
    the vision encoder); Qwen3-30B-A3B 48 x (18.9 M + 128 x 3 x 2048 x 768) + 2 x 151936 x 2048 = 30.5 B."""
    scout, qwen = catalog.model("llama-4-scout"), catalog.model("qwen3-30b-a3b")
    assert scout.total_params() == pytest.approx(107.77e9, rel=2e-3)
    assert qwen.total_params() == pytest.approx(30.53e9, rel=2e-3)
    assert (scout.n_experts, scout.experts_per_token, scout.n_shared_experts) == (16, 1, 1)
    assert (qwen.n_experts, qwen.experts_per_token, qwen.expert_ffn_hidden) == (128, 8, 768)
    # gpt-oss-20b: 24 x (attention 2880 x 64 x 64 x 2 + 2 x 2880 x 8 x 64 = 26.5 M, + 32 x 3 x 2880^2 =
    # 796.3 M) + 2 x 201088 x 2880 = 20.9 B (OpenAI: 21 B; 3.6 B active)
    oss = catalog.model("gpt-oss-20b")
    assert oss.total_params() == pytest.approx(20.91e9, rel=2e-3)
    assert oss.active_params() == pytest.approx(3.61e9, rel=5e-3)


def test_llama4_chunked_attention_layers():
    """Llama 4 (transformers' Llama4TextConfig defaults, which both checkpoints keep): every 4th layer
    is a NoPE full-attention layer, the other 36 of 48 attend within 8,192-token chunks, modelled as an
    8,192-token window. At 20,000 tokens of context the KV a token reads is (12 x 20,000 + 36 x 8,192)
    / (48 x 20,000) = 0.557 of full attention (hand calculation)."""
    for name in ("llama-4-scout", "llama-4-maverick"):
        m = catalog.model(name)
        assert (m.sliding_window_tok, m.n_sliding_layers, m.n_layers) == (8192, 36, 48)
        full = m.replace(sliding_window_tok=0, n_sliding_layers=0)
        ratio = float(m.kv_bytes_per_tok(1.0, 20000.0)) / float(full.kv_bytes_per_tok(1.0, 20000.0))
        assert ratio == pytest.approx((12 * 20000 + 36 * 8192) / (48 * 20000), rel=1e-9)


def test_every_row_is_predicted_through_the_cli():
    res = CliRunner().invoke(app, ["validate-serving", "trtllm-perf", "--format", "json"])
    assert res.exit_code == 0, res.output
    out = json.loads(res.output)
    assert len(out) == 325 and all(np.isfinite(r["predicted_output_tok_per_s_per_gpu"]) for r in out)
