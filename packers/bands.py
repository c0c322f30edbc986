"""`bands`: Mondrian bands with Euclid remainders, the fallback and test fixture.

Draws: the seed point (x, y) first, then the band heights (legal sides summing
to P, each step leaving a remainder that still splits), then per band the
variant choices. Each band of height h is filled left to right with h×h
squares; the last partial column (width r < h, possibly widened by giving
back up to two h-squares, whichever leaves the least zone) is cut by
``fill.euclid_fill``; pieces under 5 become zones.

Sub-band variant (param ``sub`` = percent chance, default 0): in a band of
height 15, each 15-wide slot becomes, with that chance, a stretch of three
rows of 5 (nine 5-squares per slot), breaking the row look. (The notes'
"two rows of 7 and 8" has no pitch-space reading: 8 is not a legal side.)

The seed tile is the square that covers the seed point (the nearest square
by centre distance when the point falls in a zone). Tiles are listed band by
band, left to right. Stream: the CLI passes ``Stream(seed, "pack/bands")``.
"""

from __future__ import annotations

from packers.fill import Out, euclid_fill, euclid_zone, split_length
from packers.packing import SIZES, Packing, group_zones, merge_params
from tilelib.rng import Stream

NAME = "bands"
VERSION = 1
ORDER = "bfs"  # the stitcher's placement order (stitcher.order.ORDERS): breadth-first from the seed tile
DEFAULTS = {"sub": 0}


def check_params(params: dict) -> dict:
    """Merge defaults; reject unknown keys or out-of-range values (ValueError)."""
    p = merge_params(NAME, DEFAULTS, params)
    if type(p["sub"]) is not int or not 0 <= p["sub"] <= 100:
        raise ValueError("sub must be an integer percent 0..100")
    return p


def seed_tile_at(squares: list, px: int, py: int) -> int:
    """Id of the square covering pitch unit (px, py), else the one whose centre is nearest."""
    for i, (x, y, s) in enumerate(squares):
        if x <= px < x + s and y <= py < y + s:
            return i
    return min(
        range(len(squares)),
        key=lambda i: (
            (2 * squares[i][0] + squares[i][2] - 2 * px) ** 2 + (2 * squares[i][1] + squares[i][2] - 2 * py) ** 2,
            i,
        ),
    )


def fill_band(y: int, h: int, P: int, rng: Stream, sub: int, out: Out) -> None:
    """Fill the band [0, P) × [y, y + h) with h-squares, sub-band stretches, and a Euclid remainder."""
    k = P // h
    # Give back up to two full squares if that lets Euclid cut the tail with less zone.
    best_k = min((kk for kk in (k, k - 1, k - 2) if kk >= 0), key=lambda kk: (euclid_zone(P - kk * h, h), -kk))
    x = 0
    for _ in range(best_k):
        if h == 15 and sub and rng.randbelow(100) < sub:
            for dx in (0, 5, 10):
                for dy in (0, 5, 10):
                    out.square(x + dx, y + dy, 5)
        else:
            out.square(x, y, h)
        x += h
    euclid_fill(x, y, P - x, h, out)


def pack(P: int, rng: Stream, params: dict) -> Packing:
    """Bands packing of [0, P)²; see the module docstring."""
    p = check_params(params)
    px, py = rng.randbelow(P), rng.randbelow(P)
    heights = split_length(P, list(SIZES), rng)
    out = Out()
    y = 0
    for h in heights:
        if h in SIZES:
            fill_band(y, h, P, rng, p["sub"], out)
        else:  # P itself does not split (P in 1..4, 6, 8): a zone band
            euclid_fill(0, y, P, h, out)
        y += h
    seed = seed_tile_at(out.squares, px, py) if out.squares else 0
    return Packing(
        P=P,
        squares=tuple(out.squares),
        zones=group_zones(out.zones),
        seed_tile=seed,
        name=NAME,
        version=VERSION,
        params=p,
    )
