"""The library file: create/open errors, insert/get, dedupe across orientations, tamper detection."""

import sqlite3

import numpy as np
import pytest
from support import random_givens, random_solution

from tilelib.errors import CorruptLibrary, HashMismatch, LibraryError, NotALibrary, SchemaTooNew, UnknownTile
from tilelib.store import SCHEMA_VERSION, Library
from tilelib.symmetry import TRANSFORMS
from tilelib.tile import Tile


def make_tile(n=8, seed=0, seam=0):
    rng = np.random.default_rng(seed)
    return Tile.from_grids(random_solution(n, rng), random_givens(n, rng), seam)


def test_create_writes_schema_version_and_library_id(lib):
    meta = lib.meta()
    assert meta["schema_version"] == str(SCHEMA_VERSION)
    assert len(meta["library_id"]) == 32


def test_insert_is_content_addressed_across_orientations(lib):
    tile = make_tile()
    assert lib.insert_many([tile.transform(t) for t in TRANSFORMS]) == 1
    assert lib.count_tiles() == 1
    assert lib.insert_many([tile]) == 0


def test_get_returns_the_canonical_tile_and_oriented_view(lib):
    tile = make_tile(seam=5)
    h, t = lib.insert(tile.transform(6))
    assert h == tile.hash
    got = lib.get(h)
    assert got.canonical_transform() == 0
    assert lib.get_oriented(h, t) == tile.transform(6)


def test_get_unknown_hash(lib):
    with pytest.raises(UnknownTile):
        lib.get("0" * 64)


def test_tampered_row_is_a_hash_mismatch(lib):
    h, _ = lib.insert(make_tile())
    with lib.conn:
        lib.conn.execute("UPDATE tiles SET givens = zeroblob(8) WHERE hash = ?", (h,))
    with pytest.raises(HashMismatch):
        lib.get(h)


def test_get_many_is_get_for_each_present_hash(lib):
    """get_many answers as get does for every present hash (any case, repeats), leaves absent
    ones out, spans its 500-hash chunks, and raises HashMismatch for a tampered row."""
    hs = [lib.insert(make_tile(n=6 + 2 * (k % 3), seed=k))[0] for k in range(1203)]
    absent = "f" * 64
    got = lib.get_many(hs + [absent] + [h.upper() for h in hs[:5]] + hs[:7])
    assert set(got) == set(hs) and all(got[h] == lib.get(h) for h in hs)
    assert lib.get_many([]) == {}
    with lib.conn:
        lib.conn.execute("UPDATE tiles SET givens = zeroblob(length(givens)) WHERE hash = ?", (hs[900],))
    with pytest.raises(HashMismatch):
        lib.get_many(hs)
    assert lib.get_many(hs[:10]) == {h: lib.get(h) for h in hs[:10]}


def test_open_missing_file(tmp_path):
    with pytest.raises(LibraryError, match="no tile library"):
        Library.open(tmp_path / "absent.sqlite")
    assert not (tmp_path / "absent.sqlite").exists()


def test_open_non_sqlite_file(tmp_path):
    p = tmp_path / "x.sqlite"
    p.write_bytes(b"definitely not a database" * 100)
    with pytest.raises(NotALibrary):
        Library.open(p)


def test_open_sqlite_file_that_is_not_a_library(tmp_path):
    p = tmp_path / "other.sqlite"
    sqlite3.connect(p).execute("CREATE TABLE t (x)").connection.commit()
    with pytest.raises(NotALibrary):
        Library.open(p)


def test_open_newer_schema_version(lib_path):
    Library.create(lib_path).close()
    conn = sqlite3.connect(lib_path)
    conn.execute("UPDATE meta SET value = ? WHERE key = 'schema_version'", (str(SCHEMA_VERSION + 1),))
    conn.commit()
    conn.close()
    with pytest.raises(SchemaTooNew):
        Library.open(lib_path)


def test_open_corrupt_file(lib_path):
    with Library.create(lib_path) as lib:
        lib.insert_many([make_tile(seed=s) for s in range(50)])
    data = bytearray(lib_path.read_bytes())
    # keep the SQLite header, smash the pages after it
    for i in range(100, len(data), 7):
        data[i] = 0xA5
    lib_path.write_bytes(bytes(data))
    with pytest.raises(CorruptLibrary):
        lib = Library.open(lib_path)
        lib.count_tiles()
        from trust.checks import verify_library

        verify_library(lib)


def test_stats(lib):
    lib.insert_many([make_tile(n=6, seed=s) for s in range(3)] + [make_tile(n=8, seed=9)])
    s = lib.stats()
    assert s["tiles"] == sum(s["per_n"].values()) == lib.count_tiles()
    assert s["per_n"][8] == 1


def test_the_stored_row_is_tile_to_row_column_by_column(lib):
    """insert_many binds ``tile_row``'s tuple by position: each column read back by name is the
    value ``tile_to_row`` names (edges, hash, every feature, created), and the row rebuilds the tile."""
    from tilelib.store import TILE_COLUMNS, row_to_tile, tile_to_row
    from tilelib.tile import Features

    feats = Features(m=1, blank=0.5, ladder=3, bifurcations=2, used_unique=1, pins=0, pin_depth=0)
    tile = make_tile(n=10, seed=3, seam=5).with_features(feats)
    lib.insert_many([tile])
    canon = tile.canonical()[0]
    lib.conn.row_factory = sqlite3.Row
    row = dict(lib.conn.execute(f"SELECT {', '.join(TILE_COLUMNS)} FROM tiles").fetchone())
    want = tile_to_row(canon, row["created"])
    assert list(want) == list(TILE_COLUMNS) and row == want
    assert row["top"] == canon.edges[0] and row["left"] == canon.edges[3] and row["ladder"] == 3
    assert row_to_tile(row) == canon
