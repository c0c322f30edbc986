"""SQLite helpers every module of the library file shares.

One way to run a write transaction on a SQLite connection opened with ``isolation_level=None``
or with Python's default handling: ``with transaction(conn): ...``.

``BEGIN IMMEDIATE`` takes the write lock up front (two writers serialise instead of failing
half-way), ``COMMIT`` on success, ``ROLLBACK`` on any exception (KeyboardInterrupt included), so a
block is applied whole or not at all. Used by the library merge and by the judges' runs files.

``rows_by_hash``: tiles rows by their keys, in chunks (the store, the spent ledger, bundles).
"""

from __future__ import annotations

import sqlite3
from contextlib import contextmanager
from typing import Iterator


@contextmanager
def transaction(conn: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
    """``BEGIN IMMEDIATE`` … ``COMMIT``, or ``ROLLBACK`` if the block raises."""
    if conn.in_transaction:
        conn.commit()           # Python's implicit transaction, if any, ends before ours begins
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield conn
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")


__all__ = ["transaction"]


def rows_by_hash(conn, columns, hashes, chunk: int = 500):
    """The ``columns`` of the tiles rows whose hash is in ``hashes`` (absent ones yield nothing):
    one ``IN`` query per ``chunk`` hashes, in hash order (neighbouring keys share B-tree pages)."""
    want = sorted(set(hashes))
    cols = ", ".join(columns)
    for k in range(0, len(want), chunk):
        part = want[k:k + chunk]
        yield from conn.execute(f"SELECT {cols} FROM tiles WHERE hash IN ({','.join('?' * len(part))})", part)
