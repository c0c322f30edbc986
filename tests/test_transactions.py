"""The one transaction path, ``tilelib.db.atomic``: outermost a ``BEGIN IMMEDIATE`` … ``COMMIT``,
nested a savepoint that never commits the caller's transaction; a write interrupted mid-way (an
exception inside a nested block, a killed process) leaves the library as it was and sound; and no
code but the helper begins, commits or rolls back a transaction (``transaction_statements``)."""

from __future__ import annotations

import os
import re
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from generator.make import GenParams, make_tile
from stitcher.stitch import StitchError, StitchOptions, stitch
from tilelib import ledger
from tilelib.constraint import Constraint
from tilelib.db import atomic, connect, statements
from tilelib.rng import Stream
from tilelib.schema import shipped_sql as schema_sql
from tilelib.spent import SpentRow
from tilelib.store import Library

ROOT = Path(__file__).resolve().parent.parent


class Boom(Exception):
    pass


def table(path) -> list[int]:
    """The rows of table t as another connection sees them (what is committed)."""
    with sqlite3.connect(path) as other:
        return [r[0] for r in other.execute("SELECT x FROM t ORDER BY x")]


@pytest.fixture
def db(tmp_path):
    path = tmp_path / "t.sqlite"
    conn = connect(path)
    conn.execute("CREATE TABLE t (x INTEGER PRIMARY KEY)")
    yield path, conn
    conn.close()


def test_outermost_block_commits_whole_or_not_at_all(db):
    path, conn = db
    with atomic(conn):
        conn.execute("INSERT INTO t VALUES (1)")
        assert conn.in_transaction
    assert table(path) == [1] and not conn.in_transaction
    with pytest.raises(Boom):
        with atomic(conn):
            conn.execute("INSERT INTO t VALUES (2)")
            raise Boom
    with pytest.raises(KeyboardInterrupt):
        with atomic(conn):
            conn.execute("INSERT INTO t VALUES (3)")
            raise KeyboardInterrupt
    assert table(path) == [1] and not conn.in_transaction


def test_nested_block_is_a_savepoint_inside_the_callers_transaction(db):
    path, conn = db
    with atomic(conn):
        conn.execute("INSERT INTO t VALUES (1)")
        with atomic(conn):
            conn.execute("INSERT INTO t VALUES (2)")
        assert conn.in_transaction and table(path) == []  # the caller's transaction: not committed
        with pytest.raises(Boom):
            with atomic(conn):
                conn.execute("INSERT INTO t VALUES (3)")
                with atomic(conn):
                    conn.execute("INSERT INTO t VALUES (4)")
                raise Boom
        assert [r[0] for r in conn.execute("SELECT x FROM t ORDER BY x")] == [1, 2]
    assert table(path) == [1, 2]


def test_an_error_that_ends_the_whole_transaction_is_not_hidden(db):
    """A RAISE(ROLLBACK) trigger ends the transaction, savepoints included: the trigger's error
    reaches the caller (not "no such savepoint") and nothing is written."""
    path, conn = db
    conn.execute("CREATE TRIGGER no_seven BEFORE INSERT ON t WHEN NEW.x = 7 BEGIN SELECT RAISE(ROLLBACK, 'no 7'); END")
    with pytest.raises(sqlite3.IntegrityError, match="no 7"):
        with atomic(conn):
            conn.execute("INSERT INTO t VALUES (1)")
            with atomic(conn):
                conn.execute("INSERT INTO t VALUES (7)")
    assert table(path) == [] and not conn.in_transaction


# A program: a list of steps; a step is an int (insert it) or (fails, program) (a nested block
# that raises after its steps when ``fails``). The model: what survives is every insert whose
# blocks, from it up to the top, all succeed.
programs = st.recursive(
    st.lists(st.integers(0, 10**6), max_size=3),
    lambda inner: st.lists(st.one_of(st.integers(0, 10**6), st.tuples(st.booleans(), inner)), max_size=4),
    max_leaves=20,
)


def run(conn, program) -> None:
    for step in program:
        if isinstance(step, int):
            conn.execute("INSERT OR IGNORE INTO t VALUES (?)", (step,))
            continue
        fails, body = step
        try:
            with atomic(conn):
                run(conn, body)
                if fails:
                    raise Boom
        except Boom:
            pass


