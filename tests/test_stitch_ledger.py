"""Misses, drain, nofit and fallback (FORMAT §8) on tiny hand-made packings and constraints.

No mocks: the real generator and CP-SAT run. CP-SAT calls are counted by wrapping
``stitcher.drain.complete`` (a spy that forwards every call), so "settled without solving"
is an exact count.
"""

from __future__ import annotations

import importlib

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as hst

import stitcher.drain as drain_mod
from engine.windows import NONE, Windows
from engine.windows import solve as solve_windows
from packers.packing import Packing, validate_packing
from stitcher.board import Board, SeamConflict
from stitcher.drain import NOFIT, NofitSet, drain_misses, generate
from stitcher.fallback import split_square
from stitcher.joint import joint_complete
from stitcher.order import placement_order
from stitcher.repair import repair_together
from stitcher.stitch import Drain, StitchError, StitchOptions, open_run, stitch
from tilelib import ledger
from tilelib.constraint import Constraint, canonical_constraint, push_forward
from tilelib.rng import Stream
from tilelib.rules import valid_lines, violations
from tilelib.store import Library

run_mod = importlib.import_module("stitcher.run")  # where the run calls joint_complete

SEED = bytes(range(32))
FOUR = Packing(P=10, squares=((0, 0, 5), (5, 0, 5), (0, 5, 5), (5, 5, 5)), zones=(), seed_tile=0, name="test")


@pytest.fixture
def spy(monkeypatch):
    """Counts CP-SAT calls: the drain's completions and the stitcher's window-aware completions."""
    calls = []
    real, real_joint = drain_mod.complete, run_mod.joint_complete

    def counting(*a, **kw):
        calls.append("complete")
        return real(*a, **kw)

    def counting_joint(*a, **kw):
        calls.append("joint")
        return real_joint(*a, **kw)

    monkeypatch.setattr(drain_mod, "complete", counting)
    monkeypatch.setattr(run_mod, "joint_complete", counting_joint)
    return calls


def infeasible_constraint() -> Constraint:
    """The first n = 6 constraint (whole top, left and bottom, corners consistent) CP-SAT refutes.

    Searched in a fixed order, so the test is deterministic; each side is a valid line, so the
    contradiction is only in how they combine."""
    lines = valid_lines(6)
    for top in lines:
        for left in lines:
            if (top >> 5) != (left >> 5):
                continue
            for bottom in lines:
                if (bottom >> 5) != (left & 1):
                    continue
                c = Constraint.sides(6, top=top, left=left, bottom=bottom)
                if generate(c, 0, 2, Stream(SEED, "probe"))[0] == NOFIT:
                    return c
    raise AssertionError("no infeasible constraint found")


def test_forced_miss_is_recorded_then_drained(lib):
    """Empty library: the seed misses (recorded, drained with an m = 1 tile); every tile ends in it."""
    res = stitch(FOUR, lib, Stream(SEED, "stitch"))
    validate_packing(res.packing, 10)
    st = res.stats
    assert st.per_n[6]["misses_first"] >= 1 and st.per_n[6]["drained"] >= 1
    rows = lib.conn.execute("SELECT n, side_mask, count, nofit, tile, packing FROM misses ORDER BY id").fetchall()
    assert rows[0][:2] == (6, 0)  # the seed's unconstrained miss comes first
    assert rows[0][4] is not None and lib.has(rows[0][4])
    assert all(r[5] == FOUR.digest() for r in rows)
    for h, _t in res.placements:
        assert lib.has(h)
    assert lib.get(res.placements[0][0]).features.m == 1


