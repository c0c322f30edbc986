"""A schema mutation fuzzer: the schema proof held to a behavioural oracle, not to its own rules.

**What it proves.** A library whose schema is a mutation of the shipped one is accepted by
``tilelib.schema.check_schema`` only if it *behaves* exactly as the shipped schema does on a fixed
script of reads and writes (``SCRIPT``): the same rows or the same error for every statement, and
the same content in every table afterwards. And the mutations that change nothing but layout (ASCII
whitespace, comments, the ASCII case of bare words) are accepted, so the proof is not "refuse
everything". Nothing here asks the proof's own questions (tokens, pragmas): a mutation is judged
by what SQLite does with it.

**How.** Each mutation starts from a base — the shipped statements of version 2 (or 1), with or
without the sync objects — and changes it either as text (``Edit``: the statements edited before
they run) or as a hostile peer's own code would, rows of ``sqlite_master`` written under ``PRAGMA
writable_schema`` (``MasterEdit``: a row whose name differs from its SQL's, duplicate rows, shared
or swapped root pages, a trigger named like an index). The library is made in memory, the ``meta``
row a library has is inserted, and the image is serialised and read back into fresh connections
opened like ``tilelib.db.connect`` (``trusted_schema`` off), so SQLite reads ``sqlite_master``
anew as it would a peer's file. A mutation SQLite will not create or load is counted
*unbuildable* and skipped. The rest are judged by ``check_schema`` twice, on the file as ``main``
and as an attached schema (the two must agree), and every one runs ``SCRIPT``: the statements the
code runs (the store's ``INSERT OR IGNORE``, the ledger's upsert and updates, manifests, spent,
meta, the sync bookkeeping), writes that fire the tamper triggers, writes that must fail, and
values that reveal collations, affinities and the rowid — then every table is dumped. The record
is compared with that of the shipped schema of the version the file was accepted as (error
messages folded to ASCII lower case, since an identifier's case is layout). The library starts
empty but for its ``meta`` row, so a root page exchanged between two tables of one kind reads the
same: which b-tree holds which rows is content, judged by ``PRAGMA integrity_check`` and the rows'
hashes, not by the schema proof.

The classes (``CLASSES``) each generate many concrete mutations: layout, other spellings
(``main.x``, no ``IF NOT EXISTS``), namespace collisions and ``sqlite_master`` rows, root pages
and the storage class of a row's fields, quoting, Unicode spaces, look-alike names, constraints,
types, collations, generated columns, WITHOUT ROWID and STRICT, indexes, virtual tables, triggers
on every table × event × timing, views, edits of the shipped triggers, random token edits, schema
versions, the file header and the order of ``sqlite_master``'s rows. The default run draws over a
thousand of them from ``SEED`` (``TILES_SCHEMA_FUZZ_SEED`` sets another) in a few seconds; the
slow tier takes every enumerated one, thousands of random token edits and random combinations of
one to three mutations. Each run prints one line: per class tried / unbuildable / refused (of
which behaving identically: refusals of the ambiguous, a quoted identifier, an index renamed) /
accepted (of which behaving identically, ``=``, and behaving otherwise only on pages SQLite calls
damaged, ``+d``: a table's root page given to an index, which the page check every pull, push and
verify runs refuses, ``trust.checks.check_pages``). Any other accepted mutation that behaves
otherwise, or a layout mutation refused, fails the test naming it.
"""

from __future__ import annotations

import hashlib
import os
import random
import re
import sqlite3
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import cache, lru_cache

import pytest

from tilelib.db import connect, statements
from tilelib.errors import CorruptLibrary, LibraryError
from tilelib.schema import SYNC_SCHEMA, check_schema, version_statements
from tilelib.sqltokens import fold
from tilelib.store import TILE_COLUMNS
from trust.checks import check_pages

SEED = int(os.environ.get("TILES_SCHEMA_FUZZ_SEED", "20261121"))
SHIPPED = tuple(version_statements(2))
SYNC = tuple(statements(SYNC_SCHEMA))

Edit = Callable[[list[str]], list[str]]
MasterEdit = Callable[[sqlite3.Connection], None]


@dataclass(frozen=True)
class Mutation:
    """One concrete mutation: its class, what it does (enough to redo it by hand), its text edits
    and ``sqlite_master`` edits (applied in order), its base (the shipped statements of ``version``,
    with the sync objects or not), whether it is layout only (then it must be accepted), and the
    file's ``schema_version`` text and header settings where they are what it changes."""

    kind: str
    label: str
    edits: tuple[Edit, ...] = ()
    master: tuple[MasterEdit, ...] = ()
    sync: bool = False
    neutral: bool = False
    version: int = 2  # whose shipped statements are the base, and the reference it is held to
    meta: object = None  # the schema_version value inserted (None: the version's own text)
    pragmas: str = ""  # run before the schema is made (a file header's settings)


def combine(parts: list[Mutation]) -> Mutation:
    """Several mutations applied one after the other (their text edits, then their row edits)."""
    return Mutation(
        "combined",
        " + ".join(f"[{p.kind}] {p.label}" for p in parts),
        tuple(e for p in parts for e in p.edits),
        tuple(e for p in parts for e in p.master),
        any(p.sync for p in parts),
        all(p.neutral for p in parts),
        min(p.version for p in parts),
        next((p.meta for p in parts if p.meta is not None), None),
        " ".join(p.pragmas for p in parts),
    )


# ---------------------------------------------------------------- SQL text as spans

_SPAN = re.compile(
    r"""(?P<space>[ \t\n\f\r]+)
    |(?P<comment>--[^\n]*|/\*.*?(?:\*/|\Z))
    |(?P<string>'(?:[^']|'')*')
    |(?P<quoted>"(?:[^"]|"")*"|`(?:[^`]|``)*`|\[[^\]]*\])
    |(?P<number>[0-9]+(?:\.[0-9]*)?(?:[eE][+-]?[0-9]+)?)
    |(?P<word>[A-Za-z_\u0080-\U0010ffff][A-Za-z0-9_$\u0080-\U0010ffff]*)
    |(?P<op>->>|->|<=|>=|<>|==|!=|\|\||<<|>>|.)""",
    re.X | re.S,
)
Span = tuple[str, str]  # (kind, text)


def spans(sql: str) -> list[Span]:
    """``sql`` cut into spans of the shipped statements' simple kinds; joined they are ``sql``.
    This is the fuzzer's own reading (for choosing where to edit), not the proof's tokenizer."""
    return [(m.lastgroup or "op", m.group()) for m in _SPAN.finditer(sql)]


def joined(sp: Iterable[Span]) -> str:
    """The text of a list of spans."""
    return "".join(text for _, text in sp)


def code(sp: list[Span]) -> list[int]:
    """The positions of the spans that are neither whitespace nor a comment."""
    return [i for i, (kind, _) in enumerate(sp) if kind not in ("space", "comment")]


@lru_cache(maxsize=65536)
def created(stmt: str) -> tuple[str, str] | None:
    """The (type, folded name) a ``CREATE`` statement makes, or None if it is not one."""
    sp = spans(stmt)
    words = [fold(sp[i][1]) for i in code(sp)]
    if len(words) < 3 or words[0] != "create":
        return None
    i = 2 if words[1] in ("unique", "virtual", "temp", "temporary") else 1
    j = i + 4 if words[i + 1 : i + 4] == ["if", "not", "exists"] else i + 1
    if j + 2 < len(words) and words[j + 1] == ".":
        j += 2
    return (words[i], words[j]) if j < len(words) else None


def on(name: str, fn: Callable[[str], str]) -> Edit:
    """An edit of the statement that creates ``name`` (whatever its type)."""

    def edit(stmts: list[str]) -> list[str]:
        return [fn(s) if (created(s) or ("", ""))[1] == name else s for s in stmts]

    return edit


def on_all(fn: Callable[[str], str]) -> Edit:
    """An edit of every statement."""
    return lambda stmts: [fn(s) for s in stmts]


def add(*sql: str) -> Edit:
    """Statements appended to the schema."""
    return lambda stmts: [*stmts, *sql]


def drop(name: str) -> Edit:
    """The statement that creates ``name`` left out."""
    return lambda stmts: [s for s in stmts if (created(s) or ("", ""))[1] != name]


def drop_on(table: str) -> Edit:
    """Every index and trigger on ``table`` left out (a virtual table or a view can have neither)."""

    def keep(stmt: str) -> bool:
        sp = spans(stmt)
        words = [fold(sp[i][1]) for i in code(sp)]
        return (created(stmt) or ("", ""))[0] not in ("index", "trigger") or table not in words

    return lambda stmts: [s for s in stmts if keep(s)]


def replace_code(old: list[str], new: str, nth: int = 0) -> Callable[[str], str]:
    """A text edit: the ``nth`` run of code spans whose folded texts are ``old`` (whitespace and
    comments between them skipped) becomes ``new``; the text is unchanged where there is none."""

    def fn(stmt: str) -> str:
        sp = spans(stmt)
        at = code(sp)
        texts = [fold(sp[i][1]) for i in at]
        hits = [k for k in range(len(at) - len(old) + 1) if texts[k : k + len(old)] == old]
        if len(hits) <= nth:
            return stmt
        k = hits[nth]
        first, last = at[k], at[k + len(old) - 1]
        return joined(sp[:first]) + new + joined(sp[last + 1 :])

    return fn


def rename_word(old: str, new: str) -> Callable[[str], str]:
    """A text edit: every bare word ``old`` (ASCII case ignored) becomes ``new``."""
    return lambda stmt: joined((k, new if k == "word" and fold(t) == old else t) for k, t in spans(stmt))


def after_open_paren(text: str) -> Callable[[str], str]:
    """A text edit: ``text`` inserted after the first ``(`` of code (a column put first)."""

    def fn(stmt: str) -> str:
        sp = spans(stmt)
        for i in code(sp):
            if sp[i][1] == "(":
                return joined(sp[: i + 1]) + text + joined(sp[i + 1 :])
        return stmt

    return fn


def before_close_paren(text: str) -> Callable[[str], str]:
    """A text edit: ``text`` inserted before the last ``)`` of code (a table constraint added)."""

    def fn(stmt: str) -> str:
        sp = spans(stmt)
        for i in reversed(code(sp)):
            if sp[i][1] == ")":
                return joined(sp[:i]) + text + joined(sp[i:])
        return stmt

    return fn


def table_suffix(text: str) -> Callable[[str], str]:
    """A text edit: ``text`` after a table's closing parenthesis (``WITHOUT ROWID``, ``STRICT``)."""
    return lambda stmt: stmt.rstrip().rstrip(";").rstrip() + " " + text + ";"


def column(table: str, col: str, fn: Callable[[str], str]) -> Edit:
    """An edit of one column definition of ``table``'s statement: ``fn`` maps what follows the
    column's name up to its comma (type and constraints) to a new text."""
    pat = re.compile(rf"(?m)(^[ \t]*|\()({re.escape(col)})\b([^,\n]*?)(?=[ \t]*(?:,|--|$|\);))")
    return on(table, lambda s: pat.sub(lambda m: m[1] + m[2] + fn(m[3]), s, count=1))


