"""The fair rule's ledger (FORMAT §5, §9): which tile solutions published boards have used.

A board exists to be solved, not looked up: on a ``fresh`` board no solution of side n >= 10
appears twice (up to the 16 symmetries) and none appears that an earlier published board used
(DECISIONS, "The fair rule"). n = 6 and 8 are exempt: 4,140 and 4,111,116 grids, an agent can
enumerate them.

- The **canonical solution** of a grid is the smallest BLOB among its 16 images (FORMAT §3, values
  complemented when k = 1). A library row's stored solution already is one: the canonical key of a
  tile begins with its solution. Its **solution hash** is ``sha256(bytes([n]) + BLOB)``, hex.
- ``spent(solution, board, n, day, created)`` holds one row per (solution, board) for every n >= 10
  solution of every board this library stored: ``board`` is the manifest's digest (FORMAT §9),
  ``day`` its day. Append-only (``INSERT OR IGNORE``), merged as a union, so two machines that
  push lose nothing and merge in any order to the same rows.
- For *building*, a solution with any row is spent. For *verifying* a manifest, a row counts
  against it only when it names the board that the library holds as the manifest of another day
  (``live``): a board that was never published — withdrawn after it lost a race
  (``remote.fair``), or replaced by a rebuild of its day — spent nothing anyone could look up.

``Reuse`` is the build's policy: ``fresh`` (the default) follows the rule, ``any`` builds as before
the rule existed (byte for byte the same boards).
"""

from __future__ import annotations

import hashlib
import sqlite3
import time
from collections.abc import Iterable
from dataclasses import dataclass
from enum import Enum

from tilelib.db import rows_by_hash
from tilelib.errors import BadInput, RowsNotStored

FRESH_MIN_N = 10  # sides n >= this are held to the rule; 6 and 8 are exempt
_CHUNK = 500  # hashes per IN (...) query (SQLite's variable limit is 999 on old builds)


class Reuse(Enum):
    """The build's policy on repeated solutions (``tiles daily build --reuse``)."""

    FRESH = "fresh"  # no n >= 10 solution twice on a board, none from an earlier board
    ANY = "any"  # as before the rule: any library tile may be placed

    @classmethod
    def parse(cls, value: Reuse | str | None, what: str = "--reuse") -> Reuse:
        """The policy named by ``value`` (None: the default, fresh); BadInput naming the choices."""
        if value is None:
            return cls.FRESH
        if isinstance(value, Reuse):
            return value
        for p in cls:
            if value == p.value:
                return p
        raise BadInput(f"{what} must be one of {', '.join(p.value for p in cls)}, not {value!r}")


def held(n: int) -> bool:
    """Whether tiles of side n are held to the fair rule (n >= 10)."""
    return n >= FRESH_MIN_N


def solution_digest(n: int, canonical_blob: bytes) -> bytes:
    """sha256(bytes([n]) + canonical solution BLOB): the solution hash as 32 bytes."""
    return hashlib.sha256(bytes([n]) + bytes(canonical_blob)).digest()


def solution_hash(n: int, canonical_blob: bytes) -> str:
    """The solution hash, lower-case hex (what the spent table stores)."""
    return solution_digest(n, canonical_blob).hex()


def canonical_solution(n: int, blob: bytes) -> bytes:
    """The smallest of the 16 images of a solution BLOB (FORMAT §3)."""
    from tilelib.symmetry import TRANSFORMS
    from tilelib.tile import grid_image

    return min(grid_image(n, bytes(blob), t, True) for t in TRANSFORMS)


def grid_solution_hash(grid) -> str:
    """The solution hash of an n×n 0/1 grid in any orientation."""
    from tilelib.bits import to_blob

    n = len(grid)
    return solution_hash(n, canonical_solution(n, to_blob(grid)))


# ------------------------------------------------------------------ the table


def has_table(conn: sqlite3.Connection, schema: str = "main") -> bool:
    """Whether ``schema`` holds a spent table (libraries made before the rule lack one)."""
    return (
        conn.execute(f"SELECT 1 FROM {schema}.sqlite_master WHERE type = 'table' AND name = 'spent'").fetchone()
        is not None
    )


@dataclass(frozen=True)
class SpentRow:
    solution: str
    board: str
    n: int
    day: str


def record(conn: sqlite3.Connection, rows: Iterable[SpentRow], now: int | None = None) -> int:
    """Append spent rows into the open transaction (no commit); returns how many were new, counted by
    the rows present before and after. A row asked for and not there afterwards is RowsNotStored."""
    now = int(time.time()) if now is None else now
    rows = list(rows)
    want = {(r.solution, r.board) for r in rows}
    before = _present(conn, want)
    conn.executemany(
        "INSERT OR IGNORE INTO spent (solution, board, n, day, created) VALUES (?,?,?,?,?)",
        [(r.solution, r.board, r.n, r.day, now) for r in rows],
    )
    after = _present(conn, want)
    if after != want:
        sol, board = min(want - after)
        raise RowsNotStored(
            f"the spent row of solution {sol[:12]}… on board {board[:12]}… was recorded and "
            f"is not stored ({len(want - after)} of {len(want)} rows missing)"
        )
    return len(after) - len(before)


