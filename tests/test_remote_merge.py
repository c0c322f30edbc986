"""tilelib.merge: the union behind pull/push. Laws (union, idempotent, commutative), misses rules, refusals."""

from __future__ import annotations

import sqlite3

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from remote_support import add_tiles, file_digest, hashes_of, make_library, random_tiles, tile_hashes

from tilelib.errors import HashMismatch, NotALibrary, SchemaTooNew
from tilelib.merge import fingerprint, merge_file
from tilelib.store import Library

MISS_INSERT = (
    "INSERT INTO misses (n, side_mask, top, right, bottom, left, top_mask, right_mask, bottom_mask, "
    "left_mask, packing, first_seen, last_seen, count, nofit, tile) "
    "VALUES (6, 15, ?, 0, 0, 0, 63, 63, 63, 63, ?, ?, ?, ?, ?, ?)"
)


def misses(path):
    conn = sqlite3.connect(path)
    try:
        return sorted(conn.execute("SELECT top, packing, first_seen, last_seen, count, nofit, tile FROM misses"))
    finally:
        conn.close()


def test_union_of_tiles_exact_and_source_untouched(tmp_path):
    a, b = tmp_path / "a.sqlite", tmp_path / "b.sqlite"
    ha = make_library(a, 1, 40)
    hb = make_library(b, 2, 30) | add_tiles(b, 1, 10)  # b shares 10 tiles with a (same seed prefix)
    assert len(ha & hb) == 10
    before_b = file_digest(b)
    with Library.open(a) as lib:
        stats = merge_file(lib, b)
        assert hashes_of(lib.conn) == ha | hb
        assert lib.count_tiles() == 70
    assert stats.tiles_added == 30 and stats.rows_verified == 30 and stats.source_tiles == 40
    assert stats.local_only  # a had 30 tiles b lacks
    assert file_digest(b) == before_b


def test_merge_is_idempotent(tmp_path):
    a, b = tmp_path / "a.sqlite", tmp_path / "b.sqlite"
    make_library(a, 1, 20)
    make_library(b, 2, 20)
    with Library.open(a) as lib:
        merge_file(lib, b)
        fp = fingerprint(lib.conn)
        again = merge_file(lib, b)
        assert fingerprint(lib.conn) == fp
    assert again.tiles_added == 0 and again.misses_added == 0 and again.misses_updated == 0


def test_local_only_false_when_local_adds_nothing(tmp_path):
    a, b = tmp_path / "a.sqlite", tmp_path / "b.sqlite"
    make_library(a, 1, 10)
    make_library(b, 1, 25)  # superset of a
    with Library.open(a) as lib:
        stats = merge_file(lib, b)
    assert stats.tiles_added == 15 and not stats.local_only


def test_misses_union_takes_max_count_min_first_seen_and_nofit_or_tile(tmp_path):
    a, b = tmp_path / "a.sqlite", tmp_path / "b.sqlite"
    make_library(a)
    make_library(b)
    ca, cb = sqlite3.connect(a), sqlite3.connect(b)
    with ca:
        ca.execute(MISS_INSERT, (1, "pa", 100, 200, 3, 0, None))  # both sides, a fewer counts
        ca.execute(MISS_INSERT, (2, None, 50, 60, 7, 0, None))  # both sides, b drained it
        ca.execute(MISS_INSERT, (3, "pa", 10, 10, 1, 0, None))  # a only
    with cb:
        cb.execute(MISS_INSERT, (1, "pb", 90, 150, 5, 1, None))
        cb.execute(MISS_INSERT, (2, "pb", 55, 70, 2, 0, "f" * 64))
        cb.execute(MISS_INSERT, (4, "pb", 20, 30, 4, 1, None))  # b only
    ca.close()
    cb.close()
    with Library.open(a) as lib:
        stats = merge_file(lib, b)
    assert (stats.misses_added, stats.misses_updated) == (1, 2)
    assert misses(a) == [
        (1, "pa", 90, 200, 5, 1, None),
        (2, "pb", 50, 70, 7, 0, "f" * 64),
        (3, "pa", 10, 10, 1, 0, None),
        (4, "pb", 20, 30, 4, 1, None),
    ]
    with Library.open(a) as lib:  # max, not sum: pulling the same file again changes nothing
        again = merge_file(lib, b)
    assert (again.misses_added, again.misses_updated) == (0, 0)
    assert misses(a)[0][4] == 5


