"""The 16 symmetries of a tile (FORMAT §3): transforms, composition, inverses, edge and side maps.

A transform is ``t = 8*k + 4*f + r``, applied in this order:
1. if f: mirror left-right, ``g'[i][j] = g[i][n-1-j]``;
2. r times: rotate 90° clockwise, ``g'[i][j] = g[n-1-j][i]``;
3. if k: complement the values (masks are not complemented).

``compose(a, b)`` is the transform equal to applying ``a`` first, then ``b``.
The tables below are derived once, at import, by acting on a grid of distinct
cell indices, so they follow from the definition above rather than from a
hand-written table; the tests check the group laws and the edge map against
grid transforms. The derivation runs on nested lists (``_geometry_lists``, the
same two steps) so that importing this module does not load numpy: the tile
path of ``tiles library generate`` uses the tables, never a numpy grid.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from tilelib.bits import reverse_bits

if TYPE_CHECKING:
    import numpy as np

TRANSFORMS = tuple(range(16))
IDENTITY = 0


def parts(t: int) -> tuple[int, int, int]:
    """(k, f, r) of a transform."""
    if not 0 <= t < 16:
        raise ValueError(f"transform {t} is not in 0..15")
    return t >> 3, (t >> 2) & 1, t & 3


def apply_geometry(grid: np.ndarray, t: int) -> np.ndarray:
    """Mirror then rotate a grid or mask (steps 1 and 2 only)."""
    import numpy as np

    _, f, r = parts(t)
    g = np.asarray(grid)
    if f:
        g = g[:, ::-1]
    for _ in range(r):
        g = g[::-1, :].T  # g'[i][j] = g[n-1-j][i]
    return np.ascontiguousarray(g)


def apply_grid(grid: np.ndarray, t: int) -> np.ndarray:
    """Transform a 0/1 value grid: geometry, then complement when k."""
    import numpy as np

    g = apply_geometry(grid, t)
    return (1 - g).astype(np.uint8) if t >> 3 else g.astype(np.uint8)


def apply_mask(mask: np.ndarray, t: int) -> np.ndarray:
    """Transform a mask (givens, flip, known cells): geometry only."""
    import numpy as np

    return apply_geometry(mask, t).astype(np.uint8)


def _geometry_lists(g: list[list[int]], t: int) -> list[list[int]]:
    """``apply_geometry`` on a grid held as nested lists (the tables' derivation)."""
    _, f, r = parts(t)
    if f:
        g = [row[::-1] for row in g]
    for _ in range(r):
        g = [list(col) for col in zip(*g[::-1], strict=True)]  # g'[i][j] = g[n-1-j][i]
    return g


def _edge_cells(g: list[list[int]]) -> list[list[int]]:
    return [list(g[0]), [row[-1] for row in g], list(g[-1]), [row[0] for row in g]]


@dataclass(frozen=True)
class EdgeSource:
    """Where a new side comes from: old side index (0 top..3 left), read reversed?, complemented?"""

    side: int
    reversed: bool
    complemented: bool


def _derive_tables():
    probe = [[3 * i + j for j in range(3)] for i in range(3)]
    images = {t: _geometry_lists(probe, t) for t in TRANSFORMS}
    # A geometry moves cells: its image of the probe lists, per position, the cell that lands
    # there, so applying b to any grid g gives g[perm[b][i]] at position i; a then b is
    # perm[a][perm[b][i]] (one lookup per cell instead of two grid transforms per pair).
    perm = {t: tuple(v for row in images[t] for v in row) for t in TRANSFORMS}
    geo_of = {perm[t]: t & 7 for t in range(8)}
    compose_tab = [[0] * 16 for _ in range(16)]
    for a in TRANSFORMS:
        pa = perm[a]
        for b in TRANSFORMS:
            g = tuple(pa[i] for i in perm[b])
            compose_tab[a][b] = geo_of[g] | (((a >> 3) ^ (b >> 3)) << 3)
    old = _edge_cells(probe)
    edge_map = []
    for t in TRANSFORMS:
        new = _edge_cells(images[t])
        row = []
        for cells in new:
            for s, oc in enumerate(old):
                if cells == oc:
                    row.append(EdgeSource(s, False, bool(t >> 3)))
                    break
                if cells == oc[::-1]:
                    row.append(EdgeSource(s, True, bool(t >> 3)))
                    break
        edge_map.append(tuple(row))
    return compose_tab, tuple(edge_map)


_COMPOSE, EDGE_MAP = _derive_tables()
_INVERSE = [next(b for b in TRANSFORMS if _COMPOSE[a][b] == IDENTITY) for a in TRANSFORMS]


def compose(a: int, b: int) -> int:
    """The transform equal to applying ``a`` first and then ``b``."""
    return _COMPOSE[a][b]


def inverse(t: int) -> int:
    """The transform that undoes ``t``."""
    return _INVERSE[t]


def edge_map(t: int) -> tuple[EdgeSource, EdgeSource, EdgeSource, EdgeSource]:
    """For each new side (top, right, bottom, left), where its edge comes from."""
    return EDGE_MAP[t]


def side_map(t: int) -> tuple[int, int, int, int]:
    """For each new side index, the old side index it comes from."""
    return tuple(src.side for src in EDGE_MAP[t])


def transform_side_mask(mask: int, t: int) -> int:
    """Permute a 4-bit side mask (seam_mask, pins, an alt_sides nibble) with the sides."""
    out = 0
    for new, src in enumerate(EDGE_MAP[t]):
        if mask >> src.side & 1:
            out |= 1 << new
    return out


def transform_edge_value(value: int, n: int, src: EdgeSource, *, complement: bool = True) -> int:
    """Value of a new edge from the old edge int ``value`` it comes from."""
    v = reverse_bits(value, n) if src.reversed else value
    if complement and src.complemented:
        v ^= (1 << n) - 1
    return v


def transform_edges(edges: tuple[int, int, int, int], n: int, t: int) -> tuple[int, int, int, int]:
    """Edges (top, right, bottom, left) of the transformed grid, from the old edges alone."""
    top, right, bottom, left = EDGE_MAP[t]
    return (
        transform_edge_value(edges[top.side], n, top),
        transform_edge_value(edges[right.side], n, right),
        transform_edge_value(edges[bottom.side], n, bottom),
        transform_edge_value(edges[left.side], n, left),
    )
