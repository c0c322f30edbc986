"""Issue 51: the schema proof itself (``tilelib.schema``), honest insert counts and connections that
trust no schema.

The proof is checked against inputs it must accept (the shipped schema of each version, the sync
objects, SQL written with other whitespace, comments and case) and inputs it must refuse (one object
added, removed or changed, of every type; a string literal changed; half the sync objects; rows of
``sqlite_master`` written by hand with a root page SQLite would misread, or SQL stored as a blob; a
``schema_version`` spelt otherwise than the code writes it). The cases tests/test_schema_fuzz.py
found are marked so. Honest counts are checked on a file whose trigger appeared after it was opened
(what no open can see): every insert path refuses to call a dropped row "already in".
"""

from __future__ import annotations

import ast
import sqlite3
from pathlib import Path

import pytest
from remote_support import make_library, opened_then_planted, random_tiles

from tilelib import ledger, spent
from tilelib.db import atomic, connect
from tilelib.errors import CorruptLibrary, NotALibrary, RowsNotStored, SchemaMismatch, SchemaTooNew
from tilelib.merge import merge_file
from tilelib.schema import (
    SCHEMA_VERSION,
    SYNC_SCHEMA,
    check_schema,
    normalise,
    schema_problems,
    shipped,
    version_statements,
)
from tilelib.store import Library
from trust.checks import check_pages

ROOT = Path(__file__).resolve().parents[1]


def made(path: Path, version: int = SCHEMA_VERSION, extra: str = "") -> sqlite3.Connection:
    """A file made by the shipped statements of ``version`` (plus ``extra``), plain sqlite3."""
    conn = sqlite3.connect(path)
    conn.executescript("\n".join(version_statements(version)) + extra)
    conn.execute("INSERT INTO meta VALUES ('schema_version', ?)", (str(version),))
    conn.commit()
    return conn


def test_normalise_ignores_layout_and_keeps_literals():
    a = "CREATE TABLE t (a INTEGER NOT NULL, -- note\n b TEXT DEFAULT 'x')"
    b = "create   table T(A integer /* other */ not null,b text default 'x')"
    assert normalise(a) == normalise(b)
    assert normalise(a) != normalise(a.replace("'x'", "'X'"))
    assert normalise(a) != normalise(a.replace("NOT NULL", ""))
    # A quoted token is never a keyword, nor the bare word it spells (issue 69): refused, not guessed.
    assert normalise(a) != normalise(a.replace("NOT NULL", '"NOT" "NULL"'))
    assert normalise(a) != normalise(a.replace("t (", '"t" ('))


@pytest.mark.parametrize("version", [1, SCHEMA_VERSION])
def test_the_shipped_schema_of_each_version_is_accepted(tmp_path, version):
    conn = made(tmp_path / "a.sqlite", version)
    assert check_schema(conn, "a") == version and schema_problems(conn, "a") == []
    conn = made(tmp_path / "b.sqlite", version, SYNC_SCHEMA)
    assert check_schema(conn, "b") == version


def test_version_1_is_version_2_without_spent():
    assert set(shipped(2)) - set(shipped(1)) == {
        ("table", "spent"),
        ("index", "sqlite_autoindex_spent_1"),
        ("trigger", "spent_updated"),
        ("trigger", "spent_deleted"),
    }
    assert all(shipped(2)[k].reading() == o.reading() for k, o in shipped(1).items())


CHANGES = {
    "extra trigger": ("CREATE TRIGGER t_x AFTER INSERT ON misses BEGIN SELECT 1; END", 'extra trigger "t_x" on misses'),
    "extra view": ("CREATE VIEW v AS SELECT 1", 'extra view "v"'),
    "extra index": ("CREATE INDEX i_x ON spent (day)", 'extra index "i_x" on spent'),
    "extra table": ("CREATE TABLE notes (x)", 'extra table "notes"'),
    "planner statistics": (
        "INSERT INTO misses (n, side_mask, top, right, bottom, left, top_mask, right_mask, "
        "bottom_mask, left_mask, first_seen, last_seen) VALUES (6,1,0,0,0,0,1,0,0,0,1,1); ANALYZE",
        'extra table "sqlite_stat1"',
    ),
    "dropped trigger": ("DROP TRIGGER spent_deleted", 'missing trigger "spent_deleted" on spent'),
    "dropped index": ("DROP INDEX misses_open", 'missing index "misses_open" on misses'),
    "changed trigger": (
        "DROP TRIGGER tiles_deleted; CREATE TRIGGER tiles_deleted AFTER DELETE ON tiles BEGIN SELECT 1; END",
        'changed trigger "tiles_deleted" on tiles',
    ),
    "changed literal": (
        "DROP TRIGGER tiles_deleted; CREATE TRIGGER tiles_deleted AFTER DELETE ON tiles BEGIN "
        "INSERT OR REPLACE INTO meta (key, value) VALUES ('verified:dirty', 'x'); END",
        'changed trigger "tiles_deleted" on tiles',
    ),
    "changed table": ("ALTER TABLE misses ADD COLUMN note TEXT", 'changed table "misses"'),
    "half the sync objects": (
        "CREATE TABLE misses_touched (id INTEGER PRIMARY KEY)",
        'missing trigger "misses_touch" on misses',
    ),
}


