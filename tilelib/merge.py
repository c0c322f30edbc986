"""Merge another library file into an open library: the union that makes pull/push lose no row (FORMAT §11).

Rows are content-addressed, so the union is a join: merging is commutative,
associative and idempotent, and every replica that has seen the same files
holds the same rows whatever the order. Per table:

- ``tiles``: ``INSERT OR IGNORE`` on the hash. New rows pass ``tilelib.audit.check_stored_rows``
  (the content hash, then the whole-tile checks of ``tiles library verify``) before anything is
  written: ``verify="new"`` (default) checks every row the local file lacks, ``verify="sample"``
  256 random rows of the source, ``verify="none"`` none (for a source ``remote.snapshot`` has
  already proven whole). One bad row refuses the whole merge, naming it, nothing written.
- ``manifests``: ``INSERT OR IGNORE`` on the day; a day both sides hold with
  different json keeps the local one and is counted in ``manifest_conflicts`` (the source's rows
  of those days are ``conflicting``: a push refuses a fresh board that lost its day, ``remote.sync``).
- ``misses``: a union on the UNIQUE constraint key. A key only one side has is
  copied (ids are local, so not copied). For a key both have: ``count`` and
  ``last_seen`` take the MAX, ``first_seen`` the MIN, ``nofit`` the MAX (1 wins),
  ``tile`` and ``packing`` keep the local value and take the other only when
  the local one is NULL. MAX, not SUM, for counts: a sum would grow each time the
  same snapshot is pulled again, and the merge must be idempotent.
- ``spent``: ``INSERT OR IGNORE`` on (solution, board), a plain union (``tilelib.spent``); a source
  made before the table existed has none to give.
- ``meta`` is never merged: ``library_id`` and sync bookkeeping are per file.

A source whose schema is not exactly the one this code ships for its version is refused before a
row is read (``tilelib.schema``: SchemaMismatch naming the object; SchemaTooNew for a newer version,
NotALibrary for a file that is no library), and only the known tables' named columns are read. Everything happens in one
transaction: a merge is all or nothing.
"""

from __future__ import annotations

import random
import sqlite3
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tilelib.audit import check_stored_rows
from tilelib.db import atomic, file_uri, outside
from tilelib.errors import CorruptLibrary, LibraryError, RowsNotStored
from tilelib.schema import check_schema
from tilelib.spent import has_table as has_spent
from tilelib.store import TILE_COLUMNS, Library

MISS_KEY = ("n", "top", "right", "bottom", "left", "top_mask", "right_mask", "bottom_mask", "left_mask")
MISS_COLUMNS = (*MISS_KEY, "side_mask", "packing", "first_seen", "last_seen", "count", "nofit", "tile")
MANIFEST_COLUMNS = ("day", "seed_commit", "json", "created")
SPENT_COLUMNS = ("solution", "board", "n", "day", "created")
SAMPLE_SIZE = 256
MERGE_CACHE_KIB = -262144  # negative: KiB, so 256 MiB
ALIAS = "merge_src"
VERIFY_BATCH = 4096  # rows the merge's row check reads and checks at a time


@dataclass(frozen=True)
class MergeStats:
    """What a merge added. ``local_only`` says whether the result holds anything the source lacks."""

    tiles_added: int
    manifests_added: int
    manifest_conflicts: int
    misses_added: int
    misses_updated: int
    spent_added: int
    rows_verified: int
    source_tiles: int
    source_fingerprint: tuple[int, ...]
    local_only: bool
    conflicting: tuple = ()  # the source's (day, seed_commit, json, created) of days both hold differently


