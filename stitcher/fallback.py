"""Fallback (FORMAT §8): a square still unfilled after the drain is split into smaller legal squares.

``split_square`` cuts the s×s square once (vertically or horizontally) at an
offset that minimises the zone area of the best guillotine fill of the two
parts (``packers.fill.zone_table``), drawn with the stream among the optimal
offsets (legal-side offsets weighted 4:1, as ``dp_fill`` does), then fills
both parts with ``packers.fill.dp_fill``. Every resulting square is strictly
smaller than s; what no legal square fits becomes zone rectangles. A 5-square
cannot be split and becomes a zone. The stitcher places the new squares like
any other (lookup, drain, and this fallback again if need be), so a failure
ends, at worst, as zone. ``replace_square`` draws a split and records it in the stitch's
``Placements`` (new squares, zones, adjacency); ``assemble`` makes the final packing with every
split square's leaves in place (and any leaf no seam path joins to the seed tile turned into zone:
no player could reach it).
"""

from __future__ import annotations

from packers.fill import Out, dp_fill, zone_table
from packers.packing import SIZES, Packing, group_zones, seam_reachable
from stitcher.placements import Placements
from stitcher.stats import StitchStats
from tilelib.rng import Stream


def split_square(
    x: int, y: int, s: int, stream: Stream
) -> tuple[list[tuple[int, int, int]], list[tuple[int, int, int, int]]]:
    """(squares, zone rects) covering the pitch square (x, y, s) exactly, every square smaller than s."""
    if s <= min(SIZES):
        return [], [(x, y, s, s)]
    Z = zone_table()
    costs = [(int(Z[a, s] + Z[s - a, s]), a) for a in range(1, s)]
    best = min(c for c, _ in costs)
    cuts = [(d, a) for c, a in costs if c == best for d in (0, 1)]
    d, a = cuts[stream.weighted([4 if a in SIZES else 1 for _d, a in cuts])]
    out = Out()
    if d == 0:  # vertical cut at x + a
        dp_fill(x, y, a, s, stream, out)
        dp_fill(x + a, y, s - a, s, stream, out)
    else:  # horizontal cut at y + a
        dp_fill(x, y, s, a, stream, out)
        dp_fill(x, y + a, s, s - a, stream, out)
    squares = sorted(out.squares, key=lambda q: (q[1], q[0]))
    return squares, sorted(out.zones, key=lambda r: (r[1], r[0]))


def replace_square(at: Placements, i: int, stream: Stream, st: StitchStats) -> list[int]:
    """Split square i (``split_square`` drawn from ``stream``) and record it in ``at``
    (``Placements.split``). Returns the new ids, to be placed."""
    x, y, s = at.squares[i]
    st.bump(s + 1, "fallbacks")
    subs, zones = split_square(x, y, s, stream)
    ids = at.split(i, subs, zones)
    for j in ids:
        st.bump(at.n(j), "squares")
    return ids


def assemble(at: Placements, packing: Packing, st: StitchStats) -> tuple[Packing, list]:
    """The final squares (split ones replaced in place by their leaves) and aligned placements.

    A leaf no path of shared seams joins to the seed tile could never be played (FORMAT §14: a move
    is accepted on the seed tile or next to a solved one), so it becomes zone like a square no tile
    fits (counted ``isolated``): a split can leave a small square ringed by its own zones. Only
    splits can, so a run without one skips the check (0.4 s at G = 1000)."""
    squares, placements, seed_id = at.leaves()
    assert all(p is not None for p in placements), "every leaf square holds a tile"
    if not at.children:  # a packer's own packing is seam-connected (tests/test_stitch_isolated.py)
        return packing, placements
    assert seed_id is not None  # a split happened, so the seed (never split) was a square to place
    reach = seam_reachable(squares, seed_id)
    cut = [(x, y, s, s) for (x, y, s), ok in zip(squares, reach, strict=True) if not ok]
    for _x, _y, s, _s in cut:
        st.bump(s + 1, "isolated")
    seed_id = sum(reach[:seed_id])
    squares = [q for q, ok in zip(squares, reach, strict=True) if ok]
    placements = [p for p, ok in zip(placements, reach, strict=True) if ok]
    zones = tuple(packing.zones) + group_zones(list(at.new_zones) + cut)
    p = Packing(
        P=packing.P,
        squares=tuple(squares),
        zones=zones,
        seed_tile=seed_id,
        name=packing.name,
        version=packing.version,
        params=dict(packing.params),
    )
    return p, placements
