"""`substitution`: one fixed recursive split rule applied to every block of a seeded coarse grid.

The rule (``rule_leaves``) is a pure function of the block's size w×h: a
block that is a legal square stays whole; otherwise it is cut where the
guillotine table (``fill.zone_table``) says the least zone is reached,
preferring to peel off a strip of the largest legal width, then the cut
nearest the middle; the two halves follow the same rule. Blocks of equal size
therefore look alike (self-similar, learnable: a knob, not the default).

Draws, in order: the seed point; coarse column widths and row heights, each
a sequence of ``blocks`` sides summing to P; one of the 8 dihedral frames per
block (the rule runs in that frame: transposed and/or mirrored). The default
sides {35, 45, 55, 63} are pairwise closed under the rule (every block pair
tiles with zero zone; measured from the table), so the board has no zones
whenever P is a sum of them (P = 999 is). Otherwise the coarse split falls
back to representable sides <= 64 and the rule leaves a few zones.
The seed tile is the square covering the seed point (else the nearest).
Tiles are listed block by block in raster order. Stream: the CLI passes
``Stream(seed, "pack/substitution")``.
"""

from __future__ import annotations

from functools import lru_cache

from packers.bands import seed_tile_at
from packers.big_first import coarse_split
from packers.fill import DP_MAX, optimal_moves, split_length
from packers.packing import SIZES, Packing, group_zones, merge_params
from tilelib.rng import Stream

NAME = "substitution"
VERSION = 1
ORDER = "bfs"  # the stitcher's placement order (stitcher.order.ORDERS): breadth-first from the seed tile
DEFAULTS = {"blocks": [35, 45, 55, 63]}


def check_params(params: dict) -> dict:
    """Merge defaults; reject unknown keys or bad values (ValueError)."""
    p = merge_params(NAME, DEFAULTS, params)
    b = p["blocks"]
    if not isinstance(b, list) or not b or any(type(x) is not int or not 15 <= x <= DP_MAX for x in b):
        raise ValueError(f"blocks must be a non-empty list of integers in 15..{DP_MAX}")
    return p


def block_split(P: int, blocks: list[int], rng: Stream) -> list[int]:
    """Coarse sides summing to P drawn from ``blocks``; if P is no such sum, representable sides <= DP_MAX."""
    parts = split_length(P, blocks, rng)
    if parts[-1] in blocks or P <= DP_MAX:
        return parts
    return coarse_split(P, 25, DP_MAX, rng)


def _rule_cut(w: int, h: int) -> tuple[int, int] | None:
    """The rule's cut for a w×h block: (0, a) = vertical at x=a, (1, b) = horizontal at y=b; None = leaf."""
    square, vc, hc, zone = optimal_moves(w, h)
    if zone or square:
        return None
    cuts = [(0, a, w) for a in vc] + [(1, b, h) for b in hc]
    legal = [c for c in cuts if c[1] in SIZES]
    if legal:
        d, c, _n = max(legal, key=lambda c: (c[1], c[0] == (0 if w >= h else 1), -c[0]))
    else:
        d, c, _n = min(cuts, key=lambda c: (abs(2 * c[1] - c[2]), c[0], c[1]))
    return d, c


@lru_cache(maxsize=4096)
def rule_leaves(w: int, h: int) -> tuple[tuple[str, int, int, int, int], ...]:
    """Leaves of the fixed rule on a w×h block: ("sq", x, y, s, s) or ("zone", x, y, w, h), local coords."""
    out = []
    stack = [(0, 0, w, h)]
    while stack:
        x, y, bw, bh = stack.pop()
        cut = _rule_cut(bw, bh)
        if cut is None:
            square, _vc, _hc, _zone = optimal_moves(bw, bh)
            out.append(("sq" if square else "zone", x, y, bw, bh))
        elif cut[0] == 0:
            stack += [(x + cut[1], y, bw - cut[1], bh), (x, y, cut[1], bh)]
        else:
            stack += [(x, y + cut[1], bw, bh - cut[1]), (x, y, bw, cut[1])]
    return tuple(out)


def framed_leaves(w: int, h: int, t: int) -> list[tuple[str, int, int, int, int]]:
    """The rule's leaves for a w×h block seen through dihedral frame t (bit 4: transpose, 1: mirror x, 2: mirror y)."""
    if t & 4:
        leaves = [(k, y, x, bh, bw) for (k, x, y, bw, bh) in rule_leaves(h, w)]
    else:
        leaves = list(rule_leaves(w, h))
    if t & 1:
        leaves = [(k, w - x - bw, y, bw, bh) for (k, x, y, bw, bh) in leaves]
    if t & 2:
        leaves = [(k, x, h - y - bh, bw, bh) for (k, x, y, bw, bh) in leaves]
    return sorted(leaves, key=lambda q: (q[2], q[1]))


def pack(P: int, rng: Stream, params: dict) -> Packing:
    """Substitution packing of [0, P)²; see the module docstring."""
    p = check_params(params)
    px, py = rng.randbelow(P), rng.randbelow(P)
    cols = block_split(P, p["blocks"], rng)
    rows = block_split(P, p["blocks"], rng)
    squares, zones = [], []
    y = 0
    for h in rows:
        x = 0
        for w in cols:
            for kind, lx, ly, bw, bh in framed_leaves(w, h, rng.randbelow(8)):
                if kind == "sq":
                    squares.append((x + lx, y + ly, bw))
                else:
                    zones.append((x + lx, y + ly, bw, bh))
            x += w
        y += h
    seed = seed_tile_at(squares, px, py) if squares else 0
    return Packing(
        P=P, squares=tuple(squares), zones=group_zones(zones), seed_tile=seed, name=NAME, version=VERSION, params=p
    )
