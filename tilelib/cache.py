"""Caches kept beside a library file (``<library><suffix>``, numpy ``.npz``): when one may be trusted.

A cache is derived from the library's append-only rows up to a watermark (the largest tiles
rowid it has seen), so rows added since are exactly those with a larger rowid and opening it
costs O(new rows). It is read back only while it still describes this file: the same
``meta.library_id`` and, at a few rowids up to its watermark, the same hashes it recorded
(``probes``). Otherwise one scan of the library rebuilds it. A failed write (a read-only
directory) is not an error: the next open scans again. Users: ``stitcher.active`` (the
stitcher's active set) and ``tilelib.stock`` (the unspent stock).
"""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np

from tilelib.errors import BadInput
from tilelib.fsio import atomic_write


def beside(library: Path, suffix: str) -> Path:
    """The cache file ``<library><suffix>``."""
    return Path(library).with_name(Path(library).name + suffix)


def library_id(conn) -> str | None:
    row = conn.execute("SELECT value FROM meta WHERE key = 'library_id'").fetchone()
    return row[0] if row else None


def probes(conn, last: int) -> list[tuple[int, str]]:
    """(rowid, hash) at a few rowids up to the watermark ``last``: what a cache checks on open."""
    out = []
    for rid in sorted({last, last // 2, last // 4, 1} - {0}):
        row = conn.execute("SELECT hash FROM tiles WHERE rowid = ?", (rid,)).fetchone()
        if row is not None:
            out.append((rid, row[0]))
    return out


def identity(conn, last: int) -> dict:
    """The meta a cache records to be recognised again (``describes``)."""
    return {"library_id": library_id(conn), "last": last, "probes": probes(conn, last)}


def describes(conn, meta: dict) -> bool:
    """Whether a cache's recorded ``identity`` still names this library and its rows."""
    if meta.get("library_id") != library_id(conn):
        return False
    for rid, h in meta.get("probes", ()):
        row = conn.execute("SELECT hash FROM tiles WHERE rowid = ?", (rid,)).fetchone()
        if row is None or row[0] != h:
            return False
    return True


def write_npz(path: Path, arrays: dict[str, np.ndarray]) -> bool:
    """Write ``arrays`` to ``path`` atomically (``tilelib.fsio.atomic_write``); False if the directory
    refuses (a cache is worth no error)."""
    buf = io.BytesIO()
    # allow_pickle is numpy's default, named so that no key of ``arrays`` could be read as it (the stubs' objection)
    np.savez(buf, allow_pickle=True, **arrays)
    try:
        atomic_write(path, buf.getvalue())
    except BadInput:
        return False
    return True


__all__ = ["beside", "describes", "identity", "library_id", "probes", "write_npz"]
