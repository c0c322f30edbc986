"""The FastAPI app of ``tiles referee serve``: the JSON API under ``/api/v1`` (OpenAPI at
``/openapi.json``, read as a page at ``/docs``: ``apidocs``), the MCP tools at ``/mcp`` (``mcp_tools``: the same
core, for LLM agents) and the play page at ``/``.

Routes live in two ``APIRouter``s by resource (``routes_days``, ``routes_runs``), each declared in
``referee.wire.OPERATIONS`` with its bodies' models and run by its use case in ``play``; what they
share is in ``deps``. Every handler is ``async`` and runs on the worker's one
event-loop thread, so its store's cache and its one database connection are never touched by two
requests at once (other workers share only the database: ``referee.service.runs``). Every error is one JSON object
``{"error": "one line"}`` with the status of
``tilelib.errors.HTTP_STATUS`` (the same exception types that map to exit codes; a 401 carries
its Bearer challenge and a 429 its Retry-After, ``deps.error_headers``); a malformed request is a 4xx, never a 500,
and a client
gone before its body arrived is one log line. Every answer carries the browser security headers
of ``security`` (``RefereeApp``: one middleware around the whole stack); every request is counted,
timed and logged by ``observe``, which also serves ``/healthz``, ``/readyz`` and ``/metrics``.
The event loop never waits for the runs database (``RunStore.wait_off_loop``): a database busy or
away is a 503 with ``Retry-After`` within ``runs.PATIENCE`` seconds, whose line names no path,
address or SQL (``deps.public_line``; the service's log has the reason). A path off by its trailing
slash is redirected with a relative ``Location`` (``_SlashRedirect``), never one built from ``Host``.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
import sys
import urllib.parse
from collections.abc import Callable, Coroutine, Sequence
from pathlib import Path
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.openapi.utils import get_openapi
from fastapi.responses import FileResponse, HTMLResponse, JSONResponse, RedirectResponse, Response
from fastapi.staticfiles import StaticFiles
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.requests import ClientDisconnect
from starlette.routing import Match, Route, Router

from referee.service import apidocs, hotpath, observe, routes_days, routes_runs
from referee.service.asked import EVERY, STALE
from referee.service.deps import MAX_BODY, Settings, error_answer, tiles_error_answer
from referee.service.runs import RunStore
from referee.service.security import SecurityHeaders
from referee.wire import API, MAX_MOVES
from tilelib.errors import TilesError, http_status

STATIC = Path(__file__).parent / "static"


def _stderr(line: str) -> None:
    print(f"tiles referee serve: {line}", file=sys.stderr, flush=True)


def _gone_line(scope) -> str:
    """The one log line of a client that closed the connection before its request body arrived:
    method and path as sent (no query), printable, at most 200 characters, so a hostile path cannot
    forge or flood log lines."""
    return f"{scope.get('method', '?')} {observe.safe_path(scope)}: client disconnected before its request body arrived"


def _validation_line(err: RequestValidationError) -> str:
    """The first problem of a request that failed validation, as ``where: what``."""
    e = err.errors()[0] if err.errors() else {"loc": (), "msg": "invalid request"}
    if tuple(e.get("loc", ())) == ("body",):
        return "body must be a JSON object as the operation's request schema says (/openapi.json)"
    where = ".".join(str(x) for x in e.get("loc", ()))
    msg = str(e.get("msg", "invalid"))
    if e.get("type") == "string_pattern_mismatch":  # not the regex itself: a line, not a page
        msg = "has a character or form its pattern in /openapi.json does not allow"
    return f"{where}: {msg}" if where else msg


def _openapi(app: FastAPI) -> dict:
    """FastAPI's document, with the validation answer it declares by default (422) left out: this
    service answers a request off its schema with 400 and the error model, as each route declares."""
    if app.openapi_schema is None:
        doc = get_openapi(title=app.title, version=app.version, description=app.description, routes=app.routes)
        for ops in doc.get("paths", {}).values():
            for op in ops.values():
                op.get("responses", {}).pop("422", None)
        for name in ("HTTPValidationError", "ValidationError"):
            doc.get("components", {}).get("schemas", {}).pop(name, None)
        # the batch limit is this service's --max-moves: say it, so a batch the document allows is never
        # refused with a 413 (one over it still is, as the 413 of the operation says)
        moves = doc["components"]["schemas"]["MovesRequest"]["properties"]["moves"]
        moves["maxItems"] = app.state.settings.max_moves
        app.openapi_schema = doc
    return app.openapi_schema


Job = Callable[[], Coroutine[Any, Any, None]]  # a background job: a coroutine the app runs as a task


def _lifespan(background: Sequence[Job]):
    """Run the MCP tools' request manager and each ``background`` coroutine (``watch.watch``: new days)
    while the app serves; cancel them at shutdown, so SIGTERM ends the service promptly."""

    @contextlib.asynccontextmanager
    async def lifespan(app: FastAPI):
        async with app.state.mcp.session_manager.run():
            tasks: list[asyncio.Task[None]] = [
                asyncio.create_task(job()) for job in (*background, lambda: _flush_requests(app.state.store))
            ]
            try:
                yield
            finally:
                for t in tasks:
                    t.cancel()
                await asyncio.gather(*tasks, return_exceptions=True)

    return lifespan


async def _flush_requests(store: RunStore) -> None:
    """Write the request counts (``asked``) that have waited ``STALE`` seconds for a batch to carry them,
    every ``EVERY`` seconds, off the loop over PostgreSQL; a failure (the database away) keeps them."""
    while True:
        await asyncio.sleep(EVERY)
        try:
            await store.judge_off_loop(store.flush_requests, STALE)
        except Exception:  # noqa: BLE001 - the counts stay pending; /readyz reports the database
            pass


# The Host the shipped proxy (deploy/nginx.conf) sends every host, fixed: never the client's.
PROXY_HOST = "tiles-referee"
LOOPBACK = ("127.0.0.1", "localhost", "::1")


def _mcp_security(host: str):
    """Bound to a loopback ``host``, the MCP endpoint refuses a request whose Host or Origin is not
    loopback (DNS rebinding: a web page's script must not reach a local service through a name it
    controls), as the SDK does by default, but also takes the proxy's fixed Host, ``PROXY_HOST``:
    behind nginx on the same machine every request arrives with it. None elsewhere (the SDK's default:
    no check)."""
    if host not in LOOPBACK:
        return None
    from mcp.server.transport_security import TransportSecuritySettings

    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=["127.0.0.1:*", "localhost:*", "[::1]:*", PROXY_HOST],
        allowed_origins=["http://127.0.0.1:*", "http://localhost:*", "http://[::1]:*"],
    )


def _mount_mcp(app: FastAPI, store: RunStore, host: str, log: Callable[[str], None]) -> None:
    """The MCP tools at ``/mcp``: stateless streamable HTTP answering in JSON, so any worker can answer
    any request, with ``_mcp_security``'s checks of Host and Origin."""
    from referee.service import mcp_tools

    app.state.mcp = mcp_tools.create(store, app.state.settings)
    asgi = app.state.mcp.streamable_http_app(
        streamable_http_path="/mcp",
        stateless_http=True,
        json_response=True,
        max_request_body_size=app.state.settings.max_body,
        transport_security=_mcp_security(host),
        host=host,
    )
    (route,) = asgi.routes
    app.router.routes.append(Route("/mcp", endpoint=_McpDoor(route.endpoint, app.state.settings.max_body, log)))


