"""Candidate choice (FORMAT §8): prefer orientations pinned by the sides known at the square's turn.

Given the sorted candidates of a lookup and their pin bitmaps, the preferred
pool is the candidates whose bitmap has bit ``known`` set — every
alternative of the oriented tile differs from the solution on a side that a
frontier solve already knows when it reaches this square (m = 1 tiles always
qualify); the rest form the second pool. Candidates are drawn from the
stream without replacement, preferred pool first, and the first one that
passes ``check`` (the stitcher's forward check: no unplaced neighbour is left
with a side that no valid line can complete) is taken; at most ``tries`` are
checked. If none passes, the first drawn is taken anyway (flagged), so a
library hit is never thrown away. The same seed and library give the same
placements.

``index.MemoryIndex.choose`` runs this same loop in C (``stitcher._core.choose``:
same pools, same partial Fisher–Yates, same bytes of the same stream) when the
check is a C ``Checker`` or none; ``choose`` here stays the reference and runs
for Python checks and for the SQL index.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from tilelib.rng import Stream

TRIES = 16
SMALL = 64  # up to this many candidates, the pools are built as Python lists (same order)


def draws(pool: list[int] | np.ndarray, stream: Stream, limit: int):
    """Up to ``limit`` elements of ``pool`` in a seeded random order (partial Fisher–Yates)."""
    m = len(pool)
    moved: dict[int, int] = {}  # sparse swaps: position -> index now there
    for k in range(min(limit, m)):
        j = k + stream.randbelow(m - k)
        vj, vk = moved.get(j, j), moved.get(k, k)
        moved[j] = vk
        yield int(pool[vj])


def choose(
    keys,
    pins: np.ndarray,
    known: int,
    stream: Stream,
    check: Callable[[object], int] | None = None,
    tries: int = TRIES,
    best_of: int = 1,
):
    """(key, preferred?, passed check?) or None when there is no candidate.

    ``check(key)`` returns a score, 0 = fails. With ``best_of`` = k > 1, the first k passing
    candidates of the first pool that has any are scored and the highest wins (ties: first drawn).
    """
    if tries < 1:
        raise ValueError("tries must be >= 1")  # as the C twin says (with none, nothing would be drawn)
    if len(keys) == 0:
        return None
    pools: tuple[list[int] | np.ndarray, list[int] | np.ndarray]  # (preferred, the rest)
    if len(keys) <= SMALL:  # plain lists: a few numpy calls cost more than the loop
        pinned = [(p >> known) & 1 for p in pins.tolist()]
        pools = ([k for k, b in enumerate(pinned) if b], [k for k, b in enumerate(pinned) if not b])
    else:
        bit = (pins >> known) & 1
        pools = (np.flatnonzero(bit), np.flatnonzero(bit == 0))
    first = None
    budget = tries
    for pool, preferred in ((pools[0], True), (pools[1], False)):
        if budget <= 0 or len(pool) == 0:
            continue
        best, best_score, passed = None, 0, 0
        for pos in draws(pool, stream, budget):
            budget -= 1
            key = keys[pos]
            if first is None:
                first = (key, preferred)
            if check is None:
                return key, preferred, True
            sc = check(key)
            if sc > 0:
                passed += 1
                if sc > best_score:
                    best, best_score = key, sc
                if passed >= best_of:
                    break
        if best is not None:
            return best, preferred, True
    assert first is not None  # some pool had candidates and tries >= 1: one was drawn
    return first[0], first[1], False
