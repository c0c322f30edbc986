"""Library helpers for the remote tests: distinct tiles from a seeded generator, tile-set readers."""

from __future__ import annotations

import hashlib
import sqlite3
from pathlib import Path

import numpy as np

from tilelib.db import connect
from tilelib.store import Library
from tilelib.tile import Tile


def random_tiles(seed: int, count: int, n: int = 6) -> list[Tile]:
    """``count`` tiles from random 0/1 grids (the store does not check rules on insert)."""
    rng = np.random.default_rng(seed)
    return [
        Tile.from_grids(
            rng.integers(0, 2, (n, n), dtype=np.uint8),
            rng.integers(0, 2, (n, n), dtype=np.uint8),
            int(rng.integers(0, 16)),
        )
        for _ in range(count)
    ]


def make_library(path: Path, seed: int | None = None, count: int = 0) -> set[str]:
    """Create a library at ``path`` holding ``count`` random tiles; return their hashes."""
    with Library.create(path) as lib:
        if count:
            assert lib.insert_many(random_tiles(seed, count)) == count
        return tile_hashes(lib.path)


def add_tiles(path: Path, seed: int, count: int) -> set[str]:
    """Insert ``count`` new random tiles into an existing library; return their hashes."""
    with Library.open(path) as lib:
        before = hashes_of(lib.conn)
        assert lib.insert_many(random_tiles(seed, count)) == count
        return hashes_of(lib.conn) - before


def hashes_of(conn: sqlite3.Connection, schema: str = "main") -> set[str]:
    return {r[0] for r in conn.execute(f"SELECT hash FROM {schema}.tiles")}


def tile_hashes(path: Path | str) -> set[str]:
    conn = connect(path, readonly=True)
    try:
        return hashes_of(conn)
    finally:
        conn.close()


def file_digest(path: Path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()
