"""Geometry of a packing for the stitcher: who touches whom, distance from the seed, placement order.

Two tiles are adjacent when their windows share a cell, i.e. their closed
pitch squares touch along a side or at a corner. ``unit_owner`` maps every
pitch unit to its square id (or ZONE), so a square's neighbours are the
owners of the ring of units just outside it.

``bfs_distance`` is the distance from the seed tile in that adjacency graph;
``known_sides`` says, per square, which sides will be known when the
square's turn comes in a frontier solve (FORMAT §10.4): a side is known when
every unit along it outside the square is a zone (zone cells inside a tile
window are given) or a tile strictly nearer the seed. A side on the board's
edge faces nothing and is never known.

``placement_order`` fits the packer: each packer declares its own (``packers.Packer.order``:
``big-first`` and ``islands`` place large squares first, then by distance, then id, so small
tiles meet exact edges; ``grown`` uses tile id order, which is its growth order; the others go
breadth-first from the seed, distance then id, as does a packing of a name no packer has). The
seed tile always goes first, so it is unconstrained and an m = 1 tile can always be made.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable

import numpy as np

from packers import PACKERS
from packers.packing import Packing

ZONE = -1
FREE = -2
FAR = 1 << 30


def unit_owner(packing: Packing) -> np.ndarray:
    """P×P int32: square id of each pitch unit, ZONE for zone units (FREE if uncovered)."""
    P = packing.P
    own = np.full((P, P), FREE, dtype=np.int32)
    for x, y, w, h in (r for z in packing.zones for r in z):
        own[y : y + h, x : x + w] = ZONE
    for i, (x, y, s) in enumerate(packing.squares):
        own[y : y + s, x : x + s] = i
    return own


def ring(own: np.ndarray, x: int, y: int, s: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Owners of the units outside each side (top, right, bottom, left); empty on the board edge.

    The top and bottom strips include the two diagonal corner units, so every
    cell-sharing neighbour appears in some strip.
    """
    P = own.shape[0]
    xa, xb = max(x - 1, 0), min(x + s + 1, P)
    top = own[y - 1, xa:xb] if y > 0 else own[0:0, 0]
    bottom = own[y + s, xa:xb] if y + s < P else own[0:0, 0]
    left = own[y : y + s, x - 1] if x > 0 else own[0:0, 0]
    right = own[y : y + s, x + s] if x + s < P else own[0:0, 0]
    return top, right, bottom, left


def bfs_distance(adj: list[list[int]], seed: int) -> list[int]:
    """Hops from the seed tile in the adjacency graph (FAR where unreachable)."""
    dist = [FAR] * len(adj)
    dist[seed] = 0
    q = deque([seed])
    while q:
        i = q.popleft()
        for j in adj[i]:
            if dist[j] == FAR:
                dist[j] = dist[i] + 1
                q.append(j)
    return dist


def side_known(own: np.ndarray, dist: list[int], square: tuple[int, int, int], d: int) -> int:
    """Side mask of the sides of ``square`` (at distance d) facing only zones and nearer tiles.

    Only the units directly along a side count (not the diagonal corner
    units): if each of them is known, every cell of the side is.
    """
    x, y, s = square
    P = own.shape[0]
    strips = (
        own[y - 1, x : x + s] if y > 0 else None,
        own[y : y + s, x + s] if x + s < P else None,
        own[y + s, x : x + s] if y + s < P else None,
        own[y : y + s, x - 1] if x > 0 else None,
    )
    mask = 0
    for side, strip in enumerate(strips):
        if strip is None:
            continue
        ok = True
        for j in set(strip.tolist()):  # order is irrelevant: every owner must qualify
            if j == ZONE:
                continue
            if j < 0 or dist[j] >= d:
                ok = False
                break
        if ok:
            mask |= 1 << side
    return mask


def known_sides(packing: Packing, own: np.ndarray, dist: list[int]) -> list[int]:
    """``side_known`` for every square."""
    return [side_known(own, dist, sq, dist[i]) for i, sq in enumerate(packing.squares)]


ORDERS = ("packer", "big", "id", "bfs", "raster")


def placement_order(packing: Packing, dist: list[int], how: str = "packer") -> list[int]:
    """Square ids in the order the stitcher places them (see the module doc); the seed first.

    ``how``: "packer" (the default per packer), or one strategy for any packer: "big"
    (large first, then distance), "id", "bfs", "raster" (by y0, then x0).
    """
    k = len(packing.squares)
    seed = packing.seed_tile
    if how == "packer":
        how = PACKERS[packing.name].order if packing.name in PACKERS else "bfs"
    if how not in ORDERS:
        raise ValueError(f"unknown placement order {how!r} (known: {ORDERS})")
    key: Callable[[int], int | tuple[int, ...]]
    if how == "raster":
        key = lambda i: (packing.squares[i][1], packing.squares[i][0])  # noqa: E731
    elif how == "big":
        key = lambda i: (-packing.squares[i][2], dist[i], i)  # noqa: E731
    elif how == "id":
        key = lambda i: i  # noqa: E731
    else:
        key = lambda i: (dist[i], i)  # noqa: E731
    rest = sorted((i for i in range(k) if i != seed), key=key)
    return [seed] + rest
