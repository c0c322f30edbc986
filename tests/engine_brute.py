"""An obviously-correct, slow Takuzu enumerator for checking the engine (tests only).

Rows are drawn from the valid lines (computed here from the rules, not from
``engine.lines``) that agree with the row's known cells, top to bottom; a
partial grid is cut only when a column already breaks a rule (three equal in
a row, more than n/2 of a value) or, with ``distinct``, a row repeats; a full
grid is kept when all columns are valid (and distinct).
"""

from __future__ import annotations

from functools import cache


def line_valid(v: int, n: int) -> bool:
    cells = [(v >> (n - 1 - i)) & 1 for i in range(n)]
    if sum(cells) != n // 2:
        return False
    return all(not (cells[i] == cells[i + 1] == cells[i + 2]) for i in range(n - 2))


@cache
def brute_lines(n: int) -> tuple[int, ...]:
    return tuple(v for v in range(1 << n) if line_valid(v, n))


def _col(rows: list[int], c: int, n: int) -> list[int]:
    return [(r >> (n - 1 - c)) & 1 for r in rows]


def _col_prefix_ok(rows: list[int], n: int) -> bool:
    for c in range(n):
        col = _col(rows, c, n)
        if sum(col) > n // 2 or len(col) - sum(col) > n // 2:
            return False
        if len(col) >= 3 and col[-1] == col[-2] == col[-3]:
            return False
    return True


def brute_solutions(n: int, vals: list[int], known: list[int], distinct: bool = True) -> list[tuple[int, ...]]:
    """Every solution (row-int tuples, in lexicographic row order) consistent with the known cells."""
    cands = [[v for v in brute_lines(n) if (v ^ vals[r]) & known[r] == 0] for r in range(n)]
    out: list[tuple[int, ...]] = []

    def rec(rows: list[int]) -> None:
        if len(rows) == n:
            cols = [sum(b << (n - 1 - i) for i, b in enumerate(_col(rows, c, n))) for c in range(n)]
            if all(line_valid(x, n) for x in cols) and (not distinct or len(set(cols)) == n):
                out.append(tuple(rows))
            return
        for v in cands[len(rows)]:
            if distinct and v in rows:
                continue
            nxt = rows + [v]
            if _col_prefix_ok(nxt, n):
                rec(nxt)

    rec([])
    return out
