"""The library audit: good tiles pass; every kind of bad row is reported (inputs it must reject)."""

import dataclasses

import numpy as np
import pytest
from support import all_grids, random_givens, tile_with_alts

from referee.checks import verify_library
from tilelib import bits
from tilelib.audit import feature_problems, min_hitting_sides, tile_problems
from tilelib.tile import Tile

ALL6 = all_grids(6)


def good_tile(seed=3):
    """A real n=6 tile with m >= 2 whose alternatives are all pinned by its four seam sides."""
    rng = np.random.default_rng(seed)
    while True:
        sol = ALL6[rng.integers(len(ALL6))]
        giv = random_givens(6, rng, density=0.45)
        t = tile_with_alts(sol, giv, 15, ALL6)
        if 2 <= t.features.m <= 3 and not feature_problems(t):
            return t.canonical()[0]


def test_good_tiles_have_no_problems():
    for seed in range(5):
        assert tile_problems(good_tile(seed)) == []


def with_features(tile, **kw):
    return dataclasses.replace(tile, features=dataclasses.replace(tile.features, **kw))


@pytest.mark.parametrize(
    "mutate,expect",
    [
        (lambda t: with_features(t, m=t.features.m + 1), "alts hold"),
        (lambda t: with_features(t, pins=0), "pins"),
        (lambda t: with_features(t, pin_depth=t.features.pin_depth + 1), "pin_depth"),
        (lambda t: with_features(t, blank=0.5), "blank"),
        (lambda t: with_features(t, alt_sides=t.features.alt_sides ^ 1), "alt_sides nibble"),
        (lambda t: with_features(t, flip=bytes(len(t.features.flip))), "flip"),
        (lambda t: dataclasses.replace(t, seam_mask=0), "pinning invariant"),
    ],
)
def test_feature_lies_are_caught(mutate, expect):
    bad = mutate(good_tile())
    assert any(expect in p for p in tile_problems(bad) + feature_problems(bad)), tile_problems(bad)


def test_broken_solution_and_corner_givens_are_caught():
    t = good_tile()
    sol = np.array(t.solution_grid)
    sol[2, 2] ^= 1
    bad = Tile(6, bits.to_blob(sol), t.givens, t.seam_mask)
    assert any("breaks the rules" in p for p in tile_problems(bad))
    giv = np.array(t.givens_grid)
    giv[0, 0] = 1
    bad = Tile(6, t.solution, bits.to_blob(giv), t.seam_mask, t.features)
    assert any("corner" in p for p in tile_problems(bad))


def test_non_canonical_orientation_is_caught():
    t = good_tile()
    img = next(t.transform(u) for u in range(1, 16) if t.transform(u).solution != t.solution)
    assert "not stored in canonical orientation" in tile_problems(img)


def test_alternative_contradicting_a_given_is_caught():
    t = good_tile()
    giv = np.array(t.givens_grid)
    alt = t.alt_grids()[0]
    r, c = np.argwhere(alt != t.solution_grid)[0]
    giv[r, c] = 1  # now the alternative contradicts a given
    bad = Tile(6, t.solution, bits.to_blob(giv), t.seam_mask, t.features)
    assert any("contradicts a given" in p for p in feature_problems(bad))


def test_min_hitting_sides():
    assert min_hitting_sides([]) == 0
    assert min_hitting_sides([1, 1 | 2]) == 1
    assert min_hitting_sides([1, 2]) == 2
    assert min_hitting_sides([1, 2, 4, 8]) == 4
    assert min_hitting_sides([0]) == 5


def test_verify_library_reports_every_bad_row(lib):
    tiles = [good_tile(s) for s in range(4)]
    lib.insert_many(tiles)
    assert verify_library(lib).ok
    h0, h1 = tiles[0].hash, tiles[1].hash
    with lib.conn:
        lib.conn.execute("UPDATE tiles SET seam_mask = 3 WHERE hash = ?", (h0,))  # hash mismatch
        lib.conn.execute("UPDATE tiles SET top = top + 1 WHERE hash = ?", (h1,))  # edge column lie
    report = verify_library(lib)
    bad = {h for h, _ in report.problems}
    assert bad == {h0, h1} and report.rows == 4
