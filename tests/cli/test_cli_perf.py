"""CLI of the performance core through CliRunner and main() (exit codes, one-line errors)."""

import json

import pandas as pd
import pytest
from typer.testing import CliRunner

from tokenomics import catalog
from tokenomics.cli import app, main

runner = CliRunner()


def run_main(args, capsys):
    with pytest.raises(SystemExit) as exc:
        main(args)
    out = capsys.readouterr()
    return exc.value.code, out.out, out.err


def test_hardware_and_models_json():
    r = runner.invoke(app, ["hardware", "--format", "json"])
    assert r.exit_code == 0
    rows = json.loads(r.stdout)
    assert {x["name"] for x in rows} >= {"h200", "tpu-v7", "gb200"}
    assert all(x["source"] for x in rows)
    r = runner.invoke(app, ["models", "--format", "csv"])
    assert r.exit_code == 0 and "kimi-k3" in r.stdout and "total_params" in r.stdout
    # the table says what its HBM column counts (H200: 143,771 MiB x 2^20 = 150.75e9 B, datasets/README.md)
    r = runner.invoke(app, ["hardware"], env={"COLUMNS": "200"})
    assert r.exit_code == 0 and "150.8" in r.stdout and "marketed as 141 GB" in r.stdout


def test_throughput_json_has_core_fields():
    r = runner.invoke(app, ["throughput", "--hardware", "h200", "--model", "llama-3.1-8b", "--batch", "1,32",
                            "--context", "1024", "--execution", "graph", "--format", "json"])
    assert r.exit_code == 0, r.output
    rows = json.loads(r.stdout)
    assert len(rows) == 2
    for k in ("step_time_s", "tok_per_s_per_user", "tok_per_s_per_replica", "tok_per_s_per_chip", "bound", "n_kernels"):
        assert k in rows[0]
    # measured on the H200 (h200_microbench power rows): 178 tok/s at batch 1 for this shape
    assert rows[0]["tok_per_s_per_replica"] == pytest.approx(178, rel=0.1)


def test_throughput_table_shows_breakdown():
    r = runner.invoke(app, ["throughput", "-H", "h200", "-m", "llama-3.1-8b", "-b", "8", "--prompt", "512"])
    assert r.exit_code == 0, r.output
    assert "Per-operator breakdown" in r.stdout and "attention" in r.stdout and "TTFT" in r.stdout


def test_validate_json_one_object_per_case():
    path = str(catalog.data_dir() / "h200_cases.csv")
    r = runner.invoke(app, ["validate", path, "--format", "json"])
    assert r.exit_code == 0, r.output
    rows = json.loads(r.stdout)
    assert len(rows) == len(pd.read_csv(path))
    assert {"case_id", "predicted_step_s", "measured_step_s"} <= set(rows[0])


def test_calibrate_writes_profile_usable_by_validate(tmp_path):
    cases = catalog.load("h200_cases")
    small = cases[cases["execution"] == "graph"].head(8)
    f = tmp_path / "cases.csv"
    small.to_csv(f, index=False)
    prof = tmp_path / "p.json"
    r = runner.invoke(app, ["calibrate", str(f), "--out", str(prof), "--format", "json"])
    assert r.exit_code == 0, r.output
    assert prof.exists()
    r = runner.invoke(app, ["validate", str(f), "--profile", str(prof), "--format", "csv"])
    assert r.exit_code == 0, r.output
    out = pd.read_csv(pd.io.common.StringIO(r.stdout))
    assert out["error_frac"].abs().median() < 0.06


def test_validate_estimates_missing_kernel_counts(tmp_path):
    cases = catalog.load("h200_cases").head(4).drop(columns=["kernels_per_step"])
    f = tmp_path / "c.csv"
    cases.to_csv(f, index=False)
    r = runner.invoke(app, ["validate", str(f), "--format", "json"])
    assert r.exit_code == 0, r.output
    assert all(x["kernels_estimated"] for x in json.loads(r.stdout))


@pytest.mark.parametrize("args, needle", [
    (["throughput", "--model", "llama-3.1-8"], "Unknown model 'llama-3.1-8'. Did you mean"),
    (["throughput", "--hardware", "h10"], "Unknown accelerator 'h10'. Did you mean 'h100-sxm'"),
    (["throughput", "--batch", "-3"], "batch must be an integer >= 1"),
    (["throughput", "--batch", "x"], "--batch must be an integer"),
    (["throughput", "--model", "llama-3.1-70b"], "needs 141 GB of weights"),
    (["throughput", "--execution", "turbo"], "Unknown execution plan 'turbo'"),
    (["throughput", "--profile", "nope"], "Unknown profile 'nope'"),
])
def test_bad_input_exits_2_with_one_line(capsys, args, needle):
    code, out, err = run_main(args, capsys)
    assert code == 2
    assert needle in err
    assert len(err.strip().splitlines()) == 1
    assert "Traceback" not in err


