"""One call per figure: each function draws one chart and returns its matplotlib ``Axes``.

Every function takes ``ax=`` to draw into an existing Axes (several deployments on one chart, a
subplot of a larger figure); without it a new figure is made. Axes carry units and each chart
names its sources in a caption under the Axes. :mod:`tokenomics.report`, the watch report and the
forecast's ``fan_chart`` draw with these same functions.

========================  =========================================================================
:func:`frontier`          price [USD per million output tokens] or tokens/s per chip against
                          tokens/s per user, one line per deployment
:func:`price_breakdown`   cost of a chip-hour by component, InferenceX tiers beside it
:func:`tornado`           one-at-a-time sensitivity of a price
:func:`forecast`          token-demand fan chart: median, 80 % and 95 % bands, observations,
                          reference lines
:func:`watch`             a watch metric: API prices, megakernel adoption or speedup, 910C yield,
                          supernode ramp
========================  =========================================================================

matplotlib is imported on first call; with no backend chosen (no ``MPLBACKEND``, pyplot not yet
imported) the non-interactive Agg backend is used, so scripts and servers never open a window.

Examples
--------
>>> import tokenomics.plot as tp                                  # doctest: +SKIP
>>> ax = tp.frontier(["h100-sxm", "h200"], "llama-3.1-8b")        # doctest: +SKIP
>>> tp.frontier("b200", "llama-3.1-8b", ax=ax)                    # doctest: +SKIP
>>> ax.figure.savefig("frontier.png", bbox_inches="tight")        # doctest: +SKIP
"""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING, Any

import numpy as np

from .errors import ValidationError

if TYPE_CHECKING:  # pragma: no cover
    from matplotlib.axes import Axes

#: Source notes shown in the captions.
SOURCES = {
    "perf": "tokenomics performance core (roofline + calibrated H200 profile, datasets/profiles)",
    "cost": "bottom-up chip-hour cost (datasets/tco_params.csv), power model (datasets/power_model.csv)",
    "tiers": "InferenceX cost tiers (datasets/tco_params.csv)",
    "forecast": "observations datasets/token_demand.csv; references datasets/demand_scenarios.csv; "
                "backtest-weighted model ensemble",
    "prices": "datasets/api_prices.csv, datasets/china_price_cuts.csv",
    "megakernel": "datasets/megakernel_events.csv; speedup from the performance core",
    "supernode": "datasets/supernode_events.csv",
}

WATCH_METRICS = ("price", "megakernel", "speedup", "yield", "supernode")


# ---------------------------------------------------------------------------------------------
# plumbing

def _pyplot():
    import matplotlib

    if "matplotlib.pyplot" not in sys.modules and not os.environ.get("MPLBACKEND"):
        matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _axes(ax: "Axes | None", figsize: tuple[float, float]) -> "Axes":
    if ax is not None:
        return ax
    _, ax = _pyplot().subplots(figsize=figsize)
    return ax


def caption(ax: "Axes", text: str) -> None:
    """Write ``text`` (the sources) in small grey type under the Axes, below its x label."""
    for t in list(ax.texts):
        if getattr(t, "_tokenomics_caption", False):
            t.remove()
    t = ax.annotate(text, xy=(0.0, 0.0), xycoords="axes fraction", xytext=(0, -38),
                    textcoords="offset points", va="top", ha="left", fontsize=6.5, color="0.35", wrap=True)
    t._tokenomics_caption = True


def _date_axis(ax: "Axes") -> None:
    import matplotlib.dates as mdates

    loc = mdates.AutoDateLocator(maxticks=8)
    ax.xaxis.set_major_locator(loc)
    ax.xaxis.set_major_formatter(mdates.ConciseDateFormatter(loc))


def _to_dates(s: Any) -> Any:
    """A date column (datetime64, or ISO text such as ``2025-06`` or ``2025-06-30``) as datetime64."""
    import pandas as pd

    if pd.api.types.is_datetime64_any_dtype(s):
        return s
    return pd.to_datetime(pd.Series(s).astype(str))


