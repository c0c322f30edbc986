"""The two reads a player sends most — ``GET /api/v1/runs/{run}/frontier`` and
``GET /api/v1/runs/{run}/tiles/{tile}``, 96% of a playing client's requests — answered ahead of
FastAPI's routing, with the same answers.

Why: a tile view cost ~310 us of server CPU in process, of which the handler was ~60 us; the rest was
FastAPI's and Starlette's layers (exception middlewares, the included router's match, dependency
solving, the response's re-validation). One worker's moves per second are bound by that CPU
(DECISIONS 0036). This is the same handler (``play.frontier``, ``play.run_tile``: the store's read, the
``asked`` count) and the same serializer (the route's response model, pydantic's ``dump_json``), so
the body, status and headers are byte for byte FastAPI's; ``tests/test_serve_hotpath.py`` sends the
same requests both ways and compares them.

The table is made from the app's own routes, by name (``table``): each path and its parameters'
limits as the route declares them, so the two cannot drift; and a hot route that gains anything the
hot path does not do (a dependency but the store, a query or header, a shaped answer) stops the
service from starting, instead of being skipped on the reads this path answers. Only a request that
is plainly well formed takes this path: ``GET``, the path exactly as the route declares it (no
trailing slash), a run id within the route's ``max_length`` and a tile id of plain decimal digits
within its ``le`` (``wire.MAX_TILE_ID``). Everything else — another method (405), an over-long id or a
tile like ``-1`` or ``1e3`` (400), a trailing slash (307) — goes on to FastAPI, which answers it as
the OpenAPI document says. The routes themselves stay declared there, so ``/openapi.json`` does not
change. It sits inside ``security.SecurityHeaders`` and ``observe.Observe``: its answers carry the
same headers and are counted, timed and logged as every other.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import fastapi.routing
from annotated_types import Le, MaxLen
from fastapi.responses import JSONResponse
from fastapi.routing import APIRoute
from pydantic import TypeAdapter
from starlette.responses import Response

from referee.service import play
from referee.service.deps import error_answer, tiles_error_answer
from referee.service.deps import store as store_dependency
from referee.service.runs import RunStore
from tilelib.errors import TilesError

# The routes answered here, by the app's route name; each runs the use case of ``play`` of the same name
# (looked up per request, as the route's handler does): the path, its parameters' limits and the
# model come from the app's route.
HOT = ("run_tile", "frontier")  # tried in this order: tile views are most reads

Answer = Callable[[RunStore], Awaitable[bytes]]


@dataclass(frozen=True)
class HotRoute:
    """One hot route as the app declares it: its path as a pattern (each parameter a group within its
    declared limits), the largest value of each integer parameter (None for text), the use case and
    the response model's serializer."""

    pattern: re.Pattern[str]
    bounds: tuple[int | None, ...]
    use: str  # the name of the use case in ``play``
    model: TypeAdapter

    def answer(self, path: str) -> Answer | None:
        hit = self.pattern.fullmatch(path)
        if hit is None:
            return None
        args: list[str | int] = []
        for text, bound in zip(hit.groups(), self.bounds, strict=True):
            if bound is None:
                args.append(text)
            elif int(text) > bound:
                return None
            else:
                args.append(int(text))
        use, model = self.use, self.model

        async def respond(st: RunStore) -> bytes:
            return model.dump_json(model.validate_python(await getattr(play, use)(st, *args)))

        return respond


@dataclass(frozen=True)
class Table:
    """The hot routes of one app (``table``)."""

    routes: tuple[HotRoute, ...]


def _refuse(route: Any, why: str) -> RuntimeError:
    return RuntimeError(
        f"the hot route {route.name} ({route.path}) {why}: the hot path cannot answer it as FastAPI does"
    )


def _param(route: Any, name: str) -> tuple[str, int | None]:
    """The pattern of one path parameter and its bound: text of at most its max_length characters
    (never a '/'), or plain decimal digits up to its ``le``."""
    field = next((f for f in route.dependant.path_params if f.name == name), None)
    if field is None:
        raise _refuse(route, f"has a path part {{{name}}} that is not a parameter")
    kind, meta = field.field_info.annotation, field.field_info.metadata
    if kind is str:
        longest = [c.max_length for c in meta if isinstance(c, MaxLen)]
        if not longest or len(meta) != 1:
            raise _refuse(route, f"reads {name} with limits other than one max_length")
        return f"([^/]{{1,{longest[0]}}})", None
    if kind is int:
        top = [int(c.le) for c in meta if isinstance(c, Le) and isinstance(c.le, int)]
        if not top or any(not isinstance(c, Le) and getattr(c, "ge", None) != 0 for c in meta):
            raise _refuse(route, f"reads {name} with limits other than ge=0 and one le")
        return f"([0-9]{{1,{len(str(top[0]))}}})", top[0]
    raise _refuse(route, f"reads {name} as {kind}")


