"""Issue 12 part 3: `tiles library misses` lists the generator's to-do list and `tiles library drain`
works it off outside the nightly build — the same tiles whatever the worker count, nofit proven,
pushed as it goes."""

from __future__ import annotations

import json
import shutil
import sqlite3

import numpy as np
import pytest
from cli_support import run_tiles
from remote_support import tile_hashes
from support import random_solution

from tilelib import ledger
from tilelib.bits import edges
from tilelib.constraint import Constraint
from tilelib.store import Library

SEED = "ab" * 32


@pytest.fixture
def misses_lib(tmp_path):
    """A library with four open misses: three boundaries real grids have, one no grid can have."""
    path = tmp_path / "lib.sqlite"
    rng = np.random.default_rng(7)
    with Library.create(path) as lib:
        for n in (6, 8, 10):
            top, _right, _bottom, left = edges(random_solution(n, rng))
            ledger.record_miss(lib.conn, Constraint.sides(n, top=top, left=left))
        ledger.record_miss(lib.conn, Constraint.sides(6, top=0b000111))  # three equal in a row: nofit
    return path


def open_count(path) -> int:
    with sqlite3.connect(path) as c:
        return c.execute("SELECT count(*) FROM misses WHERE nofit = 0 AND tile IS NULL").fetchone()[0]


def test_misses_lists_open_misses_by_size_and_sides(misses_lib):
    r = run_tiles("library", "misses", "--json", "--library", str(misses_lib))
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc["open"] == 4
    # misses are stored in their canonical orientation, so which sides is the ledger's choice; how many is not
    assert sorted((g["n"], len(g["sides"].split("+")), g["open"]) for g in doc["groups"]) == [
        (6, 1, 1),
        (6, 2, 1),
        (8, 2, 1),
        (10, 2, 1),
    ]


def test_drain_makes_the_same_tiles_with_any_worker_count(misses_lib, tmp_path):
    other = tmp_path / "other.sqlite"
    shutil.copy(misses_lib, other)
    r1 = run_tiles("library", "drain", "--seed", SEED, "--library", str(misses_lib))
    r2 = run_tiles("library", "drain", "--seed", SEED, "--workers", "2", "--library", str(other))
    assert r1.returncode == 0 and r2.returncode == 0, (r1.stderr, r2.stderr)
    strip = lambda out: out.split(", in ")[0]  # noqa: E731  (timings differ)
    assert "1 proven nofit" in r1.stdout and strip(r1.stdout) == strip(r2.stdout)
    assert tile_hashes(misses_lib) == tile_hashes(other) and len(tile_hashes(misses_lib)) >= 1
    assert open_count(misses_lib) == open_count(other) <= 3 - len(tile_hashes(misses_lib))
    with Library.open(misses_lib) as lib:  # every tile meets the miss it drained
        for m in lib.conn.execute("SELECT id FROM misses WHERE tile IS NOT NULL").fetchall():
            miss = ledger.get_miss(lib.conn, m[0])
            tile = lib.get(miss.tile)
            assert tile.n == miss.constraint.n
    r = run_tiles("library", "verify", "--library", str(misses_lib))
    assert r.returncode == 0, r.stdout + r.stderr


def test_drain_pushes_as_it_goes(misses_lib, tmp_path):
    remote = tmp_path / "remote"
    remote.mkdir()
    r = run_tiles(
        "library", "drain", "--seed", SEED, "--batch", "1", "--library", str(misses_lib), "--remote", f"file://{remote}"
    )
    assert r.returncode == 0, r.stderr
    assert r.stderr.count("pushed (") >= 2  # after each batch, and at the end
    fresh = tmp_path / "fresh.sqlite"
    assert run_tiles("library", "pull", "--remote", f"file://{remote}", "--library", str(fresh)).returncode == 0
    assert tile_hashes(fresh) == tile_hashes(misses_lib)


def test_drain_refuses_bad_options_before_any_work(misses_lib, tmp_path):
    for extra in (["--limit", "0"], ["--workers", "0"], ["--seed", "xyz"]):
        r = run_tiles("library", "drain", "--library", str(misses_lib), *extra)
        assert r.returncode == 2 and "Traceback" not in r.stderr, (extra, r.stderr)
    r = run_tiles("library", "drain", "--library", str(tmp_path / "none.sqlite"))
    assert r.returncode in (2, 3) and not (tmp_path / "none.sqlite").exists()
    assert open_count(misses_lib) == 4
