"""Error bands: how far a throughput (and so a price) is from what a published run measures.

Every throughput the model predicts carries an 80 % band: the 10th and 90th percentiles of
``log(predicted / measured)`` output tokens/s per GPU over published serving results of the same
*error regime*, from publications no fit has used (``datasets/error_bands.csv``, written by
``tools/build_error_bands.py``). A regime is the chip family, the engine, dense or MoE, co-located
or disaggregated serving, and speculative decoding or not (:func:`error_regime`); a regime with
too few rows or publications behind it takes its parent's band (:data:`DROP_ORDER`).

Those publications are mostly vendors' benchmarks, where the model is accurate; runs third parties
publish of their own deployments are slower than predicted. Every band is widened to also span the
third-party band (``datasets/third_party_band.csv``: the 10th-90th percentile of log(predicted /
measured) over the sealed sets released after their one score, :data:`THIRD_PARTY_SETS`,
``tools/build_third_party_band.py``; :func:`band_of`).

The measured throughput of a run predicted at ``x`` then lies, four times in five, in
``[x * exp(-q90), x * exp(-q10)]`` (:func:`throughput_band`); a price, inverse in throughput,
takes its low end from the high throughput.

Examples
--------
>>> error_regime({"hardware": "h200", "engine": "dynamo-trt", "model": "deepseek-r1",
...               "disaggregated": 1, "spec_decode": "mtp"})
'hopper/trtllm/moe/disaggregated/spec'
>>> Regime("tpu", "vllm", "dense", "colocated", "nospec").parent().label
'tpu/*/dense/colocated/nospec'
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, replace
from typing import Any, Mapping

import numpy as np

from .errors import DataError, TokenomicsError, ValidationError

#: Share of measurements a band is meant to hold, and the percentiles of log(predicted/measured)
#: that bound it.
BAND_FRAC = 0.8
Q_LO, Q_HI = 0.1, 0.9

#: A regime's band needs at least this many rows and publications behind it; below, its parent's.
MIN_ROWS = 20
MIN_SOURCES = 3

#: The regime's fields, dropped (set to ``*``) in this order when a regime has too little data:
#: engine first, then chip family, speculative decoding, serving mode and dense/MoE (``*/*/*/*/*``:
#: every row).
FIELDS = ("family", "engine", "arch", "serving", "spec")
DROP_ORDER = ("engine", "family", "spec", "serving", "arch")

#: Chip families by accelerator name (the catalog has no architecture column); other NVIDIA
#: chips (A100, ...) and other vendors are ``other``.
_HOPPER = ("h100", "h200", "h800", "h20", "gh200")
_BLACKWELL = ("b200", "b300", "gb200", "gb300", "rtx-pro-6000")
_VENDOR_FAMILY = {"amd": "amd", "huawei": "ascend", "google": "tpu"}

#: Engine words of serving rows and deployments -> the engine groups bands are kept for (Dynamo
#: and AMD's MoRI run the named engine; ATOM, DeepSeek's and Huawei's engines, the vendors'
#: fitted ``default`` and no engine at all are ``other``).
_ENGINE_GROUP = {"vllm": "vllm", "dynamo-vllm": "vllm", "sglang": "sglang", "dynamo-sglang": "sglang",
                 "mori-sglang": "sglang", "trt": "trtllm", "trtllm": "trtllm", "tensorrt-llm": "trtllm",
                 "dynamo-trt": "trtllm"}

#: Publications the serving rows' ``source`` texts come from: (pattern, publication). One
#: publication is one results release, whatever commit, fork or file of it a row cites (MLPerf:
#: one round of results; InferenceMAX v1: its official results, every model). Unmatched sources
#: are their own publication (:func:`source_key`).
PUBLICATIONS: tuple[tuple[str, str], ...] = (
    (r"InferenceMAX", "inferencemax-v1"),
    (r"InferenceX", "inferencex-dashboard-2026"),
    (r"perf-overview\.md", "trtllm-perf-overview"),
    (r"TensorRT-LLM/issues/5929", "trtllm-issue-5929"),
    (r"tech_blog/blog1_", "trtllm-tech-blog-1"),
    (r"AI-benchmarking-guide", "azure-ai-benchmarking-guide"),
    (r"open-infra-index", "deepseek-open-infra-day6"),
    (r"inference_results_v(\d+\.\d+)", "mlperf-inference-v{0}"),
    (r"lmsys\.org/blog/2025-05-05", "lmsys-large-scale-ep"),
    (r"lmsys\.org/blog/2025-09-25", "lmsys-gb200-part2"),
    (r"arxiv\.org/abs/2506\.12708", "cloudmatrix-infer-paper"),
    (r"ascend-npus/best_practice/deepseek_r1", "sglang-ascend-best-practice"),
    (r"vllm-ascend|docs\.vllm\.ai/projects/ascend", "vllm-ascend-tutorial"),
    (r"ROCm/ATOM", "atom-dashboard"),
    (r"aiconfigurator.*silicon_(?:sample|refs)\.csv", "aiconfigurator-silicon-sample"),
)

#: The serving sets a fit used (``tools/fit_serving.py`` fits ``datasets/engines.csv`` on
#: ``serving_public``, ``tools/fit_engine_maturity.py`` ``datasets/engine_maturity.csv`` on
#: ``serving_thirdparty_2026-12``, the vLLM-on-TPU engine parameters on ``serving_tpu_2026-12``): their
#: publications are kept out of every band.
FIT_SETS = ("serving_public", "serving_thirdparty_2026-12", "serving_tpu_2026-12")

#: Sealed serving sets released after their one recorded score (``docs/validation/sealed.md``):
#: runs third parties published of their own deployments. Their spread builds the third-party band
#: (``datasets/third_party_band.csv``, ``tools/build_third_party_band.py``); no model parameter is
#: fitted on them.
THIRD_PARTY_SETS = ("serving_sealed_2026-12", "serving_sealed_2026-12b", "serving_sealed_2026-12c",
                    "serving_sealed_2026-12d", "serving_sealed_2026-12e", "serving_sealed_2026-12f",
                    "serving_sealed_2026-12g", "serving_sealed_2026-12h",
                    "serving_sealed_2026-12i", "serving_sealed_2026-12j", "serving_sealed_2026-12k",
                    "serving_sealed_2026-12l")


def chip_family(hardware: str, vendor: str | None = None) -> str:
    """Chip family of an accelerator: ``hopper``, ``blackwell``, ``amd``, ``ascend``, ``tpu`` or ``other``.

    Parameters
    ----------
    hardware : str
        Accelerator name (``h200``, ``h100-sxm``, ``gb200``, ``mi355x``, ``tpu-v7``, ...).
    vendor : str, optional
        Its vendor (``datasets/accelerators.csv``); looked up when not given.
    """
    name = str(hardware).lower()
    base = name.split("-")[0]
    if base in _HOPPER:
        return "hopper"
    if name in _BLACKWELL or base in _BLACKWELL:
        return "blackwell"
    if vendor is None:
        from . import catalog

        vendor = catalog.accelerator_vendor(name)
    if name.startswith("tpu"):
        return "tpu"
    if name.startswith("ascend"):
        return "ascend"
    return _VENDOR_FAMILY.get(str(vendor).lower(), "other")


def engine_group(engine: str) -> str:
    """Engine group of an engine word: ``vllm``, ``sglang``, ``trtllm`` or ``other``."""
    return _ENGINE_GROUP.get(str(engine).strip().lower(), "other")


@dataclass(frozen=True)
class Regime:
    """An error regime: chip family, engine group, ``dense``/``moe``, ``colocated``/``disaggregated``,
    ``spec``/``nospec``; ``*`` where a field was dropped."""

    family: str
    engine: str
    arch: str
    serving: str
    spec: str

    @property
    def label(self) -> str:
        """``family/engine/arch/serving/spec``, e.g. ``hopper/trtllm/moe/colocated/nospec``."""
        return "/".join(getattr(self, f) for f in FIELDS)

    @classmethod
    def from_label(cls, label: str) -> "Regime":
        parts = str(label).split("/")
        if len(parts) != len(FIELDS):
            raise ValidationError(f"error regime {label!r}: expected family/engine/arch/serving/spec")
        return cls(*parts)

    def parent(self) -> "Regime | None":
        """The coarser regime: the next field of :data:`DROP_ORDER` set to ``*``; None at ``*/*/*/*/*``."""
        for f in DROP_ORDER:
            if getattr(self, f) != "*":
                return replace(self, **{f: "*"})
        return None

    def lineage(self) -> list["Regime"]:
        """This regime and each parent, finest first."""
        out, r = [], self
        while r is not None:
            out.append(r)
            r = r.parent()
        return out


def _flag(x: Any) -> bool:
    if x is None or (isinstance(x, float) and np.isnan(x)):
        return False
    s = str(x).strip().lower()
    return s not in ("", "0", "0.0", "false", "none", "nan", "no")


def _is_moe(model: Any) -> bool:
    if hasattr(model, "is_moe"):
        return bool(model.is_moe)
    return _named_is_moe(str(model))


@functools.lru_cache(maxsize=None)
def _named_is_moe(name: str) -> bool:
    from . import catalog

    return bool(catalog.model(name).is_moe)


def regime_of_row(row: Mapping[str, Any]) -> Regime:
    """The regime of a serving row (a mapping with ``hardware``, ``engine``, ``model``,
    ``disaggregated``, ``spec_decode`` and ``phase``, as in ``datasets/serving_*.csv``).

    A decode-only or prefill-only row (``phase`` ``decode`` / ``prefill``: an instance that does
    one of the two) is ``disaggregated``, as the decode-only price is."""
    split = _flag(row.get("disaggregated")) or str(row.get("phase", "")) in ("decode", "prefill")
    return Regime(chip_family(row["hardware"]), engine_group(row["engine"]),
                  "moe" if _is_moe(row["model"]) else "dense",
                  "disaggregated" if split else "colocated",
                  "spec" if _flag(row.get("spec_decode")) else "nospec")


def regime_of_deployment(dep: Any, serving: str = "decode") -> Regime:
    """The regime of a :class:`~tokenomics.deployment.Deployment` priced in a serving mode.

    ``serving``: ``colocated`` is co-located; ``disaggregated`` and ``decode`` (the decode-only
    steady state: decode chips that never prefill, as a disaggregated decode instance) are
    disaggregated.
    """
    hw = dep.hardware
    return Regime(chip_family(hw.name, getattr(hw, "vendor", None)), engine_group(dep.engine),
                  "moe" if _is_moe(dep.model) else "dense",
                  "colocated" if str(serving) in ("colocated", "co-located") else "disaggregated",
                  "spec" if dep.spec is not None else "nospec")


def error_regime(x: Any, serving: str = "decode") -> str:
    """The error regime (its finest label) of a deployment or a serving row.

    Parameters
    ----------
    x : Deployment or mapping
        A deployment (``serving`` gives its mode) or a serving row (dict / pandas Series).
    serving : str
        For a deployment: ``decode``, ``colocated`` or ``disaggregated``.
    """
    if hasattr(x, "hardware") and hasattr(x, "parallel"):
        return regime_of_deployment(x, serving).label
    if isinstance(x, Mapping) or hasattr(x, "get"):
        return regime_of_row(x).label
    raise ValidationError(f"error_regime takes a Deployment or a serving row, got {type(x).__name__}")


def source_key(source: str) -> str:
    """The publication a row's ``source`` text cites (:data:`PUBLICATIONS`); else the GitHub
    repository or the web address's host and first path segment."""
    s = str(source)
    for pat, pub in PUBLICATIONS:
        m = re.search(pat, s)
        if m:
            return pub.format(*m.groups())
    m = re.match(r"(?:github:|https://github\.com/)([^/@\s]+/[^/@:\s]+)", s)
    if m:
        return m.group(1)
    m = re.match(r"https?://([^/\s]+)(/[^/\s]*)?", s)
    return (m.group(1) + (m.group(2) or "")) if m else s.split(" ")[0]


def fit_publications() -> set[str]:
    """Publications of every row any fit used (:data:`FIT_SETS`)."""
    from . import catalog

    out: set[str] = set()
    for name in FIT_SETS:
        out |= {source_key(s) for s in catalog.load(name)["source"]}
    return out


def band_rows(pred: "Any") -> "Any":
    """Rows a band can be measured on: predicted rows of a ``predict_cases`` frame with a finite
    positive ratio, with ``regime`` (finest label), ``publication`` and ``log_ratio`` added."""
    ok = pred[(pred["status"] == "predicted")].copy()
    r = ok["ratio"].astype(float)
    ok = ok[np.isfinite(r) & (r > 0)].copy()
    ok["log_ratio"] = np.log(ok["ratio"].astype(float))
    ok["regime"] = [regime_of_row(row).label for _, row in ok.iterrows()]
    ok["publication"] = ok["source"].map(source_key)
    return ok


def weighted_quantile(values: Any, weights: Any, q: float) -> float:
    """The ``q`` quantile of weighted values: each value sits at the middle of its weight's share
    of the cumulative weight (``(cum_w - w/2) / total``), linear between, clipped at the ends
    (with equal weights numpy's ``hazen`` percentile).

    >>> weighted_quantile([5, 1, 3, 2, 4], [1, 1, 1, 1, 1], 0.1)  # positions 0.1, 0.3, ..., 0.9
    1.0
    >>> weighted_quantile([1, 2, 3, 4], [1, 1, 1, 1], 0.5)
    2.5
    """
    x = np.asarray(values, float)
    w = np.asarray(weights, float)
    if x.size == 0:
        return float("nan")
    o = np.argsort(x, kind="stable")
    x, w = x[o], w[o]
    pos = (np.cumsum(w) - w / 2) / w.sum()
    return float(np.interp(q, pos, x))


def regime_stats(rows: "Any", regime: Regime) -> dict:
    """n_rows, n_sources, q10/q90 of log(predicted/measured) and publications of the rows of
    ``rows`` (:func:`band_rows`) inside ``regime``; each publication weighs the same in total."""
    m = np.ones(len(rows), bool)
    for f in FIELDS:
        val = getattr(regime, f)
        if val != "*":
            idx = FIELDS.index(f)
            m &= np.asarray([lab.split("/")[idx] == val for lab in rows["regime"]])
    d = rows[m]
    pubs = sorted(d["publication"].unique())
    w = 1.0 / d.groupby("publication")["log_ratio"].transform("size").to_numpy(float) if len(d) else []
    return {"regime": regime.label, "n_rows": int(len(d)), "n_sources": len(pubs),
            "q10_log_ratio": weighted_quantile(d["log_ratio"], w, Q_LO),
            "q90_log_ratio": weighted_quantile(d["log_ratio"], w, Q_HI), "sources": ";".join(pubs)}


def build_band_table(rows: "Any", min_rows: int = MIN_ROWS, min_sources: int = MIN_SOURCES) -> "Any":
    """The band of every regime the rows (:func:`band_rows`) and their parents span that has at
    least ``min_rows`` rows from ``min_sources`` publications, finest regimes first."""
    import pandas as pd

    seen: dict[str, Regime] = {}
    for lab in sorted(set(rows["regime"])):
        for r in Regime.from_label(lab).lineage():
            seen.setdefault(r.label, r)
    if not seen:
        seen["*/*/*/*/*"] = Regime(*("*",) * len(FIELDS))
    out = [regime_stats(rows, r) for r in seen.values()]
    df = pd.DataFrame(out)
    df = df[(df["n_rows"] >= min_rows) & (df["n_sources"] >= min_sources)]
    df = df.assign(_stars=df["regime"].str.count(r"\*")).sort_values(["_stars", "regime"], kind="stable")
    return df.drop(columns="_stars").reset_index(drop=True)


