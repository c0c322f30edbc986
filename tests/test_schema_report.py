"""What the schema proof says, word for word and in its order (``tilelib.schema``, issue 71).

test_schema_proof.py shows each kind of change is refused; these tests hold the report a user reads
to its exact text: every difference named once, by its own kind (a view where a table belongs is
one wrong type, not an extra view and a missing table), ranked duplicates, wrong types, extras,
missing and changed, SQLite's autoindexes last; ``check_schema``'s count of the rest; each
``file_version`` refusal with the file's label. Also the readers' own contracts: an attached file is
read as itself, the reference is what the statements make, and the shipped text reads the same
under any locale (a cron job's may be C).
"""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from tilelib.db import connect
from tilelib.errors import NotALibrary, SchemaMismatch, SchemaTooNew
from tilelib.schema import (
    SCHEMA_VERSION,
    _reference,
    _touches,
    check_schema,
    differences,
    file_version,
    read_objects,
    schema_problems,
    shipped_sql,
    version_statements,
)

ROOT = Path(__file__).resolve().parents[1]


def made(path: Path, *edits: str, encoding: str = "UTF-8") -> sqlite3.Connection:
    """A version-2 library made by the shipped statements, then changed by ``edits``."""
    conn = sqlite3.connect(path)
    conn.execute(f"PRAGMA encoding = '{encoding}'")
    conn.executescript("\n".join(version_statements(SCHEMA_VERSION)))
    conn.execute("INSERT INTO meta VALUES ('schema_version', ?)", (str(SCHEMA_VERSION),))
    conn.commit()
    for sql in edits:
        conn.executescript(sql)
    return conn


# One file with a difference of every kind. Names are chosen so that the ranks, not the names,
# decide the order: "aaa" sorts before every shipped name, a view sorts after a table, an index
# before a trigger, and the autoindex before the trigger it must follow.
EVERY_KIND = (
    "DROP TABLE manifests; CREATE VIEW manifests AS SELECT 1 AS a",  # wrong type; its autoindex missing
    "CREATE TABLE aaa (x); CREATE TABLE zzz (x)",  # extra tables
    "DROP INDEX misses_open",  # missing index
    "ALTER TABLE misses ADD COLUMN note TEXT",  # changed table
    "CREATE TRIGGER tiles AFTER UPDATE ON misses BEGIN SELECT 1; END",  # a trigger may share a table's name
    "DROP TRIGGER tiles_updated; CREATE VIEW tiles_updated AS SELECT 1",  # a view may share a trigger's
    "DROP TABLE spent; CREATE TRIGGER spent AFTER DELETE ON misses BEGIN SELECT 1; END",
)
EVERY_KIND_REPORT = [
    '"manifests" is a view where version 2 has a table',
    'extra table "aaa"',
    'extra table "zzz"',
    'extra trigger "spent" on misses',
    'extra trigger "tiles" on misses',
    'extra view "tiles_updated"',
    'missing index "misses_open" on misses',
    'missing table "spent"',
    'missing trigger "manifests_updated" on manifests',
    'missing trigger "spent_deleted" on spent',
    'missing trigger "spent_updated" on spent',
    'missing trigger "tiles_updated" on tiles',
    'missing index "sqlite_autoindex_manifests_1" on manifests',
    'missing index "sqlite_autoindex_spent_1" on spent',
    'changed table "misses"',
]


def test_every_kind_of_difference_is_named_once_in_rank_order(tmp_path):
    conn = made(tmp_path / "a.sqlite", *EVERY_KIND)
    assert schema_problems(conn, "a") == EVERY_KIND_REPORT
    with pytest.raises(SchemaMismatch) as err:
        check_schema(conn, "a")
    assert str(err.value) == (
        f"a: its schema is not schema version 2's: {EVERY_KIND_REPORT[0]} "
        f"(and {len(EVERY_KIND_REPORT) - 1} more difference(s)); "
        "refusing it (`tiles library repair` writes a clean copy)"
    )


