"""Fill the run settings of the single-node InferenceX rows of serving_blind_2026.csv from the scripts that ran them.

    python tools/annotate_blind_schedulers.py /path/to/SemiAnalysisAI/InferenceX  (a git directory)

The dashboard capture ``tools/curate_inferencex_2026.py`` reads holds no engine settings, so those
rows were scored with the engines' defaults. Each run's settings are in the launch script of
SemiAnalysisAI/InferenceX that ran it: for every co-located row the script is taken at the last
commit on or before the row's run date (``as_of``), named as the runners name it
(``benchmarks/single_node[/fixed_seq_len]/<model>_<precision>_<gpu>[_trt|_atom][_mtp].sh``; before 2026-02 the
flat ``benchmarks/<model>_<precision>_<gpu>[_trt]_{docker,slurm}.sh``), and **dry-run**: bash runs
it with the row's ``TP``, ``EP_SIZE``, ``DP_ATTENTION``, ``CONC``, ``ISL``, ``OSL`` and stubs for
the server launchers (``python3 -m sglang.launch_server`` / ``atom``, ``mpirun trtllm-serve``),
the downloads and the benchmark client, so the shell arithmetic of the script itself decides the
flags. Read from the captured command line and the ``--extra_llm_api_options`` YAML it wrote:

* ``recv_interval_iters``: SGLang ``--scheduler-recv-interval`` or ``--num-continuous-decode-steps``;
* ``adp_timeout_iters``: TensorRT-LLM ``attention_dp_config.timeout_iters`` where
  ``enable_balance`` is true;
* ``max_batch_size``: TensorRT-LLM ``--max_batch_size`` (per attention-DP rank with attention DP),
  SGLang ``--max-running-requests``;
* ``mem_frac``: the fraction of GPU memory the engine may fill with weights and KV cache, SGLang
  ``--mem-fraction-static``, vLLM and ATOM ``--gpu-memory-utilization`` (TensorRT-LLM's
  ``free_gpu_memory_fraction`` is a share of the memory left after the weights, another quantity:
  not read);
* ``kv_precision``: ``fp8`` where the script sets an FP8 KV cache (TensorRT-LLM
  ``kv_cache_config.dtype``, SGLang ``--kv-cache-dtype fp8_e4m3``, ATOM ``--kv_cache_dtype fp8``);
* ``ep`` and ``dp_attention`` where the script's own arithmetic sets them (TensorRT-LLM ``--ep_size``
  and ``enable_attention_dp``, SGLang ``--ep-size`` and ``--enable-dp-attention``): the TensorRT-LLM
  scripts of late 2025 chose expert parallelism and attention DP from the concurrency and lengths
  themselves, so on 8 rows the dashboard's layout is not the one that ran.

Not filled, as for the held-out rows (``tools/annotate_serving_schedulers.py``): the token budgets
(``--chunked-prefill-size``, ``--max_num_tokens``) and the MTP depth (its acceptance on these runs
is not published; the rows keep the ``mtp`` preset). Disaggregated rows are launched from recipe
files, not these scripts, and are left as they are.
"""

from __future__ import annotations

import functools
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from tokenomics.io import write_frame  # noqa: E402

DATA = Path(__file__).resolve().parent.parent / "tokenomics" / "datasets"
FILE = DATA / "serving_blind_2026.csv"
COLUMNS = ("recv_interval_iters", "adp_timeout_iters", "max_batch_size", "mem_frac")

#: Stubs the dry run puts first on PATH: each records its arguments and exits 0. ``python3``
#: passes everything but a server launch through to the real interpreter.
_LOG = "launch.log"
_STUB = '#!/usr/bin/env bash\nprintf "%s\\0" "$(basename "$0")" "$@" >> "$DRY/launch.log"; printf "\\n" >> "$DRY/launch.log"\n'
_PY = ('#!/usr/bin/env bash\ncase " $* " in *launch_server*|*atom.entrypoints*|*" serve "*)\n'
       '  printf "%s\\0" python3 "$@" >> "$DRY/launch.log"; printf "\\n" >> "$DRY/launch.log"; exit 0;; esac\n'
       'exec "$REAL_PY" "$@"\n')
#: ``tail -F`` on the server log, which older scripts read until the server says it is ready.
_TAIL = ('#!/usr/bin/env bash\necho "The server is fired up and ready to roll!"\n'
         'echo "INFO:     Application startup complete."\necho "Uvicorn running on http://0.0.0.0"\n')
