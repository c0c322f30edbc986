"""Thinning (FORMAT §4, §8): remove givens in seeded random order while the tile stays acceptable.

A givens set G is *acceptable* when
  (a) the number m of solutions consistent with G is at most ``m_max``, and
  (b) every alternative (solution ≠ the tile's) differs from the solution on
      at least one ``seam_mask`` side (its edge int differs there).
With ``seam_mask = 0``, (b) allows no alternative at all, so m = 1.

Thinning starts from every cell given except the four corners (which the
generator never gives; usually the rest of the grid forces them, but some
solutions admit a corner swap, and then the start may already be
unacceptable) and
visits the other cells in a random order drawn from the stream; a cell is
removed when G without it is still acceptable. That is the whole definition.

Both conditions are monotone: removing givens only adds solutions, so if
G \\ S is acceptable so is G \\ S' for every S' ⊆ S. Hence a run of
successes can be found by *group testing*: remove the next b cells of the
order at once (b doubling); if acceptable, all b go — exactly what b
one-by-one tests would have done. The group phase ends at the first failing
chunk, or when the puzzle would pass ``GROUP_MAX_BLANK`` blank cells (sparse
counts have a heavy tail). From there each cell is tested alone with its
value *flipped* (``_single_phase``): the solutions of G − {c} are those of G
plus those with c flipped, so one count from a nearly full grid decides, and
only the room left under m_max is counted. The output is identical to the
one-cell-at-a-time definition (``method="plain"``; the tests check this).
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from functools import cache

from engine import count_rows
from engine.count import KERNEL_BUILT, c_kernel
from tilelib.bits import check_n
from tilelib.rng import Stream


@dataclass(frozen=True)
class ThinResult:
    """Row ints of the final givens mask, the solutions consistent with them, and work done."""

    givens: list[int]  # known-mask rows (bit n-1-c = cell (r, c))
    solutions: list[tuple]  # every solution consistent with the givens, as row-int tuples
    counts: int  # engine counts made
    nodes: int  # engine nodes visited in total


def corner_free_mask(n: int) -> list[int]:
    """Known-mask rows with every cell given except the four corners."""
    full = (1 << n) - 1
    edge = full & ~((1 << (n - 1)) | 1)
    return [edge] + [full] * (n - 2) + [edge]


def removal_order(n: int, stream: Stream) -> list[int]:
    """The non-corner cells (r*n + c), in a uniformly random order from the stream.

    Each cell gets a 32-bit key from one ``stream.bytes`` call and cells are
    sorted by (key, index): one hash per 8 cells instead of one draw per swap.
    """
    cells = _non_corners(n)
    keys = stream.bytes(4 * len(cells))
    if KERNEL_BUILT:  # the same sort in C: a third of a 6x6 tile's thinning was this line in Python
        return c_kernel().removal_order(n, keys)
    return removal_order_py(cells, keys)


def removal_order_py(cells: tuple[int, ...], keys: bytes) -> list[int]:
    """``cells`` sorted by (key, cell), each keyed by the next 4 bytes of ``keys`` (big-endian): the
    reference the C sort (``engine._kernel.removal_order``) is tested against."""
    ints = struct.unpack(f">{len(cells)}I", keys)
    return [c for _, c in sorted(zip(ints, cells, strict=True))]


@cache
def _non_corners(n: int) -> tuple[int, ...]:
    corners = {0, n - 1, n * (n - 1), n * n - 1}
    return tuple(i for i in range(n * n) if i not in corners)


def side_rows(n: int, side_mask: int) -> list[int]:
    """Known-mask rows covering the full sides in ``side_mask`` (top 1, right 2, bottom 4, left 8)."""
    full = (1 << n) - 1
    rows = [0] * n
    for r in range(n):
        if side_mask & 8:
            rows[r] |= 1 << (n - 1)
        if side_mask & 2:
            rows[r] |= 1
    if side_mask & 1:
        rows[0] = full
    if side_mask & 4:
        rows[n - 1] = full
    return rows


def sides_differ(n: int, a, b) -> int:
    """Side mask of the edges on which row-int grids a and b differ."""
    mask = 0
    if a[0] != b[0]:
        mask |= 1
    if a[n - 1] != b[n - 1]:
        mask |= 4
    hi = 1 << (n - 1)
    for x, y in zip(a, b, strict=True):
        d = x ^ y
        if d & 1:
            mask |= 2
        if d & hi:
            mask |= 8
        if mask & 10 == 10:
            break
    return mask


class _Checker:
    """Tests acceptability of givens masks against one solution; counts its own work."""

    def __init__(self, n: int, sol: list[int], m_max: int, seam_mask: int, max_nodes: int | None = None) -> None:
        self.n, self.sol, self.seam = n, tuple(sol), seam_mask
        self.m_max = m_max if seam_mask else 1
        self.max_nodes = max_nodes
        self.counts = 0
        self.nodes = 0

    def _count(self, vals, known, k):
        cnt, sols, nodes = count_rows(self.n, vals, known, k, max_nodes=self.max_nodes)
        self.counts += 1
        self.nodes += nodes
        return cnt, [tuple(s) for s in sols]

    def _pinned(self, s: tuple) -> bool:
        return s == self.sol or bool(sides_differ(self.n, s, self.sol) & self.seam)

    def check(self, known: list[int]) -> list[tuple] | None:
        """Every solution consistent with ``known`` when acceptable, else None (one count, k = m_max+1)."""
        cnt, sols = self._count([s & k for s, k in zip(self.sol, known, strict=True)], known, self.m_max + 1)
        if cnt < 0 or cnt > self.m_max or not all(self._pinned(s) for s in sols):
            return None
        return sols


def _without(known: list[int], n: int, cells) -> list[int]:
    out = known[:]
    for i in cells:
        out[i // n] &= ~(1 << (n - 1 - i % n))
    return out


def thin(
    n: int,
    solution_rows: list[int],
    stream: Stream,
    *,
    m_max: int = 1,
    seam_mask: int = 0,
    start: list[int] | None = None,
    method: str = "fast",
    max_nodes: int | None = None,
    impl: str | None = None,
) -> ThinResult | None:
    """Thin the givens of a solution (row ints) in the stream's random order; see the module doc.

    ``start`` is the initial givens mask (default: all cells but the corners).
    Returns None when the start itself is not acceptable — e.g. the four
    corners can swap (top-left↔top-right with bottom-left↔bottom-right) and
    seam_mask = 0 allows no alternative: the caller draws another solution.

    ``method="plain"`` is the definition (one full count per cell);
    ``"fast"`` (default) gives the identical result with group tests while
    removals keep succeeding and flipped-cell counts (``_single_phase``) after.
    The fast loop runs in C (``engine._kernel.thin_rows``, same counts in the
    same order) unless ``impl="python"``.

    ``max_nodes`` caps every count of the loop: a test that passes the cap
    counts as not acceptable, so the cell stays given (the output is then
    minimal except for such cells, and still deterministic). None: no cap,
    the definition above exactly.
    """
    _check_thin_args(n, m_max, method, impl)
    known = list(corner_free_mask(n) if start is None else start)
    if method == "fast" and impl != "python" and KERNEL_BUILT:
        return _thin_in_c(n, solution_rows, known, removal_order(n, stream), m_max, seam_mask, max_nodes)
    chk = _Checker(n, solution_rows, m_max, seam_mask, max_nodes)
    sols = chk.check(known)
    if sols is None:
        return None
    order = [i for i in removal_order(n, stream) if (known[i // n] >> (n - 1 - i % n)) & 1]
    if method == "plain":
        known, sols = _plain_phase(n, chk, known, sols, order)
        return ThinResult(known, sols, chk.counts, chk.nodes)
    known, sols, p = _group_phase(n, chk, known, sols, order)
    known, sols, counts, nodes = _single_phase(n, chk, known, sols, order[p:])
    return ThinResult(known, sols, chk.counts + counts, chk.nodes + nodes)


def _check_thin_args(n: int, m_max: int, method: str, impl: str | None) -> None:
    """ValueError for a side, m_max, method or implementation ``thin`` does not know."""
    check_n(n)
    if m_max < 1:
        raise ValueError("m_max must be at least 1")
    if method not in ("plain", "fast"):
        raise ValueError(f"unknown thinning method {method!r}")
    if impl not in (None, "c", "python"):
        raise ValueError(f"unknown thinning implementation {impl!r}")


def _thin_in_c(
    n: int,
    solution_rows: list[int],
    known: list[int],
    order: list[int],
    m_max: int,
    seam_mask: int,
    max_nodes: int | None,
) -> ThinResult | None:
    """The fast method whole in ``engine._kernel.thin_rows``: the same group and single phases, the
    same counts in the same order, from the same first group size and ``_group_room``."""
    given = _given(known)
    corners = (known[0] & _ENDS[n]).bit_count() + (known[-1] & _ENDS[n]).bit_count()
    b = max(2, (given - corners) // GROUP_START_DIVISOR)  # the order's cells that are given
    out = c_kernel().thin_rows(
        n,
        list(solution_rows),
        known,
        order,
        m_max,
        seam_mask,
        b,
        _group_room(n, given),
        -1 if max_nodes is None else max_nodes,
    )
    if out is None:
        return None
    giv, sols, counts, nodes = out
    return ThinResult(giv, sols, counts, nodes)


def _given(known: list[int]) -> int:
    """How many cells the known-mask rows give."""
    return sum(map(int.bit_count, known))


def _group_room(n: int, given: int) -> int:
    """How many more cells group tests may blank, ``given`` cells being given: up to
    GROUP_MAX_BLANK of the n×n grid."""
    return int(GROUP_MAX_BLANK * n * n) - (n * n - given)


def _plain_phase(n: int, chk: _Checker, known: list[int], sols, order: list[int]):
    """The definition: try each cell of ``order`` alone, keep the removal when still acceptable."""
    for i in order:
        trial = _without(known, n, [i])
        got = chk.check(trial)
        if got is not None:
            known, sols = trial, got
    return known, sols


def _group_phase(n: int, chk: _Checker, known: list[int], sols, order: list[int]):
    """Remove doubling chunks of ``order`` while they all succeed; returns (known, sols, p), p the
    cells of ``order`` done. A failed chunk is then walked cell by cell (``_single_phase``), and so
    is everything after it. Group tests stop at GROUP_MAX_BLANK: counting sparser puzzles has a
    heavy tail (a k=2 count of a 16×16 puzzle with 86% blanks once took 20M nodes)."""
    p, b, room = 0, max(2, len(order) // GROUP_START_DIVISOR), _group_room(n, _given(known))
    while p < len(order):
        b = min(b, room - p)
        if b < 2:
            break
        chunk = order[p : p + b]
        trial = _without(known, n, chunk)
        got = chk.check(trial)
        if got is None:
            break
        known, sols = trial, got
        p += len(chunk)
        b *= 2
    return known, sols, p


def _single_phase(n: int, chk: _Checker, known: list[int], sols: list[tuple], cells: list[int]):
    """Test each cell alone with its value flipped (see the module doc): the generator's hot loop.

    Returns (known, sols, counts, nodes); ``known`` is a new list.
    """
    known = known[:]
    sol, seam, m_max = chk.sol, chk.seam, chk.m_max
    vals = [s & k for s, k in zip(sol, known, strict=True)]
    counts = nodes = 0
    for i in cells:
        r = i // n
        bit = 1 << (n - 1 - i % n)
        vals[r] ^= bit  # the cell's other value, still "known"
        room = m_max - len(sols)
        if room <= 0:
            cnt, new, nd = count_rows(n, vals, known, 1, keep=0, max_nodes=chk.max_nodes)
        else:
            cnt, new, nd = count_rows(n, vals, known, room + 1, max_nodes=chk.max_nodes)
        vals[r] ^= bit
        counts += 1
        nodes += nd
        if cnt < 0 or cnt > max(room, 0):
            continue
        if cnt:
            new = [tuple(x) for x in new]
            if not all(sides_differ(n, x, sol) & seam for x in new):
                continue
            sols = sols + new
        known[r] &= ~bit
        vals[r] &= ~bit
    return known, sols, counts, nodes


GROUP_START_DIVISOR = 8
_ENDS = {n: (1 << (n - 1)) | 1 for n in range(2, 33, 2)}  # a row's first and last cell
GROUP_MAX_BLANK = 0.5
