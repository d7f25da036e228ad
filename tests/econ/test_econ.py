"""Tests of tokenomics.econ: finance, TCO, power, pricing, uncertainty, disaggregation.

Every expected value states where it comes from: a hand calculation (in the test id or
docstring), numpy-financial as an outside oracle, or a published/measured figure with source and
tolerance.
"""

from __future__ import annotations

import numpy as np
import numpy_financial as npf
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tokenomics.econ import disagg, finance, power, pricing, tco, uncertainty
from tokenomics.errors import TokenomicsError, ValidationError

# ---------------------------------------------------------------- finance


@pytest.mark.parametrize("rate,years", [(0.05, 3), (0.10, 4), (0.08, 6), (0.15, 2.5), (1e-4, 4)])
def test_crf_matches_numpy_financial_pmt(rate, years):
    """Oracle: numpy_financial.pmt(r, n, -1) is the capital recovery factor."""
    assert finance.capital_recovery_factor(rate, years) == pytest.approx(-npf.pmt(rate, years, 1), rel=1e-9)


def test_crf_tiny_rate_is_accurate():
    """Hand (series): CRF(r, n) = 1/n + r (n + 1) / (2 n) + O(r^2); at r = 1e-9, n = 4:
    0.25 + 6.25e-10. (numpy_financial loses digits to cancellation here, so it is not the oracle.)"""
    assert finance.capital_recovery_factor(1e-9, 4) == pytest.approx(0.25 + 6.25e-10, rel=1e-12)


def test_crf_rate_zero_is_exactly_one_over_n():
    """Hand: at r = 0 the annuity is straight-line, 1/n exactly (no 0/0)."""
    assert finance.capital_recovery_factor(0.0, 4) == 0.25
    assert finance.capital_recovery_factor(0.0, 3) == 1 / 3


@given(st.floats(0.5, 30))
@settings(max_examples=50, deadline=None)
def test_crf_rate_zero_property(n):
    assert finance.capital_recovery_factor(0.0, n) == pytest.approx(1 / n, rel=1e-15)


def test_annual_capital_cost_with_residual_matches_pmt():
    """Oracle: -npf.pmt(r, n, capex, -residual) (payments at period end)."""
    got = finance.annual_capital_cost_usd(48_000, 0.10, 4, residual_frac=0.2)
    assert got == pytest.approx(-npf.pmt(0.10, 4, 48_000, -9_600), rel=1e-9)


def test_crf_vectorized():
    r = np.array([0.0, 0.05, 0.10])
    got = finance.capital_recovery_factor(r, 4)
    assert got.shape == (3,)
    assert got[0] == 0.25 and got[2] == pytest.approx(0.3154708, rel=1e-6)  # textbook CRF(10 %, 4)


def test_hourly_capital_cost_hand():
    """Hand: 87,600 USD over 10 years at r = 0 is 8,760 USD/year = 1 USD/h."""
    assert finance.capital_cost_usd_per_h(87_600, 0.0, 10) == pytest.approx(1.0)


# ---------------------------------------------------------------- bad input: one-line errors


@pytest.mark.parametrize("kwargs,needle", [
    (dict(wacc_frac=9.0), "did you mean 0.09"),
    (dict(wacc_frac=-0.1), "wacc_frac"),
    (dict(life_years=0), "life_years must be a positive"),
    (dict(capex_usd=-5), "capex_usd must be a positive"),
    (dict(electricity_usd_per_kwh=-0.1), "electricity_usd_per_kwh"),
    (dict(residual_frac=20), "did you mean 0.2"),
    (dict(pue=0.9), "pue must be >= 1"),
])
def test_cost_inputs_reject_bad_values(kwargs, needle):
    with pytest.raises(ValidationError) as e:
        tco.CostInputs.for_hardware("h200", **kwargs)
    msg = str(e.value)
    assert needle in msg and "\n" not in msg


def test_wacc_900_percent_is_one_line_error():
    with pytest.raises(ValidationError, match=r"did you mean 9 \(900 %\)|wacc_frac must be a fraction"):
        finance.capital_recovery_factor(900, 4)