def swap_roots(a: str, b: str) -> MasterEdit:
    """A row edit: objects ``a`` and ``b`` exchange root pages (read first, then written)."""

    def edit(conn: sqlite3.Connection) -> None:
        roots = dict(conn.execute("SELECT name, rootpage FROM sqlite_master WHERE name IN (?, ?)", (a, b)).fetchall())
        for name, other in ((a, b), (b, a)):
            conn.execute("UPDATE sqlite_master SET rootpage = ? WHERE name = ?", (roots[other], name))

    return edit


def master(sql: str, *params: object) -> MasterEdit:
    """A row edit of ``sqlite_master`` (run under ``writable_schema``)."""

    def edit(conn: sqlite3.Connection) -> None:
        conn.execute(sql, params)

    return edit


# ---------------------------------------------------------------- the shipped schema, as facts


@cache
def shipped_db(sync: bool) -> sqlite3.Connection:
    """A plain in-memory library of the shipped schema, for reading its shape."""
    conn = sqlite3.connect(":memory:", isolation_level=None)
    conn.executescript("\n".join(SHIPPED + (SYNC if sync else ())))
    return conn


@cache
def tables(sync: bool = True) -> dict[str, list[tuple[str, str, int, object, int]]]:
    """Each shipped table's columns: (name, type, notnull, default, pk)."""
    conn = shipped_db(sync)
    names = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
    return {
        t: [
            tuple(r)
            for r in conn.execute('SELECT name, type, "notnull", dflt_value, pk FROM pragma_table_info(?)', (t,))
        ]
        for t in names
    }


@cache
def indexes(sync: bool = True) -> dict[str, str]:
    """Each shipped (named) index and its table."""
    rows = shipped_db(sync).execute("SELECT name, tbl_name FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL")
    return dict(rows.fetchall())


@cache
def triggers(sync: bool = True) -> dict[str, str]:
    """Each shipped trigger and its table."""
    rows = shipped_db(sync).execute("SELECT name, tbl_name FROM sqlite_master WHERE type = 'trigger'")
    return dict(rows.fetchall())


def needs_sync(*names: str) -> bool:
    """Whether a mutation naming these objects needs the sync objects in its base."""
    return any(n in ("misses_touched", "misses_touch") for n in names)


# ---------------------------------------------------------------- the behavioural oracle


def h(i: int) -> str:
    """A tile-like key: lower-case hex, so its upper case is another text."""
    return hashlib.sha256(str(i).encode()).hexdigest()


def tile(key: object, **over: object) -> tuple[object, ...]:
    """A tiles row in ``TILE_COLUMNS`` order: plausible values, some overridden."""
    row: dict[str, object] = dict.fromkeys(TILE_COLUMNS, 0)
    row.update(hash=key, n=6, version=7, top=1, right=2, bottom=3, left=4, m=1, blank=0.5, ladder=1)
    row.update(solution=b"\x01\x02", givens=b"\x03", flip=b"", alts=b"", created=1000)
    row.update(over)
    return tuple(row[c] for c in TILE_COLUMNS)


_TCOLS = ", ".join(TILE_COLUMNS)
INSERT_TILE = f"INSERT OR IGNORE INTO tiles ({_TCOLS}) VALUES ({', '.join('?' * len(TILE_COLUMNS))})"
PUT_TILE = INSERT_TILE.replace("INSERT OR IGNORE", "INSERT")
_KEY = "n, top, right, bottom, left, top_mask, right_mask, bottom_mask, left_mask"
UPSERT_MISS = (
    "INSERT INTO misses (n, side_mask, top, right, bottom, left, top_mask, right_mask, bottom_mask, left_mask, "
    f"packing, first_seen, last_seen) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?) ON CONFLICT ({_KEY}) "
    "DO UPDATE SET count = count + 1, last_seen = excluded.last_seen"
)
PUT_MISS = (
    "INSERT INTO misses (id, n, side_mask, top, right, bottom, left, top_mask, right_mask, bottom_mask, left_mask, "
    "first_seen, last_seen) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)"
)
FIND_MISS = f"SELECT id, count, last_seen FROM misses WHERE ({_KEY}) = (?,?,?,?,?,?,?,?,?)"
MISS_COLUMNS = [c for c, *_ in tables()["misses"]]
PUT_MANIFEST = "INSERT INTO manifests (day, seed_commit, json, created) VALUES (?,?,?,?)"
PUT_SPENT = "INSERT INTO spent (solution, board, n, day, created) VALUES (?,?,?,?,?)"
ADD_SPENT = PUT_SPENT.replace("INSERT", "INSERT OR IGNORE")


def miss(n: object, edges: tuple[object, ...], packing: object = None, now: object = 100) -> tuple[object, ...]:
    """The parameters of ``UPSERT_MISS``: one side fixed."""
    return (n, 1, *edges, 1, 0, 0, 0, packing, now, now)


def same_all(table: str, cols: Iterable[str]) -> str:
    """An UPDATE that sets every column to itself (so every ``UPDATE OF`` trigger fires)."""
    return f"UPDATE {table} SET {', '.join(f'{c} = {c}' for c in cols)}"


def _meta_steps() -> list[tuple[str, tuple[object, ...]]]:
    """What the code writes to and reads from ``meta``, and writes that reveal its constraints."""
    return [
        ("SELECT key, value, typeof(value) FROM meta ORDER BY key", ()),
        ("INSERT OR IGNORE INTO meta VALUES ('library_id', ?)", ("4f1d",)),
        ("INSERT OR IGNORE INTO meta VALUES ('schema_version', ?)", ("2",)),
        ("UPDATE meta SET value = ? WHERE key = 'schema_version'", ("2",)),
        ("INSERT OR REPLACE INTO meta VALUES (?, ?)", ("remote_mark:x", "[1, 2, 3, 4]")),
        ("INSERT OR REPLACE INTO meta VALUES (?, ?)", ("remote_mark:x", "[5, 6, 7, 8]")),
        ("INSERT INTO meta VALUES (?, ?)", ("Library_ID", "case")),
        ("INSERT INTO meta VALUES (?, ?)", ("library_id  ", "trailing spaces")),
        ("INSERT INTO meta VALUES (?, ?)", ("library_id", "duplicate")),
        ("INSERT INTO meta VALUES (?, ?)", ("no value", None)),
        ("INSERT INTO meta (key) VALUES (?)", ("defaulted",)),
        ("INSERT INTO meta VALUES (?, ?)", (None, "null key")),
        ("INSERT INTO meta VALUES (?, ?)", (5, 6.5)),
        ("INSERT INTO meta VALUES (?, ?)", (b"\x01k", b"\x02v")),
        ("SELECT key, value FROM meta WHERE key = ?", ("LIBRARY_ID",)),
        ("SELECT key, value FROM meta WHERE key = ?", ("library_id",)),
        ("SELECT key, value FROM meta WHERE key = ?", ("remote_mark:x  ",)),
        ("SELECT value FROM meta WHERE key = 'schema_version'", ()),
        ("SELECT count(*), max(rowid) FROM meta", ()),
    ]


def _tile_steps(first: int) -> list[tuple[str, tuple[object, ...]]]:
    """The store's inserts and the queries' reads of ``tiles``, and writes that reveal its
    constraints, types, collations and triggers; keys from ``first`` on."""
    t = [
        tile(h(first)),
        tile(h(first + 1), top=5, right=6),
        tile(h(first + 2), n=7, bottom=9, ladder=3),
        tile(h(first + 3), n=10, left=2, m=2, seam_mask=5),
        tile(h(first + 8), n=7, top=3, bottom=9),
    ]
    lookups = [
        ("top", "right", (6, 1, 2)),
        ("right", "bottom", (6, 6, 3)),
        ("bottom", "left", (7, 9, 4)),
        ("left", "top", (10, 2, 1)),
    ]
    return [
        *((INSERT_TILE, row) for row in t),
        (INSERT_TILE, t[0]),
        (INSERT_TILE, tile(h(first).upper(), top=11)),
        (INSERT_TILE, tile(h(first + 1) + " ", top=12)),
        (PUT_TILE, t[1]),
        (PUT_TILE, tile(h(first + 4), n=None)),
        (INSERT_TILE, tile(h(first + 5), solution=None)),
        (PUT_TILE, tile(h(first + 6), n="6", top="1", blank=1, created="2000")),
        (PUT_TILE, tile(h(first + 7), n="six", top=2.5, blank="0.25", solution="text", givens=7)),
        (PUT_TILE, tile(None, n=8)),
        (PUT_TILE, tile(first, n=9)),
        ("SELECT coalesce(max(rowid), 0) FROM tiles", ()),
        ("SELECT rowid, hash FROM tiles ORDER BY rowid", ()),
        ("SELECT hash, n, typeof(n) FROM tiles WHERE hash = ?", (h(first).upper(),)),
        ("SELECT hash FROM tiles WHERE hash = ?", (h(first + 1) + "   ",)),
        *(
            (f"SELECT hash FROM tiles WHERE n = ? AND {a} = ? AND {b} = ? ORDER BY hash", args)
            for a, b, args in lookups
        ),
        ("SELECT hash FROM tiles WHERE n = ? AND ladder = ? AND m = ? AND seam_mask = ? ORDER BY hash", (6, 1, 1, 0)),
        ("SELECT hash FROM tiles WHERE n = ? AND top = ? ORDER BY hash", ("6", "1")),
        ("SELECT n, typeof(n), count(*) FROM tiles GROUP BY n ORDER BY n", ()),
        ("SELECT hash FROM tiles WHERE n = ? ORDER BY ladder DESC, hash", (6,)),
        ("UPDATE tiles SET created = created + 1 WHERE hash = ?", (h(first + 2),)),
        (same_all("tiles", TILE_COLUMNS) + " WHERE hash = ?", (h(first + 3),)),
        ("UPDATE tiles SET n = NULL WHERE hash = ?", (h(first + 1),)),
        ("UPDATE tiles SET top = 'x' WHERE hash = ?", (h(first + 1),)),
        ("SELECT key, value FROM meta WHERE key LIKE 'verified:%' ORDER BY key", ()),
        ("DELETE FROM meta WHERE key LIKE 'verified:%'", ()),
        ("DELETE FROM tiles WHERE hash = ?", (h(first + 2),)),
        ("SELECT key, value FROM meta WHERE key LIKE 'verified:%' ORDER BY key", ()),
    ]


