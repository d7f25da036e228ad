"""Build ``datasets/serving_atom.csv`` from AMD's ATOM benchmark dashboard.

    python tools/curate_atom_dashboard.py /path/to/ROCm/ATOM   (a git directory with gh-pages)

ROCm/ATOM publishes its nightly serving benchmarks on GitHub Pages
(https://rocm.github.io/ATOM/benchmark-dashboard/): the ``gh-pages`` branch's
``benchmark-dashboard/data.js`` holds, per benchmark run, ``ATOM::<model> <ISL>/<OSL> c=<users>``
entries of mean TPOT and TTFT [ms], output and total throughput [tok/s], tensor parallelism and GPU
count, with the run's GitHub Actions URL, container image and GPU in ``extra``. The file is a
rolling window, so every stored version of it is read and each (run, configuration) kept once.

Kept: ATOM's own server (``ATOM::``, not its vLLM or SGLang plugins) on "AMD Instinct MI355X",
the checkpoints the catalogue holds (``MODELS``), with and without MTP. The harness is
``atom.benchmarks.benchmark_serving`` (random prompts, ``--random-range-ratio 0.8``, ``--ignore-eos``,
``--num-prompts`` 10 x users: ``recipes/DeepSeek-R1.md``), the one InferenceX's ATOM runs use, so
lengths are nominal as in ``serving_blind_2026.csv``. One row per configuration: the median over
its runs of each figure (``note`` gives the run count, the dates and three run URLs).
KV cache FP8 is ASSUMED (ATOM's recipes launch every model with ``--kv_cache_dtype fp8``; the
dashboard does not record it). MTP runs ran three draft tokens; their acceptance on random prompts is
not recorded for these checkpoints, so ``spec_decode`` is ``mtp`` (the preset) as for the blind rows.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

import numpy as np
import pandas as pd

OUT = Path(__file__).resolve().parent.parent / "tokenomics" / "datasets" / "serving_atom.csv"
DATA = "benchmark-dashboard/data.js"
GPU = "AMD Instinct MI355X"
#: Dashboard model name -> (catalogue model, weight precision of the serving schema, MTP).
MODELS = {
    "DeepSeek-R1-0528": ("deepseek-r1", "fp8", False),
    "DeepSeek-R1-0528 MTP3": ("deepseek-r1", "fp8", True),
    "DeepSeek-R1-0528-MXFP4": ("deepseek-r1", "fp4", False),
    "DeepSeek-R1-0528-MXFP4 MTP3": ("deepseek-r1", "fp4", True),
    "gpt-oss-120b": ("gpt-oss-120b", "mxfp4", False),
    "Kimi-K2.5-MXFP4": ("kimi-k2.5", "fp4", False),
    "Llama-3.3-70B-Instruct-MXFP4": ("llama-3.1-70b", "mxfp4", False),
    "MiniMax-M2.5": ("minimax-m2.5", "fp8", False),
    "MiniMax-M2.5-MXFP4": ("minimax-m2.5", "fp4", False),
    "Qwen3.5-397B-A17B-FP8": ("qwen3.5-397b-a17b", "fp8", False),
    "Qwen3.5-397B-A17B-MXFP4": ("qwen3.5-397b-a17b", "fp4", False),
}
NAME = re.compile(r"ATOM::(.+?) (\d+)/(\d+) c=(\d+) (.+)$")


def _git(repo: str, *args: str) -> str:
    return subprocess.run(["git", "--git-dir", repo, *args], capture_output=True, text=True, check=True).stdout


def _versions(repo: str) -> list[str]:
    """Commits of gh-pages whose data.js is stored (the largest files of a mirror may be absent)."""
    out = []
    for c in _git(repo, "log", "--format=%H", "refs/heads/gh-pages", "--", DATA).split():
        if subprocess.run(["git", "--git-dir", repo, "cat-file", "-e", f"{c}:{DATA}"],
                          capture_output=True).returncode == 0:
            out.append(c)
    return out


def runs(repo: str) -> pd.DataFrame:
    """One row per (run, configuration) of ATOM's own server on the MI355X, every stored version read."""
    seen: dict[tuple, dict] = {}
    versions = _versions(repo)
    for c in versions:
        text = _git(repo, "show", f"{c}:{DATA}")
        data = json.loads(text[text.index("{"):].rstrip().rstrip(";"))
        for entry in data["entries"].get("Benchmark", []):
            cfgs: dict[tuple, dict] = defaultdict(dict)
            for b in entry["benches"]:
                m = NAME.match(b["name"])
                if not m or m.group(1) not in MODELS:
                    continue
                key = (m.group(1), int(m.group(2)), int(m.group(3)), int(m.group(4)))
                cfgs[key][m.group(5)] = b["value"]
                for field in ("GPU", "Docker", "Run"):
                    f = re.search(field + r": ([^|]+)", b.get("extra") or "")
                    if f:
                        cfgs[key][field] = f.group(1).strip()
            for key, v in cfgs.items():
                if v.get("GPU") != GPU or "Run" not in v or "TPOT (ms)" not in v:
                    continue
                seen.setdefault((v["Run"],) + key, dict(
                    model=key[0], isl=key[1], osl=key[2], conc=key[3], date=entry["commit"]["timestamp"][:10],
                    tpot_ms=float(v["TPOT (ms)"]), ttft_ms=float(v.get("TTFT (ms)", np.nan)),
                    out=float(v.get("throughput (tok/s)", np.nan)), total=float(v.get("Total Tput (tok/s)", np.nan)),
                    tp=int(float(v.get("_tp", 1))), gpus=int(float(v.get("_gpu_count", 1))), run=v["Run"],
                    image=v.get("Docker", "")))
    df = pd.DataFrame(list(seen.values()))
    df.attrs["versions"] = (versions[-1], versions[0], len(versions))
    return df


