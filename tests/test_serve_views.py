"""The service's pure views and CLI views, without a server: the one manifest loader refuses what
`verify` refuses structurally; the frontier is exactly the judge's acceptance rule; a tile's puzzle
shows givens and cells of solved tiles and nothing else; the analyzer's arithmetic; `tiles referee
puzzle | score`."""

from __future__ import annotations

import json
from dataclasses import replace

import numpy as np
import pytest
from cli_support import run_tiles
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from referee_support import board21

from packers.packing import Packing
from referee.board import CheckFailed
from referee.service.analysis import day_series, run_series, time_series
from referee.service.boards import DayBoard, frontier, load_manifest, puzzle_view
from tilelib.errors import BadInput
from tilelib.store import Library


@pytest.fixture(scope="module")
def fx(tmp_path_factory):
    return board21(tmp_path_factory)


@pytest.fixture(scope="module")
def db(fx, tmp_path_factory):
    with Library.open(fx.lib_path) as lib:
        return DayBoard.load(load_manifest(fx.manifest.to_json()), lib, tmp_path_factory.mktemp("v") / "r.sqlite")


# ---------------------------------------------------------------- the one manifest loader


def test_load_manifest_refuses_malformed_and_overlapping_manifests(fx, tmp_path):
    assert load_manifest(fx.manifest.to_json()).to_json() == fx.manifest.to_json()
    p = tmp_path / "m.json"
    p.write_text(fx.manifest.to_json())
    assert load_manifest(p).digest() == fx.manifest.digest()
    with pytest.raises(BadInput, match="cannot read"):
        load_manifest(tmp_path / "missing.json")
    with pytest.raises(BadInput, match="not valid JSON"):
        load_manifest("{")
    d = json.loads(fx.manifest.to_json())
    d["tiles"][1]["t"] = 16
    with pytest.raises(BadInput, match=r"tiles\[1\]\.t"):
        load_manifest(d)
    # well formed, but square 1 overlaps square 0: the packing check (verify step 1) refuses it
    pk = fx.manifest.packing
    squares = list(pk.squares)
    squares[1] = (squares[1][0] - 2, squares[1][1], squares[1][2])
    bad = replace(
        fx.manifest,
        packing=Packing(
            P=pk.P,
            squares=tuple(squares),
            zones=pk.zones,
            seed_tile=pk.seed_tile,
            name=pk.name,
            version=pk.version,
            params=pk.params,
        ),
    )
    with pytest.raises(CheckFailed) as e:
        load_manifest(bad.to_json())
    assert e.value.step == "packing"


# ---------------------------------------------------------------- frontier and puzzle views

solved_sets = st.sets(st.integers(0, 7), max_size=8)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(solved=solved_sets)
def test_frontier_is_exactly_what_the_judge_accepts(db, solved):
    accepts = {
        t for t in range(8) if db.judge.judge_move({"tile": t, "cells": db.judge.truth(t)}, set(solved))["accepted"]
    }
    assert frontier(db, set(solved)) == accepts


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(solved=solved_sets, tile=st.integers(0, 7))
def test_puzzle_shows_givens_and_solved_tiles_cells_and_nothing_else(db, solved, tile):
    b = db.board
    v = puzzle_view(db, tile, set(solved))
    x0, y0, s = b.squares[tile]
    n = s + 1
    for i, ch in enumerate(v["puzzle"]):
        r, c = y0 + i // n, x0 + i % n
        in_solved = any(y <= r <= y + t and x <= c <= x + t for j, (x, y, t) in enumerate(b.squares) if j in solved)
        shown = bool(b.givens[r, c]) or in_solved
        assert ch == (str(int(b.solution[r, c])) if shown else ".")
        assert v["givens"][i] == str(int(b.givens[r, c]))
        assert v["known"][i] == str(int(in_solved and not b.givens[r, c]))
    assert v["solved"] == (tile in solved) and v["playable"] == (tile in frontier(db, set(solved)))
    assert (v["x0"], v["y0"], v["n"]) == (x0, y0, n)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(solved=solved_sets, tile=st.integers(0, 7))
def test_puzzle_shows_exactly_the_closures_view(db, solved, tile):
    """FORMAT §10 closure: the view a player gets is the one the closure proves the board on."""
    from referee.closure import view_mask

    v = puzzle_view(db, tile, set(solved))
    shown = np.array([ch != "." for ch in v["puzzle"]]).reshape(v["n"], v["n"])
    assert (shown == view_mask(db.board, set(solved), tile)).all()


def test_puzzle_of_an_unknown_tile_is_bad_input(db):
    for t in (-1, 8):
        with pytest.raises(BadInput, match="unknown tile id"):
            puzzle_view(db, t, set())


def test_zone_cells_and_clues_show_in_the_puzzle(tmp_path_factory, tmp_path):
    from referee_support import zoned13

    z = zoned13(tmp_path_factory)
    m = z.manifest.with_clues([(7, 2)])
    with Library.open(z.lib_path) as lib:
        dz = DayBoard.load(load_manifest(m.to_json()), lib, tmp_path / "r.sqlite")
    v = puzzle_view(dz, 1, set())  # tile 1 (x0=5, y0=0): its right column is zone-given
    n = v["n"]
    assert all(v["zone"][r * n + n - 1] == "1" and v["puzzle"][r * n + n - 1] != "." for r in range(n))
    v2 = puzzle_view(dz, 2, set())  # tile 2 (x0=0, y0=5) holds the clue at row 7, col 2
    assert v2["clues"] == [[7, 2, int(z.solution[7, 2])]]
    assert v2["puzzle"][2 * n + 2] == str(int(z.solution[7, 2]))


