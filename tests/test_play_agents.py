"""`tiles play`: the reference agents on a G=61 daily board, online (a real `tiles referee serve` on
127.0.0.1) and offline (in process), and its one-line errors with their exit codes.

The solver must clear the day (every tile; the leaderboard's reward = Σ n² of the day's tiles) and
score the same online and offline; random must score at least 0 and less than the solver.
"""

from __future__ import annotations

import json

import httpx
import pytest
from cli_support import run_tiles
from serve_support import daily_g61, free_port, serving

from players.client import Client
from referee.manifest import from_json
from tilelib.errors import Forbidden, NotFound, OffFrontier, Unreachable, exit_code

DAY = "2026-11-29"


@pytest.fixture(scope="module")
def g61(tmp_path_factory):
    d, path = daily_g61(tmp_path_factory, "play61", DAY, bytes.fromhex("cd" * 32))
    m = from_json(path.read_text())
    sides = [s + 1 for _x, _y, s in m.packing.squares]  # the manifest's squares (x0, y0, n - 1)
    return d, path, sum(n * n for n in sides), len(sides)


@pytest.fixture(scope="module")
def served(g61, module_runs_target):
    """The service over each backend in turn."""
    d, manifest, _, _ = g61
    with serving(d / "lib.sqlite", module_runs_target, [manifest], log=d / "serve.log") as base:
        yield base


def last_json(out: str) -> dict:
    lines = [ln for ln in out.splitlines() if ln.strip()]
    return json.loads(lines[-1])


def test_the_solver_clears_the_day_online_and_random_is_the_floor(g61, served):
    _, _, total, tiles = g61
    r = run_tiles("play", "--url", served, "--day", DAY, "--agent", "solver", "--player", "solver-bot", process=True)
    assert r.returncode == 0, r.stderr
    solver = last_json(r.stdout)
    assert solver["cleared"] and solver["solved"] == tiles and solver["reward"] == total
    assert solver["moves"] == tiles  # never a wrong guess: it plays unique views only
    assert solver["requests"] > solver["batches"] and solver["moves_per_s"] > 0
    assert "tiles play: round 1:" in r.stderr
    board = httpx.get(f"{served}/api/v1/days/{DAY}/leaderboard").json()["runs"]
    mine = [row for row in board if row["run"] == solver["run"]]
    assert mine and mine[0]["reward"] == total and mine[0]["player"] == "solver-bot"

    r = run_tiles("play", "--url", served, "--day", DAY, "--agent", "random", "--runs", "2", "-q", process=True)
    assert r.returncode == 0, r.stderr
    rand = [json.loads(ln) for ln in r.stdout.splitlines()]
    assert len(rand) == 2 and r.stderr == ""
    for x in rand:
        assert 0 <= x["reward"] < solver["reward"] and x["moves"] == tiles and not x["cleared"]


def test_offline_play_scores_as_online(g61, tmp_path):
    d, manifest, total, tiles = g61
    runs = tmp_path / "runs.sqlite"
    r = run_tiles(
        "play", "--manifest", manifest, "-L", d / "lib.sqlite", "--agent", "solver", "-q", "--runs-file", runs
    )
    assert r.returncode == 0, r.stderr
    out = last_json(r.stdout)
    assert out["cleared"] and out["reward"] == total and out["solved"] == tiles
    score = run_tiles("referee", "score", "--runs", runs)  # the runs file holds the same run
    assert json.loads(score.stdout.splitlines()[0])["reward"] == total
    r = run_tiles("play", "--manifest", manifest, "-L", d / "lib.sqlite", "--agent", "random", "-q")
    rand = last_json(r.stdout)
    assert r.returncode == 0 and 0 <= rand["reward"] < total


def test_bad_input_is_one_line_and_its_exit_code(g61, served):
    d, manifest, _, _ = g61
    dead = f"http://127.0.0.1:{free_port()}"
    cases = [
        (["--url", dead], 4, "cannot connect"),
        (["--url", served, "--day", "2026-01-01"], 2, "not on offer"),
        (["--url", "ftp://x"], 2, "http://"),
        (["--url", served, "--manifest", str(manifest)], 2, "not both"),
        (["--url", served, "--run", "rnope", "--token", "t"], 2, "no run"),
        (["--manifest", str(d / "missing.json"), "-L", str(d / "lib.sqlite")], 2, ""),
    ]
    for args, code, words in cases:
        r = run_tiles("play", *args, "-q", "--retries", "1", process=True)
        assert r.returncode == code, (args, r.returncode, r.stderr)
        lines = r.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("tiles: error:") and words in lines[0], (args, r.stderr)
        assert r.stdout == ""
    c = Client(served)
    run = c.create_run(DAY)
    c.use_run(run.run, "wrong")
    with pytest.raises(Forbidden, match="wrong token"):
        c.moves(run.run, [(0, "0" * 36)])
    r = run_tiles("play", "--url", served, "--run", run.run, "--token", "wrong", "-q", process=True)
    assert r.returncode == 2 and "wrong token" in r.stderr
    with pytest.raises(NotFound):
        c.board("2026-01-01")
    c.use_run(run.run, run.token)
    b = c.board(DAY)
    locked = next(t for t in b.tiles if t.id != b.seed_tile)
    with pytest.raises(OffFrontier, match="not recorded"):
        c.moves(run.run, [(locked.id, "0" * locked.n**2)])
    assert c.score(run.run).moves == 0
    assert exit_code(Unreachable("x")) == 4
    with pytest.raises(Unreachable, match="cannot connect"):
        Client(dead, retries=1, backoff=0).days()