def split_publications(rows: "Any") -> tuple[list[str], list[str]]:
    """Publications split in two halves by size: sorted by rows (most first, then by name), the
    1st, 3rd, 5th, ... build the bands, the 2nd, 4th, ... check them."""
    n = rows.groupby("publication").size()
    order = sorted(n.index, key=lambda p: (-int(n[p]), p))
    return order[0::2], order[1::2]


def load_bands() -> "Any":
    """The bundled band table (``datasets/error_bands.csv``)."""
    from . import catalog

    return catalog.load("error_bands")


def load_third_party_band() -> tuple[float, float]:
    """``(q10, q90)`` of log(predicted / measured) on third parties' own published runs
    (``datasets/third_party_band.csv``)."""
    from . import catalog

    r = catalog.load("third_party_band").iloc[0]
    return float(r["q10_log_ratio"]), float(r["q90_log_ratio"])


def band_of(regime: "Regime | str", table: Any = None,
            third_party: "tuple[float, float] | None | str" = "bundled") -> tuple[str, float, float]:
    """``(regime label, q10, q90)``: the band of the finest regime of ``regime``'s lineage the
    table holds, widened to also span ``third_party`` (``(q10, q90)``; ``"bundled"``: the
    third-party band, :func:`load_third_party_band`; ``None``: the regime's band alone).

    The regime bands come from vendor-published runs, where the model is accurate; runs third
    parties publish of their own deployments are 1.2-2.8x slower than predicted (the third-party
    band's 10th-90th percentile), so each band spans both: four times in five a measurement of
    either kind lies inside it.

    Raises
    ------
    DataError
        If the table holds no regime of the lineage (it always holds ``*/*/*/*/*`` when built
        from enough rows).
    """
    return _band_in(regime, _bands_by_label(load_bands() if table is None else table), third_party)


