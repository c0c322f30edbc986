"""The FastAPI app of ``tiles referee serve``: a JSON API under ``/api/v1`` (OpenAPI at ``/docs``)
and the play page at ``/``.

Every handler is ``async`` and runs on the one event-loop thread, so the in-memory run states and
the one SQLite connection are never touched by two requests at once. Errors are one JSON object
``{"error": "one line"}``: 400 bad input, 401/403 token, 404 unknown day/run/tile/route, 413 over
a limit; never a 500 for anything a client sends. Bodies are read with a byte limit before any
parsing, and a submission holds at most ``max_moves`` moves.
"""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any, Callable

from fastapi import FastAPI, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import FileResponse, JSONResponse, Response
from fastapi.staticfiles import StaticFiles
from starlette.exceptions import HTTPException as StarletteHTTPException

from referee.service.boards import day_is_over, given_cells, public_board, puzzle_view, tile_solution
from referee.service.runs import RunStore
from tilelib.errors import BadInput, Forbidden, NotFound, OffFrontier, TilesError, TooLarge

API = "/api/v1"
STATIC = Path(__file__).parent / "static"
MAX_BODY = 64 * 1024
MAX_MOVES = 64

_MOVES_BODY = {"requestBody": {"required": True, "content": {"application/json": {"schema": {
    "type": "object", "required": ["moves"], "properties": {"moves": {"type": "array", "items": {
        "type": "object", "properties": {"tile": {"type": "integer"},
                                         "cells": {"type": "string", "description": "n·n chars 0/1, "
                                                   "row-major from board cell (y0, x0)"}}}}}}}}}}
_RUN_BODY = {"requestBody": {"required": False, "content": {"application/json": {"schema": {
    "type": "object", "properties": {"player": {"type": "string", "maxLength": 40}}}}}}}


def _error(status: int, message: str) -> JSONResponse:
    return JSONResponse({"error": message}, status_code=status)


def _status(err: TilesError) -> int:
    if isinstance(err, NotFound):
        return 404
    if isinstance(err, Forbidden):
        return 403
    if isinstance(err, TooLarge):
        return 413
    if isinstance(err, OffFrontier):
        return 409
    if isinstance(err, BadInput):
        return 400
    return 500


async def read_json(request: Request, limit: int) -> Any:
    """The request body as JSON (None when empty); TooLarge past ``limit`` bytes, BadInput if malformed."""
    declared = request.headers.get("content-length")
    if declared is not None:
        if not declared.isdigit():
            raise BadInput("Content-Length is not a number")
        if int(declared) > limit:
            raise TooLarge(f"request body of {int(declared)} bytes is over the limit of {limit} bytes")
    body = bytearray()
    async for chunk in request.stream():
        body += chunk
        if len(body) > limit:
            raise TooLarge(f"request body is over the limit of {limit} bytes")
    if not body.strip():
        return None
    try:
        return json.loads(body.decode("utf-8"))
    except UnicodeDecodeError as err:
        raise BadInput("request body is not UTF-8") from err
    except ValueError as e:
        raise BadInput(f"request body is not valid JSON ({e})") from e


def _token(request: Request) -> str | None:
    auth = request.headers.get("authorization", "")
    scheme, _, value = auth.partition(" ")
    return value.strip() if scheme.lower() == "bearer" and value.strip() else None


