"""The headline numbers the README and the guides quote, computed in one place, by group.

``tests/house/test_golden.py`` compares each group of :data:`GROUPS` with ``tests/golden/headline.json``,
so any change to the model that moves a headline figure fails a test until the file is regenerated
(``python tools/golden.py``) and the diff reviewed. The cheap groups (prices, the showdown, the
watch) run in the default test tier; the groups that rescore thousands of published runs or refit
the forecast run in the ``integration`` tier (:data:`SLOW_GROUPS`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

#: Relative tolerance of ``tests/house/test_golden.py``; ``tools/golden.py`` keeps a pinned figure that
#: moved by less than half of it (floating-point noise across numpy, scipy and statsmodels builds).
REL_TOL = 1e-6


def _f(x: Any) -> float:
    return float(np.asarray(x, dtype=float).ravel()[0])


def _prices() -> dict[str, float]:
    from tokenomics import chain

    out: dict[str, float] = {}
    # ---- prices of the README's answers table and the deployments -------------------
    r = chain.price("h200", "llama-3.1-8b", batch=32)
    out["price.h200.llama-3.1-8b.b32.usd_per_m_output_tok"] = _f(r.usd_per_m_output_tok)
    out["price.h200.llama-3.1-8b.b32.usd_per_m_input_tok"] = _f(r.usd_per_m_input_tok)
    out["price.h200.llama-3.1-8b.b32.energy_j_per_tok"] = _f(r.energy_j_per_tok)
    r = chain.price("h200", "llama-3.1-8b", "graph", batch=32, context_tok=1024)
    out["price.h200.llama-3.1-8b.graph.b32.c1024.usd_per_m_output_tok"] = _f(r.usd_per_m_output_tok)
    r = chain.price(system="gb200-nvl72", model="deepseek-v3", batch=32 * 72)
    out["price.gb200-nvl72.deepseek-v3.b2304.usd_per_m_output_tok"] = _f(r.usd_per_m_output_tok)
    out["price.gb200-nvl72.deepseek-v3.b2304.tok_per_s_per_chip"] = _f(r.tok_per_s_per_chip)
    r = chain.price(system="dgx-h200", model="llama-3.1-70b", target_tok_per_s_per_user=40.0, serving="decode")
    out["price.dgx-h200.llama-3.1-70b.target40.batch"] = _f(r.batch)
    out["price.dgx-h200.llama-3.1-70b.target40.usd_per_m_output_tok"] = _f(r.usd_per_m_output_tok)
    # ---- the default serving mode (co-located, the model validate-serving scores): what
    # `tokenomics price` prints with no operating point, and at a target speed
    r = chain.price("h200", "llama-3.1-8b")
    out["price.h200.llama-3.1-8b.colocated.c32.usd_per_m_output_tok"] = _f(r.usd_per_m_output_tok)
    out["price.h200.llama-3.1-8b.colocated.c32.tok_per_s_per_chip"] = _f(r.tok_per_s_per_chip)
    out["price.h200.llama-3.1-8b.colocated.c32.energy_j_per_tok"] = _f(r.energy_j_per_tok)
    r = chain.price(system="dgx-h200", model="llama-3.1-70b", target_tok_per_s_per_user=40.0)
    out["price.dgx-h200.llama-3.1-70b.colocated.target40.concurrency"] = _f(r.concurrency)
    out["price.dgx-h200.llama-3.1-70b.colocated.target40.usd_per_m_output_tok"] = _f(r.usd_per_m_output_tok)
    r = chain.price(system="dgx-h200", model="deepseek-v3", tp=8, ep=8, batch=32)
    out["price.dgx-h200.deepseek-v3.tp8ep8.b32.usd_per_m_output_tok"] = _f(r.usd_per_m_output_tok)
    out["price.dgx-h200.deepseek-v3.tp8ep8.b32.usd_per_m_input_tok"] = _f(r.usd_per_m_input_tok)
    # a speed only a smaller expert group reaches (nine tp8-ep8 replicas on the rack)
    fast = chain.price(model="deepseek-v3", system="gb200-nvl72", target_tok_per_s_per_user=100, margin_frac=0.0,
                       serving="decode")
    out["target_speed.deepseek-v3.gb200-nvl72.100_tok_s.usd_per_m_output_tok"] = _f(fast.usd_per_m_output_tok)
    # ---- money at non-default inputs: a share of hours sold, a margin, a long-prompt mix with
    # cache hits, and the all-in convention (each input a mutant of the cost arithmetic would move)
    for conv in ("decode-only", "all-in"):
        r = chain.price("h200", "llama-3.1-8b", batch=32, workload="openrouter-2025", utilization_frac=0.6,
                        margin_frac=0.3, cache_hit_frac=0.5, output_convention=conv)
        key = f"price.h200.llama-3.1-8b.b32.openrouter.u0.6.m0.3.hit0.5.{conv}"
        out[key + ".usd_per_m_output_tok"] = _f(r.usd_per_m_output_tok)
        out[key + ".usd_per_m_input_tok"] = _f(r.usd_per_m_input_tok)
        out[key + ".energy_j_per_tok"] = _f(r.energy_j_per_tok)
        out[key + ".cost_usd_per_chip_h"] = _f(r.cost_usd_per_chip_h)
    return out


def _showdown() -> dict[str, float]:
    from tokenomics.studies import showdown

    out: dict[str, float] = {}
    # ---- the showdown: figures, waterfall, costs ---------------------------------------------
    sd = showdown.showdown()
    for _, row in sd.figures.iterrows():
        out[f"showdown.{row['system']}.{row['metric']}.predicted"] = float(row["predicted"])
    w = showdown.waterfall()
    for _, row in w.iterrows():
        out[f"waterfall.{row['target']}.step{int(row['step'])}.tok_per_s_per_user"] = float(row["tok_per_s_per_user"])
    for _, row in showdown.measured().iterrows():  # the published megakernel points, predicted
        al = "" if row["acceptance_length"] != row["acceptance_length"] else f".al{row['acceptance_length']:g}"
        prec = row["expert_precision"] if isinstance(row["expert_precision"], str) else "scenario"
        if isinstance(row["dense_precision"], str):
            prec += f"+{row['dense_precision']}-dense"
        out[f"megakernel_bench.{row['model']}.{row['system']}.{prec}.b{int(row['batch'])}.{row['spec']}{al}"
            ".predicted_tok_per_s"] = float(row["predicted_tok_per_s"])
    c = showdown.costs()
    for _, row in c.iterrows():
        out[f"showdown_costs.{row['system']}.b{int(row['batch'])}.usd_per_m_output_tok"] = float(row["usd_per_m_output_tok"])
    return out


def _watch() -> dict[str, float]:
    from tokenomics.validate.mlperf import mlperf_check
    from tokenomics.watch.prices import cost_floor

    out: dict[str, float] = {}
    # ---- MLPerf brackets and the watch cost floors -------------------------------------------
    m = mlperf_check()
    for i, row in m.reset_index(drop=True).iterrows():
        key = f"mlperf.{row['system']}.{row['model']}.{row['scenario']}.{i}"
        out[key + ".lower_tok_per_s"] = float(row["lower_tok_per_s"])
        out[key + ".upper_tok_per_s"] = float(row["upper_tok_per_s"])
    f = cost_floor()
    for _, row in f.iterrows():
        out[f"floor.{row['system']}.usd_per_1k_output_tok"] = float(row["cost_usd_per_m_tok"]) / 1e3  # the figure is kept per 1K
    from tokenomics.watch.supernodes import modelled_tok_per_s_per_chip

    out["watch.supernodes.cloudmatrix_modelled_tok_per_s_per_chip"] = modelled_tok_per_s_per_chip()[0]
    # the price decline at constant quality (hedonic regression) and pooled, the first watch metric
    from tokenomics.watch.price_index import constant_quality_decline

    cq = constant_quality_decline()
    for k in ("decline_factor_per_year", "decline_factor_lo", "decline_factor_hi", "pooled_decline_factor_per_year"):
        out[f"watch.price_index.{k}"] = float(cq[k])
    out["watch.price_index.n_prices"] = float(cq["n"])
    # the megakernel adoption dates: an exact bootstrap, so one value for every seed
    from tokenomics.watch.megakernels import fit_adoption

    fa = fit_adoption(n_boot=200)
    for k in ("level3_year", "level3_lo", "level3_hi", "level4_year", "level4_lo", "level4_hi", "slowest_rate_frac"):
        out[f"watch.megakernel.{k}"] = float(getattr(fa, k))
    return out


def _cost_trend() -> dict[str, float]:
    from tokenomics.watch.prices import cost_trend

    # the watch's modelled cost decline a year at three speeds, without and with MTP (the README
    # quotes the range): twelve layout searches, ~20 s
    return {f"cost_trend.{row['spec']}.{row['tok_per_s_per_user']:g}": float(row["modelled_cost_decline_factor_per_year"])
            for _, row in cost_trend().iterrows()}


def _serving() -> dict[str, float]:
    from tokenomics.catalog import load

    out: dict[str, float] = {}
    # ---- serving fidelity: the fit set and the held-out published rows ----------------------
    from tokenomics.validate.serving_cases import UNFITTED_SETS, pool_sets, predict_cases, summarize as summarize_serving, summarize_within

    preds = {}
    for name in ("serving_public", "serving_holdout", "serving_blind_2026", "serving_mlperf",
                 "serving_mlperf_server", "serving_mlperf_v61", "serving_trtllm_perf", "serving_lmsys_phase", "serving_ascend", "serving_atom", "serving_aic_silicon",
                 "serving_aic_sample"):
        pred = preds[name] = predict_cases(load(name))
        if name.startswith("serving_mlperf"):  # chip against chip on each benchmark (what its rows share divided out)
            w = summarize_within(pred).iloc[0]
            out[f"serving.{name}.within_model_median_abs_error_frac"] = float(w["median_abs_error_frac"])
            out[f"serving.{name}.within_model_p90_abs_error_frac"] = float(w["p90_abs_error_frac"])
        srv = summarize_serving(pred).iloc[0]
        out[f"serving.{name}.median_abs_error_frac"] = float(srv["median_abs_error_frac"])
        out[f"serving.{name}.p90_abs_error_frac"] = float(srv["p90_abs_error_frac"])
        out[f"serving.{name}.median_ratio"] = float(srv["median_ratio"])
        for q in ("ttft", "tpot"):
            t = summarize_serving(pred, quantity=q).iloc[0]
            if t["n_cases"] == 0:  # offline results measure neither
                continue
            out[f"serving.{name}.{q}_median_abs_error_frac"] = float(t["median_abs_error_frac"])
            out[f"serving.{name}.{q}_p90_abs_error_frac"] = float(t["p90_abs_error_frac"])
            out[f"serving.{name}.{q}_median_ratio"] = float(t["median_ratio"])
    pooled = summarize_serving(pool_sets({n: preds[n] for n in UNFITTED_SETS}), by=()).iloc[0]  # = predict_unfitted()
    out["serving.unfitted.n_cases"] = float(pooled["n_cases"])
    out["serving.unfitted.median_abs_error_frac"] = float(pooled["median_abs_error_frac"])
    out["serving.unfitted.p90_abs_error_frac"] = float(pooled["p90_abs_error_frac"])
    out["serving.unfitted.median_ratio"] = float(pooled["median_ratio"])
    # the 80 % error band: built on half of the publications no fit used, scored on the other half
    from tokenomics import errorband

    bands = errorband.split_and_build(pool_sets({n: preds[n] for n in UNFITTED_SETS}))
    out["serving.bands.check_half_coverage_frac"] = float(bands["coverage"])
    out["serving.bands.check_half_n_rows"] = float(bands["n_check"])
    # every band also spans the third-party band (the released sealed sets): the check half again,
    # and each third-party publication scored on the third-party band built without it
    pooled_pred = pool_sets({n: preds[n] for n in UNFITTED_SETS})
    check = bands["rows"].index[bands["rows"]["publication"].isin(bands["check"])]
    out["serving.bands.check_half_coverage_with_third_party_frac"] = float(errorband.coverage(pooled_pred.loc[check])[0])
    from tokenomics.catalog import data_dir
    from tokenomics.validate.serving_cases import read_cases

    tp = errorband.band_rows(pool_sets({n: predict_cases(read_cases(data_dir() / f"{n}.csv"))
                                        for n in errorband.THIRD_PARTY_SETS}))
    lopo = errorband.leave_one_publication_out(tp)
    out["serving.bands.third_party_lopo_publication_mean_frac"] = float(lopo["inside_frac"].mean())
    out["serving.bands.third_party_q90_log_ratio"] = float(errorband.third_party_band(tp)["q90_log_ratio"])
    return out


def _calibration() -> dict[str, float]:
    from tokenomics.catalog import load
    from tokenomics.validate.calibrate import predict_cases as predict_steps, summarize

    out: dict[str, float] = {}
    # ---- calibration accuracy of the shipped H200 profile ------------------------------------
    s = summarize(predict_steps(load("h200_cases")))
    for _, row in s.iterrows():
        out[f"validate.{row['execution']}.median_abs_error_frac"] = float(row["median_abs_error_frac"])
    # ---- regime-out validation: each regime predicted by a fit without it --------------------
    from tokenomics.validate.calibrate import leave_regime_out
    from tokenomics.validate.kernel_microbench import predict_kernel_microbench, summarize_kernel_microbench

    ro = summarize(leave_regime_out(load("h200_cases"), load("h200_microbench"), kernel_bench=load("kernel_microbench")),
                   by=("held_out",))
    for _, row in ro.iterrows():
        key = f"regime_out.{row['held_out']}.{row['execution']}"
        out[key + ".median_abs_error_frac"] = float(row["median_abs_error_frac"])
        out[key + ".p90_abs_error_frac"] = float(row["p90_abs_error_frac"])
        out[key + ".median_ratio"] = float(row["median_ratio"])
    # ---- the core's per-operator times against published kernel microbenchmarks ---------------
    km = summarize_kernel_microbench(predict_kernel_microbench())
    for _, row in km.iterrows():
        key = f"kernels.{row['op']}.{row['size']}"
        out[key + ".median_abs_error_frac"] = float(row["median_abs_error_frac"])
        out[key + ".median_ratio"] = float(row["median_ratio"])
    return out


def _market() -> dict[str, float]:
    from tokenomics import market

    out: dict[str, float] = {}
    # ---- list prices against the modelled cost to serve (tokenomics market) --------------------
    # the README quotes the default (each provider's served speculative decoding) and --spec none; MTP alone beside them
    for tag, spec in (("", None), (".mtp", "mtp"), (".served", market.DEFAULT_SPEC)):
        ms = market.summary(market.market(spec=spec))
        for k in ("n_priced", "median_implied_margin_frac", "n_below_cost", "n_unreachable"):
            out[f"market{tag}.{k}"] = float(ms[k])
    return out


def _forecast() -> dict[str, float]:
    from tokenomics.forecast import forecast, run_backtest

    out: dict[str, float] = {}
    # ---- the demand forecast: calibration, backtest coverage, the 2030 intervals --------------
    bt = run_backtest()
    cal = bt.calibration
    out["forecast.calibration.s0_log10"] = cal.s0_log10
    out["forecast.calibration.s1_log10_per_year"] = cal.s1_log10_per_year
    out["forecast.calibration.q80"] = cal.q[0.8]
    out["forecast.calibration.q95"] = cal.q[0.95]
    cov = bt.coverage_by_horizon()
    for _, row in cov[cov["horizon"] == "all"].iterrows():
        for col in ("coverage_80", "coverage_95", "median_width_95_log10", "mae_log10"):
            out[f"forecast.backtest.{row['sample']}.{col}"] = float(row[col])
    for _, row in bt.benchmarks().iterrows():  # the point forecast beside drift and the random walk
        for k in ("model", "drift", "rw"):
            out[f"forecast.backtest.{row['sample']}.{k}_median_abs_err_dec"] = float(row[f"{k}_median_abs_err_dec"])
    fr = {name: forecast(name) for name in ("google", "china")}
    for name in ("google", "china"):
        m = fr[name].monthly
        row = m[m["date"].dt.strftime("%Y-%m") == "2030-12"].iloc[0]
        for col in ("tokens_per_day", "tokens_per_day_lo_95", "tokens_per_day_hi_95"):
            out[f"forecast.{name}.2030-12.{col}"] = float(row[col])
    # ---- the month-end replay the README and `forecast --show replay` quote -----------------------
    import warnings

    from tokenomics.errors import ConvergenceWarning
    from tokenomics.forecast import realtime_backtest
    from tokenomics.forecast.backtest import replay_coverage

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        rp = replay_coverage(realtime_backtest())
    for _, row in rp[rp["horizon"] == "all"].iterrows():
        for col in ("n_points", "coverage_80", "coverage_95", "median_width_95_log10", "mae_log10", "mae_drift_log10"):
            out[f"forecast.replay.{row['sample']}.{col}"] = float(row[col])
    # ---- serving the forecast: the default deployment (DeepSeek-V3, GB200 NVL72, 35 tok/s/user)
    from tokenomics.forecast import plan_infrastructure

    infra = plan_infrastructure(fr["google"]).to_frame().set_index("year")
    out["forecast.infra.tok_per_s_per_chip"] = float(infra["tok_per_s_per_chip"].iloc[0])
    out["forecast.infra.cost_usd_per_chip_h"] = float(infra["cost_usd_per_chip_h"].iloc[0])
    out["forecast.infra.google.2030.n_chips"] = float(infra.loc[2030, "n_chips"])
    out["forecast.infra.google.2030.facility_mw"] = float(infra.loc[2030, "facility_mw"])
    out["forecast.infra.google.2030.energy_twh"] = float(infra.loc[2030, "energy_twh"])
    # the year's energy over the IEA's projection of every data centre of the series' region
    out["forecast.infra.google.2030.dc_electricity_share_frac"] = float(infra.loc[2030, "dc_electricity_share_frac"])
    # the same deployment co-located: the layout of the rack serving the most tokens per GPU at 35 tok/s
    from tokenomics.forecast.infrastructure import serving_basis

    out["forecast.infra.colocated.tok_per_s_per_chip"] = float(serving_basis(serving="colocated")["tok_per_s_per_chip"])
    # demand against supply: what the region's chips and power can serve, and which binds
    from tokenomics.forecast.capacity import supply_capacity

    for name in ("google", "china"):
        cap = supply_capacity(fr[name]).to_frame().set_index("year")
        out[f"forecast.capacity.{name}.2030.served_tokens_per_day"] = float(cap.loc[2030, "served_tokens_per_day"])
        out[f"forecast.capacity.{name}.2030.power_bound"] = float(cap.loc[2030, "binding"] == "power")
        out[f"forecast.capacity.{name}.2030.chips_bound"] = float(cap.loc[2030, "binding"] == "chips")
        for col in ("chips_tokens_per_day", "power_tokens_per_day"):  # what the region's supply serves at most
            out[f"forecast.capacity.{name}.2030.{col}"] = float(cap.loc[2030, col])
    china = plan_infrastructure(fr["china"]).to_frame().set_index("year")
    out["forecast.infra.china.2030.dc_electricity_share_frac"] = float(china.loc[2030, "dc_electricity_share_frac"])
    # ---- the cost and list price along the hardware roadmap (bundled roadmap and margin) ----------
    from tokenomics.forecast.roadmap import cost_path

    for region in ("world", "china"):
        rp = cost_path(range(2024, 2031), region=region).to_frame().set_index("year")
        for y in (2024, 2026, 2030):
            for col in ("cost_usd_per_m_output_tok", "usd_per_m_output_tok"):
                if np.isfinite(rp.loc[y, col]):  # China's roadmap starts in 2025
                    out[f"forecast.roadmap.{region}.{y}.{col}"] = float(rp.loc[y, col])
        out[f"forecast.roadmap.{region}.margin_frac"] = float(rp["margin_frac"].iloc[0])
    # ---- the level shift where China's national series changes definition (June 2026) ----
    from tokenomics.forecast.history import load_history
    from tokenomics.forecast.measurement import level_shifts

    sh = level_shifts(load_history()).set_index("series")
    for col in ("shift_dec", "shift_lo95_dec", "shift_hi95_dec"):
        out[f"forecast.measurement.china.{col}"] = float(sh.loc["china", col])
    # ---- the structural model (adopters x tokens per adopter) and its one rolling-origin score ----
    from tokenomics.forecast.structural import backtest_summary, drivers, structural_backtest

    dr = drivers().to_frame().set_index(["series", "year"])
    for name in ("google", "china"):
        for col in ("tokens_per_day", "adopters", "tokens_per_adopter_per_day", "tasks_per_adopter_per_day"):
            out[f"forecast.structural.{name}.2030.{col}"] = float(dr.loc[(name, 2030), col])
    summ = backtest_summary(structural_backtest()).set_index("horizon").loc["all"]
    for col in ("n_points", "model_median_abs_err_dec", "drift_median_abs_err_dec", "rw_median_abs_err_dec",
                "model_mean_abs_err_dec", "drift_mean_abs_err_dec", "coverage_80", "coverage_95", "median_width_95_dec"):
        out[f"forecast.structural.backtest.{col}"] = float(summ[col])
    return out


#: The pinned figures by group: ``{group: function returning {name: value}}`` (names say the unit).
GROUPS = {"prices": _prices, "showdown": _showdown, "watch": _watch, "serving": _serving,
          "calibration": _calibration, "market": _market, "forecast": _forecast, "cost_trend": _cost_trend}

#: The names each group pins start with one of these.
PREFIXES = {"prices": ("price.", "target_speed."),
            "showdown": ("showdown.", "waterfall.", "megakernel_bench.", "showdown_costs."),
            "watch": ("mlperf.", "floor.", "watch."), "serving": ("serving.",),
            "calibration": ("validate.", "regime_out.", "kernels."), "market": ("market.",),
            "forecast": ("forecast.",), "cost_trend": ("cost_trend.",)}


def group_of(name: str) -> str:
    """The group a pinned figure's name belongs to."""
    found = [g for g, pre in PREFIXES.items() if name.startswith(pre)]
    if len(found) != 1:
        raise KeyError(f"{name!r} belongs to {len(found)} golden groups, expected 1")
    return found[0]


#: Groups too slow for the default test tier (they rescore every published serving run, refit the
#: H200 profile per left-out regime, run the forecast's backtests or search layouts at twelve speeds):
#: the ``integration`` tier.
SLOW_GROUPS = ("serving", "calibration", "forecast", "cost_trend")


def headline_numbers(groups: tuple[str, ...] | None = None) -> dict[str, float]:
    """Flat ``{name: value}`` of the pinned figures of ``groups`` (default: all)."""
    out: dict[str, float] = {}
    for g in groups or tuple(GROUPS):
        out.update(GROUPS[g]())
    return out
