"""One tile, start to finish (FORMAT §4, §8): solution or completion → thinning → features → Tile.

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
   With a target ``level`` (1..4), thinning instead follows Unruly's rule:
   remove givens one at a time while the standard solve with ladder levels
   1..level (on givens + seam sides) still finishes (``thin_to_level``);
3. the ladder on givens + seam sides, and the difficulty ``Targets`` — a
   tile that is too easy (below ``min_ladder``, or below its target level)
   or too hard (above ``max_ladder``) is rejected and the next attempt starts
   afresh (Unruly's reject-if-too-easy); a target-level tile therefore rates
   exactly its level;
4. the features and the Tile.

Everything after the solution works on row ints, with the thinning loops,
the canonical transform and the ladder in C: that path is what ``tiles
library generate`` runs per tile (``scripts/bench_generator.py`` times it).

Attempts are capped (``Targets.max_tries``); running out raises
``GenerationFailed``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from engine import count_rows
from engine.count import c_kernel
from engine.ladder import rate_rows
from generator.features import features_rows
from generator.solution import random_rows
from generator.thin import ThinResult, corner_free_mask, removal_order, side_rows, thin
from generator.version import default_m_max
from tilelib.bits import VALID_N, row_ints, rows_blob
from tilelib.errors import BadInput, TilesError
from tilelib.rng import Stream
from tilelib.rules import violations
from tilelib.symmetry import transform_side_mask
from tilelib.tile import Tile, canonical_rows, features_image

if TYPE_CHECKING:
    import numpy as np

# Every count of the thinning loop stops past THIN_NODE_CAP * n * n nodes; the cell then
# stays given. Uncapped, one n = 16 tile in 300 took 0.66 s (sparse counts of up to 290 k
# nodes) and p99 was 6x the median; capped at 2 n^2, p99 is 2.4x the median and the mean
# blank share moves from 0.7880 to 0.7876 (300 tiles, measured in one run).
THIN_NODE_CAP = 2


class GenerationFailed(TilesError):
    """No attempt produced a tile meeting the targets within ``max_tries``."""


@dataclass(frozen=True)
class Targets:
    """Difficulty targets a tile must meet, else it is regenerated (defaults accept every tile)."""

    min_ladder: int = 0
    needs_unique: bool = False
    needs_bifurcation: bool = False
    max_tries: int = 1000
    max_ladder: int = 5
    level: int = 0  # 1..4: thin by the ladder at this level (Unruly's rule); 0: minimal unique

    def met(self, lad) -> bool:
        return (
            max(self.min_ladder, self.level) <= lad.ladder <= self.max_ladder
            and (lad.needs_unique or not self.needs_unique)
            and (lad.needs_bifurcation or not self.needs_bifurcation)
        )


@dataclass(frozen=True)
class GenParams:
    """What to generate: tile side, multiplicity cap, seam sides, difficulty targets."""

    n: int
    m_max: int
    seam_mask: int = 0
    targets: Targets = Targets()

    @staticmethod
    def make(n: int, m_max: int | None = None, seam_mask: int = 0, targets: Targets | None = None) -> GenParams:
        """Validated parameters (BadInput on a bad value); m_max defaults by n (FORMAT §4)."""
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
        if not 0 <= t.max_ladder <= 5:
            raise BadInput(f"--max-ladder must be 0..5, got {t.max_ladder}")
        if t.min_ladder > t.max_ladder:
            raise BadInput(f"--min-ladder {t.min_ladder} is above --max-ladder {t.max_ladder}")
        if not 0 <= t.level <= 4:
            raise BadInput(f"--level must be 1..4 (0: off), got {t.level}")
        if t.level and not t.min_ladder <= t.level <= t.max_ladder:
            raise BadInput(f"--level {t.level} is outside --min-ladder {t.min_ladder}..--max-ladder {t.max_ladder}")
        if t.max_tries < 1:
            raise BadInput("max_tries must be at least 1")
        return GenParams(n, m_max, seam_mask, t)

    def describe(self) -> str:
        """What the thinning really applies, for one line of output: the m limit in force (1 when
        seam_mask is 0, whatever m_max says), the seam sides, and the difficulty window."""
        t = self.targets
        m = (
            f"m <= {self.m_max}"
            if self.seam_mask
            else f"m = 1 (seam_mask 0 pins nothing{'; m_max ' + str(self.m_max) + ' unused' if self.m_max > 1 else ''})"
        )
        parts = [m, f"seam_mask {self.seam_mask}"]
        if t.level:
            parts.append(f"level {t.level}")
        elif (t.min_ladder, t.max_ladder) != (0, 5):
            parts.append(f"ladder {t.min_ladder}..{t.max_ladder}")
        return ", ".join(parts)


@dataclass(frozen=True)
class MakeStats:
    """Work behind one tile: attempts and why they were rejected, engine counts."""

    tries: int
    rejected_start: int
    rejected_easy: int  # outside the targets: too easy, or above max_ladder
    counts: int


def make_tile(
    params: GenParams,
    stream: Stream,
    fixed: tuple | None = None,
    *,
    solution: np.ndarray | None = None,
    canonical: bool = False,
) -> Tile | None:
    """One tile for ``params`` from ``stream``; see the module doc.

    ``fixed`` = (values, known) grids of cells the solution must show (a CP-SAT
    completion is drawn). ``solution`` = a complete valid grid to thin as is
    (no completion step; attempts differ only in thinning order, and a grid
    whose corner-free start is unacceptable raises GenerationFailed at once).
    ``canonical``: return the tile's canonical image, ``tile.canonical()[0]`` (what a library
    stores), made from the canonical grids the rating computes anyway.
    """
    tile, _ = make_tile_stats(params, stream, fixed, solution=solution, canonical=canonical)
    return tile


def make_tile_stats(
    params: GenParams,
    stream: Stream,
    fixed: tuple | None = None,
    *,
    solution: np.ndarray | None = None,
    canonical: bool = False,
) -> tuple[Tile | None, MakeStats]:
    """``make_tile`` plus its ``MakeStats``: each attempt takes a solution from its source, thins
    it, rates the canonical tile and keeps it when the targets are met."""
    t = params.targets
    source = _source(params, fixed, solution)
    rejected_start = rejected_easy = counts = 0
    for j in range(t.max_tries):
        sub = stream.child(f"try/{j}")
        rows = source.rows(sub)
        if rows is None:  # CP-SAT proved that no completion exists: no seed can change that
            return None, MakeStats(j + 1, rejected_start, rejected_easy, counts)
        res = _thin(params, rows, sub.child("thin"))
        if res is None:
            rejected_start += 1
            source.unpinnable()
            continue
        counts += res.counts
        tile = _rated(params, rows, res, canonical)
        if tile is None:
            rejected_easy += 1
            continue
        return tile, MakeStats(j + 1, rejected_start, rejected_easy, counts)
    raise GenerationFailed(
        f"no n={params.n} tile met the targets in {t.max_tries} attempts "
        f"({rejected_start} unpinnable starts, {rejected_easy} too easy or too hard)"
    )


class _Drawn:
    """Each attempt draws a random solution (row ints, no numpy)."""

    def __init__(self, n: int) -> None:
        self.n = n

    def rows(self, sub: Stream) -> list[int]:
        return random_rows(self.n, sub.child("solution"))

    def unpinnable(self) -> None:
        """A drawn solution whose corners can swap: the next attempt draws another."""


class _Given:
    """Every attempt thins the one given grid (only the thinning order differs)."""

    def __init__(self, n: int, solution, seam_mask: int) -> None:
        import numpy as np  # a given grid only: the generate path draws row ints and never loads numpy

        sol = np.asarray(solution, dtype=np.uint8)
        if sol.shape != (n, n) or violations(sol):
            raise BadInput(f"solution is not a valid {n}x{n} grid")
        self.given, self.seam_mask = row_ints(sol), seam_mask

    def rows(self, sub: Stream) -> list[int]:
        return self.given

    def unpinnable(self) -> None:
        raise GenerationFailed(
            f"the given solution's corners can swap unseen by seam_mask {self.seam_mask}: no thinning can pin it"
        )


class _Completed:
    """Each attempt completes the fixed cells with CP-SAT, excluding the completions already found
    unpinnable; None once none is left and none ever was (the boundary has no completion)."""

    def __init__(self, n: int, fixed: tuple, seam_mask: int) -> None:
        self.n, self.fixed, self.seam_mask = n, fixed, seam_mask
        self.excluded: list = []  # completions whose corner-free start failed
        self.last: np.ndarray | None = None  # the completion the attempt under way started from

    def rows(self, sub: Stream) -> list[int] | None:
        from generator.complete import complete  # CP-SAT: imported only when a boundary is fixed

        grid = complete(self.n, self.fixed[0], self.fixed[1], sub.child("complete"), exclude=self.excluded)
        if grid is None:
            if not self.excluded:
                return None
            raise GenerationFailed(
                f"every completion of the boundary ({len(self.excluded)}) has corners that can swap "
                f"unseen by seam_mask {self.seam_mask}"
            )
        self.last = grid
        return row_ints(grid)

    def unpinnable(self) -> None:
        self.excluded.append(self.last)


def _source(params: GenParams, fixed: tuple | None, solution) -> _Drawn | _Given | _Completed:
    """Where the attempts' solutions come from: a given grid, a completion of fixed cells, or a draw."""
    if solution is not None:
        if fixed is not None:
            raise ValueError("give either fixed cells or a solution, not both")
        return _Given(params.n, solution, params.seam_mask)
    return _Drawn(params.n) if fixed is None else _Completed(params.n, fixed, params.seam_mask)


