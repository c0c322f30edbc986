"""`tiles referee verify | tile | judge`: one output line per result, one-line errors, exit codes."""

from __future__ import annotations

import json

import pytest
from cli_support import run_tiles
from referee_support import board21 as shared_board21
from referee_support import copy_fixture

from tilelib.store import Library

SEED_HEX = bytes(range(32)).hex()


@pytest.fixture(scope="session")
def board21(tmp_path_factory):
    return shared_board21(tmp_path_factory)


@pytest.fixture
def files(board21, tmp_path):
    fx = copy_fixture(board21, tmp_path / "lib.sqlite")
    m = tmp_path / "day.json"
    m.write_text(fx.manifest.to_json())
    return fx, m


def one_error_line(r) -> str:
    err = r.stderr.strip()
    assert "\n" not in err and err.startswith("tiles: error: ")
    return err


def test_verify_prints_one_line(files):
    fx, m = files
    r = run_tiles("referee", "verify", str(m), "--library", str(fx.lib_path))
    assert r.returncode == 0
    out = r.stdout
    k = len(fx.manifest.clues)
    assert out.count("\n") == 1 and out.startswith("frontier: 8 tiles, ") and out.strip().endswith(f" {k} clues")
    r = run_tiles("referee", "verify", str(m), "-L", str(fx.lib_path), "--seed", SEED_HEX)
    assert r.returncode == 0
    assert r.stdout.strip().endswith("seed ok")


def test_verify_library_from_env(files):
    fx, m = files
    r = run_tiles("referee", "verify", str(m), env={"TILES_LIBRARY": str(fx.lib_path)})
    assert r.returncode == 0


def test_verify_failure_names_the_step_and_exits_5(files, tmp_path):
    fx, m = files
    d = json.loads(m.read_text())
    d["clues"] = []
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(d))
    r = run_tiles("referee", "verify", str(bad), "-L", str(fx.lib_path))
    assert r.returncode == 5
    assert one_error_line(r).startswith("tiles: error: step frontier: ")
    r = run_tiles("referee", "verify", str(m), "-L", str(fx.lib_path), "--seed", "00" * 32)
    assert r.returncode == 5
    assert one_error_line(r).startswith("tiles: error: step seed: ")


@pytest.mark.parametrize("how,code", [("malformed", 2), ("missing", 2), ("badseed", 2), ("nolib", 3)])
def test_verify_bad_input(files, tmp_path, how, code):
    fx, m = files
    lib = fx.lib_path
    args = []
    if how == "malformed":
        m = tmp_path / "x.json"
        m.write_text('{"format": "tiles-manifest/1"}')
    elif how == "missing":
        m = tmp_path / "absent.json"
    elif how == "badseed":
        args = ["--seed", "xyz"]
    elif how == "nolib":
        lib = tmp_path / "nolib.sqlite"
    r = run_tiles("referee", "verify", str(m), "-L", str(lib), *args)
    assert r.returncode == code
    one_error_line(r)
    assert not (tmp_path / "nolib.sqlite").exists()


def test_tile_record_canonical_and_oriented(files):
    fx, _ = files
    h, t = fx.manifest.hashes[1], fx.manifest.transforms[1]
    r = run_tiles("referee", "tile", h, "--with-solution", "-L", str(fx.lib_path))
    assert r.returncode == 0
    rec = json.loads(r.stdout)
    with Library.open(fx.lib_path) as lib:
        tile = lib.get(h)
    assert rec["hash"] == h and rec["t"] == 0 and rec["n"] == 6 and rec["m"] == tile.features.m
    assert len(rec["solution"]) == 36 and len(rec["alts"]) == tile.features.m - 1
    assert set(rec["puzzle"]) <= set("01.") and rec["puzzle"].count(".") == 36 - rec["givens"].count("1")
    r = run_tiles("referee", "tile", h.upper(), "--t", str(t), "--with-solution", "-L", str(fx.lib_path))
    assert r.returncode == 0
    rec2 = json.loads(r.stdout)
    # oriented by the manifest's t, the solution is the tile's window as it lies on the board
    x0, y0, s = fx.manifest.packing.squares[1]
    want = "".join(str(int(v)) for v in fx.solution[y0 : y0 + s + 1, x0 : x0 + s + 1].ravel())
    assert rec2["solution"] == want and rec2["hash"] == h and rec2["t"] == t


