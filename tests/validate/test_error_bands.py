"""80 % error bands: regimes, their fallback, the band table, the price band, the output columns."""

import json

import numpy as np
import pandas as pd
import pytest

from tokenomics import chain, errorband as eb
from tokenomics.cli import main
from tokenomics.deployment import resolve


# ---- the classifier ----------------------------------------------------------------------------

def test_regime_of_known_deployments():
    # GB200 = Blackwell; DeepSeek-V3 is MoE; the resolver's engine is the vendor's fitted
    # `default` (-> other); the decode-only price is a decode instance (-> disaggregated)
    d = resolve("deepseek-v3", system="gb200-nvl72")
    assert eb.error_regime(d) == "blackwell/other/moe/disaggregated/nospec"
    assert eb.error_regime(d.replace(engine="sglang", spec=eb_spec("mtp")), serving="colocated") == \
        "blackwell/sglang/moe/colocated/spec"
    assert eb.error_regime(resolve("llama-3.1-8b", hardware="h200", engine="trt")) == \
        "hopper/trtllm/dense/disaggregated/nospec"
    assert eb.error_regime(resolve("llama-3.1-8b", hardware="mi300x", engine="vllm"), serving="colocated") == \
        "amd/vllm/dense/colocated/nospec"
    assert eb.error_regime(resolve("llama-3.1-8b", hardware="tpu-v6e")).startswith("tpu/")


def eb_spec(name):
    from tokenomics.deployment import _spec

    return _spec(name)


@pytest.mark.parametrize("hw, family", [("h100-sxm", "hopper"), ("h100", "hopper"), ("h800", "hopper"),
                                        ("h200", "hopper"), ("b200", "blackwell"), ("gb300", "blackwell"),
                                        ("mi355x", "amd"), ("mi300x", "amd"), ("ascend-910c", "ascend"),
                                        ("tpu-v7", "tpu"), ("a100", "other"), ("trainium2", "other")])
def test_chip_family(hw, family):
    assert eb.chip_family(hw) == family


def test_regime_of_serving_rows():
    row = {"hardware": "mi355x", "engine": "mori-sglang", "model": "deepseek-r1", "disaggregated": 1,
           "spec_decode": "none", "phase": "serve"}
    assert eb.error_regime(row) == "amd/sglang/moe/disaggregated/nospec"
    row = {"hardware": "b300", "engine": "atom", "model": "llama-3.1-70b", "disaggregated": 0,
           "spec_decode": "mtp:1:0.7", "phase": "serve"}
    assert eb.error_regime(row) == "blackwell/other/dense/colocated/spec"
    # a decode-only instance is disaggregated, as the decode-only price is
    row = {"hardware": "ascend-910c", "engine": "cloudmatrix-infer", "model": "deepseek-r1",
           "disaggregated": 0, "spec_decode": np.nan, "phase": "decode"}
    assert eb.error_regime(row) == "ascend/other/moe/disaggregated/nospec"


def test_source_key_groups_a_publication():
    a = "github:mlcommons/inference_results_v5.1@965182b/closed/Dell/results/X/deepseek-r1/Offline/p.txt"
    b = "github:mlcommons/inference_results_v5.1@965182b/closed/NVIDIA/results/Y/llama2-70b/Server/p.txt"
    assert eb.source_key(a) == eb.source_key(b) == "mlperf-inference-v5.1"
    assert eb.source_key("https://docs.sglang.io/docs/hardware-platforms/ascend-npus/best_practice/deepseek_r1") == \
        eb.source_key("github:sgl-project/sglang@01e6:docs_new/docs/hardware-platforms/ascend-npus/best_practice/"
                      "deepseek_r1.mdx")
    assert eb.source_key("github:someone/some-repo@abc:x/y.md") == "someone/some-repo"


def test_fit_publications_are_the_fit_sets():
    # tools/fit_serving.py fits on serving_public.csv: InferenceMAX v1 gpt-oss rows and the
    # TensorRT-LLM perf-overview table; tools/fit_engine_maturity.py on dstack's benchmark;
    # tools/fit_tpu_engine.py on Google's tpu-recipes
    assert eb.fit_publications() == {"inferencemax-v1", "trtllm-perf-overview", "dstackai/benchmarks",
                                     "AI-Hypercomputer/tpu-recipes"}


