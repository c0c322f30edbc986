"""The C twin of the stitcher's hot path (``stitcher._core``) gives exactly what the Python
reference gives: board reads and writes (``board.PyBoard``), index lookups
(``_SizeIndex.lookup_py``), seeded draws (``Stream.randbelow``, ``place.choose``), the forward
check (``check.PyForwardCheck``) and the exact 6×6 table (``small.solutions_edges``) — on random
cases, with the stream state compared after every draw sequence. A last test runs the pinned
stitch with the extension blocked, so the pure-Python path keeps the pinned digest too.
"""

from __future__ import annotations

import os
import subprocess
import sys
from functools import lru_cache

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from packers import make_packing
from packers.packing import adjacency
from stitcher import _core
from stitcher import index as index_module
from stitcher.board import Board, PyBoard, SeamConflict
from stitcher.check import ForwardCheck, PyForwardCheck
from stitcher.index import MemoryIndex
from stitcher.place import choose
from stitcher.small import solutions_edges
from tilelib.constraint import Constraint
from tilelib.rng import Stream
from tilelib.rules import valid_lines

SETTINGS = settings(max_examples=60, deadline=None)


def stream_state(s: Stream) -> tuple:
    return s._counter, s.block, s.pos


def twin_streams(seed: bytes) -> tuple[Stream, Stream]:
    return Stream(seed, "t"), Stream(seed, "t")


# ---------------------------------------------------------------- the stream


@SETTINGS
@given(st.binary(min_size=32, max_size=32), st.lists(st.integers(1, 1 << 40), min_size=1, max_size=40))
def test_randbelow_draws_what_the_stream_draws(seed, ns):
    a, b = twin_streams(seed)
    assert [a.randbelow(n) for n in ns] == [_core.randbelow(b, n) for n in ns]
    assert stream_state(a) == stream_state(b)
    assert a.bytes(5) == b.bytes(5)


def test_randbelow_rejects_bad_bounds():
    with pytest.raises(ValueError):
        _core.randbelow(Stream(b"\0" * 32), 0)
    with pytest.raises(AttributeError):
        _core.randbelow(object(), 5)  # not a Stream


# ---------------------------------------------------------------- the board


@SETTINGS
@given(st.integers(0, 1 << 30), st.integers(10, 40))
def test_board_matches_the_numpy_board(seed, G):
    rng = np.random.default_rng(seed)
    a, b = PyBoard(G), Board(G)
    placed = []
    for _ in range(40):
        op = rng.integers(0, 3)
        n = int(rng.choice([2, 4, 6, 8]))
        if n > G:
            continue
        x, y = (int(v) for v in rng.integers(0, G - n + 1, size=2))
        if op == 0 or not placed:
            # edges from a random grid (consistent corners) or fully random (corners may clash)
            edges = tuple(int(v) for v in rng.integers(0, 1 << n, size=4))
            results = []
            for board in (a, b):
                try:
                    board.place(x, y, n, edges)
                    results.append(True)
                except SeamConflict:
                    results.append(False)
            assert results[0] == results[1]
            if results[0]:
                placed.append((x, y, n))
        elif op == 1:
            x, y, n = placed.pop(int(rng.integers(0, len(placed))))
            a.remove(x, y, n)
            b.remove(x, y, n)
        assert a.constraint(x, y, n) == b.constraint(x, y, n)
        assert (a.values == b.values).all() and (a.known == b.known).all() and (a.holders == b.holders).all()


def test_board_rejects_windows_off_the_board():
    b = Board(10)
    with pytest.raises(ValueError):
        b.constraint(6, 0, 6)
    with pytest.raises(ValueError):
        b.place(0, 0, 6, (1 << 6, 0, 0, 0))
    with pytest.raises(ValueError):
        b.core.remove(-1, 0, 6)


# ---------------------------------------------------------------- the index and the draws


def random_rows(rng, n: int, k: int, m_hi: int = 4, pool: int | None = None) -> list[tuple]:
    """k index rows (hash, edges, m, alt_sides) of side n: m in 1..m_hi-1, edges random valid lines
    (of the first ``pool`` of them if given), drawn in that order row by row."""
    lines = valid_lines(n)
    out = []
    for _ in range(k):
        m = int(rng.integers(1, m_hi))
        edges = tuple(int(lines[v]) for v in rng.integers(0, len(lines) if pool is None else pool, size=4))
        out.append((rng.bytes(32).hex(), edges, m, int(rng.integers(0, 16 ** (m - 1)))))
    return out


