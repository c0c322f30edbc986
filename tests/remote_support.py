"""Library helpers for the remote tests: distinct tiles from a seeded generator, tile-set readers."""

from __future__ import annotations

import hashlib
import sqlite3
from pathlib import Path

import numpy as np

from generator.solution import random_solution
from tilelib.db import connect
from tilelib.rng import Stream
from tilelib.store import Library
from tilelib.tile import Features, Tile


def random_tiles(seed: int, count: int, n: int = 6) -> list[Tile]:
    """``count`` sound tiles drawn from ``seed``: a random solution that keeps the rules, random givens
    with no corner given, a random seam mask and the m = 1 features that agree with them. Every row a
    transfer brings is audited like ``tiles library verify`` does (issue 69), so test rows are real."""
    rng = np.random.default_rng(seed)
    stream = Stream(hashlib.sha256(f"remote_support/{seed}".encode()).digest(), f"random_tiles/{n}")
    out = []
    for _ in range(count):
        givens = rng.integers(0, 2, (n, n), dtype=np.uint8)
        givens[0, 0] = givens[0, -1] = givens[-1, 0] = givens[-1, -1] = 0
        blank = 1.0 - float(givens.sum()) / (n * n)
        out.append(Tile.from_grids(random_solution(n, stream), givens, int(rng.integers(0, 16)), Features(blank=blank)))
    return out


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


def opened_then_planted(path: Path, trigger: str, count: int = 3) -> Library:
    """A library of ``count`` random tiles opened (its schema proven), then given ``trigger`` by
    another process: what no open can see."""
    make_library(path, 1, count)
    lib = Library.open(path)
    other = sqlite3.connect(path)
    other.execute(trigger)
    other.commit()
    other.close()
    return lib


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
