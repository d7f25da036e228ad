"""One call per figure: each function draws data it is given and returns its matplotlib ``Axes``.

The functions compute nothing: they take the frames and result objects the library returns
(:func:`tokenomics.chain.frontier`, :func:`tokenomics.econ.uncertainty.tornado`,
:func:`tokenomics.forecast.forecast`, :func:`tokenomics.watch.watch`, ...) and draw them.
:mod:`tokenomics.plotdata` computes that data from names in one call each, for a notebook.
Every function takes ``ax=`` to draw into an existing Axes (several deployments on one chart, a
subplot of a larger figure); without it a new figure is made. Axes carry units, log axes read
``$0.10`` or ``20`` rather than powers of ten, and each chart names its sources in a caption under
the Axes. :mod:`tokenomics.report`, the watch report and the forecast's ``fan_chart`` draw with
these same functions.

========================  =========================================================================
:func:`frontier`          price [USD per million output tokens] or tokens/s per chip against
                          tokens/s per user, one line per deployment
:func:`price_breakdown`   cost of a chip-hour by component, InferenceX tiers beside it
:func:`tornado`           one-at-a-time sensitivity of a price, low and high in two colours
:func:`forecast`          token-demand fan chart: median, 80 % and 95 % bands, observations,
                          reference lines
:func:`watch`             a watch metric: API prices, megakernel adoption or speedup, 910C yield,
                          supernode ramp
========================  =========================================================================

matplotlib is imported on first call; with no backend chosen (no ``MPLBACKEND``, pyplot not yet
imported) the non-interactive Agg backend is used, so scripts and servers never open a window.

Examples
--------
>>> import tokenomics as tk                                                        # doctest: +SKIP
>>> from tokenomics import plotdata                                                # doctest: +SKIP
>>> ax = tk.plot.frontier(plotdata.frontier(["h100-sxm", "h200"], "llama-3.1-8b"))  # doctest: +SKIP
>>> tk.plot.frontier(tk.chain.frontier("b200", "llama-3.1-8b"), ax=ax)            # doctest: +SKIP
>>> ax.figure.savefig("frontier.png", bbox_inches="tight")                         # doctest: +SKIP
"""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING, Any

import numpy as np

from ._display import display_name, fmt_number
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

#: The two colours of a tornado: the price with an input at its low value, and at its high value.
TORNADO_COLORS = {"low": "#4C78A8", "high": "#F58518"}


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


def tick_label(value: float, usd: bool = False) -> str:
    """A log-axis tick as people write it: ``$0.10``, ``$2``, ``$1,000``; ``0.5``, ``20``, ``5,000``.

    >>> tick_label(0.1, usd=True), tick_label(2.0, usd=True), tick_label(0.005, usd=True), tick_label(20.0)
    ('$0.10', '$2', '$0.005', '20')
    """
    if not np.isfinite(value) or value <= 0:
        return ""
    if not usd:
        return fmt_number(float(value), 2)
    if value >= 1:
        return f"${value:,.0f}"
    if value >= 0.01:
        return f"${value:.2f}"
    return "$" + fmt_number(float(value), 1)


def log_ticks(axis: Any, usd: bool = False) -> None:
    """Label a log axis at 1, 2, 5 x 10^k (at 10^k only when it spans more than four decades;
    every other decade past eight), written by :func:`tick_label`, no minor labels."""
    from matplotlib.ticker import FixedLocator, FuncFormatter, NullFormatter

    lo, hi = sorted(axis.get_view_interval())
    if not (np.isfinite(lo) and np.isfinite(hi)) or lo <= 0:
        return
    decades = np.log10(hi) - np.log10(lo)
    subs = (1.0, 2.0, 5.0) if decades <= 2.5 else (1.0, 3.0) if decades <= 4 else (1.0,)
    step = 1 if decades <= 8 else 2
    ticks = [m * 10.0 ** k for k in range(int(np.floor(np.log10(lo))), int(np.ceil(np.log10(hi))) + 1, step)
             for m in subs]
    axis.set_major_locator(FixedLocator([t for t in ticks if lo <= t <= hi]))
    axis.set_major_formatter(FuncFormatter(lambda v, _pos: tick_label(v, usd)))
    axis.set_minor_formatter(NullFormatter())


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


