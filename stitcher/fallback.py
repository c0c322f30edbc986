"""Fallback (FORMAT §8): a square still unfilled after the drain is split into smaller legal squares.

``split_square`` cuts the s×s square once (vertically or horizontally) at an
offset that minimises the zone area of the best guillotine fill of the two
parts (``packers.fill.zone_table``), drawn with the stream among the optimal
offsets (legal-side offsets weighted 4:1, as ``dp_fill`` does), then fills
both parts with ``packers.fill.dp_fill``. Every resulting square is strictly
smaller than s; what no legal square fits becomes zone rectangles. A 5-square
cannot be split and becomes a zone. The stitcher places the new squares like
any other (lookup, drain, and this fallback again if need be), so a failure
ends, at worst, as zone.
"""

from __future__ import annotations

from packers.fill import Out, dp_fill, zone_table
from packers.packing import SIZES
from tilelib.rng import Stream


def split_square(x: int, y: int, s: int, stream: Stream) -> tuple[list[tuple[int, int, int]], list[tuple[int, int, int, int]]]:
    """(squares, zone rects) covering the pitch square (x, y, s) exactly, every square smaller than s."""
    if s <= min(SIZES):
        return [], [(x, y, s, s)]
    Z = zone_table()
    costs = [(int(Z[a, s] + Z[s - a, s]), a) for a in range(1, s)]
    best = min(c for c, _ in costs)
    cuts = [(d, a) for c, a in costs if c == best for d in (0, 1)]
    d, a = cuts[stream.weighted([4 if a in SIZES else 1 for _d, a in cuts])]
    out = Out()
    if d == 0:   # vertical cut at x + a
        dp_fill(x, y, a, s, stream, out)
        dp_fill(x + a, y, s - a, s, stream, out)
    else:        # horizontal cut at y + a
        dp_fill(x, y, s, a, stream, out)
        dp_fill(x, y + a, s, s - a, stream, out)
    squares = sorted(out.squares, key=lambda q: (q[1], q[0]))
    return squares, sorted(out.zones, key=lambda r: (r[1], r[0]))
