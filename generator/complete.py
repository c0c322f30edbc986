"""Seam-prefilled completion (FORMAT §8): a CP-SAT model that fills a tile around fixed cells.

The stitcher records a miss as a set of boundary cells that a tile must show
(values + a known mask). ``complete`` asks CP-SAT for a valid n×n solution
(balance, no three in a row, distinct rows, distinct columns) agreeing with
every fixed cell, or a proof that none exists (``None`` → the miss is marked
``nofit``). Solver settings make the answer reproducible: one worker, a fixed
``random_seed``, and a solution hint drawn from the project's stream (so two
seeds give different completions of the same boundary). Any status other than
OPTIMAL/FEASIBLE/INFEASIBLE raises: a timeout or a bad model is never
mistaken for "no completion".

Distinct lines are encoded per pair of lines with "differ" literals
``d[c] ⇔ x[i][c] ≠ x[j][c]`` and ``OR(d)``; pairs whose fixed cells already
differ need no constraint.
"""

from __future__ import annotations

import numpy as np
from ortools.sat.python import cp_model

from tilelib.bits import check_n
from tilelib.errors import BadInput, TilesError
from tilelib.rng import Stream


class CompletionError(TilesError):
    """CP-SAT answered neither a solution nor a proof of infeasibility (timeout, invalid model)."""


DEFAULT_TIME_LIMIT = 60.0


def complete(n: int, fixed_values, fixed_known, seed: bytes | Stream,
             *, exclude=(), time_limit: float = DEFAULT_TIME_LIMIT) -> np.ndarray | None:
    """A valid n×n grid equal to ``fixed_values`` wherever ``fixed_known`` is 1, or None if none exists.

    ``seed`` (bytes, or a Stream to draw from) fixes CP-SAT's ``random_seed``
    and the solution hint. ``exclude``: grids the answer must differ from
    (None then means "no other completion"). Raises BadInput on malformed
    arrays and CompletionError when CP-SAT stops without an answer.
    """
    check_n(n)
    vals = _as_grid(fixed_values, n, "fixed_values")
    known = _as_grid(fixed_known, n, "fixed_known")
    stream = seed if isinstance(seed, Stream) else Stream(bytes(seed), "complete")

    model = cp_model.CpModel()
    x = [[model.NewBoolVar(f"x{r}_{c}") for c in range(n)] for r in range(n)]
    for r in range(n):
        for c in range(n):
            if known[r, c]:
                model.Add(x[r][c] == int(vals[r, c]))
    half = n // 2
    lines = [[x[r][c] for c in range(n)] for r in range(n)]
    cols = [[x[r][c] for r in range(n)] for c in range(n)]
    for line in lines + cols:
        model.Add(sum(line) == half)
        for j in range(n - 2):
            trio = line[j:j + 3]
            model.AddBoolOr(trio)                      # not three zeros
            model.AddBoolOr([v.Not() for v in trio])   # not three ones
    _distinct(model, lines, [[(vals[r, c], known[r, c]) for c in range(n)] for r in range(n)])
    _distinct(model, cols, [[(vals[r, c], known[r, c]) for r in range(n)] for c in range(n)])

    for g in exclude:
        g = _as_grid(g, n, "excluded grid")
        model.AddBoolOr([x[r][c].Not() if g[r, c] else x[r][c] for r in range(n) for c in range(n)])

    hint = stream.bits(n * n)
    for i in range(n * n):
        model.AddHint(x[i // n][i % n], (hint >> i) & 1)

    solver = cp_model.CpSolver()
    solver.parameters.num_workers = 1
    solver.parameters.random_seed = stream.randbelow(1 << 30)
    solver.parameters.max_time_in_seconds = time_limit
    status = solver.Solve(model)
    if status == cp_model.INFEASIBLE:
        return None
    if status not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        raise CompletionError(f"CP-SAT completion of an n={n} tile ended with status "
                              f"{solver.StatusName(status)}")
    grid = np.array([[solver.BooleanValue(x[r][c]) for c in range(n)] for r in range(n)], dtype=np.uint8)
    return grid


def _distinct(model: cp_model.CpModel, lines, fixed) -> None:
    """Every two lines differ somewhere; skipped when their fixed cells already differ."""
    n = len(lines)
    for i in range(n):
        for j in range(i + 1, n):
            if any(fixed[i][c][1] and fixed[j][c][1] and fixed[i][c][0] != fixed[j][c][0] for c in range(n)):
                continue
            diffs = []
            for c in range(n):
                a, b = lines[i][c], lines[j][c]
                d = model.NewBoolVar("")
                # d <=> a != b
                model.AddBoolOr([a, b]).OnlyEnforceIf(d)
                model.AddBoolOr([a.Not(), b.Not()]).OnlyEnforceIf(d)
                model.AddBoolOr([a.Not(), b, d])
                model.AddBoolOr([a, b.Not(), d])
                diffs.append(d)
            model.AddBoolOr(diffs)


def _as_grid(a, n: int, name: str) -> np.ndarray:
    g = np.asarray(a)
    if g.shape != (n, n) or not np.isin(g, (0, 1)).all():
        raise BadInput(f"{name} must be an {n}x{n} array of 0/1")
    return g.astype(np.uint8)


def side_cells(n: int, side_mask: int) -> np.ndarray:
    """The known-mask (n×n uint8) of the full sides in ``side_mask`` (top 1, right 2, bottom 4, left 8)."""
    m = np.zeros((n, n), dtype=np.uint8)
    if side_mask & 1:
        m[0, :] = 1
    if side_mask & 2:
        m[:, -1] = 1
    if side_mask & 4:
        m[-1, :] = 1
    if side_mask & 8:
        m[:, 0] = 1
    return m
