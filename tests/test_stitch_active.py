"""The stitcher's active set (stitcher/active.py): the cap smallest hashes per size, kept in a sidecar.

What must hold: the set is a rule of the rows alone (the cap smallest hashes of each n); the
sidecar gives exactly the index a fresh scan gives — after rows are added (refresh in
O(new rows)), and a sidecar that no longer describes the library is never trusted.
"""

from __future__ import annotations

import shutil

import numpy as np
import pytest

from generator.batch import generate
from generator.make import GenParams
from packers import make_packing
from stitcher.active import ActiveRows, canonical_pins, load_active, sidecar_path, write_sidecar
from stitcher.index import MemoryIndex
from stitcher.stitch import StitchOptions, stitch
from tilelib.constraint import Constraint
from tilelib.rng import Stream
from tilelib.store import Library


def _fill(lib: Library, seed: int, per_n: dict[int, int]) -> None:
    for n, k in per_n.items():
        lib.insert_many(generate(GenParams.make(n, seam_mask=seed % 16), k, bytes([seed, n]) * 16))


@pytest.fixture(scope="module")
def grown(tmp_path_factory):
    """A library of real n = 6 and 8 tiles, and a second batch of rows to add later."""
    path = tmp_path_factory.mktemp("active") / "lib.sqlite"
    with Library.create(path) as lib:
        _fill(lib, 1, {6: 60, 8: 30})
    return path


def _copy(src, dst):
    shutil.copyfile(src, dst)
    return dst


def _same_index(a: MemoryIndex, b: MemoryIndex, rng) -> None:
    """Same entries in the same order, and the same answers to random constraints."""
    assert sorted(a.sizes) == sorted(b.sizes)
    for n, sa in a.sizes.items():
        sb = b.sizes[n]
        assert sa.hashes == sb.hashes
        assert (sa.CE[: sa.size] == sb.CE[: sb.size]).all() and (sa.PINS[: sa.size] == sb.PINS[: sb.size]).all()
        full = (1 << n) - 1
        for _ in range(30):
            e = sa.edges(int(rng.integers(0, 16 * sa.size))) if sa.size else [0, 0, 0, 0]
            masks = [int(rng.choice([0, full, int(rng.integers(0, full + 1))])) for _ in range(4)]
            c = Constraint(n, tuple(masks), tuple(int(v) & m for v, m in zip(e, masks, strict=True)))
            assert sa.lookup(c, False).tolist() == sb.lookup(c, False).tolist()


def test_active_set_is_the_cap_smallest_hashes_of_each_size(grown, tmp_path):
    path = _copy(grown, tmp_path / "lib.sqlite")
    with Library.open(path) as lib:
        act, info = load_active(lib.conn, path, cap=17)
        assert info.source == "scan" and info.written
        for n in (6, 8):
            rows = lib.conn.execute(
                "SELECT hash, top, right, bottom, left, m, alt_sides FROM tiles WHERE n = ? ORDER BY hash LIMIT 17",
                (n,),
            ).fetchall()
            a = act[n]
            assert [h.decode() for h in a.hashes.tolist()] == [r[0] for r in rows]
            assert a.edges.tolist() == [list(r[1:5]) for r in rows]
            assert a.m.tolist() == [r[5] for r in rows]
            assert a.pins.tolist() == [canonical_pins(r[5], r[6]) for r in rows]
        assert len(act[10]) == 0


@pytest.mark.parametrize("cap", [5, 40, 10_000])
def test_sidecar_gives_the_index_a_fresh_scan_gives(grown, tmp_path, cap):
    """scan -> sidecar (no new rows) -> refresh after adding rows: each equals MemoryIndex.load."""
    path = _copy(grown, tmp_path / "lib.sqlite")
    rng = np.random.default_rng(cap)
    with Library.open(path) as lib:
        first = MemoryIndex.open(lib.conn, path, (6, 8), cap=cap)
        assert first.info.source == "scan" and sidecar_path(path).exists()
        _same_index(first, MemoryIndex.load(lib.conn, (6, 8), cap=cap), rng)
        again = MemoryIndex.open(lib.conn, path, (6, 8), cap=cap)
        assert again.info.source == "sidecar" and again.info.new_rows == 0 and not again.info.written
        _same_index(again, first, rng)
        before = lib.count_tiles()
        _fill(lib, 2, {6: 25, 8: 10})
        added = lib.count_tiles() - before
        assert added > 0
        grew = MemoryIndex.open(lib.conn, path, (6, 8), cap=cap)
        assert grew.info.source == "refresh" and grew.info.new_rows == added
        _same_index(grew, MemoryIndex.load(lib.conn, (6, 8), cap=cap), rng)
        if cap >= 100:
            assert grew.tiles(6) + grew.tiles(8) == lib.count_tiles()
        else:
            assert grew.tiles(6) == cap and grew.tiles(8) == cap


