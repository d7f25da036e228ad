"""The perf and showdown examples run as scripts (other examples are run by their area's tests:
price_per_token in test_report, forecast_demand in test_forecast_cli, watch_dashboard in
test_watch_cli, benchmark_sweep and distributed_sweep in test_examples_sweep)."""

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("script, needle", [
    ("examples/decode_on_h200.py", "megakernel"),
    ("examples/kimi_k3_showdown.py", "tok_per_s_per_user"),
])
def test_example_runs(script, needle):
    p = subprocess.run([sys.executable, script], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr[-2000:]
    assert needle in p.stdout


def test_every_example_is_run_by_some_test():
    tests = "".join(f.read_text() for f in (ROOT / "tests").rglob("test_*.py"))
    for ex in (ROOT / "examples").glob("*.py"):
        assert ex.name in tests, f"{ex.name} is not run by any test"
