"""Window-aware completion: a tile for one square that leaves its unplaced neighbours completable.

Measured on cold 61×61 boards, almost every nofit came from a square whose
already-placed neighbours had been chosen without regard to it: the cells
they showed on its side formed no valid line, or no valid tile together.
``joint_complete`` asks for the square's grid and, at the same time, for
witness grids of every unplaced neighbour window, with every board cell
already known fixed: in every window balance and no-three-in-a-row on each row
and column; the square's own window also gets distinct rows and columns (the
neighbours' distinctness is left out — a relaxation, so a neighbour can still,
rarely, become nofit). Returns the square's n×n grid or None (None is *not* a
nofit proof for the square alone; the caller then completes the square by
itself with ``generator.complete``).

The problem is one ``engine.windows.Windows`` (the squares' windows first,
distinct, then the neighbours'), decided by ``engine.completion.decide``: the C
line-domain search, CP-SAT (``engine.cpsat``'s model of the same windows) only
for what the search leaves undecided. Deterministic: both draw from the
project's stream.
"""

from __future__ import annotations

import numpy as np

from engine.completion import Tally, decide
from engine.windows import Windows
from tilelib.rng import Stream

TIME_LIMIT = 10.0
JOINT_TRIES = 2  # seeded attempts per window-aware completion (a grid may not thin)


def joint_complete(
    values: np.ndarray,
    known: np.ndarray,
    square: tuple[int, int, int],
    others: list[tuple[int, int, int]],
    stream: Stream,
    time_limit: float = TIME_LIMIT,
    *,
    exclude=(),
    tally: Tally | None = None,
) -> np.ndarray | None:
    """Grid for ``square`` (x0, y0, s) consistent with the known board cells, such that every
    window in ``others`` still has a rows/columns-valid completion, and different from every grid
    in ``exclude``; None if none is found."""
    got = joint_complete_many(
        values, known, [square], others, stream, time_limit, exclude=[(0, g) for g in exclude], tally=tally
    )
    return None if got is None else got[0]


def joint_complete_many(
    values: np.ndarray,
    known: np.ndarray,
    squares: list[tuple[int, int, int]],
    others: list[tuple[int, int, int]],
    stream: Stream,
    time_limit: float = TIME_LIMIT,
    *,
    exclude=(),
    tally: Tally | None = None,
) -> list[np.ndarray] | None:
    """Grids for several squares at once (the stitcher's repair: a square and the neighbours it
    took off), each a full Takuzu grid (balance, no three in a row, distinct rows and columns),
    agreeing on shared cells and with the known board cells, with every window in ``others``
    still rows/columns-completable; None if there is none (or CP-SAT, asked about what the C
    search left open, finds none in the time limit). One square gives exactly
    ``joint_complete``'s problem. ``exclude``: (k, grid) pairs, square k's grid must differ from
    grid (the fair rule's other images)."""
    got = decide(joint_problem(values, known, squares, others, exclude), stream, time_limit, tally=tally)
    return None if got.grids is None else got.grids[: len(squares)]


def joint_problem(values: np.ndarray, known: np.ndarray, squares, others, exclude=()) -> Windows:
    """The window-aware problem: every square's window (side s + 1) with distinct lines, then every
    other window without; ``exclude`` pairs a square's index with a grid it must differ from."""
    wins = tuple((x, y, s + 1, True) for (x, y, s) in squares) + tuple((x, y, q + 1, False) for (x, y, q) in others)
    return Windows(values, known, wins, tuple((k, g) for k, g in exclude))
