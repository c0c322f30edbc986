"""Keyed reads from the event loop gathered into one query on a thread of their own.

Every frontier and tile view reads its run's row (``RUN_ROW``: has another worker moved it on?). Over
PostgreSQL that read is a round trip; made on the event loop it stopped every other request for
that long (29% of the loop's time in a profile of one worker at 256 players), and sent to a thread
alone it cost a hop per read. ``Gathered`` does neither: a read asked while another is in flight
waits for the next one, and that one reads every key asked meanwhile in one query, on one thread
with its own connection, while the loop serves other requests. A read starts after it was asked,
so a client that has had its moves' answer always reads them (read-your-writes, across workers too).

Over SQLite (no thread: ``pool`` None) the read is a local call on the loop's thread, as before.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Hashable, Sequence
from concurrent.futures import Executor
from typing import Any

MOST = 500  # keys in one query (SQLite's and PostgreSQL's limits on parameters are far above it)


class Gathered:
    """``await get(key)``: ``fetch([key, ...])[key]`` (None when absent), reads gathered (module
    doc). ``fetch`` takes the keys and answers a dict of those it found; it runs on ``pool``, or on
    the caller's thread when ``pool`` is None. A failed fetch fails every read it carried."""

    def __init__(self, fetch: Callable[[Sequence[Hashable]], dict], pool: Executor | None, most: int = MOST) -> None:
        self.fetch, self.pool, self.most = fetch, pool, most
        self._waiting: dict[Hashable, list[asyncio.Future]] = {}
        self._drainer: asyncio.Task | None = None

    async def get(self, key: Hashable) -> Any:
        if self.pool is None:
            return self.fetch([key]).get(key)
        loop = asyncio.get_running_loop()
        fut = loop.create_future()
        self._waiting.setdefault(key, []).append(fut)
        if self._drainer is None:
            self._drainer = loop.create_task(self._drain())
        return await fut

    async def _drain(self) -> None:
        """Fetch what is waiting, in rounds of at most ``most`` keys, until nothing is."""
        batch: dict[Hashable, list[asyncio.Future]] = {}
        try:
            while self._waiting:
                keys = list(self._waiting)[: self.most]
                batch = {k: self._waiting.pop(k) for k in keys}
                try:
                    rows = await asyncio.get_running_loop().run_in_executor(self.pool, self.fetch, keys)
                except Exception as err:  # noqa: BLE001 - every read it carried fails with it
                    _settle(batch, _failing(err))
                else:
                    _settle(batch, _answering(rows))
                batch = {}
        finally:  # cancelled (the service stopping): nobody is left waiting for an answer
            self._drainer = None
            _settle(batch, lambda f, _k: f.cancel())
            if self._waiting:
                waiting, self._waiting = self._waiting, {}
                _settle(waiting, lambda f, _k: f.cancel())


def _failing(err: Exception) -> Callable[[asyncio.Future, Hashable], Any]:
    return lambda f, _key: f.set_exception(err)


def _answering(rows: dict) -> Callable[[asyncio.Future, Hashable], Any]:
    return lambda f, key: f.set_result(rows.get(key))


def _settle(batch: dict[Hashable, list[asyncio.Future]], how: Callable[[asyncio.Future, Hashable], Any]) -> None:
    """``how(future, key)`` for each future of ``batch`` still waiting (a request gone is done)."""
    for key, futures in batch.items():
        for f in futures:
            if not f.done():
                how(f, key)
