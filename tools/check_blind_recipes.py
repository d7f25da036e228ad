"""Re-read the decode batch caps of the disaggregated blind rows from the recipes their notes cite.

    python tools/check_blind_recipes.py /path/to/connorcarpenter15/srt-slurm   (a git directory)

``serving_blind_2026.csv`` carries, for the Dynamo rows whose sweep matched a recipe (stop 36,
``datasets/README.md``), the decode workers' ``max_batch_size`` and names the recipe it came from
as ``srt-slurm@<commit>:<path>`` in ``note``. This script opens each cited recipe at its commit and
checks the cell against it: TensorRT-LLM ``backend.trtllm_config.decode.max_batch_size`` (per
attention-DP rank as written), SGLang ``backend.sglang_config.decode.max-running-requests``,
divided by ``data-parallel-size`` where ``enable-dp-attention`` is set (SGLang divides it among
the ranks). Recipes whose decode settings sit under per-variant overrides are counted as not
checkable, not as mismatches (as are the MI355X rows, whose flags come from InferenceX's own
``amd_utils``). Exits 1 on any mismatch or missing recipe. Needs PyYAML (not a tokenomics
dependency).
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pandas as pd
import yaml

FILE = Path(__file__).resolve().parent.parent / "tokenomics" / "datasets" / "serving_blind_2026.csv"
CITED = re.compile(r"srt-slurm@([0-9a-f]{40}):(\S+\.ya?ml)")


def expected_cap(recipe: dict, path: str) -> float | None:
    """The decode batch cap per attention-DP rank a recipe states, or None when it states none
    at the top level."""
    backend = recipe.get("backend") or {}
    if "trtllm" in path:
        dec = (backend.get("trtllm_config") or {}).get("decode") or {}
        cap = dec.get("max_batch_size")
        return None if cap is None else float(cap)
    dec = (backend.get("sglang_config") or {}).get("decode") or {}
    cap = dec.get("max-running-requests")
    if cap is None:
        return None
    dp = int(dec.get("data-parallel-size") or dec.get("dp-size") or 1)
    return float(int(cap) // dp) if dec.get("enable-dp-attention") else float(cap)


def check(repo: str) -> tuple[int, int, list[str]]:
    """(rows checked, rows not checkable, problems) for every row that cites a recipe."""
    df = pd.read_csv(FILE)
    rows = df[(df["disaggregated"] == 1) & df["max_batch_size"].notna()]
    checked, skipped, problems = 0, 0, []
    for _, row in rows.iterrows():
        m = CITED.search(str(row["note"]))
        if not m:
            skipped += 1
            continue
        commit, path = m.groups()
        res = subprocess.run(["git", "--git-dir", repo, "show", f"{commit}:{path}"], capture_output=True, text=True)
        if res.returncode != 0:
            problems.append(f"{row['case_id']}: {path} not found at {commit[:12]}")
            continue
        want = expected_cap(yaml.safe_load(res.stdout) or {}, path)
        if want is None:
            skipped += 1
            continue
        checked += 1
        if want != float(row["max_batch_size"]):
            problems.append(f"{row['case_id']}: max_batch_size {row['max_batch_size']:g}, recipe says {want:g} ({path})")
    return checked, skipped, problems


if __name__ == "__main__":
    if len(sys.argv) != 2:
        raise SystemExit(__doc__.split("\n\n")[1])
    repo = sys.argv[1]
    repo = repo if Path(repo, "HEAD").exists() else str(Path(repo) / ".git")
    n, skipped, problems = check(repo)
    print(f"{n} rows match their cited recipe; {skipped} not checkable; {len(problems)} problems")
    for p in problems:
        print("  " + p)
    sys.exit(1 if problems else 0)
