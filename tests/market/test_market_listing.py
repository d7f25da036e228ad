"""A price list as providers publish it: model names as the provider or hub spells them, and rows
that cannot be priced refused one by one while the rest are priced."""

import json

import numpy as np
import pandas as pd
import pytest

from tokenomics import catalog, market
from tokenomics.cli import main
from tokenomics.errors import DataError


@pytest.mark.parametrize("listed, name", [
    ("meta-llama/Meta-Llama-3.1-70B-Instruct", "llama-3.1-70b"),          # Hugging Face id
    ("meta-llama/Llama-3.3-70B-Instruct-Turbo", "llama-3.3-70b"),         # Together's tier word; an alias
    ("accounts/fireworks/models/deepseek-v3-0324", "deepseek-v3"),         # Fireworks path, dated release
    ("accounts/fireworks/models/llama-v3p1-405b-instruct", "llama-3.1-405b"),
    ("Qwen/Qwen3-235B-A22B-Instruct-2507-tput", "qwen3-235b-a22b"),
    ("meta-llama/Llama-4-Maverick-17B-128E-Instruct-FP8", "llama-4-maverick"),  # size repeated, precision
    ("llama3.1-8b", "llama-3.1-8b"),                                       # Cerebras
    ("llama-3.1-8b-instant", "llama-3.1-8b"),                              # Groq
    ("mixtral-8x7b-instruct-v0.1", "mixtral-8x7b"),
    ("openai/gpt-oss-120b", "gpt-oss-120b"),
    ("Qwen/Qwen3-235B-A22B-Thinking-2507", "qwen3-235b-a22b"),
    ("llama-3.1-405b-reasoning", "llama-3.1-405b"),                        # Groq's 2024 name
    ("deepseek-ai/DeepSeek-V3.1-Terminus", "deepseek-v3.1"),
    ("moonshotai/Kimi-K2-Thinking", "kimi-k2-thinking"),                   # an alias, matched before any word is dropped
    ("deepseek-ai/DeepSeek-V3.2-Exp", "deepseek-v3.2-exp"),                # an alias of the deepseek-v3.2 row
    ("Qwen/Qwen2.5-72B-Instruct", "qwen2.5-72b"),
    ("accounts/fireworks/models/llama-v3-70b-instruct", "llama-3-70b"),    # Fireworks, Llama 3 (no point release)
    ("gemma2-9b-it", "gemma-2-9b"),                                        # Groq
])
def test_a_provider_s_spelling_is_the_catalog_model_it_stands_for(listed, name):
    assert catalog.match_model_name(listed) == name


@pytest.mark.parametrize("listed", ["glm-4.5-air", "deepseek-r1-distill-llama-70b",
                                    "gpt-4o", "Qwen/Qwen2.5-7B-Instruct", "llama-3.1-70b-extended"])
def test_another_architecture_is_not_guessed(listed):
    # GLM-4.5-Air and Qwen2.5-7B are not catalogued, the R1 distill is not DeepSeek-R1's architecture
    assert catalog.match_model_name(listed) is None


HEAD = "provider,model,input_usd_per_m_tok,cached_input_usd_per_m_tok,output_usd_per_m_tok,source,as_of\n"
ROWS = ["a,llama-3.1-70b,0.2,,0.4,s,2025",
        "b,meta-llama/Meta-Llama-3.1-70B-Instruct,0.2,,0.4,s,2025",
        "c,gpt-4o,2.5,1.25,10,s,2025",
        "d,llama-3.1-8b,0.1,,0,s,2025",
        "e,llama-3.1-8b,0.1,0.2,0.2,s,2025"]


def _file(tmp_path, rows=ROWS):
    f = tmp_path / "prices.csv"
    f.write_text(HEAD + "\n".join(rows) + "\n")
    return f


def test_bad_rows_are_refused_and_the_rest_priced(tmp_path):
    out = market.market(_file(tmp_path))
    assert len(out) == 5  # nothing dropped
    flags = list(out["flag"])
    assert not flags[0].startswith("refused") and not flags[1].startswith("refused")
    assert flags[2].startswith("refused: row 3 (line 4): model 'gpt-4o' is not in the catalog")
    assert flags[3].startswith("refused: row 4 (line 5): output_usd_per_m_tok must be > 0")
    assert "cached_input_usd_per_m_tok must not exceed input_usd_per_m_tok" in flags[4]
    # the hub's name is priced as the catalog model, to the bit, and says how it was listed
    a, b = out.iloc[0], out.iloc[1]
    assert b["model"] == "llama-3.1-70b" and b["note"].startswith("listed as 'meta-llama/Meta-Llama-3.1-70B-Instruct'")
    assert a["cost_usd_per_m_output_tok"] == b["cost_usd_per_m_output_tok"]
    assert np.isnan(out.loc[2, "cost_usd_per_m_output_tok"]) and out.loc[2, "list_usd_per_m_output_tok"] == 10
    s = market.summary(out)
    assert (s["n_prices"], s["n_priced"], s["n_refused"]) == (5, 2, 3)