def _miss_steps(first: int) -> list[tuple[str, tuple[object, ...]]]:
    """The ledger's upserts and updates of ``misses`` and the sync bookkeeping's reads; ids from
    ``first`` on (an explicit id shows whether ``id`` is the rowid)."""
    key = (6, 1, 2, 3, 4, 1, 0, 0, 0)
    return [
        (UPSERT_MISS, miss(6, (1, 2, 3, 4), "p1", 100)),
        (UPSERT_MISS, miss(6, (1, 2, 3, 4), "p2", 200)),
        (UPSERT_MISS, miss(7, (0, 0, 0, first), None, 300)),
        (UPSERT_MISS, miss(6, (1, 2, 3, 4), None, 400)),
        (UPSERT_MISS, miss("6", ("1", 2, 3, 4), None, 450)),
        ("SELECT id, typeof(id), count, first_seen, last_seen, packing FROM misses ORDER BY id", ()),
        (PUT_MISS, (first, 8, 1, 0, 0, 0, 0, 1, 0, 0, 0, 1, 1)),
        (UPSERT_MISS, miss(9, (first, 0, 0, 0))),
        (PUT_MISS, ("7", 8, 1, 5, 0, 0, 0, 1, 0, 0, 0, 1, 1)),
        (PUT_MISS, ("abc", 8, 1, 6, 0, 0, 0, 1, 0, 0, 0, 1, 1)),
        (PUT_MISS, (None, 8, 1, 7, 0, 0, 0, 1, 0, 0, 0, 1, 1)),
        (PUT_MISS, (None, None, 1, 8, 0, 0, 0, 1, 0, 0, 0, 1, 1)),
        (PUT_MISS, (None, 8, 1, 9, 0, 0, 0, 1, 0, 0, 0, "TEXT", 1.5)),
        ("SELECT id, typeof(id) FROM misses ORDER BY id", ()),
        ("SELECT last_insert_rowid()", ()),
        ("UPDATE misses SET nofit = 1 WHERE id = ?", (1,)),
        ("UPDATE misses SET tile = ? WHERE id = ?", (h(1), 2)),
        ("SELECT id, nofit, tile FROM misses WHERE nofit = 0 AND tile IS NULL ORDER BY id", ()),
        ("SELECT id FROM misses WHERE nofit = 1 AND n = ? ORDER BY id", (6,)),
        (FIND_MISS, key),
        (
            "SELECT id FROM misses WHERE (id > ? AND id <= ?) OR id IN (SELECT id FROM misses_touched) ORDER BY id",
            (0, 2),
        ),
        (same_all("misses", MISS_COLUMNS) + " WHERE id = ?", (3,)),
        ("UPDATE misses SET count = NULL WHERE id = ?", (3,)),
        ("SELECT id FROM misses_touched ORDER BY id", ()),
        ("DELETE FROM misses_touched", ()),
        ("INSERT INTO misses_touched (id) VALUES (?)", ("5",)),
        ("INSERT INTO misses_touched (id) VALUES (?)", ("x",)),
        ("DELETE FROM misses WHERE id = ?", (first,)),
    ]


def _manifest_steps(day: str) -> list[tuple[str, tuple[object, ...]]]:
    """``put_manifest``'s inserts (plain and replacing) and reads of ``manifests``."""
    return [
        (PUT_MANIFEST, (day, "c0", "{}", 10)),
        (PUT_MANIFEST, (day, "c1", "{}", 11)),
        (PUT_MANIFEST.replace("INSERT", "INSERT OR REPLACE"), (day, "c2", '{"a": 1}', 12)),
        (PUT_MANIFEST, (day + "-a", "c3", "not json", 13)),
        (PUT_MANIFEST, (day.upper() + "-A", "c4", "[]", 14)),
        (PUT_MANIFEST, (day + "-a ", "c5", "[]", 15)),
        (PUT_MANIFEST, (day + "-b", None, "{}", 16)),
        (PUT_MANIFEST, (day + "-c", "c6", "{}", "17")),
        ("UPDATE manifests SET json = ? WHERE day = ?", ('{"b": 2}', day)),
        ("SELECT rowid, day, seed_commit FROM manifests ORDER BY rowid", ()),
        ("SELECT coalesce(max(rowid), 0) FROM manifests", ()),
        ("SELECT day FROM manifests WHERE day = ?", (day + "-A",)),
        ("DELETE FROM manifests WHERE day = ?", (day.upper() + "-A",)),
    ]


def _spent_steps(first: int) -> list[tuple[str, tuple[object, ...]]]:
    """``spent.record``'s inserts and reads, and writes that reveal its key and triggers."""
    s, b = h(100 + first), h(200 + first)
    return [
        (ADD_SPENT, (s, b, 10, "2026-11-01", 5)),
        (ADD_SPENT, (s, h(201 + first), 10, "2026-11-02", 6)),
        (ADD_SPENT, (s, b, 10, "2026-11-01", 7)),
        (ADD_SPENT, (s.upper(), b, 10, "x", 8)),
        (ADD_SPENT, (h(101 + first), b + " ", 12, "x", 9)),
        (ADD_SPENT, (s, b + " ", 10, "x", 10)),
        (ADD_SPENT, (s, b.upper(), 10, "x", 11)),
        (PUT_SPENT, (s, b, 10, "d", 1)),
        (PUT_SPENT, (h(102 + first), None, 10, "d", 1)),
        (PUT_SPENT, (None, h(202 + first), 10, "d", 1)),
        (PUT_SPENT, (h(103 + first), h(203 + first), "ten", "d", "1")),
        ("SELECT solution, board FROM spent WHERE solution = ? ORDER BY board", (s,)),
        ("SELECT coalesce(max(rowid), 0) FROM spent", ()),
        ("UPDATE spent SET day = ? WHERE solution = ?", ("2026-12-01", h(101 + first))),
        ("DELETE FROM spent WHERE solution = ?", (h(103 + first),)),
    ]


SCRIPT: tuple[tuple[str, tuple[object, ...]], ...] = (
    *_meta_steps(),
    *_tile_steps(1),
    *_miss_steps(100),
    *_manifest_steps("2026-11-01"),
    *_spent_steps(1),
    # a second round, so what one table's triggers do to another shows whatever the order
    *_tile_steps(20),
    *_miss_steps(200),
    *_manifest_steps("2026-11-02"),
    *_spent_steps(20),
    ("SELECT key, value FROM meta ORDER BY key", ()),
)


def _values(row: Iterable[object]) -> tuple[tuple[str, object], ...]:
    """A result row with each value's Python type (1, 1.0 and True differ)."""
    return tuple((type(v).__name__, v) for v in row)


def step(conn: sqlite3.Connection, sql: str, params: tuple[object, ...]) -> tuple[object, ...]:
    """One statement's result: its rows and row count, or its error's class and message (folded
    to ASCII lower case: an identifier's case is layout)."""
    try:
        cur = conn.execute(sql, params)
        rows = tuple(_values(r) for r in cur.fetchall())
        return ("ok", rows, cur.rowcount)
    except sqlite3.Error as err:
        return ("error", type(err).__name__, fold(str(err)))


def _quoted_name(name: str) -> str:
    """A name as a double-quoted SQL identifier."""
    return '"' + name.replace('"', '""') + '"'


def dump(conn: sqlite3.Connection) -> tuple[object, ...]:
    """Every table's (and view's) content: each row as (typeof, quote) of every column (and the
    rowid where there is one), rows sorted, tables by folded name."""
    try:
        listed = conn.execute(
            "SELECT name, type, wr FROM pragma_table_list "
            "WHERE schema = 'main' AND name NOT IN ('sqlite_schema', 'sqlite_temp_schema')"
        ).fetchall()
    except sqlite3.Error as err:  # the script's writes broke the schema itself
        return ("error", fold(str(err)))
    out: list[object] = []
    for name, type_, wr in sorted(listed, key=lambda r: (fold(r[0]), r[0])):
        try:
            cols = [r[0] for r in conn.execute("SELECT name FROM pragma_table_xinfo(?) WHERE hidden != 1", (name,))]
            parts = ["quote(rowid)"] if type_ == "table" and not wr else []
            parts += [f"typeof({_quoted_name(c)}), quote({_quoted_name(c)})" for c in cols]
            rows = conn.execute(f"SELECT {', '.join(parts) or '1'} FROM {_quoted_name(name)}").fetchall()
            out.append((fold(name), type_, tuple(fold(c) for c in cols), tuple(sorted(rows))))
        except sqlite3.Error as err:
            out.append((fold(name), type_, "error", fold(str(err))))
    return tuple(out)


def reopen(image: bytes) -> sqlite3.Connection:
    """A fresh connection to a library image, opened like ``tilelib.db.connect`` (trusting no
    schema): SQLite reads its ``sqlite_master`` anew."""
    conn = connect(":memory:")
    conn.deserialize(image)
    return conn


def behaviour(image: bytes) -> tuple[object, ...]:
    """What a library does: every ``SCRIPT`` statement's result, then every table's content."""
    conn = reopen(image)
    try:
        return (tuple(step(conn, sql, params) for sql, params in SCRIPT), dump(conn))
    finally:
        conn.close()


def first_difference(a: tuple[object, ...], b: tuple[object, ...]) -> str:
    """Where two behaviours part, in words (for a failure message)."""
    steps_a, dump_a = a
    steps_b, dump_b = b
    assert isinstance(steps_a, tuple) and isinstance(steps_b, tuple)
    for (sql, params), x, y in zip(SCRIPT, steps_a, steps_b, strict=True):
        if x != y:
            return f"{sql[:90]} {params!r:.60}: shipped {x!r:.200}, mutant {y!r:.200}"
    return f"table contents: shipped {dump_a!r:.300} … mutant {dump_b!r:.300}"


# ---------------------------------------------------------------- building and judging


def build(m: Mutation) -> bytes | None:
    """The image of the library a mutation makes (the shipped statements edited, the ``meta``
    row a library has, then its ``sqlite_master`` edits), or None if SQLite will not make it."""
    stmts = [*version_statements(m.version), *(SYNC if m.sync else ())]
    for edit in m.edits:
        stmts = edit(stmts)
    conn = sqlite3.connect(":memory:", isolation_level=None)
    try:
        conn.executescript(m.pragmas + "\n".join(stmts))
        try:
            meta = str(m.version) if m.meta is None else m.meta
            conn.execute("INSERT INTO meta (key, value) VALUES ('schema_version', ?)", (meta,))
        except sqlite3.Error:
            pass  # the mutation broke meta: the file is then no library, which the proof must say
        if m.master:
            conn.execute("PRAGMA writable_schema = ON")
            for edit_rows in m.master:
                edit_rows(conn)
            conn.execute("PRAGMA writable_schema = OFF")
        return conn.serialize()
    except (sqlite3.Error, ValueError):
        return None
    finally:
        conn.close()


def loads(image: bytes) -> bool:
    """Whether SQLite reads the image's schema at all (a malformed one is unbuildable)."""
    conn = reopen(image)
    try:
        conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
        return True
    except sqlite3.Error:
        return False
    finally:
        conn.close()


def judged(image: bytes, attached: bool) -> int | str:
    """The schema version ``check_schema`` accepts the image as (as ``main`` or as an attached
    schema), else why it refused. A corrupt file (sqlite3.DatabaseError) is refused as the opener
    refuses it."""
    conn = connect(":memory:")
    try:
        if attached:
            conn.execute("ATTACH ':memory:' AS peer")
            conn.deserialize(image, name="peer")
        else:
            conn.deserialize(image)
        return check_schema(conn, "fuzzed", "peer" if attached else "main")
    except (LibraryError, sqlite3.DatabaseError) as err:
        return f"{type(err).__name__}: {err}"
    finally:
        conn.close()


def damaged(image: bytes) -> bool:
    """Whether the page check the code runs on every file it takes from a peer or publishes
    (``trust.checks.check_pages``, quick_check) refuses the image: SQLite calls its pages corrupt.
    A root page given to a b-tree of the other kind (a table's to an index) is such damage, as a
    flipped byte in a page header is, and no schema reading sees it."""
    conn = reopen(image)
    try:
        check_pages(conn, "fuzzed", "quick")
        return False
    except CorruptLibrary:
        return True
    finally:
        conn.close()


@cache
def reference(sync: bool, version: int = 2) -> tuple[object, ...]:
    """The shipped schema's behaviour (of ``version``, with or without the sync objects)."""
    image = build(Mutation("shipped", "shipped", sync=sync, version=version))
    assert image is not None and judged(image, False) == version
    return behaviour(image)


