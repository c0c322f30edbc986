"""The two ways an agent plays a run (``players.agents.Session``): over HTTP through the client, or
in process over a ``RunStore`` — the same views (``puzzle_view``) and the same judging core
(``RunStore.submit``, which calls ``Judge.record``), so offline and online scores agree."""

from __future__ import annotations

from players.client import Client
from referee import wire as m
from referee.service.boards import puzzle_view
from referee.service.runs import RunStore


class HttpSession:
    """A new run of ``day`` on the service behind ``client`` (or ``run``, whose token the client holds)."""

    def __init__(
        self,
        client: Client,
        day: str,
        player: str | None = None,
        max_moves: int = m.MAX_MOVES,
        run: str | None = None,
    ) -> None:
        self.client, self.day, self.max_moves = client, day, max_moves
        self.tiles = len(client.board(day).tiles)
        self.run = run if run is not None else client.create_run(day, player).run

    def frontier(self) -> list[int]:
        return self.client.frontier(self.run).tiles

    def view(self, tile: int) -> m.TileView:
        return self.client.run_tile(self.run, tile)

    def submit(self, moves: list[tuple[int, str]]) -> list[m.Verdict]:
        return self.client.moves(self.run, moves).verdicts

    def requests(self) -> int:
        return self.client.requests


class LocalSession:
    """A new run of ``day`` in ``store``, played in process: no server, no HTTP."""

    def __init__(self, store: RunStore, day: str, player: str | None = None, max_moves: int = m.MAX_MOVES) -> None:
        self.store, self.day, self.max_moves = store, day, max_moves
        self.tiles = len(store.day(day).board.squares)
        state, self._token = store.create(day, player)
        self.run = state.run
        self._calls = 1

    def frontier(self) -> list[int]:
        self._calls += 1
        return sorted(self.store.get(self.run).frontier)

    def view(self, tile: int) -> m.TileView:
        self._calls += 1
        st = self.store.get(self.run)
        return m.TileView.model_validate(puzzle_view(self.store.days[st.day], tile, st.solved))

    def submit(self, moves: list[tuple[int, str]]) -> list[m.Verdict]:
        self._calls += 1
        done = self.store.submit(self.run, self._token, [{"tile": t, "cells": c} for t, c in moves])
        return [m.Verdict.model_validate(v) for v in done.answer["verdicts"]]

    def requests(self) -> int:
        """Calls made (what would have been HTTP requests)."""
        return self._calls
