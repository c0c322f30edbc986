"""Every registered id as RL trainers step it (issue 53): Gymnasium's ``SyncVectorEnv``,
``AsyncVectorEnv`` and ``make_vec`` over two copies through automatic resets, ``check_env`` on each
id, ``spec.max_episode_steps`` saying the env's own limit, the ``module:id`` form in a fresh
interpreter; and the flat ``tiles/TakuzuCells-v0``: its reference cell policy clears a real G=61
day with the full reward, its mask is exactly the moves that can matter, ``shaped`` scores each cell
offline and is refused online. stable-baselines3's own checker runs where the ``rl`` extra is
installed."""

from __future__ import annotations

import functools
import subprocess
import sys
import warnings
from pathlib import Path

import gymnasium
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env
from needs import need_module
from serve_support import daily_g61

import players.gym as tg
from players.cells import PASS, CellsEnv, CellSolver, planes
from referee.manifest import from_json
from tilelib.errors import BadInput

DAY = "2026-11-28"
IDS = sorted(i for i in gymnasium.registry if i.startswith("tiles/"))


@pytest.fixture(scope="module")
def g61(tmp_path_factory):
    d, path = daily_g61(tmp_path_factory, "gymvec61", DAY, bytes.fromhex("ce" * 32))
    sides = [s + 1 for _x, _y, s in from_json(path.read_text()).packing.squares]
    return {"manifest": str(path), "library": str(d / "lib.sqlite")}, sum(n * n for n in sides), len(sides)


def test_both_ids_are_registered():
    assert IDS == [tg.ENV_ID, tg.CELLS_ID]


def _steps(vec, policy, steps: int):
    """Step ``vec`` ``steps`` times; every info key keeps one dtype and shape (what vector envs need),
    and at least one copy ended an episode (automatic resets were crossed)."""
    vec.action_space.seed(3)
    obs, infos = vec.reset(seed=11)
    shapes = {k: (np.asarray(v).dtype, np.asarray(v).shape) for k, v in infos.items() if not isinstance(v, dict)}
    ended = 0
    for _ in range(steps):
        obs, rewards, term, trunc, infos = vec.step(policy(obs))
        ended += int(np.sum(term | trunc))
        assert infos["verdict"]["tile"].dtype == np.int64 and infos["judged"].dtype == bool
        for k, (dtype, shape) in shapes.items():
            assert (np.asarray(infos[k]).dtype, np.asarray(infos[k]).shape) == (dtype, shape), k
    assert ended >= 1


def _random(vec):
    return lambda _obs: vec.action_space.sample()


@pytest.mark.parametrize("env_id", IDS)
@pytest.mark.parametrize("how", ["sync", "async", "make_vec"])
def test_vector_envs_step_every_id_through_resets(g61, env_id, how):
    kw, _, _ = g61
    make = functools.partial(gymnasium.make, env_id, max_steps=40, **kw)
    if how == "sync":
        vec = gymnasium.vector.SyncVectorEnv([make, make])
    elif how == "async":
        vec = gymnasium.vector.AsyncVectorEnv([make, make])
    else:
        vec = gymnasium.make_vec(env_id, num_envs=2, vectorization_mode="sync", max_steps=40, **kw)
    try:
        _steps(vec, _random(vec), 90)
    finally:
        vec.close()


def test_the_solver_policy_steps_vectorised(g61):
    """The failure the issue saw within 13 steps: a pass (nothing judged) beside a judged move."""
    kw, _, _ = g61
    make = functools.partial(gymnasium.make, tg.ENV_ID, max_steps=60, **kw)
    vec = gymnasium.vector.SyncVectorEnv([make, make])

    def policy(obs):
        acts = [tg.solver_policy({k: v[i] for k, v in obs.items()}) for i in range(2)]
        return {"tile": np.array([a["tile"] for a in acts]), "cells": np.stack([a["cells"] for a in acts])}

    try:
        _steps(vec, policy, 80)
    finally:
        vec.close()


@pytest.mark.parametrize("env_id", IDS)
def test_check_env_and_the_episode_limit(g61, env_id):
    kw, _, tiles = g61
    env = gymnasium.make(env_id, **kw)
    try:
        with warnings.catch_warnings(record=True) as said:
            warnings.simplefilter("always")
            check_env(env.unwrapped)
        assert [str(w.message) for w in said if "gymnasium" in w.filename] == []
        limit = env.unwrapped.max_steps
        assert env.spec.max_episode_steps == limit == (16 * tiles if env_id == tg.ENV_ID else 2 * 256 * tiles)
    finally:
        env.close()
    with gymnasium.make(env_id, max_steps=7, **kw) as short:
        assert short.spec.max_episode_steps == 7
        short.reset(seed=0)
        action = PASS if env_id == tg.CELLS_ID else {"tile": tiles, "cells": np.zeros((16, 16), np.int8)}
        ends = [short.step(action)[3] for _ in range(7)]
        assert ends == [False] * 6 + [True]  # truncated at the limit the spec states


