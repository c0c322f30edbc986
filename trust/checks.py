"""Checks that decide whether a library file may be used or published (issue 11: nothing corrupt leaves a machine).

Six checks, each naming the first offending object or row:

- **schema** — ``tilelib.schema.check_schema``: every table, index, trigger and view equals the
  schema the code ships for the file's version (an extra trigger can drop rows, a view can shadow a
  table). ``SchemaMismatch`` names the object.
- **pages** — ``PRAGMA quick_check`` (page and b-tree structure, ~20x faster)
  or ``PRAGMA integrity_check`` (also cross-checks every index against its
  table: what FORMAT §11 asks of a pulled snapshot). ``CorruptLibrary``.
- **rows** — every ``tiles`` row through ``tilelib.audit.check_stored_rows``: re-hashed
  (``sha256(n|solution|givens|seam_mask)`` must equal its key), then the same whole-tile checks
  as ``tiles library verify`` (blob lengths, edge columns, rules, canonical form, features: a
  right hash proves nothing about the rest of the row); ``since`` limits it to rows with a larger
  rowid, so a check can cost what changed since the last verified one. ``HashMismatch`` or
  ``CorruptLibrary`` names the hash and rowid.
- **manifests** — every stored manifest parses with the referee's parser (the
  one manifest gate), and its ``day`` and ``seed_commit`` equal the row's
  columns (the commitment the row is filed under). ``CorruptLibrary`` names
  the day.
- **spent** — every ``spent`` row has the shape FORMAT §5 gives it (hex solution and board, a
  held side n, an ISO day): one SQL pass over the table, whatever the watermark.
- **misses** — every ``misses`` row has a miss's shape (``MISS_SHAPE``: a tile size, values
  inside their masks, a consistent side_mask, count, nofit, tile): one SQL pass.

``check_file`` runs them (pages first, then schema, rows, manifests, spent, misses) on a path (read-only) and returns a
``CheckReport`` with counts and seconds; every failure is a ``CorruptLibrary``
(exit 3). ``verify_library`` (``tiles library verify``) checks every row with
``tilelib.audit.bad_rows``, every misses row's shape and every stored manifest, reporting them all.

These checks live in the referee package, above ``tilelib``, because a stored manifest is checked
with the one manifest parser, ``referee.manifest`` (imported when a manifest is checked: not every
caller reads one).
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

from tilelib.audit import bad_rows, check_stored_rows
from tilelib.db import atomic, connect
from tilelib.errors import CorruptLibrary, LibraryError
from tilelib.schema import check_schema
from tilelib.spent import has_table as has_spent
from tilelib.store import SQLITE_MAGIC, TILE_COLUMNS, Library

INTEGRITY_MODES = ("quick", "full")


class Watermark(NamedTuple):
    """How far a passing check reached, by rowid, in each table it checks row by row: a later check
    may start past it (``read_watermark``, ``mark_verified``)."""

    tiles: int = 0
    manifests: int = 0
    spent: int = 0


NOTHING = Watermark()


@dataclass
class CheckReport:
    """What a passing check covered: rows and manifests checked, and seconds per check."""

    integrity: str
    rows_checked: int = 0
    rows_total: int = 0
    manifests_checked: int = 0
    spent_checked: int = 0
    # how far the check reached, by rowid in each table: what ``mark_verified`` records for the next
    reached: Watermark = NOTHING
    seconds: dict = field(default_factory=dict)

    def line(self) -> str:
        return (
            f"{self.integrity} check ok, {self.rows_checked:,} of {self.rows_total:,} rows audited, "
            f"{self.manifests_checked} manifest(s) parsed"
        )


def check_pages(conn: sqlite3.Connection, label: str, integrity: str = "quick") -> None:
    """``PRAGMA quick_check`` or ``integrity_check``; CorruptLibrary with SQLite's first complaint."""
    if integrity not in INTEGRITY_MODES:
        raise ValueError(f"integrity must be one of {INTEGRITY_MODES}, not {integrity!r}")
    pragma = "quick_check" if integrity == "quick" else "integrity_check"
    try:
        res = [r[0] for r in conn.execute(f"PRAGMA {pragma}").fetchall()]
    except sqlite3.DatabaseError as err:
        raise CorruptLibrary(f"{label} is damaged: PRAGMA {pragma} fails ({err})") from err
    if res != ["ok"]:
        raise CorruptLibrary(f"{label} is damaged: PRAGMA {pragma} says {res[0]}")


