"""``tiles/Takuzu-v0``: a day's board as a Gymnasium environment, registered on ``import players.gym``.

Two ways to play, one environment: offline in process (``manifest=PATH, library=PATH``: a
``LocalSession`` over a ``RunStore`` in a temporary runs file, no server) or online through the
service (``url=URL, day=DAY``: an ``HttpSession`` over ``players.client``). Either way a move is
judged by the one judging core (``RunStore.submit`` → ``Judge.record``), so a reward here is the
reward the leaderboard shows. Each ``reset`` starts a new run of the day.

Observation (a ``Dict``; cell planes are 16×16 ``int8``, the tile's n×n window in the top-left
corner, row-major from board cell (y0, x0), zero outside it):

- ``tile``: the id of the frontier tile shown (``Discrete(K)``, K = the board's tile count);
- ``n``: its side, 6..16; ``position``: its window's top-left board cell ``[y0, x0]``;
- ``givens``: MASK of the cells the board shows (the tile's givens, its neighbours' on the seams,
  zone cells, clues); ``known``: MASK of the seam cells known from the run's solved tiles;
  ``zone``: MASK of the zone cells; ``values``: VALUES of the cells in ``givens`` or ``known``
  (0 elsewhere);
- ``frontier``, ``solved``: MASKS over tile ids (``MultiBinary(K)``): the tiles the run may play
  now, and those it has solved.

Which frontier tile is shown is drawn from the environment's seeded generator (``np_random``)
among the frontier tiles not shown since the run last solved a tile (all of them again once each
has been shown), so ``reset(seed=s)`` and the same actions give the same episode.

Action (a ``Dict``): ``tile`` (``Discrete(K + 1)``) and ``cells`` (16×16 ``MultiBinary``, its n×n
top-left corner read as the tile's grid). A frontier tile is sent to the judge as one move; the
value K, or any tile off the frontier, is a pass: nothing is sent and the next observation shows
another frontier tile. Reward: the judge's, n² for a solved tile, else 0. The episode terminates
when the frontier is empty (the board solved, or nothing left to reach) and is truncated after
``max_steps`` steps (default 16·K; ``env.spec.max_episode_steps`` says it). ``info`` keeps its
keys, types and shapes on every step, so vector envs stack it (``DayEnv``): the shown tile and its
``puzzle`` string (``0``/``1``/``.``, what ``tiles solve`` reads), how many tiles are on the
``frontier``, ``solved`` and ``reward`` so far, whether a move was ``judged`` and its ``verdict``,
and ``is_success`` (the whole board solved); with ``text=True`` also ``text``, the shown tile as a
language model reads it (``referee.tile_text``: the rules, the grid, where each fixed cell comes
from). ``render_mode``: ``ansi`` (text) or ``rgb_array`` (``picture``: the shown tile, 128×128). An
environment pickles as what it was made with.

The ids are registered on ``import players.gym``; ``gymnasium.make("players.gym:tiles/Takuzu-v0",
…)`` imports it first (Gymnasium's ``module:id`` form), so nothing need be imported by hand.
``tiles/TakuzuCells-v0`` (``players.cells``) is the same day with flat spaces, a cell per step.

``solver_policy`` is the reference policy (``players.agents``' solver on one observation).
"""

from __future__ import annotations

import tempfile
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces
from gymnasium.envs.registration import EnvSpec

from players.agents import Session, solve_puzzle
from players.boards import BoardMaker, Boards
from referee.wire import TileView
from tilelib.errors import BadInput

if TYPE_CHECKING:  # imported where used: the offline and online backends load only their own
    from players.client import Client
    from referee.service.runs import RunStore

ENV_ID = "tiles/Takuzu-v0"
CELLS_ID = "tiles/TakuzuCells-v0"
SIDE = 16  # the largest tile side: every cell plane is SIDE × SIDE
PLANES = ("givens", "known", "zone", "values")


