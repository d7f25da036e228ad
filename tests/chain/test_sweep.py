"""Sweeps: grid parsing and errors, chunking, vectorized rows vs per-configuration calls, files."""

from __future__ import annotations

import os

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings, strategies as st

from tokenomics import chain, sweep
from tokenomics.errors import TokenomicsError, UnknownNameError, ValidationError


def small(**kw) -> sweep.Grid:
    base = dict(hardware=("h200",), model=("llama-3.1-8b",), execution=("graph", "engine"),
                batch=[1, 8, 64], context_tok=[512, 4096], utilization_frac=[0.5, 1.0], margin_frac=[0.0, 0.5])
    base.update(kw)
    return sweep.Grid(**base)


# -- parsing ---------------------------------------------------------------------------------

def test_log_range_hand_values():
    """{start=1, stop=8, num=4, scale=log} -> 1, 2, 4, 8 (powers of two by hand)."""
    g = sweep.parse_grid({"grid": {"hardware": ["h200"], "model": ["llama-3.1-8b"],
                                   "batch": {"start": 1, "stop": 8, "num": 4, "scale": "log"}}})
    assert g.batch.tolist() == [1, 2, 4, 8]


def test_integer_axes_rounded_and_deduplicated():
    """geomspace(1, 4, 6) = 1, 1.32, 1.74, 2.30, 3.03, 4 -> rounded 1, 1, 2, 2, 3, 4 -> 1, 2, 3, 4."""
    g = sweep.parse_grid({"grid": {"hardware": "h200", "model": "llama-3.1-8b",
                                   "batch": {"start": 1, "stop": 4, "num": 6, "scale": "log"}}})
    assert g.batch.tolist() == [1, 2, 3, 4]


def test_n_configs_hand_count():
    """1 chip x 1 model x 2 plans x 3 batches x 2 contexts x 2 utilizations x 2 margins = 48."""
    g = small()
    assert g.n_configs == 48
    assert g.numeric_shape == (3, 2, 2, 2, 1)


def test_load_example_grid():
    """examples/grid_example.toml: 2 x 2 x 2 combos x 22 batches x 12 contexts x 5 x 3 = 31,680."""
    g = sweep.load_grid(os.path.join(os.path.dirname(__file__), "..", "..", "examples", "grid_example.toml"))
    assert g.n_configs == 8 * 22 * 12 * 5 * 3


@pytest.mark.parametrize("doc, match", [
    ({"grid": {"hardware": ["h200"], "model": ["llama-3.1-8b"], "btach": [1]}}, "Did you mean 'batch'"),
    ({"gird": {}}, "Did you mean 'grid'"),
    ({"grid": {"hardware": ["h200"], "model": ["llama-3.1-8b"], "batch": []}}, "axis 'batch' is empty"),
    ({"grid": {"hardware": [], "model": ["llama-3.1-8b"], "batch": [1]}}, "axis 'hardware' is empty"),
    ({"grid": {"hardware": ["h200"], "model": ["llama-3.1-8b"], "batch": {"start": 1, "stop": 2, "num": 0}}},
     "axis 'batch' is empty"),
    ({"grid": {"hardware": ["h200"], "model": ["llama-3.1-8b"], "batch": {"start": 1, "stpo": 2, "num": 3}}},
     "Did you mean 'stop'"),
    ({"grid": {"hardware": ["h200"], "model": ["llama-3.1-8b"], "batch": [1], "utilization_frac": [60]}},
     "did you mean 0.6"),
    ({"grid": {"hardware": ["h200"], "model": ["llama-3.1-8b"], "batch": [0]}}, "batch must be an integer >= 1"),
    ({"grid": {"hardware": ["h200"], "model": ["llama-3.1-8b"]}}, "needs \\[grid\\] batch"),
    ({"grid": {"hardware": ["h200"], "model": ["llama-3.1-8b"], "batch": [1]}, "sweep": {"chunks": 5}},
     "Did you mean 'chunk_configs'"),
])
def test_bad_grid_one_line_errors(doc, match):
    with pytest.raises(TokenomicsError, match=match) as exc:
        sweep.parse_grid(doc)
    assert "\n" not in str(exc.value)


