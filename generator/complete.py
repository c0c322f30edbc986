"""Seam-prefilled completion (FORMAT §8): a valid grid around fixed cells, or a proof there is none.

The stitcher records a miss as a set of boundary cells that a tile must show
(values + a known mask). ``complete`` asks for a valid n×n solution (balance,
no three in a row, distinct rows, distinct columns) agreeing with every fixed
cell, or a proof that none exists (``None`` → the miss is marked ``nofit``).
It is one ``engine.windows.Windows`` problem of one distinct window, decided by
``engine.completion.decide``: the C line-domain search, seeded from the
project's stream (so two seeds give two completions of one boundary), and
CP-SAT only for a boundary the search leaves undecided within its node budget
(its model is ``engine.cpsat``'s, the one the stitcher's window-aware completion
uses too). Any CP-SAT status other than OPTIMAL/FEASIBLE/INFEASIBLE raises: a
timeout or a bad model is never mistaken for "no completion".

Since GENERATOR_VERSION 5 (before: every completion by CP-SAT, whose answers
for the same seed were other grids).
"""

from __future__ import annotations

import numpy as np

from engine.completion import Tally, decide
from engine.windows import MAX_NODES, Windows
from tilelib.bits import check_n
from tilelib.errors import BadInput, TilesError
from tilelib.rng import Stream


class CompletionError(TilesError):
    """CP-SAT answered neither a solution nor a proof of infeasibility (timeout, invalid model)."""


DEFAULT_TIME_LIMIT = 60.0


def complete(
    n: int,
    fixed_values,
    fixed_known,
    seed: bytes | Stream,
    *,
    exclude=(),
    time_limit: float = DEFAULT_TIME_LIMIT,
    tally: Tally | None = None,
    max_nodes: int = MAX_NODES,
) -> np.ndarray | None:
    """A valid n×n grid equal to ``fixed_values`` wherever ``fixed_known`` is 1, or None if none exists.

    ``seed`` (bytes, or a Stream to draw from) fixes the answer. ``exclude``: grids the answer
    must differ from (None then means "no other completion"). ``tally`` and ``max_nodes`` (the C
    search's budget): see ``engine.completion``. Raises BadInput on malformed arrays and
    CompletionError when CP-SAT, asked about a boundary the C search left undecided, stops
    without an answer.
    """
    check_n(n)
    vals = _as_grid(fixed_values, n, "fixed_values")
    known = _as_grid(fixed_known, n, "fixed_known")
    stream = seed if isinstance(seed, Stream) else Stream(bytes(seed), "complete")
    problem = Windows(vals, known, ((0, 0, n, True),), tuple((0, _as_grid(g, n, "excluded grid")) for g in exclude))
    got = decide(problem, stream, time_limit, tally=tally, max_nodes=max_nodes)
    if got.grids is not None:
        return got.grids[0]
    if not got.proof:
        raise CompletionError(f"CP-SAT completion of an n={n} tile ended with status {got.status}")
    return None


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
