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
from serve_support import judged_day, replayed, service_process, start_players, worker_pids

from players import agents
from players.client import Client
from players.sessions import HttpSession

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
        for k in range(3):  # PostgreSQL restarts under them, a worker dies
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
        assert faults[:2] == ["restart", "worker killed"], faults  # the faults did come mid-play
        for k, r in enumerate(results):
            assert r is not None and r.cleared and r.reward == full, (k, r)
        with Client(base) as c:
            board = {row.run: row for row in c.leaderboard(DAY).runs}
    for s in sessions:
        stored = query_runs(url, "SELECT coalesce(sum(reward), 0), count(*) FROM moves WHERE run = ?", (s.run,))[0]
        reward, moves, scored = replayed(truth, url, s.run)
        assert reward == stored[0] == full == board[s.run].reward
        assert len(scored) == len(set(scored)) == len(truth.board.squares)  # no tile scored twice
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
            for _ in range(20):  # new connections: either worker answers, each says the same
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


def _sockets(port: int, state: str = "01") -> set[int]:
    """The socket inodes of this machine's TCP sockets on local port ``port`` in ``state`` (01:
    established, the server's ends of its clients' connections; 0A: listening), from /proc/net/tcp."""
    out = set()
    with open("/proc/net/tcp") as fh:
        for line in fh.readlines()[1:]:
            f = line.split()
            if int(f[1].split(":")[1], 16) == port and f[3] == state:
                out.add(int(f[9]))
    return out


def _held_by(pid: int, inodes: set[int]) -> int:
    """How many of ``inodes`` the process ``pid`` holds open."""
    n = 0
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            link = os.readlink(f"/proc/{pid}/fd/{fd}")
        except OSError:
            continue
        if link.startswith("socket:[") and int(link[8:-1]) in inodes:
            n += 1
    return n


def _burst(base: str, n: int) -> list:
    """``n`` keep-alive connections opened at once, each answered once; the open sockets."""
    import socket
    from concurrent.futures import ThreadPoolExecutor

    host, port = base.split("//")[1].split(":")

    def one(_k):
        s = socket.create_connection((host, int(port)), timeout=30)
        s.sendall(b"GET /healthz HTTP/1.1\r\nHost: t\r\n\r\n")
        assert s.recv(4096).startswith(b"HTTP/1.1 200")
        return s

    with ThreadPoolExecutor(n) as pool:
        return list(pool.map(one, range(n)))


def test_a_burst_of_connections_is_spread_over_the_workers(g121, tmp_path):
    """Each worker listens on a socket of its own (SO_REUSEPORT): 64 players arriving at once land on
    both workers (one shared socket gave 232 of 256 to one worker), every connection is answered
    (the supervisor's socket holds the port and never listens), and a worker started in place of a
    killed one takes its share of the next burst."""
    lib, manifest, _truth, _full = g121
    with service_process(lib, tmp_path / "runs.sqlite", [manifest], "--workers", "2", log=tmp_path / "serve.log") as (
        proc,
        base,
    ):
        port = int(base.rsplit(":", 1)[1])

        def listening(pids):
            return len(pids) == 2 and all(_held_by(p, _sockets(port, "0A")) == 1 for p in pids)

        deadline = time.monotonic() + 60
        while not listening(worker_pids(proc.pid)) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert _held_by(proc.pid, _sockets(port, "0A")) == 0  # the supervisor never listens
        for round_ in range(2):
            pids = worker_pids(proc.pid)
            assert len(pids) == 2, pids
            conns = _burst(base, 64)
            held = [_held_by(p, _sockets(port)) for p in pids]
            assert sum(held) == 64 and min(held) >= 16, (round_, held)
            for s in conns:
                s.close()
            if round_ == 0:  # a worker dies; its replacement joins the group
                os.kill(pids[0], signal.SIGKILL)
                deadline = time.monotonic() + 60
                while (
                    pids[0] in worker_pids(proc.pid) or not listening(worker_pids(proc.pid))
                ) and time.monotonic() < deadline:
                    time.sleep(0.2)
