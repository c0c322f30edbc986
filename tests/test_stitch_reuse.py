"""stitcher.reuse: a made tile whose grid the index already holds is placed as that tile.

The rule is checked on hand-built libraries (it must find the same grid in any orientation,
and refuse a tile with the same edges but another grid, one not pinned for the sides, one
whose m is over the bound, a non-m = 1 tile for the seed) and on real stitches (reuse adds
fewer rows, the board still verifies, every placed tile is a library row).
"""

from __future__ import annotations

import json

import pytest

from stitcher.drain import tile_from_grid
from stitcher.index import MemoryIndex
from stitcher.reuse import existing
from tests.support import all_grids
from tilelib.bits import edges as grid_edges
from tilelib.rng import Stream
from tilelib.store import Library
from tilelib.symmetry import apply_grid


def _lib_with(tmp_path, tiles):
    lib = Library.open(tmp_path / "reuse.sqlite", create=True)
    for t in tiles:
        lib.insert(t)
    return lib


def _fetch(lib):
    return lambda h, t: lib.get_oriented(h, t)


@pytest.fixture(scope="module")
def six():
    return all_grids(6)


def test_finds_the_same_grid_in_any_orientation(tmp_path, six):
    """A library tile thinned for no known side (pinned for all) stands for a new tile of the
    same grid seen in each of the 16 orientations; the (hash, t) returned shows that grid."""
    grid = six[1234]
    old = tile_from_grid(grid, 0, None, Stream(b"old", "t"))
    with _lib_with(tmp_path, [old]) as lib:
        idx = MemoryIndex.load(lib.conn, (6,))
        for t in range(16):
            g = apply_grid(grid, t)
            new = tile_from_grid(g, 15, None, Stream(b"new", str(t)))
            got = existing([idx], new, known=15, m_max=3, m1=False, fetch=_fetch(lib))
            assert got is not None
            h, tt = got
            assert (lib.get_oriented(h, tt).solution_grid == g).all()


def _made(grid, seam: int, m_max, tag: bytes):
    return tile_from_grid(grid, seam, m_max, Stream(tag, "0"))


def test_refuses_another_grid_with_the_same_edges(tmp_path, six):
    """Two grids with one boundary: a tile of the other grid is refused, one of the same is taken."""
    by_edges: dict = {}
    for g in six:
        by_edges.setdefault(grid_edges(g), []).append(g)
    pairs = [v[:2] for v in by_edges.values() if len(v) >= 2]
    assert pairs, "some 6x6 boundaries have two completions"
    a, b = next((a, b) for a, b in pairs if _made(a, 0, None, b"a") and _made(b, 0, None, b"b"))
    with _lib_with(tmp_path, [_made(b, 0, None, b"b")]) as lib:
        idx = MemoryIndex.load(lib.conn, (6,))
        assert existing([idx], _made(a, 0, None, b"a"), known=0, m_max=3, m1=False, fetch=_fetch(lib)) is None
        assert existing([idx], _made(b, 0, None, b"b2"), known=0, m_max=3, m1=False, fetch=_fetch(lib)) is not None


def test_refuses_unpinned_over_m_and_non_unique_for_the_seed(tmp_path, six):
    """A library tile thinned with every side known (few givens, m > 1) stands for a new tile
    thinned the same way, but not when the new square knows fewer sides than it is pinned for,
    nor when the bound on m is below its m, nor for the seed (m = 1 required)."""
    grid, loose = next((g, t) for g in six[::7] if (t := _made(g, 15, 3, b"loose")) and t.features.m > 1)
    with _lib_with(tmp_path, [loose]) as lib:
        idx = MemoryIndex.load(lib.conn, (6,))
        new = _made(grid, 15, 3, b"new")
        m = loose.features.m
        assert existing([idx], new, known=15, m_max=3, m1=False, fetch=_fetch(lib)) is not None
        assert existing([idx], new, known=15, m_max=m - 1, m1=False, fetch=_fetch(lib)) is None
        assert existing([idx], new, known=15, m_max=3, m1=True, fetch=_fetch(lib)) is None
        # pinned for no known side means unique from its givens alone: m = 1, which it is not
        assert existing([idx], new, known=0, m_max=3, m1=False, fetch=_fetch(lib)) is None


