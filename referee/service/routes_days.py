"""``/api/v1/days…``: the days on offer, a day's public board, its given cells, a tile's puzzle with the
board's givens only, and (once the day is over) its solutions and manifest; its leaderboard and
analyzer; and ``POST /days/{day}/runs``, which starts a run."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from fastapi import APIRouter, Body, Depends, Path, Query, Response

from referee.service import models as m
from referee.service import play
from referee.service.boards import given_cells, public_board, puzzle_view, tile_solution
from referee.service.deps import GuardedRoute, Settings, address, errors, settings, store
from referee.service.runs import RunStore
from tilelib.errors import Forbidden

router = APIRouter(prefix="/days", tags=["days"], route_class=GuardedRoute)
DayPath = Path(description="A day on offer, YYYY-MM-DD.", max_length=m.DAY_LENGTH)
TilePath = Path(ge=0, le=m.MAX_TILE_ID, description="Tile id.")


def _cached(st: RunStore, key: tuple[str, str], make: Callable[[], Any]) -> Response:
    """A view that never changes for a day, serialised once."""
    if key not in st.views:
        st.views[key] = json.dumps(make(), separators=(",", ":")).encode()
    return Response(st.views[key], media_type="application/json")


def _secret_until_over(day: str, cfg: Settings, what: str) -> None:
    if not play.over(day, cfg):
        raise Forbidden(f"{what} of {day} stay secret until the day is over (UTC)")


@router.get("", response_model=m.Days, summary="The days on offer", responses=errors(400))
async def days(st: RunStore = Depends(store), cfg: Settings = Depends(settings)) -> list[dict]:
    return play.days(st, cfg)


@router.get(
    "/{day}",
    response_model=m.PublicBoard,
    responses=errors(400, 404),
    summary="A day's public board: tiles (id, x0, y0, n, colour), zones, seed tile, clue cells with values",
)
async def board(day: str = DayPath, st: RunStore = Depends(store), cfg: Settings = Depends(settings)) -> Response:
    db = st.day(day)
    over = play.over(day, cfg)
    return _cached(st, (day, f"board{over}"), lambda: public_board(db, over))


@router.get(
    "/{day}/cells",
    response_model=m.Cells,
    responses=errors(400, 404),
    summary="Every given cell: base64 packbits bit planes of the G×G board",
)
async def cells(day: str = DayPath, st: RunStore = Depends(store)) -> Response:
    db = st.day(day)
    return _cached(st, (day, "cells"), lambda: given_cells(db.board))


@router.get(
    "/{day}/tiles/{tile}",
    response_model=m.TileView,
    responses=errors(400, 404),
    summary="A tile's puzzle with the board's givens only (no run)",
)
async def day_tile(day: str = DayPath, tile: int = TilePath, st: RunStore = Depends(store)) -> dict:
    return puzzle_view(st.day(day), tile, set())


@router.get(
    "/{day}/tiles/{tile}/solution",
    response_model=m.Solution,
    responses=errors(400, 403, 404),
    summary="A tile's solution (once the day is over)",
)
async def solution(
    day: str = DayPath, tile: int = TilePath, st: RunStore = Depends(store), cfg: Settings = Depends(settings)
) -> dict:
    db = st.day(day)
    _secret_until_over(day, cfg, "solutions")
    return {"day": day, "tile": tile, "cells": tile_solution(db, tile)}


@router.get(
    "/{day}/manifest",
    response_model=m.ManifestBody,
    responses=errors(400, 403, 404),
    summary="The full manifest with tile hashes, byte for byte (once the day is over)",
)
async def manifest(day: str = DayPath, st: RunStore = Depends(store), cfg: Settings = Depends(settings)) -> Response:
    db = st.day(day)
    _secret_until_over(day, cfg, "the manifest (tile hashes) and solutions")
    return Response(db.manifest.to_json(), media_type="application/json")


@router.get(
    "/{day}/leaderboard",
    response_model=m.Leaderboard,
    responses=errors(400, 404, 503),
    summary="A day's runs by reward, or by what reaching the full reward took",
)
async def leaderboard(
    day: str = DayPath,
    limit: int = Query(100, ge=1, le=1000, description="Most rows."),
    by: m.Measure = Query(
        "reward",
        description=(
            "The order: 'reward' (then tiles solved, then age), or among the runs that cleared the "
            "board the fewest 'batches', 'requests' or seconds ('time'), the others after them "
            "by reward."
        ),
    ),
    st: RunStore = Depends(store),
) -> dict:
    return play.leaderboard(st, day, limit, by)


@router.get(
    "/{day}/analysis",
    response_model=m.DayAnalysis,
    responses=errors(400, 404, 503),
    summary="The analyzer over a day: reward and mean n per batch ordinal and per time bucket",
)
async def day_analysis(
    day: str = DayPath,
    bucket: float = Query(60.0, ge=1, le=86400, allow_inf_nan=False, description="Bucket width in seconds."),
    st: RunStore = Depends(store),
) -> dict:
    return st.day_analysis(day, bucket)


@router.post(
    "/{day}/runs",
    status_code=201,
    response_model=m.RunCreated,
    responses=errors(400, 404, 413, 415, 429, 503),
    summary="Create a run: returns its id and secret token (shown once)",
)
async def create_run(
    day: str = DayPath,
    body: m.NewRun = Body(None, description=('Optional: {"player": NAME}, null, or no body.')),
    st: RunStore = Depends(store),
    client: str | None = Depends(address),
) -> dict:
    # the body's schema is the named NewRun (itself RunCreate or null) rather than an inline anyOf;
    # no body at all leaves the default None, which FastAPI does not validate
    new = body.root if body is not None else None
    return await st.patient(play.start_run, st, day, new.player if new is not None else None, client)