def kept(program) -> set[int]:
    out: set[int] = set()
    for step in program:
        if isinstance(step, int):
            out.add(step)
        elif not step[0]:
            out |= kept(step[1])
    return out


@settings(max_examples=150, deadline=None)
@given(program=programs, fails=st.booleans())
def test_nested_blocks_keep_exactly_what_succeeded(tmp_path_factory, program, fails):
    path = tmp_path_factory.mktemp("prop") / "t.sqlite"
    conn = connect(path)
    conn.execute("CREATE TABLE t (x INTEGER PRIMARY KEY)")
    run(conn, [(fails, program)])
    assert not conn.in_transaction
    assert set(table(path)) == (set() if fails else kept(program))
    assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    conn.close()


def test_statements_split_a_script_as_sqlite_does():
    a = sqlite3.connect(":memory:")
    a.executescript(schema_sql())
    b = connect(":memory:")
    with atomic(b):
        for stmt in statements(schema_sql()):
            b.execute(stmt)
    q = "SELECT type, name, sql FROM sqlite_master ORDER BY name"
    assert a.execute(q).fetchall() == b.execute(q).fetchall()
    assert any(s.startswith("CREATE TRIGGER") and s.endswith("END;") for s in statements(schema_sql()))
    with pytest.raises(ValueError, match="incomplete"):
        statements("CREATE TABLE x (a);\nCREATE TRIGGER y AFTER INSERT ON x BEGIN SELECT 1;")


# ---------------------------------------------------------------- the library under faults


def dump(path) -> str:
    """Every row of every table of a library file, as SQL text, read by a connection of its own."""
    conn = sqlite3.connect(path)
    try:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        return "\n".join(conn.iterdump())
    finally:
        conn.close()


@pytest.fixture
def stocked(tmp_path) -> Path:
    """A library with two tiles, a miss and a manifest with its spent rows."""
    path = tmp_path / "lib.sqlite"
    with Library.create(path) as lib:
        for k in range(2):
            lib.insert(make_tile(GenParams.make(6, seam_mask=k), Stream(b"tx" * 16, f"tile/{k}")))
        ledger.record_miss(lib.conn, Constraint.sides(8, top=0b00110011), "p0")
        ledger.put_manifest(
            lib.conn, "2026-12-01", "ab" * 32, "{}", spent=[SpentRow("0" * 64, "b" * 64, 10, "2026-12-01")]
        )
    return path


def spent_rows_then_a_fault():
    yield SpentRow("1" * 64, "c" * 64, 10, "2026-12-02")
    raise Boom("the disk went away")


def test_an_exception_inside_a_nested_write_leaves_the_library_as_it_was(stocked):
    before = dump(stocked)
    with Library.open(stocked) as lib:
        with pytest.raises(Boom):
            with atomic(lib.conn):  # the caller's unit (a stitch, a build's store)
                lib.insert(make_tile(GenParams.make(8, seam_mask=3), Stream(b"tx" * 16, "tile/new")))
                ledger.record_miss(lib.conn, Constraint.sides(8, top=0b01010101), "p1")
                ledger.put_manifest(lib.conn, "2026-12-02", "cd" * 32, "{}", spent=spent_rows_then_a_fault())
        assert not lib.conn.in_transaction
    assert dump(stocked) == before


def test_a_failed_nested_write_is_undone_while_the_callers_unit_goes_on(stocked):
    with Library.open(stocked) as lib:
        with atomic(lib.conn):
            ledger.record_miss(lib.conn, Constraint.sides(8, top=0b01010101), "p1")
            with pytest.raises(Boom):
                ledger.put_manifest(lib.conn, "2026-12-02", "cd" * 32, "{}", spent=spent_rows_then_a_fault())
        days = [r[0] for r in lib.conn.execute("SELECT day FROM manifests ORDER BY day")]
        misses = lib.conn.execute("SELECT count(*) FROM misses").fetchone()[0]
    assert days == ["2026-12-01"] and misses == 2
    dump(stocked)


