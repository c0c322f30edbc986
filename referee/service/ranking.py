"""The leaderboard's order (``RunStore.leaderboard``, ``GET /days/{day}/leaderboard?by=…``).

``by="reward"`` (the default): reward, then tiles solved (both more first), then age (older first).
``by="batches" | "requests" | "time"``: what a run spent to reach the full reward — the batches of
moves up to the one that cleared the board, the requests naming the run until then (``asked``),
the seconds from its creation to that batch. Runs that cleared the board come first, fewest first,
ties broken by age; then the runs that have not, by reward as above. So efficiency ranks only what
reached the full reward: a run cannot rank high by spending little and solving little.
"""

from __future__ import annotations

from typing import get_args

from referee.wire import Measure

MEASURES: tuple[str, ...] = get_args(Measure)  # reward, batches, requests, time


def row(
    run: str,
    player: str | None,
    created: int,
    reward: int,
    solved: int,
    moves: int,
    requests: int,
    cleared_requests: int | None,
    batches_to_last: int,
    last_at: float | None,
    batches: int,
    *,
    tiles: int,
) -> dict:
    """One run's leaderboard row from its aggregates (``RunStore.leaderboard``'s query, a row of which
    fills the positional arguments; ``tiles``, the board's, goes by name): before the board is
    cleared, the batches and requests so far and no time."""
    cleared = solved == tiles
    return {
        "run": run,
        "player": player,
        "created": created,
        "reward": reward,
        "solved": solved,
        "moves": moves,
        "cleared": cleared,
        "batches": batches_to_last if cleared else batches,
        "requests": cleared_requests if cleared and cleared_requests is not None else requests,
        "time": round(last_at - created, 3) if cleared and last_at is not None else None,
    }


def key(by: str):
    """The sort key of ``by`` (module doc)."""
    if by == "reward":
        return lambda r: (-r["reward"], -r["solved"], r["created"], r["run"])
    return lambda r: (
        (0, r[by], r["created"], r["run"]) if r["cleared"] else (1, -r["reward"], -r["solved"], r["created"], r["run"])
    )


def rank(rows: list[dict], by: str, limit: int) -> list[dict]:
    """The first ``limit`` rows in ``by``'s order, numbered from 1."""
    ordered = sorted(rows, key=key(by))[:limit]
    return [{"rank": k, **r} for k, r in enumerate(ordered, start=1)]
