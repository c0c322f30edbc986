"""Two halves of a big board stitched at once, the same board whatever runs them.

The design notes' antichains, made coarse: squares whose cells do not touch
can be stitched independently. A pitch column ``c`` near the middle splits the
squares of a packing into

* the **left** half (every cell left of column c), the **right** half (every
  cell right of it) — no left square shares a cell with a right square — and
* the **strip**: the squares that cross column c.

Each half is stitched (lookups, drain, repair) by the same code as a whole
board, in a forked process that sees the board, the index and the library as
they were when the stitch began plus its own placements and tiles: never the
other half's. Its library writes go to a ``journal.LogJournal``. A square a half
would have to split (fallback) is left for the strip pass, which sees
everything. The parent then replays the left half's results and then the right
half's (tiles into the library and the index, ledger rows, placements), and
stitches the strip and the left-over squares in placement order, one process.

Under the fair rule (``stitcher.fresh``) half r sees only the library solutions of its parity
and, at graft, a placement whose solution the board already holds (both halves made the same
grid) is not taken: the square is left over too (``clashed``).

So the board depends on the seed, the library and this rule, and not on how many
processes ran the halves (``workers``): 1 runs them one after the other, 2 at
once. Each half draws from its own stream (``stitch/…/region/<r>``), the strip
from ``…/strip``; boards smaller than ``MIN_G`` are stitched whole, as before.
"""

from __future__ import annotations

import multiprocessing
import os
import time
from typing import TYPE_CHECKING
from dataclasses import dataclass, field

from stitcher.drain import NofitSet
from stitcher.journal import LogJournal, replay
from stitcher.stats import StitchStats

if TYPE_CHECKING:     # the run imports this module; the type is only for readers and checkers
    from stitcher.stitch import StitchRun

MIN_G = 200          # smaller boards: one pass (the strip would be a large share of the work)
REGIONS = ("left", "right")


@dataclass(frozen=True)
class Split:
    """Square ids per half (in placement order) and the strip's, and the column that split them."""

    column: int
    halves: tuple[list[int], list[int]]
    strip: list[int]


def split(squares, seed: int, P: int, order: list[int]) -> Split:
    """The halves and the strip of a packing (see the module doc); the seed is never on the strip."""
    c = P // 2
    x, _y, s = squares[seed]
    if x <= c < x + s:
        c = x - 1 if x - 1 >= P // 4 else x + s
    left, right, strip = [], [], []
    for i in order:
        xi, _yi, si = squares[i]
        (left if xi + si <= c else right if xi > c else strip).append(i)
    return Split(c, (left, right), strip)


@dataclass
class HalfResult:
    """What a half sends back to the parent: plain, picklable data."""

    placed: list[tuple[int, str, int, tuple]] = field(default_factory=list)  # (i, hash, t, edges), in seq order
    tiles: list = field(default_factory=list)          # the Tiles it made, in order
    ops: list = field(default_factory=list)            # LogJournal.ops
    left_over: list[int] = field(default_factory=list)  # squares the half would have split
    stats: object = None
    first_area: int = 0
    cpu_s: float = 0.0                                 # the worker's CPU time for this half


def default_workers() -> int:
    """Processes for the halves: two where the machine has two cores (more would idle)."""
    return max(1, min(len(REGIONS), os.cpu_count() or 1))


_RUN = None     # the parent's run, inherited by the forked workers


def _half(r: int) -> HalfResult:
    return run_half(_RUN, r)


def run_halves(run: StitchRun, workers: int) -> list[HalfResult]:
    """Each half's result, left then right: in forked processes, ``workers`` at a time."""
    global _RUN
    _RUN = run
    ctx = multiprocessing.get_context("fork")
    try:
        with ctx.Pool(processes=max(1, min(workers, len(REGIONS))), maxtasksperchild=1) as pool:
            return pool.map(_half, range(len(REGIONS)), chunksize=1)
    finally:
        _RUN = None