def table(df: pd.DataFrame) -> pd.DataFrame:
    """The serving-schema rows: one per configuration, medians over its runs."""
    first, last, n_versions = df.attrs["versions"]
    rows = []
    keys = ["model", "isl", "osl", "conc", "tp", "gpus"]
    for i, (k, g) in enumerate(df.sort_values(keys + ["date"]).groupby(keys, sort=True)):
        name, isl, osl, conc, tp, gpus = k
        model, prec, mtp = MODELS[name]
        urls = list(dict.fromkeys(g["run"]))
        rows.append({
            "case_id": f"T{i + 1:03d}", "phase": "serve", "hardware": "mi355x", "model": model,
            "weight_precision": prec, "kv_precision": "fp8", "engine": "atom", "n_gpus": gpus, "tp": tp, "ep": 1,
            "dp_attention": 0, "disaggregated": 0, "n_prefill_gpus": "", "n_decode_gpus": "", "prefill_tp": "",
            "prefill_ep": "", "spec_decode": "mtp" if mtp else "none", "isl_tok": float(isl), "osl_tok": float(osl),
            "concurrency": float(conc), "context_tok": "", "prefill_tok_per_gpu": "",
            "measured_output_tok_per_s_per_gpu": round(float(g["out"].median()) / gpus, 4),
            "measured_total_tok_per_s_per_gpu": round(float(g["total"].median()) / gpus, 4),
            "measured_tok_per_s_per_user": round(1000.0 / float(g["tpot_ms"].median()), 4),
            "measured_ttft_s": round(float(g["ttft_ms"].median()) / 1000.0, 6),
            "measured_tpot_s": round(float(g["tpot_ms"].median()) / 1000.0, 6),
            "source": (f"github:ROCm/ATOM@{last}:{DATA} (gh-pages, the ATOM benchmark dashboard; {n_versions} "
                       f"stored versions from {first[:12]} read, each run once)"),
            "as_of": str(g["date"].max()),
            "note": (f"{name} on 1 node ({gpus} x MI355X, TP{tp}), ATOM's own server, its nightly CI "
                     f"(atom.benchmarks.benchmark_serving: random prompts, range ratio 0.8, ignore_eos, 10 x users "
                     f"requests). Median over {len(g)} runs of {g['date'].min()} to {g['date'].max()} of mean TPOT, "
                     f"mean TTFT and output/total throughput; tok_per_s_per_user = 1 / median mean TPOT. KV FP8 "
                     f"ASSUMED (ATOM recipes). "
                     + ("MTP with 3 draft tokens, acceptance not recorded. " if mtp else "")
                     + "Runs: " + " ".join(urls[:3]) + (" ..." if len(urls) > 3 else "")),
            "engine_version": "",
        })
    return pd.DataFrame(rows)


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    out = table(runs(argv[0]))
    tmp = OUT.with_suffix(".csv.tmp")
    out.to_csv(tmp, index=False)
    tmp.replace(OUT)
    print(f"wrote {len(out)} rows to {OUT}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
