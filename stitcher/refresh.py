"""Refreshing the library outside the nightly build: the misses table is
the generator's to-do list. ``misses_summary`` says what is open; ``drain_open`` drains it.

``drain_open`` takes the open misses oldest first. Misses that contain a known nofit constraint are
settled without solving (``NofitSet``); the others are solved by ``stitcher.drain.generate`` —
CP-SAT completion of the exact boundary, thinned with seam_mask = the fixed sides — each from its
own stream ``Stream(seed, "refresh").child(<miss id>)``, so the tiles made depend only on (seed,
misses) and not on ``workers``: workers solve in parallel, the parent applies the results in miss
order. ``on_batch`` is called after every ``batch`` misses have been written (the CLI pushes there,
so a long daytime drain publishes as it goes and a crash loses at most one batch).
"""

from __future__ import annotations

import multiprocessing
import time
from collections.abc import Callable

from stitcher.drain import DrainStats, NofitSet, apply_result, generate
from tilelib import ledger
from tilelib.errors import BadInput
from tilelib.rng import Stream

STREAM_LABEL = "refresh"
SIDES = ("top", "right", "bottom", "left")


def misses_summary(conn) -> list[dict]:
    """Open misses grouped by n and by which sides are fixed (wholly or partly), with counts:
    [{"n", "sides", "open", "asked"}], most asked first."""
    rows = conn.execute(
        "SELECT n, side_mask, count(*), sum(count) FROM misses WHERE nofit = 0 AND tile IS NULL "
        "GROUP BY n, side_mask ORDER BY sum(count) DESC, n, side_mask"
    ).fetchall()
    return [
        {
            "n": n,
            "sides": "+".join(s for i, s in enumerate(SIDES) if mask >> i & 1) or "none",
            "open": k,
            "asked": int(asked),
        }
        for n, mask, k, asked in rows
    ]


def _solve(job: tuple) -> tuple[int, str, object]:
    miss_id, c, m_max, seed = job
    kind, tile = generate(c, c.full_mask, m_max, Stream(seed, STREAM_LABEL).child(str(miss_id)))
    return miss_id, kind, tile


def drain_open(
    lib,
    seed: bytes,
    *,
    limit: int | None = None,
    workers: int = 1,
    m_max: int | None = None,
    batch: int = 200,
    on_batch: Callable[[DrainStats], None] | None = None,
) -> DrainStats:
    """Drain up to ``limit`` open misses; see the module docstring."""
    if workers < 1:
        raise BadInput(f"--workers must be at least 1, got {workers}")
    if limit is not None and limit < 1:
        raise BadInput(f"--limit must be at least 1, got {limit}")
    rep = DrainStats()
    t0 = time.perf_counter()
    nofits = NofitSet(lib.conn)
    todo = []
    for miss in ledger.open_misses(lib.conn, limit=limit):
        if nofits.settled(miss.constraint):
            ledger.mark_nofit(lib.conn, miss.id)
            rep.settled += 1
        else:
            todo.append((miss.id, miss.constraint, m_max, seed))
    pool = multiprocessing.get_context("fork").Pool(workers) if workers > 1 and len(todo) > 1 else None
    try:
        results = pool.imap(_solve, todo, chunksize=1) if pool else map(_solve, todo)
        done = 0
        for miss_id, kind, tile in results:
            rep.cp_calls += 1  # one generate() per miss, as drain_misses counts
            apply_result(lib, miss_id, kind, tile, rep)
            done += 1
            if on_batch is not None and done % batch == 0:
                rep.seconds = time.perf_counter() - t0
                on_batch(rep)
    finally:
        if pool is not None:
            pool.terminate()
    rep.seconds = time.perf_counter() - t0
    return rep


__all__ = ["drain_open", "misses_summary"]