def test_missing_columns_named(tmp_path, capsys):
    f = tmp_path / "bad.csv"
    pd.DataFrame({"case_id": ["a"], "phase": ["decode"]}).to_csv(f, index=False)
    code, _, err = run_main(["validate", str(f)], capsys)
    assert code == 2 and "is missing columns" in err and "'hidden'" in err


def test_calibrate_bad_file_writes_nothing(tmp_path, capsys):
    out = tmp_path / "p.json"
    code, _, err = run_main(["calibrate", str(tmp_path / "none.csv"), "--out", str(out)], capsys)
    assert code == 2 and "not found" in err
    assert not out.exists()


def test_every_command_has_help_and_is_in_readme():
    from pathlib import Path

    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    import typer.main

    click_app = typer.main.get_command(app)
    for name, cmd in click_app.commands.items():
        assert cmd.help, f"command {name} has no help"
        assert f"tokenomics {name}" in readme, f"command {name} missing from README"


@pytest.mark.parametrize("args", [["price", "-H", "h200", "-b", "nan"], ["showdown", "--format", "xml"],
                                  ["throughput", "--tokens-per-step", "two"]])
def test_usage_errors_exit_2_without_traceback(capsys, args):
    code, _, err = run_main(args, capsys)
    assert code == 2
    assert "Traceback" not in err and "Invalid value" in err


def test_array_errors_name_the_bad_element(capsys):
    code, _, err = run_main(["throughput", "--batch", "1,0,8"], capsys)
    assert code == 2 and "batch must be an integer >= 1, got 0 (element of an array)" in err


def test_validate_serving_json_has_the_issue_fields():
    """Issue 11's schema: one object per case with the predicted figures; every bundled row predicted."""
    r = runner.invoke(app, ["validate-serving", "--format", "json"])
    assert r.exit_code == 0, r.output
    rows = json.loads(r.stdout)
    assert len(rows) == 37  # ../shared/calibration/serving_public.csv
    for k in ("case_id", "predicted_output_tok_per_s_per_gpu", "predicted_total_tok_per_s_per_gpu",
              "predicted_tok_per_s_per_user", "predicted_tpot_s", "predicted_ttft_s"):
        assert k in rows[0]
    assert all(x["status"] == "predicted" for x in rows)
    # the fit set's precisions: gpt-oss MXFP4, Llama 8B FP8, Llama 405B NVFP4 (serving_public.csv)
    assert {x["weight_precision"] for x in rows} == {"mxfp4", "fp8", "fp4"}


def test_validate_serving_table_groups_by_weight_precision():
    """The summary table has a weight_precision group (held-out rows: FP4 and FP8)."""
    r = runner.invoke(app, ["validate-serving", "holdout"])
    assert r.exit_code == 0, r.output
    lines = [ln for ln in r.stdout.splitlines() if "weight_precision" in ln]
    assert any("fp4" in ln for ln in lines) and any("fp8" in ln for ln in lines)


def test_validate_serving_bad_csv_is_one_line(tmp_path, capsys):
    from tokenomics.cli import main

    bad = tmp_path / "cases.csv"
    bad.write_text("case_id,phase\nX,serve\n")
    with pytest.raises(SystemExit) as exc:
        main(["validate-serving", str(bad)])
    err = capsys.readouterr().err.strip()
    assert exc.value.code == 2 and "missing columns" in err and len(err.splitlines()) == 1


def test_validate_kernels_csv_and_table(tmp_path, capsys):
    """validate-kernels: csv is every bundled row (926) with measured, predicted and error_frac
    (the library's DataFrame); the table ends with the grouped-GEMM ceilings of the file's chips;
    a CSV missing columns is one line naming them, exit 2."""
    r = runner.invoke(app, ["validate-kernels", "--format", "csv"])
    assert r.exit_code == 0, r.output
    from io import StringIO

    df = pd.read_csv(StringIO(r.stdout))
    assert len(df) == 926 and {"bench_id", "measured", "predicted", "error_frac"} <= set(df.columns)
    assert (df["predicted"] > 0).all()
    one = tmp_path / "one.csv"
    pd.read_csv(catalog.data_dir() / "kernel_microbench.csv").query("bench_id.str.startswith('b200-moe-best')") \
        .to_csv(one, index=False)
    r = runner.invoke(app, ["validate-kernels", str(one)])
    assert r.exit_code == 0, r.output
    assert "grouped-GEMM ceilings" in r.stdout and "b200" in r.stdout and "0.6813" in r.stdout  # block-FP8
    bad = tmp_path / "bad.csv"
    bad.write_text("bench_id,hardware,op\nx,h200,moe_experts\n")
    code, _, err = run_main(["validate-kernels", str(bad)], capsys)
    assert code == 2 and "missing columns" in err and len(err.strip().splitlines()) == 1


