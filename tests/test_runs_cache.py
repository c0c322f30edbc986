"""What a worker holds of its runs is bounded by what is active (``RunCache``): quiet runs and the
least recently used past a count are dropped, and a dropped run read again is exactly the run the
database holds — the same score, frontier and solved tiles, and its next moves are judged as if it
had never left."""

from __future__ import annotations

import time

import pytest
from serve_support import board21_day

from players import agents
from players.sessions import LocalSession
from referee.service.boards import DayBoard, load_manifest
from referee.service.runs import RunCache, RunState, RunStore
from tilelib.store import Library


def _state(run: str) -> RunState:
    return RunState(run, "2026-01-01", None, None, 0, set(), set(), 0, 0)


def test_the_least_recently_used_go_first_past_the_count():
    cache = RunCache(idle=3600, most=3)
    for k in range(3):
        cache.put(_state(f"r{k}"))
    assert cache.get("r0") is not None  # r0 used: r1 is now the oldest
    cache.put(_state("r3"))
    assert len(cache) == 3 and cache.get("r1") is None
    assert all(cache.get(r) is not None for r in ("r0", "r2", "r3"))
    cache.drop("r2")
    cache.drop("r2")  # dropping twice is harmless
    assert len(cache) == 2 and cache.get("r2") is None


def test_quiet_runs_are_dropped():
    cache = RunCache(idle=0.05, most=100)
    cache.put(_state("old"))
    time.sleep(0.1)
    cache.put(_state("new"))
    assert cache.get("old") is None and cache.get("new") is not None and len(cache) == 1


@pytest.fixture(scope="module")
def day21(tmp_path_factory):
    fx, _d, manifest, truth = board21_day(tmp_path_factory, "cache21")
    return fx.lib_path, load_manifest(manifest), truth


def test_a_store_holds_at_most_its_count_and_a_dropped_run_comes_back_whole(day21, runs_target):
    lib_path, m, truth = day21
    with Library.open(lib_path) as lib:
        store = RunStore(runs_target, {m.day: DayBoard.load(m, lib, runs_target)})
    store._runs = RunCache(idle=3600, most=2)
    try:
        sessions = [LocalSession(store, m.day, f"p{k}", 2) for k in range(5)]
        assert len(store._runs) == 2
        first = sessions[0]
        assert store._runs.get(first.run) is None  # dropped by the four made after it
        seed = first.frontier()[0]
        (v,) = first.submit([(seed, truth.truth(seed))])
        assert v.correct
        before = store.score(store.get(first.run))
        for s in sessions[1:]:
            store.score(store.get(s.run))  # four other runs used: the first is dropped again
        assert store._runs.get(first.run) is None
        back = store.get(first.run)
        assert store.score(back) == before and back.solved == {seed} and seed not in back.frontier
        (again,) = first.submit([(seed, truth.truth(seed))])  # the solved seed scores nothing twice
        assert not again.correct and again.reward == 0
        agents.play("solver", first)  # play on from the database's state
        full = sum((s + 1) ** 2 for _x, _y, s in m.packing.squares)
        assert store.score(store.get(first.run))["reward"] == full
        assert len(store._runs) <= 2
    finally:
        store.close()
