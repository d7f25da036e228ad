"""Owning cost reconciled: bottom-up $/chip-hour vs InferenceX tiers vs rentals, and the gap's driver."""

from __future__ import annotations

import json

import numpy as np
import pytest
from typer.testing import CliRunner

from tokenomics.cli import app, main
from tokenomics.econ import tco


def test_h800_has_a_reported_bottom_up_capex():
    # tco_params.csv: 8x H800 server CNY 2.3 M / 8 / 7.192 CNY/USD = USD 39,974 per GPU; all-in with
    # the 19 % network share: 39,974 / (1 - 0.19) = 49,350.6 (hand calculation)
    assert tco.has_capex("h800")
    assert tco.CostInputs.for_hardware("h800").capex_usd == pytest.approx(39974 / 0.81, rel=1e-6)


@pytest.mark.parametrize("name", ["capex_usd", "life_years"])
def test_value_to_match_reproduces_the_tier(name):
    d = tco.gap_drivers(["h100-sxm"]).set_index("input")
    row = d.loc[name]
    assert row["reference"] == "hyperscaler-owned"
    # the 2026-07 hyperscaler-owned tier of H100 SXM in tco_params.csv
    assert row["reference_usd_per_chip_h"] == pytest.approx(1.17)
    acc = tco._chip_row("h100-sxm")
    ci = tco.CostInputs.for_hardware("h100-sxm", **{name: float(row["value_to_match"])})
    assert float(ci.cost_usd_per_chip_h(tco.power_at_typical(acc))) == pytest.approx(1.17, rel=1e-6)


def test_utilization_cannot_explain_a_bottom_up_above_the_tier():
    d = tco.gap_drivers(["h100-sxm"]).set_index("input")
    # cost per used hour = cost / utilization >= cost: no utilization <= 1 lowers it
    assert np.isnan(d.loc["utilization_frac", "value_to_match"])
    assert d.loc["utilization_frac", "gap_closed_at_range_frac"] == pytest.approx(0.0)


def test_cost_basis_table_names_a_driver_per_chip():
    t = tco.cost_basis_table().set_index("hardware")
    own = tco.owning_cost_table().set_index("hardware")
    assert t.loc["h100-sxm", "bottom_up_over_reference"] == pytest.approx(own.loc["h100-sxm", "bottom_up_over_hyperscaler"])
    for hw in ("h100-sxm", "h200", "b200"):
        assert t.loc[hw, "main_driver"] in {n for n, _, _ in tco.RECONCILE_INPUTS}
        # the share closed is a fraction of the gap; no single input inside its range closes it
        assert 0 < t.loc[hw, "main_driver_gap_closed_at_range_frac"] < 1
        assert not t.loc[hw, "main_driver_in_range"]
        # every input at its cheap end together does reach below the tier
        assert t.loc[hw, "bottom_up_all_cheap_usd_per_chip_h"] < t.loc[hw, "hyperscaler_owned_usd_per_chip_h"]
    # H800 has no InferenceX tier: reconciled against its rental reference (DeepSeek's USD 2/GPU-h)
    assert t.loc["h800", "reference"] == "rental median"
    assert t.loc["h800", "reference_usd_per_chip_h"] == pytest.approx(2.0)


def test_cli_show_cost_basis_and_bad_show(capsys):
    r = CliRunner().invoke(app, ["watch", "--show", "cost-basis", "--format", "json"])
    assert r.exit_code == 0, r.output
    rows = json.loads(r.stdout)
    assert {"h100-sxm", "h800"} <= {x["hardware"] for x in rows}
    with pytest.raises(SystemExit) as info:
        main(["watch", "--show", "cost-basic"])
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert "Did you mean 'cost-basis'" in err and "Traceback" not in err and err.strip().count("\n") == 0
