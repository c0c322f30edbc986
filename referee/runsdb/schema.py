"""The runs database's schema as numbered migrations, the same for both backends.

Each migration is applied once, in order, inside the transaction that opens the database, and
recorded in ``schema_migrations``; a database whose highest recorded version is above ``LATEST``
was written by newer code and is refused (``SchemaTooNew``) before anything is written. A SQLite
runs file written before migrations were recorded holds version 1's tables and its ``meta`` kind:
it counts as version 1.

Version 1 is the schema of ``tiles-runs/1`` (runs, moves, batches, tokens, idempotency keys).
Version 2 adds ``runs.nmoves``, the number of moves stored for the run: every batch adds to it in
the transaction that stores the moves, so a worker that cached a run's solved set knows, from one
locked row, whether another worker or the CLI judge has written to the run since.
Version 3 adds ``quota``: fair-use counters per (window, key) (``referee.service.quota``), kept here so
that every worker and host counts the same requests.
Version 4 adds ``runs.requests`` (the requests the service answered naming the run, reads and moves)
and ``runs.cleared_requests`` (their number when the run cleared the board; null until then): the
leaderboard's efficiency (``RunStore.leaderboard``).
"""

from __future__ import annotations

from collections.abc import Callable

from tilelib.errors import SchemaTooNew

RUNS_KIND = "tiles-runs/1"

_V1 = (
    """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS runs (
    run TEXT PRIMARY KEY, board TEXT NOT NULL, day TEXT NOT NULL, created {BIG} NOT NULL);
CREATE TABLE IF NOT EXISTS moves (
    id {SERIAL}, run TEXT NOT NULL REFERENCES runs(run), tile INTEGER, cells TEXT,
    accepted INTEGER NOT NULL, correct INTEGER NOT NULL, reward INTEGER NOT NULL, reason TEXT,
    at {BIG} NOT NULL);
CREATE INDEX IF NOT EXISTS moves_run ON moves (run, correct, tile);
CREATE TABLE IF NOT EXISTS batches (
    id {SERIAL}, run TEXT NOT NULL REFERENCES runs(run), first_move {BIG} NOT NULL,
    last_move {BIG} NOT NULL, at {REAL} NOT NULL);
CREATE INDEX IF NOT EXISTS batches_run ON batches (run, id);
CREATE TABLE IF NOT EXISTS tokens (
    run TEXT PRIMARY KEY REFERENCES runs(run), token_sha256 TEXT NOT NULL, player TEXT);
CREATE TABLE IF NOT EXISTS idempotency (
    run TEXT NOT NULL REFERENCES runs(run), key TEXT NOT NULL, body_sha256 TEXT NOT NULL,
    answer TEXT NOT NULL, at {BIG} NOT NULL, PRIMARY KEY (run, key));
INSERT INTO meta (key, value) VALUES ('kind', '"""
    + RUNS_KIND
    + """');
"""
)

_V2 = """
ALTER TABLE runs ADD COLUMN nmoves {BIG} NOT NULL DEFAULT 0;
UPDATE runs SET nmoves = (SELECT count(*) FROM moves m WHERE m.run = runs.run);
"""

_V3 = """
CREATE TABLE IF NOT EXISTS quota (
    win {BIG} NOT NULL, key TEXT NOT NULL, used INTEGER NOT NULL, PRIMARY KEY (win, key));
"""

_V4 = """
ALTER TABLE runs ADD COLUMN requests {BIG} NOT NULL DEFAULT 0;
ALTER TABLE runs ADD COLUMN cleared_requests {BIG};
"""

_V5 = """
ALTER TABLE runs ADD COLUMN created_at {REAL};
"""

# Each dialect's words for the few types that differ (SQLite's INTEGER PRIMARY KEY is its rowid).
TYPES = {
    "sqlite": {"BIG": "INTEGER", "SERIAL": "INTEGER PRIMARY KEY", "REAL": "REAL"},
    "postgresql": {"BIG": "BIGINT", "SERIAL": "BIGSERIAL PRIMARY KEY", "REAL": "DOUBLE PRECISION"},
}

MIGRATIONS: list[tuple[int, str]] = [(1, _V1), (2, _V2), (3, _V3), (4, _V4), (5, _V5)]
LATEST = MIGRATIONS[-1][0]

MIGRATIONS_TABLE = "CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, applied {BIG} NOT NULL)"


def statements(sql: str, dialect: str) -> list[str]:
    """The statements of one migration in ``dialect``."""
    text = sql.format(**TYPES[dialect])
    return [s.strip() for s in text.split(";") if s.strip()]


def refuse_newer(version: int, target: str) -> None:
    """``SchemaTooNew`` if ``version`` was written by newer code than this (checked before any write)."""
    if version > LATEST:
        raise SchemaTooNew(f"{target}: runs schema version {version} is newer than this code's {LATEST}; upgrade tiles")


def pending(current: int) -> list[tuple[int, str]]:
    """The migrations after version ``current``, in order."""
    return [(v, sql) for v, sql in MIGRATIONS if v > current]


def migrate(run: Callable[[str], object], current: int, dialect: str, now: int, legacy: bool = False) -> list[int]:
    """Apply every migration after ``current`` through ``run`` (one statement at a time, inside the
    caller's transaction) and record each; the versions applied. ``legacy``: a version-1 SQLite file
    from before migrations were recorded, whose version 1 is recorded now."""
    run(MIGRATIONS_TABLE.format(**TYPES[dialect]))
    if legacy:
        run(f"INSERT INTO schema_migrations (version, applied) VALUES (1, {now})")
    done = []
    for version, sql in pending(current):
        for stmt in statements(sql, dialect):
            run(stmt)
        run(f"INSERT INTO schema_migrations (version, applied) VALUES ({version}, {now})")
        done.append(version)
    return done
