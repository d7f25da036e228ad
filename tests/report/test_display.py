"""Notebook display: compact repr and HTML of every result object, one-call plots returning Axes."""

import subprocess
import sys

import numpy as np
import pytest

import tokenomics as tk
from tokenomics._display import MAX_HTML_CHARS, MAX_REPR_CHARS, Display, fmt_value


def _check_display(obj, *needles):
    assert isinstance(obj, Display)
    text, page = repr(obj), obj._repr_html_()
    assert 50 < len(text) <= MAX_REPR_CHARS, text
    assert 100 < len(page) <= MAX_HTML_CHARS
    assert page.startswith("<div") and "<table" in page
    assert type(obj).__name__ in text and "to_frame()" in text
    for n in needles:
        assert n in text and n in page, n
    assert str(obj) == text
    return text


@pytest.fixture(scope="module")
def watch_dashboard():
    return tk.watch.watch(n_boot=20, n_draws=40)


def test_price_repr_is_a_compact_table():
    p = tk.price("h200", "llama-3.1-8b")
    text = _check_display(p, "h200", "llama-3.1-8b", "usd_per_m_output_tok", "energy_j_per_tok")
    assert len(text) < 700 and len(text.splitlines()) <= 14
    assert len(p.to_frame().columns) > 20  # the full table is still there


def test_sweep_repr_shows_first_and_last_rows_and_constant_columns():
    f = tk.chain.frontier("h200", "llama-3.1-8b")
    text = _check_display(f, "batch")
    assert "every row: tp 1, ep 1, context_tok" in text  # constant columns on one line (the HTML keeps them as columns)
    assert "…" in text and text.splitlines()[-2].lstrip().startswith(str(int(f.batch[-1])))
    assert max(len(line) for line in text.splitlines()) <= 160


def test_step_and_system_step_display():
    s = tk.decode_step("h200", "llama-3.1-8b", "graph", batch=[1, 8, 32], context_tok=1024)
    _check_display(s, "StepResult", "step_time_s", "tok_per_s_per_user")
    ss = tk.system_step("dgx-h200", "llama-3.1-70b", "engine", tk.ParallelPlan(tp=8), batch=[1, 8])
    _check_display(ss, "dgx-h200", "comm_exposed_s")


def test_frontier_result_display_names_system_and_model():
    from tokenomics.perf.frontier import frontier

    fr = frontier("dgx-h200", "llama-3.1-70b", batches=[1, 8, 64])
    _check_display(fr, "dgx-h200", "llama-3.1-70b", "tok_per_s_per_chip")


def test_forecast_display():
    f = tk.forecast.forecast("google")
    _check_display(f, "google", "tokens_per_day_lo_80")


def test_watch_displays(watch_dashboard):
    d = watch_dashboard
    text = _check_display(d, "price", "megakernel", "supernode")
    assert len(text) < 1000
    _check_display(d.price, "decline_factor_per_year")


def test_tornado_display():
    from tokenomics.econ import tco, uncertainty

    t = uncertainty.tornado(tco.CostInputs.for_hardware("h200"), 600.0, 5000.0)
    _check_display(t, "swing_usd_per_m_tok")


def test_other_results_display():
    from tokenomics.econ import tco, uncertainty
    from tokenomics.watch import megakernels as mk
    from tokenomics.watch import supernodes as sn

    mc = uncertainty.monte_carlo(tco.CostInputs.for_hardware("h200"), 600.0, 5000.0, n_samples=200, seed=0)
    _check_display(mc, "price_usd_per_m_tok_p50")
    _check_display(tk.chain.disaggregated("b200", "h200", "llama-3.1-8b"), "instance_ratio")
    text = _check_display(mk.fit_adoption(n_boot=20), "latest_date")
    assert "2025-05-30" in text  # dates shown as dates
    _check_display(sn.delivery_ramp(n_draws=20), "units_p50")


def test_display_never_raises_and_caps_length():
    import pandas as pd

    class Broken(Display):
        def to_frame(self):
            raise RuntimeError("boom")

    assert "boom" in repr(Broken()) and "boom" in Broken()._repr_html_()

    class Huge(Display):
        def to_frame(self):
            return pd.DataFrame({f"c{i}": ["x" * 200] * 500 for i in range(40)})

    assert len(repr(Huge())) <= MAX_REPR_CHARS and len(Huge()._repr_html_()) <= MAX_HTML_CHARS


def test_fmt_value():
    assert fmt_value(np.float64(1234.5)) in ("1234", "1235") and fmt_value(2025.0) == "2025"
    assert fmt_value(np.float64(1.5e5)) == "150,000" and fmt_value(np.int64(150000)) == "150,000"
    assert fmt_value(np.nan) == "" and fmt_value(np.int64(12)) == "12" and fmt_value(np.True_) == "True"
    assert fmt_value(np.datetime64("2025-06-30")) == "2025-06-30"
    import pandas as pd

    assert fmt_value(pd.Timestamp("2025-06-30")) == "2025-06-30"


# ------------------------------------------------------------------------------------------ plots