def test_tile_record_hides_the_solution_unless_asked(files):
    fx, _ = files
    h = fx.manifest.hashes[1]
    r = run_tiles("referee", "tile", h, "-L", str(fx.lib_path))
    assert r.returncode == 0
    rec = json.loads(r.stdout)
    assert not {"solution", "alts", "flip"} & set(rec)
    assert rec["hash"] == h and len(rec["givens"]) == 36 and set(rec["puzzle"]) <= set("01.")
    with Library.open(fx.lib_path) as lib:
        sol = "".join(str(int(v)) for v in lib.get(h).solution_grid.ravel())
    assert sol not in r.stdout + json.dumps(rec)


@pytest.mark.parametrize(
    "args,code",
    [
        (["0" * 64], 2),  # unknown hash
        (["abc"], 2),  # not a hash
        (["HASH", "--t", "16"], 2),
    ],
)
def test_tile_errors(files, args, code):
    fx, _ = files
    args = [fx.manifest.hashes[0] if a == "HASH" else a for a in args]
    r = run_tiles("referee", "tile", *args, "-L", str(fx.lib_path))
    assert r.returncode == code
    one_error_line(r)


def test_judge_prints_one_object_per_move_and_persists(files, tmp_path, runs_target):
    """On a runs file and on PostgreSQL (``--runs postgresql://…``) alike; ``score`` reads it back."""
    fx, m = files
    runs = runs_target
    x0, y0, s = fx.manifest.packing.squares[0]
    good = "".join(str(int(v)) for v in fx.solution[y0 : y0 + s + 1, x0 : x0 + s + 1].ravel())
    subm = tmp_path / "s.json"
    subm.write_text(json.dumps({"run": "r1", "moves": [{"tile": 0, "cells": good}, {"tile": 99, "cells": ""}]}))
    r = run_tiles("referee", "judge", str(m), str(subm), "--runs", str(runs), "-L", str(fx.lib_path))
    assert r.returncode == 0
    lines = r.stdout.splitlines()
    assert [json.loads(x) for x in lines] == [
        {"tile": 0, "accepted": True, "correct": True, "reward": 256, "reason": None},
        {
            "tile": 99,
            "accepted": False,
            "correct": False,
            "reward": 0,
            "reason": "unknown tile id 99 (this board has tiles 0..7)",
        },
    ]
    r = run_tiles("referee", "judge", str(m), str(subm), "--runs", str(runs), "-L", str(fx.lib_path))
    assert r.returncode == 0
    assert "replay" in json.loads(r.stdout.splitlines()[0])["reason"]
    r = run_tiles("referee", "score", "--runs", str(runs))
    assert r.returncode == 0 and [json.loads(x) for x in r.stdout.splitlines()] == [
        {
            "run": "r1",
            "day": fx.manifest.day,
            "player": None,
            "solved": 1,
            "reward": 256,
            "moves": 4,
            "accepted": 1,
            "batches": 2,
        }
    ]
    subm.write_text("{oops")
    r = run_tiles("referee", "judge", str(m), str(subm), "--runs", str(runs), "-L", str(fx.lib_path))
    assert r.returncode == 2
    assert "not valid JSON" in one_error_line(r)
    r = run_tiles("referee", "judge", str(m), str(tmp_path / "none.json"), "--runs", str(runs), "-L", str(fx.lib_path))
    assert r.returncode == 2
    one_error_line(r)
