"""Pricing report: Markdown and a standalone HTML page with PNG figures; it ends with the demand
forecast and the GPUs, power and energy to serve it (:func:`tokenomics.forecast.plan_infrastructure`).

:func:`build_report` computes every table (pure, returns DataFrames and figures' data);
:func:`write_report` renders them and writes ``report.md``, ``report.html`` (figures embedded
as base64, so the page stands alone) and the PNG files, each atomically
(:mod:`tokenomics.io`). Unit conversion for display ($ per million tokens) happens only here.
"""

from __future__ import annotations

import base64
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from . import _validate as v
from .errors import TokenomicsError, ValidationError

DEFAULT_HARDWARE = ("h100-sxm", "h200", "b200", "mi300x")
#: (model, weight precision): the 70B model is served in fp8 so that it fits on one chip.
DEFAULT_MODELS = (("llama-3.1-8b", None), ("llama-3.1-70b", "fp8"))
INTERACTIVITY_TARGETS = (20.0, 50.0, 100.0)
from .chain import DEFAULT_BATCH_PER_ATTN_GROUP as REFERENCE_BATCH  # noqa: E402  (the one default batch)
#: Files :func:`write_report` writes (the directory is swapped whole when it holds only these).
REPORT_FILES = ("report.md", "report.html", "price_vs_interactivity.png", "cost_breakdown.png", "tornado.png")
#: Most Monte Carlo draws per configuration in a report.
MAX_REPORT_SAMPLES = 1_000_000

#: Measured H200 energy per token (datasets/h200_microbench.csv power_decode rows, dense-8b,
#: CUDA graph, context 1024).
MEASURED_J_PER_TOK = {1: 2.2199, 32: 0.1076, 128: 0.0571}


@dataclass
class Report:
    """Tables and figure data of a pricing report (DataFrames)."""

    title: str
    prices: Any
    interactivity: Any
    frontiers: dict = field(repr=False)
    tiers: Any = None
    breakdown: Any = None
    tornado: Any = None
    tornado_label: str = ""
    tornado_base: float = float("nan")
    monte_carlo: Any = None
    disagg: Any = None
    disagg_text: str = ""
    rent_own: Any = None
    energy_check: Any = None
    k3_costs: Any = None
    demand: Any = None
    demand_shifts: str = ""
    infra: Any = None
    infra_label: str = ""
    roadmap: Any = None
    skipped: list = field(default_factory=list)


def _models(models, weight_precision):
    if models is None:
        return [(m, weight_precision or p) for m, p in DEFAULT_MODELS]
    return [(m, weight_precision) for m in models]


def _names(value, what: str) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        value = (value,)
    if not isinstance(value, (list, tuple)) or not all(isinstance(x, str) for x in value):
        raise ValidationError(f"{what} must be a list of names, got {value!r}")
    if not value:
        raise ValidationError(f"{what} is empty; give at least one name or None for the defaults")
    return list(value)


def _check_report_args(hardware, models, execution, workload, weight_precision, seed, n_samples) -> None:
    """Resolve every name and check the numbers before any work: a typo is an error, not a
    silently skipped configuration."""
    from . import catalog
    from .chain import workload_mix
    from .specs import plan, precision_bytes

    for h in _names(hardware, "hardware"):
        catalog.accelerator(h)
    for m in _names(models, "models"):
        catalog.model(m)
    if not isinstance(execution, str):
        raise ValidationError(f"execution must be a plan name, got {execution!r}")
    plan(execution)
    if not isinstance(workload, str):
        raise ValidationError(f"workload must be a name, got {workload!r}")
    workload_mix(workload)
    if weight_precision is not None:
        precision_bytes(weight_precision)
    for val, name in ((seed, "seed"), (n_samples, "n_samples")):
        if isinstance(val, bool) or not isinstance(val, (int, np.integer)):
            raise ValidationError(f"{name} must be a whole number, got {val!r}")
    v.count(seed, "seed", minimum=0)
    v.draws(n_samples, "n_samples (Monte Carlo draws)")  # its P5-P95
    if n_samples > MAX_REPORT_SAMPLES:
        raise ValidationError(f"n_samples (Monte Carlo draws) must be at most {MAX_REPORT_SAMPLES:,} per "
                              f"configuration, got {n_samples:,}")