@dataclass
class Tally:
    """Counts of one class: tried, unbuildable, refused (and of those, behaving identically),
    accepted (and of those, behaving identically, and behaving otherwise on pages SQLite itself
    calls damaged, which the page check refuses)."""

    tried: int = 0
    unbuildable: int = 0
    refused: int = 0
    refused_same: int = 0
    accepted: int = 0
    accepted_same: int = 0
    accepted_damaged: int = 0

    def words(self) -> str:
        """The counts as tried/unbuildable/refused(identical)/accepted(identical+damaged)."""
        damaged = f"+{self.accepted_damaged}d" if self.accepted_damaged else ""
        return (
            f"{self.tried}/{self.unbuildable}/{self.refused}({self.refused_same}=)/"
            f"{self.accepted}({self.accepted_same}={damaged})"
        )


@dataclass
class Run:
    """The outcome of a fuzz run: a tally per class and every broken promise, in words."""

    tallies: dict[str, Tally]
    failures: list[str]
    seconds: float

    def line(self, tier: str) -> str:
        """One line of counts (tried/unbuildable/refused(identical)/accepted(identical))."""
        total = Tally()
        for t in self.tallies.values():
            for f in vars(total):
                setattr(total, f, getattr(total, f) + getattr(t, f))
        per = ", ".join(f"{k} {t.words()}" for k, t in self.tallies.items())
        return (
            f"schema fuzz {tier} (seed {SEED}) in {self.seconds:.1f}s: {total.tried} tried, {total.unbuildable} "
            f"unbuildable, {total.refused} refused ({total.refused_same} of them behaving identically), "
            f"{total.accepted} accepted ({total.accepted_same} behaving identically, {total.accepted_damaged} on "
            f"pages the page check refuses); per class tried/unbuildable/refused(=)/accepted(=+d): {per}"
        )


def fuzz(mutations: Iterable[Mutation]) -> Run:
    """Build, judge and run every mutation; tally each and say every broken promise: an accepted
    mutation that behaves otherwise, a layout mutation refused, the two readings disagreeing."""
    start = time.monotonic()
    tallies: dict[str, Tally] = {}
    failures: list[str] = []
    for m in mutations:
        t = tallies.setdefault(m.kind, Tally())
        t.tried += 1
        image = build(m)
        if image is None or not loads(image):
            t.unbuildable += 1
            if m.neutral:
                failures.append(f"[{m.kind}] {m.label}: a layout mutation SQLite would not build")
            continue
        why = judged(image, attached=False)
        other = judged(image, attached=True)
        if why != other and (isinstance(why, int) or isinstance(other, int)):
            failures.append(f"[{m.kind}] {m.label}: judged otherwise as main and as an attached schema ({why})")
        want = reference(m.sync, why if isinstance(why, int) else m.version)
        same = behaviour(image) == want
        if isinstance(why, int):
            t.accepted += 1
            t.accepted_same += same
            if not same and damaged(image):
                t.accepted_damaged += 1
            elif not same:
                diff = first_difference(want, behaviour(image))
                failures.append(f"[{m.kind}] {m.label}: ACCEPTED but behaves otherwise: {diff}")
        else:
            t.refused += 1
            t.refused_same += same
            if m.neutral:
                failures.append(f"[{m.kind}] {m.label}: a layout mutation refused: {why}")
        if m.neutral and not same:
            failures.append(f"[{m.kind}] {m.label}: a layout mutation behaves otherwise (the fuzzer's bug)")
    return Run(tallies, failures, time.monotonic() - start)


# ---------------------------------------------------------------- the classes of mutation

Gen = Callable[[random.Random, bool], list[Mutation]]
ASCII_SPACE = " \t\n\f\r"
# In place of a space: what Unicode calls a space, and a few that are not even that to SQLite.
UNICODE_SPACES = "\u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029" + (
    "\u202f\u205f\u3000\ufeff\u0085\u180e\u200b\x0b"
)
LOOKALIKE = {
    "a": "\u0430",  # Cyrillic a
    "e": "\u0435",
    "o": "\u043e",
    "p": "\u0440",
    "c": "\u0441",
    "x": "\u0445",
    "i": "\u0456",
    "s": "\u0455",
    "k": "\u212a",  # the Kelvin sign, which Unicode folds to k and SQLite does not
    "t": "\u0442",
    "y": "\u0443",
}
TYPES = (
    "TEXT", "INTEGER", "REAL", "BLOB", "NUMERIC", "ANY", "", "INT", "BIGINT", "INT8", "VARCHAR(64)", "CLOB",
    "DOUBLE", "FLOAT", "BOOLEAN", "DATETIME", "FLOATING POINT", "STRING", "CHARINT", '"INTEGER"', "'TEXT'",
)  # fmt: skip
BODIES = (
    "SELECT RAISE(IGNORE);",
    "SELECT RAISE(ABORT, 'refused');",
    "DELETE FROM spent;",
    "INSERT OR REPLACE INTO meta (key, value) VALUES ('verified:dirty', 'x');",
    "UPDATE meta SET value = '3' WHERE key = 'schema_version';",
    "SELECT 1;",
)
KEYWORDS = (
    "NOT", "NULL", "UNIQUE", "PRIMARY", "KEY", "DEFAULT", "CHECK", "COLLATE", "NOCASE", "WITHOUT", "ROWID",
    "STRICT", "WHEN", "OR", "IGNORE", "REPLACE", "ABORT", "ROLLBACK", "AS", "DESC", "ASC", "IF", "EXISTS",
    "TEMP", "BEFORE", "AFTER", "INSTEAD", "OF", "FOR", "EACH", "ROW", "AUTOINCREMENT", "GENERATED", "STORED",
    "VIRTUAL", "REFERENCES", "CONSTRAINT", "ON", "CONFLICT", "DEFERRABLE", "0", "1", "-1", "','", ",", "(",
    ")", ";", "SELECT", "DELETE", "UPDATE", "INSERT", "BEGIN", "END",
)  # fmt: skip


def pick(rng: random.Random, items: list[Mutation], k: int, full: bool) -> list[Mutation]:
    """All of ``items`` in the slow tier, ``k`` of them drawn by ``rng`` in the default one."""
    return list(items) if full or len(items) <= k else rng.sample(items, k)


def statements_of(sync: bool) -> list[str]:
    """The shipped statements of a base."""
    return list(SHIPPED + (SYNC if sync else ()))


def name_of(stmt: str) -> str:
    """The name a shipped statement creates."""
    made = created(stmt)
    assert made is not None
    return made[1]


def relayout(seed: int, how: str) -> Callable[[str], str]:
    """A layout edit: ASCII whitespace changed or added (``space``), comments added (``comment``),
    bare words in random ASCII case (``case``), comments dropped (``bare``), or all of them."""

    def fn(stmt: str) -> str:
        r = random.Random(seed)
        out: list[Span] = []
        for kind, text in spans(stmt):
            if kind == "comment" and how in ("bare", "all"):
                text = " "
            elif kind == "space" and how in ("space", "all"):
                ends_comment = "\n" if out and out[-1][1].startswith("--") else ""  # a line comment ends at one
                text = ends_comment + "".join(r.choice(ASCII_SPACE) for _ in range(r.randint(1, 3)))
            elif kind == "word" and how in ("case", "all"):
                text = "".join(c.upper() if c.isascii() and r.random() < 0.5 else c.lower() for c in text)
            out.append((kind, text))
            if kind not in ("space", "comment") and r.random() < 0.3:
                if how in ("comment", "all"):
                    out.append(("comment", r.choice(["/* peer's note */", "-- a note\n", "/**/", "--\n"])))
                elif how == "space":
                    out.append(("space", r.choice(ASCII_SPACE)))
        return joined(out)

    return fn


def layout(rng: random.Random, full: bool) -> list[Mutation]:
    """Whitespace, comments, ASCII case: what SQLite reads as the same statement; MUST be accepted."""
    out = []
    for sync in (False, True):
        for stmt in SHIPPED if not sync else SYNC:
            for how in ("space", "comment", "case", "bare", "all"):
                for _ in range(3 if full else 1):
                    seed = rng.randrange(2**32)
                    name = name_of(stmt)
                    out.append(
                        Mutation("layout", f"{name}: {how} #{seed}", (on(name, relayout(seed, how)),), (), sync, True)
                    )
    for sync in (False, True):
        seed = rng.randrange(2**32)
        out.append(Mutation("layout", f"everything: all #{seed}", (on_all(relayout(seed, "all")),), (), sync, True))
    rows = [
        (
            "every row's SQL with a comment after it",
            "UPDATE sqlite_master SET sql = sql || ' /* x */' WHERE sql IS NOT NULL",
        ),
        (
            "tables' and indexes' SQL with tabs for spaces",
            "UPDATE sqlite_master SET sql = replace(sql, ' ', char(9)) WHERE type IN ('table', 'index')",
        ),
        (
            "tables' and indexes' SQL in upper case",
            "UPDATE sqlite_master SET sql = upper(sql) WHERE type IN ('table', 'index')",
        ),
        (
            "triggers' SQL with a line comment inside",
            "UPDATE sqlite_master SET sql = replace(sql, 'BEGIN', 'BEGIN -- x' || char(10)) WHERE type = 'trigger'",
        ),
    ]
    out += [Mutation("layout", label, (), (master(sql),), sync, True) for label, sql in rows for sync in (False, True)]
    return out


def spelling(rng: random.Random, full: bool) -> list[Mutation]:
    """Other spellings SQLite itself rewrites away (a schema-qualified name, no IF NOT EXISTS), or
    that change what is made (a TEMP object)."""
    out = []
    for stmt in SHIPPED:
        name = name_of(stmt)
        for new in (f"main.{name}", f'"main".{name}', f"MAIN . {name}", f"temp.{name}"):
            out.append(Mutation("spelling", f"{name} as {new}", (on(name, replace_code([name], new)),)))
        out.append(
            Mutation(
                "spelling", f"{name} without IF NOT EXISTS", (on(name, replace_code(["if", "not", "exists"], "")),)
            )
        )
    return pick(rng, out, 25, full)


