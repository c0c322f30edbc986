"""The merge's parts in process (``tilelib.merge``): the fingerprint's every field, and which rows the
merge's row check reads in each mode — quick tests from the module's definitions, so that every mutant
of the module meets one (scripts/mutation.py; the merges themselves run in test_remote_merge.py)."""

from __future__ import annotations

import sqlite3

import pytest
from remote_support import make_library, opened_then_planted, random_tiles

from tilelib import ledger, merge, spent
from tilelib.constraint import Constraint
from tilelib.db import atomic
from tilelib.errors import CorruptLibrary, RowsNotStored, SchemaMismatch
from tilelib.store import Library


def test_the_fingerprint_counts_each_thing_a_library_grows_by(tmp_path):
    path = tmp_path / "a.sqlite"
    make_library(path, 4, 3)
    with Library.open(path) as lib:
        assert merge.fingerprint(lib.conn) == [3, 0, 0, 0, 0, 0, 0, 0]
        ledger.put_manifest(lib.conn, "2026-11-01", "c0", "{}")
        ledger.put_manifest(lib.conn, "2026-11-02", "c1", "{}")
        with atomic(lib.conn):
            ledger.record_miss(lib.conn, Constraint.sides(6), now=100)
            ledger.record_miss(lib.conn, Constraint.sides(6), now=130)  # counted again: count 2, span 30
            ledger.record_miss(lib.conn, Constraint.sides(8), now=50)
            lib.conn.execute("UPDATE misses SET nofit = 1 WHERE n = 8")
            spent.record(lib.conn, [spent.SpentRow("ab" * 32, "cd" * 32, 10, "2026-11-01")] * 1, now=1)
        assert merge.fingerprint(lib.conn) == [3, 2, 2, 3, 1, 0, 30, 1]
        lib.conn.execute("ATTACH ? AS other", (str(path),))
        assert merge.fingerprint(lib.conn, "other") == [3, 2, 2, 3, 1, 0, 30, 1]


def test_a_library_without_the_spent_table_fingerprints_it_as_zero(tmp_path):
    path = tmp_path / "a.sqlite"
    make_library(path, 4, 2)
    with Library.open(path) as lib:
        with atomic(lib.conn):
            spent.record(lib.conn, [spent.SpentRow("ab" * 32, "cd" * 32, 10, "2026-11-01")], now=1)
        lib.conn.execute("ATTACH ':memory:' AS bare")
        for table in ("tiles", "manifests", "misses"):
            lib.conn.execute(f"CREATE TABLE bare.{table} AS SELECT * FROM main.{table}")
        assert merge.fingerprint(lib.conn)[-1] == 1 and merge.fingerprint(lib.conn, "bare") == [2, 0, 0, 0, 0, 0, 0, 0]


@pytest.fixture
def attached(tmp_path):
    """A main library of 3 tiles and, attached as the merge's source, one of the same 3 and 4 more."""
    tiles = random_tiles(6, 7)
    main, src = tmp_path / "main.sqlite", tmp_path / "src.sqlite"
    with Library.create(main) as lib:
        lib.insert_many(tiles[:3])
    with Library.create(src) as lib:
        lib.insert_many(tiles)
    lib = Library.open(main)
    lib.conn.execute("ATTACH ? AS merge_src", (str(src),))
    yield lib, src, tiles
    lib.close()


def test_the_row_check_reads_the_rows_each_mode_names(attached):
    lib, _src, _tiles = attached
    assert merge.verify_tiles(lib.conn, "none", "src") == 0
    assert merge.verify_tiles(lib.conn, "new", "src") == 4  # only what main lacks
    assert merge.verify_tiles(lib.conn, "new", "src", only_new=False) == 7
    assert merge.verify_tiles(lib.conn, "new", "main", schema="main", only_new=False) == 3
    sampled = merge.verify_tiles(lib.conn, "sample", "src")
    assert sampled == 7  # 256 draws among 7 rows: every one, but for a chance of ~1e-24
    with pytest.raises(ValueError, match=r"^verify must be 'new', 'sample' or 'none', not 'all'$"):
        merge.verify_tiles(lib.conn, "all", "src")


