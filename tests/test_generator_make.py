"""generator.make / features: one tile end to end, checked against the engine and first principles."""

import functools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support import all_grids, tile_with_alts

from engine import count
from engine.ladder import rate
from generator.complete import side_cells
from generator.features import multiplicity_features, pin_depth
from generator.make import GenerationFailed, GenParams, Targets, constraint_cells, make_tile, make_tile_stats
from generator.solution import random_solution, rows_to_grid
from generator.version import GENERATOR_VERSION, default_m_max
from tilelib import bits
from tilelib.audit import tile_problems
from tilelib.constraint import Constraint
from tilelib.errors import BadInput
from tilelib.rng import Stream
from tilelib.rules import violations
from tilelib.tile import Tile

seeds = st.binary(min_size=32, max_size=32)


@functools.cache
def _all6():
    return all_grids(6)


def _check_against_engine(tile, m_max):
    """FORMAT §4 features recomputed with the engine, independently of the generator."""
    n, f = tile.n, tile.features
    sol = tile.solution_grid
    assert violations(sol) == []
    g = tile.givens_grid
    assert not (g[0, 0] or g[0, -1] or g[-1, 0] or g[-1, -1])
    res = count(tile.puzzle(), k=m_max + 2)
    assert res.count == f.m <= m_max
    others = sorted(bits.to_blob(s) for s in res.solutions if not (s == sol).all())
    assert b"".join(others) == f.alts
    assert count(tile.puzzle(extra_sides=tile.seam_mask), k=2).count == 1  # pinning invariant
    # ladder features are those of the canonical orientation (the one the library stores)
    canon = tile.canonical()[0]
    lad = rate(canon.puzzle(extra_sides=canon.seam_mask))
    assert (f.ladder, f.bifurcations, f.used_unique, f.needs_unique, f.needs_bifurcation) == (
        lad.ladder,
        lad.bifurcations,
        int(lad.used_unique),
        int(lad.needs_unique),
        int(lad.needs_bifurcation),
    )
    assert f.version == GENERATOR_VERSION
    assert abs(f.blank - (1 - g.sum() / n**2)) < 1e-12
    canon, _ = tile.canonical()
    assert tile_problems(canon) == []


@settings(max_examples=12)
@given(seed=seeds, cfg=st.sampled_from([(1, 0), (2, 15), (2, 3), (2, 8)]))
def test_n6_tiles_match_first_principles(seed, cfg):
    m_max, seam = cfg
    tile = make_tile(GenParams.make(6, m_max, seam), Stream(seed, "t"))
    _check_against_engine(tile, m_max)
    ref = tile_with_alts(tile.solution_grid, tile.givens_grid, seam, _all6())
    a, b = tile.features, ref.features
    assert (a.m, a.alts, a.alt_sides, a.pins, a.pin_depth, a.flip) == (
        b.m,
        b.alts,
        b.alt_sides,
        b.pins,
        b.pin_depth,
        b.flip,
    )


@settings(max_examples=6)
@given(seed=seeds, n=st.sampled_from((8, 10)), seam=st.sampled_from((0, 15, 6)))
def test_tiles_match_engine(seed, n, seam):
    tile = make_tile(GenParams.make(n, None, seam), Stream(seed, "t"))
    _check_against_engine(tile, default_m_max(n))


@settings(max_examples=40)
@given(
    seed=seeds,
    n=st.sampled_from((6, 8, 10)),
    seam=st.sampled_from((0, 1, 5, 6, 15)),
    level=st.sampled_from((0, 0, 2, 3)),
)
def test_a_canonical_make_is_the_canonical_image_of_the_tile(seed, n, seam, level):
    """``make_tile(canonical=True)`` builds the canonical image from the rated grids, the features
    moved by ``features_image`` and the transform primed to 0: the same value, field for field, as
    canonicalising the tile made in its drawn orientation, and a fresh Tile of those fields (which
    computes its transform) agrees that it is canonical. Seam sides give tiles with alternatives,
    whose alts, nibbles, pins and flip mask all move."""
    p = GenParams.make(n, None, seam, Targets(level=level))
    drawn = make_tile(p, Stream(seed, "c"))
    made = make_tile(p, Stream(seed, "c"), canonical=True)
    canon, _ = drawn.canonical()
    assert made == canon and made.features == canon.features
    assert made.canonical() == (made, 0)
    fresh = Tile(made.n, made.solution, made.givens, made.seam_mask, made.features)
    assert fresh.canonical_transform() == 0 and fresh.hash == drawn.hash


