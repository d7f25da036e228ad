"""Run one sweep on a single process and on a Dask LocalCluster of 2 workers; compare the rows.

Both runs stream every configuration to Parquet (atomically) and the two files are read back
and compared row for row (``DataFrame.equals``: same values, NaN where NaN, same order).
The cluster is started and warmed up before the timed run, so ``dask_configs_per_s`` measures
the sweep, not the cluster start-up (reported separately).

Usage: python examples/distributed_sweep.py [--small] [--outdir DIR]
Last line: ``dask_configs_per_s=N identical=True|False``.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import numpy as np

from tokenomics import distributed, sweep


def grid(small: bool) -> sweep.Grid:
    nb, nc, nu, chunk = (8, 8, 4, 512) if small else (48, 40, 20, 131_072)
    return sweep.Grid(hardware=("h200", "b200"), model=("llama-3.1-8b", "llama-3.1-70b"),
                      execution=("graph", "engine"), batch=np.geomspace(1, 1024, nb),
                      context_tok=np.geomspace(256, 65536, nc), utilization_frac=np.linspace(0.3, 1.0, nu),
                      margin_frac=[0.0, 0.2, 0.4, 0.6], chunk_configs=chunk)


def main() -> None:
    import pandas as pd

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--small", action="store_true", help="a 2,048-configuration grid (for tests)")
    ap.add_argument("--outdir", type=Path, default=None, help="where to write the two Parquet files")
    args = ap.parse_args()
    g = grid(args.small)
    outdir = args.outdir or Path(tempfile.mkdtemp(prefix="tokenomics-sweep-"))
    local_out, dask_out = outdir / "local.parquet", outdir / "dask.parquet"

    sweep.run(sweep.Grid(hardware=g.hardware, model=g.model, execution=g.execution, batch=g.batch[:1]))  # warm-up
    loc = sweep.run(g, local_out)
    print(f"local: {loc.n_configs:,} configurations, {loc.n_chunks} chunks, {loc.elapsed_s:.2f} s "
          f"({loc.configs_per_s:,.0f} configs/s)")

    t = time.perf_counter()
    with distributed.client(n_workers=2, threads_per_worker=1, processes=True) as c:
        warm = sweep.Grid(hardware=g.hardware, model=g.model, execution=g.execution, batch=g.batch[:1])
        c.run(lambda: sweep.run(warm))  # load catalogs and specs on every worker
        print(f"LocalCluster (2 workers) started and warmed up in {time.perf_counter() - t:.1f} s")
        dsk = sweep.run(g, dask_out, engine="dask", dask_client=c)
    print(f"dask:  {dsk.n_configs:,} configurations, {dsk.n_chunks} chunks, {dsk.elapsed_s:.2f} s "
          f"({dsk.configs_per_s:,.0f} configs/s)")

    a, b = pd.read_parquet(local_out), pd.read_parquet(dask_out)
    identical = bool(a.equals(b) and loc.to_frame().equals(dsk.to_frame()))
    print(f"rows: {len(a):,} local, {len(b):,} dask; files in {outdir}")
    print(f"dask_configs_per_s={dsk.configs_per_s:.0f} identical={identical}")


if __name__ == "__main__":
    main()