def _as_list(x: Any) -> list:
    if isinstance(x, (list, tuple)):
        return list(x)
    return [x]


# ---------------------------------------------------------------------------------------------
# frontier

_Y_FRONTIER = {
    "price": ("usd_per_m_output_tok", 1.0, "cost to serve [USD per million output tokens]"),
    "tok_per_s_per_chip": ("tok_per_s_per_chip", 1.0, "throughput [output tokens/s per chip]"),
}


def _frontier_frames(hardware: Any, model: Any, execution: str, workload: str,
                     price_kwargs: dict) -> list[tuple[str, Any, str]]:
    """(label, frame, kind) per deployment; kind ``price`` (chain) or ``system`` (perf.frontier)."""
    import pandas as pd

    from .chain import PriceResult
    from .perf.frontier import FrontierResult

    if isinstance(hardware, dict):
        out = []
        for label, obj in hardware.items():
            out += [(str(label), fr, kind) for _, fr, kind in _frontier_frames(obj, model, execution, workload,
                                                                               price_kwargs)]
        return out
    if isinstance(hardware, FrontierResult):
        return [(f"{hardware.system} / {hardware.model} ({hardware.plan})", hardware, "system")]
    if isinstance(hardware, PriceResult):
        fr = hardware.to_frame()
        return [(f"{hardware.hardware} / {hardware.model} ({hardware.execution})", fr, "price")]
    if isinstance(hardware, pd.DataFrame):
        from .units import per_million

        fr = per_million(hardware)  # a frame with per-1K prices plots in USD per million too
        label = " / ".join(str(fr[c].iloc[0]) for c in ("hardware", "model") if c in fr and len(fr))
        return [(label or "frontier", fr, "price")]
    if model is None:
        raise ValidationError("frontier needs a model (e.g. 'llama-3.1-8b') unless given a result object")
    from . import chain

    out = []
    for hw in _as_list(hardware):
        if isinstance(hw, (dict, FrontierResult, PriceResult, pd.DataFrame)):
            out += _frontier_frames(hw, model, execution, workload, price_kwargs)
            continue
        for m in _as_list(model):
            # a name or a catalog object (Accelerator): priced over the batches that fit
            r = chain.frontier(hw, m, execution, workload=workload, **price_kwargs)
            fr = r.to_frame()
            out.append((f"{getattr(hw, 'name', hw)} / {getattr(m, 'name', m)} ({execution})", fr, "price"))
    return out


