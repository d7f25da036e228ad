"""Tests of the watch metrics library (tokenomics.watch). Expected values say where they come from."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from tokenomics import catalog
from tokenomics.errors import DataError, ValidationError
from tokenomics.watch import _events as ev
from tokenomics.watch import megakernels as mk
from tokenomics.watch import prices as pr
from tokenomics.watch import supernodes as sn

MK_COLS = "date,project,org,hardware,hardware_family,kind,track,level,source,as_of\n"


# ---------------------------------------------------------------- dates and event validation

@pytest.mark.parametrize("text, expected, prec", [
    ("2025-07-28", "2025-07-28", "day"),
    ("2025-06", "2025-06-15", "month"),   # a month is placed on its 15th
    ("2025", "2025-07-01", "year"),       # a year on 1 July
])
def test_parse_date_precisions(text, expected, prec):
    d, p = ev.parse_date(text)
    assert str(d) == expected and p == prec


@pytest.mark.parametrize("bad", [None, float("nan"), "", "June 2025", "2025-13-01"])
def test_parse_date_rejects(bad):
    assert ev.parse_date(bad) is None


def test_decimal_year_roundtrip():
    # 2025-01-01 is 2025.0 by definition; 2024-07-02 is day 183 of 366 -> 2024.5
    assert ev.decimal_year(np.datetime64("2025-01-01"))[()] == 2025.0
    assert ev.decimal_year(np.datetime64("2024-07-02"))[()] == pytest.approx(2024.5)
    d = np.array(["2024-02-29", "2026-09-26"], dtype="datetime64[D]")
    assert (ev.from_decimal_year(ev.decimal_year(d)) == d).all()


def test_unknown_kind_names_row_and_value(tmp_path):
    f = tmp_path / "mk.csv"
    f.write_text(MK_COLS + "2025-01-01,a,b,c,nvidia,research_paper,megakernel,0,s,2025\n"
                           "2025-02-01,a,b,c,nvidia,rumour,megakernel,0,s,2025\n")
    with pytest.raises(DataError, match=r"row 2 \(line 3\): kind must be one of .*, got 'rumour'"):
        mk.load_events(f)


def test_missing_date_names_row(tmp_path):
    f = tmp_path / "mk.csv"
    f.write_text(MK_COLS + "2025-01-01,a,b,c,nvidia,research_paper,megakernel,0,s,2025\n"
                           ",a,b,c,nvidia,port,megakernel,0,s,2025\n")
    with pytest.raises(DataError, match=r"row 2 \(line 3\): missing date"):
        mk.load_events(f)


def test_bad_level_names_row(tmp_path):
    f = tmp_path / "mk.csv"
    f.write_text(MK_COLS + "2025-01-01,a,b,c,nvidia,research_paper,megakernel,7,s,2025\n")
    with pytest.raises(DataError, match=r"row 1 .*level must be <= 4, got 7"):
        mk.load_events(f)


def test_supernode_unknown_event_names_row(tmp_path):
    df = catalog.load("supernode_events").reset_index(drop=True)
    df.loc[4, "event"] = "delivery"  # typo of 'deliveries'
    with pytest.raises(DataError, match=r"row 5 \(line 6\): event must be one of .*, got 'delivery'. Did you mean 'deliveries'"):
        sn.load_events(df)


def test_error_message_is_one_line(tmp_path):
    f = tmp_path / "mk.csv"
    f.write_text(MK_COLS + "2025-02-01,a,b,c,nvidia,rumour,megakernel,0,s,2025\n")
    with pytest.raises(DataError) as info:
        mk.load_events(f)
    assert "\n" not in str(info.value)


# ---------------------------------------------------------------- datasets

@pytest.mark.parametrize("name", ["api_prices", "china_price_cuts", "megakernel_events", "supernode_events"])
def test_watch_datasets_have_provenance_and_dates(name):
    df = catalog.load(name)
    assert df["source"].astype(str).str.strip().ne("").all()
    assert df["as_of"].notna().all()
    assert all(ev.parse_date(d) is not None for d in df["date"])


def test_bundled_event_files_validate():
    assert len(mk.load_events()) == 36   # 36 reference rows minus the 2 undated ones, plus 2 of stop 54
    assert len(sn.load_events()) == 32   # 31 reference rows plus the 2026 HBM-limited estimate


def test_megakernel_levels_follow_the_rule():
    """Level >= 1 needs a major engine (datasets/README.md); levels are 0-4."""
    df = catalog.load("megakernel_events")
    assert df["level"].between(0, 4).all()
    assert (df.loc[df["level"] >= 1, "major_engine"] == "yes").all()


def test_prices_are_per_million():
    # GPT-4 (8k) launched at $30 / $60 per million tokens (OpenAI, 2023-03-14)
    p = catalog.load("api_prices")
    row = p[p["model"] == "GPT-4 (8k)"].iloc[0]
    assert row["input_usd_per_m_tok"] == pytest.approx(30)
    assert row["output_usd_per_m_tok"] == pytest.approx(60)


def test_china_cut_fx_conversion():
    # Qwen-Long 0.02 -> 0.0005 CNY/1K (20 -> 0.5 CNY/M), "-97%" (sina.com.hk 2024-05-21); USD = CNY / fx_cny_per_usd
    c = catalog.load("china_price_cuts")
    row = c[c["model"] == "Qwen-Long"].iloc[0]
    assert row["cut_frac"] == pytest.approx(0.97)
    assert 1 - row["price_after_cny_per_m_tok"] / row["price_before_cny_per_m_tok"] == pytest.approx(0.975)
    assert row["price_after_usd_per_m_tok"] == pytest.approx(0.5 / row["fx_cny_per_usd"])
    assert 6.5 < row["fx_cny_per_usd"] < 7.5  # Fed H.10 range for 2024 (7.15-7.30 in stored releases)


def test_2026_china_rows_are_consistent_and_the_august_repricing_is_a_rise():
    """The nine DeepSeek rows of 2026 (datasets/README.md): cut_frac = 1 - after / before and USD =
    CNY / fx on every one (hand identities); V4-Pro's promotion made list price is 12 -> 3 CNY per
    million input (-75 %, welinux via datasets/README.md); the July 2026 peak-hour prices double
    (cut_frac -1), and cut_events calls them rises."""
    from tokenomics.watch.prices import cut_events

    c = catalog.load("china_price_cuts")
    new = c[c["date"].astype(str) >= "2026"]
    assert len(new) == 18 and (new["provider"] == "DeepSeek").all()
    np.testing.assert_allclose(new["cut_frac"], 1 - new["price_after_cny_per_m_tok"] / new["price_before_cny_per_m_tok"],
                               rtol=1e-5)
    np.testing.assert_allclose(new["price_after_usd_per_m_tok"], new["price_after_cny_per_m_tok"] / new["fx_cny_per_usd"],
                               rtol=1e-6)
    pro = new[(new["model"] == "V4-Pro (promotion made list price)") & (new["token_type"] == "input (cache-miss)")].iloc[0]
    assert (pro["price_before_cny_per_m_tok"], pro["price_after_cny_per_m_tok"]) == (12, 3)
    events = cut_events()
    # 2026-08-16: flat prices became off-peak / peak; V4-Flash output 2 -> 4.5 CNY per M off-peak
    # (+125 %), 9 at peak (+350 %) (ccusage #1643, JavaGuide #2906, quoting DeepSeek's pricing page)
    peak = events[(events["region"] == "china") & events["model_after"].str.contains("peak hours")]
    assert len(peak) == 2 and (peak["direction"] == "rise").all() and np.allclose(peak["change_frac"], 3.5)
    assert (peak["date_precision"] == "day").all() and (peak["date"] == "2026-08-16").all()
    off = events[(events["model_after"] == "V4-Flash (off-peak)") & (events["token_type"] == "output")].iloc[0]
    assert off["change_frac"] == pytest.approx(4.5 / 2 - 1)
    # 2026-09-10: V4.1-Flash replaces it at 0.02 / 1 / 4 CNY per M off-peak (MeteorNOX #95 via eastmoney)
    cut = events[events["date"] == "2026-09-10"].set_index("token_type")["change_frac"]
    assert cut.to_dict() == pytest.approx({"output": 4 / 4.5 - 1, "input (cache-miss)": 1 / 1.5 - 1,
                                           "cache-hit input": 0.02 / 0.05 - 1}, rel=1e-5)


# ---------------------------------------------------------------- metric 1: prices

def _synthetic_prices(factor_per_year: float, n: int = 6) -> pd.DataFrame:
    years = 2020 + np.arange(n)
    price = 0.01 / factor_per_year ** np.arange(n)
    return pd.DataFrame({
        "date": [f"{y}-01-01" for y in years], "provider": "P", "model": [f"m{i}" for i in range(n)],
        "line": "x", "tier": "frontier", "size_class": "100b+", "price_kind": "list",
        "input_usd_per_m_tok": price, "output_usd_per_m_tok": price, "blended_usd_per_m_tok": price,
        "source": "synthetic", "as_of": [f"{y}" for y in years],
    })


@pytest.mark.parametrize("factor", [2.0, 10.0, 0.5])
def test_decline_factor_recovers_exact_exponential(factor):
    """Prices that fall exactly `factor`x per year give decline_factor_per_year == factor (0.5 = doubling)."""
    r = pr.decline_rates(_synthetic_prices(factor), by="tier").iloc[0]
    # calendar years are 365 or 366 days, so a 1-Jan series is exponential to within 0.1 %
    assert r["decline_factor_per_year"] == pytest.approx(factor, rel=2e-3)
    assert r["decline_factor_lo"] <= r["decline_factor_per_year"] <= r["decline_factor_hi"]


def test_decline_rates_too_few_points_is_nan():
    r = pr.decline_rates(_synthetic_prices(2.0, n=2), by="tier").iloc[0]
    assert math.isnan(r["decline_factor_per_year"]) and "fewer than" in r["note"]


def test_decline_rates_bad_by():
    with pytest.raises(ValidationError):
        pr.decline_rates(by="vendor")


def test_o3_cut_is_80_percent():
    """o3 launch $10/$40 -> $2/$8 per Mtok; 3:1 blended 17.5 -> 3.5 = -80 % (aitoolrate.com, 2025)."""
    e = pr.cut_events()
    row = e[(e["line"] == "o3")].iloc[0]
    assert row["change_frac"] == pytest.approx(-0.8)
    assert row["direction"] == "cut"


def test_price_rises_are_kept():
    """Gemini 2.5 Flash $0.30/$2.50 -> 3.5 Flash $1.5/$9 per Mtok: blended 0.85 -> 3.375 = +297 % (simonw/llm-prices)."""
    e = pr.cut_events()
    row = e[(e["model_after"] == "Gemini 3.5 Flash")].iloc[0]
    assert row["change_frac"] == pytest.approx(3.375 / 0.85 - 1)
    assert row["direction"] == "rise"


def test_real_decline_rate_is_positive_and_bounded():
    """Pooled 100B+ list prices fell between 1x and 10x a year (a16z 10x/yr is for constant capability)."""
    r = pr.decline_rates(by="all", size_class=pr.SIZE_100B).iloc[0]
    assert 1.0 < r["decline_factor_per_year"] < 10.0
    assert r["n"] >= 20


def test_forecast_price_interval_brackets_median():
    f = pr.forecast_price(years_ahead=1.0)
    assert f["lo"] < f["usd_per_m_tok"] < f["hi"]


def test_cost_floor_never_invents_a_number():
    fl = pr.cost_floor()
    assert set(fl["system_class"]) == {"sd200-class", "gb200-class"}
    pending = fl["status"].str.startswith(pr.PENDING)
    assert fl.loc[pending, "cost_usd_per_m_tok"].isna().all()
    assert (fl.loc[~pending, "cost_usd_per_m_tok"] > 0).all()


# ---------------------------------------------------------------- metric 2: megakernels

def test_level_time_hand_calculation():
    # L = 4/(1+exp(-k(t-t50))) reaches 2.5 at t50 - ln(4/2.5-1)/k = t50 + ln(5/3)/k
    assert mk.level_time(3, 1.0, 2030.0) == pytest.approx(2030.0 + math.log(5 / 3))
    assert mk.level_time(4, 2.0, 2030.0) == pytest.approx(2030.0 + math.log(7) / 2)


def test_fastest_rate_from_cuda_graph_track():
    """vLLM piecewise graphs (level 2, 2024-11-11) -> full graphs default (level 3, 2025-09-23): k = 1.0217/dt."""
    e = mk.load_events()
    dt = float(ev.decimal_year(np.datetime64("2025-09-23"))[()] - ev.decimal_year(np.datetime64("2024-11-11"))[()])
    assert mk.fastest_rate_per_year(e) == pytest.approx(math.log((4 / 1.5 - 1) / (4 / 2.5 - 1)) / dt)


def test_adoption_index_is_running_max():
    idx = mk.adoption_index()
    for _, sub in idx.groupby("family"):
        assert (np.diff(sub["index_level"].to_numpy()) >= 0).all()
    nv = idx[idx["family"] == "nvidia"]
    # the vLLM megakernel feature request (issue #18939, 2025-05-30) is the first level-1 event
    assert idx["date"].dtype.kind == "M"  # datetime64
    assert nv.loc[nv["index_level"] >= 1, "date"].iloc[0] == np.datetime64("2025-05-30")


def _synthetic_adoption(k: float = 1.0, t50: float = 2027.0) -> pd.DataFrame:
    rows = []
    for level in range(0, 4):
        t = mk.level_time(level, k, t50) if level else t50 - 3.0
        for j in range(3):  # three events per level, a month apart
            d = ev.from_decimal_year(t + j / 12)
            rows.append({"date": str(d), "project": f"p{level}{j}", "org": "o", "hardware": "h",
                         "hardware_family": "nvidia", "kind": "port", "track": "megakernel", "level": level,
                         "source": "synthetic", "as_of": str(d)})
    return pd.DataFrame(rows)


def test_fit_recovers_synthetic_level3_date():
    """Events placed where a k=1/yr logistic crosses each level: the fit puts level 3 near 2027.51."""
    true3 = mk.level_time(3, 1.0, 2027.0)
    f = mk.fit_adoption(_synthetic_adoption(), n_boot=0)
    assert f.level3_year == pytest.approx(true3, abs=0.35)
    assert f.k_bounds[0] <= f.k_per_year <= f.k_bounds[1]


def test_fit_bootstrap_interval_is_exact_and_the_same_for_every_seed():
    """The bootstrap is exact, so no seed or resample count moves the dates. Drawn resamples did:
    level 3's 95th percentile read 2030, 2036 or 2041 by seed, even at 1,000 resamples."""
    a = mk.fit_adoption(n_boot=30, seed=1)
    b = mk.fit_adoption(n_boot=1000, seed=3)
    assert a.boot_method.startswith("exact") and a.boot_method == b.boot_method
    for f in ("level3_lo", "level3_hi", "level4_lo", "level4_hi", "slowest_rate_frac"):
        assert getattr(a, f) == getattr(b, f), f
    assert a.level3_lo <= a.level3_year <= a.level3_hi
    assert a.level3_year < a.level4_year
    assert a.latest_level == 1 and a.latest_date == "2025-05-30"
    # the late end (2041) is not the rate bound's: it comes from the resamples whose first RFC is
    # the newest (row 26, 2026-09-03), a rise in the window's last month fitted with a far midpoint
    assert a.level3_hi > 2040 and "2026-09-03" in a.late_end_note and "(9% of the bootstrap)" in a.late_end_note


