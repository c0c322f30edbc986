"""FORMAT §10's tile-by-tile closure on hand-made 2×2 boards of n=6 tiles, against a brute-force oracle.

The oracle uses the table of every valid 6×6 grid (tests/support.all_grids, plain enumeration, no
engine): a tile is solvable when exactly one table grid equals its view, which is the board givens
in its window plus every cell of a solved tile's window; waves are computed synchronously from
the definition. ``STALL`` is a board the frontier proof settles (every cell known by propagation)
on which a player solving one tile at a time stalls: the case the closure exists for.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_referee_frontier import ALL6, SOL, SQUARES, oracle_propagate

from referee import closure as cl
from referee import frontier as fr
from referee.board import Board, CheckFailed

STALL = np.array(
    [
        [ch == "x" for ch in row]
        for row in """
...........
....xx....x
.x.........
...xx...x.x
x.....x....
..x..xx.xx.
.........x.
.......x...
..x....x...
........x..
.x.xx......""".split()
    ],
    dtype=bool,
)


def board(givens, squares=SQUARES, seed=0, clues=()) -> Board:
    G = SOL.shape[0]
    owners = np.zeros((G, G), dtype=np.uint8)
    for x0, y0, s in squares:
        owners[y0 : y0 + s + 1, x0 : x0 + s + 1] += 1
    g = np.asarray(givens, dtype=bool).copy()
    for r, c in clues:
        g[r, c] = True
    return Board(
        G,
        tuple(squares),
        seed,
        SOL.copy(),
        owners,
        g,
        np.asarray(givens, dtype=bool).copy(),
        np.zeros_like(g),
        tuple(clues),
    )


def _seams(squares) -> list[set[int]]:
    out = []
    for xi, yi, si in squares:
        nb = set()
        for j, (xj, yj, sj) in enumerate(squares):
            ox = min(xi + si, xj + sj) - max(xi, xj)
            oy = min(yi + si, yj + sj) - max(yi, yj)
            if (xi, yi) != (xj, yj) and ox >= 0 and oy >= 0 and max(ox, oy) >= 1:
                nb.add(j)
        out.append(nb)
    return out


def oracle_view(givens, squares, solved, i) -> np.ndarray:
    known = np.array(givens, dtype=bool)
    for j in solved:
        x, y, s = squares[j]
        known[y : y + s + 1, x : x + s + 1] = True
    x0, y0, s = squares[i]
    return known[y0 : y0 + s + 1, x0 : x0 + s + 1]


def oracle_closure(givens, squares=SQUARES, seed=0) -> list[int]:
    """Each tile's wave (0: never solved), straight from the definition."""
    seams = _seams(squares)
    wave = [0] * len(squares)
    k = 0
    while True:
        solved = {i for i, w in enumerate(wave) if w}
        new = []
        for i, (x0, y0, s) in enumerate(squares):
            if wave[i] or not (i == seed or seams[i] & solved):
                continue
            kw = oracle_view(givens, squares, solved, i)
            w = SOL[y0 : y0 + s + 1, x0 : x0 + s + 1]
            if int((ALL6[:, kw] == w[kw]).all(axis=1).sum()) == 1:
                new.append(i)
        if not new:
            return wave
        k += 1
        for i in new:
            wave[i] = k


def test_the_stall_board_is_frontier_yet_stalls_tile_by_tile():
    b = board(STALL)
    assert oracle_propagate(STALL).all()
    st_, _f = fr.settle(b)
    assert st_.status == "frontier"  # the frontier proof is satisfied ...
    c = cl.closure(b)
    assert c.wave == oracle_closure(STALL) == [1, 2, 0, 0]  # ... and a player is stuck after two tiles
    assert not c.complete and c.stalled() == [2, 3] and c.unreached() == []
    assert c.waves == 2
    msg = cl.stall_message(c)
    assert "stalls after 2 of 4 tiles" in msg and "tiles 2, 3" in msg


def test_play_clues_unstall_the_board_with_one_legal_clue():
    b = board(STALL)
    added = cl.add_play_clues(b)
    assert len(added) == 1
    ((r, c),) = added
    assert not STALL[r, c] and b.owners[r, c] < 3
    assert oracle_closure(STALL | _cells(added)) == cl.closure(board(STALL, clues=added)).wave == [1, 2, 2, 3]


