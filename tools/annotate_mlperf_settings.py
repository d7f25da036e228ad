"""Fill the MLPerf rows' batch cap and memory fraction from the vLLM harness files that ran them.

    python tools/annotate_mlperf_settings.py <inference_results_v5.1 git dir> <inference_results_v6.0 git dir>
    python tools/annotate_mlperf_settings.py --v61 <intel-ai-tce/inference_results_v6.1 checkout>   (serving_mlperf_v61.csv)

``tools/curate_mlperf.py`` reads each submission's engine settings where its extractor links an
engine configuration to the result; AMD's partners (Dell, GigaComputing, MiTAC, Quanta, Vultr,
Cisco, HPE, ...) ship AMD's vLLM harness under their own ``code/`` or ``src/`` tree without that
link, so their rows kept vLLM's default batch cap (256 sequences in the engines table until stop 44, vLLM's
large-GPU 1,024 since) and the profile's memory
fraction (0.9). Their harness files state both: ``llm_config: max_num_seqs`` and
``gpu_memory_utilization`` in ``<scenario>_<chip>.yaml`` (for example
``closed/Dell/code/llama2-70b-99.9/harness_llm/models/llama2-70b/offline_mi300x.yaml``:
``max_num_seqs: 1792``, ``gpu_memory_utilization: 0.98``).

For every row of ``serving_mlperf.csv`` and ``serving_mlperf_server.csv`` on an AMD chip, this
reads the harness files of the row's own submitter, round (repository and commit of the row's
``source``) and benchmark: files named ``<scenario>_<chip>.yaml`` (``offline``, ``server`` or
``interactive``; multi-node ``_mn`` variants only for systems of more than 8 chips) whose directory
names the benchmark's model (``llama2-70b``, ``mixtral-8x7b``, ``405b``, ``gpt-oss``,
``deepseek``, ``llama3.1-8b``; the ``-interactive`` model directory only for Interactive rows).
Where every such file states the same value, the row takes it:

* ``max_batch_size`` = ``max_num_seqs`` (sequences per engine instance; the harness runs one
  instance per GPU at TP1, so per rank), only where the row has none;
* ``mem_frac`` = ``gpu_memory_utilization`` (the fraction of each GPU's memory the engine may fill).

Rows whose files disagree or state nothing keep their values; each filled row's ``note`` names the
file. Idempotent: a second run changes nothing.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pandas as pd

from tokenomics.io import write_frame

DATA = Path(__file__).resolve().parent.parent / "tokenomics" / "datasets"
FILES = ("serving_mlperf.csv", "serving_mlperf_server.csv")
#: benchmark directory -> what a harness file's path must contain
MODEL_KEYS = {"llama2-70b": "llama2-70b", "mixtral-8x7b": "mixtral", "llama3.1-405b": "405b",
              "llama3.1-8b": "llama3.1-8b", "gpt-oss-120b": "gpt-oss", "deepseek-r1": "deepseek"}
SOURCE = re.compile(r"^github:(?P<repo>[^@]+)@(?P<commit>[0-9a-f]+)/closed/(?P<sub>[^/]+)/results/"
                    r"(?P<system>[^/]+)/(?P<bench>[^/]+)/(?P<scenario>[^/]+)/")
MARK = "Harness settings from"


class Repo:
    """Read-only access to one results repository at one commit (git plumbing, cached)."""

    def __init__(self, gitdir: Path, commit: str):
        self.gitdir, self.commit = Path(gitdir), commit
        out = subprocess.run(["git", "--git-dir", str(self.gitdir), "ls-tree", "-r", "--name-only", commit,
                              "closed"], capture_output=True, text=True, check=True).stdout
        self.paths = out.splitlines()
        self._text: dict[str, str] = {}

    def read(self, path: str) -> str:
        if path not in self._text:
            self._text[path] = subprocess.run(["git", "--git-dir", str(self.gitdir), "show", f"{self.commit}:{path}"],
                                              capture_output=True, text=True, check=True).stdout
        return self._text[path]


class Tree(Repo):
    """The same over a plain directory (a checkout, or an excerpt of one at the same paths)."""

    def __init__(self, root: Path):  # noqa: D107 (no git: the tree is the commit)
        from _mlperf_extract import DirSrc

        self._src = DirSrc(root)
        self.paths = [p for p in self._src.files if p.startswith("closed/")]

    def read(self, path: str) -> str:
        return self._src.read(path) or ""


def _gitdir(path: str) -> Path:
    p = Path(path)
    return p / ".git" if (p / ".git").exists() else p


def _candidates(repo: Repo, sub: str, bench: str, scenario: str, chip: str, n_gpus: int) -> list[str]:
    model = next((v for k, v in MODEL_KEYS.items() if bench.startswith(k)), None)
    if model is None:
        return []
    scen = scenario.lower()
    names = {f"{scen}_{chip}.yaml"} | ({f"{scen}_{chip}_mn.yaml"} if n_gpus > 8 else set())
    out = []
    for p in repo.paths:
        parts = p.split("/")
        if parts[1] != sub or parts[-1] not in names or model not in parts[-2].lower():
            continue
        if "-interactive/" in p.lower() and scen != "interactive":
            continue
        out.append(p)
    return out


def _value(text: str, key: str) -> str | None:
    vals = set(re.findall(rf"^\s*{key}\s*:\s*([0-9.]+)\s*(?:#.*)?$", text, re.M))
    return vals.pop() if len(vals) == 1 else None


def settings(repo: Repo, row: pd.Series) -> tuple[dict, str]:
    """(``{"max_batch_size": ..., "mem_frac": ...}``, the file(s) read) for one row."""
    m = SOURCE.match(str(row["source"]))
    if not m:
        return {}, ""
    files = _candidates(repo, m["sub"], m["bench"], m["scenario"], str(row["hardware"]), int(row["n_gpus"]))
    found: dict[str, set] = {"max_batch_size": set(), "mem_frac": set()}
    for f in files:
        text = repo.read(f)
        for col, key in (("max_batch_size", "max_num_seqs"), ("mem_frac", "gpu_memory_utilization")):
            v = _value(text, key)
            if v is not None:
                found[col].add(float(v))
    out = {col: vals.pop() for col, vals in found.items() if len(vals) == 1}
    return out, " + ".join(files)


def annotate(df: pd.DataFrame, repos: dict[tuple[str, str], Repo]) -> tuple[pd.DataFrame, int]:
    df = df.copy()
    if "mem_frac" not in df.columns:
        df.insert(df.columns.get_loc("max_batch_size") + 1, "mem_frac", float("nan"))
    n = 0
    for i, row in df.iterrows():
        if not str(row["hardware"]).startswith("mi") or MARK in str(row["note"]):
            continue
        m = SOURCE.match(str(row["source"]))
        repo = repos.get((m["repo"], m["commit"])) if m else None
        if repo is None:
            continue
        s, files = settings(repo, row)
        changed = False
        if "max_batch_size" in s and pd.isna(row["max_batch_size"]):
            df.at[i, "max_batch_size"] = s["max_batch_size"]
            changed = True
        if "mem_frac" in s and pd.isna(row["mem_frac"]):
            df.at[i, "mem_frac"] = s["mem_frac"]
            changed = True
        if changed:
            df.at[i, "note"] = (f"{row['note']}; {MARK} github:{m['repo']}@{m['commit'][:7]}:{files} "
                                f"(tools/annotate_mlperf_settings.py)")
            n += 1
    return df, n


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print(__doc__)
        return 2
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from curate_mlperf import OUT_V61, ROUND_V61, ROUNDS

    repos, files = {}, FILES
    if argv[0] == "--v61":
        pairs, files = [(ROUND_V61, Tree(Path(argv[1])))], (OUT_V61.name,)
    else:
        pairs = [(rnd, Repo(_gitdir(gitdir), rnd[2])) for rnd, gitdir in zip(ROUNDS, argv)]
    for (_, name, commit, _), r in pairs:
        repos[(name, commit[:7])] = r
        repos[(name, commit)] = r
    for f in files:
        path = DATA / f
        df, n = annotate(pd.read_csv(path), repos)
        write_frame(df, path)
        print(f"{f}: {n} rows annotated")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