def build_report(hardware=None, models=None, execution: str = "engine", workload: str = "chat",
                 weight_precision: str | None = None, seed: int = 0, n_samples: int = 5000,
                 layout: dict | None = None) -> Report:
    """Compute the report's tables. Configurations that cannot be priced are listed in ``skipped``.

    ``layout``: deployment keywords applied to every configuration (``system``, ``tp``, ``ep``,
    ``dp_attention``, ``engine``, ``spec``, ``prefill_chunk_tok``; see
    :func:`tokenomics.deployment.resolve`); with ``system`` the hardware is the system's chip.
    """
    import pandas as pd

    from . import chain
    from .econ import tco, uncertainty

    _check_report_args(hardware, models, execution, workload, weight_precision, seed, n_samples)
    lay = {k: val for k, val in (layout or {}).items() if val is not None}
    if "system" in lay:
        from .perf.parallel import system as _system

        chip = _system(lay["system"]).accelerator.name
        if hardware and any(h != chip for h in hardware):
            raise ValidationError(f"--system {lay['system']} is built from {chip}; drop --hardware or give {chip}")
        hardware = [chip]
    hws = list(hardware or DEFAULT_HARDWARE)
    mods = _models(models, weight_precision)
    prices, inter, frontiers, skipped = [], [], {}, []
    for m, wp in mods:
        for hw in hws:
            key = f"{hw} / {m}" + (f" ({wp})" if wp else "")
            try:
                f = chain.frontier(hw, m, execution, workload=workload, weight_precision=wp, **lay)
                ok = np.isfinite(f.usd_per_m_output_tok)
                fr = f.to_frame()[ok]
                frontiers[key] = fr
                # 32 sequences per attention group (per replica on plain TP layouts)
                b = int(min(REFERENCE_BATCH * int(f.deployment.parallel.attn_dp), fr["batch"].max()))
                r = chain.price(hw, m, execution, batch=b, workload=workload, weight_precision=wp, **lay)
                ref = r.to_frame()
                ref.insert(0, "config", key)
                ref.insert(1, "deployment", r.deployment.layout_label())  # where the speed per user comes from
                prices.append(ref)
                # the same decode-only steady state as the frontier and the price row above
                pai = chain.price_at_interactivity(hw, m, execution, tok_per_s_per_user=list(INTERACTIVITY_TARGETS),
                                                   workload=workload, weight_precision=wp, serving="decode", **lay)
                row = {"config": key}
                for t, p in zip(INTERACTIVITY_TARGETS, pai["usd_per_m_output_tok"]):
                    row[f"usd_per_m_out_at_{t:g}_tok_s_user"] = p
                for t, d in zip(INTERACTIVITY_TARGETS, pai["deployment"]):
                    row[f"layout_at_{t:g}_tok_s_user"] = d
                row["frontier_cost_range_x"] = float(pai["frontier_max_usd_per_m_output_tok"].iloc[0]
                                                    / pai["frontier_min_usd_per_m_output_tok"].iloc[0])
                inter.append(row)
            except TokenomicsError as exc:
                skipped.append(f"{key}: {exc}")
    if not prices:
        raise TokenomicsError("nothing to report: no configuration could be priced; " + "; ".join(skipped))
    prices = pd.concat(prices, ignore_index=True)
    rep = Report(title=f"Price per token: {', '.join(hws)}; {workload} workload; {execution} execution",
                 prices=prices, interactivity=pd.DataFrame(inter), frontiers=frontiers, skipped=skipped)
    rep.tiers = tco.tier_table()
    rep.tiers = rep.tiers[rep.tiers["hardware"].isin(hws)].reset_index(drop=True)
    # cost breakdown at the reference configuration's decode power, first model
    comp = [c for c in prices.columns if c.endswith("_usd_per_chip_h") and c != "cost_usd_per_chip_h"]
    first = prices[prices["model"] == prices["model"].iloc[0]]
    rep.breakdown = first[["hardware", "board_power_w", *comp, "cost_usd_per_chip_h"]].reset_index(drop=True)
    # uncertainty on the first priced configuration with bottom-up costs
    r0 = prices.iloc[0]
    try:
        ci = tco.CostInputs.for_hardware(r0["hardware"])
        tor = uncertainty.tornado(ci, r0["board_power_w"], r0["tok_per_s_per_chip"])
        rep.tornado = tor.to_frame()
        rep.tornado_base = tor.base_usd_per_1k_tok
        rep.tornado_label = f"{r0['config']}, batch {int(r0['batch'])}"
        mcs = []
        for _, r in prices.iterrows():
            try:
                c = tco.CostInputs.for_hardware(r["hardware"])
            except TokenomicsError:
                continue
            mc = uncertainty.monte_carlo(c, r["board_power_w"], r["tok_per_s_per_chip"], n_samples=n_samples, seed=seed)
            d = mc.to_frame()
            d.insert(0, "config", r["config"])
            mcs.append(d)
        rep.monte_carlo = pd.concat(mcs, ignore_index=True) if mcs else None
        own = []
        for hw in hws:
            try:
                c = tco.CostInputs.for_hardware(hw)
                rent = tco.default_rent_usd_per_chip_h(hw)
            except TokenomicsError:
                continue
            acc_p = prices[prices["hardware"] == hw]["board_power_w"]
            d = tco.rent_vs_own(c, rent, [0.5, 0.8, 1.0], float(acc_p.iloc[0]) if len(acc_p) else None)
            d.insert(0, "hardware", hw)
            own.append(d)
        rep.rent_own = pd.concat(own, ignore_index=True) if own else None
    except TokenomicsError as exc:
        skipped.append(f"uncertainty: {exc}")
    # disaggregation: prefill on the highest-FLOP chip, decode on each other chip, first model
    from . import catalog

    m0, wp0 = mods[0]
    priced = list(dict.fromkeys(prices["hardware"]))
    if len(priced) >= 2:
        top = max(priced, key=lambda h: catalog.accelerator(h).peak_bf16_flop_per_s)
        frames, texts = [], []
        for d in priced:
            if d == top:
                continue
            try:
                res = chain.disaggregated(top, d, m0, execution, weight_precision=wp0)
                frames.append(res.to_frame())
                texts.append(res.what_must_be_true())
            except TokenomicsError as exc:
                skipped.append(f"disaggregated {top}->{d}: {exc}")
        if frames:
            rep.disagg = pd.concat(frames, ignore_index=True)
            rep.disagg_text = "\n".join(texts)
    # measured check
    if "h200" in hws:
        r = chain.price("h200", "llama-3.1-8b", "graph", batch=np.array(list(MEASURED_J_PER_TOK)), context_tok=1024)
        meas = np.array(list(MEASURED_J_PER_TOK.values()))
        rep.energy_check = pd.DataFrame({"batch": list(MEASURED_J_PER_TOK), "measured_j_per_tok": meas,
                                         "model_j_per_tok": r.energy_j_per_tok,
                                         "rel_err_frac": r.energy_j_per_tok / meas - 1})
    _k3_costs(rep)
    _demand(rep)
    return rep