def _cells(cells) -> np.ndarray:
    m = np.zeros(SOL.shape, dtype=bool)
    for r, c in cells:
        m[r, c] = True
    return m


def test_a_seed_tile_unsolvable_alone_gets_its_clue_first():
    g = STALL.copy()
    g[0:6, 0:6] = False  # the seed tile shows nothing
    assert oracle_closure(g) == [0, 0, 0, 0]
    c = cl.closure(board(g))
    assert c.stalled() == [0] and c.waves == 0 and "stalls after 0 of 4" in cl.stall_message(c)
    added = cl.add_play_clues(board(g))
    assert added and all(0 <= r <= 5 and 0 <= c <= 5 for r, c in added[:1])  # the seed tile's first
    assert all(oracle_closure(g | _cells(added)))


def test_a_tile_no_seam_path_reaches_cannot_be_clued_into_play():
    # tiles 0 and 3 only meet at the corner cell (5, 5): no seam, so tile 3 is never playable
    squares = (SQUARES[0], SQUARES[3])
    g = np.ones(SOL.shape, dtype=bool)
    c = cl.closure(board(g, squares=squares))
    assert c.wave == [1, 0] and c.stalled() == [] and c.unreached() == [1]
    with pytest.raises(CheckFailed) as e:
        cl.add_play_clues(board(g, squares=squares))
    assert e.value.step == "closure" and "no seam path" in str(e.value)


masks = st.integers(0, (1 << 121) - 1).map(
    lambda v: np.array([(v >> k) & 1 for k in range(121)], dtype=bool).reshape(11, 11)
)


@settings(max_examples=150, deadline=None)
@given(g=masks, seed=st.integers(0, 3))
def test_closure_waves_equal_the_oracle(g, seed):
    assert cl.closure(board(g, seed=seed)).wave == oracle_closure(g, seed=seed)


@settings(max_examples=60, deadline=None)
@given(g=masks, seed=st.integers(0, 3))
def test_waves_do_not_depend_on_tile_ids(g, seed):
    perm = [2, 0, 3, 1]  # new id k holds old square perm[k]
    squares = tuple(SQUARES[p] for p in perm)
    a = cl.closure(board(g, seed=seed)).wave
    b = cl.closure(board(g, squares=squares, seed=perm.index(seed))).wave
    assert [b[perm.index(i)] for i in range(4)] == a


@settings(max_examples=60, deadline=None)
@given(g=masks, seed=st.integers(0, 3))
def test_playable_tile_by_tile_implies_frontier_and_clues_always_make_it_playable(g, seed):
    c = cl.closure(board(g, seed=seed))
    if c.complete:
        assert oracle_propagate(g).all()
    added = cl.add_play_clues(board(g, seed=seed))
    assert all(not g[r, col] and board(g).owners[r, col] < 3 for r, col in added)
    assert len(set(added)) == len(added)
    assert all(oracle_closure(g | _cells(added), seed=seed))


@settings(max_examples=60, deadline=None)
@given(g=masks, solved=st.sets(st.integers(0, 3)), tile=st.integers(0, 3))
def test_view_mask_is_givens_and_solved_windows(g, solved, tile):
    assert (cl.view_mask(board(g), solved, tile) == oracle_view(g, SQUARES, solved, tile)).all()


# ---------------------------------------------------------------- a real board: G = 61, ~70 tiles


@pytest.fixture(scope="module")
def g61(tmp_path_factory):
    """(Board, the manifest as the independent verifier parses it, its values and givens) of a built day."""
    import sqlite3

    import independent_verifier as iv
    from serve_support import daily_g61

    from referee.board import build_board
    from referee.manifest import from_json
    from tilelib.store import Library

    d, path = daily_g61(tmp_path_factory, "closure61", "2026-11-03", bytes.fromhex("c1" * 32))
    text = path.read_text("utf-8")
    with Library.open(d / "lib.sqlite") as lib:
        b = build_board(from_json(text), lib)
    conn = sqlite3.connect(d / "lib.sqlite")
    mf = iv.parse_manifest(text)
    val, _owners, giv = iv.assemble(mf, iv.load_tiles(mf, conn))
    conn.close()
    return b, mf, val, giv


