"""``referee.service.gather.Gathered``: reads asked together are one fetch; a read asked while a fetch
is in flight is answered by the next fetch, never by the one that started before it; a failed fetch
fails exactly the reads it carried; no thread: a plain call; a cancelled drainer leaves nobody waiting."""

from __future__ import annotations

import asyncio
import threading
from concurrent.futures import ThreadPoolExecutor

import pytest
from serve_support import board21_day

from referee.service.boards import DayBoard, load_manifest
from referee.service.gather import Gathered
from referee.service.runs import RunStore
from tilelib.errors import NotFound
from tilelib.store import Library


class Source:
    """A keyed table whose fetches are recorded; ``hold`` keeps a fetch in flight until released."""

    def __init__(self) -> None:
        self.table = {"a": 1, "b": 2, "c": 3}
        self.fetches: list[list[str]] = []
        self.hold = threading.Event()
        self.hold.set()
        self.entered = threading.Event()
        self.fail: Exception | None = None

    def fetch(self, keys):
        self.fetches.append(list(keys))
        self.entered.set()
        self.hold.wait(10)
        if self.fail is not None:
            raise self.fail
        return {k: self.table[k] for k in keys if k in self.table}


async def _until(event: threading.Event) -> None:
    for _ in range(1000):
        if event.is_set():
            return
        await asyncio.sleep(0.005)
    raise AssertionError("the fetch never started")


def test_reads_asked_together_are_one_fetch():
    src = Source()
    with ThreadPoolExecutor(1) as pool:
        g = Gathered(src.fetch, pool)

        async def go():
            return await asyncio.gather(*(g.get(k) for k in ("a", "b", "a", "zz", "c")))

        assert asyncio.run(go()) == [1, 2, 1, None, 3]
    assert src.fetches == [["a", "b", "zz", "c"]]


def test_a_read_asked_during_a_fetch_waits_for_the_next_one():
    src = Source()
    with ThreadPoolExecutor(1) as pool:
        g = Gathered(src.fetch, pool)

        async def go():
            src.hold.clear()
            first = asyncio.ensure_future(g.get("a"))
            await _until(src.entered)
            src.table["a"] = 10  # written after the first fetch read it
            later = [asyncio.ensure_future(g.get(k)) for k in ("a", "b")]
            await asyncio.sleep(0.05)
            assert not first.done() and not any(f.done() for f in later)
            src.hold.set()
            return await first, await asyncio.gather(*later)

        first, later = asyncio.run(go())
    # the first fetch's answer is the one it read; the later reads saw the write, in one fetch
    assert src.fetches == [["a"], ["a", "b"]]
    assert later == [10, 2] and first in (1, 10)


def test_a_failed_fetch_fails_the_reads_it_carried_and_no_others():
    src = Source()
    with ThreadPoolExecutor(1) as pool:
        g = Gathered(src.fetch, pool)

        async def go():
            src.fail = RuntimeError("database away")
            got = await asyncio.gather(g.get("a"), g.get("b"), return_exceptions=True)
            src.fail = None
            return got, await g.get("c")

        got, after = asyncio.run(go())
    assert [type(e) for e in got] == [RuntimeError, RuntimeError] and after == 3


def test_at_most_so_many_keys_a_fetch():
    src = Source()
    src.table = {str(i): i for i in range(7)}
    with ThreadPoolExecutor(1) as pool:
        g = Gathered(src.fetch, pool, most=3)

        async def go():
            return await asyncio.gather(*(g.get(str(i)) for i in range(7)))

        assert asyncio.run(go()) == list(range(7))
    assert [len(f) for f in src.fetches] == [3, 3, 1]


def test_no_thread_is_a_plain_call_per_read():
    src = Source()
    g = Gathered(src.fetch, None)

    async def go():
        return await asyncio.gather(g.get("a"), g.get("b"))

    assert asyncio.run(go()) == [1, 2] and src.fetches == [["a"], ["b"]]


def test_a_cancelled_drainer_leaves_nobody_waiting():
    src = Source()
    with ThreadPoolExecutor(1) as pool:
        g = Gathered(src.fetch, pool)

        async def go():
            src.hold.clear()
            reads = [asyncio.ensure_future(g.get(k)) for k in ("a", "b")]
            await _until(src.entered)
            more = asyncio.ensure_future(g.get("c"))
            await asyncio.sleep(0)
            assert g._drainer is not None
            g._drainer.cancel()
            await asyncio.sleep(0.05)
            src.hold.set()
            return await asyncio.gather(*reads, more, return_exceptions=True)

        got = asyncio.run(go())
    assert all(isinstance(e, asyncio.CancelledError) for e in got)


@pytest.fixture(scope="module")
def day21(tmp_path_factory):
    fx, _d, manifest, truth = board21_day(tmp_path_factory, "gather21")
    return fx.lib_path, load_manifest(manifest), truth


def test_the_stores_gathered_reads_are_its_own_reads(day21, runs_target):
    """On both backends: ``RunStore.current`` of many runs at once (one gathered read over
    PostgreSQL) gives each run's state as ``get`` does, sees a batch of moves at once, and an
    unknown run is NotFound."""
    lib_path, m, truth = day21
    with Library.open(lib_path) as lib:
        store = RunStore(runs_target, {m.day: DayBoard.load(m, lib, runs_target)})
    try:
        made = [store.create(m.day, f"p{i}") for i in range(5)]
        st, token = made[0]
        seed = min(st.frontier)
        store.submit(st.run, token, [{"tile": seed, "cells": truth.truth(seed)}], None)

        async def go():
            return await asyncio.gather(*(store.current(s.run) for s, _ in made))

        got = asyncio.run(go())
        assert [g.run for g in got] == [s.run for s, _ in made]
        assert got[0].solved == {seed} and got[0].moves == 1 and all(not g.solved for g in got[1:])
        for g in got:
            again = store.get(g.run)
            assert (again.solved, again.frontier, again.reward, again.moves) == (
                g.solved,
                g.frontier,
                g.reward,
                g.moves,
            )
        with pytest.raises(NotFound):
            asyncio.run(store.current("r-none"))
    finally:
        store.close()
