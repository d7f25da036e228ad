"""How much of the steady-state serving prediction a closed-loop benchmark harness changes.

    python tools/simulate_harness.py [CASES.csv]      (default: the ATOM set without MTP)

InferenceX and ATOM's nightly benchmark start all ``C`` users at once (``--request-rate inf``,
``--max-concurrency C``) and send ``10 x C`` requests whose lengths are drawn in ``[0.8, 1.0]`` of
the nominal ones. ``tokenomics.perf.serving.serve`` predicts the steady state those runs tend to.
This tool replays each co-located serve row iteration by iteration with the core's own costs
(``_decode_iteration_s`` for the decode batch, ``_prefill_per_token_s`` for prompt tokens, the
deployment's prefill budget per iteration, the fitted per-request TTFT overhead) and the engine's
policy (prefill-first for SGLang and ATOM, whose schedulers run waiting prompts before decoding;
mixed chunks otherwise), then reports the simulated run's output rate and mean TTFT against the
steady-state prediction and the measurement, by load. It is an analysis tool, not part of the
model: one Python loop per row (~0.1-1 s a row).
"""

from __future__ import annotations

import sys
from collections import deque
from pathlib import Path

import numpy as np
import pandas as pd

from tokenomics.catalog import data_dir
from tokenomics.perf import serving as S

from tokenomics.validate import serving_cases as SC
#: Engines (row names) whose scheduler prefills waiting prompts before it decodes: SGLang
#: (``serving.PREFILL_FIRST_ENGINES``) and ATOM ("prefill-first policy", ROCm/ATOM
#: docs/scheduling_kv_cache_guide.md).
PREFILL_FIRST = set(S.PREFILL_FIRST_ENGINES) | {"atom", "mori-sglang", "dynamo-sglang"}


def simulate(row: pd.Series, n_per_user: int = 10, low_frac: float = 0.8, seed: int = 0) -> dict:
    """One closed-loop run of a co-located serve row: output tok/s per GPU and mean TTFT [s]."""
    dep = SC.case_deployment(row)
    ep, t_eng = S._engine_cost_s(dep)
    users, isl_n, osl_n = int(row["concurrency"]), float(row["isl_tok"]), float(row["osl_tok"])
    frac = SC.mean_length_frac(row.get("note", ""))
    chunk = float(dep.prefill_chunk_per_rank_tok)
    rng = np.random.default_rng(seed)
    n = n_per_user * users
    isl = rng.integers(int(low_frac * isl_n), int(isl_n) + 1, n).astype(float)
    osl = rng.integers(int(low_frac * osl_n), int(osl_n) + 1, n).astype(float)
    ctx = round(isl_n * frac + osl_n * frac / 2)
    decode_s = S._decode_iteration_s(dep, np.arange(users + 1), ctx, t_eng)  # by decode batch
    per_tok_s = S._prefill_per_token_s(dep, isl_n * frac, chunk)
    prefill_first = str(row["engine"]) in PREFILL_FIRST
    arrive, first, done = np.zeros(n), np.full(n, np.nan), np.full(n, np.nan)
    queue, left_prompt, left_out = deque(range(users)), isl.copy(), osl.copy()
    running: list[int] = []
    sent, t = users, 0.0
    while queue or running:
        admitted, used = [], 0.0
        while queue and used < chunk:  # the iteration's prompt budget, first come first served
            r = queue[0]
            take = min(left_prompt[r], chunk - used)
            left_prompt[r] -= take
            used += take
            if left_prompt[r] > 0:
                break
            admitted.append(queue.popleft())
        decoding = [] if (prefill_first and admitted) else running
        t += (decode_s[len(decoding)] if decoding else t_eng) + used * per_tok_s
        finished = []
        if decoding:
            ids = np.asarray(decoding)
            left_out[ids] -= 1
            finished = list(ids[left_out[ids] <= 0])
            running = [r for r in decoding if left_out[r] > 0]
        for r in admitted:  # the first token comes out of the prefill iteration
            first[r] = t
            left_out[r] -= 1
            (running if left_out[r] > 0 else finished).append(r)
        for r in finished:
            done[r] = t
            if sent < n:  # the user sends its next request at once
                arrive[sent] = t
                queue.append(sent)
                sent += 1
    return {"sim_output_tok_per_s_per_gpu": osl.sum() / np.nanmax(done) / dep.replica_chips,
            "sim_ttft_s": float(np.mean(first - arrive)) + float(ep["ttft_overhead_s"])}


def main(path: Path) -> None:
    pred = SC.predict_cases(path)
    keep = ((pred["status"] == "predicted") & (pred["phase"] == "serve")
            & (pd.to_numeric(pred["disaggregated"], errors="coerce").fillna(0) == 0)
            & (pred["spec_decode"].astype(str).str.lower().isin(["none", "nan", ""])))
    rows = pred[keep]
    sim = pd.DataFrame([simulate(r) for _, r in rows.iterrows()], index=rows.index)
    out = rows.join(sim)
    out["load"] = pd.cut(out["concurrency"], [0, 8, 32, 128, 512, np.inf],
                         labels=["1-8", "9-32", "33-128", "129-512", ">512"])
    table = out.groupby("load", observed=True).apply(lambda g: pd.Series({
        "rows": len(g),
        "sim / steady-state output": (g["sim_output_tok_per_s_per_gpu"] / g["predicted_output_tok_per_s_per_gpu"]).median(),
        "steady-state / measured TTFT": (g["predicted_ttft_s"] / g["measured_ttft_s"]).median(),
        "sim / measured TTFT": (g["sim_ttft_s"] / g["measured_ttft_s"]).median(),
    }), include_groups=False)
    print(f"{path.name}: {len(out)} co-located serve rows without speculative decoding (medians)")
    print(table.round(3).to_string())
    for label, col in (("steady state", "predicted_output_tok_per_s_per_gpu"), ("simulated run", "sim_output_tok_per_s_per_gpu")):
        err = (out[col] / out["measured_output_tok_per_s_per_gpu"] - 1).abs()
        print(f"output tok/s per GPU, {label}: median error {err.median():.1%}, p90 {err.quantile(0.9):.1%}")


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else data_dir() / "serving_atom.csv")
