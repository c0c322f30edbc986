"""Tile features of FORMAT §4, computed from plain data: the solution, the givens and every solution.

``multiplicity_features`` needs only the complete list of solutions
consistent with the givens (the counter's output); ``ladder_puzzle`` builds
the puzzle the difficulty ladder runs on (givens + the seam_mask sides known);
``features`` joins them with the ladder's result into a ``Features`` value
stamped with ``GENERATOR_VERSION``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from generator.version import GENERATOR_VERSION
from tilelib import bits
from tilelib.bits import blob_rows, rows_blob  # noqa: F401 - the row-int BLOB codec, used here and re-exported
from tilelib.tile import Features, pack_nibbles

if TYPE_CHECKING:
    import numpy as np

SIDE_SLICES = (
    (bits.TOP, (0, slice(None))),
    (bits.RIGHT, (slice(None), -1)),
    (bits.BOTTOM, (-1, slice(None))),
    (bits.LEFT, (slice(None), 0)),
)


def differing_sides(a: np.ndarray, b: np.ndarray) -> int:
    """Side mask (top 1, right 2, bottom 4, left 8) of the sides whose edge ints differ."""
    import numpy as np

    mask = 0
    for bit, sl in SIDE_SLICES:
        if not np.array_equal(a[sl], b[sl]):
            mask |= bit
    return mask


def side_known(n: int, side_mask: int) -> np.ndarray:
    """Known-mask (n×n uint8) covering the full sides in ``side_mask``."""
    import numpy as np

    m = np.zeros((n, n), dtype=np.uint8)
    for bit, sl in SIDE_SLICES:
        if side_mask & bit:
            m[sl] = 1
    return m


def pin_depth(nibs: list[int]) -> int:
    """The fewest sides whose set meets every nibble (0 with no nibbles; 5 if some nibble is 0)."""
    if not nibs:
        return 0
    best = 5
    for sel in range(16):
        if all(nb & sel for nb in nibs):
            best = min(best, bin(sel).count("1"))
    return best


def multiplicity_features(solution: np.ndarray, givens: np.ndarray, solutions: list[np.ndarray]) -> dict:
    """m, alts, alt_sides, pins, pin_depth, flip and blank from the complete solution list.

    ``solutions`` must hold every solution consistent with the givens; it must
    contain ``solution`` (ValueError otherwise) and may be in any order.
    """
    import numpy as np

    sol = np.asarray(solution, dtype=np.uint8)
    n = sol.shape[0]
    sol_blob = bits.to_blob(sol)
    others = {}
    seen_self = False
    for g in solutions:
        g = np.asarray(g, dtype=np.uint8)
        b = bits.to_blob(g)
        if b == sol_blob:
            seen_self = True
        else:
            others[b] = g
    if not seen_self:
        raise ValueError("the solution list does not contain the tile's solution")
    order = sorted(others)
    nibs = [differing_sides(sol, others[b]) for b in order]
    flip = np.zeros((n, n), dtype=np.uint8)
    for b in order:
        flip |= (others[b] != sol).astype(np.uint8)
    pins = 0
    for nb in nibs:
        pins |= nb
    blank = float(n * n - int(np.asarray(givens).sum())) / (n * n)
    return {
        "m": 1 + len(order),
        "alts": b"".join(order),
        "alt_sides": pack_nibbles(nibs),
        "pins": pins,
        "pin_depth": pin_depth(nibs),
        "flip": bits.to_blob(flip),
        "blank": blank,
    }


def ladder_puzzle(solution: np.ndarray, givens: np.ndarray, seam_mask: int) -> bits.Puzzle:
    """The puzzle the ladder rates: the givens plus every cell of the seam_mask sides."""
    import numpy as np

    sol = np.asarray(solution, dtype=np.uint8)
    known = (np.asarray(givens, dtype=np.uint8) | side_known(sol.shape[0], seam_mask)).astype(np.uint8)
    return bits.Puzzle.from_grid(sol, known)


def features(solution: np.ndarray, givens: np.ndarray, seam_mask: int, solutions: list[np.ndarray], ladder) -> Features:
    """The full ``Features`` of a tile; ``ladder`` is ``engine.ladder.rate(ladder_puzzle(...))``."""
    mf = multiplicity_features(solution, givens, solutions)
    return Features(
        version=GENERATOR_VERSION,
        m=mf["m"],
        blank=mf["blank"],
        ladder=int(ladder.ladder),
        bifurcations=int(ladder.bifurcations),
        used_unique=int(bool(ladder.used_unique)),
        needs_unique=int(bool(ladder.needs_unique)),
        needs_bifurcation=int(bool(ladder.needs_bifurcation)),
        pins=mf["pins"],
        pin_depth=mf["pin_depth"],
        alt_sides=mf["alt_sides"],
        flip=mf["flip"],
        alts=mf["alts"],
    )


# ------------------------------------------------------------ row-int fast path (the generator's hot path)


def _sides_differ(n: int, a, b) -> int:
    mask = 0
    if a[0] != b[0]:
        mask |= bits.TOP
    if a[n - 1] != b[n - 1]:
        mask |= bits.BOTTOM
    hi = 1 << (n - 1)
    for x, y in zip(a, b, strict=True):
        d = x ^ y
        if d & 1:
            mask |= bits.RIGHT
        if d & hi:
            mask |= bits.LEFT
    return mask


def features_rows(n: int, sol: Sequence[int], givens: list[int], solutions, ladder) -> Features:
    """``features`` from row ints (solution, givens mask, every solution as a row sequence):
    the same ``Features`` value without building numpy grids. ``ladder`` needs the attributes
    ``ladder``, ``bifurcations``, ``used_unique``, ``needs_unique``, ``needs_bifurcation``."""
    sol = tuple(sol)
    others = {}
    seen_self = False
    for s in solutions:
        s = tuple(s)
        if s == sol:
            seen_self = True
        else:
            others[rows_blob(s, n)] = s
    if not seen_self:
        raise ValueError("the solution list does not contain the tile's solution")
    order = sorted(others)
    nibs = [_sides_differ(n, sol, others[b]) for b in order]
    flip = bytes(bits.blob_len(n))  # m = 1 (most tiles): nothing flips
    pins = 0
    if order:
        rows = [0] * n
        for b, nb in zip(order, nibs, strict=True):
            pins |= nb
            for r, (x, y) in enumerate(zip(others[b], sol, strict=True)):
                rows[r] |= x ^ y
        flip = rows_blob(rows, n)
    given = sum(map(int.bit_count, givens))
    return Features(
        version=GENERATOR_VERSION,
        m=1 + len(order),
        blank=float(n * n - given) / (n * n),
        ladder=int(ladder.ladder),
        bifurcations=int(ladder.bifurcations),
        used_unique=int(bool(ladder.used_unique)),
        needs_unique=int(bool(ladder.needs_unique)),
        needs_bifurcation=int(bool(ladder.needs_bifurcation)),
        pins=pins,
        pin_depth=pin_depth(nibs),
        alt_sides=pack_nibbles(nibs),
        flip=flip,
        alts=b"".join(order),
    )
