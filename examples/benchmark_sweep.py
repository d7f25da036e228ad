"""Benchmark: a grid of >= 1,000,000 priced configurations, vectorized vs a per-configuration loop.

The vectorized path evaluates every configuration of the grid (step time, throughput, power,
cost per chip-hour, input/output/blended price, energy) chunk by chunk with one broadcast call
of ``tokenomics.chain.price`` per chunk, materialising all 25 result columns. The loop path
prices a random subsample of the same configurations one ``chain.price`` call each (specs
resolved once), and its time is extrapolated to the whole grid. Both run here, in one process;
the loop results are checked against the vectorized rows.

Usage: python examples/benchmark_sweep.py [--small] [--loop-sample N]
Last line: ``configs_per_s=N ratio_vs_loop=R``.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from tokenomics import sweep


def grid(small: bool) -> sweep.Grid:
    nb, nc, nu = (8, 8, 4) if small else (48, 40, 20)
    return sweep.Grid(hardware=("h200", "b200"), model=("llama-3.1-8b", "llama-3.1-70b"),
                      execution=("graph", "engine"), batch=np.geomspace(1, 1024, nb),
                      context_tok=np.geomspace(256, 65536, nc), utilization_frac=np.linspace(0.3, 1.0, nu),
                      margin_frac=[0.0, 0.2, 0.4, 0.6])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--small", action="store_true", help="a 2,048-configuration grid (for tests)")
    ap.add_argument("--loop-sample", type=int, default=200, help="configurations timed in the loop")
    args = ap.parse_args()
    g = grid(args.small)
    n = g.n_configs

    # warm-up: load catalogs and resolve every combination once (one-time start-up cost)
    t = time.perf_counter()
    warm = sweep.Grid(hardware=g.hardware, model=g.model, execution=g.execution, batch=g.batch[:1],
                      context_tok=g.context_tok[:1], utilization_frac=g.utilization_frac[:1],
                      margin_frac=g.margin_frac[:1])
    for _ in sweep.iter_chunks(warm):
        pass
    print(f"warm-up (catalogs, specs): {time.perf_counter() - t:.2f} s")

    t = time.perf_counter()
    rows = 0
    tables = []
    for table, _ in sweep.iter_chunks(g):
        rows += table.num_rows
        tables.append(table)
    vec_s = time.perf_counter() - t
    configs_per_s = rows / vec_s
    print(f"vectorized: {rows:,} configurations in {vec_s:.3f} s "
          f"({vec_s / rows * 1e9:.0f} ns per configuration, {len(tables)} chunks)")

    rng = np.random.default_rng(0)
    ids = np.sort(rng.choice(n, size=min(args.loop_sample, n), replace=False))
    t = time.perf_counter()
    loop = sweep.evaluate_loop(g, ids)
    loop_s = time.perf_counter() - t
    per_cfg = loop_s / ids.size
    print(f"loop: {ids.size} configurations in {loop_s:.2f} s ({per_cfg * 1e3:.2f} ms per configuration); "
          f"extrapolated to {n:,}: {per_cfg * n / 3600:.1f} h")

    import pyarrow as pa

    full = pa.concat_tables([tb.cast(sweep.result_schema()) for tb in tables]).take(pa.array(ids)).to_pandas()
    num = [c for c in loop.columns if c not in ("bound", "fits", "config_id")]
    a, b = full[num].to_numpy(float), loop[num].to_numpy(float)
    same_nan = bool(np.array_equal(np.isnan(a), np.isnan(b)))
    rel = np.nanmax(np.abs(a - b) / np.maximum(np.abs(b), 1e-300)) if np.isfinite(b).any() else 0.0
    print(f"loop vs vectorized on the sample: same ids {bool((full.config_id == loop.config_id).all())}, "
          f"same NaN pattern {same_nan}, same bound {bool((full.bound == loop.bound).all())}, "
          f"max relative difference {rel:.1e}")
    print(f"configs_per_s={configs_per_s:.0f} ratio_vs_loop={per_cfg * configs_per_s:.0f}")


if __name__ == "__main__":
    main()