def _bands_by_label(table: Any) -> dict[str, tuple[float, float]]:
    """``{regime label: (q10, q90)}`` of a band table."""
    return {str(k): (float(a), float(b)) for k, a, b in
            zip(table["regime"], table["q10_log_ratio"], table["q90_log_ratio"])}


def _band_in(regime: "Regime | str", by: dict[str, tuple[float, float]],
             third_party: "tuple[float, float] | None | str") -> tuple[str, float, float]:
    """:func:`band_of` on a band table read into :func:`_bands_by_label`."""
    r = Regime.from_label(regime) if isinstance(regime, str) else regime
    tp = load_third_party_band() if isinstance(third_party, str) else third_party
    for x in r.lineage():
        if x.label in by:
            q10, q90 = by[x.label]
            if tp is not None:
                q10, q90 = min(q10, tp[0]), max(q90, tp[1])
            return (x.label, q10, q90)
    raise DataError(f"error band table holds no band for {r.label} or any coarser regime")


def throughput_band(tok_per_s: Any, q10_log_ratio: float, q90_log_ratio: float) -> tuple[Any, Any]:
    """Low and high ends of the 80 % band of the throughput a prediction ``tok_per_s`` stands for.

    ``log(predicted / measured)`` lies between q10 and q90 four times in five, so the measured
    rate lies between ``tok_per_s * exp(-q90)`` and ``tok_per_s * exp(-q10)`` [tokens/s].

    >>> lo, hi = throughput_band(100.0, -0.2, 0.3)
    >>> round(lo, 2), round(hi, 2)   # 100 / e^0.3, 100 / e^-0.2
    (74.08, 122.14)
    """
    x = np.asarray(tok_per_s, float)
    lo, hi = x * np.exp(-float(q90_log_ratio)), x * np.exp(-float(q10_log_ratio))
    return (lo if lo.ndim else float(lo)), (hi if hi.ndim else float(hi))


