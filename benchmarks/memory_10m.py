"""Peak memory and wall time of a 10-million-configuration sweep streamed to Parquet.

Runs ``tokenomics sweep benchmarks/grid_10m.toml --out OUT.parquet`` in a child process and
reports the child's peak resident memory (``resource.getrusage(RUSAGE_CHILDREN).ru_maxrss``),
its wall time and the output size. Usage: python benchmarks/memory_10m.py [OUT.parquet]
Last line: ``n_configs=N peak_rss_mb=M wall_s=S``.
"""

from __future__ import annotations

import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def main() -> None:
    out = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(tempfile.mkdtemp()) / "sweep_10m.parquet"
    cmd = [sys.executable, "-m", "tokenomics", "sweep", str(HERE / "grid_10m.toml"), "--out", str(out),
           "--no-progress", "--format", "csv"]
    t = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, check=True)
    wall = time.perf_counter() - t
    peak_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024  # KiB on Linux
    import pyarrow.parquet as pq

    n = pq.ParquetFile(out).metadata.num_rows
    print(proc.stderr.strip().splitlines()[-1])
    print(f"output {out} {out.stat().st_size / 1e6:.0f} MB, {n:,} rows")
    print(f"n_configs={n} peak_rss_mb={peak_mb:.0f} wall_s={wall:.1f}")


if __name__ == "__main__":
    main()