def test_seam_tiles_with_alternatives_are_canonical_too():
    """The case the property test may draw rarely: m >= 2 with every field of the alternatives."""
    p = GenParams.make(8, 2, 15)
    ms = set()
    for i in range(12):
        drawn = make_tile(p, Stream(bytes([i]) * 32, "t"))
        made = make_tile(p, Stream(bytes([i]) * 32, "t"), canonical=True)
        assert made == drawn.canonical()[0]
        ms.add(made.features.m)
    assert 2 in ms


def test_seam_tiles_do_have_alternatives():
    ms = [make_tile(GenParams.make(8, 2, 15), Stream(bytes([i]) * 32, "t")).features.m for i in range(8)]
    assert max(ms) == 2 and min(ms) >= 1


def test_same_stream_same_tile():
    p = GenParams.make(8, 2, 15)
    assert make_tile(p, Stream(bytes(32), "x")) == make_tile(p, Stream(bytes(32), "x"))
    assert make_tile(p, Stream(bytes(32), "x")) != make_tile(p, Stream(bytes(32), "y"))


def test_targets_reject_too_easy_tiles():
    t = Targets(min_ladder=4)
    for i in range(3):
        tile, st_ = make_tile_stats(GenParams.make(6, 1, 0, t), Stream(bytes([i]) * 32, "t"))
        assert tile.features.ladder >= 4
    # Over a few seeds some first attempt was too easy and was redrawn.
    rejected = sum(
        make_tile_stats(GenParams.make(6, 1, 0, t), Stream(bytes([i]) * 32, "t"))[1].rejected_easy for i in range(10)
    )
    assert rejected > 0


def test_targets_out_of_tries_raises():
    t = Targets(min_ladder=5, needs_bifurcation=True, max_tries=1)
    outcomes = []
    for i in range(10):
        try:
            tile = make_tile(GenParams.make(6, 1, 0, t), Stream(bytes([i]) * 32, "t"))
            assert tile.features.ladder == 5 and tile.features.needs_bifurcation
            outcomes.append("ok")
        except GenerationFailed:
            outcomes.append("failed")
    assert "failed" in outcomes


def test_fixed_boundary_tile_keeps_the_boundary():
    n = 10
    src = random_solution(n, Stream(bytes(32), "src"))
    known = side_cells(n, 1 | 8)
    tile = make_tile(GenParams.make(n, None, 1 | 8), Stream(bytes(32), "t"), fixed=(src * known, known))
    assert ((tile.solution_grid == src) | (known == 0)).all()
    _check_against_engine(tile, default_m_max(n))


def test_fixed_boundary_without_completion_is_none():
    n = 6
    vals = np.zeros((n, n), dtype=np.uint8)
    vals[0] = vals[-1] = [0, 1, 0, 1, 1, 0]
    known = side_cells(n, 1 | 4)
    assert make_tile(GenParams.make(n, 1, 0), Stream(bytes(32), "t"), fixed=(vals, known)) is None


def test_constraint_cells():
    n = 6
    c = Constraint(n, (0b111111, 0b000011, 0, 0b100001), (0b010110, 0b000001, 0, 0b000000))
    vals, known = constraint_cells(c)
    assert known[0].tolist() == [1] * 6 and vals[0].tolist() == [0, 1, 0, 1, 1, 0]
    assert known[:, -1].tolist() == [1, 0, 0, 0, 1, 1] and vals[:, -1].tolist() == [0, 0, 0, 0, 0, 1]
    assert known[:, 0].tolist() == [1, 0, 0, 0, 0, 1] and vals[:, 0].tolist() == [0, 0, 0, 0, 0, 0]
    assert known[-1].tolist() == [1, 0, 0, 0, 0, 1]  # corners shared with the left and right sides
    # A corner fixed to two different values by its two sides is bad input.
    with pytest.raises(BadInput):
        constraint_cells(Constraint(n, (0b100000, 0, 0, 0b100000), (0b100000, 0, 0, 0)))


def test_multiplicity_features_reject_a_list_without_the_solution():
    a = random_solution(6, Stream(bytes(32), "a"))
    b = random_solution(6, Stream(bytes(32), "b"))
    with pytest.raises(ValueError):
        multiplicity_features(a, np.zeros((6, 6), dtype=np.uint8), [b])


def test_multiplicity_features_golden():
    sol = np.array(bits.Puzzle.parse("010101101010011001100110010011101100").values)
    alt = sol.copy()
    alt[:, [4, 5]] = alt[:, [5, 4]]  # swap the last two columns: right side (and top/bottom) change
    mf = multiplicity_features(sol, np.zeros((6, 6), dtype=np.uint8), [alt, sol])
    assert mf["m"] == 2 and mf["alts"] == bits.to_blob(alt)
    # Rows 0..3 differ in columns 4 and 5, rows 4 and 5 do not: top and right change.
    assert mf["alt_sides"] == bits.TOP | bits.RIGHT
    assert mf["pins"] == 3 and mf["pin_depth"] == 1 and mf["blank"] == 1.0
    flip = bits.from_blob(mf["flip"], 6)
    assert flip[:4, 4:].all() and not flip[4:].any() and not flip[:, :4].any()