# ---- the fallback hierarchy --------------------------------------------------------------------

def test_lineage_drops_engine_then_family_then_spec_serving_arch():
    labels = [r.label for r in eb.Regime("hopper", "vllm", "moe", "colocated", "spec").lineage()]
    assert labels == ["hopper/vllm/moe/colocated/spec", "hopper/*/moe/colocated/spec", "*/*/moe/colocated/spec",
                      "*/*/moe/colocated/*", "*/*/moe/*/*", "*/*/*/*/*"]


def test_band_of_falls_back_to_the_finest_regime_held():
    table = pd.DataFrame({"regime": ["hopper/*/dense/colocated/nospec", "*/*/*/*/*"],
                          "q10_log_ratio": [-0.1, -0.3], "q90_log_ratio": [0.2, 0.5]})
    assert eb.band_of("hopper/vllm/dense/colocated/nospec", table, None) == ("hopper/*/dense/colocated/nospec", -0.1, 0.2)
    assert eb.band_of("tpu/vllm/dense/colocated/nospec", table, None) == ("*/*/*/*/*", -0.3, 0.5)


def test_every_band_also_spans_the_third_party_band():
    """Hand: a regime band (-0.1, 0.2) and a third-party band (0.14, 1.03) give (-0.1, 1.03); the
    bundled one is the released sealed sets' (tools/build_third_party_band.py: x0.78 to x2.42 predicted/measured,
    2026-12 to 2026-12l)."""
    table = pd.DataFrame({"regime": ["*/*/*/*/*"], "q10_log_ratio": [-0.1], "q90_log_ratio": [0.2]})
    assert eb.band_of("hopper/vllm/dense/colocated/nospec", table, (0.14, 1.03)) == ("*/*/*/*/*", -0.1, 1.03)
    assert eb.band_of("hopper/vllm/dense/colocated/nospec", table, (-0.5, 0.1)) == ("*/*/*/*/*", -0.5, 0.2)
    q10, q90 = eb.load_third_party_band()
    assert np.exp(q10) == pytest.approx(0.78, abs=0.01) and np.exp(q90) == pytest.approx(2.42, abs=0.01)
    assert eb.band_of("hopper/vllm/dense/colocated/nospec", table) == ("*/*/*/*/*", min(-0.1, q10), q90)


def test_thin_regimes_are_left_to_their_parent():
    # 5 rows of one regime, 5 publications: below MIN_ROWS, so only kept with a lower threshold
    rows = _toy([0.1, -0.2, 0.3, 0.0, 0.05], pubs=list("abcde"))
    assert eb.build_band_table(rows).empty
    t = eb.build_band_table(rows, min_rows=5, min_sources=5)
    assert "hopper/vllm/dense/colocated/nospec" in set(t["regime"]) and "*/*/*/*/*" in set(t["regime"])
    assert eb.build_band_table(rows, min_rows=5, min_sources=6).empty


# ---- the band's arithmetic ---------------------------------------------------------------------

def _toy(log_ratios, pubs, regime="hopper/vllm/dense/colocated/nospec"):
    return pd.DataFrame({"log_ratio": log_ratios, "publication": pubs, "regime": regime})


def test_band_by_hand_from_five_rows():
    # five publications, one row each: each value sits at (i - 0.5) / 5 = 0.1, 0.3, 0.5, 0.7, 0.9
    # of the cumulative weight, so q10 is the smallest log ratio and q90 the largest
    s = eb.regime_stats(_toy([0.1, -0.2, 0.3, 0.0, 0.05], list("abcde")), eb.Regime.from_label("*/*/*/*/*"))
    assert (s["n_rows"], s["n_sources"]) == (5, 5)
    assert s["q10_log_ratio"] == pytest.approx(-0.2) and s["q90_log_ratio"] == pytest.approx(0.3)
    assert s["sources"] == "a;b;c;d;e"