def namespace(rng: random.Random, full: bool) -> list[Mutation]:
    """Names shared across SQLite's two namespaces (a trigger named like an index or a table), and
    ``sqlite_master`` rows whose name, type or table say other than their SQL."""
    out = []
    names = [*indexes(), *tables(), "sqlite_autoindex_tiles_1"]
    for name in names:
        for body in ("SELECT RAISE(IGNORE);", "SELECT 1;"):
            sql = f"CREATE TRIGGER {name} BEFORE INSERT ON tiles BEGIN {body} END;"
            out.append(Mutation("namespace", f"trigger {name}: {body}", (add(sql),), (), needs_sync(name)))
            row = "INSERT INTO sqlite_master VALUES ('trigger', ?, 'tiles', 0, ?)"
            out.append(
                Mutation(
                    "namespace", f"row: trigger {name}: {body}", (), (master(row, name, sql[:-1]),), needs_sync(name)
                )
            )
    for trig in triggers():
        for idx in ("tiles_top_right", "misses_open", "sqlite_autoindex_meta_1", "tiles"):
            rename = "UPDATE sqlite_master SET name = ? WHERE name = ?"
            out.append(
                Mutation("namespace", f"row {trig} named {idx}", (), (master(rename, idx, trig),), needs_sync(trig))
            )
            both = "UPDATE sqlite_master SET name = ?1, sql = replace(sql, ?2, ?1) WHERE name = ?2"
            out.append(
                Mutation("namespace", f"trigger {trig} renamed {idx}", (), (master(both, idx, trig),), needs_sync(trig))
            )
        out.append(Mutation("namespace", f"index named {trig}", (add(f"CREATE INDEX {trig} ON spent (day);"),)))
    evil = "CREATE TRIGGER evil BEFORE INSERT ON tiles BEGIN SELECT RAISE(IGNORE); END"
    for name in [*triggers(), *indexes()]:
        sync = needs_sync(name)
        edits = [
            ("SQL of another name", "UPDATE sqlite_master SET sql = ? WHERE name = ?", (evil, name)),
            ("type trigger", "UPDATE sqlite_master SET type = 'trigger' WHERE name = ?", (name,)),
            ("type index", "UPDATE sqlite_master SET type = 'index' WHERE name = ?", (name,)),
            ("type view", "UPDATE sqlite_master SET type = 'view' WHERE name = ?", (name,)),
            ("tbl_name spent", "UPDATE sqlite_master SET tbl_name = 'spent' WHERE name = ?", (name,)),
            ("name in upper case", "UPDATE sqlite_master SET name = upper(name) WHERE name = ?", (name,)),
            ("tbl_name in upper case", "UPDATE sqlite_master SET tbl_name = upper(tbl_name) WHERE name = ?", (name,)),
            ("row twice", "INSERT INTO sqlite_master SELECT * FROM sqlite_master WHERE name = ?", (name,)),
            (
                "row twice, once in upper case",
                "INSERT INTO sqlite_master SELECT type, upper(name), tbl_name, rootpage, sql FROM sqlite_master "
                "WHERE name = ?",
                (name,),
            ),
        ]
        same = {f"type {'index' if name in indexes() else 'trigger'}", f"tbl_name {triggers().get(name)}"}
        out += [
            Mutation("namespace", f"{name}: {label}", (), (master(sql, *args),), sync)
            for label, sql, args in edits
            if label not in same
        ]
    for table in tables():
        for label, sql in (
            ("type view", "UPDATE sqlite_master SET type = 'view' WHERE name = ?"),
            ("type index", "UPDATE sqlite_master SET type = 'index' WHERE name = ?"),
            (
                "name in upper case",
                "UPDATE sqlite_master SET name = upper(name), tbl_name = upper(tbl_name) WHERE name = ?",
            ),
            ("row twice", "INSERT INTO sqlite_master SELECT * FROM sqlite_master WHERE name = ?"),
            ("deleted row", "DELETE FROM sqlite_master WHERE name = ?"),
            ("name NULL", "UPDATE sqlite_master SET name = NULL WHERE name = ?"),
            ("type NULL", "UPDATE sqlite_master SET type = NULL WHERE name = ?"),
            ("tbl_name NULL", "UPDATE sqlite_master SET tbl_name = NULL WHERE name = ?"),
            ("name with a dotless i", "UPDATE sqlite_master SET name = replace(name, 'i', char(305)) WHERE name = ?"),
            ("name as a blob", "UPDATE sqlite_master SET name = CAST(name AS BLOB) WHERE name = ?"),
        ):
            out.append(Mutation("namespace", f"{table}: {label}", (), (master(sql, table),), needs_sync(table)))
    return pick(rng, out, 90, full)


def root_pages(rng: random.Random, full: bool) -> list[Mutation]:
    """Rows of ``sqlite_master`` whose root page, or whose SQL's storage class, is not what SQLite
    made: shared, swapped, the schema's own page 1, past the end, stored as text, real or blob;
    SQL stored as a blob, cut by a NUL, or NULL; a row deleted."""
    names = [n for (n,) in shipped_db(True).execute("SELECT name FROM sqlite_master WHERE rootpage > 0")]
    root_of = "(SELECT rootpage FROM sqlite_master WHERE name = ?)"
    out = []
    for a in names:
        sync = needs_sync(a)
        auto = a.startswith("sqlite_autoindex_")  # its SQL is NULL already
        for label, sql, args in (
            ("root page 1", "UPDATE sqlite_master SET rootpage = 1 WHERE name = ?", (a,)),
            ("root page past the end", "UPDATE sqlite_master SET rootpage = 999 WHERE name = ?", (a,)),
            ("root page 0", "UPDATE sqlite_master SET rootpage = 0 WHERE name = ?", (a,)),
            ("root page -1", "UPDATE sqlite_master SET rootpage = -1 WHERE name = ?", (a,)),
            ("root page NULL", "UPDATE sqlite_master SET rootpage = NULL WHERE name = ?", (a,)),
            (
                "root page as blob",
                "UPDATE sqlite_master SET rootpage = CAST(CAST(rootpage AS TEXT) AS BLOB) WHERE name = ?",
                (a,),
            ),
            ("root page as real", "UPDATE sqlite_master SET rootpage = rootpage + 0.5 WHERE name = ?", (a,)),
            ("root page as padded text", "UPDATE sqlite_master SET rootpage = ' ' || rootpage WHERE name = ?", (a,)),
            ("SQL as blob", "UPDATE sqlite_master SET sql = CAST(sql AS BLOB) WHERE name = ?", (a,)),
            ("SQL cut by a NUL", "UPDATE sqlite_master SET sql = sql || char(0) || ' garbage' WHERE name = ?", (a,)),
            ("SQL NULL", "UPDATE sqlite_master SET sql = NULL WHERE name = ?", (a,)),
            ("SQL with a semicolon", "UPDATE sqlite_master SET sql = sql || ';' WHERE name = ?", (a,)),
            ("deleted row", "DELETE FROM sqlite_master WHERE name = ?", (a,)),
        ):
            if not (auto and label.startswith("SQL")):
                out.append(Mutation("root pages", f"{a}: {label}", (), (master(sql, *args),), sync))
        for b in names:
            if a == b:
                continue
            sync = needs_sync(a, b)
            share = f"UPDATE sqlite_master SET rootpage = {root_of} WHERE name = ?"
            out.append(Mutation("root pages", f"{a} shares {b}'s root page", (), (master(share, b, a),), sync))
            blob = share.replace(root_of, f"CAST(CAST({root_of} AS TEXT) AS BLOB)")
            out.append(
                Mutation("root pages", f"{a} shares {b}'s root page, as a blob", (), (master(blob, b, a),), sync)
            )
            if a < b:
                out.append(Mutation("root pages", f"{a} and {b} swap root pages", (), (swap_roots(a, b),), sync))
    for auto in ("sqlite_autoindex_tiles_1", "sqlite_autoindex_spent_1"):
        table = auto.split("_")[2]
        for sql in (
            f"CREATE INDEX {auto} ON {table} (n)",
            f"CREATE TRIGGER {auto} BEFORE INSERT ON {table} BEGIN SELECT RAISE(IGNORE); END",
        ):
            edit = master("UPDATE sqlite_master SET sql = CAST(? AS BLOB) WHERE name = ?", sql, auto)
            out.append(Mutation("root pages", f"{auto}: SQL {sql!r} as a blob", (), (edit,)))
    for trig in triggers():
        for label, sql in (
            ("root page 5", "UPDATE sqlite_master SET rootpage = 5 WHERE name = ?"),
            ("root page NULL", "UPDATE sqlite_master SET rootpage = NULL WHERE name = ?"),
            ("root page '0'", "UPDATE sqlite_master SET rootpage = CAST('0' AS BLOB) WHERE name = ?"),
            ("SQL as blob", "UPDATE sqlite_master SET sql = CAST(sql AS BLOB) WHERE name = ?"),
            ("SQL cut by a NUL", "UPDATE sqlite_master SET sql = sql || char(0) || ' garbage' WHERE name = ?"),
        ):
            out.append(Mutation("root pages", f"{trig}: {label}", (), (master(sql, trig),), needs_sync(trig)))
    return pick(rng, out, 110, full)


def quote_as(text: str, style: str) -> str:
    """``text`` quoted in one of SQLite's four ways."""
    if style == "[":
        return f"[{text}]"
    return style + text.replace(style, style * 2) + style


def quoting(rng: random.Random, full: bool) -> list[Mutation]:
    """Keywords quoted (``"NOT" "NULL"`` is a type name, not the constraint) and identifiers quoted
    (the same name to SQLite, yet refused as ambiguous: both are fine)."""
    out = []
    phrases = {
        ("not", "null"): ('"NOT" "NULL"', '"NOT" NULL', 'NOT "NULL"', "'NOT' 'NULL'", "[NOT] [NULL]"),
        ("primary", "key"): ('"PRIMARY" "KEY"', 'PRIMARY "KEY"', "`PRIMARY` KEY"),
        ("unique",): ('"UNIQUE"', "[UNIQUE]"),
        ("default",): ('"DEFAULT"', "'DEFAULT'"),
        ("integer",): ('"INTEGER"', "'INTEGER'", "[INTEGER]", "`INTEGER`"),
        ("text",): ('"TEXT"', "'TEXT'"),
        ("replace",): ('"REPLACE"',),
        ("null",): ('"NULL"',),
    }
    for sync in (False, True):
        for stmt in SHIPPED if not sync else SYNC:
            name = name_of(stmt)
            sp = spans(stmt)
            words = [fold(sp[i][1]) for i in code(sp)]
            for old, news in phrases.items():
                hits = sum(words[k : k + len(old)] == list(old) for k in range(len(words)))
                for nth in range(hits):
                    for new in news:
                        edit = on(name, replace_code(list(old), new, nth))
                        out.append(Mutation("quoting", f"{name}: {' '.join(old)} #{nth} as {new}", (edit,), (), sync))
            idents = {w for w in words if w in tables() or w in indexes() or w in triggers() or w in _all_columns()}
            for ident in sorted(idents):
                for style in ('"', "`", "[", "'"):
                    edit = on(name, replace_code([ident], quote_as(ident, style)))
                    out.append(Mutation("quoting", f"{name}: {ident} as {quote_as(ident, style)}", (edit,), (), sync))
    return pick(rng, out, 80, full)


@cache
def _all_columns() -> frozenset[str]:
    """Every column name of every shipped table."""
    return frozenset(c for cols in tables().values() for c, *_ in cols)


def unicode_space(seed: int, char: str, where: str) -> Callable[[str], str]:
    """A text edit: one space (``one``), every space (``all``), or the start of one token after a
    space (``after``) given to ``char``, a character SQLite does not call a space."""

    def fn(stmt: str) -> str:
        r = random.Random(seed)
        sp = spans(stmt)
        at = [i for i, (k, _) in enumerate(sp) if k == "space"]
        if not at:
            return stmt
        chosen = set(at) if where == "all" else {r.choice(at)}
        if where == "after":
            return joined((k, t + char if i in chosen else t) for i, (k, t) in enumerate(sp))
        return joined((k, char if i in chosen else t) for i, (k, t) in enumerate(sp))

    return fn


def unicode_spaces(rng: random.Random, full: bool) -> list[Mutation]:
    """Unicode spaces (no-break, en, em, ideographic, BOM, NEL …) where a space was, in tables and
    trigger bodies: to SQLite each is a letter of an identifier, so a constraint may vanish."""
    out = []
    for sync in (False, True):
        for stmt in SHIPPED if not sync else SYNC:
            name = name_of(stmt)
            for char in UNICODE_SPACES:
                for where in ("one", "all", "after"):
                    seed = rng.randrange(2**32)
                    edit = on(name, unicode_space(seed, char, where))
                    out.append(
                        Mutation("unicode spaces", f"{name}: U+{ord(char):04X} {where} #{seed}", (edit,), (), sync)
                    )
    return pick(rng, out, 80, full)


