"""`tokenomics market --serving`: each row's modelled cost is `chain.price` in the chosen serving mode."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from tokenomics import chain
from tokenomics.cli import app
from tokenomics.errors import ValidationError
from tokenomics.market import _deployment, market

# one list price with a published speed: Llama-3.1-8B at 60 tok/s per user, USD 0.10 / 0.10 per M
ROW = {"provider": "Example", "model": "llama-3.1-8b", "input_usd_per_m_tok": 0.1, "output_usd_per_m_tok": 0.1,
       "tok_per_s_per_user": 60.0, "source": "test fixture", "as_of": "2026-01-01"}


def _want(serving: str) -> chain.PriceResult:
    """The price the market row must carry: the served precision's deployment on the reference
    system at the row's speed, zero margin (a cost), the chat mix."""
    dep = _deployment("llama-3.1-8b", None, None, "bf16")
    return chain.price(deployment=dep, target_tok_per_s_per_user=60.0, margin_frac=0.0, workload="chat",
                       serving=serving)


def test_market_colocated_row_is_the_colocated_price():
    df = market(pd.DataFrame([ROW]), serving="colocated", weight_precision="bf16")
    row = df.iloc[0]
    r = _want("colocated")
    assert row["serving_mode"] == "co-located" and row["concurrency"] == r.concurrency
    assert row["deployment"] == r.deployment.label()
    assert row["cost_usd_per_m_output_tok"] == pytest.approx(float(np.ravel(r.usd_per_m_output_tok)[0]), rel=1e-12)
    assert row["cost_usd_per_m_input_tok"] == pytest.approx(float(np.ravel(r.usd_per_m_effective_input_tok)[0]),
                                                           rel=1e-12)
    # the decode-only steady state stays the default, and serves more per chip at the same speed
    dec = market(pd.DataFrame([ROW]), weight_precision="bf16").iloc[0]
    assert dec["serving_mode"] == "decode-only steady state" and np.isnan(dec["concurrency"])
    assert dec["cost_usd_per_m_output_tok"] < row["cost_usd_per_m_output_tok"]


def test_cli_market_serving_colocated(tmp_path):
    path = tmp_path / "prices.csv"
    pd.DataFrame([ROW]).to_csv(path, index=False)
    res = CliRunner().invoke(app, ["market", "--prices", str(path), "--serving", "colocated",
                                   "--weight-precision", "bf16", "--format", "json"])
    assert res.exit_code == 0, res.output
    rows = json.loads(res.output)
    rows = rows if isinstance(rows, list) else rows["rows"]
    r = _want("colocated")
    assert rows[0]["serving_mode"] == "co-located"
    assert rows[0]["cost_usd_per_m_output_tok"] == pytest.approx(float(np.ravel(r.usd_per_m_output_tok)[0]),
                                                                rel=1e-12)
    table = CliRunner().invoke(app, ["market", "--prices", str(path), "--serving", "colocated",
                                     "--weight-precision", "bf16"])
    assert table.exit_code == 0, table.output
    assert "co-located serving" in " ".join(table.output.split())


def test_market_colocated_refuses_a_prefix_cache_before_pricing():
    with pytest.raises(ValidationError, match="cache_hit_frac applies"):
        market(pd.DataFrame([ROW]), serving="colocated", cache_hit_frac=0.5)
    with pytest.raises(ValidationError, match="serving must be one of"):
        market(pd.DataFrame([ROW]), serving="colo")
