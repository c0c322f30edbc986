"""The Takuzu rules of FORMAT §1 as checks that say which rule fails where.

``violations(grid)`` lists every offence in a fixed order (balance, runs,
uniqueness; rows before columns); ``first_violation`` is what error messages
quote. ``valid_lines(n)`` lists the n-bit ints that can be a row, column or
edge of a valid tile (balanced, no three equal in a row).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np


@dataclass(frozen=True)
class Violation:
    rule: str  # "shape" | "values" | "balance" | "runs" | "unique"
    where: str  # e.g. "row 3", "column 2 at rows 4..6", "rows 1 and 5"

    def __str__(self) -> str:
        return f"{self.rule}: {self.where}"


def violations(grid: np.ndarray, *, distinct: bool = True) -> list[Violation]:
    """Every rule the grid breaks; empty when it is a valid tile solution.

    A valid grid is accepted by its lines alone (``_valid``: each row and column a valid line, all
    distinct), which the referee's verify asks of every placed tile and its alternatives; any other
    grid is listed offence by offence (``_offences``)."""
    import numpy as np

    g = np.asarray(grid)
    if g.ndim != 2 or g.shape[0] != g.shape[1] or g.shape[0] % 2:
        return [Violation("shape", f"grid of shape {g.shape} is not n×n with n even")]
    if not ((g == 0) | (g == 1)).all():
        return [Violation("values", "cells must be 0 or 1")]
    return [] if _valid(g, distinct) else _offences(g, distinct)


def _valid(g: np.ndarray, distinct: bool) -> bool:
    """Whether a 0/1 n×n grid breaks no rule: every row and column is one of ``valid_lines(n)``
    (balanced, no three equal in a row) and, if ``distinct``, no two rows or columns are equal."""
    import numpy as np

    n = g.shape[0]
    weights = np.left_shift(1, np.arange(n - 1, -1, -1, dtype=np.int64))
    cells = g.astype(np.int64)
    rows, cols = (cells @ weights).tolist(), (weights @ cells).tolist()
    lines = _line_set(n)
    if not all(v in lines for v in rows) or not all(v in lines for v in cols):
        return False
    return not distinct or (len(set(rows)) == n and len(set(cols)) == n)


@cache
def _line_set(n: int) -> frozenset[int]:
    return frozenset(valid_lines(n))


def _offences(g: np.ndarray, distinct: bool) -> list[Violation]:
    """Every offence of a 0/1 n×n grid, in ``violations``' order (the readable reference)."""
    n = g.shape[0]
    out: list[Violation] = []
    for axis, name in ((g, "row"), (g.T, "column")):
        for i, line in enumerate(axis):
            ones = int(line.sum())
            if ones != n // 2:
                out.append(Violation("balance", f"{name} {i} holds {ones} ones, not {n // 2}"))
    for axis, name, other in ((g, "row", "columns"), (g.T, "column", "rows")):
        for i, line in enumerate(axis):
            for j in range(n - 2):
                if line[j] == line[j + 1] == line[j + 2]:
                    out.append(Violation("runs", f"{name} {i} at {other} {j}..{j + 2}"))
    if distinct:
        for axis, name in ((g, "rows"), (g.T, "columns")):
            seen: dict[bytes, int] = {}
            for i, line in enumerate(axis):
                key = line.tobytes()
                if key in seen:
                    out.append(Violation("unique", f"{name} {seen[key]} and {i} are equal"))
                else:
                    seen[key] = i
    return out


def first_violation(grid: np.ndarray) -> Violation | None:
    """The first offence of ``violations`` or None."""
    v = violations(grid)
    return v[0] if v else None


@cache
def valid_lines(n: int) -> tuple[int, ...]:
    """All valid n-bit lines (balanced, no three equal in a row), ascending.

    Built by extending prefixes cell by cell (MSB first) so n up to ~24 stays cheap.
    """
    if n < 2 or n % 2:
        raise ValueError(f"line length must be even and >= 2, got {n}")
    half = n // 2
    out: list[int] = []

    def extend(prefix: int, length: int, ones: int, last: int, run: int) -> None:
        if length == n:
            out.append(prefix)
            return
        for b in (0, 1):
            nr = run + 1 if (length and b == last) else 1
            if nr > 2:
                continue
            no = ones + b
            if no > half or (length + 1 - no) > half:
                continue
            extend((prefix << 1) | b, length + 1, no, b, nr)

    extend(0, 0, 0, -1, 0)
    return tuple(out)  # DFS tries 0 before 1 from the MSB down: already ascending