def check_rows(conn: sqlite3.Connection, label: str, since: int = 0) -> tuple[int, int]:
    """Every tiles row with rowid > ``since`` through ``tilelib.audit.check_stored_rows`` (its hash, its
    blobs, edges, rules, canonical form and features); HashMismatch/CorruptLibrary at the first bad
    one, naming it. Returns (rows checked, largest rowid seen)."""
    cur = conn.execute(f"SELECT rowid, {', '.join(TILE_COLUMNS)} FROM tiles WHERE rowid > ? ORDER BY rowid", (since,))
    checked, top = 0, since
    try:
        while rows := cur.fetchmany(8192):
            check_stored_rows([r[1:] for r in rows], lambda i: f"{label}: tile row {rows[i][0]}")  # noqa: B023
            checked += len(rows)
            top = rows[-1][0]
    except sqlite3.DatabaseError as err:
        raise CorruptLibrary(f"{label} is damaged: reading tiles fails ({err})") from err
    return checked, top


def manifest_row_problem(day: str, seed_commit: str, text) -> str | None:
    """Why a stored manifests row is bad, or None: it must parse (the referee's gate) and be filed under
    its own day and seed commitment."""
    from referee.manifest import from_json  # loaded when a manifest is checked (module docstring)
    from tilelib.errors import BadInput

    if not isinstance(text, str):
        return f"its json column holds a {type(text).__name__}, not text"
    try:
        m = from_json(text)
    except BadInput as err:
        return str(err)
    if m.day != day:
        return f"it is filed under day {day} but its manifest says {m.day}"
    if m.seed_commit != seed_commit:
        return "its seed_commit column differs from the manifest's seed_commit"
    return None


def check_manifests(conn: sqlite3.Connection, label: str, since: int = 0) -> tuple[int, int]:
    """Parse every manifests row with rowid > ``since``; CorruptLibrary naming the first bad day.
    Returns (rows checked, largest rowid seen)."""
    checked, top = 0, since
    try:
        rows = conn.execute(
            "SELECT rowid, day, seed_commit, json FROM manifests WHERE rowid > ? ORDER BY rowid", (since,)
        ).fetchall()
    except sqlite3.DatabaseError as err:
        raise CorruptLibrary(f"{label} is damaged: reading manifests fails ({err})") from err
    for rowid, day, commit, text in rows:
        why = manifest_row_problem(day, commit, text)
        if why is not None:
            raise CorruptLibrary(f"{label}: stored manifest of {day} is damaged: {why}")
        checked, top = checked + 1, rowid
    return checked, top