def frontier(hardware: Any, model: Any = None, execution: str = "engine", *, y: str = "price",
             workload: str = "chat", ax: "Axes | None" = None, label: str | None = None,
             title: str | None = None, **price_kwargs: Any) -> "Axes":
    """Price or throughput per chip against interactivity, one line per deployment.

    Parameters
    ----------
    hardware : str, list of str, PriceResult, FrontierResult, DataFrame or dict
        Accelerator name(s) (each priced over a batch sweep with :func:`tokenomics.chain.frontier`),
        a result already computed (a :class:`~tokenomics.chain.PriceResult` sweep or a multi-chip
        :class:`~tokenomics.perf.frontier.FrontierResult`), a frame with ``tok_per_s_per_user`` and
        the y column, or ``{label: any of these}``.
    model : str or list of str, optional
        Model name(s); needed with accelerator names.
    execution : str
        Execution plan (``graph``, ``eager``, ``megakernel``, ``engine``).
    y : {"price", "tok_per_s_per_chip"}
        ``price``: cost to serve [USD per million output tokens]; ``tok_per_s_per_chip``:
        output tokens/s per chip [tokens/s].
    workload : str
        Workload mix for pricing (``datasets/workloads.csv``).
    ax : matplotlib Axes, optional
        Draw into this Axes (e.g. to add deployments to an earlier call's chart).
    label : str, optional
        Legend label (one deployment only).
    **price_kwargs
        Passed to :func:`tokenomics.chain.frontier` (``weight_precision``, ``cost``, ...).

    Returns
    -------
    matplotlib.axes.Axes
        x: tokens/s per user [tokens/s], log scale; y as chosen, log scale.
    """
    if y not in _Y_FRONTIER:
        raise ValidationError(f"y must be one of {', '.join(_Y_FRONTIER)}, got {y!r}")
    col, scale, ylabel = _Y_FRONTIER[y]
    frames = _frontier_frames(hardware, model, execution, workload, price_kwargs)
    if label is not None and len(frames) == 1:
        frames = [(label, frames[0][1], frames[0][2])]
    ax = _axes(ax, (8, 5))
    kinds = set()
    for lab, fr, kind in frames:
        kinds.add(kind)
        if kind == "system":
            if col not in fr.points:
                raise ValidationError("a multi-chip FrontierResult has no price; use y='tok_per_s_per_chip'")
            pts = fr.points
            ax.scatter(pts["tok_per_s_per_user"], pts[col] * scale, s=8, c="0.8",
                       label=f"{lab}: feasible configurations")
            f = fr.frontier
            one_layout = f["parallel"].nunique() == 1  # then the legend names it; label batches only
            layout = f" ({f['parallel'].iloc[0]})" if one_layout else ""
            line, = ax.plot(f["tok_per_s_per_user"], f[col] * scale, "-o", ms=3.5,
                            label=f"{lab}{layout}: Pareto frontier")
            for _, r in f.iloc[:: max(1, len(f) // 6)].iterrows():
                text = f"batch {int(r['batch'])}" if one_layout else f"{r['parallel']}\nbatch {int(r['batch'])}"
                ax.annotate(text, (r["tok_per_s_per_user"], r[col] * scale),
                            fontsize=6.5, xytext=(4, 4), textcoords="offset points")
            continue
        if col not in fr:
            raise ValidationError(f"no column {col!r} to plot for {lab}")
        ok = np.isfinite(fr[col].to_numpy(float)) & np.isfinite(fr["tok_per_s_per_user"].to_numpy(float))
        fr = fr[ok].sort_values("tok_per_s_per_user")
        ax.plot(fr["tok_per_s_per_user"], fr[col] * scale, marker="o", ms=3, label=lab)
        if "batch" in fr and len(fr):
            for _, r in fr.iloc[[0, -1]].iterrows():
                ax.annotate(f"b{int(r['batch'])}", (r["tok_per_s_per_user"], r[col] * scale), fontsize=6.5,
                            xytext=(3, 3), textcoords="offset points", color="0.3")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("interactivity [output tokens/s per user]")
    ax.set_ylabel(ylabel)
    ax.set_title(title or ("Price vs interactivity (batch sweep)" if y == "price"
                           else "Throughput vs interactivity (batch sweep)"))
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7)
    src = SOURCES["perf"] + ("; " + SOURCES["cost"] if y == "price" else "")
    caption(ax, "Sources: " + src + ". b<n>: batch at the ends of each sweep."
            if "price" in kinds else "Sources: " + src)
    return ax


# ---------------------------------------------------------------------------------------------
# price breakdown

def _breakdown_frame(hardware: Any, model: Any, execution: str, batch: int, workload: str,
                     price_kwargs: dict):
    import pandas as pd

    from . import chain

    if isinstance(hardware, pd.DataFrame):
        return hardware
    if isinstance(hardware, chain.PriceResult):
        results = [hardware]
    else:
        from .report import DEFAULT_HARDWARE

        if model is None:
            raise ValidationError("price_breakdown needs a model (e.g. 'llama-3.1-8b') with hardware names")
        results = [chain.price(hw, model, execution, batch=batch, workload=workload, **price_kwargs)
                   for hw in _as_list(hardware if hardware is not None else list(DEFAULT_HARDWARE))]
    frames = [r.to_frame().iloc[[0]] for r in results]
    return pd.concat(frames, ignore_index=True)


def price_breakdown(hardware: Any = None, model: Any = None, execution: str = "engine", *, batch: int | None = None,
                    workload: str = "chat", tiers: Any = True, ax: "Axes | None" = None,
                    **price_kwargs: Any) -> "Axes":
    """Cost of a chip-hour by component (stacked bars), InferenceX tier costs beside each bar.

    Parameters
    ----------
    hardware : str, list of str, PriceResult or DataFrame, optional
        Accelerators to price (default: the report's four), one price result, or a frame with
        ``hardware`` and ``*_usd_per_chip_h`` component columns (e.g. ``price(...).to_frame()``).
    model : str, optional
        Model whose decode power sets the power cost; needed with accelerator names.
    execution, batch, workload, **price_kwargs
        As :func:`tokenomics.chain.price`.
    tiers : bool or DataFrame
        Mark InferenceX tier costs (``econ.tco.tier_table()``, or the table given); False: none.
    ax : matplotlib Axes, optional

    Returns
    -------
    matplotlib.axes.Axes
        Bars in [USD per chip-hour].
    """
    import pandas as pd

    b = _breakdown_frame(hardware, model, execution, batch, workload, price_kwargs)
    comp = [c for c in b.columns if c.endswith("_usd_per_chip_h") and c != "cost_usd_per_chip_h"]
    if not comp:
        raise ValidationError("nothing to break down: no *_usd_per_chip_h component columns "
                              "(a flat-rate cost has no components)")
    ax = _axes(ax, (10, 4.5))
    x = np.arange(len(b))
    bottom = np.zeros(len(b))
    for c in comp:
        vals = b[c].to_numpy(float)
        ax.bar(x, vals, bottom=bottom, label=c.replace("_usd_per_chip_h", ""), width=0.5)
        bottom += np.nan_to_num(vals)
    src = SOURCES["cost"]
    if tiers is not False and tiers is not None:
        if isinstance(tiers, pd.DataFrame):
            tt = tiers
        else:
            from .econ import tco

            tt = tco.tier_table()
        marks = {"hyperscaler-owned": "v", "neocloud-owned": "^", "rental-3yr": "s"}
        vintages = sorted(tt["vintage"].unique()) if "vintage" in tt else []
        shades = ("black", "grey", "silver")
        for tier, mk in marks.items():
            if tier not in tt:
                continue
            for k, vint in enumerate(vintages[:3]):
                ys = []
                for hw in b["hardware"]:
                    sel = tt[(tt["hardware"] == hw) & (tt["vintage"] == vint)]
                    ys.append(float(sel[tier].iloc[0]) if len(sel) else np.nan)
                if np.any(np.isfinite(ys)):
                    ax.scatter(x + 0.3 + 0.08 * k, ys, marker=mk, color=shades[k], s=25,
                               label=f"InferenceX {tier} {vint}")
        src += "; " + SOURCES["tiers"]
    ax.set_xticks(x, b["hardware"])
    ax.set_xlabel("accelerator")
    ax.set_ylabel("cost [USD per chip-hour]")
    ax.set_title("Cost of a chip-hour: bottom-up components vs InferenceX tiers")
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    caption(ax, "Sources: " + src + ". Power cost at the modelled decode power.")
    return ax


# ---------------------------------------------------------------------------------------------
# tornado

def _fmt(x: Any) -> str:
    from ._display import fmt_value

    return fmt_value(x)


def tornado(result: Any, model: Any = None, execution: str = "engine", *, batch: int | None = None,
            base_usd_per_1k_tok: float | None = None, label: str = "", ax: "Axes | None" = None,
            **price_kwargs: Any) -> "Axes":
    """One-at-a-time sensitivity of a price: a bar per input from its low to its high value.

    Parameters
    ----------
    result : Tornado, DataFrame or str
        A :class:`~tokenomics.econ.uncertainty.Tornado`, its ``to_frame()`` (then give
        ``base_usd_per_1k_tok``), or an accelerator name: priced with ``model`` at ``batch``
        (default: :func:`tokenomics.chain.price`'s, 32 per attention group)
        and bottom-up costs, then :func:`tokenomics.econ.uncertainty.tornado`.
    model, execution, batch, **price_kwargs
        As :func:`tokenomics.chain.price` (accelerator name only).
    base_usd_per_1k_tok : float, optional
        Base price [USD per 1K output tokens] (taken from a Tornado otherwise).
    label : str
        Configuration named in the title.
    ax : matplotlib Axes, optional

    Returns
    -------
    matplotlib.axes.Axes
        x: price [USD per million output tokens].
    """
    import pandas as pd

    from .econ.uncertainty import Tornado

    if isinstance(result, str):
        from . import chain
        from .econ import tco, uncertainty

        if model is None:
            raise ValidationError("tornado needs a model (e.g. 'llama-3.1-8b') with an accelerator name")
        p = chain.price(result, model, execution, batch=batch, **price_kwargs)
        ci = tco.CostInputs.for_hardware(result)
        label = label or f"{result} / {model}, batch {int(np.ravel(p.batch)[0])}"
        result = uncertainty.tornado(ci, float(np.ravel(p.board_power_w)[0]), float(np.ravel(p.tok_per_s_per_chip)[0]))
    if isinstance(result, Tornado):
        table, base = result.table, result.base_usd_per_1k_tok
    elif isinstance(result, pd.DataFrame):
        table, base = result, base_usd_per_1k_tok
    else:
        raise ValidationError(f"tornado takes a Tornado, its frame or an accelerator name, got {type(result).__name__}")
    t = table.iloc[::-1]
    ax = _axes(ax, (8, 4.5))
    yy = np.arange(len(t))
    if "usd_per_m_output_tok_at_low" in t.columns:  # Tornado.to_frame(): USD per million tokens
        lo, hi = t["usd_per_m_output_tok_at_low"].to_numpy(float), t["usd_per_m_output_tok_at_high"].to_numpy(float)
    else:
        lo, hi = t["price_at_low"].to_numpy(float) * 1e3, t["price_at_high"].to_numpy(float) * 1e3
    left, right = np.minimum(lo, hi), np.maximum(lo, hi)
    ax.barh(yy, right - left, left=left, color="tab:orange")
    ax.set_yticks(yy, [f"{n} [{_fmt(a)} .. {_fmt(c)}]" for n, a, c in zip(t["input"], t["low"], t["high"])],
                  fontsize=7)
    if base is not None and np.isfinite(base):
        ax.axvline(base * 1e3, color="black", lw=1)
        ax.text(base * 1e3, len(t) - 0.4, f" base {base * 1e3:.3g}", fontsize=7, va="bottom")
    ax.set_xlabel("price [USD per million output tokens]")
    ax.set_ylabel("input [low .. high]")
    ax.set_title("Sensitivity (tornado)" + (f": {label}" if label else ""))
    ax.grid(True, axis="x", alpha=0.3)
    caption(ax, "Sources: input ranges datasets/tco_params.csv; " + SOURCES["cost"]
            + ". Each bar varies one input, the others at base.")
    return ax


# ---------------------------------------------------------------------------------------------
# forecast

def forecast(series: Any = "all", *, scenario: str | None = None, fit_through: Any = None,
             references: bool = True, ax: "Axes | None" = None, title: str | None = None) -> "Axes":
    """Token-demand fan chart: median, 80 % and 95 % bands, observations and reference lines.

    Parameters
    ----------
    series : str, list of str or ForecastResult
        Series name(s) (``"google"``, ``"all"``; see ``tokenomics.forecast.series_names()``),
        forecast with :func:`tokenomics.forecast.forecast`, or a result already computed.
    scenario, fit_through
        As :func:`tokenomics.forecast.forecast` (names only).
    references : bool
        Draw the published reference lines (``datasets/demand_scenarios.csv``).
    ax : matplotlib Axes, optional

    Returns
    -------
    matplotlib.axes.Axes
        x: date; y: tokens per day [tokens/day], log scale.
    """
    from .forecast.demand import ForecastResult

    if isinstance(series, ForecastResult):
        result = series
    else:
        from .forecast.demand import forecast as _forecast

        result = _forecast(series, fit_through=fit_through, scenario=scenario)
    plt_colors = _pyplot().rcParams["axes.prop_cycle"].by_key()["color"]
    ax = _axes(ax, (10, 6))
    monthly = result.monthly
    for i, name in enumerate(result.series_names()):
        c = plt_colors[i % len(plt_colors)]
        f = monthly[monthly["series"] == name]
        x = _to_dates(f["date"])
        ax.fill_between(x, f["tokens_per_day_lo_95"], f["tokens_per_day_hi_95"], color=c, alpha=0.12, lw=0)
        ax.fill_between(x, f["tokens_per_day_lo_80"], f["tokens_per_day_hi_80"], color=c, alpha=0.25, lw=0)
        ax.plot(x, f["tokens_per_day"], color=c, lw=1.8, label=f"{name} (median, 80/95 %)")
        h = result.history[result.history["series"] == name]
        ax.plot(_to_dates(h["date"]), h["tokens_per_day"], "o", color=c, ms=5, mec="black", mew=0.5)
    if references:
        from .forecast.scenarios import reference_lines

        x_end = _to_dates(monthly["date"]).max()
        for _, r in reference_lines().iterrows():
            ax.axhline(r["tokens_per_day"], color="grey", ls="--", lw=1)
            ax.annotate(r["reference"], (x_end, r["tokens_per_day"]), fontsize=8, color="dimgrey",
                        va="bottom", ha="right")
    ax.set_yscale("log")
    ax.set_xlabel("date")
    ax.set_ylabel("token demand [tokens per day]")
    scen = result.scenario or "trend only"
    fit = f", fitted through {result.fit_through}" if result.fit_through else ""
    ax.set_title(title or f"Token demand forecast ({scen}{fit}); dots = observations")
    ax.grid(True, which="major", alpha=0.3)
    ax.legend(loc="upper left", fontsize=8)
    _date_axis(ax)
    caption(ax, "Sources: " + SOURCES["forecast"] + (" (dashed lines)" if references else "") + ".")
    return ax


# ---------------------------------------------------------------------------------------------
# watch

def _watch_price(ax: "Axes", dashboard: Any) -> None:
    import pandas as pd

    from .watch import prices as pr
    from .dates import from_decimal_year

    p = pr.load_prices()
    p = p[p["price_kind"].isin(pr.TREND_KINDS) & (p["blended_usd_per_m_tok"] > 0)]
    if dashboard is not None:
        rates, events = dashboard.price.rates_by_tier, dashboard.price.events
    else:
        raw = p.drop(columns=["date_parsed", "t_year", "date_precision", "row"])
        rates, events = pr.decline_rates(raw, by="tier"), pr.cut_events()
    rates = rates.set_index("group")
    colors = {"frontier": "tab:red", "mid": "tab:blue", "small": "tab:green"}
    for tier, sub in p.groupby("tier"):
        rate = rates.loc[tier, "decline_factor_per_year"] if tier in rates.index else np.nan
        ax.scatter(sub["date_parsed"], sub["blended_usd_per_m_tok"], s=22, color=colors.get(tier, "k"),
                   label=f"{tier} ({rate:.2f}x/yr)", alpha=0.8)
        t = sub["t_year"].to_numpy(float)
        if len(t) >= 2 and np.ptp(t) > 0:
            b = np.polyfit(t, np.log(sub["blended_usd_per_m_tok"].to_numpy(float)), 1)
            tt = np.linspace(t.min(), t.max(), 50)
            ax.plot(from_decimal_year(tt).astype("datetime64[ns]"), np.exp(np.polyval(b, tt)),
                    color=colors.get(tier, "k"), lw=1.2)
    ch = events[events["region"] == "china"]
    after = pd.to_numeric(ch["price_after_usd_per_m_tok"], errors="coerce")
    ch = ch[np.isfinite(after) & (after > 0)]
    ax.scatter(pd.to_datetime(ch["date"]), ch["price_after_usd_per_m_tok"], marker="v",
               color="purple", s=40, label="China cuts (price after, USD)")
    ax.set_yscale("log")
    ax.set_xlabel("date")
    ax.set_ylabel("blended list price [USD per million tokens, 3:1 in:out]")
    ax.set_title("API list prices by tier (OLS on log price); prices can rise too")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    _date_axis(ax)
    caption(ax, "Sources: " + SOURCES["prices"] + ". Lines: OLS fit of log price on time per tier.")


def _watch_megakernel(ax: "Axes", dashboard: Any) -> None:
    import pandas as pd

    from .watch import megakernels as mk
    from .dates import from_decimal_year

    if dashboard is not None:
        idx, f = dashboard.adoption_index, dashboard.adoption_fits["all"]
    else:
        import warnings

        ev = mk.load_events()
        idx = mk.adoption_index(ev)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", category=Warning)
            f = mk.fit_adoption(ev, family="all", n_boot=200, seed=0)
    as_of = pd.Timestamp(str(f.as_of))
    for i, (fam, sub) in enumerate(idx.groupby("family")):
        x = list(pd.to_datetime(sub["date"])) + [as_of]
        yv = np.append(sub["index_level"].to_numpy(float), float(sub["index_level"].iloc[-1]))
        off = 0.0 if fam == "all" else 0.05 * i
        ax.step(x, yv + off, where="post", lw=2.5 if fam == "all" else 1.2,
                label=fam if fam == "all" else f"{fam} (offset +{off:.2f})", alpha=0.9 if fam == "all" else 0.8)
    if np.isfinite(f.k_per_year):
        tt = np.linspace(2025.3, max(f.level4_hi if np.isfinite(f.level4_hi) else 2034, 2030) + 0.5, 200)
        ax.plot(from_decimal_year(tt).astype("datetime64[ns]"), f.predict(tt), "k--", lw=1, label="logistic fit (all)")
        for lvl, mid, lo, hi in ((3, f.level3_year, f.level3_lo, f.level3_hi), (4, f.level4_year, f.level4_lo, f.level4_hi)):
            if np.isfinite(lo):
                ax.errorbar([from_decimal_year(mid).astype("datetime64[ns]")], [lvl - 0.5], xerr=None, fmt="o", color="k")
                ax.hlines(lvl - 0.5, from_decimal_year(lo).astype("datetime64[ns]"),
                          from_decimal_year(hi).astype("datetime64[ns]"), color="k", lw=3, alpha=0.5)
                ax.annotate(f"level {lvl}", (from_decimal_year(mid).astype("datetime64[ns]"), lvl - 0.5),
                            textcoords="offset points", xytext=(5, 6), fontsize=8)
    ax.set_ylim(-0.2, 4.2)
    ax.set_yticks(range(5))
    ax.set_yticklabels(["0 paper", "1 RFC", "2 opt-in", "3 default (1)", "4 default (all)"], fontsize=8)
    ax.set_xlabel("date")
    ax.set_ylabel("adoption level [0-4]")
    ax.set_title(f"Megakernel adoption index ({int(f.ci * 100)}% bootstrap bars)")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8, loc="upper left")
    _date_axis(ax)
    caption(ax, "Sources: " + SOURCES["megakernel"].split(";")[0] + "; logistic fit, bootstrap over events.")