def test_each_publication_weighs_the_same():
    # publication A: 0.0, 0.1, 0.2 (weight 1/3 each), B: 0.6 (weight 1); total 2. Positions
    # (cum - w/2) / 2: 1/12, 3/12, 5/12, 9/12. q10 = 0.0 + (0.1 - 1/12) / (2/12) * 0.1 = 0.01;
    # q90 lies past the last position: 0.6
    s = eb.regime_stats(_toy([0.0, 0.1, 0.2, 0.6], list("AAAB")), eb.Regime.from_label("*/*/*/*/*"))
    assert s["q10_log_ratio"] == pytest.approx(0.01) and s["q90_log_ratio"] == pytest.approx(0.6)


def test_throughput_band_by_hand():
    lo, hi = eb.throughput_band(np.array([100.0, 200.0]), -0.2, 0.3)
    assert lo == pytest.approx([100 / np.exp(0.3), 200 / np.exp(0.3)])  # measured = predicted / ratio
    assert hi == pytest.approx([100 * np.exp(0.2), 200 * np.exp(0.2)])


def test_coverage_counts_rows_inside_their_band():
    table = pd.DataFrame({"regime": ["*/*/*/*/*"], "q10_log_ratio": [np.log(0.8)], "q90_log_ratio": [np.log(1.25)]})
    pred = pd.DataFrame({"status": "predicted", "hardware": "h200", "engine": "vllm", "model": "llama-3.1-8b",
                         "disaggregated": 0, "spec_decode": "none", "phase": "serve",
                         "ratio": [0.7, 0.9, 1.0, 1.2, 1.3]})
    assert eb.coverage(pred, table, third_party=None) == (pytest.approx(3 / 5), 5)  # 0.9, 1.0, 1.2 inside [0.8, 1.25]


# ---- the shipped table and prices --------------------------------------------------------------

def test_shipped_table():
    t = eb.load_bands()
    assert "*/*/*/*/*" in set(t["regime"])
    assert (t["n_rows"] >= eb.MIN_ROWS).all() and (t["n_sources"] >= eb.MIN_SOURCES).all()
    assert (t["q10_log_ratio"] < t["q90_log_ratio"]).all()
    used = {p for s in t["sources"] for p in s.split(";")}
    assert not used & eb.fit_publications()  # no band is built on a publication a fit used


def test_price_band_contains_the_point_and_is_monotone():
    r = chain.price("h200", "llama-3.1-8b", batch=[1, 32, 128])
    tps, lo, hi = r.tok_per_s_per_chip, r.tok_per_s_per_chip_lo, r.tok_per_s_per_chip_hi
    assert np.all(lo <= tps) and np.all(tps <= hi)  # every shipped band has q10 <= 0 <= q90
    p, plo, phi = r.usd_per_m_output_tok, r.usd_per_m_output_tok_lo, r.usd_per_m_output_tok_hi
    assert np.all(plo <= p) and np.all(p <= phi)
    # decode-only: the output price is cost / (tok/s x 3600 x utilization) / (1 - margin), so the
    # low price is the point's times tok/s over the band's high tok/s (hand relation)
    assert plo == pytest.approx(p * tps / hi) and phi == pytest.approx(p * tps / lo)
    assert np.all(np.diff(p) < 0) and np.all(np.diff(plo) < 0)  # larger batch: cheaper, band too


def test_all_in_price_band_moves_only_the_decode_share():
    r = chain.price("h200", "llama-3.1-8b", batch=32, output_convention="all-in")
    d = chain.price("h200", "llama-3.1-8b", batch=32)
    # all-in = decode-only output price + the prefill charge; the band re-prices the decode share
    assert float(r.usd_per_m_output_tok - r.usd_per_m_output_tok_lo) == \
        pytest.approx(float(d.usd_per_m_output_tok - d.usd_per_m_output_tok_lo))