_HEX = "length({c}) = 64 AND NOT {c} GLOB '*[^0-9a-f]*'"
# FORMAT §5's shape of a spent row, as one SQL condition (the publish check and ``trust.repair``)
SPENT_SHAPE = (
    f"{_HEX.format(c='solution')} AND {_HEX.format(c='board')} AND n IN (10, 12, 14, 16) AND "
    "typeof(day) = 'text' AND day GLOB '[0-9][0-9][0-9][0-9]-[0-1][0-9]-[0-3][0-9]'"
)
_SPENT_BAD = f"SELECT rowid, solution, board, n, day FROM spent WHERE rowid > ? AND NOT ({SPENT_SHAPE}) LIMIT 1"
_SIDES = ("top", "right", "bottom", "left")
_MISS_INTS = ("n", "side_mask", *_SIDES, *(f"{s}_mask" for s in _SIDES), "first_seen", "last_seen", "count", "nofit")
# FORMAT §5's and §8's shape of a misses row, as one SQL condition (the checks and ``trust.repair``):
# integers where integers belong, n a tile size, each side's fixed cells within n bits and its value
# bits within its mask, side_mask the sides with a fixed cell, a count of at least 1, nofit 0 or 1,
# first_seen <= last_seen, tile NULL or a content hash, packing NULL or text.
MISS_SHAPE = " AND ".join(
    [
        *(f"typeof({c}) = 'integer'" for c in _MISS_INTS),
        "n IN (6, 8, 10, 12, 14, 16)",
        *(f"{s}_mask BETWEEN 0 AND (1 << n) - 1 AND {s} >= 0 AND ({s} & ~{s}_mask) = 0" for s in _SIDES),
        "side_mask = ((top_mask <> 0) | ((right_mask <> 0) << 1) | ((bottom_mask <> 0) << 2) "
        "| ((left_mask <> 0) << 3))",
        "count >= 1 AND nofit IN (0, 1) AND first_seen <= last_seen",
        f"(tile IS NULL OR (typeof(tile) = 'text' AND {_HEX.format(c='tile')}))",
        "(packing IS NULL OR typeof(packing) = 'text')",
    ]
)
_MISS_BAD = (
    f"SELECT rowid, n, top_mask, right_mask, bottom_mask, left_mask FROM misses WHERE NOT ({MISS_SHAPE}) LIMIT 1"
)


def check_spent(conn: sqlite3.Connection, label: str, since: int = 0) -> tuple[int, int]:
    """Every spent row with rowid > ``since`` well formed; CorruptLibrary naming the first bad one.
    Returns (rows checked, largest rowid seen)."""
    if not has_spent(conn):
        return 0, since
    try:
        bad = conn.execute(_SPENT_BAD, (since,)).fetchone()
        total, top = conn.execute("SELECT count(*), max(rowid) FROM spent WHERE rowid > ?", (since,)).fetchone()
    except sqlite3.DatabaseError as err:
        raise CorruptLibrary(f"{label} is damaged: reading spent fails ({err})") from err
    if bad is not None:
        raise CorruptLibrary(
            f"{label}: spent row {bad[0]} is malformed (solution {bad[1]!r}, board {bad[2]!r}, "
            f"n {bad[3]!r}, day {bad[4]!r})"
        )
    return total, top if top is not None else since


def check_misses(conn: sqlite3.Connection, label: str) -> None:
    """Every misses row of ``MISS_SHAPE``; CorruptLibrary naming the first that is not."""
    try:
        bad = conn.execute(_MISS_BAD).fetchone()
    except sqlite3.DatabaseError as err:
        raise CorruptLibrary(f"{label} is damaged: reading misses fails ({err})") from err
    if bad is not None:
        raise CorruptLibrary(
            f"{label}: misses row {bad[0]} (n {bad[1]!r}, masks {bad[2:]!r}) is not a miss's shape "
            "(integer columns, a tile size, values inside their masks, side_mask, count, nofit, tile)"
        )


def check_connection(
    conn: sqlite3.Connection, label: str, *, integrity: str = "quick", since: Watermark = NOTHING
) -> CheckReport:
    """Pages, the schema, then the tile rows, the manifests and the spent rows past ``since``, then
    every misses row (misses are updated in place: no rowid says what changed)."""
    rep = CheckReport(integrity)
    t0 = time.perf_counter()
    check_pages(conn, label, integrity)
    check_schema(conn, label)
    t1 = time.perf_counter()
    rep.rows_checked, tiles = check_rows(conn, label, since.tiles)
    t2 = time.perf_counter()
    rep.manifests_checked, manifests = check_manifests(conn, label, since.manifests)
    rep.spent_checked, spent = check_spent(conn, label, since.spent)
    rep.reached = Watermark(tiles, manifests, spent)
    check_misses(conn, label)
    t3 = time.perf_counter()
    # tiles rows are append-only (an update or delete marks the file dirty), so the largest rowid is
    # the row count without count(*)'s scan of a whole index (0.2 s at 1M rows, for a log line)
    rep.rows_total = conn.execute("SELECT coalesce(max(rowid), 0) FROM tiles").fetchone()[0]
    rep.seconds = {"pages": round(t1 - t0, 4), "rows": round(t2 - t1, 4), "manifests": round(t3 - t2, 4)}
    return rep


