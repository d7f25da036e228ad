"""The sweep examples and benchmark scripts run, small, and end with their contract lines."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def run(*args: str, timeout: int = 240) -> str:
    p = subprocess.run([sys.executable, *args], cwd=ROOT, capture_output=True, text=True, timeout=timeout)
    assert p.returncode == 0, p.stderr[-2000:]
    return p.stdout


def test_benchmark_sweep_small():
    out = run("examples/benchmark_sweep.py", "--small", "--loop-sample", "10").strip().splitlines()
    m = re.fullmatch(r"configs_per_s=(\d+) ratio_vs_loop=(\d+)", out[-1])
    assert m, out[-1]
    assert int(m.group(1)) > 0 and int(m.group(2)) > 1  # vectorized beats the loop even on 8,192 configs
    assert "same NaN pattern True, same bound True, max relative difference 0.0e+00" in out[-2]


def test_distributed_sweep_small(tmp_path):
    pytest.importorskip("distributed")
    out = run("examples/distributed_sweep.py", "--small", "--outdir", str(tmp_path)).strip().splitlines()
    m = re.fullmatch(r"dask_configs_per_s=(\d+) identical=(True|False)", out[-1])
    assert m, out[-1]
    assert m.group(2) == "True"
    assert (tmp_path / "local.parquet").exists() and (tmp_path / "dask.parquet").exists()


def test_cli_startup_script_runs():
    out = run("benchmarks/cli_startup.py", "1").strip().splitlines()
    assert re.fullmatch(r"help_median_s=[\d.]+ python_median_s=[\d.]+", out[-1])