def _thin(params: GenParams, rows: list[int], stream: Stream) -> ThinResult | None:
    """The attempt's thinning: to a ladder level (Unruly's) when the targets name one, else the
    minimal givens under a node cap; None when the corner-free start is not acceptable."""
    n, t = params.n, params.targets
    if t.level:
        return thin_to_level(n, rows, stream, t.level, m_max=params.m_max, seam_mask=params.seam_mask)
    return thin(n, rows, stream, m_max=params.m_max, seam_mask=params.seam_mask, max_nodes=THIN_NODE_CAP * n * n)


def _rated(params: GenParams, rows: list[int], res: ThinResult, canonical: bool) -> Tile | None:
    """The thinned tile with its features, or None when its rating misses the targets. The canonical
    orientation is rated: L4's cell order makes ``bifurcations`` depend on orientation, and the
    library stores (and the referee re-rates) the canonical one. ``canonical``: the tile returned
    is that canonical image, built from the rated grids (no second transform of the tile)."""
    n, seam = params.n, params.seam_mask
    sol_blob, giv_blob = rows_blob(rows, n), rows_blob(res.givens, n)
    t, c_sol, c_giv = canonical_rows(n, sol_blob, giv_blob, seam)  # only the canonical grids are rated
    c_seam = transform_side_mask(seam, t)
    c_known = [g | s for g, s in zip(c_giv, side_rows(n, c_seam), strict=True)] if c_seam else c_giv
    lad = rate_rows(n, [s & k for s, k in zip(c_sol, c_known, strict=True)], c_known, c_sol)
    if not params.targets.met(lad):
        return None
    feats = features_rows(n, rows, res.givens, res.solutions, lad)
    if not canonical:
        return Tile(n, sol_blob, giv_blob, seam, feats)
    return Tile.canonical_image(n, c_sol, c_giv, c_seam, features_image(n, feats, t))


