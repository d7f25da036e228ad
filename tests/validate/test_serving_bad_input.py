"""Bad serving-cases CSVs (``validate-serving``, ``frontier --measured``, :func:`read_cases`): one
line naming the case, the column and what was expected, exit 2, no traceback, nothing written;
the bundled sets still read and predict as before."""

from __future__ import annotations

import csv
import io

import pandas as pd
import pytest

from tokenomics import catalog
from tokenomics.cli import main
from tokenomics.cli.perf import BUNDLED_SERVING
from tokenomics.errors import DataError, ValidationError
from tokenomics.validate import serving_cases

PUBLIC = catalog.data_dir() / "serving_public.csv"
LINES = PUBLIC.read_text().splitlines()
HEADER = next(csv.reader([LINES[0]]))


def _row_with(**cells: str) -> str:
    """The header and the first bundled public row (P070: gpt-oss-120b, one B200, vLLM, serve)
    with some cells replaced by raw text."""
    row = next(csv.reader([LINES[1]]))
    for col, text in cells.items():
        row[HEADER.index(col)] = text
    buf = io.StringIO()
    csv.writer(buf, lineterminator="\n").writerows([HEADER, row])
    return buf.getvalue()


def run_main(args, capsys):
    with pytest.raises(SystemExit) as exc:
        main([str(a) for a in args])
    out = capsys.readouterr()
    return exc.value.code, out.out, out.err


def _one_line_error(code, err) -> str:
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert code == 2, err
    assert len(lines) == 1, err
    assert "Traceback" not in err
    return lines[0]


# cells -> what the one line must say (the case, the column, the value, what is expected)
BAD_CELLS = [
    ({"measured_output_tok_per_s_per_gpu": "abc"},
     ["P070", "measured_output_tok_per_s_per_gpu", "not a number", "'abc'", "expected a positive number"]),
    ({"measured_output_tok_per_s_per_gpu": "-1"}, ["P070", "measured_output_tok_per_s_per_gpu", "> 0", "-1"]),
    ({"measured_output_tok_per_s_per_gpu": "0"}, ["P070", "measured_output_tok_per_s_per_gpu", "> 0"]),
    ({"measured_output_tok_per_s_per_gpu": "inf"}, ["P070", "measured_output_tok_per_s_per_gpu", "not finite"]),
    ({"measured_ttft_s": "fast"}, ["P070", "measured_ttft_s", "'fast'"]),
    ({"measured_ttft_s": "-1"}, ["P070", "measured_ttft_s", "> 0"]),
    ({"isl_tok": "1k"}, ["P070", "isl_tok", "'1k'", "expected a positive number"]),
    ({"isl_tok": "-1"}, ["P070", "isl_tok", "got -1"]),  # the cell, not the mean length (-0.9)
    ({"isl_tok": ""}, ["P070", "isl_tok", "needs its prompt and output lengths"]),
    ({"tp": "x"}, ["P070", "tp", "'x'", "whole number >= 1"]),
    ({"n_gpus": "-8"}, ["P070", "n_gpus", ">= 1", "-8"]),
    ({"n_gpus": "eight"}, ["P070", "n_gpus", "'eight'"]),
    ({"n_gpus": "1.5"}, ["P070", "n_gpus", "whole number", "1.5"]),
    ({"n_gpus": ""}, ["P070", "n_gpus", "missing"]),
    ({"disaggregated": "yes"}, ["P070", "disaggregated", "'yes'", "0 or 1"]),
    ({"dp_attention": "maybe"}, ["P070", "dp_attention", "'maybe'", "0 or 1"]),
    ({"dp_attention": "2"}, ["P070", "dp_attention", "0 or 1"]),
    ({"concurrency": "many"}, ["P070", "concurrency", "'many'"]),
    ({"concurrency": "0"}, ["P070", "concurrency", ">= 1"]),  # at least one request in flight
    ({"concurrency": ""}, ["P070", "concurrency", "a serve row needs its concurrency", "empty"]),
    ({"weight_precision": "fp3"}, ["P070", "Unknown weight precision 'fp3'"]),
    ({"kv_precision": "int3"}, ["P070", "Unknown KV precision 'int3'"]),
    ({"ep": "7", "n_gpus": "1"}, ["P070", "n_gpus 1 is fewer than the 7 chips its layout spans"]),
]


@pytest.mark.parametrize("cells, needles", BAD_CELLS, ids=[",".join(f"{k}={v}" for k, v in c.items())
                                                           for c, _ in BAD_CELLS])
def test_validate_serving_bad_cell_is_one_line(tmp_path, capsys, cells, needles):
    f = tmp_path / "cases.csv"
    f.write_text(_row_with(**cells))
    code, out, err = run_main(["validate-serving", f, "--format", "csv"], capsys)
    line = _one_line_error(code, err)
    assert all(n in line for n in needles), line
    assert out == ""


def test_header_only_has_no_rows(tmp_path, capsys):
    f = tmp_path / "header.csv"
    f.write_text(LINES[0] + "\n")
    line = _one_line_error(*run_main(["validate-serving", f, "-f", "csv"], capsys)[::2])
    assert "has no rows" in line


