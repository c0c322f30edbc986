"""`big-first` (the default packer): large squares at seeded positions on a coarse grid, then fill.

Why: the stitcher places large tiles first, while their edges are still free
(one-sided lookups, which a library of tens of thousands of tiles answers),
and small tiles fill in around them (design notes §4).

Draws, in order: the seed point (x, y); the coarse column widths and row
heights (representable lengths in [cell_min, cell_max], summing to P); then
for every coarse cell in raster order whether it gets a big square (always
the seed point's cell, else ``density`` percent), its side (13 or 15) and its
target column (the seed point's column for the seed cell). Then one skyline
(``fill.skyline_fill``) fills the board bottom-up (y = 0 first); when its
lowest segment lies in a cell row whose cells still want their big square,
the square is dropped there at the feasible column nearest its target (left
and right leftovers and headroom representable). Everything else is small
fill drawn by ``weights``. A cell the skyline passes without room for its
square goes without. One skyline means one ceiling, which keeps zones small.

Tile order: the seed cell's big square (id 0), the other big squares in
placement order, then the fill squares in placement order.
Stream: the CLI passes ``Stream(seed, "pack/big-first")``.
"""

from __future__ import annotations

from bisect import bisect_right

from packers.fill import DP_MAX, check_weights, rep, rep0, skyline_fill, split_length
from packers.packing import SIZES, Packing, group_zones
from tilelib.rng import Stream

NAME = "big-first"
VERSION = 1
DEFAULTS = {"cell_min": 27, "cell_max": 45, "density": 70, "align": 100, "weights": [5, 4, 3, 2, 1, 1]}


def check_params(params: dict) -> dict:
    """Merge defaults; reject unknown keys or bad values (ValueError)."""
    p = {k: (list(v) if isinstance(v, list) else v) for k, v in DEFAULTS.items()}
    for k, v in params.items():
        if k not in DEFAULTS:
            raise ValueError(f"unknown parameter {k!r} for {NAME} (known: {sorted(DEFAULTS)})")
        p[k] = v
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
    """Per-cell big-square wishes and the skyline hook that honours them."""

    def __init__(self, cols: list[int], rows: list[int], wants: dict, slack: int):
        self.cx = [sum(cols[:i]) for i in range(len(cols))]
        self.cw = cols
        self.ry = [sum(rows[:i]) for i in range(len(rows))]
        self.rh = rows
        self.wants = wants  # (row, col) -> (side, target x)
        self.slack = slack
        self.placed: list[tuple[tuple[int, int], tuple[int, int, int]]] = []

    def _row(self, v: int) -> int:
        lo, hi = 0, len(self.ry) - 1
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if self.ry[mid] <= v:
                lo = mid
            else:
                hi = mid - 1
        return lo

    def __call__(self, u: int, W: int, v: int, H: int):
        if not self.wants:
            return None
        r = self._row(v)
        c = bisect_right(self.cx, u) - 1
        while c < len(self.cx) and self.cx[c] < u + W:
            want = self.wants.get((r, c))
            c += 1
            if want is None:
                continue
            s, tx = want
            if s > H or not rep0(H - s):
                continue
            lo, hi = max(u, tx - self.slack), min(u + W - s, tx + self.slack)
            best = None
            for x in range(lo, hi + 1):
                if rep0(x - u) and rep0(u + W - x - s):
                    if best is None or (abs(x - tx), x) < (abs(best - tx), best):
                        best = x
            if best is not None:
                del self.wants[(r, c - 1)]
                self.placed.append(((r, c - 1), (best, v, s)))
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
    weights = dict(zip(SIZES, p["weights"]))
    sq, zn = skyline_fill(P, P, rng, weights, greedy=0, align=p["align"], big=plan)
    bigs = [q for (cell, q) in plan.placed]
    seed = [q for (cell, q) in plan.placed if cell == seed_cell]
    bigset = set(bigs)
    ordered = seed + [q for q in bigs if q not in seed] + [q for q in sq if q not in bigset]
    return Packing(P=P, squares=tuple(ordered), zones=group_zones(zn), seed_tile=0,
                   name=NAME, version=VERSION, params=p)
