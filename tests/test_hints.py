"""The cells env's hints (``hints=True``; issue 73's learned baseline): ``engine.ladder.forced`` — the
cells the two local rules force — against a brute force written here from the rules' definitions, on
partial grids of real solutions; and the env's two extra planes are exactly those cells."""

from __future__ import annotations

import gymnasium
import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from serve_support import daily_g61

import players.gym as tg
from engine.ladder import forced
from generator.solution import random_solution
from players.cells import CELLS, planes
from tilelib.bits import Puzzle
from tilelib.rng import Stream


def brute(grid: np.ndarray, known: np.ndarray) -> set[tuple[int, int, int]]:
    """(r, c, v): open cells where the other value would make three equal side by side in the cell's row
    or column, or more than n/2 of it there."""
    n, out = grid.shape[0], set()
    for r in range(n):
        for c in range(n):
            if known[r, c]:
                continue
            for v in (0, 1):
                other = 1 - v
                for line, i, kn in ((grid[r], c, known[r]), (grid[:, c], r, known[:, c])):
                    same = [kn[j] and line[j] == other for j in range(n)]
                    same[i] = True
                    run = any(all(same[j : j + 3]) for j in range(max(0, i - 2), min(i, n - 3) + 1))
                    if run or sum(same) > n // 2:
                        out.add((r, c, v))
    return out


@settings(max_examples=150, deadline=None)
@given(st.sampled_from([6, 8, 10, 12]), st.integers(0, 2**32 - 1), st.floats(0.2, 0.8))
def test_forced_is_the_two_rules_by_definition(n, seed, share):
    solution = random_solution(n, Stream(seed.to_bytes(8, "big") * 4, "hints"))
    rng = np.random.default_rng(seed)
    known = rng.random((n, n)) < share
    text = "".join(str(int(solution[r, c])) if known[r, c] else "." for r in range(n) for c in range(n))
    got = forced(Puzzle.parse(text))
    assert len(got) == len({(r, c) for r, c, _ in got})  # each cell once
    assert set(got) == brute(solution, known)
    assert all(solution[r, c] == v for r, c, v in got)  # a subset of a solution forces only its values


def test_the_hint_planes_are_the_forced_cells(tmp_path_factory):
    d, manifest = daily_g61(tmp_path_factory, "hints61", "2026-11-25", bytes.fromhex("ad" * 32))
    with gymnasium.make(tg.CELLS_ID, manifest=manifest, library=d / "lib.sqlite", hints=True) as env:
        obs, _ = env.reset(seed=1)
        assert obs.shape == (6 * CELLS,) and env.observation_space.shape == (6 * CELLS,)
        for _ in range(30):
            p = planes(obs)
            shown = env.unwrapped.shown_puzzle()
            want = np.zeros((2, 16, 16), dtype=bool)
            for r, c, v in forced(Puzzle.parse(shown)):
                want[v, r, c] = True
            assert (p[4:] > 0.5).tolist() == want.tolist()
            obs, *_ = env.step(int(np.flatnonzero(env.unwrapped.action_masks())[0]))
