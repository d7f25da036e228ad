"""Build ``datasets/openrouter_model_weeks.csv`` from a clone of johnbean393/openrouter-inference-stats.

    python tools/build_openrouter_model_weeks.py PATH_TO_GIT_DIR

The repository's ``data/<week>.json`` files list OpenRouter's top models of each week (its public
rankings: weekly tokens) with their list prices from OpenRouter's models API at collection time.
Each file's first stored version is used; ``collected`` is the date of the commit that added it:
the weeks up to 2026-02-08 were backfilled on 2026-02-09, so they carry that day's prices, not the
week's. Prices are converted from USD per token to USD per million tokens. Free variants (price
0) are kept, marked ``is_free``. The CSV is written atomically.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "tokenomics" / "datasets" / "openrouter_model_weeks.csv"
REPO = "https://github.com/johnbean393/openrouter-inference-stats"


def _git(git_dir: str, *args: str) -> str:
    return subprocess.check_output(["git", "--git-dir", git_dir, *args]).decode()


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 1:
        print(__doc__, file=sys.stderr)
        return 2
    git_dir = argv[0]
    first: dict[str, tuple[str, str]] = {}  # path -> (commit, date) of its first version
    for line in reversed(_git(git_dir, "log", "--all", "--format=%H %ad", "--date=short").split("\n")):
        if not line.strip():
            continue
        commit, date = line.split()
        for path in _git(git_dir, "ls-tree", "-r", "--name-only", commit, "data/").split():
            first.setdefault(path, (commit, date))
    import pandas as pd

    from tokenomics.io import write_frame

    rows = []
    for path, (commit, date) in sorted(first.items()):
        d = json.loads(_git(git_dir, "show", f"{commit}:{path}"))
        for m in d["models"]:
            rows.append({
                "week": d["date"], "slug": m["slug"], "name": m["name"], "total_tokens": float(m["total_tokens"]),
                "input_usd_per_m_tok": float(m["prompt_price"]) * 1e6,
                "output_usd_per_m_tok": float(m["completion_price"]) * 1e6,
                "is_free": int(bool(m.get("is_free")) or (m["prompt_price"] == 0 and m["completion_price"] == 0)
                               or str(m["slug"]).endswith(":free")),
                "rank": int(m["rank"]), "collected": date,
                "source": f"{REPO}/blob/{commit}/{path} (OpenRouter rankings and models API)",
                "as_of": d["date"],
            })
    write_frame(pd.DataFrame(rows), OUT)
    print(f"{len(rows)} rows, {len(first)} weeks -> {OUT}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