class DayEnv(gym.Env):
    """What the day's environments share: the two backends, the run (one session per episode), the
    frontier, which frontier tile is shown, the judged moves, ``info`` and the episode's limit.

    ``info`` has the same keys, types and shapes on every step (vector envs stack it): ``tile``
    (int, the shown tile), ``puzzle`` (str), ``frontier`` (int, how many tiles the run may play),
    ``solved`` and ``reward`` (int, so far), ``judged`` (bool: a move was sent to the judge this
    step), ``verdict`` (its verdict, or on a step that judged nothing the same keys with
    ``tile`` -1, false, 0 and an empty ``reason``) and ``is_success`` (bool: every tile solved)."""

    metadata = {"render_modes": ["ansi", "rgb_array"], "render_fps": 4}

    def __init__(
        self,
        manifest: str | Path | None = None,
        library: str | Path | None = None,
        url: str | None = None,
        day: str | None = None,
        *,
        player: str | None = None,
        runs: str | Path | None = None,
        max_steps: int | None = None,
        render_mode: str | None = None,
        boards: Boards | dict | None = None,
        text: bool = False,
    ) -> None:
        if sum(x is not None for x in (manifest, url, boards)) != 1:
            raise BadInput(
                "give manifest=PATH with library=PATH (offline), url=URL (online) or boards={…} (a fresh "
                "board every reset): one of the three"
            )
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise BadInput(f"render_mode {render_mode!r}: this environment renders 'ansi', 'rgb_array' or nothing")
        # what the environment was made with: a pickled one is made again from it (``__reduce__``)
        self._made_with: dict[str, Any] = {
            "manifest": manifest,
            "library": library,
            "url": url,
            "day": day,
            "player": player,
            "runs": runs,
            "max_steps": max_steps,
            "render_mode": render_mode,
            "boards": boards,
            "text": text,
        }
        self.text = text
        self.render_mode, self.player = render_mode, player
        self._tmp: tempfile.TemporaryDirectory | None = None
        self._store: RunStore | None = None
        self._client: Client | None = None
        self._maker: BoardMaker | None = None
        self._board: int | None = None  # the made board on offer (``boards=``)
        if url is not None:
            self._open_online(url, day)
        elif manifest is not None:
            self._open_offline(Path(manifest), library, day, runs)
        else:  # boards (checked above): board 0 of the split until the first reset draws one
            spec = boards if isinstance(boards, Boards) else Boards(**(boards or {}))
            self._tmp = tempfile.TemporaryDirectory(prefix="tiles-gym-")
            self._maker = BoardMaker(spec, Path(self._tmp.name) / "boards")
            self._offer(0)
        self._max_steps = None if max_steps is None else int(max_steps)
        self.session: Session | None = None
        self._view: TileView | None = None
        self._spec: EnvSpec | None = None

    @property
    def max_steps(self) -> int:
        """The episode's limit: ``max_steps`` as given, else ``default_steps()`` of the board on offer
        (with ``boards=``, the board of the current episode)."""
        return self.default_steps() if self._max_steps is None else self._max_steps

    def default_steps(self) -> int:
        """The episode's limit when ``max_steps`` is not given."""
        return 16 * self.tiles

    @property
    def spec(self) -> EnvSpec | None:
        """The spec ``gymnasium.make`` gave, its ``max_episode_steps`` this env's own limit (which
        depends on the day, so no registration can state it)."""
        return self._spec

    @spec.setter
    def spec(self, value: EnvSpec | None) -> None:
        self._spec = (
            None if value is None else replace(value, max_episode_steps=value.max_episode_steps or self.max_steps)
        )

    # ------------------------------------------------------------ the two backends

    def _open_offline(self, manifest: Path, library, day: str | None, runs) -> None:
        from referee.service.boards import DayBoard, load_manifest
        from referee.service.runs import RunStore
        from tilelib.store import Library

        if library is None:
            raise BadInput("offline play needs library=PATH (the library the manifest's tiles are in)")
        m = load_manifest(manifest)
        if day is not None and day != m.day:
            raise BadInput(f"day {day} differs from the manifest's day {m.day}")
        if runs is None:
            self._tmp = tempfile.TemporaryDirectory(prefix="tiles-gym-")
            runs = Path(self._tmp.name) / "runs.sqlite"
        with Library.open(Path(library)) as lib:
            db = DayBoard.load(m, lib, runs)
        self._store = RunStore(runs, {m.day: db})
        self.day, self.G, self.tiles = m.day, db.board.G, len(db.board.squares)

    def _offer(self, k: int) -> None:
        """Offer made board ``k`` (``boards=``): built, loaded, over a runs file of its own."""
        if self._board == k:
            return
        assert self._maker is not None and self._tmp is not None
        if self._store is not None:
            self._store.close()
            self._store = None
        manifest, library = self._maker.board(k)
        self._open_offline(manifest, library, None, manifest.parent / "runs.sqlite")
        self._board = k

    def _open_online(self, url: str, day: str | None) -> None:
        from players.client import Client

        self._client = Client(url)
        if day is None:
            offered = self._client.days()
            if not offered:
                raise BadInput("the service offers no day")
            day = max(d.day for d in offered)
        board = self._client.board(day)
        self.day, self.G, self.tiles = day, board.G, len(board.tiles)

    def _new_session(self) -> Session:
        from players.sessions import HttpSession, LocalSession

        if self._client is not None:
            return HttpSession(self._client, self.day, self.player)
        return LocalSession(self._local_store(), self.day, self.player)

    def _local_store(self) -> RunStore:
        """The offline backend's store; BadInput once the environment is closed (or online, closed:
        neither backend is left)."""
        if self._store is None:
            raise BadInput("the environment is closed: make a new one to play again")
        return self._store

    def _episode(self) -> Session:
        """The current run's session; BadInput before the first reset."""
        if self.session is None:
            raise BadInput("call reset() before step()")
        return self.session

    def _view_now(self) -> TileView:
        """The view of the tile shown now; BadInput before the first reset (no tile is shown yet)."""
        if self._view is None:
            raise BadInput("call reset() first: no tile is shown before it")
        return self._view

    @property
    def run(self) -> str | None:
        """The current episode's run id (on the leaderboard, in the history)."""
        return None if self.session is None else self.session.run

    # ------------------------------------------------------------ the episode

    def _begin(self, seed: int | None) -> None:
        """A new run: the first frontier tile shown. With ``boards=``, on a board of its own: board
        ``seed`` of the split, or (no seed) one drawn from the environment's seeded generator."""
        super().reset(seed=seed)
        if self._maker is not None:
            self._local_store()  # a closed environment says so before building anything
            self._offer(int(seed) if seed is not None else int(self.np_random.integers(2**31)))
            self._view = None
        self.session = self._new_session()
        self._steps, self._reward = 0, 0
        self._solved: set[int] = set()
        self._shown: set[int] = set()
        self._frontier = self.session.frontier()
        self._show()

    def _judge(self, tile: int, grid: str):
        """Send one move to the judge; the run moves on if it solved the tile. Its verdict."""
        session = self._episode()
        verdict = session.submit([(tile, grid)])[0]
        if verdict.correct:
            self._reward += verdict.reward
            self._solved.add(tile)
            self._shown.clear()  # a solve can change the views of the tiles near it
            self._frontier = session.frontier()
        return verdict

    def _tick(self) -> tuple[bool, bool]:
        """Count a step: (terminated, truncated)."""
        self._steps += 1
        terminated = not self._frontier
        return terminated, not terminated and self._steps >= self.max_steps

    def _show(self) -> None:
        """Fetch the view of the next frontier tile to show (module doc: which one)."""
        session = self._episode()
        if not self._frontier:
            self._view = session.view(self._view.tile if self._view is not None else 0)
            return
        fresh = [t for t in self._frontier if t not in self._shown]
        if not fresh:
            self._shown.clear()
            fresh = list(self._frontier)
        tile = fresh[int(self.np_random.integers(len(fresh)))]
        self._shown.add(tile)
        self._view = session.view(tile)

    def _info(self, verdict) -> dict[str, Any]:
        v = dict(NO_VERDICT) if verdict is None else {**verdict.model_dump(), "reason": verdict.reason or ""}
        return {
            "tile": int(self._view_now().tile),
            "puzzle": self._view_now().puzzle,
            "frontier": len(self._frontier),
            "solved": len(self._solved),
            "reward": self._reward,
            "judged": verdict is not None,
            "verdict": v,
            "is_success": len(self._solved) == self.tiles,  # the whole board solved (what SB3's callbacks read)
        } | ({"text": self.text_view()} if self.text else {})

    def text_view(self) -> str:
        """The shown tile as a language model reads it (``referee.tile_text``), with the cells set this
        attempt (the cells env) in its grid."""
        from referee.tile_text import tile_text

        return tile_text({**self._view_now().model_dump(), "puzzle": self.shown_puzzle()})

    def render(self) -> str | np.ndarray | None:
        """``ansi``: the shown tile's puzzle as n lines of cells, under a line saying which tile it is.
        ``rgb_array``: a picture of it (``picture``), the same size for every tile; before the first
        reset, the empty frame."""
        if self.render_mode == "rgb_array":
            return picture(self._view, self.shown_puzzle() if self._view is not None else "")
        if self.render_mode != "ansi" or self._view is None:
            return None
        from referee.service.boards import grid_text

        v = self._view
        return (
            f"tile {v.tile} (n={v.n}, at row {v.y0}, col {v.x0}); solved {len(self._solved)}, "
            f"reward {self._reward}\n{grid_text(self.shown_puzzle(), v.n)}\n"
        )

    def __reduce__(self):
        """Pickled, an environment is what it was made with: unpickled, it is made again (a fresh run
        at the next reset; offline over its own new runs file unless ``runs=`` named one)."""
        return (_remade, (type(self), dict(self._made_with)))

    def shown_puzzle(self) -> str:
        """The shown tile's puzzle as the render draws it."""
        return self._view_now().puzzle

    def close(self) -> None:
        if self._store is not None:
            self._store.close()
            self._store = None
        if self._client is not None:
            self._client.close()
            self._client = None
        if self._tmp is not None:
            self._tmp.cleanup()
            self._tmp = None
        super().close()


