"""The runs database in PostgreSQL (``--runs postgresql://…``; ``referee.runsdb``'s interface), over
psycopg 3 with one connection per thread: the service judges batches of moves on ``THREADS``
threads of its own (``RunStore.judge_off_loop``), so one worker keeps several of those transactions
(8 or more round trips each) in flight instead of idling on each round trip.

The connection is in autocommit mode, so a read holds no transaction open; a write is psycopg's
``conn.transaction()`` (``BEGIN`` … ``COMMIT``, nestable through savepoints: the driver's helper
with ``tilelib.db.atomic``'s semantics) whose run row is locked with ``SELECT … FOR UPDATE``
(``Tx.lock_run``). A connection lost (a restart, a dropped socket) or a transaction PostgreSQL
rolled back itself (serialization failure, deadlock) before ``COMMIT`` was sent: the block runs
again on a new connection, at once and then for up to ``wait`` seconds (``RETRY_FOR``; the service
sets 0 and waits off its event loop), then ``DatabaseBusy``. Lost during ``COMMIT``:
``DatabaseUnavailable``, since only the caller's idempotency key can tell whether it was kept.
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import psycopg

from referee.runsdb import schema
from referee.runsdb.base import KEYED_RUN_ROW, RETRY_FOR, RUN_ROW, note
from tilelib.errors import BadInput, CorruptLibrary, DatabaseBusy, DatabaseUnavailable

T = TypeVar("T")
THREADS = 6  # a worker's threads for batches of moves: their round trips overlap
CONNECT_TIMEOUT = 4  # seconds per address (libpq's connect_timeout covers the whole start-up)
_MIGRATION_LOCK = 0x7469_6C65  # pg_advisory_xact_lock key: one opener migrates at a time
_SQL: dict[str, str] = {}


def _pg(sql: str) -> str:
    """``?`` placeholders as psycopg's ``%s`` (the shared SQL has no literal ``?`` or ``%``)."""
    out = _SQL.get(sql)
    if out is None:
        out = _SQL[sql] = sql.replace("?", "%s")
    return out


def redact(url: str) -> str:
    """The URL without its password, for messages."""
    return re.sub(r"(://[^:/@]*):[^@/]*@", r"\1:***@", url)


def _line(e: BaseException) -> str:
    return " ".join(str(e).split())[:300] or type(e).__name__


def _refused(e: psycopg.Error) -> bool:
    """Whether PostgreSQL answered ``e`` for the block itself, so it kept nothing: an error it sent
    that is not about the connection or the server going away (those are OperationalError), or a
    transaction it rolled back (serialization failure, deadlock: tried again by ``_retrying``)."""
    if isinstance(e, psycopg.errors.TransactionRollback):
        return True
    return e.sqlstate is not None and not isinstance(e, psycopg.OperationalError)


class _Tx:
    """The store's queries inside one transaction, through its thread's one cursor, in psycopg's
    pipeline mode: a ``write`` is queued, a read sends what is queued and waits for its own answer,
    the ``COMMIT`` goes with the last writes (every answer is read whole before the next query, so
    one cursor serves them all)."""

    def __init__(self, cur: psycopg.Cursor, pipe: psycopg.Pipeline) -> None:
        self.cur = cur
        self.pipe = pipe

    def rows(self, sql: str, args: Sequence[Any] = ()) -> list[tuple]:
        cur = self.cur.execute(_pg(sql), args)
        self.pipe.sync()  # its answer now (a write's too: ``rows`` says what it did)
        return cur.fetchall() if cur.description is not None else []

    def one(self, sql: str, args: Sequence[Any] = ()) -> tuple | None:
        cur = self.cur.execute(_pg(sql), args)
        self.pipe.sync()
        return cur.fetchone() if cur.description is not None else None

    def value(self, sql: str) -> Any:
        """The one value of a query that always answers one row (a SELECT without FROM, an aggregate)."""
        row = self.one(sql)
        assert row is not None, f"no row from {sql!r}"
        return row[0]

    def write(self, sql: str, args: Sequence[Any] = ()) -> None:
        self.cur.execute(_pg(sql), args)

    def lock_run(self, run: str, key: str | None = None) -> tuple | None:
        if key is None:
            return self.one(RUN_ROW + " FOR UPDATE OF r", (run,))
        return self.one(KEYED_RUN_ROW + " FOR UPDATE OF r", (key, run))


