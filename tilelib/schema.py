"""The schema a library file must have, proven by SQLite's own reading of it (FORMAT §5; issues 51, 69).

A library's rows are proven by their hashes, but rows are only half of a file: its ``sqlite_master``
decides what an ``INSERT`` does. One ``BEFORE INSERT`` trigger with ``RAISE(IGNORE)`` drops every
new tile without an error; a view named ``tiles`` with an ``INSTEAD OF`` trigger swallows them; a
``UNIQUE … WHERE`` index refuses some. So a file is a library only when its schema is the one this
code ships for the file's ``schema_version``, nothing more and nothing less:

- **version 2** (current): every statement of ``schema.sql``;
- **version 1**: the same without the ``spent`` table and its triggers (opening one for writing
  upgrades it to 2, ``tilelib.store.upgrade``);
- either version may also hold the sync bookkeeping a pull or push adds (``SYNC_SCHEMA``: the
  ``misses_touched`` table and its trigger), both objects or neither.

How the two are compared (``read_objects``, ``differences``):

1. **The objects as a list**, each by its type and its name as SQLite compares names (ASCII case
   folded, nothing else: ``tilelib.sqltokens.fold``). Tables, indexes and views share one
   namespace and triggers have their own, so a trigger may carry an index's name: both are
   compared. A duplicate (type, name) — only a hand-edited ``sqlite_master`` has one — is refused.
2. **Every object's SQL by SQLite's tokens** (``tilelib.sqltokens.tokens``): ASCII whitespace and
   comments dropped, bare words folded, every quoted token kept exactly (``"NOT" "NULL"`` is a type
   name, never the constraint). The tokens include the object's own name and table, so a row whose
   ``name`` column says one thing and whose SQL another is refused too.
3. **What SQLite reports of every table and index**: ``pragma_table_list`` (kind, column count,
   WITHOUT ROWID, STRICT), ``table_xinfo`` (columns, declared types, NOT NULL, defaults, primary
   key, generated columns), ``index_list`` (unique, origin, partial), ``index_xinfo`` (columns,
   expressions, order, collations), ``foreign_key_list``; and each b-tree's root page: an integer
   (SQLite reads a blob ``'4'`` as page 4), past page 1 (``sqlite_master``'s own) and within the
   file, and used once. Which page is which beyond that is the pages' content, not the schema, and
   no page is read here: two tables that swapped root pages hold each other's rows, and a table and
   an index that did are corrupt to SQLite — what ``PRAGMA quick_check`` and the rows' hashes judge
   (``trust.checks``), as they judge any damaged page.
4. The file's text encoding is UTF-8 and its ``schema_version`` is a number as the code writes one:
   ASCII digits without a leading zero (``file_version``).

The reference objects are read the same way from an in-memory database made by the shipped
statements, so SQLite's own rewriting of a statement (``IF NOT EXISTS`` dropped) is the same on
both sides. Reading ``sqlite_master`` and the pragmas runs no trigger and no view, so this is safe
on a hostile file; a pragma SQLite cannot answer (an unknown virtual table's module) is a
difference, not a crash. ``check_schema`` raises ``SchemaMismatch`` (exit 3) naming the first
difference; ``tests/test_schema_fuzz.py`` holds the proof to a behavioural oracle.
"""

from __future__ import annotations

import re
import sqlite3
from collections import Counter
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from tilelib.db import atomic, connect, statements
from tilelib.errors import NotALibrary, SchemaMismatch, SchemaTooNew
from tilelib.sqltokens import ILLEGAL, fold, tokens

SCHEMA_VERSION = 2  # 2: the spent table (tilelib.spent); a version-1 file is upgraded on open
VERSION_1_TABLES_LEFT_OUT = ("spent",)
# What a pull or push adds to a local library to know which misses rows changed since the last push
# (remote.delta): a file holds both objects or neither.
SYNC_SCHEMA = """
CREATE TABLE IF NOT EXISTS misses_touched (id INTEGER PRIMARY KEY);
CREATE TRIGGER IF NOT EXISTS misses_touch AFTER UPDATE ON misses
BEGIN INSERT INTO misses_touched (id) SELECT NEW.id
      WHERE NOT EXISTS (SELECT 1 FROM misses_touched WHERE id = NEW.id); END;
"""
# The text the code writes (str of an int): ASCII digits, no sign, no leading zero ('02' reads as 2
# yet is not what any library holds).
_VERSION_TEXT = re.compile(r"(?:0|[1-9][0-9]{0,5})", re.ASCII)
Key = tuple[str, str]  # (type, name folded as SQLite folds it)


