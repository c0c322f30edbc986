"""What `tiles solve` prints (FORMAT §12): puzzle strings in, one JSON-ready dict per puzzle out.

``read_puzzles`` parses every line first (blank lines and ``#`` comments
skipped) and raises ``BadInput`` naming the first malformed line, so a bad file
prints nothing. ``solve_report`` counts to k, lists the solutions found (as
n·n strings of 0/1, in the counter's order) and rates the puzzle on the ladder.

Everything here works on row ints and calls the C kernel directly, without
numpy: `tiles solve` on one puzzle is mostly interpreter start-up, and importing
numpy alone took longer than the whole command may (BENCHMARKS.md, start-up).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from engine.count import count_rows, ladder_rows
from tilelib.bits import puzzle_text
from tilelib.errors import BadInput


@dataclass(frozen=True)
class RowPuzzle:
    """A parsed puzzle string: side n and (value rows, known rows) as the engine takes them
    (bit n-1-c = cell (r, c)); the same cells ``tilelib.bits.Puzzle.parse`` reads."""

    n: int
    vals: tuple[int, ...]
    known: tuple[int, ...]

    def row_masks(self) -> tuple[list[int], list[int]]:
        return list(self.vals), list(self.known)


def parse_puzzle(text: str, n: int | None = None) -> RowPuzzle:
    """Parse one puzzle string (``tilelib.bits.Puzzle.parse``'s rules and messages); if n is
    given it must match the inferred side."""
    s, side = puzzle_text(text)
    if n is not None and side != n:
        raise BadInput(f"--n {n} does not match a puzzle string of side {side}")
    rows = [s[i : i + side] for i in range(0, len(s), side)]
    vals = tuple(int(r.replace(".", "0"), 2) for r in rows)
    known = tuple(int(r.replace("0", "1").replace(".", "0"), 2) for r in rows)
    return RowPuzzle(side, vals, known)


def read_puzzles(lines: Iterable[str], n: int | None = None) -> list[RowPuzzle]:
    """Parse a puzzle file's lines; BadInput names the 1-based line number of the first bad one."""
    out = []
    for i, raw in enumerate(lines, start=1):
        s = raw.strip()
        if not s or s.startswith("#"):
            continue
        try:
            out.append(parse_puzzle(s, n))
        except BadInput as e:
            raise BadInput(f"line {i}: {e}") from None
    return out


def solution_text(rows, n: int) -> str:
    """A solution as the n·n string of ``0``/``1`` a puzzle string uses (rows as the engine returns them,
    bit n-1-c = cell (r, c))."""
    return "".join(format(r, f"0{n}b") for r in rows)


def solve_report(p, k: int = 2) -> dict:
    """{"n", "count", "solutions", "ladder", "bifurcations", "nodes"} for one puzzle
    (a ``RowPuzzle`` or a ``tilelib.bits.Puzzle``: anything with ``n`` and ``row_masks()``)."""
    if k < 1:
        raise BadInput(f"--k must be at least 1, got {k}")
    n = p.n
    vals, known = p.row_masks()
    c, sols, nodes = count_rows(n, vals, known, k)
    ladder, bif = ladder_rows(n, vals, known)[:2]
    return {
        "n": n,
        "count": c,
        "solutions": [solution_text(sol, n) for sol in sols],
        "ladder": ladder,
        "bifurcations": bif,
        "nodes": nodes,
    }