@pytest.mark.parametrize("what", CHANGES)
def test_every_kind_of_change_is_refused_naming_the_object(tmp_path, what):
    sql, phrase = CHANGES[what]
    conn = made(tmp_path / "a.sqlite")
    conn.executescript(sql)
    with pytest.raises(SchemaMismatch, match=phrase):
        check_schema(conn, "a")
    conn.close()
    with pytest.raises(SchemaMismatch, match=phrase):
        Library.open(tmp_path / "a.sqlite")


def planted(path: Path, *edits: str) -> None:
    """A library whose ``sqlite_master`` rows were then written by hand (``writable_schema``), as a
    hostile peer's own code would."""
    conn = made(path)
    conn.execute("PRAGMA writable_schema = ON")
    for sql in edits:
        conn.execute(sql)
    conn.commit()
    conn.close()


def _root(name: str) -> int:
    """The root page the shipped statements give ``name`` in a fresh file."""
    conn = sqlite3.connect(":memory:")
    conn.executescript("\n".join(version_statements(SCHEMA_VERSION)))
    return conn.execute("SELECT rootpage FROM sqlite_master WHERE name = ?", (name,)).fetchone()[0]


_SET_ROOT = "UPDATE sqlite_master SET rootpage = {} WHERE name = '{}'"
# Rows whose SQL and pragmas are the shipped ones but which SQLite reads otherwise. The first two were
# found by tests/test_schema_fuzz.py (accepted before); the third was refused before too (read as no
# SQL, which a trigger's is not), now as SQL no text is.
ROOT_PAGES = {
    # page 1 is sqlite_master's own b-tree: every insert into tiles then fails as corrupt
    "an index on page 1": ([_SET_ROOT.format(1, "tiles_top_right")], 'changed index "tiles_top_right"'),
    # SQLite reads a blob '4' as page 4; a count of integers took it for a page of its own
    "a root page shared, stored as a blob": (
        [_SET_ROOT.format(f"CAST('{_root('tiles')}' AS BLOB)", "misses_open")],
        'changed index "misses_open"',
    ),
    # SQLite runs SQL stored as a blob as its text: the proof reads it as a token no text has (read as
    # no SQL it would pass for an autoindex's)
    "SQL stored as a blob": (
        ["UPDATE sqlite_master SET sql = CAST(sql AS BLOB) WHERE name = 'tiles_deleted'"],
        'changed trigger "tiles_deleted"',
    ),
}


@pytest.mark.parametrize("what", ROOT_PAGES)
def test_rows_whose_root_page_or_sql_storage_is_not_sqlites_own_are_refused(tmp_path, what):
    edits, phrase = ROOT_PAGES[what]
    planted(tmp_path / "a.sqlite", *edits)
    conn = connect(tmp_path / "a.sqlite", readonly=True)
    with pytest.raises(SchemaMismatch, match=phrase):
        check_schema(conn, "a")
    conn.close()
    with pytest.raises(SchemaMismatch, match=phrase):
        Library.open(tmp_path / "a.sqlite")


def test_a_table_and_an_index_that_swapped_root_pages_are_refused_as_damaged_pages(tmp_path):
    """Found by tests/test_schema_fuzz.py: each keeps a root page of its own and every pragma reads as
    shipped, so the schema proof (which reads no page) accepts the file; but SQLite finds a table
    cursor on an index page corrupt and the first write fails. Like any damaged page, that is the page
    check's to refuse (``trust.checks.check_pages``, run by every pull, push and verify)."""
    swap = [_SET_ROOT.format(_root("tiles_top_right"), "tiles"), _SET_ROOT.format(_root("tiles"), "tiles_top_right")]
    planted(tmp_path / "a.sqlite", *swap)
    conn = connect(tmp_path / "a.sqlite", readonly=True)
    assert check_schema(conn, "a") == SCHEMA_VERSION
    for integrity in ("quick", "full"):
        with pytest.raises(CorruptLibrary, match="is damaged"):
            check_pages(conn, "a", integrity)
    conn.close()


