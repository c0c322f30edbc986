"""FORMAT §5 queries: a tile inserted in one orientation is found in each of its 16 orientations."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support import random_givens, random_solution

from tilelib import bits, query
from tilelib.constraint import Constraint, canonical_constraint, pull_back, push_forward, window_constraint
from tilelib.errors import BadInput
from tilelib.store import Library
from tilelib.symmetry import TRANSFORMS, apply_grid
from tilelib.tile import Features, Tile


@pytest.fixture(scope="module")
def filled(tmp_path_factory):
    """A library of 60 tiles of n = 6, 8, 10 and the tiles themselves (as inserted)."""
    path = tmp_path_factory.mktemp("q") / "lib.sqlite"
    rng = np.random.default_rng(7)
    tiles = []
    for i in range(60):
        n = (6, 8, 10)[i % 3]
        t = Tile.from_grids(
            random_solution(n, rng),
            random_givens(n, rng),
            int(rng.integers(16)),
            Features(ladder=int(rng.integers(1, 5))),
        )
        tiles.append(t.transform(int(rng.integers(16))))
    lib = Library.create(path)
    lib.insert_many(tiles)
    yield lib, tiles
    lib.close()


def oriented(lib, h, t):
    return lib.get(h).transform(t)


@pytest.mark.parametrize("which", ["top", "top+left", "all four", "right+bottom", "top+bottom"])
def test_every_orientation_is_found_with_the_right_transform(filled, which):
    lib, tiles = filled
    for tile in tiles[:12]:
        for u in TRANSFORMS:
            want = tile.transform(u)
            top, right, bottom, left = want.edges
            kw = {
                "top": dict(top=top),
                "top+left": dict(top=top, left=left),
                "all four": dict(top=top, right=right, bottom=bottom, left=left),
                "right+bottom": dict(right=right, bottom=bottom),
                "top+bottom": dict(top=top, bottom=bottom),
            }[which]
            hits = query.find_edges(lib.conn, want.n, **kw)
            # it is among the hits, with a transform that reproduces it exactly
            assert any(h == tile.hash and oriented(lib, h, t) == want for h, t in hits)
            # and every hit really satisfies the query
            for h, t in hits:
                e = oriented(lib, h, t).edges
                assert all(e[("top", "right", "bottom", "left").index(k)] == v for k, v in kw.items())


def test_query_results_are_complete_against_a_scan(filled):
    lib, tiles = filled
    n = 8
    target = tiles[1].transform(3)
    c = Constraint.sides(n, top=target.edges[0])
    expected = sorted(
        (row["hash"], t)
        for row in lib.iter_rows()
        if row["n"] == n
        for t in TRANSFORMS
        if c.matches(lib.get(row["hash"]).transform(t).edges)
    )
    assert query.find(lib.conn, c) == expected


@given(st.integers(0, 59), st.sampled_from(TRANSFORMS), st.integers(0, 2**16 - 1), st.integers(0, 2**16 - 1))
@settings(max_examples=40)
def test_partly_known_sides(filled, idx, u, mask_top, mask_left):
    lib, tiles = filled
    want = tiles[idx].transform(u)
    n, full = want.n, (1 << want.n) - 1
    mt, ml = mask_top & full, mask_left & full
    e = want.edges
    c = Constraint(n, (mt, 0, 0, ml), (e[0] & mt, 0, 0, e[3] & ml))
    hits = query.find(lib.conn, c)
    assert any(h == tiles[idx].hash and oriented(lib, h, t) == want for h, t in hits)
    assert all(c.matches(oriented(lib, h, t).edges) for h, t in hits)


def test_difficulty_and_seam_mask_filters(filled):
    lib, tiles = filled
    tile = tiles[4]
    for u in (0, 5, 11):
        want = tile.transform(u)
        c = Constraint.sides(want.n, left=want.edges[3])
        hits = query.find(
            lib.conn, c, filters={"ladder": (want.features.ladder, want.features.ladder)}, seam_mask=want.seam_mask
        )
        assert any(oriented(lib, h, t) == want for h, t in hits)
        assert all(oriented(lib, h, t).seam_mask == want.seam_mask for h, t in hits)


def test_unknown_filter_column_is_bad_input(filled):
    lib, _ = filled
    with pytest.raises(BadInput):
        query.find(lib.conn, Constraint.sides(6), filters={"solution; DROP TABLE tiles": 1})


def test_impossible_partial_side_finds_nothing(filled):
    lib, _ = filled
    # three equal cells on an edge can never be a tile's edge
    assert query.find(lib.conn, Constraint(6, (0b111000, 0, 0, 0), (0b111000, 0, 0, 0))) == []


@given(st.integers(0, 2**32 - 1), st.sampled_from(TRANSFORMS))
def test_pull_back_and_canonical_constraint(seed, t):
    rng = np.random.default_rng(seed)
    n = 8
    grid = random_solution(n, rng)
    masks = tuple(int(m) for m in rng.integers(0, 256, 4))
    e = bits.edges(grid)
    c = Constraint(n, masks, tuple(v & m for v, m in zip(e, masks, strict=True)))
    # X.transform(t) satisfies c  <=>  X satisfies pull_back(c, t)
    img = bits.edges(apply_grid(grid, t))
    assert c.matches(img) == pull_back(c, t).matches(e)
    assert push_forward(c, t).matches(img)
    rep, u = canonical_constraint(c)
    assert {canonical_constraint(push_forward(c, v))[0] for v in TRANSFORMS} == {rep}
    assert rep == push_forward(c, u)


def test_window_constraint_reads_the_board():
    board = np.zeros((10, 10), dtype=np.uint8)
    known = np.zeros((10, 10), dtype=np.uint8)
    board[2, 3:9] = [1, 0, 1, 1, 0, 0]
    known[2, 3:9] = 1
    known[4, 3] = 1  # a single known cell on the left side, value 0
    c = window_constraint(board, known, 3, 2, 6)
    assert c.masks == (0b111111, 0b100000, 0, 0b101000)
    assert c.values == (0b101100, 0, 0, 0b100000)
