"""The forward check: would these edges on square i leave an unplaced neighbour's side uncompletable?

Measured on cold 61×61 boards: 41 of 43 nofit squares faced a side whose known
cells (slices of several neighbours' edges) matched no valid line at all. So
before a candidate is taken, every side of every unplaced neighbour that
touches square i is re-read with the candidate's edges in place, and must
still match some valid line (``tilelib.query.matching_lines``); an n = 6
neighbour must moreover keep a completion of its whole boundary, exactly
(``stitcher.small``).

How it is made cheap (a warm whole-board stitch runs ~5 checks per placement):

- Geometry per square (``_geometry``, cached; splitting a square invalidates
  its neighbours' entries; per neighbour from ``pair_rows``, cached by relative
  placement, sizes and G): the neighbour lines (rows) that meet its border,
  their board offsets and bit weights, and per row the *runs* of cells that
  lie on square i's border as (side of i, shift, mask, shift) — the row's
  cells from the candidate are then a few shifts of its edge ints.
- Per square and board state (``checker``): which cells of each row are known
  does not depend on the candidate (cells on i's border become known whatever
  it is), so each row's mask, the value of its known cells off i's border,
  the table "value -> valid lines matching (n, mask)" and, for an n = 6
  neighbour, the set of its solutions' boundaries under its four masks are
  read once (one numpy gather for all rows).
- Per candidate: plain int arithmetic and dict/set lookups, no numpy.

The score is the same function of (board, square, edges) as the one-candidate
numpy rule it replaced (commit 7f22a9d and before), so placements do not change.

``PyForwardCheck`` is that Python code, kept as the reference. ``ForwardCheck``
runs the C twin (``stitcher._core.Checker``, same rows and tables, no cache: in
C the rows are cheaper to rebuild than to look up); its checkers read the
board at their first score. Without the built extension it is ``PyForwardCheck``.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache

import numpy as np

from stitcher.board import CBoard, PyBoard
from stitcher.small import EXACT_N, solutions_edges
from tilelib.native import load_twin
from tilelib.rules import valid_lines

_core = load_twin("stitcher._core")  # None: the Python reference runs (tilelib.native warned)

PAD = 16
NONE_AFFECTED = 1 << 30  # score when no unplaced neighbour side touches the square
# a run of a line on a square's border (``pair_rows``): (side, source shift, run mask, destination shift)
Run = tuple[int, int, int, int]


@lru_cache(maxsize=1)
def _pow2_pad() -> np.ndarray:
    """(PAD + 1, PAD) int64: row nj holds the MSB-first weights of an nj-cell line, 0 beyond."""
    out = np.zeros((PAD + 1, PAD), dtype=np.int64)
    for nj in range(1, PAD + 1):
        out[nj, :nj] = 1 << np.arange(nj - 1, -1, -1)
    return out


@lru_cache(maxsize=4)
def _offsets(G: int) -> np.ndarray:
    """(2 * (PAD + 1), PAD) int64: row 2·nj + v holds the board offsets of an nj-cell line from its
    first cell (v = 0: horizontal, 1: vertical), padded by repeating the last cell."""
    out = np.zeros((2 * (PAD + 1), PAD), dtype=np.int64)
    k = np.arange(PAD)
    for nj in range(1, PAD + 1):
        out[2 * nj] = np.minimum(k, nj - 1)
        out[2 * nj + 1] = np.minimum(k, nj - 1) * G
    return out


@lru_cache(maxsize=1 << 13)  # ~400 (n, mask) pairs seen over 12 warm G=301 boards
def line_counts(n: int, mask: int) -> dict[int, int]:
    """value -> how many valid n-cell lines v have ``v & mask == value`` (absent: none)."""
    out: dict[int, int] = {}
    for v in valid_lines(n):
        k = v & mask
        out[k] = out.get(k, 0) + 1
    return out


@lru_cache(maxsize=4096)  # ~500 mask tuples (~200 keys each) seen over 12 warm G=301 boards
def boundary_keys(n: int, masks: tuple[int, int, int, int]) -> frozenset:
    """Packed boundaries ``(e0&m0) << 3n | (e1&m1) << 2n | (e2&m2) << n | (e3&m3)`` of every valid
    n×n grid (n in EXACT_N): a constraint with these masks is feasible iff its packed values are
    among them (``small.feasible``, as a set)."""
    E = solutions_edges(n)
    k = np.zeros(len(E), dtype=np.int64)
    for s in range(4):
        k = (k << n) | (E[:, s] & masks[s])
    return frozenset(np.unique(k).tolist())


@lru_cache(maxsize=1 << 16)
def pair_rows(dx: int, dy: int, sj: int, s: int, G: int) -> tuple:
    """The rows a neighbour square (dx, dy, sj) — relative to square (0, 0, s) — gives that square's
    forward check: ((meets the border?, runs, board offset of the line's first cell relative to
    the square's, line kind 2·nj + vertical, in-border mask), ...), empty if no side meets.

    By interval arithmetic: a line along the square's first/last row (column) shares a run of
    cells with its border (read from that side, corners included); a line crossing the window
    shares at most the two cells on its left/right (top/bottom) border. An n = 6 neighbour with
    such a row gives all four sides (its whole boundary is tested). ``runs`` = (side of the
    square, source shift, run mask, destination shift): the line's cells on the border are
    ``((edges[side] >> source shift) & run mask) << destination shift``."""
    x = y = 0
    x1 = y1 = s
    xj, yj, nj = dx, dy, sj + 1
    xe, ye = xj + sj, yj + sj
    rows: list[tuple[int, tuple[Run, ...]]] = []  # (side, run tuple) for sides meeting the border
    rr: tuple[Run, ...]
    for side, R in ((0, yj), (2, ye)):  # horizontal lines: row R, columns xj..xe
        if y < R < y1:
            a, b = xj <= x <= xe, xj <= x1 <= xe
            if a or b:
                rr = ((3, y1 - R, 1, xe - x),) if a else ()
                rows.append((side, rr + ((1, y1 - R, 1, xe - x1),) if b else rr))
        elif R == y or R == y1:
            lo, hi = max(xj, x), min(xe, x1)
            if lo <= hi:
                rows.append((side, ((0 if R == y else 2, x1 - hi, (1 << (hi - lo + 1)) - 1, xe - hi),)))
    for side, C in ((1, xe), (3, xj)):  # vertical lines: column C, rows yj..ye
        if x < C < x1:
            a, b = yj <= y <= ye, yj <= y1 <= ye
            if a or b:
                rr = ((0, x1 - C, 1, ye - y),) if a else ()
                rows.append((side, rr + ((2, x1 - C, 1, ye - y1),) if b else rr))
        elif C == x or C == x1:
            lo, hi = max(yj, y), min(ye, y1)
            if lo <= hi:
                rows.append((side, ((3 if C == x else 1, y1 - hi, (1 << (hi - lo + 1)) - 1, ye - hi),)))
    if not rows:
        return ()
    if nj in EXACT_N:
        got = dict(rows)
        rows = [(side, got.get(side, ())) for side in range(4)]
    out = []
    for side, rr in rows:
        im = 0
        for _s, _ss, m, d in rr:
            im |= m << d
        rel = yj * G + xj if side in (0, 3) else (yj * G + xe if side == 1 else ye * G + xj)
        out.append((bool(rr), rr, rel, 2 * nj + (side & 1), im))
    return tuple(out)


class _Geo:
    """Rows of one square's geometry; see ``ForwardCheck._geometry``."""

    __slots__ = ("js", "ns", "hit", "runs", "idx", "W", "IM", "small", "among", "hit_rows", "small_js")

    def __init__(self, js, ns, hit, runs, idx, W, IM, small, among):
        self.js, self.ns, self.hit, self.runs = js, ns, hit, runs
        self.idx, self.W, self.IM, self.small, self.among = idx, W, IM, small, among
        self.hit_rows = [r for r, h in enumerate(hit) if h]
        self.small_js = sorted(small)  # n = 6 neighbours (each has a row that meets the border)


class PyForwardCheck:
    """The forward check in Python (the reference; see the module doc)."""

    def __init__(self, board: PyBoard, squares: list, adj: list, placements: list, children: dict) -> None:
        self.board, self.squares, self.adj = board, squares, adj
        self.placements, self.children = placements, children
        self._geo: dict[int, _Geo] = {}  # square -> rows for the neighbours open when built

    def forget(self, i: int) -> None:
        self._geo.pop(i, None)

    def _geometry(self, i: int, among: list[int]) -> _Geo:
        """Rows (neighbour j in ``among``, side) whose line meets square i's border (``pair_rows``,
        cached by the pair's relative placement, sizes and G), with their board offsets and weights."""
        G = self.board.G
        squares = self.squares
        x, y, s = squares[i]
        origin = y * G + x
        js: list[int] = []
        ns, hit, runs, starts, kinds, ims, small = [], [], [], [], [], [], {}
        for j in among:
            xj, yj, sj = squares[j]
            t = pair_rows(xj - x, yj - y, sj, s, G)
            if not t:
                continue
            nj = sj + 1
            if nj in EXACT_N:
                small[j] = list(range(len(js), len(js) + 4))
            for h, rr, rel, kind, im in t:
                js.append(j)
                ns.append(nj)
                hit.append(h)
                runs.append(rr)
                starts.append(origin + rel)
                kinds.append(kind)
                ims.append(im)
        if not js:
            return _Geo([], [], [], [], None, None, None, {}, frozenset(among))
        idx = np.array(starts, dtype=np.int64)[:, None] + _offsets(G)[kinds]
        return _Geo(js, ns, hit, runs, idx, _pow2_pad()[ns], np.array(ims, dtype=np.int64), small, frozenset(among))

    def checker(self, i: int) -> Callable[[tuple], int]:
        """``score`` for square i against the board as it is now (valid until the board changes)."""
        placements, children = self.placements, self.children
        open_ = [j for j in self.adj[i] if placements[j] is None and j not in children]
        if not open_:
            return _none_affected
        g = self._geo.get(i)
        if g is None or not g.among.issuperset(open_):
            # rows only for the neighbours still open: placed ones never count again unless a
            # repair takes them off, and then this entry no longer covers them and is rebuilt
            g = self._geo[i] = self._geometry(i, open_)
        js, hit = g.js, g.hit
        if len(open_) == len(g.among):  # every neighbour of the entry is open (the usual case)
            rows, smalls = g.hit_rows, g.small_js
        else:
            rows = [r for r, j in enumerate(js) if hit[r] and placements[j] is None and j not in children]
            smalls = sorted({js[r] for r in rows if js[r] in g.small})
        if not rows:
            return _none_affected
        kb = self.board._k[g.idx]
        known = (kb * g.W).sum(1)
        vals = ((self.board._v[g.idx] & kb) * g.W).sum(1)
        masks = (known | g.IM).tolist()
        base = (vals & ~g.IM).tolist()
        ns, runs = g.ns, g.runs
        line = [(r, base[r], runs[r], line_counts(ns[r], masks[r])) for r in rows]
        small = []
        for j in smalls:
            sr = g.small[j]
            nj = ns[sr[0]]
            small.append((nj, [(base[r], runs[r]) for r in sr], boundary_keys(nj, tuple(masks[r] for r in sr))))

        def score(edges) -> int:
            best = NONE_AFFECTED
            for _r, v, rr, counts in line:
                for side, ss, m, d in rr:
                    v |= ((edges[side] >> ss) & m) << d
                k = counts.get(v, 0)
                if k == 0:
                    return 0
                if k < best:
                    best = k
            for nj, parts, keys in small:
                key = 0
                for v, rr in parts:
                    for side, ss, m, d in rr:
                        v |= ((edges[side] >> ss) & m) << d
                    key = (key << nj) | v
                if key not in keys:
                    return 0
            return best

        return score

    def ok(self, i: int, edges) -> bool:
        """True if no unplaced neighbour of square i is left with a side no valid line completes."""
        return self.score(i, edges) > 0

    def score(self, i: int, edges) -> int:
        """0 if some unplaced neighbour side of square i can no longer be completed to a valid line
        (or an n = 6 neighbour's boundary to a valid grid), else the fewest valid lines any such side
        still matches (more is safer; NONE_AFFECTED if no such side)."""
        return self.checker(i)(tuple(int(e) for e in edges))


def _none_affected(_edges) -> int:
    return NONE_AFFECTED


class _CForwardCheck:
    """The forward check in C (``stitcher._core.Checker``); same API and scores as ``PyForwardCheck``."""

    def __init__(self, board: CBoard, squares: list, adj: list, placements: list, children: dict) -> None:
        self.board, self.squares, self.adj = board, squares, adj
        self.placements, self.children = placements, children

    def forget(self, i: int) -> None:
        """Nothing is cached per square."""

    def checker(self, i: int, table=None):
        """``score`` for square i, rows read from the board at its first call. With a
        ``stitcher._core.Table`` of square i's size it also takes that table's entry keys."""
        return _core.Checker(self.board.core, i, self.squares, self.adj, self.placements, self.children, table)

    def ok(self, i: int, edges) -> bool:
        return self.score(i, edges) > 0

    def score(self, i: int, edges) -> int:
        return self.checker(i)(tuple(int(e) for e in edges))


ForwardCheck = _CForwardCheck if _core is not None else PyForwardCheck
