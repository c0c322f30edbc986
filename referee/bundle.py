"""A day's bundle (FORMAT §5, §10): the rows one day's board uses, as a library file of its own.

Under the fair rule the library is a stock: it holds the tiles of every board not yet played, so
it cannot be published. What a verifier of a finished day needs is much less — the tiles the
manifest places, the manifest, and the spent rows that board wrote — and that is what a bundle
holds, nothing more:

- ``tiles``: exactly the rows whose hash the manifest names, copied verbatim;
- ``manifests``: exactly one row, the day's, copied verbatim;
- ``spent``: exactly the board's own rows, one per distinct solution of side n >= 10:
  (solution hash, the manifest's digest, n, day);
- ``misses``: none; ``meta``: ``schema_version``, a fresh ``library_id``, ``kind`` = ``bundle``
  and ``bundle_day`` = the day.

``write_bundle`` makes one from a library (after the checks that the library's copy of the day
is whole and fair); ``referee.bundle_check`` is the check ``referee.verify`` runs on one (step
``bundle``). Everything is a function of the manifest and the rows, so two machines bundle a day
to the same rows.
"""

from __future__ import annotations

import os
import sqlite3
from dataclasses import dataclass
from pathlib import Path

from referee import gate
from referee.bundle_check import DAY_KEY, KIND
from referee.manifest import Manifest
from referee.verify import check_fresh, check_tiles_present
from tilelib.db import atomic, rows_by_hash
from tilelib.errors import BadInput, NotFound
from tilelib.fsio import check_placeable, staged
from tilelib.merge import MANIFEST_COLUMNS, SPENT_COLUMNS
from tilelib.spent import board_rows
from tilelib.store import TILE_COLUMNS, Library


@dataclass(frozen=True)
class BundleReport:
    """What ``write_bundle`` wrote."""

    day: str
    manifest: Manifest  # the day's board, as the library stores it (gate-admitted)
    path: Path
    tiles: int
    spent: int
    bytes: int

    def line(self) -> str:
        return (
            f"bundle of {self.day}: {self.tiles:,} tile rows, {self.spent:,} spent rows, "
            f"{self.bytes:,} bytes -> {self.path}"
        )


def _out_path(out: Path) -> Path:
    """``out`` can be written: BadInput (exit 2) before any work when it cannot."""
    p = check_placeable(out, "--out")
    if not p.parent.is_dir():
        raise BadInput(f"cannot write {p}: no directory {p.parent}")
    if not os.access(p.parent, os.W_OK):
        raise BadInput(f"cannot write {p}: {p.parent} is not writable")
    return p


def write_bundle(lib: Library, day: str, out: Path) -> BundleReport:
    """Write the bundle of ``day`` from ``lib`` to ``out`` (``tilelib.fsio.staged``: built in a private
    directory, fsynced and renamed into place; a failure leaves no file).

    The day's stored manifest passes the gate, every tile it names is in ``lib`` and whole, and a
    ``fresh`` board passes the fair check against the whole library — a bundle never publishes a
    board that verify would refuse for what only the full library can tell. NotFound (exit 2)
    when ``lib`` holds no manifest for ``day``."""
    path = _out_path(Path(out))
    m = gate.stored(lib, day)
    if m is None:
        raise NotFound(f"the library {lib.path} holds no manifest for {day} (build it, or pull)")
    tiles = check_tiles_present(m, lib)
    check_fresh(m, lib, tiles)
    manifest_row = lib.conn.execute(
        f"SELECT {', '.join(MANIFEST_COLUMNS)} FROM manifests WHERE day = ?", (day,)
    ).fetchone()
    rows = sorted(rows_by_hash(lib.conn, TILE_COLUMNS, m.hashes))
    spent = [
        (r.solution, r.board, r.n, r.day, manifest_row[-1]) for r in board_rows(lib.conn, m.hashes, m.digest(), day)
    ]
    try:
        with staged(path) as tmp, Library.create(tmp) as b:
            with atomic(b.conn) as c:
                c.executemany(
                    "INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", [("kind", KIND), (DAY_KEY, day)]
                )
                c.executemany(
                    f"INSERT INTO tiles ({', '.join(TILE_COLUMNS)}) VALUES ({', '.join('?' * len(TILE_COLUMNS))})", rows
                )
                c.execute(f"INSERT INTO manifests ({', '.join(MANIFEST_COLUMNS)}) VALUES (?, ?, ?, ?)", manifest_row)
                c.executemany(f"INSERT INTO spent ({', '.join(SPENT_COLUMNS)}) VALUES (?, ?, ?, ?, ?)", spent)
            b.conn.execute("VACUUM")
    except sqlite3.Error as e:
        raise BadInput(f"cannot write {path}: {e}") from e
    return BundleReport(day=day, manifest=m, path=path, tiles=len(rows), spent=len(spent), bytes=path.stat().st_size)


__all__ = ["BundleReport", "write_bundle"]
