"""Valid line patterns of side n and the bitset tables the line-domain counter uses.

A *line* (row or column) of a Takuzu grid of side n is an n-bit int, first cell
= most significant bit (FORMAT §2: row bit ``n-1-c`` is cell (r, c); a column
read top→bottom has bit ``n-1-r`` for cell (r, c)). A line is *valid* when it
is balanced (n/2 ones) and has no three equal cells in a row. Patterns are
numbered by their rank in ascending int order; a *domain* is a bitset over
those ranks (bit j set = pattern j still possible).

Counts for n = 2, 4, ..., 16: 2, 6, 14, 34, 84, 208, 518, 1296.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

from tilelib.rules import valid_lines  # the one definition; engine callers import it from here too


@dataclass(frozen=True)
class LineTables:
    """Per-n tables: patterns, their index, and per-position value masks (as Python-int bitsets).

    ``cell_mask[i][v]`` is the set of patterns whose cell at position i (0 = first
    cell = MSB) equals v. ``full`` is the set of all patterns.
    """

    n: int
    patterns: tuple[int, ...]
    index: dict
    cell_mask: tuple[tuple[int, int], ...]
    full: int


@cache
def tables(n: int) -> LineTables:
    """The (cached) LineTables of side n."""
    pats = valid_lines(n)
    masks = []
    for i in range(n):
        shift = n - 1 - i
        m1 = 0
        for j, p in enumerate(pats):
            if (p >> shift) & 1:
                m1 |= 1 << j
        full = (1 << len(pats)) - 1
        masks.append((full ^ m1, m1))
    return LineTables(n, pats, {p: j for j, p in enumerate(pats)}, tuple(masks), (1 << len(pats)) - 1)
