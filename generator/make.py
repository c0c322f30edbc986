"""One tile, start to finish (SPEC §4, §8): solution or completion → thinning → features → Tile.

``make_tile`` is a pure function of its arguments and the stream's bytes.
Each attempt j draws from ``stream.child(f"try/{j}")``:

1. a solution — a random valid grid (``generator.solution``), or, when
   ``fixed`` boundary cells are given, a CP-SAT completion of them
   (``generator.complete``; if CP-SAT proves that no completion exists,
   ``make_tile`` returns None: the miss is ``nofit``);
2. thinning (``generator.thin``) with ``m_max`` and ``seam_mask``; a solution
   whose corner-free start is already unacceptable (its corners can swap and
   the seam sides do not pin that) is rejected — a rejected completion is
   excluded from later CP-SAT calls, and when none is left ``GenerationFailed``
   says so (the boundary fits, but not with that seam_mask);
3. the ladder on givens + seam sides, and the difficulty ``Targets`` — a
   tile that is too easy is rejected and the next attempt starts afresh
   (Unruly's reject-if-too-easy);
4. the features and the Tile.

Attempts are capped (``Targets.max_tries``); running out raises
``GenerationFailed``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from engine.ladder import rate
from generator.complete import complete
from generator.features import features, ladder_puzzle
from generator.solution import random_rows, rows_to_grid
from generator.thin import thin
from generator.version import default_m_max
from tilelib.bits import VALID_N, row_ints
from tilelib.errors import BadInput, TilesError
from tilelib.rng import Stream
from tilelib.rules import violations
from tilelib.tile import Tile


class GenerationFailed(TilesError):
    """No attempt produced a tile meeting the targets within ``max_tries``."""


@dataclass(frozen=True)
class Targets:
    """Difficulty targets a tile must meet, else it is regenerated (defaults accept every tile)."""

    min_ladder: int = 0
    needs_unique: bool = False
    needs_bifurcation: bool = False
    max_tries: int = 1000

    def met(self, lad) -> bool:
        return (lad.ladder >= self.min_ladder
                and (lad.needs_unique or not self.needs_unique)
                and (lad.needs_bifurcation or not self.needs_bifurcation))


@dataclass(frozen=True)
class GenParams:
    """What to generate: tile side, multiplicity cap, seam sides, difficulty targets."""

    n: int
    m_max: int
    seam_mask: int = 0
    targets: Targets = Targets()

    @staticmethod
    def make(n: int, m_max: int | None = None, seam_mask: int = 0,
             targets: Targets | None = None) -> "GenParams":
        """Validated parameters (BadInput on a bad value); m_max defaults by n (SPEC §4)."""
        if n not in VALID_N:
            raise BadInput(f"--n must be one of {', '.join(map(str, VALID_N))}, got {n}")
        if m_max is None:
            m_max = default_m_max(n)
        if not 1 <= m_max <= 64:
            raise BadInput(f"--m-max must be between 1 and 64, got {m_max}")
        if not 0 <= seam_mask <= 15:
            raise BadInput(f"--seam-mask must be a side mask 0..15, got {seam_mask}")
        t = targets or Targets()
        if not 0 <= t.min_ladder <= 5:
            raise BadInput(f"--min-ladder must be 0..5, got {t.min_ladder}")
        if t.max_tries < 1:
            raise BadInput("max_tries must be at least 1")
        return GenParams(n, m_max, seam_mask, t)


@dataclass(frozen=True)
class MakeStats:
    """Work behind one tile: attempts and why they were rejected, engine counts."""

    tries: int
    rejected_start: int
    rejected_easy: int
    counts: int


def make_tile(params: GenParams, stream: Stream, fixed: tuple | None = None, *,
              solution: np.ndarray | None = None) -> Tile | None:
    """One tile for ``params`` from ``stream``; see the module doc.

    ``fixed`` = (values, known) grids of cells the solution must show (a CP-SAT
    completion is drawn). ``solution`` = a complete valid grid to thin as is
    (no completion step; attempts differ only in thinning order, and a grid
    whose corner-free start is unacceptable raises GenerationFailed at once).
    """
    tile, _ = make_tile_stats(params, stream, fixed, solution=solution)
    return tile


def make_tile_stats(params: GenParams, stream: Stream, fixed: tuple | None = None, *,
                    solution: np.ndarray | None = None) -> tuple[Tile | None, MakeStats]:
    """``make_tile`` plus its ``MakeStats``."""
    n, t = params.n, params.targets
    if solution is not None:
        if fixed is not None:
            raise ValueError("give either fixed cells or a solution, not both")
        sol = np.asarray(solution, dtype=np.uint8)
        if sol.shape != (n, n) or violations(sol):
            raise BadInput(f"solution is not a valid {n}x{n} grid")
        given_rows = row_ints(sol)
    rejected_start = rejected_easy = counts = 0
    unpinnable: list[np.ndarray] = []   # completions whose corner-free start failed
    for j in range(t.max_tries):
        sub = stream.child(f"try/{j}")
        if solution is not None:
            rows = given_rows
        elif fixed is None:
            rows = random_rows(n, sub.child("solution"))
        else:
            grid = complete(n, fixed[0], fixed[1], sub.child("complete"), exclude=unpinnable)
            if grid is None:
                if not unpinnable:
                    # CP-SAT proved that no completion exists: no seed can change that.
                    return None, MakeStats(j + 1, rejected_start, rejected_easy, counts)
                raise GenerationFailed(
                    f"every completion of the boundary ({len(unpinnable)}) has corners that can swap "
                    f"unseen by seam_mask {params.seam_mask}")
            rows = row_ints(grid)
        res = thin(n, rows, sub.child("thin"), m_max=params.m_max, seam_mask=params.seam_mask)
        if res is None:
            rejected_start += 1
            if solution is not None:
                raise GenerationFailed(f"the given solution's corners can swap unseen by seam_mask "
                                       f"{params.seam_mask}: no thinning can pin it")
            if fixed is not None:
                unpinnable.append(grid)
            continue
        counts += res.counts
        sol = rows_to_grid(rows, n)
        givens = rows_to_grid(res.givens, n)
        # Rate the canonical orientation: L4's cell order makes `bifurcations` depend on
        # orientation, and the library stores (and the referee re-rates) the canonical one.
        canon = Tile.from_grids(sol, givens, params.seam_mask).canonical()[0]
        lad = rate(ladder_puzzle(canon.solution_grid, canon.givens_grid, canon.seam_mask))
        if not t.met(lad):
            rejected_easy += 1
            continue
        feats = features(sol, givens, params.seam_mask, [rows_to_grid(s, n) for s in res.solutions], lad)
        stats = MakeStats(j + 1, rejected_start, rejected_easy, counts)
        return Tile.from_grids(sol, givens, params.seam_mask, feats), stats
    raise GenerationFailed(
        f"no n={params.n} tile met the targets in {t.max_tries} attempts "
        f"({rejected_start} unpinnable starts, {rejected_easy} too easy)")


def constraint_cells(constraint) -> tuple[np.ndarray, np.ndarray]:
    """(values, known) n×n grids of the boundary cells a ``tilelib.constraint.Constraint`` fixes."""
    n = constraint.n
    vals = np.zeros((n, n), dtype=np.uint8)
    known = np.zeros((n, n), dtype=np.uint8)
    places = (lambda i: (0, i), lambda i: (i, n - 1), lambda i: (n - 1, i), lambda i: (i, 0))
    for side in range(4):
        m, v = constraint.masks[side], constraint.values[side]
        for i in range(n):
            bit = 1 << (n - 1 - i)
            if m & bit:
                rc = places[side](i)
                val = 1 if v & bit else 0
                if known[rc] and vals[rc] != val:
                    raise BadInput(f"constraint fixes corner {rc} to both 0 and 1")
                known[rc] = 1
                vals[rc] = val
    return vals, known
