"""The article's Kimi K3 table from one K3 spec: claimed vs modelled, and what each change buys.

Run: python examples/kimi_k3_showdown.py
"""

import pandas as pd

from tokenomics.studies import showdown

pd.set_option("display.width", 160)
result = showdown.showdown()
print(result.to_frame()[["system", "metric", "claimed", "predicted", "error_frac"]].to_string(index=False))
print()
print(showdown.waterfall("tpu-v7-megakernel").to_string(index=False))
