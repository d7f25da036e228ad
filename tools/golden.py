"""Regenerate tests/golden/headline.json (the pinned headline figures); review the diff.

    python tools/golden.py
"""

import json
from pathlib import Path

from tokenomics.golden import headline_numbers
from tokenomics.io import write_text

out = Path(__file__).resolve().parent.parent / "tests" / "golden" / "headline.json"
write_text(out, json.dumps(headline_numbers(), indent=1, sort_keys=True) + "\n")
print(f"wrote {out}")
