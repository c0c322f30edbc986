"""SQLite helpers every module of the library file shares: the one transaction path.

``atomic(conn)`` is the only way anything in this project writes to a SQLite file (the library,
its snapshots and deltas, a bundle, the judges' runs file). Outermost, it is ``BEGIN IMMEDIATE``
… ``COMMIT``: the write lock is taken up front, so two writers serialise instead of one failing
half-way through; any exception (KeyboardInterrupt included) rolls the block back whole. Nested
(the connection already in a transaction), it is a ``SAVEPOINT``: released on success, rolled back
to on an exception, and it never commits the transaction the caller opened. So a function that
writes wraps its statements in ``atomic`` and is right both alone and inside a larger unit (a
stitch's ledger writes inside the stitch's transaction). The semantics are sqlite-utils'
``Database.atomic()`` but for the outermost ``BEGIN``, which there is deferred (a deferred
transaction that reads, then writes can fail with SQLITE_BUSY without waiting).

``connect(path)`` opens a file in autocommit mode (``isolation_level=None``): Python's sqlite3
then never opens a transaction behind the caller's back, so ``conn.in_transaction`` is true
exactly inside an ``atomic`` block; ``readonly=True`` opens it read-only. It opens a ``file:`` URI
(``file_uri``), so the connection can ``ATTACH`` another file read-only the same way. It is the one way the
project opens a SQLite file, and every connection it makes distrusts the file's schema: ``PRAGMA
trusted_schema = OFF`` (a view or trigger of the file may call no function with side effects, and
no virtual table), and SQLite's defensive mode where the Python exposes it (3.12+: no writes to
``sqlite_master`` through ``writable_schema``). What the schema may hold is ``tilelib.schema``'s.

``rows_by_hash``: tiles rows by their keys, in chunks (the store, the spent ledger, bundles).
"""

from __future__ import annotations

import itertools
import sqlite3
import urllib.parse
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

_names = itertools.count()


def file_uri(path: str | Path, mode: str = "ro") -> str:
    """The ``file:`` URI of a path (quoted: a '?' or '#' in a name stays part of the name)."""
    return f"file:{urllib.parse.quote(str(Path(path).absolute()))}?mode={mode}"


def connect(path: str | Path, *, readonly: bool = False, timeout: float = 5.0) -> sqlite3.Connection:
    """A connection in autocommit mode (every write goes through ``atomic``), or read-only, that
    trusts nothing in the file's schema (module docstring)."""
    target = ":memory:" if str(path) == ":memory:" else file_uri(path, "ro" if readonly else "rwc")
    conn = sqlite3.connect(target, isolation_level=None, uri=True, timeout=timeout)
    _distrust(conn)
    return conn


def _distrust(conn: sqlite3.Connection) -> None:
    """``trusted_schema = OFF`` and, where available, SQLite's defensive mode on ``conn``."""
    conn.execute("PRAGMA trusted_schema = OFF")
    defensive = getattr(sqlite3, "SQLITE_DBCONFIG_DEFENSIVE", None)
    if defensive is not None and hasattr(conn, "setconfig"):
        conn.setconfig(defensive, True)


@contextmanager
def atomic(conn: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
    """A write transaction, or a savepoint inside the caller's: applied whole or not at all."""
    if conn.in_transaction:
        name = f"atomic_{next(_names)}"
        conn.execute(f"SAVEPOINT {name}")
        try:
            yield conn
        except BaseException:
            # A RAISE(ROLLBACK) trigger or a full disk can end the whole transaction, savepoints
            # included: undoing ours then would hide the first error under "no such savepoint".
            if conn.in_transaction:
                conn.execute(f"ROLLBACK TO SAVEPOINT {name}")
                conn.execute(f"RELEASE SAVEPOINT {name}")
            raise
        conn.execute(f"RELEASE SAVEPOINT {name}")
        return
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield conn
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise


def statements(script: str) -> list[str]:
    """The statements of an SQL script, each complete (a trigger's body included), for running
    inside ``atomic``: ``executescript`` would commit the caller's transaction first."""
    out, buf = [], ""
    for line in script.splitlines(keepends=True):
        buf += line
        if sqlite3.complete_statement(buf):
            out.append(buf.strip())
            buf = ""
    if buf.strip():
        raise ValueError(f"incomplete SQL statement: {buf.strip()[:60]!r}")
    return out


def outside(conn: sqlite3.Connection, what: str) -> None:
    """``what`` (ATTACH, DETACH, VACUUM) cannot run inside a transaction: a caller holding one
    is a bug, said plainly rather than as SQLite's error."""
    if conn.in_transaction:
        raise RuntimeError(f"{what} must run outside a transaction")


__all__ = ["atomic", "connect", "file_uri", "outside", "rows_by_hash", "statements"]


def rows_by_hash(conn, columns, hashes, chunk: int = 500):
    """The ``columns`` of the tiles rows whose hash is in ``hashes`` (absent ones yield nothing):
    one ``IN`` query per ``chunk`` hashes, in hash order (neighbouring keys share B-tree pages)."""
    want = sorted(set(hashes))
    cols = ", ".join(columns)
    for k in range(0, len(want), chunk):
        part = want[k : k + chunk]
        yield from conn.execute(f"SELECT {cols} FROM tiles WHERE hash IN ({','.join('?' * len(part))})", part)
