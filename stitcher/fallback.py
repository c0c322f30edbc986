"""Fallback (FORMAT §8): a square still unfilled after the drain is split into smaller legal squares.

``split_square`` cuts the s×s square once (vertically or horizontally) at an
offset that minimises the zone area of the best guillotine fill of the two
parts (``packers.fill.zone_table``), drawn with the stream among the optimal
offsets (legal-side offsets weighted 4:1, as ``dp_fill`` does), then fills
both parts with ``packers.fill.dp_fill``. Every resulting square is strictly
smaller than s; what no legal square fits becomes zone rectangles. A 5-square
cannot be split and becomes a zone. The stitcher places the new squares like
any other (lookup, drain, and this fallback again if need be), so a failure
ends, at worst, as zone. ``replace_square`` does the run's bookkeeping of a split (new squares,
zones, adjacency) and ``assemble`` the final packing with every split square's leaves in place
(and any leaf no seam path joins to the seed tile turned into zone: no player could reach it).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from packers.fill import Out, dp_fill, zone_table
from packers.packing import SIZES, Packing, group_zones, seam_reachable
from stitcher.order import ZONE, ring, side_known
from tilelib.rng import Stream

if TYPE_CHECKING:     # the run imports this module; the type is only for readers and checkers
    from stitcher.stitch import StitchRun


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


def replace_square(run: StitchRun, i: int) -> list[int]:
    """Split square i of the run (``split_square`` drawn from ``run.split_stream``): its zone
    rectangles are marked, its sub-squares appended as new squares with their known sides and
    adjacency (neighbours' forward-check geometry forgotten). Returns the new ids, to be placed."""
    x, y, s = run.squares[i]
    run.st.bump(s + 1, "fallbacks")
    subs, zones = split_square(x, y, s, run.split_stream)
    for (zx, zy, zw, zh) in zones:
        run.own[zy:zy + zh, zx:zx + zw] = ZONE
    run.new_zones.extend(zones)
    ids = []
    for sq in subs:
        j = len(run.squares)
        run.squares.append(sq)
        run.placements.append(None)
        run.dist.append(run.dist[i])
        run.adj.append([])
        run.known.append(0)
        run.own[sq[1]:sq[1] + sq[2], sq[0]:sq[0] + sq[2]] = j
        ids.append(j)
    for j in ids:
        run.known[j] = side_known(run.own, run.dist, run.squares[j], run.dist[j])
        xj, yj, sj = run.squares[j]
        nb = sorted({int(k) for strip in ring(run.own, xj, yj, sj) for k in strip.tolist() if k >= 0 and k != j})
        run.adj[j] = nb
        for k in nb:
            if j not in run.adj[k]:
                run.adj[k].append(j)
            run.fcheck.forget(k)
    run.children[i] = ids
    for j in ids:
        run.st.bump(run.squares[j][2] + 1, "squares")
    return ids


def assemble(run: StitchRun) -> tuple[Packing, list]:
    """The run's final squares (split ones replaced in place by their leaves) and aligned placements.

    A leaf no path of shared seams joins to the seed tile could never be played (FORMAT §14: a move
    is accepted on the seed tile or next to a solved one), so it becomes zone like a square no tile
    fits (counted ``isolated``): a split can leave a small square ringed by its own zones. Only
    splits can, so a run without one skips the check (0.4 s at G = 1000)."""
    squares, placements, seed_id = [], [], None

    def emit(i: int) -> None:
        nonlocal seed_id
        if i in run.children:
            for j in run.children[i]:
                emit(j)
            return
        if i == run.seed:
            seed_id = len(squares)
        squares.append(run.squares[i])
        placements.append(run.placements[i])

    for i in range(len(run.packing.squares)):
        emit(i)
    assert all(p is not None for p in placements), "every leaf square holds a tile"
    if not run.children:      # a packer's own packing is seam-connected (tests/test_stitch_isolated.py)
        return run.packing, placements
    reach = seam_reachable(squares, seed_id)
    cut = [(x, y, s, s) for (x, y, s), ok in zip(squares, reach) if not ok]
    for (_x, _y, s, _s) in cut:
        run.st.bump(s + 1, "isolated")
    seed_id = sum(reach[:seed_id])
    squares = [q for q, ok in zip(squares, reach) if ok]
    placements = [p for p, ok in zip(placements, reach) if ok]
    zones = tuple(run.packing.zones) + group_zones(list(run.new_zones) + cut)
    p = Packing(P=run.packing.P, squares=tuple(squares), zones=zones, seed_tile=seed_id,
                name=run.packing.name, version=run.packing.version, params=dict(run.packing.params))
    return p, placements