def thin_to_level(
    n: int, rows: list[int], stream: Stream, level: int, *, m_max: int = 1, seam_mask: int = 0
) -> ThinResult | None:
    """Unruly's thinning: from every cell but the corners, remove givens in the stream's order
    (``generator.thin.removal_order``) while the standard solve with ladder levels 1..level, on
    the givens plus the seam_mask sides, still finishes; with seam sides the givens alone must
    also keep m <= m_max. None when the corner-free start does not pass.

    A solve that finishes proves the givens + seam sides have one solution, so the pinning
    invariant holds, and the standard solve with every level then never goes above ``level``:
    the tile rates at most ``level`` (at least, too, once ``Targets`` rejects easier ones).
    """
    m_lim = m_max if seam_mask else 1
    out = c_kernel().thin_ladder(
        n,
        list(rows),
        corner_free_mask(n),
        side_rows(n, seam_mask),
        removal_order(n, stream),
        level,
        seam_mask,
        m_lim,
        THIN_NODE_CAP * n * n,
    )
    if out is None:
        return None
    if seam_mask:
        c, sols, nodes = count_rows(n, [s & k for s, k in zip(rows, out, strict=True)], out, m_lim + 1)
        return ThinResult(out, [tuple(x) for x in sols], 1, nodes)
    return ThinResult(out, [tuple(rows)], 0, 0)


def constraint_cells(constraint) -> tuple[np.ndarray, np.ndarray]:
    """(values, known) n×n grids of the boundary cells a ``tilelib.constraint.Constraint`` fixes."""
    import numpy as np

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
