"""The one calendar parser behind the demand history, the watch's event files and the market table."""

from __future__ import annotations

import doctest

import numpy as np
import pandas as pd
import pytest

from tokenomics import dates
from tokenomics.dates import decimal_year, from_decimal_year, parse_date


def test_docstring_examples_are_true():
    assert doctest.testmod(dates).failed == 0


@pytest.mark.parametrize("text, day, precision", [
    ("2025-06-30", "2025-06-30", "day"),
    ("2025-06", "2025-06-15", "month"),   # a month stands for its middle (the 15th)
    ("2025", "2025-07-01", "year"),       # a year stands for 1 July
    (" 2024-02-29 ", "2024-02-29", "day"),
])
def test_parse_date_reads_day_month_and_year(text, day, precision):
    assert parse_date(text) == (np.datetime64(day, "D"), precision)


@pytest.mark.parametrize("bad", ["", "2025-13", "2025-02-30", "2025/06/30", "soon", None, float("nan")])
def test_parse_date_returns_none_for_what_is_no_date(bad):
    assert parse_date(bad) is None


def test_decimal_year_by_hand_and_round_trip():
    # 2024 is a leap year: 31 December is day 366, (366 - 1) / 366; 1 July 2025 is day 182 of 365
    got = decimal_year(["2024-12-31", "2025-01-01", "2025-07-01"])
    np.testing.assert_allclose(got, [2024 + 365 / 366, 2025.0, 2025 + 181 / 365])
    same = decimal_year(pd.DatetimeIndex(["2024-12-31", "2025-01-01", "2025-07-01"]))
    np.testing.assert_array_equal(got, same)     # pandas and ISO text give the same years
    back = from_decimal_year(got)
    assert [str(d) for d in back] == ["2024-12-31", "2025-01-01", "2025-07-01"]
    assert np.ndim(decimal_year("2025-07-01")) == 0   # one date, one number


def test_forecast_and_watch_read_dates_through_the_one_parser():
    from tokenomics.forecast import history
    from tokenomics.watch import _events

    assert _events.parse_date is parse_date and history.decimal_year is decimal_year
    assert history.parse_date("2025-06") == pd.Timestamp("2025-06-15")
    assert str(history.date_of_decimal_year(decimal_year(["2026-06-15"]))[0].date()) == "2026-06-15"
