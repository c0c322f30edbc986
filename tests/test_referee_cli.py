"""`tiles referee verify | tile | judge`: one output line per result, one-line errors, exit codes."""

from __future__ import annotations

import json

import pytest

from referee_support import board21 as shared_board21, copy_fixture
from tiles_cli.app import main
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


def run(argv):
    try:
        return main(argv)
    except SystemExit as e:
        return e.code


def one_error_line(capsys) -> str:
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and err.startswith("tiles: error: ")
    return err


def test_verify_prints_one_line(files, capsys):
    fx, m = files
    assert run(["referee", "verify", str(m), "--library", str(fx.lib_path)]) == 0
    out = capsys.readouterr().out
    assert out.count("\n") == 1 and out.startswith("frontier: 8 tiles, ") and out.strip().endswith("1 clues")
    assert run(["referee", "verify", str(m), "-L", str(fx.lib_path), "--seed", SEED_HEX]) == 0
    assert capsys.readouterr().out.strip().endswith("seed ok")


def test_verify_library_from_env(files, capsys, monkeypatch):
    fx, m = files
    monkeypatch.setenv("TILES_LIBRARY", str(fx.lib_path))
    assert run(["referee", "verify", str(m)]) == 0


def test_verify_failure_names_the_step_and_exits_5(files, capsys, tmp_path):
    fx, m = files
    d = json.loads(m.read_text())
    d["clues"] = []
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(d))
    assert run(["referee", "verify", str(bad), "-L", str(fx.lib_path)]) == 5
    assert one_error_line(capsys).startswith("tiles: error: frontier: ")
    assert run(["referee", "verify", str(m), "-L", str(fx.lib_path), "--seed", "00" * 32]) == 5
    assert one_error_line(capsys).startswith("tiles: error: seed: ")


@pytest.mark.parametrize("how,code", [("malformed", 2), ("missing", 2), ("badseed", 2), ("nolib", 3)])
def test_verify_bad_input(files, capsys, tmp_path, how, code):
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
    assert run(["referee", "verify", str(m), "-L", str(lib), *args]) == code
    one_error_line(capsys)
    assert not (tmp_path / "nolib.sqlite").exists()


def test_tile_record_canonical_and_oriented(files, capsys):
    fx, _ = files
    h, t = fx.manifest.hashes[1], fx.manifest.transforms[1]
    assert run(["referee", "tile", h, "--with-solution", "-L", str(fx.lib_path)]) == 0
    rec = json.loads(capsys.readouterr().out)
    with Library.open(fx.lib_path) as lib:
        tile = lib.get(h)
    assert rec["hash"] == h and rec["t"] == 0 and rec["n"] == 6 and rec["m"] == tile.features.m
    assert len(rec["solution"]) == 36 and len(rec["alts"]) == tile.features.m - 1
    assert set(rec["puzzle"]) <= set("01.") and rec["puzzle"].count(".") == 36 - rec["givens"].count("1")
    assert run(["referee", "tile", h.upper(), "--t", str(t), "--with-solution", "-L", str(fx.lib_path)]) == 0
    rec2 = json.loads(capsys.readouterr().out)
    # oriented by the manifest's t, the solution is the tile's window as it lies on the board
    x0, y0, s = fx.manifest.packing.squares[1]
    want = "".join(str(int(v)) for v in fx.solution[y0:y0 + s + 1, x0:x0 + s + 1].ravel())
    assert rec2["solution"] == want and rec2["hash"] == h and rec2["t"] == t


def test_tile_record_hides_the_solution_unless_asked(files, capsys):
    fx, _ = files
    h = fx.manifest.hashes[1]
    assert run(["referee", "tile", h, "-L", str(fx.lib_path)]) == 0
    rec = json.loads(capsys.readouterr().out)
    assert not {"solution", "alts", "flip"} & set(rec)
    assert rec["hash"] == h and len(rec["givens"]) == 36 and set(rec["puzzle"]) <= set("01.")
    with Library.open(fx.lib_path) as lib:
        sol = "".join(str(int(v)) for v in lib.get(h).solution_grid.ravel())
    assert sol not in capsys.readouterr().out + json.dumps(rec)


@pytest.mark.parametrize("args,code", [
    (["0" * 64], 2),          # unknown hash
    (["abc"], 2),             # not a hash
    (["HASH", "--t", "16"], 2),
])
def test_tile_errors(files, capsys, args, code):
    fx, _ = files
    args = [fx.manifest.hashes[0] if a == "HASH" else a for a in args]
    assert run(["referee", "tile", *args, "-L", str(fx.lib_path)]) == code
    one_error_line(capsys)


def test_judge_prints_one_object_per_move_and_persists(files, capsys, tmp_path):
    fx, m = files
    runs = tmp_path / "runs.sqlite"
    x0, y0, s = fx.manifest.packing.squares[0]
    good = "".join(str(int(v)) for v in fx.solution[y0:y0 + s + 1, x0:x0 + s + 1].ravel())
    subm = tmp_path / "s.json"
    subm.write_text(json.dumps({"run": "r1", "moves": [{"tile": 0, "cells": good}, {"tile": 99, "cells": ""}]}))
    assert run(["referee", "judge", str(m), str(subm), "--runs", str(runs), "-L", str(fx.lib_path)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [json.loads(x) for x in lines] == [
        {"tile": 0, "accepted": True, "correct": True, "reward": 256, "reason": None},
        {"tile": 99, "accepted": False, "correct": False, "reward": 0,
         "reason": "unknown tile id 99 (this board has tiles 0..7)"}]
    assert run(["referee", "judge", str(m), str(subm), "--runs", str(runs), "-L", str(fx.lib_path)]) == 0
    assert "replay" in json.loads(capsys.readouterr().out.splitlines()[0])["reason"]
    subm.write_text("{oops")
    assert run(["referee", "judge", str(m), str(subm), "--runs", str(runs), "-L", str(fx.lib_path)]) == 2
    assert "not valid JSON" in one_error_line(capsys)
    assert run(["referee", "judge", str(m), str(tmp_path / "none.json"), "--runs", str(runs),
                "-L", str(fx.lib_path)]) == 2
    one_error_line(capsys)