def fingerprint(conn: sqlite3.Connection, schema: str = "main") -> list[int]:
    """Aggregates that every allowed change to a library strictly increases.

    Libraries only grow: tiles and manifests are append-only, and a misses row
    only gains (count, last_seen, nofit, tile up; first_seen down). So if A ⊇ B
    (A has merged B) then A == B exactly when their fingerprints are equal.
    """
    q = lambda sql: conn.execute(sql).fetchone()  # noqa: E731
    tiles = q(f"SELECT count(*) FROM {schema}.tiles")[0]
    manifests = q(f"SELECT count(*) FROM {schema}.manifests")[0]
    m = q(
        f"SELECT count(*), total(count), total(nofit), count(tile), total(last_seen - first_seen) FROM {schema}.misses"
    )
    spent = q(f"SELECT count(*) FROM {schema}.spent")[0] if has_spent(conn, schema) else 0
    return [tiles, manifests, *(int(x) for x in m), spent]


def verify_tiles(conn: sqlite3.Connection, verify: str, label: str, schema: str = ALIAS, only_new: bool = True) -> int:
    """Put tile rows of ``schema`` (only those ``main`` lacks when ``only_new``) through
    ``tilelib.audit.check_stored_rows`` — hash, blobs, edges, rules, canonical form, features —
    raising at the first bad one, so the whole merge is refused; return how many were checked."""
    if verify == "none":
        return 0
    cols = ", ".join(f"s.{c}" for c in TILE_COLUMNS)
    sel = f"SELECT {cols} FROM {schema}.tiles AS s"
    new = " NOT EXISTS (SELECT 1 FROM main.tiles AS m WHERE m.hash = s.hash)" if only_new else ""
    if verify == "new":
        cur = conn.execute(sel + (" WHERE" + new if new else ""))
    elif verify == "sample":
        hi = conn.execute(f"SELECT max(rowid) FROM {schema}.tiles").fetchone()[0] or 0
        picks = sorted({random.SystemRandom().randint(1, hi) for _ in range(SAMPLE_SIZE)}) if hi else []
        cur = conn.execute(sel + f" WHERE s.rowid IN ({','.join(map(str, picks)) or 'NULL'})")
    else:
        raise ValueError(f"verify must be 'new', 'sample' or 'none', not {verify!r}")
    checked = 0
    while rows := cur.fetchmany(VERIFY_BATCH):
        check_stored_rows(rows, lambda _: f"merging {label}: a tile")
        checked += len(rows)
    return checked


def _merge_rows(conn: sqlite3.Connection) -> tuple[int, int, tuple[tuple[Any, ...], ...], int, int, int]:
    """The SQL of the union; returns (tiles, manifests, manifest conflicts (the source's rows of them),
    misses added, misses updated, spent added)."""
    cols = ", ".join(TILE_COLUMNS)
    tiles = conn.execute(f"INSERT OR IGNORE INTO main.tiles ({cols}) SELECT {cols} FROM {ALIAS}.tiles").rowcount
    conflicts = tuple(
        conn.execute(
            f"SELECT s.day, s.seed_commit, s.json, s.created FROM {ALIAS}.manifests AS s JOIN main.manifests AS m "
            f"ON m.day = s.day WHERE m.json IS NOT s.json OR m.seed_commit IS NOT s.seed_commit ORDER BY s.day"
        )
    )
    mcols = ", ".join(MANIFEST_COLUMNS)
    manifests = conn.execute(
        f"INSERT OR IGNORE INTO main.manifests ({mcols}) SELECT {mcols} FROM {ALIAS}.manifests"
    ).rowcount
    on = " AND ".join(f'm."{k}" = s."{k}"' for k in MISS_KEY)
    updated = conn.execute(
        f"""UPDATE main.misses AS m SET
              count = max(m.count, s.count),
              last_seen = max(m.last_seen, s.last_seen),
              first_seen = min(m.first_seen, s.first_seen),
              nofit = max(m.nofit, s.nofit),
              tile = coalesce(m.tile, s.tile),
              packing = coalesce(m.packing, s.packing)
            FROM {ALIAS}.misses AS s
            WHERE {on} AND (s.count > m.count OR s.last_seen > m.last_seen OR s.first_seen < m.first_seen
                  OR s.nofit > m.nofit OR (m.tile IS NULL AND s.tile IS NOT NULL)
                  OR (m.packing IS NULL AND s.packing IS NOT NULL))"""
    ).rowcount
    mc = ", ".join(f'"{c}"' for c in MISS_COLUMNS)
    added = conn.execute(f"INSERT OR IGNORE INTO main.misses ({mc}) SELECT {mc} FROM {ALIAS}.misses").rowcount
    spent = 0
    if has_spent(conn, ALIAS):
        sc = ", ".join(SPENT_COLUMNS)
        spent = conn.execute(f"INSERT OR IGNORE INTO main.spent ({sc}) SELECT {sc} FROM {ALIAS}.spent").rowcount
    return tiles, manifests, conflicts, added, updated, spent