NO_VERDICT = {"tile": -1, "accepted": False, "correct": False, "reward": 0, "reason": ""}


def _remade(cls: type[DayEnv], made_with: dict[str, Any]) -> DayEnv:
    return cls(**made_with)


PX = 8  # pixels per cell of the rgb_array picture: SIDE · PX square, whatever the tile's n
# The picture's colours: each value as the board shows it (a given), as known from a solved
# neighbour, and as set this attempt (the cells environment); a cell to fill; outside the window.
COLOURS = {
    ("given", "0"): (245, 245, 240),
    ("given", "1"): (25, 25, 30),
    ("known", "0"): (200, 220, 255),
    ("known", "1"): (20, 50, 140),
    ("set", "0"): (215, 245, 215),
    ("set", "1"): (25, 110, 35),
    "empty": (150, 150, 150),
    "outside": (45, 45, 55),
    "grid": (95, 95, 105),
    "seam": (230, 170, 30),
}
SOURCE = {"g": "given", "k": "known", "s": "set"}  # ``referee.tile_text.sources``' letters


def picture(view: TileView | None, shown: str) -> np.ndarray:
    """The shown tile as an ``(SIDE·PX, SIDE·PX, 3)`` ``uint8`` picture: its n×n window in the
    top-left corner, each cell coloured by its value and where it comes from (``COLOURS``: the
    board's givens, the seam cells known from solved tiles, the cells set this attempt, the cells
    still to fill), the window's border — the seams it shares with its neighbours — outlined."""
    img = np.empty((SIDE * PX, SIDE * PX, 3), dtype=np.uint8)
    img[...] = COLOURS["outside"]
    if view is None:
        return img
    from referee.tile_text import sources

    n = view.n
    for i, (ch, src) in enumerate(zip(shown, sources(view.givens, view.known, shown), strict=True)):
        r, c = divmod(i, n)
        colour = COLOURS["empty"] if src == "." else COLOURS[(SOURCE[src], ch)]
        img[r * PX : (r + 1) * PX, c * PX : (c + 1) * PX] = colour
    lines = np.arange(n + 1) * PX
    img[np.minimum(lines, SIDE * PX - 1), : n * PX] = COLOURS["grid"]
    img[: n * PX, np.minimum(lines, SIDE * PX - 1)] = COLOURS["grid"]
    edge = n * PX - 1
    img[[0, edge], : n * PX] = COLOURS["seam"]
    img[: n * PX, [0, edge]] = COLOURS["seam"]
    return img


