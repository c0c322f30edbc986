"""The stitch's two halves (stitcher/regions.py): a partition whose halves share no cell, the same
board and library whatever the number of worker processes, and a journal whose replay writes what
direct writes would."""

from __future__ import annotations

import hashlib
import importlib
import shutil

import pytest
from hypothesis import given, settings
from hypothesis import strategies as hst

from daily.build import BuildOptions, build
from packers import make_packing
from packers.packing import adjacency, validate_packing
from referee.manifest import from_json
from referee.verify import verify
from stitcher import regions
from stitcher.journal import LogJournal, SqlJournal, replay
from stitcher.order import bfs_distance, placement_order
from stitcher.stitch import StitchOptions, stitch
from tilelib import ledger
from tilelib.constraint import Constraint
from tilelib.rng import Stream
from tilelib.store import Library

SEED = bytes.fromhex("7e91" * 16)


def cells(square) -> set[tuple[int, int]]:
    x, y, s = square
    return {(x + i, y + j) for i in range(s + 1) for j in range(s + 1)}


@settings(max_examples=25, deadline=None)
@given(G=hst.integers(41, 161), k=hst.integers(0, 10**6), packer=hst.sampled_from(["big-first", "bands", "grown"]))
def test_split_is_a_partition_whose_halves_share_no_cell(G, k, packer):
    p = make_packing(packer, G, hashlib.sha256(b"regions-%d" % k).digest())
    sq = list(p.squares)
    order = placement_order(p, bfs_distance(adjacency(sq), p.seed_tile))
    sp = regions.split(sq, p.seed_tile, p.P, order)
    left, right = sp.halves
    assert sorted(left + right + sp.strip) == sorted(range(len(sq)))
    assert p.seed_tile not in sp.strip
    left_cells = set().union(*(cells(sq[i]) for i in left)) if left else set()
    right_cells = set().union(*(cells(sq[i]) for i in right)) if right else set()
    assert not left_cells & right_cells
    for i in sp.strip:  # the strip is exactly the squares crossing the column
        x, _y, s = sq[i]
        assert x <= sp.column < x + s
    for part in (left, right, sp.strip):  # each part keeps the placement order
        assert part == sorted(part, key=order.index)


def _ledger_rows(conn):
    return conn.execute(
        "SELECT n, side_mask, top, right, bottom, left, top_mask, right_mask, "
        "bottom_mask, left_mask, packing, count, nofit, tile FROM misses ORDER BY id"
    ).fetchall()


def test_a_replayed_log_writes_what_direct_writes_would(tmp_path, sample_tiles):
    """The same sequence of misses, marks and inserts, once through SqlJournal and once logged by a
    LogJournal and replayed: the same misses rows (ids, counts, flags) and tiles."""
    a, b = tmp_path / "a.sqlite", tmp_path / "b.sqlite"
    with Library.open(a, create=True) as lib:
        ledger.record_miss(lib.conn, Constraint(6, (63, 0, 0, 0), (0b001011, 0, 0, 0)), "old")
        lib.conn.commit()
    shutil.copyfile(a, b)
    c1 = Constraint(6, (63, 0, 0, 0), (0b001011, 0, 0, 0))  # already in the ledger
    c2 = Constraint(6, (0, 63, 0, 0), (0, 0b001011, 0, 0))  # c1 turned: the same miss
    c3 = Constraint(8, (255, 0, 0, 255), (0b00101101, 0, 0, 0b00110011))
    tile = sample_tiles[0]

    def script(j):
        m1 = j.record_miss(c1, "p")
        m2 = j.record_miss(c3, "p")
        h, _t = j.insert(tile)
        j.mark_drained(m2.id, h)
        m3 = j.record_miss(c2, "p")
        assert m3.id == m1.id and m3.count == m1.count + 1
        j.mark_nofit(m1.id)

    with Library.open(a) as lib:
        j = SqlJournal(lib, lib.conn)
        script(j)
        assert j.flush(set()) == 0  # the one tile is named by the ledger: written
        lib.conn.commit()
        direct = _ledger_rows(lib.conn), sorted(r[0] for r in lib.conn.execute("SELECT hash FROM tiles"))
    log = LogJournal(b)
    script(log)
    log.close()
    with Library.open(b) as lib:
        j = SqlJournal(lib, lib.conn)
        for t in log.tiles:
            j.insert(t)
        replay(log.ops, j)
        j.flush(set())
        lib.conn.commit()
        replayed = _ledger_rows(lib.conn), sorted(r[0] for r in lib.conn.execute("SELECT hash FROM tiles"))
    assert replayed == direct
    assert direct[0][0][-3:] == (3, 1, None) and direct[0][1][-2:] == (0, tile_hash(direct[1], tile))


