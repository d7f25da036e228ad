"""Catalog loading, validation and the datasets' provenance columns."""

import numpy as np
import pandas as pd
import pytest

from tokenomics import catalog
from tokenomics.errors import DataError, UnknownNameError, ValidationError
from tokenomics.specs import plan


def test_every_dataset_row_has_source_and_as_of():
    for name, info in catalog.REGISTRY.items():
        df = catalog.load(name)
        assert len(df) > 0, name
        if "source" in df.columns:
            assert df["source"].notna().all(), f"{name}: rows without source"
        if "as_of" in df.columns:
            assert df["as_of"].notna().all(), f"{name}: rows without as_of"


def test_required_accelerators_present():
    names = set(catalog.accelerator_names())
    for n in ["a100", "h100-sxm", "h200", "b200", "b300", "gb200", "gb300", "mi300x", "mi325x",
              "mi355x", "tpu-v5e", "tpu-v5p", "tpu-v6e", "tpu-v7", "ascend-910b", "ascend-910c"]:
        assert n in names


def test_h200_datasheet_in_base_units():
    # NVIDIA H200 SXM datasheet: 4.8 TB/s, 989.4 dense bf16 TFLOP/s; its "141 GB" is what
    # nvidia-smi reports as 143,771 MiB (the capacity an engine allocates from), in bytes
    h = catalog.accelerator("h200")
    assert h.hbm_bytes == 143771 * 2**20
    assert h.hbm_bytes_per_s == 4.8e12
    assert h.peak_bf16_flop_per_s == pytest.approx(989.4e12)


@pytest.mark.parametrize(
    "name, total, active",
    [
        ("llama-3.1-8b", 8.03e9, 8.03e9),  # Meta model card
        ("llama-3.1-70b", 70.6e9, 70.6e9),
        ("deepseek-v3", 671e9, 37e9),  # DeepSeek-V3 tech report
        ("qwen3-235b-a22b", 235e9, 22e9),
        ("gpt-oss-120b", 117e9, 5.1e9),
        ("kimi-k2", 1.04e12, 32e9),
    ],
)
def test_parameter_counts_match_published_within_3pct(name, total, active):
    m = catalog.model(name)
    assert m.total_params() == pytest.approx(total, rel=0.03)
    if m.is_moe:
        assert m.active_params() == pytest.approx(active, rel=0.05)


def test_kimi_k3_matches_article_claims():
    # article: 2.8 T parameters, 92 MoE layers
    k3 = catalog.model("kimi-k3")
    assert k3.n_moe_layers == 92
    assert k3.total_params() == pytest.approx(2.8e12, rel=0.03)


def test_calibration_model_sizes_match_measured_total_params():
    cases = catalog.load("h200_cases")
    for label in ("dense-1b", "dense-8b"):
        measured = cases.loc[cases["model"] == label, "total_params"].iloc[0]
        assert catalog.model(label).total_params() == pytest.approx(measured, rel=1e-3)


def test_kv_bytes_per_token_matches_reference():
    # ../shared/reference/models.csv kv_bytes_per_token_bf16 (computed there independently)
    assert catalog.model("llama-3.1-70b").kv_bytes_per_tok(2) == 327680
    assert catalog.model("deepseek-v3").kv_bytes_per_tok(2) == 70272
    assert catalog.model("qwen3-235b-a22b").kv_bytes_per_tok(2) == 192512


def test_unknown_names_suggest():
    with pytest.raises(UnknownNameError, match="Did you mean 'h200'"):
        catalog.accelerator("h20O")
    with pytest.raises(UnknownNameError, match="llama-3.1-8b"):
        catalog.model("llama-3.1-8")
    with pytest.raises(UnknownNameError, match="Known"):
        plan("turbo")


def test_spec_validation_one_line_errors():
    base = catalog.model("llama-3.1-8b")
    with pytest.raises(ValidationError, match="n_layers"):
        base.replace(n_layers=0)
    with pytest.raises(ValidationError, match="multiple of n_kv_heads"):
        base.replace(n_kv_heads=5)
    with pytest.raises(ValidationError, match="no hbm_bytes_per_s"):
        catalog.accelerator("h200").replace(hbm_bytes_per_s=float("nan"))


