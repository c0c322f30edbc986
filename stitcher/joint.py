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
Deterministic: one worker, seed and hint from the project's stream.
"""

from __future__ import annotations

import numpy as np
from ortools.sat.python import cp_model

from stitcher.board import pow2
from stitcher.check import line_counts
from tilelib.rng import Stream

TIME_LIMIT = 10.0
JOINT_TRIES = 2   # seeded attempts per window-aware completion (a grid may not thin)


def joint_complete(values: np.ndarray, known: np.ndarray, square: tuple[int, int, int],
                   others: list[tuple[int, int, int]], stream: Stream,
                   time_limit: float = TIME_LIMIT) -> np.ndarray | None:
    """Grid for ``square`` (x0, y0, s) consistent with the known board cells, such that every
    window in ``others`` still has a rows/columns-valid completion; None if CP-SAT finds none."""
    got = joint_complete_many(values, known, [square], others, stream, time_limit)
    return None if got is None else got[0]


def joint_complete_many(values: np.ndarray, known: np.ndarray, squares: list[tuple[int, int, int]],
                        others: list[tuple[int, int, int]], stream: Stream,
                        time_limit: float = TIME_LIMIT) -> list[np.ndarray] | None:
    """Grids for several squares at once (the stitcher's repair: a square and the neighbours it
    took off), each a full Takuzu grid (balance, no three in a row, distinct rows and columns),
    agreeing on shared cells and with the known board cells, with every window in ``others``
    still rows/columns-completable; None if CP-SAT finds none in the time limit. One square gives
    exactly ``joint_complete``'s model."""
    if not _lines_completable(values, known, list(squares) + list(others)):
        return None
    model = cp_model.CpModel()
    var: dict[tuple[int, int], object] = {}

    def cell(r: int, c: int):
        v = var.get((r, c))
        if v is None:
            if known[r, c]:
                v = int(values[r, c])
            else:
                v = model.NewBoolVar("")
            var[(r, c)] = v
        return v

    def lines(x: int, y: int, m: int):
        rows = [[cell(y + i, x + j) for j in range(m)] for i in range(m)]
        cols = [[rows[i][j] for i in range(m)] for j in range(m)]
        return rows, cols

    def rules(line, m: int) -> None:
        # Known cells that break a rule never get here: ``_lines_completable`` refused the model.
        if all(isinstance(v, int) for v in line):
            return
        model.Add(sum(line) == m // 2)
        for j in range(m - 2):
            trio = line[j:j + 3]
            lits = [v for v in trio if not isinstance(v, int)]
            consts = [v for v in trio if isinstance(v, int)]
            if not lits:
                continue
            if 1 not in consts:   # not all zero
                model.AddBoolOr(lits)
            if 0 not in consts:   # not all one
                model.AddBoolOr([v.Not() for v in lits])

    own = []
    for (x0, y0, s) in squares:
        n = s + 1
        own_rows, own_cols = lines(x0, y0, n)
        for line in own_rows + own_cols:
            rules(line, n)
        _distinct(model, own_rows)
        _distinct(model, own_cols)
        own.append(own_rows)
    for (x, y, q) in others:
        rows, cols = lines(x, y, q + 1)
        for line in rows + cols:
            rules(line, q + 1)

    free = [v for v in var.values() if not isinstance(v, int)]
    hint = stream.bits(max(len(free), 1))
    for k, v in enumerate(free):
        model.AddHint(v, (hint >> k) & 1)
    solver = cp_model.CpSolver()
    solver.parameters.num_workers = 1
    solver.parameters.random_seed = stream.randbelow(1 << 30)
    solver.parameters.max_time_in_seconds = time_limit
    # These models are small SAT problems (most of the work is proving a doomed window
    # infeasible): presolve, LP relaxation, symmetry detection and probing cost more than they
    # save. Measured on 300 models captured from a warm G = 301 stitch (124 feasible): solve time
    # 7.4 s -> 1.3 s with the encoding of ``_distinct`` below, same verdicts.
    solver.parameters.cp_model_presolve = False
    solver.parameters.linearization_level = 0
    solver.parameters.symmetry_level = 0
    solver.parameters.cp_model_probing_level = 0
    status = solver.Solve(model)
    if status not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        return None
    out = []
    for own_rows in own:
        n = len(own_rows)
        g = np.zeros((n, n), dtype=np.uint8)
        for i in range(n):
            for j in range(n):
                v = own_rows[i][j]
                g[i, j] = v if isinstance(v, int) else int(solver.BooleanValue(v))
        out.append(g)
    return out


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


def _distinct(model: cp_model.CpModel, lines) -> None:
    """Every two lines of the window differ somewhere (pairs already differing in fixed cells skip).

    One literal per cell pair that can differ, and one clause "some literal holds": against a
    fixed cell the literal is the free cell itself (or its negation); between two free cells it is
    a new d with d -> (u != v) (two clauses; the converse is not needed for "differ somewhere")."""
    m = len(lines)
    for a in range(m):
        for b in range(a + 1, m):
            la, lb = lines[a], lines[b]
            if any(isinstance(u, int) and isinstance(v, int) and u != v for u, v in zip(la, lb)):
                continue
            diffs = []
            for u, v in zip(la, lb):
                if isinstance(u, int) and isinstance(v, int):
                    continue
                if isinstance(u, int) or isinstance(v, int):
                    const, lit = (u, v) if isinstance(u, int) else (v, u)
                    diffs.append(lit.Not() if const else lit)
                    continue
                d = model.NewBoolVar("")
                model.AddBoolOr([u, v]).OnlyEnforceIf(d)
                model.AddBoolOr([u.Not(), v.Not()]).OnlyEnforceIf(d)
                diffs.append(d)
            model.AddBoolOr(diffs)
