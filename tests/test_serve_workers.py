"""Several workers over one PostgreSQL database (``tiles referee serve --workers N``): no state that
matters lives in a worker, so eight solver agents playing one G=121 day through two workers while
PostgreSQL restarts under them (and a worker is killed) each end with the full reward, and no tile
is scored twice — every run's stored history, replayed move by move through the judging core,
gives its stored score. The CLI judge writing the same database stays consistent with the workers."""

from __future__ import annotations

import json
import os
import signal
import time

import httpx
import pytest

from cli_support import run_tiles
from pg_support import query_runs
from players import agents
from players.client import Client
from players.sessions import HttpSession
from serve_support import judged_day, replayed, service_process, start_players, worker_pids

DAY = "2026-11-30"
AGENTS = 8

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def g121(tmp_path_factory):
    """A real G=121 day: (library, manifest path, the truth as a Judge, the day's full reward)."""
    return judged_day(tmp_path_factory, "workers121", DAY, bytes.fromhex("5a" * 32), 121)


def test_eight_agents_on_two_workers_survive_postgresql_restarts(g121, pg_cluster, tmp_path):
    lib, manifest, truth, full = g121
    url = pg_cluster.new_database("chaos")
    with service_process(lib, url, [manifest], "--workers", "2", log=tmp_path / "serve.log") as (proc, base):
        deadline = time.monotonic() + 60
        while len(worker_pids(proc.pid)) < 2 and time.monotonic() < deadline:
            time.sleep(0.2)
        assert len(worker_pids(proc.pid)) == 2
        clients = [Client(base, retries=12, backoff=0.2) for _ in range(AGENTS)]
        sessions = [HttpSession(c, DAY, player=f"bot{k}", max_moves=3) for k, c in enumerate(clients)]
        threads, results, errors = start_players(sessions, "agent")
        faults = []
        for k in range(3):                       # PostgreSQL restarts under them, a worker dies
            time.sleep(1.0)
            if not any(t.is_alive() for t in threads):
                break
            pg_cluster.restart("fast" if k != 1 else "immediate")
            faults.append("restart")
            if k == 0:
                os.kill(worker_pids(proc.pid)[0], signal.SIGKILL)
                faults.append("worker killed")
        for t in threads:
            t.join(timeout=600)
        for c in clients:
            c.close()
        assert not errors, errors
        assert faults[:2] == ["restart", "worker killed"], faults    # the faults did come mid-play
        for k, r in enumerate(results):
            assert r is not None and r.cleared and r.reward == full, (k, r)
        with Client(base) as c:
            board = {row.run: row for row in c.leaderboard(DAY).runs}
    for s in sessions:
        stored = query_runs(url, "SELECT coalesce(sum(reward), 0), count(*) FROM moves WHERE run = ?", (s.run,))[0]
        reward, moves, scored = replayed(truth, url, s.run)
        assert reward == stored[0] == full == board[s.run].reward
        assert len(scored) == len(set(scored)) == len(truth.board.squares)       # no tile scored twice
        assert query_runs(url, "SELECT nmoves FROM runs WHERE run = ?", (s.run,)) == [(moves,)]


def test_two_workers_and_the_cli_judge_write_one_database_consistently(g121, pg_cluster, tmp_path):
    lib, manifest, truth, full = g121
    url = pg_cluster.new_database("mixed")
    seed = truth.board.seed_tile
    with service_process(lib, url, [manifest], "--workers", "2", log=tmp_path / "serve.log") as (_proc, base):
        with Client(base) as c:
            run = c.create_run(DAY, player="mixed").run
            sub = tmp_path / "s.json"
            sub.write_text(json.dumps({"run": run, "moves": [{"tile": seed, "cells": truth.truth(seed)}]}))
            r = run_tiles("referee", "judge", str(manifest), str(sub), "--runs", url, "-L", str(lib))
            assert r.returncode == 0 and json.loads(r.stdout)["correct"] is True, r.stderr
            n = truth.board.squares[seed][2] + 1
            for _ in range(20):                   # new connections: either worker answers, each says the same
                got = httpx.get(f"{base}/api/v1/runs/{run}", headers={"Connection": "close"}).json()
                assert (got["solved"], got["reward"]) == (1, n * n)
            again = c.moves(run, [(seed, truth.truth(seed))]).verdicts[0]
            assert not again.correct and again.reason.endswith("(replay)")
            result = agents.play("solver", HttpSession(c, DAY, run=run))
            assert c.score(run).reward == full and result.reward == full - n * n
    r = run_tiles("referee", "score", "--runs", url, "--run", run)
    assert r.returncode == 0 and json.loads(r.stdout)["reward"] == full
    reward, _moves, scored = replayed(truth, url, run)
    assert reward == full and len(scored) == len(set(scored))
