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

The model is ``engine.cpsat``'s, the one encoding of the rules the stitcher's
window-aware completion uses too: fixed cells are constants, a Boolean per
free cell, and distinct lines by "differ somewhere" literals (pairs whose
fixed cells already differ need no constraint). Since GENERATOR_VERSION 3
(before: a Boolean per cell pinned by an equality, "differ" literals as full
equivalences, CP-SAT's default presolve and search).
"""

from __future__ import annotations

import numpy as np

from engine.cpsat import INFEASIBLE, RulesModel
from tilelib.bits import check_n
from tilelib.errors import BadInput, TilesError
from tilelib.rng import Stream


class CompletionError(TilesError):
    """CP-SAT answered neither a solution nor a proof of infeasibility (timeout, invalid model)."""


DEFAULT_TIME_LIMIT = 60.0
LEAN = True
"""CP-SAT's presolve, LP relaxation, symmetry detection and probing off (``engine.cpsat``)."""


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

    model, rows = completion_model(n, vals, known, [_as_grid(g, n, "excluded grid") for g in exclude])
    got = model.solve(stream, time_limit, lean=LEAN)
    if got.status == INFEASIBLE:
        return None
    if not got.found:
        raise CompletionError(f"CP-SAT completion of an n={n} tile ended with status {got.name}")
    return got.grid(rows)


def completion_model(n: int, vals: np.ndarray, known: np.ndarray, exclude=()) -> tuple[RulesModel, list]:
    """``complete``'s model of checked n×n 0/1 arrays (before hints and solving) and its rows of cells."""
    model = RulesModel(vals, known)
    rows = model.window(0, 0, n)
    for g in exclude:
        model.differ(rows, g)
    return model, rows


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
