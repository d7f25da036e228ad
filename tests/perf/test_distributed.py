"""The dask engine gives the rows of the single-process run (LocalCluster, in-process threads)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("distributed")

from tokenomics import distributed, sweep  # noqa: E402


@pytest.fixture(scope="module")
def client():
    with distributed.client(n_workers=2, processes=False) as c:
        yield c


def grid() -> sweep.Grid:
    return sweep.Grid(hardware=("h200", "b200"), model=("llama-3.1-8b",), execution=("graph", "engine"),
                      batch=[1, 4, 32, 256], context_tok=[512, 8192], utilization_frac=[0.6, 1.0],
                      margin_frac=[0.0, 0.3], chunk_configs=12)


def test_dask_rows_identical_to_local(client, tmp_path):
    g = grid()
    loc = sweep.run(g, tmp_path / "local.parquet")
    dsk = sweep.run(g, tmp_path / "dask.parquet", engine="dask", dask_client=client)
    a, b = pd.read_parquet(tmp_path / "local.parquet"), pd.read_parquet(tmp_path / "dask.parquet")
    assert len(a) == g.n_configs == 128 and dsk.n_chunks == loc.n_chunks > 4
    assert a.equals(b)
    assert loc.to_frame().equals(dsk.to_frame())


def test_dask_evaluate_identical(client):
    g = grid()
    assert sweep.evaluate(g).equals(sweep.evaluate(g, engine="dask", dask_client=client))


def test_map_ordered_keeps_order_with_small_window(client):
    out = list(distributed.map_ordered(lambda x: x * x, range(25), dask_client=client, window=3))
    assert out == [x * x for x in range(25)]


def test_monte_carlo_identical_on_dask(client):
    from tokenomics.econ.tco import cost_model

    cm = cost_model("h200", "bottom-up")
    a = sweep.monte_carlo(cm, 450.0, 1500.0, n_samples=40_000, chunk_samples=9_000, seed=7)
    b = sweep.monte_carlo(cm, 450.0, 1500.0, n_samples=40_000, chunk_samples=9_000, seed=7, engine="dask",
                          dask_client=client)
    np.testing.assert_array_equal(a.samples_usd_per_1k_tok, b.samples_usd_per_1k_tok)
    assert (a.p5, a.p50, a.p95) == (b.p5, b.p50, b.p95)
