"""What a player does, as plain functions over the store: the one core behind both front doors of
the service, the HTTP API (``routes_days``, ``routes_runs``) and the MCP tools (``mcp_tools``).

Each returns the plain dict of its answer model (``models``) and raises the project's errors
(``tilelib.errors``: NotFound, Forbidden, OffFrontier, TooLarge, BadInput), which each front door
turns into its own one-line error (an HTTP status, an MCP tool error).
"""

from __future__ import annotations

from referee.service import observe
from referee.service.boards import day_is_over, puzzle_view
from referee.service.deps import Settings
from referee.service.runs import RunState, RunStore
from tilelib.errors import BadInput, TooLarge


def over(day: str, cfg: Settings) -> bool:
    """True once ``day`` is past (UTC, or the settings' own clock)."""
    return day_is_over(day, cfg.today() if cfg.today else None)


def days(st: RunStore, cfg: Settings) -> list[dict]:
    """The days on offer, oldest first (``models.Days``)."""
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


def start_run(st: RunStore, day: str, player: str | None = None, address: str | None = None) -> dict:
    """A new run of ``day``: its id, its token (shown once) and its score (``models.RunCreated``);
    counted against ``address``'s quota (the client's address, ``quota``)."""
    st.day(day)
    run, token = st.create(day, player, address)
    observe.run_created()
    return {"run": run.run, "token": token, "day": day, **st.score(run)}


def leaderboard(st: RunStore, day: str, limit: int = 100, by: str = "reward") -> dict:
    """A day's runs in ``by``'s order (``models.Leaderboard``; ``referee.service.ranking``)."""
    return {"day": day, "by": by, "runs": st.leaderboard(day, limit, by)}


def score(st: RunStore, run: str) -> dict:
    """A run's totals (``models.Score``)."""
    return st.score(st.get(run))


async def frontier(st: RunStore, run: str) -> dict:
    """The tiles the run may play now and those it has solved (``models.Frontier``)."""
    s = await st.current(run)
    return {"run": run, "tiles": sorted(s.frontier), "solved": sorted(s.solved)}


async def tile(st: RunStore, run: str, tile_id: int) -> dict:
    """A tile's puzzle in board position for this run (``models.TileView``)."""
    s = await st.current(run)
    return puzzle_view(st.days[s.day], tile_id, s.solved)


def moves(
    st: RunStore,
    cfg: Settings,
    run: str,
    token: str | None,
    batch: list[dict],
    key: str | None = None,
    address: str | None = None,
    claimed: str | None = None,
) -> dict:
    """Judge one batch of moves (``models.MovesResult``) with ``RunStore.submit``, in one transaction:
    the run's token first, then the run the body names (``claimed``, if it names one), then the batch
    limit, then the judge and the quotas of the run and ``address`` (a retried ``key`` answers as the
    first)."""
    before = []

    def refuse(s: RunState) -> None:
        if claimed is not None and claimed != run:
            raise BadInput("the body's 'run' differs from the run in the path")
        if len(batch) > cfg.max_moves:
            raise TooLarge(f"{len(batch)} moves in one request; the limit is {cfg.max_moves}")
        before.append(s.moves)  # an int: ``s`` itself is the state the batch advances

    answer = st.submit(run, token, batch, key, address, refuse)
    if answer["score"]["moves"] >= before[-1] + len(answer["verdicts"]):  # not a retry answered from its key
        observe.judged(answer["verdicts"])
    return answer