def test_an_empty_source_samples_nothing(tmp_path):
    main, src = tmp_path / "main.sqlite", tmp_path / "src.sqlite"
    make_library(main, 1, 2)
    make_library(src)
    with Library.open(main) as lib:
        lib.conn.execute("ATTACH ? AS merge_src", (str(src),))
        assert merge.verify_tiles(lib.conn, "sample", "src") == 0
        assert merge.verify_tiles(lib.conn, "new", "src") == 0


@pytest.mark.parametrize("mode", ["new", "sample"])
def test_a_bad_row_the_check_reads_refuses_naming_the_source(attached, mode):
    lib, src, tiles = attached
    with Library.open(src) as other:
        other.conn.execute("UPDATE tiles SET top = top + 1 WHERE hash = ?", (tiles[5].hash,))
    with pytest.raises(CorruptLibrary, match="merging src: a tile"):
        merge.verify_tiles(lib.conn, mode, "src")
    assert merge.verify_tiles(lib.conn, "none", "src") == 0  # nothing read, nothing refused


def test_a_merge_reports_exactly_what_it_added(tmp_path):
    main, src = tmp_path / "main.sqlite", tmp_path / "src.sqlite"
    tiles = random_tiles(8, 5)
    with Library.create(main) as lib:
        lib.insert_many(tiles[:2])
        ledger.put_manifest(lib.conn, "2026-11-01", "c0", '{"mine": 1}')
    with Library.create(src) as lib:
        lib.insert_many(tiles)
        ledger.put_manifest(lib.conn, "2026-11-01", "c0", '{"theirs": 1}')  # the same day, another board
        ledger.put_manifest(lib.conn, "2026-11-02", "c1", "{}")
        with atomic(lib.conn):
            ledger.record_miss(lib.conn, Constraint.sides(6), now=10)
            spent.record(lib.conn, [spent.SpentRow(f"{k:02x}" * 32, "cd" * 32, 10, "2026-11-02") for k in (1, 2)])
        source_fp = tuple(merge.fingerprint(lib.conn))
    with Library.open(main) as lib:
        got = merge.merge_file(lib, src)
        assert (got.tiles_added, got.manifests_added, got.manifest_conflicts) == (3, 1, 1)
        assert (got.misses_added, got.misses_updated, got.spent_added, got.rows_verified) == (1, 0, 2, 3)
        assert got.source_tiles == 5 and got.source_fingerprint == source_fp
        assert got.local_only is False  # the fingerprints agree: main holds as many of each as the source
        assert [c[0] for c in got.conflicting] == ["2026-11-01"] and got.conflicting[0][2] == '{"theirs": 1}'
        lib.insert_many(random_tiles(9, 1))
        again = merge.merge_file(lib, src)
        assert (again.tiles_added, again.manifests_added, again.spent_added, again.rows_verified) == (0, 0, 0, 0)
        assert again.local_only is True  # main now holds a tile the source lacks


def test_a_merge_of_what_is_not_a_library_file_says_which(tmp_path):
    with Library.create(tmp_path / "main.sqlite") as lib:
        missing = tmp_path / "none.sqlite"
        with pytest.raises(Exception, match=f"^no library file at {missing} to merge$"):
            merge.merge_file(lib, missing)
        junk = tmp_path / "junk.sqlite"
        junk.write_bytes(b"not a database at all" * 100)
        with pytest.raises(CorruptLibrary, match=f"^(cannot open|merging) {junk}"):
            merge.merge_file(lib, junk)


def test_the_row_check_counts_every_batch(attached, monkeypatch):
    """The count is every row checked, batch after batch (7 rows in batches of 3)."""
    lib, _src, _tiles = attached
    monkeypatch.setattr(merge, "VERIFY_BATCH", 3)
    assert merge.verify_tiles(lib.conn, "new", "src", only_new=False) == 7
    assert merge.verify_tiles(lib.conn, "new", "src") == 4


def version_1(path) -> None:
    """``path`` made a version-1 library: no spent table and none of its triggers."""
    conn = sqlite3.connect(path)
    conn.executescript("DROP TABLE spent; UPDATE meta SET value = '1' WHERE key = 'schema_version'")
    conn.close()


