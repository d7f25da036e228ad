import os

import matplotlib

matplotlib.use("Agg")
os.environ.setdefault("COLUMNS", "160")


import pytest  # noqa: E402

#: Data search passes that added token_demand rows scored as new points, oldest first (the
#: ``search_pass`` column of ``datasets/token_demand.csv``; ``datasets/README.md`` describes each).
DEMAND_PASSES = (6, 9, 13, 14, 15, 16)


@pytest.fixture
def demand_as_of():
    """``demand_as_of(n)``: the in-fit rows of ``datasets/token_demand.csv`` as they stood once search
    pass ``n`` (one of :data:`DEMAND_PASSES`) was added, without the later passes' rows, and the mask
    of that pass's rows: a pass is scored against the dataset of its time."""
    import pandas as pd

    from tokenomics import catalog

    def rows(n: int):
        df = catalog.load("token_demand")
        df = df[df["in_fit"].astype(int) == 1]
        added = pd.to_numeric(df["search_pass"], errors="coerce")
        later = added.isin([p for p in DEMAND_PASSES if p > n]).to_numpy()
        return df[~later], (added[~later] == n)

    return rows


@pytest.fixture
def pass_scores(demand_as_of):
    """``pass_scores(n)``: (rows search pass ``n`` added, their rolling-origin scores by the method fitted
    on the dataset without them, :func:`tokenomics.forecast.backtest.score_new_points`, and each
    figure's score from its latest origin)."""
    from tokenomics.forecast.backtest import score_new_points

    def scores(n: int):
        df, late = demand_as_of(n)
        s = score_new_points(df[~late], df)
        return int(late.sum()), s, s.sort_values("origin_year").groupby(["series", "target_year"]).tail(1)

    return scores
