"""A test player that plays a day the way the game is played: one tile at a time, from its own view.

It knows only FORMAT §14 and the service's HTTP API, and its play imports nothing from the tiles package:
it asks which tiles it may play (``GET /runs/{run}/frontier``), reads each one's puzzle (``GET
/runs/{run}/tiles/{id}``: the board givens in the window and the cells of the tiles it has
solved), solves it with its own small solver (``independent_verifier.solutions``, brute force from
the rules, not the referee's closure code) and plays a tile only when its view admits exactly one
grid. Each round it submits every tile it could settle, in one batch (``POST /runs/{run}/moves``),
then looks again. It stops when a round settles nothing: cleared when the frontier is empty.

``play(client)`` runs it over any client with ``frontier() -> list[int]``, ``view(tile) -> dict``
(the puzzle view's JSON) and ``submit([(tile, cells)]) -> [verdict]``; ``Http`` is the real one,
``Local`` the same views and judge in process (the one place that calls the package, for speed).

    python tile_player.py BASE_URL DAY     # plays a served day, prints the outcome as JSON
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass, field

from independent_verifier import solutions


@dataclass
class Outcome:
    """What a player got: tiles solved, reward, rounds played, and where it stopped."""

    solved: int = 0
    reward: int = 0
    rounds: int = 0
    moves: int = 0
    stuck: list[int] = field(default_factory=list)  # playable tiles it could not settle at the end

    @property
    def cleared(self) -> bool:
        return not self.stuck


def solve_view(n: int, puzzle: str) -> str | None:
    """The one grid agreeing with a puzzle string (``0``/``1``/``.``, row-major), or None when there are
    none or several."""
    km, kv = [], []
    for r in range(n):
        row = puzzle[r * n : (r + 1) * n]
        km.append(sum((ch != ".") << (n - 1 - c) for c, ch in enumerate(row)))
        kv.append(sum((ch == "1") << (n - 1 - c) for c, ch in enumerate(row)))
    found = []
    for grid in solutions(n, km, kv):
        found.append(grid)
        if len(found) == 2:
            return None
    if not found:
        return None
    return "".join(format(v, f"0{n}b") for v in found[0])


def play(client, max_batch: int = 4096) -> Outcome:
    """Play until a round settles nothing (see the module docstring)."""
    out = Outcome()
    tried: dict[int, str] = {}  # tile -> the puzzle it could not settle (retry once it grows)
    while True:
        ready = []
        for t in client.frontier():
            v = client.view(t)
            if tried.get(t) == v["puzzle"]:
                continue
            cells = solve_view(v["n"], v["puzzle"])
            if cells is None:
                tried[t] = v["puzzle"]
            else:
                ready.append((t, cells))
        if not ready:
            out.stuck = sorted(client.frontier())
            return out
        out.rounds += 1
        for k in range(0, len(ready), max_batch):
            for verdict in client.submit(ready[k : k + max_batch]):
                if not (verdict["accepted"] and verdict["correct"]):
                    raise AssertionError(f"the unique grid of a view was refused: {verdict}")
                out.solved += 1
                out.moves += 1
                out.reward += verdict["reward"]


class Local:
    """The referee's own puzzle view and judge over a ``referee.service.boards.DayBoard``, in process:
    what the service serves, without HTTP."""

    def __init__(self, db) -> None:
        from referee.service import boards

        self.boards, self.db, self.solved = boards, db, set()

    def frontier(self) -> list[int]:
        return sorted(self.boards.frontier(self.db, self.solved))

    def view(self, tile: int) -> dict:
        return self.boards.puzzle_view(self.db, tile, self.solved)

    def submit(self, moves: list[tuple[int, str]]) -> list[dict]:
        out = []
        for t, cells in moves:
            v = self.db.judge.judge_move({"tile": t, "cells": cells}, self.solved)
            if v["correct"]:
                self.solved.add(t)
            out.append(v)
        return out


class Http:
    """The player's side of the service: a run on ``day`` at ``base`` (``…/api/v1``)."""

    def __init__(self, base: str, day: str, max_batch: int = 64) -> None:
        import httpx

        self.c = httpx.Client(base_url=base, timeout=60)
        r = self.c.post(f"/days/{day}/runs")
        r.raise_for_status()
        j = r.json()
        self.run, self.auth = j["run"], {"Authorization": f"Bearer {j['token']}"}
        self.max_batch = max_batch

    def frontier(self) -> list[int]:
        r = self.c.get(f"/runs/{self.run}/frontier")
        r.raise_for_status()
        return r.json()["tiles"]

    def view(self, tile: int) -> dict:
        r = self.c.get(f"/runs/{self.run}/tiles/{tile}")
        r.raise_for_status()
        return r.json()

    def submit(self, moves: list[tuple[int, str]]) -> list[dict]:
        out = []
        for k in range(0, len(moves), self.max_batch):
            body = {"moves": [{"tile": t, "cells": s} for t, s in moves[k : k + self.max_batch]]}
            r = self.c.post(f"/runs/{self.run}/moves", json=body, headers=self.auth)
            r.raise_for_status()
            out.extend(r.json()["verdicts"])
        return out

    def score(self) -> dict:
        r = self.c.get(f"/runs/{self.run}")
        r.raise_for_status()
        return r.json()


if __name__ == "__main__":
    o = play(Http(sys.argv[1], sys.argv[2]))
    print(
        json.dumps({"cleared": o.cleared, "solved": o.solved, "reward": o.reward, "rounds": o.rounds, "stuck": o.stuck})
    )