def test_bad_toml_and_missing_file(tmp_path):
    p = tmp_path / "g.toml"
    p.write_text("[grid\nhardware = 1")
    with pytest.raises(ValidationError, match="not valid TOML"):
        sweep.load_grid(p)
    with pytest.raises(ValidationError, match="not found"):
        sweep.load_grid(tmp_path / "nope.toml")


def test_unknown_names_suggest_before_work():
    with pytest.raises(UnknownNameError, match="Did you mean 'h200'"):
        small(hardware=("h2000",)).check()
    with pytest.raises(TokenomicsError, match="cost model"):
        small(cost=("hyperscaler",)).check()


def test_size_limits_before_work(tmp_path, monkeypatch):
    g = small()
    monkeypatch.setattr(sweep, "CSV_MAX_ROWS", 10)
    with pytest.raises(ValidationError, match="CSV output is limited to 10 rows.*parquet"):
        sweep.run(g, tmp_path / "x.csv")
    monkeypatch.setattr(sweep, "MAX_CONFIGS", 10)
    with pytest.raises(ValidationError, match="more than 10.*--force"):
        sweep.run(g)
    monkeypatch.setattr(sweep, "IN_MEMORY_MAX_ROWS", 10)
    with pytest.raises(ValidationError, match="in-memory DataFrame is limited"):
        sweep.evaluate(g)
    with pytest.raises(ValidationError, match=r"\.parquet or \.csv"):
        sweep.run(g, tmp_path / "x.xlsx")
    assert not list(tmp_path.iterdir())  # nothing written


def test_electricity_axis_needs_bottom_up():
    with pytest.raises(ValidationError, match="flat"):
        small(cost=("2.5",), electricity_usd_per_kwh=[0.05, 0.1]).check()


# -- chunking --------------------------------------------------------------------------------

@settings(max_examples=40, deadline=None)
@given(nb=st.integers(1, 7), nc=st.integers(1, 7), nu=st.integers(1, 3), chunk=st.integers(1, 60))
def test_chunks_cover_every_config_once_in_order(nb, nc, nu, chunk):
    g = small(batch=list(range(1, nb + 1)), context_tok=list(range(100, 100 + nc)),
              utilization_frac=list(np.linspace(0.5, 1, nu)), chunk_configs=chunk)
    ids = []
    inner = nu * 2
    for ch in g.chunks():
        n = (ch.b1 - ch.b0) * (ch.c1 - ch.c0) * inner
        ids.extend(range(ch.first_id, ch.first_id + n))
    assert ids == list(range(g.n_configs))


# -- values ----------------------------------------------------------------------------------

def test_rows_equal_chain_price_called_per_configuration():
    """Each vectorized row equals an independent scalar chain.price call (catalog names, defaults)."""
    df = sweep.evaluate(small())
    cols = ["tok_per_s_per_chip", "tok_per_s_per_user", "prefill_tok_per_s_per_chip", "ttft_s", "board_power_w",
            "cost_usd_per_chip_h", "usd_per_m_input_tok", "usd_per_m_output_tok",
            "usd_per_m_blended_tok", "energy_j_per_tok"]
    for i in (0, 13, 47):
        row = df.iloc[i]
        ref = chain.price(row.hardware, row.model, row.execution, batch=int(row.batch),
                          context_tok=int(row.context_tok), utilization_frac=row.utilization_frac,
                          margin_frac=row.margin_frac).to_frame().iloc[0]
        np.testing.assert_allclose(row[cols].to_numpy(float), ref[cols].to_numpy(float), rtol=1e-12)
        assert row.bound == ref.bound and row.cost_model == ref.cost_model


def test_loop_equals_vectorized():
    g = small()
    df = sweep.evaluate(g)
    ids = [0, 5, 17, 31, 47]
    loop = sweep.evaluate_loop(g, ids)
    sub = df.set_index("config_id").loc[ids].reset_index()
    for c in loop.columns:
        if c in ("bound",):
            assert (loop[c].astype(str).to_numpy() == sub[c].astype(str).to_numpy()).all()
        else:
            np.testing.assert_array_equal(loop[c].to_numpy(float), sub[c].to_numpy(float))