#: Columns of the report's Kimi K3 table (:func:`tokenomics.studies.showdown.costs`).
K3_COLUMNS = ("system", "chips", "plan", "batch", "tok_per_s_per_user", "tok_per_s_per_chip",
              "cost_usd_per_chip_h", "usd_per_m_output_tok", "cost_model")


def _k3_costs(rep: Report) -> None:
    """What a Kimi K3 output token costs on the article's four systems at 1, 8 and 64 users
    (:func:`tokenomics.studies.showdown.costs`, as ``tokenomics showdown`` prices them)."""
    from .studies import showdown

    try:
        rep.k3_costs = showdown.costs()[list(K3_COLUMNS)]
    except TokenomicsError as exc:
        rep.skipped.append(f"kimi-k3 costs: {exc}")


def _k3_spread(costs) -> str:
    """One sentence per batch: the cheapest and dearest system and how far apart they are."""
    from ._display import fmt_number

    out = []
    for b, g in costs.dropna(subset=["usd_per_m_output_tok"]).groupby("batch"):
        lo = g.loc[g["usd_per_m_output_tok"].idxmin()]
        hi = g.loc[g["usd_per_m_output_tok"].idxmax()]
        users = "one user" if b == 1 else f"{b} users"
        out.append(f"At {users}: {lo['system']} is cheapest at {fmt_number(lo['usd_per_m_output_tok'])} USD per "
                   f"million output tokens, {hi['system']} dearest at {fmt_number(hi['usd_per_m_output_tok'])} "
                   f"({hi['usd_per_m_output_tok'] / lo['usd_per_m_output_tok']:.0f}x).")
    return " ".join(out)


#: Series whose demand the report forecasts and serves (the two largest bundled ones).
REPORT_DEMAND_SERIES = ("google", "china")