def test_repeated_miss_is_one_row_with_a_counter(lib):
    """Same packing, seed and library twice without the drain: the same misses, counted twice."""
    lib.insert(generate(Constraint.sides(6), 0, 1, Stream(SEED, "one"))[1])
    packing = Packing(P=10, squares=((0, 0, 5), (5, 0, 5)), zones=(((0, 5, 10, 5),),), seed_tile=0, name="test")
    validate_packing(packing, 10)
    first = stitch(packing, lib, Stream(SEED, "s"), StitchOptions(drain=False))
    rows1 = lib.conn.execute("SELECT id, count FROM misses").fetchall()
    second = stitch(packing, lib, Stream(SEED, "s"), StitchOptions(drain=False))
    rows2 = lib.conn.execute("SELECT id, count FROM misses").fetchall()
    assert first.placements == second.placements
    assert [i for i, _ in rows1] == [i for i, _ in rows2]
    assert all(c2 == c1 + 1 for (_, c1), (_, c2) in zip(rows1, rows2, strict=True))
    validate_packing(second.packing, 10)


def test_nofit_is_marked_and_then_settled_by_containment(lib, spy):
    c = infeasible_constraint()
    ledger.record_miss(lib.conn, c, "p")
    spy.clear()
    st = drain_misses(lib, Stream(SEED, "d"))
    assert (st.nofit, st.drained, st.settled, st.cp_calls) == (1, 0, 0, 1)
    assert len(spy) == 1
    canon, _ = canonical_constraint(c)
    assert ledger.nofit_rows(lib.conn, 6) == ([canon.masks], [canon.values])
    # A harder constraint (one more whole side), seen in another orientation: nofit, no CP-SAT.
    right = next(v for v in valid_lines(6) if (v >> 5) == (c.values[0] & 1) and (v & 1) == (c.values[2] & 1))
    harder = Constraint(6, (63, 63, 63, 63), (c.values[0], right, c.values[2], c.values[3]))
    assert harder.contains(c)
    ledger.record_miss(lib.conn, push_forward(harder, 5), "p")
    spy.clear()
    st2 = drain_misses(lib, Stream(SEED, "d2"))
    assert (st2.settled, st2.nofit, st2.cp_calls) == (1, 0, 0)
    assert spy == []
    assert ledger.open_misses(lib.conn) == []
    # Draining again asks nothing: nofit misses are never asked again.
    assert drain_misses(lib, Stream(SEED, "d3")).cp_calls == 0 and spy == []


def test_stitch_square_facing_a_nofit_boundary_settles_without_cp_sat(lib, spy):
    """A board whose last square faces a proven-nofit boundary: the first run proves it (for n = 6
    from the table of every grid, which CP-SAT agrees with: ``test_exact_n6_table_agrees_with_cp_sat``),
    a second run settles it by containment, and both fall back to a zone; neither calls CP-SAT."""
    c = infeasible_constraint()
    for attempt in range(2):
        # lookahead off: no window-aware make and no repair of the hand-made neighbours
        run = open_run(FOUR, lib, Stream(SEED, "s"), StitchOptions(max_tries=8, lookahead=False))
        # Stand-in tiles on squares 1 and 2 with edges that present c to square 3.
        run.at.put(1, "x", 0, (0, 0, c.values[0], 0))  # square 1: its bottom is square 3's top
        run.at.put(2, "x", 0, (0, c.values[3], 0, 0))  # square 2: its right is square 3's left
        # The bottom of square 3 lies on the board edge; give it by hand as if a tile held it.
        b = run.at.board
        idx_bottom = [(10, 5 + j) for j in range(6)]
        for j, (r, col) in enumerate(idx_bottom):
            b.values[r, col] = (c.values[2] >> (5 - j)) & 1
            b.known[r, col] = 1
        faced = b.constraint(5, 5, 6)
        assert faced.contains(c)
        spy.clear()
        run.resolve(3, None)
        assert not run.at.placed(3) and 3 in run.at.children  # split -> a 5-square is a zone
        if attempt == 0:  # proved by the exact n = 6 table (small.feasible): no CP-SAT call
            assert run.st.per_n[6]["nofit"] == 1 and spy == []
        else:
            assert run.st.per_n[6]["settled"] == 1 and spy == []


