"""The price names the capital cost behind its chip-hour and where it comes from."""

import math

import pytest

from tokenomics import chain
from tokenomics.econ import tco


def test_bottom_up_price_carries_its_capex_and_source():
    row = chain.price("h200", "llama-3.1-8b").to_frame().iloc[0]
    ci = tco.CostInputs.for_hardware("h200")
    # hand: the H200's server price per chip over (1 - the network's share of capex), tco_params.csv
    server = tco.param("server_price_usd_per_chip", "h200")
    assert row["capex_usd"] == pytest.approx(server / (1 - tco.param("network_capex_frac"))) == ci.capex_usd
    assert row["capex_source"].startswith("server price per chip")


def test_a_flat_cost_has_no_capex():
    row = chain.price("h200", "llama-3.1-8b", cost=2.0).to_frame().iloc[0]
    assert math.isnan(row["capex_usd"]) and row["capex_source"] == ""


def test_given_capex_says_so():
    ci = tco.CostInputs.for_hardware("h200", capex_usd=30_000.0)
    row = chain.price("h200", "llama-3.1-8b", cost=ci).to_frame().iloc[0]
    assert row["capex_usd"] == 30_000.0 and row["capex_source"] == "given"
