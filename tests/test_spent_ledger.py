"""tilelib.spent: the solution hash (checked against code of this file's own), the spent table, its
union merge, its trip through a delta, the upgrade of a version-1 file, and the rows the publish
check must refuse."""

from __future__ import annotations

import hashlib
import sqlite3

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from remote_support import make_library
from support import random_solution

from remote.delta import current_mark, make_delta, pending, read_mark, write_mark
from tilelib import spent
from tilelib.errors import BadInput, CorruptLibrary
from tilelib.merge import fingerprint, merge_file
from tilelib.spent import Reuse, SpentRow
from tilelib.store import SCHEMA_VERSION, Library
from trust.checks import check_connection


def images(g: np.ndarray) -> list[np.ndarray]:
    """The 16 images of a value grid, written out here from FORMAT §3 (mirror, rotate, complement)."""
    out = []
    for k in (0, 1):
        for f in (0, 1):
            x = g[:, ::-1] if f else g
            for _r in range(4):
                out.append(1 - x if k else x)
                x = np.rot90(x, -1)  # a quarter turn clockwise
    return out


def blob(g: np.ndarray) -> bytes:
    """FORMAT §2: row-major, MSB first, padded to whole bytes."""
    return np.packbits(g.astype(np.uint8).ravel()).tobytes()


def own_hash(g: np.ndarray) -> str:
    n = g.shape[0]
    return hashlib.sha256(bytes([n]) + min(blob(x) for x in images(g))).hexdigest()


@settings(max_examples=40, deadline=None)
@given(n=st.sampled_from([6, 10, 12, 16]), seed=st.integers(0, 2**32 - 1), t=st.integers(0, 15))
def test_solution_hash_is_the_same_in_every_orientation_and_matches_an_independent_one(n, seed, t):
    g = random_solution(n, np.random.default_rng(seed))
    h = spent.grid_solution_hash(g)
    assert h == own_hash(g)
    assert spent.grid_solution_hash(images(g)[t]) == h


def test_a_library_row_stores_its_canonical_solution(tmp_path):
    """The stored solution BLOB of a row is already canonical: hashing it directly equals the grid's hash."""
    from tilelib.bits import from_blob

    lib = Library.open(tmp_path / "a.sqlite", create=True)
    make_library(tmp_path / "b.sqlite", 3, 30)
    merge_file(lib, tmp_path / "b.sqlite")
    for n, sol in lib.conn.execute("SELECT n, solution FROM tiles"):
        assert spent.solution_hash(n, sol) == own_hash(from_blob(bytes(sol), n))
    lib.close()


def test_reuse_policy_parses_and_names_the_choices():
    assert Reuse.parse(None) is Reuse.FRESH and Reuse.parse("any") is Reuse.ANY
    with pytest.raises(BadInput, match="fresh, any"):
        Reuse.parse("sometimes")


def _rows(day: str, board: str, sols: list[str]) -> list[SpentRow]:
    return [SpentRow(s, board, 12, day) for s in sols]


def _hex(i: int) -> str:
    return hashlib.sha256(str(i).encode()).hexdigest()


def test_spent_rows_merge_as_a_commutative_union_and_count_in_the_fingerprint(tmp_path):
    paths = [tmp_path / f"{c}.sqlite" for c in "ab"]
    for k, p in enumerate(paths):
        with Library.open(p, create=True) as lib, lib.conn:
            spent.record(lib.conn, _rows(f"2026-10-0{k + 1}", _hex(100 + k), [_hex(i) for i in range(k, k + 5)]))
    before = [fingerprint(sqlite3.connect(p)) for p in paths]
    for src, dst in ((paths[1], paths[0]), (paths[0], paths[1])):
        with Library.open(dst) as lib:
            got = merge_file(lib, src)
            assert got.spent_added == 5
    rows = [sorted(sqlite3.connect(p).execute("SELECT solution, board, n, day FROM spent")) for p in paths]
    assert rows[0] == rows[1] and len(rows[0]) == 10  # (solution, board) pairs: a shared solution twice
    after = fingerprint(sqlite3.connect(paths[0]))
    assert after[-1] == 10 and after[-1] > before[0][-1]
    with Library.open(paths[0]) as lib:
        assert spent.spent_of(lib.conn, [_hex(i) for i in range(20)]) == {_hex(i) for i in range(6)}
        assert spent.count(lib.conn) == (10, 6)
        assert merge_file(lib, paths[1]).spent_added == 0  # idempotent


def test_a_delta_carries_the_spent_rows_past_the_mark(tmp_path):
    p = tmp_path / "lib.sqlite"
    with Library.open(p, create=True) as lib:
        with lib.conn:
            spent.record(lib.conn, _rows("2026-10-01", _hex(1), [_hex(2)]))
        write_mark(lib.conn, "file:///r", current_mark(lib.conn), clear_touched=False)
        mark = read_mark(lib, "file:///r")
        assert mark.spent == 1 and not pending(lib, mark)
        with lib.conn:
            spent.record(lib.conn, _rows("2026-10-02", _hex(3), [_hex(4), _hex(5)]))
        assert pending(lib, mark)
        (tmp_path / "w").mkdir()
        out, reach, _t, _m = make_delta(lib, mark, tmp_path / "w")
    assert reach.spent == 3
    assert sorted(sqlite3.connect(out).execute("SELECT solution FROM spent")) == sorted([(_hex(4),), (_hex(5),)])