def lookalike(name: str, how: str) -> str:
    """``name`` with one letter (``one``) or every letter (``all``) a look-alike, or in fullwidth."""
    if how == "fullwidth":
        return "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in name)
    if how == "upper-kelvin":
        return name.replace("k", "\u212a")
    chars = list(name)
    for i, c in enumerate(chars):
        if c in LOOKALIKE:
            chars[i] = LOOKALIKE[c]
            if how == "one":
                break
    return "".join(chars)


def lookalikes(rng: random.Random, full: bool) -> list[Mutation]:
    """Tables, columns, indexes and triggers renamed with letters that only look alike (Cyrillic,
    the Kelvin sign, fullwidth): everywhere, or only where the object is made."""
    out = []
    names = [*tables(), *_all_columns(), *indexes(), *triggers()]
    for name in sorted(set(names)):
        for how in ("one", "all", "fullwidth", "upper-kelvin"):
            new = lookalike(name, how)
            if new == name:
                continue
            sync = needs_sync(name)
            out.append(
                Mutation("look-alikes", f"{name} as {new} everywhere", (on_all(rename_word(name, new)),), (), sync)
            )
            if name in tables() or name in indexes() or name in triggers():
                edit = on(name, replace_code([name], new))
            else:
                table = next(t for t, cols in tables().items() if any(c == name for c, *_ in cols))
                edit = on(table, replace_code([name], new))
            out.append(Mutation("look-alikes", f"{name} as {new} where made", (edit,), (), sync))
    return pick(rng, out, 35, full)


def _col(table: str, col: str, label: str, fn: Callable[[str], str], kind: str) -> Mutation:
    """A mutation of one column definition."""
    return Mutation(kind, f"{table}.{col}: {label}", (column(table, col, fn),), (), needs_sync(table))


def _append(text: str) -> Callable[[str], str]:
    """A column-definition edit: ``text`` after it."""
    return lambda d: d + text


def _replace(old: str, new: str) -> Callable[[str], str]:
    """A column-definition edit: its first ``old`` made ``new``."""
    return lambda d: d.replace(old, new, 1)


def constraints(rng: random.Random, full: bool) -> list[Mutation]:
    """NOT NULL dropped or added, CHECK, UNIQUE, PRIMARY KEY changes, ON CONFLICT clauses,
    DEFAULT values, foreign keys, the table constraints of ``misses`` and ``spent``."""
    out = []
    k = "constraints"
    for table, cols in tables().items():
        keyed = sum(1 for *_, pk in cols if pk) == 1  # a column's own PRIMARY KEY, not a table constraint's
        for col, _type, notnull, dflt, pk in cols:
            pk = pk and keyed
            if notnull:
                out.append(_col(table, col, "no NOT NULL", _replace("NOT NULL", ""), k))
                for clause in ("IGNORE", "REPLACE", "FAIL", "ROLLBACK", "ABORT"):
                    out.append(
                        _col(
                            table,
                            col,
                            f"NOT NULL ON CONFLICT {clause}",
                            _replace("NOT NULL", f"NOT NULL ON CONFLICT {clause}"),
                            k,
                        )
                    )
            else:
                out.append(_col(table, col, "NOT NULL", _append(" NOT NULL"), k))
            for check in (
                f"CHECK ({col} IS NOT NULL)",
                f"CHECK (length({col}) < 70)",
                f"CHECK ({col} <> 'x')",
                "CHECK (1)",
                f"CHECK (typeof({col}) <> 'blob')",
            ):
                out.append(_col(table, col, check, _append(" " + check), k))
            if not pk:
                out.append(_col(table, col, "UNIQUE", _append(" UNIQUE"), k))
                out.append(_col(table, col, "UNIQUE ON CONFLICT IGNORE", _append(" UNIQUE ON CONFLICT IGNORE"), k))
            else:
                for clause in ("REPLACE", "IGNORE", "ABORT"):
                    out.append(
                        _col(
                            table,
                            col,
                            f"PRIMARY KEY ON CONFLICT {clause}",
                            _replace("PRIMARY KEY", f"PRIMARY KEY ON CONFLICT {clause}"),
                            k,
                        )
                    )
                out.append(_col(table, col, "PRIMARY KEY as UNIQUE", _replace("PRIMARY KEY", "UNIQUE"), k))
                out.append(_col(table, col, "no PRIMARY KEY", _replace("PRIMARY KEY", ""), k))
                out.append(_col(table, col, "PRIMARY KEY DESC", _replace("PRIMARY KEY", "PRIMARY KEY DESC"), k))
            for default in ("0", "'x'", "NULL", "CURRENT_TIMESTAMP", "(1)", "-1"):
                if dflt is None:
                    out.append(_col(table, col, f"DEFAULT {default}", _append(f" DEFAULT {default}"), k))
            if dflt is not None:
                for default in (
                    "2",
                    f"'{dflt}'",
                    f"{dflt}.0",
                    f"({dflt})",
                    f"+{dflt}",
                    f"0x{dflt}",
                    "TRUE",
                    "FALSE",
                    "NULL",
                ):
                    out.append(
                        _col(table, col, f"DEFAULT {default}", _replace(f"DEFAULT {dflt}", f"DEFAULT {default}"), k)
                    )
            out.append(
                _col(table, col, "REFERENCES tiles (hash)", _append(" REFERENCES tiles (hash) ON DELETE CASCADE"), k)
            )
    specials = [
        ("misses", "id INTEGER PRIMARY KEY AUTOINCREMENT", "id", _append(" AUTOINCREMENT")),
        ("misses", "id INT PRIMARY KEY", "id", _replace("INTEGER", "INT")),
        ("misses", "id INTEGER UNIQUE", "id", _replace("PRIMARY KEY", "UNIQUE")),
        ("misses_touched", "id INT PRIMARY KEY", "id", _replace("INTEGER", "INT")),
        ("misses_touched", "id INTEGER PRIMARY KEY AUTOINCREMENT", "id", _append(" AUTOINCREMENT")),
    ]
    out += [_col(t, c, label, fn, k) for t, label, c, fn in specials]
    whole = [
        ("misses", "no UNIQUE key", replace_code(["unique", "("], "CHECK (1 OR (")),
        ("misses", "UNIQUE key without left_mask", replace_code([",", "left_mask", ")"], ")")),
        (
            "misses",
            "UNIQUE key ON CONFLICT IGNORE",
            replace_code(["left_mask", ")"], "left_mask) ON CONFLICT IGNORE"),
        ),
        (
            "misses",
            "UNIQUE key ON CONFLICT REPLACE",
            replace_code(["left_mask", ")"], "left_mask) ON CONFLICT REPLACE"),
        ),
        ("misses", "UNIQUE (n, tile) too", before_close_paren(", UNIQUE (n, tile)")),
        ("misses", "CHECK (count > 0)", before_close_paren(", CHECK (count > 0)")),
        ("spent", "PRIMARY KEY (solution)", replace_code(["solution", ",", "board", ")"], "solution)")),
        (
            "spent",
            "PRIMARY KEY (board, solution)",
            replace_code(["solution", ",", "board", ")"], "board, solution)"),
        ),
        ("spent", "PRIMARY KEY ON CONFLICT REPLACE", replace_code(["board", ")"], "board) ON CONFLICT REPLACE")),
        ("spent", "UNIQUE (solution)", before_close_paren(", UNIQUE (solution)")),
        (
            "meta",
            "PRIMARY KEY (key, value)",
            lambda s: before_close_paren(", PRIMARY KEY (key, value)")(s.replace("PRIMARY KEY", "", 1)),
        ),
        ("tiles", "CHECK (n > 0)", before_close_paren(", CHECK (n > 0)")),
        ("tiles", "UNIQUE (n, top, right, bottom, left)", before_close_paren(", UNIQUE (n, top, right, bottom, left)")),
        ("manifests", "CONSTRAINT named PRIMARY KEY", replace_code(["primary", "key"], "CONSTRAINT pk PRIMARY KEY")),
    ]
    out += [Mutation(k, f"{t}: {label}", (on(t, fn),), (), needs_sync(t)) for t, label, fn in whole]
    return pick(rng, out, 90, full)


def _retype(new: str) -> Callable[[str], str]:
    """A column-definition edit: its declared type (the first word) made ``new``."""
    return lambda d: re.sub(r"^(\s*)([A-Za-z]+)", lambda m: m[1] + new, d, count=1)


def types(rng: random.Random, full: bool) -> list[Mutation]:
    """Every column's declared type changed: to another affinity, or to a name of the same one
    (``INT`` for ``INTEGER``, which is not the rowid alias, ``VARCHAR(64)`` for ``TEXT``)."""
    out = [
        _col(table, col, f"type {new or 'none'}", _retype(new), "types")
        for table, cols in tables().items()
        for col, old, *_ in cols
        for new in TYPES
        if new != old
    ]
    return pick(rng, out, 80, full)


def collations(rng: random.Random, full: bool) -> list[Mutation]:
    """NOCASE, RTRIM and BINARY on columns, on index columns and on the columns of the UNIQUE and
    PRIMARY KEY table constraints."""
    out = []
    for coll in ("NOCASE", "RTRIM", "BINARY"):
        for table, cols in tables().items():
            for col, *_ in cols:
                out.append(_col(table, col, f"COLLATE {coll}", _append(f" COLLATE {coll}"), "collations"))
        for idx in indexes():
            stmt = next(s for s in statements_of(True) if (created(s) or ("", ""))[1] == idx)
            sp = spans(stmt)
            words = [fold(sp[i][1]) for i in code(sp)]
            for col in dict.fromkeys(w for w in words[words.index("on") + 2 :] if w in _all_columns()):
                edit = on(idx, replace_code([col], f"{col} COLLATE {coll}"))
                out.append(Mutation("collations", f"{idx}.{col}: COLLATE {coll}", (edit,), (), needs_sync(idx)))
        for table, col in (("misses", "n"), ("misses", "left_mask"), ("spent", "solution"), ("spent", "board")):
            edit = on(table, replace_code([col], f"{col} COLLATE {coll}", 1))
            out.append(Mutation("collations", f"{table} key {col}: COLLATE {coll}", (edit,)))
    return pick(rng, out, 40, full)


def generated(rng: random.Random, full: bool) -> list[Mutation]:
    """A generated column added (VIRTUAL or STORED), or an existing column made generated."""
    out = []
    for table, cols in tables().items():
        first = cols[0][0]
        for how in ("VIRTUAL", "STORED"):
            for expr, decl in (("1", "INTEGER"), (f"{first} || ''", "TEXT"), ("NULL", "INTEGER NOT NULL")):
                text = f" g {decl} GENERATED ALWAYS AS ({expr}) {how},"
                edit = on(table, after_open_paren(text))
                out.append(Mutation("generated", f"{table}: g AS ({expr}) {how}", (edit,), (), needs_sync(table)))
            for col, *_ in cols[1:]:
                out.append(_col(table, col, f"AS (0) {how}", _append(f" AS (0) {how}"), "generated"))
    return pick(rng, out, 20, full)


