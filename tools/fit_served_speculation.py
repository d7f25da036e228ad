"""Fit the acceptance rates of tokenomics/datasets/served_speculation.csv from measured speedups.

    python tools/fit_served_speculation.py

Each row says a provider serves a model with speculative decoding (the provider's claim) and
carries the one published measurement of speculation on that model: NVIDIA's single-user speedup
on an HGX H200 (``measured_speedup``, ``measured_system``, ``measured_precision``,
``measured_tp``). The draft is priced as an EAGLE-style head (one layer of the target's own
architecture plus its lm head) proposing ``gamma`` tokens; its per-token acceptance ``alpha_frac``
is the one at which the performance core's single-user speedup on that system equals the measured
one (bisection, 40 steps). The row's ``spec`` is then ``eagle:GAMMA:ALPHA``.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

import tokenomics as tk

OUT = Path(__file__).resolve().parent.parent / "tokenomics" / "datasets" / "served_speculation.csv"


def single_user_speedup(model: str, system: str, precision: str, tp: int, gamma: int, alpha: float) -> float:
    """Tokens/s of one user with an EAGLE-style draft (gamma, alpha) over tokens/s without, at batch 1
    in the decode-only steady state on ``system`` at ``precision`` and tensor parallelism ``tp``."""
    def tps(spec: str | None) -> float:
        r = tk.price(model=model, system=system, weight_precision=precision, tp=tp, serving="decode", batch=1, spec=spec)
        return float(np.ravel(r.tok_per_s_per_user)[0])

    return tps(f"eagle:{gamma}:{alpha:.6f}") / tps(None)


def fit_alpha(model: str, system: str, precision: str, tp: int, gamma: int, speedup: float) -> float:
    """The acceptance [fraction] at which :func:`single_user_speedup` equals ``speedup``."""
    lo, hi = 0.0, 0.999
    for _ in range(40):
        mid = 0.5 * (lo + hi)
        if single_user_speedup(model, system, precision, tp, gamma, mid) < speedup:
            lo = mid
        else:
            hi = mid
    return 0.5 * (lo + hi)


def main() -> None:
    t = pd.read_csv(OUT, dtype=str, keep_default_na=False)
    fitted: dict[tuple, float] = {}
    for i, r in t.iterrows():
        key = (r["model"], r["measured_system"], r["measured_precision"], int(r["measured_tp"]), int(r["gamma"]),
               float(r["measured_speedup"]))
        if key not in fitted:
            fitted[key] = fit_alpha(*key)
        a = round(fitted[key], 4)
        t.loc[i, "alpha_frac"] = f"{a:.4f}"
        t.loc[i, "spec"] = f"eagle:{int(r['gamma'])}:{a:.4f}"
        print(f"{r['provider']:10s} {r['model']:16s} speedup {r['measured_speedup']} -> alpha {a:.4f}")
    from tokenomics.io import write_frame

    write_frame(t, OUT)


if __name__ == "__main__":
    main()