def _rows(lib) -> int:
    return lib.conn.execute("SELECT count(*) FROM tiles").fetchone()[0]


def test_a_stitch_reuses_grids_and_adds_fewer_rows(tmp_path):
    """The same packings on copies of one warm library: with reuse the stitches add fewer rows in
    all (not every night: under generator 5 night 2 adds 86 rows with reuse and 83 without, the
    other five fewer or as many) and say how many they reused; every placement is a library row
    whose cells agree with every neighbour's (the seam rebuild of test_stitch_seams)."""
    import shutil

    from packers import make_packing
    from stitcher.stitch import StitchOptions, stitch
    from tests.test_stitch_seams import rebuild

    base = tmp_path / "warm.sqlite"
    with Library.create(base) as lib:
        for k in (1, 3, 4):
            stitch(make_packing("big-first", 101, bytes([k]) * 32), lib, Stream(b"warm", str(k)))
    made = {True: 0, False: 0}
    for night in (2, 5, 6, 7, 8, 9):
        for reuse in (True, False):
            path = tmp_path / f"lib-{night}-{reuse}.sqlite"
            shutil.copyfile(base, path)
            with Library.open(path) as lib:
                before = _rows(lib)
                res = stitch(
                    make_packing("big-first", 101, bytes([night]) * 32),
                    lib,
                    Stream(b"night", "s"),
                    StitchOptions(reuse=reuse),
                )
                added = _rows(lib) - before
                made[reuse] += added
                reused = res.stats.total("reused")
                assert (reused > 0) == reuse
                assert res.stats.made - res.stats.dropped == added
                assert all(lib.has(h) for h, _t in res.placements)
                rebuild(res, lib)
    assert made[True] < made[False]


def test_daily_builds_with_a_profile_reuse_and_verify(tmp_path):
    """Two nights of the daily build (human profile, halves on two workers) on one library: the
    second reuses grids through the level indexes, and both boards pass the build's frontier
    verification (a build that does not is an error, not a status)."""
    from daily.build import BuildOptions, build

    lib = tmp_path / "lib.sqlite"
    got = []
    for day in ("2027-02-01", "2027-02-02"):
        res = build(
            BuildOptions(
                day=day,
                library=lib,
                out_dir=tmp_path / "out",
                size=201,
                secret="reuse",
                force=True,
                workers=2,
                profile="human",
            ),
            log=lambda _l: None,
        )
        assert res.status == "frontier"
        got.append(sum(d.get("reused", 0) for d in res.stitch_detail["per_n"].values()))
        with Library.open(lib) as L:  # every tile the ledger names is a row; so is every placement
            assert L.conn.execute("SELECT count(*) FROM misses WHERE tile IS NOT NULL").fetchone()[0] > 0
            assert (
                L.conn.execute(
                    "SELECT count(*) FROM misses WHERE tile IS NOT NULL AND tile NOT IN (SELECT hash FROM tiles)"
                ).fetchone()[0]
                == 0
            )
            m = json.loads(res.manifest_path.read_text())
            assert all(L.has(t["hash"]) for t in m["tiles"])
    assert got[1] > 0


def test_a_failed_stitch_still_writes_the_tiles_its_ledger_names(tmp_path, monkeypatch):
    """A stitch that fails after draining (here: at assembly) commits its ledger rows; every tile
    they name is written, and nothing else it made is."""
    import importlib

    from packers import make_packing

    stitch_module = importlib.import_module("stitcher.stitch")

    def boom(*_args):
        raise RuntimeError("injected failure at assembly")

    monkeypatch.setattr(stitch_module, "assemble", boom)
    with Library.create(tmp_path / "fail.sqlite") as lib:
        with pytest.raises(RuntimeError, match="injected"):
            stitch_module.stitch(make_packing("big-first", 61, bytes([5]) * 32), lib, Stream(b"fail", "s"))
        named = {h for (h,) in lib.conn.execute("SELECT tile FROM misses WHERE tile IS NOT NULL")}
        rows = {h for (h,) in lib.conn.execute("SELECT hash FROM tiles")}
    assert named and named == rows
