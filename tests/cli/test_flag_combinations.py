"""Flag combinations that change nothing, contradict each other or are absurd are refused before
any work: exit 2, one line on stderr naming the flag and why (the library refuses the deployment
ones too, with a TokenomicsError)."""

from __future__ import annotations

import pytest

from tokenomics.cli import main
from tokenomics.errors import TokenomicsError

DENSE = ["price", "-m", "llama-3.1-8b", "--format", "csv"]  # llama-3.1-8b: dense (models.csv, no experts)
MOE = ["price", "-m", "deepseek-v3", "-s", "dgx-h200", "--format", "csv"]  # 256 routed experts of 2048 hidden

CASES = [
    # expert settings on a dense model: nothing to act on
    (DENSE + ["--expert-precision", "fp4"], "--expert-precision", "dense model"),
    (DENSE + ["--expert-balance", "eplb"], "--expert-balance", "dense model"),
    (DENSE + ["--overlap", "two-batch"], "--overlap two-batch", "dense model"),
    (DENSE + ["--no-dp-attention"], "--no-dp-attention", "dense model"),
    (["throughput", "-m", "llama-3.1-8b", "--dp-attention"], "--dp-attention", "dense model"),
    # a release without an engine that has a release table; releases outside the table
    (DENSE + ["--engine-version", "1.1.0rc2"], "--engine-version", "sglang, trt, vllm"),
    (DENSE + ["--engine", "trt", "--engine-version", "99.0.0"], "--engine-version", "known trt releases: 0.5.0"),
    (DENSE + ["--engine", "trt", "--engine-version", "0.0.1"], "--engine-version", "1.4.0rc1"),
    # expert groups that do not split the experts
    (MOE + ["--ep", "7"], "--ep 7", "256 experts"),
    (MOE + ["--tp", "1", "--ep", "2", "--moe-tp", "3"], "--moe-tp 3", "2048"),
    (DENSE + ["--tp", "2", "--moe-tp", "2"], "--moe-tp", "dense model"),
    # serving options of forecast outside the views that use them
    (["forecast", "--serving", "colocated"], "--serving", "--show infra"),
    (["forecast", "--cache-hit", "0.5"], "--cache-hit", "--show infra"),
    (["forecast", "--target-tok-s-user", "40"], "--target-tok-s-user", "--show infra"),
    (["forecast", "--show", "backtest", "--cost", "2"], "--cost", "--show backtest"),
    # a single-valued option given twice: the last would win silently
    (DENSE + ["-b", "8", "-b", "16"], "-b given twice", "give it once"),
    (DENSE + ["-b", "8", "--batch=16"], "-b and --batch", "give one"),
    (MOE + ["--dp-attention", "--no-dp-attention"], "--dp-attention and --no-dp-attention", "give one"),
    (["forecast", "--format", "csv", "--format", "json"], "--format given twice", "give it once"),
    # a flat daily load: utilization 1, as without the profile
    (DENSE + ["--utilization-profile", "24:1"], "'24:1' is flat", "--utilization"),
    (DENSE + ["--utilization-profile", "8:5,16:5"], "is flat", "different loads"),
    # denormal and absurd values (ranges: econ/tco.py, econ/pricing.py, market.py)
    (DENSE + ["--cost", "1e-320"], "flat cost 1e-320", "0.001 to 10000"),
    (DENSE + ["--cost", "1e308"], "flat cost 1e+308", "0.001 to 10000"),
    (DENSE + ["--margin", "1e-320"], "margin_frac 1e-320", "1e-06 to below 1"),
    (["market", "--default-speed", "1e308"], "default speed 1e+308", "0.1 to 100000"),
    (["market", "--default-speed", "1e-320"], "default speed 1e-320", "0.1 to 100000"),
]


@pytest.mark.parametrize("args,flag,why", CASES, ids=[" ".join(c[0]) for c in CASES])
def test_refused_one_line_exit_2(args, flag, why, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as exc:
        main(args)
    out, err = capsys.readouterr()
    assert exc.value.code == 2, (args, out, err)
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: "), err
    assert flag in lines[0] and why in lines[0], lines[0]
    assert out == "" and not list(tmp_path.iterdir())  # before any work: nothing printed or written


@pytest.mark.parametrize("args", [
    MOE + ["--ep", "8"],                                   # 8 divides 256
    MOE + ["--ep", "7", "--expert-balance", "eplb"],        # spare slots hold redundant copies
    MOE + ["--ep", "7", "--expert-balance", "none"],        # stated: plain copies
    DENSE + ["--engine", "trt", "--engine-version", "1.1.0rc2"],  # a tabulated trt release
    DENSE + ["--utilization-profile", "8:278,16:201.125"],  # DeepSeek's fleet profile (tco_params.csv)
    DENSE + ["--margin", "0", "--cost", "2.0"],
    ["report", "--help"],
], ids=lambda a: " ".join(a))
def test_meaningful_combinations_still_run(args, capsys):
    try:
        main(args)
    except SystemExit as exc:  # --help exits 0; a priced command returns
        assert exc.code in (0, None), capsys.readouterr().err
    assert capsys.readouterr().out


def test_options_that_take_several_values_may_repeat(capsys):
    """report --hardware takes a list: repeating it is how several are given."""
    from tokenomics.cli import _check_repeated
    import typer

    from tokenomics.cli import app

    cmd = typer.main.get_command(app)
    _check_repeated(cmd, ["report", "-H", "h200", "-H", "b200"])  # no error
    with pytest.raises(TokenomicsError, match="--out given twice"):
        _check_repeated(cmd, ["report", "--out", "a", "--out", "b"])
    # a value that looks like an option is a value, not a second flag
    _check_repeated(cmd, ["price", "--cost", "-b", "-b", "8"])


@pytest.mark.parametrize("kw,flag", [
    (dict(model="llama-3.1-8b", hardware="h200", expert_precision="fp4"), "--expert-precision"),
    (dict(model="llama-3.1-8b", hardware="h200", dp_attention=False), "--no-dp-attention"),
    (dict(model="llama-3.1-8b", hardware="h200", engine_version="1.1.0rc2"), "--engine-version"),
    (dict(model="llama-3.1-8b", hardware="h200", engine="trt", engine_version="99.0.0"), "not known"),
    (dict(model="deepseek-v3", system="dgx-h200", tp=1, ep=2, moe_tp=3), "--moe-tp 3"),
])
def test_library_refuses_the_deployment_ones(kw, flag):
    from tokenomics.deployment import resolve

    with pytest.raises(TokenomicsError, match=flag):
        resolve(kw.pop("model"), **kw)


def test_library_refuses_absurd_money():
    from tokenomics.econ.pricing import check_margin
    from tokenomics.econ.tco import cost_model

    with pytest.raises(TokenomicsError, match="margin_frac"):
        check_margin(1e-320)
    assert check_margin(0.0) == 0.0 and check_margin(0.25) == 0.25
    with pytest.raises(TokenomicsError, match="flat cost"):
        cost_model("h200", "1e-320")
