"""Build tokenomics/datasets/third_party_band.csv: the spread of the model's error on runs third
parties published of their own deployments.

    python tools/build_third_party_band.py

The rows are the sealed serving sets released after their one recorded score
(``errorband.THIRD_PARTY_SETS``, read by path; ``docs/validation/sealed.md``), predicted as
``validate-serving`` predicts them. The band is the 10th and 90th percentile of
log(predicted / measured) output tokens/s per GPU over all their rows, each publication weighing
the same (:func:`tokenomics.errorband.regime_stats` over ``*/*/*/*/*``). Every error band spans it
(:func:`tokenomics.errorband.band_of`). Leave one publication out, the share of its rows inside the
band built on the others is printed.
"""

from __future__ import annotations

from datetime import date
from pathlib import Path

import numpy as np
import pandas as pd

from tokenomics import errorband as eb
from tokenomics.io import write_frame
from tokenomics.validate.serving_cases import pool_sets, predict_cases, read_cases

DATA = Path(__file__).resolve().parent.parent / "tokenomics" / "datasets"
OUT = DATA / "third_party_band.csv"


def rows() -> pd.DataFrame:
    """:func:`tokenomics.errorband.band_rows` of the released sealed sets."""
    pred = pool_sets({n: predict_cases(read_cases(DATA / f"{n}.csv")) for n in eb.THIRD_PARTY_SETS})
    return eb.band_rows(pred)


def table(r: pd.DataFrame, as_of: str) -> pd.DataFrame:
    s = eb.third_party_band(r)
    return pd.DataFrame([{"n_rows": s["n_rows"], "n_sources": s["n_sources"],
                          "q10_log_ratio": round(s["q10_log_ratio"], 6), "q90_log_ratio": round(s["q90_log_ratio"], 6),
                          "sources": s["sources"], "as_of": as_of,
                          "source": "tools/build_third_party_band.py over tokenomics/datasets/"
                                    + ", ".join(f"{n}.csv" for n in eb.THIRD_PARTY_SETS)
                                    + " (sealed sets after their one score; each publication weighs the same)"}])


def main() -> None:
    r = rows()
    t = table(r, date.today().isoformat())
    write_frame(t, OUT)
    print(t.drop(columns=["source", "sources"]).to_string())
    print("predicted/measured band: x%.2f - x%.2f" % tuple(np.exp([t["q10_log_ratio"][0], t["q90_log_ratio"][0]])))
    lopo = eb.leave_one_publication_out(r)
    for x in lopo.itertuples():
        print(f"  left out {x.publication}: {x.n_rows} rows, {x.inside_frac:.0%} inside the others' band")
    print("leave one publication out: %.0f %% of publications' rows inside on average, %.0f %% of rows"
          % (100 * lopo["inside_frac"].mean(), 100 * np.average(lopo["inside_frac"], weights=lopo["n_rows"])))

if __name__ == "__main__":
    main()