def test_a_mark_from_before_the_spent_table_reads_as_spent_zero(tmp_path):
    with Library.open(tmp_path / "lib.sqlite", create=True) as lib:
        with lib.conn:
            lib.conn.execute("INSERT INTO meta VALUES ('remote_mark:file:///r', '[4, 1, 2]')")
        assert read_mark(lib, "file:///r").spent == 0


def test_a_version_1_library_is_upgraded_on_open_and_a_read_only_one_reads_as_empty(tmp_path):
    p = tmp_path / "old.sqlite"
    make_library(p, 1, 5)
    conn = sqlite3.connect(p)
    with conn:
        conn.execute("DROP TABLE spent")
        conn.execute("UPDATE meta SET value = '1' WHERE key = 'schema_version'")
    conn.close()
    ro = sqlite3.connect(f"file:{p}?mode=ro", uri=True)
    assert not spent.has_table(ro) and spent.spent_of(ro, [_hex(1)]) == set() and spent.count(ro) == (0, 0)
    ro.close()
    with Library.open(p) as lib:
        assert spent.has_table(lib.conn)
        assert lib.meta()["schema_version"] == str(SCHEMA_VERSION) == "2"
        names = {r[0] for r in lib.conn.execute("SELECT name FROM sqlite_master WHERE type = 'trigger'")}
        assert {"spent_updated", "spent_deleted"} <= names


@pytest.mark.parametrize(
    "column, value", [("solution", "XYZ"), ("board", "0" * 63), ("n", 8), ("day", "yesterday"), ("solution", "A" * 64)]
)
def test_the_publish_check_refuses_a_malformed_spent_row(tmp_path, column, value):
    p = tmp_path / "lib.sqlite"
    with Library.open(p, create=True) as lib:
        with lib.conn:
            spent.record(lib.conn, _rows("2026-10-01", _hex(1), [_hex(2), _hex(3)]))
        assert check_connection(lib.conn, "lib").spent_checked == 2
        with lib.conn:
            lib.conn.execute(f"UPDATE spent SET {column} = ? WHERE rowid = 2", (value,))
        with pytest.raises(CorruptLibrary, match="spent row 2 is malformed"):
            check_connection(lib.conn, "lib")
        assert lib.meta()["verified:dirty"] == "spent updated"  # the tamper trigger saw it too


def test_the_default_check_of_a_large_library_checks_the_spent_rows_past_its_watermark(tmp_path, monkeypatch):
    """Past the small-library bounds the default check reads only the spent rows added since the last
    passing check (the ledger grows by a board's rows a night; it was scanned whole at every check);
    a malformed row past the mark is still refused, an old row changed makes the file dirty and the
    next check covers every row again; a mark from before spent was counted rechecks them all."""
    from trust import checks

    monkeypatch.setattr(checks, "FULL_CHECK_MAX_ROWS", -1)
    p = tmp_path / "lib.sqlite"
    with Library.open(p, create=True) as lib:
        with lib.conn:
            spent.record(lib.conn, _rows("2026-10-01", _hex(1), [_hex(2), _hex(3)]))
        rep = checks.check_library(lib, "new")
        assert (rep.spent_checked, rep.reached.spent) == (2, 2)
        checks.mark_verified(lib, rep)
        assert checks.read_watermark(lib).spent == 2
        with lib.conn:
            spent.record(lib.conn, _rows("2026-10-02", _hex(4), [_hex(5)]))
        assert checks.check_library(lib, "new").spent_checked == 1
        with lib.conn:
            lib.conn.execute("INSERT INTO spent VALUES (?, ?, 10, 'not a day', 0)", (_hex(6), _hex(7)))
        with pytest.raises(CorruptLibrary, match="spent row 4 is malformed"):
            checks.check_library(lib, "new")
        with lib.conn:
            lib.conn.execute("DELETE FROM spent WHERE rowid = 4")
            lib.conn.execute("UPDATE spent SET day = 'yesterday' WHERE rowid = 1")
        with pytest.raises(CorruptLibrary, match="spent row 1 is malformed"):  # dirty: every row again
            checks.check_library(lib, "new")
        with lib.conn:
            lib.conn.execute("UPDATE spent SET day = '2026-10-01' WHERE rowid = 1")
        checks.mark_verified(lib, checks.check_library(lib, "new"))
        with lib.conn:
            lib.conn.execute("UPDATE meta SET value = '[0, 0]' WHERE key = 'verified:rowids'")
        assert checks.read_watermark(lib) == (0, 0, 0)
        assert checks.check_library(lib, "new").spent_checked == 3
        with lib.conn:
            lib.conn.execute("UPDATE meta SET value = '[5, 2, 1, 1]' WHERE key = 'verified:rowids'")
        assert checks.read_watermark(lib) == checks.NOTHING  # more numbers than it knows: none