# A source row of each table the merge must leave in main (misses: by their key), or nothing.
_UNSTORED = {
    "tile": f"SELECT s.hash FROM {ALIAS}.tiles AS s WHERE NOT EXISTS "
    "(SELECT 1 FROM main.tiles AS m WHERE m.hash = s.hash) LIMIT 1",
    "manifest": f"SELECT s.day FROM {ALIAS}.manifests AS s WHERE NOT EXISTS "
    "(SELECT 1 FROM main.manifests AS m WHERE m.day = s.day) LIMIT 1",
    "miss": f"SELECT s.id FROM {ALIAS}.misses AS s WHERE NOT EXISTS (SELECT 1 FROM main.misses AS m WHERE "
    + " AND ".join(f'm."{k}" = s."{k}"' for k in MISS_KEY)
    + ") LIMIT 1",
    "spent row of solution": f"SELECT s.solution FROM {ALIAS}.spent AS s WHERE NOT EXISTS (SELECT 1 FROM "
    "main.spent AS m WHERE m.solution = s.solution AND m.board = s.board) LIMIT 1",
}


def _check_stored(conn: sqlite3.Connection, label: str) -> None:
    """Every row of the source is in main after the union: RowsNotStored naming the first that is not
    (the counts a merge reports are then the rows it really added)."""
    for what, sql in _UNSTORED.items():
        if what.startswith("spent") and not has_spent(conn, ALIAS):
            continue
        row = conn.execute(sql).fetchone()
        if row is not None:
            raise RowsNotStored(
                f"merging {label}: {what} {row[0]} was merged and is not stored; refusing the whole merge"
            )


def merge_file(lib: Library, source: str | Path, *, verify: str = "new") -> MergeStats:
    """Merge the library file ``source`` into ``lib`` in one transaction; see the module docstring."""
    conn = lib.conn
    src = Path(source)
    label = str(src)
    if not src.is_file():
        raise LibraryError(f"no library file at {label} to merge")
    outside(conn, "a merge (ATTACH)")
    try:
        conn.execute(f"ATTACH DATABASE ? AS {ALIAS}", (file_uri(src, "ro"),))
    except sqlite3.DatabaseError as err:
        raise CorruptLibrary(f"cannot open {label}: {err}") from err
    old_cache = conn.execute("PRAGMA cache_size").fetchone()[0]
    # Index inserts land on random pages: a 256 MiB page cache halves the merge time (bench_sync).
    conn.execute(f"PRAGMA cache_size = {MERGE_CACHE_KIB}")
    try:
        check_schema(conn, label, ALIAS)
        with atomic(conn):
            checked = verify_tiles(conn, verify, label)
            tiles, manifests, conflicts, added, updated, spent = _merge_rows(conn)
            _check_stored(conn, label)
            source_fp = tuple(fingerprint(conn, ALIAS))
            local_only = tuple(fingerprint(conn, "main")) != source_fp
            source_tiles = conn.execute(f"SELECT count(*) FROM {ALIAS}.tiles").fetchone()[0]
    except sqlite3.DatabaseError as err:
        raise CorruptLibrary(f"merging {label} failed: {err}") from err
    finally:
        conn.execute(f"DETACH DATABASE {ALIAS}")
        conn.execute(f"PRAGMA cache_size = {int(old_cache)}")
    return MergeStats(
        tiles, manifests, len(conflicts), added, updated, spent, checked, source_tiles, source_fp, local_only, conflicts
    )
