"""A provider's own speculative decoding, priced where it says it serves a draft and a measurement on
the model gives the acceptance (``datasets/served_speculation.csv``)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from tokenomics import catalog, market

ROOT = Path(__file__).resolve().parents[2]


def _fit_tool():
    spec = importlib.util.spec_from_file_location("fit_served_speculation", ROOT / "tools" / "fit_served_speculation.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_each_acceptance_reproduces_its_measured_speedup():
    """The acceptance of each row gives back, through the performance core, the single-user speedup
    NVIDIA measured on 8 x H200 (1.9x for Llama 3.1 405B, 1.5x for 70B, TensorRT-LLM Medusa, 2024-09);
    a change to the decode physics that moves it fails here (rerun tools/fit_served_speculation.py)."""
    fit = _fit_tool()
    t = catalog.load("served_speculation")
    assert set(t["provider"]) == {"Together", "Fireworks"} and set(t["model"]) == {"llama-3.1-405b", "llama-3.1-70b"}
    for _, r in t.drop_duplicates(["model", "gamma", "alpha_frac"]).iterrows():
        assert r["spec"] == f"eagle:{int(r['gamma'])}:{float(r['alpha_frac']):.4f}"
        got = fit.single_user_speedup(r["model"], r["measured_system"], r["measured_precision"], int(r["measured_tp"]),
                                      int(r["gamma"]), float(r["alpha_frac"]))
        assert got == pytest.approx(float(r["measured_speedup"]), rel=2e-3), r["model"]
        assert str(r["source"]).startswith("https://developer.nvidia.com/blog/") and r["claim_source"].startswith("https://")


def test_served_spec_per_provider_and_model():
    assert market.served_spec("Novita", "deepseek-v3") == ("mtp", market.SPEC_FROM_CHECKPOINT)
    spec, why = market.served_spec("Together", "llama-3.1-405b")
    assert spec.startswith("eagle:4:") and why.startswith(market.SPEC_FROM_TABLE) and "1.9x" in why
    assert market.served_spec("Together (via HF Inference Providers)", "llama-3.1-405b")[0] == spec  # the route dropped
    assert market.served_spec("Avian", "llama-3.1-405b") == ("none", market.SPEC_NONE)  # says nothing of a draft
    assert market.served_spec("Together", "kimi-k2") == ("none", market.SPEC_NONE)  # claims one; no measured acceptance


def test_a_providers_draft_prices_its_measured_speed_cheaper():
    """Together's Llama 3.1 405B at its measured 45.7 tok/s per user (OpenRouter p50): without a draft
    8 x H200 reach it only at a small batch; with the draft a larger batch meets the speed, so each
    output token costs less. The row says which speculative decoding it priced and why."""
    df = pd.DataFrame({"provider": ["Together", "Avian"], "model": ["llama-3.1-405b"] * 2,
                       "input_usd_per_m_tok": [3.5, 1.5], "output_usd_per_m_tok": [3.5, 1.5],
                       "source": ["s"] * 2, "as_of": ["2025-07-03"] * 2})
    served = market.market(df).set_index("provider")
    plain = market.market(df, spec="none").set_index("provider")
    t = served.loc["Together"]
    assert t["speed_source"] == market.SPEED_FROM_TABLE and t["tok_per_s_per_user"] == pytest.approx(45.7)
    assert t["spec_decode"].startswith("eagle:4:") and t["deployment"].endswith(", spec eagle")
    assert t["batch"] > 2 * plain.loc["Together", "batch"]
    assert t["cost_usd_per_m_output_tok"] < 0.5 * plain.loc["Together", "cost_usd_per_m_output_tok"]
    a = served.loc["Avian"]  # no draft of its own: priced as --spec none prices it
    assert a["spec_decode"] == "none"
    assert a["cost_usd_per_m_output_tok"] == pytest.approx(plain.loc["Avian", "cost_usd_per_m_output_tok"])
    assert (plain["spec_decode"] == "none").all() and (plain["spec_source"] == market.SPEC_NONE).all()


def test_a_bad_spec_names_served_among_the_choices():
    from tokenomics.errors import ValidationError

    df = pd.DataFrame({"provider": ["a"], "model": ["llama-3.1-8b"], "input_usd_per_m_tok": [0.1],
                       "output_usd_per_m_tok": [0.2], "source": ["s"], "as_of": ["2026"]})
    with pytest.raises(ValidationError, match=r"use served \(what each provider serves\), none, mtp"):
        market.market(df, spec="warp")
