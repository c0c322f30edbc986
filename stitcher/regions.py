"""Two halves of a big board, the same board whatever runs them: the partition (``split``).

An antichain of squares, made coarse: squares whose cells do not touch
can be stitched independently. A pitch column ``c`` near the middle splits the
squares of a packing into

* the **left** half (every cell left of column c), the **right** half (every
  cell right of it) — no left square shares a cell with a right square — and
* the **strip**: the squares that cross column c.

Each half is stitched (lookups, drain, repair) by the same code as a whole
board, in a forked process that sees the board, the index and the library as
they were when the stitch began plus its own placements and tiles: never the
other half's. Its library writes go to a ``journal.LogJournal``. A square a half
would have to split (fallback) is left for the strip pass, which sees
everything. The parent then replays the left half's results and then the right
half's (tiles into the library and the index, ledger rows, placements), and
stitches the strip and the left-over squares in placement order, one process
(``stitcher.halves`` runs all this; this module is the partition alone).

Under the fair rule (``stitcher.fresh``) half r sees only the library solutions of its parity
and, at graft, a placement whose solution the board already holds (both halves made the same
grid) is not taken: the square is left over too (``clashed``).

So the board depends on the seed, the library and this rule, and not on how many
processes ran the halves (``workers``): 1 runs them one after the other, 2 at
once. Each half draws from its own stream (``stitch/…/region/<r>``), the strip
from ``…/strip``; boards smaller than ``MIN_G`` are stitched whole, as before.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

MIN_G = 200  # smaller boards: one pass (the strip would be a large share of the work)
REGIONS = ("left", "right")


@dataclass(frozen=True)
class Split:
    """Square ids per half (in placement order) and the strip's, and the column that split them."""

    column: int
    halves: tuple[list[int], list[int]]
    strip: list[int]


def split(squares, seed: int, P: int, order: list[int]) -> Split:
    """The halves and the strip of a packing (see the module doc); the seed is never on the strip."""
    c = P // 2
    x, _y, s = squares[seed]
    if x <= c < x + s:
        c = x - 1 if x - 1 >= P // 4 else x + s
    left: list[int] = []
    right: list[int] = []
    strip: list[int] = []
    for i in order:
        xi, _yi, si = squares[i]
        (left if xi + si <= c else right if xi > c else strip).append(i)
    return Split(c, (left, right), strip)


def default_workers() -> int:
    """Processes for the halves: two where the machine has two cores (more would idle)."""
    return max(1, min(len(REGIONS), os.cpu_count() or 1))