def _hot_route(route: Any) -> HotRoute:
    d = route.dependant
    others = [_name(dep.call) for dep in d.dependencies if dep.call is not store_dependency]
    if others or any(dep.dependencies for dep in d.dependencies):
        raise _refuse(route, f"depends on {', '.join(others) or 'what the store depends on'}, which it does not run")
    if d.query_params or d.header_params or d.cookie_params or d.body_params:
        raise _refuse(route, "reads more than its path")
    if route.methods != {"GET"} or route.status_code not in (None, 200) or route.response_model is None:
        raise _refuse(route, "is not a plain GET answered 200 with a response model")
    shaped = (route.response_model_include, route.response_model_exclude)
    flags = (
        route.response_model_exclude_unset,
        route.response_model_exclude_defaults,
        route.response_model_exclude_none,
    )
    if any(x is not None for x in shaped) or any(flags) or not _plain_json(route):
        raise _refuse(route, "shapes its answer beyond its response model")
    parts = re.split(r"\{([^}]+)\}", route.path_format)
    pattern, bounds = "", list[int | None]()
    for i, part in enumerate(parts):
        if i % 2 == 0:
            pattern += re.escape(part)
        else:
            group, bound = _param(route, part)
            pattern, bounds = pattern + group, [*bounds, bound]
    return HotRoute(re.compile(pattern), tuple(bounds), route.name, TypeAdapter(route.response_model))


def _name(call: object) -> str:
    """A dependency as a message names it: its function's name, or its class's for a callable object."""
    return getattr(call, "__name__", None) or type(call).__name__


def _plain_json(route: Any) -> bool:
    cls = getattr(route.response_class, "value", route.response_class)  # FastAPI's DefaultPlaceholder
    return cls is JSONResponse


def _api_routes(routes: Sequence[Any]) -> Iterator[Any]:
    """The app's API routes as they answer: with their full path and every dependency (an included
    router's and the app's too). FastAPI >= 0.13x keeps an included router as one entry, which
    ``iter_route_contexts`` walks into; before, its routes were copied into the app's list."""
    walk = getattr(fastapi.routing, "iter_route_contexts", None)
    for r in walk(routes) if walk is not None else routes:
        if isinstance(getattr(r, "original_route", r), APIRoute):
            yield r


def table(routes: Sequence[Any]) -> Table:
    """The hot path's table, made from the app's own routes by name (``HOT``): each path and its
    parameters' limits as the route declares them. RuntimeError — the service refuses to start — when
    a hot route is missing or needs anything the hot path does not do (a dependency but the store, a
    query, a header, a body, another method or status, a shaped answer): it would be skipped on the
    reads the hot path answers."""
    by_name = {r.name: r for r in _api_routes(routes)}
    missing = [name for name in HOT if name not in by_name]
    if missing:
        raise RuntimeError(f"the hot routes {', '.join(missing)} are not routes of the app")
    return Table(tuple(_hot_route(by_name[name]) for name in HOT))


def route(hot: Table, path: str) -> Answer | None:
    """What answers ``path`` (a coroutine function of the store giving the body), or None when the
    request is for FastAPI (module doc)."""
    for r in hot.routes:
        answer = r.answer(path)
        if answer is not None:
            return answer
    return None


class HotReads:
    """ASGI: the hot reads answered here (module doc), every other request passed to ``app``.
    ``store`` gives the app's store (``app.state.store``, read per request: tests swap it); ``hot``
    is the table made from the app's routes."""

    def __init__(self, app, store: Callable[[], RunStore], hot: Table) -> None:
        self.app, self.store, self.hot = app, store, hot

    async def __call__(self, scope, receive, send) -> None:
        respond = route(self.hot, scope["path"]) if scope["type"] == "http" and scope["method"] == "GET" else None
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