@dataclass(frozen=True)
class SchemaObject:
    """One row of ``sqlite_master``: its SQL as tokens (None for SQLite's own autoindexes) and, for
    a table or an index, what SQLite reports of it (``facts``)."""

    type: str
    name: str
    table: str
    sql: tuple[str, ...] | None
    facts: tuple[object, ...] = ()

    @property
    def key(self) -> Key:
        return (self.type, fold(self.name))

    def reading(self) -> tuple[object, ...]:
        """Everything compared: two objects with equal readings are the same object to SQLite."""
        return (self.type, fold(self.name), fold(self.table), self.sql, self.facts)

    def words(self) -> str:
        """How a message names it: 'trigger "x" on tiles', 'table "meta"'."""
        on = f" on {self.table}" if self.type in ("index", "trigger") else ""
        return f'{self.type} "{self.name}"{on}'


def normalise(sql: str) -> tuple[str, ...]:
    """A statement's tokens as SQLite reads them (``tilelib.sqltokens.tokens``)."""
    return tokens(sql)


def _folded(row: tuple[object, ...], *at: int) -> tuple[object, ...]:
    """``row`` with the text at positions ``at`` folded as SQLite folds names."""
    return tuple(fold(v) if i in at and isinstance(v, str) else v for i, v in enumerate(row))


def _pragma(
    conn: sqlite3.Connection, sql: str, args: tuple[object, ...], *names: int
) -> tuple[tuple[object, ...], ...]:
    """The rows of one pragma query (names folded), or the one-line reason SQLite could not answer."""
    try:
        return tuple(_folded(tuple(r), *names) for r in conn.execute(sql, args))
    except sqlite3.DatabaseError as err:
        return (("unreadable", str(err)),)


def _table_facts(conn: sqlite3.Connection, schema: str, name: str, kinds: dict[str, tuple[object, ...]]) -> tuple:
    """What SQLite reports of one table: its kind, columns, indexes and foreign keys."""
    return (
        kinds.get(fold(name)),
        _pragma(
            conn,
            'SELECT cid, name, type, "notnull", dflt_value, pk, hidden FROM pragma_table_xinfo(?, ?)',
            (name, schema),
            1,
            2,
        ),
        tuple(
            sorted(
                _pragma(conn, 'SELECT name, "unique", origin, partial FROM pragma_index_list(?, ?)', (name, schema), 0),
                key=repr,
            )
        ),
        _pragma(
            conn,
            'SELECT id, seq, "table", "from", "to", on_update, on_delete, match FROM pragma_foreign_key_list(?, ?)',
            (name, schema),
            2,
            3,
            4,
        ),
    )


def _index_facts(conn: sqlite3.Connection, schema: str, name: str) -> tuple:
    """What SQLite reports of one index: each column or expression, its order, collation, key."""
    return _pragma(
        conn, 'SELECT seqno, cid, name, "desc", coll, key FROM pragma_index_xinfo(?, ?)', (name, schema), 2, 4
    )


def _root(root: object, pages: int) -> object:
    """What a row's root page is: False for none (a view or trigger), True for a page of the file
    past the schema's own page 1; else what no file SQLite made has (a root page 1, which is
    ``sqlite_master``'s b-tree; one past the end; a root page stored as text, real or blob, which
    SQLite reads as the number it spells while a count of integers would miss it)."""
    if type(root) is not int:
        return ("root page stored as", type(root).__name__)
    if root == 0:
        return False
    return True if 2 <= root <= pages else ("root page out of range", root)


def _sql(sql: object) -> tuple[str, ...] | None:
    """A row's SQL as tokens; None for NULL (SQLite's own autoindexes); SQL stored as a blob (which
    SQLite runs as text) as a token no text has."""
    if sql is None:
        return None
    if isinstance(sql, str):
        return normalise(sql)
    return (f"{ILLEGAL}sql stored as {type(sql).__name__}",)


