"""One version: the package's ``__version__`` is the one pyproject.toml declares."""

import re
from pathlib import Path

import tokenomics


def test_version_is_the_declared_one():
    text = (Path(__file__).resolve().parents[2] / "pyproject.toml").read_text()
    assert re.search(r'^version = "([^"]+)"', text, re.M).group(1) == tokenomics.__version__