def test_duplicates_come_first_counted_and_typed():
    """Two rows of one (type, name) — which only a hand-edited ``sqlite_master`` holds, and SQLite
    then refuses to open — are one difference ranked before every other."""
    conn = sqlite3.connect(":memory:")
    conn.executescript("\n".join(version_statements(SCHEMA_VERSION)))
    conn.executescript("DROP TABLE manifests; CREATE VIEW manifests AS SELECT 1 AS a; CREATE TABLE aaa (x)")
    found = read_objects(conn)
    found += [o for o in found if o.name in ("aaa", "misses_open")]
    assert differences(found, SCHEMA_VERSION)[:5] == [
        '2 objects named "misses_open" of type index',
        '2 objects named "aaa" of type table',
        '"manifests" is a view where version 2 has a table',
        'extra table "aaa"',
        'missing trigger "manifests_updated" on manifests',
    ]
    found.append(next(o for o in found if o.name == "aaa"))
    assert '3 objects named "aaa" of type table' in differences(found, SCHEMA_VERSION)
    metas = [o for o in read_objects(conn) if o.name == "meta"]
    with pytest.raises(SchemaMismatch, match='table "meta" is not the meta table schema.sql ships'):
        file_version(conn, "a", objects=read_objects(conn) + metas)


@pytest.mark.parametrize(
    "edits,count",
    [
        (["CREATE TABLE aaa (x)"], 1),
        (["CREATE TABLE aaa (x)", "CREATE TABLE bbb (x)"], 2),
    ],
)
def test_check_schema_counts_the_rest(tmp_path, edits, count):
    conn = made(tmp_path / "a.sqlite", *edits)
    more = f" (and {count - 1} more difference(s))" if count > 1 else ""
    with pytest.raises(SchemaMismatch) as err:
        check_schema(conn, "lib.sqlite")
    assert str(err.value) == (
        f'lib.sqlite: its schema is not schema version 2\'s: extra table "aaa"{more}; '
        "refusing it (`tiles library repair` writes a clean copy)"
    )


def test_a_trigger_named_meta_is_an_extra_trigger_not_a_second_meta(tmp_path):
    """Triggers have their own namespace: one called meta is not the meta table's rival."""
    conn = made(tmp_path / "a.sqlite", "CREATE TRIGGER meta AFTER UPDATE ON tiles BEGIN SELECT 1; END")
    assert file_version(conn, "a") == SCHEMA_VERSION
    assert schema_problems(conn, "a") == ['extra trigger "meta" on tiles']


def test_each_refusal_of_file_version_reads_exactly(tmp_path):
    cases = {
        "a.sqlite is not a tiles library (no meta table)": (NotALibrary, ["DROP TABLE meta"]),
        "a.sqlite has schema version 3; this tiles reads up to 2": (
            SchemaTooNew,
            ["UPDATE meta SET value = '3' WHERE key = 'schema_version'"],
        ),
        "a.sqlite has schema version 0: no such version": (
            NotALibrary,
            ["UPDATE meta SET value = '0' WHERE key = 'schema_version'"],
        ),
        "a.sqlite has no valid schema_version in meta, so it is not a tiles library": (
            NotALibrary,
            ["DELETE FROM meta"],
        ),
        'a.sqlite: view "meta" is not the meta table schema.sql ships; '
        "refusing the file (`tiles library repair` writes a clean copy)": (
            SchemaMismatch,
            ["ALTER TABLE meta RENAME TO m2; CREATE VIEW meta AS SELECT * FROM m2"],
        ),
    }
    for i, (message, (kind, edits)) in enumerate(cases.items()):
        conn = made(tmp_path / f"{i}.sqlite", *edits)
        conn.commit()
        for check in (file_version, check_schema, schema_problems):
            with pytest.raises(kind) as err:
                check(conn, "a.sqlite")
            assert str(err.value) == message, check
        conn.close()
    conn = made(tmp_path / "utf16.sqlite", encoding="UTF-16le")
    with pytest.raises(SchemaMismatch) as err:
        file_version(conn, "a.sqlite")
    assert str(err.value) == "a.sqlite: its text is UTF-16le, a library's is UTF-8; refusing the file"


