"""What a stitch writes to the library, written at once or logged and replayed later.

A stitch writes three kinds of rows: misses (``record_miss``), their outcome
(``mark_drained`` / ``mark_nofit``) and the tiles the drain made (``insert``).
``SqlJournal`` writes them into the library's open transaction as they happen
(the one-process stitch). A region worker (``stitcher.regions``) runs in a forked
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
import sqlite3

from tilelib import ledger
from tilelib.constraint import Constraint, canonical_constraint
from tilelib.ledger import Miss
from tilelib.errors import UnknownTile
from tilelib.store import TILE_COLUMNS, row_to_tile, tile_key
from tilelib.tile import Tile


class SqlJournal:
    """Writes straight into ``conn`` (the stitch's one deferred transaction) and ``lib``."""

    def __init__(self, lib, conn) -> None:
        self.lib, self.conn = lib, conn

    def record_miss(self, c: Constraint, packing: str) -> Miss:
        return ledger.record_miss(self.conn, c, packing)

    def mark_drained(self, miss_id: int, tile_hash: str) -> None:
        ledger.mark_drained(self.conn, miss_id, tile_hash)

    def mark_nofit(self, miss_id: int) -> None:
        ledger.mark_nofit(self.conn, miss_id)

    def insert(self, tile: Tile) -> tuple[str, int]:
        return self.lib.insert(tile, commit=False)      # committed with the ledger, at the end

    def insert_all(self, tiles: list[Tile]) -> list[str]:
        """Insert many tiles in one statement (a half's); their hashes, in order."""
        return self.lib.insert_rows(tiles)

    def get_oriented(self, h: str, t: int) -> Tile | None:
        """The library tile h oriented by t (None if absent): what the stitch can see."""
        try:
            return self.lib.get_oriented(h, t)
        except UnknownTile:
            return None


class LogJournal:
    """Answers as ``SqlJournal`` would, from a read-only view plus its own log; writes nothing."""

    def __init__(self, path) -> None:
        self.conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        self.ops: list[tuple] = []          # ("miss", c, packing, id) | ("drained", id, h) | ("nofit", id)
        self.tiles: list[Tile] = []         # inserted tiles, in order
        self._canon: dict[str, Tile] = {}   # hash -> canonical tile, of those
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
        """Tile h oriented by t from this log or the view (None if in neither)."""
        canon = self._canon.get(h)
        if canon is None:
            row = self.conn.execute(f"SELECT {', '.join(TILE_COLUMNS)} FROM tiles WHERE hash = ?",
                                    (h,)).fetchone()
            if row is None:
                return None
            canon = row_to_tile(dict(zip(TILE_COLUMNS, row)))
        return canon.transform(t)

    def close(self) -> None:
        self.conn.close()


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