def test_kept_back_tiles_are_written_only_if_used_or_named(tmp_path, sample_tiles):
    """SqlJournal keeps made tiles back: visible to get_oriented (and to a half's LogJournal that
    inherits them) before the flush; the flush writes those the board uses or the ledger names,
    in the order made, and drops the rest. Without defer every insert is written at once."""
    t_used, t_named, t_spare = sample_tiles[:3]
    with Library.open(tmp_path / "k.sqlite", create=True) as lib:
        j = SqlJournal(lib, lib.conn)
        h_used, tu = j.insert(t_used)
        h_named, _ = j.insert(t_named)
        h_spare, _ = j.insert(t_spare)
        assert not lib.has(h_used) and j.get_oriented(h_used, tu) == t_used
        log = LogJournal(lib.path, inherited=j.pending)
        assert log.get_oriented(h_used, tu) == t_used and log.get_oriented("0" * 64, 0) is None
        log.close()
        m = j.record_miss(Constraint(6, (63, 0, 0, 0), (0b001011, 0, 0, 0)), "p")
        j.mark_drained(m.id, h_named)
        j.write_named()  # the named tile is written before any commit
        assert lib.has(h_named) and not lib.has(h_used) and h_named not in j.pending
        assert j.flush({h_used}) == 1
        lib.conn.commit()
        assert lib.has(h_used) and lib.has(h_named) and not lib.has(h_spare)
        rows = [h for (h,) in lib.conn.execute("SELECT hash FROM tiles ORDER BY rowid")]
        assert rows == [h_named, h_used] and j.pending == {}
        direct = SqlJournal(lib, lib.conn, defer=False)
        assert direct.insert(t_spare)[0] == h_spare and lib.has(h_spare)


def tile_hash(hashes, tile):
    from tilelib.store import tile_key

    h = tile_key(tile)[1]
    assert h in hashes
    return h


def _stitch_g61(tmp_path, workers: int, src):
    lib_path = tmp_path / f"w{workers}.sqlite"
    shutil.copyfile(src, lib_path)
    p = make_packing("big-first", 61, SEED)
    with Library.open(lib_path) as lib:
        res = stitch(p, lib, Stream(SEED, "stitch"), StitchOptions(drain=True, workers=workers))
        tiles = sorted(r[0] for r in lib.conn.execute("SELECT hash FROM tiles"))
        misses = _ledger_rows(lib.conn)
    return res, tiles, misses


def test_halves_give_the_same_board_and_library_with_one_or_two_workers(tmp_path, monkeypatch):
    """A G = 61 board split into halves (MIN_G lowered for the test), from an empty library: one
    worker (halves one after the other) and two (at once) give the same placements, packing,
    library rows and ledger; the board is a valid packing of library tiles."""
    monkeypatch.setattr(regions, "MIN_G", 40)
    src = tmp_path / "empty.sqlite"
    Library.open(src, create=True).close()
    r1, tiles1, miss1 = _stitch_g61(tmp_path, 1, src)
    r2, tiles2, miss2 = _stitch_g61(tmp_path, 2, src)
    assert r1.stats.seconds.get("halves") is not None  # the halves ran
    assert r1.placements == r2.placements and r1.packing == r2.packing
    assert tiles1 == tiles2 and miss1 == miss2
    validate_packing(r1.packing, 60)
    assert set(h for h, _t in r1.placements) <= set(tiles1)
    assert r1.stats.final_fill >= 0.99


def test_a_build_on_halves_verifies(tmp_path, monkeypatch):
    """The daily build with halves (MIN_G lowered) writes a manifest the referee verifies as frontier,
    and the same day rebuilt with one worker gives the same manifest bit for bit."""
    monkeypatch.setattr(regions, "MIN_G", 40)
    texts = []
    for w in (2, 1):
        lib = tmp_path / f"lib{w}.sqlite"
        res = build(
            BuildOptions(day="2026-11-29", library=lib, out_dir=tmp_path / f"out{w}", size=61, seed=SEED, workers=w),
            log=lambda _line: None,
        )
        assert res.status == "frontier"
        texts.append(res.manifest_path.read_text())
        with Library.open(lib) as lb:
            assert verify(from_json(texts[-1]), lb, SEED).status == "frontier"
    assert texts[0] == texts[1]


@pytest.fixture
def sample_tiles():
    from generator.make import GenParams, make_tile

    return [make_tile(GenParams.make(6, m_max=1, seam_mask=0), Stream(SEED, f"t{i}")) for i in range(3)]


# ---------------------------------------------------------------- doomed windows (small.doomed)


def test_relaxed_n6_table_counts_every_grid_whose_lines_may_repeat():
    """11,222 valid 6x6 grids without the distinct-lines rule, 4,140 with it (the checksums);
    every grid of the strict table is in the relaxed one."""
    from stitcher.small import solutions_edges

    strict, relaxed = solutions_edges(6), solutions_edges(6, distinct=False)
    assert len(strict) == 4140 and len(relaxed) == 11222
    assert set(map(tuple, strict.tolist())) <= set(map(tuple, relaxed.tolist()))


def test_doomed_is_only_said_where_cp_sat_finds_nothing(tmp_path, monkeypatch):
    """During a real cold stitch, every window-aware model that ``doomed`` skips is built and solved
    anyway: CP-SAT finds no solution for any of them (doomed is sound), and some were skipped."""
    run_mod = importlib.import_module("stitcher.run")
    from stitcher import joint, small

    seen = []
    real = small.doomed

    def checking(board, squares, others):
        got = real(board, squares, others)
        if got:
            seen.append(
                joint.joint_complete_many(
                    board.values, board.known, squares, others, Stream(SEED, f"doomed/{len(seen)}")
                )
            )
        return got

    monkeypatch.setattr(run_mod, "doomed", checking)
    monkeypatch.setattr(importlib.import_module("stitcher.repair"), "doomed", checking)
    lib_path = tmp_path / "cold.sqlite"
    with Library.open(lib_path, create=True) as lib:
        for k in range(3):
            stitch(
                make_packing("big-first", 61, hashlib.sha256(b"doomed-%d" % k).digest()),
                lib,
                Stream(SEED, f"s{k}"),
                StitchOptions(drain=True),
            )
    assert seen and all(g is None for g in seen), len(seen)