def test_a_meta_that_is_not_the_table_is_refused_before_it_is_read(tmp_path):
    conn = made(tmp_path / "a.sqlite")
    conn.executescript(
        "ALTER TABLE meta RENAME TO meta_real; CREATE VIEW meta AS SELECT 'schema_version' AS key, '2' AS value"
    )
    with pytest.raises(SchemaMismatch, match='view "meta"'):
        check_schema(conn, "a")


def test_not_a_library_and_too_new(tmp_path):
    conn = sqlite3.connect(tmp_path / "x.sqlite")
    conn.execute("CREATE TABLE other (x)")
    with pytest.raises(NotALibrary):
        check_schema(conn, "x")
    conn = made(tmp_path / "a.sqlite")
    conn.execute("UPDATE meta SET value = '3' WHERE key = 'schema_version'")
    with pytest.raises(SchemaTooNew):
        check_schema(conn, "a")


@pytest.mark.parametrize("text", ["02", " 2", "2 ", "+2", "2.0", "\uff12", "\u0662"])
def test_a_schema_version_written_otherwise_than_the_code_writes_it_is_refused(tmp_path, text):
    """Found by tests/test_schema_fuzz.py: '02' read as version 2 and was accepted, though no library
    holds it (the code writes str(2)); every other spelling of a number is refused too."""
    conn = made(tmp_path / "a.sqlite")
    conn.execute("UPDATE meta SET value = ? WHERE key = 'schema_version'", (text,))
    with pytest.raises(NotALibrary, match="no valid schema_version"):
        check_schema(conn, "a")


def test_every_connection_distrusts_the_schema(tmp_path):
    for conn in (connect(tmp_path / "a.sqlite"), connect(tmp_path / "a.sqlite", readonly=True), connect(":memory:")):
        assert conn.execute("PRAGMA trusted_schema").fetchone() == (0,)
        conn.close()


SHIPPED = "tilelib engine generator packers stitcher referee remote players daily tiles_cli".split()


def sqlite_openers(tree: ast.AST) -> list[int]:
    """Lines of a module that reach ``sqlite3.connect`` in any spelling: the attribute on the module
    (whatever the module is imported as), or the function imported by name (whatever it is renamed)."""
    modules, functions, lines = set(), set(), []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            modules |= {a.asname or a.name for a in node.names if a.name == "sqlite3"}
        elif isinstance(node, ast.ImportFrom) and node.module == "sqlite3":
            functions |= {a.asname or a.name for a in node.names if a.name in ("connect", "*")}
            lines += [node.lineno for a in node.names if a.name in ("connect", "*")]
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr == "connect":
            if isinstance(node.value, ast.Name) and node.value.id in modules:
                lines.append(node.lineno)
        elif isinstance(node, ast.Name) and node.id in functions - {"*"}:
            lines.append(node.lineno)
    return sorted(set(lines))


def test_the_opener_finder_sees_every_spelling():
    spellings = [
        "import sqlite3\nsqlite3.connect('x')",
        "import sqlite3 as s\ns.connect('x')",
        "from sqlite3 import connect\nconnect('x')",
        "from sqlite3 import connect as c\nc('x')",
        "from sqlite3 import *",
        "import sqlite3\nopen_db = sqlite3.connect",
    ]
    assert all(sqlite_openers(ast.parse(text)) for text in spellings)
    assert sqlite_openers(ast.parse("import sqlite3\nsqlite3.Row\nclass A:\n    def connect(self): pass")) == []


def test_only_the_one_helper_opens_sqlite_files():
    """``tilelib.db.connect`` is the one way the shipped code opens a SQLite file (so every connection
    distrusts its schema); a second ``sqlite3.connect``, however spelled, in any shipped package,
    would escape that."""
    found = [
        f"{p.relative_to(ROOT)}"
        for top in SHIPPED
        for p in (ROOT / top).rglob("*.py")
        if sqlite_openers(ast.parse(p.read_text(encoding="utf-8")))
    ]
    assert found == ["tilelib/db.py"]


def test_a_path_with_uri_characters_opens_as_a_name(tmp_path):
    p = tmp_path / "a?mode=ro#x%20.sqlite"
    make_library(p, 1, 3)
    with Library.open(p) as lib:
        assert lib.count_tiles() == 3
    assert p.is_file()


# ---------------------------------------------------------------- honest counts


def test_insert_many_names_a_row_that_was_not_stored(tmp_path):
    lib = opened_then_planted(
        tmp_path / "a.sqlite", "CREATE TRIGGER d BEFORE INSERT ON tiles WHEN NEW.n = 6 BEGIN SELECT RAISE(IGNORE); END"
    )
    with pytest.raises(RowsNotStored, match="is not stored"):
        lib.insert_many(random_tiles(9, 4))
    with pytest.raises(RowsNotStored):
        lib.insert_rows(random_tiles(10, 1))
    assert lib.count_tiles() == 3  # the batch was rolled back whole
    lib.close()


