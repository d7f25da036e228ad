"""Golden headline figures: README answers, showdown figures/waterfall/costs, MLPerf brackets, watch
floors, calibration accuracy and the issue's deployment prices, pinned to tests/golden/headline.json.

The expected values are this model's own outputs, reviewed when regenerated with
`python tools/golden.py`: the test exists so that any change moving a headline number is seen
(the closing notes and README quote these, with the measurements they are compared against)."""

import json
import math
from pathlib import Path

import pytest

from tokenomics.golden import REL_TOL, headline_numbers

GOLDEN = json.loads((Path(__file__).parent / "golden" / "headline.json").read_text())


@pytest.fixture(scope="module")
def now():
    return headline_numbers()


def test_same_figures(now):
    assert sorted(now) == sorted(GOLDEN)


@pytest.mark.parametrize("name", sorted(GOLDEN))
def test_headline_unchanged(name, now):
    want, got = GOLDEN[name], now[name]
    if want is None or (isinstance(want, float) and math.isnan(want)):
        assert got is None or math.isnan(got)
    else:
        assert got == pytest.approx(want, rel=REL_TOL), f"{name} moved: {want} -> {got} (python tools/golden.py)"