def test_price_scales_as_inverse_utilization_and_margin():
    """price = cost / (tok/s x 3600 x u) x 1000 / (1 - m): m 0.5 -> 2x m 0; u 0.5 -> 2x u 1.0 less
    the electricity saved because the unsold hour draws idle, not busy, power (issue 12), i.e. the
    cost per chip-hour of a u = 0.5 row is that at (busy + idle) / 2 board power (hand)."""
    from tokenomics.econ.power import power_model
    from tokenomics.econ.tco import cost_model

    df = sweep.evaluate(small())
    key = ["execution", "batch", "context_tok"]
    p = df.pivot_table(index=key, columns=["utilization_frac", "margin_frac"],
                       values="usd_per_m_output_tok")
    np.testing.assert_allclose(p[(1.0, 0.5)], 2 * p[(1.0, 0.0)], rtol=1e-12)
    assert (p[(0.5, 0.0)] < 2 * p[(1.0, 0.0)]).all() and (p[(0.5, 0.0)] > 1.8 * p[(1.0, 0.0)]).all()
    half = df[(df.utilization_frac == 0.5) & (df.margin_frac == 0.0) & (df.hardware == "h200")]
    cm, idle = cost_model("h200"), power_model("h200").idle_w
    expect = [float(cm.cost_usd_per_chip_h(0.5 * b + 0.5 * idle)) for b in half.board_power_w]
    np.testing.assert_allclose(half.cost_usd_per_chip_h, expect, rtol=1e-9)


def test_electricity_axis_hand_difference():
    """Bottom-up cost: d cost / d electricity = (board + host power) / 1000 x PUE per hour."""
    from tokenomics.econ.tco import cost_model

    g = small(execution=("graph",), batch=[8], context_tok=[1024], utilization_frac=[1.0], margin_frac=[0.0],
              cost=("bottom-up",), electricity_usd_per_kwh=[0.05, 0.15])
    df = sweep.evaluate(g)
    cm = cost_model("h200", "bottom-up")
    expect = 0.10 * (df.board_power_w.iloc[0] + cm.host_power_w) / 1e3 * cm.pue
    assert df.cost_usd_per_chip_h.iloc[1] - df.cost_usd_per_chip_h.iloc[0] == pytest.approx(expect, rel=1e-12)


def test_model_that_does_not_fit_is_masked():
    """llama-3.1-70b in bf16 needs ~141 GB of weights; one H200 has 141 GB in all: nothing fits."""
    df = sweep.evaluate(small(model=("llama-3.1-70b",)))
    assert not df.fits.any()
    assert df.usd_per_m_output_tok.isna().all()


def test_long_context_large_batch_masked_but_small_fits():
    """8B bf16 KV = 128 KiB/token; batch 64 x 262,144 tokens = 2.2 TB of KV: cannot fit; batch 1 x 512 can."""
    df = sweep.evaluate(small(batch=[1, 64], context_tok=[512, 262144]))
    big = df[(df.batch == 64) & (df.context_tok == 262144)]
    tiny = df[(df.batch == 1) & (df.context_tok == 512)]
    assert not big.fits.any() and big.usd_per_m_output_tok.isna().all()
    assert tiny.fits.all() and (tiny.usd_per_m_output_tok > 0).all()


# -- files and summaries ---------------------------------------------------------------------

def test_parquet_and_csv_hold_the_same_rows(tmp_path):
    from tokenomics.io import exact_floats

    g = small(chunk_configs=7)
    r1 = sweep.run(g, tmp_path / "a.parquet")
    r2 = sweep.run(g, tmp_path / "a.csv")
    a = pd.read_parquet(tmp_path / "a.parquet")
    b = pd.read_csv(tmp_path / "a.csv", **exact_floats())  # pandas < 3.1's default parser errs by ~1e-12
    assert len(a) == len(b) == g.n_configs == r1.n_configs
    assert a.config_id.tolist() == list(range(g.n_configs))
    np.testing.assert_allclose(a.usd_per_m_blended_tok, b.usd_per_m_blended_tok, rtol=1e-12)
    assert (a.hardware.astype(str) == b.hardware).all()
    assert r1.to_frame().equals(r2.to_frame())
    assert r1.n_chunks > 1