def test_bootstrap_classes_hand_calculation():
    """Three events, the middle one at level 1, resampled 3 of 3 with replacement. By hand:
    P(first event 0, first level-1 event 1) = P(0 and 1 drawn) = 1 - 2 (2/3)^3 + (1/3)^3 = 12/27;
    (0, none) = P(0 drawn, 1 not) = (2/3)^3 - (1/3)^3 = 7/27; (1, 1) = 7/27; (2, none) = (1/3)^3."""
    members, prob = mk.bootstrap_classes([2025.0, 2025.5, 2026.0], [0, 1, 0])
    got = {(int(m[0]), int(m[1])): p for m, p in zip(members, prob)}
    assert got == pytest.approx({(0, 1): 12 / 27, (0, -1): 7 / 27, (1, 1): 7 / 27, (2, -1): 1 / 27})
    assert (members[:, 2:] == -1).all()  # nothing at level 2 or above
    assert mk.bootstrap_classes([2025.0, 2025.5, 2026.0], [0, 1, 0], max_classes=2) is None
    for t, lv, msg in (([2025.0, 2026.0], [0], "one level per date"), ([2025.0, np.nan], [0, 1], "finite"),
                       ([2025.0, 2026.0], [0, 5], "levels must be integers 0-4")):
        with pytest.raises(ValidationError, match=msg):
            mk.bootstrap_classes(t, lv)


