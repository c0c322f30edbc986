"""The evaluation protocol (``players.evaluate``, ``scripts/evaluate.py``; issue 73): the interval is
Student's t over the episodes, the solver clears every board it is given time for and random play
none, and the command prints the baseline table end to end (a MaskablePPO trained on the train
split included) in the slow tier."""

from __future__ import annotations

import math
import subprocess
import sys
from pathlib import Path

import pytest
from needs import need_module

from players.boards import Boards
from players.evaluate import Estimate, play, random_policy, solver_policy, t95

ROOT = Path(__file__).resolve().parent.parent


def test_the_interval_is_students_t_over_the_episodes():
    e = Estimate.of([1.0, 2.0, 3.0])
    half = 4.303 * 1.0 / math.sqrt(3)
    assert (e.mean, e.n) == (2.0, 3) and e.low == pytest.approx(2 - half) and e.high == pytest.approx(2 + half)
    assert e.text(2) == f"2.00 [{2 - half:.2f}, {2 + half:.2f}]"
    one = Estimate.of([0.5])
    assert one.mean == 0.5 and math.isnan(one.low) and one.text() == "0.500"
    assert Estimate.of([]).n == 0 and Estimate.of([]).text() == "–"
    assert Estimate.of([0.3] * 5).low == Estimate.of([0.3] * 5).high == pytest.approx(0.3)
    assert t95(1) == 12.706 and t95(30) == 2.042 and 1.96 < t95(120) < t95(31) < 2.042
    with pytest.raises(ValueError):
        t95(0)


def test_the_solver_clears_every_board_and_random_play_none():
    boards = Boards(size=41, split="validation")
    solver = play(solver_policy(), boards, range(2), 20_000)
    assert [e.success for e in solver.episodes] == [True, True]
    assert solver.reward_fraction.mean == 1.0 and solver.success.mean == 1.0
    assert all(e.reward == e.full > 0 and e.steps < 20_000 for e in solver.episodes)
    assert solver.requests_per_tile.mean >= 1  # a view at least, and the move, per tile
    rand = play(random_policy(0), boards, range(2), 500)
    assert rand.reward_fraction.mean == 0.0 and all(e.steps == 500 for e in rand.episodes)
    assert rand.requests_per_tile.n == 0  # no tile solved: no requests per tile to report
    assert [e.full for e in rand.episodes] == [e.full for e in solver.episodes]  # the same boards


@pytest.mark.slow
def test_the_command_prints_the_baseline_table(tmp_path):
    need_module("sb3_contrib", "the rl extra (pip install -e '.[rl]') is not installed")
    args = ["--policies", "random,solver,maskable", "--seeds", "2", "--size", "41", "--steps", "200"]
    args += ["--train-steps", "256", "--model", str(tmp_path / "m.zip")]
    out = subprocess.run(
        [sys.executable, str(ROOT / "scripts/evaluate.py"), *args], capture_output=True, text=True, timeout=900
    )
    assert out.returncode == 0, out.stderr
    rows = [line for line in out.stdout.splitlines() if line.startswith("| ") and "---" not in line]
    assert [r.split("|")[1].strip() for r in rows] == ["policy", "random", "solver", "maskable"]
    assert "256 steps on the train split" in rows[3] and (tmp_path / "m.zip").is_file()
    again = subprocess.run(
        [sys.executable, str(ROOT / "scripts/evaluate.py"), *args, "--policies", "maskable"],
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert again.returncode == 0 and "loaded" in again.stdout, again.stderr