def test_summary_is_the_minimum_of_the_rows(tmp_path):
    g = small(chunk_configs=5)
    r = sweep.run(g, tmp_path / "a.parquet")
    df = pd.read_parquet(tmp_path / "a.parquet")
    s = r.to_frame()
    for _, row in s.iterrows():
        sub = df[df.execution.astype(str) == row.execution]
        i = sub.usd_per_m_output_tok.idxmin()
        assert row.best_usd_per_m_output_tok == sub.usd_per_m_output_tok.min()
        assert row.best_config_id == sub.config_id[i]
        assert row.n_configs == len(sub) and row.n_fit == int(sub.fits.sum())


def test_interrupted_sweep_leaves_no_file(tmp_path):
    out = tmp_path / "r.parquet"
    calls = []

    def stop(done, total):
        calls.append(done)
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        sweep.run(small(chunk_configs=4), out, progress=stop)
    assert calls and not list(tmp_path.iterdir())
    out.write_text("old")
    with pytest.raises(KeyboardInterrupt):
        sweep.run(small(chunk_configs=4), out, progress=stop)
    assert out.read_text() == "old" and [p.name for p in tmp_path.iterdir()] == ["r.parquet"]


# -- Monte Carlo -----------------------------------------------------------------------------

def test_monte_carlo_chunked_is_seeded_and_consistent():
    from tokenomics.econ.tco import cost_model

    cm = cost_model("h200", "bottom-up")
    a = sweep.monte_carlo(cm, 500.0, 2000.0, n_samples=10_000, chunk_samples=3_000, seed=3)
    b = sweep.monte_carlo(cm, 500.0, 2000.0, n_samples=10_000, chunk_samples=3_000, seed=3)
    c = sweep.monte_carlo(cm, 500.0, 2000.0, n_samples=10_000, chunk_samples=3_000, seed=4)
    assert a.n_chunks == 4 and a.samples_usd_per_1k_tok.size == 10_000
    np.testing.assert_array_equal(a.samples_usd_per_1k_tok, b.samples_usd_per_1k_tok)
    assert not np.array_equal(a.samples_usd_per_1k_tok, c.samples_usd_per_1k_tok)
    assert a.p50 == np.percentile(a.samples_usd_per_1k_tok, 50)
    # the chunked stream has the same distribution as one unchunked call (medians within 2 %)
    from tokenomics.econ.uncertainty import monte_carlo

    one = monte_carlo(cm, 500.0, 2000.0, n_samples=10_000, seed=3)
    assert a.p50 == pytest.approx(one.p50, rel=0.02)


def test_system_and_layout_axes_price_through_the_deployment():
    """A grid over systems and layouts prices each combination through chain.price on the
    deployment it names: identical numbers to a direct call (path equivalence)."""
    from tokenomics import chain
    from tokenomics.deployment import resolve

    g = sweep.Grid(hardware=("gb200",), model=("deepseek-v3",), execution=("engine",),
                   system=("gb200-nvl72", "gb200-16"), ep=("auto", "8"), batch=[64, 512])
    df = sweep.evaluate(g)
    assert set(df["system"]) == {"gb200-nvl72", "gb200-16"} and set(df["ep"]) >= {8}
    row = df[(df["system"] == "gb200-16") & (df["ep"] == 8) & (df["batch"] == 512)].iloc[0]
    dep = resolve("deepseek-v3", system="gb200-16", ep=8, execution="engine")
    want = chain.price(deployment=dep, batch=512, context_tok=int(row["context_tok"]))
    assert row["usd_per_m_output_tok"] == pytest.approx(float(want.usd_per_m_output_tok), rel=1e-9)
    with pytest.raises(sweep.ValidationError, match="built from gb200"):
        sweep.Grid(hardware=("h200",), model=("deepseek-v3",), system=("gb200-nvl72",), batch=[1])
