"""A model architecture from its Hugging Face ``config.json``.

:func:`spec_from_hf_config` maps the fields of a checkpoint's ``config.json`` onto
:class:`tokenomics.specs.ModelSpec` (the columns of ``datasets/models.csv``): dense or MoE MLPs
(routed and shared experts, first dense layers, interleaved MoE layers), GQA or MLA attention,
sliding-window layers, hybrid linear-attention layers (Gated DeltaNet), and the weights' storage
precision from ``quantization_config`` or ``torch_dtype``. What the performance model does not
represent (DeepSeek-V3.2's sparse-attention indexer, vision encoders, fields it does not know) is
named in one line, never dropped silently; a missing field the mapping needs is one
:class:`~tokenomics.errors.DataError` naming it.

Examples
--------
>>> from tokenomics.hf_config import spec_from_hf_config
>>> cfg = {"model_type": "llama", "num_hidden_layers": 32, "hidden_size": 4096,
...        "num_attention_heads": 32, "num_key_value_heads": 8, "intermediate_size": 14336,
...        "vocab_size": 128256, "tie_word_embeddings": False, "torch_dtype": "bfloat16"}
>>> spec, unmodelled = spec_from_hf_config(cfg, name="my-8b")
>>> round(spec.total_params() / 1e9, 2), unmodelled
(8.03, [])
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .errors import DataError, ValidationError

if TYPE_CHECKING:  # pragma: no cover
    from .specs import ModelSpec

#: ``model_type`` values whose fields this mapping reads knowingly (others are mapped from the
#: standard fields, with a warning naming the type).
KNOWN_MODEL_TYPES = (
    "llama", "mistral", "mixtral", "qwen2", "qwen2_moe", "qwen3", "qwen3_moe", "qwen3_next",
    "qwen3_5", "qwen3_5_text", "qwen3_5_moe", "qwen3_5_moe_text", "deepseek_v2", "deepseek_v3",
    "deepseek_v32", "kimi_k2", "kimi_linear", "glm4_moe", "gpt_oss", "llama4", "llama4_text", "minimax_m2", "gemma2",
)

#: Model types whose full-attention layers gate their output (a hidden x attention-width
#: projection) without saying so in the config: Qwen3-Next's ``q_proj`` emits the query and its
#: gate (transformers' ``Qwen3NextAttention``). Others state ``attn_output_gate``.
_GATED_ATTENTION_TYPES = ("qwen3_next",)

#: Model types whose transformers config ties the lm head to the input embeddings when the
#: config does not say (``Gemma2Config(tie_word_embeddings=True)``); every other known type unties it.
_TIED_BY_DEFAULT = ("gemma2",)

#: ``torch_dtype`` / ``dtype`` -> precision name.
_DTYPES = {"bfloat16": "bf16", "float16": "fp16", "half": "fp16", "float32": "fp32", "float": "fp32",
           "float8_e4m3fn": "fp8", "float8_e5m2": "fp8"}

#: Layer-type words of ``layer_types`` -> the kind of attention the layer runs.
_LAYER_KINDS = {"full_attention": "full", "attention": "full", "sliding_attention": "sliding",
                "chunked_attention": "sliding", "linear_attention": "linear",
                # GLM-5.2: full attention behind DeepSeek's sparse indexer (named with the index_* fields)
                "deepseek_sparse_attention": "full"}

#: Fields of Mamba / state-space layers, which the performance model has no representation for.
_SSM_FIELDS = ("hybrid_override_pattern", "mamba_num_heads", "mamba_head_dim", "ssm_state_size", "ssm_cfg",
               "mamba_d_state", "mamba_expand")

#: Fields read by the mapping (and so never reported as unknown).
_READ = {
    "model_type", "architectures", "num_hidden_layers", "hidden_size", "num_attention_heads",
    "num_key_value_heads", "head_dim", "intermediate_size", "vocab_size", "tie_word_embeddings",
    "torch_dtype", "dtype", "quantization_config", "kv_lora_rank", "q_lora_rank", "qk_rope_head_dim",
    "qk_nope_head_dim", "v_head_dim", "n_routed_experts", "num_experts", "num_local_experts",
    "num_experts_per_tok", "experts_per_token", "n_shared_experts", "shared_expert_intermediate_size",
    "moe_intermediate_size", "first_k_dense_replace", "moe_layer_freq", "decoder_sparse_step",
    "mlp_only_layers", "mlp_layer_types", "sliding_window", "use_sliding_window", "max_window_layers",
    "layer_types", "full_attention_interval", "linear_num_value_heads", "linear_num_key_heads",
    "linear_key_head_dim", "linear_value_head_dim", "attn_output_gate", "num_nextn_predict_layers",
    "mtp_num_hidden_layers", "num_mtp_modules", "text_config", "attention_chunk_size",
    # Llama 4
    "interleave_moe_layer_step", "moe_layers", "intermediate_size_mlp", "no_rope_layers", "no_rope_layer_interval",
    # MiniMax-M2
    "shared_intermediate_size", "use_mtp",
    # Kimi Linear (Kimi K3)
    "linear_attn_config", "num_experts_per_token", "num_shared_experts", "mla_use_output_gate",
    "attn_res_block_size", "routed_expert_hidden_size", "latent_moe_use_norm",
}

#: Fields that do not change weights, KV cache or compute per token (positions, norms' epsilon,
#: routing rules, token ids, training-only settings) or whose cost the model ignores by design
#: (short convolutions of linear-attention layers, a few thousand weights a layer; norms; biases).
_IGNORED = {
    "rope_theta", "rope_scaling", "rope_parameters", "partial_rotary_factor", "max_position_embeddings",
    "rms_norm_eps", "layer_norm_eps", "attention_bias", "attention_dropout", "mlp_bias", "use_qk_norm",
    "qk_layernorm", "norm_topk_prob", "routed_scaling_factor", "n_group", "topk_group", "topk_method",
    "scoring_func", "aux_loss_alpha", "seq_aux", "router_aux_loss_coef", "output_router_logits",
    "ep_size", "initializer_range", "use_cache", "hidden_act", "pretraining_tp", "bos_token_id",
    "eos_token_id", "pad_token_id", "transformers_version", "auto_map", "linear_conv_kernel_dim",
    "mamba_ssm_dtype", "rope_interleave", "mtp_use_dedicated_embeddings", "swiglu_limit",
    "initial_context_length", "moe_router_dtype", "router_jitter_noise", "rope_type", "name_or_path",
    "_name_or_path", "num_experts_offload", "embedding_multiplier", "use_bfloat16", "mrope_section",
    "mrope_interleaved", "rotary_dim", "mtp_transformer_layers", "num_expert_group", "use_grouped_topk",
    "moe_renormalize", "moe_router_activation_func", "mla_use_nope", "qk_norm_type", "qk_head_dim",
    # generic PretrainedConfig fields transformers writes into nested configs
    "add_cross_attention", "chunk_size_feed_forward", "cross_attention_hidden_size", "num_beam_groups",
    "output_attentions", "output_hidden_states", "pruned_heads", "encoder_no_repeat_ngram_size",
    "tie_encoder_decoder", "is_encoder_decoder", "is_decoder",
    # Gemma 2: logit soft-capping and the query scale (elementwise), its activation's name, and its
    # copy of sliding_window
    "attn_logit_softcapping", "final_logit_softcapping", "query_pre_attn_scalar", "hidden_activation",
    "sliding_window_size",
}

#: Words that mark a field as part of the architecture: an unread field holding one is named.
_ARCH_WORDS = re.compile(r"head|expert|layer|attn|attention|lora|window|index|moe|ssm|mamba|conv|rank|"
                         r"compress|kv|hc_|latent|mtp|nextn|dense|sparse|chunk|hidden|intermediate|state|"
                         r"group|block|ffn|mlp|gate|router|embed")

#: ``quantization_config.quant_method`` values understood.
QUANT_METHODS = ("fp8", "fbgemm_fp8", "mxfp4", "modelopt", "compressed-tensors", "awq", "gptq",
                 "auto-round", "autoround", "bitsandbytes")


def read_hf_config(config: "dict | str | os.PathLike") -> tuple[dict, str]:
    """The config as a dict and where it came from (the file path; ``""`` for a dict).

    ``config`` may be a dict, a ``config.json`` path, or a checkpoint directory holding one. A
    file that is not JSON, or JSON that is not an object, is one :class:`DataError`.
    """
    if isinstance(config, dict):
        return dict(config), ""
    if not isinstance(config, (str, os.PathLike)):
        raise ValidationError(f"config must be a dict or a path to a config.json, got {type(config).__name__}")
    from .io import read_text

    path = Path(config).expanduser()
    if path.is_dir():
        path = path / "config.json"
    path = path.resolve()
    text = read_text(path, "Hugging Face config")
    try:
        cfg = json.loads(text)
    except json.JSONDecodeError as exc:
        raise DataError(f"Hugging Face config {str(path)!r} is not JSON ({exc.msg} on line {exc.lineno}); "
                        "expected a checkpoint's config.json") from None
    if not isinstance(cfg, dict):
        raise DataError(f"Hugging Face config {str(path)!r} holds a JSON {type(cfg).__name__}; expected an object "
                        "of fields such as hidden_size and num_hidden_layers")
    quant = path.parent / "hf_quant_config.json"
    nested = cfg.get("text_config") if isinstance(cfg.get("text_config"), dict) else {}
    if "quantization_config" not in cfg and "quantization_config" not in nested and quant.is_file():
        # NVIDIA ModelOpt checkpoints state their quantization beside config.json
        try:
            q = json.loads(read_text(quant, "ModelOpt quantization config"))["quantization"]
        except (json.JSONDecodeError, KeyError, TypeError):
            raise DataError(f"ModelOpt quantization config {str(quant)!r} is not JSON with a 'quantization' "
                            "object; expected the checkpoint's hf_quant_config.json") from None
        cfg = {**cfg, "quantization_config": {"quant_method": "modelopt", **q}}
    return cfg, str(path)


def _int(cfg: dict, key: str, where: str, default: Any = None, minimum: int = 0) -> int:
    """``cfg[key]`` as a whole number; absent or null -> ``default`` (an error when None)."""
    val = cfg.get(key)
    if val is None:
        if default is None:
            raise DataError(f"{where} has no {key!r}; {_NEEDS.get(key, 'the mapping needs it')}")
        return default
    if isinstance(val, bool) or not isinstance(val, (int, float)) or float(val) != int(val) or int(val) < minimum:
        raise DataError(f"{where}: {key} must be a whole number >= {minimum}, got {val!r:.60}")
    return int(val)


#: What each required field is, for the message naming a missing one.
_NEEDS = {
    "num_hidden_layers": "expected the number of decoder layers",
    "hidden_size": "expected the model width",
    "num_attention_heads": "expected the number of query heads",
    "vocab_size": "expected the vocabulary size",
    "intermediate_size": "expected the dense MLP's intermediate size (the config has dense layers)",
    "num_experts_per_tok": "expected the routed experts per token (the config has experts)",
    "qk_rope_head_dim": "expected MLA's rotary head width (the config has kv_lora_rank)",
    "qk_nope_head_dim": "expected MLA's non-rotary head width (the config has kv_lora_rank)",
    "v_head_dim": "expected MLA's value head width (the config has kv_lora_rank)",
    "sliding_window": "expected the window of its sliding-attention layers",
    "linear_num_value_heads": "expected the value heads of its linear-attention layers",
    "linear_num_key_heads": "expected the key heads of its linear-attention layers",
    "linear_value_head_dim": "expected the head width of its linear-attention layers",
    "linear_key_head_dim": "expected the key head width of its linear-attention layers",
}


def _precision(cfg: dict, where: str, unmodelled: list[str]) -> tuple[str, str]:
    """(native precision of the experts / all weights, dense precision or ``""`` when the same)."""
    native, dense = _quantized(cfg, where)
    if native and not dense:
        return native, ""
    dtype = cfg.get("torch_dtype") or cfg.get("dtype")
    if dtype is None:
        base = "bf16"
        unmodelled.append("no torch_dtype: weights taken as bf16")
    else:
        base = _DTYPES.get(str(dtype).replace("torch.", "").lower())
        if base is None:
            raise DataError(f"{where}: torch_dtype {dtype!r} is not one tokenomics knows; expected one of "
                            f"{', '.join(sorted(_DTYPES))}")
    return (native or base), (base if dense else "")


def _quantized(cfg: dict, where: str) -> tuple[str, bool]:
    """(precision of the quantized weights, or ``""`` without quantization; whether attention, and so
    every dense weight, is left at the checkpoint's dtype)."""
    q = cfg.get("quantization_config")
    if not q:
        return "", False
    if not isinstance(q, dict):
        raise DataError(f"{where}: quantization_config must be an object, got {q!r:.60}")
    producer = q.get("producer") if isinstance(q.get("producer"), dict) else {}
    method = str(q.get("quant_method") or producer.get("name") or ("modelopt" if "quant_algo" in q else "")).lower()
    unconverted = " ".join(str(x) for x in (q.get("modules_to_not_convert") or q.get("ignore")
                                            or q.get("exclude_modules") or []))
    # a checkpoint that quantizes the experts only leaves attention (and so every dense weight) at
    # the checkpoint's dtype: gpt-oss's mxfp4 and compressed-tensors' ignore lists name self_attn
    dense = "attn" in unconverted
    if method in ("fp8", "fbgemm_fp8"):
        return "fp8", dense
    if method == "mxfp4":
        return "mxfp4", dense
    if method == "modelopt":
        algo = str(q.get("quant_algo", "")).upper()
        known = {"FP8": "fp8", "NVFP4": "nvfp4", "W4A8_AWQ": "int4", "W4A16_AWQ": "int4", "INT8_SQ": "int8"}
        if algo not in known:
            raise DataError(f"{where}: ModelOpt quant_algo {algo or '(none)'!r} is not one tokenomics maps; "
                            f"expected one of {', '.join(known)} (mixed precision: pass its hf_quant_config "
                            "per layer is not read)")
        return known[algo], dense
    if method == "compressed-tensors":
        groups = q.get("config_groups") or {}
        weights = [g.get("weights") or {} for g in groups.values() if isinstance(g, dict)]
        bits = {(int(w.get("num_bits", 0)), str(w.get("type", "int"))) for w in weights if w}
        if len(bits) != 1:
            raise DataError(f"{where}: compressed-tensors quantization_config has {len(bits)} weight formats in "
                            "config_groups; expected one (num_bits and type of the quantized weights)")
        nb, kind = bits.pop()
        fmt = str(q.get("format", "")).lower()
        # 4-bit floats: MXFP4 (group 32, 8-bit power-of-two scales) or NVFP4 (group 16, FP8 scales)
        fp4 = "mxfp4" if "mxfp4" in fmt else "nvfp4" if "nvfp4" in fmt else "fp4"
        name = {(4, "int"): "int4", (8, "int"): "int8", (8, "float"): "fp8", (4, "float"): fp4}.get((nb, kind))
        if name is None:
            raise DataError(f"{where}: compressed-tensors weights of {nb} bits ({kind}) are not a precision "
                            "tokenomics prices; expected 4 or 8 bits")
        return name, dense
    if method in ("awq", "gptq", "auto-round", "autoround"):
        nb = q.get("bits", q.get("w_bit"))
        if nb in (4, 8):
            return ("int4" if nb == 4 else "int8"), dense
        raise DataError(f"{where}: {method} weights of {nb!r} bits are not a precision tokenomics prices; "
                        "expected 4 or 8")
    if method == "bitsandbytes":
        if q.get("load_in_4bit"):
            return "int4", dense
        if q.get("load_in_8bit"):
            return "int8", dense
    raise DataError(f"{where}: quantization_config quant_method {method or '(none)'!r} is not one tokenomics "
                    f"maps; expected one of {', '.join(QUANT_METHODS)}")


def _layer_kinds(cfg: dict, n_layers: int, model_type: str, where: str) -> list[str]:
    """Each layer's attention: ``full``, ``sliding`` or ``linear``."""
    types = cfg.get("layer_types")
    if types is not None:
        if not isinstance(types, list) or len(types) != n_layers:
            raise DataError(f"{where}: layer_types must list one type per layer ({n_layers}), got "
                            f"{len(types) if isinstance(types, list) else type(types).__name__}")
        bad = sorted({str(t) for t in types if str(t) not in _LAYER_KINDS})
        if bad:
            raise DataError(f"{where}: layer type {bad[0]!r} is not one tokenomics models; expected "
                            f"{', '.join(_LAYER_KINDS)}")
        return [_LAYER_KINDS[str(t)] for t in types]
    lac = cfg.get("linear_attn_config")
    if isinstance(lac, dict) and lac.get("kda_layers") is not None:  # Kimi Linear: 1-based layer numbers
        kda = {int(i) for i in lac["kda_layers"]}
        return ["linear" if i + 1 in kda else "full" for i in range(n_layers)]
    if cfg.get("attention_chunk_size") and model_type.startswith("llama4"):
        # Llama 4: RoPE layers attend within chunks, every no_rope_layer_interval-th (NoPE) layer to all
        # (transformers' Llama4TextConfig: no_rope_layers, layer_types)
        rope = cfg.get("no_rope_layers")
        if not isinstance(rope, list) or len(rope) != n_layers:
            k = _int(cfg, "no_rope_layer_interval", where, default=4, minimum=1)
            rope = [int((i + 1) % k != 0) for i in range(n_layers)]
        return ["sliding" if r else "full" for r in rope]
    interval = cfg.get("full_attention_interval")
    if interval:
        k = _int(cfg, "full_attention_interval", where, minimum=1)
        return ["full" if (i + 1) % k == 0 else "linear" for i in range(n_layers)]
    if cfg.get("sliding_window") and model_type == "gemma2":
        # Gemma 2: sliding-window and full attention alternate, the first layer sliding
        # (transformers' Gemma2Config.layer_types)
        return ["sliding" if i % 2 == 0 else "full" for i in range(n_layers)]
    if cfg.get("sliding_window"):
        if model_type.startswith("qwen"):  # Qwen2/3: a window only with use_sliding_window, from max_window_layers on
            if not cfg.get("use_sliding_window"):
                return ["full"] * n_layers
            first = int(cfg.get("max_window_layers") or 0)
            return ["sliding" if i >= first else "full" for i in range(n_layers)]
        if cfg.get("use_sliding_window") is False:
            return ["full"] * n_layers
        return ["sliding"] * n_layers  # Mistral: every layer
    return ["full"] * n_layers


def _moe_layers(cfg: dict, n_layers: int, n_experts: int, where: str) -> int:
    """How many layers have a mixture-of-experts MLP (their order does not change the cost)."""
    if not n_experts:
        return 0
    kinds = cfg.get("mlp_layer_types")
    if isinstance(kinds, list) and len(kinds) == n_layers:
        return sum(1 for k in kinds if str(k).lower() in ("sparse", "moe"))
    freq = cfg.get("moe_layer_freq")
    if isinstance(freq, list):  # one 0/1 flag per layer (MiniMax-M3, MiMo-V2-Flash)
        if len(freq) != n_layers:
            raise DataError(f"{where}: moe_layer_freq lists {len(freq)} layers; expected one flag per layer ({n_layers})")
        return sum(1 for f in freq if f)
    if "first_k_dense_replace" in cfg or "moe_layer_freq" in cfg:  # DeepSeek, GLM-4.5, Kimi
        first = _int(cfg, "first_k_dense_replace", where, default=0)
        freq = _int(cfg, "moe_layer_freq", where, default=1, minimum=1)
        return sum(1 for i in range(n_layers) if i >= first and i % freq == 0)
    if isinstance(cfg.get("moe_layers"), list):  # Llama 4
        return len(cfg["moe_layers"])
    if "interleave_moe_layer_step" in cfg:  # Llama 4: layers k-1, 2k-1, ...
        step = _int(cfg, "interleave_moe_layer_step", where, minimum=1)
        return sum(1 for i in range(n_layers) if (i + 1) % step == 0)
    if "decoder_sparse_step" in cfg or "mlp_only_layers" in cfg:  # Qwen MoE
        step = _int(cfg, "decoder_sparse_step", where, default=1, minimum=1)
        dense = {int(i) for i in (cfg.get("mlp_only_layers") or [])}
        return sum(1 for i in range(n_layers) if i not in dense and (i + 1) % step == 0)
    return n_layers  # Mixtral, gpt-oss: every layer


def spec_from_hf_config(config: "dict | str | os.PathLike", name: str, *, display_name: str = "",
                        source: str = "", as_of: str = "", note: str = "") -> tuple["ModelSpec", list[str]]:
    """Map a Hugging Face ``config.json`` onto a :class:`~tokenomics.specs.ModelSpec`.

    Parameters
    ----------
    config : dict or path
        The parsed config, a ``config.json`` path, or a checkpoint directory holding one.
    name : str
        Catalog name of the model.
    display_name, source, as_of, note : str
        Metadata kept on the spec (``source`` defaults to the config's path).

    Returns
    -------
    (ModelSpec, list of str)
        The architecture and what of the config it does not model (each a short phrase; empty
        when everything that matters was mapped).

    Raises
    ------
    DataError
        The config is not JSON, lacks a field the mapping needs (named), or uses an attention,
        layer type or quantization the performance model has no representation for.
    """
    from .specs import ModelSpec, precision_bytes

    cfg, path = read_hf_config(config)
    where = f"Hugging Face config {path!r}" if path else "Hugging Face config"
    unmodelled: list[str] = []
    top = cfg
    text = cfg.get("text_config")
    if isinstance(text, dict):  # multimodal checkpoints: the language model's fields are nested
        cfg = dict(text)
        for k in ("quantization_config", "tie_word_embeddings", "torch_dtype", "dtype"):
            if k not in cfg and k in top:
                cfg[k] = top[k]
        encoders = sorted(k for k in top if k.endswith("_config") and k not in ("text_config", "quantization_config")
                          and isinstance(top[k], dict))
        if encoders:
            unmodelled.append(f"{', '.join(encoders)} (encoders not counted: the text model only)")
    model_type = str(cfg.get("model_type") or top.get("model_type") or "")
    if model_type not in KNOWN_MODEL_TYPES:
        missing = [k for k in ("num_hidden_layers", "hidden_size", "num_attention_heads", "vocab_size")
                   if cfg.get(k) is None]
        if missing:
            raise DataError(f"{where}: model_type {model_type or '(none)'!r} is not one tokenomics maps and the "
                            f"config has no {', '.join(missing)}; expected a decoder config with num_hidden_layers, "
                            f"hidden_size, num_attention_heads and vocab_size (known types: "
                            f"{', '.join(KNOWN_MODEL_TYPES)})")
        unmodelled.append(f"model_type {model_type or '(none)'!r} not known: mapped from its standard fields")

    ssm = [k for k in _SSM_FIELDS if cfg.get(k) is not None]
    if ssm:
        raise DataError(f"{where}: Mamba / state-space layers ({', '.join(ssm)}) have no representation in "
                        "tokenomics' performance model yet; models of attention, linear attention (Gated "
                        "DeltaNet, Kimi Delta Attention) and MoE layers can be added")
    n_layers = _int(cfg, "num_hidden_layers", where, minimum=1)
    hidden = _int(cfg, "hidden_size", where, minimum=1)
    n_q = _int(cfg, "num_attention_heads", where, minimum=1)
    n_kv = _int(cfg, "num_key_value_heads", where, default=n_q, minimum=1)
    vocab = _int(cfg, "vocab_size", where, minimum=1)
    kw: dict[str, Any] = {}

    # ---- attention --------------------------------------------------------------------------
    if cfg.get("kv_lora_rank"):
        kw.update(attention="mla", kv_lora_rank=_int(cfg, "kv_lora_rank", where, minimum=1),
                  q_lora_rank=_int(cfg, "q_lora_rank", where, default=0),
                  qk_rope_head_dim=_int(cfg, "qk_rope_head_dim", where),
                  qk_nope_head_dim=_int(cfg, "qk_nope_head_dim", where),
                  v_head_dim=_int(cfg, "v_head_dim", where, minimum=1))
        head_dim = _int(cfg, "head_dim", where, default=kw["v_head_dim"], minimum=1)
    else:
        head_dim = _int(cfg, "head_dim", where, default=hidden // n_q, minimum=1)
        if n_q % n_kv:
            raise DataError(f"{where}: num_attention_heads ({n_q}) is not a multiple of num_key_value_heads ({n_kv})")
    if any(k.startswith("index_") for k in cfg):
        desc = ", ".join(f"{k} {cfg[k]}" for k in ("index_n_heads", "index_head_dim", "index_topk") if k in cfg)
        unmodelled.append(f"sparse attention (indexer: {desc}): attention and KV cache priced as dense over the "
                          "whole context, the indexer's weights and key cache not counted")

    kinds = _layer_kinds(cfg, n_layers, model_type, where)
    n_sliding, n_linear = kinds.count("sliding"), kinds.count("linear")
    if n_sliding:
        window = cfg.get("sliding_window") or cfg.get("attention_chunk_size")
        if not window:
            _int(cfg, "sliding_window", where)  # raises naming it
        kw.update(sliding_window_tok=int(window), n_sliding_layers=n_sliding)
        if "chunked_attention" in (cfg.get("layer_types") or []) or not cfg.get("sliding_window"):
            unmodelled.append("chunked attention taken as a sliding window of the chunk size (an upper bound)")
    if n_linear and isinstance(cfg.get("linear_attn_config"), dict):  # Kimi Delta Attention
        lac = cfg["linear_attn_config"]
        heads = _int(lac, "num_heads", f"{where} linear_attn_config", minimum=1)
        width = _int(lac, "head_dim", f"{where} linear_attn_config", minimum=1)
        # its decay gate: f_a (hidden -> head_dim) then f_b (head_dim -> heads x head_dim), "full rank"
        # per key channel (Kimi Linear's modelling code); a per-head gate without it
        kw.update(n_linear_layers=n_linear, linear_heads=heads, linear_head_dim=width, linear_key_heads=0,
                  linear_gate_rank=width if lac.get("use_full_rank_gate", True) else 0)
    elif n_linear:
        lv = _int(cfg, "linear_num_value_heads", where, minimum=1)
        lk = _int(cfg, "linear_num_key_heads", where, default=lv, minimum=1)
        dv = _int(cfg, "linear_value_head_dim", where, minimum=1)
        dk = _int(cfg, "linear_key_head_dim", where, default=dv, minimum=1)
        if dk != dv:
            raise DataError(f"{where}: linear_key_head_dim ({dk}) differs from linear_value_head_dim ({dv}); "
                            "tokenomics models one head width for linear-attention layers")
        kw.update(n_linear_layers=n_linear, linear_heads=lv, linear_head_dim=dv,
                  linear_key_heads=lk if lk != lv else 0, linear_gate_rank=0)
    gated = cfg.get("attn_output_gate", cfg.get("mla_use_output_gate"))
    if cfg.get("attn_res_block_size"):
        kw["attn_residual_block"] = _int(cfg, "attn_res_block_size", where)
    kw["attn_output_gate"] = bool(gated) if gated is not None else model_type in _GATED_ATTENTION_TYPES

    # ---- MLPs -------------------------------------------------------------------------------
    n_experts = (_int(cfg, "n_routed_experts", where, default=0) or _int(cfg, "num_experts", where, default=0)
                 or _int(cfg, "num_local_experts", where, default=0))
    n_moe = _moe_layers(cfg, n_layers, n_experts, where)
    if n_moe:
        top_k = next((cfg[k] for k in ("num_experts_per_tok", "experts_per_token", "num_experts_per_token")
                      if cfg.get(k) is not None), None)
        if top_k is None:
            _int(cfg, "num_experts_per_tok", where)  # raises naming it
        expert_ffn = _int(cfg, "moe_intermediate_size", where, default=0) or _int(cfg, "intermediate_size", where)
        if model_type.startswith("llama4"):  # Llama 4: intermediate_size is the experts', one shared expert
            expert_ffn, shared = _int(cfg, "intermediate_size", where, minimum=1), 1
        else:
            shared = (_int(cfg, "n_shared_experts", where, default=0)
                      or _int(cfg, "num_shared_experts", where, default=0))
        shared_ffn = (_int(cfg, "shared_expert_intermediate_size", where, default=0)
                      or _int(cfg, "shared_intermediate_size", where, default=0))
        if shared_ffn:
            if shared_ffn % expert_ffn:
                raise DataError(f"{where}: shared_expert_intermediate_size ({shared_ffn}) is not a whole number of "
                                f"experts of moe_intermediate_size ({expert_ffn}); tokenomics counts shared experts "
                                "at the routed experts' width")
            shared = shared_ffn // expert_ffn
        kw.update(n_moe_layers=n_moe, n_experts=n_experts, experts_per_token=int(top_k),
                  n_shared_experts=shared, expert_ffn_hidden=expert_ffn)
        if cfg.get("routed_expert_hidden_size"):  # LatentMoE (Kimi K3): routed experts in a latent width
            kw.update(moe_latent_dim=_int(cfg, "routed_expert_hidden_size", where, minimum=1),
                      moe_latent_norm=bool(cfg.get("latent_moe_use_norm", False)))
    if n_moe < n_layers:
        key = "intermediate_size_mlp" if model_type.startswith("llama4") else "intermediate_size"
        kw["ffn_hidden"] = _int(cfg, key, where, minimum=1)

    # ---- storage, extras ----------------------------------------------------------------------
    native, dense = _precision(cfg, where, unmodelled)
    if dense and precision_bytes(dense) == precision_bytes(native):
        dense = ""
    if kw.get("n_shared_experts") and cfg.get("quantization_config"):
        # a checkpoint whose quantization leaves the shared experts out stores them at the dense dtype
        q = cfg["quantization_config"]
        ignored = " ".join(str(x) for x in (q.get("ignore") or q.get("modules_to_not_convert") or []))
        kw["shared_experts_dense"] = "shared_expert" in ignored and bool(dense)
    mtp = next((cfg[k] for k in ("num_nextn_predict_layers", "mtp_num_hidden_layers", "num_mtp_modules")
                if cfg.get(k) is not None), 0)
    if cfg.get("use_mtp") is False:
        mtp = 0
    tied = cfg.get("tie_word_embeddings")
    if tied is None:  # the transformers default: untied but for Gemma 2 (_TIED_BY_DEFAULT)
        tied = model_type in _TIED_BY_DEFAULT
        if model_type not in KNOWN_MODEL_TYPES:
            unmodelled.append("no tie_word_embeddings: an untied lm head taken")

    unknown = sorted(k for k in cfg if k not in _READ and k not in _IGNORED and not k.startswith("index")
                     and _ARCH_WORDS.search(k))
    if unknown:
        unmodelled.append(f"fields not read: {', '.join(unknown)}")

    spec = ModelSpec(name=name, n_layers=n_layers, hidden=hidden, n_q_heads=n_q, n_kv_heads=n_kv,
                     head_dim=head_dim, vocab=vocab, tied_embeddings=bool(tied), native_precision=native,
                     dense_precision=dense, mtp_modules=float(mtp), display_name=display_name or name,
                     source=source or path, as_of=as_of,
                     note=note or _note(model_type, unmodelled), **kw)
    return spec, unmodelled


def _note(model_type: str, unmodelled: list[str]) -> str:
    text = f"From a Hugging Face config.json (model_type {model_type or 'none'})."
    if unmodelled:
        text += " Assumed or not modelled: " + "; ".join(unmodelled) + "."
    return text


def model_from_hf_config(config: "dict | str | os.PathLike", name: str, *, display_name: str = "",
                         source: str = "", as_of: str = "") -> "ModelSpec":
    """The architecture a Hugging Face ``config.json`` describes, as a
    :class:`~tokenomics.specs.ModelSpec` (``tk.model_from_hf_config``).

    Parameters
    ----------
    config : dict or path
        The parsed config, its path, or a checkpoint directory holding ``config.json``.
    name : str
        Catalog name of the model.
    display_name, source, as_of : str
        Metadata (``source`` defaults to the config's path).

    Returns
    -------
    ModelSpec
        Dense or MoE, GQA or MLA, sliding-window and linear-attention layers, storage precision
        from ``quantization_config`` / ``torch_dtype``. What the config holds that the
        performance model does not represent is named in one
        :class:`~tokenomics.errors.TokenomicsWarning` and in ``note``.

    Raises
    ------
    DataError
        Not JSON, a missing field (named), or a feature with no representation.
    """
    import warnings

    from .errors import TokenomicsWarning

    spec, unmodelled = spec_from_hf_config(config, name, display_name=display_name, source=source, as_of=as_of)
    if unmodelled:
        warnings.warn(f"{name}: assumed or not modelled: {'; '.join(unmodelled)}", TokenomicsWarning, stacklevel=2)
    return spec