_STUBBED = ("mpirun", "trtllm-serve", "hf", "huggingface-cli", "nvidia-smi", "pip", "git", "docker",
            "rocm-smi", "amd-smi", "sglang", "sleep", "curl", "wget", "uv")
#: The benchmark library the scripts source, reduced to no-ops (its functions talk to the server).
_LIB = ("check_env_vars() { :; }\nwait_for_server_ready() { :; }\nrun_benchmark_serving() { :; }\n"
        "run_eval() { :; }\nappend_lm_eval_summary() { :; }\nstart_gpu_monitor() { :; }\n"
        "stop_gpu_monitor() { :; }\nsetup_eval_context() { :; }\npreserve_server_log() { :; }\n"
        "command_not_found_handle() { return 0; }\n")


def _git(repo: str, *args: str) -> str:
    return subprocess.run(["git", "--git-dir", repo, *args], check=True, capture_output=True, text=True).stdout


@functools.lru_cache(maxsize=None)
def _commit(repo: str, day: str) -> str:
    return _git(repo, "rev-list", "-1", f"--before={day}T23:59:59Z", "HEAD").strip()


@functools.lru_cache(maxsize=None)
def _scripts(repo: str, commit: str) -> frozenset:
    """The paths under ``benchmarks/`` at ``commit`` (read once per commit)."""
    return frozenset(_git(repo, "ls-tree", "-r", "--name-only", commit, "benchmarks/").split())


def _script(repo: str, commit: str, row) -> str | None:
    """Path of the launch script of ``row`` at ``commit`` (None when no candidate exists)."""
    gpu, prec = str(row["hardware"]), str(row["weight_precision"])
    fw = {"trt": "_trt", "atom": "_atom"}.get(str(row["engine"]), "")
    mtp = "_mtp" if str(row["spec_decode"]) == "mtp" else ""
    base = f"dsr1_{prec}_{gpu}"
    names = _scripts(repo, commit)
    for cand in (f"benchmarks/single_node/{base}{fw}{mtp}.sh",
                 f"benchmarks/single_node/fixed_seq_len/{base}{fw}{mtp}.sh", f"benchmarks/{base}{fw}{mtp}.sh",
                 f"benchmarks/{base}{fw}{mtp}_docker.sh", f"benchmarks/{base}{fw}{mtp}_slurm.sh"):
        if cand in names:
            return cand
    return None


def dry_run(repo: str, commit: str, script: str, row) -> tuple[list[str], dict]:
    """The server command line ``script`` launches for ``row`` and the YAML files it wrote."""
    with tempfile.TemporaryDirectory(ignore_cleanup_errors=True) as tmp:
        t = Path(tmp)
        (t / "bin").mkdir()
        for name in _STUBBED:
            (t / "bin" / name).write_text(_STUB)
        (t / "bin" / "tail").write_text(_TAIL)
        (t / "bin" / "python3").write_text(_PY)
        (t / "bin" / "python").write_text(_PY)
        for p in (t / "bin").iterdir():
            p.chmod(0o755)
        dst = t / script
        dst.parent.mkdir(parents=True, exist_ok=True)
        dst.write_text(_git(repo, "show", f"{commit}:{script}"))
        for lib in ("benchmarks/benchmark_lib.sh", "benchmark_lib.sh"):
            (t / lib).parent.mkdir(parents=True, exist_ok=True)
            (t / lib).write_text(_LIB)
        work = t / "work"
        work.mkdir()
        tp = int(row["tp"])
        env = {"PATH": f"{t / 'bin'}:/usr/bin:/bin", "HOME": str(t), "DRY": str(t),
               "REAL_PY": sys.executable, "MODEL": "/model", "TP": str(tp), "CONC": str(int(row["concurrency"])),
               "ISL": str(int(row["isl_tok"])), "OSL": str(int(row["osl_tok"])), "RANDOM_RANGE_RATIO": "0.8",
               "RESULT_FILENAME": "result", "EP_SIZE": str(int(row["ep"])), "PORT": "8888",
               "DP_ATTENTION": "true" if int(row["dp_attention"]) == 1 else "false",
               "MAX_MODEL_LEN": str(int(row["isl_tok"] + row["osl_tok"] + 200)), "PRECISION": str(row["weight_precision"]),
               "SERVER_LOG": str(t / "server.log")}
        # the scripts write their server log and configs under /workspace: point it here
        # (and wait for the backgrounded launch before reading what it recorded)
        text = dst.read_text().replace("/workspace", str(work))
        dst.write_text(text + "\nwait\n")
        subprocess.run(["bash", str(dst)], cwd=work, env=env, capture_output=True, text=True, timeout=60)
        log = (t / _LOG).read_text() if (t / _LOG).exists() else ""
        launches = [ln.split("\0")[:-1] for ln in log.splitlines() if ln]
        server = next((a for a in launches if any(k in " ".join(a) for k in
                       ("launch_server", "trtllm-serve", "atom.entrypoints", " serve "))), [])
        yml = {p.name: p.read_text() for p in work.glob("*.y*ml")}
    return server, yml


