"""Score the speculative-decoding rows of every bundled serving set, pooled.

Usage: PYTHONPATH=$PWD python tools/score_spec_decode.py [--out rows.csv] [--all]

Prints median |error|, p90 |error| and median predicted/measured of TPOT, TTFT and output
tokens/s per GPU over the rows with ``spec_decode`` set, by concurrency band (1-16, 32-128,
256+), and per set; ``--all`` also scores every unfitted row (spec or not).
"""
from __future__ import annotations

import argparse
import sys

import numpy as np
import pandas as pd

from tokenomics.catalog import load
from tokenomics.validate.serving_cases import UNFITTED_SETS, pool_sets, predict_cases

SETS = ("serving_public",) + UNFITTED_SETS


def is_spec(df: pd.DataFrame) -> pd.Series:
    if "spec_decode" not in df:
        return pd.Series(False, index=df.index)
    s = df["spec_decode"].fillna("none").astype(str).str.strip().str.lower()
    return ~s.isin(["none", "nan", "", "off"])


def band(c: float) -> str:
    if not np.isfinite(c):
        return "n/a"
    return "1-16" if c <= 16 else ("32-128" if c <= 128 else "256+")


def stats(d: pd.DataFrame, ratio: str) -> str:
    r = pd.to_numeric(d[ratio], errors="coerce").dropna()
    if not len(r):
        return "   -"
    e = (r - 1).abs()
    return f"n={len(r):3d} med {100 * e.median():5.1f}% p90 {100 * e.quantile(0.9):5.1f}% ratio {r.median():.3f}"


def report(p: pd.DataFrame, title: str) -> None:
    ok = p[p["status"] == "predicted"].copy()
    ok["band"] = pd.to_numeric(ok["concurrency"], errors="coerce").map(band)
    print(f"## {title}: {len(ok)} predicted, {int((p['status'] != 'predicted').sum())} refused")
    for q, col in (("tok/s/GPU", "ratio"), ("TPOT", "tpot_ratio"), ("TTFT", "ttft_ratio")):
        print(f"{q:10s} all     {stats(ok, col)}")
        for b in ("1-16", "32-128", "256+"):
            print(f"{'':10s} {b:7s} {stats(ok[ok['band'] == b], col)}")
    print("by set (tok/s/GPU):")
    for s, d in ok.groupby("set"):
        print(f"  {s:24s} {stats(d, 'ratio')}  TPOT {stats(d, 'tpot_ratio')}")


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out")
    ap.add_argument("--all", action="store_true")
    a = ap.parse_args()
    preds = {}
    for s in SETS:
        df = load(s)
        sub = df if a.all else df[is_spec(df)]
        if len(sub):
            preds[s] = predict_cases(sub.reset_index(drop=True))
    p = pool_sets(preds)
    spec = p[is_spec(p)]
    report(spec, "speculative-decoding rows")
    report(spec[spec["set"] != "serving_public"], "speculative-decoding rows, unfitted sets")
    if a.all:
        report(p[p["set"] != "serving_public"], "all unfitted rows")
    if a.out:
        p.to_csv(a.out, index=False)
    return 0


if __name__ == "__main__":
    sys.exit(main())