@pytest.mark.parametrize("util,hint", [(60, "did you mean 0.6"), (0, "utilization_frac"), (-1, "utilization_frac")])
def test_utilization_as_percent(util, hint):
    with pytest.raises(ValidationError, match=hint):
        pricing.price_usd_per_1k_tok(2.0, 1000, utilization_frac=util)


def test_negative_price_rejected():
    with pytest.raises(ValidationError, match="cost_usd_per_chip_h must be a positive"):
        pricing.price_usd_per_1k_tok(-2.0, 1000)
    with pytest.raises(ValidationError):
        tco.cost_model("h200", -1.5)


def test_unknown_cost_input_and_tier():
    with pytest.raises(TokenomicsError, match="Unknown cost input"):
        tco.CostInputs.for_hardware("h200", wac_frac=0.1)
    with pytest.raises(TokenomicsError, match="Did you mean 'hyperscaler-owned'"):
        tco.cost_model("h200", "hyperscaler-owed")


# ---------------------------------------------------------------- TCO


def test_bottom_up_breakdown_hand():
    """Hand: capex 48,000, r = 0, 4 y -> 12,000/y = 1.3699 USD/h; maintenance 3 % -> 0.1644;
    colo 184.06 USD/kW-month x 1.26 kW / 730 h = 0.3177; power (500 + 560) W x 1.25 x 0.083 = 0.1100."""
    c = tco.CostInputs.for_hardware("h200", capex_usd=48_000, wacc_frac=0.0)
    b = c.breakdown_usd_per_h(500.0)
    assert b["capital_usd_per_chip_h"] == pytest.approx(12_000 / 8760)
    assert b["maintenance_usd_per_chip_h"] == pytest.approx(0.03 * 48_000 / 8760)
    assert b["colo_usd_per_chip_h"] == pytest.approx(184.06 * 1.26 / 730)
    assert b["electricity_usd_per_chip_h"] == pytest.approx(1.06 * 1.25 * 0.083)


def test_colo_plus_power_under_20_percent_of_tco():
    """InferenceMAX (tco_params.csv colo_plus_power_share_max): colo + electricity < 20 % of TCO.
    The bottom-up H200 default respects it within a few points (we allow <= 22 %)."""
    c = tco.CostInputs.for_hardware("h200")
    b = c.breakdown_usd_per_h(460.0)
    share = (b["colo_usd_per_chip_h"] + b["electricity_usd_per_chip_h"]) / c.cost_usd_per_chip_h(460.0)
    assert share <= 0.22


def test_presets_both_vintages():
    """tco_params.csv (InferenceX constants.ts / gpu-keys.ts): H200 hyperscaler 1.41 (2025-08), 1.22 (2026-07)."""
    assert tco.preset("h200", "hyperscaler-owned", "2025-08").cost_usd_per_h == 1.41
    assert tco.preset("h200", "hyperscaler-owned", "2026-07").cost_usd_per_h == 1.22
    assert tco.preset("h200", "rental-3yr", "2026-07").cost_usd_per_h == 2.05
    with pytest.raises(TokenomicsError, match="available vintages"):
        tco.preset("h200", "neocloud-owned", "2019-01")


def test_tier_table_has_bottom_up_beside_tiers():
    t = tco.tier_table()
    row = t[(t.hardware == "h200") & (t.vintage == "2025-08")].iloc[0]
    assert row["hyperscaler-owned"] == 1.41 and np.isfinite(row["bottom_up_usd_per_chip_h"])


def test_rent_vs_own_breakeven_hand():
    """Hand: owning at a flat 1.0 USD/h vs renting at 2.0 -> break-even utilization 0.5."""
    own = tco.TierCost("h200", 1.0)
    df = tco.rent_vs_own(own, 2.0, [0.4, 0.5, 0.8])
    assert df["breakeven_utilization_frac"].iloc[0] == pytest.approx(0.5)
    assert list(df["cheaper"]) == ["rent", "own", "own"]


# ---------------------------------------------------------------- power model


def test_power_model_csv_matches_refit():
    """datasets/power_model.csv holds what fit_h200() produces from the measured rows (within 1 W)."""
    stored, refit = power.power_model("h200"), power.fit_h200()
    for f in ("idle_w", "hbm_coef_w", "flop_coef_w"):
        assert getattr(stored, f) == pytest.approx(getattr(refit, f), abs=1.0)


