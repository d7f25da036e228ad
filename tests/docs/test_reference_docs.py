"""docs/reference/ is generated from the code: it must match what the code says today."""

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.integration
def test_reference_docs_are_current():
    r = subprocess.run([sys.executable, str(ROOT / "tools" / "build_reference.py"), "--check"],
                       capture_output=True, text=True, cwd=ROOT)
    assert r.returncode == 0, r.stderr
