"""Exact feasibility of an n = 6 boundary, from the table of every 6×6 Takuzu solution.

The forward check's line test misses joint contradictions; for the smallest
(and most numerous) tiles the whole solution set is small enough to scan:
``solutions_edges(6)`` enumerates every valid 6×6 grid once (rows are valid
lines; columns balanced, run-free and distinct; rows distinct: 4,140 grids) and
keeps its four edge ints. ``feasible(c)`` says whether some solution meets
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
from tilelib.rules import valid_lines

EXACT_N = (6,)


@lru_cache(maxsize=4)
def solutions_edges(n: int, distinct: bool = True) -> np.ndarray:
    """(count, 4) int64 edges (top, right, bottom, left) of every valid n×n grid (n = 6 only);
    ``distinct=False``: rows and columns may repeat."""
    if n not in EXACT_N:
        raise ValueError(f"no exact table for n={n}")
    lines = list(valid_lines(n))
    valid = set(lines)
    half, full = n // 2, (1 << n) - 1
    bits = [1 << (n - 1 - c) for c in range(n)]
    out = []

    def extend(rows: list[int], ones: tuple) -> None:
        k = len(rows)
        if k == n:
            cols = [sum(1 << (n - 1 - r) for r in range(n) if rows[r] & b) for b in bits]
            if all(v in valid for v in cols) and (not distinct or len(set(cols)) == n):
                out.append((rows[0], cols[-1], rows[-1], cols[0]))
            return
        for ln in lines:
            if distinct and ln in rows:
                continue
            if k >= 2:
                a, b2 = rows[-1], rows[-2]
                if (a & b2 & ln) or (~a & ~b2 & ~ln & full):
                    continue  # three equal cells down a column
            new = tuple(o + (1 if ln & b else 0) for o, b in zip(ones, bits, strict=True))
            if max(new) > half or k + 1 - min(new) > half:
                continue  # a column would hold too many ones or zeros
            rows.append(ln)
            extend(rows, new)
            rows.pop()

    extend([], (0,) * n)
    return np.array(out, dtype=np.int64)


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
