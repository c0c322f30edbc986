"""``/api/v1/runs/{run}…``: a run's score, frontier, tile views, moves (the one write, with the run's
bearer token and an optional ``Idempotency-Key``), history and analyzer."""

from __future__ import annotations

from fastapi import APIRouter, Depends, Header, Path, Query

from referee import wire as m
from referee.service import play
from referee.service.deps import GuardedRoute, Settings, address, operation, settings, store, token
from referee.service.routes_days import TilePath
from referee.service.runs import RunStore

router = APIRouter(tags=["runs"], route_class=GuardedRoute)
RunPath = Path(description="The run's id.", max_length=m.RUN_ID_MAX)
MAX_ROW_ID = 2**63 - 1  # SQLite's largest integer: a cursor past it names no move


@operation(router)
async def score(run: str = RunPath, st: RunStore = Depends(store)) -> dict:
    return await play.score(st, run)


@operation(router)
async def frontier(run: str = RunPath, st: RunStore = Depends(store)) -> dict:
    return await play.frontier(st, run)


@operation(router)
async def run_tile(run: str = RunPath, tile: int = TilePath, st: RunStore = Depends(store)) -> dict:
    return await play.run_tile(st, run, tile)


@operation(router)
async def moves(
    body: m.MovesRequest,
    run: str = RunPath,
    st: RunStore = Depends(store),
    cfg: Settings = Depends(settings),
    bearer: str | None = Depends(token),
    client: str | None = Depends(address),
    key: str = Header(
        None,
        alias="Idempotency-Key",
        max_length=257,
        pattern=m.KEY_PATTERN,
        description=(
            "Optional, 1..255 visible ASCII characters other than '\"', in double quotes as the "
            "IETF draft writes it, or bare (a UUID is fine): a retried request "
            "with the same key and body gets the first answer and stores nothing new; the same "
            "key with another body is a 409."
        ),
    ),
) -> dict:
    batch = [mv.model_dump() for mv in body.moves]
    return await play.moves(st, cfg, run, batch, token=bearer, key=key, address=client, claimed=body.run)


@operation(router)
async def history(
    run: str = RunPath,
    after: int = Query(0, ge=0, le=MAX_ROW_ID, description="Only moves with an id above this."),
    limit: int = Query(100, ge=1, le=1000, description="Most moves."),
    st: RunStore = Depends(store),
) -> dict:
    return await play.history(st, run, after, limit)


@operation(router)
async def run_analysis(run: str = RunPath, st: RunStore = Depends(store)) -> dict:
    return await play.run_analysis(st, run)
