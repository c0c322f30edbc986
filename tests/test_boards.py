"""Fresh seeded boards (``players.boards``, the cells env's ``boards=``; issue 73): the same seed
builds the same board byte for byte in another interpreter, 1,000 resets draw 1,000 distinct boards,
the splits are made of tiles drawn apart, and every drawn board plays to its full reward."""

from __future__ import annotations

import hashlib
import json
import pickle
import sqlite3
import subprocess
import sys

import gymnasium
import pytest

import players.gym as tg
from players.boards import DAY, BoardMaker, Boards
from players.cells import CellsEnv, CellSolver
from tilelib.errors import BadInput


def content(manifest: dict) -> str:
    """What makes a board this board: its tiles (ids, places, hashes, orientations), zones and clues."""
    return hashlib.sha256(json.dumps([manifest["tiles"], manifest["zones"], manifest["clues"]]).encode()).hexdigest()


def test_the_same_seed_builds_the_same_board_in_a_fresh_interpreter(tmp_path):
    code = (
        "import hashlib, sys; from pathlib import Path; from players.boards import BoardMaker, Boards\n"
        "m, _ = BoardMaker(Boards(size=31, split='test'), Path(sys.argv[1])).board(int(sys.argv[2]))\n"
        "print(hashlib.sha256(m.read_bytes()).hexdigest())\n"
    )

    def made(folder: str, k: int) -> str:
        out = subprocess.run([sys.executable, "-c", code, folder, str(k)], capture_output=True, text=True, timeout=300)
        assert out.returncode == 0, out.stderr
        return out.stdout.strip()

    first, again, other = made(str(tmp_path / "a"), 7), made(str(tmp_path / "b"), 7), made(str(tmp_path / "c"), 8)
    assert first == again != other and len(first) == 64


@pytest.mark.slow
def test_a_thousand_resets_draw_a_thousand_distinct_boards():
    # G = 41: smaller boards have too few packings to promise it (G = 31 repeated 5 boards in 150)
    with gymnasium.make(tg.CELLS_ID, boards={"size": 41}) as env:
        u, seen = env.unwrapped, set()
        env.reset(seed=1)
        for _ in range(1000):
            env.reset()
            seen.add(content(json.loads((u._maker._last / f"{DAY}.json").read_text())))
        assert len(seen) == 1000


def large_tiles(library) -> set[str]:
    with sqlite3.connect(library) as conn:
        return {h for (h,) in conn.execute("SELECT hex(hash) FROM tiles WHERE n >= 10")}


def test_the_splits_are_made_of_tiles_drawn_apart(tmp_path):
    train = BoardMaker(Boards(size=61, split="train"), tmp_path / "train")
    test = BoardMaker(Boards(size=61, split="test"), tmp_path / "test")
    a, b = large_tiles(train.library()), large_tiles(test.library())
    assert a and b and not a & b  # no solution of side >= 10 in both
    assert content(json.loads(train.board(3)[0].read_text())) != content(json.loads(test.board(3)[0].read_text()))
    with pytest.raises(BadInput, match="split 'dev'"):
        Boards(split="dev")


def test_each_reset_plays_a_board_of_its_own_to_the_full_reward():
    with gymnasium.make(tg.CELLS_ID, boards={"size": 31, "split": "validation"}) as env:
        u = env.unwrapped
        firsts = []
        for seed in (3, 4, 3):
            obs, info = env.reset(seed=seed)
            firsts.append((u._board, u.tiles, info["puzzle"]))
            policy, total, done = CellSolver(), 0, False
            while not done:
                obs, r, term, trunc, info = env.step(policy(obs))
                total, done = total + r, term or trunc
            assert info["is_success"] and total == info["reward"] > 0
        assert firsts[0] == firsts[2] and firsts[0][0] != firsts[1][0]


def test_boards_only_where_the_spaces_allow_and_pickled_as_made():
    with pytest.raises(BadInput) as e:
        tg.TakuzuEnv(boards={"size": 31})
    assert tg.CELLS_ID in str(e.value) and "\n" not in str(e.value)
    with pytest.raises(BadInput, match="one of the three"):
        CellsEnv(manifest="m.json", library="l.sqlite", boards={"size": 31})
    with gymnasium.make(tg.CELLS_ID, boards=Boards(size=31, split="test")) as env:
        first, _ = env.reset(seed=2)
        copy = pickle.loads(pickle.dumps(env.unwrapped))
        try:
            again, _ = copy.reset(seed=2)
            assert (again == first).all()
        finally:
            copy.close()
