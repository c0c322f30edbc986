"""The runs database in one SQLite file (the embedded default; ``referee.runsdb``'s interface).

Writes take the file's write lock up front (``tilelib.db.atomic``: ``BEGIN IMMEDIATE``), so the
service, its workers and the CLI judge serialise on one file; a writer waits for the lock at most
``wait`` seconds (``WAIT``; the service sets 0 and waits off its event loop), then ``DatabaseBusy``
with nothing done. WAL lets readers go on meanwhile;
``synchronous=FULL`` syncs the WAL at each commit, so what was answered as stored is on disk.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

from referee.runsdb import schema
from referee.runsdb.base import KEYED_RUN_ROW, RUN_ROW, note
from tilelib.db import atomic, connect
from tilelib.errors import BadInput, CorruptLibrary, DatabaseBusy, DatabaseUnavailable

T = TypeVar("T")
WAIT = 30.0  # seconds a write waits for another writer's lock on the file (``wait``)
_BUSY = (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED)  # primary result codes of "database is locked"


class _Tx:
    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn

    def rows(self, sql: str, args: Sequence[Any] = ()) -> list[tuple]:
        return self.conn.execute(sql, args).fetchall()

    def one(self, sql: str, args: Sequence[Any] = ()) -> tuple | None:
        return self.conn.execute(sql, args).fetchone()

    def write(self, sql: str, args: Sequence[Any] = ()) -> None:
        self.conn.execute(sql, args)

    def lock_run(self, run: str, key: str | None = None) -> tuple | None:
        # BEGIN IMMEDIATE already holds the file's write lock: the row needs no lock of its own
        return self.one(RUN_ROW, (run,)) if key is None else self.one(KEYED_RUN_ROW, (key, run))


def _check_file(p: Path) -> bool:
    """Whether ``p`` is to be created (absent or empty); BadInput for a path that cannot be a runs file."""
    if p.is_dir():
        raise BadInput(f"--runs {p} is a directory, not a runs file")
    if not p.parent.is_dir():
        raise BadInput(f"--runs {p}: the folder {p.parent} does not exist")
    fresh = not p.exists() or p.stat().st_size == 0
    if not fresh:
        with open(p, "rb") as fh:
            if fh.read(16) != b"SQLite format 3\x00":
                raise BadInput(f"{p} is not a runs file (not SQLite)")
    return fresh


def _version(conn: sqlite3.Connection, p: Path) -> tuple[int, bool]:
    """(schema version, legacy) of an existing file: refused unless it is a runs file."""
    try:
        row = conn.execute("SELECT value FROM meta WHERE key = 'kind'").fetchone()
    except sqlite3.OperationalError:
        row = None
    if row is None or row[0] != schema.RUNS_KIND:
        raise BadInput(f"{p} is not a runs file (no meta kind {schema.RUNS_KIND!r}); refusing to touch it")
    try:
        (v,) = conn.execute("SELECT coalesce(max(version), 0) FROM schema_migrations").fetchone()
        return v, False
    except sqlite3.OperationalError:
        return 1, True  # written before migrations were recorded: version 1's tables


class SqliteRuns:
    """A runs file (see the module doc)."""

    dialect = "sqlite"
    threads = 0  # its work runs on the caller's thread: one connection, writes serialise on the file

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self.target = str(path)
        fresh = _check_file(self.path)
        self.conn = connect(self.path, timeout=WAIT)
        self._wait = WAIT
        try:
            self._migrate(fresh)
            self.conn.execute("PRAGMA journal_mode=WAL")
            # FULL: WAL is synced at every commit, so a move answered as accepted survives a power loss
            # (NORMAL syncs only at checkpoints: the last acknowledged moves could go). ~0.15 ms a commit
            # here (DECISIONS, "Durable when acknowledged")
            self.conn.execute("PRAGMA synchronous=FULL")
        except sqlite3.DatabaseError as e:
            self.conn.close()
            raise CorruptLibrary(f"{self.path}: cannot use as a runs file ({e})") from e
        except BaseException:
            self.conn.close()
            raise

    def _migrate(self, fresh: bool) -> None:
        """Bring the file to ``schema.LATEST`` in one transaction; refuse a newer one untouched."""
        if not fresh:
            version, _ = _version(self.conn, self.path)
            schema.refuse_newer(version, self.target)
            if version == schema.LATEST:
                return
        with atomic(self.conn):
            has_meta = self.conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'meta'").fetchone()
            version, legacy = _version(self.conn, self.path) if has_meta else (0, False)
            schema.refuse_newer(version, self.target)  # another opener may have migrated meanwhile
            schema.migrate(self.conn.execute, version, self.dialect, int(time.time()), legacy)

    @property
    def wait(self) -> float:
        """Seconds a statement waits for another connection's lock on the file (SQLite's busy
        timeout) before ``DatabaseBusy``."""
        return self._wait

    @wait.setter
    def wait(self, seconds: float) -> None:
        self.conn.execute(f"PRAGMA busy_timeout = {max(0, round(seconds * 1000))}")
        self._wait = seconds

    def _failed(self, e: sqlite3.DatabaseError) -> Exception:
        """What to raise for SQLite's ``e``: DatabaseBusy for a lock held longer than ``wait`` (the
        block was rolled back whole: nothing done, safe to try again), else CorruptLibrary."""
        if getattr(e, "sqlite_errorcode", 0) & 0xFF in _BUSY:
            note("unavailable")
            return DatabaseBusy(f"the runs file {self.path} is locked by another writer (waited {self._wait:g} s)")
        note("error")
        return CorruptLibrary(f"{self.path}: {e}")

    def atomic(self, fn: Callable[[_Tx], T]) -> T:
        try:
            with atomic(self.conn) as conn:
                return fn(_Tx(conn))
        except sqlite3.DatabaseError as e:
            raise self._failed(e) from e

    def read(self, sql: str, args: Sequence[Any] = ()) -> list[tuple]:
        try:
            return self.conn.execute(sql, args).fetchall()
        except sqlite3.DatabaseError as e:
            raise self._failed(e) from e

    def ping(self, timeout: float = 2.0) -> None:
        """The file's kind read on a read-only connection of its own (any thread; waits at most
        ``timeout`` s for a lock): DatabaseUnavailable if the file is gone or unreadable."""
        try:
            conn = connect(self.path, readonly=True, timeout=timeout)
            try:
                row = conn.execute("SELECT value FROM meta WHERE key = 'kind'").fetchone()
            finally:
                conn.close()
        except sqlite3.Error as e:
            raise DatabaseUnavailable(f"the runs file {self.path} does not answer: {e}") from e
        if row is None or row[0] != schema.RUNS_KIND:
            raise DatabaseUnavailable(f"the runs file {self.path} is no longer a runs file")

    def close(self) -> None:
        self.conn.close()
