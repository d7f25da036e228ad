"""Time ``tokenomics --help`` (CLI start-up): several runs, median and spread.

Runs the installed console script (next to the running Python, bypassing shell shims), and
``python -c pass`` for the interpreter's own start-up. Usage: python benchmarks/cli_startup.py [RUNS]
Last line: ``help_median_s=T python_median_s=P``.
"""

from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path


def timed(cmd: list[str], runs: int, env=None) -> list[float]:
    out = []
    for _ in range(runs):
        t = time.perf_counter()
        subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True, env=env)
        out.append(time.perf_counter() - t)
    return out


def main() -> None:
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 7
    script = Path(sys.executable).with_name("tokenomics")
    cmd = [str(script)] if script.exists() else [shutil.which("tokenomics") or "tokenomics"]
    timed(cmd + ["--help"], 1)  # warm the file cache
    helps = timed(cmd + ["--help"], runs)
    plain = timed([sys.executable, "-c", "pass"], runs)
    env = dict(os.environ, TYPER_USE_RICH="0")
    norich = timed(cmd + ["--help"], runs, env=env)
    f = lambda xs: f"median {statistics.median(xs):.3f} s (min {min(xs):.3f}, max {max(xs):.3f})"  # noqa: E731
    print(f"{' '.join(cmd)} --help: {f(helps)} over {runs} runs")
    print(f"same with TYPER_USE_RICH=0 (plain click help): {f(norich)}")
    print(f"python -c pass: {f(plain)}")
    print(f"help_median_s={statistics.median(helps):.3f} python_median_s={statistics.median(plain):.3f}")


if __name__ == "__main__":
    main()