def test_price_json_and_csv_carry_the_band(capsys):
    with pytest.raises(SystemExit):
        main(["price", "--format", "json"])
        raise SystemExit(0)
    rec = json.loads(capsys.readouterr().out)[0]
    for c in chain.BAND_COLUMNS:
        assert c in rec
    assert rec["usd_per_m_output_tok_lo"] < rec["usd_per_m_output_tok"] < rec["usd_per_m_output_tok_hi"]
    assert rec["error_regime"] == eb.band_of(eb.error_regime(resolve("llama-3.1-8b", hardware="h200"), "colocated"))[0]
    with pytest.raises(SystemExit):
        main(["price", "--format", "csv"])
        raise SystemExit(0)
    header = capsys.readouterr().out.splitlines()[0].split(",")
    assert header[-5:] == list(chain.BAND_COLUMNS)  # last: the README's cut positions do not move


def test_price_table_shows_the_band(capsys):
    with pytest.raises(SystemExit):
        main(["price"])
        raise SystemExit(0)
    out = capsys.readouterr().out
    line = next(x for x in out.splitlines() if "price per M output tokens" in x)
    assert "80 %)" in line and "(" in line


def test_validate_serving_carries_the_band(tmp_path, capsys):
    raw = pd.read_csv(eb.__file__.replace("errorband.py", "datasets/serving_ascend.csv"))
    one = raw[raw["engine"] == "vllm"].head(1)
    path = tmp_path / "one.csv"
    one.to_csv(path, index=False)
    with pytest.raises(SystemExit):
        main(["validate-serving", str(path), "--format", "csv"])
        raise SystemExit(0)
    from io import StringIO

    df = pd.read_csv(StringIO(capsys.readouterr().out))
    x = df.iloc[0]
    assert x["predicted_output_tok_per_s_per_gpu_lo"] < x["predicted_output_tok_per_s_per_gpu"] < \
        x["predicted_output_tok_per_s_per_gpu_hi"]
    assert x["error_regime"] == eb.band_of(eb.error_regime(one.iloc[0]))[0]


@pytest.mark.integration
def test_regenerating_gives_the_stored_table():
    """tools/build_error_bands.py run again gives datasets/error_bands.csv (a model change that
    moves the errors shows here: regenerate the table and say why it moved)."""
    import importlib.util
    from pathlib import Path

    from tokenomics.validate.serving_cases import predict_unfitted

    spec = importlib.util.spec_from_file_location(
        "build_error_bands", Path(__file__).resolve().parents[2] / "tools" / "build_error_bands.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    got = mod.table_of(eb.split_and_build(predict_unfitted()), "x").drop(columns="as_of")
    want = eb.load_bands().drop(columns="as_of")
    pd.testing.assert_frame_equal(got.reset_index(drop=True), want.reset_index(drop=True), atol=2e-6,
                                  check_dtype=False)


def test_a_refused_row_gets_no_band():
    pred = pd.DataFrame({"status": ["not predicted: unknown model"], "hardware": ["h200"], "engine": ["vllm"],
                         "model": ["no-such-model"], "disaggregated": [0], "spec_decode": ["none"],
                         "phase": ["serve"], "predicted_output_tok_per_s_per_gpu": [np.nan]})
    b = eb.band_columns(pred)
    assert b["error_regime"].iloc[0] == "" and np.isnan(b["predicted_output_tok_per_s_per_gpu_lo"].iloc[0])


@pytest.mark.integration
def test_regenerating_gives_the_stored_third_party_band():
    """tools/build_third_party_band.py run again gives datasets/third_party_band.csv."""
    import importlib.util
    from pathlib import Path

    spec = importlib.util.spec_from_file_location(
        "build_third_party_band", Path(__file__).resolve().parents[2] / "tools" / "build_third_party_band.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    got = mod.table(mod.rows(), "x").drop(columns="as_of")
    want = eb.load_third_party_band()
    assert (float(got["q10_log_ratio"][0]), float(got["q90_log_ratio"][0])) == pytest.approx(want, abs=2e-6)


def test_leave_one_publication_out_by_hand():
    """Three publications: A at 0.0, B at 0.5, C at 1.0 (one row each). Left out, A is scored on
    B and C's band (0.5 to 1.0): outside; B on A and C's (0.0 to 1.0): inside; C outside."""
    rows = _toy([0.0, 0.5, 1.0], list("ABC"))
    lopo = eb.leave_one_publication_out(rows).set_index("publication")["inside_frac"]
    assert lopo.to_dict() == {"A": 0.0, "B": 1.0, "C": 0.0}
