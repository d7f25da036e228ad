"""Build tokenomics/datasets/error_bands.csv: the 80 % error band of each error regime.

    python tools/build_error_bands.py            # predicts every unfitted serving set (~2 min)
    python tools/build_error_bands.py --pred P   # from a pickled predict_unfitted() frame

The rows are the bundled serving sets no fit used (``validate.serving_cases.UNFITTED_SETS``), less every
publication a fit used (``errorband.FIT_SETS``); their publications split in two halves by size
(``errorband.split_publications``): the first half builds the bands written here, the second
checks them (the share of its measurements inside their band, printed). Nothing is tuned on
the check half.
"""

import argparse
from datetime import date
from pathlib import Path

import pandas as pd

from tokenomics import errorband
from tokenomics.io import write_frame
from tokenomics.validate.serving_cases import UNFITTED_SETS, predict_unfitted

OUT = Path(__file__).resolve().parent.parent / "tokenomics" / "datasets" / "error_bands.csv"


def table_of(res: dict, as_of: str) -> pd.DataFrame:
    """The stored table: the build half's bands with provenance."""
    files = ", ".join(f"tokenomics/datasets/{s}.csv" for s in UNFITTED_SETS)
    t = res["table"].copy()
    t["as_of"] = as_of
    t["source"] = (f"tools/build_error_bands.py over {files}; built on "
                   f"{len(res['build'])} publications, checked on {len(res['check'])} others")
    for c in ("q10_log_ratio", "q90_log_ratio"):
        t[c] = t[c].round(6)
    return t


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--pred", help="pickled predict_unfitted() frame (skips predicting)")
    ap.add_argument("--out", default=str(OUT))
    a = ap.parse_args()
    pred = pd.read_pickle(a.pred) if a.pred else predict_unfitted()
    res = errorband.split_and_build(pred)
    t = table_of(res, date.today().isoformat())
    write_frame(t, Path(a.out))
    rows = res["rows"]
    n = rows.groupby("publication").size()
    print("excluded (a fit used them):", res["excluded"])
    print("build:", {p: int(n[p]) for p in res["build"]})
    print("check:", {p: int(n[p]) for p in res["check"]})
    print(t[["regime", "n_rows", "n_sources", "q10_log_ratio", "q90_log_ratio"]].to_string())
    print(f"coverage on the check half: {res['coverage']:.3f} of {res['n_check']} rows")
    print(f"swapped (built on the check half, scored on the build half): "
          f"{res['coverage_swapped']:.3f} of {res['n_swapped']} rows")


if __name__ == "__main__":
    main()
