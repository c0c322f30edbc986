"""The runs database: one interface over two backends (FORMAT §12).

``--runs`` (env ``TILES_RUNS``) names either a SQLite file (the embedded default) or a
``postgresql://`` URL. ``open_runsdb(target)`` returns a ``RunsDB`` either way; everything that
reads or writes runs (``referee.judge``, ``referee.service.runs``) speaks to that interface and
writes its SQL once, with ``?`` placeholders and the SQL both dialects share.

- ``db.atomic(fn)`` runs ``fn(tx)`` in one write transaction that holds the run it locks
  (``tx.lock_run``): SQLite's ``BEGIN IMMEDIATE`` takes the file's write lock, PostgreSQL's
  ``SELECT … FOR UPDATE`` the run's row, so two writers on one run serialise. When PostgreSQL
  drops the connection before the commit was sent, the block is run again on a new connection
  for up to ``RETRY_FOR`` seconds (nothing of it was kept); a connection lost during the commit
  itself is ``DatabaseUnavailable`` (HTTP 503): the commit may or may not have happened, and only
  the caller's idempotency key can say — the client retries with it.
- ``db.read(sql, args)`` runs one read (retried the same way: reads are safe).
- The schema is versioned (``referee.runsdb.schema``): opening migrates an older database in one
  transaction and refuses a newer one (``SchemaTooNew``, exit 3) before writing anything.

The PostgreSQL driver (psycopg 3) is imported only when a URL is opened, so ``tiles --help`` and
every SQLite user never load it.
"""

from __future__ import annotations

from contextlib import closing
from pathlib import Path

from referee.runsdb.base import RETRY_FOR, RUN_ROW, RUN_ROWS, RunsDB, Tx, solved_of

URL_SCHEMES = ("postgresql://", "postgres://")


def is_url(target: str | Path) -> bool:
    """Whether ``--runs`` names a PostgreSQL database rather than a SQLite file."""
    return isinstance(target, str) and target.startswith(URL_SCHEMES)


def open_runsdb(target: str | Path) -> RunsDB:
    """The runs database ``target`` names, created or migrated to this code's schema.

    A file path: SQLite (created if absent; an existing file that is not a runs file is refused,
    untouched). A ``postgresql://`` URL: that database (unreachable or refused within
    ``postgres.CONNECT_TIMEOUT`` seconds: ``DatabaseUnavailable``, exit 4)."""
    if is_url(target):
        from referee.runsdb.postgres import PostgresRuns

        return PostgresRuns(str(target))
    from referee.runsdb.sqlite import SqliteRuns

    return SqliteRuns(Path(target))


def opened(target: str | Path) -> closing[RunsDB]:
    """``with opened(target) as db:`` — a runs database closed at the end of the block."""
    return closing(open_runsdb(target))


__all__ = ["RETRY_FOR", "RUN_ROW", "RUN_ROWS", "RunsDB", "Tx", "is_url", "open_runsdb", "opened", "solved_of"]