def _demand(rep: Report) -> None:
    """The demand forecast of :data:`REPORT_DEMAND_SERIES` (trend, annual medians and 80 %
    intervals) and what serving it takes on the forecast's default deployment
    (:func:`tokenomics.forecast.plan_infrastructure`): GPUs, grid power, energy, running cost."""
    import warnings

    from .errors import ConvergenceWarning
    from .forecast import forecast, plan_infrastructure

    try:
        with warnings.catch_warnings():  # the forecast table reports its fits; the report shows the ensemble
            warnings.simplefilter("ignore", ConvergenceWarning)
            fr = forecast(list(REPORT_DEMAND_SERIES))
        ann = fr.to_frame("annual")
        rep.demand = ann[["series", "date", "tokens_per_day", "tokens_per_day_lo_80", "tokens_per_day_hi_80"]]
        rep.demand = rep.demand.assign(date=rep.demand["date"].dt.strftime("%Y-%m"))
        infra = plan_infrastructure(fr).to_frame()
    except TokenomicsError as exc:
        rep.skipped.append(f"demand: {exc}")
        return
    from .forecast.history import load_history
    from .forecast.measurement import level_shifts

    sh = level_shifts(load_history())
    sh = sh[sh["series"].isin(REPORT_DEMAND_SERIES) & sh["applied"]]
    rep.demand_shifts = " ".join(
        f"The `{r.series}` series changes definition in {r.date:%B %Y} "
        f"(from {r.from_definition} to {r.to_definition}): the jump is fitted as a level shift of {r.shift_dec:+.2f} "
        f"decades (95 % {r.shift_lo95_dec:+.2f} to {r.shift_hi95_dec:+.2f}), not as growth "
        "(`tokenomics forecast --show measurement`)." for r in sh.itertuples())
    try:
        from .forecast.roadmap import cost_path

        rm = cost_path(range(2024, 2031)).to_frame()
        rep.roadmap = rm[["year", "system", "status", "cost_usd_per_m_output_tok", "usd_per_m_output_tok"]].rename(
            columns={"cost_usd_per_m_output_tok": "cost, USD per M output tokens",
                     "usd_per_m_output_tok": "list price, USD per M output tokens"})
        rep.roadmap.attrs["margin_frac"] = float(rm["margin_frac"].iloc[0])
    except TokenomicsError as exc:
        rep.skipped.append(f"roadmap: {exc}")
    rep.infra = infra[["series", "year", "tokens_per_day", "n_chips", "n_chips_lo_80", "n_chips_hi_80",
                       "facility_mw", "energy_twh", "cost_usd", "region", "dc_electricity_twh",
                       "dc_electricity_share_frac", "dc_electricity_tokens_per_day"]]
    r0 = infra.iloc[0]
    rep.infra_label = (f"{r0['deployment']}, {r0['workload']} workload, {r0['tok_per_s_per_user']:.0f} tok/s "
                       f"per user: a GPU serves {r0['tok_per_s_per_chip']:,.0f} tok/s of input and output at "
                       f"{r0['cost_usd_per_chip_h']:.2f} USD/h ({r0['cost_basis']})")


# ---------------------------------------------------------------------------------------------
# rendering

#: Columns shown as written (labels, years, dates), never as numbers with separators.
_LABEL_COLUMNS = ("year", "date", "vintage", "seed", "as_of")


def _cell(x: Any, col: str) -> str:
    """One table cell for reading (:func:`tokenomics._display.fmt_number`); a fraction
    (``*_frac``) as a percentage, labels and years as written."""
    from ._display import fmt_number

    if col in _LABEL_COLUMNS or isinstance(x, str):
        if isinstance(x, (float, np.floating)) and float(x).is_integer():
            x = int(x)
        text = "" if x is None else str(x)
    elif col.endswith("_frac") and isinstance(x, (int, float, np.integer, np.floating)) \
            and not isinstance(x, (bool, np.bool_)):
        text = fmt_number(float(x) * 100) + " %" if np.isfinite(x) else ""
    else:
        text = fmt_number(x)
    return text.replace("|", "/")


def _numeric(col) -> bool:
    """Whether a column holds numbers (right-aligned), not labels or yes/no."""
    import re

    import pandas as pd

    if col.name in _LABEL_COLUMNS or pd.api.types.is_bool_dtype(col):
        return False
    if pd.api.types.is_numeric_dtype(col):
        return True
    cells = [str(x) for x in col if isinstance(x, str) and x]  # numbers already written (the tornado's)
    return bool(cells) and all(re.fullmatch(r"-?[\d,.]+( %)?", x) for x in cells)


def _md_table(df, max_rows: int = 40) -> str:
    """A Markdown table for reading: display names with units as headers
    (:func:`tokenomics._display.display_name`), numbers formatted by :func:`_cell`."""
    from ._display import display_name

    df = df.head(max_rows)
    cols = [str(c) for c in df.columns]
    head = "| " + " | ".join(display_name(c) for c in cols) + " |"
    sep = "|" + "".join("--:|" if _numeric(df[c]) else "---|" for c in df.columns)
    rows = ["| " + " | ".join(_cell(x, c) for x, c in zip(r, cols)) + " |" for r in df.itertuples(index=False)]
    return "\n".join([head, sep, *rows])


