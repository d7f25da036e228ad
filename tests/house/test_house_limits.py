"""House limits: the serving and step modules stay readable in one sitting, and no
function of the deployment resolver or of the price chain runs past what a reader holds at once.

Limits: at most 1,000 lines a module, 120 lines a function (measured
as ``tools/function_lengths.py`` does: ``def`` to last line, docstring included)."""

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))

from function_lengths import function_lengths  # noqa: E402

MAX_MODULE_LINES = 1000
MAX_FUNCTION_LINES = 120


@pytest.mark.parametrize("module", ["tokenomics/perf/serving.py", "tokenomics/perf/step.py"])
def test_module_is_at_most_1000_lines(module):
    n = len((ROOT / module).read_text(encoding="utf-8").splitlines())
    assert n <= MAX_MODULE_LINES, f"{module} has {n} lines; expected at most {MAX_MODULE_LINES}"


@pytest.mark.parametrize("module", ["tokenomics/deployment.py", "tokenomics/chain.py"])
def test_no_function_over_120_lines(module):
    long = [(name, n) for name, _, n in function_lengths(ROOT / module) if n > MAX_FUNCTION_LINES]
    assert not long, f"{module}: functions over {MAX_FUNCTION_LINES} lines: {long}"


def test_function_lengths_counts_def_to_last_line(tmp_path):
    """Hand count: method f runs lines 2-5 (4 lines), its nested g lines 3-4 (2), named by their owners."""
    src = tmp_path / "m.py"
    src.write_text("class A:\n    def f(self):\n        def g():\n            return 1\n        return g\n")
    assert function_lengths(src) == [("A.f", 2, 4), ("A.f.g", 3, 2)]
