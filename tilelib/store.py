"""The tile library: one SQLite file created from ``schema.sql`` (FORMAT §5), over sqlite3.

Append-only and content-addressed: ``insert_many`` canonicalises each tile,
hashes it and does ``INSERT OR IGNORE`` in one transaction per batch; rows are
never updated. ``get`` re-hashes what it reads, so a tampered row is an error,
never a silent success. Edge queries live in ``tilelib.query``; misses and
manifests in ``tilelib.ledger``; whole-file checks in ``tilelib.audit``.
"""

from __future__ import annotations

import sqlite3
import time
import uuid
from collections.abc import Iterable
from pathlib import Path

from tilelib.db import atomic, connect, rows_by_hash
from tilelib.errors import CorruptLibrary, HashMismatch, LibraryError, NotALibrary, RowsNotStored, UnknownTile
from tilelib.fsio import check_placeable, refuse_symlink
from tilelib.schema import SCHEMA_VERSION, check_schema, version_statements
from tilelib.spent import count as spent_count
from tilelib.tile import Features, Tile, content_hash

SQLITE_MAGIC = b"SQLite format 3\x00"
FEATURE_COLUMNS = (
    "m",
    "blank",
    "ladder",
    "bifurcations",
    "used_unique",
    "needs_unique",
    "needs_bifurcation",
    "pins",
    "pin_depth",
    "alt_sides",
)
TILE_COLUMNS = (
    "hash",
    "n",
    "version",
    "seam_mask",
    "top",
    "right",
    "bottom",
    "left",
    *FEATURE_COLUMNS,
    "solution",
    "givens",
    "flip",
    "alts",
    "created",
)


_INSERT_TILE = f"INSERT OR IGNORE INTO tiles ({', '.join(TILE_COLUMNS)}) VALUES ({', '.join('?' * len(TILE_COLUMNS))})"


def tile_row(tile: Tile, created: int) -> tuple:
    """The ``tiles`` row of a tile (which must already be in canonical orientation) as a tuple in
    ``TILE_COLUMNS`` order: what ``_INSERT_TILE`` binds, made without a dict (the generator's path)."""
    f = tile.features
    top, right, bottom, left = tile.edges
    return (
        content_hash(tile.n, tile.solution, tile.givens, tile.seam_mask),
        tile.n,
        f.version,
        tile.seam_mask,
        top,
        right,
        bottom,
        left,
        *[getattr(f, c) for c in FEATURE_COLUMNS],
        tile.solution,
        tile.givens,
        f.flip,
        f.alts,
        created,
    )


def tile_to_row(tile: Tile, created: int) -> dict:
    """The ``tiles`` row of a tile, which must already be in canonical orientation, by column name."""
    return dict(zip(TILE_COLUMNS, tile_row(tile, created), strict=True))


def row_to_tile(row: dict) -> Tile:
    """Rebuild a Tile from a row, checking the stored hash against the content."""
    try:
        feats = Features(
            version=row["version"],
            flip=bytes(row["flip"]),
            alts=bytes(row["alts"]),
            **{c: row[c] for c in FEATURE_COLUMNS},
        )
        tile = Tile(row["n"], bytes(row["solution"]), bytes(row["givens"]), row["seam_mask"], feats)
        actual = content_hash(tile.n, tile.solution, tile.givens, tile.seam_mask)
    except (ValueError, TypeError, KeyError, OverflowError) as err:
        raise CorruptLibrary(f"tile {row.get('hash')}: malformed row ({err})") from err
    if actual != row["hash"]:
        raise HashMismatch(f"tile {row['hash']}: content hashes to {actual}")
    return tile


def upgrade(conn: sqlite3.Connection) -> None:
    """Bring a version-1 library to version 2: add the spent table and its tamper triggers. A file
    this process may not write (read-only) is left as it is: readers treat a missing spent table
    as an empty one (``tilelib.spent.has_table``)."""
    try:
        old = set(version_statements(1))
        with atomic(conn):
            for stmt in version_statements(SCHEMA_VERSION):
                if stmt not in old:
                    conn.execute(stmt)
            conn.execute("UPDATE meta SET value = ? WHERE key = 'schema_version'", (str(SCHEMA_VERSION),))
    except sqlite3.OperationalError:
        pass


JOURNALS = ("-journal", "-wal", "-shm")