def _labelled(ax):
    from matplotlib.axes import Axes

    assert isinstance(ax, Axes)
    assert ax.get_xlabel() and ax.get_ylabel() and ax.get_title()
    assert "[" in ax.get_ylabel()  # units
    assert any("Source" in t.get_text() for t in ax.texts)  # caption
    return ax


def test_plot_frontier_returns_axes_and_reuses_ax(tmp_path):
    import matplotlib.pyplot as plt

    from tokenomics import plotdata

    ax = _labelled(tk.plot.frontier(plotdata.frontier("h200", "llama-3.1-8b")))
    assert "USD per million output tokens" in ax.get_ylabel() and "tokens/s per user" in ax.get_xlabel()
    n = len(ax.get_lines())
    ax2 = tk.plot.frontier(plotdata.frontier(["h100-sxm", "b200"], "llama-3.1-8b"), ax=ax)
    assert ax2 is ax and len(ax.get_lines()) == n + 2
    assert len(ax.get_legend().get_texts()) == 3
    ax3 = _labelled(tk.plot.frontier(tk.chain.frontier("h200", "llama-3.1-8b"), y="tok_per_s_per_chip"))
    assert "per chip" in ax3.get_ylabel()
    from tokenomics.io import save_png

    p = save_png(ax.figure, tmp_path / "f.png")
    assert p.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    plt.close("all")


def test_plot_frontier_takes_objects_and_mixed_lists():
    import matplotlib.pyplot as plt

    from tokenomics import plotdata
    from tokenomics.perf.frontier import frontier

    ax = tk.plot.frontier([plotdata.frontier(tk.accelerator("h200"), "llama-3.1-8b"),
                           tk.chain.frontier("b200", "llama-3.1-8b")])
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["h200 / llama-3.1-8b (engine)",
                                                                  "b200 / llama-3.1-8b (engine)"]
    ax = tk.plot.frontier(frontier("dgx-h200", "llama-3.1-70b", batches=[1, 8, 64]), y="tok_per_s_per_chip")
    assert "dgx-h200" in ax.get_legend().get_texts()[0].get_text()
    plt.close("all")


def test_plot_frontier_rejects_bad_y_and_names():
    with pytest.raises(tk.ValidationError, match="y must be one of"):
        tk.plot.frontier(tk.chain.frontier("h200", "llama-3.1-8b"), y="watts")
    with pytest.raises(tk.ValidationError, match="draws data it is given.*plotdata.frontier"):
        tk.plot.frontier("h200")


def test_plot_log_ticks_read_as_numbers():
    """Log axes are labelled 1-2-5 in plain numbers and dollars: '$0.10', '20', never '3x10^1'."""
    import matplotlib.pyplot as plt

    fig = tk.plot.frontier(tk.chain.frontier("h200", "llama-3.1-8b")).figure
    fig.canvas.draw()
    ax = fig.axes[0]
    ys = [t.get_text() for t in ax.get_yticklabels() if t.get_text()]
    xs = [t.get_text() for t in ax.get_xticklabels() if t.get_text()]
    assert ys and all(t.startswith("$") for t in ys) and xs
    assert not [t for t in ys + xs if "times" in t or "^" in t or "e+" in t]
    assert tk.plot.tick_label(0.1, usd=True) == "$0.10" and tk.plot.tick_label(20.0) == "20"
    plt.close("all")


def test_plot_forecast_returns_axes():
    import matplotlib.pyplot as plt

    from tokenomics import plotdata

    ax = _labelled(tk.plot.forecast(tk.forecast.forecast("google"), references=plotdata.references()))
    assert "tokens per day" in ax.get_ylabel() and ax.get_yscale() == "log"
    assert len(ax.collections) >= 2  # the 80 % and 95 % bands
    fig, axes = plt.subplots(1, 2)
    assert tk.plot.forecast(tk.forecast.forecast("google"), ax=axes[1]) is axes[1]
    plt.close("all")


def test_plot_breakdown_and_tornado():
    import matplotlib.pyplot as plt

    from tokenomics import plotdata

    ax = _labelled(tk.plot.price_breakdown(plotdata.breakdown(["h200", "b200"], "llama-3.1-8b"),
                                           tiers=plotdata.tiers()))
    assert "USD per chip-hour" in ax.get_ylabel()
    ax = tk.plot.tornado(plotdata.tornado("h200", "llama-3.1-8b"))
    assert "USD per million output tokens" in ax.get_xlabel() and ax.get_title().startswith("Sensitivity")
    # two colours, low and high, and inputs by display name (no snake_case)
    colors = {tuple(p.get_facecolor()) for p in ax.patches}
    assert len(colors) == 2
    assert not [t.get_text() for t in ax.get_yticklabels() if "_" in t.get_text()]
    plt.close("all")


