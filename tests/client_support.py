"""Both clients behind one face, so every client test runs on each (``players.client``'s ``Client``
and ``AsyncClient``; the ``make_client`` fixture of conftest.py): ``AwaitedClient`` drives an ``AsyncClient`` from
plain test code on an event
loop of its own, awaiting each call, so a test written against ``Client`` runs unchanged."""

from __future__ import annotations

import asyncio
import inspect

from players.client import AsyncClient


class AwaitedClient:
    """An ``AsyncClient`` whose methods are called as ``Client``'s are: each coroutine is run to its
    end on this object's own loop; attributes (``tokens``, ``requests``, ``waited``, ``http``) pass
    through."""

    def __init__(self, *args, **kw) -> None:
        self.loop = asyncio.new_event_loop()
        self.inner = AsyncClient(*args, **kw)

    def __getattr__(self, name: str):
        attr = getattr(self.inner, name)
        if not callable(attr):
            return attr

        def call(*args, **kw):
            out = attr(*args, **kw)
            return self.loop.run_until_complete(out) if inspect.isawaitable(out) else out

        return call

    def close(self) -> None:
        self.loop.run_until_complete(self.inner.close())
        self.loop.close()

    def __enter__(self) -> AwaitedClient:
        return self

    def __exit__(self, *exc) -> None:
        self.close()