class _McpDoor:
    """The MCP endpoint, POST only: stateless, it keeps no stream a GET could listen to (the SDK would
    hold such a GET open with no answer), so GET and DELETE are a 405 with one line.

    It reads a POST's body before the SDK does (up to ``limit`` bytes: past it the SDK's own limit
    answers 413), then hands the SDK the same messages: the SDK logs a client gone mid-body as an
    error with a traceback, here it is the one line every other route logs (``_gone_line``)."""

    def __init__(self, inner, limit: int, log: Callable[[str], None]) -> None:
        self.inner, self.limit, self.log = inner, limit, log

    async def __call__(self, scope, receive, send) -> None:
        if scope["method"] != "POST":
            await error_answer(
                405, "the MCP endpoint takes POST (stateless streamable HTTP): JSON-RPC requests", {"Allow": "POST"}
            )(scope, receive, send)
            return
        try:
            read = await _body_messages(receive, self.limit)
        except ClientDisconnect:
            self.log(_gone_line(scope))
            return

        async def replay():
            return read.pop(0) if read else await receive()

        await self.inner(scope, replay, send)


async def _body_messages(receive, limit: int) -> list:
    """A request's body messages, to its end or until past ``limit`` bytes; ClientDisconnect if the
    client goes first."""
    out, size = [], 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            raise ClientDisconnect()
        out.append(message)
        size += len(message.get("body", b""))
        if not message.get("more_body", False) or size > limit:
            return out


