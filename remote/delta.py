"""Deltas: push and pull in O(new rows) (issue 12; FORMAT §11).

A *delta* is a small library file (same schema, ``meta`` kind ``delta``) holding the rows one
push added on top of the remote's state: new ``tiles``, ``manifests`` and ``spent`` rows, and every
``misses`` row that is new or changed. HEAD names a full *base* snapshot and the ordered list of
deltas applied on top of it; the remote's content is their union. Deltas live beside snapshots
(``snapshots/<sha>.sqlite``, content-addressed like them); the ``delta`` kind in their ``meta``
keeps a fallback from mistaking one for a base.

What a push must send is read from the local file alone:
- ``remote_mark:<url>`` in ``meta``: the largest tiles, manifests and spent rowids and misses id
  known to be on that remote, set when a push lands and when a pull finds nothing unpushed
  locally (a mark written before the spent table has no spent entry: it reads as 0);
- ``misses_touched``: ids of misses rows updated since the last push (a trigger fills it;
  ``misses`` rows are counters and flags that change in place). It is one table for the file:
  with several remotes, an update reaches the one pushed next (and every later full snapshot).
Rows past the mark that came from the remote itself are sent again at worst (harmless: a merge
is a union) — only when a pull happened while a push was pending.

Compaction: when HEAD has ``MAX_DELTAS`` deltas, or their bytes reach ``COMPACT_FRACTION`` of the
base (and ``COMPACT_MIN_BYTES``), the next push writes a full snapshot instead.
"""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass
from pathlib import Path

from tilelib.db import atomic, connect, outside, statements
from tilelib.merge import MANIFEST_COLUMNS, MISS_COLUMNS, SPENT_COLUMNS
from tilelib.schema import SCHEMA_VERSION, SYNC_SCHEMA, version_statements
from tilelib.spent import has_table as has_spent
from tilelib.store import TILE_COLUMNS, Library

BASE, DELTA = "base", "delta"  # the two kinds of file a remote holds (a delta's meta kind)
MAX_DELTAS = 16
COMPACT_FRACTION = 0.25
COMPACT_MIN_BYTES = 4 << 20  # below this, deltas are not worth compacting for their size alone


@dataclass(frozen=True)
class Mark:
    """Largest tiles / manifests / spent rowids and misses id known to be on a remote."""

    tiles: int
    manifests: int
    misses: int
    spent: int = 0


def ensure_sync_schema(conn: sqlite3.Connection) -> None:
    """The misses_touched table and its trigger (files made before deltas lack them)."""
    with atomic(conn):
        for stmt in statements(SYNC_SCHEMA):
            conn.execute(stmt)


def read_mark(lib: Library, url: str) -> Mark | None:
    row = lib.conn.execute("SELECT value FROM meta WHERE key = ?", (f"remote_mark:{url}",)).fetchone()
    if row is None:
        return None
    try:
        vals = [int(v) for v in json.loads(row[0])]
        return Mark(*vals) if len(vals) in (3, 4) else None
    except (ValueError, TypeError, OverflowError):  # "[1e999, 0, 0]": json reads inf
        return None


def current_mark(conn: sqlite3.Connection) -> Mark:
    q = lambda sql: conn.execute(sql).fetchone()[0]  # noqa: E731
    return Mark(
        q("SELECT coalesce(max(rowid), 0) FROM tiles"),
        q("SELECT coalesce(max(rowid), 0) FROM manifests"),
        q("SELECT coalesce(max(id), 0) FROM misses"),
        q("SELECT coalesce(max(rowid), 0) FROM spent") if has_spent(conn) else 0,
    )


def write_mark(conn: sqlite3.Connection, url: str, mark: Mark, *, clear_touched: bool) -> None:
    """Record that rows up to ``mark`` are on the remote (and, after a push, that no misses row is
    changed since)."""
    with atomic(conn):
        conn.execute(
            "INSERT OR REPLACE INTO meta VALUES (?, ?)",
            (f"remote_mark:{url}", json.dumps([mark.tiles, mark.manifests, mark.misses, mark.spent])),
        )
        if clear_touched and has_touched(conn):
            conn.execute("DELETE FROM misses_touched")


