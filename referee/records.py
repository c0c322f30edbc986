"""``tiles referee tile HASH [--t T]``: a library tile as one JSON-ready record.

Grids are n·n chars row-major (FORMAT §12's puzzle-string layout): ``solution``
and each of ``alts`` as ``0``/``1``; ``givens`` and ``flip`` as masks of
``0``/``1``; ``puzzle`` as the givens shown over ``.`` (the string
``tiles solve`` reads). With ``t`` the record describes
``transform(canonical tile, t)`` — grids, edges and side nibbles all carried
through (``Tile.transform``) — while ``hash`` stays the content hash, which is
the same for every orientation.
"""

from __future__ import annotations

import re

from tilelib import bits
from tilelib.errors import BadInput
from tilelib.store import Library

_HEX64 = re.compile(r"[0-9a-fA-F]{64}")


def _s(grid) -> str:
    return "".join("01"[int(v)] for v in grid.ravel())


def tile_record(lib: Library, hash_: str, t: int = 0) -> dict:
    """The record of the tile with this hash, in orientation t (0 = canonical)."""
    if not isinstance(hash_, str) or not _HEX64.fullmatch(hash_.strip()):
        raise BadInput(f"a tile hash is 64 hex digits, got {hash_!r}")
    if type(t) is not int or not 0 <= t <= 15:
        raise BadInput(f"--t must be a transform 0..15, got {t!r}")
    h = hash_.strip().lower()
    tile = lib.get(h).transform(t)
    f = tile.features
    top, right, bottom, left = tile.edges
    return {
        "hash": h,
        "t": t,
        "n": tile.n,
        "version": f.version,
        "seam_mask": tile.seam_mask,
        "top": top,
        "right": right,
        "bottom": bottom,
        "left": left,
        "m": f.m,
        "blank": f.blank,
        "ladder": f.ladder,
        "bifurcations": f.bifurcations,
        "used_unique": f.used_unique,
        "needs_unique": f.needs_unique,
        "needs_bifurcation": f.needs_bifurcation,
        "pins": f.pins,
        "pin_depth": f.pin_depth,
        "alt_sides": f.alt_sides,
        "solution": _s(tile.solution_grid),
        "givens": _s(tile.givens_grid),
        "puzzle": str(bits.Puzzle.from_grid(tile.solution_grid, tile.givens_grid)),
        "flip": _s(bits.from_blob(f.flip, tile.n)),
        "alts": [_s(g) for g in tile.alt_grids()],
    }
