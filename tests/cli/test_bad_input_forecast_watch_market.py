"""Bad input to ``tokenomics forecast``, ``watch`` and ``market``: one line, exit 2, nothing written.

Each case gives the CLI (``tokenomics.cli.main``, the entry point that turns a
:class:`~tokenomics.errors.TokenomicsError` into exit 2) a malformed file and checks that the
message is one line naming the column or row at fault, with no traceback and no ``--out``
directory left behind.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from tokenomics import catalog
from tokenomics.cli import main
from tokenomics.errors import DataError, ValidationError

#: Watch sizes small enough that a run that does start stays quick.
FAST = ["--n-boot", "20", "--n-draws", "20"]
HIST = "series,date,tokens_per_day,source\n"
PRICES = ("provider,model,input_usd_per_m_tok,cached_input_usd_per_m_tok,output_usd_per_m_tok,"
          "tok_per_s_per_user,source,as_of\n")


def _cli(args, capsys):
    """Run the CLI; return (exit code, stdout, stderr)."""
    with pytest.raises(SystemExit) as exc:
        main([str(a) for a in args])
        raise SystemExit(0)
    out = capsys.readouterr()
    return exc.value.code or 0, out.out, out.err


def _fails(args, capsys, *needles: str) -> str:
    """Assert exit 2, empty stdout and a one-line stderr containing every needle; return it."""
    rc, out, err = _cli(args, capsys)
    assert rc == 2, (rc, out, err)
    assert out == "" and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1, err
    for n in needles:
        assert n in err, (n, err)
    return err


def _write(tmp_path: Path, name: str, text: str) -> Path:
    p = tmp_path / name
    p.write_text(text)
    return p


# ---------------------------------------------------------------- forecast


@pytest.mark.parametrize("option", ["--add-history", "--history"])
def test_forecast_empty_series_name_names_the_row(tmp_path, capsys, option):
    f = _write(tmp_path, "h.csv", HIST + "x,2024-01,1e9,me\n,2024-02,1e9,me\n")
    out = tmp_path / "out"
    _fails(["forecast", option, f, "--out", out], capsys, "row 2 (line 3)", "series name")
    assert not out.exists()


@pytest.mark.parametrize("option", ["--add-history", "--history"])
def test_forecast_header_only_history_has_no_rows(tmp_path, capsys, option):
    f = _write(tmp_path, "h.csv", HIST)
    err = _fails(["forecast", option, f], capsys, "has no rows")
    assert "fit-through" not in err


def test_forecast_too_short_history_does_not_blame_fit_through(tmp_path, capsys):
    f = _write(tmp_path, "h.csv", "series,date,tokens_per_day\nx,2024-01,1e9\nx,2024-02,1e9\n")
    err = _fails(["forecast", "--history", f], capsys, "x has 2", "3 observations")
    assert "fit-through" not in err and "None" not in err
    _fails(["forecast", "--history", f, "--fit-through", "2024-01"], capsys, "through 2024-01",
           "--fit-through")


@pytest.mark.parametrize("value, needle", [("1e300", "below 1e+20"), ("inf", "positive and finite"),
                                           ("0", "positive and finite")])
def test_forecast_implausible_volume(tmp_path, capsys, value, needle):
    rows = "".join(f"x,2024-0{m},{value},me\n" for m in range(1, 5))
    f = _write(tmp_path, "h.csv", HIST + rows)
    out = tmp_path / "out"
    _fails(["forecast", "--history", f, "-s", "x", "--out", out], capsys, "tokens_per_day", needle, "h.csv")
    assert not out.exists()


def test_forecast_bad_in_fit_flag(tmp_path, capsys):
    f = _write(tmp_path, "h.csv", "series,date,tokens_per_day,in_fit\nx,2024-01,1e9,yes\n")
    _fails(["forecast", "--history", f], capsys, "row 1 (line 2)", "in_fit")


def test_forecast_unknown_system_even_without_show_infra(capsys):
    _fails(["forecast", "--system", "dgx-h20"], capsys, "Unknown system 'dgx-h20'", "Did you mean 'dgx-h200'")


def test_forecast_unknown_model_even_without_show_infra(capsys):
    _fails(["forecast", "--model", "deepseek-v4"], capsys, "Unknown model 'deepseek-v4'", "deepseek-v3")


def test_library_history_checks():
    from tokenomics.forecast import check_history, forecast

    with pytest.raises(DataError, match=r"row 1 .*series name is empty"):
        check_history(pd.DataFrame({"series": [np.nan], "date": ["2024-01"], "tokens_per_day": [1e9]}))
    with pytest.raises(DataError, match="below 1e"):
        check_history(pd.DataFrame({"series": ["x"], "date": ["2024-01"], "tokens_per_day": [1e21]}))
    with pytest.raises(ValidationError) as info:
        forecast(history=pd.DataFrame(columns=["series", "date", "tokens_per_day"]))
    assert "fit-through" not in str(info.value) and "empty" in str(info.value)


# ---------------------------------------------------------------- watch


def _events(name: str, row: int, **changes) -> pd.DataFrame:
    df = catalog.load(name).reset_index(drop=True).astype(object)
    for k, val in changes.items():
        df.loc[row, k] = val
    return df


def test_watch_one_supernode_row_is_a_clear_error(tmp_path, capsys):
    text = (Path(catalog.data_dir()) / "supernode_events.csv").read_text().splitlines()
    f = _write(tmp_path, "sn.csv", "\n".join(text[:2]) + "\n")
    out = tmp_path / "out"
    _fails(["watch", *FAST, "--supernode-events", f, "--out", out], capsys,
           "need at least 2 dated counts", "found 0")
    assert not out.exists()


@pytest.mark.parametrize("column, value, needle", [
    ("hardware_family", "nvdia", "Did you mean 'nvidia'"),
    ("major_engine", "maybe", "major_engine must be one of yes, no"),
    ("as_of", "2025-13-40", "bad as_of '2025-13-40'"),
])
def test_watch_megakernel_categorical_and_dates(tmp_path, capsys, column, value, needle):
    f = tmp_path / "mk.csv"
    _events("megakernel_events", 3, **{column: value}).to_csv(f, index=False)
    _fails(["watch", *FAST, "--megakernel-events", f], capsys, "row 4 (line 5)", needle)


def test_watch_supernode_bad_as_of(tmp_path, capsys):
    f = tmp_path / "sn.csv"
    _events("supernode_events", 2, as_of="last year").to_csv(f, index=False)
    _fails(["watch", *FAST, "--supernode-events", f], capsys, "row 3 (line 4)", "bad as_of 'last year'")


def test_watch_library_validates_events():
    from tokenomics.watch import megakernels as mk
    from tokenomics.watch import supernodes as sn

    with pytest.raises(DataError, match="hardware_family must be one of"):
        mk.load_events(_events("megakernel_events", 0, hardware_family="intel-ish"))
    assert len(sn.production_ranges(_events("supernode_events", 0).head(1))) == 0  # no KeyError


# ---------------------------------------------------------------- market


@pytest.mark.parametrize("row, needle", [
    ("x,llama-3.1-8b,0.1,,inf,,s,2026", "output_usd_per_m_tok is not finite"),
    ("x,llama-3.1-8b,NaN,,0.2,,s,2026", "input_usd_per_m_tok is not a number"),
    ("x,llama-3.1-8b,inf,,0.2,,s,2026", "input_usd_per_m_tok is not finite"),
    ("x,llama-3.1-8b,0.1,,0.2,inf,s,2026", "tok_per_s_per_user is not finite"),
    ("x,llama-3.1-8b,0.1,nan,0.2,,s,2026", "cached_input_usd_per_m_tok is not a number"),
    ("x,llama-3.1-8b,0.1,0.5,0.2,,s,2026", "cached_input_usd_per_m_tok must not exceed input_usd_per_m_tok"),
    ("x,llama-3.1-8b,0.1,,0.2,,s,", "missing as_of; expected YYYY-MM-DD, YYYY-MM or YYYY"),
    ("x,llama-3.1-8b,0.1,,0.2,,s,last week", "bad as_of 'last week'"),
    ("x,llama-3.1-8b,0.1,,0.2,,s,2026-13", "bad as_of '2026-13'"),
])
def test_market_rejects_non_finite_and_dearer_cache(tmp_path, capsys, row, needle):
    f = _write(tmp_path, "p.csv", PRICES + row + "\n")
    _fails(["market", "--prices", f, "--format", "csv"], capsys, "row 1 (line 2)", needle)


def test_market_empty_optional_cells_still_mean_not_given(tmp_path):
    from tokenomics.market import load_prices

    f = _write(tmp_path, "p.csv", PRICES + "x,llama-3.1-8b,,,0.2,,s,2026\nx,llama-3.1-8b,0.2,0.1,0.4,50,s,2026\n")
    df = load_prices(f)
    assert np.isnan(df.loc[0, "input_usd_per_m_tok"]) and np.isnan(df.loc[0, "tok_per_s_per_user"])
    assert df.loc[1, "cached_input_usd_per_m_tok"] == 0.1 and df.loc[1, "tok_per_s_per_user"] == 50
    with pytest.raises(DataError, match="output_usd_per_m_tok is missing"):
        load_prices(_write(tmp_path, "q.csv", PRICES + "x,llama-3.1-8b,0.1,,,,s,2026\n"))


def test_market_effective_date_is_optional_but_must_be_a_date(tmp_path):
    from tokenomics.market import load_prices

    head = PRICES.rstrip("\n") + ",date\n"
    assert len(load_prices(_write(tmp_path, "p.csv", head + "x,llama-3.1-8b,0.1,,0.2,,s,2026,\n"))) == 1
    with pytest.raises(DataError, match=r"row 1 \(line 2\): bad date '2026-02-30'"):
        load_prices(_write(tmp_path, "q.csv", head + "x,llama-3.1-8b,0.1,,0.2,,s,2026,2026-02-30\n"))
