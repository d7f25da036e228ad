"""Sort the blind set's large misses by what the measurements say went differently.

    python tools/blind_misses.py [--threshold 0.4]

Predicts ``serving_blind_2026.csv`` (``tokenomics validate-serving blind``) and puts each row
whose output tokens/s per GPU is off by more than ``--threshold`` into the first class whose
rule it meets. The rules read the row's own measured TTFT and TPOT against the predicted ones,
so a class says where the time went, not why (``docs/validation/serving.md``, stop 40):

- ``first-token wait``: measured TTFT at least 3x the predicted, TPOT within 30 %: the decode
  is right and the throughput is lost before the first token (a saturated prefill tier, or a
  cost the benchmark pays once and spreads over its requests);
- ``MTP slower``: MTP runs whose measured TPOT is more than 1.3x the predicted;
- ``MI355X new engines, 1-4 users``: ATOM or MoRI-SGLang at 1-4 users faster than modelled
  (they are priced with the fitted AMD default engine);
- ``MI300X/MI325X SGLang per step``: TPOT more than 1.3x the predicted;
- ``other``.
"""

from __future__ import annotations

import argparse
import sys

import pandas as pd

CLASSES = ("first-token wait", "MTP slower", "MI355X new engines, 1-4 users", "MI300X/MI325X SGLang per step",
           "other")


def classify(row: pd.Series) -> str:
    """The first class of the module docstring whose rule ``row`` (a row of
    :func:`tokenomics.validate.serving_cases.predict_cases`, whose ``ttft_ratio`` / ``tpot_ratio`` are
    predicted over measured) meets."""
    ttft, tpot = 1.0 / row["ttft_ratio"], 1.0 / row["tpot_ratio"]  # measured over predicted
    if ttft >= 3 and abs(tpot - 1) < 0.3:
        return CLASSES[0]
    if str(row["spec_decode"]) == "mtp" and tpot > 1.3:
        return CLASSES[1]
    if row["hardware"] == "mi355x" and row["concurrency"] <= 4 and row["error_frac"] < 0:
        return CLASSES[2]
    if row["hardware"] in ("mi300x", "mi325x") and tpot > 1.3:
        return CLASSES[3]
    return CLASSES[4]


def misses(threshold: float = 0.4) -> pd.DataFrame:
    """One row per class: rows, median predicted / measured, and the case ids."""
    from tokenomics.catalog import data_dir
    from tokenomics.validate.serving_cases import predict_cases

    pred = predict_cases(data_dir() / "serving_blind_2026.csv")
    big = pred[pred["error_frac"].abs() > threshold].copy()
    big["class"] = big.apply(classify, axis=1)
    out = (big.groupby("class").agg(rows=("case_id", "size"), ratio=("ratio", "median"),
                                    cases=("case_id", lambda s: " ".join(s)))
           .reindex([c for c in CLASSES if c in set(big["class"])]))
    out.attrs["n"], out.attrs["n_big"] = len(pred), len(big)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--threshold", type=float, default=0.4, help="absolute error beyond which a row is a miss")
    args = ap.parse_args(argv)
    out = misses(args.threshold)
    print(f"{out.attrs['n_big']} of {out.attrs['n']} blind rows off by more than {args.threshold:.0%}")
    print(out.to_string())
    return 0


if __name__ == "__main__":
    sys.exit(main())
