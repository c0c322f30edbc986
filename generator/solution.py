"""A random valid n×n Takuzu solution (FORMAT §1), drawn from the project's seeded stream.

Rows are placed top to bottom, each drawn uniformly from the valid lines
(``tilelib.rules.valid_lines``: balanced, no three in a row) that keep every
column finishable. Each column's state (ones, zeros, its bottom run) says
whether it can still take a 1 or a 0 and be completed to n/2 ones without
three equal in a row (``_can_finish``, memoised); this gives two masks:
``must0`` (columns that cannot take a 1 next) and ``must1``. A candidate row R
fits when ``R & must0 == 0``, ``R & must1 == must1`` (the C filter
``engine._kernel.fit_lines`` lists those, ascending) and R is not already a
row. When no candidate fits the search backtracks; distinct columns are
checked once the grid is full. Dead ends are rare but have a heavy tail, so an
attempt that places more than ``RESTART_FACTOR * n`` rows restarts from
scratch with the stream's next bytes. The output depends only on n and the
stream's bytes.
"""

from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING

from engine.count import _kernel, count_rows
from tilelib.bits import check_n, int_line
from tilelib.rng import Stream

if TYPE_CHECKING:
    import numpy as np


def random_rows(n: int, stream: Stream, budget: int | None = None) -> list[int]:
    """The row ints (leftmost cell = MSB) of a random valid solution of side n.

    For n <= ``TABLE_MAX_N`` the grid is drawn uniformly from the table of all
    valid grids (one draw); larger n use the budgeted row search below.

    Dead ends deep in the search are rare but costly (a heavy tail), so each
    attempt may place at most ``budget`` rows (default ``RESTART_FACTOR * n``)
    before starting afresh with the stream's next bytes.
    """
    check_n(n)
    if n <= TABLE_MAX_N and budget is None:
        table = all_rows(n)
        return list(table[stream.randbelow(len(table))])
    limit = RESTART_FACTOR * n if budget is None else budget
    while True:
        rows = _kernel.random_attempt(n, stream, limit)  # _attempt_py in C, draw for draw: 30-40% of an n >= 10 tile
        if rows is not None:
            return rows


RESTART_FACTOR = 3
TABLE_MAX_N = 6  # sides small enough to draw from the table of every valid grid


@cache
def all_rows(n: int) -> tuple[tuple[int, ...], ...]:
    """Every valid n×n grid as row ints, ascending (4140 for n = 6; use only for small n).

    The engine's counter lists the solutions of the empty puzzle (distinct lines), sorted: 3 ms
    for n = 6, where a depth-first walk in Python took 60 ms of every ``library generate --n 6``.
    """
    limit = ALL_ROWS_LIMIT[n]
    found, sols, _ = count_rows(n, [0] * n, [0] * n, limit + 1, keep=limit + 1)
    if found > limit:  # pragma: no cover - the table sizes are fixed facts (OEIS A253316)
        raise AssertionError(f"more than {limit} valid {n}x{n} grids")
    return tuple(sorted(tuple(r) for r in sols))


# The number of valid grids of side n (OEIS A253316), the most all_rows lists.
ALL_ROWS_LIMIT = {2: 2, 4: 72, 6: 4140}


class _OutOfBudget(Exception):
    pass


def _attempt_py(n: int, stream: Stream, limit: int) -> list[int] | None:
    """One budgeted depth-first attempt; None when it ran out of budget. Row i is drawn uniformly
    (by ``stream``) from the valid lines the columns' automaton states still allow and no earlier
    row equals; a dead end backtracks; a full grid must also have distinct columns. The reference
    that ``engine._kernel.random_attempt`` (engine/_solution.c), which ``random_rows`` runs, is
    tested against."""
    fit = _kernel.fit_lines  # the candidate filter in C: ascending, like the comprehension it replaced
    t0, t1, must0_of, must1_of, start = _column_automaton(n)
    rows: list[int] = []
    # states[i][b]: automaton state of the column at bit b (column n-1-b) after i rows.
    states = [[start] * n]
    bit_range = range(n)
    placed = 0

    def fill(i: int) -> bool:
        nonlocal placed
        if i == n:
            return _columns_distinct(rows, n)
        must0, must1 = _column_masks(states[-1], must0_of, must1_of, bit_range)
        if must0 & must1:
            return False
        cands = fit(n, must0, must1)
        left = len(cands)
        while left:
            k = stream.randbelow(left) if left > 1 else 0
            row = cands[k]
            left -= 1
            cands[k] = cands[left]
            if row in rows:
                continue
            placed += 1
            if placed > limit:
                raise _OutOfBudget
            rows.append(row)
            st = states[-1]
            states.append([t1[st[b]] if (row >> b) & 1 else t0[st[b]] for b in bit_range])
            if fill(i + 1):
                return True
            states.pop()
            rows.pop()
        return False

    try:
        found = fill(0)
    except _OutOfBudget:
        return None
    if not found:  # pragma: no cover - every even n in 6..16 has valid grids
        raise AssertionError(f"no valid {n}x{n} grid found")
    return rows


def _column_masks(st: list[int], must0_of, must1_of, bit_range) -> tuple[int, int]:
    """(must0, must1): the bits whose column, in automaton state ``st[b]``, can only take a 0 / a 1."""
    must0 = must1 = 0
    for b in bit_range:
        s = st[b]
        if must0_of[s]:
            must0 |= 1 << b
        if must1_of[s]:
            must1 |= 1 << b
    return must0, must1


def _columns_distinct(rows: list[int], n: int) -> bool:
    """Whether the n columns of a full grid (row ints) are pairwise different."""
    cols = set()
    for bit in range(n):
        c = 0
        for r in rows:
            c = (c << 1) | ((r >> bit) & 1)
        cols.add(c)
    return len(cols) == n


@cache
def _column_automaton(n: int):
    """The column states (ones, zeros, bottom value, bottom run length) reachable
    from an empty column, numbered, with transition tables ``t0``/``t1`` (a
    state's successor after a 0/1; -1 if that move cannot be finished) and the
    flags ``must0`` (a 1 is not finishable) and ``must1`` (a 0 is not)."""
    half = n // 2
    start = (0, 0, 0, 0)
    index = {start: 0}
    order = [start]
    t0: list[int] = []
    t1: list[int] = []
    i = 0
    while i < len(order):
        o, z, v, run = order[i]
        succ = []
        for val in (0, 1):
            o2, z2 = o + val, z + 1 - val
            r2 = run + 1 if (v == val and run) else 1
            if _can_finish(val, r2, half - o2, half - z2):
                nxt = (o2, z2, val, r2)
                if nxt not in index:
                    index[nxt] = len(order)
                    order.append(nxt)
                succ.append(index[nxt])
            else:
                succ.append(-1)
        t0.append(succ[0])
        t1.append(succ[1])
        i += 1
    must0 = [t == -1 for t in t1]
    must1 = [t == -1 for t in t0]
    return t0, t1, must0, must1, 0


@cache
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
    import numpy as np

    return np.array([int_line(r, n) for r in rows], dtype=np.uint8)


def random_solution(n: int, stream: Stream) -> np.ndarray:
    """A random valid n×n solution grid (uint8) drawn from ``stream``."""
    return rows_to_grid(random_rows(n, stream), n)