class PostgresRuns:
    """A runs database in PostgreSQL (see the module doc)."""

    dialect = "postgresql"
    threads = THREADS  # the service judges batches on this many threads (``RunStore``)

    def __init__(self, url: str) -> None:
        self.url = url
        self.target = redact(url)
        self.wait = RETRY_FOR  # seconds ``_retrying`` waits for PostgreSQL to come back
        self._local = threading.local()  # each thread's own connection (psycopg's are not shared)
        self._opened: set[psycopg.Connection] = set()
        self._guard = threading.Lock()
        self.conn = self._connect()
        try:
            self._migrate()
        except BaseException:
            self.close()
            raise

    @property
    def conn(self) -> psycopg.Connection | None:
        """This thread's connection (None until it has one)."""
        return getattr(self._local, "conn", None)

    @conn.setter
    def conn(self, c: psycopg.Connection | None) -> None:
        self._local.conn = c
        if c is not None:
            with self._guard:
                self._opened.add(c)

    def _drop(self) -> None:
        """Close this thread's connection (lost or broken) and forget it."""
        c = self.conn
        self._local.conn = self._local.cur = None
        if c is not None:
            with self._guard:
                self._opened.discard(c)
            c.close()

    def _connect(self) -> psycopg.Connection:
        try:
            return self._dial()
        except (psycopg.OperationalError, psycopg.ProgrammingError) as e:
            raise DatabaseUnavailable(f"cannot open the runs database {self.target}: {_line(e)}") from e

    def _dial(self) -> psycopg.Connection:
        return psycopg.connect(
            self.url, autocommit=True, connect_timeout=CONNECT_TIMEOUT, application_name="tiles-referee"
        )

    def _live(self) -> psycopg.Connection:
        """The connection, dialled again if it was lost (psycopg.OperationalError if that fails)."""
        conn = self.conn
        if conn is None or conn.closed or conn.broken:
            self._drop()
            conn = self.conn = self._dial()
        return conn

    def _cursor(self) -> psycopg.Cursor:
        """This thread's one cursor on its live connection, made again only with a new connection: a
        cursor made per query costs a third of a one-row read's CPU (60 against 42 us measured)."""
        conn = self._live()
        cur = getattr(self._local, "cur", None)
        if cur is None or cur.connection is not conn:
            cur = self._local.cur = conn.cursor()
        return cur

    def _migrate(self) -> None:
        """Bring the database to ``schema.LATEST`` in one transaction (one opener at a time); refuse a
        newer schema, or a database whose ``meta`` says it is something else, before writing."""

        def step(tx: _Tx) -> None:
            tx.rows(f"SELECT pg_advisory_xact_lock({_MIGRATION_LOCK})")
            version = 0
            if tx.value("SELECT to_regclass('meta')") is not None:
                kind = tx.one("SELECT value FROM meta WHERE key = 'kind'")
                if kind is None or kind[0] != schema.RUNS_KIND:
                    raise BadInput(
                        f"{self.target} is not a runs database (its meta table has no kind "
                        f"{schema.RUNS_KIND!r}); refusing to touch it"
                    )
                if tx.value("SELECT to_regclass('schema_migrations')") is not None:
                    version = tx.value("SELECT coalesce(max(version), 0) FROM schema_migrations")
            schema.refuse_newer(version, self.target)
            if version < schema.LATEST:
                schema.migrate(tx.rows, version, self.dialect, int(time.time()))

        self.atomic(step)

    def _retrying(self, attempt: Callable[[], T]) -> T:
        """``attempt()``, again on a new connection while PostgreSQL is away: once at once (a
        connection dropped by a restart is dialled again), then with pauses for up to ``wait`` s;
        then DatabaseBusy (nothing of it was kept)."""
        deadline = time.monotonic() + self.wait
        delay = 0.0
        while True:
            try:
                return attempt()
            except psycopg.OperationalError as e:
                if delay and time.monotonic() + delay > deadline:
                    note("unavailable")
                    raise DatabaseBusy(f"the runs database {self.target} is unavailable: {_line(e)}") from e
                note("retry")
                time.sleep(delay)
                delay = min(delay * 2, 1.0) if delay else 0.05
            except psycopg.Error as e:
                note("error")
                raise CorruptLibrary(f"{self.target}: {_line(e)}") from e

    def _once(self, fn: Callable[[_Tx], T]) -> T:
        """``fn`` in psycopg's ``conn.transaction()`` (``BEGIN`` … ``COMMIT``, a ``SAVEPOINT`` when
        nested; rolled back if ``fn`` raises) in pipeline mode (``_Tx``): the ``BEGIN`` goes with the
        first read, the last writes with the ``COMMIT``. An error PostgreSQL answered for the block
        (a queued write refused, a transaction it rolled back) is raised as it is: nothing was kept.
        The connection lost or the server gone while committing is DatabaseUnavailable, never
        retried: the write may or may not be kept."""
        cur = self._cursor()
        committing = False
        try:
            with cur.connection.pipeline() as pipe, cur.connection.transaction():
                out = fn(_Tx(cur, pipe))
                committing = True
        except psycopg.Error as e:
            if not committing or _refused(e):
                raise
            note("unavailable")
            raise DatabaseUnavailable(
                f"the runs database {self.target} failed at commit (the write may or "
                f"may not be kept; retry with the same Idempotency-Key): {_line(e)}"
            ) from e
        return out

    def atomic(self, fn: Callable[[_Tx], T]) -> T:
        return self._retrying(lambda: self._once(fn))

    def read(self, sql: str, args: Sequence[Any] = ()) -> list[tuple]:
        return self._retrying(lambda: self._cursor().execute(_pg(sql), args).fetchall())

    def ping(self, timeout: float = 2.0) -> None:
        """``SELECT 1`` on a new connection of its own (libpq waits at least 2 s to connect), no retry:
        ``/readyz`` asks whether PostgreSQL answers now, from any thread, without the ``RETRY_FOR``
        wait or the process's one connection."""
        try:
            with psycopg.connect(
                self.url, autocommit=True, connect_timeout=max(2, round(timeout)), application_name="tiles-referee-ping"
            ) as conn:
                conn.execute("SELECT 1").fetchone()
        except psycopg.Error as e:
            raise DatabaseUnavailable(f"the runs database {self.target} does not answer: {_line(e)}") from e

    def close(self) -> None:
        """Close every thread's connection (the service's threads are done with them)."""
        with self._guard:
            opened, self._opened = list(self._opened), set()
        self._local = threading.local()
        for c in opened:
            c.close()