def test_a_real_boards_waves_are_the_independent_verifiers(g61):
    """Every tile's wave, against tests/independent_verifier.py's closure (its own enumeration)."""
    import independent_verifier as iv

    b, mf, val, giv = g61
    wave, _ = iv.closure_waves(mf, val, giv)
    c = cl.closure(b)
    assert c.wave == wave and c.waves == max(wave) > 3 and c.complete


def test_the_work_counters_say_what_was_done(g61):
    """One count per tile at least, the engine's nodes summed, the time spent inside the wall time
    around the call (a consistency check, not a speed claim); the same board counts the same again."""
    import time

    b = g61[0]
    t0 = time.perf_counter()
    c = cl.closure(b)
    wall = time.perf_counter() - t0
    assert len(b.squares) <= c.calls <= 3 * len(b.squares) and c.nodes >= c.calls
    assert 0 < c.seconds <= wall
    calls, nodes = c.calls, c.nodes
    again = cl.run(c)  # nothing pending: no count (the sum of the seconds: test_the_seconds_add_up_over_the_runs)
    assert again is c and (again.calls, again.nodes) == (calls, nodes)
    c2 = cl.closure(b)
    assert (c2.calls, c2.nodes, c2.wave) == (c.calls, c.nodes, c.wave)


def test_view_masks_with_the_touching_lists_are_the_definition(g61):
    """``view_mask`` given the touching lists (as the closure calls it), against the definition over
    cells: a cell is in view when it is a board given or lies in the window of a solved tile."""
    b = g61[0]
    c = cl.start(b)
    rng = np.random.default_rng(5)
    for _ in range(40):
        solved = {int(j) for j in rng.choice(len(b.squares), size=int(rng.integers(1, 12)), replace=False)}
        i = int(rng.integers(len(b.squares)))
        x0, y0, s = b.squares[i]
        want = np.zeros((s + 1, s + 1), dtype=bool)
        for r in range(s + 1):
            for col in range(s + 1):
                R, C = y0 + r, x0 + col
                inside = any(
                    yj <= R <= yj + sj and xj <= C <= xj + sj for j, (xj, yj, sj) in enumerate(b.squares) if j in solved
                )
                want[r, col] = b.givens[R, C] or inside
        got = cl.view_mask(b, solved, i, [set(t) for t in c.touching])
        assert (got == want).all(), (i, sorted(solved))
        assert (cl.view_mask(b, solved, i) == want).all()


def test_a_count_of_zero_is_the_closure_step_failing_by_name(g61, monkeypatch):
    b = g61[0]
    monkeypatch.setattr(cl, "count_rows", lambda n, vals, known, k: (0, [], 7))
    with pytest.raises(CheckFailed) as e:
        cl.closure(b)
    assert e.value.step == "closure" and str(e.value) == (
        f"closure: tile {b.seed_tile} has no solution agreeing with its view "
        "(internal error: its own solution should be one)"
    )


def test_the_stall_messages_word_for_word():
    c = cl.closure(board(STALL))
    assert not c.complete
    st_ = c.stalled()
    names = ", ".join(str(i) for i in st_)
    assert cl.stall_message(c) == (
        f"a player solving one tile at a time stalls after {c.solved()} of 4 tiles ({c.waves} waves): "
        f"tiles {names} each keep more than one solution in their view"
    )
    assert cl.stall_message(c, limit=1).endswith(f"tiles {st_[0]}, … each keep more than one solution in their view")
    if len(st_) == 1:
        assert ", …" not in cl.stall_message(c, limit=1)
    nobody = cl.start(board(np.zeros_like(STALL), seed=99))  # a seed tile id none of the tiles has
    nobody.pending = set()
    assert cl.stall_message(nobody) == "no tile is playable: 4 of 4 tiles are never reached"
    part = cl.start(board(np.zeros_like(STALL)))
    part.wave = [1, 0, 0, 0]
    part.seams = [set(), set(), set(), set()]
    assert cl.stall_message(part) == "3 tiles share no seam path with the solved ones"


# ---------------------------------------------------------------- the closure's moving parts, one by one

SKIP = np.array(
    [
        [ch == "x" for ch in row]
        for row in """
.xx.....x.x
..xxxxx..x.
xx....xx..x
..xxxxxxx..
.x.x.......
x.....xx...
.xxxx.x....
xxx....x...
x.xx.x.xx.x
xx..xx..xxx
xxx......xx""".split()
    ],
    dtype=bool,
)


