"""validate-serving scores what it can: a file mixing good rows with bad ones scores the good rows
exactly as it would alone and lists every refused row (line, case, column, reason, a suggestion
for an unknown name); --strict refuses the file; a file with nothing to score exits 2 in one
line; columns outside the schema are ignored with a note; decode rows without a concurrency run
at the KV-full batch; the optional columns mtp_acceptance and prefill_dp_attention are read.

Fixtures are rows of the bundled datasets/serving_public.csv (and serving_holdout.csv for a
disaggregated row), picked by their columns, with single cells replaced."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from tokenomics import catalog
from tokenomics.cli import main
from tokenomics.perf import serving

from tokenomics.validate import serving_cases
PUBLIC = pd.read_csv(catalog.data_dir() / "serving_public.csv", dtype=str, keep_default_na=False)
_SERVE = PUBLIC[(PUBLIC["phase"] == "serve") & (PUBLIC["hardware"] == "h200") & (PUBLIC["engine"] == "vllm")]
#: Two serve rows (gpt-oss-120b on two H200s, vLLM, concurrency 4 and 64) and one offline row.
GOOD = pd.concat([_SERVE.head(2), PUBLIC[PUBLIC["phase"] == "offline"].head(1)], ignore_index=True)
BASE = GOOD.iloc[0]

#: One bad row per kind: case id -> (cells replaced in BASE, the column named, words of the reason).
BAD = {
    "X-engine": ({"engine": "vlm"}, "engine", ["Unknown engine 'vlm'", "Did you mean 'vllm'"]),
    "X-model": ({"model": "gpt-oss-120"}, "model", ["Unknown model 'gpt-oss-120'", "'gpt-oss-120b'"]),
    "X-system": ({"hardware": "dgx-h200"}, "hardware", ["is a system", "'h200'"]),
    "X-precision": ({"weight_precision": "fp9"}, "weight_precision", ["Unknown weight precision 'fp9'", "'fp8'"]),
    "X-phase": ({"phase": "serv"}, "phase", ["Unknown phase 'serv'", "'serve'"]),
    "X-phase-empty": ({"phase": ""}, "phase", ["Unknown phase ''", "Known: decode, offline, prefill, serve"]),
    "X-overlap": ({"overlap": "two_batch"}, "overlap", ["Unknown overlap 'two_batch'", "'two-batch'"]),
    "X-conc-tiny": ({"concurrency": "0.001"}, "concurrency", ["must be >= 1", "0.001"]),
    "X-conc-huge": ({"concurrency": "1e12"}, "concurrency", ["must be <= 1e+06"]),
    "X-gpus-layout": ({"n_gpus": "3"}, "n_gpus", ["not a whole number of instances", "multiple of 2"]),
    "X-gpus-huge": ({"n_gpus": "1e15"}, "n_gpus", ["must be <= 100000"]),
    "X-cache-pct": ({"cache_hit_frac": "56.3"}, "cache_hit_frac", ["fraction expected, got 56.3", "0.563"]),
    "X-cache-neg": ({"cache_hit_frac": "-1"}, "cache_hit_frac", ["must be >= 0"]),
    "X-cache-nan": ({"cache_hit_frac": "NaN"}, "cache_hit_frac", ["'NaN', not a number", "empty cell"]),
    "X-measured": ({"measured_output_tok_per_s_per_gpu": "1e300"}, "measured_output_tok_per_s_per_gpu",
                   ["must be <= 1e+07"]),
    "X-measured-0": ({"measured_output_tok_per_s_per_gpu": "0"}, "measured_output_tok_per_s_per_gpu", ["> 0"]),
    "X-batch": ({"max_batch_size": "0.5"}, "max_batch_size", ["must be >= 1", "0.5"]),
    "X-release": ({"engine_version": "99999.0"}, "engine_version", ["newer than every vllm release", "0.19.0"]),
    "X-prefill-tok": ({"prefill_tok_per_gpu": "1e300"}, "prefill_tok_per_gpu", ["must be <= 1e+07"]),
    "X-mtp-nospec": ({"mtp_acceptance": "0.7"}, "mtp_acceptance", ["needs speculative decoding"]),
    "X-pdpa-colocated": ({"prefill_dp_attention": "1"}, "prefill_dp_attention", ["disaggregated serve row"]),
}


def _frame(rows: list[pd.Series]) -> pd.DataFrame:
    return pd.DataFrame(rows).reset_index(drop=True)


def _bad_row(case: str) -> pd.Series:
    cells, _, _ = BAD[case]
    r = BASE.copy()
    for col, val in cells.items():
        r[col] = val
    r["case_id"] = case
    return r


def _mixed() -> pd.DataFrame:
    """The good rows with the bad ones between them (a bad row first, good rows later)."""
    bad = [_bad_row(c) for c in BAD]
    return _frame([bad[0], GOOD.iloc[0], *bad[1:8], GOOD.iloc[1], *bad[8:], GOOD.iloc[2]])


def _write(tmp_path, df: pd.DataFrame, name: str) -> str:
    path = tmp_path / name
    df.to_csv(path, index=False)
    return str(path)


def _run(args, capsys):
    try:
        main([str(a) for a in args])
        code = 0
    except SystemExit as exc:
        code = exc.code or 0
    out = capsys.readouterr()
    return code, out.out, out.err


@pytest.fixture(scope="module")
def mixed_json(tmp_path_factory):
    """validate-serving --format json of the mixed file and of the good rows alone."""
    import io
    from contextlib import redirect_stdout

    d = tmp_path_factory.mktemp("mixed")
    res = {}
    for name, df in (("mixed", _mixed()), ("good", GOOD)):
        buf = io.StringIO()
        with redirect_stdout(buf):
            try:
                main(["validate-serving", _write(d, df, f"{name}.csv"), "--format", "json"])
            except SystemExit as exc:
                assert not exc.code, exc.code
        res[name] = pd.DataFrame(json.loads(buf.getvalue()))
    return res


def test_good_rows_score_as_they_would_alone(mixed_json):
    mixed, good = mixed_json["mixed"], mixed_json["good"]
    assert len(mixed) == len(GOOD) + len(BAD)  # every input row once, in file order
    scored = mixed[mixed["status"] == "predicted"].reset_index(drop=True)
    assert list(scored["case_id"]) == list(GOOD["case_id"])
    cols = [c for c in good.columns if c.startswith("predicted_") or c in ("deployment", "error_frac")]
    pd.testing.assert_frame_equal(scored[cols], good[cols])  # the same numbers, to the last digit


def test_every_bad_row_is_refused_with_its_column_and_reason(mixed_json):
    mixed = mixed_json["mixed"]
    refused = mixed[mixed["status"] == "refused"].set_index("case_id")
    assert sorted(refused.index) == sorted(BAD)
    for case, (_, column, words) in BAD.items():
        r = refused.loc[case]
        assert r["refused_column"] == column, (case, r["refused_column"], r["refused_reason"])
        assert all(w in r["refused_reason"] for w in words), (case, r["refused_reason"])
        assert "\n" not in r["refused_reason"]
        assert pd.isna(r["predicted_output_tok_per_s_per_gpu"])
    lines = mixed.set_index("case_id")["csv_line"]
    assert lines["X-engine"] == 2 and lines[GOOD["case_id"].iloc[0]] == 3  # the header is line 1


def test_table_lists_the_refused_rows_one_line_each(tmp_path, capsys):
    f = _write(tmp_path, _mixed(), "mixed.csv")
    code, out, err = _run(["validate-serving", f], capsys)
    assert code == 0, err
    assert f"Refused rows: {len(BAD)} of {len(BAD) + len(GOOD)} not scored" in out
    refused = out[out.index("Refused rows"):]
    assert all(case in refused for case in BAD)
    # the suggestion, not the list of every engine (kept where there is no suggestion: the phases)
    assert "Did you mean 'vllm'" in refused and "Known: atom" not in refused
    assert all(case not in refused for case in GOOD["case_id"])


def test_strict_refuses_the_file_in_one_line(tmp_path, capsys):
    f = _write(tmp_path, _mixed(), "mixed.csv")
    code, out, err = _run(["validate-serving", f, "--strict", "--format", "csv"], capsys)
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert code == 2 and out == "" and len(lines) == 1, err
    assert lines[0].startswith("Error: serving case X-engine: Unknown engine 'vlm'")
    assert f"{len(BAD)} of {len(BAD) + len(GOOD)} rows refused, and --strict scores none" in lines[0]


def test_strict_on_a_clean_file_scores_it(tmp_path, capsys):
    code, out, _ = _run(["validate-serving", _write(tmp_path, GOOD, "good.csv"), "--strict", "-f", "csv"], capsys)
    assert code == 0 and len(pd.read_csv(__import__("io").StringIO(out))) == len(GOOD)


def test_nothing_to_score_exits_2_in_one_line(tmp_path, capsys):
    f = _write(tmp_path, _frame([_bad_row("X-engine"), _bad_row("X-cache-pct")]), "bad.csv")
    code, out, err = _run(["validate-serving", f], capsys)
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert code == 2 and out == "" and len(lines) == 1, err
    assert "serving case X-engine: Unknown engine 'vlm'" in lines[0]
    assert "all 2 rows refused, nothing to score" in lines[0] and "line 3 (X-cache-pct, cache_hit_frac)" in lines[0]
    assert "Traceback" not in err


def test_unknown_columns_are_ignored_with_one_note(tmp_path, capsys):
    df = GOOD.assign(my_rig="lab-3", concurency="4")
    code, out, err = _run(["validate-serving", _write(tmp_path, df, "extra.csv"), "-f", "json"], capsys)
    assert code == 0
    assert err.strip() == ("Note: ignored 2 columns outside the serving-cases schema: my_rig, "
                           "concurency (did you mean 'concurrency'?)")
    rows = json.loads(out)
    assert [r["status"] for r in rows] == ["predicted"] * len(GOOD) and "my_rig" not in rows[0]


def test_out_writes_every_row_with_its_refusal(tmp_path, capsys):
    f = _write(tmp_path, _mixed(), "mixed.csv")
    out_csv = tmp_path / "scores.csv"
    code, out, err = _run(["validate-serving", f, "--out", out_csv, "-f", "json"], capsys)
    assert code == 0 and f"wrote {len(BAD) + len(GOOD)} rows ({len(BAD)} refused)" in err
    written = pd.read_csv(out_csv, keep_default_na=False)
    shown = pd.DataFrame(json.loads(out))
    assert list(written["case_id"]) == list(shown["case_id"])
    assert list(written.columns) == list(shown.columns)
    r = written.set_index("case_id").loc["X-cache-pct"]
    assert r["status"] == "refused" and r["refused_column"] == "cache_hit_frac" and "0.563" in r["refused_reason"]


def test_read_cases_stays_strict():
    """The library's read_cases (fit-serving, showdown) still refuses a file with a bad row."""
    from tokenomics.errors import DataError

    with pytest.raises(DataError, match="serving case X-engine: Unknown engine 'vlm'"):
        serving_cases.read_cases(_mixed())
    df, refused = serving_cases.check_cases(_mixed())
    # every bad row but the one whose layout only the deployment can judge (predict_cases refuses it)
    assert len(df) == len(BAD) + len(GOOD) and sorted(refused["case_id"]) == sorted(set(BAD) - {"X-gpus-layout"})