def _watch_speedup(ax: "Axes", dashboard: Any) -> None:
    if dashboard is not None:
        sp = dashboard.speedup
    else:
        from .watch import megakernels as mk
        from .watch.dashboard import SPEEDUP_CONFIG as cfg

        sp = mk.expected_speedup(cfg["hardware"], cfg["model"], cfg["batch"], cfg["context_tok"])
    if np.any(np.isfinite(sp["speedup"])):
        ax.semilogx(sp["batch"], sp["speedup"], "o-", base=2)
        ax.set_title(f"Modelled decode speedup over CUDA graph\n({sp['hardware'].iloc[0]}, {sp['model'].iloc[0]})",
                     fontsize=9)
    else:
        ax.text(0.5, 0.5, "pending perf core", ha="center", va="center", transform=ax.transAxes)
    ax.axhline(1.0, color="grey", lw=0.8)
    ax.set_xlabel("batch [sequences]")
    ax.set_ylabel("megakernel / graph speedup [x]")
    ax.grid(True, which="both", alpha=0.3)
    caption(ax, "Source: " + SOURCES["perf"] + ".")


def _watch_yield(ax: "Axes", dashboard: Any) -> None:
    import pandas as pd

    if dashboard is not None:
        y = dashboard.yields
    else:
        from .watch import supernodes as sn

        y = sn.yield_trajectory()
    rep = y[y["kind"] == "reported"]
    rep_x = pd.to_datetime(rep["date"])
    ax.plot(rep_x, rep["yield_frac"], "o", ms=8, label="reported 910C die yield")
    proj = y[y["kind"] == "projection"]
    if len(proj):
        p = proj.iloc[0]
        ax.plot([rep_x.iloc[-1], pd.Timestamp(p["date"])], [rep["yield_frac"].iloc[-1], p["yield_frac"]], "--",
                color="tab:blue", label="logit-line projection")
        ax.hlines(p["yield_frac"], pd.Timestamp(p["date_lo"]), pd.Timestamp(p["date_hi"]), lw=4, color="tab:orange",
                  label=f"reaches {p['yield_frac']:.1f}: {pd.Timestamp(p['date']):%Y-%m-%d}")
    ax.set_ylim(0, 1)
    ax.set_xlabel("date")
    ax.set_ylabel("die yield [fraction]")
    ax.set_title("Ascend 910C die yield")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8)
    _date_axis(ax)
    caption(ax, "Source: " + SOURCES["supernode"] + "; straight line in logit(yield).")


