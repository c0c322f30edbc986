"""The last joint repair takes the second ring off too (``stitcher.repair.second_ring``).

A square's neighbours, taken off, can still be pinned by their own neighbours; the last attempt
before a fallback frees those as well. Which squares join it is plain data: the placed, movable
squares exactly two seam steps away, most recently placed first, at most RING2.
"""

from __future__ import annotations

from contextlib import nullcontext
from types import SimpleNamespace

from stitcher import repair
from stitcher.placements import Placements
from stitcher.repair import RING2, second_ring


class _At:
    """Plain data under the real ``Placements`` queries a repair asks (no board, no packing)."""

    placed, turn, n, movable_neighbours = (
        Placements.placed,
        Placements.turn,
        Placements.n,
        Placements.movable_neighbours,
    )

    def __init__(self, adj: dict, placed: set, order: dict) -> None:
        k = 1 + max(max(adj), *(j for js in adj.values() for j in js))
        self.adj = [adj.get(i, []) for i in range(k)]
        self._tiles = [("t", 0) if i in placed else None for i in range(k)]
        self._turn = dict(order)
        self.squares = [(0, 0, 5)] * k


def _run(adj: dict, placed: set, fixed: set, order: dict) -> SimpleNamespace:
    return SimpleNamespace(at=_At(adj, placed, order), fixed=frozenset(fixed))


def test_the_ring_is_two_steps_out_placed_movable_and_newest_first():
    # 0 is the square; 1, 2 its neighbours; 3..7 theirs; 8 is three steps out.
    adj = {0: [1, 2], 1: [0, 3, 4, 2], 2: [0, 1, 5, 6, 7], 3: [1, 8], 4: [1], 5: [2], 6: [2], 7: [2]}
    placed = {1, 2, 3, 4, 5, 6, 8}  # 7 is open
    run = _run(adj, placed, fixed={5}, order={3: 10, 4: 30, 6: 20, 8: 99})
    ring = second_ring(run, 0, [1, 2])
    assert ring == [4, 6, 3]  # 5 fixed, 7 open, 8 too far, 0/1/2 inside
    assert 0 not in ring and 1 not in ring and 2 not in ring


def test_the_ring_is_capped_and_ties_are_broken_by_index():
    far = list(range(2, 2 + RING2 + 5))
    adj = {0: [1], 1: [0, *far]}
    run = _run(adj, placed={1, *far}, fixed=set(), order={})
    ring = second_ring(run, 0, [1])
    assert ring == far[:RING2]  # no order known: lowest index first, RING2 of them


def test_the_wide_attempt_comes_last_and_only_when_it_adds_squares(monkeypatch):
    """repair tries the wide set after every narrower one, and counts it as repaired_wide."""
    adj = {0: [1], 1: [0, 2], 2: [1]}
    calls = []

    def together(run, i, ks, keep=True):
        calls.append((list(ks), keep))
        return ks == [1, 2]

    monkeypatch.setattr(repair, "repair_with", lambda run, i, ks: False)
    monkeypatch.setattr(repair, "repair_together", together)
    bumps = []
    run = _run(adj, placed={1, 2}, fixed=set(), order={1: 1, 2: 2})
    run.fresh = object()  # a fair stitch
    run.draining = nullcontext
    run.st = SimpleNamespace(bump=lambda n, key: bumps.append(key))
    assert repair.repair(run, 0)
    assert calls == [([1], True), ([1], False), ([1, 2], False)]
    assert bumps == ["repaired", "repaired_together", "repaired_wide"]

    calls.clear()
    run.fresh = None  # --reuse any: the stitch before the rule, no wide set
    assert not repair.repair(run, 0)
    assert calls == [([1], True), ([1], False)]

    bumps.clear()  # a narrow repair that works is never counted wide
    monkeypatch.setattr(repair, "repair_together", lambda run, i, ks, keep=True: not keep)
    for fresh in (None, object()):
        run.fresh = fresh
        assert repair.repair(run, 0)
    assert bumps == ["repaired", "repaired_together"] * 2
