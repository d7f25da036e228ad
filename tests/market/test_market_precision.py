"""``tokenomics market`` prices what the provider serves: the row's precision, else the one the
model's providers serve (datasets/served_precision.csv), else an override; the row's speed, else a
measured one (datasets/served_speed.csv), else the stated default; each row names which.

Each expected value says where it comes from (the dataset row, a hand calculation, the model card).
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from tokenomics import catalog, chain, market
from tokenomics.deployment import resolve
from tokenomics.errors import TokenomicsError, TokenomicsWarning
from tokenomics.specs import PRECISION_BYTES
from cli_run import run_cli


_cli = run_cli  # (exit code, stdout, stderr) of tokenomics ARGS


def _row(provider: str, model: str, quantization: str = "", speed: float = np.nan, inp: float = 0.2,
         out: float = 0.6, cached: float = np.nan) -> dict:
    return {"provider": provider, "model": model, "input_usd_per_m_tok": inp, "cached_input_usd_per_m_tok": cached,
            "output_usd_per_m_tok": out, "tok_per_s_per_user": speed, "quantization": quantization or np.nan,
            "source": "https://example.org/prices", "as_of": "2026-01-01"}


# ------------------------------------------------------------------ the precision words of a row


@pytest.mark.parametrize("cell, want", [
    ("fp8 (native)", "fp8"),  # DeepSeek's own rows in datasets/market_prices.csv
    ('fp8 (Together "Turbo" = FP8 per Together docs; CLAIMED)', "fp8"),
    ("bf16", "bf16"), ("BF16", "bf16"), ("bfloat16", "bf16"),
    ("fp4", "fp4"), ("NVFP4", "nvfp4"), ("mxfp4", "mxfp4"),  # mxfp4 is not read as fp4
    ("int4 (AWQ)", "int4"), ("float8 e4m3", "fp8"),
])
def test_row_precision_reads_the_quantization_word(cell, want):
    assert market.row_precision(cell) == (want, "")


@pytest.mark.parametrize("cell", [np.nan, None, "", "unknown", "N/A"])
def test_row_precision_empty_or_unknown_is_not_given(cell):
    assert market.row_precision(cell) == (None, "")


def test_row_precision_unrecognised_word_says_so():
    prec, why = market.row_precision("q5_k_m")
    assert prec is None and "q5_k_m" in why and "not recognised" in why and "fp8" in why


# ------------------------------------------------------------------ the sourced tables


def test_served_precision_table_is_sourced_and_valid():
    t = catalog.load("served_precision")
    assert set(t.index) <= set(catalog.model_names())
    assert t["weight_precision"].isin(list(PRECISION_BYTES)).all()
    assert t["source"].str.startswith("https://").all() and t["as_of"].notna().all()
    # the model cards: Qwen publishes Qwen3-235B-A22B(-Instruct-2507)-FP8, DeepSeek ships FP8
    # weights, OpenAI ships gpt-oss with MXFP4 experts
    assert t.loc["qwen3-235b-a22b", "weight_precision"] == "fp8"
    assert t.loc["deepseek-v3", "weight_precision"] == "fp8"
    assert t.loc["gpt-oss-120b", "weight_precision"] == "mxfp4"
    every_market_model = set(market.load_prices()["model"])
    assert every_market_model <= set(t.index)  # no bundled row falls back to a guess


def test_served_speed_table_is_sourced():
    t = catalog.load("served_speed")
    assert set(t["model"]) <= set(catalog.model_names())
    assert (t["tok_per_s_per_user"] > 0).all() and t["source"].str.startswith("https://").all()
    # Vercel AI Gateway's GLM-4.5 provider page: Novita P50 69 tps
    assert market.served_speed("Novita (via HF Inference Providers)", "glm-4.5")[0] == 69.0
    assert np.isnan(market.served_speed("Nobody", "glm-4.5")[0])


def test_served_precision_falls_back_to_the_checkpoint():
    prec, src = market.served_precision("qwen3-235b-a22b")
    assert prec == "fp8" and "Qwen3-235B-A22B" in src
    other = min(set(catalog.model_names()) - set(catalog.load("served_precision").index))
    prec, src = market.served_precision(other)  # a model no provider row names: its checkpoint's
    assert prec == catalog.model(other).native_precision and "models.csv" in src


@pytest.mark.parametrize("model, prec, want", [
    ("gpt-oss-120b", "mxfp4", {}),  # the checkpoint as stored: MXFP4 experts, BF16 attention
    ("deepseek-v3", "fp8", {}),
    ("qwen3-235b-a22b", "fp8", {"weight_precision": "fp8"}),
    ("deepseek-v3", "fp4", {"expert_precision": "fp4"}),  # 4-bit on an MoE: the routed experts
    ("llama-3.1-70b", "fp8", {"weight_precision": "fp8"}),
    ("llama-3.1-8b", None, {}),
])
def test_precision_kwargs(model, prec, want):
    assert market.precision_kwargs(model, prec) == want


# ------------------------------------------------------------------ market prices what is served


@pytest.fixture(scope="module")
def qwen():
    """One Qwen3-235B price ($0.20 / $0.60 per M, no precision, no speed) from a provider
    datasets/served_speed.csv has no speed for (Nscale via HF), priced as served (FP8) and at BF16."""
    t = pd.DataFrame([_row("Nscale (via HF Inference Providers)", "qwen3-235b-a22b")])
    return market.market(t), market.market(t, weight_precision="bf16")


def test_qwen3_is_priced_fp8_as_served(qwen):
    served, bf16 = qwen
    r = served.iloc[0]
    assert r["weight_precision"] == "fp8" and r["precision_source"].startswith(market.PRECISION_FROM_TABLE)
    assert "fp8/" in r["deployment"]
    assert r["speed_source"] == market.SPEED_FROM_DEFAULT and r["tok_per_s_per_user"] == 35.0
    # the same cost as pricing the FP8 deployment directly at 35 tok/s/user
    dep = resolve("qwen3-235b-a22b", system="dgx-h200", weight_precision="fp8")
    direct = chain.price(deployment=dep, target_tok_per_s_per_user=35.0, margin_frac=0.0, serving="decode")
    assert r["cost_usd_per_m_output_tok"] == pytest.approx(float(direct.usd_per_m_output_tok))
    # BF16 (what was priced before the precision was read) costs more than FP8: twice the weight
    # bytes read per decode step
    b = bf16.iloc[0]
    assert b["weight_precision"] == "bf16" and b["precision_source"] == market.PRECISION_FROM_OPTION
    assert b["cost_usd_per_m_output_tok"] > 2 * r["cost_usd_per_m_output_tok"]
    assert r["implied_margin_frac"] > b["implied_margin_frac"]


def test_row_precision_beats_the_table_and_the_option_beats_the_row():
    t = pd.DataFrame([_row("Together", "llama-3.1-8b", quantization="fp8 (Turbo)"),
                      _row("Someone", "llama-3.1-8b", quantization="q5_k_m")])
    with pytest.warns(TokenomicsWarning, match=r"row 2 \(Someone, llama-3.1-8b\): quantization 'q5_k_m' not recognised"):
        df = market.market(t)
    assert list(df["weight_precision"]) == ["fp8", "bf16"]
    assert df["precision_source"].iloc[0] == "price list (fp8 (Turbo))"
    assert df["precision_source"].iloc[1].startswith(market.PRECISION_FROM_TABLE)
    assert "q5_k_m" in df["precision_source"].iloc[1]  # the unknown word is named, the row still priced
    assert df["implied_margin_frac"].notna().all()
    over = market.market(t, weight_precision="int8")
    assert (over["weight_precision"] == "int8").all()
    with pytest.raises(TokenomicsError, match="fp9"):
        market.market(t, weight_precision="fp9")


def test_speed_comes_from_the_row_then_the_table_then_the_default():
    t = pd.DataFrame([_row("Novita (via HF Inference Providers)", "glm-4.5", inp=0.6, out=2.2),
                      _row("Novita", "glm-4.5", speed=50.0, inp=0.6, out=2.2),
                      _row("Nebius (via HF Inference Providers)", "glm-4.5", inp=0.6, out=2.2)])
    df = market.market(t)
    # datasets/served_speed.csv: Novita 69 tok/s (Vercel AI Gateway P50); the row's 50 wins; 35 default
    assert list(df["tok_per_s_per_user"]) == [69.0, 50.0, 35.0]
    assert list(df["speed_source"]) == [market.SPEED_FROM_TABLE, market.SPEED_FROM_ROW, market.SPEED_FROM_DEFAULT]
    assert "vercel.com" in df["speed_basis"].iloc[0]
    assert market.summary(df)["n_default_speed"] == 1


def test_cli_json_rows_name_precision_and_speed_source(capsys, tmp_path):
    f = tmp_path / "prices.csv"
    pd.DataFrame([_row("Together", "llama-3.1-8b", quantization="bf16"), _row("Novita", "glm-4.5")]).to_csv(f, index=False)
    rc, out, err = _cli(["market", "--prices", str(f), "--format", "json", "--weight-precision", "fp8"], capsys)
    assert rc == 0, err
    rows = json.loads(out)
    assert rows and all(r["weight_precision"] == "fp8" and r["precision_source"] == market.PRECISION_FROM_OPTION
                        for r in rows)
    assert all(r["speed_source"] in (market.SPEED_FROM_ROW, market.SPEED_FROM_TABLE, market.SPEED_FROM_DEFAULT)
               and "cost_basis" in r for r in rows)


def test_cli_unknown_precision_one_line_exit_2(capsys):
    rc, out, err = _cli(["market", "--weight-precision", "fp9"], capsys)
    assert rc == 2 and out == ""
    assert err.count("\n") == 1 and "fp9" in err and "fp8" in err and "Traceback" not in err
