"""Open-weight models that third-party APIs price (OpenRouter, Together, Fireworks, DeepInfra, Groq
names): each hub name is the catalog row it stands for, each row's size is the one its model card
states, and a price list naming them all is priced with no row refused."""

from __future__ import annotations

import pandas as pd
import pytest

from tokenomics import catalog, market

#: Hub name -> catalog row (or alias) it is priced as. The rows come from each checkpoint's
#: config.json mapped by tokenomics.hf_config (datasets/models.csv source column).
HUB_NAMES = {
    "meta-llama/Llama-3.2-3B-Instruct": "llama-3.2-3b",
    "meta-llama/Meta-Llama-3-8B-Instruct": "llama-3-8b",
    "meta-llama/Meta-Llama-3-70B-Instruct": "llama-3-70b",
    "mistralai/Mistral-7B-Instruct-v0.3": "mistral-7b",
    "mistralai/Mistral-Small-3.1-24B-Instruct-2503": "mistral-small-3.1-24b",
    "Qwen/Qwen2.5-72B-Instruct": "qwen2.5-72b",
    "Qwen/Qwen3-8B": "qwen3-8b",
    "Qwen/Qwen3-14B": "qwen3-14b",
    "Qwen/Qwen3-Coder-480B-A35B-Instruct": "qwen3-coder-480b-a35b",
    "Qwen/Qwen3-Next-80B-A3B-Instruct": "qwen3-next-80b-a3b",
    "deepseek-ai/DeepSeek-V3.2": "deepseek-v3.2",
    "deepseek-ai/DeepSeek-V3.2-Exp": "deepseek-v3.2-exp",  # an alias of deepseek-v3.2
    "google/gemma-2-9b-it": "gemma-2-9b",
    # provider spellings of the same checkpoints
    "accounts/fireworks/models/llama-v3-70b-instruct": "llama-3-70b",   # Fireworks
    "gemma2-9b-it": "gemma-2-9b",                                       # Groq
    "Qwen/Qwen3-Coder-480B-A35B-Instruct-FP8": "qwen3-coder-480b-a35b",
    "Qwen/Qwen3-Next-80B-A3B-Thinking": "qwen3-next-80b-a3b",
}


@pytest.mark.parametrize("listed, name", HUB_NAMES.items())
def test_a_hub_name_is_the_catalog_row_it_stands_for(listed, name):
    assert catalog.match_model_name(listed) == name


#: Parameter counts the model cards state: (total, active or None, where it is stated).
STATED = {
    "llama-3.2-3b": (3.21e9, None, "huggingface.co/meta-llama/Llama-3.2-3B-Instruct model card: 3B (3.21B)"),
    "llama-3-8b": (8e9, None, "huggingface.co/meta-llama/Meta-Llama-3-8B model card: 8B"),
    "llama-3-70b": (70e9, None, "huggingface.co/meta-llama/Meta-Llama-3-70B model card: 70B"),
    "mistral-7b": (7.25e9, None, "huggingface.co/mistralai/Mistral-7B-Instruct-v0.3: 7.25B params (safetensors)"),
    # the text model; the card's 24B counts the checkpoint (the Pixtral encoder, 0.4B, is not catalogued)
    "mistral-small-3.1-24b": (24e9, None, "huggingface.co/mistralai/Mistral-Small-3.1-24B-Instruct-2503: 24 billion parameters"),
    "qwen2.5-72b": (72.7e9, None, "huggingface.co/Qwen/Qwen2.5-72B-Instruct: Number of Parameters 72.7B"),
    "qwen3-8b": (8.2e9, None, "huggingface.co/Qwen/Qwen3-8B: Number of Parameters 8.2B"),
    "qwen3-14b": (14.8e9, None, "huggingface.co/Qwen/Qwen3-14B: Number of Parameters 14.8B"),
    "qwen3-coder-480b-a35b": (480e9, 35e9, "huggingface.co/Qwen/Qwen3-Coder-480B-A35B-Instruct: 480B total, 35B activated"),
    # active not checked: the card's 3B activated leaves out the embeddings and lm head (0.6B here)
    "qwen3-next-80b-a3b": (80e9, None, "huggingface.co/Qwen/Qwen3-Next-80B-A3B-Instruct: 80B in total, 3B activated"),
    "deepseek-v3.2": (671e9, 37e9, "DeepSeek-V3.2 / V3.2-Exp model card: 671B total, 37B activated (685B on the hub with the MTP module)"),
    "gemma-2-9b": (9.24e9, None, "Gemma 2 report (arXiv:2408.00118) table 2: 9B = 8,324,201,984 non-embedding + 917,504,000 embedding"),
}


@pytest.mark.parametrize("name", STATED)
def test_each_new_row_is_the_size_its_model_card_states(name):
    total, active, _source = STATED[name]
    m = catalog.model(name)
    assert m.total_params() == pytest.approx(total, rel=0.03)
    if active is not None:
        assert m.active_params() == pytest.approx(active, rel=0.05)


def test_new_rows_cite_their_config_and_state_mtp_only_where_the_config_does():
    df = catalog.load("models").set_index("name")
    for name in STATED:
        row = df.loc[name]
        assert "/blob/main/config.json" in row["source"] and "github:" in row["source"], name
        assert str(row["as_of"])[:2] == "20" and row["note"], name
    # DeepSeek-V3.2 ships one MTP layer (num_nextn_predict_layers 1); the others' configs state none
    assert catalog.model("deepseek-v3.2").mtp_modules == 1
    assert {catalog.model(n).mtp_modules for n in STATED if n != "deepseek-v3.2"} == {0}


def test_a_price_list_of_the_new_models_is_priced_with_no_row_refused():
    listed = [h for h in HUB_NAMES if h.count("/") == 1]  # one row per hub name
    prices = pd.DataFrame({
        "provider": ["p"] * len(listed), "model": listed,
        "input_usd_per_m_tok": [0.2] * len(listed), "output_usd_per_m_tok": [0.6] * len(listed),
        "source": ["made-up prices for a test"] * len(listed), "as_of": ["2026-01"] * len(listed)})
    out = market.market(prices)
    assert len(out) == len(listed)
    refused = out[out["flag"].astype(str).str.startswith("refused")]
    assert refused.empty, refused[["model", "flag"]].to_string()
    assert out["cost_usd_per_m_output_tok"].notna().all()
    # each row priced as the catalog model its hub name stands for (an alias as its architecture)
    want = {catalog.MODEL_ALIASES.get(n, n) for n in map(catalog.match_model_name, listed)}
    assert set(out["model"]) == want and "deepseek-v3.2" in want
