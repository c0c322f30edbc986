"""The stitcher (FORMAT §8): give every square of a packing a library tile (hash, t) with no seam conflict.

``stitch(packing, lib, stream)`` runs:

1. **Geometry** (``order.py``): adjacency, BFS distance from the seed tile,
   the sides each square will have known at its turn, the placement order
   (seed first; big-first: large squares first; grown: id order; else BFS).
2. **Placement**, square by square: the constraint it faces on the board
   (``Board.constraint``) is looked up in all 16 orientations
   (``index.MemoryIndex``; m = 1 only for the seed tile). Candidates are drawn
   from ``stream.child("place")`` (``place.choose``): those pinned by the
   known sides first, and the first that passes the forward check
   (``check.ForwardCheck``: every side of every unplaced neighbour can still
   become a valid line; n = 6 neighbours must keep a completion, exactly) is
   taken. If none passes and the drain is on, a window-aware tile is made
   (``joint.joint_complete``); if none exists either, the board around the
   square is already doomed, and the square is repaired at once (step 4,
   ``repaired_early``) rather than given a tile that leaves a neighbour
   uncompletable; only if that fails is the first candidate placed
   (``unchecked``). With a difficulty ``profile``
   (``tilelib.difficulty``) the square first draws a ladder level and the
   candidates are those of that level, then of the allowed levels, then all;
   its drained tiles are thinned to that level (``profiled_choose``,
   ``level_for``).
3. **Miss**: no candidate → a row in ``misses`` (``ledger.record_miss``,
   packing id = the packing's digest; repeats count). With the drain on
   (default, ``drain=True`` = ``"inline"``) the miss is drained at once,
   against exactly the constraint recorded: if it contains a known nofit
   set it is nofit without solving (``drain.NofitSet``); else a window-aware
   completion (``joint``) or a plain CP-SAT completion (``drain.generate``,
   whose infeasibility proof marks the miss nofit) is thinned with
   seam_mask = the square's known sides (seed: seam_mask 0, m_max 1),
   appended to the library and the index, placed, and the miss marked
   drained. ``drain="deferred"`` instead finishes the first pass and then
   retries the missed squares against what they face by then (measured:
   more nofits, since later neighbours add constraints).
4. **Repair** (drain on, ``repair.py``): before giving a square up, placed
   neighbours are taken off and the square is remade with them — first
   putting them back by lookup, then completing all of them together in one
   model. Else everything is undone.
5. **Fallback**: a square still unfilled is split (``fallback.split_square``)
   into smaller squares and zone rectangles; the new squares go through
   steps 2–5 at once (so failures end, at worst, as zones). With
   ``drain=False`` only lookups run.

All library writes of one stitch share one transaction (``kept``), committed at the end — or
when the stitch fails, so that the misses it recorded and the tiles they name are not lost.

**Halves** (``regions.py``, ``halves.py``; boards of side >= ``regions.MIN_G`` with the drain on): the seed and
the strip of squares crossing a middle column are placed first, then the two halves left and
right of it — which share no cell — are stitched by steps 2–4 in forked workers that log their
library writes (``journal.py``), then their results are taken left then right, and the squares a
half would have split get steps 2–5 last. The board does not depend on ``workers``.

Modules: ``stitch`` (this one: ``open_run``, ``run_stitch``, ``stitch``) drives a
``run.StitchRun`` (steps 2–5 on one square, ``place_all`` a pass), whose squares' state is owned
by a ``placements.Placements`` (the only way to place, remove or query a tile); ``repair`` and
``halves`` work on the run, ``fallback`` on the placements. Imports go one way: this module
imports them all, ``repair`` and ``halves`` import ``run``, ``run`` imports ``fallback`` and
``placements``, and none imports back (the run is handed ``repair`` as a hook when it is made).
Configured by one ``StitchOptions`` value (frozen, keyword-only; its ``drain`` a ``Drain``), which
``stitch``, ``open_run``, the run and its halves take whole.

Ids of the returned packing: squares keep their relative order; a split
square is replaced, in place, by its sub-squares in (y, x) order (recursively),
so ids after a split shift. ``seed_tile`` is renumbered accordingly (the seed
is never split or moved by a repair: with the drain on it always gets a tile;
without it and with no m = 1 tile of its size, ``StitchError``). New zones
(the fallbacks' zone rectangles grouped by contact) follow the packing's zones.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable
from contextlib import contextmanager
from dataclasses import dataclass

from packers.packing import Packing
from stitcher.fallback import assemble
from stitcher.halves import fork_halves, place_strip, take_halves
from stitcher.options import Drain, StitchOptions
from stitcher.repair import repair
from stitcher.run import StitchError, StitchRun
from stitcher.stats import StitchStats
from tilelib.db import atomic
from tilelib.rng import Stream


@dataclass
class StitchResult:
    placements: list  # (hash, t) per square of ``packing``
    packing: Packing  # the input packing, or a valid one with split squares and new zones
    stats: StitchStats


def open_run(
    packing: Packing,
    lib,
    stream: Stream,
    opts: StitchOptions = StitchOptions(),
    *,
    index=None,
    progress: Callable[[int, int, StitchStats], None] | None = None,
) -> StitchRun:
    """A ``StitchRun`` set up for ``packing`` (geometry, indexes, journal), with ``repair`` as its repair."""
    return StitchRun(packing, lib, stream, opts, repair=repair, index=index, progress=progress)


@contextmanager
def kept(run: StitchRun):
    """One transaction (``tilelib.db.atomic``) of the stitch's library writes, committed even when
    the block raises: a failed stitch keeps the misses it recorded and the tiles its ledger names
    (flushed before the commit); then the error goes on. When SQLite itself ended the transaction
    (a full disk, an I/O error) there is nothing to keep, and that first error is the one raised —
    never a "cannot commit" or a failed flush in its place."""
    failed = None
    with atomic(run.lib.conn):
        try:
            yield
        except BaseException as err:
            if not run.lib.conn.in_transaction:
                raise  # SQLite ended the transaction itself (a full disk, an I/O error): nothing to keep
            try:
                run.journal.flush(set())
            except sqlite3.Error:
                raise err from None  # the first error is the one to tell; the flush failed because of it
            failed = err
    if failed is not None:
        raise failed


def run_stitch(run: StitchRun) -> StitchResult:
    """Every square of the run's packing placed (one pass, or the strip and the halves), the final
    packing assembled, the library writes flushed and committed; the stats filled in. One
    transaction (``kept``); with halves two, the workers forked between them."""
    t0 = time.perf_counter()
    st, at = run.st, run.at
    area = {}
    for i in run.order:
        st.bump(at.n(i), "squares")
        area[i] = at.squares[i][2] ** 2
    st.square_area = sum(area.values())
    if run.halves is None:
        with kept(run):
            first_area = run.place_all(run.order, area)
            packing, placements = finish(run)
    else:
        with kept(run):
            first_area = place_strip(run, area)
        results = fork_halves(run)
        with kept(run):
            first_area += take_halves(run, results, area)
            packing, placements = finish(run)
    st.first_fill = first_area / st.square_area if st.square_area else 1.0
    st.final_fill = sum(s * s for (_x, _y, s) in packing.squares) / st.square_area if st.square_area else 1.0
    st.zone_fraction_before = run.packing.zone_fraction()
    st.zone_fraction_after = packing.zone_fraction()
    st.seconds["total"] = time.perf_counter() - t0 + st.seconds["geometry"] + st.seconds["index"]
    return StitchResult(placements, packing, st)


def finish(run: StitchRun) -> tuple[Packing, list]:
    """The final packing and its placements (``fallback.assemble``), and the kept-back tiles the
    board uses or the ledger names written (``journal.flush``), inside the stitch's transaction."""
    st = run.st
    st.placements = run.at.count
    t1 = time.perf_counter()
    packing, placements = assemble(run.at, run.packing, st)
    t2 = time.perf_counter()
    st.seconds["assemble"] = t2 - t1
    st.dropped = run.journal.flush({h for h, _t in placements})
    st.seconds["ledger"] += time.perf_counter() - t2
    return packing, placements


def stitch(
    packing: Packing,
    lib,
    stream: Stream,
    opts: StitchOptions = StitchOptions(),
    *,
    progress: Callable[[int, int, StitchStats], None] | None = None,
    index=None,
) -> StitchResult:
    """Assign every square a library tile (see the module doc): how, in one ``StitchOptions`` value
    (frozen; its defaults when none is given), taken whole by the run and its halves. ``index`` defaults to a fresh
    ``MemoryIndex`` of the library (pass ``SqlIndex(lib.conn)`` to query SQLite per square); a
    ``MemoryIndex`` passed in learns every tile the stitch makes, including those it does not keep
    (``journal.SqlJournal.flush``), so open a fresh one for the next stitch."""
    return run_stitch(open_run(packing, lib, stream, opts, index=index, progress=progress))


__all__ = [
    "Drain",
    "StitchError",
    "StitchOptions",
    "StitchResult",
    "StitchRun",
    "kept",
    "open_run",
    "run_stitch",
    "stitch",
]