def test_the_module_id_form_needs_no_import(g61):
    kw, _, _ = g61
    code = (
        "import gymnasium, sys; env = gymnasium.make('players.gym:tiles/TakuzuCells-v0', "
        f"manifest={kw['manifest']!r}, library={kw['library']!r}); obs, _ = env.reset(seed=0); "
        "print(env.spec.id, obs.shape, 'players.gym' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.split() == ["tiles/TakuzuCells-v0", "(1024,)", "True"]


def test_the_cell_solver_clears_the_day_with_the_full_reward(g61):
    kw, total, tiles = g61
    with gymnasium.make(tg.CELLS_ID, **kw) as env:

        def episode(seed):
            obs, info = env.reset(seed=seed)
            policy, rewards = CellSolver(), []
            while True:
                obs, r, term, trunc, info = env.step(policy(obs))
                rewards.append(r)
                if term or trunc:
                    return rewards, info, term

        rewards, info, term = episode(4)
        assert term and sum(rewards) == total == info["reward"] and info["solved"] == tiles
        assert sum(1 for r in rewards if r > 0) == tiles  # each tile's n², once
        assert episode(4)[0] == rewards  # a seed gives its episode


def test_the_mask_is_the_empty_cells_and_the_pass(g61):
    kw, _, _ = g61
    with gymnasium.make(tg.CELLS_ID, **kw) as env:
        obs, info = env.reset(seed=2)
        p = planes(obs)
        mask = env.unwrapped.action_masks()
        assert (mask == info["action_mask"]).all() and mask[PASS]
        empty = p[2].ravel() > 0.5
        assert (mask[0:PASS:2] == empty).all() and (mask[1:PASS:2] == empty).all()
        assert empty.sum() > 0 and not (empty & (p[3].ravel() < 0.5)).any()  # inside the window only
        off = int(np.flatnonzero(~mask)[0])  # a given cell: nothing happens
        obs2, r, _, _, info2 = env.step(off)
        assert r == 0 and (obs2 == obs).all() and not info2["judged"]
        cell = int(np.flatnonzero(empty)[0])
        obs3, _, _, _, info3 = env.step(2 * cell + 1)  # set: no longer empty, shown as a one
        assert planes(obs3)[2].ravel()[cell] == 0 and planes(obs3)[1].ravel()[cell] == 1
        assert not info3["action_mask"][2 * cell] and not info3["action_mask"][2 * cell + 1]


def test_shaped_scores_each_cell_offline_and_is_refused_online(g61):
    kw, _, _ = g61
    with gymnasium.make(tg.CELLS_ID, shaped=True, **kw) as env:
        obs, _ = env.reset(seed=6)
        unwrapped = env.unwrapped
        truth = unwrapped._store.days[unwrapped.day].judge.truth(unwrapped._view.tile)
        n = int(planes(obs)[3, :, 0].sum())
        cells = [int(c) for c in np.flatnonzero(planes(obs)[2].ravel() > 0.5)]
        right = [int(truth[(c // 16) * n + c % 16]) for c in cells]
        assert env.step(2 * cells[0] + right[0])[1] == 1
        assert env.step(2 * cells[1] + 1 - right[1])[1] == -1
    with pytest.raises(BadInput) as e:
        CellsEnv(url="http://127.0.0.1:9", day=DAY, shaped=True)
    assert "offline only" in str(e.value) and "\n" not in str(e.value)


def test_stable_baselines3_takes_the_flat_id_as_it_is(g61):
    need_module("stable_baselines3", "the rl extra (pip install -e '.[rl]') is not installed")
    from stable_baselines3 import PPO
    from stable_baselines3.common.env_checker import check_env as sb3_check

    kw, _, _ = g61
    with gymnasium.make(tg.CELLS_ID, **kw) as env:
        with warnings.catch_warnings(record=True) as said:
            warnings.simplefilter("always")
            sb3_check(env.unwrapped)
        assert [str(w.message) for w in said if "stable_baselines3" in w.filename] == []
        PPO("MlpPolicy", env, n_steps=256, batch_size=64, n_epochs=1, seed=0, device="cpu").learn(2048)
    contrib = need_module("sb3_contrib", "the rl extra (pip install -e '.[rl]') is not installed")
    with gymnasium.make(tg.CELLS_ID, shaped=True, **kw) as env:  # its masks, read through make's wrappers
        model = contrib.MaskablePPO("MlpPolicy", env, n_steps=64, batch_size=32, n_epochs=1, seed=0, device="cpu")
        model.learn(128)
        obs, info = env.reset(seed=1)
        for _ in range(20):
            action = int(model.predict(obs, action_masks=info["action_mask"])[0])
            assert info["action_mask"][action]
            obs, _, _, _, info = env.step(action)


def test_train_rl_trains_and_reports_against_random_and_the_solver(tmp_path):
    need_module("sb3_contrib", "the rl extra (pip install -e '.[rl]') is not installed")
    script = Path(__file__).resolve().parents[1] / "scripts" / "train_rl.py"
    out = subprocess.run(
        [
            sys.executable,
            str(script),
            "--steps",
            "512",
            "--eval-every",
            "512",
            "--eval-steps",
            "300",
            "--days",
            "1",
            "--work",
            str(tmp_path),
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert out.returncode == 0, out.stderr[-2000:]
    rows = [line.split("|")[1:-1] for line in out.stdout.splitlines() if line.startswith("| ") and "---" not in line]
    table = {(r[0].strip(), r[1].strip()): r for r in rows[1:]}
    assert set(table) == {("random", "0"), ("solver", "0"), ("maskable", "0"), ("maskable", "512")}
    solver = table[("solver", "0")]
    assert solver[3].strip() == "1.000" and int(solver[5]) > 0  # every cell right, tiles solved
    assert float(table[("random", "0")][3]) < 1 and int(table[("random", "0")][5]) == 0