def _watch_supernode(ax: "Axes", dashboard: Any) -> None:
    import pandas as pd

    if dashboard is not None:
        r = dashboard.ramp
    else:
        from .watch import supernodes as sn
        from .watch.dashboard import RAMP_YEARS

        r = sn.delivery_ramp(years=RAMP_YEARS, n_draws=400, seed=0)
    fc = r.curve
    x = pd.to_datetime(fc["date"])
    ax.fill_between(x, fc["units_lo"].clip(lower=0.5), fc["units_hi"], alpha=0.25, label="90% interval")
    ax.plot(x, fc["units_p50"].clip(lower=0.5), "-", label="median ramp")
    ax.plot(pd.to_datetime(r.points["date"]), r.points["count_low"], "ko", label="dated counts (lower bounds)")
    ax.set_yscale("log")
    ax.set_xlabel("date")
    ax.set_ylabel("cumulative CloudMatrix 384 systems [systems]")
    ax.set_title(f"Supernode ramp (ceiling {r.k_range[0]:.0f}-{r.k_range[1]:.0f} systems)")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    _date_axis(ax)
    caption(ax, "Source: " + SOURCES["supernode"] + "; logistic ramp, Monte Carlo interval.")


def watch(metric: str = "price", dashboard: Any = None, *, ax: "Axes | None" = None) -> "Axes":
    """One watch metric as a chart.

    Parameters
    ----------
    metric : {"price", "megakernel", "speedup", "yield", "supernode"}
        ``price``: API list prices by tier and China cuts [USD per million tokens];
        ``megakernel``: adoption index and its logistic fit [level 0-4]; ``speedup``: modelled
        megakernel over CUDA-graph decode speedup by batch [x]; ``yield``: Ascend 910C die
        yield [fraction]; ``supernode``: cumulative CloudMatrix 384 systems [systems].
    dashboard : Dashboard, optional
        A computed :func:`tokenomics.watch.watch` result to draw from; without it only what
        the metric needs is computed from the bundled datasets.
    ax : matplotlib Axes, optional

    Returns
    -------
    matplotlib.axes.Axes
    """
    draw = {"price": (_watch_price, (9, 5.5)), "megakernel": (_watch_megakernel, (8, 5)),
            "speedup": (_watch_speedup, (5, 4)), "yield": (_watch_yield, (6, 4.5)),
            "supernode": (_watch_supernode, (6, 4.5))}
    if metric not in draw:
        raise ValidationError(f"metric must be one of {', '.join(WATCH_METRICS)}, got {metric!r}")
    fn, size = draw[metric]
    ax = _axes(ax, size)
    fn(ax, dashboard)
    return ax