def test_manifest_conflict_keeps_local_and_is_counted(tmp_path):
    a, b = tmp_path / "a.sqlite", tmp_path / "b.sqlite"
    make_library(a)
    make_library(b)
    for path, js in ((a, '{"x": 1}'), (b, '{"x": 2}')):
        with sqlite3.connect(path) as c:
            c.execute("INSERT INTO manifests VALUES ('2026-01-01', 'abc', ?, 0)", (js,))
    with sqlite3.connect(b) as c:
        c.execute("INSERT INTO manifests VALUES ('2026-01-02', 'abc', '{}', 0)")
    with Library.open(a) as lib:
        stats = merge_file(lib, b)
        rows = lib.conn.execute("SELECT day, json FROM manifests ORDER BY day").fetchall()
    assert (stats.manifests_added, stats.manifest_conflicts) == (1, 1)
    assert rows == [("2026-01-01", '{"x": 1}'), ("2026-01-02", "{}")]


def test_tampered_row_refuses_whole_merge_and_writes_nothing(tmp_path):
    a, b = tmp_path / "a.sqlite", tmp_path / "b.sqlite"
    make_library(a, 1, 5)
    hb = make_library(b, 2, 50)
    victim = sorted(hb)[17]
    with sqlite3.connect(b) as c:
        c.execute("UPDATE tiles SET givens = zeroblob(length(givens)) WHERE hash = ?", (victim,))
    before = file_digest(a)
    with Library.open(a) as lib:
        with pytest.raises(HashMismatch, match=victim):
            merge_file(lib, b)
        assert lib.count_tiles() == 5
    assert file_digest(a) == before
    with Library.open(a) as lib:  # verify="none" is the documented opt-out: it takes the row as is
        assert merge_file(lib, b, verify="none").tiles_added == 50


def test_refuses_newer_schema(tmp_path):
    a, b = tmp_path / "a.sqlite", tmp_path / "b.sqlite"
    make_library(a, 1, 3)
    make_library(b, 2, 3)
    with sqlite3.connect(b) as c:
        c.execute("UPDATE meta SET value = '99' WHERE key = 'schema_version'")
    with Library.open(a) as lib:
        with pytest.raises(SchemaTooNew, match="99"):
            merge_file(lib, b)
        assert lib.count_tiles() == 3


def test_refuses_a_sqlite_file_that_is_not_a_library(tmp_path):
    a, b = tmp_path / "a.sqlite", tmp_path / "b.sqlite"
    make_library(a, 1, 3)
    with sqlite3.connect(b) as c:
        c.execute("CREATE TABLE other (x)")
    with Library.open(a) as lib:
        with pytest.raises(NotALibrary):
            merge_file(lib, b)


POOL = random_tiles(99, 24)


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.sets(st.integers(0, 23)), st.sets(st.integers(0, 23)))
def test_merge_is_the_set_union_in_either_order(tmp_path_factory, xs, ys):
    d = tmp_path_factory.mktemp("m")
    paths = {}
    for name, idx in (("x", xs), ("y", ys)):
        with Library.create(d / f"{name}.sqlite") as lib:
            lib.insert_many([POOL[i] for i in sorted(idx)])
        paths[name] = d / f"{name}.sqlite"
    hx, hy = tile_hashes(paths["x"]), tile_hashes(paths["y"])
    for dst, src in (("x", "y"), ("y", "x")):
        import shutil

        target = d / f"{dst}-merged.sqlite"
        shutil.copyfile(paths[dst], target)
        with Library.open(target) as lib:
            stats = merge_file(lib, paths[src])
        assert tile_hashes(target) == hx | hy
        assert stats.tiles_added == len((hx | hy) - (hx if dst == "x" else hy))
