"""Supply constraints on the forecast: the chips and power of a region cap the tokens served."""

import json
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from tokenomics.cli import app
from tokenomics.errors import TokenomicsError
from tokenomics.forecast.capacity import BINDINGS, ai_compute_h100e, supply_capacity
from tokenomics.forecast.infrastructure import dc_electricity_twh, serving_basis
from tokenomics.forecast.scenarios import parameter

runner = CliRunner()


def test_installed_base_from_the_dataset_and_the_growth_scenario():
    """Epoch AI: 15 million H100e at the end of 2025; +130 %/yr after it (scenario parameter):
    2027 = 15e6 x 2.3^2 = 79.35e6; China 15 % of the world (Pilz et al.); before the first row and
    for a region with no sourced share: NaN (hand calculations)."""
    w = ai_compute_h100e("world", [2025, 2027, 2023])
    assert w[0] == pytest.approx(15e6) and w[1] == pytest.approx(15e6 * 2.3**2) and np.isnan(w[2])
    assert ai_compute_h100e("china", [2025])[0] == pytest.approx(0.15 * 15e6)
    assert np.isnan(ai_compute_h100e("europe", [2026])[0])
    assert ai_compute_h100e("world", [2026], growth_frac_per_year=0.0)[0] == pytest.approx(15e6)
    with pytest.raises(TokenomicsError, match="region"):
        ai_compute_h100e("mars", [2026])


def _result(level_tokens_per_day: float, region: str = "world"):
    """A stand-in forecast: one series flat at ``level`` tokens/day from 2026 to 2030."""
    dates = pd.date_range("2026-01-15", "2030-12-15", freq="MS") + pd.Timedelta(days=14)
    monthly = pd.DataFrame({"series": "s", "date": dates, "tokens_per_day": level_tokens_per_day,
                            "tokens_per_day_lo_80": level_tokens_per_day / 2,
                            "tokens_per_day_hi_80": level_tokens_per_day * 2})
    history = pd.DataFrame({"series": ["s"], "date": [pd.Timestamp("2025-12-01")],
                            "tokens_per_day": [level_tokens_per_day], "region": [region]})
    return SimpleNamespace(monthly=monthly, history=history, scenario=None)


@pytest.fixture(scope="module")
def basis():
    return serving_basis()


@pytest.mark.parametrize("level", [1e12, 1e15, 1e18])
def test_served_is_the_smallest_limit_and_never_above_any(level):
    """The invariant: served = min(demand, chips, power), binding names it, and no served rate
    exceeds the limit that binds it; a small demand is served in full."""
    df = supply_capacity(_result(level)).to_frame()
    lims = df[["demand_tokens_per_day", "chips_tokens_per_day", "power_tokens_per_day"]].to_numpy(float)
    assert np.allclose(df["served_tokens_per_day"], lims.min(axis=1))
    assert (df["served_tokens_per_day"].to_numpy() <= lims.min(axis=1) * (1 + 1e-12)).all()
    assert list(df["binding"]) == [BINDINGS[i] for i in lims.argmin(axis=1)]
    assert (df["supply_bound"] == (df["binding"] != "demand")).all()
    if level == 1e12:  # 1 T/day: a few thousand chips, far inside every limit
        assert (df["binding"] == "demand").all() and np.allclose(df["served_tokens_per_day"], level)
    if level == 1e18:  # a million times China's 2026 figure: supply-bound every year
        assert df["supply_bound"].all()


def test_limits_by_hand(basis):
    """Chips: H100e x 0.67 (inference share) / (GB200 5e15 / H100 1.9789e15 FP8 FLOP/s per chip)
    chips, each serving tok/s per chip x utilisation x 86,400 s. Power: the IEA's TWh x 0.3 over
    the facility energy per token (W per chip / tok/s per chip), per day of the year. The
    deployment's figures come from serving_basis; the rest from the datasets (hand formula)."""
    df = supply_capacity(_result(1e15)).to_frame().set_index("year")
    y = 2028
    util = parameter("serving_utilization_frac")
    chips = ai_compute_h100e("world", [y])[0] * 0.67 / (5e15 / 1.9789e15)
    assert df.loc[y, "chips_tokens_per_day"] == pytest.approx(chips * basis["tok_per_s_per_chip"] * util * 86400, rel=1e-3)
    j_per_tok = basis["facility_w_per_chip"] / basis["tok_per_s_per_chip"]
    twh = dc_electricity_twh("world", [y])[0]
    assert df.loc[y, "power_tokens_per_day"] == pytest.approx(twh * 0.3 * 1e9 * 3.6e6 / j_per_tok / 365, rel=1e-3)
    # the served rate's energy over a year, at the same energy per token
    assert df.loc[y, "twh"] == pytest.approx(df.loc[y, "served_tokens_per_day"] * 365 * j_per_tok / 3.6e15, rel=1e-3)
    # the output list price: 0.40 USD per M output tokens on 2025-02-05 (2025 + 35/365), falling 40 % a year
    assert df.loc[y, "usd_per_m_output_tok"] == pytest.approx(
        parameter("price_usd_per_1k_output_tok_2025") * 1e3 * 0.6 ** (y + 0.5 - (2025 + 35 / 365)), rel=1e-4)


def test_scenario_shares_are_checked_and_move_the_limits():
    base = supply_capacity(_result(1e15)).to_frame()
    half = supply_capacity(_result(1e15), inference_compute_frac=0.335, inference_power_frac=0.15).to_frame()
    assert np.allclose(half["chips_tokens_per_day"], base["chips_tokens_per_day"] / 2)
    assert np.allclose(half["power_tokens_per_day"], base["power_tokens_per_day"] / 2)
    with pytest.raises(TokenomicsError, match="inference_power_frac"):
        supply_capacity(_result(1e15), inference_power_frac=1.5)


@pytest.mark.slow
def test_cli_capacity_json_has_the_documented_fields():
    res = runner.invoke(app, ["forecast", "-s", "china", "--show", "capacity", "--format", "json"])
    assert res.exit_code == 0, res.output
    rec = json.loads(res.stdout)
    rec = rec if isinstance(rec, list) else rec.get("rows", rec)
    assert {"region", "year", "demand_tokens_per_day", "served_tokens_per_day", "binding",
            "usd_per_m_output_tok", "chips_needed", "twh"} <= set(rec[0])
    assert all(r["served_tokens_per_day"] <= r["demand_tokens_per_day"] for r in rec)


def test_region_without_a_chip_share_has_no_chip_limit():
    """Europe has IEA electricity but no sourced share of the world's accelerators: its chip limit
    is NaN and never binds; power still does for a demand far above it."""
    df = supply_capacity(_result(1e18, region="europe")).to_frame()
    assert df["chips_tokens_per_day"].isna().all()
    assert (df["binding"] == "power").all()
    assert np.allclose(df["served_tokens_per_day"], df["power_tokens_per_day"])