def _usd_per_m(frame: Any, per_m: str, per_1k: str) -> Any:
    """A price column in USD per million tokens, whichever name the frame gives it (``per_m``,
    or ``per_1k`` in USD per thousand tokens); None when it has neither."""
    if per_m in frame:
        return frame[per_m].to_numpy(float)
    if per_1k in frame:
        return frame[per_1k].to_numpy(float) * 1e3
    return None


def _computes_nothing(what: str, helper: str) -> ValidationError:
    return ValidationError(f"tokenomics.plot.{what} draws data it is given, not names; compute it first, "
                           f"e.g. tokenomics.plotdata.{helper}")


# ---------------------------------------------------------------------------------------------
# frontier

_Y_FRONTIER = {
    "price": ("usd_per_m_output_tok", "price_usd_per_1k_output_tok", "cost to serve [USD per million output tokens]"),
    "tok_per_s_per_chip": ("tok_per_s_per_chip", None, "throughput [output tokens/s per chip]"),
}


def _unique_labels(frames: list[tuple[str, Any, str]]) -> list[tuple[str, Any, str]]:
    """The same curves, a repeated label numbered (``label (2)``) so that each has its own legend entry."""
    seen: dict[str, int] = {}
    out = []
    for lab, fr, kind in frames:
        seen[lab] = seen.get(lab, 0) + 1
        out.append((lab if seen[lab] == 1 else f"{lab} ({seen[lab]})", fr, kind))
    return out


def _frontier_frames(data: Any) -> list[tuple[str, Any, str]]:
    """(label, frame or result, kind) per deployment; kind ``price`` (a frame of a batch sweep)
    or ``system`` (a multi-chip frontier with ``points`` and ``frontier`` frames)."""
    import pandas as pd

    if isinstance(data, dict):
        out = []
        for label, obj in data.items():
            if isinstance(obj, str):
                raise ValidationError(
                    f"frontier data for {str(label)!r} is a name ({obj!r}), not data; price it first, e.g. "
                    f"{{{str(label)!r}: tokenomics.plotdata.frontier(None, 'llama-3.1-8b', system={obj!r})}}")
            inner = _frontier_frames(obj)
            if len(inner) == 1:  # one curve: the key is its label
                out.append((str(label), inner[0][1], inner[0][2]))
            else:  # several curves under one key: the key, then each curve's own label
                out += [(f"{label}: {lab}", fr, kind) for lab, fr, kind in inner]
        return _unique_labels(out)
    if isinstance(data, (list, tuple)):
        return _unique_labels([x for item in data for x in _frontier_frames(item)])
    if hasattr(data, "points") and hasattr(data, "frontier") and hasattr(data, "system"):  # FrontierResult
        return [(f"{data.system} / {data.model} ({data.plan})", data, "system")]
    if isinstance(data, pd.DataFrame):
        first = "system" if "system" in data and len(data) and data["system"].nunique() == 1 else "hardware"
        label = " / ".join(str(data[c].iloc[0]) for c in (first, "model") if c in data and len(data))
        return [(label or "frontier", data, "price")]
    if hasattr(data, "to_frame") and hasattr(data, "hardware"):  # a PriceResult batch sweep
        execution = getattr(data, "execution", "")
        return [(f"{getattr(data.hardware, 'name', data.hardware)} / {getattr(data.model, 'name', data.model)}"
                 + (f" ({execution})" if execution else ""), data.to_frame(), "price")]
    raise _computes_nothing("frontier", "frontier(['h200', 'b200'], 'llama-3.1-8b') or tokenomics.chain.frontier(...)")