def test_counts_are_rows_added_not_changes(tmp_path):
    """A trigger's own writes move SQLite's change counter; the count is of rows present."""
    lib = opened_then_planted(
        tmp_path / "a.sqlite",
        "CREATE TRIGGER log AFTER INSERT ON tiles BEGIN INSERT INTO misses_log VALUES (NEW.hash); END",
    )
    lib.conn.execute("CREATE TABLE misses_log (h)")
    tiles = random_tiles(11, 4)
    assert lib.insert_many(tiles) == 4 and lib.insert_many(tiles) == 0
    lib.close()


def test_spent_manifest_and_miss_writes_name_what_was_not_stored(tmp_path):
    lib = opened_then_planted(
        tmp_path / "a.sqlite", "CREATE TRIGGER d BEFORE INSERT ON spent BEGIN SELECT RAISE(IGNORE); END"
    )
    row = spent.SpentRow("ab" * 32, "cd" * 32, 10, "2026-11-01")
    with pytest.raises(RowsNotStored, match="spent row of solution abab"):
        with atomic(lib.conn):
            spent.record(lib.conn, [row])
    for table in ("manifests", "misses"):
        lib.conn.execute(f"CREATE TRIGGER d_{table} BEFORE INSERT ON {table} BEGIN SELECT RAISE(IGNORE); END")
    with pytest.raises(RowsNotStored, match="manifest of 2026-11-01"):
        ledger.put_manifest(lib.conn, "2026-11-01", "c0", "{}")
    from tilelib.constraint import Constraint

    with pytest.raises(RowsNotStored, match="miss of n = 6"):
        ledger.record_miss(lib.conn, Constraint.sides(6))
    lib.close()


def test_a_merge_into_a_file_that_drops_rows_is_refused_whole(tmp_path):
    src = tmp_path / "src.sqlite"
    make_library(src, 2, 5)
    lib = opened_then_planted(
        tmp_path / "a.sqlite",
        "CREATE TRIGGER d BEFORE INSERT ON tiles WHEN NEW.rowid % 2 = 0 OR 1 BEGIN SELECT RAISE(IGNORE); END",
    )
    with pytest.raises(RowsNotStored, match="was merged and is not stored"):
        merge_file(lib, src)
    assert lib.count_tiles() == 3
    lib.close()


# ---------------------------------------------------------------- partial drops: one row of many


def test_a_batch_with_one_row_dropped_is_refused_naming_that_row(tmp_path):
    """A trigger that drops only one row of a batch (the rest stored): the check must see the one, not
    only "nothing stored"."""
    tiles = random_tiles(9, 4)
    lost = tiles[2].hash
    lib = opened_then_planted(
        tmp_path / "a.sqlite",
        f"CREATE TRIGGER d BEFORE INSERT ON tiles WHEN NEW.hash = '{lost}' BEGIN SELECT RAISE(IGNORE); END",
    )
    with pytest.raises(RowsNotStored, match=lost[:12]):
        lib.insert_many(tiles)
    assert lib.count_tiles() == 3  # rolled back whole: the three stored rows went too
    assert lib.insert_many(tiles[:2]) == 2  # the rows the trigger lets through still store
    lib.close()


def test_a_spent_batch_with_one_row_dropped_is_refused_naming_it(tmp_path):
    rows = [spent.SpentRow(f"{k:02x}" * 32, "cd" * 32, 10, "2026-11-01") for k in range(3)]
    lib = opened_then_planted(
        tmp_path / "a.sqlite",
        f"CREATE TRIGGER d BEFORE INSERT ON spent WHEN NEW.solution = '{rows[1].solution}' "
        "BEGIN SELECT RAISE(IGNORE); END",
    )
    with pytest.raises(RowsNotStored, match="0101"):
        with atomic(lib.conn):
            spent.record(lib.conn, rows)
    assert lib.conn.execute("SELECT count(*) FROM spent").fetchone() == (0,)
    lib.close()


def test_a_merge_that_loses_one_row_of_many_is_refused_whole(tmp_path):
    src = tmp_path / "src.sqlite"
    hashes = sorted(make_library(src, 2, 5))
    lib = opened_then_planted(
        tmp_path / "a.sqlite",
        f"CREATE TRIGGER d BEFORE INSERT ON tiles WHEN NEW.hash = '{hashes[3]}' BEGIN SELECT RAISE(IGNORE); END",
    )
    with pytest.raises(RowsNotStored, match=hashes[3][:12]):
        merge_file(lib, src)
    assert lib.count_tiles() == 3
    lib.close()
