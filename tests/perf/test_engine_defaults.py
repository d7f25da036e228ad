"""What engines do by default under expert parallelism (perf.engines, datasets/engine_defaults.csv)."""

from __future__ import annotations

from tokenomics.catalog import load
from tokenomics.deployment import resolve
from tokenomics.perf.engines import engine_default
from tokenomics.validate.serving_cases import case_deployment


def test_every_default_is_sourced():
    df = load("engine_defaults")
    assert df["source"].str.startswith("https://").all()
    assert set(df["setting"]) == {"overlap", "expert_balance"}


def test_deepseek_stack_overlaps_and_balances_and_open_engines_do_not():
    # DeepSeek's inference-system overview (open-infra-index, 2025-03): dual-batch overlap + EPLB
    assert engine_default("deepseek-internal", "overlap", True, 144)[0] == "two-batch"
    assert engine_default("deepseek-internal", "expert_balance", True, 144)[0] == "eplb"
    # SGLang server_args: enable_two_batch_overlap False; vLLM enable_dbo False
    assert engine_default("sglang", "overlap", True, 32)[0] == "none"
    assert engine_default("dynamo-sglang", "overlap", True, 32)[0] == "none"
    assert engine_default("vllm", "overlap", True, 8)[0] == "none"
    # only under expert parallelism of an MoE model
    assert engine_default("deepseek-internal", "overlap", True, 1) is None
    assert engine_default("deepseek-internal", "overlap", False, 8) is None


def _row(**kw):
    row = dict(case_id="X1", phase="decode", hardware="h800", model="deepseek-v3", weight_precision="fp8",
               kv_precision="bf16", engine="deepseek-internal", n_gpus=144, tp=1, ep=144, dp_attention=1,
               overlap="", expert_balance="", engine_version="")
    row.update(kw)
    return row


def test_a_row_that_does_not_say_gets_its_engines_default():
    dep = case_deployment(_row())
    assert (dep.overlap, dep.expert_balance) == ("two-batch", "eplb")
    # what a row states wins
    assert case_deployment(_row(overlap="none")).overlap == "none"
    # an engine that does neither by default: nothing changes
    dep = case_deployment(_row(engine="sglang"))
    assert (dep.overlap, dep.expert_balance) == ("none", "none")


def test_price_with_deepseeks_engine_names_the_default():
    dep = resolve("deepseek-v3", system="h800-ib-144", engine="deepseek-internal")
    assert dep.overlap == "two-batch" and dep.engine == "default"
    assert any("deepseek-internal's default" in p for p in dep.picked)
    assert resolve("deepseek-v3", system="h800-ib-144", engine="deepseek-internal", overlap="none").overlap == "none"


def test_vllm_tpu_backend_is_vllm_on_a_tpu_slice():
    # vLLM's TPU backend runs vLLM's scheduler; 8 v6e chips are one v6e-8 host (Google's v6e page)
    dep = resolve("llama-3.1-70b", hardware="tpu-v6e", tp=8, engine="vllm-tpu")
    assert dep.engine == "vllm" and dep.system.name == "tpu-v6e-8"