def _flag(args: list[str], *names: str) -> str | None:
    """Value of the last of ``names`` in ``args`` (``--x v`` or ``--x=v``)."""
    val = None
    for i, a in enumerate(args):
        for n in names:
            if a == n and i + 1 < len(args):
                val = args[i + 1]
            elif a.startswith(n + "="):
                val = a.split("=", 1)[1]
    return val


def settings(server: list[str], yml: dict) -> dict:
    """The serving-file settings a launch states (module docstring)."""
    out: dict = {}
    text = "\n".join(yml.values())
    k = _flag(server, "--scheduler-recv-interval", "--num-continuous-decode-steps")
    if k is not None:
        out["recv_interval_iters"] = float(k)
    mb = _flag(server, "--max_batch_size", "--max-batch-size", "--max-running-requests")
    if mb is not None:
        out["max_batch_size"] = float(mb)
    mf = _flag(server, "--mem-fraction-static", "--mem_fraction_static", "--gpu-memory-utilization",
               "--gpu_memory_utilization")
    if mf is not None and re.fullmatch(r"[0-9.]+", mf):
        out["mem_frac"] = float(mf)
    if re.search(r"enable_balance:\s*true", text):
        m = re.search(r"timeout_iters:\s*(\d+)", text)
        if m:
            out["adp_timeout_iters"] = float(m.group(1))
    ep = _flag(server, "--ep_size", "--ep-size")
    if ep is not None and ep.isdigit():
        out["ep"] = int(ep)
    m = re.search(r"enable_attention_dp:\s*(\w+)", text)
    if m or "--enable-dp-attention" in server:
        out["dp_attention"] = int("--enable-dp-attention" in server or m.group(1).lower() == "true")
    kv = (_flag(server, "--kv-cache-dtype", "--kv_cache_dtype") or "").lower()
    m = re.search(r"kv_cache_config:(?:\n[ \t]+.*)*?\n[ \t]+dtype:\s*(\w+)", text)
    if kv.startswith("fp8") or (m and m.group(1).lower().startswith("fp8")):
        out["kv_precision"] = "fp8"
    return out


def annotate(df: pd.DataFrame, repo: str) -> pd.DataFrame:
    df = df.copy()
    for c in COLUMNS:
        if c not in df:
            df[c] = np.nan
    df["kv_precision"] = df["kv_precision"].astype(object)
    rows = df.index[df["disaggregated"] != 1]
    missing, changed = [], []
    for i in rows:
        row = df.loc[i]
        commit = _commit(repo, str(row["as_of"])[:10])
        script = _script(repo, commit, row)
        if script is None:
            missing.append(row["case_id"])
            continue
        server, yml = dry_run(repo, commit, script, row)
        if not server:
            missing.append(row["case_id"])
            continue
        for col, val in settings(server, yml).items():
            if col in ("ep", "dp_attention") and int(df.at[i, col]) != val:
                changed.append(f"{row['case_id']} {col} {int(df.at[i, col])} -> {val}")
            df.at[i, col] = val
        note = str(row["note"])
        tag = f" Run settings from github:SemiAnalysisAI/InferenceX@{commit}:{script} (tools/annotate_blind_schedulers.py)."
        df.at[i, "note"] = note.split(" Run settings from ")[0].rstrip(".") + "." + tag
    if missing:
        raise SystemExit(f"no launch script found or launched for: {missing}")
    if changed:
        print("layout from the launch script:", "; ".join(changed))
    return df


if __name__ == "__main__":
    if len(sys.argv) != 2:
        raise SystemExit(__doc__.split("\n\n")[1])
    repo = sys.argv[1]
    repo = repo if Path(repo, "HEAD").exists() else str(Path(repo) / ".git")
    out = annotate(pd.read_csv(FILE), repo)
    write_frame(out, FILE)
    co = out["disaggregated"] != 1
    print({c: int(out.loc[co, c].notna().sum()) for c in (*COLUMNS, "kv_precision")}, "of", int(co.sum()), "co-located rows")