def check_file(path: str | Path, *, integrity: str = "quick", since: Watermark = NOTHING) -> CheckReport:
    """``check_connection`` on a file opened read-only; a missing, empty or non-SQLite file is an error."""
    p = Path(path)
    if not p.is_file() or p.stat().st_size == 0:
        raise LibraryError(f"no library file at {p} to check")
    with open(p, "rb") as fh:
        if fh.read(16) != SQLITE_MAGIC:
            raise CorruptLibrary(f"{p} is not a SQLite file")
    conn = connect(p, readonly=True)
    try:
        conn.execute(f"PRAGMA mmap_size = {1 << 31}")
        return check_connection(conn, str(p), integrity=integrity, since=since)
    finally:
        conn.close()


# ---------------------------------------------------------------- since the last verified check

CHECK_MODES = ("new", "full")
# Within both bounds the full check costs about a second (bench_publish: 1.2 s at 100k rows; stored
# manifests parse at ~30 MB/s, so 16 MiB of them add ~0.5 s), so "new" runs it anyway: a small
# library gets integrity_check (which alone sees a damaged index) and every row re-hashed (which
# alone sees a byte flipped inside a record by the disk). Past either, "new" costs what changed and
# the full check is a flag (and a weekly cron line). The manifests' bound keeps the nightly check
# from growing with every night's board (bench_year: a G = 301 year passes 16 MiB at night ~80,
# 100k rows at ~200; a G = 1000 library passes it in a week).
FULL_CHECK_MAX_ROWS = 100_000
FULL_CHECK_MAX_MANIFEST_BYTES = 16 << 20


def is_small(conn: sqlite3.Connection) -> bool:
    """Whether a full check of the library is cheap enough for "new" to run it (the bounds above)."""
    rows = conn.execute("SELECT coalesce(max(rowid), 0) FROM tiles").fetchone()[0]
    if rows > FULL_CHECK_MAX_ROWS:
        return False
    size = conn.execute("SELECT coalesce(sum(length(CAST(json AS BLOB))), 0) FROM manifests").fetchone()[0]
    return size <= FULL_CHECK_MAX_MANIFEST_BYTES


def read_watermark(lib) -> Watermark:
    """How far the last ``mark_verified`` check reached; ``NOTHING`` when that cannot be trusted: never
    verified, or a row was updated or deleted since (the schema's triggers, which ``Library.open``
    and every check prove present, set ``verified:dirty``). A mark written before spent rows were
    counted holds two numbers: its spent rows are all checked again."""
    meta = dict(lib.conn.execute("SELECT key, value FROM meta WHERE key LIKE 'verified:%'").fetchall())
    if "verified:dirty" in meta:
        return NOTHING
    try:
        t, m, *spent = json.loads(meta.get("verified:rowids", "[0, 0]"))
        if len(spent) > 1:
            return NOTHING
        return Watermark(int(t), int(m), int(spent[0]) if spent else 0)
    except (ValueError, TypeError, OverflowError):  # "[1e999, 0]": json reads inf, int() overflows
        return NOTHING


# "since": what "new" does on a large library, whatever the size — only for a caller that proved the
# whole file itself earlier in the same process (the nightly build's push, after its check stage).
INTERNAL_MODES = (*CHECK_MODES, "since")