def create_app(store: RunStore, *, today: Callable[[], dt.date] | None = None, max_body: int = MAX_BODY,
               max_moves: int = MAX_MOVES) -> FastAPI:
    """The app over ``store``; ``today`` (UTC date) decides which days are over (tests pass their own)."""
    app = FastAPI(title="tiles referee", version="1",
                  description="Play the daily Takuzu board: runs, puzzles, moves, scores. Writes need the "
                              "run's token as 'Authorization: Bearer TOKEN'.")
    app.state.store = store
    cache: dict[tuple[str, str], bytes] = {}

    def over(day: str) -> bool:
        return day_is_over(day, today() if today else None)

    def cached(key: tuple[str, str], make: Callable[[], Any]) -> Response:
        if key not in cache:
            cache[key] = json.dumps(make(), separators=(",", ":")).encode()
        return Response(cache[key], media_type="application/json")

    def secret_until_over(day: str, what: str) -> None:
        if not over(day):
            raise Forbidden(f"{what} of {day} stay secret until the day is over (UTC)")

    @app.exception_handler(TilesError)
    async def _tiles_error(_req: Request, err: TilesError) -> JSONResponse:
        return _error(_status(err), str(err))

    @app.exception_handler(RequestValidationError)
    async def _invalid(_req: Request, err: RequestValidationError) -> JSONResponse:
        e = err.errors()[0] if err.errors() else {"loc": (), "msg": "invalid request"}
        where = ".".join(str(x) for x in e.get("loc", ()))
        return _error(400, f"{where}: {e.get('msg', 'invalid')}" if where else e.get("msg", "invalid request"))

    @app.exception_handler(StarletteHTTPException)
    async def _http(_req: Request, err: StarletteHTTPException) -> JSONResponse:
        return _error(err.status_code, str(err.detail))

    @app.exception_handler(Exception)
    async def _crash(_req: Request, err: Exception) -> JSONResponse:  # a bug, not a client error
        return _error(500, f"internal error: {type(err).__name__}")

    # ------------------------------------------------------------ days

    @app.get(f"{API}/days", summary="The days on offer")
    async def days() -> JSONResponse:
        return JSONResponse([{"day": d, "G": db.board.G, "tiles": len(db.board.squares), "status":
                              db.manifest.status, "seed_tile": db.board.seed_tile, "over": over(d)}
                             for d, db in sorted(store.days.items())])

    @app.get(f"{API}/days/{{day}}", summary="A day's public board: tiles (id, x0, y0, n, colour), zones, "
                                             "seed tile, clue cells with values")
    async def board(day: str) -> Response:
        db = store.day(day)
        d = over(day)
        return cached((day, f"board{d}"), lambda: public_board(db, d))

    @app.get(f"{API}/days/{{day}}/cells", summary="Every given cell: base64 packbits planes of the G×G board")
    async def cells(day: str) -> Response:
        db = store.day(day)
        return cached((day, "cells"), lambda: given_cells(db.board))

    @app.get(f"{API}/days/{{day}}/tiles/{{tile}}", summary="A tile's puzzle with the board givens only")
    async def day_tile(day: str, tile: int) -> JSONResponse:
        return JSONResponse(puzzle_view(store.day(day), tile, set()))

    @app.get(f"{API}/days/{{day}}/tiles/{{tile}}/solution", summary="A tile's solution (once the day is over)")
    async def solution(day: str, tile: int) -> JSONResponse:
        db = store.day(day)
        secret_until_over(day, "solutions")
        return JSONResponse({"day": day, "tile": tile, "cells": tile_solution(db, tile)})

    @app.get(f"{API}/days/{{day}}/manifest", summary="The full manifest with hashes (once the day is over)")
    async def manifest(day: str) -> Response:
        db = store.day(day)
        secret_until_over(day, "the manifest (tile hashes) and solutions")
        return Response(db.manifest.to_json(), media_type="application/json")

    @app.get(f"{API}/days/{{day}}/leaderboard", summary="A day's runs by reward")
    async def leaderboard(day: str, limit: int = Query(100, ge=1, le=1000)) -> JSONResponse:
        return JSONResponse({"day": day, "runs": store.leaderboard(day, limit)})

    @app.get(f"{API}/days/{{day}}/analysis", summary="Analyzer over a day: reward and mean n per batch ordinal and per time bucket")
    async def day_analysis(day: str, bucket: float = Query(60.0, ge=1, le=86400)) -> JSONResponse:
        return JSONResponse(store.day_analysis(day, bucket))

    # ------------------------------------------------------------ runs

    @app.post(f"{API}/days/{{day}}/runs", status_code=201, openapi_extra=_RUN_BODY,
              summary="Create a run: returns its id and secret token (shown once)")
    async def create_run(day: str, request: Request) -> JSONResponse:
        store.day(day)
        body = await read_json(request, max_body)
        if body is not None and not isinstance(body, dict):
            raise BadInput("body must be a JSON object {\"player\": \"name\"} or empty")
        st, token = store.create(day, (body or {}).get("player"))
        return JSONResponse({"run": st.run, "token": token, "day": day, **store.score(st)}, status_code=201)

    @app.get(f"{API}/runs/{{run}}", summary="A run's score")
    async def score(run: str) -> JSONResponse:
        return JSONResponse(store.score(store.get(run)))

    @app.get(f"{API}/runs/{{run}}/frontier", summary="The tiles the run may play now")
    async def run_frontier(run: str) -> JSONResponse:
        st = store.get(run)
        return JSONResponse({"run": run, "tiles": sorted(st.frontier), "solved": sorted(st.solved)})

    @app.get(f"{API}/runs/{{run}}/tiles/{{tile}}", summary="A tile's puzzle in board position for this run")
    async def run_tile(run: str, tile: int) -> JSONResponse:
        st = store.get(run)
        return JSONResponse(puzzle_view(store.days[st.day], tile, st.solved))

    @app.post(f"{API}/runs/{{run}}/moves", openapi_extra=_MOVES_BODY,
              summary="Submit moves (needs the token); one verdict per move, judged in order")
    async def moves(run: str, request: Request) -> JSONResponse:
        st = store.get(run)
        store.authorise(st, _token(request))
        body = await read_json(request, max_body)
        if not isinstance(body, dict) or not isinstance(body.get("moves"), list):
            raise BadInput("body must be a JSON object {\"moves\": [{\"tile\": id, \"cells\": \"01…\"}, …]}")
        if "run" in body and body["run"] != run:
            raise BadInput("the body's 'run' differs from the run in the path")
        mv = body["moves"]
        if len(mv) > max_moves:
            raise TooLarge(f"{len(mv)} moves in one request; the limit is {max_moves}")
        verdicts, st = store.submit(run, _token(request), mv)
        return JSONResponse({"run": run, "verdicts": verdicts, "score": store.score(st)})

    @app.get(f"{API}/runs/{{run}}/history", summary="A run's moves, oldest first")
    async def history(run: str, after: int = Query(0, ge=0), limit: int = Query(100, ge=1, le=1000)) -> JSONResponse:
        return JSONResponse({"run": run, "moves": store.history(run, after, limit)})

    @app.get(f"{API}/runs/{{run}}/analysis", summary="Analyzer of a run: reward and mean n per batch")
    async def run_analysis(run: str) -> JSONResponse:
        return JSONResponse(store.run_analysis(run))

    # ------------------------------------------------------------ the page

    @app.get("/", include_in_schema=False)
    async def index() -> FileResponse:
        return FileResponse(STATIC / "index.html", media_type="text/html")

    app.mount("/static", StaticFiles(directory=STATIC), name="static")
    return app
