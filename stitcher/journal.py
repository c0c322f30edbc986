"""What a stitch writes to the library, written at once or logged and replayed later.

A stitch writes three kinds of rows: misses (``record_miss``), their outcome
(``mark_drained`` / ``mark_nofit``) and the tiles the drain made (``insert``).
``SqlJournal`` writes the ledger rows into the library's open transaction as they
happen (the one-process stitch) and keeps the tiles back until ``flush`` writes
those the final board uses or the ledger names. A region worker (``stitcher.regions``) runs in a forked
process that must not touch the parent's SQLite connection, so it uses a
``LogJournal``: reads go to a read-only connection of its own (the library as it
was when the stitch began), writes are kept in order as plain data
(``ops``, ``tiles``) and the parent replays them with ``replay`` in a fixed
order — so the library ends the same whatever ran first.

A logged miss that the library does not know yet gets a provisional negative id;
``replay`` maps it to the row id ``record_miss`` gives it.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

from tilelib import ledger
from tilelib.constraint import Constraint, canonical_constraint
from tilelib.db import connect
from tilelib.errors import UnknownTile
from tilelib.ledger import Miss
from tilelib.spent import spent_of
from tilelib.store import Library, tile_key
from tilelib.tile import Tile


class SqlJournal:
    """Writes ledger rows straight into ``conn`` (inside the stitch's transaction, ``stitch.kept``). Tiles
    are kept back (``defer``): ``insert`` only names them, and ``flush`` writes, at the end of the
    stitch, those the board uses or the ledger names — a tile made for an attempt that was undone
    (a failed repair, a square remade later) adds no row. Measured on a G = 1000 night at a 41k
    library: 1,358 of 3,751 new rows were such tiles. Without ``defer`` (the SqlIndex path, whose
    lookups read the library) each tile is written at once, as before."""

    def __init__(self, lib, conn, *, defer: bool = True) -> None:
        self.lib, self.conn, self.defer = lib, conn, defer
        self.pending: dict[str, Tile] = {}  # hash -> canonical tile, kept back, in the order made
        self.named: set[str] = set()  # tile hashes the ledger names (mark_drained)

    def record_miss(self, c: Constraint, packing: str) -> Miss:
        return ledger.record_miss(self.conn, c, packing)

    def mark_drained(self, miss_id: int, tile_hash: str) -> None:
        ledger.mark_drained(self.conn, miss_id, tile_hash)
        self.named.add(tile_hash)

    def mark_nofit(self, miss_id: int) -> None:
        ledger.mark_nofit(self.conn, miss_id)

    def insert(self, tile: Tile) -> tuple[str, int]:
        """(hash, t) of the tile, canonical.transform(t) = tile; kept back until ``flush``."""
        if not self.defer:
            return self.lib.insert(tile)  # in the stitch's transaction, committed with the ledger
        canon, h, t = tile_key(tile)
        self.pending.setdefault(h, canon)
        return h, t

    def insert_all(self, tiles: list[Tile]) -> list[str]:
        """``insert`` for many tiles (a half's); their hashes, in order."""
        if not self.defer:
            return self.lib.insert_rows(tiles)
        return [self.insert(t)[0] for t in tiles]

    def get_oriented(self, h: str, t: int) -> Tile | None:
        """Tile h oriented by t, kept back or in the library (None if neither): what the stitch sees."""
        return _oriented(h, t, self.lib, self.pending)

    def is_spent(self, solution: str) -> bool:
        """Whether the library's spent table names this solution (the fair rule, ``tilelib.spent``)."""
        return bool(spent_of(self.conn, [solution]))

    def write_named(self) -> None:
        """Write now the kept-back tiles the ledger names, so that a commit before the end (the
        strip's, which the halves' workers read) never leaves a ledger row naming a missing tile."""
        named = [h for h in self.pending if h in self.named]
        self.lib.insert_canonical([self.pending.pop(h) for h in named])

    def flush(self, used: set[str]) -> int:
        """Write the kept-back tiles in ``used`` (the board's) or named by the ledger, in the order
        they were made, into the open transaction; forget the others. Returns how many were not
        written."""
        keep = [c for h, c in self.pending.items() if h in used or h in self.named]
        self.lib.insert_canonical(keep)
        dropped = len(self.pending) - len(keep)
        self.pending.clear()
        return dropped


class LogJournal:
    """Answers as ``SqlJournal`` would, from a read-only view plus its own log; writes nothing."""

    def __init__(self, path, inherited: dict[str, Tile] | None = None) -> None:
        self.conn = connect(path, readonly=True)
        self.view = Library(Path(path), self.conn)  # reads only (the connection is read-only)
        self.inherited = inherited or {}  # the parent's kept-back tiles (SqlJournal.pending)
        self.ops: list[tuple] = []  # ("miss", c, packing, id) | ("drained", id, h) | ("nofit", id)
        self.tiles: list[Tile] = []  # inserted tiles, in order
        self._canon: dict[str, Tile] = {}  # hash -> canonical tile, of those
        self._misses: dict[tuple, Miss] = {}
        self._by_id: dict[int, tuple] = {}

    def record_miss(self, c: Constraint, packing: str) -> Miss:
        canon, _ = canonical_constraint(c)
        key = canon.key()
        m = self._misses.get(key)
        if m is None:
            m = ledger.find_miss(self.conn, c) or Miss(-(len(self._misses) + 1), canon, packing, 0, False, None)
        m = dataclasses.replace(m, count=m.count + 1)
        self._misses[key], self._by_id[m.id] = m, key
        self.ops.append(("miss", c, packing, m.id))
        return m

    def _update(self, miss_id: int, **changes) -> None:
        key = self._by_id[miss_id]
        self._misses[key] = dataclasses.replace(self._misses[key], **changes)

    def mark_drained(self, miss_id: int, tile_hash: str) -> None:
        self._update(miss_id, tile=tile_hash)
        self.ops.append(("drained", miss_id, tile_hash))

    def mark_nofit(self, miss_id: int) -> None:
        self._update(miss_id, nofit=True)
        self.ops.append(("nofit", miss_id))

    def insert(self, tile: Tile) -> tuple[str, int]:
        canon, h, t = tile_key(tile)
        self.tiles.append(tile)
        self._canon.setdefault(h, canon)
        return h, t

    def get_oriented(self, h: str, t: int) -> Tile | None:
        """Tile h oriented by t from this log, the parent's kept-back tiles or the view (else None)."""
        return _oriented(h, t, self.view, self._canon, self.inherited)

    def is_spent(self, solution: str) -> bool:
        """``SqlJournal.is_spent`` on the read-only view (spent rows never change during a stitch)."""
        return bool(spent_of(self.conn, [solution]))

    def close(self) -> None:
        self.conn.close()


def _oriented(h: str, t: int, lib: Library, *held: dict[str, Tile]) -> Tile | None:
    """Tile h oriented by t from the first of ``held`` (hash -> canonical tile) that has it, else
    from ``lib``; None if it is nowhere."""
    for d in held:
        if h in d:
            return d[h].transform(t)
    try:
        return lib.get_oriented(h, t)
    except UnknownTile:
        return None


def replay(ops: list[tuple], journal: SqlJournal) -> None:
    """Write a ``LogJournal``'s ledger ops through ``journal``, mapping provisional ids to rows."""
    ids: dict[int, int] = {}
    for op in ops:
        if op[0] == "miss":
            _kind, c, packing, logged = op
            ids[logged] = journal.record_miss(c, packing).id
        elif op[0] == "drained":
            journal.mark_drained(ids.get(op[1], op[1]), op[2])
        else:
            journal.mark_nofit(ids.get(op[1], op[1]))
