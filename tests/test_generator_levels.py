"""Chosen difficulty: --max-ladder, target-level thinning (Unruly's rule), and stored levels that re-rate.

Every tile's stored ladder features must equal a fresh rating of the stored
(canonical) row; a target-level tile rates exactly its level and never more
than its ceiling; the row-int feature path equals the numpy one.
"""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine import count
from engine.ladder import rate, solve_with
from generator.features import blob_rows, features, features_rows, rows_blob
from generator.make import GenerationFailed, GenParams, Targets, make_tile, make_tile_stats, thin_to_level
from generator.solution import random_rows, rows_to_grid
from generator.thin import corner_free_mask, removal_order, thin
from tilelib import bits
from tilelib.audit import tile_problems
from tilelib.errors import BadInput
from tilelib.rng import Stream
from tilelib.store import Library

seeds = st.binary(min_size=32, max_size=32)


def _rerate(canon):
    """The ladder features of a stored (canonical) row, computed afresh."""
    lad = rate(canon.puzzle(extra_sides=canon.seam_mask))
    return (lad.ladder, lad.bifurcations, int(lad.used_unique), int(lad.needs_unique), int(lad.needs_bifurcation))


def _stored(f):
    return (f.ladder, f.bifurcations, f.used_unique, f.needs_unique, f.needs_bifurcation)


@settings(max_examples=20, deadline=None)
@given(
    seed=seeds, n=st.sampled_from((6, 8, 10, 12)), seam=st.sampled_from((0, 15, 5)), level=st.sampled_from((0, 2, 3))
)
def test_stored_level_equals_a_rerating_of_the_stored_row(tmp_path_factory, seed, n, seam, level):
    tile = make_tile(GenParams.make(n, None, seam, Targets(level=level)), Stream(seed, "lv"))
    path = tmp_path_factory.mktemp("lib") / "t.sqlite"
    with Library.open(path, create=True) as lib:
        h, _ = lib.insert(tile)
        row = lib.get(h)
    assert _stored(row.features) == _rerate(row)
    assert tile_problems(row) == []
    if level:
        assert row.features.ladder == level


@pytest.mark.parametrize(
    "n,seam,targets",
    [
        (6, 0, Targets()),
        (10, 0, Targets(level=2)),
        (12, 5, Targets(level=3)),
        (16, 0, Targets(max_ladder=4)),
        (8, 15, Targets(min_ladder=4)),
    ],
)
def test_every_row_library_generate_stores_rerates_to_its_level(tmp_path, n, seam, targets):
    """Through ``append_generated`` (what `tiles library generate` runs, the numpy-free path):
    every stored row's ladder features equal a fresh rating of that row, within the targets."""
    from generator.batch import append_generated
    from tilelib.store import row_to_tile

    p = GenParams.make(n, None, seam, targets)
    rep = append_generated(tmp_path / "g.sqlite", p, 12, bytes(range(32)))
    with Library.open(tmp_path / "g.sqlite") as lib:
        rows = [row_to_tile(r) for r in lib.iter_rows()]
    assert len(rows) == rep.inserted > 0
    for row in rows:
        assert _stored(row.features) == _rerate(row)
        assert targets.met(row.features)
        assert tile_problems(row) == []


@settings(max_examples=25, deadline=None)
@given(seed=seeds, n=st.sampled_from((6, 8, 10, 16)), seam=st.sampled_from((0, 15, 3, 8)), level=st.integers(1, 3))
def test_target_level_tiles_never_exceed_their_ceiling(seed, n, seam, level):
    """Thinning by the ladder at `level` leaves a puzzle the level-`level` solve finishes (so the
    tile rates at most `level`), with m <= m_max and the seam sides pinning every alternative."""
    p = GenParams.make(n, None, seam, Targets(level=level, max_tries=400))
    try:
        tile = make_tile(p, Stream(seed, "ceil"))
    except GenerationFailed:
        return  # level 1 needs a start that runs alone can finish; rare seeds run out
    f = tile.features
    assert f.ladder == level
    status, _ = solve_with(tile.puzzle(extra_sides=seam), range(1, level + 1))
    assert status == "solved"
    res = count(tile.puzzle(), k=p.m_max + 2)
    assert res.count == f.m <= (p.m_max if seam else 1)
    assert count(tile.puzzle(extra_sides=seam), k=2).count == 1