def has_touched(conn: sqlite3.Connection) -> bool:
    return conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'misses_touched'").fetchone() is not None


def pending(lib: Library, mark: Mark) -> bool:
    """Whether a delta on top of ``mark`` would carry anything."""
    q = lib.conn.execute
    touched = " OR EXISTS (SELECT 1 FROM misses_touched)" if has_touched(lib.conn) else ""
    spent = f" OR EXISTS (SELECT 1 FROM spent WHERE rowid > {int(mark.spent)})" if has_spent(lib.conn) else ""
    return bool(
        q(
            "SELECT EXISTS (SELECT 1 FROM tiles WHERE rowid > ?) OR EXISTS (SELECT 1 FROM manifests "
            "WHERE rowid > ?) OR EXISTS (SELECT 1 FROM misses WHERE id > ?)" + touched + spent,
            (mark.tiles, mark.manifests, mark.misses),
        ).fetchone()[0]
    )


def make_delta(lib: Library, mark: Mark, workdir: Path) -> tuple[Path, Mark, int, int]:
    """Write the rows past ``mark`` (and touched misses) to a new delta file in ``workdir``.
    Returns (path, the mark it reaches, tiles in it, misses in it)."""
    out = workdir / "delta.sqlite"
    out.unlink(missing_ok=True)
    conn = connect(out)
    try:
        with atomic(conn):
            for stmt in version_statements(SCHEMA_VERSION):
                conn.execute(stmt)
            conn.execute("INSERT INTO meta VALUES ('schema_version', ?)", (str(SCHEMA_VERSION),))
            conn.execute("INSERT INTO meta VALUES ('kind', ?)", (DELTA,))
    finally:
        conn.close()
    src = lib.conn
    outside(src, "a delta (ATTACH)")
    reach = current_mark(src)
    src.execute("ATTACH DATABASE ? AS delta", (str(out),))
    try:
        with atomic(src):
            tc = ", ".join(TILE_COLUMNS)
            tiles = src.execute(
                f"INSERT INTO delta.tiles ({tc}) SELECT {tc} FROM main.tiles "
                "WHERE rowid > ? AND rowid <= ? ORDER BY rowid",
                (mark.tiles, reach.tiles),
            ).rowcount
            mc = ", ".join(MANIFEST_COLUMNS)
            src.execute(
                f"INSERT INTO delta.manifests ({mc}) SELECT {mc} FROM main.manifests WHERE rowid > ? AND rowid <= ?",
                (mark.manifests, reach.manifests),
            )
            xc = ", ".join(f'"{c}"' for c in MISS_COLUMNS)
            touched = " OR id IN (SELECT id FROM main.misses_touched)" if has_touched(src) else ""
            misses = src.execute(
                f"INSERT INTO delta.misses ({xc}) SELECT {xc} FROM main.misses "
                f"WHERE (id > ? AND id <= ?){touched} ORDER BY id",
                (mark.misses, reach.misses),
            ).rowcount
            if has_spent(src):
                sc = ", ".join(SPENT_COLUMNS)
                src.execute(
                    f"INSERT INTO delta.spent ({sc}) SELECT {sc} FROM main.spent "
                    "WHERE rowid > ? AND rowid <= ? ORDER BY rowid",
                    (mark.spent, reach.spent),
                )
    finally:
        src.execute("DETACH DATABASE delta")
    return out, reach, tiles, misses


def kind_of(conn: sqlite3.Connection) -> str:
    """What a fetched library file is: DELTA when its meta says ``kind`` = ``delta`` (FORMAT §11),
    else BASE (a full snapshot). ``remote.snapshot.fetch_verified`` holds every file to the kind
    its caller named."""
    row = conn.execute("SELECT value FROM meta WHERE key = 'kind'").fetchone()
    return DELTA if row is not None and row[0] == DELTA else BASE


__all__ = [
    "BASE",
    "COMPACT_FRACTION",
    "COMPACT_MIN_BYTES",
    "DELTA",
    "MAX_DELTAS",
    "Mark",
    "current_mark",
    "ensure_sync_schema",
    "kind_of",
    "make_delta",
    "pending",
    "read_mark",
    "write_mark",
]