def test_bundled_fit_set_has_no_refusal():
    _, refused = serving_cases.check_cases(catalog.data_dir() / "serving_public.csv")
    assert refused.empty


# ---- decode rows without a concurrency: the KV-full batch -------------------------------------------

def test_decode_row_without_concurrency_runs_at_the_kv_full_batch():
    row = BASE.copy()
    row[["phase", "concurrency", "measured_tok_per_s_per_user", "case_id"]] = ["decode", "", "", "D-full"]
    p = serving_cases.predict_cases(_frame([row]))
    assert p["status"].iloc[0] == "predicted", p["refused_reason"].iloc[0]
    # the batch is what the KV cache holds at the mean length isl + osl / 2 (1024 + 512 nominal
    # tokens, x 0.9 where the row's lengths are random in [0.8, 1.0] x nominal)
    dep = serving_cases.case_deployment(p.iloc[0])
    cap = serving._slot_cap(dep, (1024 + 1024 / 2) * serving_cases.mean_length_frac(row["note"]))
    assert p["predicted_batch"].iloc[0] == pytest.approx(cap) and cap > 64
    assert "KV-full batch" in p["assumption"].iloc[0] and "as many as fit" in p["assumption"].iloc[0]
    # the same prediction as the row stating that batch as its concurrency (one instance: n_gpus = tp)
    row2 = row.copy()
    row2[["concurrency", "case_id"]] = [str(cap), "D-stated"]
    q = serving_cases.predict_cases(_frame([row2]))
    assert q["predicted_output_tok_per_s_per_gpu"].iloc[0] == pytest.approx(p["predicted_output_tok_per_s_per_gpu"].iloc[0])
    assert q["assumption"].iloc[0] == ""