def test_a_tile_whose_view_has_not_grown_is_skipped_not_the_end_of_its_wave():
    """On ``SKIP`` tile 1 fails in wave 2 and tile 2 is solved; tile 2 shares only the centre cell with
    tile 1, which tile 0's window already showed, so in wave 3 tile 1 is passed over uncounted and tile
    3, after it in that wave, is still counted. One count per tile plus one for the stall."""
    assert oracle_closure(SKIP) == [1, 4, 2, 3]
    c = cl.closure(board(SKIP))
    assert c.wave == [1, 4, 2, 3] and c.waves == 4 and c.complete
    assert c.calls == 4 + 1


def test_a_stalled_tile_whose_view_has_not_grown_is_not_counted_again():
    """Running the waves again with the stalled tiles pending and nothing new in their views counts
    nothing and solves nothing."""
    c = cl.closure(board(STALL))
    calls, nodes = c.calls, c.nodes
    c.pending = set(c.stalled())
    assert cl.run(c) is c
    assert (c.calls, c.nodes, c.wave, c.waves, c.pending) == (calls, nodes, [1, 2, 0, 0], 2, set())


def test_run_resumes_after_a_clue_skipping_the_solved_tiles_it_is_given():
    """``run`` goes on from any pending set: solved tiles named in it are passed over, the others are
    counted, so a clue added by hand with every tile pending plays out as ``add_play_clues`` plays it."""
    played = cl.closure(board(STALL))
    ((r, col),) = cl.add_play_clues(board(STALL), played)
    c = cl.closure(board(STALL))
    c.known[r, col] = True
    c.pending = {0, 1, 2, 3}
    cl.run(c)
    assert c.complete and c.wave == played.wave == [1, 2, 3, 4]


def test_the_waves_count_two_candidates_and_the_clues_a_sample(monkeypatch):
    """Every count of the waves asks the engine for at most 2 candidates (unique or not is all they
    need); scoring a stalled tile for a clue asks for ``CLUE_SAMPLE``."""
    asked = []
    real = cl.count_rows

    def spy(n, vals, known, k):
        asked.append(k)
        return real(n, vals, known, k)

    monkeypatch.setattr(cl, "count_rows", spy)
    c = cl.closure(board(STALL))
    assert asked == [2] * c.calls and c.calls > 0
    asked.clear()
    cl.add_play_clues(board(STALL), c)
    assert asked[:2] == [fr.CLUE_SAMPLE] * 2 and asked[2:] == [2] * (len(asked) - 2) and len(asked) > 2


def test_the_seconds_add_up_over_the_runs(monkeypatch):
    """``seconds`` is the sum over every ``run`` on the closure (a clock that ticks by one per
    reading: each run reads it twice)."""
    import itertools
    from types import SimpleNamespace

    ticks = itertools.count()
    monkeypatch.setattr(cl, "time", SimpleNamespace(perf_counter=lambda: float(next(ticks))))
    c = cl.closure(board(STALL))
    assert c.seconds == 1.0
    cl.run(c)
    assert c.seconds == 2.0


def test_holds_is_the_window_edges_included():
    """``_holds(board, i, r, c)`` is membership in ``Board.window(i)``, over every cell of the board and
    the ring around it: the first and last row and column of each window are in it."""
    b = board(STALL)
    G = b.G
    for i in range(len(b.squares)):
        rows, cols = b.window(i)
        for r in range(-1, G + 1):
            for col in range(-1, G + 1):
                want = rows.start <= r < rows.stop and cols.start <= col < cols.stop
                assert cl._holds(b, i, r, col) == want, (i, r, col)
    x0, y0, s = b.squares[3]
    assert all(cl._holds(b, 3, r, col) for r in (y0, y0 + s) for col in (x0, x0 + s))
    assert not any(
        cl._holds(b, 3, r, col) for r, col in ((y0 - 1, x0), (y0, x0 - 1), (y0 + s + 1, x0), (y0, x0 + s + 1))
    )


def test_the_clue_is_the_best_scored_cell_whatever_the_order_of_the_stalled_tiles():
    """``_pick`` takes the highest key of ``_score`` over the stalled tiles (the fewest candidates first),
    so the order they are given in does not matter."""
    c = cl.closure(board(STALL))
    stalled = c.stalled()
    scores = [cl._score(c, i) for i in stalled]
    want = max(scores)[1]
    assert len({key for key, _cell in scores}) == len(stalled) == 2  # two tiles, told apart by their keys
    assert cl._pick(c, stalled, {}) == cl._pick(c, stalled[::-1], {}) == want