def price_view(prices):
    """The headline price table of a report: USD per million tokens, tokens/s, J/token."""
    if not hasattr(prices, "columns"):
        raise ValidationError(f"price_view needs the prices DataFrame of a Report, got {type(prices).__name__}")
    from .units import per_million

    prices = per_million(prices)
    v = prices[["config", "batch", "tok_per_s_per_chip", "tok_per_s_per_user", "cost_usd_per_chip_h",
                "energy_j_per_tok", "kwh_per_m_tok", "usd_per_m_input_tok", "usd_per_m_output_tok",
                "usd_per_m_blended_tok"]].copy()
    if "deployment" in prices.columns:
        v.insert(1, "deployment", prices["deployment"].to_numpy())
    for c in ("cost_basis", "output_convention"):  # every price says its basis and convention
        if c in prices.columns:
            v[c] = prices[c].to_numpy()
    return v


def per_million_view(df):
    """A report table with its USD-per-1K-token prices as USD per million tokens, the unit of the
    headline table and the tornado figure: ``*_usd_per_1k_*`` columns become ``*_usd_per_m_*``
    (x 1,000), and a tornado's ``price_at_low`` / ``price_at_high`` (USD per 1K output tokens)
    become ``usd_per_m_output_tok_at_low`` / ``_at_high``.

    >>> import pandas as pd
    >>> per_million_view(pd.DataFrame({"price_usd_per_1k_tok_p50": [0.00015]})).to_dict("list")
    {'price_usd_per_m_tok_p50': [0.15]}
    """
    if not hasattr(df, "columns"):
        raise ValidationError(f"per_million_view needs a DataFrame, got {type(df).__name__}")
    from .units import per_million

    # a tornado's bounds are per-1K output-token prices under short names: name them so first
    tornado = {"price_at_low": "usd_per_1k_output_tok_at_low", "price_at_high": "usd_per_1k_output_tok_at_high"}
    return per_million(df.rename(columns=tornado))


def _figures(rep: Report, out: Path) -> dict[str, Path]:
    """Draw the report's figures with :mod:`tokenomics.plot` and save them as PNG (atomically)."""
    from . import plot
    from .io import save_png

    plt = plot._pyplot()
    paths: dict[str, Path] = {}

    def save(ax, name):
        p = out / name
        save_png(ax.figure, p, bbox_inches="tight")
        paths[name] = p

    _, ax = plt.subplots(figsize=(8, 5))
    save(plot.frontier(rep.frontiers, ax=ax, title="Cost to serve vs interactivity [USD per million output tokens]\n"
                                                     "(batch sweep, bottom-up cost)"),
         "price_vs_interactivity.png")
    _, ax = plt.subplots(figsize=(10, 4.5))
    save(plot.price_breakdown(rep.breakdown, tiers=rep.tiers, ax=ax), "cost_breakdown.png")
    if rep.tornado is not None:
        _, ax = plt.subplots(figsize=(8, 4.5))
        save(plot.tornado(rep.tornado, base_usd_per_1k_tok=rep.tornado_base, label=rep.tornado_label, ax=ax),
             "tornado.png")
    return paths


#: Large quantities the demand tables state in words: column -> (divisor, unit word).
_IN_WORDS = {"tokens_per_day": (1e12, "trillions"), "dc_electricity_tokens_per_day": (1e12, "trillions"),
             "cost_usd": (1e9, "USD billion a year")}


def _in_words(df):
    """A demand table with token volumes in trillions a day and costs in billions of USD a year
    (numbers a reader takes in at a glance, not 1.61×10¹⁷)."""
    from ._display import display_name

    v = df.copy()
    names = {}
    for col in v.columns:
        base = next((b for b in _IN_WORDS if col == b or col.startswith(b + "_lo_") or col.startswith(b + "_hi_")), None)
        if base is None:
            continue
        div, word = _IN_WORDS[base]
        v[col] = v[col].astype(float) / div
        label = display_name(col)
        names[col] = f"{label.split(' (')[0]} ({word})" if base == "cost_usd" else f"{label} ({word})"
    return v.rename(columns=names)


#: The headline table's first columns: what is priced, then its prices.
_HEADLINE_FIRST = ("config", "deployment", "batch", "usd_per_m_output_tok", "usd_per_m_input_tok",
                   "usd_per_m_blended_tok", "tok_per_s_per_user", "tok_per_s_per_chip")


def _headline_view(view):
    """The headline price table without the columns every row shares (said once above it)."""
    shared = [c for c in ("cost_basis", "output_convention") if c in view.columns and view[c].nunique() == 1]
    same = "; ".join(f"{c.replace('_', ' ')} {view[c].iloc[0]}" for c in shared)
    first = [c for c in _HEADLINE_FIRST if c in view.columns]  # the prices before the physics
    view = view.drop(columns=shared)
    return view[first + [c for c in view.columns if c not in first]], same


