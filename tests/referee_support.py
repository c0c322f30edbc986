"""Test boards for the referee: a real packing, real generated tiles, a real library — no stitcher.

``build_fixture`` packs a G×G board, then makes one tile per square in id
order with the generator (``generator.make.make_tile``): the cells already
fixed by earlier squares are handed to its CP-SAT completion, so seams agree
by construction; givens are thinned assuming the sides in ``seam_mask`` are
known from neighbours. Tiles go into the library (canonical) and the
manifest records (hash, t) for each square. The result is test data, built
once per session and copied into each test's tmp dir.
"""

from __future__ import annotations

import hashlib
import shutil
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from generator.make import GenParams, make_tile
from packers import make_packing
from referee.manifest import Manifest
from tilelib.rng import Stream
from tilelib.store import Library

DAY = "2026-11-29"


@dataclass
class Fixture:
    manifest: Manifest
    lib_path: Path
    seed: bytes
    solution: np.ndarray  # int8 G×G, -1 outside tile windows


def build_fixture(
    path: Path,
    G: int,
    seed: bytes,
    *,
    packer: str = "big-first",
    seam_mask: int = 15,
    params: dict | None = None,
    packing=None,
) -> Fixture:
    """Fill a packing (``packing``, or the named packer's from the seed) with generated tiles."""
    packing = packing if packing is not None else make_packing(packer, G, seed, params)
    for attempt in range(50):  # a square whose fixed cells admit no completion: start again
        tiles = _fill(packing, seed, seam_mask, attempt)
        if tiles is not None:
            break
    else:
        raise RuntimeError("fixture: no consistent filling in 50 attempts; pick another seed")
    sol, chosen = tiles
    hashes, ts = [], []
    with Library.create(path) as lib:
        for tile in chosen:
            h, t = lib.insert(tile)
            hashes.append(h)
            ts.append(t)
    m = Manifest(
        day=DAY,
        seed_commit=hashlib.sha256(seed).hexdigest(),
        packing=packing,
        hashes=tuple(hashes),
        transforms=tuple(ts),
        clues=(),
        status="frontier",
        stats={},
    )
    return Fixture(m, Path(path), seed, sol)


def _fill(packing, seed: bytes, seam_mask: int, attempt: int):
    G = packing.P + 1
    sol = np.full((G, G), -1, dtype=np.int8)
    chosen = []
    for i, (x0, y0, s) in enumerate(packing.squares):
        n = s + 1
        win = sol[y0 : y0 + n, x0 : x0 + n]
        known = (win >= 0).astype(np.uint8)
        vals = np.where(known == 1, win, 0).astype(np.uint8)
        fixed = (vals, known) if known.any() else None
        tile = make_tile(GenParams.make(n, seam_mask=seam_mask), Stream(seed, f"fixture/{attempt}/{i}"), fixed)
        if tile is None:
            return None
        chosen.append(tile)
        win[...] = tile.solution_grid
    return sol, chosen


def copy_fixture(fx: Fixture, dest: Path) -> Fixture:
    """A private copy of the fixture's library (tests may tamper with it)."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy(fx.lib_path, dest)
    return Fixture(fx.manifest, dest, fx.seed, fx.solution)


_CACHE: dict = {}


def board21(tmp_path_factory) -> Fixture:
    """The shared G=21 big-first board (8 tiles) with the clues ``add_clues`` picks and those
    ``closure.add_play_clues`` adds, as a nightly build adds them (so that a player solving one
    tile at a time clears it); built once per session."""
    if "b21" not in _CACHE:
        from referee import frontier as fr
        from referee.board import build_board
        from referee.closure import add_play_clues

        seed = bytes(range(32))
        fx = build_fixture(tmp_path_factory.mktemp("b21") / "lib.sqlite", 21, seed)
        with Library.open(fx.lib_path) as lib:
            board = build_board(fx.manifest, lib)
            clues = fr.add_clues(board)
            clues = list(clues) + add_play_clues(board.with_clues(clues))
        fx.manifest = fx.manifest.with_clues(clues)
        _CACHE["b21"] = fx
    return _CACHE["b21"]


def zoned13(tmp_path_factory) -> Fixture:
    """G=13: four n=6 tiles (seed tile 3) and an L-shaped zone two units wide on the right and bottom."""
    if "z13" not in _CACHE:
        from packers import PACKERS
        from packers.packing import Packing

        # A hand-made packing, filed under a real packer (verify checks the packer exists at its
        # version, issue 11); no test re-draws it from a seed.
        packing = Packing(
            P=12,
            squares=((0, 0, 5), (5, 0, 5), (0, 5, 5), (5, 5, 5)),
            zones=(((10, 0, 2, 12), (0, 10, 10, 2)),),
            seed_tile=3,
            name="bands",
            version=PACKERS["bands"].version,
        )
        _CACHE["z13"] = build_fixture(
            tmp_path_factory.mktemp("z13") / "lib.sqlite", 13, bytes(range(32)), packing=packing
        )
    return _CACHE["z13"]