def test_a_version_1_source_merges_without_spent(tmp_path):
    main, src = tmp_path / "main.sqlite", tmp_path / "src.sqlite"
    make_library(main, 1, 2)
    make_library(src, 2, 3)
    version_1(src)
    with Library.open(main) as lib:
        with atomic(lib.conn):
            spent.record(lib.conn, [spent.SpentRow("ab" * 32, "cd" * 32, 10, "2026-11-01")], now=1)
        got = merge.merge_file(lib, src)
        assert (got.tiles_added, got.spent_added, got.rows_verified, got.source_tiles) == (3, 0, 3, 3)
        assert got.source_fingerprint[-1] == 0 and got.local_only is True


def test_a_spent_row_that_is_not_stored_refuses_the_whole_merge(tmp_path):
    src = tmp_path / "src.sqlite"
    make_library(src, 2, 3)
    rows = [spent.SpentRow(f"{k:02x}" * 32, "cd" * 32, 10, "2026-11-01") for k in range(3)]
    with Library.open(src) as other, atomic(other.conn):
        spent.record(other.conn, rows, now=1)
    lost = rows[1].solution
    lib = opened_then_planted(
        tmp_path / "main.sqlite",
        f"CREATE TRIGGER d BEFORE INSERT ON spent WHEN NEW.solution = '{lost}' BEGIN SELECT RAISE(IGNORE); END",
        count=2,
    )
    with pytest.raises(RowsNotStored) as err:
        merge.merge_file(lib, src)
    assert str(err.value) == (
        f"merging {src}: spent row of solution {lost} was merged and is not stored; refusing the whole merge"
    )
    assert lib.count_tiles() == 2 and lib.conn.execute("SELECT count(*) FROM spent").fetchone() == (0,)
    lib.close()


def test_each_refusal_of_a_merge_names_the_source(tmp_path):
    """The one line of each refusal names the file merged (its path as given)."""
    main, src = tmp_path / "main.sqlite", tmp_path / "src.sqlite"
    tiles = random_tiles(8, 3)
    make_library(main, 1, 1)
    with Library.create(src) as other:
        other.insert_many(tiles)
    with Library.open(main) as lib:
        with pytest.raises(RuntimeError) as err, atomic(lib.conn):
            merge.merge_file(lib, src)
        assert str(err.value) == "a merge (ATTACH) must run outside a transaction"
        with Library.open(src) as other:
            other.conn.execute("UPDATE tiles SET top = top + 1 WHERE hash = ?", (tiles[1].hash,))
        with pytest.raises(CorruptLibrary) as err:
            merge.merge_file(lib, src)
        assert str(err.value).startswith(f"merging {src}: a tile ({tiles[1].hash}) is not a sound tile: edge columns")
        sqlite3.connect(src).execute("CREATE TABLE extra (x)").connection.close()
        with pytest.raises(SchemaMismatch) as err:
            merge.merge_file(lib, src)
        assert str(err.value).startswith(f'{src}: its schema is not schema version 2\'s: extra table "extra"')
        assert lib.count_tiles() == 1


def test_a_source_whose_pages_are_damaged_is_refused_naming_it(tmp_path):
    """Its schema page reads, its tiles' pages do not: SQLite's error, named with the source."""
    main, src = tmp_path / "main.sqlite", tmp_path / "src.sqlite"
    make_library(main, 1, 1)
    make_library(src, 2, 300)
    conn = sqlite3.connect(src)
    size, pages = conn.execute("PRAGMA page_size").fetchone()[0], conn.execute("PRAGMA page_count").fetchone()[0]
    last_root = conn.execute("SELECT max(rootpage) FROM sqlite_master").fetchone()[0]
    conn.close()
    assert pages > last_root + 8  # the schema's pages first, then the rows'
    data = bytearray(src.read_bytes())
    data[(last_root + 4) * size :] = b"\xa5" * (len(data) - (last_root + 4) * size)  # rows' pages
    src.write_bytes(bytes(data))
    with Library.open(main) as lib:
        with pytest.raises(CorruptLibrary) as err:
            merge.merge_file(lib, src)
        assert str(err.value).startswith(f"merging {src} failed: ")
        assert lib.count_tiles() == 1