class TakuzuEnv(DayEnv):
    """One day's board; each episode is one run of it (module doc: observation, action, reward)."""

    def __init__(self, *args, **kw) -> None:
        if kw.get("boards") is not None:
            raise BadInput(
                "boards= draws boards with different tile counts, and this env's spaces count tiles: "
                f"use {CELLS_ID}, whose spaces do not depend on the board"
            )
        super().__init__(*args, **kw)
        k = self.tiles
        plane = spaces.MultiBinary((SIDE, SIDE))
        self.observation_space = spaces.Dict(
            {
                "tile": spaces.Discrete(k),
                "n": spaces.Discrete(SIDE - 5, start=6),
                "position": spaces.Box(0, self.G - 1, shape=(2,), dtype=np.int64),
                **{name: plane for name in PLANES},
                "frontier": spaces.MultiBinary(k),
                "solved": spaces.MultiBinary(k),
            }
        )
        self.action_space = spaces.Dict({"tile": spaces.Discrete(k + 1), "cells": spaces.MultiBinary((SIDE, SIDE))})

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        self._begin(seed)
        return self._observation(), self._info(None)

    def step(self, action: dict[str, Any]):
        if self.session is None:
            raise BadInput("call reset() before step()")
        tile = int(action["tile"])
        verdict = None
        if tile in self._frontier:
            n = self._n(tile)
            cells = np.asarray(action["cells"], dtype=np.int64)[:n, :n]
            verdict = self._judge(tile, "".join("1" if c else "0" for c in cells.ravel()))
        reward = verdict.reward if verdict is not None and verdict.correct else 0
        terminated, truncated = self._tick()
        self._show()
        return self._observation(), reward, terminated, truncated, self._info(verdict)

    def _n(self, tile: int) -> int:
        if self._view is not None and self._view.tile == tile:
            return self._view.n
        return self._episode().view(tile).n

    def _observation(self) -> dict[str, Any]:
        v = self._view_now()
        planes = {name: np.zeros((SIDE, SIDE), dtype=np.int8) for name in PLANES}
        for name in ("givens", "known", "zone"):
            planes[name][: v.n, : v.n] = _grid(getattr(v, name), v.n)
        shown = (planes["givens"] | planes["known"]).astype(bool)
        values = _grid(v.puzzle.replace(".", "0"), v.n)
        planes["values"][: v.n, : v.n] = np.where(shown[: v.n, : v.n], values, 0)
        frontier = np.zeros(self.tiles, dtype=np.int8)
        frontier[list(self._frontier)] = 1
        solved = np.zeros(self.tiles, dtype=np.int8)
        solved[sorted(self._solved)] = 1
        return {
            "tile": int(v.tile),
            "n": int(v.n),
            "position": np.array([v.y0, v.x0], dtype=np.int64),
            **planes,
            "frontier": frontier,
            "solved": solved,
        }


