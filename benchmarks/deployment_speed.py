"""Speed of the deployment path, measured in one run (ratios, no timed asserts).

    python benchmarks/deployment_speed.py

Prints the median time of a scalar ``tokenomics.decode_step`` call, of a scalar
``chain.price`` on a multi-chip deployment, the vectorised decode-step rate (configurations per
second over a 1M-point batch x context grid: the median of three calls after the process's first,
and the first), a target-speed price that searches every layout of a
GB200 NVL72 (DeepSeek-V3 at 35 tok/s per user: 25 layouts, each its cheapest batch) and
``tokenomics --help`` start-up time.

The serving oracle (``price(serving="colocated")``, the model ``validate-serving`` scores): a scalar
co-located price (Llama-3.1-8B on one H200, 64 requests in flight) and the co-located target-speed
search over every layout of a GB200 NVL72 (DeepSeek-V3 at 35 tok/s per user). "cold" clears what the
oracle keeps per deployment (each call a configuration never priced before); "warm" repeats one.
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
    target = statistics.median(times_s(lambda: chain.price(model="deepseek-v3", system="gb200-nvl72", serving="decode",
                                                           target_tok_per_s_per_user=35), n=3, repeat=5))
    from tokenomics.perf import serving

    def forget():  # what the serving oracle keeps per deployment and request mix, where it keeps any
        for name in ("_colocated_cached", "_prefill_memo_cached"):
            if hasattr(serving, name):
                getattr(serving, name).cache_clear()

    def colocated(cold):
        if cold:
            forget()
        chain.price(hardware="h200", model="llama-3.1-8b", serving="colocated", concurrency=64)

    co_warm = statistics.median(times_s(lambda: colocated(False), n=30))
    co_cold = statistics.median(times_s(lambda: colocated(True), n=30))

    def search(cold):
        if cold:
            forget()
        chain.price(model="deepseek-v3", system="gb200-nvl72", serving="colocated", target_tok_per_s_per_user=35)

    se_warm = statistics.median(times_s(lambda: search(False), n=1, repeat=3))
    keeps = hasattr(serving, "_colocated_cached")  # an oracle that keeps nothing is always cold
    se_cold = statistics.median(times_s(lambda: search(True), n=1, repeat=3)) if keeps else se_warm
    b = np.arange(1, 1001)[:, None]
    c = np.arange(1, 1001)[None, :] * 32
    vecs = []  # the first call also pays the process's first page faults on 1M-element arrays
    for _ in range(4):
        t = time.perf_counter()
        tokenomics.decode_step("h200", "llama-3.1-8b", "graph", batch=b, context_tok=c, on_oom="mask")
        vecs.append(time.perf_counter() - t)
    vec_first, vec = vecs[0], statistics.median(vecs[1:])
    helps = []
    for _ in range(5):
        t = time.perf_counter()
        subprocess.run([sys.executable, "-m", "tokenomics", "--help"], capture_output=True, check=True)
        helps.append(time.perf_counter() - t)
    n = b.size * c.size
    print(f"scalar decode_step: {scalar * 1e3:.3f} ms median, {scalar_min * 1e3:.3f} ms best of 7 loops "
          f"(target <= 0.3 ms; a peer needs ~0.4 ms)")
    print(f"scalar decode-only chain.price on dgx-h200 tp8 (decode + prefill + cost): {price * 1e3:.2f} ms median")
    print(f"decode-only chain.price at 35 tok/s per user, deepseek-v3 on gb200-nvl72 ({n_layouts} layouts searched): "
          f"{target * 1e3:.0f} ms median ({target / price:.0f}x one fixed-layout price)")
    print(f"co-located chain.price, llama-3.1-8b on h200 at 64 requests: {co_cold * 1e3:.2f} ms cold, "
          f"{co_warm * 1e3:.2f} ms warm ({co_cold / scalar:.0f}x / {co_warm / scalar:.0f}x a scalar decode_step; "
          "target <= 5 ms)")
    print(f"co-located chain.price at 35 tok/s per user, deepseek-v3 on gb200-nvl72 ({n_layouts} layouts searched): "
          f"{se_cold * 1e3:.0f} ms cold, {se_warm * 1e3:.0f} ms warm ({se_cold / scalar:.0f}x / "
          f"{se_warm / scalar:.0f}x a scalar decode_step; target <= 100 ms)")
    print(f"vectorised decode_step: {n:,} configurations in {vec:.2f} s = {n / vec / 1e6:.2f} M configs/s "
          f"(median of 3 calls after the first; the process's first call {vec_first:.2f} s = "
          f"{n / vec_first / 1e6:.2f} M configs/s, most of it the operating system mapping fresh memory)")
    print(f"tokenomics --help: {statistics.median(helps):.2f} s median of 5")
    print(f"ratio vectorised / scalar per configuration: {scalar / (vec / n):,.0f}x")


if __name__ == "__main__":
    main()
