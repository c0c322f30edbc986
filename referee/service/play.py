"""What a player does, as plain functions over the store: the one core behind both front doors of
the service, the HTTP API (``routes_days``, ``routes_runs``, and the hot path ``hotpath``) and the
MCP tools (``mcp_tools``).

One coroutine per operation of ``/api/v1``, named as the operation (its route's name, the OpenAPI
``operationId``), so a route is one line: parse, call its use case, answer. Each returns the plain
dict of its answer model (``referee.wire``) — or, for a view that never changes for a day, its JSON
serialised once — and raises the project's errors (``tilelib.errors``: NotFound, Forbidden,
OffFrontier, TooLarge, BadInput), which each front door turns into its own one-line error (an HTTP
status, an MCP tool error).

The hop off the event loop is decided here, once per use case, not by the doors: a batch of moves
(a transaction of 8 or more round trips) runs on the store's threads (``RunStore.judge_off_loop``),
a new run waits out a busy database on the loop (``RunStore.patient``), the hot reads gather their
run rows on a thread of their own (``RunStore.current``), and the other reads, one or two round trips
each, stay on the loop (DECISIONS 0036, 0040: a hop costs more than it saves there).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from referee.service import observe
from referee.service.boards import day_is_over, given_cells, public_board, puzzle_view, tile_solution
from referee.service.deps import Settings
from referee.service.runs import RunState, RunStore
from tilelib.errors import BadInput, Forbidden, TooLarge


def over(day: str, cfg: Settings) -> bool:
    """True once ``day`` is past (UTC, or the settings' own clock)."""
    return day_is_over(day, cfg.today() if cfg.today else None)


def _secret_until_over(day: str, cfg: Settings, what: str) -> None:
    if not over(day, cfg):
        raise Forbidden(f"{what} of {day} stay secret until the day is over (UTC)")


def _once(st: RunStore, key: tuple[str, str], make: Callable[[], Any]) -> bytes:
    """The JSON of a view that never changes for a day, serialised once."""
    if key not in st.views:
        st.views[key] = json.dumps(make(), separators=(",", ":")).encode()
    return st.views[key]


# ------------------------------------------------------------------ days


async def days(st: RunStore, cfg: Settings) -> list[dict]:
    """The days on offer, oldest first (``wire.Days``)."""
    return [
        {
            "day": d,
            "G": db.board.G,
            "tiles": len(db.board.squares),
            "status": db.manifest.status,
            "seed_tile": db.board.seed_tile,
            "over": over(d, cfg),
        }
        for d, db in sorted(st.days.items())
    ]


async def board(st: RunStore, cfg: Settings, day: str) -> bytes:
    """A day's public board (``wire.PublicBoard``, as JSON): clue values once the day is over."""
    db = st.day(day)
    shown = over(day, cfg)
    return _once(st, (day, f"board{shown}"), lambda: public_board(db, shown))


async def cells(st: RunStore, day: str) -> bytes:
    """Every given cell of a day's board (``wire.Cells``, as JSON)."""
    db = st.day(day)
    return _once(st, (day, "cells"), lambda: given_cells(db.board))


async def day_tile(st: RunStore, day: str, tile: int) -> dict:
    """A tile's puzzle with the board's givens only, outside any run (``wire.TileView``)."""
    return puzzle_view(st.day(day), tile, set())


async def solution(st: RunStore, cfg: Settings, day: str, tile: int) -> dict:
    """A tile's solution, once the day is over (``wire.Solution``)."""
    db = st.day(day)
    _secret_until_over(day, cfg, "solutions")
    return {"day": day, "tile": tile, "cells": tile_solution(db, tile)}


async def manifest(st: RunStore, cfg: Settings, day: str) -> bytes:
    """The day's manifest byte for byte (``wire.ManifestBody``), once the day is over."""
    db = st.day(day)
    _secret_until_over(day, cfg, "the manifest (tile hashes) and solutions")
    return db.manifest.to_json().encode()


async def leaderboard(st: RunStore, day: str, limit: int = 100, by: str = "reward") -> dict:
    """A day's runs in ``by``'s order (``wire.Leaderboard``; ``referee.service.ranking``)."""
    return {"day": day, "by": by, "runs": st.leaderboard(day, limit, by)}


async def day_analysis(st: RunStore, day: str, bucket: float = 60.0) -> dict:
    """The analyzer over a day (``wire.DayAnalysis``)."""
    return st.day_analysis(day, bucket)


async def create_run(st: RunStore, day: str, player: str | None = None, address: str | None = None) -> dict:
    """A new run of ``day``: its id, its token (shown once) and its score (``wire.RunCreated``);
    counted against ``address``'s quota (the client's address, ``quota``). Waits out a busy database
    (``RunStore.patient``); an unknown day is ``RunStore.create``'s NotFound, at once."""

    def create() -> dict:
        run, token = st.create(day, player, address)
        observe.run_created()
        return {"run": run.run, "token": token, "day": day, **st.score(run)}

    return await st.patient(create)


# ------------------------------------------------------------------ runs


async def score(st: RunStore, run: str) -> dict:
    """A run's totals (``wire.Score``)."""
    return st.score(st.get(run))


async def frontier(st: RunStore, run: str) -> dict:
    """The tiles the run may play now and those it has solved (``wire.Frontier``)."""
    s = await st.current(run)
    return {"run": run, "tiles": sorted(s.frontier), "solved": sorted(s.solved)}


async def run_tile(st: RunStore, run: str, tile: int) -> dict:
    """A tile's puzzle in board position for this run (``wire.TileView``)."""
    s = await st.current(run)
    return puzzle_view(st.days[s.day], tile, s.solved)


async def history(st: RunStore, run: str, after: int = 0, limit: int = 100) -> dict:
    """A run's moves after the cursor ``after``, oldest first (``wire.History``)."""
    return {"run": run, "moves": st.history(run, after, limit)}


async def run_analysis(st: RunStore, run: str) -> dict:
    """The analyzer of one run (``wire.RunAnalysis``)."""
    return st.run_analysis(run)


async def moves(
    st: RunStore,
    cfg: Settings,
    run: str,
    batch: list[dict],
    *,
    token: str | None = None,
    key: str | None = None,
    address: str | None = None,
    claimed: str | None = None,
    whole: bool = False,
) -> dict:
    """Judge one batch of moves (``wire.MovesResult``) with ``RunStore.submit``, in one transaction
    on the store's threads: the run's token first, then the run the body names (``claimed``, if it
    names one), then the batch limit, then the judge and the quotas of the run and ``address`` (a
    retried ``key`` answers as the first, and is not counted as a batch again). ``whole``: any move
    the judge does not accept refuses the batch (``RunStore.submit``; the MCP tool's promise)."""

    def refuse(s: RunState) -> None:
        if claimed is not None and claimed != run:
            raise BadInput("the body's 'run' differs from the run in the path")
        if len(batch) > cfg.max_moves:
            raise TooLarge(f"{len(batch)} moves in one request; the limit is {cfg.max_moves}")

    def judge() -> dict:
        done = st.submit(run, token, batch, key, address, refuse, whole)
        if not done.replayed:
            observe.judged(done.answer["verdicts"])
        return done.answer

    return await st.judge_off_loop(judge)