def test_fallback_keeps_the_packing_valid(lib):
    """Without the drain, on a library with one n = 6 and one n = 16 tile, the 9-squares (no n = 10
    tile) are split into smaller squares and zones; the packing validates and ids follow the
    documented order (a split square's leaves replace it in place)."""
    lib.insert(generate(Constraint.sides(6), 0, 1, Stream(SEED, "one"))[1])
    lib.insert(generate(Constraint.sides(16), 0, 1, Stream(SEED, "big"))[1])
    packing = Packing(
        P=24,
        squares=((0, 0, 15), (15, 0, 9), (15, 9, 9), (0, 15, 9)),
        zones=(((9, 15, 6, 9),), ((15, 18, 9, 6),)),
        seed_tile=0,
        name="test",
    )
    validate_packing(packing, 24)
    res = stitch(packing, lib, Stream(SEED, "f"), StitchOptions(drain=False))
    validate_packing(res.packing, 24)
    assert res.packing.squares[0] == (0, 0, 15) and res.packing.seed_tile == 0
    assert res.stats.per_n[10]["fallbacks"] == 3
    assert all(s < 9 for (_x, _y, s) in res.packing.squares[1:])
    assert res.stats.final_fill < 1.0
    assert res.packing.zone_fraction() > packing.zone_fraction()
    assert len(res.placements) == len(res.packing.squares)
    assert res.packing.zones[:2] == packing.zones  # old zone ids are kept, new zones follow

    # leaves replace their square in place: their parents appear in id order
    def parent(q):
        x, y, s = q
        return next(
            i
            for i, (px, py, ps) in enumerate(packing.squares)
            if px <= x and x + s <= px + ps and py <= y and y + s <= py + ps
        )

    parents = [parent(q) for q in res.packing.squares]
    assert parents == sorted(parents) and parents[0] == 0


def test_seed_without_m1_tile_and_no_drain_is_an_error(lib):
    with pytest.raises(StitchError):
        stitch(FOUR, lib, Stream(SEED, "x"), StitchOptions(drain=False))


@pytest.mark.parametrize("s", [5, 7, 9, 11, 13, 15])
def test_split_square_covers_exactly_with_smaller_squares(s):
    for k in range(20):
        subs, zones = split_square(3, 4, s, Stream(SEED, f"split/{k}"))
        cover = np.zeros((40, 40), dtype=int)
        for x, y, q in subs:
            assert q in (5, 7, 9, 11, 13) and q < s
            cover[y : y + q, x : x + q] += 1
        for x, y, w, h in zones:
            assert w > 0 and h > 0
            cover[y : y + h, x : x + w] += 1
        assert (cover[4 : 4 + s, 3 : 3 + s] == 1).all() and cover.sum() == s * s


def test_board_rejects_a_conflicting_placement():
    tile = generate(Constraint.sides(6), 0, 1, Stream(SEED, "b"))[1]
    top, right, bottom, left = tile.edges
    b = Board(11)
    b.place(0, 0, 6, tile.edges)
    c = b.constraint(5, 0, 6)
    assert (c.masks[3], c.values[3]) == (63, right)  # the neighbour faces our right column
    assert c.masks[0] == 0b100000 and c.values[0] == (top & 1) << 5  # and our top-right corner
    # a neighbour whose left column is our right column passes; one differing in one cell does not
    with pytest.raises(SeamConflict):
        b.place(5, 0, 6, ((top & 1) << 5, 0, 0, right ^ 0b000100))
    assert b.constraint(5, 0, 6) == c  # nothing was written
    b.place(5, 0, 6, ((top & 1) << 5, 0, (right & 1) << 5, right))


# one big square (1) and four small ones, the seed (3) among them
FIVE = Packing(
    P=20,
    squares=((0, 0, 5), (5, 0, 15), (0, 5, 5), (0, 10, 5), (0, 15, 5)),
    zones=(),
    seed_tile=3,
    name="big-first",
)


