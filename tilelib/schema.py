"""The schema a library file must have, object by object (FORMAT §5; issue 51).

A library's rows are proven by their hashes, but rows are only half of a file: its ``sqlite_master``
decides what an ``INSERT`` does. One ``BEFORE INSERT`` trigger with ``RAISE(IGNORE)`` drops every
new tile without an error; a view named ``tiles`` with an ``INSTEAD OF`` trigger swallows them; a
``UNIQUE … WHERE`` index refuses some. So a file is a library only when every object of its schema
— table, index, trigger, view; type, name, table and SQL — equals the schema this code ships for
the file's ``schema_version``, nothing more and nothing less:

- **version 2** (current): every statement of ``schema.sql``;
- **version 1**: the same without the ``spent`` table and its triggers (opening one for writing
  upgrades it to 2, ``tilelib.store.upgrade``);
- either version may also hold the sync bookkeeping a pull or push adds (``SYNC_SCHEMA``: the
  ``misses_touched`` table and its trigger), both objects or neither.

SQL is compared *normalised* (``normalise``): comments and whitespace dropped, keywords and
identifiers folded to lower case, quoted identifiers unquoted; string literals stay as they are.
The reference objects are read back from an in-memory database made by the shipped statements, so
SQLite's own rewriting of a statement (``IF NOT EXISTS`` dropped) is the same on both sides.

``schema_problems(conn, schema)`` lists the differences of one database (``main`` or an attached
one), each a line naming the object; ``check_schema`` raises ``SchemaMismatch`` (exit 3) with the
first. Reading ``sqlite_master`` runs no trigger and no view, so this is safe on a hostile file.
"""

from __future__ import annotations

import re
import sqlite3
from dataclasses import dataclass
from functools import cache, lru_cache
from pathlib import Path

from tilelib.db import atomic, connect, statements
from tilelib.errors import NotALibrary, SchemaMismatch, SchemaTooNew

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


@dataclass(frozen=True)
class SchemaObject:
    """One row of ``sqlite_master``, its SQL normalised (None for SQLite's own autoindexes)."""

    type: str
    name: str
    table: str
    sql: tuple[str, ...] | None

    def words(self) -> str:
        """How a message names it: 'trigger "x" on tiles', 'table "meta"'."""
        on = f" on {self.table}" if self.type in ("index", "trigger") else ""
        return f'{self.type} "{self.name}"{on}'


_TOKEN = re.compile(
    r"""
    (?P<space>\s+) | (?P<line>--[^\n]*) | (?P<block>/\*.*?(?:\*/|\Z)) |
    (?P<string>'(?:[^']|'')*') | (?P<quoted>"(?:[^"]|"")*"|`(?:[^`]|``)*`|\[[^\]]*\]) |
    (?P<word>[A-Za-z_][A-Za-z0-9_$]*) | (?P<number>[0-9]+(?:\.[0-9]*)?(?:[eE][+-]?[0-9]+)?) |
    (?P<op><>|<=|>=|==|!=|\|\||<<|>>|.)
    """,
    re.VERBOSE | re.DOTALL,
)


@lru_cache(maxsize=4096)
def normalise(sql: str) -> tuple[str, ...]:
    """The tokens of a statement with comments and whitespace dropped, words and identifiers in lower
    case and unquoted, string literals verbatim: two statements SQLite reads alike compare equal."""
    out: list[str] = []
    for m in _TOKEN.finditer(sql):
        kind, text = m.lastgroup, m.group()
        if kind in ("space", "line", "block"):
            continue
        if kind == "quoted":
            inner = text[1:-1]
            text = inner.replace(text[0] * 2, text[0]) if text[0] in '"`' else inner
            out.append(text.lower())
        elif kind == "string":
            out.append(text)
        else:
            out.append(text.lower())
    return tuple(out)


def read_objects(conn: sqlite3.Connection, schema: str = "main") -> dict[str, SchemaObject]:
    """Every object of ``schema``'s ``sqlite_master``, by lower-case name (reading it runs nothing)."""
    rows = conn.execute(f"SELECT type, name, tbl_name, sql FROM {schema}.sqlite_master").fetchall()
    return {
        str(name).lower(): SchemaObject(
            str(type_), str(name), str(tbl).lower(), normalise(sql) if isinstance(sql, str) else None
        )
        for type_, name, tbl, sql in rows
    }


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


def _reference(script: str) -> dict[str, SchemaObject]:
    """The objects ``script`` makes, read back from an in-memory database."""
    conn = connect(":memory:")
    try:
        with atomic(conn):
            for stmt in statements(script):
                conn.execute(stmt)
        return read_objects(conn)
    finally:
        conn.close()


@cache
def shipped(version: int) -> dict[str, SchemaObject]:
    """The objects a library of ``version`` holds (without the sync bookkeeping)."""
    return _reference("\n".join(version_statements(version)))


@cache
def sync_objects() -> dict[str, SchemaObject]:
    """The sync bookkeeping's objects (``SYNC_SCHEMA``)."""
    base = shipped(SCHEMA_VERSION)
    both = _reference("\n".join(version_statements(SCHEMA_VERSION)) + SYNC_SCHEMA)
    return {k: v for k, v in both.items() if k not in base}


def file_version(
    conn: sqlite3.Connection, label: str, schema: str = "main", objects: dict[str, SchemaObject] | None = None
) -> int:
    """The schema version a file says it has: NotALibrary without a ``meta`` table that is the
    shipped one or without a decimal ``schema_version``, SchemaTooNew past ``SCHEMA_VERSION``. The
    ``meta`` object is compared before it is read, so reading it runs no one's view."""
    objects = read_objects(conn, schema) if objects is None else objects
    meta = objects.get("meta")
    if meta is None:
        raise NotALibrary(f"{label} is not a tiles library (no meta table)")
    if meta != shipped(SCHEMA_VERSION)["meta"]:
        raise SchemaMismatch(
            f"{label}: {meta.words()} is not the meta table schema.sql ships; "
            "refusing the file (`tiles library repair` writes a clean copy)"
        )
    row = conn.execute(f"SELECT value FROM {schema}.meta WHERE key = 'schema_version'").fetchone()
    if row is None or not str(row[0]).isdigit():
        raise NotALibrary(f"{label} has no valid schema_version in meta, so it is not a tiles library")
    version = int(row[0])
    if version > SCHEMA_VERSION:
        raise SchemaTooNew(f"{label} has schema version {version}; this tiles reads up to {SCHEMA_VERSION}")
    if version < 1:
        raise NotALibrary(f"{label} has schema version {version}: no such version")
    return version


def differences(found: dict[str, SchemaObject], version: int) -> list[str]:
    """Each difference of ``found`` from the schema of ``version`` (the sync objects allowed, both
    or neither), one phrase per object: a wrong type first, then extra, changed and missing objects,
    each in name order (SQLite's autoindexes, which follow from their tables, last)."""
    want = dict(shipped(version))
    sync = sync_objects()
    if any(k in found for k in sync):
        want.update(sync)
    out: list[tuple[int, bool, str, str]] = []
    for key in set(found) | set(want):
        got, exp = found.get(key), want.get(key)
        if exp is None:
            assert got is not None  # every key is in ``found`` or ``want``
            rank, text = 1, f"extra {got.words()}"
        elif got is None:
            rank, text = 3, f"missing {exp.words()}"
        elif got.type != exp.type:
            rank, text = 0, f'"{got.name}" is a {got.type} where version {version} has a {exp.type}'
        elif got != exp:
            rank, text = 2, f"changed {got.words()}"
        else:
            continue
        out.append((rank, key.startswith("sqlite_autoindex_"), key, text))
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