def test_bootstrap_classes_match_drawn_resamples():
    """On the bundled megakernel track, 40,000 drawn resamples land in each class with the exact
    probability (within 4.5 standard errors; classes that appear in the draws are all enumerated)."""
    ev = mk.load_events()
    sub = ev[ev["track"] == "megakernel"]
    t, lv = sub["t_year"].to_numpy(float), sub["level"].to_numpy(int)
    members, prob = mk.bootstrap_classes(t, lv)
    assert prob.sum() == pytest.approx(1.0) and (prob > 0).all()
    drawn, share = mk._sampled_classes(t, lv, 40_000, seed=0)
    exact = {tuple(m): p for m, p in zip(members, prob)}
    assert set(map(tuple, drawn)) <= set(exact)
    freq = {tuple(m): q for m, q in zip(drawn, share)}
    for key, p in exact.items():
        se = np.sqrt(p * (1 - p) / 40_000)
        assert abs(freq.get(key, 0.0) - p) <= 4.5 * se + 1e-12, key


def test_fit_falls_back_to_drawn_resamples_beyond_the_class_limit(monkeypatch):
    monkeypatch.setattr(mk, "MAX_EXACT_CLASSES", 3)
    f = mk.fit_adoption(n_boot=40, seed=2)
    assert f.boot_method.startswith("40 drawn resamples") and "seed 2" in f.boot_method
    assert f.level3_lo <= f.level3_year <= f.level3_hi


