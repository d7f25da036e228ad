"""Models from their Hugging Face config.json: the mapping onto ModelSpec, the user-models file,
and `tokenomics models add / list / show` feeding `price -m` and `validate-serving`."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from tokenomics import catalog
from tokenomics.errors import DataError, TokenomicsError, TokenomicsWarning, ValidationError
from tokenomics.hf_config import model_from_hf_config, spec_from_hf_config
from tokenomics.specs import ModelSpec

FIX = Path(__file__).resolve().parents[1] / "fixtures" / "hf_configs"

#: Fields that are metadata, not architecture.
META = {"name", "display_name", "source", "as_of", "note", "claimed_total_params", "claimed_active_params"}


@pytest.fixture
def home(tmp_path, monkeypatch):
    """A fresh, empty TOKENOMICS_HOME for the user-models file."""
    monkeypatch.setenv("TOKENOMICS_HOME", str(tmp_path / "tkhome"))
    return tmp_path / "tkhome"


def _spec(fixture: str, name: str | None = None) -> tuple[ModelSpec, list[str]]:
    return spec_from_hf_config(FIX / f"{fixture}.json", name=name or fixture)


def _arch(spec: ModelSpec) -> dict:
    return {k: v for k, v in spec.to_dict().items() if k not in META}


# ---- published parameter counts ----------------------------------------------------------------

@pytest.mark.parametrize("fixture, total, active", [
    # DeepSeek-V3.2-Exp / V3.2 model card: 671B total, 37B activated (the V3 architecture plus the indexer)
    ("deepseek-v3.2", 671e9, 37e9),
    # GLM-4.5 model card (huggingface.co/zai-org/GLM-4.5): 355B total, 32B active
    ("glm-4.5", 355e9, 32e9),
])
def test_published_parameter_counts(fixture, total, active):
    spec, _ = _spec(fixture)
    # the same tolerances the bundled catalog is held to (tests/data/test_catalog.py): 3 % total, 5 % active
    assert spec.total_params() == pytest.approx(total, rel=0.03)
    assert spec.active_params() == pytest.approx(active, rel=0.05)


def test_qwen3_next_maps_hybrid_attention_and_its_published_size():
    spec, unmodelled = _spec("qwen3-next-80b-a3b")
    # by hand from the config: 48 layers, a full-attention layer every 4th (12), Gated DeltaNet elsewhere
    # (36) with 32 value heads sharing 16 key heads of 128; 512 experts of 512, top-10, one shared expert
    # of 512 (shared_expert_intermediate_size / moe_intermediate_size); every layer MoE (mlp_only_layers
    # empty, decoder_sparse_step 1); Qwen3-Next gates its attention output
    assert (spec.n_linear_layers, spec.linear_heads, spec.linear_key_heads, spec.linear_head_dim) == (36, 32, 16, 128)
    assert (spec.n_moe_layers, spec.n_experts, spec.experts_per_token, spec.n_shared_experts,
            spec.expert_ffn_hidden, spec.ffn_hidden) == (48, 512, 10, 1, 512, 0)
    assert spec.attn_output_gate and (spec.n_q_heads, spec.n_kv_heads, spec.head_dim) == (16, 2, 256)
    assert spec.native_precision == "bf16" and unmodelled == []
    # model card (huggingface.co/Qwen/Qwen3-Next-80B-A3B-Instruct): "80B in total and 3B activated"
    assert spec.total_params() == pytest.approx(80e9, rel=0.03)
    # "3B" is given to one significant figure: the active weights without the lm head round to it
    assert round((spec.active_params() - spec.vocab * spec.hidden) / 1e9) == 3
    # no KV cache in the 36 linear layers: 12 layers x 2 (K, V) x 2 KV heads x 256 x 2 B (bf16)
    assert spec.kv_bytes_per_tok(2.0) == 12 * 2 * 2 * 256 * 2


def test_deepseek_v32_names_the_sparse_indexer_it_does_not_model():
    with pytest.warns(TokenomicsWarning, match="sparse attention .*index_topk 2048") as rec:
        spec = model_from_hf_config(FIX / "deepseek-v3.2.json", name="dsv32")
    assert len(rec) == 1 and "\n" not in str(rec[0].message)
    assert "index_topk 2048" in spec.note
    # everything else is DeepSeek-V3's architecture, row for row
    assert _arch(spec) == _arch(catalog.model("deepseek-v3"))


@pytest.mark.parametrize("fixture, bundled", [
    ("deepseek-v3", "deepseek-v3"),           # MLA, first 3 dense layers, FP8 block quantization, MTP 1
    ("llama-3.1-70b", "llama-3.1-70b"),       # dense GQA
    ("gpt-oss-120b", "gpt-oss-120b"),         # sliding window on alternate layers, MXFP4 experts, BF16 attention
    ("qwen3.5-397b-a17b", "qwen3.5-397b-a17b"),  # nested text_config, Gated DeltaNet hybrid, output gate
    ("glm-4.5", "glm-4.5"),                   # GQA MoE with 3 dense layers, shared expert
    ("mixtral-8x7b", "mixtral-8x7b"),         # every layer MoE, expert width in intermediate_size
    ("llama-4-maverick", "llama-4-maverick"),  # MoE every 2nd layer, chunked attention on RoPE layers
    ("minimax-m2.5", "minimax-m2.5"),         # FP8, 3 MTP modules
    ("qwen3-next-80b-a3b", "qwen3-next-80b-a3b"),  # Gated DeltaNet hybrid, gated attention, shared expert
    ("deepseek-v3.2", "deepseek-v3.2"),       # DeepSeek-V3's shapes plus the (unmodelled) indexer
    ("gemma-2-9b", "gemma-2-9b"),             # alternating sliding window, tied embeddings by default
])
def test_configs_of_bundled_models_map_to_their_rows(fixture, bundled):
    spec, _ = _spec(fixture)
    assert _arch(spec) == _arch(catalog.model(bundled))


def test_kimi_k3_maps_to_its_row():
    # Kimi Linear: 69 KDA layers from linear_attn_config (full-rank decay gate of rank head_dim), gated
    # MLA, attention residuals, LatentMoE, shared experts kept BF16 by the MXFP4 checkpoint's ignore list
    spec, unmodelled = _spec("kimi-k3")
    row = _arch(catalog.model("kimi-k3"))
    # the config states num_nextn_predict_layers 0; the bundled row leaves MTP unknown (empty)
    assert spec.mtp_modules == 0 and math.isnan(row.pop("mtp_modules"))
    mine = _arch(spec)
    mine.pop("mtp_modules")
    assert mine == row
    assert unmodelled == ["vision_config (encoders not counted: the text model only)"]


def test_kimi_k2_5_int4_experts_with_bf16_attention_and_shared_expert():
    # compressed-tensors INT4 (group 32) routed experts; its ignore list keeps self_attn and the shared
    # experts (and the dense MLP, lm head) unquantized at the checkpoint's bfloat16
    spec, _ = _spec("kimi-k2.5")
    assert (spec.native_precision, spec.dense_precision, spec.shared_experts_dense) == ("int4", "bf16", True)


def test_qwen3_5_names_the_vision_encoder_it_leaves_out():
    _, unmodelled = _spec("qwen3.5-397b-a17b")
    assert unmodelled == ["vision_config (encoders not counted: the text model only)"]


# ---- the mapping's rules on small configs ------------------------------------------------------

BASE = {"model_type": "llama", "num_hidden_layers": 4, "hidden_size": 256, "num_attention_heads": 8,
        "num_key_value_heads": 2, "intermediate_size": 512, "vocab_size": 1000,
        "tie_word_embeddings": True, "torch_dtype": "bfloat16"}


def test_dense_gqa_counts_by_hand():
    spec, unmodelled = spec_from_hf_config(BASE, name="t")
    # by hand: attention 256 x (8 + 2 x 2) x 32 + 256 x 256 = 163,840; MLP 3 x 256 x 512 = 393,216; per
    # layer 557,056 x 4 layers + tied embedding 1000 x 256
    assert spec.total_params() == 4 * 557_056 + 256_000
    assert spec.head_dim == 32 and unmodelled == []


def test_mistral_window_and_qwen_max_window_layers():
    mistral, _ = spec_from_hf_config({**BASE, "model_type": "mistral", "sliding_window": 4096}, name="m")
    assert (mistral.n_sliding_layers, mistral.sliding_window_tok) == (4, 4096)
    qwen_off, _ = spec_from_hf_config({**BASE, "model_type": "qwen2", "sliding_window": 4096,
                                       "use_sliding_window": False, "max_window_layers": 2}, name="q")
    assert qwen_off.n_sliding_layers == 0
    qwen_on, _ = spec_from_hf_config({**BASE, "model_type": "qwen2", "sliding_window": 4096,
                                      "use_sliding_window": True, "max_window_layers": 3}, name="q")
    assert qwen_on.n_sliding_layers == 1  # layers 3.. of 4


def test_gemma2_alternates_sliding_and_full_layers_and_ties_its_embeddings():
    # transformers' Gemma2Config: layer_types sliding on even layers, full on odd ones;
    # tie_word_embeddings defaults to True (the checkpoint's config does not state it)
    spec, unmodelled = _spec("gemma-2-9b")
    assert (spec.n_sliding_layers, spec.sliding_window_tok, spec.n_layers) == (21, 4096, 42)
    assert spec.tied_embeddings and spec.head_dim == 256 and unmodelled == []
    # Gemma 2 report (arXiv:2408.00118) table 2, 9B: 8,324,201,984 non-embedding + 917,504,000 embedding
    assert spec.total_params() == pytest.approx(8_324_201_984 + 917_504_000, rel=1e-3)
    untied = {k: v for k, v in BASE.items() if k != "tie_word_embeddings"}
    small, _ = spec_from_hf_config({**untied, "model_type": "gemma2", "sliding_window": 64}, name="g")
    assert small.n_sliding_layers == 2 and small.tied_embeddings  # layers 0 and 2 of 4


def test_qwen_moe_interleave_and_shared_expert_width():
    cfg = {**BASE, "model_type": "qwen2_moe", "num_experts": 8, "num_experts_per_tok": 2,
           "moe_intermediate_size": 128, "shared_expert_intermediate_size": 512,
           "decoder_sparse_step": 2, "mlp_only_layers": [3]}
    spec, _ = spec_from_hf_config(cfg, name="q")
    # MoE where (i + 1) % 2 == 0 and i not in mlp_only_layers: layer 1 only (layer 3 is dense)
    assert (spec.n_moe_layers, spec.ffn_hidden) == (1, 512)
    assert spec.n_shared_experts == 4  # 512 / 128
    with pytest.raises(DataError, match="shared_expert_intermediate_size \\(500\\) is not a whole number"):
        spec_from_hf_config({**cfg, "shared_expert_intermediate_size": 500}, name="q")


def test_quantization_configs():
    def prec(q, **extra):
        return spec_from_hf_config({**BASE, **extra, "quantization_config": q}, name="q")[0]
    assert prec({"quant_method": "fp8", "weight_block_size": [128, 128]}).native_precision == "fp8"
    s = prec({"quant_method": "compressed-tensors", "ignore": ["lm_head", "re:.*self_attn.*"],
              "config_groups": {"g": {"weights": {"num_bits": 4, "type": "int", "group_size": 32}}}})
    assert (s.native_precision, s.dense_precision) == ("int4", "bf16")
    assert prec({"quant_method": "modelopt", "quant_algo": "NVFP4"}).native_precision == "nvfp4"
    assert prec({"quant_method": "awq", "bits": 4}).native_precision == "int4"
    assert spec_from_hf_config({**BASE, "torch_dtype": "float16"}, name="h")[0].native_precision == "fp16"
    with pytest.raises(DataError, match="quant_method 'hqq' is not one tokenomics maps"):
        prec({"quant_method": "hqq"})


def test_modelopt_quantization_beside_the_config(tmp_path):
    # NVIDIA's ModelOpt checkpoints state their quantization in hf_quant_config.json next to config.json
    (tmp_path / "config.json").write_text(json.dumps(BASE))
    (tmp_path / "hf_quant_config.json").write_text(json.dumps(
        {"producer": {"name": "modelopt"}, "quantization": {"quant_algo": "NVFP4", "group_size": 16,
                                                             "exclude_modules": ["lm_head", "model.layers.0.self_attn.q_proj"]}}))
    spec, _ = spec_from_hf_config(tmp_path, name="nv")
    assert (spec.native_precision, spec.dense_precision) == ("nvfp4", "bf16")
    # ModelOpt's quantization_config written into config.json without a quant_method
    q = {"quant_algo": "FP8", "producer": {"name": "modelopt"}, "ignore": ["lm_head"]}
    assert spec_from_hf_config({**BASE, "quantization_config": q}, name="f")[0].native_precision == "fp8"


def test_moe_layer_flags_and_mamba_refusal():
    cfg = {**BASE, "n_routed_experts": 8, "num_experts_per_tok": 2, "moe_intermediate_size": 64,
           "moe_layer_freq": [0, 1, 1, 0]}
    assert spec_from_hf_config(cfg, name="f")[0].n_moe_layers == 2  # one flag per layer
    with pytest.raises(DataError, match="moe_layer_freq lists 3 layers"):
        spec_from_hf_config({**cfg, "moe_layer_freq": [0, 1, 1]}, name="f")
    with pytest.raises(DataError, match=r"Mamba / state-space layers \(hybrid_override_pattern, ssm_state_size\)"):
        spec_from_hf_config({**BASE, "model_type": "nemotron_h", "hybrid_override_pattern": "M-M*",
                             "ssm_state_size": 128}, name="m")


def test_unknown_model_type_with_standard_fields_maps_and_names_what_it_did_not_read():
    cfg = {**BASE, "model_type": "brandnew", "attention_sink_size": 4, "rope_theta": 1e6}
    spec, unmodelled = spec_from_hf_config(cfg, name="b")
    assert spec.total_params() == 4 * 557_056 + 256_000  # the same layers as BASE
    assert unmodelled == ["model_type 'brandnew' not known: mapped from its standard fields",
                          "fields not read: attention_sink_size"]  # rope_theta changes no weight or KV


# ---- bad input: one line naming what was wrong -------------------------------------------------

@pytest.mark.parametrize("cfg, match", [
    ({k: v for k, v in BASE.items() if k != "hidden_size"}, "has no 'hidden_size'; expected the model width"),
    ({"model_type": "rwkv", "num_hidden_layers": 24, "hidden_size": 2048, "vocab_size": 65536},
     "model_type 'rwkv' is not one tokenomics maps and the config has no num_attention_heads"),
    ({**BASE, "kv_lora_rank": 512, "qk_rope_head_dim": 64, "v_head_dim": 128}, "has no 'qk_nope_head_dim'"),
    ({**BASE, "layer_types": ["full_attention"] * 3 + ["mamba"]}, "layer type 'mamba' is not one tokenomics models"),
    ({**BASE, "num_experts": 8, "moe_intermediate_size": 64}, "has no 'num_experts_per_tok'"),
    ({**BASE, "hidden_size": "wide"}, "hidden_size must be a whole number"),
])
def test_bad_configs_are_one_line_errors(cfg, match):
    with pytest.raises(DataError, match=match) as exc:
        spec_from_hf_config(cfg, name="x")
    assert "\n" not in str(exc.value)


def test_not_json_and_not_an_object(tmp_path):
    bad = tmp_path / "config.json"
    bad.write_text("{'hidden_size': 1")
    with pytest.raises(DataError, match="is not JSON .* expected a checkpoint's config.json"):
        spec_from_hf_config(bad, name="x")
    bad.write_text("[1, 2]")
    with pytest.raises(DataError, match="holds a JSON list"):
        spec_from_hf_config(tmp_path, name="x")  # a directory: its config.json


# ---- the user-models file and the library ------------------------------------------------------

def test_add_user_model_then_the_library_prices_it(home):
    import tokenomics as tk

    spec = model_from_hf_config(FIX / "llama-3.1-70b.json", name="my-70b", source="hf:meta-llama/Llama-3.1-70B",
                                    as_of="2024-07-23")
    path = catalog.add_user_model(spec)
    assert path == home / "models.csv"
    row = catalog.load("models").loc["my-70b"]
    assert row["source"] == "hf:meta-llama/Llama-3.1-70B" and str(row["as_of"]) == "2024-07-23"
    assert list(catalog.load("models").columns) == list(catalog._load_cached(
        "models", str(catalog.data_dir() / "models.csv")).columns)  # the bundled file's columns
    assert _arch(catalog.model("my-70b")) == _arch(spec)
    # its architecture is the bundled Llama 3.1 70B's, so the same deployment prices the same
    mine = tk.price("h200", "my-70b", batch=16).to_frame()
    ref = tk.price("h200", "llama-3.1-70b", batch=16).to_frame()
    assert float(mine["usd_per_m_output_tok"].iloc[0]) == pytest.approx(
        float(ref["usd_per_m_output_tok"].iloc[0]), rel=1e-12)


def test_names_colliding_are_refused_unless_forced(home):
    spec, _ = _spec("llama-3.1-70b", name="llama-3.1-70b")
    with pytest.raises(ValidationError, match="'llama-3.1-70b' is a bundled model; .*--force"):
        catalog.add_user_model(spec)
    with pytest.raises(ValidationError, match="is a bundled model"):
        catalog.add_user_model(spec.replace(name="deepseek-r1"))  # an alias is taken too
    catalog.add_user_model(spec.replace(name="mine"))
    with pytest.raises(ValidationError, match="'mine' is already in"):
        catalog.add_user_model(spec.replace(name="mine"))
    catalog.add_user_model(spec.replace(name="mine", vocab=1000), force=True)
    assert catalog.model("mine").vocab == 1000 and catalog.user_model_names() == ["mine"]
    with pytest.raises(ValidationError, match="must be 1-80 letters"):
        catalog.add_user_model(spec.replace(name="no spaces"))


def test_a_broken_user_file_is_one_line(home):
    home.mkdir()
    (home / "models.csv").write_text("name,n_layers\nx,3\n")
    with pytest.raises(TokenomicsError, match="user models file .* is missing columns"):
        catalog.model("x")


# ---- the command line ---------------------------------------------------------------------------

def _cli(capsys, *args):
    from tokenomics.cli import main

    with pytest.raises(SystemExit) as exc:
        main(list(args))
        raise SystemExit(0)
    out = capsys.readouterr()
    return exc.value.code or 0, out.out, out.err


@pytest.mark.parametrize("fixture", ["deepseek-v3.2", "qwen3-next-80b-a3b", "glm-4.5"])
def test_models_add_then_price(home, capsys, fixture):
    rc, out, err = _cli(capsys, "models", "add", str(FIX / f"{fixture}.json"), "--name", f"my-{fixture}",
                        "--format", "json")
    assert rc == 0, err
    added = json.loads(out)[0]
    assert added["name"] == f"my-{fixture}" and added["origin"] == "user"
    assert added["source"] == str(FIX / f"{fixture}.json")
    rc, out, err = _cli(capsys, "price", "-m", f"my-{fixture}", "--system", "gb200-nvl72", "--format", "json")
    assert rc == 0, err
    priced = json.loads(out)[0]  # one record: the deployment priced
    assert priced["model"] == f"my-{fixture}" and priced["usd_per_m_output_tok"] > 0


def test_models_list_show_and_cli_errors(home, capsys, tmp_path):
    rc, _, err = _cli(capsys, "models", "add", str(FIX / "glm-4.5.json"), "--name", "glm-mine",
                      "--source", "hf:zai-org/GLM-4.5")
    assert rc == 0 and "added 'glm-mine'" in err
    rc, out, _ = _cli(capsys, "models", "list", "--format", "csv")
    lines = out.splitlines()
    assert lines[1].startswith("llama-3.2-1b,") and lines[-1].startswith("glm-mine,") and lines[-1].endswith(",user")
    rc, out, _ = _cli(capsys, "models", "--format", "csv")  # the group alone lists too
    assert out.splitlines()[-1].startswith("glm-mine,")
    rc, out, _ = _cli(capsys, "models", "show", "glm-mine", "--format", "json")
    shown = json.loads(out)[0]
    assert shown["source"] == "hf:zai-org/GLM-4.5" and shown["n_moe_layers"] == 89
    # bad input: exit 2, one line
    bad = tmp_path / "bad.json"
    bad.write_text("not json")
    unknown = tmp_path / "rwkv.json"
    unknown.write_text(json.dumps({"model_type": "rwkv", "num_hidden_layers": 24, "hidden_size": 2048}))
    missing = tmp_path / "missing.json"
    missing.write_text(json.dumps({k: v for k, v in BASE.items() if k != "num_attention_heads"}))
    for args, word in [((str(bad), "--name", "b"), "is not JSON"),
                       ((str(unknown), "--name", "r"), "model_type 'rwkv'"),
                       ((str(missing), "--name", "m"), "num_attention_heads"),
                       ((str(FIX / "glm-4.5.json"), "--name", "glm-4.5"), "is a bundled model"),
                       ((str(FIX / "glm-4.5.json"), "--name", "glm-mine"), "is already in"),
                       ((str(tmp_path / "nope.json"), "--name", "n"), "not found")]:
        rc, out, err = _cli(capsys, "models", "add", *args)
        assert rc == 2 and out == "" and len(err.strip().splitlines()) == 1 and word in err, (args, err)
    rc, _, err = _cli(capsys, "models", "add", str(FIX / "glm-4.5.json"), "--name", "glm-mine", "--force")
    assert rc == 0


def test_validate_serving_takes_a_user_model(home, capsys, tmp_path):
    _cli(capsys, "models", "add", str(FIX / "gpt-oss-120b.json"), "--name", "oss-mine")
    src = catalog.load("serving_public")
    row = src[src["model"] == "gpt-oss-120b"].head(1).copy()
    assert len(row) == 1
    cases = tmp_path / "cases.csv"
    row.to_csv(cases, index=False)
    rc, ref, err = _cli(capsys, "validate-serving", str(cases), "--format", "json")
    assert rc == 0, err
    row["model"] = "oss-mine"
    row.to_csv(cases, index=False)
    rc, out, err = _cli(capsys, "validate-serving", str(cases), "--format", "json")
    assert rc == 0, err
    a, b = json.loads(ref)[0], json.loads(out)[0]
    key = next(k for k in a if k.startswith("predicted_output_tok_per_s"))
    assert b["model"] == "oss-mine" and b[key] == pytest.approx(a[key], rel=1e-12)  # the same architecture
