"""Golden headline figures: prices (at default and non-default money inputs), the showdown figures,
waterfall and costs, MLPerf brackets, watch floors, serving and calibration accuracy, market margins
and the forecast, pinned to tests/golden/headline.json.

The expected values are this model's own outputs, reviewed when regenerated with
`python tools/golden.py`: the test exists so that any change moving a headline number is seen
(the README and the guides quote these, with the measurements they are compared against). Each group
is computed once per session and only when one of its figures is selected; the slow groups run in the
``integration`` tier (``pytest -m integration``)."""

import json
import math
from pathlib import Path

import pytest

from golden_figures import GROUPS, REL_TOL, SLOW_GROUPS, group_of

GOLDEN = json.loads((Path(__file__).resolve().parents[1] / "golden" / "headline.json").read_text())
_CACHE: dict[str, dict[str, float]] = {}


def _group(g: str) -> dict[str, float]:
    if g not in _CACHE:
        _CACHE[g] = GROUPS[g]()
    return _CACHE[g]


def _marks(g: str) -> list:
    return [pytest.mark.integration] if g in SLOW_GROUPS else []


def test_every_figure_has_one_group():
    for name in GOLDEN:
        assert group_of(name) in GROUPS


@pytest.mark.parametrize("g", [pytest.param(g, marks=_marks(g)) for g in GROUPS])
def test_same_figures(g):
    assert sorted(_group(g)) == sorted(n for n in GOLDEN if group_of(n) == g)


@pytest.mark.parametrize("name", [pytest.param(n, marks=_marks(group_of(n))) for n in sorted(GOLDEN)])
def test_headline_unchanged(name):
    want, got = GOLDEN[name], _group(group_of(name)).get(name)
    assert got is not None or want is None, f"{name} is no longer computed"
    if want is None or (isinstance(want, float) and math.isnan(want)):
        assert got is None or math.isnan(got)
    else:
        assert got == pytest.approx(want, rel=REL_TOL), f"{name} moved: {want} -> {got} (python tools/golden.py)"
