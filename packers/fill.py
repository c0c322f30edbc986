"""Shared filling tools for the packers: pitch arithmetic, length splits, Euclid, guillotine DP, skyline.

Pitch arithmetic: a length L is *representable* when it is a
sum of legal sides {5, 7, …, 15}: every odd L >= 5 and every even L >= 10.
1..4, 6 and 8 are not; packers steer their cuts around those remainders.

Every filler appends squares ``(x, y, s)`` to ``out.squares`` and zone
rectangles ``(x, y, w, h)`` to ``out.zones``; all draws come from the caller's
``tilelib.rng.Stream``. Nothing here depends on numpy's or Python's RNG.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache

import numpy as np

from packers.packing import SIZES
from tilelib.rng import Stream


def rep(L: int) -> bool:
    """L is a sum of legal sides (odd >= 5 or even >= 10)."""
    return L >= 5 and (L % 2 == 1 or L >= 10)


def rep0(L: int) -> bool:
    """rep(L) or L == 0 (nothing left over is fine too)."""
    return L == 0 or rep(L)


@dataclass
class Out:
    """Accumulates squares and zone rectangles as a packer places them."""

    squares: list = field(default_factory=list)
    zones: list = field(default_factory=list)

    def square(self, x: int, y: int, s: int) -> None:
        self.squares.append((x, y, s))

    def zone(self, x: int, y: int, w: int, h: int) -> None:
        if w > 0 and h > 0:
            self.zones.append((x, y, w, h))


def split_length(L: int, parts: list[int], rng: Stream, weights: list[int] | None = None) -> list[int]:
    """Split L into a random sequence of values from ``parts`` summing exactly to L.

    Each step draws uniformly (or by ``weights``) among the parts that leave a
    remainder still splittable. If L cannot be split that way at all, the
    result ends with one leftover piece (the caller turns it into zones).
    """
    parts = sorted(set(parts))
    ok = _splittable(L, tuple(parts))
    out: list[int] = []
    r = L
    while r > 0:
        cand = [i for i, p in enumerate(parts) if p <= r and ok[r - p]]
        if not cand:
            out.append(r)
            break
        i = cand[rng.weighted([weights[j] for j in cand])] if weights else cand[rng.randbelow(len(cand))]
        out.append(parts[i])
        r -= parts[i]
    return out


@lru_cache(maxsize=64)
def _splittable(L: int, parts: tuple[int, ...]) -> list[bool]:
    ok = [False] * (L + 1)
    ok[0] = True
    for r in range(1, L + 1):
        ok[r] = any(p <= r and ok[r - p] for p in parts)
    return ok


def check_weights(w, what: str) -> None:
    """A weight list per legal side: len(SIZES) non-negative ints, not all zero (else ValueError)."""
    if not isinstance(w, list) or len(w) != len(SIZES) or any(type(x) is not int or x < 0 for x in w) or sum(w) == 0:
        raise ValueError(f"{what} must be {len(SIZES)} non-negative integers (for sides {SIZES}), not all 0")


def largest_side(m: int) -> int:
    """The largest legal side <= m (0 if none)."""
    for s in reversed(SIZES):
        if s <= m:
            return s
    return 0


def euclid_fill(x: int, y: int, w: int, h: int, out: Out) -> None:
    """Cut a w×h rectangle into squares by the Euclidean algorithm (largest legal square along the
    long side, repeat on the rest); pieces with a side under 5 become zones."""
    stack = [(x, y, w, h)]
    while stack:
        x, y, w, h = stack.pop()
        if w <= 0 or h <= 0:
            continue
        if min(w, h) < 5:
            out.zone(x, y, w, h)
            continue
        s = largest_side(min(w, h))
        if w >= h:
            k = w // s
            for i in range(k):
                out.square(x + i * s, y, s)
            stack.append((x, y + s, w, h - s))
            stack.append((x + k * s, y, w - k * s, s))
        else:
            k = h // s
            for i in range(k):
                out.square(x, y + i * s, s)
            stack.append((x + s, y, w - s, h))
            stack.append((x, y + k * s, s, h - k * s))


def euclid_zone(w: int, h: int) -> int:
    """Zone area that ``euclid_fill`` leaves in a w×h rectangle."""
    o = Out()
    euclid_fill(0, 0, w, h, o)
    return sum(a * b for (_x, _y, a, b) in o.zones)


# ---------------------------------------------------------------- guillotine DP

DP_MAX = 64
"""Largest rectangle side the guillotine table covers."""


@lru_cache(maxsize=1)
def zone_table() -> np.ndarray:
    """Z[w, h] = least zone area of any guillotine cut of a w×h rectangle into legal squares plus zones
    (w, h <= DP_MAX). Built once per process (~30 ms); a pure function of SIZES."""
    M = DP_MAX
    Z = np.zeros((M + 1, M + 1), dtype=np.int64)
    for w in range(1, M + 1):
        for h in range(1, w + 1):
            if w == h and w in SIZES:
                best = 0
            else:
                best = w * h
                if w >= 2:
                    best = min(best, int((Z[1 : w // 2 + 1, h] + Z[w - 1 : w - w // 2 - 1 : -1, h]).min()))
                if h >= 2:
                    best = min(best, int((Z[w, 1 : h // 2 + 1] + Z[w, h - 1 : h - h // 2 - 1 : -1]).min()))
            Z[w, h] = Z[h, w] = best
    return Z


@lru_cache(maxsize=8192)
def optimal_moves(w: int, h: int) -> tuple[bool, tuple[int, ...], tuple[int, ...], bool]:
    """Optimal moves for a w×h rectangle: (square leaf ok, vertical cut offsets, horizontal cut offsets,
    whole-zone leaf ok)."""
    Z = zone_table()
    best = int(Z[w, h])
    square = w == h and w in SIZES
    if best == w * h:
        return (False, (), (), True)
    vc = tuple(a for a in range(1, w) if Z[a, h] + Z[w - a, h] == best)
    hc = tuple(b for b in range(1, h) if Z[w, b] + Z[w, h - b] == best)
    return (square, vc, hc, False)


def dp_fill(x: int, y: int, w: int, h: int, rng: Stream, out: Out, keep_square: int = 3, split_pref: int = 1) -> None:
    """Fill a w×h rectangle (sides <= DP_MAX) with the least zone area a guillotine cut allows,
    choosing at random among the optimal moves.

    Where a legal square is optimal but so is cutting it further, keep it with
    odds keep_square : split_pref. Cuts prefer offsets that are themselves
    legal sides (a strip of whole squares), so layouts stay blocky, not sliver-cut.
    No v1 packer calls it; it is here for the stitcher's "split an unfillable
    square into smaller squares or a zone" fallback (FORMAT §8).
    """
    if w > DP_MAX or h > DP_MAX:
        raise ValueError(f"dp_fill covers sides up to {DP_MAX}, got {w}x{h}")
    stack = [(x, y, w, h)]
    while stack:
        x, y, w, h = stack.pop()
        if w <= 0 or h <= 0:
            continue
        square, vc, hc, zone = optimal_moves(w, h)
        if zone:
            out.zone(x, y, w, h)
            continue
        if square and (not vc and not hc or rng.randbelow(keep_square + split_pref) < keep_square):
            out.square(x, y, w)
            continue
        cuts = [(0, a) for a in vc] + [(1, b) for b in hc]
        wts = [4 if (c in SIZES) else 1 for (_d, c) in cuts]
        d, c = cuts[rng.weighted(wts)]
        if d == 0:
            stack.append((x, y, c, h))
            stack.append((x + c, y, w - c, h))
        else:
            stack.append((x, y, w, c))
            stack.append((x, y + c, w, h - c))


# ---------------------------------------------------------------- skyline

FINISH = 45
"""Within this headroom of the ceiling, the skyline prefers a square that reaches it exactly."""


def skyline_fill(
    L: int, T: int, rng: Stream, weights: dict[int, int], greedy: int = 0, align: int = 100, big=None
) -> tuple[list, list]:
    """Fill an L×T strip from its floor (v = 0) up to its ceiling (v = T) with a skyline.

    Local coordinates (u along the floor, v away from it). Repeatedly take the
    lowest, leftmost skyline segment (width W, headroom H) and drop a square of
    side s <= min(W, H) on it. Candidate sides keep the leftover width W - s and
    headroom H - s representable (or 0). Among them, in order of preference:
    a side reaching the ceiling exactly (when H <= FINISH); with probability
    align/100 a side whose top meets a neighbour's height (segments merge, so
    the ceiling is met flat: measured, this halves the zone area); then the
    largest (probability greedy/100) or one drawn by ``weights``. A segment
    that takes no square becomes a zone up to its lower neighbour or the ceiling.

    ``big(u, W, v, H)``, if given, is asked first and may return
    (offset within the segment, side) to force a square there (big-first).
    Returns (squares, zones) in local (u, v, s) / (u, v, w, h), in placement order.
    """
    squares: list = []
    zones: list = []
    # Segments left to right as parallel lists; neighbours always differ in height.
    us, ws, hs = [0], [L], [0]
    while True:
        v = min(hs)
        if v >= T:
            break
        i = hs.index(v)  # lowest, and leftmost among the lowest
        u, W = us[i], ws[i]
        H = T - v
        hl = hs[i - 1] if i > 0 else T
        hr = hs[i + 1] if i + 1 < len(hs) else T
        forced = big(u, W, v, H) if big is not None else None
        if forced is not None:
            d, s = forced
        else:
            cand = _candidate_sides(W, H, v, hl, hr, rng, align)
            if not cand:
                top = min(hl, hr, T)
                zones.append((u, v, W, top - v))
                hs[i] = top
                _merge_at(us, ws, hs, i, i)
                continue
            s = _draw_side(cand, rng, weights, greedy)
            d = _offset(s, W, v, hl, hr, rng)
        squares.append((u + d, v, s))
        _drop(us, ws, hs, i, d, s)
    return squares, zones


def _candidate_sides(W: int, H: int, v: int, hl: int, hr: int, rng: Stream, align: int) -> list[int]:
    """The sides a segment of width W and headroom H (floor v, neighbours' heights hl, hr) may take,
    ascending: those that keep W - s and H - s representable, narrowed to the ones reaching the
    ceiling (when H <= FINISH) or else, with probability align/100, the ones meeting a neighbour's
    height; when the headroom cannot stay representable, those keeping the width so, else the
    largest fit. Empty: the segment becomes a zone."""
    cap = min(W, H)
    cand = [s for s in SIZES if s <= cap and rep0(W - s) and rep0(H - s)]
    if not cand:
        return [s for s in SIZES if s <= cap and rep0(W - s)] or [s for s in SIZES if s <= cap][-1:]
    pref = [s for s in cand if s == H] if H <= FINISH else []
    if not pref and align and len(cand) > 1 and (align >= 100 or rng.randbelow(100) < align):
        pref = [s for s in cand if v + s == hl or v + s == hr]
    return pref or cand


def _draw_side(cand: list[int], rng: Stream, weights: dict[int, int], greedy: int) -> int:
    """One side of ``cand``: the only one, the largest with probability greedy/100, else drawn by
    ``weights`` (weight 0 = never drawn while a weighted side fits; if none does, the largest)."""
    if len(cand) == 1:
        return cand[0]
    if greedy and rng.randbelow(100) < greedy:
        return cand[-1]
    wts = [weights.get(c, 1) for c in cand]
    return cand[rng.weighted(wts)] if sum(wts) else cand[-1]


def _offset(s: int, W: int, v: int, hl: int, hr: int, rng: Stream) -> int:
    """Where in the segment a square of side s goes: against the neighbour whose height it meets
    (left first), else at either end by a coin."""
    if s == W or v + s == hl:
        return 0
    if v + s == hr:
        return W - s
    return 0 if rng.randbelow(2) == 0 else W - s


def _drop(us: list, ws: list, hs: list, i: int, d: int, s: int) -> None:
    """Segment i takes a square of side s at offset d: it splits into up to three segments (left
    rest, the square's top, right rest) and equal neighbours merge."""
    u, W, v = us[i], ws[i], hs[i]
    nu, nw, nh = [u + d], [s], [v + s]
    if d > 0:
        nu.insert(0, u)
        nw.insert(0, d)
        nh.insert(0, v)
    if W > d + s:
        nu.append(u + d + s)
        nw.append(W - d - s)
        nh.append(v)
    us[i : i + 1], ws[i : i + 1], hs[i : i + 1] = nu, nw, nh
    _merge_at(us, ws, hs, i, i + len(nu) - 1)


def _merge_at(us: list, ws: list, hs: list, a: int, b: int) -> None:
    """Merge equal-height neighbours among segments a-1..b+1 (only those can have become equal)."""
    j = min(b + 1, len(hs) - 1)
    lo = max(a - 1, 0)
    while j > lo:
        if hs[j] == hs[j - 1]:
            ws[j - 1] += ws[j]
            del us[j], ws[j], hs[j]
        j -= 1


def place_strip(out: Out, side: str, x0: int, y0: int, L: int, T: int, squares: list, zones: list) -> None:
    """Map a strip filled in local (u, v) coordinates onto the board.

    The strip's floor is a segment of length L starting at (x0, y0) in pitch
    space; ``side`` says where the strip grows: "down" (+y), "up" (-y),
    "right" (+x), "left" (-x). For "up"/"left", (x0, y0) is the floor's start
    and the strip occupies the T units before it.
    """
    for u, v, s in squares:
        if side == "down":
            out.square(x0 + u, y0 + v, s)
        elif side == "up":
            out.square(x0 + u, y0 - v - s, s)
        elif side == "right":
            out.square(x0 + v, y0 + u, s)
        else:
            out.square(x0 - v - s, y0 + u, s)
    for u, v, w, h in zones:
        if side == "down":
            out.zone(x0 + u, y0 + v, w, h)
        elif side == "up":
            out.zone(x0 + u, y0 - v - h, w, h)
        elif side == "right":
            out.zone(x0 + v, y0 + u, h, w)
        else:
            out.zone(x0 - v - h, y0 + u, h, w)
