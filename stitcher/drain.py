"""Draining misses (FORMAT §8): make a tile for an exact boundary, or prove there is none.

``generate`` composes the generator's one-tile path (``generator.make``):
``generator.complete`` completes an n×n grid with exactly the constraint's
boundary cells fixed (the C search, CP-SAT for what it leaves undecided),
thinning keeps m <= m_max with every alternative differing on a
``seam_mask`` side, features are computed, and the Tile comes back. A proof
that no completion exists gives ``NOFIT``. A fixed boundary can make
every completion unthinnable (e.g. the four unknown corners can swap and no
seam side pins that), so attempts are capped (``max_tries``) and running out
is ``FAILED`` — not nofit, since no proof was made.

``NofitSet`` is the containment rule (ledger.settled_nofit): a constraint
containing a known nofit constraint in any orientation is nofit without
solving, and no completion is ever asked about a known nofit set again.

``drain_misses`` drains the ledger's open misses in one process (the daytime
drain, ``stitcher.refresh.drain_open``, spreads the solving over workers and
writes each result with the same ``apply_result``): settle by containment,
else generate and append, else mark nofit. The
stitcher itself drains inline (``stitch.py``), against the constraint a
missed square faces at retry time.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from engine.completion import Tally
from generator.complete import complete
from generator.make import GenerationFailed, GenParams, Targets, constraint_cells, make_tile
from generator.version import default_m_max
from tilelib import ledger
from tilelib.bits import edges
from tilelib.constraint import Constraint, image_arrays
from tilelib.db import atomic
from tilelib.rng import Stream
from tilelib.tile import Tile

TILE, NOFIT, FAILED = "tile", "nofit", "failed"
COMPLETIONS = 8
MAX_TRIES = COMPLETIONS


def generate(
    c: Constraint,
    seam_mask: int,
    m_max: int | None,
    stream: Stream,
    max_tries: int = MAX_TRIES,
    accept: Callable[[tuple], bool] | None = None,
    completions: int = COMPLETIONS,
    level: int = 0,
    banned: Callable[[np.ndarray], bool] | None = None,
    tally: Tally | None = None,
) -> tuple[str, Tile | None]:
    """(TILE, tile) | (NOFIT, None) | (FAILED, None) for a tile in the constraint's own orientation.

    Up to ``completions`` completions of the boundary are drawn (stream
    children ``c/<j>``). Each is thinned and featured by
    ``generator.make.make_tile`` with every cell fixed (so its completion step
    returns that grid and one attempt decides: thinning fails only when the
    corner-free start is already unacceptable, whatever the order). Completions
    whose edges ``accept`` takes (the stitcher's forward check) come first; the
    others are kept as a fallback. The first completion being None is a
    proof that none exists: NOFIT. No completion that thins: FAILED.
    ``max_tries`` caps the completions too (at most that many completion calls).
    ``level`` (1..4) thins to that ladder level where the grid allows (``_thin``).
    ``banned`` (the fair rule, ``stitcher.fresh``): a completion it refuses is excluded with its
    16 images and another is asked for, at most ``fresh.RETRIES`` times, without using up a
    completion; "none left" after an exclusion is FAILED, not a nofit proof.
    ``tally``: counts which path decided each completion (``engine.completion``).
    """
    from stitcher.fresh import exclude_images

    n = c.n
    m = default_m_max(n) if m_max is None else m_max
    params = _params(n, m, seam_mask, level)
    vals, known = constraint_cells(c)
    backups, j, made = [], 0, 0
    exclude: list[np.ndarray] = []  # the banned grids' images (``fresh.exclude_images``)
    while made < max(min(completions, max_tries), 1):
        grid = complete(n, vals, known, stream.child(f"c/{j}"), exclude=exclude, tally=tally)
        j += 1
        if grid is None:
            return (FAILED if exclude else NOFIT), None
        if banned is not None and banned(grid):
            if not exclude_images(exclude, [grid]):
                break
            continue
        made += 1
        if accept is not None and not accept(edges(grid)):
            backups.append((j - 1, grid))
            continue
        tile = _thin(params, stream, j - 1, grid)
        if tile is not None:
            return TILE, tile
    for j, grid in backups:
        tile = _thin(params, stream, j, grid)
        if tile is not None:
            return TILE, tile
    return FAILED, None


def tile_from_grid(
    grid: np.ndarray, seam_mask: int, m_max: int | None, stream: Stream, *, level: int = 0
) -> Tile | None:
    """Thin and feature a complete grid (``make_tile`` with every cell fixed); None if it cannot
    be thinned (its corner-free start is already unacceptable). ``level``: as in ``generate``."""
    n = grid.shape[0]
    m = default_m_max(n) if m_max is None else m_max
    return _thin(_params(n, m, seam_mask, level), stream, 0, grid)


def _params(n: int, m: int, seam_mask: int, level: int) -> GenParams:
    return GenParams.make(n, m_max=m, seam_mask=seam_mask, targets=Targets(max_tries=1, level=level))


def _thin(params, stream: Stream, j: int, grid) -> Tile | None:
    """Thin and rate a complete valid grid as is (``make_tile``'s ``solution`` path: the same tile
    as completing it with every cell fixed, without a completion call that could only return it).
    With a target level L, a grid that does not thin to exactly L (it comes out easier, or its
    start is not solvable at L) is thinned to L-1, L-2, ..., 2 in turn, and only then the usual
    way: an easier tile is closer to the profile than a minimal one, which at n >= 12 is
    mostly beyond L4."""
    try:
        return make_tile(params, stream.child(f"make/{j}"), solution=grid)
    except GenerationFailed:
        pass
    level = params.targets.level
    if level:
        lower = Targets(max_tries=1, level=level - 1) if level > 2 else Targets(max_tries=1)
        return _thin(GenParams(params.n, params.m_max, params.seam_mask, lower), stream, j, grid)
    return None


class NofitSet:
    """Known nofit constraints per n, from the ledger plus those found during this run.

    ``settled(c)`` answers ``ledger.settled_nofit(c, known)`` (the reference rule: c contains a
    known nofit set in one of its 16 orientations) with each known set's 16 images precomputed
    once as rows of a (k, 4) mask/value array, so one question is two numpy comparisons instead
    of 16·k Python pull-backs (measured: the Python rule took ~2 s of a warm G = 301 stitch).
    """

    def __init__(self, conn) -> None:
        self.conn = conn
        self._arrays: dict[int, tuple[np.ndarray, np.ndarray]] = {}  # n -> (masks, values), (k, 4)

    def _images(self, n: int) -> tuple[np.ndarray, np.ndarray]:
        """The known sets of side n as image rows, read from the ledger at the first question (in one
        array: adding them one by one copied the growing array each time, quadratic in the ledger's
        nofit rows, ~0.5 s a build after half a year of G = 301 nights)."""
        if n not in self._arrays:
            self._arrays[n] = image_arrays(n, *ledger.nofit_rows(self.conn, n))
        return self._arrays[n]

    def settled(self, c: Constraint) -> bool:
        M, V = self._images(c.n)
        cm = np.array(c.masks, dtype=np.int64)
        cv = np.array(c.values, dtype=np.int64)
        return bool((((cm & M) == M) & ((cv & M) == V)).all(axis=1).any())

    def add(self, c: Constraint) -> None:
        M, V = self._images(c.n)
        m, v = image_arrays(c.n, c.masks, c.values)
        self._arrays[c.n] = (np.vstack([M, m]), np.vstack([V, v]))


@dataclass
class DrainStats:
    """What a drain of the misses table did (``drain_misses`` here, ``refresh.drain_open`` by day)."""

    drained: int = 0
    nofit: int = 0
    settled: int = 0
    failed: int = 0
    seconds: float = 0.0
    cp_calls: int = 0
    hashes: list = field(default_factory=list)

    def line(self) -> str:
        return (
            f"drained {self.drained:,} misses into new tiles, {self.nofit:,} proven nofit, "
            f"{self.settled:,} settled by containment, {self.failed:,} failed, in {self.seconds:.1f} s"
        )


def apply_result(lib, miss_id: int, kind: str, tile, st: DrainStats) -> None:
    """Write one drained miss: the new tile and the miss it drained, in one transaction, or the
    nofit mark; count it in ``st``."""
    if kind == NOFIT:
        ledger.mark_nofit(lib.conn, miss_id)
        st.nofit += 1
    elif kind == FAILED:
        st.failed += 1
    else:
        with atomic(lib.conn):
            h, _t = lib.insert(tile)
            ledger.mark_drained(lib.conn, miss_id, h)
        st.drained += 1
        st.hashes.append(h)


def drain_misses(
    lib, stream: Stream, *, m_max: int | None = None, limit: int | None = None, max_tries: int = MAX_TRIES
) -> DrainStats:
    """Drain the ledger's open misses in id order; tiles are thinned with seam_mask = the fixed sides."""
    st = DrainStats()
    nofits = NofitSet(lib.conn)
    t0 = time.perf_counter()
    for miss in ledger.open_misses(lib.conn, limit=limit):
        c = miss.constraint
        if nofits.settled(c):
            ledger.mark_nofit(lib.conn, miss.id)
            st.settled += 1
            continue
        st.cp_calls += 1
        kind, tile = generate(c, c.full_mask, m_max, stream.child(f"miss/{miss.id}"), max_tries)
        apply_result(lib, miss.id, kind, tile, st)
        if kind == NOFIT:
            nofits.add(c)
    st.seconds = time.perf_counter() - t0
    return st
