"""`chain.frontier(serving=...)`: a concurrency sweep, each point `chain.price` in that serving mode."""

from __future__ import annotations

import numpy as np
import pytest

from tokenomics import chain
from tokenomics.errors import ValidationError


def test_colocated_frontier_points_are_colocated_prices():
    f = chain.frontier("h200", "llama-3.1-8b", serving="colocated", concurrencies=[8, 64])
    df = f.to_frame()
    assert list(df["concurrency"]) == [8.0, 64.0] and set(df["serving_mode"]) == {"co-located"}
    for i, c in enumerate((8, 64)):
        r = chain.price("h200", "llama-3.1-8b", serving="colocated", concurrency=c)
        assert df["tok_per_s_per_chip"].iloc[i] == pytest.approx(float(r.tok_per_s_per_chip), rel=1e-12)
        assert df["usd_per_m_output_tok"].iloc[i] == pytest.approx(float(r.usd_per_m_output_tok), rel=1e-12)
    # more requests in flight: each user slower, the chip busier (the frontier's two axes)
    assert np.all(np.diff(df["tok_per_s_per_user"]) < 0) and np.all(np.diff(df["tok_per_s_per_chip"]) > 0)


def test_frontier_serving_arguments_are_one_line():
    with pytest.raises(ValidationError, match="sweep the decode-only steady state"):
        chain.frontier("h200", "llama-3.1-8b", serving="colocated", batches=[1, 2])
    with pytest.raises(ValidationError, match="concurrencies sweep"):
        chain.frontier("h200", "llama-3.1-8b", concurrencies=[1, 2])
    with pytest.raises(ValidationError, match="serving must be one of"):
        chain.frontier("h200", "llama-3.1-8b", serving="colo")