def _present(conn: sqlite3.Connection, keys: set[tuple[str, str]]) -> set[tuple[str, str]]:
    """Those (solution, board) keys the spent table holds."""
    return {(r.solution, r.board) for r in rows_of(conn, {s for s, _ in keys})} & keys


def spent_of(conn: sqlite3.Connection, solutions: Iterable[str]) -> set[str]:
    """Those of ``solutions`` that have a spent row (any board): what a build may not place."""
    return {r.solution for r in rows_of(conn, solutions)}


def rows_of(conn: sqlite3.Connection, solutions: Iterable[str]) -> list[SpentRow]:
    """Every spent row of ``solutions``, by (solution, board)."""
    sols = sorted(set(solutions))
    if not sols or not has_table(conn):
        return []
    out: list[SpentRow] = []
    for i in range(0, len(sols), _CHUNK):
        part = sols[i : i + _CHUNK]
        out += [
            SpentRow(*r)
            for r in conn.execute(
                f"SELECT solution, board, n, day FROM spent WHERE solution IN ({','.join('?' * len(part))}) "
                "ORDER BY solution, board",
                part,
            )
        ]
    return out


def board_solutions(conn: sqlite3.Connection, hashes: list[str]) -> list[tuple[int, int, str]]:
    """(tile id, n, solution hash) of the tiles of side n >= 10 among a board's ``hashes`` (in tile
    id order), from the library's stored (canonical) solutions; hashes it lacks are left out."""
    sol = {
        h: (n, solution_hash(n, bytes(b)))
        for h, n, b in rows_by_hash(conn, ("hash", "n", "solution"), hashes)
        if held(n)
    }
    return [(i, *sol[h]) for i, h in enumerate(hashes) if h in sol]


def board_rows(conn: sqlite3.Connection, hashes, board: str, day: str) -> list[SpentRow]:
    """The spent rows a stored board adds (by solution): each distinct solution of side n >= 10
    among its tile ``hashes`` (read from ``conn``'s tiles), filed under the board's digest and day,
    whatever its policy — an ``any`` board spends too. What the build stores with the manifest and
    what a day's bundle holds (``referee.bundle``)."""
    rows = {sol: SpentRow(sol, board, n, day) for _i, n, sol in board_solutions(conn, list(hashes))}
    return [rows[k] for k in sorted(rows)]


def count(conn: sqlite3.Connection) -> tuple[int, int]:
    """(rows, distinct solutions) in the spent table (0, 0 without one)."""
    if not has_table(conn):
        return 0, 0
    return conn.execute("SELECT count(*), count(DISTINCT solution) FROM spent").fetchone()


def live_boards(conn: sqlite3.Connection, days: Iterable[str]) -> dict[str, str]:
    """day -> digest of the manifest the library holds for that day (days it lacks are left out)."""
    out = {}
    for day in sorted(set(days)):
        row = conn.execute("SELECT json FROM manifests WHERE day = ?", (day,)).fetchone()
        if row is not None and isinstance(row[0], str):
            out[day] = hashlib.sha256(row[0].encode("utf-8")).hexdigest()
    return out


def unfair(conn: sqlite3.Connection, day: str, placed: list[tuple[int, int, str]]) -> str | None:
    """The first way a fresh board of ``day`` breaks the rule, or None. ``placed``: (tile id, n,
    solution hash) of its held tiles in id order (``board_solutions``). A solution placed twice
    names both tiles; a solution spent by the board the library holds as the manifest of another
    day (``live_boards``) names the tile and that day. Rows of its own day are not counted: they
    are its own, or of a board of that day built after its start (a rebuild, a tampered copy),
    which is not an earlier board."""
    first: dict[str, int] = {}
    for i, n, sol in placed:
        if sol in first:
            return f"tile {i} (n = {n}) places the solution of tile {first[sol]} again"
        first[sol] = i
    others = [r for r in rows_of(conn, first) if r.day != day]
    live = live_boards(conn, {r.day for r in others})
    by: dict[str, SpentRow] = {}
    for r in others:
        if live.get(r.day) == r.board:
            by.setdefault(r.solution, r)
    for i, n, sol in placed:
        if sol in by:
            return (
                f"tile {i} (n = {n}) places solution {sol[:12]}… that the board of {by[sol].day} "
                f"({by[sol].board[:12]}…) already used"
            )
    return None


__all__ = [
    "FRESH_MIN_N",
    "Reuse",
    "SpentRow",
    "board_rows",
    "board_solutions",
    "canonical_solution",
    "count",
    "grid_solution_hash",
    "has_table",
    "held",
    "live_boards",
    "record",
    "rows_of",
    "solution_digest",
    "solution_hash",
    "spent_of",
    "unfair",
]