def test_power_model_reproduces_measurements():
    """Measured H200 power (h200_microbench.csv): every fitted point within 10 %; idle within 2 %."""
    obs = power.h200_power_observations()
    pm = power.power_model("h200")
    pred = pm.board_power_w(obs.hbm_util_frac.to_numpy(), obs.flop_util_frac.to_numpy())
    rel = pred / obs.board_power_w.to_numpy() - 1
    assert np.all(np.abs(rel) < 0.10)
    assert abs(rel[obs.experiment.to_numpy() == "power_idle"][0]) < 0.02


def test_power_capped_at_tdp_and_tdp_scaled():
    pm = power.power_model("h200")
    assert pm.board_power_w(1.0, 1.0) == 700.0
    b200 = power.power_model("b200")  # TDP 1000 W: transfer assumption, coefficients x 1000/700
    assert b200.idle_w == pytest.approx(pm.idle_w * 1000 / 700)
    assert "transfer" in b200.fitted_on


def test_power_rejects_percent_utilization():
    with pytest.raises(ValidationError, match="did you mean 0.5"):
        power.power_model("h200").board_power_w(50, 0.1)


# ---------------------------------------------------------------- pricing


def test_price_hand():
    """Hand: 3.6 USD/h at 1,000 tok/s = 3.6 USD per 3.6 M tokens = 0.001 USD/1K tokens."""
    assert pricing.price_usd_per_1k_tok(3.6, 1000) == pytest.approx(1e-3)
    # margin 50 % doubles it; utilization 0.5 doubles it again
    assert pricing.price_usd_per_1k_tok(3.6, 1000, 0.5, 0.5) == pytest.approx(4e-3)


@given(st.floats(0.01, 1.0), st.floats(0.1, 10), st.floats(1, 1e5))
@settings(max_examples=60, deadline=None)
def test_price_scales_as_one_over_utilization(u, cost, tps):
    assert pricing.price_usd_per_1k_tok(cost, tps, u) == pytest.approx(pricing.price_usd_per_1k_tok(cost, tps) / u)


def test_blended_hand():
    """Hand: 1k in at 0.1 + 8k out at 1.0 USD/1K -> (100 + 8000) / 9 = 0.9 USD/1K."""
    assert pricing.blended_usd_per_1k_tok(0.1, 1.0, 1000, 8000) == pytest.approx(0.9)


# InferenceX published figures (../shared/reference/economics_notes.md A1; tco_params.csv rows
# throughput_per_provisioned_MW, all_in_provisioned_power, tco_owning_hyperscaler 2025-08):
# $/M = $/GPU-hr / (tok/s/GPU x 3600 / 1e6), tok/s/GPU = tok/s per MW x kW/GPU / 1000.
@pytest.mark.parametrize("gpu,usd_h,tok_s_per_mw,kw,published", [
    ("H100", 1.30, 0.9e6, 1.73, 0.23),   # "At $1.30/hr that is ~$0.23 per M tokens"
    ("B200", 1.95, 2.8e6, 2.17, 0.09),   # "B200 ~6,080 tok/s/GPU, ~$0.09/M"
])
def test_reproduce_inferencex_usd_per_m(gpu, usd_h, tok_s_per_mw, kw, published):
    """Within 10 % of the published $/M figures."""
    tok_s = tok_s_per_mw * kw / 1e3
    assert pricing.cost_usd_per_m_tok(usd_h, tok_s) == pytest.approx(published, rel=0.10)


def test_reproduce_crusoe_gross_margins():
    """InferenceX v2 (tco_params.csv cost_to_serve_upper_bound): cost 0.226/2.955 USD/M vs Crusoe
    1.35/5.40 -> 'up to 83 % and 45 % gross margin' (within 1 point)."""
    assert pricing.gross_margin_frac(1.35, 0.226) == pytest.approx(0.83, abs=0.01)
    assert pricing.gross_margin_frac(5.40, 2.955) == pytest.approx(0.45, abs=0.01)


def test_price_at_interactivity_frontier():
    s = np.array([100.0, 50, 20, 5])
    p = np.array([1.0, 0.3, 0.1, 0.05])
    got = pricing.price_at_interactivity(s, p, [50, 200, 1])
    assert got[0] == pytest.approx(0.3)  # exact point on the frontier
    assert np.isnan(got[1])  # nothing that fast
    assert got[2] == pytest.approx(0.05)  # slower than every point: the cheapest