def band_columns(pred: "Any", table: Any = None) -> "Any":
    """``error_regime`` and ``predicted_output_tok_per_s_per_gpu_lo`` / ``_hi`` for each row of a
    ``predict_cases`` frame (the band of its regime, or a coarser one's), as a frame on its index."""
    import pandas as pd

    if table is None:
        table = load_bands()
    tp = load_third_party_band()  # read once, not per row
    try:
        by = _bands_by_label(table)  # likewise the table
    except KeyError:  # a table without the band columns: no row has a band
        by = {}
    regs, lo, hi = [], [], []
    col = pred.get("predicted_output_tok_per_s_per_gpu", pd.Series(np.nan, index=pred.index)).astype(float)
    for (_, row), x in zip(pred.iterrows(), col):
        try:
            lab, q10, q90 = _band_in(regime_of_row(row), by, tp)
        except (KeyError, TokenomicsError):  # a row the harness refused (unknown model, ...): no band
            lab, q10, q90 = "", float("nan"), float("nan")
        a, b = throughput_band(x, q10, q90)
        regs.append(lab)
        lo.append(a)
        hi.append(b)
    return pd.DataFrame({"error_regime": regs, "predicted_output_tok_per_s_per_gpu_lo": lo,
                         "predicted_output_tok_per_s_per_gpu_hi": hi}, index=pred.index)


