"""Commands an analyst asked for: a sweep with a service-level objective (``[slo]``),
``watch --prices FILE`` and a multi-system frontier plot."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from tokenomics import sweep
from tokenomics.cli import app, main

GRID = """
[grid]
hardware = ["h200"]
model = ["llama-3.1-8b"]
execution = ["graph", "engine"]
batch = [1, 8, 32, 128, 512]
context_tok = [2048, 32768]
margin_frac = [0.0, 0.5]

[sweep]
chunk_configs = 7
"""
SLO = """
[slo]
min_tok_per_s_per_user = 100
max_ttft_s = 1.0
"""


def _grid(text):
    return sweep.parse_grid(__import__("tomllib").loads(text))


# -- sweep [slo] ------------------------------------------------------------------------------

def test_slo_rows_marked_and_best_only_among_them():
    rows = sweep.evaluate(_grid(GRID + SLO))
    # reference: the same grid without an SLO, filtered by hand in pandas
    free = sweep.evaluate(_grid(GRID))
    want = free.fits & (free.tok_per_s_per_user >= 100) & (free.ttft_s <= 1.0)
    assert want.any() and not want.all() and (want != free.fits).any()  # the SLO bites, not everywhere
    np.testing.assert_array_equal(rows.meets_slo.to_numpy(), want.to_numpy())
    # every other column is unchanged: the SLO marks rows, it drops none
    pd.testing.assert_frame_equal(rows.drop(columns="meets_slo"), free.drop(columns="meets_slo"))
    summ = sweep.run(_grid(GRID + SLO)).to_frame()
    for ex, row in summ.set_index("execution").iterrows():
        ok = free[want & (free.execution == ex)]
        assert row.n_meet_slo == len(ok)
        assert row.n_fit == int(free[free.execution == ex].fits.sum())
        i = ok.usd_per_m_output_tok.idxmin()
        assert row.best_usd_per_m_output_tok == ok.usd_per_m_output_tok[i]
        assert row.best_config_id == ok.config_id[i] and row.best_batch == ok.batch[i]
        # the unconstrained cheapest is a larger batch that misses 100 tok/s per user
        assert row.best_usd_per_m_output_tok > free[free.execution == ex].usd_per_m_output_tok.min()


def test_no_slo_means_meets_slo_is_fits_and_summary_as_before():
    rows = sweep.evaluate(_grid(GRID))
    np.testing.assert_array_equal(rows.meets_slo.to_numpy(), rows.fits.to_numpy())
    summ = sweep.run(_grid(GRID)).to_frame()
    assert (summ.n_meet_slo == summ.n_fit).all()
    for ex, row in summ.set_index("execution").iterrows():
        assert row.best_usd_per_m_output_tok == rows[rows.execution == ex].usd_per_m_output_tok.min()


def test_slo_nobody_meets_leaves_best_empty():
    summ = sweep.run(_grid(GRID + "[slo]\nmin_tok_per_s_per_user = 1e6\n")).to_frame()
    assert (summ.n_meet_slo == 0).all() and summ.best_usd_per_m_output_tok.isna().all()
    assert (summ.best_batch == -1).all()


def test_slo_loop_baseline_agrees():
    g = _grid(GRID + SLO)
    rows = sweep.evaluate(g)
    loop = sweep.evaluate_loop(g, rows.config_id.to_numpy()[::3])
    np.testing.assert_array_equal(loop.meets_slo.to_numpy(), rows.meets_slo.to_numpy()[::3])


def test_meets_slo_is_vectorized_over_any_shape():
    fits = np.array([[True, True], [True, False]])
    tps = np.array([[50.0, 150.0], [np.nan, 500.0]])
    ttft = np.array([[0.5, 0.5], [0.5, 0.1]])
    # hand: 50 < 100 misses; 150 ok; NaN (unpriced) misses; does not fit misses
    np.testing.assert_array_equal(sweep.meets_slo(fits, tps, ttft, 100.0, 1.0), [[False, True], [False, False]])
    np.testing.assert_array_equal(sweep.meets_slo(fits, tps, ttft), fits)


def test_sweep_cli_slo_table_json_and_file(tmp_path):
    p = tmp_path / "g.toml"
    p.write_text(GRID + SLO)
    r = CliRunner().invoke(app, ["sweep", str(p), "--no-progress"])
    assert r.exit_code == 0, r.output
    assert "SLO" in r.stdout.split("┡")[0]  # the n_meet_slo column's header
    assert "cheapest among rows meeting the SLO" in " ".join(r.stdout.split())
    out = tmp_path / "rows.csv"
    r = CliRunner().invoke(app, ["sweep", str(p), "-f", "json", "--no-progress", "--out", str(out)])
    assert r.exit_code == 0, r.output
    js = json.loads(r.stdout)
    assert all("n_meet_slo" in x for x in js)
    got = pd.read_csv(out)
    assert got.meets_slo.dtype == bool and got.meets_slo.sum() == sum(x["n_meet_slo"] for x in js)


@pytest.mark.parametrize("extra, msg", [
    ("[slo]\nmin_tok_per_s_per_user = -5\n", "min_tok_per_s_per_user must be a positive number"),
    ("[slo]\nmax_ttft_s = \"fast\"\n", "max_ttft_s must be a positive number"),
    ("[slo]\nmax_ttft_s = 0\n", "max_ttft_s must be a positive number"),
    ("[slo]\nmax_ttft = 1\n", "Did you mean 'max_ttft_s'"),
    ("[slo]\nmin_tok_per_s_per_user = true\n", "min_tok_per_s_per_user must be a positive number"),
])
def test_sweep_bad_slo_exit_2_one_line(tmp_path, capsys, extra, msg):
    p = tmp_path / "g.toml"
    p.write_text(GRID + extra)
    with pytest.raises(SystemExit) as exc:
        main(["sweep", str(p), "--no-progress"])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert msg in err and err.count("\n") == 1 and "Traceback" not in err


def test_slo_key_in_grid_section_points_to_slo(tmp_path, capsys):
    p = tmp_path / "g.toml"
    p.write_text(GRID.replace("[grid]\n", "[grid]\nmax_ttft_s = 1.0\n"))
    with pytest.raises(SystemExit) as exc:
        main(["sweep", str(p), "--no-progress"])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert "put it under an [slo] section" in err and err.count("\n") == 1


def test_example_slo_grid_best_meets_its_slo():
    g = sweep.load_grid("examples/grid_slo.toml")
    assert (g.min_tok_per_s_per_user, g.max_ttft_s) == (50.0, 2.0)
    rows = sweep.evaluate(g).set_index("config_id")
    for _, row in sweep.run(g).to_frame().iterrows():
        best = rows.loc[row.best_config_id]
        assert best.meets_slo and best.tok_per_s_per_user >= 50 and best.ttft_s <= 2.0
