"""`tiles library init | stats | verify` through the real entry point (tests/cli_support.run_tiles)."""

import json

import numpy as np
from cli_support import run_tiles
from support import random_givens, random_solution

from tilelib.store import Library
from tilelib.tile import Features, Tile


def consistent_tile(rng):
    giv = random_givens(6, rng)
    return Tile.from_grids(random_solution(6, rng), giv, 0, Features(blank=1 - giv.sum() / 36))


def test_init_stats_verify(tmp_path):
    p = tmp_path / "lib.sqlite"
    r = run_tiles("library", "init", "--library", str(p))
    assert r.returncode == 0 and "created library" in r.stdout
    with Library.open(p) as lib:
        rng = np.random.default_rng(1)
        lib.insert_many([consistent_tile(rng) for _ in range(5)])
    r = run_tiles("library", "stats", "--json", env={"TILES_LIBRARY": str(p)})
    assert r.returncode == 0
    s = json.loads(r.stdout)
    assert s["tiles"] == 5 and s["per_n"] == {"6": 5}
    r = run_tiles("library", "verify", "--library", str(p))
    assert r.returncode == 0 and "ok: 5 tiles verified" in r.stdout


def test_verify_names_bad_rows_and_exits_5(tmp_path):
    p = tmp_path / "lib.sqlite"
    with Library.create(p) as lib:
        rng = np.random.default_rng(2)
        t = consistent_tile(rng)
        lib.insert_many([t])
        with lib.conn:
            lib.conn.execute("UPDATE tiles SET seam_mask = 9")
    r = run_tiles("library", "verify", "--library", str(p))
    assert r.returncode == 5
    assert t.hash in r.stdout and "hashes to" in r.stdout
    assert r.stderr.count("\n") == 1 and "1 problem" in r.stderr


def test_bad_input_is_one_line_and_writes_nothing(tmp_path):
    p = tmp_path / "absent.sqlite"
    r = run_tiles("library", "stats", "--library", str(p))
    assert r.returncode == 3 and r.stderr.startswith("tiles: error:") and r.stderr.count("\n") == 1
    assert not p.exists()
    junk = tmp_path / "junk.sqlite"
    junk.write_text("not a database")
    r = run_tiles("library", "verify", "--library", str(junk))
    assert r.returncode == 3 and "not a SQLite file" in r.stderr
    assert junk.read_text() == "not a database"
    r = run_tiles("library", "stats", "--no-such-option")
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "Traceback" not in r.stderr