def test_seed_is_placed_first_and_big_first_goes_by_size():
    P = FIVE
    order = placement_order(P, [3, 1, 2, 0, 1])
    assert order[0] == 3 and order[1] == 1


def test_each_packer_declares_the_order_its_squares_are_placed_in():
    """A packer's own ``ORDER`` (one of ``ORDERS``) is the order the stitcher places its packing's
    squares in; a packing of a name no packer has goes breadth-first."""
    import dataclasses

    from packers import PACKERS
    from stitcher.order import ORDERS

    P = FIVE
    dist = [3, 2, 1, 0, 1]  # the big square (1) farther than two small ones
    assert {p.order for p in PACKERS.values()} <= set(ORDERS) - {"packer"}
    assert {n: p.order for n, p in PACKERS.items()} == {
        "big-first": "big",
        "grown": "id",
        "bands": "bfs",
        "substitution": "bfs",
        "islands": "big",
    }
    for name, packer in PACKERS.items():
        named = dataclasses.replace(P, name=name)
        assert placement_order(named, dist) == placement_order(named, dist, packer.order), name
    orders = {how: placement_order(P, dist, how) for how in ("big", "id", "bfs")}
    assert len({tuple(o) for o in orders.values()}) == 3  # the three orders differ on this packing
    assert placement_order(dataclasses.replace(P, name="unknown"), dist) == orders["bfs"]


def test_board_remove_keeps_cells_another_tile_holds():
    tile = generate(Constraint.sides(6), 0, 1, Stream(SEED, "r"))[1]
    top, right, bottom, left = tile.edges
    b = Board(11)
    b.place(0, 0, 6, tile.edges)
    b.place(5, 0, 6, ((top & 1) << 5, 0, (right & 1) << 5, right))
    b.remove(5, 0, 6)
    assert b.constraint(5, 0, 6).masks == (0b100000, 0, 0b100000, 63)  # the first tile's column stays
    b.remove(0, 0, 6)
    assert not b.known.any()


def test_exact_n6_table_agrees_with_cp_sat():
    """The n = 6 solution table (4140 grids) says feasible exactly when CP-SAT finds a completion."""
    from stitcher.small import feasible, solutions_edges

    E = solutions_edges(6)
    assert len(E) == 4140  # every valid 6x6 grid with distinct rows and columns
    c_bad = infeasible_constraint()
    assert not feasible(c_bad)
    rng = np.random.default_rng(0)  # test-only sampling of constraints; the code under test is seedless
    lines = list(valid_lines(6))
    for k in range(25):
        top, left = int(rng.choice(lines)), int(rng.choice(lines))
        if (top >> 5) != (left >> 5):
            continue
        masks = (63, 0, int(rng.integers(0, 64)) & 0b011110, 63)  # bottom corners come from left/right
        bottom = int(rng.integers(0, 64)) & masks[2]
        c = Constraint(6, masks, (top, 0, bottom, left))
        want = generate(c, 0, 2, Stream(SEED, f"agree/{k}"))[0] != NOFIT
        assert feasible(c) == want, c


@pytest.mark.parametrize("mode", ["inline", "deferred"])
def test_drain_modes_fill_a_small_board(lib, mode):
    """Both drain modes fill a cold 3x3 board of 5-squares; every placement is a library tile and
    first-pass misses end drained (or nofit), never open."""
    sq = tuple((x, y, 5) for y in (0, 5, 10) for x in (0, 5, 10))
    packing = Packing(P=15, squares=sq, zones=(), seed_tile=4, name="bands")
    res = stitch(packing, lib, Stream(SEED, mode), StitchOptions(drain=Drain(mode)))
    validate_packing(res.packing, 15)
    for h, _t in res.placements:
        assert lib.has(h)
    assert res.stats.total("misses_first") >= 1
    assert ledger.open_misses(lib.conn) == []
    assert res.packing.seed_tile == [i for i, q in enumerate(res.packing.squares) if q == (5, 5, 5)][0]
    for bad in ("sometimes", mode, 1, None):  # the mode's name is not a mode: only Drain or a bool
        with pytest.raises(ValueError):
            stitch(packing, lib, Stream(SEED, mode), StitchOptions(drain=bad))


