"""A daily history is averaged to calendar-month means before it is fitted (the forecast's step
is a month); weekly and sparser series, such as every bundled one, are kept as they are."""

import warnings

import numpy as np
import pandas as pd

from tokenomics.errors import TokenomicsWarning
from tokenomics.forecast.history import check_history, load_history, monthly_means


def test_daily_counts_become_month_means_by_hand():
    days = pd.date_range("2025-01-01", "2025-03-31", freq="D")  # 31 + 28 + 31 days
    vol = np.where(days.month == 1, 1e9, np.where(days.month == 2, 2e9, 4e9))
    vol[0] = 32e9  # one spike in January: its mean is (32 + 30 x 1) / 31 = 2e9
    d = pd.DataFrame({"series": "u", "date": days, "tokens_per_day": vol})
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        out = check_history(d)
    assert [str(x.date()) for x in out["date"]] == ["2025-01-15", "2025-02-15", "2025-03-15"]
    assert np.allclose(out["tokens_per_day"], [2e9, 2e9, 4e9], rtol=1e-12)
    msgs = [str(x.message) for x in w if issubclass(x.category, TokenomicsWarning)]
    assert len(msgs) == 1 and "u (90 to 3)" in msgs[0]


def test_weekly_and_sparser_series_are_kept():
    weeks = pd.DataFrame({"series": "w", "date": pd.date_range("2025-01-05", periods=20, freq="7D"),
                          "tokens_per_day": np.arange(1, 21) * 1e9})
    assert len(monthly_means(check_history(weeks))) == 20
    h = load_history()
    assert monthly_means(h).equals(h)  # the bundled series (OpenRouter's are weekly at most)


def test_a_mixed_history_averages_only_its_daily_series():
    daily = pd.DataFrame({"series": "d", "date": pd.date_range("2025-01-01", periods=59, freq="D"),
                          "tokens_per_day": 1e9})
    monthly = pd.DataFrame({"series": "m", "date": ["2025-01", "2025-02", "2025-03"], "tokens_per_day": 1e9})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = check_history(pd.concat([daily, monthly], ignore_index=True))
    assert out.groupby("series").size().to_dict() == {"d": 2, "m": 3}