def check_path(path: str | Path) -> Path:
    """A library path that can name a file: BadInput for a directory, or a path under a file;
    LibraryError when a journal name beside it is a symbolic link (SQLite writes no journal through
    one, so every write would fail; said plainly instead of "unable to open database file")."""
    p = check_placeable(path, "library path", writable=False)  # a library may be read from a read-only disk
    for suffix in JOURNALS:
        j = p.with_name(p.name + suffix)
        if j.is_symlink():
            raise LibraryError(
                f"{j} is a symbolic link: SQLite will not write a journal through it; remove it to use the library"
            )
    return p


class Library:
    """An open tile library file. Use ``Library.open`` / ``Library.create``; close when done."""

    def __init__(self, path: Path, conn: sqlite3.Connection) -> None:
        self.path = path
        self.conn = conn

    # ------------------------------------------------------------ open / create

    @classmethod
    def create(cls, path: str | Path) -> Library:
        """Create a new library file (or open it if it already is one)."""
        p = check_path(path)
        if p.exists() and p.stat().st_size > 0:
            return cls.open(p)
        refuse_symlink(p, "library path")  # a dangling link would make the library at its target
        p.parent.mkdir(parents=True, exist_ok=True)
        conn = connect(p)
        with atomic(conn):
            for stmt in version_statements(SCHEMA_VERSION):
                conn.execute(stmt)
            conn.execute("INSERT OR IGNORE INTO meta VALUES ('schema_version', ?)", (str(SCHEMA_VERSION),))
            conn.execute("INSERT OR IGNORE INTO meta VALUES ('library_id', ?)", (uuid.uuid4().hex,))
        return cls(p, conn)

    @classmethod
    def open(cls, path: str | Path, *, create: bool = False) -> Library:
        """Open an existing library; raise a clear LibraryError if it is not one we can use."""
        p = check_path(path)
        if not p.exists() or p.stat().st_size == 0:
            if create:
                return cls.create(p)
            raise LibraryError(f"no tile library at {p} (run `tiles library init`)")
        with open(p, "rb") as fh:
            if fh.read(16) != SQLITE_MAGIC:
                raise NotALibrary(f"{p} is not a SQLite file, so not a tiles library")
        conn = connect(p)
        try:
            version = check_schema(conn, str(p))
        except LibraryError:
            conn.close()
            raise
        except sqlite3.DatabaseError as err:
            conn.close()
            raise CorruptLibrary(f"{p} is corrupt: {err}") from err
        if version < SCHEMA_VERSION:
            upgrade(conn)
        return cls(p, conn)

    def close(self) -> None:
        self.conn.close()

    def __enter__(self) -> Library:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # ------------------------------------------------------------ meta

    def meta(self) -> dict[str, str]:
        return dict(self.conn.execute("SELECT key, value FROM meta").fetchall())

    # ------------------------------------------------------------ tiles

    def insert_many(self, tiles: Iterable[Tile], *, batch: int = 2000) -> int:
        """Canonicalise and insert tiles; return how many were new. One transaction per batch."""
        now = int(time.time())
        new = 0
        buf: list[tuple] = []
        for tile in tiles:
            canon, _ = tile.canonical()
            buf.append(tile_row(canon, now))
            if len(buf) >= batch:
                new += self._insert(buf)
                buf = []
        if buf:
            new += self._insert(buf)
        return new

    def insert_rows(self, tiles: Iterable[Tile]) -> list[str]:
        """``insert`` for many tiles, in one executemany; their hashes, in order."""
        keyed = [tile_key(t) for t in tiles]
        self.insert_canonical([k[0] for k in keyed])
        return [k[1] for k in keyed]

    def insert_canonical(self, canons: list[Tile]) -> int:
        """INSERT OR IGNORE canonical tiles, in one executemany (``atomic``: inside a stitch's
        transaction a savepoint, else a transaction of their own); how many were new."""
        now = int(time.time())
        return self._insert([tile_row(t, now) for t in canons])

    def _insert(self, rows: list[tuple]) -> int:
        """INSERT OR IGNORE tiles rows (``TILE_COLUMNS`` order) and count the new ones by the hashes
        present before and after, not by SQLite's change counter (which a trigger's own writes move).
        A row asked for and not there afterwards is RowsNotStored, and the batch is rolled back."""
        hashes = {r[0] for r in rows}
        with atomic(self.conn):
            before = self._present(hashes)
            self.conn.executemany(_INSERT_TILE, rows)
            after = self._present(hashes)
            if len(after) != len(hashes):
                first = min(hashes - after)
                raise RowsNotStored(
                    f"{self.path}: tile {first} was inserted and is not stored "
                    f"({len(hashes - after)} of {len(hashes)} rows missing); nothing of the batch is kept"
                )
        return len(hashes) - len(before)

    def _present(self, hashes) -> set[str]:
        """Those of ``hashes`` the tiles table holds."""
        return {h for (h,) in rows_by_hash(self.conn, ("hash",), hashes)}

    def insert(self, tile: Tile) -> tuple[str, int]:
        """Insert one tile; return (hash, t) with the input = canonical.transform(t). Inside a
        stitch it joins the stitch's one transaction (a commit per drained tile wrote ~140 kB of
        journal and pages each, 86 MB for a 0.7 MB library at G = 301)."""
        canon, h, t = tile_key(tile)
        self.insert_canonical([canon])
        return h, t

    def get(self, hash_: str) -> Tile:
        """The canonical tile with this hash; UnknownTile if absent, HashMismatch if tampered."""
        cur = self.conn.execute(f"SELECT {', '.join(TILE_COLUMNS)} FROM tiles WHERE hash = ?", (hash_.lower(),))
        row = cur.fetchone()
        if row is None:
            raise UnknownTile(f"no tile with hash {hash_} in {self.path}")
        return row_to_tile(dict(zip(TILE_COLUMNS, row, strict=True)))

    def get_many(self, hashes) -> dict[str, Tile]:
        """{hash: canonical tile} of the distinct ``hashes`` present (absent ones are left out;
        HashMismatch / CorruptLibrary as ``get``). One query per 500, in hash order: a board's
        ~20k tiles cost 0.4 s where 20k ``get`` calls cost 0.7 s on a 921 MB library."""
        out: dict[str, Tile] = {}
        for row in rows_by_hash(self.conn, TILE_COLUMNS, {h.lower() for h in hashes}):
            d = dict(zip(TILE_COLUMNS, row, strict=True))
            out[d["hash"]] = row_to_tile(d)
        return out

    def get_oriented(self, hash_: str, t: int) -> Tile:
        """transform(canonical tile, t): the tile as a manifest entry (hash, t) places it."""
        return self.get(hash_).transform(t)

    def has(self, hash_: str) -> bool:
        return self.conn.execute("SELECT 1 FROM tiles WHERE hash = ?", (hash_,)).fetchone() is not None

    def count_tiles(self, n: int | None = None) -> int:
        if n is None:
            return self.conn.execute("SELECT count(*) FROM tiles").fetchone()[0]
        return self.conn.execute("SELECT count(*) FROM tiles WHERE n = ?", (n,)).fetchone()[0]

    def iter_rows(self, batch: int = 5000):
        """Every tiles row as a dict, in hash order (for audits and exports)."""
        cur = self.conn.execute(f"SELECT {', '.join(TILE_COLUMNS)} FROM tiles ORDER BY hash")
        while rows := cur.fetchmany(batch):
            for r in rows:
                yield dict(zip(TILE_COLUMNS, r, strict=True))

    def stats(self) -> dict:
        """Counts per n, per m and per ladder level, plus misses, manifests and file size."""
        q = self.conn.execute
        per_n = dict(q("SELECT n, count(*) FROM tiles GROUP BY n ORDER BY n").fetchall())
        total = sum(per_n.values())
        size = self.path.stat().st_size
        meta = self.meta()
        spent = spent_count(self.conn)
        return {
            "path": str(self.path),
            "library_id": meta.get("library_id"),
            "schema_version": int(meta["schema_version"]),
            "tiles": total,
            "per_n": per_n,
            "per_m": dict(q("SELECT m, count(*) FROM tiles GROUP BY m ORDER BY m").fetchall()),
            "per_ladder": dict(q("SELECT ladder, count(*) FROM tiles GROUP BY ladder ORDER BY ladder").fetchall()),
            "misses_open": q("SELECT count(*) FROM misses WHERE nofit = 0 AND tile IS NULL").fetchone()[0],
            "misses_nofit": q("SELECT count(*) FROM misses WHERE nofit = 1").fetchone()[0],
            "misses_drained": q("SELECT count(*) FROM misses WHERE tile IS NOT NULL").fetchone()[0],
            "manifests": q("SELECT count(*) FROM manifests").fetchone()[0],
            "spent_solutions": spent[1],
            "spent_rows": spent[0],
            "file_bytes": size,
            "bytes_per_tile": round(size / total, 1) if total else None,
        }


def tile_key(tile: Tile) -> tuple[Tile, str, int]:
    """(canonical tile, its hash, t) with tile = canonical.transform(t): what ``Library.insert``
    stores and returns, computed without a library (the stitcher's region workers log inserts)."""
    from tilelib.symmetry import inverse

    canon, t = tile.canonical()
    return canon, content_hash(canon.n, canon.solution, canon.givens, canon.seam_mask), inverse(t)