def read_objects(conn: sqlite3.Connection, schema: str = "main") -> list[SchemaObject]:
    """Every object of ``schema``'s ``sqlite_master``, in file order, with what SQLite reports of
    each table and index (module docstring). Reading it runs nothing."""
    rows = conn.execute(f"SELECT type, name, tbl_name, sql, rootpage FROM {schema}.sqlite_master").fetchall()
    listed = _pragma(conn, "SELECT name, type, ncol, wr, strict FROM pragma_table_list WHERE schema = ?", (schema,), 0)
    kinds = {str(r[0]): tuple(r[1:]) for r in listed if r[0] != "unreadable"}
    pages = conn.execute(f"PRAGMA {schema}.page_count").fetchone()[0]
    roots = Counter(r[4] for r in rows if type(r[4]) is int and r[4])
    out = []
    for type_, name, tbl, sql, root in rows:
        type_, name, tbl = str(type_), str(name), str(tbl)
        facts: tuple[object, ...] = ()
        if type_ == "table":
            facts = _table_facts(conn, schema, name, kinds)
        elif type_ == "index":
            facts = _index_facts(conn, schema, name)
        facts += (_root(root, pages),)  # a b-tree of its own for a table or index, none for a view or trigger
        if type(root) is int and root and roots[root] > 1:
            facts += (("root page shared with another object", root),)
        out.append(SchemaObject(type_, name, tbl, _sql(sql), facts))
    return out


def shipped_sql() -> str:
    """The text of schema.sql shipped with the package."""
    return (Path(__file__).parent / "schema.sql").read_text(encoding="utf-8")


def _touches(stmt: str, tables: tuple[str, ...]) -> bool:
    """Whether a schema statement creates one of ``tables``, or an index or trigger on one."""
    toks = normalise(stmt)
    if toks[:2] == ("create", "table"):
        name = toks[5] if toks[2:5] == ("if", "not", "exists") else toks[2]
        return name in tables
    return "on" in toks and toks[toks.index("on") + 1] in tables


def version_statements(version: int) -> list[str]:
    """The statements that make a library of ``version`` (1 or 2), in file order."""
    if version not in (1, SCHEMA_VERSION):
        raise ValueError(f"no shipped schema for version {version}")
    stmts = statements(shipped_sql())
    if version == 1:
        stmts = [s for s in stmts if not _touches(s, VERSION_1_TABLES_LEFT_OUT)]
    return stmts


def _reference(script: str) -> dict[Key, SchemaObject]:
    """The objects ``script`` makes, read back from an in-memory database, by key."""
    conn = connect(":memory:")
    try:
        with atomic(conn):
            for stmt in statements(script):
                conn.execute(stmt)
        return {o.key: o for o in read_objects(conn)}
    finally:
        conn.close()


@cache
def shipped(version: int) -> dict[Key, SchemaObject]:
    """The objects a library of ``version`` holds (without the sync bookkeeping), by key."""
    return _reference("\n".join(version_statements(version)))


@cache
def sync_objects() -> dict[Key, SchemaObject]:
    """The sync bookkeeping's objects (``SYNC_SCHEMA``), by key."""
    base = shipped(SCHEMA_VERSION)
    both = _reference("\n".join(version_statements(SCHEMA_VERSION)) + SYNC_SCHEMA)
    return {k: v for k, v in both.items() if k not in base}


def _named(found: list[SchemaObject], name: str) -> list[SchemaObject]:
    """The objects in the table namespace (tables, indexes, views) that SQLite calls ``name``."""
    return [o for o in found if o.type != "trigger" and fold(o.name) == name]


