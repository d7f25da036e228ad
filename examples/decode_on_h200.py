"""Why decode is slow, on one H200: eager vs CUDA graph vs engine vs megakernel, and the bound.

Run: python examples/decode_on_h200.py
Prints a table of step time and tokens/s for Llama 3.1 8B over batch sizes and plans (one
vectorized call per plan), then the predicted-vs-measured summary on the bundled H200 runs.
"""

import numpy as np
import pandas as pd

from tokenomics import catalog
from tokenomics.perf import decode_step
from tokenomics.validate.calibrate import predict_cases, summarize

pd.set_option("display.width", 160)
batch = np.array([1, 8, 32, 128])
frames = []
for plan in ["eager", "graph", "engine", "megakernel"]:
    r = decode_step("h200", "llama-3.1-8b", plan, batch=batch, context_tok=4096)
    frames.append(r.to_frame()[["execution", "batch", "step_time_s", "tok_per_s_per_user", "tok_per_s_per_replica", "bound"]])
table = pd.concat(frames, ignore_index=True)
print(table.to_string(index=False, float_format=lambda x: f"{x:.4g}"))

print("\nPredicted vs measured on datasets/h200_cases.csv (shipped H200 profile):")
print(summarize(predict_cases(catalog.load("h200_cases"), "h200")).to_string(index=False))