def _tiers_view(tiers):
    """The tier table with each tier's cost named as USD per chip-hour."""
    return tiers.rename(columns={c: f"{c} (USD per chip-hour)" for c in tiers.columns
                                 if c not in ("hardware", "vintage") and not c.endswith("_usd_per_chip_h")})


def _tornado_view(tornado):
    """The tornado table in USD per million output tokens, each input by its display name, its
    low / base / high values written in its unit (fractions as percentages)."""
    from ._display import display_name, fmt_number

    v = per_million_view(tornado)
    frac = v["input"].astype(str).str.endswith(("_frac", "_frac_per_year"))
    for c in ("low", "base", "high"):
        if c in v.columns:
            v[c] = [(fmt_number(float(x) * 100) + " %") if f else fmt_number(x) for x, f in zip(v[c], frac)]
    v["input"] = [display_name(x) for x in v["input"]]
    return v


#: Columns of the disaggregation table in the report (the rest stay in ``Report.disagg``).
DISAGG_COLUMNS = ("prefill_hardware", "decode_hardware", "input_tok", "output_tok", "instance_ratio",
                  "capacity_ratio_same_capex", "cost_disagg_usd_per_m_output_tok",
                  "cost_colocated_usd_per_m_output_tok", "max_decode_capex_usd_per_chip_for_target",
                  "target_possible")


