"""Test helpers: an independent, obviously-correct random Takuzu solution maker.

Row-by-row backtracking over the valid lines, checking columns (runs,
balance, distinctness) directly on the partial grid. Deliberately naive and
separate from the generator package, so tests of the store and of the
generator do not lean on the code they check.
"""

from __future__ import annotations

import numpy as np

from tilelib.bits import int_line
from tilelib.rules import valid_lines, violations


def _forced(rows: list[int], n: int) -> tuple[int, int]:
    """(mask, value) of cells the next row must hold so columns keep runs and balance."""
    mask = value = 0
    k = len(rows)
    for c in range(n):
        bit = 1 << (n - 1 - c)
        ones = sum(1 for r in rows if r & bit)
        want = None
        if k >= 2 and bool(rows[-1] & bit) == bool(rows[-2] & bit):
            want = 0 if rows[-1] & bit else 1
        if ones == n // 2:
            want = 0 if want in (None, 0) else -1
        if k - ones == n // 2:
            want = 1 if want in (None, 1) else -1
        if want == -1:
            return -1, -1
        if want is not None:
            mask |= bit
            value |= bit * want
    return mask, value


def random_solution(n: int, rng: np.random.Generator) -> np.ndarray:
    """A random valid n×n solution (tests only): forward-checked row DFS with restarts."""
    lines = list(valid_lines(n))
    while True:
        budget = [20 * n * n]

        def extend(rows: list[int], budget: list[int] = budget) -> list[int] | None:
            if len(rows) == n:
                cols = {tuple(r >> (n - 1 - c) & 1 for r in rows) for c in range(n)}
                return rows if len(cols) == n else None
            mask, value = _forced(rows, n)
            if mask < 0:
                return None
            for i in rng.permutation(len(lines)):
                v = lines[i]
                if v & mask != value or v in rows:
                    continue
                budget[0] -= 1
                if budget[0] < 0:
                    return None
                done = extend(rows + [v])
                if done is not None:
                    return done
            return None

        rows = extend([])
        if rows is not None:
            grid = np.array([int_line(v, n) for v in rows], dtype=np.uint8)
            assert not violations(grid)
            return grid


def random_givens(n: int, rng: np.random.Generator, density: float = 0.3) -> np.ndarray:
    """A random givens mask that never gives a corner."""
    g = (rng.random((n, n)) < density).astype(np.uint8)
    g[0, 0] = g[0, -1] = g[-1, 0] = g[-1, -1] = 0
    return g


def all_grids(n: int) -> list[np.ndarray]:
    """Every valid n×n solution by plain row enumeration (n <= 6 in practice: 4140 for n = 6)."""
    lines = list(valid_lines(n))
    out: list[np.ndarray] = []

    def extend(rows: list[int]) -> None:
        if len(rows) == n:
            g = np.array([int_line(v, n) for v in rows], dtype=np.uint8)
            if not violations(g):
                out.append(g)
            return
        mask, value = _forced(rows, n)
        if mask < 0:
            return
        for v in lines:
            if v & mask == value and v not in rows:
                extend(rows + [v])

    extend([])
    return out


def tile_with_alts(solution: np.ndarray, givens: np.ndarray, seam_mask: int, pool: list[np.ndarray]):
    """A Tile whose features are computed from first principles over ``pool`` (all valid grids)."""
    from tilelib import bits
    from tilelib.tile import Tile

    alts = [g for g in pool if ((g == solution) | (givens == 0)).all() and not (g == solution).all()]
    alts.sort(key=bits.to_blob)
    return Tile.from_grids(solution, givens, seam_mask, features_of(solution, givens, alts))


def features_of(solution: np.ndarray, givens: np.ndarray, alts: list[np.ndarray]):
    """The features (FORMAT §4) of a tile with these alternatives, stored in the order given, from
    first principles (not the generator's or the audit's code); whatever the grids are, so a test can
    plant a defect in them and have every derived value agree with it."""
    import itertools

    from tilelib import bits
    from tilelib.tile import Features, pack_nibbles

    n = len(solution)
    sides = [
        sum(1 << s for s, (a, b) in enumerate(zip(bits.edges(g), bits.edges(solution), strict=True)) if a != b)
        for g in alts
    ]
    flip = np.zeros_like(solution)
    for g in alts:
        flip |= (g != solution).astype(np.uint8)
    pins = 0
    for s in sides:
        pins |= s
    depth = 0
    if sides:
        depth = min(
            k
            for k in range(1, 6)
            if k == 5 or any(all(a & sum(c) for a in sides) for c in itertools.combinations((1, 2, 4, 8), k))
        )
    return Features(
        version=1,
        m=len(alts) + 1,
        blank=1.0 - float(givens.sum()) / (n * n),
        pins=pins,
        pin_depth=depth,
        alt_sides=pack_nibbles(sides),
        flip=bits.to_blob(flip),
        alts=b"".join(bits.to_blob(g) for g in alts),
    )
