"""The measurement model of token-volume observations: kinds, scales, level shifts at definition changes."""

import numpy as np
import pandas as pd
import pytest

from tokenomics.dates import decimal_year
from tokenomics.errors import DataError
from tokenomics.forecast.history import check_history, load_history, series
from tokenomics.forecast.measurement import (kind_scales, level_shifts, observations, on_latest_definition,
                                             scale_dec)


def _line(defs, jump=0.5, kinds=None):
    """Yearly points on log10 y = 12 + t (t years from the first), the ones of definition "b" ``jump`` decades up."""
    dates = ["2023-07-15", "2024-07-15", "2025-07-15", "2026-07-15"][:len(defs)]
    t = decimal_year(dates) - decimal_year(dates[:1])[0]
    y = 12 + t + np.where(np.array(defs) == "b", jump, 0.0)
    return check_history(pd.DataFrame({"series": "s", "date": dates, "tokens_per_day": 10.0 ** y,
                                       "definition": defs, "kind": kinds or ["reported"] * len(defs)}))


def test_a_jump_at_a_definition_change_is_estimated_as_a_level_shift_not_growth():
    # hand calculation: three points on a line and a fourth 0.5 decades above it -> shift 0.5
    h = _line(["a", "a", "a", "b"])
    s = level_shifts(h)
    assert len(s) == 1 and bool(s["applied"].iloc[0])
    assert s["shift_dec"].iloc[0] == pytest.approx(0.5, abs=1e-9)
    assert s["n_before"].iloc[0] == 2  # the older definition's last year (and at least two points)
    adj = on_latest_definition(h)
    # the older points are moved onto the newer definition: one straight line 0.5 decades up
    t = decimal_year(adj["date"]) - decimal_year(["2023-07-15"])[0]
    assert np.log10(adj["tokens_per_day"]).to_numpy() == pytest.approx(12.5 + t, abs=1e-9)
    assert adj["tokens_per_day_published"].to_numpy() == pytest.approx(h["tokens_per_day"].to_numpy())


def test_the_shift_interval_is_at_least_the_measurement_scales():
    # exact points leave no residual: the interval comes from the kinds' scales alone
    s = level_shifts(_line(["a", "a", "a", "b"], kinds=["estimate"] * 4))
    half = (s["shift_hi95_dec"] - s["shift_lo95_dec"]).iloc[0] / 2
    assert half > 1.96 * kind_scales()["estimate"]  # the shift is a difference of two noisy levels


def test_one_older_observation_cannot_set_a_shift_and_the_series_stays_as_published():
    h = _line(["a", "b", "b", "b"])
    s = level_shifts(h)
    assert not bool(s["applied"].iloc[0]) and "1 observation" in s["why"].iloc[0]
    assert on_latest_definition(h) is h


def test_a_history_without_definitions_is_unchanged():
    h = check_history(pd.DataFrame({"series": "s", "date": ["2024-01", "2025-01", "2026-01"],
                                    "tokens_per_day": [1e9, 1e10, 1e11]}))
    assert on_latest_definition(h) is h
    assert level_shifts(h).empty
    assert scale_dec(h) == pytest.approx([kind_scales()["reported"]] * 3)


def test_scales_of_joined_kinds_add_in_quadrature():
    k = kind_scales()
    got = scale_dec(pd.DataFrame({"kind": ["lower_bound+secondary", "reported", ""]}))
    assert got == pytest.approx([np.hypot(k["lower_bound"], k["secondary"]), k["reported"], k["reported"]])


def test_an_unknown_kind_is_one_line_naming_the_row_and_the_kinds():
    with pytest.raises(DataError, match=r"series 's' dated 2024-07-15: .*kind 'lower-bound'.*lower_bound"):
        _line(["a", "a", "a"], kinds=["reported", "lower-bound", "reported"])


def test_china_s_500_trillion_is_a_new_definition_and_its_jump_a_shift():
    # the CCTV 500 T figure (June 2026) is 3.6x the NDA's 140 T of March while Doubao, the largest
    # platform, grew 1.5x: the bundled history marks it as another definition
    s = level_shifts(load_history())
    row = s[s["series"] == "china"].iloc[0]
    assert row["date"] == pd.Timestamp("2026-06-15") and bool(row["applied"])
    growth_dec = np.log10(500 / 140)  # what reading the jump as growth would take in three months
    assert 0 < row["shift_lo95_dec"] < row["shift_dec"] < row["shift_hi95_dec"] < growth_dec
    c = on_latest_definition(series("china"))
    assert c["tokens_per_day"].iloc[-1] == 5e14  # the latest definition is the level
    assert c["level_shift_dec"].iloc[:-1].to_numpy() == pytest.approx([row["shift_dec"]] * (len(c) - 1))


def test_a_forecast_as_of_before_the_change_sees_no_shift():
    c = on_latest_definition(series("china", fit_through="2026-03"))
    assert "level_shift_dec" not in c.columns  # one definition through March 2026


def test_no_bundled_part_exceeds_its_whole():
    o = observations(load_history())
    shared = o[o["whole"] != ""]
    assert shared["share_of_whole_frac"].notna().sum() >= 10
    assert not shared["exceeds_whole"].any(), shared[shared["exceeds_whole"]]
    assert set(o["kind"].str.split("+").explode()) <= set(kind_scales())


def test_cli_show_measurement_json_is_every_observation_with_its_shift():
    import json

    from typer.testing import CliRunner

    from tokenomics.cli import app

    res = CliRunner().invoke(app, ["forecast", "--show", "measurement", "--series", "china", "--format", "json"])
    assert res.exit_code == 0, res.output
    rows = json.loads(res.stdout)
    assert [r["date"] for r in rows][-1] == "2026-06-15"
    assert rows[0]["tokens_per_day_published"] == 1e11
    assert rows[0]["level_shift_dec"] == pytest.approx(level_shifts(load_history())["shift_dec"].iloc[0])
    assert rows[-1]["kind"] == "lower_bound+secondary"


def test_cli_an_unknown_kind_in_an_added_history_is_exit_2_in_one_line(tmp_path):
    from tokenomics.cli import main

    p = tmp_path / "h.csv"
    p.write_text("series,date,tokens_per_day,source,kind\nx,2025-01,1e12,me,reported\nx,2025-06,2e12,me,over\n"
                 "x,2026-01,4e12,me,reported\n")
    with pytest.raises(SystemExit) as exc:
        main(["forecast", "--add-history", str(p), "--series", "x"])
    assert exc.value.code == 2


def test_cli_forecast_caption_says_a_series_was_moved_onto_its_latest_definition():
    from typer.testing import CliRunner

    from tokenomics.cli import app

    shift = level_shifts(load_history()).set_index("series").loc["china", "shift_dec"]
    res = CliRunner().invoke(app, ["forecast", "-s", "china"], env={"COLUMNS": "400"})
    assert res.exit_code == 0, res.output
    assert f"china's figures through 2026-03 moved {shift:+.2f} decades" in " ".join(res.output.split())
    res = CliRunner().invoke(app, ["forecast", "-s", "google"], env={"COLUMNS": "400"})
    assert "latest definition" not in res.output  # one definition: nothing moved
