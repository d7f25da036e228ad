"""The watch's modelled cost decline reported at several speeds per user, with and without
speculative decoding (``tokenomics.watch.prices.cost_trend``): the figure swings with the speed sold,
so it is shown with that assumption.

Each expected value says where it comes from (a hand calculation or the floor priced directly).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from tokenomics.watch import prices as pr
from tokenomics.watch.dashboard import _trend_text


def _rec(system, cost, year, basis="bottom-up", status="modelled"):
    return {"system": system, "cost_usd_per_m_tok": cost, "year": year, "cost_basis": basis, "status": status}


def test_cost_decline_factor_hand():
    # hand: $4.0 -> $0.1 per M over 2024 -> 2026: (4.0 / 0.1) ** (1 / 2) = 6.3246
    f, why = pr.cost_decline_factor(_rec("old", 4.0, 2024), _rec("new", 0.1, 2026))
    assert why == "" and f == pytest.approx(40 ** 0.5)
    f, why = pr.cost_decline_factor(_rec("old", 4.0, 2024), _rec("new", 0.1, 2026, basis="rental-3yr"))
    assert np.isnan(f) and "cost bases differ" in why
    f, why = pr.cost_decline_factor(_rec("old", 4.0, 2024, status="pending"), _rec("new", 0.1, 2026))
    assert np.isnan(f) and "no modelled decline" in why
    f, why = pr.cost_decline_factor(_rec("old", 4.0, 2026), _rec("new", 0.1, 2026))  # same year: no rate
    assert np.isnan(f)


def test_default_trend_speeds_and_specs():
    # DeepSeek's fleet average (20-22), InferenceX's cost point (35), InferenceX's B200 quote (50)
    assert pr.COST_TREND_SPEEDS == (20.0, 35.0, 50.0)
    assert pr.COST_TREND_SPECS == (None, "mtp")


@pytest.fixture(scope="module")
def trend():
    """Llama 3.1 8B from a DGX H100 (2022) to a DGX B200 (2025), 20 and 35 tok/s (small, to stay fast)."""
    return pr.cost_trend("llama-3.1-8b", speeds=(20.0, 35.0), specs=(None,), systems=(("b200-class", "dgx-b200"),),
                         base_system="dgx-h100")


def test_cost_trend_rows_reproduce_the_floor_and_the_decline(trend):
    assert list(trend["tok_per_s_per_user"]) == [20.0, 35.0] and set(trend["spec"]) == {"none"}
    for row in trend.itertuples():
        base = pr._system_cost("base", "dgx-h100", "llama-3.1-8b", "engine", row.tok_per_s_per_user)
        floor = pr._system_cost("b200-class", "dgx-b200", "llama-3.1-8b", "engine", row.tok_per_s_per_user)
        assert (base["year"], floor["year"]) == (2022, 2025)  # datasets/accelerators.csv launch years
        # hand: the decline factor is (base cost / floor cost) ** (1 / years between the chips' launches)
        want = (base["cost_usd_per_m_tok"] / floor["cost_usd_per_m_tok"]) ** (1 / 3)
        assert row.modelled_cost_decline_factor_per_year == pytest.approx(want)
        assert row.base_usd_per_m_output_tok == pytest.approx(base["cost_usd_per_m_tok"])
        assert row.floor_usd_per_m_output_tok == pytest.approx(floor["cost_usd_per_m_tok"])
    assert trend["status"].str.startswith("modelled: dgx-h100 (2022) -> dgx-b200 (2025)").all()


@pytest.mark.slow
def test_deepseek_trend_swings_with_speed():
    """DeepSeek-V3, DGX H200 -> GB200 NVL72: 8 x H200 serves 20 tok/s/user in the wide-EP layout but
    not 35, so the modelled decline is several times smaller at 20 (5.4x vs 44x a year today)."""
    t = pr.cost_trend(speeds=(20.0, 35.0), specs=(None,), systems=(("gb200-class", "gb200-nvl72"),))
    f = t["modelled_cost_decline_factor_per_year"].to_numpy()
    assert f[0] < f[1] / 3
    lag_floor = pr.cost_floor(systems=(("gb200-class", "gb200-nvl72"),)).iloc[0]
    assert t.iloc[1]["floor_usd_per_m_output_tok"] == pytest.approx(lag_floor["cost_usd_per_m_tok"])


def test_trend_text_names_each_speed_and_spec():
    t = pd.DataFrame({"tok_per_s_per_user": [20.0, 35.0, 20.0, 35.0], "spec": ["none", "none", "mtp", "mtp"],
                      "modelled_cost_decline_factor_per_year": [5.43, 44.26, 3.31, np.nan]})
    text = _trend_text(t)
    assert "5.4x/44.3x a year at 20/35 tok/s/user" in text
    assert "3.3x/n/a a year at 20/35 tok/s/user with mtp" in text
    assert _trend_text(None) == "" and _trend_text(t.iloc[:0]) == ""