# ---- optional columns: mtp_acceptance, prefill_dp_attention --------------------------------------------

def test_mtp_acceptance_sets_the_per_token_acceptance():
    """mtp_acceptance replaces the per-token acceptance of the row's speculative decoding and keeps
    its depth: eagle:3:0.7 with mtp_acceptance 0.6 is eagle:3:0.6, and slower than 0.7 (gpt-oss
    has no MTP heads, so its rows draft with EAGLE)."""
    rows = []
    for case, spec, acc in (("A", "eagle:3:0.7", "0.6"), ("B", "eagle:3:0.6", ""), ("C", "eagle:3:0.7", "")):
        r = BASE.copy()
        r["case_id"], r["spec_decode"], r["mtp_acceptance"] = case, spec, acc
        rows.append(r)
    p = serving_cases.predict_cases(_frame(rows)).set_index("case_id")["predicted_output_tok_per_s_per_gpu"]
    assert p["A"] == p["B"] and p["A"] < p["C"]


def test_prefill_dp_attention_sets_the_prefill_layout():
    """On a disaggregated row, prefill_dp_attention 1 over prefill_tp 8 is the layout prefill_tp 1,
    prefill_ep 8 already means (attention data-parallel over eight GPUs); 0 is tensor-parallel."""
    hold = pd.read_csv(catalog.data_dir() / "serving_holdout.csv")
    num = hold[["disaggregated", "prefill_ep", "prefill_tp"]].apply(pd.to_numeric)
    base = hold[(num["disaggregated"] == 1) & (hold["model"] == "deepseek-r1") & (num["prefill_ep"] == 8)
                & (num["prefill_tp"] == 1)].iloc[0].astype(object).copy()
    rows = []
    for case, tp, dpa in (("implicit", 1, None), ("dpa1", 8, 1), ("dpa0", 8, 0)):
        r = base.copy()
        r["case_id"], r["prefill_tp"], r["prefill_dp_attention"] = case, tp, dpa
        rows.append(r)
    df = _frame(rows)
    p = serving_cases.predict_cases(df).set_index("case_id")
    assert (p["status"] == "predicted").all(), p["refused_reason"]
    speed = p["predicted_tok_per_s_per_user"]  # the prefill tier's speed reaches the users' speed
    assert speed["dpa1"] == speed["implicit"] and speed["dpa0"] != speed["implicit"]
    pre = {c: serving_cases.case_prefill_deployment(df.set_index("case_id").loc[c].to_dict() | {"case_id": c})
           for c in ("dpa1", "dpa0")}
    assert pre["dpa1"].parallel.tp == 1 and pre["dpa0"].parallel.tp == 8


