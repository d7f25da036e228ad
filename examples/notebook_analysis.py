"""Three analyst questions, notebook style: each cell is a few calls; results display compactly
and every chart is one ``tokenomics.plot`` call returning a matplotlib Axes.

In Jupyter, run the cells and let the results and Axes display themselves; as a script it prints
the reprs and writes the figures as PNG.

Run: python examples/notebook_analysis.py [--out DIR]     (default: a temporary directory)
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # a script: no windows (a notebook keeps its own backend)

import matplotlib.pyplot as plt  # noqa: E402

import tokenomics as tk  # noqa: E402
from tokenomics import plotdata  # noqa: E402
from tokenomics.io import save_png  # noqa: E402

parser = argparse.ArgumentParser()
parser.add_argument("--out", type=Path, default=None, help="directory for the PNG figures")
args = parser.parse_args()
out = args.out or Path(tempfile.mkdtemp(prefix="tokenomics-notebook-"))


def save(ax, name: str) -> Path:
    return save_png(ax.figure, out / name, bbox_inches="tight")


# %% Q1. What does serving Llama-3.1-8B cost, and what does interactivity cost on each chip?
p = tk.price("h200", "llama-3.1-8b", batch=32)
print(p)                                            # a compact table, units in the column names
ax = tk.plot.frontier(plotdata.frontier(["h100-sxm", "h200", "b200"], "llama-3.1-8b"))
ax = tk.plot.frontier(tk.chain.frontier("mi300x", "llama-3.1-8b"), ax=ax)  # add a deployment to the same chart
print("Q1:", save(ax, "q1_price_vs_interactivity.png"))
at_50 = tk.chain.price_at_interactivity("h200", "llama-3.1-8b", tok_per_s_per_user=[50.0])
print(f"Q1: H200 at 50 tok/s per user: {at_50['usd_per_m_output_tok'].iloc[0]:.3f} "
      "USD per million output tokens")

# %% Q2. Where does the cost of a chip-hour go, and which input moves the price most?
fig, (ax_cost, ax_tor) = plt.subplots(2, 1, figsize=(10, 10))
tk.plot.price_breakdown(plotdata.breakdown(["h100-sxm", "h200", "b200"], "llama-3.1-8b", batch=32),
                        tiers=plotdata.tiers(), ax=ax_cost)
tk.plot.tornado(plotdata.tornado("h200", "llama-3.1-8b", batch=32), label="h200 / llama-3.1-8b, batch 32", ax=ax_tor)
fig.tight_layout()
print("Q2:", save(ax_cost, "q2_cost_and_sensitivity.png"))

# %% Q3. How fast does token demand grow, and how fast do API list prices fall?
fc = tk.forecast.forecast("google")
print(fc)                                           # year-end rows with 80 % and 95 % intervals
print("Q3:", save(tk.plot.forecast(fc, references=plotdata.references()), "q3_demand_fan.png"))
from tokenomics.watch.prices import price_watch  # noqa: E402

print("Q3:", save(tk.plot.watch("price", price_watch(), prices=plotdata.watch_prices()), "q3_api_prices.png"))
events = tk.watch.prices.cut_events()
print(f"Q3: {len(events)} list-price changes from {events['date'].min():%Y-%m} to {events['date'].max():%Y-%m} "
      f"(dates are {events['date'].dtype})")
