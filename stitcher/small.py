"""Exact feasibility of an n = 6 boundary, from the table of every 6×6 Takuzu solution.

The forward check's line test misses joint contradictions; for the smallest
(and most numerous) tiles the whole solution set is small enough to scan:
``solutions_edges(6)`` holds every valid 6×6 grid once (rows and columns valid
lines, all distinct: 4,140 grids) by its four edge ints. ``feasible(c)`` says whether some solution meets
constraint c — exactly what CP-SAT would say, in one vectorised compare.
With ``distinct=False`` the same for grids whose lines need not differ (11,222
grids): the window-aware model's rule for the *neighbour* windows it keeps
completable (``joint``), so ``doomed`` can say "that model has no solution"
before it is built.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from tilelib.constraint import Constraint

EXACT_N = (6,)


@lru_cache(maxsize=4)
def solutions_edges(n: int, distinct: bool = True) -> np.ndarray:
    """(count, 4) int64 edges (top, right, bottom, left) of every valid n×n grid (n = 6 only), the
    grids in ascending order of their rows; ``distinct=False``: rows and columns may repeat.

    The grids come from the engine's exhaustive search (``engine.count_rows`` from an empty grid,
    every solution kept: 10 ms in C, where the row-by-row enumeration in Python took 0.43 s of
    every build's start); ``tests/test_small_feasible.py`` holds them equal to that enumeration."""
    if n not in EXACT_N:
        raise ValueError(f"no exact table for n={n}")
    from engine.count import count_rows

    every = 1 << 30
    _count, grids, _nodes = count_rows(n, [0] * n, [0] * n, every, keep=every, distinct=distinct)
    rows = np.array(sorted(grids), dtype=np.int64).reshape(-1, n)
    weight = 1 << np.arange(n - 1, -1, -1, dtype=np.int64)  # row r's cell is bit n-1-r of a column
    left = (((rows >> (n - 1)) & 1) * weight).sum(axis=1)
    right = ((rows & 1) * weight).sum(axis=1)
    return np.stack([rows[:, 0], right, rows[:, -1], left], axis=1)


def _packed(n: int, four) -> int:
    """Four side ints (top, right, bottom, left) of side n as one: top in the highest n bits."""
    top, right, bottom, left = (int(x) for x in four)
    return (top << (3 * n)) | (right << (2 * n)) | (bottom << n) | left


@lru_cache(maxsize=4)
def solutions_keys(n: int, distinct: bool = True) -> np.ndarray:
    """The distinct edge sets of ``solutions_edges(n, distinct)``, each grid's four edges packed in
    one int (``_packed``), ascending: a constraint's sides then test every grid in one 1-D compare
    (the per-side compare and its row ``all`` were ~12% of a night's CPU). Grids that share all
    four edges answer alike, so each set is kept once (6×6: 1,466 of 4,140; 1,978 of 11,222)."""
    E = solutions_edges(n, distinct)
    return np.unique((E[:, 0] << (3 * n)) | (E[:, 1] << (2 * n)) | (E[:, 2] << n) | E[:, 3])


@lru_cache(maxsize=4)
def by_side(n: int, distinct: bool = True) -> list[dict[int, np.ndarray]]:
    """For each side, edge value -> the packed edge sets (``solutions_keys``) with that edge."""
    K = solutions_keys(n, distinct)
    full = (1 << n) - 1
    out = []
    for s in range(4):
        edge = (K >> (n * (3 - s))) & full
        out.append({int(v): K[edge == v] for v in np.unique(edge)})
    return out


def feasible(c: Constraint, distinct: bool = True) -> bool:
    """Whether some valid grid of side c.n (in EXACT_N) meets the constraint: on every side, the
    grid's edge equals the constraint's values on its mask."""
    full = (1 << c.n) - 1
    K = None
    for s in range(4):
        if c.masks[s] == full:
            sub = by_side(c.n, distinct)[s].get(c.values[s])
            if sub is None:
                return False
            if K is None or len(sub) < len(K):
                K = sub
    if K is None:
        K = solutions_keys(c.n, distinct)
    return bool(((K & _packed(c.n, c.masks)) == _packed(c.n, c.values)).any())


def doomed(board, squares, others) -> bool:
    """True if the window-aware model over these windows (``joint.joint_complete_many``) surely
    has no solution: an n = 6 square whose boundary no grid meets, or an n = 6 neighbour window
    whose boundary no grid meets even with repeated lines (the model's rule for neighbours). Only
    border cells of a window are ever known on the board, so its constraint is all it shows."""
    for group, distinct in ((squares, True), (others, False)):
        for x, y, s in group:
            if s + 1 in EXACT_N and not feasible(board.constraint(x, y, s + 1), distinct):
                return True
    return False
