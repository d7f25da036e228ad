"""Price per token of Llama-3.1-8B on one H200: batch sweep, cost tiers, uncertainty; and the
layouts that serve DeepSeek-V3 on a GB200 NVL72 at 100 tok/s per user.

Run: python examples/price_per_token.py [--samples N]
"""

from __future__ import annotations

import argparse

import numpy as np
import pandas as pd

from tokenomics import chain
from tokenomics.econ import CostInputs, monte_carlo

parser = argparse.ArgumentParser()
parser.add_argument("--samples", type=int, default=10_000, help="Monte Carlo draws")
args = parser.parse_args()
pd.set_option("display.width", 160)

# One call prices a whole batch sweep (numpy arrays broadcast through perf -> power -> cost), under
# the production plan `tokenomics price` uses (a serving engine; "graph" would time the calibration
# runs' reference implementation instead).
r = chain.price("h200", "llama-3.1-8b", batch=np.array([1, 8, 32, 128]), context_tok=1024)
df = r.to_frame()  # prices in USD per million tokens (usd_per_m_* columns)
print(df[["batch", "tok_per_s_per_chip", "tok_per_s_per_user", "board_power_w", "energy_j_per_tok",
          "cost_usd_per_chip_h", "usd_per_m_output_tok"]].to_string(index=False))

# The same configuration under InferenceX's $/GPU-hour tiers (Aug-2025 and Jul-2026 surveys).
for cost in ("bottom-up", "hyperscaler-owned", "hyperscaler-owned@2026-07", "rental-3yr@2026-07"):
    p = chain.price("h200", "llama-3.1-8b", batch=32, context_tok=1024, cost=cost)
    print(f"{cost:>28}: {float(p.cost_usd_per_chip_h):.2f} USD/h -> "
          f"{float(p.usd_per_m_output_tok):.3f} USD per M output tokens")

# Uncertainty of the bottom-up price at batch 32.
row = df[df["batch"] == 32].iloc[0]
mc = monte_carlo(CostInputs.for_hardware("h200"), row["board_power_w"], row["tok_per_s_per_chip"],
                 n_samples=args.samples, seed=0)
print(f"P5/P50/P95 USD per M output tokens: {mc.p5 * 1e3:.3f} / {mc.p50 * 1e3:.3f} / {mc.p95 * 1e3:.3f}")

# Which layout serves a MoE model at a target speed per user? Every layout the target search of
# `tokenomics price --target-tok-s-user` weighs, each at its own cheapest batch, cheapest first.
opts = chain.layout_options(model="deepseek-v3", system="gb200-nvl72", target_tok_per_s_per_user=100)
print(opts[["deployment", "batch", "tok_per_s_per_user", "usd_per_m_output_tok", "status"]].head(4).to_string(index=False))
