"""The co-located solve and target-speed search (`serve`, `serve_at_target`): the closed loop closes,
a search's answer is `serve` at the concurrency it found, and a vectorized solve is the scalar one."""

from __future__ import annotations

import numpy as np
import pytest

from tokenomics.deployment import resolve
from tokenomics.perf import serving


@pytest.fixture(scope="module", params=["dense", "wide-ep"])
def dep(request):
    if request.param == "dense":
        return resolve("llama-3.1-8b", hardware="h200")
    return resolve("deepseek-v3", system="gb200-nvl72", tp=2, ep=36)  # attention data parallel over 18 ranks


def _model(dep):
    ep, t_eng = serving._engine_cost_s(dep)
    return serving._colocated_model(dep, 1024.0, 1024.0, 1536.0, ep, t_eng, None, None, 1.0, None)


@pytest.mark.parametrize("c", [1, 7, 64, 300])
def test_the_closed_loop_closes(dep, c):
    # Little's law: the requests in flight at the solved batch are the concurrency (to the solve's 1e-12)
    r = serving.serve(dep, isl_tok=1024, osl_tok=1024, concurrency=c)
    b = float(r.batch)
    assert float(_model(dep).requests([b])[0]) == pytest.approx(c, rel=1e-9)
    # ... and it is the smallest batch that holds them: a slightly smaller batch holds fewer
    assert float(_model(dep).requests([b * (1 - 1e-6)])[0]) < c


def test_vectorized_solve_is_the_scalar_solve(dep):
    m = _model(dep)
    cs = np.array([3.0, 50.0, 200.0, 201.0])
    b, slot = m.solve(cs, np.minimum(cs, max(1.0, m.slot_cap)))
    for ci, bi in zip(cs, b):
        assert float(serving.serve(dep, isl_tok=1024, osl_tok=1024, concurrency=ci).batch) == pytest.approx(bi, rel=1e-12)
    assert not slot.any()


def test_a_kept_solve_is_a_fresh_solve(dep):
    # a repeated solve returns its kept answer, as a copy of its own; a model built afresh solves
    # the same (to the last digits: its whole batches may be timed in other groups)
    m = _model(dep)
    cs = np.array([5.0, 120.0])
    tops = np.minimum(cs, max(1.0, m.slot_cap))
    first = m.solve(cs, tops)
    kept = first[0].copy(), first[1].copy()
    first[0][:] = -1.0  # the caller's copy, not the kept one
    again = m.solve(cs, tops)
    np.testing.assert_array_equal(again[0], kept[0])
    np.testing.assert_array_equal(again[1], kept[1])
    fresh = serving._Colocated(dep, 1024.0, 1024.0, 1536.0, {"ttft_overhead_s": m.ep["ttft_overhead_s"]}, m.t_eng,
                               None, 1.0, None).solve(cs, tops)
    np.testing.assert_allclose(fresh[0], kept[0], rtol=1e-12)
    np.testing.assert_array_equal(fresh[1], kept[1])


def test_target_search_answer_is_serve_at_that_concurrency(dep):
    target = 40.0
    r = serving.serve_at_target(dep, isl_tok=1024, osl_tok=1024, tok_per_s_per_user=target)
    c = r.concurrency
    s = serving.serve(dep, isl_tok=1024, osl_tok=1024, concurrency=c)
    assert float(r.output_tok_per_s_per_gpu) == pytest.approx(float(s.output_tok_per_s_per_gpu), rel=1e-12)
    assert float(s.tok_per_s_per_user) >= target
    more = serving.serve(dep, isl_tok=1024, osl_tok=1024, concurrency=c + 1)
    assert float(more.tok_per_s_per_user) < target  # one request more misses the target
    # the bisection on whole requests the search replaces finds the same concurrency
    lo, hi = 1, int(max(1, _model(dep).slot_cap))
    while hi - lo > 1:
        mid = (lo + hi) // 2
        ok = float(serving.serve(dep, isl_tok=1024, osl_tok=1024, concurrency=mid).tok_per_s_per_user) >= target
        lo, hi = (mid, hi) if ok else (lo, mid)
    assert lo == c