def test_unknown_set_lists_the_bundled_sets_with_the_closest(capsys):
    line = _one_line_error(*run_main(["validate-serving", "mlprf"], capsys)[::2])
    assert "'mlprf' not found" in line and "Did you mean 'mlperf'" in line
    assert all(k in line for k in BUNDLED_SERVING)


def test_model_errors_name_the_case(tmp_path, capsys):
    """An error from the model (tp that does not divide the heads) names its case too."""
    f = tmp_path / "tp3.csv"
    f.write_text(_row_with(tp="3"))
    line = _one_line_error(*run_main(["validate-serving", f], capsys)[::2])
    assert line.startswith("Error: serving case P070: ") and "tp=3" in line


def test_empty_measured_cell_is_not_measured(tmp_path):
    """Measured cells may be empty (not measured); the row is read and predicted."""
    f = tmp_path / "nan.csv"
    f.write_text(_row_with(measured_output_tok_per_s_per_gpu="", measured_ttft_s=""))
    df = serving_cases.read_cases(f)
    assert df["measured_output_tok_per_s_per_gpu"].isna().all()
    p = serving_cases.predict_cases(df)
    assert (p["status"] == "predicted").all() and p["error_frac"].isna().all()


@pytest.mark.parametrize("cells, column", [({"measured_output_tok_per_s_per_gpu": "abc"}, "measured_output"),
                                           ({"measured_output_tok_per_s_per_gpu": "-1"}, "measured_output"),
                                           ({"measured_output_tok_per_s_per_gpu": "inf"}, "measured_output"),
                                           ({"measured_tok_per_s_per_user": "abc"}, "measured_tok_per_s_per_user"),
                                           ({"tp": "x"}, "tp")])
def test_frontier_serving_is_validated_before_any_work(tmp_path, capsys, cells, column):
    f = tmp_path / "cases.csv"
    f.write_text(_row_with(**cells))
    png = tmp_path / "f.png"
    code, _, err = run_main(["frontier", "-m", "gpt-oss-120b", "-s", "dgx-b200", "--measured", f, "-o", png], capsys)
    line = _one_line_error(code, err)
    assert "P070" in line and column in line
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cases.csv"]  # no PNG, no temporary


def test_measured_points_are_checked_before_the_frontier_draws_them(tmp_path):
    # the frontier plot draws what it is given; the points' cells are checked by the serving-cases
    # schema before (the CLI reads them with read_cases: test_frontier_serving_is_validated_before_any_work)
    bad = pd.DataFrame({"case_id": ["a"], "measured_tok_per_s_per_user": [50.0],
                        "measured_output_tok_per_s_per_gpu": ["abc"]})
    with pytest.raises(DataError, match="serving case a: measured_output_tok_per_s_per_gpu is not a number"):
        serving_cases.check_cells(bad, "measured points")


def test_read_cases_frame_errors_are_typed_and_one_line():
    df = pd.read_csv(PUBLIC).head(2)
    for col, value, needle in (("tp", "x", "tp is not a number"), ("n_gpus", -8, "n_gpus must be >= 1"),
                               ("measured_ttft_s", float("inf"), "measured_ttft_s is not finite")):
        d = df.copy().astype({col: object})
        d.loc[1, col] = value
        with pytest.raises(DataError) as exc:
            serving_cases.read_cases(d)
        msg = str(exc.value)
        assert msg.startswith("serving case P071: ") and needle in msg and "\n" not in msg
    with pytest.raises(DataError, match="has no rows"):
        serving_cases.read_cases(df.head(0))


def test_predict_case_needs_lengths_and_concurrency():
    row = pd.read_csv(PUBLIC).iloc[0].to_dict()
    with pytest.raises(ValidationError, match="P070: a serve row needs its prompt and output lengths; osl_tok"):
        serving_cases.predict_case({**row, "osl_tok": float("nan")})
    with pytest.raises(ValidationError, match="P070: a serve row needs its concurrency"):
        serving_cases.predict_case({**row, "concurrency": float("nan")})


@pytest.mark.parametrize("key", sorted(BUNDLED_SERVING))
def test_bundled_sets_still_read(key):
    name = BUNDLED_SERVING[key]
    raw = pd.read_csv(catalog.data_dir() / catalog.REGISTRY[name].file)
    df = serving_cases.read_cases(catalog.data_dir() / catalog.REGISTRY[name].file)
    assert len(df) == len(raw) and list(df.columns) == list(raw.columns)
    pd.testing.assert_frame_equal(df, raw)  # valid input is read unchanged


def test_bundled_public_set_still_predicts(capsys):
    try:
        main(["validate-serving", "public", "--format", "csv"])
    except SystemExit as exc:
        assert exc.code in (0, None)
    out, err = capsys.readouterr()
    assert err == ""
    pred = pd.read_csv(io.StringIO(out))
    assert len(pred) == len(pd.read_csv(PUBLIC)) and (pred["status"] == "predicted").all()


def test_duplicated_case_ids_are_refused(tmp_path, capsys):
    f = tmp_path / "dup.csv"
    f.write_text(LINES[0] + "\n" + LINES[1] + "\n" + LINES[1] + "\n")
    line = _one_line_error(*run_main(["validate-serving", f, "-f", "csv"], capsys)[::2])
    assert "case_id 'P070' appears more than once (lines 2, 3)" in line