KILLED = """
import sys, time
from tilelib import ledger
from tilelib.constraint import Constraint
from tilelib.db import atomic
from tilelib.spent import SpentRow
from tilelib.store import Library

lib = Library.open(sys.argv[1])
with atomic(lib.conn):
    for k in range(1, 200):
        ledger.record_miss(lib.conn, Constraint.sides(10, top=k, left=k), "killed")
    ledger.put_manifest(lib.conn, "2026-12-03", "ef" * 32, "{}",
                        spent=[SpentRow(f"{k:064x}", "d" * 64, 12, "2026-12-03") for k in range(500)])
    lib.conn.execute("PRAGMA cache_spill = 1")
    print("inside", flush=True)
    time.sleep(60)
"""


def test_a_killed_writer_leaves_the_library_as_it_was(stocked):
    before = dump(stocked)
    proc = subprocess.Popen([sys.executable, "-c", KILLED, str(stocked)], cwd=ROOT, stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline().strip() == "inside"
        assert Path(str(stocked) + "-journal").exists()  # mid-transaction: a journal on disk
        os.kill(proc.pid, signal.SIGKILL)
    finally:
        proc.wait(timeout=30)
        proc.stdout.close()
    assert proc.returncode == -signal.SIGKILL
    assert dump(stocked) == before  # the hot journal rolled back on open
    with Library.open(stocked) as lib:
        assert lib.conn.execute("SELECT count(*) FROM misses").fetchone()[0] == 1


def test_a_failed_stitch_keeps_the_misses_it_recorded(lib):
    """``stitcher.stitch.kept``: the stitch's transaction is committed when it fails (its misses are
    worth keeping), and the error goes on."""
    four = __import__("packers.packing", fromlist=["Packing"]).Packing(
        P=10, squares=((0, 0, 5), (5, 0, 5), (0, 5, 5), (5, 5, 5)), zones=(), seed_tile=0, name="test"
    )
    with pytest.raises(StitchError):
        stitch(four, lib, Stream(bytes(range(32)), "x"), StitchOptions(drain=False))
    assert not lib.conn.in_transaction
    assert ledger.open_misses(lib.conn), "the seed's miss was recorded and kept"
    assert dump(lib.path)


# ---------------------------------------------------------------- one path, read from the source

SOURCES = (
    "tilelib",
    "engine",
    "packers",
    "generator",
    "stitcher",
    "referee",
    "remote",
    "daily",
    "tiles_cli",
    "scripts",
)
HELPERS = {"tilelib/db.py"}  # the one path (PostgreSQL: psycopg's conn.transaction())
TRANSACTION = re.compile(
    r"""["'](BEGIN|COMMIT|ROLLBACK|SAVEPOINT|RELEASE|END)\b|\.commit\(\)|\.rollback\(\)"""
    r"""|\bwith\s+[\w.]*\bconn\w*\s*:|\bwith\s+[\w.]*\b(db|lib)\.conn\s*:|executescript\("""
)


def transaction_statements(text: str) -> list[str]:
    """The lines of ``text`` that run a transaction some other way than ``atomic``."""
    return [line.strip() for line in text.splitlines() if TRANSACTION.search(line.split("#")[0])]


def test_no_code_but_the_helper_begins_commits_or_rolls_back():
    found = []
    for top in SOURCES:
        for f in sorted((ROOT / top).rglob("*.py")):
            rel = f.relative_to(ROOT).as_posix()
            if rel not in HELPERS:
                found += [f"{rel}: {line}" for line in transaction_statements(f.read_text(encoding="utf-8"))]
    assert found == []


@pytest.mark.parametrize(
    "line",
    [
        'conn.execute("BEGIN IMMEDIATE")',
        "lib.conn.commit()",
        "    with conn:",
        "with self.conn:",
        "with lib.conn:",
        'c.execute("COMMIT")',
        "src.rollback()",
        "conn.executescript(SQL)",
        "with db.conn:",
        'conn.execute("SAVEPOINT a")',
    ],
)
def test_the_source_check_finds_every_other_way(line):
    assert transaction_statements(line) == [line.strip()]


@pytest.mark.parametrize(
    "line",
    [
        "with atomic(conn):",
        "with connect(p) as c:",
        "# conn.commit() in a comment",
        "x = conn.execute('SELECT 1')",
        "with opened(path) as db:",
    ],
)
def test_the_source_check_passes_the_one_way(line):
    assert transaction_statements(line) == []
