"""The leaderboard's order (``RunStore.leaderboard``, ``GET /days/{day}/leaderboard?by=…``).

``by="reward"`` (the default): reward, then tiles solved (both more first), then age (older first).
``by="batches" | "requests" | "time"``: what a run spent to reach the full reward — the batches of
moves up to the one that cleared the board, the requests naming the run until then (``asked``),
the seconds from its creation to that batch. Runs that cleared the board come first, fewest first,
ties broken by age; then the runs that have not, by reward as above. So efficiency ranks only what
reached the full reward: a run cannot rank high by spending little and solving little.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import get_args

from referee.wire import Measure

MEASURES: tuple[str, ...] = get_args(Measure)  # reward, batches, requests, time


@dataclass(frozen=True)
class Row:
    """One run on the leaderboard: the row as it is shown, and the instant the run was created (unix
    seconds to the microsecond), which orders it among runs made in the same second — the row shows
    the whole second, ``created``."""

    shown: dict
    at: float


def row(
    run: str,
    player: str | None,
    created: float,
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
) -> Row:
    """One run's leaderboard row from its aggregates (``RunStore.leaderboard``'s query, a row of which
    fills the positional arguments; ``tiles``, the board's, goes by name): before the board is
    cleared, the batches and requests so far and no time. ``created`` is the creation instant
    (``runsdb.base.CREATED``), so ``time`` is exact to the millisecond."""
    cleared = solved == tiles
    shown = {
        "run": run,
        "player": player,
        "created": int(created),
        "reward": reward,
        "solved": solved,
        "moves": moves,
        "cleared": cleared,
        "batches": batches_to_last if cleared else batches,
        "requests": cleared_requests if cleared and cleared_requests is not None else requests,
        "time": round(last_at - created, 3) if cleared and last_at is not None else None,
    }
    return Row(shown, created)


def key(by: str):
    """The sort key of ``by`` (module doc)."""
    if by == "reward":
        return lambda r: (-r.shown["reward"], -r.shown["solved"], r.at, r.shown["run"])

    def spent(r: Row) -> tuple:
        s = r.shown
        return (0, s[by], r.at, s["run"]) if s["cleared"] else (1, -s["reward"], -s["solved"], r.at, s["run"])

    return spent


def rank(rows: list[Row], by: str, limit: int) -> list[dict]:
    """The first ``limit`` rows in ``by``'s order, numbered from 1."""
    ordered = sorted(rows, key=key(by))[:limit]
    return [{"rank": k, **r.shown} for k, r in enumerate(ordered, start=1)]