def check_library(lib, mode: str = "new") -> CheckReport:
    """``mode="new"``: quick_check and the rows/manifests past ``read_watermark``; ``"full"``:
    integrity_check, every row, every manifest — also what "new" does for a small library
    (``is_small``); ``"since"``: "new" never widened to "full" (``INTERNAL_MODES``).
    CorruptLibrary (exit 3) naming the first bad row."""
    if mode not in INTERNAL_MODES:
        raise ValueError(f"check mode must be one of {CHECK_MODES}, not {mode!r}")
    if mode == "new" and is_small(lib.conn):
        mode = "full"
    mode = "new" if mode == "since" else mode
    since = read_watermark(lib) if mode == "new" else NOTHING
    return check_connection(lib.conn, str(lib.path), integrity="quick" if mode == "new" else "full", since=since)


def mark_verified(lib, rep: CheckReport) -> None:
    """Record how far a passing check reached and clear the dirty mark (``verified:`` keys are per
    file and never enter a snapshot)."""
    _record_reach(lib, rep.reached)


def _record_reach(lib, reached: Watermark) -> None:
    """The one writer of the watermark ``read_watermark`` reads."""
    with atomic(lib.conn):
        lib.conn.execute("DELETE FROM meta WHERE key = 'verified:dirty'")
        lib.conn.execute("INSERT OR REPLACE INTO meta VALUES ('verified:rowids', ?)", (json.dumps(list(reached)),))


def mark_proven(lib) -> None:
    """Record every row of the file as checked, for a file this process has just made from parts it
    proved whole (a replay's start state: its base and each delta proven by ``fetch_verified``, the
    deltas merged in by ``merge_file``, which checks what it takes in): the build's check that follows
    then costs the pages, the schema and the misses, not every row and manifest a second time."""
    conn = lib.conn
    tables = ("tiles", "manifests", "spent") if has_spent(conn) else ("tiles", "manifests")
    top = [conn.execute(f"SELECT coalesce(max(rowid), 0) FROM {t}").fetchone()[0] for t in tables]  # noqa: S608
    _record_reach(lib, Watermark(*top))


@dataclass
class AuditReport:
    rows: int
    problems: list[tuple[str, str]]  # (hash, problem)

    @property
    def ok(self) -> bool:
        return not self.problems


def verify_library(lib: Library, on_row: Callable[[], None] | None = None) -> AuditReport:
    """Integrity-check the file and prove its schema, then check every tile row, every misses row's
    shape and every stored manifest; never stops at the first bad row."""
    res = lib.conn.execute("PRAGMA integrity_check").fetchall()
    if res != [("ok",)]:
        raise CorruptLibrary(f"{lib.path}: integrity_check says {res[0][0]}")
    check_schema(lib.conn, str(lib.path))
    problems: list[tuple[str, str]] = []
    rows = 0
    cur = lib.conn.execute(f"SELECT {', '.join(TILE_COLUMNS)} FROM tiles ORDER BY hash")
    while batch := cur.fetchmany(5000):
        rows += len(batch)
        problems += [(batch[i][0], p) for i, found in bad_rows(batch) for p in found]
        if on_row:
            for _ in batch:
                on_row()
    for rowid, n in lib.conn.execute(f"SELECT rowid, n FROM misses WHERE NOT ({MISS_SHAPE}) ORDER BY rowid"):
        problems.append((f"misses row {rowid} (n {n!r})", "not of a miss's shape"))
    for day, commit, text in lib.conn.execute("SELECT day, seed_commit, json FROM manifests ORDER BY day"):
        why = manifest_row_problem(day, commit, text)
        if why is not None:
            problems.append((f"manifest {day}", why))
    return AuditReport(rows, problems)


__all__ = [
    "CHECK_MODES",
    "INTERNAL_MODES",
    "FULL_CHECK_MAX_MANIFEST_BYTES",
    "is_small",
    "read_watermark",
    "Watermark",
    "NOTHING",
    "check_library",
    "mark_proven",
    "mark_verified",
    "CheckReport",
    "INTEGRITY_MODES",
    "check_pages",
    "check_rows",
    "check_manifests",
    "check_connection",
    "check_file",
    "manifest_row_problem",
    "SPENT_SHAPE",
    "MISS_SHAPE",
    "check_misses",
    "AuditReport",
    "verify_library",
]
