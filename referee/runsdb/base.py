"""What the runs database's interface (``referee.runsdb``) and its two backends share: the
``Tx`` and ``RunsDB`` protocols, the run row every reader reads, and the solved-set query."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Protocol, TypeVar

T = TypeVar("T")
# seconds a call waits for PostgreSQL to come back before DatabaseBusy (``RunsDB.wait``'s default; the
# service sets 0 and waits itself, off its event loop: ``RunStore.patient``)
RETRY_FOR = 20.0
URL_SCHEMES = ("postgresql://", "postgres://")
# a run as every reader wants it: (board, day, created, nmoves, token_sha256, player); the three reads
# below share its columns and join, so their rows unpack alike
# A run's creation instant: ``created_at`` (unix seconds with their fraction, version 5), or the whole
# second ``created`` of a run made before it; what a run's times and the leaderboard's order count from.
CREATED = "coalesce(r.created_at, r.created)"
_RUN_COLUMNS = f"r.board, r.day, {CREATED}, r.nmoves, t.token_sha256, t.player"
_RUN_FROM = "FROM runs r LEFT JOIN tokens t ON t.run = r.run"
RUN_ROW = f"SELECT {_RUN_COLUMNS} {_RUN_FROM} WHERE r.run = ?"
# RUN_ROW of several runs, each row led by its run id: RUN_ROWS.format(marks) with "?, ?, …" for ``marks``
RUN_ROWS = f"SELECT r.run, {_RUN_COLUMNS} {_RUN_FROM} WHERE r.run IN ({{}})"
# RUN_ROW and what an idempotency key stored for the run, (body_sha256, answer) or NULLs: one read
KEYED_RUN_ROW = (
    f"SELECT {_RUN_COLUMNS}, i.body_sha256, i.answer {_RUN_FROM} "
    "LEFT JOIN idempotency i ON i.run = r.run AND i.key = ? WHERE r.run = ?"
)


class Tx(Protocol):
    """One open transaction."""

    def rows(self, sql: str, args: Sequence[Any] = ()) -> list[tuple]:
        """Run one statement; its rows (none for a write without RETURNING)."""

    def one(self, sql: str, args: Sequence[Any] = ()) -> tuple | None:
        """Run one statement; its first row or None."""

    def write(self, sql: str, args: Sequence[Any] = ()) -> None:
        """Run one statement whose answer nobody reads. PostgreSQL sends it without waiting (pipeline
        mode): it goes with the transaction's next read or its ``COMMIT``, so a transaction costs one
        round trip per read, not per statement; its error, if any, is raised there."""

    def lock_run(self, run: str, key: str | None = None) -> tuple | None:
        """``RUN_ROW`` of ``run`` (its row with its token's), the run locked against other writers until
        the end of the transaction; None if there is no such run. With an idempotency ``key``, the
        ``KEYED_RUN_ROW``: what that key stored for the run, (body_sha256, answer) or (None, None),
        follows in the same read."""


class RunsDB(Protocol):
    """A runs database, SQLite or PostgreSQL."""

    target: str  # what --runs named, for messages (a URL without its password)
    dialect: str  # "sqlite" | "postgresql"
    threads: int  # threads the service may run its work on (0: the caller's thread only)
    # seconds a call waits for the database — another writer's lock on a SQLite file, PostgreSQL away —
    # before ``DatabaseBusy`` (nothing done); settable. 0: never wait, the caller tries again itself
    # (the service: a wait inside a call would stop its event loop)
    wait: float

    def atomic(self, fn: Callable[[Tx], T]) -> T:
        """``fn(tx)`` in one write transaction (see the module doc for retries)."""

    def read(self, sql: str, args: Sequence[Any] = ()) -> list[tuple]:
        """The rows of one read."""

    def ping(self, timeout: float) -> None:
        """One trivial read on a connection of its own, within about ``timeout`` seconds and without the
        retries of ``read``: ``DatabaseUnavailable`` with the reason if the database does not answer
        (``/readyz``). Safe from any thread: it never touches the database's one connection."""

    def close(self) -> None:
        """Give the connection back."""


_listeners: list[Callable[[str], None]] = []


def listen(fn: Callable[[str], None]) -> None:
    """Call ``fn(event)`` for each event of every runs database of this process: ``"retry"`` (PostgreSQL
    was away and a block or read is tried again), ``"unavailable"`` (``DatabaseUnavailable`` raised),
    ``"error"`` (any other database error raised). The service counts them
    (``referee.service.observe``); the databases know nothing of who listens."""
    if fn not in _listeners:
        _listeners.append(fn)


def note(event: str) -> None:
    """Tell the listeners of ``listen`` about ``event``."""
    for fn in _listeners:
        fn(event)


def solved_of(rows: Callable[[str, Sequence[Any]], list[tuple]], run: str) -> set[int]:
    """The tiles ``run`` has solved, as the database holds them, read through ``rows`` (``db.read`` or
    an open transaction's ``tx.rows``)."""
    return {t for (t,) in rows("SELECT tile FROM moves WHERE run = ? AND correct = 1", (run,))}


__all__ = ["KEYED_RUN_ROW", "RETRY_FOR", "RUN_ROW", "RunsDB", "T", "Tx", "listen", "note", "solved_of"]
