"""Serving-model pieces of issue 11: two-batch overlap, request-capped offline runs, cache hits,
per-kernel engine cost. Expected values are hand identities of the model's own definitions."""

import math

import numpy as np
import pandas as pd
import pytest

from tokenomics import catalog
from tokenomics.deployment import resolve
from tokenomics.errors import TokenomicsError
from tokenomics.perf import engines, serving
from tokenomics.validate import serving_cases
from tokenomics.perf.system import system_prefill, system_step


def _ds(overlap="none"):
    return resolve("deepseek-v3", system="h800-ib-144", tp=1, ep=144, execution="engine", engine="none",
                   overlap=overlap)


def test_two_batch_overlap_is_twice_the_slower_half():
    """Two micro-batches of B/2 alternate compute and communication: the step is
    2 * max(compute, communication) of one half-batch (hand identity)."""
    dep, none = _ds("two-batch"), _ds()
    b = np.array([64, 1024, 8192])
    two = dep.decode(b, 4096, check_memory=False)
    half = none.decode(b // 2, 4096, check_memory=False)
    assert np.allclose(two.step_time_s, 2 * np.maximum(half.compute_s, half.comm_s), rtol=1e-12)
    assert np.allclose(two.comm_exposed_s + two.overlap_s, two.comm_s, rtol=1e-12)


def test_two_batch_overlap_needs_two_sequences():
    """A batch of one cannot be split: the step is the plain one."""
    a = _ds("two-batch").decode(1, 4096, check_memory=False)
    b = _ds().decode(1, 4096, check_memory=False)
    assert float(a.step_time_s) == pytest.approx(float(b.step_time_s), rel=1e-12)


def test_two_batch_overlap_hides_wide_ep_communication_but_not_at_small_batch():
    """Over InfiniBand (EP144) the all-to-alls dominate a large batch, so overlap wins there; at a
    small batch each micro-batch re-reads the weights and overlap loses (why engines gate it)."""
    big = 8192
    assert float(_ds("two-batch").decode(big, 4096, check_memory=False).step_time_s) < \
        float(_ds().decode(big, 4096, check_memory=False).step_time_s)
    assert float(_ds("two-batch").decode(64, 4096, check_memory=False).step_time_s) > \
        float(_ds().decode(64, 4096, check_memory=False).step_time_s)


def test_two_batch_prefill_hand():
    dep = resolve("deepseek-v3", system="h800-ib-144", tp=1, ep=32, execution="engine", engine="none")
    kw = dict(prompt_tok=4096, weight_precision=dep.weight_precision, expert_precision=dep.expert_precision,
              kv_precision=dep.kv_precision, ar_impl=dep.ar_impl, a2a_impl=dep.a2a_impl)
    two = system_prefill(dep.system, dep.model, dep.execution, dep.parallel, batch=64, overlap="two-batch", **kw)
    half = system_prefill(dep.system, dep.model, dep.execution, dep.parallel, batch=32, **kw)
    assert float(two.step_time_s) == pytest.approx(2 * max(float(half.compute_s), float(half.comm_s)), rel=1e-12)


def test_unknown_overlap_is_one_line():
    with pytest.raises(TokenomicsError, match="overlap"):
        system_step("dgx-h200", "llama-3.1-8b", overlap="three-batch")


def _row(**kw):
    base = dict(case_id="T1", phase="offline", hardware="h200", model="llama-3.1-8b", weight_precision="fp8",
                kv_precision="fp8", engine="trt", n_gpus=1, tp=1, ep=1, dp_attention=0, disaggregated=0,
                spec_decode="none", isl_tok=128, osl_tok=128, concurrency=float("nan"),
                measured_output_tok_per_s_per_gpu=1000.0)
    base.update(kw)
    return pd.Series(base)


def test_offline_batch_is_capped_by_the_requests_queued():
    """1,000 queued requests run at most 1,000 at a time, however many would fit."""
    free = serving_cases.predict_case(_row())
    capped = serving_cases.predict_case(_row(n_requests=1000))
    assert free["predicted_batch"] > 1000
    assert capped["predicted_batch"] <= 1000
    assert capped["predicted_output_tok_per_s_per_gpu"] < free["predicted_output_tok_per_s_per_gpu"]


def test_drain_hand_identity():
    """drain_s is the steady run minus the drained tokens' full-batch decode iterations plus
    the draining ones (hand: the same sum written out with the decode iteration times)."""
    dep = resolve("llama-3.1-8b", system="dgx-h200", tp=1, execution="engine", engine="trt")
    n, b, osl, ctx = 1000.0, 384.0, 128.0, 192
    d = lambda x: float(serving._decode_iteration_s(dep, np.asarray([x]), ctx, 0.0)[0])
    t_it = 2 * d(b)
    left = (np.arange(serving.DRAIN_POINTS) + 0.5) / serving.DRAIN_POINTS
    hand = n * osl / b * t_it - osl / 2 * d(b) + osl * np.mean([d(b * u) for u in left])
    assert serving.drain_s(dep, n, b, osl, t_it, ctx, 0.0) == pytest.approx(hand, rel=1e-12)
    # draining costs time: an iteration's fixed cost (weights read once) is paid by fewer tokens
    assert serving.drain_s(dep, n, b, osl, t_it, ctx, 0.0) > n * osl / b * t_it


def test_offline_run_longer_than_one_batch_ends_in_a_drain():
    """More requests queued than run at once: the run's tail drains at a shrinking batch, so the
    rate falls below steady state, and less so the more requests queue (it tends to steady state)."""
    cap = dict(max_batch_size=256)
    few = serving_cases.predict_case(_row(n_requests=1000, **cap))
    many = serving_cases.predict_case(_row(n_requests=1e7, **cap))
    steady = serving_cases.predict_case(_row(**cap))
    assert few["predicted_batch"] == many["predicted_batch"] == steady["predicted_batch"] <= 256
    assert few["predicted_output_tok_per_s_per_gpu"] < many["predicted_output_tok_per_s_per_gpu"] \
        < steady["predicted_output_tok_per_s_per_gpu"]
    assert many["predicted_output_tok_per_s_per_gpu"] == pytest.approx(
        steady["predicted_output_tok_per_s_per_gpu"], rel=1e-4)


def test_prefill_cache_hits_count_as_input_without_compute():
    """A measured input rate that includes cache hits h is the computed rate / (1 - h)."""
    row = _row(phase="prefill", model="deepseek-v3", hardware="h800", n_gpus=32, tp=1, ep=32, dp_attention=1,
               isl_tok=float("nan"), osl_tok=float("nan"), engine="deepseek-internal")
    plain = serving_cases.predict_case(row)
    hit = serving_cases.predict_case(_row(**{**row.to_dict(), "cache_hit_frac": 0.563}))
    assert hit["predicted_total_tok_per_s_per_gpu"] == pytest.approx(
        plain["predicted_total_tok_per_s_per_gpu"] / (1 - 0.563), rel=1e-12)
    with pytest.raises(TokenomicsError, match="cache_hit_frac"):
        serving_cases.predict_case(_row(**{**row.to_dict(), "cache_hit_frac": 56.3}))


def test_every_holdout_row_is_predicted():
    """Issue 11: every case predicted (bundled holdout)."""
    p = serving_cases.predict_cases(serving_cases.read_cases(_holdout()))
    assert (p["status"] == "predicted").all(), p.loc[p["status"] != "predicted", ["case_id", "status"]]
    assert p["predicted_output_tok_per_s_per_gpu"].notna().sum() >= len(p) - 1  # prefill-only rows may have no output


def _holdout():
    from tokenomics.catalog import data_dir

    return data_dir() / "serving_holdout.csv"


def test_decode_rows_without_lengths_report_no_total():
    """A production decode row with only a mean KV length has no prompt-token rate to report."""
    p = serving_cases.predict_cases(serving_cases.read_cases(_holdout()))
    r = p[p["case_id"] == "S321"].iloc[0]
    assert math.isnan(r["predicted_total_tok_per_s_per_gpu"])


def test_cli_overlap_flag():
    """`price --overlap two-batch` prices more tokens per chip on wide EP over InfiniBand; a bad
    mode is one line, exit 2."""
    import json

    from typer.testing import CliRunner

    from tokenomics.cli import app

    args = ["price", "--system", "h800-ib-144", "-m", "deepseek-v3", "--tp", "1", "--ep", "144", "--cost", "2.0",
            "--batch", "8192", "--format", "json"]
    r = CliRunner().invoke(app, args + ["--overlap", "two-batch"])
    n = CliRunner().invoke(app, args)
    assert r.exit_code == 0 and n.exit_code == 0, r.output
    assert json.loads(r.output)[0]["tok_per_s_per_chip"] > json.loads(n.output)[0]["tok_per_s_per_chip"]
    from tokenomics.cli import main

    with pytest.raises(SystemExit) as ex:
        main(args + ["--overlap", "three-batch"])
    assert ex.value.code == 2


def test_ttft_adds_the_engines_fitted_request_overhead():
    """TTFT = queue + prompt iterations + the engine's per-request overhead (datasets/engines.csv):
    zeroing that column lowers TTFT by exactly the fitted value and nothing else changes much."""
    from tokenomics.catalog import load

    table = load("engines").copy()
    dep = resolve("llama-3.1-70b", system="dgx-h200", tp=8, execution="engine", engine="vllm")
    a = serving.serve(dep, isl_tok=1024, osl_tok=1024, concurrency=16, engines=table)
    zero = table.assign(ttft_overhead_s=0.0)
    b = serving.serve(dep, isl_tok=1024, osl_tok=1024, concurrency=16, engines=zero)
    want = engines.engine_params("vllm", "nvidia")["ttft_overhead_s"]
    assert want > 0
    assert float(a.ttft_s - b.ttft_s) == pytest.approx(want, rel=0.05)  # Little's law moves B slightly
    assert float(a.output_tok_per_s_per_gpu) == pytest.approx(float(b.output_tok_per_s_per_gpu), rel=0.02)


def test_expert_skew_reproduces_the_measured_point_and_scales():
    """datasets/expert_skew.csv: DeepSeek-R1 at EP32 (8 experts per GPU) measured 1.564 without and
    0.109 with EPLB (TensorRT-LLM wide-EP blog, Table 1). The per-GPU spread the blog reports
    (std 491.6 / mean 1024 = 0.48) is what independent experts with its per-expert spread
    (164.1 / 128 = 1.28) give: 1.28 / sqrt(8) = 0.45 (within 10 %)."""
    from tokenomics.catalog import model
    from tokenomics.perf.system import expert_skew_frac

    ds = model("deepseek-v3")
    assert expert_skew_frac(ds, 32) == pytest.approx(1.564, rel=1e-9)
    assert expert_skew_frac(ds, 32, "eplb") == pytest.approx(0.109, rel=1e-9)
    assert 1.282 / math.sqrt(8) == pytest.approx(491.6 / 1024, rel=0.1)
    assert expert_skew_frac(ds, 1) == 0.0
    s = [expert_skew_frac(ds, ep) for ep in (2, 8, 32, 72, 144)]
    assert all(a < b for a, b in zip(s, s[1:]))  # more chips, fewer experts each: a busier maximum


def test_expert_skew_slows_only_compute_bound_expert_work():
    """At a large batch the busiest chip's extra routed tokens cost time (EPLB less); at batch 1
    the expert GEMMs wait on their weights, so skew in tokens costs nothing."""
    none = resolve("deepseek-v3", system="dgx-b200", tp=1, ep=8, execution="engine", engine="none")
    eplb = none.replace(expert_balance="eplb")
    big = [float(d.decode(2048, 2048, check_memory=False).step_time_s) for d in (none, eplb)]
    one = [float(d.decode(1, 2048, check_memory=False).step_time_s) for d in (none, eplb)]
    assert big[0] > big[1]
    assert one[0] == pytest.approx(one[1], rel=1e-9)
    pre = [float(d.prefill(4096, batch=8).step_time_s) for d in (none, eplb)]
    assert pre[0] > pre[1]
    with pytest.raises(TokenomicsError, match="expert_balance"):
        none.replace(expert_balance="perfect")


def test_case_rows_may_name_their_all_to_all_kernels():
    """A row that states DeepEP low-latency all-to-alls (Dynamo-SGLang recipe) is timed with the
    DeepEP fit; an empty cell leaves the resolver's choice."""
    row = _row(phase="serve", model="deepseek-v3", hardware="b200", n_gpus=8, tp=8, ep=8, dp_attention=1,
               engine="sglang", isl_tok=1024, osl_tok=1024, concurrency=64)
    assert serving_cases.case_deployment(row).a2a_impl == "auto"
    assert serving_cases.case_deployment(_row(**{**row.to_dict(), "a2a_impl": "deepep_rdma"})).a2a_impl == "deepep_rdma"


def test_resolver_balances_experts_from_wide_ep_and_benchmark_rows_state_theirs():
    """Wide EP (>= 32) is served with EPLB in every published production deployment (DeepSeek
    day 6; TensorRT-LLM's wide-EP blog), so the resolver picks it there and says so; EP8 keeps the
    engines' default; a benchmark row that states nothing runs without balancing."""
    from tokenomics.deployment import WIDE_EP_BALANCE_MIN

    wide = resolve("deepseek-v3", system="gb200-nvl72")
    assert wide.parallel.ep >= WIDE_EP_BALANCE_MIN and wide.expert_balance == "eplb"
    assert any("expert balance eplb" in p for p in wide.picked)
    assert resolve("deepseek-v3", system="gb200-nvl72", expert_balance="none").expert_balance == "none"
    assert resolve("deepseek-v3", system="dgx-h200").expert_balance == "none"    # EP8
    row = pd.read_csv(catalog.data_dir() / "serving_holdout.csv").set_index("case_id").loc["S375"]
    assert int(row["ep"]) >= WIDE_EP_BALANCE_MIN and str(row["expert_balance"]) == "nan"
    assert serving_cases.case_deployment(row).expert_balance == "none"


def test_measured_concurrency_is_littles_law_on_the_published_figures():
    """S164 (B200 SGLang DeepSeek-R1 FP4, 8 GPUs, concurrency 8, lengths [0.8,1.0] x 8192/1024):
    46.36 tok/s/GPU x 8 / 921.6 = 0.4024 req/s; in flight 0.273 + 920.6 x 0.0099 = 9.387 s;
    0.4024 x 9.387 = 3.778 requests, 0.472 of the stated 8 (hand calculation from the CSV row).
    S001 (same chips, 1024/1024, concurrency 4) holds its concurrency (0.957)."""
    p = serving_cases.predict_cases(serving_cases.read_cases(_holdout())).set_index("case_id")
    assert p.loc["S164", "measured_concurrency_frac"] == pytest.approx(0.472, abs=0.002)
    assert p.loc["S164", "measured_concurrency"] == "< 0.75"
    assert p.loc["S001", "measured_concurrency"] == ">= 0.9"
    assert p.loc["S255", "measured_concurrency"] == "not measured"  # offline: no concurrency
    s = serving_cases.summarize(p.reset_index(), by=("measured_concurrency",))
    assert set(s["value"]) >= {"all", ">= 0.9", "< 0.75", "not measured"}


@pytest.mark.parametrize("spec", [None, "mtp"])
def test_prompt_work_per_second_matches_the_request_rate(spec):
    """Conservation of prefill work (hand identity): the share of each iteration spent on prompt
    tokens equals the prompt tokens/s the request rate brings (``X * isl``) times the time per
    prompt token. With speculative decoding a sequence emits ``tokens_per_step`` tokens an
    iteration, so its successor's prompt arrives ``tokens_per_step`` times faster (the prompt load
    was once divided by it instead, which made MTP at long prompts 1.5-3x too fast on InferenceX
    2026 rows). vLLM mixes prompt chunks into the decode batch (SGLang's separate passes: below)."""
    dep = resolve("deepseek-v3", hardware="h200", tp=8, ep=8, execution="engine", engine="vllm", spec=spec)
    isl, osl, conc = 8192.0, 1024.0, 32.0
    r = serving.serve(dep, isl_tok=isl, osl_tok=osl, concurrency=conc)
    b, t_it = float(r.batch), float(r.iteration_s)
    ctx = float(round(isl + osl / 2))
    _, t_eng = serving._engine_cost_s(dep, None)
    d = float(np.asarray(serving._decode_iteration_s(dep, b, ctx, t_eng, None)))
    t_pre = float(serving._prefill_per_token_s(dep, isl, float(dep.prefill_chunk_tok), None))
    tps = dep.spec.tokens_per_step if dep.spec else 1.0
    x = b * tps / (osl * t_it)  # requests/s per replica
    assert (t_it - d) / t_it == pytest.approx(x * isl * t_pre, rel=1e-9)
    assert float(r.output_tok_per_s_per_gpu) == pytest.approx(x * osl / dep.replica_chips, rel=1e-9)


def test_an_engine_that_prefills_first_pays_a_pass_for_the_prompts_of_each_iteration():
    """SGLang runs waiting prompts in a prefill pass of their own, decode paused (hand identity):
    beyond the mixed steady state's prompt compute, an iteration pays, with the probability that a
    prompt chunk arrived during it (Poisson, ``b * tps / osl * chunks`` on average), what a pass of
    one chunk costs alone beyond its compute: weight read, launches, the engine's iteration cost."""
    import math

    dep = resolve("deepseek-v3", hardware="h200", tp=8, ep=8, execution="engine", engine="sglang")
    isl, osl, conc = 1000.0, 200.0, 64.0
    r = serving.serve(dep, isl_tok=isl, osl_tok=osl, concurrency=conc)
    b, t_it = float(r.batch), float(r.iteration_s)
    _, t_eng = serving._engine_cost_s(dep, None)
    d = float(np.asarray(serving._decode_iteration_s(dep, b, float(round(isl + osl / 2)), t_eng, None)))
    chunk = float(dep.prefill_chunk_per_rank_tok)
    t_pre = float(serving._prefill_per_token_s(dep, isl, chunk, None))
    alone = float(serving._prefill_iteration_s(dep, min(isl, chunk), [1], t_eng, None)[0]) - min(isl, chunk) * t_pre
    passes = 1.0 - math.exp(-b / osl * math.ceil(isl / chunk))
    assert alone > 0
    assert t_it == pytest.approx(d + b * isl / osl * t_pre + passes * alone, rel=1e-9)
    # a fixed-length closed loop runs in waves instead (wave_serve), and vLLM mixes: no pass term
    mixed = resolve("deepseek-v3", hardware="h200", tp=8, ep=8, execution="engine", engine="vllm")
    assert serving._colocated_model(mixed, isl, osl, float(round(isl + osl / 2)), {"ttft_overhead_s": 0.0},
                                    t_eng, None, None, 1.0, None).pass_alone_s == 0.0


def test_azure_trtllm_rows_carry_the_batch_cap_their_engines_were_built_with():
    """The Azure guide builds one TensorRT-LLM engine per model with trtllm-bench's 2,048/2,048
    dataset and runs every pair on it; tools/annotate_azure_guide.py applies
    trtllm-bench's rule (tensorrt_llm/bench/build/tuning.py). Hand: Llama 3.1 8B FP8 on one
    H100 (NVML 81,559 MiB = 79.65 GiB): KV 2 x 32 layers x 8 heads x 128 x 1 B = 64 KiB a token,
    weights 8.03e9 B = 7.48 GiB, 0.95 x (79.65 - 7.48) GiB / (64 KiB x 4,096) = 274.2 requests,
    rounded up to a multiple of 128 above 256: 384. 70B at TP8 on H100: 0.95 x (8 x 79.65 -
    65.75) / (160 KiB x 4,096) = 868.6 -> 896. 405B at TP8 on H100: 250.2 -> a multiple of 32
    below 256: 256."""
    d = pd.read_csv(_holdout())
    az = d[d["source"].str.contains("AI-benchmarking-guide") & (d["engine"] == "trt")]
    cap = az.groupby(["hardware", "model"])["max_batch_size"].unique()
    assert list(cap[("h100", "llama-3.1-8b")]) == [384]
    assert list(cap[("h100", "llama-3.1-70b")]) == [896]
    assert list(cap[("h100", "llama-3.1-405b")]) == [256]
    assert len(az) == 48 and az["note"].str.contains("Batch cap from trtllm-bench build").all()
    # the guide's MI300X rows ran its AMD harness: vLLM --kv-cache-dtype fp8 --max-num-seqs {3000}
    # (github:samuel-bohman/AI-benchmarking-guide@ca9286d Benchmarks/AMD/LLMBenchmark.py, config.json@89b87f0)
    amd = d[d["source"].str.contains("AI-benchmarking-guide") & (d["engine"] == "vllm")]
    assert len(amd) == 18 and (amd["max_batch_size"] == 3000).all() and (amd["kv_precision"] == "fp8").all()


def test_a_row_that_cannot_hold_its_weights_is_not_predicted_and_named():
    """DeepSeek-R1 in FP4 (~0.4 TB of weights) on one B200 (192 GB) cannot run even with all of
    the chip's memory: predict_cases keeps the row with its reason and NaN predictions (library),
    instead of pricing a layout that cannot exist."""
    d = pd.read_csv(catalog.data_dir() / "serving_mlperf.csv").head(2).copy()
    d[["tp", "ep", "dp_attention", "n_gpus"]] = [1, 1, 0, 1]
    p = serving_cases.predict_cases(d)
    assert (p["status"] == "refused").all()
    assert p["refused_reason"].str.contains("does not fit per chip").all()
    assert p["predicted_output_tok_per_s_per_gpu"].isna().all()
    assert set(serving_cases.PREDICTED_COLUMNS) <= set(p.columns)


def test_engine_default_prefill_chunks_follow_the_engines_own_rules():
    # SGLang ServerArgs: 8192 below 160 GiB, 16384 from 160 GiB; vLLM get_batch_defaults (API
    # server): 8192 from 70 GiB except A100, else 2048; TensorRT-LLM max_num_tokens 8192
    from tokenomics.perf.engines import default_prefill_chunk_tok

    acc = catalog.accelerator
    assert default_prefill_chunk_tok("sglang", acc("h200")) == 8192     # 141 GB = 140 GiB
    assert default_prefill_chunk_tok("sglang", acc("b200")) == 16384    # 180 GB = 179 GiB
    assert default_prefill_chunk_tok("sglang", acc("mi300x")) == 16384
    assert default_prefill_chunk_tok("vllm", acc("h100-sxm")) == 8192
    assert default_prefill_chunk_tok("vllm", acc("a100")) == 2048
    assert default_prefill_chunk_tok("trt", acc("b200")) == 8192


def test_engine_default_batch_caps_follow_the_engines_own_rules():
    """vLLM get_batch_defaults: max_num_seqs 1024 from 70 GiB except A100, else 256 (the same branch
    as the prefill budget above); TensorRT-LLM max_batch_size 2048 (the engines table's max_seqs).
    An offline vLLM run with no stated cap on an MI355X (288 GB) holds up to 1,024 sequences."""
    from tokenomics.perf.engines import default_max_seqs
    from tokenomics.perf.engines import engine_params

    acc = catalog.accelerator
    vllm = engine_params("vllm", "AMD")["max_seqs"]
    assert vllm == 1024
    assert default_max_seqs("vllm", acc("mi355x"), vllm) == 1024
    assert default_max_seqs("vllm", acc("a100"), vllm) == 256
    assert default_max_seqs("trt", acc("a100"), engine_params("trt", "NVIDIA")["max_seqs"]) == 2048
    dep = resolve("llama-3.1-8b", hardware="mi355x", tp=1, engine="vllm", weight_precision="fp8", kv_precision="fp8")
    assert float(np.min(dep.max_batch(1000))) > 1024  # memory holds more: the engine's cap binds
    run = serving.serve(dep, isl_tok=870, osl_tok=128, phase="offline")
    assert 0.9 * 1024 <= float(run.batch) <= 1024  # the slots less those holding a prompt's prefill


def test_sglang_splits_its_chunk_among_attention_dp_ranks():
    # SGLang divides --chunked-prefill-size by the DP size under DP attention: 16384 // 8 = 2048
    s = resolve("deepseek-r1", hardware="b200", tp=1, ep=8, engine="sglang", expert_precision="fp8")
    assert s.prefill_chunk_tok == 16384 and s.prefill_chunk_per_rank_tok == 2048
    assert int(s.prefill_batch(1024)[()]) == 2 * 8            # two 1k prompts a rank, 8 ranks
    # vLLM and TensorRT-LLM give every rank the whole budget
    t = resolve("deepseek-r1", hardware="b200", tp=1, ep=8, engine="trt", expert_precision="fp8")
    assert t.prefill_chunk_per_rank_tok == t.prefill_chunk_tok == 8192


def test_blind_miss_classes_follow_their_rules():
    """tools/blind_misses.py sorts a miss by its own measured over predicted TTFT and TPOT (hand
    rows, ratios as predict_cases gives them: predicted over measured): a 5x TTFT with the TPOT
    right is a first-token wait even on an MTP run; an MTP run 1.5x slow per token is the MTP class;
    an MI355X row at 2 users the model is too slow on, and an MI325X row 1.4x slow per token, are the
    AMD engine classes; anything else is other."""
    import sys
    from pathlib import Path

    import pandas as pd

    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tools"))
    from blind_misses import CLASSES, classify

    def row(ttft_ratio, tpot_ratio, spec="none", hw="b200", conc=64.0, err=0.5):
        return pd.Series({"ttft_ratio": ttft_ratio, "tpot_ratio": tpot_ratio, "spec_decode": spec,
                          "hardware": hw, "concurrency": conc, "error_frac": err})

    assert classify(row(0.2, 1.0, spec="mtp")) == CLASSES[0]
    assert classify(row(1.0, 1 / 1.5, spec="mtp")) == CLASSES[1]
    assert classify(row(1.0, 1.8, hw="mi355x", conc=2.0, err=-0.45)) == CLASSES[2]
    assert classify(row(1.0, 1 / 1.4, hw="mi325x")) == CLASSES[3]
    assert classify(row(0.5, 1.0)) == CLASSES[4]


def test_harness_simulation_replays_one_user_by_hand():
    """tools/simulate_harness.py with one user and fixed lengths has no queue and no batching, so
    the run is, by hand, n x (one prefill iteration + (osl - 1) one-sequence decode iterations),
    and each TTFT is that prefill iteration plus the fitted per-request overhead."""
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tools"))
    from simulate_harness import simulate

    cases = serving_cases.read_cases(catalog.data_dir() / "serving_public.csv")
    row = cases[cases["case_id"] == "P070"].iloc[0].copy()      # gpt-oss-120b, B200, vLLM, 1k/1k
    row["concurrency"], row["note"] = 1.0, ""
    got = simulate(row, n_per_user=3, low_frac=1.0)
    dep = serving_cases.case_deployment(row)
    ep, t_eng = serving._engine_cost_s(dep)
    prefill_s = t_eng + 1024 * serving._prefill_per_token_s(dep, 1024.0, dep.prefill_chunk_per_rank_tok)
    decode_s = float(serving._decode_iteration_s(dep, 1, 1024 + 512, t_eng)[()])
    run_s = 3 * (prefill_s + 1023 * decode_s)
    assert got["sim_output_tok_per_s_per_gpu"] == pytest.approx(3 * 1024 / run_s / dep.replica_chips, rel=1e-9)
    assert got["sim_ttft_s"] == pytest.approx(prefill_s + ep["ttft_overhead_s"], rel=1e-9)


@pytest.mark.parametrize("model, prec, dense, expert", [
    ("llama-3.1-8b", "fp8", "fp8", "fp8"),          # a dense checkpoint: stored in it throughout
    ("qwen3-235b-a22b", "fp8", "fp8", "fp8"),       # BF16-native MoE quantized to FP8: every linear layer
    ("llama-4-maverick", "fp8", "fp8", "fp8"),
    ("deepseek-v3", "fp4", "fp8", "nvfp4"),         # NVFP4 experts; the rest stays as stored (FP8)
    ("qwen3-235b-a22b", "fp4", "bf16", "nvfp4"),
    ("gpt-oss-120b", "fp4", "bf16", "nvfp4"),       # a stated dense precision is kept
    ("gpt-oss-120b", "fp8", "bf16", "fp8"),
])
def test_a_rows_precision_stands_for_the_checkpoints_storage(model, prec, dense, expert):
    """What a published row's ``weight_precision`` means for each component's storage
    (serving_cases._row_precisions: 8-bit MoE checkpoints quantize every linear layer, 4-bit ones the
    routed experts)."""
    row = _row(model=model, weight_precision=prec, hardware="b200",
               n_gpus=8, tp=8, ep=8 if model != "llama-3.1-8b" else 1)
    dep = serving_cases.case_deployment(row)
    assert (dep.weight_precision, dep.expert_precision if dep.model.is_moe else dep.weight_precision) \
        == (dense, expert)


def test_chip_s_per_request_hand_calc_and_its_users():
    """1,000 prompt tokens at 10,000 tok/s + 100 output tokens at 1,000 tok/s = 0.2 chip-s (hand);
    the co-located fleet of econ.disagg is that chip time per request per second."""
    from tokenomics.econ.disagg import compare
    from tokenomics.errors import ValidationError
    from tokenomics.econ.disagg import chip_s_per_request

    assert float(chip_s_per_request(10_000, 1_000, 1_000, 100)) == pytest.approx(0.2)
    np.testing.assert_allclose(chip_s_per_request([1e4, 2e4], 1e3, 1_000, 100), [0.2, 0.15])
    r = compare(10_000, 1_000, 4_000, 30_000, 10_000, 2.0, 1.0, 1_000, 100)
    assert float(r.n_colocated_chips) == pytest.approx(0.2)
    with pytest.raises(ValidationError, match="prefill_tok_per_s"):
        chip_s_per_request(0, 1_000, 1_000, 100)