def render_markdown(rep: Report, figures: dict[str, Path]) -> str:
    """The report as Markdown (figures referenced by file name; tables with display headers and
    numbers formatted for reading)."""
    if not isinstance(rep, Report):
        raise ValidationError(f"render_markdown needs a Report from build_report, got {type(rep).__name__}")
    s = [f"# {rep.title}", "",
         "Generated by `tokenomics report`. Every price is in USD per million tokens. Costs are bottom-up "
         "(capex + power + colocation + maintenance, `datasets/tco_params.csv`) unless a tier is named (the "
         "cost basis column); prices are the cost to serve at full utilization and zero margin (the InferenceX "
         "convention); output tokens are charged decode time only and input tokens the prefill (output "
         "convention decode-only). Throughput is the decode-only steady state: a batch decoding while prompts "
         "are prefilled apart (`tokenomics price --serving decode --batch 32`); `tokenomics price` serves "
         "co-located by default, prompts sharing the decode iterations, so its figures differ. Board power "
         "comes from the H200-fitted power model (TDP-scaled elsewhere).", ""]
    head, same = _headline_view(price_view(rep.prices))
    s += [f"## Prices at batch {REFERENCE_BATCH} (or the largest that fits)", "",
          *([f"Every row: {same}.", ""] if same else []), _md_table(head), ""]
    layouts = [c for c in rep.interactivity.columns if c.startswith("layout_at_")]
    s += ["## Price vs interactivity", "", "![Price against speed per user](price_vs_interactivity.png)", "",
          "At each speed per user: the cheapest batch and layout that serves every user at least that fast "
          "(as `tokenomics price --target-tok-s-user`); empty where none is. The figure sweeps the batch "
          "of each configuration's headline layout (the deployment column of the first table). The last "
          "column: the dearest point of that sweep over its cheapest.", "",
          _md_table(rep.interactivity.drop(columns=layouts)), "",
          "The layout each of those prices runs:", "",
          _md_table(rep.interactivity[["config", *layouts]]), ""]
    s += ["## Cost of a chip-hour", "", "![Cost of a chip-hour by component](cost_breakdown.png)", "",
          _md_table(rep.breakdown), "", "InferenceX tiers beside the bottom-up estimate (at 0.75 x TDP):", "",
          _md_table(_tiers_view(rep.tiers)), ""]
    if rep.tornado is not None:
        s += ["## Uncertainty", "", f"Tornado for {rep.tornado_label} (USD per million output tokens): "
              "each bar moves one input from its low to its high value, the others at base.", "",
              "![Sensitivity of the price to each input](tornado.png)", "", _md_table(_tornado_view(rep.tornado)), ""]
    if rep.monte_carlo is not None:
        s += ["Monte Carlo (triangular inputs, seeded; USD per million output tokens):", "",
              _md_table(per_million_view(rep.monte_carlo)), ""]
    if rep.rent_own is not None:
        s += ["## Rent vs own", "", "Own (bottom-up) vs InferenceX 3-year rental (2026-07 survey):", "",
              _md_table(rep.rent_own), "",
              "Break-even utilization: the share of hours an owned chip must be busy to cost no more "
              "per used hour than the rental; above 100 %, renting is cheaper at any utilization.", ""]
    if rep.disagg is not None:
        lines = dict.fromkeys(rep.disagg_text.splitlines())  # the same finding once, not once per decode chip
        d = per_million_view(rep.disagg)
        s += ["## Disaggregated prefill/decode (HC2000's 10x claim)", "",
              "Prefill on the chip with the most FLOP/s, decode on each other chip, against both phases "
              "colocated on the decode chip (the full table: `Report.disagg`).", "",
              _md_table(d[[c for c in DISAGG_COLUMNS if c in d.columns]]), "",
              *[f"- {line}" for line in lines], ""]
    if rep.energy_check is not None:
        s += ["## Measured check: H200, Llama-3.1-8B, CUDA graph, context 1024", "",
              _md_table(rep.energy_check), ""]
    if rep.k3_costs is not None:
        s += ["## Kimi K3 on the article's systems", "",
              "What a Kimi K3 output token costs at 1, 8 and 64 concurrent users on the unoptimized 128-chip "
              "supernode, the SD200 with super operators, 16 TPU v7 chips with the megakernel and 16 GB200 "
              "GPUs, priced as `tokenomics showdown` prices them: 8K context, speculative decoding at the "
              "acceptance a real workload gets (not the benchmarks' fixed 6 tokens a step), bottom-up cost "
              "where a capex is catalogued, zero margin. Cost bases differ by row: TPU v7 has no public "
              "capex and takes InferenceX's hyperscaler-owned tier, the SD200's chip has no public price "
              "and is priced as an Ascend 910C (the cost model column names each). Independent of the "
              "hardware priced above.", "", _md_table(rep.k3_costs), "",
              _k3_spread(rep.k3_costs), ""]
    if rep.demand is not None:
        s += ["## Demand and what serves it", "",
              "Token demand forecast on trend (`tokenomics forecast`; medians and 80 % intervals, tokens per "
              "day in December of each year):", "", _md_table(_in_words(rep.demand)), ""]
        if rep.demand_shifts:
            s += [rep.demand_shifts, ""]
        if rep.roadmap is not None:
            s += ["What a frontier-class output token costs along the hardware roadmap (`tokenomics forecast "
                  "--show roadmap`): DeepSeek-V3 at 35 tok/s per user on the cheapest system available each "
                  "year (shipping or announced), priced as `tokenomics watch` prices its cost floor (disaggregated, bottom-up); the list price marks "
                  f"the cost up by the {rep.roadmap.attrs['margin_frac'] * 100:.0f} % median margin of the bundled API "
                  "prices (`tokenomics market`). After the newest announced system the path is flat.", "",
                  _md_table(rep.roadmap), ""]
        s += [
              f"Serving it on the forecast's default deployment ({rep.infra_label}; `tokenomics forecast "
              "--show infra` states another) at 50 % mean load: GPUs, the grid connection of those GPUs "
              "busy (MW), the energy of the year's tokens (TWh) and the running cost (USD a year). The "
              "core's prefill rate runs optimistic on measured fleets, so read the GPU counts as lower "
              "bounds. Independent of the hardware priced above. Beside the energy, the electricity of "
              "every data centre of the series' region as the IEA projects it (base case, "
              "`datasets/dc_electricity.csv`), the share of it the year's tokens take, and the tokens a day "
              "all of it would serve on this deployment.", "", _md_table(_in_words(rep.infra)), "",
              _largest_build(rep.infra), "", _electricity_check(rep.infra), ""]
    if rep.skipped:
        s += ["## Skipped", "", *[f"- {x}" for x in rep.skipped], ""]
    return "\n".join(s)


def _largest_build(infra) -> str:
    """One sentence on the largest build-out the table implies (a trend's level, read as such)."""
    from ._display import fmt_number

    r = infra.loc[infra["n_chips"].idxmax()]
    return (f"The largest: {r['series']} in {int(r['year'])}, {fmt_number(r['n_chips'])} GPUs drawing "
            f"{fmt_number(r['facility_mw'] / 1e3)} GW (80 % interval {fmt_number(r['n_chips_lo_80'])} to "
            f"{fmt_number(r['n_chips_hi_80'])} GPUs): a trend's level, as wide as its interval, not a build plan.")