def strip_then_halves(run: StitchRun, area: dict) -> int:
    """The seed and the strip in this process, then the two halves in forked workers, their
    results taken left then right, then the squares they left over here. Returns the area placed
    at the squares' first turn (as ``StitchRun.place_all``)."""
    sp = run.halves
    run.enter(run.stream.child("strip"))
    first_area = run.place_all([run.seed] + [i for i in sp.strip if i != run.seed], area)
    run.fixed = frozenset(k for k in [run.seed] + sp.strip if run.placements[k] is not None)
    run.journal.write_named()      # the ledger rows committed next name only written tiles
    run.lib.conn.commit()          # the workers read the library as it is now
    t0 = time.perf_counter()
    results = run_halves(run, run.opts.workers)
    run.st.seconds["halves"] = time.perf_counter() - t0
    for r, res in enumerate(results):
        run.st.seconds[f"half{r}_cpu"] = res.cpu_s
    clashed = []
    for res in results:
        clashed += graft(run, res)
        first_area += res.first_area
    run.fixed = frozenset({run.seed})
    run.nofits = NofitSet(run.conn)   # now with the halves' nofits, replayed into the ledger
    run.enter(run.stream.child("rest"))
    left_over = frozenset([i for res in results for i in res.left_over] + clashed)
    run.done = run.progress_total - len(left_over)
    return first_area + run.place_all([i for i in run.order if i in left_over], area, left_over)


def run_half(run: StitchRun, r: int) -> HalfResult:
    """In a forked worker: stitch half r alone, writing nothing; return what the parent needs.
    The strip is fixed (no repair takes it off); a square the half would split is left over."""
    cpu0 = time.process_time()
    journal = LogJournal(run.lib.path, inherited=run.journal.pending)
    run.journal, run.nofits, run.defer_splits = journal, NofitSet(journal.conn), True
    run.conn = None                 # the parent's connection is not ours to use
    run.enter(run.stream.child(f"region/{r}"))
    run.st = StitchStats(seconds={"drain": 0.0, "ledger": 0.0, "index_add": 0.0})
    if run.fresh is not None:
        run.fresh.reserve(r)
    order = [i for i in run.halves.halves[r] if run.placements[i] is None]   # not the seed
    run.done, run.progress_total = 0, len(order)   # each half's progress lines count its own squares
    first_area = run.place_all(order, area={i: run.squares[i][2] ** 2 for i in order})
    placed = sorted((k for k in order if run.placements[k] is not None), key=run.order_of.__getitem__)
    out = HalfResult(placed=[(k, *run.placements[k], run.edges_of[k]) for k in placed], tiles=journal.tiles,
                     ops=journal.ops, left_over=run.left_over, stats=run.st, first_area=first_area,
                     cpu_s=time.process_time() - cpu0)
    journal.close()
    return out


def graft(run: StitchRun, res: HalfResult) -> list[int]:
    """Take a half's result: its tiles into the library and the index, its ledger rows, its
    placements on the board (in its placement order), its counters. Returns the squares whose
    placement clashed with one already on the board (the fair rule), left unplaced."""
    t0 = time.perf_counter()
    hashes = run.journal.insert_all(res.tiles)
    run.st.seconds["ledger"] += time.perf_counter() - t0
    run.learn_all(list(zip(hashes, res.tiles)))
    t0 = time.perf_counter()
    replay(res.ops, run.journal)
    run.st.seconds["ledger"] += time.perf_counter() - t0
    res.stats.placements = 0          # each placement taken is counted by ``put``
    run.st.merge(res.stats)
    clashed = []
    for (k, h, t, edges) in res.placed:
        if run.fresh is not None and run.fresh.clashes(h):
            clashed.append(k)
            run.st.bump(run.squares[k][2] + 1, "clashed")
            continue
        run.put(k, h, t, edges)
    return clashed
