"""`big-first` (the default packer): large squares at seeded positions on a coarse grid, then fill.

Why: the stitcher places large tiles first, while their edges are still free
(one-sided lookups, which a library of tens of thousands of tiles answers),
and small tiles fill in around them.

Draws, in order: the seed point (x, y); the coarse column widths and row
heights (representable lengths in [cell_min, cell_max], summing to P); then
for every coarse cell in raster order whether it gets a big square (always
the seed point's cell, else ``density`` percent), its side (13 or 15) and its
target column (the seed point's column for the seed cell). Then one skyline
(``fill.skyline_fill``) fills the board bottom-up (y = 0 first); when its
lowest segment reaches a cell row whose cells still want their big square
(or a later row in the same column: wishes carry over until placed), the
square is dropped there at the feasible column nearest its target (left
and right leftovers and headroom representable). Everything else is small
fill drawn by ``weights`` under the skyline's ``align`` rule (percent of
steps that prefer tops meeting a neighbour's; see ``fill.skyline_fill``). A
cell the skyline passes without room for its square goes without. One
skyline means one ceiling, which keeps zones small.

Tile order: the seed cell's big square (id 0), the other big squares in
placement order, then the fill squares in placement order. In the rare case
that the seed cell got no big square, the seed tile is the square covering
the seed point.
Stream: the CLI passes ``Stream(seed, "pack/big-first")``.
"""

from __future__ import annotations

from bisect import bisect_right

from packers.bands import seed_tile_at
from packers.fill import DP_MAX, check_weights, rep, rep0, skyline_fill, split_length
from packers.packing import SIZES, Packing, group_zones, merge_params
from tilelib.rng import Stream

NAME = "big-first"
VERSION = 1
ORDER = "big"  # the stitcher's placement order (stitcher.order.ORDERS): large squares first
DEFAULTS = {"cell_min": 27, "cell_max": 45, "density": 70, "align": 100, "weights": [5, 4, 3, 2, 1, 1]}


def check_params(params: dict) -> dict:
    """Merge defaults; reject unknown keys or bad values (ValueError)."""
    p = merge_params(NAME, DEFAULTS, params)
    for k in ("cell_min", "cell_max", "density", "align"):
        if type(p[k]) is not int:
            raise ValueError(f"{k} must be an integer")
    if not 15 <= p["cell_min"] <= p["cell_max"] <= DP_MAX:
        raise ValueError(f"need 15 <= cell_min <= cell_max <= {DP_MAX}")
    for k in ("density", "align"):
        if not 0 <= p[k] <= 100:
            raise ValueError(f"{k} must be a percent 0..100")
    check_weights(p["weights"], "weights")
    return p


def coarse_split(P: int, lo: int, hi: int, rng: Stream) -> list[int]:
    """Coarse cell sides summing to P, each representable and in [lo, hi] when possible."""
    if P <= hi:
        return [P]
    parts = split_length(P, [c for c in range(lo, hi + 1) if rep(c)], rng)
    if rep0(parts[-1]) and parts[-1] <= hi:
        return parts
    return split_length(P, [c for c in range(5, hi + 1) if rep(c)], rng)


class BigPlan:
    """Per-cell big-square wishes and the skyline hook that honours them.

    A wish becomes eligible once the skyline's lowest segment reaches its cell
    row, and stays eligible in later rows of the same column until placed (so
    a crowded row only delays a big square, it does not drop it).
    """

    def __init__(self, cols: list[int], rows: list[int], wants: dict, slack: int):
        self.cx = [sum(cols[:i]) for i in range(len(cols))]
        self.ry = [sum(rows[:i]) for i in range(len(rows))]
        self.by_col: dict[int, list[tuple[int, int, int]]] = {}  # col -> [(row, side, target x)] by row
        for r, c in sorted(wants):
            self.by_col.setdefault(c, []).append((r, *wants[(r, c)]))
        self.slack = slack
        self.placed: list[tuple[tuple[int, int], tuple[int, int, int]]] = []

    def __call__(self, u: int, W: int, v: int, H: int):
        if not self.by_col:
            return None
        r = bisect_right(self.ry, v) - 1
        c0 = bisect_right(self.cx, u) - 1
        c1 = bisect_right(self.cx, u + W - 1) - 1
        eligible = []
        for c in range(c0, c1 + 1):
            for k, (row, s, tx) in enumerate(self.by_col.get(c, ())):
                if row > r:
                    break
                eligible.append((row, c, k, s, tx))
        for row, c, k, s, tx in sorted(eligible):
            if s > H or not rep0(H - s):
                continue
            lo, hi = max(u, tx - self.slack), min(u + W - s, tx + self.slack)
            best = None
            for x in range(lo, hi + 1):
                if rep0(x - u) and rep0(u + W - x - s):
                    if best is None or (abs(x - tx), x) < (abs(best - tx), best):
                        best = x
            if best is not None:
                del self.by_col[c][k]
                if not self.by_col[c]:
                    del self.by_col[c]
                self.placed.append(((row, c), (best, v, s)))
                return best - u, s
        return None


def pack(P: int, rng: Stream, params: dict) -> Packing:
    """Big-first packing of [0, P)²; see the module docstring."""
    p = check_params(params)
    px, py = rng.randbelow(P), rng.randbelow(P)
    cols = coarse_split(P, p["cell_min"], p["cell_max"], rng)
    rows = coarse_split(P, p["cell_min"], p["cell_max"], rng)
    wants = {}
    seed_cell = None
    y = 0
    for r, h in enumerate(rows):
        x = 0
        for c, w in enumerate(cols):
            is_seed = x <= px < x + w and y <= py < y + h
            if is_seed:
                seed_cell = (r, c)
            if is_seed or rng.randbelow(100) < p["density"]:
                sides = [s for s in (13, 15) if s <= min(w, h)] or [max(s for s in SIZES if s <= max(5, min(w, h)))]
                s = sides[rng.randbelow(len(sides))]
                tx = min(max(0, px - s // 2), P - s) if is_seed else x + rng.randint(0, max(0, w - s))
                wants[(r, c)] = (s, tx)
            x += w
        y += h
    plan = BigPlan(cols, rows, wants, slack=max(cols))
    weights = dict(zip(SIZES, p["weights"], strict=True))
    sq, zn = skyline_fill(P, P, rng, weights, greedy=0, align=p["align"], big=plan)
    bigs = [q for (cell, q) in plan.placed]
    seed = [q for (cell, q) in plan.placed if cell == seed_cell]
    bigset = set(bigs)
    ordered = seed + [q for q in bigs if q not in seed] + [q for q in sq if q not in bigset]
    seed_id = 0 if seed else seed_tile_at(ordered, px, py)
    return Packing(
        P=P, squares=tuple(ordered), zones=group_zones(zn), seed_tile=seed_id, name=NAME, version=VERSION, params=p
    )
