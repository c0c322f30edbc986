"""The library audit: good tiles pass; every kind of bad row is reported (inputs it must reject)."""

import dataclasses

import numpy as np
import pytest
from support import all_grids, random_givens, tile_with_alts

from tilelib import bits
from tilelib.audit import feature_problems, min_hitting_sides, tile_problems
from tilelib.tile import Tile
from trust.checks import verify_library

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


def alt_replaced(t, i, grid):
    """The tile with alternative i's blob replaced by ``grid`` (features otherwise unchanged)."""
    bl = bits.blob_len(t.n)
    a = bytearray(t.features.alts)
    a[i * bl : (i + 1) * bl] = bits.to_blob(grid)
    return with_features(t, alts=bytes(a))


def test_each_problem_reads_exactly():
    """The line a user reads for each lie, word for word and with its numbers (a problem that is
    found but misreported, or reported as something else, fails here)."""
    t = good_tile()
    f, bl = t.features, bits.blob_len(6)
    k = f.m - 1
    sides = [(f.alt_sides >> 4 * i) & 15 for i in range(k)]
    blank = 1.0 - float(t.givens_grid.sum()) / 36
    cases = {
        "m = 0 < 1": with_features(t, m=0),
        f"alts hold {len(f.alts)} bytes, m = {f.m + 1} needs {f.m * bl}": with_features(t, m=f.m + 1),
        f"flip blob is 1 bytes, not {bl}": with_features(t, flip=b"\0"),
        "alt_sides has nibbles beyond the alternatives": with_features(t, alt_sides=f.alt_sides | 1 << 4 * k),
        "alternative 0 equals the solution": alt_replaced(t, 0, t.solution_grid),
        f"alt_sides nibble 0 is {sides[0] ^ 1}, edges differ on {sides[0]}": with_features(
            t, alt_sides=f.alt_sides ^ 1
        ),
        "flip is not the union of the alternatives' differences": with_features(t, flip=bytes(bl)),
        f"pins is 0, OR of alt_sides is {f.pins}": with_features(t, pins=0),
        f"pin_depth is {f.pin_depth + 1}, fewest hitting sides is {f.pin_depth}": with_features(
            t, pin_depth=f.pin_depth + 1
        ),
        f"blank is 0.5, givens leave {blank:.6f}": with_features(t, blank=0.5),
        f"blank is {blank + 2e-9}, givens leave {blank:.6f}": with_features(t, blank=blank + 2e-9),
        "seam_mask 16 is not a 4-bit side mask": dataclasses.replace(t, seam_mask=16),
    }
    for i in range(k):
        cases[f"alternative {i} differs on no seam_mask side (pinning invariant)"] = dataclasses.replace(
            t, seam_mask=t.seam_mask & ~sides[i]
        )
    for want, bad in cases.items():
        problems = tile_problems(bad)
        assert want in problems, (want, problems)
    assert tile_problems(with_features(t, blank=blank + 5e-10)) == []  # inside the float tolerance
    seven = Tile(7, bytes(bits.blob_len(7)), bytes(bits.blob_len(7)), 15)
    assert tile_problems(seven) == ["n = 7 is not a tile size"]  # and nothing else


def test_an_alternative_breaking_the_rules_is_named_by_its_first_offence():
    from tilelib.rules import violations

    t = good_tile()
    alt = np.array(t.alt_grids()[0])
    alt[0, :3] = 1  # three in a row, and the row's balance broken
    offences = violations(alt)
    assert len(offences) >= 2 and offences[0] != offences[1]
    assert f"alternative 0 breaks the rules ({offences[0]})" in feature_problems(alt_replaced(t, 0, alt))
    sol = np.array(t.solution_grid)
    sol[0, :3] = 1
    offences = violations(sol)
    bad = Tile(6, bits.to_blob(sol), t.givens, t.seam_mask, t.features)
    assert tile_problems(bad)[0] == f"solution breaks the rules ({offences[0]})"


def test_each_corner_given_is_caught_alone():
    t = good_tile()
    for r, c in ((0, 0), (0, -1), (-1, 0), (-1, -1)):
        giv = np.array(t.givens_grid)
        giv[r, c] = 1
        bad = Tile(6, t.solution, bits.to_blob(giv), t.seam_mask, t.features)
        assert "a corner cell is given" in tile_problems(bad), (r, c)


def test_edge_columns_that_lie_are_named():
    t = good_tile()
    lie = (t.edges[0] ^ 1, *t.edges[1:])
    assert f"edge columns {lie} differ from the solution's {t.edges}" in tile_problems(t, stored_edges=lie)
    assert tile_problems(t, stored_edges=t.edges) == []


def test_an_alternative_contradicting_a_given_is_named():
    t = good_tile()
    giv = np.array(t.givens_grid)
    r, c = np.argwhere(t.alt_grids()[0] != t.solution_grid)[0]
    giv[r, c] = 1
    bad = Tile(6, t.solution, bits.to_blob(giv), t.seam_mask, t.features)
    assert "alternative 0 contradicts a given" in feature_problems(bad)


def test_unsorted_alternatives_are_named():
    t = next(good_tile(s) for s in range(50) if good_tile(s).features.m == 3)
    bl = bits.blob_len(6)
    a = t.features.alts
    assert "alternatives are not strictly ascending" in feature_problems(with_features(t, alts=a[bl:] + a[:bl]))