def test_table_takes_a_file_without_optional_measurements(tmp_path, capsys):
    """Only the required columns measured: the table leaves the per-user columns empty."""
    df = GOOD.drop(columns=["measured_tok_per_s_per_user", "measured_total_tok_per_s_per_gpu"])
    code, out, err = _run(["validate-serving", _write(tmp_path, df, "bare.csv")], capsys)
    assert code == 0 and "Traceback" not in err and GOOD["case_id"].iloc[0] in out


def test_mtp_acceptance_as_a_percent_is_refused_with_the_fraction():
    r = BASE.copy()
    r["spec_decode"], r["mtp_acceptance"] = "eagle:3:0.7", "70"
    _, refused = serving_cases.check_cases(_frame([r]))
    assert refused["reason"].iloc[0] == "mtp_acceptance: fraction expected, got 70 — did you mean 0.7?"


def test_mtp_acceptance_as_an_acceptance_length_is_refused_with_the_fraction():
    """SGLang reports an acceptance length (tokens per verify step); 2.5 with three EAGLE drafts is
    a per-token acceptance of about 0.69: 1 + a + a^2 + a^3 = 2.5 (hand calculation: a = 0.69 gives
    1 + 0.69 + 0.476 + 0.329 = 2.495; speculative.alpha_for_acceptance_length solves it exactly)."""
    from tokenomics.perf.speculative import alpha_for_acceptance_length, expected_tokens_per_step

    r = BASE.copy()
    r["spec_decode"], r["mtp_acceptance"] = "eagle:3:0.7", "2.5"
    _, refused = serving_cases.check_cases(_frame([r]))
    alpha = alpha_for_acceptance_length(2.5, 3)
    assert alpha == pytest.approx(0.69, abs=0.005) and expected_tokens_per_step(alpha, 3) == pytest.approx(2.5)
    assert refused["reason"].iloc[0].endswith(f"3 draft tokens is a per-token acceptance of {alpha:.3g}")


def test_a_hub_model_name_is_scored_as_the_catalog_model_it_stands_for(tmp_path):
    # the same two serve rows, the model written as its Hugging Face id: the same predictions
    hub = GOOD.head(2).copy()
    hub["model"] = "openai/gpt-oss-120b"
    hub["case_id"] = hub["case_id"] + "-hub"
    both = pd.concat([GOOD.head(2), hub], ignore_index=True)
    f = tmp_path / "cases.csv"
    both.to_csv(f, index=False)
    pred = serving_cases.predict_cases(f)
    assert (pred["status"] == "predicted").all()
    col = "predicted_output_tok_per_s_per_gpu"
    assert list(pred[col].iloc[2:]) == list(pred[col].iloc[:2])
    assert set(pred["model"]) == {"gpt-oss-120b"}