def test_the_strict_reader_names_every_bad_row_in_one_line(tmp_path):
    with pytest.raises(DataError) as ex:
        market.load_prices(_file(tmp_path))
    msg = str(ex.value)
    assert "\n" not in msg and "3 problems" in msg
    assert "row 3 (line 4)" in msg and "row 4 (line 5)" in msg and "row 5 (line 6)" in msg


def test_cli_prices_the_rest_and_names_each_refused_row(tmp_path, capsys):
    main(["market", "--prices", str(_file(tmp_path)), "--format", "json"])
    cap = capsys.readouterr()
    rows = json.loads(cap.out)
    assert len(rows) == 5 and rows[1]["model"] == "llama-3.1-70b"
    lines = cap.err.strip().splitlines()
    assert len(lines) == 3 and all(x.startswith("refused: row ") for x in lines)
    main(["market", "--prices", str(_file(tmp_path))])
    table = capsys.readouterr().out
    assert "3 refused" in table and "Refused rows: 3 of 5 not priced" in table


def test_cli_exits_2_when_nothing_can_be_priced(tmp_path, capsys):
    with pytest.raises(SystemExit) as ex:
        main(["market", "--prices", str(_file(tmp_path, ROWS[2:])), "--format", "json"])
    err = capsys.readouterr().err
    assert ex.value.code == 2 and len(err.strip().splitlines()) == 1
    assert "nothing can be priced, 3 rows refused" in err and "Traceback" not in err


def test_a_data_frame_with_only_bad_rows_is_refused():
    df = pd.DataFrame({"provider": ["p"], "model": ["gpt-9"], "input_usd_per_m_tok": [0.1],
                       "output_usd_per_m_tok": [0.2], "source": ["s"], "as_of": ["2026"]})
    with pytest.raises(DataError, match=r"row 1 \(line 2\): model 'gpt-9' is not in the catalog"):
        market.market(df)


def test_per_thousand_columns_and_dollar_signs_are_read_as_usd_per_million(tmp_path):
    f = tmp_path / "k.csv"
    f.write_text("provider,model,input_usd_per_1k_tok,output_usd_per_1k_tok,source,as_of\n"
                 "x,llama-3.1-70b,$0.0002,$0.0004,s,2025\n")
    per_k = market.market(f)
    per_m = market.market(_file(tmp_path, ROWS[:1]))
    # 0.0002 USD per 1K = 0.2 USD per million (hand conversion): the same margin as the per-M row
    assert per_k.loc[0, "list_usd_per_m_output_tok"] == pytest.approx(0.4)
    assert per_k.loc[0, "implied_margin_frac"] == pytest.approx(per_m.loc[0, "implied_margin_frac"])


@pytest.mark.parametrize("header, cells", [
    ("input_usd_per_tok,output_usd_per_tok", "2e-7,4e-7"),  # an API's raw per-token pricing (x 1e6)
    ("input_usd_per_token,output_usd_per_token", "2e-7,4e-7"),
    ("input_usd_per_k_tok,output_usd_per_k_tok", "0.0002,0.0004"),  # what --per 1k prints (x 1e3)
    ("input_usd_per_1m_tok,output_usd_per_1m_tok", "0.2,0.4"),
])
def test_other_price_units_are_read_as_usd_per_million_exactly(tmp_path, header, cells):
    """Hand conversion: 2e-7 USD per token = 0.0002 per 1K = 0.2 per million, printed as 0.2 (no
    0.19999999999999998 from the scaling)."""
    f = tmp_path / "u.csv"
    f.write_text(f"provider,model,{header},source,as_of\nx,llama-3.1-70b,{cells},s,2025\n")
    r = market.market(f).iloc[0]
    assert r["flag"] == "" or not r["flag"].startswith(market.FLAG_REFUSED)
    assert (r["list_usd_per_m_input_tok"], r["list_usd_per_m_output_tok"]) == (0.2, 0.4)


def test_a_per_token_price_in_a_per_million_column_is_refused_with_the_fix(tmp_path):
    f = tmp_path / "t.csv"
    f.write_text("provider,model,input_usd_per_m_tok,output_usd_per_m_tok,source,as_of\n"
                 "x,llama-3.1-70b,2e-7,4e-7,s,2025\ny,llama-3.1-70b,0.2,0.4,s,2025\n")
    out = market.market(f)
    assert out.loc[0, "flag"].startswith(market.FLAG_REFUSED)
    assert "below any API list price" in out.loc[0, "flag"] and "input_usd_per_tok (per token)" in out.loc[0, "flag"]
    assert out.loc[1, "implied_margin_frac"] == out.loc[1, "implied_margin_frac"]  # the other row is priced