@settings(max_examples=25, deadline=None)
@given(seed=seeds, n=st.sampled_from((6, 8, 10)), level=st.integers(1, 4))
def test_thin_to_level_is_minimal_for_its_rule(seed, n, level):
    """No given left by level thinning can go without the level-`level` solve failing."""
    rows = random_rows(n, Stream(seed, "sol"))
    res = thin_to_level(n, rows, Stream(seed, "thin"), level)
    if res is None:
        return
    grid = rows_to_grid(rows, n)
    giv = rows_to_grid(res.givens, n)
    assert not (giv[0, 0] or giv[0, -1] or giv[-1, 0] or giv[-1, -1])
    assert solve_with(bits.Puzzle.from_grid(grid, giv), range(1, level + 1))[0] == "solved"
    for r, c in zip(*np.nonzero(giv), strict=True):
        fewer = giv.copy()
        fewer[r, c] = 0
        assert solve_with(bits.Puzzle.from_grid(grid, fewer), range(1, level + 1))[0] != "solved"


@settings(max_examples=15, deadline=None)
@given(seed=seeds, n=st.sampled_from((6, 8)), level=st.integers(1, 4))
def test_thin_to_level_is_the_greedy_loop_over_the_python_ladder(seed, n, level):
    """The C thinning (which stops a solve once it has deduced the cell just removed) keeps exactly
    the givens of the plain greedy loop: each cell of the removal order taken away, and put back
    unless the Python ladder's full solve with levels 1..level still finishes."""
    rows = random_rows(n, Stream(seed, "sol"))
    order = removal_order(n, Stream(seed, "thin"))
    grid = rows_to_grid(rows, n)
    known = rows_to_grid(corner_free_mask(n), n)

    def solves(k) -> bool:
        return solve_with(bits.Puzzle.from_grid(grid, k), range(1, level + 1))[0] == "solved"

    res = thin_to_level(n, rows, Stream(seed, "thin"), level)
    if not solves(known):
        assert res is None
        return
    for i in order:
        r, c = divmod(i, n)
        known[r, c] = 0
        if not solves(known):
            known[r, c] = 1
    assert res is not None and (rows_to_grid(res.givens, n) == known).all()


def test_max_ladder_is_a_ceiling():
    for i in range(6):
        tile, st_ = make_tile_stats(GenParams.make(8, None, 0, Targets(max_ladder=3)), Stream(bytes([i]) * 32, "mx"))
        assert tile.features.ladder <= 3
    # minimal 8x8 puzzles often rate 4-5, so the ceiling really rejected some attempts
    rejected = sum(
        make_tile_stats(GenParams.make(8, None, 0, Targets(max_ladder=3)), Stream(bytes([i]) * 32, "mx"))[
            1
        ].rejected_easy
        for i in range(6)
    )
    assert rejected > 0


def test_level_params_validation():
    for bad in (
        Targets(max_ladder=6),
        Targets(max_ladder=-1),
        Targets(min_ladder=4, max_ladder=3),
        Targets(level=5),
        Targets(level=-1),
        Targets(level=2, min_ladder=3),
        Targets(level=4, max_ladder=3),
    ):
        with pytest.raises(BadInput):
            GenParams.make(8, targets=bad)


@settings(max_examples=40, deadline=None)
@given(seed=seeds, n=st.sampled_from((6, 8, 10)), cfg=st.sampled_from([(1, 0), (2, 15), (3, 5), (4, 10)]))
def test_row_features_equal_numpy_features(seed, n, cfg):
    m_max, seam = cfg
    rows = random_rows(n, Stream(seed, "sol"))
    res = thin(n, rows, Stream(seed, "thin"), m_max=m_max, seam_mask=seam)
    if res is None:
        return
    sol, giv = rows_to_grid(rows, n), rows_to_grid(res.givens, n)
    lad = rate(bits.Puzzle.from_grid(sol, giv))
    want = features(sol, giv, seam, [rows_to_grid(s, n) for s in res.solutions], lad)
    assert features_rows(n, rows, res.givens, res.solutions, lad) == want
    assert rows_blob(rows, n) == bits.to_blob(sol)
    assert blob_rows(bits.to_blob(giv), n) == list(res.givens)
