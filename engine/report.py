"""What `tiles solve` prints (SPEC §12): puzzle strings in, one JSON-ready dict per puzzle out.

``read_puzzles`` parses every line first (blank lines and ``#`` comments
skipped) and raises ``BadInput`` naming the first malformed line, so a bad file
prints nothing. ``solve_report`` counts to k, lists the solutions found (as
n·n strings of 0/1, in the counter's order) and rates the puzzle on the ladder.
"""

from __future__ import annotations

from typing import Iterable

from engine.count import count
from engine.ladder import rate
from tilelib.bits import Puzzle, grid_string
from tilelib.errors import BadInput


def parse_puzzle(text: str, n: int | None = None) -> Puzzle:
    """Parse one puzzle string; if n is given it must match the inferred side."""
    p = Puzzle.parse(text)
    if n is not None and p.n != n:
        raise BadInput(f"--n {n} does not match a puzzle string of side {p.n}")
    return p


def read_puzzles(lines: Iterable[str], n: int | None = None) -> list[Puzzle]:
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


def solve_report(p: Puzzle, k: int = 2) -> dict:
    """{"n", "count", "solutions", "ladder", "bifurcations", "nodes"} for one puzzle."""
    if k < 1:
        raise BadInput(f"--k must be at least 1, got {k}")
    res = count(p, k)
    lad = rate(p)
    return {
        "n": p.n,
        "count": res.count,
        "solutions": [grid_string(g) for g in res.solutions],
        "ladder": lad.ladder,
        "bifurcations": lad.bifurcations,
        "nodes": res.nodes,
    }
