"""``/api/v1/days…``: the days on offer, a day's public board, its given cells, a tile's puzzle with the
board's givens only, and (once the day is over) its solutions and manifest; its leaderboard and
analyzer; and ``POST /days/{day}/runs``, which starts a run."""

from __future__ import annotations

from fastapi import APIRouter, Body, Depends, Path, Query, Response

from referee import wire as m
from referee.service import play
from referee.service.deps import GuardedRoute, Settings, address, operation, settings, store
from referee.service.runs import RunStore

router = APIRouter(tags=["days"], route_class=GuardedRoute)
DayPath = Path(description="A day on offer, YYYY-MM-DD.", max_length=m.DAY_LENGTH)
TilePath = Path(ge=0, le=m.MAX_TILE_ID, description="Tile id.")


def _json(body: bytes) -> Response:
    """A view ``play`` serialised once (it never changes for a day), sent as it is."""
    return Response(body, media_type="application/json")


@operation(router)
async def days(st: RunStore = Depends(store), cfg: Settings = Depends(settings)) -> list[dict]:
    return await play.days(st, cfg)


@operation(router)
async def board(day: str = DayPath, st: RunStore = Depends(store), cfg: Settings = Depends(settings)) -> Response:
    return _json(await play.board(st, cfg, day))


@operation(router)
async def cells(day: str = DayPath, st: RunStore = Depends(store)) -> Response:
    return _json(await play.cells(st, day))


@operation(router)
async def day_tile(day: str = DayPath, tile: int = TilePath, st: RunStore = Depends(store)) -> dict:
    return await play.day_tile(st, day, tile)


@operation(router)
async def solution(
    day: str = DayPath, tile: int = TilePath, st: RunStore = Depends(store), cfg: Settings = Depends(settings)
) -> dict:
    return await play.solution(st, cfg, day, tile)


@operation(router)
async def manifest(day: str = DayPath, st: RunStore = Depends(store), cfg: Settings = Depends(settings)) -> Response:
    return _json(await play.manifest(st, cfg, day))


@operation(router)
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
    return await play.leaderboard(st, day, limit, by)


@operation(router)
async def day_analysis(
    day: str = DayPath,
    bucket: float = Query(60.0, ge=1, le=86400, allow_inf_nan=False, description="Bucket width in seconds."),
    st: RunStore = Depends(store),
) -> dict:
    return await play.day_analysis(st, day, bucket)


@operation(router)
async def create_run(
    day: str = DayPath,
    body: m.NewRun = Body(None, description=('Optional: {"player": NAME}, null, or no body.')),
    st: RunStore = Depends(store),
    client: str | None = Depends(address),
) -> dict:
    # the body's schema is the named NewRun (itself RunCreate or null) rather than an inline anyOf;
    # no body at all leaves the default None, which FastAPI does not validate
    new = body.root if body is not None else None
    return await play.create_run(st, day, new.player if new is not None else None, client)