class _SlashRedirect:
    """What the router does with a request no route matches: a 307 to the same path with its trailing
    slash toggled when a route matches that (``/api/v1/days/`` to ``/api/v1/days``, the query kept),
    else the router's own 404.

    Its ``Location`` is relative — the path and query only — never an absolute URL built from the
    request's ``Host`` (as Starlette's own redirect is). A client behind a reverse proxy reached the
    service under the proxy's scheme, name and port, which the service cannot know (the proxy sends a
    fixed ``Host``: ``deploy/nginx.conf``), and a Host a client makes up must not choose where anyone
    is sent; a relative reference resolves against the URL the client itself used (RFC 9110 allows
    it), so the redirect is right through any proxy and points nowhere else. A redirect rather than
    a plain 404: a person who types a trailing slash still lands on the page."""

    def __init__(self, router: Router) -> None:
        self.router = router

    async def __call__(self, scope, receive, send) -> None:
        target = _slash_twin(self.router, scope) if scope["type"] == "http" else None
        if target is None:
            await self.router.not_found(scope, receive, send)
            return
        await RedirectResponse(target, status_code=307)(scope, receive, send)


def _slash_twin(router: Router, scope) -> str | None:
    """The relative ``Location`` of ``scope``'s path with its trailing slash toggled if a route of
    ``router`` matches that (the path percent-encoded, one leading slash: never a ``//host`` a
    browser would leave the site for), else None."""
    path = scope["path"]
    if path == "/":
        return None
    twin = {**scope, "path": path.rstrip("/") if path.endswith("/") else path + "/"}
    if not any(route.matches(twin)[0] is not Match.NONE for route in router.routes):
        return None
    target = "/" + urllib.parse.quote(twin["path"], safe="/:@!$&'()*+,;=-._~").lstrip("/")
    query = scope.get("query_string", b"")
    return target + ("?" + query.decode("latin-1") if query else "")


class RefereeApp(FastAPI):
    """FastAPI with ``SecurityHeaders`` around its whole middleware stack: Starlette's error middleware
    answers a 500 outside every middleware added with ``add_middleware``, so the headers go outside it;
    ``observe.Observe`` (metrics, access log) outside both, so it sees every answer as sent. Inside
    them, ahead of FastAPI's own stack, ``hotpath.HotReads`` answers a player's two hot reads."""

    def build_middleware_stack(self):
        inner = hotpath.HotReads(super().build_middleware_stack(), lambda: self.state.store, self.state.hot)
        return observe.Observe(SecurityHeaders(inner), self.router.routes, self.state.settings.access_log)