def coverage(pred: "Any", table: Any = None, third_party: Any = "bundled") -> tuple[float, int]:
    """Share of a ``predict_cases`` frame's measured output rates inside their band, and the rows
    counted (predicted, with a measured rate; prefill-only rows are scored on input tokens/s as
    ``ratio`` is, so their band is taken on the ratio)."""
    if table is None:
        table = load_bands()
    if isinstance(third_party, str):  # read once, not per row
        third_party = load_third_party_band()
    rows = pred[pred["status"] == "predicted"]
    r = rows["ratio"].astype(float)
    rows = rows[np.isfinite(r) & (r > 0)]
    if not len(rows):
        return float("nan"), 0
    inside = 0
    for _, row in rows.iterrows():
        _, q10, q90 = band_of(regime_of_row(row), table, third_party)
        inside += int(q10 <= float(np.log(float(row["ratio"]))) <= q90)
    return inside / len(rows), int(len(rows))


def third_party_band(rows: "Any") -> dict:
    """The third-party band of :func:`band_rows` rows (``n_rows``, ``n_sources``, ``q10_log_ratio``,
    ``q90_log_ratio``, ``sources``): every row pooled, each publication weighing the same."""
    return regime_stats(rows, Regime(*("*",) * len(FIELDS)))


def leave_one_publication_out(rows: "Any") -> "Any":
    """Each publication of :func:`band_rows` rows scored on the third-party band built without it:
    a frame of ``publication``, ``n_rows`` and ``inside_frac`` (share of its rows inside)."""
    import pandas as pd

    out = []
    for pub in sorted(rows["publication"].unique()):
        test = rows[rows["publication"] == pub]
        s = third_party_band(rows[rows["publication"] != pub])
        inside = (test["log_ratio"] >= s["q10_log_ratio"]) & (test["log_ratio"] <= s["q90_log_ratio"])
        out.append({"publication": pub, "n_rows": len(test), "inside_frac": float(inside.mean())})
    return pd.DataFrame(out)


