"""FORMAT §10 step 4 on hand-made 2×2 boards of n=6 tiles, against independent brute-force oracles.

The oracles use the table of every valid 6×6 grid (tests/support.all_grids, plain enumeration, no
engine): propagation keeps, per tile, the grids consistent with the known cells; the global count
tries every assignment of the unknown cells against ``tilelib.rules.violations`` of every window.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support import all_grids

from referee import frontier as fr
from referee.board import Board, CheckFailed
from tilelib.rules import violations

# A consistent 11×11 board: four n=6 tiles (pitch squares of side 5) meeting at cell (5, 5).
SOLUTION = """
11010010110
00101101001
10011001101
01100110010
10101010101
01010101010
10101011001
10010100110
01101010011
10011001101
01100110100""".split()
SOL = np.array([[int(ch) for ch in row] for row in SOLUTION], dtype=np.int8)
SQUARES = ((0, 0, 5), (5, 0, 5), (0, 5, 5), (5, 5, 5))  # (x0, y0, s): top-left, top-right, bottom-left, bottom-right
ALL6 = np.array(all_grids(6), dtype=np.int8)


def make_board(givens, squares=SQUARES, clues=()) -> Board:
    G = SOL.shape[0]
    owners = np.zeros((G, G), dtype=np.uint8)
    for x0, y0, s in squares:
        owners[y0 : y0 + s + 1, x0 : x0 + s + 1] += 1
    g = np.asarray(givens, dtype=bool)
    return Board(G, tuple(squares), 0, SOL.copy(), owners, g.copy(), g.copy(), np.zeros_like(g), tuple(clues))


def windows_valid(grid) -> bool:
    return all(not violations(grid[y0 : y0 + s + 1, x0 : x0 + s + 1]) for x0, y0, s in SQUARES)


def oracle_propagate(givens) -> np.ndarray:
    known = np.array(givens, dtype=bool)
    changed = True
    while changed:
        changed = False
        for x0, y0, _s in SQUARES:
            w = (slice(y0, y0 + 6), slice(x0, x0 + 6))
            kw = known[w]
            cands = ALL6[(ALL6[:, kw] == SOL[w][kw]).all(axis=1)]
            agree = (cands == cands[0]).all(axis=0)
            new = agree & ~kw
            if new.any():
                known[w] |= new
                changed = True
    return known


def oracle_count(known, cap=2) -> int:
    cells = [tuple(rc) for rc in np.argwhere(~known)]
    found = 0
    for values in itertools.product((0, 1), repeat=len(cells)):
        g = SOL.copy()
        for (r, c), v in zip(cells, values, strict=True):
            g[r, c] = v
        if windows_valid(g):
            found += 1
            if found >= cap:
                break
    return found


def test_the_board_is_consistent():
    assert windows_valid(SOL)


def mask(cells) -> np.ndarray:
    m = np.zeros(SOL.shape, dtype=bool)
    for r, c in cells:
        m[r, c] = True
    return m


def hand_givens() -> np.ndarray:
    """Tile 0 shows all but its right column; the bottom tiles show everything; tile 1 shows 5 interior
    cells. Tile 0 completes by row balance; tile 1 has 39 candidates without its left column, 1 with it."""
    g = np.zeros(SOL.shape, dtype=bool)
    g[0:6, 0:5] = True
    g[5:11, :] = True
    for r, c in [(0, 6), (1, 8), (1, 10), (2, 6), (2, 8)]:
        g[r, c] = True
    return g


def test_hand_made_board_is_frontier_in_one_round():
    st_, f = fr.settle(make_board(hand_givens()))
    assert (st_.status, st_.rounds, st_.unknown, st_.method) == ("frontier", 1, 0, "propagation")
    assert f.known.all() and (f.values == SOL).all()
    # tiles 2 and 3 are fully known and never reach the engine
    assert st_.calls == 2


def test_visiting_the_pinned_tile_first_takes_two_rounds_same_result():
    order = (SQUARES[1], SQUARES[0], SQUARES[2], SQUARES[3])
    st_, f = fr.settle(make_board(hand_givens(), squares=order))
    assert (st_.status, st_.rounds) == ("frontier", 2)
    assert st_.calls == 3  # tile 1, tile 0, then tile 1 again in round 2


def test_without_tile_1_interior_givens_the_board_is_ambiguous():
    g = hand_givens()
    for r, c in [(0, 6), (1, 8), (1, 10), (2, 6), (2, 8)]:
        g[r, c] = False
    st_, f = fr.settle(make_board(g))
    assert st_.status == "ambiguous" and st_.method == "cp-sat" and st_.components == 1
    assert (f.known == oracle_propagate(g)).all()
    assert oracle_count(f.known) == 2 if (~f.known).sum() <= 16 else True


@settings(max_examples=40)
@given(seed=st.integers(0, 2**32 - 1), density=st.floats(0.25, 0.8))
def test_propagation_matches_the_brute_force_oracle(seed, density):
    rng = np.random.default_rng(seed)
    g = rng.random(SOL.shape) < density
    f = fr.propagate(fr.start(make_board(g)))
    want = oracle_propagate(g)
    assert (f.known == want).all()
    assert (f.values[want] == SOL[want]).all()
    # order independence: the fixpoint does not depend on the tile order
    rev = fr.propagate(fr.start(make_board(g, squares=SQUARES[::-1])))
    assert (rev.known == want).all()


@settings(max_examples=40)
@given(seed=st.integers(0, 2**32 - 1), k=st.integers(1, 11))
def test_global_count_matches_brute_force(seed, k):
    """Unknown cells chosen at random (not necessarily a propagation fixpoint): unique iff exactly one
    assignment of them makes every window valid."""
    rng = np.random.default_rng(seed)
    cells = rng.choice(SOL.size, size=k, replace=False)
    known = np.ones(SOL.shape, dtype=bool)
    known.flat[cells] = False
    f = fr.start(make_board(known))
    status, comps = fr.count_status(f)
    assert status == ("unique" if oracle_count(known) == 1 else "ambiguous")
    assert comps >= 1


def test_count_status_unique_and_ambiguous_by_hand():
    # a lone interior cell is forced by its row's balance: unique
    known = ~mask([(2, 2)])
    assert fr.count_status(fr.start(make_board(known))) == ("unique", 1)
    # a swappable rectangle (01/10 on two rows × two columns) somewhere: found by brute force
    for r1, r2, c1, c2 in itertools.product(range(11), range(11), range(11), range(11)):
        if not (r1 < r2 and c1 < c2):
            continue
        cells = [(r1, c1), (r1, c2), (r2, c1), (r2, c2)]
        known = ~mask(cells)
        if oracle_count(known) == 2:
            assert fr.count_status(fr.start(make_board(known)))[0] == "ambiguous"
            break
    else:  # pragma: no cover - the fixed board has one
        pytest.fail("no swappable rectangle in the fixture")
    assert fr.count_status(fr.start(make_board(np.ones(SOL.shape, bool)))) == ("frontier", 0)


def test_add_clues_reaches_frontier_and_avoids_junctions():
    g = np.zeros(SOL.shape, dtype=bool)
    g[2, 3] = g[8, 1] = True
    b = make_board(g)
    clues = fr.add_clues(b)
    assert clues and len(set(clues)) == len(clues)
    assert all(b.owners[r, c] < 3 and not g[r, c] for r, c in clues)
    st_, _ = fr.settle(b.with_clues(clues))
    assert st_.status == "frontier"
    # the pick is deterministic
    assert fr.add_clues(make_board(g)) == clues


def test_add_clues_on_a_frontier_board_adds_nothing():
    assert fr.add_clues(make_board(hand_givens())) == []


def test_no_legal_clue_when_only_junction_cells_are_unknown():
    f = fr.start(make_board(np.ones(SOL.shape, dtype=bool)))
    f.known[5, 5] = False  # the 4-way corner (held by all four tiles)
    with pytest.raises(CheckFailed) as e:
        fr.propose_clue(f)
    assert e.value.step == "clues"


def test_propagation_never_learns_a_value_that_is_not_the_solution():
    # a board whose solution disagrees with what the givens force must be reported, not absorbed
    g = hand_givens()
    b = make_board(g)
    b.solution[3, 5] ^= 1  # corrupt the claimed solution on an unknown cell of tile 0's right column
    with pytest.raises(CheckFailed) as e:
        fr.settle(b)
    assert e.value.step == "frontier"


@settings(max_examples=100)
@given(data=st.data())
def test_the_propagations_row_ints_are_the_arrays(data):
    """``propagate`` works on one int per board row and writes the arrays back: the round trip is the
    identity for any side (a side not a multiple of 8 pads each row's bytes) and any cells."""
    G = data.draw(st.integers(1, 40))
    H = data.draw(st.integers(1, 6))
    cells = data.draw(st.lists(st.booleans(), min_size=G * H, max_size=G * H))
    grid = np.array(cells, dtype=bool).reshape(H, G)
    from referee.board import board_grid, board_rows, window_rows

    rows = board_rows(grid)
    assert rows == [int("".join("1" if v else "0" for v in row), 2) for row in grid.tolist()]
    assert np.array_equal(board_grid(rows, G), grid)
    n = data.draw(st.integers(1, min(G, H)))
    x0, y0 = data.draw(st.integers(0, G - n)), data.draw(st.integers(0, H - n))
    want = [int("".join("1" if v else "0" for v in row), 2) for row in grid[y0 : y0 + n, x0 : x0 + n].tolist()]
    assert window_rows(rows, G, x0, y0, n) == want