def test_fit_insufficient_family():
    f = mk.fit_adoption(family="tpu", n_boot=0)
    assert "insufficient" in f.status and math.isnan(f.level3_year)


def test_fit_unknown_family_suggests():
    with pytest.raises(Exception, match="Did you mean 'nvidia'"):
        mk.fit_adoption(family="nvdia", n_boot=0)


def test_expected_speedup_shrinks_with_batch():
    """Megakernel gains shrink as batch grows (Cohere: 1.58x at BS=1 -> ~1.3x at BS=8, megakernel_events.csv)."""
    sp = mk.expected_speedup(batch=(1, 256))
    if sp["status"].iloc[0] != "modelled":
        pytest.skip("performance core not available")
    assert sp["speedup"].iloc[0] > sp["speedup"].iloc[1] >= 0.99


# ---------------------------------------------------------------- metric 3: supernodes

def test_yield_projection_hand_calculation():
    """Logit line through 0.2 (2024-09-15) and 0.4 (2025-02-26) reaches 0.6 after
    (logit .6 - logit .4)/(logit .4 - logit .2) = 0.8109/0.9808 of the gap, past 2025-02-26."""
    y = sn.yield_trajectory()
    proj = y[y["kind"] == "projection"].iloc[0]
    t1 = ev.decimal_year(np.datetime64("2024-09-15"))[()]
    t2 = ev.decimal_year(np.datetime64("2025-02-26"))[()]
    lg = lambda p: math.log(p / (1 - p))  # noqa: E731
    expected = t2 + (lg(0.6) - lg(0.4)) / (lg(0.4) - lg(0.2)) * (t2 - t1)
    assert ev.decimal_year(np.datetime64(proj["date"]))[()] == pytest.approx(expected, abs=2 / 365)
    assert proj["date_lo"] <= proj["date"] <= proj["date_hi"]