def split_and_build(pred: "Any", min_rows: int = MIN_ROWS, min_sources: int = MIN_SOURCES) -> dict:
    """Bands from half of the publications no fit used, scored on the other half.

    ``pred``: ``predict_cases`` rows of the unfitted serving sets (``validate.serving_cases.predict_unfitted``).
    Rows of a publication any fit used (:func:`fit_publications`) are dropped; the rest split by
    publication (:func:`split_publications`). Returns ``table`` (bands of the build half),
    ``build`` / ``check`` (the publications), ``excluded`` (fit publications and their rows),
    ``coverage`` / ``n_check`` (share of the check half's rows inside their band) and
    ``coverage_swapped`` (bands built on the check half, scored on the build half).
    """
    rows = band_rows(pred)
    fit = fit_publications()
    excluded = rows[rows["publication"].isin(fit)].groupby("publication").size().to_dict()
    rows = rows[~rows["publication"].isin(fit)]
    build, check = split_publications(rows)
    table = build_band_table(rows[rows["publication"].isin(build)], min_rows, min_sources)
    swapped = build_band_table(rows[rows["publication"].isin(check)], min_rows, min_sources)
    cpred = pred.loc[rows.index[rows["publication"].isin(check)]]
    bpred = pred.loc[rows.index[rows["publication"].isin(build)]]
    cov, n = coverage(cpred, table, third_party=None)  # the regime bands alone, as built
    cov_s, n_s = coverage(bpred, swapped, third_party=None)
    return {"table": table, "build": build, "check": check, "excluded": excluded, "rows": rows,
            "coverage": cov, "n_check": n, "coverage_swapped": cov_s, "n_swapped": n_s}
