"""The environments as researchers' tools take them (issue 73): the shaped reward cannot be farmed,
``render_mode="rgb_array"`` draws the tile (so SB3's ``make_vec_env(id)`` works as it is),
``is_success`` says when the board is solved, ``action_masks()`` answers before the first reset,
and an environment pickles — in a ``SubprocVecEnv`` started by spawn too."""

from __future__ import annotations

import pickle

import gymnasium
import numpy as np
import pytest
from needs import need_module
from serve_support import daily_g61

import players.gym as tg
from players.cells import PASS, CellsEnv, CellSolver, planes
from referee.manifest import from_json

DAY = "2026-11-27"
IDS = (tg.ENV_ID, tg.CELLS_ID)


@pytest.fixture(scope="module")
def g61(tmp_path_factory):
    d, path = daily_g61(tmp_path_factory, "gymfix61", DAY, bytes.fromhex("c7" * 32))
    tiles = len(from_json(path.read_text()).packing.squares)
    return {"manifest": str(path), "library": str(d / "lib.sqlite")}, tiles


def _right_cell(env) -> int:
    """An action setting one empty cell of the shown tile to its solution value."""
    u = env.unwrapped
    truth, n = u._truth(), u._view.n
    cell = next(c for c in range(16 * 16) if u._empty(c))
    return 2 * cell + int(truth[(cell // 16) * n + cell % 16])


def test_the_farm_loop_earns_nothing(g61):
    """Set one right cell, pass, again: 200 cycles. The old +1 per right cell paid +200 for this and
    never solved a tile; the potential gives each +1 back when the pass drops the attempt."""
    kw, _ = g61
    with gymnasium.make(tg.CELLS_ID, shaped=True, **kw) as env:
        env.reset(seed=3)
        rewards = []
        for _ in range(200):
            rewards.append(env.step(_right_cell(env))[1])
            _, r, _, _, info = env.step(PASS)
            rewards.append(r)
        assert rewards[0] == 1 and sum(rewards) <= 0 and info["reward"] == 0 and info["solved"] == 0
        assert sum(rewards) == 0  # exactly: every cycle comes back to an empty attempt


def test_shaping_pays_a_solved_tile_no_more_than_the_judge(g61):
    """Playing a tile cell by cell to its solution: the shaping sums to 0 over the tile, so the
    episode's return is the judge's reward."""
    kw, _ = g61
    with gymnasium.make(tg.CELLS_ID, shaped=True, **kw) as env:
        obs, info = env.reset(seed=4)
        policy, total = CellSolver(), 0
        while info["solved"] < 3:
            obs, r, term, trunc, info = env.step(policy(obs))
            total += r
            assert not (term or trunc)
        assert total == info["reward"] > 0


def test_action_masks_before_reset_allow_the_pass_alone(g61):
    kw, _ = g61
    env = CellsEnv(**kw)
    try:
        mask = env.action_masks()
        assert mask.dtype == bool and mask.shape == (PASS + 1,) and mask[PASS] and mask.sum() == 1
    finally:
        env.close()


def test_is_success_only_once_the_board_is_solved(g61):
    kw, tiles = g61
    with gymnasium.make(tg.ENV_ID, **kw) as env:
        obs, info = env.reset(seed=1)
        assert info["is_success"] is False
        term = False
        while not term:
            obs, _, term, trunc, info = env.step(tg.solver_policy(obs))
            assert not trunc
            assert info["is_success"] == (info["solved"] == tiles)
        assert info["is_success"] is True


@pytest.mark.parametrize("env_id", IDS)
def test_rgb_array_draws_the_shown_tile(g61, env_id):
    kw, _ = g61
    with gymnasium.make(env_id, render_mode="rgb_array", **kw) as env:
        blank = env.unwrapped.render()
        assert blank.shape == (128, 128, 3) and blank.dtype == np.uint8
        assert (blank == tg.COLOURS["outside"]).all()
        env.reset(seed=2)
        frames = [env.render()]
        v = env.unwrapped._view
        for i, ch in enumerate(v.puzzle):  # each cell's centre in its source's colour
            r, c = divmod(i, v.n)
            source = "given" if v.givens[i] == "1" else "known" if v.known[i] == "1" else None
            want = tg.COLOURS["empty"] if ch == "." else tg.COLOURS[(source, ch)]
            assert tuple(frames[0][r * 8 + 4, c * 8 + 4]) == want, (i, ch)
        if v.n < 16:  # below and right of the window: outside
            assert tuple(frames[0][v.n * 8 + 4, v.n * 8 + 4]) == tg.COLOURS["outside"]
        for _ in range(5):
            env.step(env.action_space.sample())
            frames.append(env.render())
        assert all(f.shape == (128, 128, 3) for f in frames)


def test_a_set_cell_is_drawn_as_set(g61):
    kw, _ = g61
    with gymnasium.make(tg.CELLS_ID, render_mode="rgb_array", **kw) as env:
        env.reset(seed=5)
        a = _right_cell(env)
        env.step(a)
        cell, value = divmod(a, 2)
        r, c = divmod(cell, 16)
        assert tuple(env.render()[r * 8 + 4, c * 8 + 4]) == tg.COLOURS[("set", str(value))]


@pytest.mark.parametrize("env_id", IDS)
def test_an_environment_pickles_and_plays_the_same(g61, env_id):
    kw, _ = g61
    with gymnasium.make(env_id, **kw) as env:
        first, _ = env.reset(seed=9)
        copy = pickle.loads(pickle.dumps(env.unwrapped))
        try:
            again, _ = copy.reset(seed=9)
            obs = first if env_id == tg.CELLS_ID else first["tile"]
            assert np.array_equal(obs, again if env_id == tg.CELLS_ID else again["tile"])
            assert copy.observation_space == env.observation_space
        finally:
            copy.close()


def test_stable_baselines3s_make_vec_env_takes_every_id_as_it_is(g61):
    need_module("stable_baselines3", "the rl extra (pip install -e '.[rl]') is not installed")
    from stable_baselines3.common.env_util import make_vec_env
    from stable_baselines3.common.vec_env import SubprocVecEnv

    kw, _ = g61
    for env_id in IDS:
        vec = make_vec_env(env_id, n_envs=2, seed=1, env_kwargs=kw)  # SB3 asks for render_mode="rgb_array"
        try:
            vec.reset()
            for _ in range(4):
                vec.step(np.array([vec.action_space.sample() for _ in range(2)]))
            frames = vec.get_images()
            assert [f.shape for f in frames] == [(128, 128, 3)] * 2
        finally:
            vec.close()
    # a spawned worker starts a fresh interpreter: the ``module:id`` form has Gymnasium import the module
    # that registers the id (Gymnasium 1.x loads no plug-ins of its own)
    spawn = {"vec_env_cls": SubprocVecEnv, "vec_env_kwargs": {"start_method": "spawn"}}
    spawned = make_vec_env(f"players.gym:{tg.CELLS_ID}", n_envs=2, seed=2, env_kwargs=kw, **spawn)
    try:
        spawned.reset()
        masks = spawned.env_method("action_masks")
        assert all(m[PASS] for m in masks)
        obs, rewards, dones, infos = spawned.step(np.array([PASS, PASS]))
        assert obs.shape == (2, 1024) and all("is_success" in i for i in infos)
        assert planes(obs[0]).shape == (4, 16, 16)
    finally:
        spawned.close()


def test_text_true_puts_the_tile_as_a_model_reads_it_in_info(g61):
    from referee.tile_text import RULES

    kw, _ = g61
    with gymnasium.make(tg.CELLS_ID, text=True, **kw) as env:
        _, info = env.reset(seed=8)
        assert RULES in info["text"] and f"Tile {info['tile']} of day {DAY}" in info["text"]
        assert "; s: set in this attempt" not in info["text"]
        a = _right_cell(env)
        _, _, _, _, info = env.step(a)
        assert "; s: set in this attempt, 1)" in info["text"]
    with gymnasium.make(tg.ENV_ID, **kw) as env:
        assert "text" not in env.reset(seed=8)[1]  # only when asked for
