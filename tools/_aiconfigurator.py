"""Reading NVIDIA aiconfigurator's timing databases (Apache-2.0) from a git checkout, at one pinned commit.

The dataset builders that take aiconfigurator rows (build_kernel_microbench.py, build_engine_kernels.py,
curate_nvlink_a2a.py) read every table at ``AIC_COMMIT`` and date each row by the table's last commit.
"""

from __future__ import annotations

import io
import subprocess
from pathlib import Path

import pandas as pd

AIC_COMMIT = "095f58a51c4ca8e61b66ec108d86f223f8d559ce"
AIC_ROOT = "aic-core/src/aiconfigurator_core/systems/data"


def git(repo: Path, *args: str) -> bytes:
    """Output of ``git -C repo args`` (raises on failure)."""
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True).stdout


def files(repo: Path) -> list[str]:
    """Every path under ``AIC_ROOT`` at ``AIC_COMMIT``."""
    return git(repo, "ls-tree", "-r", "--name-only", AIC_COMMIT, "--", AIC_ROOT).decode().split()


def table(repo: Path, rel: str) -> pd.DataFrame:
    """The parquet table at ``rel`` (a path from the repository root) at ``AIC_COMMIT``."""
    return pd.read_parquet(io.BytesIO(git(repo, "show", f"{AIC_COMMIT}:{rel}")))


def as_of(repo: Path, rel: str) -> str:
    """Date (YYYY-MM-DD) of the last commit up to ``AIC_COMMIT`` that touched ``rel``."""
    return git(repo, "log", "-1", "--format=%cs", AIC_COMMIT, "--", rel).decode().strip()
