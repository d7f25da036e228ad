"""Regenerate tests/golden/headline.json (the pinned headline figures); review the diff.

    python tools/golden.py              # every group
    python tools/golden.py prices market   # only these groups (the others keep their pinned values)

A figure that moved by less than half the test's tolerance (``REL_TOL`` in ``tests/golden_figures.py``:
floating-point noise across numpy, scipy and statsmodels builds) keeps its pinned value, so the diff
shows only what a model change moved.
"""

import json
import math
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from golden_figures import GROUPS, REL_TOL, group_of, headline_numbers  # noqa: E402
from tokenomics.io import write_text  # noqa: E402

out = ROOT / "tests" / "golden" / "headline.json"
old = json.loads(out.read_text()) if out.exists() else {}
groups = tuple(sys.argv[1:]) or tuple(GROUPS)
unknown = [g for g in groups if g not in GROUPS]
if unknown:
    sys.exit(f"unknown golden group(s) {unknown}; expected some of {sorted(GROUPS)}")


def _same(a, b) -> bool:
    if isinstance(a, float) and isinstance(b, float):
        return math.isclose(a, b, rel_tol=REL_TOL / 2, abs_tol=0.0) or (math.isnan(a) and math.isnan(b))
    return a == b


fresh = headline_numbers(groups)
kept = {k: v for k, v in old.items() if group_of(k) not in groups}
new = {**kept, **{k: (old[k] if k in old and _same(old[k], v) else v) for k, v in fresh.items()}}
write_text(out, json.dumps(new, indent=1, sort_keys=True) + "\n")
print(f"wrote {out}: {sum(k not in old or old[k] is not new[k] for k in new)} figures changed, "
      f"{sum(k not in new for k in old)} dropped")