@lru_cache(maxsize=4)
def random_index(seed: int) -> MemoryIndex:
    """Tiles of n = 6 and 8 with random valid lines as edges (not necessarily of one grid: the
    index does not care; the numpy lookup of a partly known side assumes valid lines)."""
    rng = np.random.default_rng(seed)
    idx = MemoryIndex()
    for n, count in ((6, 300), (8, 120)):
        rows = random_rows(rng, n, count)
        idx._size(n).add(rows[: count // 2])
        for r in rows[count // 2 :]:  # one at a time, as the drain adds them
            idx.add(r[0], n, r[1], r[2], r[3])
    return idx


def random_constraint(rng, idx: MemoryIndex, n: int) -> Constraint:
    """Masks over the edges of a real entry (a hit) or random values (usually a miss)."""
    si = idx._size(n)
    full = (1 << n) - 1
    masks = []
    for _s in range(4):
        kind = rng.integers(0, 3)
        masks.append(0 if kind == 0 else full if kind == 1 else int(rng.integers(0, full + 1)))
    if rng.integers(0, 4):
        e = si.edges(int(rng.integers(0, 16 * si.size)))
    else:
        e = rng.integers(0, full + 1, size=4)
    return Constraint(n, tuple(masks), tuple(int(v) & m for v, m in zip(e, masks, strict=True)))


@SETTINGS
@given(st.integers(0, 1 << 30))
def test_lookup_matches_the_numpy_lookup(seed):
    rng = np.random.default_rng(seed)
    idx = random_index(seed % 3)
    for _ in range(20):
        n = int(rng.choice([6, 8]))
        c = random_constraint(rng, idx, n)
        for m1 in (False, True):
            got = idx._size(n).lookup(c, m1)
            assert got.tolist() == idx._size(n).lookup_py(c, m1).tolist()


@SETTINGS
@given(st.integers(0, 1 << 30), st.binary(min_size=32, max_size=32), st.integers(1, 40))
def test_choose_without_check_matches_python(seed, sseed, tries):
    rng = np.random.default_rng(seed)
    idx = random_index(seed % 3)
    a, b = twin_streams(sseed)
    for _ in range(10):
        n = int(rng.choice([6, 8]))
        c = random_constraint(rng, idx, n)
        m1, known = bool(rng.integers(0, 2)), int(rng.integers(0, 16))
        keys, pins = idx.lookup(c, m1)
        want = choose(keys, pins, known, a, tries=tries)
        got = idx.choose(c, m1, known, b, tries=tries)
        assert (None if want is None else (int(want[0]), want[1], want[2])) == got
        assert stream_state(a) == stream_state(b)


@pytest.mark.parametrize("tries", [0, -1])
def test_choose_without_tries_is_a_value_error_in_both_twins(tries):
    """No tries draws nothing: both twins refuse it up front (the reference used to fail on a
    None it took for the first draw, with a TypeError, when there were candidates)."""
    idx = random_index(0)
    c = Constraint(6, (0, 0, 0, 0), (0, 0, 0, 0))  # every tile of n = 6: candidates to draw
    keys, pins = idx.lookup(c, False)
    assert len(keys)
    with pytest.raises(ValueError, match="tries must be >= 1"):
        choose(keys, pins, 0, Stream(b"\0" * 32, "t"), tries=tries)
    with pytest.raises(ValueError, match="tries must be >= 1"):
        idx.choose(c, False, 0, Stream(b"\0" * 32, "t"), tries=tries)


def test_tiles_added_one_by_one_merge_into_the_order(monkeypatch):
    """Drained tiles join the C table as extras (merged into the (hash, t) order at lookup) until
    EXTRA_LIMIT, then the table is rebuilt: lookups and draws match Python throughout. (The limit
    is set to 32 tiles here so that 80 tiles cross it more than once.)"""
    monkeypatch.setattr(index_module, "EXTRA_LIMIT", 32)
    rng = np.random.default_rng(5)
    idx = MemoryIndex()
    lines = valid_lines(6)
    si = idx._size(6)
    a, b = twin_streams(b"\x05" * 32)
    extras_seen = rebuilt = 0
    for _k in range(80):
        edges = tuple(int(lines[v]) for v in rng.integers(0, len(lines), size=4))
        m = int(rng.integers(1, 3))
        idx.add(rng.bytes(32).hex(), 6, edges, m, int(rng.integers(0, 16 ** (m - 1))))
        extras_seen = max(extras_seen, si.table.E)
        rebuilt += si.table.E == 0
        for _ in range(5):
            c = random_constraint(rng, idx, 6)
            m1, known = bool(rng.integers(0, 2)), int(rng.integers(0, 16))
            assert si.lookup(c, m1).tolist() == si.lookup_py(c, m1).tolist()
            keys, pins = idx.lookup(c, m1)
            want = choose(keys, pins, known, a)
            assert (None if want is None else (int(want[0]), want[1], want[2])) == idx.choose(c, m1, known, b)
            assert stream_state(a) == stream_state(b)
        c = Constraint(6, (0, 0, 0, 0), (0, 0, 0, 0))
        assert si.lookup(c, False).tolist() == si.lookup_py(c, False).tolist()
    assert extras_seen == 32 and rebuilt >= 2


def test_a_large_table_takes_an_eighth_of_its_entries_as_extras(monkeypatch):
    """A table of R ranked tiles is rebuilt only past max(EXTRA_LIMIT, R / 8) extras (a forked
    half's drained tiles stay extras, so the inherited table is never copied), and its lookups
    match Python with thousands of extra entries."""
    monkeypatch.setattr(index_module, "EXTRA_LIMIT", 4)
    rng = np.random.default_rng(8)
    idx = MemoryIndex()
    idx.add_rows(6, random_rows(rng, 6, 512, m_hi=3))  # 512 ranked tiles: 64 extras allowed
    si = idx._size(6)
    assert si.table.E == 0
    for _ in range(64):  # 1,024 entries, one tile at a time
        idx.add_rows(6, random_rows(rng, 6, 1, m_hi=3))
    assert si.table.E == 64
    for _ in range(40):
        c = random_constraint(rng, idx, 6)
        m1 = bool(rng.integers(0, 2))
        assert si.lookup(c, m1).tolist() == si.lookup_py(c, m1).tolist()
    idx.add_rows(6, random_rows(rng, 6, 1, m_hi=3))  # past an eighth: rebuilt
    assert si.table.E == 0 and si._ranked == si.size == 577


# ---------------------------------------------------------------- the forward check


def random_case(seed: int, G: int, packer: str):
    """A real packing, a board of random known cells, some squares placed, some split."""
    rng = np.random.default_rng(seed)
    packing = make_packing(packer, G, seed.to_bytes(32, "big"))
    squares = list(packing.squares)
    adj = adjacency(packing.squares)
    placements = [("h", 0) if rng.random() < 0.4 else None for _ in squares]
    children = {j: [] for j in range(len(squares)) if rng.random() < 0.05}
    board = Board(packing.G)
    board.known[...] = rng.random((packing.G, packing.G)) < rng.random()
    board.values[...] = rng.integers(0, 2, size=(packing.G, packing.G))
    return rng, squares, adj, placements, children, board


@SETTINGS
@given(st.integers(0, 1 << 30), st.sampled_from(["big-first", "grown", "bands", "substitution", "islands"]))
def test_forward_check_matches_the_python_check(seed, packer):
    rng, squares, adj, placements, children, board = random_case(seed, 61, packer)
    py = PyForwardCheck(board, squares, adj, placements, children)
    fc = ForwardCheck(board, squares, adj, placements, children)
    seen = set()
    for _ in range(30):
        i = int(rng.integers(0, len(squares)))
        n = squares[i][2] + 1
        edges = tuple(int(v) for v in rng.integers(0, 1 << n, size=4))
        got = fc.score(i, edges)
        assert got == py.score(i, edges), (i, edges)
        seen.add(min(got, 2))
    assert seen & {1, 2} or seen == {0}


def test_forward_check_both_outcomes_are_seen():
    """The random cases above are not all 0 or all 'no neighbour': both outcomes occur."""
    scores = []
    for seed in range(6):
        rng, squares, adj, placements, children, board = random_case(seed, 61, "big-first")
        fc = ForwardCheck(board, squares, adj, placements, children)
        for i in range(0, len(squares), 7):
            n = squares[i][2] + 1
            scores.append(fc.score(i, tuple(int(v) for v in rng.integers(0, 1 << n, size=4))))
    assert 0 in scores and any(0 < s < _core.NONE_AFFECTED for s in scores)


@SETTINGS
@given(st.integers(0, 1 << 30), st.binary(min_size=32, max_size=32))
def test_choose_with_check_matches_python(seed, sseed):
    """The C draw loop with a C Checker takes the key place.choose takes with the same scores."""
    rng, squares, adj, placements, children, board = random_case(seed, 61, "big-first")
    idx = random_index(seed % 3)
    fc = ForwardCheck(board, squares, adj, placements, children)
    a, b = twin_streams(sseed)
    for _ in range(8):
        n = int(rng.choice([6, 8]))
        cands = [k for k, sq in enumerate(squares) if sq[2] + 1 == n]
        if not cands:
            continue
        i = cands[int(rng.integers(0, len(cands)))]
        c = random_constraint(rng, idx, n)
        known, best_of = int(rng.integers(0, 16)), int(rng.integers(1, 3))
        table = idx.table(n)
        check = fc.checker(i, table)
        keys, pins = idx.lookup(c, False)
        want = choose(keys, pins, known, a, check=lambda k, check=check: check(int(k)), best_of=best_of)
        got = idx.choose(c, False, known, b, check=fc.checker(i, table), best_of=best_of)
        assert (None if want is None else (int(want[0]), want[1], want[2])) == got
        assert stream_state(a) == stream_state(b)


def test_checker_rejects_bad_input():
    rng, squares, adj, placements, children, board = random_case(1, 61, "big-first")
    fc = ForwardCheck(board, squares, adj, placements, children)
    with pytest.raises(TypeError):
        fc.checker(0)(5)  # a key without a table
    with pytest.raises(ValueError):
        fc.checker(0)((1, 2, 3))
    with pytest.raises(ValueError):
        fc.checker(0)((1 << 20, 0, 0, 0))


def test_exact_table_is_the_python_table():
    got = sorted(_core.solutions_edges6())
    want = sorted(map(tuple, solutions_edges(6).tolist()))
    assert got == want and len(got) == 4140


# ---------------------------------------------------------------- the reference path end to end


def test_pinned_digest_without_the_extension():
    """With ``stitcher._core`` blocked the Python reference path runs and keeps the pinned digest,
    after one single-line warning (``tilelib.native``), not silently."""
    code = (
        "import sys, tempfile, pathlib, hashlib, json\n"
        "sys.modules['stitcher._core'] = None\n"
        "sys.path.insert(0, 'tests')\n"
        "import test_stitch_seams as t\n"
        "from stitcher import board, check, index\n"
        "assert board._core is None and board.Board is board.PyBoard\n"
        "assert check.ForwardCheck is check.PyForwardCheck\n"
        "d = pathlib.Path(tempfile.mkdtemp())\n"
        "with t.pin_library(d / 'pin.sqlite') as lib:\n"
        "    parts, counts = t.pinned_stitches(lib)\n"
        "assert counts == t.PIN_COUNTS, counts\n"
        "assert hashlib.sha256(json.dumps(parts).encode()).hexdigest() == t.PIN_DIGEST\n"
    )
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    r = subprocess.run([sys.executable, "-c", code], cwd=root, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]
    warned = [line for line in r.stderr.splitlines() if "TwinWarning" in line]
    assert len(warned) == 1 and "stitcher._core is not built" in warned[0], r.stderr


@lru_cache(maxsize=2)
def sparse_index(seed: int) -> MemoryIndex:
    """n = 12 and 16 tiles: each whole-side value is held by fewer than 1 in 64 entries, so
    lookups with a whole side walk its posting list (not the dense bitsets the n = 6 and 8
    indexes above mostly use). Some tiles are added one by one (extras)."""
    rng = np.random.default_rng(100 + seed)
    idx = MemoryIndex()
    for n, count in ((12, 400), (16, 200)):
        rows = random_rows(rng, n, count, pool=40)  # few distinct lines: lookups on real edges find several
        idx._size(n).add(rows[: count - 20])
        for r in rows[count - 20 :]:
            idx.add(r[0], n, r[1], r[2], r[3])
    return idx


@SETTINGS
@given(st.integers(0, 1 << 30), st.binary(min_size=32, max_size=32))
def test_lookups_and_draws_through_posting_lists_match_python(seed, sseed):
    rng = np.random.default_rng(seed)
    idx = sparse_index(seed % 2)
    a, b = twin_streams(sseed)
    walked = 0
    for _ in range(20):
        n = int(rng.choice([12, 16]))
        si = idx._size(n)
        c = random_constraint(rng, idx, n)
        walked += any(m == (1 << n) - 1 for m in c.masks)
        for m1 in (False, True):
            assert si.lookup(c, m1).tolist() == si.lookup_py(c, m1).tolist()
        known = int(rng.integers(0, 16))
        keys, pins = idx.lookup(c, False)
        want = choose(keys, pins, known, a)
        assert (None if want is None else (int(want[0]), want[1], want[2])) == idx.choose(c, False, known, b)
        assert stream_state(a) == stream_state(b)
    assert walked


@SETTINGS
@given(st.integers(0, 1 << 30), st.sampled_from([6, 8, 16]))
def test_index_entries_are_the_transformed_grids_edges(seed, n):
    """Entry 16·row + t of a size index has the edges of apply_grid(grid, t) read off the
    transformed grid itself (tilelib.bits.edges) and the pin bitmap oriented by t, in the C table
    and in numpy; the rows sort by their 60 hash bits: the pull-back through the transforms
    checked against the symmetry group's grids."""
    from tilelib.bits import edges as grid_edges
    from tilelib.symmetry import apply_grid

    rng = np.random.default_rng(seed)
    k = int(rng.integers(1, 6))
    grids = rng.integers(0, 2, size=(k, n, n)).astype(np.uint8)
    hashes = [rng.bytes(32).hex() for _ in range(k)]
    pins = rng.integers(0, 1 << 16, size=k)
    canon, m = np.array([grid_edges(g) for g in grids], dtype=np.int64), rng.integers(1, 4, size=k)
    si, py = index_module._SizeIndex(n), index_module._SizeIndex(n)
    si.add_arrays(hashes, canon, m, pins)
    py.add_arrays(hashes, canon, m, pins, table=False)
    for row, g in enumerate(grids):
        assert int(si.H[row]) == int(hashes[row][:15], 16)  # the first 60 bits: the rows' order
        for t in range(16):
            e = 16 * row + t
            want = grid_edges(apply_grid(g, t))
            assert tuple(si.edges(e)) == want == tuple(py.edges(e))
            assert int(si.oriented_pins(np.array([e]))[0]) == index_module.oriented_pins(int(pins[row]), t)
            # the lookup of the whole oriented edges finds this entry, in C and in numpy
            c = Constraint(n, ((1 << n) - 1,) * 4, want)
            assert e in si.lookup(c, False).tolist() and e in py.lookup_py(c, False).tolist()


@pytest.mark.parametrize("threads", [1, 2, 3])
def test_tables_built_on_threads_answer_as_one_built_inline(threads):
    """build_tables (the C constructor without the GIL, several tables at once) gives tables whose
    lookups equal those of tables built one by one as tiles are added (extras, rebuilds)."""
    from stitcher.index import build_tables

    rng = np.random.default_rng(threads)
    ref = random_index(1)
    lazy = MemoryIndex()
    for n, si in ref.sizes.items():
        k = si.size
        lazy._size(n).add_arrays(list(si.hashes), si.CE[:k], si.M[:k], si.PINS[:k].astype(np.int64), table=False)
        assert lazy.sizes[n].table is None
    build_tables(list(lazy.sizes.values()), threads=threads)
    for n in ref.sizes:
        a, b = lazy.sizes[n], ref.sizes[n]
        assert a.hashes == b.hashes and a.size == b.size
        for name in ("CE", "PINS", "M", "H"):
            assert (getattr(a, name)[: a.size] == getattr(b, name)[: b.size]).all()
        for _ in range(40):
            c = random_constraint(rng, ref, n)
            for m1 in (False, True):
                want = a.lookup_py(c, m1).tolist()
                assert a.lookup(c, m1).tolist() == want == b.lookup(c, m1).tolist()


def _keyed(idx, n: int, keys) -> list[tuple[str, int]]:
    return [idx.decode(n, k)[:2] for k in keys]


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_a_level_view_answers_as_an_index_of_its_levels_tiles(seed):
    """A ``LevelView`` of an index (its entries and C table, a level mask at lookup) gives what a
    separate index holding only the tiles of those levels gives: the same (hash, t) candidates in
    the same order, and the same draws from the same stream — with tiles added after the table was
    built (extras, then a rebuild past EXTRA_LIMIT), with dead tiles, in C and in numpy."""
    from stitcher.index import EXTRA_LIMIT, LevelView

    rng = np.random.default_rng(seed)
    base = MemoryIndex()
    sets = [frozenset({2}), frozenset({3, 5}), frozenset({1, 2, 3, 4, 5})]
    alone = {s_: MemoryIndex() for s_ in sets}
    for n, count in ((6, 200), (8, 90)):
        lines = valid_lines(n)
        for k in [count // 2] + [1] * 8 + [EXTRA_LIMIT + 3]:  # built, extras, a rebuild
            rows, lv = [], []
            for _ in range(k):
                m = int(rng.integers(1, 4))
                edges = tuple(int(lines[v]) for v in rng.integers(0, len(lines), size=4))
                rows.append((rng.bytes(32).hex(), edges, m, int(rng.integers(0, 16 ** (m - 1)))))
                lv.append(int(rng.integers(1, 6)))
            base.add_rows(n, rows, ladder=lv)
            for s_, idx in alone.items():
                idx.add_rows(n, [r for r, v in zip(rows, lv, strict=True) if v in s_])
        dead = [h for h in base.tile_hashes(n) if rng.random() < 0.2]
        for idx in [base, *alone.values()]:
            idx.set_dead(n, dead, True)
    views = {s_: LevelView(base, s_) for s_ in sets}
    for s_, view in views.items():
        one = alone[s_]
        for n in (6, 8):
            assert view.tile_hashes(n) == one.tile_hashes(n)
            for _ in range(30):
                c = random_constraint(rng, base, n)
                for m1 in (False, True):
                    want = _keyed(one, n, one.lookup(c, m1)[0])
                    assert _keyed(base, n, view.lookup(c, m1)[0]) == want
                    assert _keyed(base, n, base.sizes[n].lookup_py(c, m1, view.mask)) == want
                    got_a = one.choose(c, m1, 3, Stream(bytes([seed]), "v"))
                    got_b = view.choose(c, m1, 3, Stream(bytes([seed]), "v"))
                    assert (got_a is None) == (got_b is None)
                    if got_a is not None:
                        assert one.decode(n, got_a[0])[:2] == base.decode(n, got_b[0])[:2]
                        assert got_a[1:] == got_b[1:]
    assert all(len(v.lookup(Constraint(6, (0, 0, 0, 0), (0, 0, 0, 0)))[0]) for v in views.values())


def test_level_masks_reject_what_a_table_cannot_hold():
    """A level outside 1..7, an empty set, or a mask past the table's 8 levels is a ValueError."""
    from stitcher.index import level_mask

    assert level_mask({2, 3}) == 0b1100
    for bad in ({0}, {8}, set()):
        with pytest.raises(ValueError):
            level_mask(bad)
    c = Constraint(6, (0, 0, 0, 0), (0, 0, 0, 0))
    with pytest.raises(ValueError):
        random_index(0).sizes[6].table.lookup(c.masks, c.values, False, 1 << 8)


def test_appended_entries_go_into_room_made_up_front(monkeypatch):
    """An index's arrays and its C table keep a quarter of room past their entries, so the drained
    tiles a forked half appends are written into pages of their own: nothing inherited is copied
    (no reallocation) until that room is spent, and lookups still match Python."""
    monkeypatch.setattr(index_module, "EXTRA_LIMIT", 64)
    rng = np.random.default_rng(9)
    idx = MemoryIndex()
    idx.add_rows(6, random_rows(rng, 6, 1200, m_hi=3))  # 1,200 tiles at once: a table built
    monkeypatch.setattr(index_module, "EXTRA_LIMIT", 4096)
    si = idx._size(6)
    room, table_room, hk = len(si.H), si.table.room, si.H.ctypes.data
    assert room >= 1200 + 1200 // 4 and table_room >= 1200 + 1200 // 4
    for _ in range(90):  # 90 tiles, one at a time: within the room
        idx.add_rows(6, random_rows(rng, 6, 1, m_hi=3))
    assert si.size == 1290 and si.H.ctypes.data == hk and si.table.room == table_room and si.table.E == 90
    for _ in range(20):
        c = random_constraint(rng, idx, 6)
        assert si.lookup(c, False).tolist() == si.lookup_py(c, False).tolist()
    for _ in range(30):  # past the room: both grow, by a quarter or more
        idx.add_rows(6, random_rows(rng, 6, 12, m_hi=3))
    assert len(si.H) >= si.size and si.table.room >= si.table.N > table_room
    for _ in range(20):
        c = random_constraint(rng, idx, 6)
        assert si.lookup(c, True).tolist() == si.lookup_py(c, True).tolist()