def _constraint(data, n: int) -> Constraint:
    full = (1 << n) - 1
    masks = tuple(data.draw(hst.integers(0, full)) for _ in range(4))
    values = tuple(data.draw(hst.integers(0, full)) & m for m in masks)
    return Constraint(n, masks, values)


@settings(max_examples=150, deadline=None)
@given(hst.data())
def test_nofit_set_agrees_with_the_ledger_rule(tmp_path_factory, data):
    """``NofitSet.settled`` (numpy over precomputed images) answers exactly ``ledger.settled_nofit``:
    known sets are random constraints, some read from the ledger at the first question and some
    added during the run; questions are random ones and images of known ones with
    cells added (which must be settled) or one known cell flipped."""
    n = data.draw(hst.sampled_from([6, 8]))
    known = [_constraint(data, n) for _ in range(data.draw(hst.integers(0, 4)))]
    path = tmp_path_factory.mktemp("nofit") / "lib.sqlite"
    stored = data.draw(hst.integers(0, len(known)))  # the first ones from the ledger, the rest added
    with Library.create(path) as lib:
        for c in known[:stored]:
            ledger.mark_nofit(lib.conn, ledger.record_miss(lib.conn, c).id)
        ns = NofitSet(lib.conn)
        for c in known[stored:]:
            ns.add(c)
        questions = [_constraint(data, n) for _ in range(3)]
        for c in known:
            t = data.draw(hst.integers(0, 15))
            extra = _constraint(data, n)
            img = push_forward(c, t)
            masks = tuple(a | b for a, b in zip(img.masks, extra.masks, strict=True))
            values = tuple(
                (v | (ev & ~m)) & mm for v, ev, m, mm in zip(img.values, extra.values, img.masks, masks, strict=True)
            )
            harder = Constraint(n, masks, values)
            assert ns.settled(harder)
            questions.append(harder)
            side = data.draw(hst.integers(0, 3))
            if img.masks[side]:
                bit = img.masks[side] & -img.masks[side]
                vals = list(img.values)
                vals[side] ^= bit
                questions.append(Constraint(n, img.masks, tuple(vals)))
        for q in questions:
            assert ns.settled(q) == ledger.settled_nofit(q, known)


def _hand_case(lib, bottom: int):
    """FOUR with squares 1 and 2 held by stand-in tiles that present ``infeasible_constraint``'s
    top and left to square 3, and square 3's bottom (on the board edge) given by hand as ``bottom``."""
    c = infeasible_constraint()
    run = open_run(FOUR, lib, Stream(SEED, "s"), StitchOptions(max_tries=8))
    corner = (bottom >> 5) & 1  # cell (10, 5): square 2's last bottom cell and right cell
    assert corner == c.values[3] & 1
    for k, e in ((1, (0, 0, c.values[0], 0)), (2, (0, c.values[3], corner, 0))):
        run.at.put(k, "x", 0, e)
    b = run.at.board
    for j in range(6):
        b.values[10, 5 + j] = (bottom >> (5 - j)) & 1
        b.known[10, 5 + j] = 1
    return run, c