def test_a_sidecar_of_another_library_or_cap_is_not_trusted(grown, tmp_path):
    a = _copy(grown, tmp_path / "a.sqlite")
    with Library.open(a) as lib:
        load_active(lib.conn, a, cap=9)
        assert load_active(lib.conn, a, cap=9)[1].source == "sidecar"
        assert load_active(lib.conn, a, cap=10)[1].source == "scan"  # another cap
    # another library (its own library_id) that finds a's sidecar beside it
    b = tmp_path / "b.sqlite"
    with Library.create(b) as lib:
        _fill(lib, 3, {6: 12})
        shutil.copyfile(sidecar_path(a), sidecar_path(b))
        act, info = load_active(lib.conn, b, cap=10)
        assert info.source == "scan"
        assert sorted(h.decode() for h in act[6].hashes.tolist()) == [
            r[0] for r in lib.conn.execute("SELECT hash FROM tiles WHERE n = 6 ORDER BY hash LIMIT 10")
        ]


def test_a_sidecar_whose_probed_rows_changed_is_rebuilt(grown, tmp_path):
    """Same library_id, but the rows at the recorded rowids are not the recorded ones (a file
    rewritten under the sidecar): rescanned, never merged."""
    path = _copy(grown, tmp_path / "lib.sqlite")
    with Library.open(path) as lib:
        load_active(lib.conn, path, cap=8)
        lib.conn.execute("UPDATE tiles SET rowid = rowid + 100000 WHERE rowid = (SELECT max(rowid) FROM tiles)")
        lib.conn.commit()
        assert load_active(lib.conn, path, cap=8)[1].source == "scan"


def test_a_damaged_sidecar_is_rebuilt_and_an_unwritable_one_is_skipped(grown, tmp_path):
    path = _copy(grown, tmp_path / "lib.sqlite")
    with Library.open(path) as lib:
        load_active(lib.conn, path, cap=8)
        sidecar_path(path).write_bytes(b"PK\x03\x04 not really a zip")
        act, info = load_active(lib.conn, path, cap=8)
        assert info.source == "scan" and info.written
        assert not write_sidecar(tmp_path / "no-such-dir" / "x.stitch-index", lib.conn, act, 1, 8)


def test_merged_keeps_the_cap_smallest_and_one_row_per_hash():
    def rows(hs):
        k = len(hs)
        return ActiveRows(
            np.array(hs, dtype="S64"),
            np.arange(4 * k, dtype=np.int64).reshape(k, 4),
            np.ones(k, dtype=np.int64),
            np.full(k, 0xFFFF, dtype=np.int64),
        )

    a = rows([b"0a", b"0c", b"0e"])
    b = rows([b"0b", b"0c", b"0d"])
    assert a.merged(b, 4).hashes.tolist() == [b"0a", b"0b", b"0c", b"0d"]
    assert a.merged(b, 100).hashes.tolist() == [b"0a", b"0b", b"0c", b"0d", b"0e"]


def test_stitch_over_a_capped_index_is_deterministic_and_uses_only_active_tiles(grown, tmp_path):
    """Two stitches of one packing, seed and capped index place the same tiles, all of them active."""
    packing = make_packing("bands", 31, bytes(32))
    outs = []
    for k in range(2):
        path = _copy(grown, tmp_path / f"l{k}.sqlite")
        with Library.open(path) as lib:
            idx = MemoryIndex.open(lib.conn, path, range(6, 17, 2), cap=12)
            active = {h for si in idx.sizes.values() for h in si.hashes}
            res = stitch(packing, lib, Stream(bytes(32), "stitch"), StitchOptions(drain=False), index=idx)
            outs.append(res.placements)
            assert {h for h, _ in res.placements} <= active
    assert outs[0] == outs[1]
