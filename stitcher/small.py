"""Exact feasibility of an n = 6 boundary, from the table of every 6×6 Takuzu solution.

The forward check's line test misses joint contradictions; for the smallest
(and most numerous) tiles the whole solution set is small enough to scan:
``solutions_edges(6)`` enumerates every valid 6×6 grid once (rows are valid
lines; columns balanced, run-free and distinct; rows distinct) and keeps its
four edge ints. ``feasible(c)`` says whether some solution meets constraint
c — exactly what CP-SAT would say, in one vectorised compare.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from tilelib.constraint import Constraint
from tilelib.rules import valid_lines

EXACT_N = (6,)


@lru_cache(maxsize=2)
def solutions_edges(n: int) -> np.ndarray:
    """(count, 4) int64 edges (top, right, bottom, left) of every valid n×n grid (n = 6 only)."""
    if n not in EXACT_N:
        raise ValueError(f"no exact table for n={n}")
    lines = list(valid_lines(n))
    valid = set(lines)
    half = n // 2
    out = []

    def cols_ok(rows: list[int], full: bool) -> bool:
        k = len(rows)
        cols = []
        for c in range(n):
            bit = 1 << (n - 1 - c)
            col = [1 if r & bit else 0 for r in rows]
            ones = sum(col)
            if ones > half or k - ones > half:
                return False
            if k >= 3 and col[-1] == col[-2] == col[-3]:
                return False
            cols.append(int("".join(map(str, col)), 2))
        if full:
            return all(v in valid for v in cols) and len(set(cols)) == n
        return True

    def extend(rows: list[int]) -> None:
        if len(rows) == n:
            if cols_ok(rows, True):
                top, bottom = rows[0], rows[-1]
                left = int("".join("1" if r >> (n - 1) & 1 else "0" for r in rows), 2)
                right = int("".join("1" if r & 1 else "0" for r in rows), 2)
                out.append((top, right, bottom, left))
            return
        for ln in lines:
            if ln in rows:
                continue
            rows.append(ln)
            if cols_ok(rows, False):
                extend(rows)
            rows.pop()

    extend([])
    return np.array(out, dtype=np.int64)


def feasible(c: Constraint) -> bool:
    """Whether some valid grid of side c.n (in EXACT_N) meets the constraint."""
    E = solutions_edges(c.n)
    m = np.array(c.masks, dtype=np.int64)
    v = np.array(c.values, dtype=np.int64)
    return bool(((E & m) == v).all(axis=1).any())
