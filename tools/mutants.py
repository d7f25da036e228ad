"""Deliberate bugs in headline computations, each run against the default test tier's relevant tests:
a mutant a test catches is "killed"; one that survives names a computation no test pins.

    python tools/mutants.py            # every mutant (a few minutes on 2 cores)
    python tools/mutants.py all-in     # the mutants whose name contains a word

Each mutant replaces one exact snippet of one file, runs the listed tests (``-x``, the default tier),
and restores the file, whatever happens. Run it on a clean work tree.
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FAST_MONEY = ["tests/econ/test_money_by_hand.py", "tests/house/test_golden.py", "tests/econ/test_econ.py", "tests/chain/test_chain.py"]

#: (name, file, snippet, replacement, tests)
MUTANTS = [
    # ---- the three money mutants: non-default inputs are where they show --------------------------
    ("all-in ratio inverted", "tokenomics/chain.py",
     "p_out_dec = p_out_dec + p_in * (1 - hit) * in_tok / out_tok",
     "p_out_dec = p_out_dec + p_in * (1 - hit) * out_tok / in_tok", FAST_MONEY),
    ("energy per token from utilization-weighted power", "tokenomics/chain.py",
     "busy_w = np.where(has_w, np.asarray(p_dec, float), 0.0)",
     "busy_w = np.where(has_w, np.asarray(p_dec_c, float), 0.0)", FAST_MONEY),
    ("implied margin with input and output weights swapped", "tokenomics/market.py",
     "cost = usd_per_request(cost_input / 1e3, cost_output / 1e3, input_tok, output_tok)",
     "cost = usd_per_request(cost_input / 1e3, cost_output / 1e3, output_tok, input_tok)",
     ["tests/market/test_market_revenue.py", "tests/market/test_market.py"]),
    # ---- headline computations ---------------------------------------------------------------------
    ("margin multiplies instead of divides", "tokenomics/econ/pricing.py",
     "* 1e3 / (\n        1 - np.asarray(margin_frac, float))", "* 1e3 * (\n        1 + np.asarray(margin_frac, float))",
     FAST_MONEY),
    ("utilization ignored", "tokenomics/econ/pricing.py",
     "out = cost / (tps * S_PER_H * np.asarray(utilization_frac, float))", "out = cost / (tps * S_PER_H)",
     FAST_MONEY),
    ("capital recovery factor without discounting", "tokenomics/econ/finance.py",
     "out[~zero] = rz / -np.expm1(-nz * np.log1p(rz))", "out[~zero] = 1.0 / nz", ["tests/econ/test_econ.py", "tests/house/test_golden.py"]),
    ("PUE not applied to host power", "tokenomics/econ/tco.py",
     "return (np.asarray(board_power_w, float) + np.asarray(host_power_w, float)) * np.asarray(pue, float)",
     "return np.asarray(board_power_w, float) * np.asarray(pue, float) + np.asarray(host_power_w, float)",
     ["tests/econ/test_econ.py", "tests/house/test_golden.py"]),
    ("blended price weights swapped", "tokenomics/econ/pricing.py",
     "return (np.asarray(price_input, float) * i + np.asarray(price_output, float) * o) / (i + o)",
     "return (np.asarray(price_input, float) * o + np.asarray(price_output, float) * i) / (i + o)",
     ["tests/econ/test_econ.py", "tests/chain/test_chain.py"]),
    ("KV read at full bandwidth", "tokenomics/perf/roofline.py",
     "mem = op.kv_bytes / (bw * kv_read_efficiency(op.kv_bytes, profile) * kv_read_frac) + op.act_bytes / w_bw",
     "mem = op.kv_bytes / bw + op.act_bytes / w_bw", ["tests/perf/test_perf.py", "tests/house/test_golden.py"]),
    ("prefill attention ignores its cache bytes", "tokenomics/perf/roofline.py",
     "mem = (op.kv_bytes + op.act_bytes) / w_bw", "mem = op.act_bytes / w_bw",
     ["tests/perf/test_perf.py", "tests/house/test_golden.py"]),
    ("Wh per 1K tokens off by the hour", "tokenomics/econ/pricing.py",
     "return np.asarray(energy_j_per_token, float) * 1e3 / 3600.0",
     "return np.asarray(energy_j_per_token, float) * 1e3 / 60.0", ["tests/econ/test_econ.py", "tests/chain/test_chain.py"]),
    ("gross margin inverted", "tokenomics/econ/pricing.py",
     "return 1 - np.asarray(cost, float) / np.asarray(price, float)",
     "return 1 - np.asarray(price, float) / np.asarray(cost, float)",
     ["tests/econ/test_econ.py", "tests/market/test_market_revenue.py", "tests/market/test_market.py"]),
]


def run(mutant) -> tuple[str, float]:
    name, rel, old, new, tests = mutant
    path = ROOT / rel
    text = path.read_text()
    if text.count(old) < 1:
        return "not applied (snippet not found)", 0.0
    tests = [t for t in tests if (ROOT / t.split("::")[0]).exists()]
    path.write_text(text.replace(old, new, 1))
    t0 = time.perf_counter()
    try:
        r = subprocess.run([sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider", *tests],
                           cwd=ROOT, capture_output=True, text=True)
    finally:
        path.write_text(text)
    return ("killed" if r.returncode == 1 else "SURVIVED" if r.returncode == 0 else f"error (exit {r.returncode})",
            time.perf_counter() - t0)


def main(words: list[str]) -> int:
    chosen = [m for m in MUTANTS if not words or any(w in m[0] for w in words)]
    killed = 0
    for m in chosen:
        verdict, secs = run(m)
        killed += verdict == "killed"
        print(f"{verdict:>10}  {secs:6.1f} s  {m[0]}  ({m[1]})", flush=True)
    print(f"{killed} of {len(chosen)} mutants killed")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