def test_energy_hand():
    """Hand: 400 W at 200 tok/s = 2 J/token = 0.556 Wh per 1K tokens."""
    assert pricing.energy_j_per_tok(400, 200) == 2.0
    assert pricing.wh_per_1k_tok(2.0) == pytest.approx(2000 / 3600)


# ---------------------------------------------------------------- uncertainty


def test_tornado_sorted_and_utilization_swing_hand():
    """Hand: utilization 0.5..1 at base 1 doubles the price at the low end: swing = base."""
    c = tco.CostInputs.for_hardware("h200")
    t = uncertainty.tornado(c, 460.0, 4000.0)
    df = t.to_frame()
    assert list(df.swing_usd_per_m_tok) == sorted(df.swing_usd_per_m_tok, reverse=True)
    row = df[df.input == "utilization_frac"].iloc[0]
    assert row.usd_per_m_output_tok_at_low == pytest.approx(2 * t.base_usd_per_m_tok)
    assert set(uncertainty.INPUTS) == set(df.input)


def test_monte_carlo_seeded_and_ordered():
    c = tco.CostInputs.for_hardware("h200")
    a = uncertainty.monte_carlo(c, 460.0, 4000.0, n_samples=2000, seed=7)
    b = uncertainty.monte_carlo(c, 460.0, 4000.0, n_samples=2000, seed=7)
    assert a.p50 == b.p50 and a.p5 < a.p50 < a.p95
    base = pricing.price_usd_per_1k_tok(c.cost_usd_per_chip_h(460.0), 4000.0)
    assert a.p5 < base * 1.5 and a.p95 > base  # utilization <= 1 only raises prices


def test_tornado_needs_bottom_up():
    with pytest.raises(ValidationError, match="bottom-up"):
        uncertainty.tornado(tco.TierCost("h200", 1.4), 460.0, 4000.0)


# ---------------------------------------------------------------- disaggregation


def test_disagg_hand():
    """Hand, 1k in / 1k out per request/s: prefill 10,000 tok/s -> 0.1024 P chips; decode D 2,048 tok/s ->
    0.5 D chips; co-located on P (decode 1,024 tok/s) -> 0.1024 + 1.0 chips. Capex P 40k, D 10k:
    disagg 4,096 + 5,000 = 9,096; co-located 44,096 -> capacity ratio 4.85x."""
    r = disagg.compare(10_000, 1_024, 2_048, 40_000, 10_000, 2.0, 1.0, 1024, 1024)
    assert float(r.n_prefill_chips) == pytest.approx(0.1024)
    assert float(r.n_decode_chips) == pytest.approx(0.5)
    assert float(r.capacity_ratio_same_capex) == pytest.approx(44_096 / 9_096)
    # 10x: decode budget 4,409.6 - 4,096 = 313.6 USD for 0.5 chips -> 627.2 USD per D chip
    assert float(r.max_decode_capex_usd_per_chip_for_target) == pytest.approx(627.2)


def test_disagg_impossible_when_prefill_dominates():
    """8k in / 1k out: prefill alone takes more than a tenth of co-located capex -> 10x impossible."""
    r = disagg.compare(10_000, 1_024, 2_048, 40_000, 10_000, 2.0, 1.0, 8192, 1024)
    assert np.isnan(float(r.max_decode_capex_usd_per_chip_for_target))
    assert "impossible" in r.what_must_be_true()


def test_load_profile_units_cancel_without_overflow():
    """Loads are relative: 1e308 nodes at every hour is a flat profile (utilization 1, by hand),
    with no overflow warning; DeepSeek's 8 h at 278 and 16 h at 201.125 nodes give 226.75 / 278."""
    import warnings

    from tokenomics.econ.utilization import from_load_profile

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert from_load_profile([24.0], [1e308]) == 1.0
        assert from_load_profile([12.0, 12.0], [1e308, 1e308]) == 1.0
    assert from_load_profile([8.0, 16.0], [278.0, 201.125]) == pytest.approx(226.75 / 278.0)