def file_version(
    conn: sqlite3.Connection, label: str, schema: str = "main", objects: list[SchemaObject] | None = None
) -> int:
    """The schema version a file says it has: NotALibrary without a ``meta`` table that is the
    shipped one or without a ``schema_version`` of ASCII digits (no leading zero), SchemaMismatch
    for a text encoding other than UTF-8, SchemaTooNew past ``SCHEMA_VERSION``. The ``meta`` object
    is compared before it is read, so reading it runs no one's view."""
    objects = read_objects(conn, schema) if objects is None else objects
    metas = _named(objects, "meta")
    if not metas:
        raise NotALibrary(f"{label} is not a tiles library (no meta table)")
    want = shipped(SCHEMA_VERSION)[("table", "meta")]
    if len(metas) > 1 or metas[0].reading() != want.reading():
        raise SchemaMismatch(
            f"{label}: {metas[-1].words()} is not the meta table schema.sql ships; "
            "refusing the file (`tiles library repair` writes a clean copy)"
        )
    encoding = conn.execute(f"PRAGMA {schema}.encoding").fetchone()[0]
    if encoding != "UTF-8":
        raise SchemaMismatch(f"{label}: its text is {encoding}, a library's is UTF-8; refusing the file")
    row = conn.execute(f"SELECT value FROM {schema}.meta WHERE key = 'schema_version'").fetchone()
    text = row[0] if row is not None else None
    if not isinstance(text, str) or not _VERSION_TEXT.fullmatch(text):
        raise NotALibrary(f"{label} has no valid schema_version in meta, so it is not a tiles library")
    version = int(text)
    if version > SCHEMA_VERSION:
        raise SchemaTooNew(f"{label} has schema version {version}; this tiles reads up to {SCHEMA_VERSION}")
    if version < 1:
        raise NotALibrary(f"{label} has schema version {version}: no such version")
    return version


def differences(found: list[SchemaObject], version: int) -> list[str]:
    """Each difference of ``found`` from the schema of ``version`` (the sync objects allowed, both
    or neither), one phrase per object: duplicates and wrong types first, then extra, missing and
    changed objects (a table whose index was dropped or added is changed too), each in name
    order (SQLite's autoindexes, which follow from their tables, last)."""
    want = dict(shipped(version))
    sync = sync_objects()
    if any(o.key in sync for o in found):
        want.update(sync)
    counts = Counter(o.key for o in found)
    got = {o.key: o for o in found}
    out: list[tuple[int, bool, Key, str]] = []
    for key, n in counts.items():
        if n > 1:
            out.append((0, False, key, f'{n} objects named "{got[key].name}" of type {key[0]}'))
    for key in set(got) | set(want):
        have, exp = got.get(key), want.get(key)
        if exp is None:
            assert have is not None  # every key is in ``got`` or ``want``
            other = [o for k, o in want.items() if k[1] == key[1] and "trigger" not in (k[0], key[0])]
            if other:
                rank, text = 0, f'"{have.name}" is a {have.type} where version {version} has a {other[0].type}'
            else:
                rank, text = 1, f"extra {have.words()}"
        elif have is None:
            if any(k[1] == key[1] and "trigger" not in (k[0], key[0]) for k in got):
                continue  # said above as the wrong type
            rank, text = 2, f"missing {exp.words()}"
        elif have.reading() != exp.reading():
            rank, text = 3, f"changed {have.words()}"
        else:
            continue
        out.append((rank, key[1].startswith("sqlite_autoindex_"), key, text))
    return [text for *_, text in sorted(out)]


def _version_and_differences(conn: sqlite3.Connection, label: str, schema: str) -> tuple[int, list[str]]:
    """The file's schema version and every difference of its schema from the shipped one of that
    version (``file_version``'s errors raised as they are)."""
    found = read_objects(conn, schema)
    version = file_version(conn, label, schema, found)
    return version, differences(found, version)


def schema_problems(conn: sqlite3.Connection, label: str, schema: str = "main") -> list[str]:
    """Every difference of a file's schema from the shipped one of its version."""
    return _version_and_differences(conn, label, schema)[1]


def check_schema(conn: sqlite3.Connection, label: str, schema: str = "main") -> int:
    """Refuse a file whose schema is not the shipped one of its version: SchemaMismatch (exit 3)
    naming the first object that differs. Returns the file's schema version."""
    version, diffs = _version_and_differences(conn, label, schema)
    if diffs:
        more = f" (and {len(diffs) - 1} more difference(s))" if len(diffs) > 1 else ""
        raise SchemaMismatch(
            f"{label}: its schema is not schema version {version}'s: {diffs[0]}{more}; "
            "refusing it (`tiles library repair` writes a clean copy)"
        )
    return version


__all__ = [
    "SCHEMA_VERSION",
    "SYNC_SCHEMA",
    "SchemaObject",
    "check_schema",
    "differences",
    "file_version",
    "normalise",
    "read_objects",
    "schema_problems",
    "shipped",
    "shipped_sql",
    "sync_objects",
    "version_statements",
]
