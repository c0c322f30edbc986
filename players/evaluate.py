"""The evaluation protocol: a policy played on N fresh boards of a split, each for at most a budget of
steps, and what it earned with a 95% interval (``scripts/evaluate.py`` prints it; BENCHMARKS holds the
baselines).

The boards are ``players.boards``' (``Boards(size, profile, split)``): board ``k`` of the split for
``k`` in ``seeds``, the same boards for every policy and every run of the protocol. One episode per
board, on ``tiles/TakuzuCells-v0``; it ends when the board is solved or after ``steps`` steps. Per
episode:

- **reward fraction**: the judge's reward over the board's full reward (Σ n² of its tiles);
- **tiles per 1,000 steps**: tiles solved per thousand steps taken;
- **requests per tile**: the calls to the judging core the episode made (what would be HTTP requests
  online: the views and the moves) per tile solved — over the episodes that solved one;
- **success**: the whole board solved.

Each is reported as the mean over episodes and a 95% confidence interval for it (Student's t on the
episodes' values): ``Estimate(mean, low, high, n)``.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import cast

import numpy as np

from players.boards import Boards

# Student's t, two-sided 95%, by degrees of freedom (1..30); beyond 30, interpolated toward 1.96.
_T95 = (
    12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
    2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
    2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042,
)  # fmt: skip

Policy = Callable[[np.ndarray, np.ndarray], int]  # (observation, action mask) -> action


def t95(df: int) -> float:
    """The two-sided 95% quantile of Student's t with ``df`` degrees of freedom."""
    if df < 1:
        raise ValueError("an interval needs two values at least")
    return _T95[df - 1] if df <= 30 else 1.96 + (_T95[29] - 1.96) * 30 / df


@dataclass(frozen=True)
class Estimate:
    """A mean over ``n`` episodes and its 95% interval [low, high] (NaN where n < 2)."""

    mean: float
    low: float
    high: float
    n: int

    @classmethod
    def of(cls, values: Iterable[float]) -> Estimate:
        xs = [float(v) for v in values]
        if not xs:
            return cls(math.nan, math.nan, math.nan, 0)
        mean = statistics.fmean(xs)
        if len(xs) < 2:
            return cls(mean, math.nan, math.nan, 1)
        half = t95(len(xs) - 1) * statistics.stdev(xs) / math.sqrt(len(xs))
        return cls(mean, mean - half, mean + half, len(xs))

    def text(self, digits: int = 3) -> str:
        """``mean [low, high]``, as the tables print it."""
        if self.n < 2:
            return f"{self.mean:.{digits}f}" if self.n else "–"
        return f"{self.mean:.{digits}f} [{self.low:.{digits}f}, {self.high:.{digits}f}]"


@dataclass(frozen=True)
class Episode:
    """What one episode on one board earned (module doc)."""

    board: int
    reward: int
    full: int
    solved: int
    tiles: int
    steps: int
    requests: int

    @property
    def success(self) -> bool:
        return self.solved == self.tiles


@dataclass(frozen=True)
class Report:
    """The protocol's result for one policy: every episode and the four estimates."""

    episodes: tuple[Episode, ...]

    @property
    def reward_fraction(self) -> Estimate:
        return Estimate.of(e.reward / e.full for e in self.episodes)

    @property
    def tiles_per_kstep(self) -> Estimate:
        return Estimate.of(1000 * e.solved / e.steps for e in self.episodes if e.steps)

    @property
    def requests_per_tile(self) -> Estimate:
        return Estimate.of(e.requests / e.solved for e in self.episodes if e.solved)

    @property
    def success(self) -> Estimate:
        return Estimate.of(float(e.success) for e in self.episodes)


def play(policy: Policy, boards: Boards, seeds: Iterable[int], steps: int, *, hints: bool = False) -> Report:
    """Each board ``k`` of ``seeds`` played once by ``policy`` for at most ``steps`` steps (module doc);
    ``hints``: the env's observation carries the forced-cell planes (``players.cells``)."""
    import gymnasium

    from players.cells import CellsEnv
    from players.gym import CELLS_ID

    out = []
    with gymnasium.make(CELLS_ID, boards=boards, max_steps=steps, hints=hints) as env:
        u = cast(CellsEnv, env.unwrapped)
        for k in seeds:
            obs, info = env.reset(seed=int(k))
            full = sum((s + 1) ** 2 for _x, _y, s in u._local_store().days[u.day].board.squares)
            taken, done = 0, False
            while not done:
                obs, _r, term, trunc, info = env.step(policy(obs, u.action_masks()))
                taken, done = taken + 1, term or trunc
            out.append(Episode(int(k), info["reward"], full, info["solved"], u.tiles, taken, u._episode().requests()))
    return Report(tuple(out))


def random_policy(seed: int = 0) -> Policy:
    """A legal action drawn uniformly (the env's mask), from its own seeded generator."""
    rng = np.random.default_rng(seed)

    def act(_obs: np.ndarray, mask: np.ndarray) -> int:
        return int(rng.choice(np.flatnonzero(mask)))

    return act


def solver_policy() -> Policy:
    """The reference solver, a cell at a time (``players.cells.CellSolver``)."""
    from players.cells import CellSolver

    solver = CellSolver()
    return lambda obs, _mask: solver(obs)


def model_policy(model) -> Policy:
    """A trained sb3-contrib ``MaskablePPO`` (or any model with ``predict(obs, action_masks=…)``),
    acting greedily within the mask."""
    return lambda obs, mask: int(model.predict(obs, action_masks=mask, deterministic=True)[0])