def test_missing_columns_named(tmp_path):
    with pytest.raises(DataError, match=r"missing columns \['hidden'\]"):
        catalog.check_columns(pd.DataFrame({"name": [1]}), ["name", "hidden"], "x.csv")


def test_capacity_is_what_the_driver_reports_so_published_layouts_fit():
    """InferenceX ran DeepSeek-R1 FP8 on four B200 (TRT-LLM, TP4, 1k/1k) with 16 requests in flight
    at 58 tok/s each (serving_blind_2026.csv X046). That fits only with the device memory
    nvidia-smi reports (183,359 MiB = 192.3 GB), not with the marketed "180 GB" read as 180e9 B."""
    from tokenomics.deployment import resolve

    assert catalog.accelerator("b200").hbm_bytes == 183359 * 2**20
    dep = resolve("deepseek-v3", hardware="b200", tp=4, ep=1, execution="engine", engine="trt",
                  expert_precision="fp8", kv_precision="bf16")
    assert float(np.min(dep.max_batch(1024 + 512))) >= 16


def test_blind_runs_carry_the_settings_their_launch_scripts_state():
    """serving_blind_2026.csv's co-located rows were given their runs' settings by dry-running
    each InferenceX launch script at the run's commit (tools/annotate_blind_schedulers.py); this
    pins what those scripts say (read in SemiAnalysisAI/InferenceX): TensorRT-LLM with attention
    DP gates prompts for 60 iterations and runs CONC / TP sequences a rank; SGLang at TP8 on
    B200/B300 polls every 10 iterations below 16 users and every 30 from 16, its MTP runs hold up
    to 512;
    the TensorRT-LLM, ATOM and B200/B300/AMD SGLang scripts set an FP8 KV cache, SGLang on H200
    none; the late-2025 TensorRT-LLM scripts chose expert parallelism (and on one row attention DP)
    themselves, so 8 rows run the script's layout, not the dashboard's; every annotated row names
    its script and commit. Disaggregated rows get no scheduler flags from scripts; their decode
    workers' batch caps come from their recipes (stop 36): 150 rows name recipe and commit, and the
    pinned ones read as the recipe files say (GB200 TensorRT-LLM X286 at 6 users: 1 a rank; GB200 SGLang X262
    with attention DP: max-running-requests 67584 over dp-size 32 = 2112)."""
    d0 = catalog.load("serving_blind_2026")
    lay = d0.set_index("case_id").loc[["X033", "X096", "X106", "X107"]]
    assert (lay["ep"] == 8).all() and lay["dp_attention"].tolist() == [0, 0, 0, 1]
    d = catalog.load("serving_blind_2026")
    co, dis = d[d["disaggregated"] == 0], d[d["disaggregated"] == 1]
    assert len(co) == 198 and dis[["recv_interval_iters", "adp_timeout_iters"]].isna().all().all()
    recipe = dis["note"].str.contains(r"Decode-worker settings \(stop 36\).*github:[\w-]+/[\w-]+@[0-9a-f]{40}:")
    assert recipe.sum() == 150 and dis.loc[~recipe, "max_batch_size"].isna().all()
    assert dis.set_index("case_id").loc[["X286", "X262"], "max_batch_size"].tolist() == [1, 67584 // 32]
    assert co["note"].str.contains(r"Run settings from github:SemiAnalysisAI/InferenceX@[0-9a-f]{40}:benchmarks/").all()
    adp = co[(co["engine"] == "trt") & (co["dp_attention"] == 1)]
    assert len(adp) == 12 and (adp["adp_timeout_iters"] == 60).all()
    mtp_adp = adp[adp["spec_decode"] == "mtp"]
    assert (mtp_adp["max_batch_size"] == mtp_adp["concurrency"] // mtp_adp["tp"]).all()
    nv_sgl = co[(co["engine"] == "sglang") & co["hardware"].isin(["b200", "b300"]) & (co["tp"] == 8)]
    want = np.where(nv_sgl["concurrency"] >= 16, 30, 10)
    assert (nv_sgl["recv_interval_iters"].to_numpy() == want).all()
    assert (nv_sgl.loc[nv_sgl["spec_decode"] == "mtp", "max_batch_size"] == 512).all()
    fp8 = co["engine"].isin(["trt", "atom"]) | (co["engine"].eq("sglang") & ~co["hardware"].eq("h200"))
    assert (co.loc[fp8, "kv_precision"] == "fp8").all() and co.loc[~fp8, "kv_precision"].isna().all()
    # SGLang --mem-fraction-static: MEM_FRAC_STATIC=0.82 in dsr1_fp8_b200_mtp.sh (X018), 0.95 in the
    # B200 TP4 FP8 script (X026), 0.8 in every AMD SGLang script; TensorRT-LLM and ATOM set none
    frac = co.set_index("case_id")["mem_frac"]
    assert frac["X018"] == 0.82 and frac["X026"] == 0.95
    assert (co.loc[co["engine"].eq("sglang") & co["hardware"].str.startswith("mi"), "mem_frac"] == 0.8).all()
    assert co.loc[co["engine"].isin(["trt", "atom"]), "mem_frac"].isna().all()
    # a recipe's SGLang mem-fraction-static only (TensorRT-LLM's free_gpu_memory_fraction is another quantity)
    assert dis.loc[~dis["engine"].isin(["dynamo-sglang", "mori-sglang"]), "mem_frac"].isna().all()
    assert dis.loc[dis["mem_frac"].notna(), "note"].str.contains("mem-fraction-static").all()


def test_accelerator_aliases_and_prefix_suggestions():
    # 'h100' is what published results and users write for the catalog's h100-sxm; a name the
    # user began (h10) is suggested before merely similar ones
    from tokenomics.catalog import accelerator, accelerator_name

    assert accelerator("h100").name == "h100-sxm" and accelerator_name("h100_sxm") == "h100-sxm"
    assert accelerator_name("h200") == "h200"
    with pytest.raises(UnknownNameError, match="Did you mean 'h100-sxm'"):
        accelerator("h10")


def test_kimi_k2_5_is_kimi_k2s_text_architecture_with_its_own_checkpoint():
    # Kimi-K2.5's config.json text_config (as AIConfigurator ships it): 61 layers, 7168 hidden,
    # 64 heads, 384 routed experts top-8 of 2048, 1 shared, vocab 163840: Kimi K2's. Its checkpoint
    # stores the routed experts INT4 and the rest BF16 (ATOM's Kimi-K2.5 recipe: "native INT4
    # quantization ... for the routed MoE expert weights"), where Kimi K2 stored everything FP8;
    # K2-Thinking ships the same scheme.
    from tokenomics.catalog import model

    k, k2 = model("kimi-k2.5"), model("kimi-k2")
    arch = ("n_layers", "hidden", "n_q_heads", "n_experts", "experts_per_token", "expert_ffn_hidden",
            "n_shared_experts", "vocab", "kv_lora_rank", "q_lora_rank")
    assert [getattr(k, a) for a in arch] == [getattr(k2, a) for a in arch]
    assert (k.n_layers, k.hidden, k.n_q_heads, k.n_experts, k.experts_per_token, k.expert_ffn_hidden,
            k.n_shared_experts, k.vocab) == (61, 7168, 64, 384, 8, 2048, 1, 163840)
    assert (k.native_precision, k.dense_precision, k2.native_precision) == ("int4", "bf16", "fp8")
    assert model("kimi-k2-thinking") is k


def test_csv_floats_are_parsed_correctly_rounded(tmp_path):
    """Whatever pandas is installed: its releases before 3.1 parse '0.0006369616873214543' ~1e-12
    off by default, which moved fitted figures between installs (tokenomics.io.exact_floats)."""
    from tokenomics.io import read_csv

    texts = ["0.0006369616873214543", "4.097352393619469e-05", "0.014846749999996689", "19362049167013.242"]
    (tmp_path / "f.csv").write_text("v\n" + "\n".join(texts) + "\n")
    assert read_csv(tmp_path / "f.csv")["v"].tolist() == [float(t) for t in texts]
