"""Hedonic (constant-quality) API price index: known decline recovered, bundled data finite."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from tokenomics.errors import DataError, TokenomicsError
from tokenomics.watch import price_index as pi


def _synthetic(decline_per_year: float = 3.0, n_models: int = 40, seed: int = 1) -> pd.DataFrame:
    """Prices built from hand-set characteristic effects and a hand-set decline per year.

    The mix shifts: models priced later are larger (log size rises 1.2 per year), so a pooled fit
    of price on time understates the decline while the hedonic fit should recover it."""
    rng = np.random.default_rng(seed)
    rows = []
    providers = [f"p{i}" for i in range(6)]
    prov_fx = dict(zip(providers, rng.normal(0, 0.3, len(providers))))
    for m in range(n_models):
        t0 = 2023.0 + 3.0 * m / n_models
        size = 3.0 + 1.2 * (t0 - 2023.0) + rng.normal(0, 0.5)  # ln(params in B)
        open_w = float(m % 3 == 0)
        ctx = np.log(rng.choice([8192, 32768, 131072, 1048576]))
        for k in range(4):  # each model priced by 4 providers at dates up to a year later
            t = t0 + rng.uniform(0, 1.0)
            prov = providers[(m + k) % len(providers)]
            lp = (1.0 + 0.8 * size - 0.5 * open_w + 0.1 * ctx + prov_fx[prov]
                  - np.log(decline_per_year) * (t - 2023.0) + rng.normal(0, 0.2))
            rows.append({"file": "synthetic", "row": len(rows) + 1, "provider": prov, "model": f"m{m}",
                         "date": pd.Timestamp(int(t), 1, 1) + pd.Timedelta(days=365.25 * (t - int(t))),
                         "t_year": t, "price_usd_per_m_tok": float(np.exp(lp)), "price_basis": "synthetic",
                         "log_total_params": size, "total_params_unknown": 0.0, "log_active_params": size,
                         "active_params_unknown": 0.0, "open_weights": open_w, "log_context_tok": ctx,
                         "context_unknown": 0.0, "mmlu_pct": np.nan})
    df = pd.DataFrame(rows)
    df["period"] = pi._half(df["t_year"].to_numpy(float))
    df["log_price"] = np.log(df["price_usd_per_m_tok"])
    return df


def test_hedonic_recovers_a_hand_set_decline_that_pooling_misses():
    s = _synthetic(3.0)
    d = pi.constant_quality_decline(s, ci=0.95)
    # the hand-set truth (3x a year) lies inside the 95 % interval
    assert d["decline_factor_lo"] <= 3.0 <= d["decline_factor_hi"]
    assert d["n"] == len(s) == 160 and d["n_models"] == 40
    assert d["cov_type"].startswith("cluster-robust")
    # the pooled fit absorbs the mix shift (size rises 1.2/yr x 0.8 elasticity => exp(0.96) ~ 2.6x
    # more expensive per year from mix): it sees far less than 3x
    assert d["pooled_decline_factor_hi"] < 3.0
    # the like-for-like fit (same model, same provider) also recovers it: no mix change inside a pair
    assert d["matched_n"] == 0 or d["matched_decline_factor_lo"] <= 3.0 <= d["matched_decline_factor_hi"]


def test_hedonic_recovers_rising_prices():
    # a hand-set rise: prices double every year (factor 0.5)
    d = pi.constant_quality_decline(_synthetic(0.5, seed=2), ci=0.95)
    assert d["decline_factor_lo"] <= 0.5 <= d["decline_factor_hi"]


def test_price_index_falls_like_the_hand_set_decline():
    s = _synthetic(3.0)
    idx = pi.price_index(s, ci=0.95)
    assert idx["index"].iloc[0] == 1.0
    last = idx.iloc[-1]
    # truth: 3x a year over the gap between the mean dates of the last and first half-years
    mean_t = s.groupby("period")["t_year"].mean()
    truth = 3.0 ** -(mean_t.iloc[-1] - mean_t.iloc[0])
    assert last["period"] == mean_t.index[-1]
    # half-year dummies treat prices inside a half-year as simultaneous (up to 6 months at 3x/yr
    # = a factor 1.7 apart), so the index is checked to within that factor, not its interval
    assert 1 / 1.7 < last["index"] / truth < 1.7
    assert last["index"] < 0.1  # over 3 years at 3x/yr the level is below 1/27 ~ 0.04 (hand calculation)
    assert (idx["n"] > 0).all()


def test_bundled_prices_give_a_finite_decline_with_n():
    s = pi.hedonic_sample(measure="blended")
    d = pi.constant_quality_decline(s, ci=0.95)
    assert np.isfinite([d["decline_factor_per_year"], d["decline_factor_lo"], d["decline_factor_hi"]]).all()
    assert d["decline_factor_lo"] < d["decline_factor_per_year"] < d["decline_factor_hi"]
    assert d["n"] == len(s) > 100
    assert d["n_models"] >= 30
    out = pi.constant_quality_decline(measure="output")
    assert np.isfinite(out["decline_factor_per_year"]) and out["n"] > 100


def test_bundled_sample_prices_are_per_million_tokens():
    s = pi.hedonic_sample(measure="output")
    # DeepSeek-V3.2-Exp output list price: 0.42 USD per M tokens (api_prices.csv row 44: 0.00042 per 1K)
    row = s[(s["file"] == "api_prices.csv") & (s["model"] == "DeepSeek-V3.2-Exp")]
    assert row["price_usd_per_m_tok"].iloc[0] == pytest.approx(0.42)
    assert (s["file"] == "market_prices.csv").sum() > 50


def test_like_for_like_paths_same_model_same_provider():
    p = pi.like_for_like_paths()
    g3 = p[p["model"] == "GPT-3 davinci"].iloc[0]
    # 60 -> 20 USD per M tokens (api_prices.csv rows 1-2), 2021-11-20 -> 2022-09-01 (0.78 yr):
    # 3 ** (1 / 0.78) ~ 4.08x a year (hand calculation)
    assert g3["change_frac"] == pytest.approx(-2 / 3)
    assert g3["decline_factor_per_year"] == pytest.approx(4.08, rel=0.01)
    assert set(p["file"]) >= {"market_prices.csv", "china_price_cuts.csv"}


def test_a_priced_model_without_traits_is_one_line_error():
    traits = pd.read_csv(__import__("tokenomics").catalog.data_dir() / "model_traits.csv")
    with pytest.raises(DataError, match="kimi-k3.*model_traits"):
        pi.hedonic_sample(traits=traits[traits["model"] != "kimi-k3"])


def test_bad_measure_is_refused():
    with pytest.raises(TokenomicsError, match="measure"):
        pi.hedonic_sample(measure="input")


def test_cli_show_price_index_and_paths():
    import json

    from typer.testing import CliRunner

    from tokenomics.cli import app

    r = CliRunner().invoke(app, ["watch", "--show", "price-index", "--format", "json"])
    assert r.exit_code == 0, r.output
    rows = json.loads(r.stdout)
    assert rows[0]["index"] == 1.0 and {"period", "index_lo", "index_hi", "raw_index"} <= set(rows[0])
    r = CliRunner().invoke(app, ["watch", "--show", "price-paths", "--measure", "output", "--format", "csv"])
    assert r.exit_code == 0, r.output
    assert "GPT-3 davinci" not in r.stdout  # GPT-3's prices have no output split: not an output path
    assert "china_price_cuts.csv" in r.stdout
