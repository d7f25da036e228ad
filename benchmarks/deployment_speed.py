"""Speed of the deployment path, measured in one run (ratios, no timed asserts).

    python benchmarks/deployment_speed.py

Prints the median time of a scalar ``tokenomics.decode_step`` call, of a scalar
``chain.price`` on a multi-chip deployment, the vectorised decode-step rate (configurations per
second over a 1M-point batch x context grid), a target-speed price that searches every layout of a
GB200 NVL72 (DeepSeek-V3 at 35 tok/s per user: 25 layouts, each its cheapest batch) and
``tokenomics --help`` start-up time.
"""

import statistics
import subprocess
import sys
import time

import numpy as np


def times_s(fn, n=300, repeat=7):
    """Seconds per call of ``repeat`` timed loops of ``n`` calls (after one warm-up call)."""
    fn()
    out = []
    for _ in range(repeat):
        t = time.perf_counter()
        for _ in range(n):
            fn()
        out.append((time.perf_counter() - t) / n)
    return out


def main():
    import tokenomics
    from tokenomics import chain
    from tokenomics.deployment import resolve

    ts = times_s(lambda: tokenomics.decode_step("h200", "llama-3.1-8b", "graph", batch=32, context_tok=1024))
    scalar, scalar_min = statistics.median(ts), min(ts)
    dep = resolve("llama-3.1-70b", system="dgx-h200", tp=8)
    price = statistics.median(times_s(lambda: chain.price(deployment=dep, batch=32, context_tok=2048), n=30))
    from tokenomics.deployment import layout_candidates

    n_layouts = len(layout_candidates(resolve("deepseek-v3", system="gb200-nvl72")))
    target = statistics.median(times_s(lambda: chain.price(model="deepseek-v3", system="gb200-nvl72",
                                                           target_tok_per_s_per_user=35), n=3, repeat=5))
    b = np.arange(1, 1001)[:, None]
    c = np.arange(1, 1001)[None, :] * 32
    t = time.perf_counter()
    tokenomics.decode_step("h200", "llama-3.1-8b", "graph", batch=b, context_tok=c, on_oom="mask")
    vec = time.perf_counter() - t
    helps = []
    for _ in range(5):
        t = time.perf_counter()
        subprocess.run([sys.executable, "-m", "tokenomics", "--help"], capture_output=True, check=True)
        helps.append(time.perf_counter() - t)
    n = b.size * c.size
    print(f"scalar decode_step: {scalar * 1e3:.3f} ms median, {scalar_min * 1e3:.3f} ms best of 7 loops "
          f"(target <= 0.3 ms; a peer needs ~0.4 ms)")
    print(f"scalar chain.price on dgx-h200 tp8 (decode + prefill + cost): {price * 1e3:.2f} ms median")
    print(f"chain.price at 35 tok/s per user, deepseek-v3 on gb200-nvl72 ({n_layouts} layouts searched): "
          f"{target * 1e3:.0f} ms median ({target / price:.0f}x one fixed-layout price)")
    print(f"vectorised decode_step: {n:,} configurations in {vec:.2f} s = {n / vec / 1e6:.2f} M configs/s")
    print(f"tokenomics --help: {statistics.median(helps):.2f} s median of 5")
    print(f"ratio vectorised / scalar per configuration: {scalar / (vec / n):,.0f}x")


if __name__ == "__main__":
    main()
