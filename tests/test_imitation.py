"""The imitation learner (``players.imitation``; issue 73): its observations are the env's own, its
training states are its examples partly filled with their solutions, its measure of a network is
right for a network that knows every answer and for one that knows none, and the protocol's command
trains and plays it end to end (slow tier)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import cast

import gymnasium
import numpy as np
import pytest
from needs import need_module

from players import imitation
from players.boards import Boards
from players.cells import SIDE, CellsEnv, observe
from players.gym import CELLS_ID

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def examples() -> list[imitation.Example]:
    return imitation.tile_examples(Boards(size=41, split="train"), range(1))


def test_observe_is_the_envs_observation():
    with gymnasium.make(CELLS_ID, boards=Boards(size=41, split="validation"), hints=True) as env:
        u = cast(CellsEnv, env.unwrapped)
        obs, _ = env.reset(seed=0)
        for action in (0, 3, 40):  # a few cells set: the observation follows the shown puzzle
            assert np.array_equal(obs, observe(u.shown_puzzle(), True))
            obs, *_ = env.step(int(np.flatnonzero(u.action_masks())[action % int(u.action_masks().sum())]))


def test_examples_are_every_tile_shown_with_its_solution(examples):
    assert len(examples) >= 10
    for puzzle, truth in examples:
        assert len(puzzle) == len(truth) and set(truth) <= {"0", "1"} and "." in puzzle
        assert all(p in (".", t) for p, t in zip(puzzle, truth, strict=True))  # the givens agree


def test_states_fill_part_of_each_example_with_its_solution(examples):
    x, y, m = imitation.states(examples[:5], per_tile=4, seed=3)
    sizes = [round(len(p) ** 0.5) for p, _ in examples[:5]]
    assert len(x) == sum(max(1, round(4 * n * n / 36)) for n in sizes)
    assert x.shape[1:] == (6, SIDE, SIDE) and y.shape[1:] == m.shape[1:] == (SIDE, SIDE)
    k = 0
    for (puzzle, truth), n in zip(examples[:5], sizes, strict=True):
        want = np.frombuffer(truth.encode(), np.uint8).reshape(n, n) - ord("0")
        for j in range(max(1, round(4 * n * n / 36))):
            assert np.array_equal(y[k, :n, :n], want) and not y[k, n:].any()
            shown = "".join(
                "0" if x[k, 0].flat[r * SIDE + c] else "1" if x[k, 1].flat[r * SIDE + c] else "."
                for r in range(n)
                for c in range(n)
            )
            assert all(s in (".", t) for s, t in zip(shown, truth, strict=True))  # only right values set
            assert (
                (shown == puzzle)
                if j == 0
                else set(np.flatnonzero(np.array(list(shown)) == "."))
                <= set(np.flatnonzero(np.array(list(puzzle)) == "."))
            )
            assert np.array_equal(m[k], x[k, 2])  # learned on the cells still empty
            k += 1
    again = imitation.states(examples[:5], per_tile=4, seed=3)
    assert all(np.array_equal(a, b) for a, b in zip((x, y, m), again, strict=True))  # seeded


class _Knows:
    """A stand-in network whose logits are the solution (``sign`` +1) or its opposite (-1): what the
    measure must score 100% and 0%."""

    def __init__(self, examples, sign: int) -> None:
        self.by_givens = {}
        self.sign = sign
        for puzzle, truth in examples:
            self.by_givens.setdefault(len(puzzle), []).append((puzzle, truth))

    def __call__(self, x):
        import torch

        planes = x[0].numpy()
        n = int(planes[3, :, 0].sum())
        shown = np.where(planes[0, :n, :n] > 0, "0", np.where(planes[1, :n, :n] > 0, "1", ".")).ravel()
        truth = next(t for p, t in self.by_givens[n * n] if all(s in (".", v) for s, v in zip(shown, t, strict=True)))
        out = np.zeros((SIDE, SIDE), np.float32)
        out[:n, :n] = (np.frombuffer(truth.encode(), np.uint8).reshape(n, n) - ord("0") - 0.5) * 2 * self.sign
        return torch.tensor(out)[None]


def test_solve_rates_scores_an_oracle_fully_and_its_opposite_not_at_all(examples):
    need_module("torch", "the rl extra (pip install -e '.[rl]') is not installed")
    some = [e for e in examples if len(e[0]) == 36][:4] + [e for e in examples if len(e[0]) > 36][:2]
    right = imitation.solve_rates(_Knows(some, +1), some)
    wrong = imitation.solve_rates(_Knows(some, -1), some)
    assert sum(t for t, _ in right.values()) == len(some)
    assert all(r == t for t, r in right.values()) and all(r == 0 for _, r in wrong.values())


@pytest.mark.slow
def test_the_command_trains_and_plays_the_imitation_learner(tmp_path):
    need_module("torch", "the rl extra (pip install -e '.[rl]') is not installed")
    args = ["--policies", "imitation", "--seeds", "2", "--size", "41", "--steps", "300"]
    args += ["--imitation-boards", "2", "--imitation-epochs", "1", "--imitation-model", str(tmp_path / "i.pt")]
    out = subprocess.run(
        [sys.executable, str(ROOT / "scripts/evaluate.py"), *args], capture_output=True, text=True, timeout=900
    )
    assert out.returncode == 0, out.stderr
    rows = [line for line in out.stdout.splitlines() if line.startswith("| ") and "---" not in line]
    assert [r.split("|")[1].strip() for r in rows] == ["policy", "imitation"]
    assert "trained on 2 train boards' tiles" in rows[1] and (tmp_path / "i.pt").is_file()
    assert "epoch 1: loss" in out.stdout and "filled right from the state shown: n = 6" in out.stdout
