"""`tokenomics price --serving colocated|disaggregated` is the serving model `validate-serving` scores.

The contract: for a deployment and an operating point, the output tokens/s per GPU that
`price --format json` prints equals `validate-serving`'s prediction for a one-row serving-cases
CSV describing the same deployment at the same operating point: both call one oracle
(:func:`tokenomics.perf.serving.serve` / :func:`~tokenomics.perf.serving.serve_disaggregated`).
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from typer.testing import CliRunner

from tokenomics import chain
from tokenomics.cli import app
from tokenomics.errors import ValidationError
from tokenomics.validate.serving_cases import CASE_COLUMNS


def _run(args: list[str]) -> str:
    r = CliRunner().invoke(app, args)
    assert r.exit_code == 0, r.output
    return r.output


def _price(args: list[str]) -> dict:
    return json.loads(_run(["price", *args, "--format", "json"]))[0]  # an array of one record


def _case_row(rec: dict) -> dict:
    """The serving-cases row (schema of datasets/serving_public.csv) of a priced deployment."""
    disagg = rec["serving"] == "disaggregated"
    row = {"case_id": "c1", "phase": "serve", "hardware": rec["hardware"], "model": rec["model"],
           "weight_precision": rec["expert_precision"], "kv_precision": rec["kv_precision"], "engine": rec["engine"],
           "n_gpus": rec["replica_chips"], "tp": rec["tp"], "ep": rec["ep"], "dp_attention": int(rec["attn_dp"] > 1),
           "disaggregated": int(disagg), "spec_decode": rec["spec"], "isl_tok": rec["input_tok"],
           "osl_tok": rec["output_tok"], "concurrency": rec["concurrency"],
           "measured_output_tok_per_s_per_gpu": 1.0,  # required column; the prediction does not read it
           "expert_balance": rec["expert_balance"], "overlap": rec["overlap"]}
    if disagg:
        row.update(n_gpus=rec["n_prefill_gpus"] + rec["n_decode_gpus"], n_prefill_gpus=rec["n_prefill_gpus"],
                   n_decode_gpus=rec["n_decode_gpus"])
    assert set(CASE_COLUMNS) <= set(row)
    return row


def _validate(rec: dict, tmp_path) -> dict:
    import pandas as pd

    path = tmp_path / "case.csv"
    pd.DataFrame([_case_row(rec)]).to_csv(path, index=False)
    out = json.loads(_run(["validate-serving", str(path), "--format", "json"]))
    rows = out if isinstance(out, list) else out["rows"] if "rows" in out else next(iter(out.values()))
    assert len(rows) == 1
    return rows[0]


CONTRACT = [
    # a dense model on one H200, the workload's lengths
    pytest.param(["-H", "h200", "-m", "llama-3.1-8b", "--serving", "colocated", "--concurrency", "64"], id="dense-h200"),
    # a dense model, tensor parallel over 2 of a DGX's GPUs, at a target speed (the concurrency it finds)
    pytest.param(["--system", "dgx-h200", "-m", "llama-3.1-70b", "--tp", "2", "--serving", "colocated",
                  "--target-tok-s-user", "40", "--isl", "2048", "--osl", "512"], id="dense-tp2-target"),
    # an MoE with wide expert parallelism over a GB200 NVL72 rack (EPLB, attention data parallel)
    pytest.param(["--system", "gb200-nvl72", "-m", "deepseek-v3", "--serving", "colocated", "--concurrency", "512"],
                 id="moe-nvl72"),
    # the same MoE served disaggregated on H200 servers: 1 prefill, 2 decode instances of 8 GPUs
    pytest.param(["--system", "dgx-h200", "-m", "deepseek-v3", "--serving", "disaggregated", "--pd", "1:2",
                  "--concurrency", "64"], id="moe-disaggregated"),
    # disaggregated at a target speed: the split and concurrency it finds
    pytest.param(["-H", "h200", "-m", "llama-3.1-8b", "--serving", "disaggregated", "--target-tok-s-user", "60"],
                 id="dense-disaggregated-target"),
]


@pytest.mark.parametrize("args", CONTRACT)
def test_price_equals_validate_serving(args, tmp_path):
    rec = _price(args)
    pred = _validate(rec, tmp_path)
    assert pred["status"] == "predicted"
    assert pred["deployment"] == rec["deployment"]  # the CSV row describes the priced deployment
    # what a GPU-hour buys: per GPU of the whole deployment (a disaggregated row's published
    # figure counts decode GPUs only; its per-deployment-GPU prediction counts them all)
    key = ("predicted_output_tok_per_s_per_deployment_gpu" if rec["serving"] == "disaggregated"
           else "predicted_output_tok_per_s_per_gpu")
    assert rec["tok_per_s_per_chip"] == pytest.approx(pred[key], rel=1e-9)
    assert rec["tok_per_s_per_user"] == pytest.approx(pred["predicted_tok_per_s_per_user"], rel=1e-9)
    assert rec["ttft_s"] == pytest.approx(pred["predicted_ttft_s"], rel=1e-9)


def test_every_output_names_its_serving_mode():
    # the decode-only steady state keeps its name and no operating point beyond its batch
    r = chain.price("h200", "llama-3.1-8b", batch=32)
    f = r.to_frame().iloc[0]
    assert (f["serving"], f["serving_mode"]) == ("decode", "decode-only steady state")
    assert np.isnan(f["concurrency"])
    rec = _price(["-H", "h200", "-m", "llama-3.1-8b", "--serving", "disaggregated", "--pd", "1:3",
                  "--concurrency", "16"])
    assert rec["serving_mode"] == "disaggregated 1P:3D"
    assert rec["concurrency"] == 48  # 16 per decode instance, 3 decode instances
    assert (rec["n_prefill_gpus"], rec["n_decode_gpus"]) == (1, 3)
    table = _run(["price", "-H", "h200", "-m", "llama-3.1-8b", "--serving", "colocated", "--concurrency", "8",
                  "--isl", "512", "--osl", "256"])
    assert "co-located, 8 requests in flight, 512/256 tokens" in " ".join(table.split())
    csv = _run(["price", "-H", "h200", "-m", "llama-3.1-8b", "--serving", "colocated", "--format", "csv"])
    head, row = csv.strip().splitlines()[:2]
    assert "serving_mode" in head.split(",") and "co-located" in row


def test_colocated_price_is_the_chip_hour_over_the_served_tokens():
    # a flat USD 2 per chip-hour, all-in: the output price is 2 / 3600 / (output tok/s per chip),
    # the hand calculation of a chip-hour spread over the tokens it serves
    r = chain.price("h200", "llama-3.1-8b", serving="colocated", concurrency=64, cost=2.0,
                    output_convention="all-in")
    want = 2.0 / 3600.0 / float(r.tok_per_s_per_chip) * 1e6
    assert float(r.usd_per_m_output_tok) == pytest.approx(want, rel=1e-12)
    assert float(r.usd_per_m_input_tok) == 0.0
    # decode-only convention: input and output tokens split the same chip time, so a request's
    # input and output tokens together still pay exactly the chip-hour
    d = chain.price("h200", "llama-3.1-8b", serving="colocated", concurrency=64, cost=2.0)
    per_request = (float(d.usd_per_m_input_tok) * d.input_tok + float(d.usd_per_m_output_tok) * d.output_tok) / 1e6
    assert per_request == pytest.approx(2.0 / 3600.0 * d.output_tok / float(d.tok_per_s_per_chip), rel=1e-12)
    assert 0 < float(d.usd_per_m_input_tok) < float(d.usd_per_m_output_tok)


def test_disaggregated_split_search_keeps_the_best_split():
    best = chain.price("h200", "llama-3.1-8b", serving="disaggregated", concurrency=64)
    for pd_ in ((1, 1), (1, 3), (2, 1)):
        other = chain.price("h200", "llama-3.1-8b", serving="disaggregated", concurrency=64, pd=pd_)
        assert float(best.tok_per_s_per_chip) >= float(other.tok_per_s_per_chip)


@pytest.mark.parametrize("kwargs, match", [
    (dict(serving="colocated", batch=8), "batch set the decode-only steady state"),
    (dict(serving="colocated", cache_hit_frac=0.5), "cache_hit_frac applies to the decode-only"),
    (dict(serving="disaggregated", cache_hit_frac=1.0), "one cache_hit_frac below 1"),
    (dict(serving="colocated", concurrency=8, target_tok_per_s_per_user=30), "either concurrency or"),
    (dict(serving="colocated", pd=(1, 2)), "pd .* applies to serving='disaggregated'"),
    (dict(serving="decode", concurrency=8), "decode-only steady state takes batch"),
    (dict(batch=8, concurrency=8), "decode-only steady state takes batch"),
    (dict(serving="colo"), "serving must be one of"),
])
def test_bad_serving_arguments_are_one_line(kwargs, match):
    with pytest.raises(ValidationError, match=match):
        chain.price("h200", "llama-3.1-8b", **kwargs)


def test_cli_bad_pd_exits_2(capsys):
    from tokenomics.cli import main

    with pytest.raises(SystemExit) as exc:
        main(["price", "--serving", "disaggregated", "--pd", "3"])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert "expected prefill:decode instances" in err and "Traceback" not in err


def test_disaggregated_at_a_target_speed_keeps_every_user_at_it():
    # the most requests per decode instance (from b* to 2 b*) whose users still see 60 tok/s:
    # one more request per decode instance on the same split is slower than the target
    from tokenomics.perf.serving import serve_disaggregated

    r = chain.price("h200", "llama-3.1-8b", serving="disaggregated", target_tok_per_s_per_user=60)
    assert float(r.tok_per_s_per_user) >= 60
    p, d = int(r.n_prefill_gpus), int(r.n_decode_gpus)
    more = serve_disaggregated(r.deployment, r.deployment, n_prefill_gpus=p, n_decode_gpus=d, isl_tok=1024,
                               osl_tok=1024, concurrency=r.concurrency + d)
    assert float(more.tok_per_s_per_user) < 60


def test_disaggregated_cache_hits_make_prefill_cheaper():
    # cached prompt tokens skip prefill: fewer prefill GPUs per decode GPU, or more served per GPU
    kw = dict(serving="disaggregated", concurrency=64, pd=(1, 4))
    cold = chain.price("h200", "llama-3.1-8b", **kw)
    warm = chain.price("h200", "llama-3.1-8b", cache_hit_frac=0.5, **kw)
    assert float(warm.usd_per_m_effective_input_tok) < float(cold.usd_per_m_effective_input_tok)
    assert float(warm.ttft_s) < float(cold.ttft_s)


def test_an_operating_point_object_prices_what_its_keywords_price():
    """``price(deployment=dep, point=OperatingPoint(...))`` is ``price`` with the same keywords (same
    number to the last bit: one code path), and a field set both ways is one line naming it."""
    import tokenomics as tk
    from tokenomics.deployment import resolve

    dep = resolve("llama-3.1-8b", hardware="h200")
    for kw in (dict(serving="colocated", concurrency=64), dict(batch=16, workload="reasoning"),
               dict(serving="disaggregated", concurrency=32, pd=(1, 2))):
        a = chain.price(deployment=dep, point=tk.OperatingPoint(**kw), margin_frac=0.2)
        b = chain.price(deployment=dep, margin_frac=0.2, **kw)
        assert a.serving_mode == b.serving_mode
        assert np.array_equal(np.ravel(a.usd_per_m_output_tok), np.ravel(b.usd_per_m_output_tok))
    with pytest.raises(ValidationError, match="batch given both as a keyword and in point"):
        chain.price(deployment=dep, batch=8, point=tk.OperatingPoint(batch=16))
    with pytest.raises(ValidationError, match="point must be an OperatingPoint, got dict"):
        chain.price(deployment=dep, point={"batch": 16})