def test_pin_depth():
    assert pin_depth([]) == 0
    assert pin_depth([1, 1]) == 1
    assert pin_depth([1, 2]) == 2
    assert pin_depth([3, 6, 12]) == 2
    assert pin_depth([1, 2, 4, 8]) == 4
    assert pin_depth([0]) == 5


def test_params_validation():
    for bad in (
        dict(n=7),
        dict(n=6, m_max=0),
        dict(n=6, seam_mask=16),
        dict(n=6, seam_mask=-1),
        dict(n=6, targets=Targets(min_ladder=6)),
        dict(n=6, targets=Targets(max_tries=0)),
    ):
        with pytest.raises(BadInput):
            GenParams.make(**bad)
    assert GenParams.make(16).m_max == 4 and GenParams.make(12).m_max == 3 and GenParams.make(8).m_max == 2


def _corner_swappable_solution(n=6):
    from generator.solution import random_rows
    from generator.thin import thin

    for i in range(200):
        rows = random_rows(n, Stream(bytes([i]) * 32, "swap"))
        if thin(n, rows, Stream(bytes(32), "t"), m_max=1, seam_mask=0) is None:
            return rows_to_grid(rows, n)
    raise AssertionError("no corner-swappable grid among 200 draws")


def test_boundary_whose_completions_all_swap_corners():
    sol = _corner_swappable_solution()
    known = np.ones((6, 6), dtype=np.uint8)
    known[0, 0] = known[0, -1] = known[-1, 0] = known[-1, -1] = 0
    # With seam_mask 0 no completion can be pinned: a clear failure, not nofit and not a hang.
    with pytest.raises(GenerationFailed):
        make_tile(GenParams.make(6, 1, 0), Stream(bytes(32), "t"), fixed=(sol * known, known))
    # Seam sides see the corners, so the swap is a legal alternative there.
    tile = make_tile(GenParams.make(6, 2, 15), Stream(bytes(32), "t"), fixed=(sol * known, known))
    assert tile.features.m == 2 and ((tile.solution_grid == sol) | (known == 0)).all()
    _check_against_engine(tile, 2)


def test_thinning_a_given_solution():
    sol = random_solution(8, Stream(bytes(32), "given"))
    tile = make_tile(GenParams.make(8, 2, 15), Stream(bytes(32), "t"), solution=sol)
    assert (tile.solution_grid == sol).all()
    _check_against_engine(tile, 2)
    swappable = _corner_swappable_solution()
    with pytest.raises(GenerationFailed):
        make_tile(GenParams.make(6, 1, 0), Stream(bytes(32), "t"), solution=swappable)
    bad = sol.copy()
    bad[0, 0] ^= 1
    with pytest.raises(BadInput):
        make_tile(GenParams.make(8, 2, 15), Stream(bytes(32), "t"), solution=bad)


def test_needs_targets_are_met():
    for i in range(2):
        f = make_tile(GenParams.make(6, 1, 0, Targets(needs_unique=True)), Stream(bytes([i]) * 32, "u")).features
        assert f.needs_unique == 1
        f = make_tile(GenParams.make(6, 1, 0, Targets(needs_bifurcation=True)), Stream(bytes([i]) * 32, "b")).features
        assert f.needs_bifurcation == 1 and f.ladder >= 4


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 2**32 - 1), st.sampled_from([6, 8, 10]), st.integers(0, 15), st.integers(1, 3))
def test_thinning_a_grid_as_solution_equals_completing_it_fully_fixed(seed, n, seam, m_max):
    """The drain thins complete grids with ``solution=grid``; that must give exactly what the
    fixed-cells path (a CP-SAT completion with every cell fixed, which can only return the grid)
    gives: the same tile, or the same failure."""
    grid = random_solution(n, Stream(seed.to_bytes(4, "big"), "sol"))
    params = GenParams.make(n, m_max=m_max, seam_mask=seam, targets=Targets(max_tries=1))

    def outcome(**kw):
        try:
            return make_tile(params, Stream(b"t" * 32, "make"), **kw)
        except GenerationFailed:
            return "failed"

    assert outcome(solution=grid) == outcome(fixed=(grid, np.ones((n, n), dtype=np.uint8)))
