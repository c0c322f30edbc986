"""Reference agents for ``tiles play``: the baselines a player's policy should beat.

An agent sees only what any player sees — the run's frontier and each tile's puzzle view
(``referee.service.boards.puzzle_view``: board givens, cells known from its solved tiles) — and
answers with moves. Two sessions give it that, with one interface: ``HttpSession`` through the
client against a served day, ``LocalSession`` in process over a ``RunStore`` (the same judging
core, ``RunStore.submit``; no server). So a score offline is the score online.

- ``solver``: solves each frontier tile's view with the project's engine (``engine.count``) and
  plays it when the view admits exactly one grid; a tile whose view is not yet unique waits until
  a tile next to it is solved. It clears every board the build proves playable tile by tile.
- ``random``: fills each frontier tile's unknown cells at random (a seeded stream), one guess per
  tile per round, for as many moves as the board has tiles: the floor.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Protocol

from engine.count import count_rows
from engine.report import parse_puzzle, solution_text
from referee import wire as m


class Session(Protocol):
    """One run as an agent plays it."""

    run: str
    day: str
    tiles: int
    max_moves: int

    def frontier(self) -> list[int]: ...
    def view(self, tile: int) -> m.TileView: ...
    def submit(self, moves: list[tuple[int, str]]) -> list[m.Verdict]: ...
    def requests(self) -> int: ...


@dataclass
class PlayResult:
    """What one run of an agent got (the final JSON line of ``tiles play``)."""

    day: str
    run: str
    agent: str
    player: str | None
    tiles: int
    solved: int = 0
    reward: int = 0
    moves: int = 0
    batches: int = 0
    rounds: int = 0
    requests: int = 0
    wall_s: float = 0.0
    moves_per_s: float = 0.0
    cleared: bool = False

    def as_dict(self) -> dict:
        return asdict(self)


@dataclass
class _Play:
    """The bookkeeping of one run while an agent plays it."""

    session: Session
    result: PlayResult
    progress: Callable[[str], None]
    t0: float = field(default_factory=time.perf_counter)
    said: float = 0.0  # when the last progress line went out

    def submit(self, moves: list[tuple[int, str]]) -> list[m.Verdict]:
        out = []
        step = max(1, self.session.max_moves)
        for k in range(0, len(moves), step):
            verdicts = self.session.submit(moves[k : k + step])
            self.result.batches += 1
            self.result.moves += len(verdicts)
            for v in verdicts:
                if v.correct:
                    self.result.solved += 1
                    self.result.reward += v.reward
            out.extend(verdicts)
        return out

    def round_done(self) -> None:
        """Count a round; a progress line for the first and then at most one a second."""
        self.result.rounds += 1
        if self.result.rounds == 1 or time.perf_counter() - self.said >= 1.0:
            self._say()

    def _say(self) -> None:
        r = self.result
        self.said = time.perf_counter()
        self.progress(
            f"round {r.rounds}: {r.solved}/{r.tiles} tiles, reward {r.reward}, {r.moves} moves, "
            f"{self.said - self.t0:.1f} s"
        )

    def finish(self) -> PlayResult:
        """The result, after a last progress line."""
        self._say()
        r = self.result
        r.wall_s = round(time.perf_counter() - self.t0, 3)
        r.moves_per_s = round(r.moves / r.wall_s, 1) if r.wall_s > 0 else 0.0
        r.requests = self.session.requests()
        r.cleared = r.solved == r.tiles
        return r


def solve_puzzle(puzzle: str, n: int) -> str | None:
    """The one grid agreeing with a puzzle string (``0``/``1``/``.``, n·n), or None when it admits
    none or several."""
    p = parse_puzzle(puzzle, n)
    count, sols, _nodes = count_rows(p.n, list(p.vals), list(p.known), 2, keep=1)
    if count != 1:
        return None
    return solution_text(sols[0], p.n)


def solve_view(view: m.TileView) -> str | None:
    """The one grid agreeing with a tile's puzzle view, or None when it admits none or several."""
    return solve_puzzle(view.puzzle, view.n)


def play_solver(session: Session, progress: Callable[[str], None], *, seed: int = 0) -> PlayResult:
    """Play ``session`` with the solver (module doc). A tile whose view was not unique is fetched
    again only once a seam neighbour of it is solved; before giving up, every frontier tile is
    fetched once more (a cell can also come from a tile touching at a corner)."""
    play = _Play(session, PlayResult(session.day, session.run, "solver", None, session.tiles), progress)
    order: list[int] = []  # tiles solved, in order
    waiting: dict[int, tuple[int, set[int]]] = {}  # tile -> (len(order) when last seen, its neighbours)
    refresh = False
    while True:
        ready = []
        for t in session.frontier():
            if not refresh and t in waiting:
                seen, nb = waiting[t]
                if not nb.intersection(order[seen:]):
                    continue
            v = session.view(t)
            cells = solve_view(v)
            if cells is None:
                waiting[t] = (len(order), set(v.neighbours))
            else:
                ready.append((t, cells))
        if not ready:
            if refresh:
                break
            refresh = True
            continue
        refresh = False
        for (t, _), verdict in zip(ready, play.submit(ready), strict=True):
            if verdict.correct:
                order.append(t)
                waiting.pop(t, None)
        play.round_done()
    return play.finish()


def play_random(session: Session, progress: Callable[[str], None], *, seed: int = 0) -> PlayResult:
    """Play ``session`` at random (module doc): each round one guess per frontier tile, its unknown
    cells drawn from ``random.Random(seed)``, until as many moves as the board has tiles. The frontier
    and the views are fetched again only after a guess solved a tile (nothing else changes them)."""
    rng = random.Random(seed)
    play = _Play(session, PlayResult(session.day, session.run, "random", None, session.tiles), progress)
    frontier: list[int] | None = None
    views: dict[int, m.TileView] = {}
    while play.result.moves < session.tiles:
        if frontier is None:
            frontier, views = session.frontier(), {}
        if not frontier:
            break
        guesses = []
        for t in frontier[: session.tiles - play.result.moves]:
            v = views.get(t) or views.setdefault(t, session.view(t))
            guesses.append((t, "".join(ch if ch != "." else rng.choice("01") for ch in v.puzzle)))
        if any(v.correct for v in play.submit(guesses)):
            frontier = None
        play.round_done()
    return play.finish()


PLAYERS: dict[str, Callable[..., PlayResult]] = {"solver": play_solver, "random": play_random}


def play(
    agent: str,
    session: Session,
    progress: Callable[[str], None] = lambda _line: None,
    *,
    seed: int = 0,
    player: str | None = None,
) -> PlayResult:
    """Play one run of ``session`` with the named agent; its result."""
    result = PLAYERS[agent](session, progress, seed=seed)
    result.player = player
    return result