# ---------------------------------------------------------------- the analyzer


def test_run_series_per_batch_reward_and_mean_n():
    n = {0: 16, 1: 6, 2: 8, 3: 6}.get
    batches = [(1, 1, 100.0), (2, 4, 101.5), (5, 5, 103.0)]
    solved = [(1, 0), (3, 1), (4, 2)]
    out = run_series(batches, solved, [1, 3, 1], n, 100)
    assert [(e["batch"], e["t"], e["moves"], e["solved"], e["reward"], e["mean_n"]) for e in out] == [
        (1, 0.0, 1, 1, 256, 16.0),
        (2, 1.5, 3, 2, 100, 7.0),
        (3, 3.0, 1, 0, 0, None),
    ]
    assert [(e["total_reward"], e["total_solved"], e["mean_n_so_far"]) for e in out] == [
        (256, 1, 16.0),
        (356, 3, 10.0),
        (356, 3, 10.0),
    ]
    day = day_series([out, out[:1]])
    assert day[0] == {"batch": 1, "runs": 2, "mean_reward": 256.0, "solved": 2, "mean_n": 16.0}
    assert day[2] == {"batch": 3, "runs": 1, "mean_reward": 0.0, "solved": 0, "mean_n": None}
    # two runs: one started at 100 (batches at +0, +1.5, +3), one at 102 (its batch 1 at +0)
    tm = time_series([(100, out), (102, out[:1])], bucket=2)
    assert tm == [
        {"t": 0, "batches": 2, "reward": 356, "solved": 3, "mean_n": 10.0},
        {"t": 2, "batches": 2, "reward": 256, "solved": 1, "mean_n": 16.0},
    ]
    assert time_series([], 60) == []


@given(st.lists(st.tuples(st.integers(1, 5), st.booleans()), max_size=30))
def test_run_series_totals_equal_the_sum_of_moves(moves):
    """Any split of moves into batches: the last running total is the sum of n² over correct moves."""
    sizes = {i: 6 + 2 * (i % 6) for i in range(100)}
    batches, solved, mid, k = [], [], 0, 0
    for count, ok in moves:
        first = mid + 1
        for _ in range(count):
            mid += 1
            if ok:
                solved.append((mid, k % 100))
                k += 1
        batches.append((first, mid, float(mid)))
    out = run_series(batches, solved, [c for c, _ in moves], sizes.get, 0)
    assert len(out) == len(moves)
    want = sum(sizes[t] ** 2 for _, t in solved)
    assert (out[-1]["total_reward"] if out else 0) == want
    assert sum(e["reward"] for e in out) == want


# ---------------------------------------------------------------- CLI views


def test_cli_puzzle_and_score(fx, db, tmp_path, runs_target):
    mf = tmp_path / "m.json"
    mf.write_text(fx.manifest.to_json())
    lib = str(fx.lib_path)
    r = run_tiles("referee", "puzzle", str(mf), "1", "-L", lib)
    assert r.returncode == 0
    head, puzzle, *grid = r.stdout.splitlines()
    assert head.startswith("tile 1: n=6 at x0=15 y0=0; locked") and puzzle == puzzle_view(db, 1, set())["puzzle"]
    assert grid == [" ".join(puzzle[r * 6 : (r + 1) * 6]) for r in range(6)]
    runs = runs_target  # a runs file, then PostgreSQL
    from referee.judge import Judge

    Judge(fx.manifest, db.board, runs).judge({"run": "me", "moves": [{"tile": 0, "cells": db.judge.truth(0)}]})
    r = run_tiles("referee", "puzzle", str(mf), "1", "--runs", str(runs), "--run", "me", "--json", "-L", lib)
    assert r.returncode == 0
    v = json.loads(r.stdout)
    assert v == puzzle_view(db, 1, {0}) and v["playable"] and v["puzzle"] != db.judge.truth(1)
    r = run_tiles("referee", "score", "--runs", str(runs))
    assert r.returncode == 0
    row = json.loads(r.stdout)
    assert (row["run"], row["solved"], row["reward"], row["moves"], row["batches"]) == ("me", 1, 256, 1, 1)
    for argv in (
        ["referee", "puzzle", str(mf), "8", "-L", lib],
        ["referee", "puzzle", str(mf), "1", "--runs", str(runs), "-L", lib],
        ["referee", "puzzle", str(mf), "1", "--runs", str(runs), "--run", "nobody", "-L", lib],
        ["referee", "score", "--runs", str(tmp_path / "none.sqlite")],
        ["referee", "score", "--runs", str(runs), "--run", "nobody"],
    ):
        r = run_tiles(*argv)
        assert r.returncode == 2
        err = r.stderr.strip().splitlines()
        assert len(err) == 1 and err[0].startswith("tiles: error:")
    assert not (tmp_path / "none.sqlite").exists()
