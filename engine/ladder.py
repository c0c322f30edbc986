"""The difficulty ladder of FORMAT §4: named deduction techniques, the standard solve, and ``rate``.

Techniques, cheapest first (``TECHNIQUES``), each a pure function of the
current state returning the cells it would fill as ``(r, c, v)`` triples
(or raising ``Contradiction``):

  L1 runs        two equal neighbours force the opposite value beside them
                 (``xx.`` / ``.xx``), and ``x.x`` forces the opposite between;
  L2 balance     a line holding n/2 of one value gets the other everywhere else;
  L3 uniqueness  in an incomplete line, the completions (valid lines consistent
                 with its known cells) that would duplicate a complete line of
                 the same orientation are ruled out; L3 fills the cells on which
                 the remaining completions agree but all completions did not
                 (so it fills only what uniqueness adds); ruling out every
                 completion is a contradiction;
  L4 bifurcation for the first open cell (row-major, value 0 before 1) where
                 assuming the value and running L1–L3 (those enabled) to a
                 standstill reaches a contradiction, fill the other value
                 (one cell per step).

A state is contradictory when it breaks a rule among its known cells (three
equal in a row, more than n/2 of a value in a line, two equal complete lines
of one orientation) or two fills of one step disagree.

The standard solve applies the cheapest technique that makes progress and
restarts from L1 after any progress. ``rate`` reports FORMAT §4's features.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from engine.lines import tables
from tilelib.bits import Puzzle

if TYPE_CHECKING:
    import numpy as np


class Contradiction(Exception):
    """The state cannot be completed (raised inside a solve, never out of ``rate``)."""


class _State:
    """Known cells as row ints and column ints (value, known mask), kept in sync."""

    __slots__ = ("n", "rv", "rk", "cv", "ck")

    def __init__(self, n, rv, rk, cv, ck):
        self.n, self.rv, self.rk, self.cv, self.ck = n, rv, rk, cv, ck

    @staticmethod
    def from_puzzle(p: Puzzle) -> _State:
        n = p.n
        rv, rk = p.row_masks()
        cv = [0] * n
        ck = [0] * n
        for r in range(n):
            for c in range(n):
                if p.known[r, c]:
                    ck[c] |= 1 << (n - 1 - r)
                    if p.values[r, c]:
                        cv[c] |= 1 << (n - 1 - r)
        return _State(n, rv, rk, cv, ck)

    def copy(self) -> _State:
        return _State(self.n, self.rv[:], self.rk[:], self.cv[:], self.ck[:])

    def lines(self):
        """(is_row, index, values, known) for every row then every column."""
        for r in range(self.n):
            yield True, r, self.rv[r], self.rk[r]
        for c in range(self.n):
            yield False, c, self.cv[c], self.ck[c]

    def set(self, r: int, c: int, v: int) -> None:
        n = self.n
        rb, cb = 1 << (n - 1 - c), 1 << (n - 1 - r)
        self.rk[r] |= rb
        self.ck[c] |= cb
        if v:
            self.rv[r] |= rb
            self.cv[c] |= cb

    def open_cells(self) -> int:
        full = (1 << self.n) - 1
        return sum(bin(full ^ k).count("1") for k in self.rk)

    def grid(self) -> np.ndarray:
        import numpy as np

        n = self.n
        return np.array([[(v >> (n - 1 - c)) & 1 for c in range(n)] for v in self.rv], dtype=np.uint8)


def _cell(is_row: bool, idx: int, bit: int, n: int) -> tuple[int, int]:
    """(r, c) of the cell at bit ``bit`` (LSB = 0) of line idx."""
    pos = n - 1 - bit
    return (idx, pos) if is_row else (pos, idx)


def _bits(x: int):
    while x:
        b = x & -x
        yield b.bit_length() - 1
        x ^= b


def violated(st: _State) -> bool:
    """True if the known cells already break a rule (runs, balance overflow, equal complete lines)."""
    full, half = (1 << st.n) - 1, st.n // 2
    for rows in ((st.rv, st.rk), (st.cv, st.ck)):
        seen = set()
        for v, k in zip(*rows, strict=True):
            ones, zeros = v & k, ~v & k & full
            for x in (ones, zeros):
                if x & (x >> 1) & (x >> 2) or bin(x).count("1") > half:
                    return True
            if k == full:
                if v in seen:
                    return True
                seen.add(v)
    return False


# ------------------------------------------------------------------ techniques


def runs(st: _State) -> list[tuple[int, int, int]]:
    """L1: doubles ``xx.``/``.xx`` and sandwiches ``x.x`` force the opposite value."""
    n, full = st.n, (1 << st.n) - 1
    out = []
    for is_row, i, v, k in st.lines():
        free = full & ~k
        if not free:
            continue
        for x, fill in ((v & k, 0), (~v & k & full, 1)):
            pair = x & (x >> 1)
            target = ((pair >> 1) | (pair << 2) | ((x & (x >> 2)) << 1)) & free
            for b in _bits(target):
                r, c = _cell(is_row, i, b, n)
                out.append((r, c, fill))
    return out


def balance(st: _State) -> list[tuple[int, int, int]]:
    """L2: a line holding n/2 of one value gets the other value in every open cell."""
    n, full, half = st.n, (1 << st.n) - 1, st.n // 2
    out = []
    for is_row, i, v, k in st.lines():
        free = full & ~k
        if not free:
            continue
        if bin(v & k).count("1") == half:
            fill = 0
        elif bin(~v & k & full).count("1") == half:
            fill = 1
        else:
            continue
        for b in _bits(free):
            r, c = _cell(is_row, i, b, n)
            out.append((r, c, fill))
    return out


def _agreed(dom: int, t) -> tuple[int, int]:
    """(positions-bitmask in line-int bits where every pattern agrees, their values)."""
    n = t.n
    known = vals = 0
    for i in range(n):
        m0, m1 = t.cell_mask[i]
        b = 1 << (n - 1 - i)
        if not dom & m1:
            known |= b
        elif not dom & m0:
            known |= b
            vals |= b
    return known, vals


def uniqueness(st: _State) -> list[tuple[int, int, int]]:
    """L3: rule out completions that duplicate a complete line; fill what that exclusion adds."""
    n, full = st.n, (1 << st.n) - 1
    t = tables(n)
    out = []
    for is_row, i, v, k in st.lines():
        if k == full:
            continue
        vs, ks = (st.rv, st.rk) if is_row else (st.cv, st.ck)
        dups = [s for s, sk in zip(vs, ks, strict=True) if sk == full and (s & k) == v]
        dups = [t.index[s] for s in dups if s in t.index]
        if not dups:
            continue
        dom = t.full
        for b in _bits(k):
            dom &= t.cell_mask[n - 1 - b][(v >> b) & 1]
        if not dom:
            continue
        reduced = dom
        for j in dups:
            reduced &= ~(1 << j)
        if not reduced:
            raise Contradiction
        k0, _ = _agreed(dom, t)
        k1, v1 = _agreed(reduced, t)
        for b in _bits(k1 & ~k0 & ~k):
            r, c = _cell(is_row, i, b, n)
            out.append((r, c, (v1 >> b) & 1))
    return out


def bifurcation(st: _State, enabled: frozenset = frozenset({1, 2, 3})) -> list[tuple[int, int, int]]:
    """L4: the first open cell whose assumed value leads (via enabled L1–L3) to a contradiction."""
    n = st.n
    inner = enabled & {1, 2, 3}
    for r in range(n):
        free = ((1 << n) - 1) & ~st.rk[r]
        for b in sorted(_bits(free), reverse=True):
            c = n - 1 - b
            bad = []
            for v in (0, 1):
                trial = st.copy()
                trial.set(r, c, v)
                if _solve(trial, inner, None) == "contradiction":
                    bad.append(v)
            if len(bad) == 2:
                raise Contradiction
            if bad:
                return [(r, c, 1 - bad[0])]
    return []


@dataclass(frozen=True)
class Technique:
    level: int
    name: str
    fn: Callable


TECHNIQUES: tuple[Technique, ...] = (
    Technique(1, "runs", runs),
    Technique(2, "balance", balance),
    Technique(3, "uniqueness", uniqueness),
    Technique(4, "bifurcation", bifurcation),
)


# ------------------------------------------------------------------ the solve


def _apply(st: _State, fills) -> None:
    seen: dict[tuple[int, int], int] = {}
    for r, c, v in fills:
        if seen.setdefault((r, c), v) != v:
            raise Contradiction
    for (r, c), v in seen.items():
        st.set(r, c, v)


def _solve(st: _State, enabled: frozenset, log: list | None) -> str:
    """Run the standard solve in place: 'solved', 'stuck' or 'contradiction'. ``log`` gets (level, fills)."""
    full = (1 << st.n) - 1
    try:
        while True:
            if violated(st):
                return "contradiction"
            if all(k == full for k in st.rk):
                return "solved"
            for tech in TECHNIQUES:
                if tech.level not in enabled:
                    continue
                fills = tech.fn(st, enabled) if tech.level == 4 else tech.fn(st)
                if fills:
                    _apply(st, fills)
                    if log is not None:
                        log.append((tech.level, len(fills)))
                    break
            else:
                return "stuck"
    except Contradiction:
        return "contradiction"


@dataclass(frozen=True)
class LadderResult:
    """FORMAT §4 features of a puzzle, plus the standard solve's outcome.

    ``ladder``: highest level used (0 when nothing was open; 5 when L1–L4 stall or
    the puzzle contradicts itself). ``bifurcations``: L4 steps. ``used_unique``: L3
    fired. ``needs_unique`` / ``needs_bifurcation``: the solve without L3 / L4 does
    not finish. ``solution``: the solved grid, or None. ``filled``: cells the
    standard solve filled.
    """

    ladder: int
    bifurcations: int
    used_unique: bool
    needs_unique: bool
    needs_bifurcation: bool
    solution: np.ndarray | None
    filled: int


ALL = frozenset({1, 2, 3, 4})


def forced(puzzle: Puzzle) -> list[tuple[int, int, int]]:
    """The open cells the two local rules force as the puzzle stands — L1 runs (``xx.``, ``x.x``) and
    L2 balance (a line holding n/2 of one value) — as (row, col, value), each cell once (the first
    rule's value where a broken puzzle makes them disagree). One step, no propagation: what a player
    sees at a glance (the cells env's ``hints``)."""
    st = _State.from_puzzle(puzzle)
    seen: dict[tuple[int, int], int] = {}
    for r, c, v in runs(st) + balance(st):
        seen.setdefault((r, c), v)
    return [(r, c, v) for (r, c), v in seen.items()]


def solve_with(puzzle: Puzzle, levels) -> tuple[str, np.ndarray]:
    """Run the standard solve with only the given levels enabled.

    Returns (status, grid) with status 'solved', 'stuck' or 'contradiction' and grid the
    cells known at the end (open cells 0)."""
    st = _State.from_puzzle(puzzle)
    return _solve(st, frozenset(levels), None), st.grid()


@dataclass(frozen=True)
class Rating:
    """The ladder features alone (what ``rate_rows`` returns; ``LadderResult`` has the same fields)."""

    ladder: int
    bifurcations: int
    used_unique: bool
    needs_unique: bool
    needs_bifurcation: bool


def rate_rows(n: int, vals, known, solution=None) -> Rating:
    """``rate`` on row ints (bit n-1-c = cell (r, c)) in the C kernel, without numpy: the
    generator's hot path. Same features as ``rate(Puzzle)`` of the same cells.

    ``solution``: the row ints of a valid grid that agrees with every known cell (the tile's own
    solution), or None. It changes no result, only the time: each one-cell trial then runs only
    the value the solution does not show, since the other cannot contradict (``engine/_ladder.c``).
    A grid that is not valid or disagrees with a known cell is ValueError."""
    from engine.count import ladder_rows

    ladder, bif, used_u, needs_u, needs_b, _, _ = ladder_rows(n, vals, known, solution)
    return Rating(ladder, bif, used_u, needs_u, needs_b)


def rate(puzzle: Puzzle, *, impl: str | None = None) -> LadderResult:
    """Rate a puzzle (givens plus any seam_mask sides already marked known) on the ladder.

    Runs the C twin ``engine._kernel.rate_rows`` (same techniques and scan orders, checked
    equal by the tests) unless ``impl="python"`` asks for this module's reference code.
    """
    if impl is None or impl == "c":
        from engine.count import ladder_rows, puzzle_rows, rows_to_grid

        vals, known = puzzle_rows(puzzle)
        ladder, bif, used_u, needs_u, needs_b, sol, filled = ladder_rows(puzzle.n, vals, known)
        grid = None if sol is None else rows_to_grid(sol, puzzle.n)
        return LadderResult(ladder, bif, used_u, needs_u, needs_b, grid, filled)
    if impl != "python":
        from tilelib.errors import BadInput

        raise BadInput(f"unknown ladder implementation {impl!r} (use 'c' or 'python')")
    st = _State.from_puzzle(puzzle)
    open0 = st.open_cells()
    log: list = []
    status = _solve(st, ALL, log)
    levels = [lv for lv, _ in log]
    if status == "solved":
        ladder = max(levels, default=0)
        needs_u = (
            _solve(_State.from_puzzle(puzzle), ALL - {3}, None) != "solved" if (3 in levels or 4 in levels) else False
        )
        needs_b = _solve(_State.from_puzzle(puzzle), ALL - {4}, None) != "solved" if 4 in levels else False
        solution = st.grid()
    else:
        ladder, solution = 5, None
        needs_u = needs_b = True
    return LadderResult(ladder, levels.count(4), 3 in levels, needs_u, needs_b, solution, open0 - st.open_cells())
