"""Window-aware completion: a tile for one square that leaves its unplaced neighbours completable.

Measured on cold 61×61 boards, almost every nofit came from a square whose
already-placed neighbours had been chosen without regard to it: the cells
they showed on its side formed no valid line, or no valid tile together.
``joint_complete`` asks CP-SAT for the square's grid and, at the same time,
for witness grids of every unplaced neighbour window, with every board cell
already known fixed: one Boolean per board cell of the union of windows, and
in every window balance and no-three-in-a-row on each row and column; the
square's own window also gets distinct rows and columns (the neighbours'
distinctness is left out to keep the model small — a relaxation, so a
neighbour can still, rarely, become nofit). Returns the square's n×n grid or
None (None is *not* a nofit proof for the square alone; the caller then
completes the square by itself with ``generator.complete``).
Deterministic: one worker, seed and hint from the project's stream. The model
is ``engine.cpsat``'s (the one encoding of the rules, shared with
``generator.complete``), field for field the one this module built itself
before that builder existed, so its completions did not change.
"""

from __future__ import annotations

import numpy as np

from engine.cpsat import RulesModel
from stitcher.board import pow2
from stitcher.check import line_counts
from tilelib.rng import Stream

TIME_LIMIT = 10.0
JOINT_TRIES = 2   # seeded attempts per window-aware completion (a grid may not thin)


def joint_complete(values: np.ndarray, known: np.ndarray, square: tuple[int, int, int],
                   others: list[tuple[int, int, int]], stream: Stream,
                   time_limit: float = TIME_LIMIT, *, exclude=()) -> np.ndarray | None:
    """Grid for ``square`` (x0, y0, s) consistent with the known board cells, such that every
    window in ``others`` still has a rows/columns-valid completion, and different from every grid
    in ``exclude``; None if CP-SAT finds none."""
    got = joint_complete_many(values, known, [square], others, stream, time_limit,
                              exclude=[(0, g) for g in exclude])
    return None if got is None else got[0]


def joint_complete_many(values: np.ndarray, known: np.ndarray, squares: list[tuple[int, int, int]],
                        others: list[tuple[int, int, int]], stream: Stream,
                        time_limit: float = TIME_LIMIT, *, exclude=()) -> list[np.ndarray] | None:
    """Grids for several squares at once (the stitcher's repair: a square and the neighbours it
    took off), each a full Takuzu grid (balance, no three in a row, distinct rows and columns),
    agreeing on shared cells and with the known board cells, with every window in ``others``
    still rows/columns-completable; None if CP-SAT finds none in the time limit. One square gives
    exactly ``joint_complete``'s model. ``exclude``: (k, grid) pairs, square k's grid must differ
    from grid (the fair rule's other images; none adds nothing to the model)."""
    if not _lines_completable(values, known, list(squares) + list(others)):
        return None
    model, own = joint_model(values, known, squares, others)
    for k, g in exclude:
        model.differ(own[k], g)
    # These models are small SAT problems (most of the work is proving a doomed window
    # infeasible): presolve, LP relaxation, symmetry detection and probing cost more than they
    # save. Measured on 300 models captured from a warm G = 301 stitch (124 feasible): solve time
    # 7.4 s -> 1.3 s with the lean distinctness encoding of ``engine.cpsat``, same verdicts.
    got = model.solve(stream, time_limit, lean=True)
    if not got.found:
        return None
    return [got.grid(rows) for rows in own]


def joint_model(values: np.ndarray, known: np.ndarray, squares, others) -> tuple[RulesModel, list]:
    """The window-aware model (before hints and solving) and each square's rows of cells: every
    square's window with distinct lines, then every other window without."""
    model = RulesModel(values, known)
    own = [model.window(x0, y0, s + 1) for (x0, y0, s) in squares]
    for (x, y, q) in others:
        model.window(x, y, q + 1, distinct=False)
    return model, own


def _lines_completable(values: np.ndarray, known: np.ndarray, windows) -> bool:
    """False if some row or column of some window has known cells no valid line matches.

    Every such line carries balance and no-three-in-a-row in the model, so CP-SAT would answer
    "infeasible" too: this returns the same None without building the model. Measured on 300
    models captured from a warm stitch: 106 of the 176 infeasible ones end here (~0.5 ms each
    instead of ~12 ms)."""
    for (x, y, s) in windows:
        n = s + 1
        w = pow2(n)
        K = known[y:y + n, x:x + n].astype(np.int64)
        V = values[y:y + n, x:x + n].astype(np.int64) & K
        for masks, vals in (((K * w).sum(1), (V * w).sum(1)), ((K.T * w).sum(1), (V.T * w).sum(1))):
            for m, v in zip(masks.tolist(), vals.tolist()):
                if m and v not in line_counts(n, m):
                    return False
    return True
