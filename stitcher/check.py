"""The forward check: would these edges on square i leave an unplaced neighbour's side uncompletable?

Measured on cold 61×61 boards: 41 of 43 nofit squares faced a side whose known
cells (slices of several neighbours' edges) matched no valid line at all. So
before a candidate is taken, every side of every unplaced neighbour that
touches square i is re-read with the candidate's edges in place, and must
still match some valid line (``tilelib.query.matching_lines``).

Geometry per square (which neighbour lines touch its border, their board
offsets, bit weights, and where each of their cells sits in the square's own
border) is computed once and cached, so a check is two gathers, two weighted
sums and a few cached set lookups. Splitting a square invalidates its
neighbours' entries.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from stitcher.board import Board, line_table, pow2
from stitcher.small import EXACT_N, feasible
from tilelib.query import matching_lines

PAD = 16


@lru_cache(maxsize=8)
def border_positions(n: int) -> np.ndarray:
    """n×n: index of each border cell in the raveled (top, right, bottom, left) border lines
    (first occurrence, so a corner maps into top or bottom), -1 inside."""
    pm = np.full((n, n), -1, dtype=np.int64)
    i = np.arange(n)
    cells = [(np.zeros(n, int), i), (i, np.full(n, n - 1)), (np.full(n, n - 1), i), (i, np.zeros(n, int))]
    for side in (3, 2, 1, 0):   # later writes win: top first, as the raveled order meets them
        r, c = cells[side]
        pm[r, c] = side * n + i
    return pm


class ForwardCheck:
    def __init__(self, board: Board, squares: list, adj: list, placements: list, children: dict) -> None:
        self.board, self.squares, self.adj = board, squares, adj
        self.placements, self.children = placements, children
        self._geo: dict[int, tuple] = {}
        self._ext: dict[tuple[int, int, int], int] = {}
        self._feas: dict[tuple, bool] = {}

    def forget(self, i: int) -> None:
        self._geo.pop(i, None)

    def _geometry(self, i: int) -> tuple:
        """Rows (neighbour j, side) whose line meets square i's border, by interval arithmetic:
        a line along i's first/last row (column) shares a run of cells with it; a line crossing
        i's window shares at most the two cells on i's left/right (top/bottom) border."""
        G = self.board.G
        x, y, s = self.squares[i]
        n = s + 1
        x1, y1 = x + n - 1, y + n - 1
        js, ns, rows = [], [], []
        for j in self.adj[i]:
            xj, yj, sj = self.squares[j]
            nj = sj + 1
            for side in range(4):
                hits = []   # (position k along j's line, position in i's border)
                if side in (0, 2):                       # horizontal line: row R, columns xj..xj+nj-1
                    R = yj if side == 0 else yj + nj - 1
                    if not y <= R <= y1:
                        continue
                    if R == y or R == y1:
                        lo, hi = max(xj, x), min(xj + nj - 1, x1)
                        base = 0 if R == y else 2 * n
                        hits = [(c - xj, base + c - x) for c in range(lo, hi + 1)]
                    else:
                        hits = [(c - xj, off) for c, off in ((x, 3 * n + R - y), (x1, n + R - y))
                                if xj <= c <= xj + nj - 1]
                    start, step = R * G + xj, 1
                else:                                    # vertical line: column C, rows yj..yj+nj-1
                    C = xj + nj - 1 if side == 1 else xj
                    if not x <= C <= x1:
                        continue
                    if C == x or C == x1:
                        lo, hi = max(yj, y), min(yj + nj - 1, y1)
                        base = 3 * n if C == x else n
                        hits = [(r - yj, base + r - y) for r in range(lo, hi + 1)]
                    else:
                        hits = [(r - yj, off) for r, off in ((y, C - x), (y1, 2 * n + C - x))
                                if yj <= r <= yj + nj - 1]
                    start, step = yj * G + C, G
                if hits:
                    js.append(j)
                    ns.append(nj)
                    rows.append((start, step, nj, hits))
        if not js:
            return (n, js, ns, None, None, None, None)
        L = len(js)
        idx = np.empty((L, PAD), dtype=np.int64)
        W = np.zeros((L, PAD), dtype=np.int64)
        bpos = np.full((L, PAD), -1, dtype=np.int64)
        ar = np.arange(PAD, dtype=np.int64)
        for r, (start, step, nj, hits) in enumerate(rows):
            idx[r] = start + step * np.minimum(ar, nj - 1)
            W[r, :nj] = pow2(nj)
            for k, p in hits:
                bpos[r, k] = p
        inb = bpos >= 0
        return (n, js, ns, idx, W, np.where(inb, bpos, 0), inb)

    def extendable(self, n: int, mask: int, value: int) -> int:
        """How many valid n-cell lines match the known cells (cached)."""
        key = (n, mask, value)
        v = self._ext.get(key)
        if v is None:
            v = self._ext[key] = len(matching_lines(n, mask, value))
        return v

    def ok(self, i: int, edges) -> bool:
        """True if no unplaced neighbour of square i is left with a side no valid line completes."""
        return self.score(i, edges) > 0

    def score(self, i: int, edges) -> int:
        """0 if some unplaced neighbour side of square i can no longer be completed to a valid line,
        else the fewest valid lines any such side still matches (more is safer; 1 << 30 if none)."""
        g = self._geo.get(i)
        if g is None:
            g = self._geo[i] = self._geometry(i)
        n, js, ns, idx, W, bpos, inb = g
        active = [r for r, j in enumerate(js) if self.placements[j] is None and j not in self.children]
        if not active:
            return 1 << 30
        cells = line_table(n)[np.asarray(edges, dtype=np.int64)].ravel()
        K = np.where(inb, 1, self.board._k[idx])
        V = np.where(inb, cells[bpos], self.board._v[idx]) & K
        masks = (K * W).sum(1).tolist()
        vals = (V * W).sum(1).tolist()
        best = 1 << 30
        for r in active:
            if masks[r]:
                k = self.extendable(ns[r], masks[r], vals[r])
                if k == 0:
                    return 0
                best = min(best, k)
        small = {js[r] for r in active if ns[r] in EXACT_N}
        if small and not self._small_ok(i, n, edges, small):
            return 0
        return best

    def _small_ok(self, i: int, n: int, edges, small: set) -> bool:
        """Exact test for n = 6 neighbours: their whole boundary must still have a completion."""
        x, y, _s = self.squares[i]
        saved = self.board.push(x, y, n, edges)
        try:
            for j in sorted(small):
                xj, yj, sj = self.squares[j]
                c = self.board.constraint(xj, yj, sj + 1)
                key = c.key()
                ok = self._feas.get(key)
                if ok is None:
                    ok = self._feas[key] = feasible(c)
                if not ok:
                    return False
            return True
        finally:
            self.board.pop(saved)