def test_plot_watch_metrics(watch_dashboard):
    import matplotlib.pyplot as plt

    from tokenomics import plotdata

    fig, axes = plt.subplots(1, 5)
    for metric, ax in zip(("price", "megakernel", "speedup", "yield", "supernode"), axes):
        prices = plotdata.watch_prices() if metric == "price" else None
        assert _labelled(tk.plot.watch(metric, watch_dashboard, ax=ax, prices=prices)) is ax
    with pytest.raises(tk.ValidationError, match="metric must be one of"):
        tk.plot.watch("gpu-prices", watch_dashboard)
    plt.close("all")


def test_plot_import_is_light():
    code = "import sys, tokenomics.plot; print('matplotlib' in sys.modules, 'pandas' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["False", "False"]


def test_notebook_example_runs(tmp_path):
    """examples/notebook_analysis.py answers its three questions and writes four figures."""
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    p = subprocess.run([sys.executable, str(root / "examples" / "notebook_analysis.py"), "--out", str(tmp_path)],
                       capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stderr[-2000:]
    assert "PriceResult: h200 · llama-3.1-8b" in p.stdout and "ForecastResult: google" in p.stdout
    assert "datetime64" in p.stdout
    pngs = sorted(f.name for f in tmp_path.glob("*.png"))
    assert pngs == ["q1_price_vs_interactivity.png", "q2_cost_and_sensitivity.png", "q3_api_prices.png",
                    "q3_demand_fan.png"]
    assert all((tmp_path / n).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" for n in pngs)


# ------------------------------------------------------------------------------------------ dates

def test_watch_tables_carry_datetime64(watch_dashboard, tmp_path):
    import pandas as pd

    from tokenomics.cli._common import frame_to_json
    from tokenomics.io import write_frame
    from tokenomics.watch import megakernels as mk
    from tokenomics.watch import prices as pr
    from tokenomics.watch import supernodes as sn

    d = watch_dashboard
    tables = {
        "megakernel events": (mk.load_events(), ["date"]),
        "supernode events": (sn.load_events(), ["date"]),
        "api prices": (pr.load_prices(), ["date"]),
        "price events": (d.price.events, ["date"]),
        "decline rates": (d.price.to_frame(), ["first_date", "last_date"]),
        "headroom": (d.price.headroom, ["date"]),
        "adoption index": (d.adoption_index, ["date"]),
        "adoption fit": (d.adoption_fits["all"].to_frame(), ["latest_date", "as_of", "level3_date", "level3_lo"]),
        "yield": (d.yields, ["date", "date_lo", "date_hi"]),
        "ramp": (d.ramp.to_frame(), ["date"]),
        "ramp points": (d.ramp.points, ["date"]),
        "capacity": (d.capacity, ["date"]),
        "dashboard": (d.to_frame(), ["as_of"]),
    }
    for name, (df, cols) in tables.items():
        for c in cols:
            assert pd.api.types.is_datetime64_any_dtype(df[c]), (name, c, df[c].dtype)
    # month- and year-only dates keep their text and precision, also when a loaded table is passed again
    ev = sn.load_events()
    assert {"day", "month", "year"} <= set(ev["date_precision"]) and "date_text" in ev
    again = sn.load_events(ev)
    assert (again["date_precision"] == ev["date_precision"]).all() and (again["date"] == ev["date"]).all()
    # CSV and JSON keep ISO dates
    events = d.price.events
    js = frame_to_json(events.head(2))
    assert '"date": "20' in js and "T00:00:00" not in js
    csv = write_frame(events, tmp_path / "e.csv").read_text()
    assert csv.splitlines()[1].split(",")[0] == events["date"].iloc[0].strftime("%Y-%m-%d")
    jf = write_frame(d.yields, tmp_path / "y.json").read_text()
    assert "T00:00:00" not in jf and '"date_lo":null' in jf.replace(" ", "")


def test_cli_table_breaks_long_headers_between_words(capsys):
    """A table wider than its width (ten columns of 11-21-character names over 6-character
    cells, written to a pipe: 120 columns) gets its most overhanging headers broken between words, never
    inside one (rich alone folds ``coverage 80`` into ``coverage 8`` / ``0``); a table that fits
    keeps its headers on one line. Headers are display names (``coverage_80`` -> ``coverage 80``)."""
    import pandas as pd

    from tokenomics.cli._common import Format, emit

    names = ["sample", "horizon", "n_points", "n_series", "coverage_80", "coverage_95",
             "median_width_95_log10", "mae_log10", "mae_naive_log10", "mae_vs_naive"]
    emit(pd.DataFrame([[0.8571] * len(names)], columns=names), Format.table)
    out = capsys.readouterr().out
    words = {w for line in out.splitlines() for w in line.replace("┃", " ").split()}
    assert {"coverage", "80", "95", "median", "width", "log10", "naive"} <= words
    assert "8" not in words and "0" not in words  # no number cut in two
    assert max(len(line) for line in out.splitlines()) <= 120
    emit(pd.DataFrame([[1, 2]], columns=["case_id", "mae_log10"]), Format.table)
    assert "case id" in capsys.readouterr().out


def test_cli_common_docstring_examples_are_true():
    import doctest

    from tokenomics.cli import _common

    assert doctest.testmod(_common).failed == 0