def test_validate_kernels_filters_by_op_and_hardware(capsys):
    """--op and --hardware keep one operator's or one chip's rows: the B200's decode attention is
    the 48 rows of many short sequences (3 engines x 16, kernel_microbench.csv); the table names
    the filter and leaves out the MoE ceilings. A misspelt op or chip, or a filter that keeps
    nothing, is one line and exit 2."""
    r = runner.invoke(app, ["validate-kernels", "--op", "decode_attention", "-H", "b200", "--format", "csv"])
    assert r.exit_code == 0, r.output
    from io import StringIO

    df = pd.read_csv(StringIO(r.stdout))
    assert len(df) == 48 and set(df["hardware"]) == {"b200"} and set(df["op"]) == {"decode_attention"}
    r = runner.invoke(app, ["validate-kernels", "--op", "decode_attention", "-H", "b200"])
    assert r.exit_code == 0 and "op decode_attention, hardware b200" in r.stdout and "grouped-GEMM" not in r.stdout
    for args, needle in ((["--op", "decode_atention"], "Did you mean 'decode_attention'"),
                         (["-H", "b2000"], "Did you mean 'b200'"),
                         (["--op", "prefill_attention", "-H", "b200"], "no rows of op prefill_attention on b200")):
        code, _, err = run_main(["validate-kernels", *args], capsys)
        assert code == 2 and needle in err and len(err.strip().splitlines()) == 1, (args, err)


def test_deployment_file_values_are_not_overridden_by_command_defaults(tmp_path, capsys):
    """`throughput` and `frontier` with --deployment: the file's model, system, plan and memory
    fraction hold unless a flag is given (the commands' own defaults, llama-3.1-8b on one h200
    under the graph plan, once replaced the file's model silently)."""
    f = tmp_path / "d.toml"
    f.write_text('[deployment]\nmodel = "llama-3.1-70b"\nsystem = "dgx-h200"\ntp = 2\n'
                 'weight_precision = "fp8"\nmem_frac = 0.95\n')
    r = runner.invoke(app, ["throughput", "--deployment", str(f), "--format", "json"])
    assert r.exit_code == 0, r.output
    row = json.loads(r.output)[0]
    assert row["model"] == "llama-3.1-70b" and row["plan"] == "engine" and row["tp"] == 2
    r = runner.invoke(app, ["throughput", "--deployment", str(f), "-m", "llama-3.1-8b", "--format", "json"])
    assert json.loads(r.output)[0]["model"] == "llama-3.1-8b"
    r = runner.invoke(app, ["frontier", "--deployment", str(f), "--format", "csv"])
    assert r.exit_code == 0, r.output
    assert "tp2-ep1-pp1-dp4" in r.output
    f.write_text(f.read_text().replace("0.95", "95"))
    code, _, err = run_main(["throughput", "--deployment", str(f)], capsys)
    assert code == 2 and "did you mean 0.95" in err and "Traceback" not in err


def test_throughput_of_a_deployment_runs_the_plan_price_runs():
    """`throughput --system/--tp/--engine` times the deployment `price` prices: the resolver's
    engine plan, not the one-chip core's graph plan (which times a MoE's experts as one kernel
    each: DeepSeek-R1 on a DGX B200 at batch 64 took 84 ms a step there, 26 ms under the engine)."""
    args = ["--system", "dgx-h200", "--model", "llama-3.1-70b", "--tp", "8", "--batch", "32", "--context", "2048",
            "--format", "json"]
    r = runner.invoke(app, ["throughput", *args])
    assert r.exit_code == 0, r.output
    step = json.loads(r.output)[0]
    r = runner.invoke(app, ["price", *args])
    assert r.exit_code == 0, r.output
    priced = json.loads(r.output)[0]  # one configuration: one record
    assert step["plan"] == "engine" == priced["execution"]
    assert step["tok_per_s_per_chip"] == pytest.approx(priced["tok_per_s_per_chip"], rel=1e-9)
    r = runner.invoke(app, ["throughput", "--system", "dgx-b200", "--model", "deepseek-r1", "--batch", "64",
                            "--format", "json"])
    assert json.loads(r.output)[0]["step_time_s"] < 0.05


