import os
import tempfile

import matplotlib

matplotlib.use("Agg")
os.environ.setdefault("COLUMNS", "160")
# the user's own models (~/.tokenomics/models.csv) never leak into a test: an empty home of its own
os.environ["TOKENOMICS_HOME"] = tempfile.mkdtemp(prefix="tokenomics-home-")


import pytest  # noqa: E402

#: Note markers of the token_demand rows each later search pass added, oldest first.
DEMAND_PASSES = ("after stop 20's method freeze", "ninth search pass, after stop 23",
                 "stop 49, after the method freeze", "stop 50, after the method freeze",
                 "stop 51, after the method freeze", "stop 52, after the method freeze")


@pytest.fixture
def demand_as_of():
    """``demand_as_of(marker)``: the in-fit rows of ``datasets/token_demand.csv`` as they stood once
    the pass with that note marker (:data:`DEMAND_PASSES`) was added, without later passes' rows, and
    the mask of that pass's rows: a pass is scored against the dataset of its time."""
    from tokenomics import catalog

    def rows(marker: str):
        df = catalog.load("token_demand")
        df = df[df["in_fit"].astype(int) == 1]
        note = df["note"].astype(str)
        for later in DEMAND_PASSES[DEMAND_PASSES.index(marker) + 1:]:
            df, note = df[~note.str.contains(later, regex=False)], note[~note.str.contains(later, regex=False)]
        return df, note.str.contains(marker, regex=False)

    return rows


@pytest.fixture
def pass_scores(demand_as_of):
    """``pass_scores(marker)``: (rows the pass added, their rolling-origin scores by the method fitted
    on the dataset without them, :func:`tokenomics.forecast.backtest.score_new_points`, and each
    figure's score from its latest origin)."""
    from tokenomics.forecast.backtest import score_new_points

    def scores(marker: str):
        df, late = demand_as_of(marker)
        s = score_new_points(df[~late], df)
        return int(late.sum()), s, s.sort_values("origin_year").groupby(["series", "target_year"]).tail(1)

    return scores
