"""tokenomics against NVIDIA's AIConfigurator on AIConfigurator's own silicon anchors.

    pip install aiconfigurator==0.12.0      # in a separate environment; not a tokenomics dependency
    python benchmarks/aic_head_to_head.py /path/to/ai-dynamo/aiconfigurator   (a git directory)
    python benchmarks/aic_head_to_head.py /path/to/aiconfigurator --sample 200   (seeded rows of the dump)
    python benchmarks/aic_head_to_head.py /path/to/aiconfigurator --sample 2504  (every row: ~30 minutes)

Reads the anchors ``tools/accuracy_tracking/silicon_refs.csv`` at the commit
``tools/curate_aic_silicon.py`` pins, keeps the 22 rows ``datasets/serving_aic_silicon.csv`` holds
(with ``--sample N``: N rows drawn with seed 0 from ``datasets/serving_aic_sample.csv`` and the
measurement dump behind it), and predicts each with AIConfigurator's public ``aiconfigurator.cli.api.cli_estimate`` (speculative
decoding off, as its own anchor check runs it; the measured engine release where its database
has it, else its newest) and with ``tokenomics.validate.serving_cases.predict_cases``. Prints median / p90
absolute error of TPOT and TTFT for each on the rows both predict, each tool's coverage and its
time per estimate, all measured in this one run. Network access is not needed.
"""

from __future__ import annotations

import contextlib
import io
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tools"))

from curate_aic_silicon import COMMIT, PATH, SAMPLE_PATH  # noqa: E402
from tokenomics.catalog import load  # noqa: E402
from tokenomics.validate.serving_cases import predict_cases  # noqa: E402

LAYOUT = ("batch_size", "tp_size", "pp_size", "attention_dp_size", "moe_tp_size", "moe_ep_size")


def aic_estimate(ref: pd.Series) -> tuple[float, float, str]:
    """AIConfigurator's (TTFT [s], TPOT [s], release used) for one co-located anchor."""
    from aiconfigurator.cli.api import cli_estimate

    kw = dict(model_path=ref["model_path"], system_name=ref["system"], mode="agg", backend_name=ref["backend"],
              isl=int(ref["isl"]), osl=int(ref["osl"]),
              gemm_quant_mode=ref["gemm_quant_mode"] if pd.notna(ref["gemm_quant_mode"]) else None,
              moe_quant_mode=ref["moe_quant_mode"] if pd.notna(ref["moe_quant_mode"]) else None,
              **{k: int(ref[k]) for k in LAYOUT if pd.notna(ref[k])})
    versions = [str(ref["backend_version"]), None] if pd.notna(ref["backend_version"]) else [None]
    err: Exception | None = None
    for v in versions:  # the measured release, else the database's newest
        try:
            with contextlib.redirect_stdout(io.StringIO()):
                r = cli_estimate(backend_version=v, **kw)
            return r.ttft / 1e3, r.tpot / 1e3, str(r.backend_version)
        except Exception as exc:  # noqa: BLE001 -- a release its database lacks: try the newest
            err = exc
    raise err  # type: ignore[misc]


def _stats(ratio: pd.Series) -> str:
    e = (ratio.dropna() - 1).abs()
    return f"median {e.median():6.1%}  p90 {np.percentile(e, 90):6.1%}  median ratio {ratio.median():.2f}"


def main(repo: str, sample: int = 0) -> None:
    repo = repo if Path(repo, "HEAD").exists() else str(Path(repo) / ".git")
    path = SAMPLE_PATH if sample else PATH
    refs = pd.read_csv(io.StringIO(subprocess.run(["git", "--git-dir", repo, "show", f"{COMMIT}:{path}"],
                                                  check=True, capture_output=True, text=True).stdout)).set_index("id")
    ours = load("serving_aic_sample").sample(sample, random_state=0) if sample else load("serving_aic_silicon")
    ours = ours.reset_index(drop=True)
    ours["ref_id"] = ours["source"].str.extract(r"\(id (.+)\)$")[0]
    pred = predict_cases(ours)  # first pass loads the catalog; time the second
    t0 = time.perf_counter()
    pred = predict_cases(ours)
    tk_s = (time.perf_counter() - t0) / len(ours)
    rows, aic_times = [], []
    for (_, o), (_, p) in zip(ours.iterrows(), pred.iterrows()):
        t = time.perf_counter()
        try:
            ttft, tpot, used = aic_estimate(refs.loc[o["ref_id"]])
            status = "ok"
        except Exception as exc:  # noqa: BLE001 -- a failed estimate is a coverage miss, reported
            ttft = tpot = float("nan")
            used, status = "", f"{type(exc).__name__}: {str(exc).splitlines()[0][:60]}"
        aic_times.append(time.perf_counter() - t)
        rows.append(dict(case_id=o["case_id"], aic_status=status, aic_release=used,
                         aic_tpot=tpot / o["measured_tpot_s"], aic_ttft=ttft / o["measured_ttft_s"],
                         tk_tpot=p["predicted_tpot_s"] / o["measured_tpot_s"],
                         tk_ttft=p["predicted_ttft_s"] / o["measured_ttft_s"]))
    df = pd.DataFrame(rows)
    both = df[df["aic_status"] == "ok"]
    if not sample:
        print(df.round(3).to_string(index=False))
    print("AIConfigurator failures:", df.loc[df["aic_status"] != "ok", "aic_status"].str.slice(0, 45).value_counts()
          .to_dict())
    print(f"\nAIConfigurator predicted {len(both)} of {len(df)}; tokenomics {int(pred['status'].eq('predicted').sum())}"
          f" of {len(df)}")
    print(f"on the {len(both)} both predict:")
    for q in ("tpot", "ttft"):
        print(f"  {q.upper()}  AIConfigurator {_stats(both['aic_' + q])}")
        print(f"  {q.upper()}  tokenomics     {_stats(both['tk_' + q])}")
    print(f"seconds per estimate: AIConfigurator {np.median(aic_times):.3f} (median), tokenomics {tk_s:.4f} "
          f"(mean over the batch, catalog loaded); ratio {np.median(aic_times) / tk_s:.0f}x")


if __name__ == "__main__":
    args = sys.argv[1:]
    n = int(args[args.index("--sample") + 1]) if "--sample" in args else 0
    args = [a for i, a in enumerate(args) if a != "--sample" and (i == 0 or args[i - 1] != "--sample")]
    if len(args) != 1:
        raise SystemExit(__doc__.split("\n\n")[1])
    main(args[0], n)