def frontier(data: Any, *, y: str = "price", ax: "Axes | None" = None, label: str | None = None,
             title: str | None = None) -> "Axes":
    """Price or throughput per chip against interactivity, one line per deployment.

    Parameters
    ----------
    data : PriceResult, FrontierResult, DataFrame, list or dict of these
        Batch sweeps to draw: a :func:`tokenomics.chain.frontier` result, a multi-chip
        :class:`~tokenomics.perf.frontier.FrontierResult`, a frame with ``tok_per_s_per_user``
        and the y column, a list of these, or ``{label: any of these}`` (one curve and legend
        entry per key; a key holding several curves labels each ``key: curve``).
        :func:`tokenomics.plotdata.frontier` prices accelerators or systems by name into such
        a dict, e.g. ``{"8x H200": tk.plotdata.frontier("h200", "llama-3.1-8b", system="dgx-h200"),
        "1x H200": tk.plotdata.frontier("h200", "llama-3.1-8b")}``.
    y : {"price", "tok_per_s_per_chip"}
        ``price``: cost to serve [USD per million output tokens]; ``tok_per_s_per_chip``:
        output tokens/s per chip [tokens/s].
    ax : matplotlib Axes, optional
        Draw into this Axes (e.g. to add deployments to an earlier call's chart).
    label : str, optional
        Legend label (one deployment only).
    title : str, optional

    Returns
    -------
    matplotlib.axes.Axes
        x: tokens/s per user [tokens/s], log scale; y as chosen, log scale.
    """
    if y not in _Y_FRONTIER:
        raise ValidationError(f"y must be one of {', '.join(_Y_FRONTIER)}, got {y!r}")
    col, col_1k, ylabel = _Y_FRONTIER[y]
    frames = _frontier_frames(data)
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
            ax.scatter(pts["tok_per_s_per_user"], pts[col], s=8, c="0.8", label=f"{lab}: feasible configurations")
            f = fr.frontier
            one_layout = f["parallel"].nunique() == 1  # then the legend names it; label batches only
            layout = f" ({f['parallel'].iloc[0]})" if one_layout else ""
            ax.plot(f["tok_per_s_per_user"], f[col], "-o", ms=3.5, label=f"{lab}{layout}: Pareto frontier")
            for _, r in f.iloc[:: max(1, len(f) // 6)].iterrows():
                text = f"batch {int(r['batch'])}" if one_layout else f"{r['parallel']}\nbatch {int(r['batch'])}"
                ax.annotate(text, (r["tok_per_s_per_user"], r[col]), fontsize=6.5, xytext=(4, 4),
                            textcoords="offset points")
            continue
        yv = _usd_per_m(fr, col, col_1k) if col_1k else (fr[col].to_numpy(float) if col in fr else None)
        if yv is None:
            raise ValidationError(f"no column {col!r} to plot for {lab}")
        xv = fr["tok_per_s_per_user"].to_numpy(float)
        ok = np.isfinite(yv) & np.isfinite(xv)
        order = np.argsort(xv[ok])
        xs, ys = xv[ok][order], yv[ok][order]
        ax.plot(xs, ys, marker="o", ms=3, label=lab)
        if "batch" in fr and len(xs):
            batches = fr["batch"].to_numpy()[ok][order]
            for k in (0, len(xs) - 1):
                ax.annotate(f"b{int(batches[k])}", (xs[k], ys[k]), fontsize=6.5, xytext=(3, 3),
                            textcoords="offset points", color="0.3")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("interactivity [output tokens/s per user]")
    ax.set_ylabel(ylabel)
    ax.set_title(title or ("Cost to serve vs interactivity [USD per million output tokens]" if y == "price"
                           else "Throughput vs interactivity [output tokens/s per chip]"))
    ax.grid(True, which="major", alpha=0.3)
    ax.grid(True, which="minor", alpha=0.1)
    ax.legend(fontsize=7)
    log_ticks(ax.xaxis)
    log_ticks(ax.yaxis, usd=y == "price")
    src = SOURCES["perf"] + ("; " + SOURCES["cost"] if y == "price" else "")
    caption(ax, "Sources: " + src + ". b<n>: batch at the ends of each sweep."
            if "price" in kinds else "Sources: " + src)
    return ax


# ---------------------------------------------------------------------------------------------
# price breakdown

def price_breakdown(data: Any, *, tiers: Any = None, ax: "Axes | None" = None) -> "Axes":
    """Cost of a chip-hour by component (stacked bars), InferenceX tier costs beside each bar.

    Parameters
    ----------
    data : DataFrame or PriceResult
        One row per accelerator with ``hardware`` and ``*_usd_per_chip_h`` component columns
        (``price(...).to_frame()`` rows; :func:`tokenomics.plotdata.breakdown` prices several
        accelerators into one frame), or one price result.
    tiers : DataFrame, optional
        InferenceX tier costs to mark (:func:`tokenomics.econ.tco.tier_table`, or
        :func:`tokenomics.plotdata.tiers`); None: none.
    ax : matplotlib Axes, optional

    Returns
    -------
    matplotlib.axes.Axes
        Bars in [USD per chip-hour].
    """
    import pandas as pd

    if hasattr(data, "to_frame") and not isinstance(data, pd.DataFrame):
        data = data.to_frame().iloc[[0]]
    if not isinstance(data, pd.DataFrame):
        raise _computes_nothing("price_breakdown", "breakdown(['h200', 'b200'], 'llama-3.1-8b')")
    b = data
    comp = [c for c in b.columns if c.endswith("_usd_per_chip_h") and c not in ("cost_usd_per_chip_h",)
            and not c.startswith("bottom_up")]
    if not comp:
        raise ValidationError("nothing to break down: no *_usd_per_chip_h component columns "
                              "(a flat-rate cost has no components)")
    ax = _axes(ax, (10, 4.5))
    x = np.arange(len(b))
    bottom = np.zeros(len(b))
    for c in comp:
        vals = b[c].to_numpy(float)
        ax.bar(x, vals, bottom=bottom, label=display_name(c).split(" (")[0], width=0.5)
        bottom += np.nan_to_num(vals)
    src = SOURCES["cost"]
    if tiers is not None and tiers is not False:
        if not isinstance(tiers, pd.DataFrame):
            raise _computes_nothing("price_breakdown(tiers=...)", "tiers()")
        tt = tiers
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
    ax.yaxis.set_major_formatter(_usd_formatter())
    ax.set_title("Cost of a chip-hour [USD per chip-hour]: bottom-up components vs InferenceX tiers")
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    caption(ax, "Sources: " + src + ". Power cost at the modelled decode power.")
    return ax


def _usd_formatter():
    """Dollars on a linear axis, every tick with the decimals its spacing needs: ``$0.125``,
    ``$0.150``; ``$1.5``, ``$2.0``; ``$100``."""
    from matplotlib.ticker import Formatter

    class _USD(Formatter):
        decimals = 2

        def __call__(self, x, pos=None):
            return f"${x:,.{self.decimals}f}"

        def format_ticks(self, values):
            v = np.asarray(values, dtype=float)
            exact = (d for d in range(7) if np.all(np.abs(np.round(v, d) - v) <= 1e-9 * np.maximum(1, np.abs(v))))
            self.decimals = next(exact, 6)
            return [self(x) for x in values]

    return _USD()


# ---------------------------------------------------------------------------------------------
# tornado

def tornado(data: Any, *, base_usd_per_m_tok: float | None = None, base_usd_per_1k_tok: float | None = None,
            label: str = "", ax: "Axes | None" = None) -> "Axes":
    """One-at-a-time sensitivity of a price: per input, the price with that input at its low
    value and at its high value (two colours) either side of the base price.

    Parameters
    ----------
    data : Tornado or DataFrame
        A :class:`~tokenomics.econ.uncertainty.Tornado` (:func:`tokenomics.plotdata.tornado`
        makes one from names), or its ``to_frame()`` (then give the base price).
    base_usd_per_m_tok, base_usd_per_1k_tok : float, optional
        Base price [USD per million, or per thousand, output tokens] (taken from a Tornado otherwise).
    label : str
        Configuration named in the title.
    ax : matplotlib Axes, optional

    Returns
    -------
    matplotlib.axes.Axes
        x: price [USD per million output tokens].
    """
    import pandas as pd

    if hasattr(data, "table") and hasattr(data, "base_usd_per_1k_tok"):  # a Tornado
        table, base = data.table, float(data.base_usd_per_1k_tok) * 1e3
    elif isinstance(data, pd.DataFrame):
        table = data
        base = base_usd_per_m_tok if base_usd_per_m_tok is not None else (
            None if base_usd_per_1k_tok is None else base_usd_per_1k_tok * 1e3)
    else:
        raise _computes_nothing("tornado", "tornado('h200', 'llama-3.1-8b')")
    t = table.iloc[::-1]
    lo = _usd_per_m(t, "usd_per_m_output_tok_at_low", "price_at_low")
    hi = _usd_per_m(t, "usd_per_m_output_tok_at_high", "price_at_high")
    if lo is None or hi is None:
        raise ValidationError("a tornado frame needs the price at each input's low and high value "
                              "(price_at_low/_high or usd_per_m_output_tok_at_low/_high)")
    if base is None or not np.isfinite(base):
        base = float(np.median(np.concatenate([lo, hi])))  # only to anchor the bars; not drawn
        draw_base = False
    else:
        draw_base = True
    ax = _axes(ax, (8, 4.5))
    yy = np.arange(len(t))
    ax.barh(yy, lo - base, left=base, color=TORNADO_COLORS["low"], height=0.6, label="input at its low value")
    ax.barh(yy, hi - base, left=base, color=TORNADO_COLORS["high"], height=0.6, label="input at its high value")

    def value(name: str, v: Any) -> str:
        frac = str(name).endswith(("_frac", "_frac_per_year"))
        return fmt_number(float(v) * 100) + " %" if frac else fmt_number(float(v))

    ax.set_yticks(yy, [f"{display_name(n)}: {value(n, a)} to {value(n, c)}"
                       for n, a, c in zip(t["input"], t["low"], t["high"])], fontsize=7.5)
    if draw_base:
        ax.axvline(base, color="black", lw=1)
        ax.text(base, len(t) - 0.4, f" base ${base:.3g}", fontsize=7.5, va="bottom")
    ax.xaxis.set_major_formatter(_usd_formatter())
    ax.set_xlabel("cost to serve [USD per million output tokens]")
    ax.set_ylabel("input: low to high")
    ax.set_title("Sensitivity of the price [USD per million output tokens]" + (f"\n{label}" if label else ""),
                 fontsize=10)
    ax.grid(True, axis="x", alpha=0.3)
    ax.legend(fontsize=7, loc="lower right")
    caption(ax, "Sources: input ranges datasets/tco_params.csv; " + SOURCES["cost"]
            + ". Each bar varies one input, the others at base.")
    return ax


# ---------------------------------------------------------------------------------------------
# forecast

def forecast(result: Any, *, references: Any = None, ax: "Axes | None" = None, title: str | None = None) -> "Axes":
    """Token-demand fan chart: median, 80 % and 95 % bands, observations and reference lines.

    Parameters
    ----------
    result : ForecastResult
        A :func:`tokenomics.forecast.forecast` result.
    references : DataFrame, optional
        Published reference lines to draw (``reference`` and ``tokens_per_day`` columns:
        :func:`tokenomics.forecast.scenarios.reference_lines`, or
        :func:`tokenomics.plotdata.references`); None: none.
    ax : matplotlib Axes, optional

    Returns
    -------
    matplotlib.axes.Axes
        x: date; y: tokens per day [tokens/day], log scale.
    """
    import pandas as pd

    if not (hasattr(result, "monthly") and hasattr(result, "history") and hasattr(result, "series_names")):
        raise _computes_nothing("forecast", "tokenomics.forecast.forecast('google')")
    if references is not None and references is not False and not isinstance(references, pd.DataFrame):
        raise _computes_nothing("forecast(references=...)", "references()")
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
    drawn = isinstance(references, pd.DataFrame) and len(references)
    if drawn:
        x_end = _to_dates(monthly["date"]).max()
        for _, r in references.iterrows():
            ax.axhline(r["tokens_per_day"], color="grey", ls="--", lw=1)
            ax.annotate(r["reference"], (x_end, r["tokens_per_day"]), fontsize=8, color="dimgrey",
                        va="bottom", ha="right")
    ax.set_yscale("log")
    ax.set_xlabel("date")
    ax.set_ylabel("token demand [tokens per day]")
    scen = result.scenario or "trend only"
    fit = f", fitted through {result.fit_through}" if result.fit_through else ""
    ax.set_title(title or f"Token demand forecast [tokens per day] ({scen}{fit}); dots = observations")
    ax.grid(True, which="major", alpha=0.3)
    ax.legend(loc="upper left", fontsize=8)
    _date_axis(ax)
    caption(ax, "Sources: " + SOURCES["forecast"] + (" (dashed lines)" if drawn else "") + ".")
    return ax


# ---------------------------------------------------------------------------------------------
# watch

def _watch_price(ax: "Axes", dashboard: Any, prices: Any) -> None:
    import pandas as pd

    from .dates import from_decimal_year

    if prices is None:
        raise ValidationError("the price chart draws the list prices it is given: "
                              "watch('price', dashboard, prices=tokenomics.plotdata.watch_prices())")
    p = prices
    pw = getattr(dashboard, "price", dashboard)  # a Dashboard, or its PriceWatch alone
    rates, events = pw.rates_by_tier, pw.events
    rates = rates.set_index("group")
    colors = {"frontier": "tab:red", "mid": "tab:blue", "small": "tab:green"}
    for tier, sub in p.groupby("tier"):
        rate = rates.loc[tier, "decline_factor_per_year"] if tier in rates.index else np.nan
        usd = _usd_per_m(sub, "blended_usd_per_m_tok", "blended_usd_per_1k_tok")
        ax.scatter(sub["date_parsed"], usd, s=22, color=colors.get(tier, "k"),
                   label=f"{tier} ({rate:.2f}x/yr)", alpha=0.8)
        t = sub["t_year"].to_numpy(float)
        if len(t) >= 2 and np.ptp(t) > 0:
            b = np.polyfit(t, np.log(usd), 1)
            tt = np.linspace(t.min(), t.max(), 50)
            ax.plot(from_decimal_year(tt).astype("datetime64[ns]"), np.exp(np.polyval(b, tt)),
                    color=colors.get(tier, "k"), lw=1.2)
    ch = events[events["region"] == "china"]
    after = _usd_per_m(ch, "price_after_usd_per_m_tok", "price_after_usd_per_1k_tok")
    after = np.asarray(pd.to_numeric(pd.Series(after), errors="coerce"), dtype=float)
    ok = np.isfinite(after) & (after > 0)
    ax.scatter(pd.to_datetime(ch["date"])[ok], after[ok], marker="v",
               color="purple", s=40, label="China cuts (price after, USD)")
    ax.set_yscale("log")
    log_ticks(ax.yaxis, usd=True)
    ax.set_xlabel("date")
    ax.set_ylabel("blended list price [USD per million tokens, 3:1 in:out]")
    ax.set_title("API list prices by tier [USD per million tokens] (OLS on log price); prices can rise too")
    ax.grid(True, which="major", alpha=0.3)
    ax.legend(fontsize=8)
    _date_axis(ax)
    caption(ax, "Sources: " + SOURCES["prices"] + ". Lines: OLS fit of log price on time per tier.")


def _watch_megakernel(ax: "Axes", dashboard: Any, prices: Any = None) -> None:
    import pandas as pd

    from .dates import from_decimal_year

    idx, f = dashboard.adoption_index, dashboard.adoption_fits["all"]
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


def _watch_speedup(ax: "Axes", dashboard: Any, prices: Any = None) -> None:
    sp = dashboard.speedup
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


def _watch_yield(ax: "Axes", dashboard: Any, prices: Any = None) -> None:
    import pandas as pd

    y = dashboard.yields
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


def _watch_supernode(ax: "Axes", dashboard: Any, prices: Any = None) -> None:
    import pandas as pd

    r = dashboard.ramp
    fc = r.curve
    x = pd.to_datetime(fc["date"])
    ax.fill_between(x, fc["units_lo"].clip(lower=0.5), fc["units_hi"], alpha=0.25, label="90% interval")
    ax.plot(x, fc["units_p50"].clip(lower=0.5), "-", label="median ramp")
    ax.plot(pd.to_datetime(r.points["date"]), r.points["count_low"], "ko", label="dated counts (lower bounds)")
    ax.set_yscale("log")
    log_ticks(ax.yaxis)
    ax.set_xlabel("date")
    ax.set_ylabel("cumulative CloudMatrix 384 systems [systems]")
    ax.set_title(f"Supernode ramp (ceiling {r.k_range[0]:.0f}-{r.k_range[1]:.0f} systems)")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    _date_axis(ax)
    caption(ax, "Source: " + SOURCES["supernode"] + "; logistic ramp, Monte Carlo interval.")


def watch(metric: str, dashboard: Any, *, prices: Any = None, ax: "Axes | None" = None) -> "Axes":
    """One watch metric as a chart.

    Parameters
    ----------
    metric : {"price", "megakernel", "speedup", "yield", "supernode"}
        ``price``: API list prices by tier and China cuts [USD per million tokens];
        ``megakernel``: adoption index and its logistic fit [level 0-4]; ``speedup``: modelled
        megakernel over CUDA-graph decode speedup by batch [x]; ``yield``: Ascend 910C die
        yield [fraction]; ``supernode``: cumulative CloudMatrix 384 systems [systems].
    dashboard : Dashboard
        A computed :func:`tokenomics.watch.watch` result to draw from (for ``price`` alone,
        :func:`tokenomics.watch.prices.price_watch` is enough).
    prices : DataFrame, optional
        The list prices the ``price`` chart draws (:func:`tokenomics.plotdata.watch_prices`).
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
    needs = {"price": "price", "megakernel": "adoption_index", "speedup": "speedup", "yield": "yields",
             "supernode": "ramp"}[metric]
    if not (hasattr(dashboard, needs) or (metric == "price" and hasattr(dashboard, "rates_by_tier"))):
        raise _computes_nothing("watch", "watch_prices() with tokenomics.watch.watch() (or, for the price "
                                "chart alone, tokenomics.watch.prices.price_watch())")
    fn, size = draw[metric]
    ax = _axes(ax, size)
    fn(ax, dashboard, prices)
    return ax
