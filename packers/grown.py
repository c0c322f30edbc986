"""`grown`: the packing grows from the seed tile outward over a skyline, so the layout reads like a run.

Draws, in order: the seed side (legal, weighted by ``seed_weights``), its
position (uniform among offsets that leave representable distances to all
four board edges, so every region below has representable sides), the
pinwheel chirality, then the skyline choices.

The board minus the seed square is cut into four rectangles turning around
the seed (a pinwheel). Each is filled by ``fill.skyline_fill`` whose floor is
the side facing the seed and whose ceiling is the board edge: layer by layer
away from the seed, each time dropping on the lowest free segment the largest
square that fits (``greedy`` percent of the time) or a size drawn by
``weights``, always keeping leftover widths and headrooms representable.
Notches the skyline cannot fill become zones, mostly along the board edges.

Tile order is growth order: the seed (id 0), then squares by Chebyshev
distance of their centre from the seed's centre (ties by y, then x).
Stream: the CLI passes ``Stream(seed, "pack/grown")``.
"""

from __future__ import annotations

from packers.fill import Out, check_weights, place_strip, rep0, skyline_fill
from packers.packing import SIZES, Packing, group_zones, merge_params
from tilelib.rng import Stream

NAME = "grown"
VERSION = 1
ORDER = "id"  # the stitcher's placement order (stitcher.order.ORDERS): tile id order, which is its growth order
DEFAULTS = {"greedy": 40, "align": 100, "weights": [6, 5, 4, 3, 3, 3], "seed_weights": [1, 1, 1, 2, 3, 4]}


def check_params(params: dict) -> dict:
    """Merge defaults; reject unknown keys or bad values (ValueError)."""
    p = merge_params(NAME, DEFAULTS, params)
    for k in ("greedy", "align"):
        if type(p[k]) is not int or not 0 <= p[k] <= 100:
            raise ValueError(f"{k} must be a percent 0..100")
    for k in ("weights", "seed_weights"):
        check_weights(p[k], k)
    return p


def place_seed(P: int, rng: Stream, seed_weights: list[int]) -> tuple[int, int, int]:
    """Draw the seed square (x, y, s): side by weight among those that fit, then a position."""

    def good(s: int) -> list[int]:
        return [a for a in range(P - s + 1) if rep0(a) and rep0(P - s - a)]

    fit = [i for i, s in enumerate(SIZES) if s <= P and seed_weights[i] > 0]
    fit = [i for i in fit if good(SIZES[i])] or fit or [0]
    s = SIZES[fit[rng.weighted([max(1, seed_weights[i]) for i in fit])]] if len(fit) > 1 else SIZES[fit[0]]
    good_xy = good(s) or list(range(P - s + 1))
    x = good_xy[rng.randbelow(len(good_xy))]
    y = good_xy[rng.randbelow(len(good_xy))]
    return x, y, s


def pack(P: int, rng: Stream, params: dict) -> Packing:
    """Grown packing of [0, P)²; see the module docstring."""
    p = check_params(params)
    a, b, s = place_seed(P, rng, p["seed_weights"])
    chiral = rng.randbelow(2)
    weights = dict(zip(SIZES, p["weights"], strict=True))
    out = Out()
    # (side, floor start x, floor start y, floor length L, depth T)
    if chiral == 0:
        strips = [
            ("up", 0, b, a + s, b),
            ("right", a + s, 0, b + s, P - a - s),
            ("down", a, b + s, P - a, P - b - s),
            ("left", a, b, P - b, a),
        ]
    else:
        strips = [
            ("up", a, b, P - a, b),
            ("left", a, 0, b + s, a),
            ("down", 0, b + s, a + s, P - b - s),
            ("right", a + s, b, P - b, P - a - s),
        ]
    for side, x0, y0, L, T in strips:
        if L > 0 and T > 0:
            sq, zn = skyline_fill(L, T, rng, weights, greedy=p["greedy"], align=p["align"])
            place_strip(out, side, x0, y0, L, T, sq, zn)
    cx2, cy2 = 2 * a + s, 2 * b + s

    def dist(q: tuple[int, int, int]) -> tuple[int, int, int]:
        x, y, t = q
        return (max(abs(2 * x + t - cx2), abs(2 * y + t - cy2)), y, x)

    squares = [(a, b, s)] + sorted(out.squares, key=dist)
    return Packing(
        P=P, squares=tuple(squares), zones=group_zones(out.zones), seed_tile=0, name=NAME, version=VERSION, params=p
    )