def table_options(rng: random.Random, full: bool) -> list[Mutation]:
    """WITHOUT ROWID and STRICT (and both) on every table."""
    out = []
    for table in tables():
        for opt in ("WITHOUT ROWID", "STRICT", "STRICT, WITHOUT ROWID"):
            out.append(
                Mutation("rowid/strict", f"{table} {opt}", (on(table, table_suffix(opt)),), (), needs_sync(table))
            )
    return pick(rng, out, 18, full)


def index_changes(rng: random.Random, full: bool) -> list[Mutation]:
    """Indexes made partial, UNIQUE, on expressions, in another order or direction; extra indexes
    that refuse rows (UNIQUE, partial UNIQUE, an expression that raises); an index dropped."""
    out = []
    k = "indexes"
    for idx in indexes():
        stmt = next(s for s in statements_of(True) if (created(s) or ("", ""))[1] == idx)
        sp = spans(stmt)
        words = [fold(sp[i][1]) for i in code(sp)]
        cols = [w for w in words[words.index("on") + 2 :] if w in _all_columns()]
        sync = needs_sync(idx)
        edits: list[tuple[str, Callable[[str], str]]] = [
            ("WHERE n > 6", table_suffix("WHERE n > 6")),
            (f"WHERE {cols[0]} IS NOT NULL", table_suffix(f"WHERE {cols[0]} IS NOT NULL")),
            ("WHERE 1", table_suffix("WHERE 1")),
            ("UNIQUE", replace_code(["index"], "UNIQUE INDEX")),
            (f"{cols[1]} + 0", replace_code([cols[1]], f"{cols[1]} + 0")),
            (f"abs({cols[1]})", replace_code([cols[1]], f"abs({cols[1]})")),
            (f"{cols[1]} DESC", replace_code([cols[1]], f"{cols[1]} DESC")),
            (f"{cols[0]} ASC", replace_code([cols[0]], f"{cols[0]} ASC")),
            (
                "columns reversed",
                replace_code(["(", *", ".join(cols).replace(",", " ,").split(), ")"], f"({', '.join(reversed(cols))})"),
            ),
            ("one column more", replace_code([cols[-1], ")"], f"{cols[-1]}, rowid)")),
            ("last column dropped", replace_code([",", cols[-1], ")"], ")")),
        ]
        out += [Mutation(k, f"{idx}: {label}", (on(idx, fn),), (), sync) for label, fn in edits]
        out.append(Mutation(k, f"{idx}: dropped", (drop(idx),), (), sync))
    extra = [
        "CREATE UNIQUE INDEX x ON meta (value)",
        "CREATE UNIQUE INDEX x ON tiles (n, top, right, bottom, left)",
        "CREATE UNIQUE INDEX x ON tiles (n) WHERE n = 7",
        "CREATE INDEX x ON manifests (json(json))",
        "CREATE UNIQUE INDEX x ON spent (board)",
        "CREATE UNIQUE INDEX x ON misses (count)",
        "CREATE INDEX x ON tiles (n, top, right)",
        "CREATE UNIQUE INDEX x ON manifests (lower(day))",
        "CREATE UNIQUE INDEX x ON meta (key COLLATE NOCASE)",
    ]
    out += [Mutation(k, sql, (add(sql + ";"),)) for sql in extra]
    return pick(rng, out, 40, full)


def virtual_tables(rng: random.Random, full: bool) -> list[Mutation]:
    """Virtual tables (fts5, fts4, rtree where this SQLite has them): extra ones, and ones made in
    place of a shipped table (its indexes and triggers left out, which a virtual table cannot have)."""
    out = []
    k = "virtual tables"
    for sql in (
        "CREATE VIRTUAL TABLE x USING fts5(key, value)",
        "CREATE VIRTUAL TABLE x USING fts4(key, value)",
        "CREATE VIRTUAL TABLE x USING rtree(id, a, b)",
        "CREATE VIRTUAL TABLE tiles_top_right_fts USING fts5(hash)",
    ):
        out.append(Mutation(k, sql, (add(sql + ";"),)))
    for table, cols in tables().items():
        names = ", ".join(c for c, *_ in cols)
        for module in ("fts5", "fts4"):
            sql = f"CREATE VIRTUAL TABLE {table} USING {module}({names});"
            out.append(
                Mutation(k, f"{table} as {module}", (drop(table), drop_on(table), add(sql)), (), needs_sync(table))
            )
    rtree = "CREATE VIRTUAL TABLE misses_touched USING rtree(id, a, b);"
    out.append(Mutation(k, "misses_touched as rtree", (drop("misses_touched"), add(rtree)), (), True))
    row = "INSERT INTO sqlite_master VALUES ('table', 'x', 'x', 0, 'CREATE VIRTUAL TABLE x USING fts5(a)')"
    out.append(Mutation(k, "row: fts5 table without its shadow tables", (), (master(row),)))
    return pick(rng, out, 14, full)


def trigger_sql(name: str, timing: str, event: str, table: str, body: str, when: str = "") -> str:
    """A CREATE TRIGGER statement."""
    return f"CREATE TRIGGER {name} {timing} {event} ON {table}{when} BEGIN {body} END;"


def trigger_set(rng: random.Random, full: bool) -> list[Mutation]:
    """A trigger on every table × event (INSERT, UPDATE, UPDATE OF a column, DELETE) × timing
    (BEFORE, AFTER) with a body that matters (RAISE, writes to spent and meta) or one that does
    not (SELECT 1), under a new name, an index's name or a table's."""
    out = []
    for table, cols in tables().items():
        col = cols[min(1, len(cols) - 1)][0]
        for event in ("INSERT", "UPDATE", f"UPDATE OF {col}", "DELETE"):
            for timing in ("BEFORE", "AFTER"):
                for body in BODIES:
                    name = rng.choice(["t_x", "tiles_top_right", "misses_open", "spent", "sqlite_autoindex_tiles_1"])
                    when = rng.choice(["", "", " WHEN NEW.rowid % 2 = 0" if event != "DELETE" else " WHEN 1"])
                    sql = trigger_sql(name, timing, event, table, body, when)
                    out.append(Mutation("triggers", sql[:-1], (add(sql),), (), needs_sync(table)))
    return pick(rng, out, 120, full)


def views(rng: random.Random, full: bool) -> list[Mutation]:
    """A table renamed and a view made under its name, alone or with INSTEAD OF triggers that pass
    writes on (or drop them); extra views."""
    out = []
    k = "views"
    for table, cols in tables().items():
        names = [c for c, *_ in cols]
        real = f"{table}_real"
        base: tuple[Edit, ...] = (
            on_all(rename_word(table, real)),
            add(f"CREATE VIEW {table} AS SELECT * FROM {real};"),
        )
        new = ", ".join(f"NEW.{c}" for c in names)
        passing = {
            "INSERT": f"INSERT OR IGNORE INTO {real} ({', '.join(names)}) VALUES ({new});",
            "UPDATE": f"UPDATE {real} SET {', '.join(f'{c} = NEW.{c}' for c in names)} WHERE rowid = OLD.rowid;",
            "DELETE": f"DELETE FROM {real} WHERE {names[0]} = OLD.{names[0]};",
        }
        sync = needs_sync(table)
        out.append(Mutation(k, f"view {table} over {real}", base, (), sync))
        triggers_all = tuple(
            add(trigger_sql(f"{table}_{e.lower()}", "INSTEAD OF", e, table, b)) for e, b in passing.items()
        )
        out.append(Mutation(k, f"view {table} over {real}, writes passed on", base + triggers_all, (), sync))
        for event, body in passing.items():
            for b in (body, "SELECT RAISE(IGNORE);"):
                sql = trigger_sql(f"{table}_v", "INSTEAD OF", event, table, b)
                out.append(Mutation(k, f"view {table} over {real}: {sql[:-1]}", (*base, add(sql)), (), sync))
    for sql in ("CREATE VIEW v AS SELECT * FROM tiles", "CREATE VIEW tiles_top_right_v AS SELECT 1"):
        out.append(Mutation(k, sql, (add(sql + ";"),)))
    return pick(rng, out, 20, full)


def trigger_edits(rng: random.Random, full: bool) -> list[Mutation]:
    """The shipped triggers' bodies, literals, events and timing edited, some to what behaves the
    same (``REPLACE INTO``, a literal as ``'a' || 'b'``, ``FOR EACH ROW``)."""
    out = []
    k = "trigger edits"
    for trig, table in triggers().items():
        edits: list[tuple[str, Callable[[str], str]]] = [
            ("AFTER as BEFORE", replace_code(["after"], "BEFORE")),
            ("FOR EACH ROW", replace_code(["on", table], f"ON {table} FOR EACH ROW")),
            ("WHEN 1", replace_code(["on", table], f"ON {table} WHEN 1")),
            ("WHEN 0", replace_code(["on", table], f"ON {table} WHEN 0")),
            ("WHEN rowid > 1", replace_code(["on", table], f"ON {table} WHEN OLD.rowid > 1")),
            ("ON another table", replace_code(["on", table], "ON manifests" if table != "manifests" else "ON tiles")),
            ("one more statement", replace_code(["end"], "SELECT 1; END")),
            ("deletes spent too", replace_code(["end"], "DELETE FROM spent; END")),
            ("body twice", lambda s: s.replace("BEGIN ", "BEGIN " + s[s.find("BEGIN ") + 6 : s.rfind("END")], 1)),
        ]
        if trig != "misses_touch":
            event = "UPDATE" if "UPDATE" in triggers_sql(trig) else "DELETE"
            other = "DELETE" if event == "UPDATE" else "UPDATE"
            edits += [
                ("OR REPLACE as OR IGNORE", replace_code(["or", "replace"], "OR IGNORE")),
                ("INSERT OR REPLACE as REPLACE", replace_code(["insert", "or", "replace"], "REPLACE")),
                ("INSERT OR REPLACE as INSERT", replace_code(["insert", "or", "replace"], "INSERT")),
                ("INSERT OR REPLACE as INSERT OR FAIL", replace_code(["or", "replace"], "OR FAIL")),
                ("'verified:dirty' in other case", lambda s: s.replace("'verified:dirty'", "'Verified:Dirty'")),
                (
                    "'verified:dirty' with a trailing space",
                    lambda s: s.replace("'verified:dirty'", "'verified:dirty '"),
                ),
                ("'verified:dirty' double-quoted", lambda s: s.replace("'verified:dirty'", '"verified:dirty"')),
                (
                    "'verified:dirty' as a concatenation",
                    lambda s: s.replace("'verified:dirty'", "'verified:' || 'dirty'"),
                ),
                ("the reason's text changed", lambda s: re.sub(r"'(\w+) (updated|deleted)'", r"'\1 changed'", s)),
                ("the reason in upper case", lambda s: re.sub(r"'(\w+ (updated|deleted))'", lambda m: m[0].upper(), s)),
                (
                    "columns listed the other way",
                    lambda s: re.sub(
                        r"\(key, value\) VALUES \(('[^']*'), ('[^']*')\)", r"(value, key) VALUES (\2, \1)", s
                    ),
                ),
                (f"{event} as {other}", replace_code([event.lower()], other)),
                (f"{event} as INSERT", replace_code([event.lower()], "INSERT")),
                ("UPDATE OF n", replace_code([event.lower()], "UPDATE OF n")),
            ]
        else:
            edits += [
                ("NEW.id as OLD.id", lambda s: s.replace("NEW.id", "OLD.id")),
                ("no WHERE NOT EXISTS", lambda s: re.sub(r"\s*WHERE NOT EXISTS \(.*?\)", "", s, flags=re.S)),
                ("UPDATE OF count", replace_code(["update"], "UPDATE OF count")),
                ("AFTER INSERT", replace_code(["update"], "INSERT")),
                ("OR IGNORE", replace_code(["insert", "into"], "INSERT OR IGNORE INTO")),
            ]
        out += [Mutation(k, f"{trig}: {label}", (on(trig, fn),), (), needs_sync(trig)) for label, fn in edits]
        out.append(Mutation(k, f"{trig}: dropped", (drop(trig),), (), needs_sync(trig)))
    return pick(rng, out, 45, full)