def test_the_pick_cache_counts_a_tile_again_only_when_its_view_grew():
    """A second pick with the same cache and the same views counts nothing and picks the same cell as
    an uncached pick; once a cell is added, exactly the tiles whose window holds it are counted again."""
    b = board(STALL)
    c = cl.closure(b)
    stalled = c.stalled()
    cache: dict = {}
    first = cl._pick(c, stalled, cache)
    calls = c.calls
    assert cl._pick(c, stalled, cache) == first and c.calls == calls  # from the cache: no count
    assert cl._pick(c, stalled, {}) == first and c.calls == calls + len(stalled)  # uncached: the same cell
    r, col = first
    c.known[r, col] = True
    grew = [i for i in stalled if cl._holds(b, i, r, col)]
    calls = c.calls
    again = cl._pick(c, stalled, cache)
    assert grew and c.calls == calls + len(grew)
    assert again == cl._pick(c, stalled, {})


def test_a_closure_passed_in_is_the_one_played_on(monkeypatch):
    """``add_play_clues(board, c)`` goes on from ``c``: no closure is computed again, the clues are the
    ones found from scratch, and ``c`` ends playable."""
    want = cl.add_play_clues(board(STALL))
    c = cl.closure(board(STALL))

    def no_second_closure(_board):
        raise AssertionError("the closure passed in was computed again")

    monkeypatch.setattr(cl, "closure", no_second_closure)
    assert cl.add_play_clues(board(STALL), c) == want and c.complete


def test_the_stall_message_ends_its_list_exactly_past_the_limit():
    """``limit`` names are listed; "…" follows only when more tiles stall than that."""
    c = cl.closure(board(STALL))
    st_ = c.stalled()
    assert len(st_) == 2
    tail = "each keep more than one solution in their view"
    assert cl.stall_message(c, limit=2).endswith(f"tiles {st_[0]}, {st_[1]} {tail}")
    assert cl.stall_message(c, limit=1).endswith(f"tiles {st_[0]}, … {tail}")


def _seed_only(b: Board) -> Board:
    """``b`` with no given but every cell of its seed tile: the seed tile is solved, and each of its
    seam neighbours sees only its seam with it."""
    import dataclasses

    g = np.zeros_like(b.givens)
    g[b.window(b.seed_tile)] = True
    return dataclasses.replace(b, givens=g)


def test_the_stall_message_names_six_of_many_stalled_tiles(g61):
    """By default the first six stalled tiles are named, then "…"; with the limit at their number,
    all of them and no "…"."""
    c = cl.closure(_seed_only(g61[0]))
    st_ = c.stalled()
    assert len(st_) >= 7 and c.solved() == 1 and c.waves == 1
    k = len(c.wave)
    head = f"a player solving one tile at a time stalls after 1 of {k} tiles (1 waves): tiles "
    tail = " each keep more than one solution in their view"
    assert cl.stall_message(c) == head + ", ".join(map(str, st_[:6])) + ", …" + tail
    assert cl.stall_message(c, limit=len(st_)) == head + ", ".join(map(str, st_)) + tail
    assert cl.stall_message(c, limit=len(st_) - 1) == head + ", ".join(map(str, st_[:-1])) + ", …" + tail


def test_no_legal_clue_is_the_clues_step_failing_by_name(g61):
    """Every cell the stalled tiles' views lack held by 3+ tiles (here: every tile cell claims 3
    owners): ``add_play_clues`` fails as step ``clues``, naming the first six stalled tiles."""
    import dataclasses

    b = _seed_only(g61[0])
    b = dataclasses.replace(b, owners=np.where(b.owners > 0, np.maximum(b.owners, 3), 0).astype(b.owners.dtype))
    st_ = cl.closure(b).stalled()
    assert len(st_) >= 7
    with pytest.raises(CheckFailed) as e:
        cl.add_play_clues(b)
    assert e.value.step == "clues" and str(e.value) == (
        f"clues: tiles {st_[:6]} stall and every cell their views lack is held by 3+ tiles: no legal clue exists"
    )