def test_repair_together_remakes_a_square_and_the_neighbours_it_takes_off(lib):
    """Square 3 faces a proven-infeasible boundary; taking squares 1 and 2 off and completing all
    three in one model gives three library tiles that agree on every shared cell and with the cells
    given by hand."""
    c = infeasible_constraint()
    run, c = _hand_case(lib, c.values[2])
    assert run.at.board.constraint(5, 5, 6).contains(c)
    assert repair_together(run, 3, [1, 2], keep_others=False)
    run.journal.flush({run.at.tile(k)[0] for k in (1, 2, 3)})  # what the end of a stitch writes
    grids = {}
    for k in (1, 2, 3):
        h, t = run.at.tile(k)
        assert lib.has(h)
        grids[k] = lib.get_oriented(h, t).solution_grid
        assert not violations(grids[k])
    assert (grids[1][5, :] == grids[3][0, :]).all()  # 1's bottom row is 3's top row
    assert (grids[2][:, 5] == grids[3][:, 0]).all()  # 2's right column is 3's left column
    assert grids[1][5, 0] == grids[2][0, 5]  # the shared corner cell
    hand = [(c.values[2] >> (5 - j)) & 1 for j in range(6)]
    assert grids[3][5, :].tolist() == hand
    for k in (1, 2, 3):  # the board holds exactly those edges
        x, y, s = FOUR.squares[k]
        assert run.at.board.constraint(x, y, s + 1).values == lib.get_oriented(*run.at.tile(k)).edges


def test_repair_together_that_fails_puts_everything_back(lib):
    """With an invalid line given by hand (three equal cells), no completion exists: the attempt
    fails and the board and placements are exactly as before."""
    run, _c = _hand_case(lib, 0b111000 if infeasible_constraint().values[3] & 1 else 0b000111)
    at = run.at

    def holdings():
        return [(at.tile(k), at.edges(k) if at.placed(k) else None, at.turn(k)) for k in range(len(at.squares))]

    before = (at.board.values.copy(), at.board.known.copy(), holdings(), at.count)
    assert not repair_together(run, 3, [1, 2], keep_others=False)
    assert (at.board.values == before[0]).all() and (at.board.known == before[1]).all()
    assert (holdings(), at.count) == before[2:]


@pytest.mark.parametrize("row", [[1, 1, 1, 0, 0, 0], [0, 1, 1, 1, 0, 0], [1, 1, 0, 1, 0, 1]])
def test_joint_complete_refuses_a_wholly_known_line_that_breaks_a_rule(row):
    """A window row known in full (pieces of several neighbours' edges) that is balanced but has
    three equal cells in a row, or is unbalanced, admits no grid: None, never an invalid grid."""
    values = np.zeros((8, 8), dtype=np.uint8)
    known = np.zeros((8, 8), dtype=np.uint8)
    values[1, 1:7] = row
    known[1, 1:7] = 1
    got = joint_complete(values, known, (1, 1, 5), [], Stream(SEED, "j"))
    assert got is None
    ok = [0, 1, 1, 0, 1, 0]
    values[1, 1:7] = ok
    grid = joint_complete(values, known, (1, 1, 5), [], Stream(SEED, "j"))
    assert grid is not None and not violations(grid) and grid[0].tolist() == ok


@settings(max_examples=200, deadline=None)
@given(hst.integers(0, 2**64 - 1), hst.floats(0.2, 0.9))
def test_joint_line_precheck_is_the_brute_force_rule(seed, density):
    """When some row or column of the window has known cells that no valid line (balanced, no
    three in a row) matches, the C search proves at its root that no completion exists (NONE, one
    node: no search, no CP-SAT), and the window-aware completion is None."""
    rng = np.random.default_rng(seed)
    values = rng.integers(0, 2, (8, 8), dtype=np.uint8)
    known = (rng.random((8, 8)) < density).astype(np.uint8)
    n = 6
    lines = [[int(b) for b in f"{v:0{n}b}"] for v in valid_lines(n)]

    def ok(vs, ks):
        return any(all(not k or ln[i] == v for i, (v, k) in enumerate(zip(vs, ks, strict=True))) for ln in lines)

    V, K = values[1:7, 1:7], known[1:7, 1:7]
    brute = all(ok(V[r], K[r]) and ok(V[:, r], K[:, r]) for r in range(n))
    if not brute:
        got = solve_windows(Windows(values, known, ((1, 1, 6, True),)), 0)
        assert (got.status, got.nodes) == (NONE, 1)
        assert joint_complete(values, known, (1, 1, 5), [], Stream(SEED, "j")) is None