def triggers_sql(name: str) -> str:
    """A shipped trigger's statement."""
    return next(s for s in statements_of(True) if (created(s) or ("", ""))[1] == name)


def token_edit(seed: int) -> Callable[[str], str]:
    """A random token edit (from ``seed``): a token deleted, duplicated, swapped with the next,
    quoted, a quoted token's case changed, two tokens run together, a keyword or symbol inserted, or
    a space made a Unicode space."""

    def fn(stmt: str) -> str:
        r = random.Random(seed)
        sp = spans(stmt)
        at = code(sp)
        i = r.choice(at)
        kind, text = sp[i]
        op = r.choice(["delete", "duplicate", "swap", "quote", "case", "join", "insert", "insert", "unicode"])
        if op == "delete":
            sp[i] = ("space", " ")
        elif op == "duplicate":
            sp[i] = (kind, f"{text} {text}")
        elif op == "swap":
            j = at[min(at.index(i) + 1, len(at) - 1)]
            sp[i], sp[j] = sp[j], sp[i]
        elif op == "quote":
            sp[i] = ("quoted", quote_as(text, r.choice(['"', "`", "[", "'"])))
        elif op == "case":
            quoted = [j for j in at if sp[j][0] in ("string", "quoted")] or [i]
            j = r.choice(quoted)
            t = sp[j][1]
            sp[j] = (sp[j][0], "".join(c.swapcase() if r.random() < 0.5 else c for c in t))
        elif op == "join":
            gaps = [j for j in range(1, len(sp) - 1) if sp[j][0] == "space"] or [i]
            sp[r.choice(gaps)] = ("op", "")
        elif op == "insert":
            sp.insert(i + r.randint(0, 1), ("word", f" {r.choice(KEYWORDS)} "))
        else:
            gaps = [j for j in range(len(sp)) if sp[j][0] == "space"] or [i]
            sp[r.choice(gaps)] = ("word", r.choice(UNICODE_SPACES))
        return joined(sp)

    return fn


def random_tokens(rng: random.Random, full: bool, count: int | None = None) -> list[Mutation]:
    """Random token edits of the shipped statements (one to three per mutation), each from a seed
    drawn from ``rng``: the label names the seed, so a failure can be replayed."""
    out = []
    for _ in range(count if count is not None else (5000 if full else 400)):
        sync = rng.random() < 0.3
        stmt = rng.choice(statements_of(sync))
        name = name_of(stmt)
        seeds = [rng.randrange(2**32) for _ in range(rng.choice([1, 1, 2, 3]))]
        edits = tuple(on(name, token_edit(s)) for s in seeds)
        out.append(Mutation("random tokens", f"{name}: token edits {seeds}", edits, (), sync))
    return out


def versions(rng: random.Random, full: bool) -> list[Mutation]:
    """Version 1 files (the shipped statements without ``spent``), laid out otherwise or with a part
    of version 2; files whose ``schema_version`` is another text of 2, another number, or one
    version's text on the other's schema. An accepted file is held to the version it is accepted as."""
    out = []
    k = "versions"
    for stmt in version_statements(1):
        seed = rng.randrange(2**32)
        name = name_of(stmt)
        out.append(Mutation(k, f"v1 {name}: all #{seed}", (on(name, relayout(seed, "all")),), (), False, True, 1))
    spent = [s for s in SHIPPED if s not in version_statements(1)]
    out.append(Mutation(k, "v1 with spent", (add(*spent),), version=1))
    out.append(Mutation(k, "v1 with the spent table alone", (add(spent[0]),), version=1))
    out.append(Mutation(k, "v1 with sync objects", (), (), True, True, 1))
    for meta in ("02", "2 ", " 2", "+2", "2.0", "3", "0", "1", "\uff12", "\u0662", "2\x00", 2, 2.0, b"2", None):
        out.append(Mutation(k, f"schema_version {meta!r}", meta=meta if meta is not None else "2"))
    out.append(Mutation(k, "v1 saying 2", meta="2", version=1))
    return pick(rng, out, 20, full)


def file_header(rng: random.Random, full: bool) -> list[Mutation]:
    """The file's own settings: text encoding (a library's is UTF-8), page size, auto-vacuum,
    user_version and application_id (which change what is stored where, not what is stored)."""
    settings = [
        "PRAGMA encoding = 'UTF-16le';",
        "PRAGMA encoding = 'UTF-16be';",
        "PRAGMA page_size = 512;",
        "PRAGMA page_size = 65536;",
        "PRAGMA auto_vacuum = FULL;",
        "PRAGMA auto_vacuum = INCREMENTAL;",
        "PRAGMA user_version = 7;",
        "PRAGMA application_id = 1414678853;",
    ]
    out = [Mutation("file header", sql, pragmas=sql, sync=sync) for sql in settings for sync in (False, True)]
    return pick(rng, out, 16, full)


def reorder(seed: int) -> MasterEdit:
    """A row edit: ``sqlite_master``'s rows written again in another order (each table's block —
    the table, then its indexes — in a shuffled place, triggers shuffled after all of them)."""

    def edit(conn: sqlite3.Connection) -> None:
        r = random.Random(seed)
        rows = conn.execute("SELECT type, name, tbl_name, rootpage, sql FROM sqlite_master").fetchall()
        blocks = sorted({row[2] for row in rows})
        r.shuffle(blocks)
        place = {t: i for i, t in enumerate(blocks)}
        noise = {row[1]: r.random() for row in rows}
        order = sorted(rows, key=lambda row: (row[0] == "trigger", place[row[2]] if row[0] != "trigger" else 0,
                                               row[0] != "table", noise[row[1]]))  # fmt: skip
        conn.execute("DELETE FROM sqlite_master")
        conn.executemany("INSERT INTO sqlite_master VALUES (?, ?, ?, ?, ?)", order)

    return edit


def row_order(rng: random.Random, full: bool) -> list[Mutation]:
    """``sqlite_master``'s rows in another order (what a VACUUM or another writer may leave)."""
    out = []
    for _ in range(20 if full else 6):
        seed = rng.randrange(2**32)
        sync = rng.random() < 0.5
        out.append(Mutation("row order", f"rows reordered #{seed}", (), (reorder(seed),), sync))
    return out


CLASSES: tuple[Gen, ...] = (
    layout,
    spelling,
    namespace,
    root_pages,
    quoting,
    unicode_spaces,
    lookalikes,
    constraints,
    types,
    collations,
    generated,
    table_options,
    index_changes,
    virtual_tables,
    trigger_set,
    views,
    trigger_edits,
    random_tokens,
    versions,
    file_header,
    row_order,
)


def mutations(seed: int, full: bool) -> list[Mutation]:
    """Every class's mutations for one run (all of them in the slow tier), in class order."""
    rng = random.Random(seed)
    return [m for gen in CLASSES for m in gen(rng, full)]


def combinations(seed: int, pool: list[Mutation], count: int) -> list[Mutation]:
    """``count`` random combinations of one to three mutations of ``pool`` (layout ones left out:
    they are proven alone)."""
    rng = random.Random(seed)
    pool = [m for m in pool if not m.neutral]
    return [combine(rng.sample(pool, rng.randint(1, 3))) for _ in range(count)]


# ---------------------------------------------------------------- the tests


def report(run: Run, tier: str, capsys: pytest.CaptureFixture[str]) -> None:
    """Print the run's line of counts past pytest's capture, then fail on any broken promise."""
    with capsys.disabled():
        print("\n" + run.line(tier))
    assert not run.failures, f"{len(run.failures)} broken promise(s):\n" + "\n".join(run.failures[:20])


def test_the_reference_behaves_as_a_library():
    """The oracle's own check: the shipped schema's record is what the code expects — the tamper
    triggers fired, the upsert counted, ``id`` is the rowid, a duplicate and a NULL are refused — and
    it differs with and without the sync objects (the script reads ``misses_touched``)."""
    steps, _ = reference(False)
    assert isinstance(steps, tuple)
    said = list(zip(SCRIPT, steps, strict=True))
    verified = [r for (sql, _), r in said if "LIKE 'verified:%' ORDER" in sql]
    assert any(r[1] for r in verified)  # rows: the tamper triggers wrote 'verified:dirty'
    counts = [r for (sql, _), r in said if sql.startswith("SELECT id, typeof(id), count")][0]
    assert counts[1][0][2] == ("int", 4)  # the first miss, four times (once keyed by text: the same to INTEGER)
    by_params = {params: r for (sql, params), r in said if sql == PUT_MISS}
    assert by_params[("abc", 8, 1, 6, 0, 0, 0, 1, 0, 0, 0, 1, 1)][1] == "IntegrityError"  # datatype mismatch
    assert {r[1] for (sql, _), r in said if sql == PUT_TILE and r[0] == "error"} == {"IntegrityError"}
    assert reference(False) != reference(True)


def test_the_oracle_sees_what_the_proof_must_refuse():
    """The oracle is not blind: each of these behaves otherwise on the script."""
    seen = [
        Mutation("t", "RAISE(IGNORE) on tiles", (add(trigger_sql("d", "BEFORE", "INSERT", "tiles", BODIES[0])),)),
        Mutation("t", "NOCASE key", (column("meta", "key", _append(" COLLATE NOCASE")),)),
        Mutation("t", "RTRIM board", (column("spent", "board", _append(" COLLATE RTRIM")),)),
        Mutation("t", "INT id", (column("misses", "id", _replace("INTEGER", "INT")),)),
        Mutation("t", "WITHOUT ROWID", (on("manifests", table_suffix("WITHOUT ROWID")),)),
        Mutation("t", "no tamper trigger", (drop("tiles_deleted"),)),
        Mutation("t", "partial unique", (add("CREATE UNIQUE INDEX x ON tiles (n) WHERE n = 7;"),)),
        Mutation("t", "type", (column("tiles", "n", _retype("TEXT")),)),
    ]
    for m in seen:
        image = build(m)
        assert image is not None and loads(image), m.label
        assert behaviour(image) != reference(False), m.label


def test_schema_fuzz(capsys):
    """The default tier: every class, a few hundred mutations from ``SEED``."""
    run = fuzz(mutations(SEED, full=False))
    report(run, "default", capsys)


@pytest.mark.slow
def test_schema_fuzz_slow(capsys):
    """The slow tier: every enumerated mutation, thousands of random token edits, and random
    combinations of one to three mutations."""
    everything = mutations(SEED, full=True)
    run = fuzz([*everything, *combinations(SEED + 1, everything, 3000)])
    report(run, "slow", capsys)