def test_production_ranges_keep_conflict():
    # 2026: ~300k (SemiAnalysis, HBM-limited) vs ~600k 910C (Bloomberg 2025-09-30)
    r = sn.production_ranges().set_index("year")
    assert r.loc[2026, "low_chips"] == 300000 and r.loc[2026, "high_chips"] == 600000


def test_implied_capacity_hand_calculation():
    # 300 systems x 384 NPUs x 1943 tok/s (arXiv 2506.12708) x 86400 s = 1.9339e13 tokens/day
    assert sn.implied_capacity(300, 1943.0) == pytest.approx(300 * 384 * 1943 * 86400)
    with pytest.raises(ValidationError):
        sn.implied_capacity(-1, 1943.0)


def test_delivery_ramp_bounds_and_order():
    r = sn.delivery_ramp(n_draws=60, seed=3)
    fc = r.forecast
    assert (fc["units_lo"] <= fc["units_p50"]).all() and (fc["units_p50"] <= fc["units_hi"]).all()
    late = fc[fc["t_year"] >= 2027]
    # the ceiling K is drawn in [300 observed, (100k + 600k) 910C / 384 = 1823]
    assert r.k_range == pytest.approx((300.0, 700000 / 384))
    assert (late["units_hi"] <= 700000 / 384 + 1).all() and (late["units_lo"] >= 300 * 0.99).all()
    again = sn.delivery_ramp(n_draws=60, seed=3)
    assert again.forecast.equals(fc)


def test_measured_rate_row():
    tps, row = sn.measured_tok_per_s_per_chip()
    assert tps == 1943.0 and row == 10


def test_lag_check_consistent():
    """lags is True exactly when the observed CI upper bound is below the modelled cost decline."""
    w = pr.price_watch()
    lag = w.lag
    if lag["lags"] is None:
        assert lag["status"].startswith(pr.PENDING) or lag["status"].startswith("no modelled")
    else:
        assert lag["modelled_cost_decline_factor_per_year"] > 0
        assert lag["lags"] == (lag["observed_hi"] < lag["modelled_cost_decline_factor_per_year"])
    hr = w.headroom
    ok = hr["status"] == "modelled"
    # headroom = output list price / modelled cost floor (same floor for every row)
    assert (hr.loc[ok, "headroom_x"] == hr.loc[ok, "list_usd_per_m_output_tok"] / hr.loc[ok, "cost_floor_usd_per_m_tok"]).all()
