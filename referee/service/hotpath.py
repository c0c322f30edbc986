"""The two reads a player sends most — ``GET /api/v1/runs/{run}/frontier`` and
``GET /api/v1/runs/{run}/tiles/{tile}``, 96% of a playing client's requests — answered ahead of
FastAPI's routing, with the same answers.

Why: a tile view cost ~310 us of server CPU in process, of which the handler was ~60 us; the rest was
FastAPI's and Starlette's layers (exception middlewares, the included router's match, dependency
solving, the response's re-validation). One worker's moves per second are bound by that CPU
(DECISIONS 0036). This is the same handler (``play.frontier``, ``play.tile``: the store's read, the
``asked`` count) and the same serializer (the route's response model, pydantic's ``dump_json``), so
the body, status and headers are byte for byte FastAPI's; ``tests/test_serve_hotpath.py`` sends the
same requests both ways and compares them.

Only a request that is plainly well formed takes this path: ``GET``, the path exactly as the route
declares it (no trailing slash), a run id of at most 64 characters and a tile id of plain decimal
digits within ``models.MAX_TILE_ID``. Everything else — another method (405), an over-long id or a
tile like ``-1`` or ``1e3`` (400), a trailing slash (307) — goes on to FastAPI, which answers it as
the OpenAPI document says. The routes themselves stay declared there, so ``/openapi.json`` does not
change. It sits inside ``security.SecurityHeaders`` and ``observe.Observe``: its answers carry the
same headers and are counted, timed and logged as every other.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable

from pydantic import TypeAdapter
from starlette.responses import Response

from referee.service import models as m
from referee.service import play
from referee.service.deps import API, error_answer, tiles_error_answer
from referee.service.runs import RunStore
from tilelib.errors import TilesError

# the route templates of routes_runs under deps.API, as FastAPI matches them ({run}: one path segment)
_FRONTIER = re.compile(re.escape(API) + r"/runs/([^/]{1,64})/frontier")
_TILE = re.compile(re.escape(API) + r"/runs/([^/]{1,64})/tiles/([0-9]{1,7})")
_FRONTIER_JSON = TypeAdapter(m.Frontier)
_TILE_JSON = TypeAdapter(m.TileView)


Answer = Callable[[RunStore], Awaitable[bytes]]


def route(path: str) -> Answer | None:
    """What answers ``path`` (a coroutine function of the store giving the body), or None when the
    request is for FastAPI (module doc)."""
    hit = _TILE.fullmatch(path)
    if hit is not None:
        run, tile = hit.group(1), int(hit.group(2))
        if tile > m.MAX_TILE_ID:
            return None

        async def tile_view(st: RunStore) -> bytes:
            return _TILE_JSON.dump_json(_TILE_JSON.validate_python(await play.tile(st, run, tile)))

        return tile_view
    hit = _FRONTIER.fullmatch(path)
    if hit is not None:
        run = hit.group(1)

        async def frontier(st: RunStore) -> bytes:
            return _FRONTIER_JSON.dump_json(_FRONTIER_JSON.validate_python(await play.frontier(st, run)))

        return frontier
    return None


class HotReads:
    """ASGI: the hot reads answered here (module doc), every other request passed to ``app``.
    ``store`` gives the app's store (``app.state.store``, read per request: tests swap it)."""

    def __init__(self, app, store: Callable[[], RunStore]) -> None:
        self.app, self.store = app, store

    async def __call__(self, scope, receive, send) -> None:
        respond = route(scope["path"]) if scope["type"] == "http" and scope["method"] == "GET" else None
        if respond is None:
            await self.app(scope, receive, send)
            return
        try:
            answer = Response(await respond(self.store()), media_type="application/json")
        except TilesError as err:
            answer = tiles_error_answer(err)
        except Exception as err:
            # a bug, not a client error: the app's own 500 line, then raised for the server's log as
            # Starlette's error middleware does
            await error_answer(500, f"internal error: {type(err).__name__}")(scope, receive, send)
            raise
        await answer(scope, receive, send)
