"""Numbers and column names as the report writes them (tokenomics._display.fmt_number and
display_name), and the log-axis tick labels of tokenomics.plot."""

import doctest

import numpy as np
import pytest

from tokenomics import _display, plot
from tokenomics._display import display_name, fmt_number


@pytest.mark.parametrize("x, text", [
    (3.57e5, "357,000"),          # the demand table's GPUs: was 3.57e+05
    (356_789.0, "357,000"),       # three significant digits past 100,000
    (0.14234, "0.142"),           # a price per million tokens
    (0.0000731, "0.0000731"),     # small, still without e-notation
    (12.345, "12.3"),
    (1024.0, "1,024"),            # whole token counts below 100,000 exact
    (2048, "2,048"),              # integers exact
    (9.99e11, "999,000,000,000"),  # the last number below 10^12 without a power of ten
    (1.61e17, "1.61×10¹⁷"),       # above 10^12: a power of ten, not e+17
    (-0.05, "-0.05"),
    (float("nan"), ""),
    (True, "yes"),
])
def test_fmt_number(x, text):
    assert fmt_number(x) == text


def test_fmt_number_never_writes_e_notation():
    xs = np.concatenate([np.logspace(-9, 11.99, 400), -np.logspace(-9, 11.99, 50)])
    assert not [fmt_number(float(x)) for x in xs if "e" in fmt_number(float(x)).lower()]


@pytest.mark.parametrize("name, text", [
    ("usd_per_m_output_tok", "USD per M output tokens"),
    ("tok_per_s_per_chip", "tok/s per chip"),
    ("cost_usd_per_chip_h", "cost (USD per chip-hour)"),
    ("n_chips_hi_80", "GPUs, 80 % high"),
    ("breakeven_utilization_frac", "break-even utilization (%)"),
    ("price_usd_per_m_tok_p95", "USD per M output tokens, P95"),
    ("layout_at_50_tok_s_user", "layout at 50 tok/s per user"),
    ("colo_usd_per_kw_month", "colocation (USD per kW-month)"),
    ("capex_disagg_usd", "capex disagg (USD)"),
])
def test_display_name(name, text):
    assert display_name(name) == text


def test_display_names_have_no_underscores():
    names = ["some_new_thing_frac", "x_y_z", "a_usd_per_m_b_tok", "energy_twh", "life_years", "ttft_s"]
    assert not [display_name(n) for n in names if "_" in display_name(n)]


@pytest.mark.parametrize("value, usd, text", [(0.1, True, "$0.10"), (0.05, True, "$0.05"), (2.0, True, "$2"),
                                              (1000.0, True, "$1,000"), (20.0, False, "20"), (5000.0, False, "5,000")])
def test_tick_labels(value, usd, text):
    assert plot.tick_label(value, usd=usd) == text


def test_examples_in_docstrings():
    assert doctest.testmod(_display).failed == 0
    assert doctest.testmod(plot).failed == 0
