"""``tiles/Takuzu-v0`` (``players.gym``): Gymnasium's own checker passes, the solver policy plays an
offline episode of a real G=61 day to the end with the full reward (Σ n² of the day's tiles), the
same seed gives the same episode, the online env plays through a real ``tiles referee serve``, and
the env's errors are one line (bad arguments, a tile asked for before reset, a closed env reset)."""

from __future__ import annotations

import warnings
from contextlib import closing

import gymnasium
import pytest
from gymnasium.utils.env_checker import check_env
from serve_support import daily_g61, serving

import players.gym as tg
from players.client import Client
from referee.manifest import from_json
from tilelib.errors import BadInput

DAY = "2026-11-29"


@pytest.fixture(scope="module")
def g61(tmp_path_factory):
    d, path = daily_g61(tmp_path_factory, "gym61", DAY, bytes.fromhex("cd" * 32))
    sides = [s + 1 for _x, _y, s in from_json(path.read_text()).packing.squares]
    return d / "lib.sqlite", path, sum(n * n for n in sides), len(sides)


def offline(g61, **kw):
    """The offline env over the G=61 day, closed when the ``with`` block ends."""
    lib, manifest, _, _ = g61
    return closing(gymnasium.make(tg.ENV_ID, manifest=manifest, library=lib, **kw))


def play(env, seed: int, policy=tg.solver_policy):
    """One episode: (observations' tile ids in order, rewards, the last info, terminated, truncated)."""
    obs, info = env.reset(seed=seed)
    shown, rewards = [int(obs["tile"])], []
    while True:
        obs, r, term, trunc, info = env.step(policy(obs))
        shown.append(int(obs["tile"]))
        rewards.append(r)
        if term or trunc:
            return shown, rewards, info, term, trunc


def test_check_env_passes_offline(g61):
    with offline(g61) as env:
        with warnings.catch_warnings(record=True) as said:
            warnings.simplefilter("always")
            check_env(env.unwrapped)
        assert [str(w.message) for w in said if "gymnasium" in w.filename] == []  # not even a warning


def test_the_solver_policy_gets_the_full_reward_and_a_seed_gives_its_episode(g61):
    _, _, total, tiles = g61
    with offline(g61) as env:
        shown, rewards, info, term, trunc = play(env, seed=7)
        assert term and not trunc
        assert sum(rewards) == total == info["reward"]
        assert info["solved"] == tiles and info["frontier"] == 0
        assert sum(1 for r in rewards if r > 0) == tiles  # one reward per tile, each n²
        again = play(env, seed=7)
        assert again[0] == shown and again[1] == rewards
        other = play(env, seed=8)
        assert sum(other[1]) == total and other[0] != shown  # another seed: another order


def test_the_observation_is_the_tile_view_and_a_wrong_grid_scores_nothing(g61):
    lib, manifest, _, tiles = g61
    with offline(g61) as env:
        obs, info = env.reset(seed=1)
        n, t = int(obs["n"]), int(obs["tile"])
        assert obs["frontier"].sum() == 1 and obs["frontier"][t] == 1 and obs["solved"].sum() == 0
        assert tg.observation_puzzle(obs) == info["puzzle"] and len(info["puzzle"]) == n * n
        assert not obs["givens"][n:, :].any() and not obs["values"][:, n:].any()  # zero outside the window
        action = tg.solver_policy(obs)
        assert action["tile"] == t  # the seed tile's view is unique
        wrong = action["cells"].copy()
        wrong[:n, :n] ^= 1
        obs2, r, term, _, info = env.step({"tile": t, "cells": wrong})
        assert r == 0 and not term and info["verdict"]["accepted"] and not info["verdict"]["correct"]
        obs3, r, _, _, info = env.step({"tile": tiles, "cells": wrong})  # a pass: nothing judged
        assert (
            r == 0
            and not info["judged"]
            and info["verdict"] == {"tile": -1, "accepted": False, "correct": False, "reward": 0, "reason": ""}
        )
        obs4, r, _, _, info = env.step(action)
        assert r == n * n and info["verdict"]["correct"] and obs4["solved"][t] == 1
        assert obs4["frontier"][t] == 0 and obs4["frontier"].sum() >= 1


def test_the_online_env_plays_three_tiles_through_the_service(g61, tmp_path):
    lib, manifest, _, _ = g61
    with serving(lib, tmp_path / "runs.sqlite", [manifest]) as base:
        env = gymnasium.make(tg.ENV_ID, url=base, day=DAY, player="gym-bot")
        try:
            obs, _ = env.reset(seed=3)
            rewards = []
            while len(rewards) < 3:
                obs, r, term, trunc, info = env.step(tg.solver_policy(obs))
                if r:
                    rewards.append(r)
                assert not trunc and (not term or len(rewards) == 3)
            run = env.unwrapped.run
        finally:
            env.close()
        with Client(base) as c:
            score = c.score(run)
            board = c.leaderboard(DAY).runs
        assert score.solved == 3 and score.reward == sum(rewards) == info["reward"]
        assert any(row.run == run and row.player == "gym-bot" for row in board)


def test_bad_arguments_are_one_line_errors(g61):
    lib, manifest, _, _ = g61
    for kw, says in [
        ({}, "give manifest=PATH"),
        ({"manifest": manifest}, "needs library=PATH"),
        ({"manifest": manifest, "library": lib, "day": "2026-01-01"}, "differs from the manifest"),
        ({"manifest": manifest, "library": lib, "render_mode": "human"}, "renders 'ansi'"),
    ]:
        with pytest.raises(BadInput) as e:
            tg.TakuzuEnv(**kw)
        assert says in str(e.value) and "\n" not in str(e.value)


@pytest.mark.parametrize("env_id", [tg.ENV_ID, tg.CELLS_ID])
def test_an_env_asked_before_reset_or_after_close_says_so_in_one_line(g61, env_id):
    """The shown tile before the first reset, or a new episode of a closed env: one BadInput line,
    not an AttributeError on None. (The cells env's ``action_masks()`` answers before the first
    reset, as a vector env's worker may ask it then: ``tests/test_gym_fixes.py``.)"""
    lib, manifest, _, _ = g61
    env = gymnasium.make(env_id, manifest=manifest, library=lib).unwrapped
    asks = [env.shown_puzzle]
    for ask in asks:
        with pytest.raises(BadInput) as e:
            ask()
        assert "reset()" in str(e.value) and "\n" not in str(e.value)
    env.reset(seed=0)
    assert all(ask() is not None for ask in asks)
    env.close()
    with pytest.raises(BadInput) as e:
        env.reset(seed=0)
    assert "closed" in str(e.value) and "\n" not in str(e.value)


def test_ansi_render_shows_the_tile(g61):
    with offline(g61, render_mode="ansi") as env:
        obs, _ = env.reset(seed=0)
        text = env.render()
        n = int(obs["n"])
        assert text.startswith(f"tile {int(obs['tile'])} (n={n}") and len(text.splitlines()) == n + 1


def test_the_random_policy_is_below_the_solver(g61):
    _, _, total, _ = g61
    with offline(g61, max_steps=200) as env:
        env.action_space.seed(5)
        _, rewards, _, term, trunc = play(env, seed=5, policy=lambda _obs: env.action_space.sample())
        assert 0 <= sum(rewards) < total and (term or trunc)
