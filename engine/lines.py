"""Valid line patterns of side n and the bitset tables the line-domain counter uses.

A *line* (row or column) of a Takuzu grid of side n is an n-bit int, first cell
= most significant bit (SPEC §2: row bit ``n-1-c`` is cell (r, c); a column
read top→bottom has bit ``n-1-r`` for cell (r, c)). A line is *valid* when it
is balanced (n/2 ones) and has no three equal cells in a row. Patterns are
numbered by their rank in ascending int order; a *domain* is a bitset over
those ranks (bit j set = pattern j still possible).

Counts for n = 2, 4, ..., 16: 2, 6, 14, 34, 84, 208, 518, 1296.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache


def _runs_ok(v: int, n: int) -> bool:
    inv = v ^ ((1 << n) - 1)
    return not (v & (v >> 1) & (v >> 2)) and not (inv & (inv >> 1) & (inv >> 2))


@lru_cache(maxsize=None)
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


@lru_cache(maxsize=None)
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
