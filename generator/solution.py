"""A random valid n×n Takuzu solution (SPEC §1), drawn from the project's seeded stream.

Rows are placed top to bottom, each drawn uniformly from the valid lines
(``tilelib.rules.valid_lines``: balanced, no three in a row) that keep every
column finishable. Each column's state (ones, zeros, its bottom run) says
whether it can still take a 1 or a 0 and be completed to n/2 ones without
three equal in a row (``_can_finish``, memoised); this gives two masks:
``must0`` (columns that cannot take a 1 next) and ``must1``. A candidate row R
fits when ``R & must0 == 0``, ``R & must1 == must1`` and R is not already a
row. When no candidate fits the search backtracks; distinct columns are
checked once the grid is full. Dead ends are rare but have a heavy tail, so an
attempt that places more than ``RESTART_FACTOR * n`` rows restarts from
scratch with the stream's next bytes. The output depends only on n and the
stream's bytes.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from tilelib.bits import check_n, int_line
from tilelib.rng import Stream
from tilelib.rules import valid_lines


def random_rows(n: int, stream: Stream, budget: int | None = None) -> list[int]:
    """The row ints (leftmost cell = MSB) of a random valid solution of side n.

    Dead ends deep in the search are rare but costly (a heavy tail), so each
    attempt may place at most ``budget`` rows (default ``RESTART_FACTOR * n``)
    before starting afresh with the stream's next bytes.
    """
    check_n(n)
    limit = int(RESTART_FACTOR * n) if budget is None else budget
    while True:
        rows = _attempt(n, stream, limit)
        if rows is not None:
            return rows


RESTART_FACTOR = 3


class _OutOfBudget(Exception):
    pass


def _attempt(n: int, stream: Stream, limit: int) -> list[int] | None:
    """One budgeted depth-first attempt; None when it ran out of budget."""
    lines = _line_array(n)
    half = n // 2
    rows: list[int] = []
    # Per column (indexed by bit position; bit b = column n-1-b): ones, zeros,
    # value of the run at its bottom and that run's length.
    ones = [0] * n
    zeros = [0] * n
    last = [0] * n
    run = [0] * n

    def masks() -> tuple[int, int]:
        must0 = must1 = 0
        for bit in range(n):
            o, z, v, L = ones[bit], zeros[bit], last[bit], run[bit]
            if not (o < half and _can_finish(1, L + 1 if v == 1 else 1, half - o - 1, half - z)):
                must0 |= 1 << bit
            if not (z < half and _can_finish(0, L + 1 if v == 0 else 1, half - o, half - z - 1)):
                must1 |= 1 << bit
        return must0, must1

    saved: list[tuple[list[int], list[int]]] = []

    def place(row: int) -> None:
        saved.append((last[:], run[:]))
        for bit in range(n):
            v = (row >> bit) & 1
            if v:
                ones[bit] += 1
            else:
                zeros[bit] += 1
            if last[bit] == v and run[bit]:
                run[bit] += 1
            else:
                last[bit], run[bit] = v, 1

    def unplace(row: int) -> None:
        lst, rn = saved.pop()
        last[:], run[:] = lst, rn
        for bit in range(n):
            if (row >> bit) & 1:
                ones[bit] -= 1
            else:
                zeros[bit] -= 1

    def columns_distinct() -> bool:
        cols = set()
        for bit in range(n):
            c = 0
            for r in rows:
                c = (c << 1) | ((r >> bit) & 1)
            cols.add(c)
        return len(cols) == n

    placed = [0]

    def fill(i: int) -> bool:
        if i == n:
            return columns_distinct()
        must0, must1 = masks()
        if must0 & must1:
            return False
        cands = lines[((lines & must0) == 0) & ((lines & must1) == must1)].tolist()
        while cands:
            k = stream.randbelow(len(cands)) if len(cands) > 1 else 0
            row = cands[k]
            cands[k] = cands[-1]
            cands.pop()
            if row in rows:
                continue
            placed[0] += 1
            if placed[0] > limit:
                raise _OutOfBudget
            rows.append(row)
            place(row)
            if fill(i + 1):
                return True
            unplace(row)
            rows.pop()
        return False

    try:
        found = fill(0)
    except _OutOfBudget:
        return None
    if not found:  # pragma: no cover - every even n in 6..16 has valid grids
        raise AssertionError(f"no valid {n}x{n} grid found")
    return rows


@lru_cache(maxsize=None)
def _line_array(n: int) -> np.ndarray:
    """``valid_lines(n)`` as an int64 array, for vectorised filtering."""
    return np.array(valid_lines(n), dtype=np.int64)


@lru_cache(maxsize=None)
def _can_finish(v: int, run: int, need1: int, need0: int) -> bool:
    """Can a column whose bottom run is ``run`` cells of value ``v`` be finished
    with exactly need1 more ones and need0 more zeros, never three equal in a row?"""
    if need1 < 0 or need0 < 0 or run > 2:
        return False
    if need1 == 0 and need0 == 0:
        return True
    if need1 and not (v == 1 and run >= 2) and _can_finish(1, run + 1 if v == 1 else 1, need1 - 1, need0):
        return True
    return bool(need0) and not (v == 0 and run >= 2) and _can_finish(0, run + 1 if v == 0 else 1, need1, need0 - 1)


def rows_to_grid(rows: list[int], n: int) -> np.ndarray:
    """An n×n uint8 grid from row ints (leftmost cell = MSB)."""
    return np.array([int_line(r, n) for r in rows], dtype=np.uint8)


def random_solution(n: int, stream: Stream) -> np.ndarray:
    """A random valid n×n solution grid (uint8) drawn from ``stream``."""
    return rows_to_grid(random_rows(n, stream), n)
