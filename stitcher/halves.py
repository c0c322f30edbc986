"""The halves of a big board (``regions``) stitched: the strip here (``place_strip``), each half in
a forked worker (``fork_halves``), their results grafted left then right and the left-over squares
last (``take_halves``). ``stitcher.stitch`` runs the three, the first and last each in a
transaction, the workers between them with none open.

A half's worker runs the same ``StitchRun`` passes as a whole board over its own squares, with the
run switched to a half (``StitchRun.as_half``: its library writes logged in a
``journal.LogJournal``, its splits left to the parent) and sends back a ``HalfResult`` of plain
data; ``graft`` takes it into the parent's library, index, ledger and ``Placements``.
"""

from __future__ import annotations

import multiprocessing
import time
from dataclasses import dataclass, field

from stitcher.journal import LogJournal, replay
from stitcher.regions import REGIONS
from stitcher.run import StitchRun
from stitcher.stats import StitchStats
from tilelib.heap import release


@dataclass
class HalfResult:
    """What a half sends back to the parent: plain, picklable data."""

    placed: list[tuple[int, str, int, tuple]] = field(default_factory=list)  # (i, hash, t, edges), in seq order
    tiles: list = field(default_factory=list)  # the Tiles it made, in order
    ops: list = field(default_factory=list)  # LogJournal.ops
    left_over: list[int] = field(default_factory=list)  # squares the half would have split
    stats: StitchStats | None = None  # the half's counters (run_half always sends them)
    first_area: int = 0
    cpu_s: float = 0.0  # the worker's CPU time for this half


_RUN: StitchRun | None = None  # the parent's run, inherited by the forked workers


def _half(r: int) -> HalfResult:
    assert _RUN is not None  # run_halves sets it before the workers fork
    return run_half(_RUN, r)


def run_halves(run: StitchRun, workers: int) -> list[HalfResult]:
    """Each half's result, left then right: in forked processes, ``workers`` at a time."""
    global _RUN
    _RUN = run
    # the parent's page cache (the halves read through their own connections) and the C heap's free
    # pages, given back before the fork: otherwise each half inherits them (a 1M-library night: all
    # processes' peak 986 -> 884 MB, and 717 -> 682 MB with the page cache)
    release(run.conn)
    ctx = multiprocessing.get_context("fork")
    try:
        with ctx.Pool(processes=max(1, min(workers, len(REGIONS))), maxtasksperchild=1) as pool:
            return pool.map(_half, range(len(REGIONS)), chunksize=1)
    finally:
        _RUN = None


def place_strip(run: StitchRun, area: dict) -> int:
    """The seed and the strip, in this process; the tiles the ledger names so far written, so
    that the commit that follows (which the workers read) never leaves a ledger row naming a
    missing tile. Returns the area placed at the squares' first turn (as ``StitchRun.place_all``)."""
    sp = run.halves
    assert sp is not None  # stitch places a strip only on a board split in halves
    run.enter(run.stream.child("strip"))
    first_area = run.place_all([run.seed] + [i for i in sp.strip if i != run.seed], area)
    run.pin(sp.strip)
    run.journal.write_named()
    return first_area


def fork_halves(run: StitchRun) -> list[HalfResult]:
    """The two halves in forked workers (``run.opts.workers`` at a time), timed into the stats.
    No transaction may be open: the workers read the library as it was last committed."""
    t0 = time.perf_counter()
    results = run_halves(run, run.opts.workers)
    run.st.seconds["halves"] = time.perf_counter() - t0
    for r, res in enumerate(results):
        run.st.seconds[f"half{r}_cpu"] = res.cpu_s
    return results


def take_halves(run: StitchRun, results: list[HalfResult], area: dict) -> int:
    """The halves' results grafted left then right, then the squares they left over (or that
    clashed) placed here. Returns the area the halves placed at their squares' first turn."""
    clashed, first_area = [], 0
    for res in results:
        clashed += graft(run, res)
        first_area += res.first_area
    run.pin(())
    run.reread_nofits()  # now with the halves' nofits, replayed into the ledger
    run.enter(run.stream.child("rest"))
    left_over = frozenset([i for res in results for i in res.left_over] + clashed)
    run.count_from(run.progress_total - len(left_over), run.progress_total)
    return first_area + run.place_all([i for i in run.order if i in left_over], area, left_over)


def run_half(run: StitchRun, r: int) -> HalfResult:
    """In a forked worker: stitch half r alone, writing nothing; return what the parent needs.
    The strip is fixed (no repair takes it off); a square the half would split is left over."""
    cpu0 = time.process_time()
    journal = LogJournal(run.lib.path, inherited=run.journal.pending)
    run.as_half(journal)
    run.enter(run.stream.child(f"region/{r}"))
    if run.fresh is not None:
        run.fresh.reserve(r)
    at = run.at
    assert run.halves is not None  # the workers run only on a board split in halves
    order = [i for i in run.halves.halves[r] if not at.placed(i)]  # not the seed
    run.count_from(0, len(order))
    first_area = run.place_all(order, area={i: at.squares[i][2] ** 2 for i in order})
    out = HalfResult(
        placed=at.held(order),
        tiles=journal.tiles,
        ops=journal.ops,
        left_over=run.left_over,
        stats=run.st,
        first_area=first_area,
        cpu_s=time.process_time() - cpu0,
    )
    journal.close()
    return out


def graft(run: StitchRun, res: HalfResult) -> list[int]:
    """Take a half's result: its tiles into the library and the index, its ledger rows, its
    placements on the board (in its placement order), its counters. Returns the squares whose
    placement clashed with one already on the board (the fair rule), left unplaced."""
    t0 = time.perf_counter()
    hashes = run.journal.insert_all(res.tiles)
    run.st.seconds["ledger"] += time.perf_counter() - t0
    run.learn_all(list(zip(hashes, res.tiles, strict=True)))
    t0 = time.perf_counter()
    replay(res.ops, run.journal)
    run.st.seconds["ledger"] += time.perf_counter() - t0
    assert res.stats is not None  # run_half sends its stats
    run.st.merge(res.stats)
    clashed = []
    for k, h, t, edges in res.placed:
        if run.fresh is not None and run.fresh.clashes(run.at.n(k), h):
            clashed.append(k)
            run.st.bump(run.at.n(k), "clashed")
            continue
        run.at.put(k, h, t, edges)
    return clashed