def create_app(
    store: RunStore,
    *,
    today: Callable[[], dt.date] | None = None,
    max_body: int = MAX_BODY,
    max_moves: int = MAX_MOVES,
    background: Sequence[Job] = (),
    host: str = "127.0.0.1",
    log: Callable[[str], None] = _stderr,
    access_log: str = "off",
) -> FastAPI:
    """The app over ``store``; ``today`` (UTC date) decides which days are over (tests pass their own);
    ``background`` jobs run while it serves; ``host`` is the address it is served on (``_mount_mcp``);
    ``log`` gets the service's own lines (a client gone mid-request); ``access_log`` ("off", "text",
    "json") one line per request."""
    app = RefereeApp(
        title="tiles referee",
        version="1",
        lifespan=_lifespan(background),
        docs_url=None,
        redoc_url=None,  # /docs is apidocs' page: Swagger UI needs a CDN
        generate_unique_id_function=lambda route: route.name,  # operationId = the handler's name
        redirect_slashes=False,  # ``_SlashRedirect`` instead: a relative Location
        description="Play the daily Takuzu board: runs, puzzles, moves, scores. Writes need the "
        "run's token as 'Authorization: Bearer TOKEN'. Bodies are JSON sent as "
        "'Content-Type: application/json'.",
    )
    app.state.store = store
    app.state.log = log  # the service's own log: where a 5xx's reason goes, never into the answer
    store.wait_off_loop()  # the loop never waits for the database; writes wait in ``RunStore.patient``
    app.state.settings = Settings(max_body=max_body, max_moves=max_moves, today=today, access_log=access_log)
    app.include_router(routes_days.router, prefix=API)
    app.include_router(routes_runs.router, prefix=API)
    app.include_router(observe.router)  # /healthz, /readyz, /metrics: not in the OpenAPI document
    app.state.hot = hotpath.table(app.router.routes)  # refuses to start on a hot route it cannot answer
    observe.days_loaded(len(store.days))
    app.openapi = lambda: _openapi(app)  # type: ignore[method-assign]  # FastAPI's documented way to change it
    _mount_mcp(app, store, host, log)

    @app.exception_handler(TilesError)
    async def _tiles_error(req: Request, err: TilesError) -> JSONResponse:
        if http_status(err) >= 500:  # the service's own trouble: its reason here, not in the answer
            log(f"{req.method} {observe.safe_path(req.scope)}: {' '.join(str(err).split())[:300]}")
        return tiles_error_answer(err)

    @app.exception_handler(RequestValidationError)
    async def _invalid(_req: Request, err: RequestValidationError) -> JSONResponse:
        return error_answer(400, _validation_line(err))

    @app.exception_handler(StarletteHTTPException)
    async def _http(_req: Request, err: StarletteHTTPException) -> JSONResponse:
        return error_answer(err.status_code, str(err.detail), getattr(err, "headers", None))

    @app.exception_handler(ClientDisconnect)
    async def _gone(req: Request, _err: ClientDisconnect) -> Response:
        # the client closed the connection before its body arrived (the body guard was reading it):
        # one line, and an answer nobody will get, instead of a traceback from Starlette's error
        # middleware; uvicorn drops whatever is sent on a closed connection
        log(_gone_line(req.scope))
        return Response(status_code=400)

    @app.exception_handler(Exception)
    async def _crash(_req: Request, err: Exception) -> JSONResponse:  # a bug, not a client error
        return error_answer(500, f"internal error: {type(err).__name__}")

    @app.get("/", include_in_schema=False)
    async def index() -> FileResponse:
        return FileResponse(STATIC / "index.html", media_type="text/html")

    @app.get("/docs", include_in_schema=False)
    async def docs() -> HTMLResponse:
        if app.state.docs_page is None:
            app.state.docs_page = apidocs.render(app.openapi())
        return HTMLResponse(app.state.docs_page)

    app.state.docs_page = None
    app.mount("/static", StaticFiles(directory=STATIC), name="static")
    app.router.default = _SlashRedirect(app.router)
    return app
