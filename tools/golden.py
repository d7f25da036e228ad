"""Regenerate tests/golden/headline.json (the pinned headline figures); review the diff.

    python tools/golden.py

A figure that moved by less than half the test's tolerance (``tokenomics.golden.REL_TOL``: floating-point
noise across numpy, scipy and statsmodels builds) keeps its pinned value, so the diff shows only what a
model change moved.
"""

import json
import math
from pathlib import Path

from tokenomics.golden import REL_TOL, headline_numbers
from tokenomics.io import write_text

out = Path(__file__).resolve().parent.parent / "tests" / "golden" / "headline.json"
old = json.loads(out.read_text()) if out.exists() else {}


def _same(a, b) -> bool:
    if isinstance(a, float) and isinstance(b, float):
        return math.isclose(a, b, rel_tol=REL_TOL / 2, abs_tol=0.0) or (math.isnan(a) and math.isnan(b))
    return a == b


new = {k: (old[k] if k in old and _same(old[k], v) else v) for k, v in headline_numbers().items()}
write_text(out, json.dumps(new, indent=1, sort_keys=True) + "\n")
print(f"wrote {out}: {sum(k not in old or old[k] is not new[k] for k in new)} figures changed")
