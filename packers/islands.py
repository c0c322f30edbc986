"""`islands`: n = 16 tiles as islands in a sea of n = 6 tiles; no two islands touch.

Why: a library converges only if the squares a board boxes in are ones it can
already fill. Every 6×6 grid is soon in the library (4,140 of them), but a
larger square whose sides meet several placed squares needs an exact
multi-sided match that a library of any reachable size rarely holds, so
big-first boards keep asking for ~2,000 new tiles a night (BENCHMARKS, "Growth
over 30 nights"). Here every square larger than n = 6 is an island that
touches only n = 6 squares, at least one full n = 6 tile away from any other
island: placed first, an island faces no placed cell, and each n = 6 square
touches at most one island.

The sea is a lattice of 5-unit pitch squares (n = 6). P mod 5 pitch units do
not fit it; they become one zone strip along a drawn side per axis (4 units
at G = 1000: 0.8% of the board).

Draws, in order: the seed point (x, y); whether the zone strips lie left and
top (else right and bottom), one draw per axis when P mod 5 > 0; the coarse
column widths and row heights in lattice units (``fill.split_length`` over
[cell_min, cell_max] / 5, summing to the lattice side); then for every coarse
cell in raster order whether it gets an island (always the seed point's
cell, else ``density`` percent) and, if it does, its offset inside the cell
(x then y, in units, at least one unit from every side of the cell, so two
islands are at least two units apart). A cell too small for an island with
that margin gets none.

Tile order: the seed cell's island (id 0), the other islands in cell order,
then the sea squares in raster order (y, then x). When the seed cell got no
island, the seed tile is the square covering the seed point (or the nearest).
Stream: the CLI passes ``Stream(seed, "pack/islands")``.
"""

from __future__ import annotations

from packers.bands import seed_tile_at
from packers.fill import split_length
from packers.packing import Packing, Rect, Square, group_zones, merge_params
from tilelib.rng import Stream

NAME = "islands"
VERSION = 1
ORDER = "big"  # the stitcher's placement order (stitcher.order.ORDERS): large squares first
UNIT = 5  # the sea's pitch square: an n = 6 tile
ISLAND = 3  # island side in units: 15 pitch, an n = 16 tile
DEFAULTS = {"cell_min": 25, "cell_max": 30, "density": 100}


def check_params(params: dict) -> dict:
    """Merge defaults; reject unknown keys or bad values (ValueError)."""
    p = merge_params(NAME, DEFAULTS, params)
    for k in DEFAULTS:
        if type(p[k]) is not int:
            raise ValueError(f"{k} must be an integer")
    lo, hi = p["cell_min"], p["cell_max"]
    if lo % UNIT or hi % UNIT or not 25 <= lo <= hi <= 60:
        raise ValueError("need 25 <= cell_min <= cell_max <= 60, both multiples of 5")
    if not 0 <= p["density"] <= 100:
        raise ValueError("density must be a percent 0..100")
    return p


def coarse_units(K: int, lo: int, hi: int, rng: Stream) -> list[int]:
    """Cell sides in units summing to K, each in [lo, hi] when K allows (else one cell of K, or a
    split whose last cell holds the rest)."""
    if K <= hi:
        return [K]
    return split_length(K, list(range(lo, hi + 1)), rng)


def pack(P: int, rng: Stream, params: dict) -> Packing:
    """Islands packing of [0, P)²; see the module docstring."""
    p = check_params(params)
    px, py = rng.randbelow(P), rng.randbelow(P)
    rest = P % UNIT
    ox = rest if rest and rng.randbelow(2) else 0  # the lattice's origin: after a left/top strip
    oy = rest if rest and rng.randbelow(2) else 0
    K = (P - rest) // UNIT
    cols = coarse_units(K, p["cell_min"] // UNIT, p["cell_max"] // UNIT, rng)
    rows = coarse_units(K, p["cell_min"] // UNIT, p["cell_max"] // UNIT, rng)
    sx = min(max(0, (px - ox) // UNIT), K - 1)  # the seed point's lattice unit
    sy = min(max(0, (py - oy) // UNIT), K - 1)
    taken = bytearray(K * K)
    seed: list[Square] = []
    islands: list[Square] = []
    uy = 0
    for h in rows:
        ux = 0
        for w in cols:
            is_seed = ux <= sx < ux + w and uy <= sy < uy + h
            if (is_seed or rng.randbelow(100) < p["density"]) and min(w, h) >= ISLAND + 2:
                ix = ux + 1 + rng.randbelow(w - ISLAND - 1)
                iy = uy + 1 + rng.randbelow(h - ISLAND - 1)
                for a in range(iy, iy + ISLAND):
                    taken[a * K + ix : a * K + ix + ISLAND] = b"\x01" * ISLAND
                (seed if is_seed else islands).append((ox + ix * UNIT, oy + iy * UNIT, ISLAND * UNIT))
            ux += w
        uy += h
    sea = [(ox + b * UNIT, oy + a * UNIT, UNIT) for a in range(K) for b in range(K) if not taken[a * K + b]]
    squares = seed + islands + sea
    zones: list[Rect] = []
    if rest:
        zones.append((P - rest if ox == 0 else 0, 0, rest, P))  # the column strip, whole height
        zones.append((ox, P - rest if oy == 0 else 0, P - rest, rest))  # the row strip, beside it
    seed_id = 0 if seed else seed_tile_at(squares, px, py)
    return Packing(
        P=P, squares=tuple(squares), zones=group_zones(zones), seed_tile=seed_id, name=NAME, version=VERSION, params=p
    )