def test_an_attached_file_is_read_as_itself(tmp_path):
    """``read_objects`` of an attached schema reports that file's tables and indexes, not main's of
    the same name (the merge and the pull read attached files)."""
    other = tmp_path / "other.sqlite"
    made(
        other,
        "ALTER TABLE misses ADD COLUMN note TEXT",
        "CREATE INDEX tiles_top_right2 ON tiles (top)",
        "DROP INDEX misses_open; CREATE INDEX misses_open ON misses (n)",  # main's name, other columns
    ).close()
    alone = connect(other, readonly=True)
    want = [o.reading() for o in read_objects(alone)]
    alone.close()
    conn = made(tmp_path / "main.sqlite")
    conn.execute("ATTACH DATABASE ? AS other", (str(other),))
    assert [o.reading() for o in read_objects(conn, "other")] == want
    assert [o.reading() for o in read_objects(conn, "other")] != [o.reading() for o in read_objects(conn)]
    assert file_version(conn, "other", "other") == SCHEMA_VERSION
    assert schema_problems(conn, "other", "other") == [
        'extra index "tiles_top_right2" on tiles',
        'changed index "misses_open" on misses',
        'changed table "misses"',
        'changed table "tiles"',  # its index list has one more
    ]
    viewed = tmp_path / "viewed.sqlite"
    made(viewed, "ALTER TABLE meta RENAME TO m2; CREATE VIEW meta AS SELECT * FROM m2").close()
    conn.execute("ATTACH DATABASE ? AS viewed", (str(viewed),))
    with pytest.raises(SchemaMismatch, match='^viewed: view "meta" is not the meta table'):
        file_version(conn, "viewed", "viewed")


def test_the_reference_is_what_the_statements_make(tmp_path, monkeypatch):
    """Read back from a database in memory: the same objects as a file made by the statements, and
    nothing written where it runs."""
    monkeypatch.chdir(tmp_path)
    script = "CREATE TABLE t (a INTEGER PRIMARY KEY, b TEXT UNIQUE) STRICT;\nCREATE INDEX t_b ON t (b DESC);\n"
    conn = sqlite3.connect(":memory:")
    conn.executescript(script)
    want = {o.key: o for o in read_objects(conn, "main")}
    assert _reference(script) == want
    assert set(want) == {("table", "t"), ("index", "t_b"), ("index", "sqlite_autoindex_t_1")}
    assert want[("table", "t")].facts[0] == ("table", 2, 0, 1)  # kind, columns, WITHOUT ROWID, STRICT
    assert list(tmp_path.iterdir()) == []


def test_which_statements_a_table_owns():
    assert _touches("CREATE TABLE spent (x)", ("spent",))
    assert _touches("CREATE TABLE IF NOT EXISTS spent (x)", ("spent",))
    assert not _touches("CREATE TABLE other (spent)", ("spent",))
    assert not _touches("CREATE TABLE IF NOT EXISTS other (spent)", ("spent",))
    assert _touches("CREATE INDEX i ON spent (x)", ("spent",))
    assert not _touches("CREATE INDEX spent ON other (x)", ("spent",))
    with pytest.raises(ValueError) as err:
        version_statements(3)
    assert str(err.value) == "no shipped schema for version 3"


def test_the_shipped_schema_reads_the_same_under_any_locale():
    """schema.sql has non-ASCII comments; a cron job's locale may be C. The proof must not depend on
    the locale's encoding (here ASCII, with Python's UTF-8 coercion turned off)."""
    env = {**os.environ, "LC_ALL": "C", "LANG": "C", "PYTHONUTF8": "0", "PYTHONCOERCECLOCALE": "0"}
    code = "import locale, tilelib.schema as s; print(locale.getpreferredencoding(False)); print(len(s.shipped_sql()))"
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, check=False)
    assert out.returncode == 0, out.stderr
    encoding, length = out.stdout.split()
    assert encoding.upper() in ("ANSI_X3.4-1968", "ASCII", "US-ASCII")
    assert int(length) == len((ROOT / "schema.sql").read_text(encoding="utf-8"))
    assert shipped_sql() == (ROOT / "schema.sql").read_text(encoding="utf-8")


def test_two_objects_on_one_root_page_are_both_refused(tmp_path):
    """Each root page is in range and every pragma reads as shipped, but two indexes share one page
    (a hand-written sqlite_master): both are named as changed, and no other object is."""
    path = tmp_path / "a.sqlite"
    made(path).close()
    conn = sqlite3.connect(path)
    root = conn.execute("SELECT rootpage FROM sqlite_master WHERE name = 'tiles_top_right'").fetchone()[0]
    conn.execute("PRAGMA writable_schema = ON")
    conn.execute("UPDATE sqlite_master SET rootpage = ? WHERE name = 'misses_open'", (root,))
    conn.commit()
    conn.close()
    conn = connect(path, readonly=True)
    assert schema_problems(conn, "a") == [
        'changed index "misses_open" on misses',
        'changed index "tiles_top_right" on tiles',
    ]