def _electricity_check(infra) -> str:
    """One sentence per series: its last year's share of its region's projected data-centre
    electricity, and the first year it would need all of it."""
    from ._display import fmt_number

    parts = []
    for name, g in infra.groupby("series", sort=False):
        g = g[np.isfinite(g["dc_electricity_share_frac"].to_numpy(dtype=float))]
        if g.empty:
            continue
        last = g.iloc[-1]
        share, year = float(last["dc_electricity_share_frac"]), int(last["year"])
        twh = f"{last['dc_electricity_twh']:,.0f} TWh"
        over = g[g["dc_electricity_share_frac"] > 1.0]
        if over.empty:
            parts.append(f"{name} in {year}: {share:.1%} of {last['region']} ({twh})")
        else:
            parts.append(f"{name}: more than all of {last['region']} from {int(over['year'].iloc[0])}, "
                         f"{fmt_number(share, 2)}x it in {year} ({twh}, which would serve "
                         f"{fmt_number(last['dc_electricity_tokens_per_day'])} tokens a day)")
    if not parts:
        return ""
    return ("The year's tokens against the electricity of every data centre of their region (IEA base "
            "case; at this deployment's energy per token, no efficiency gain after it): "
            + "; ".join(parts) + ".")


#: Title of the HTML page (the report's own title is its first heading).
HTML_TITLE = "tokenomics pricing report"


def _slug(text: str, seen: set[str]) -> str:
    """An HTML id for a heading: lower-case words joined by hyphens, unique in the page."""
    import re

    base = re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-") or "section"
    slug, k = base, 2
    while slug in seen:
        slug, k = f"{base}-{k}", k + 1
    seen.add(slug)
    return slug


def render_html(markdown_text: str, figures: dict[str, Path]) -> str:
    """A standalone HTML page of the report's Markdown.

    The Markdown is rendered by ``markdown-it-py`` (CommonMark with tables) and the page laid out by
    the Jinja2 template ``tokenomics/templates/report.html.j2``: a contents list linking every
    section, each table in a horizontally scrollable box, figures scaled to the page. Images named
    in ``figures`` are embedded as base64 PNG, so the page stands alone.
    """
    import jinja2
    from markdown_it import MarkdownIt
    from markupsafe import Markup

    md = MarkdownIt("commonmark", {"html": False, "typographer": False}).enable("table")
    tokens = md.parse(markdown_text)
    title, contents, seen = HTML_TITLE, [], set()
    keep = []
    skip_until = None
    for i, tok in enumerate(tokens):
        if skip_until is not None:  # the first heading becomes the page title (the template writes it)
            if i <= skip_until:
                continue
            skip_until = None
        if tok.type == "heading_open" and tok.tag == "h1" and title == HTML_TITLE:
            title = tokens[i + 1].content
            skip_until = i + 2
            continue
        if tok.type == "heading_open" and tok.tag == "h2":
            text = tokens[i + 1].content
            slug = _slug(text, seen)
            tok.attrSet("id", slug)
            contents.append((slug, text))
        if tok.type == "inline":
            for child in tok.children or []:
                if child.type == "image":
                    path = figures.get(str(child.attrGet("src")))
                    if path is not None:
                        b64 = base64.b64encode(Path(path).read_bytes()).decode("ascii")
                        child.attrSet("src", f"data:image/png;base64,{b64}")
        keep.append(tok)
    rules = md.renderer.rules
    rules["table_open"] = lambda *a: '<div class="table-wrap"><table>\n'
    rules["table_close"] = lambda *a: "</table></div>\n"
    body = md.renderer.render(keep, md.options, {})
    env = jinja2.Environment(loader=jinja2.PackageLoader("tokenomics", "templates"),
                             autoescape=jinja2.select_autoescape(["html", "j2"]), keep_trailing_newline=True)
    return env.get_template("report.html.j2").render(
        title=title, contents=contents, body=Markup(body),
        footer="Generated by tokenomics report from the datasets bundled with tokenomics.")


def write_report(out_dir: str | Path, report: "Report | None" = None, **kwargs: Any) -> list[Path]:
    """Build the report (or take a built one) and write ``report.md``, ``report.html`` and PNG
    figures into ``out_dir``; ``kwargs`` go to :func:`build_report`.

    The directory is written atomically: built beside ``out_dir`` and swapped in, so an
    interrupted run leaves the old report or the new one, never a mix (when ``out_dir`` holds
    files of its own, the new files are moved in one by one, each atomically).

    Returns
    -------
    list of Path
        The files written.
    """
    from .io import atomic_dir, check_output, write_text

    out = check_output(out_dir, kind="dir")
    if report is not None and not isinstance(report, Report):
        raise ValidationError(f"report must be a Report from build_report, got {type(report).__name__}")
    rep = report if report is not None else build_report(**kwargs)
    with atomic_dir(out, owned=REPORT_FILES) as tmp:
        figs = _figures(rep, tmp)
        md = render_markdown(rep, figs)
        write_text(tmp / "report.md", md)
        write_text(tmp / "report.html", render_html(md, figs))
        names = ["report.md", "report.html", *figs]
    return [out / n for n in names]
