"""``tiles/TakuzuCells-v0``: the day's board with flat spaces, a cell per step — the environment
stable-baselines3, CleanRL and RLlib take as they are (no wrapper), with action masks for
sb3-contrib's ``MaskablePPO``.

The same run as ``tiles/Takuzu-v0`` (``players.gym.DayEnv``: offline over a ``RunStore`` or online
through the service, one frontier tile shown at a time, the same judge), in smaller steps:

- **Observation**: ``Box(0, 1, (1024,), float32)``, four 16×16 planes one after the other, each
  row-major (``planes(obs)`` gives them back as ``(4, 16, 16)``), over the shown tile's n×n window
  in the top-left corner: ``zero`` and ``one`` (cells whose value is shown: the board's givens, the
  cells known from solved tiles, the cells set this attempt), ``empty`` (the cells still to fill)
  and ``window`` (the tile's n×n window: n is its row count). Flat, because stable-baselines3 takes
  any 3-D ``Box`` for an image (and warns unless it is ``uint8`` and at least 36×36).
- **Action**: ``Discrete(513)``: ``a < 512`` sets cell ``a // 2`` (row-major in the 16×16 plane)
  to ``a % 2``; ``512`` passes (another frontier tile is shown; what was set is dropped). An action
  on a cell that is not empty changes nothing.
- **Hints** (``hints=True``): two more planes after those four, the empty cells the two local rules
  force as the tile stands (``engine.ladder.forced``: L1 runs, L2 balance) — to 0, and to 1. What a
  player sees at a glance; the features of the learned baseline (BENCHMARKS).
- **Mask**: ``action_masks()`` (what ``MaskablePPO`` calls) and ``info["action_mask"]``: the empty
  cells of the window, both values, and the pass.
- **Reward**: once the window is full its grid is sent to the judge as one move: n² if correct
  (the leaderboard's reward), else 0; then the next frontier tile is shown (after a wrong grid
  another one, or the same with its cells cleared). ``shaped=True`` adds a potential-based shaping
  (Ng, Harada and Russell, 1999): each step also earns the change of the potential "cells of this
  attempt set to their solution value, less those set otherwise" — +1 for a right cell, -1 for a
  wrong one, all of it taken back when the attempt is dropped (a pass) or ends (judged). So no loop
  earns anything by coming back to where it started (set a right cell, pass, again: 0), and the
  policies that earn the most of the judge's reward are unchanged. Offline only, since it reads the
  solution (online it would leak it), for training; the judge's reward is unchanged.

Why a cell per step: a tile's grid as one action is 2^(n²) choices with one reward at the end
(random play scores nothing, so nothing is learned); cells make the rules local (three in a row,
balance) and the mask removes every action that cannot matter. docs/DECISIONS.md (issue 53).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces

from players.agents import solve_puzzle
from players.gym import SIDE, DayEnv
from tilelib.errors import BadInput

CELLS = SIDE * SIDE
PASS = 2 * CELLS  # the last action: show another frontier tile


class CellsEnv(DayEnv):
    """One day's board, a cell per step (module doc: observation, action, mask, reward)."""

    def __init__(
        self,
        manifest=None,
        library=None,
        url: str | None = None,
        day: str | None = None,
        *,
        shaped: bool = False,
        hints: bool = False,
        **kw,
    ) -> None:
        if shaped and url is not None:
            raise BadInput("shaped=True reads the solution: offline only (manifest=PATH, library=PATH), never online")
        super().__init__(manifest, library, url, day, **kw)
        self._made_with["shaped"] = self.shaped = shaped
        self._made_with["hints"] = self.hints = hints
        self.observation_space = spaces.Box(0.0, 1.0, shape=((6 if hints else 4) * CELLS,), dtype=np.float32)
        self.action_space = spaces.Discrete(PASS + 1)
        self._set: dict[int, int] = {}

    def default_steps(self) -> int:
        """Every cell of every tile set once, twice over."""
        return 2 * CELLS * self.tiles

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        self._begin(seed)
        self._set = {}
        self._settle()  # a first tile already whole is judged here (info's reward)
        return self._observation(), self._info_cells(None)

    def step(self, action: Any):
        if self.session is None:
            raise BadInput("call reset() before step()")
        a = int(action)
        if not 0 <= a <= PASS:
            raise BadInput(f"action {a} is outside Discrete({PASS + 1})")
        reward, verdict = 0, None
        before = self._potential()
        if a == PASS:
            reward += self._next()
        elif self._empty(a // 2):
            self._set[a // 2] = a % 2
            if self._whole():
                verdict = self._judge(self._view_now().tile, self.shown_puzzle())
                reward += verdict.reward if verdict.correct else 0
                reward += self._next()
        reward += self._potential() - before  # the shaping (module doc); 0 unless shaped
        terminated, truncated = self._tick()
        return self._observation(), reward, terminated, truncated, self._info_cells(verdict)

    # ------------------------------------------------------------ the shown tile

    def _next(self) -> int:
        """Show the next frontier tile (``_settle``: the reward that earns)."""
        self._set = {}
        self._show()
        return self._settle()

    def _settle(self) -> int:
        """A shown tile whose window is already whole (every cell given or known) goes to the judge at
        once, as a player would send it, and the next is shown: the reward they earn."""
        reward = 0
        while self._frontier and self._whole():
            verdict = self._judge(self._view_now().tile, self.shown_puzzle())
            reward += verdict.reward if verdict.correct else 0
            self._show()
        return reward

    def _window(self) -> list[int]:
        n = self._view_now().n
        return [r * SIDE + c for r in range(n) for c in range(n)]

    def _empty(self, cell: int) -> bool:
        r, c = divmod(cell, SIDE)
        v = self._view_now()
        return r < v.n and c < v.n and cell not in self._set and v.puzzle[r * v.n + c] == "."

    def _whole(self) -> bool:
        """Every cell of the window shown: its grid is the shown puzzle."""
        return "." not in self.shown_puzzle()

    def _truth(self) -> str:
        return self._local_store().days[self.day].judge.truth(self._view_now().tile)

    def _potential(self) -> int:
        """The shaping's potential: of the cells set this attempt, those at their solution value less
        the others (0 unless ``shaped``, and 0 once an attempt is dropped or judged)."""
        if not self.shaped or not self._set:
            return 0
        truth, n = self._truth(), self._view_now().n
        return sum(1 if truth[_index(cell, n)] == str(v) else -1 for cell, v in self._set.items())

    def shown_puzzle(self) -> str:
        """The tile's puzzle with the cells set this attempt filled in."""
        v = self._view_now()
        n, puzzle = v.n, v.puzzle
        return "".join(
            str(self._set.get(r * SIDE + c, ".")) if puzzle[r * n + c] == "." else puzzle[r * n + c]
            for r in range(n)
            for c in range(n)
        )

    def action_masks(self) -> np.ndarray:
        """The legal actions: both values of each empty cell of the window, and the pass (before the
        first reset no tile is shown: the pass alone, so a vector env's worker may ask at any time)."""
        mask = np.zeros(PASS + 1, dtype=bool)
        for cell in self._window() if self._view is not None else ():
            if self._empty(cell):
                mask[2 * cell] = mask[2 * cell + 1] = True
        mask[PASS] = True
        return mask

    def _observation(self) -> np.ndarray:
        return observe(self.shown_puzzle(), self.hints)

    def _info_cells(self, verdict) -> dict[str, Any]:
        return {**self._info(verdict), "action_mask": self.action_masks()}


def _index(cell: int, n: int) -> int:
    """A cell of the 16×16 plane as an index into the n·n puzzle string."""
    r, c = divmod(cell, SIDE)
    return r * n + c


def observe(shown: str, hints: bool = False) -> np.ndarray:
    """The observation of a shown puzzle (``0``/``1``/``.``, n·n): its planes (module doc), flat. Pure,
    so a learner can make observations of states it never played (``players.imitation``)."""
    n = int(round(len(shown) ** 0.5))
    planes = np.zeros((6 if hints else 4, SIDE, SIDE), dtype=np.float32)
    chars = np.frombuffer(shown.encode("ascii"), dtype=np.uint8).reshape(n, n)
    planes[0, :n, :n] = chars == ord("0")
    planes[1, :n, :n] = chars == ord("1")
    planes[2, :n, :n] = chars == ord(".")
    planes[3, :n, :n] = 1.0
    if hints:  # the cells the local rules force now (engine.ladder.forced)
        from engine.ladder import forced
        from tilelib.bits import Puzzle

        for r, c, v in forced(Puzzle.parse(shown)):
            planes[4 + v, r, c] = 1.0
    return planes.ravel()


def planes(obs: np.ndarray) -> np.ndarray:
    """An observation as its 16×16 planes: zero, one, empty, window (and, with ``hints``, forced to
    0 and forced to 1)."""
    return np.asarray(obs).reshape(-1, SIDE, SIDE)


def observation_puzzle(obs: np.ndarray) -> str:
    """The puzzle the planes show (``0``/``1``/``.``, n·n)."""
    p = planes(obs)
    n = int(p[3, :, 0].sum())
    out = np.full((n, n), ".", dtype="<U1")
    out[p[0, :n, :n] > 0.5] = "0"
    out[p[1, :n, :n] > 0.5] = "1"
    return "".join(out.ravel())


class CellSolver:
    """The reference solver as a cell policy: the first empty cell set to the value of the shown
    puzzle's one solution, or a pass when the puzzle has more than one (it never guesses). The
    solution is kept while the next puzzle agrees with it, so a tile is solved once, not per cell."""

    def __init__(self) -> None:
        self._grid: str | None = None

    def __call__(self, obs: np.ndarray) -> int:
        puzzle = observation_puzzle(obs)
        n = int(round(len(puzzle) ** 0.5))
        if (
            self._grid is None
            or len(self._grid) != len(puzzle)
            or any(p != "." and p != g for p, g in zip(puzzle, self._grid, strict=True))
        ):
            self._grid = solve_puzzle(puzzle, n)
        if self._grid is None:
            return PASS
        i = puzzle.index(".")
        r, c = divmod(i, n)
        return 2 * (r * SIDE + c) + int(self._grid[i])