def _grid(chars: str, n: int) -> np.ndarray:
    """An n·n row-major string of '0'/'1' as an n×n int8 array."""
    return (np.frombuffer(chars.encode("ascii"), dtype=np.uint8) - ord("0")).astype(np.int8).reshape(n, n)


def observation_puzzle(obs: dict[str, Any]) -> str:
    """The shown tile's puzzle string (``0``/``1``/``.``, n·n) rebuilt from an observation's planes."""
    n = int(obs["n"])
    shown = (np.asarray(obs["givens"]) | np.asarray(obs["known"]))[:n, :n].astype(bool)
    values = np.asarray(obs["values"])[:n, :n]
    return "".join(str(int(val)) if s else "." for s, val in zip(shown.ravel(), values.ravel(), strict=True))


def solver_policy(obs: dict[str, Any]) -> dict[str, Any]:
    """The reference solver as a policy: play the shown tile when its puzzle admits one grid, else
    pass (tile = K). It never guesses, so it clears every board the build proves playable tile by
    tile with no wrong move."""
    k = int(np.asarray(obs["frontier"]).shape[0])
    n = int(obs["n"])
    cells = np.zeros((SIDE, SIDE), dtype=np.int8)
    grid = solve_puzzle(observation_puzzle(obs), n) if obs["frontier"][int(obs["tile"])] else None
    if grid is None:
        return {"tile": k, "cells": cells}
    cells[:n, :n] = _grid(grid, n)
    return {"tile": int(obs["tile"]), "cells": cells}


for _id, _entry in ((ENV_ID, "players.gym:TakuzuEnv"), (CELLS_ID, "players.cells:CellsEnv")):
    if _id not in gym.registry:
        gym.register(id=_id, entry_point=_entry)