def test_throughput_of_a_moe_model_under_a_reference_plan_says_so():
    r = runner.invoke(app, ["throughput", "-m", "gpt-oss-120b", "--batch", "64", "--no-breakdown"])
    assert r.exit_code == 0, r.output
    assert "each routed expert is its own kernel" in r.output and "-e engine" in r.output
    r = runner.invoke(app, ["throughput", "-m", "gpt-oss-120b", "--batch", "64", "-e", "engine", "--no-breakdown"])
    assert "its own kernel" not in r.output
    r = runner.invoke(app, ["throughput", "-m", "llama-3.1-8b", "--batch", "64", "--no-breakdown"])
    assert "its own kernel" not in r.output


def test_price_mem_frac_buys_a_larger_batch_at_a_target_speed():
    """--mem-frac 0.97 leaves more KV room than the default 0.9 on the same chips (weights fixed).
    At 10 tok/s per user the KV cache, not the speed, caps the requests in flight (co-located:
    258 at 0.9, 300 at 0.97 on a TP2 replica, measured), so the larger share serves more
    requests at once and is no dearer."""
    out = {}
    for mf in ("0.9", "0.97"):
        r = runner.invoke(app, ["price", "--system", "dgx-h200", "-m", "llama-3.1-70b", "--target-tok-s-user",
                                "10", "--mem-frac", mf, "--format", "json"])
        assert r.exit_code == 0, r.output
        d = json.loads(r.output)
        out[mf] = d[0]
    assert out["0.97"]["batch"] > out["0.9"]["batch"]
    assert out["0.97"]["usd_per_m_output_tok"] <= out["0.9"]["usd_per_m_output_tok"]


def test_validate_serving_table_lists_the_largest_misses_of_a_large_set(tmp_path):
    # 41 rows (the 37 fit rows and 4 copies under new ids): the table shows the 40 largest misses,
    # sorted by |error|, and says where every row is; csv still lists all 41
    import pandas as pd

    from tokenomics.catalog import load
    from tokenomics.cli.perf import MAX_CASE_ROWS

    df = load("serving_public")
    extra = df.head(41 - len(df)).assign(case_id=lambda d: d["case_id"] + "-copy")
    path = tmp_path / "cases.csv"
    pd.concat([df, extra]).to_csv(path, index=False)
    r = runner.invoke(app, ["validate-serving", str(path)])
    assert r.exit_code == 0, r.output
    assert MAX_CASE_ROWS == 40 and "the 40 largest misses of 41 rows" in r.output and "lists every row" in r.output
    r = runner.invoke(app, ["validate-serving", str(path), "--format", "csv"])
    assert len(r.output.strip().splitlines()) == 42  # header + 41 rows


def test_throughput_of_a_deployment_shows_its_breakdown():
    """`throughput` of a deployment prints the chip's operators and the deployment's own rows (the
    TP8 all-reduces, the engine's per-step cost); --no-breakdown leaves the table alone."""
    args = ["throughput", "-H", "h200", "-m", "gpt-oss-120b", "--engine", "trt", "--tp", "8", "-b", "4", "-c", "1500"]
    r = runner.invoke(app, args)
    assert r.exit_code == 0, r.output
    assert "Per-operator breakdown at batch 4, context 1500" in r.stdout
    assert "all-reduce" in r.stdout and "engine per-step cost" in r.stdout and "latency" in r.stdout
    r = runner.invoke(app, args + ["--no-breakdown"])
    assert r.exit_code == 0 and "Per-operator breakdown" not in r.stdout


def test_validate_kernels_moe_tables_show_the_fixed_latency_and_keep_brackets():
    """validate-kernels --op moe_experts ends with the fused MoE layer's fixed latency per chip and
    format (22 us for MXFP4 on the H200; 0 on AMD, which publishes no whole-layer timing), and
    bracketed units and formulas in titles and captions print as written (rich would otherwise
    read "[us]" as markup and drop it)."""
    r = runner.invoke(app, ["validate-kernels", "--op", "moe_experts", "--hardware", "h200"])
    assert r.exit_code == 0, r.output
    assert "fixed latency per call [us]" in r.stdout and "[f/(f+w)]" in r.stdout
    from tokenomics.perf.kernels import moe_ceilings

    c = moe_ceilings(["h200", "mi355x"]).set_index(["hardware", "weight_precision"])
    assert 20e-6 <= c.loc[("h200", "mxfp4"), "fixed_latency_s"] <= 24e-6
    assert c.loc[("mi355x", "fp8"), "fixed_latency_s"] == 0.0 and 0 < c.loc[("h200", "fp8"), "stream_frac"] <= 1
