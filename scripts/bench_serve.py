"""Load test of `tiles referee serve` (issue 13): concurrent clients playing one day over loopback.

Starts the service as a subprocess on 127.0.0.1 over a fresh runs file, then runs ``--clients``
asyncio clients (one keep-alive HTTP/1.1 connection each, a few lines over asyncio streams so the
load generator stays cheap) for ``--seconds``. Each client creates a run
and loops like an agent: GET the puzzle of a tile, POST one batch of ``--batch`` moves — mostly
correct moves on its frontier, with some wrong cells, replays and off-frontier tiles mixed in
(``--mix``). The clients know the answers because this script rebuilds the board itself.

Afterwards it checks the runs file: every move any client sent is stored exactly once with the
verdict the client got, no tile is rewarded twice in a run, and each run's total equals both the sum
of its verdicts and the service's score. Prints a markdown table: requests, moves/s, latency
median / p99 / max per request kind, and in-process baselines measured in the same run (the judging
core per move, the CLI judge per submission, one board rebuild — what every CLI judge call paid).

    python scripts/bench_serve.py --manifest DAY.json -L LIB [--clients 32] [--seconds 30] [--batch 1]
                                  [--workers N] [--postgres | --runs postgresql://…]

``--postgres`` starts a throwaway PostgreSQL on loopback (the tests' ``pg_support.Cluster``) and
serves over it; ``--workers N`` runs N worker processes. The RSS of the service's processes
(the command and each worker) is read at the end of the load.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import random
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.append(str(Path(__file__).resolve().parents[1] / "tests"))   # serve_support, pg_support

from referee.board import build_board  # noqa: E402
from referee.runsdb import opened  # noqa: E402
from referee.judge import Judge  # noqa: E402
from referee.service.boards import DayBoard, frontier, load_manifest  # noqa: E402
from tilelib.store import Library  # noqa: E402
from serve_support import worker_pids  # noqa: E402
from serving import free_port, wait_until_up  # noqa: E402  (scripts/serving.py)



def stats(xs: list[float]) -> tuple[float, float, float]:
    a = np.array(xs) * 1000
    return float(np.median(a)), float(np.percentile(a, 99)), float(a.max())


def baselines(db: DayBoard, manifest, lib_path: Path, work: Path) -> dict:
    """In-process reference costs, measured now on the same machine."""
    judge, rng = db.judge, random.Random(7)
    solved, order, t = set(), [], 0.0
    fr = frontier(db, solved)
    for _ in range(2000):                       # a walk of correct moves: the core alone
        tile = rng.choice(sorted(fr))
        mv = {"tile": tile, "cells": judge.truth(tile)}
        t0 = time.perf_counter()
        judge.judge_move(mv, solved)
        t += time.perf_counter() - t0
        order.append(tile)
        fr = frontier(db, solved)
        if not fr:
            break
    core = t / len(order)
    cli = Judge(manifest, db.board, work / "cli-runs.sqlite")
    times = []
    for tile in order[:300]:                    # the CLI judge: one submission per move, no rebuild
        t0 = time.perf_counter()
        cli.judge({"run": "bench", "moves": [{"tile": tile, "cells": judge.truth(tile)}]})
        times.append(time.perf_counter() - t0)
    with Library.open(lib_path) as lib:
        t0 = time.perf_counter()
        build_board(manifest, lib)
        rebuild = time.perf_counter() - t0
    return {"core": core, "cli": float(np.median(times)), "rebuild": rebuild}


class Http:
    """A minimal HTTP/1.1 keep-alive client over asyncio streams: the load generator shares the machine
    with the service, so it must cost far less per request than the server does (httpx costs ~1 ms)."""

    def __init__(self, host: str, port: int) -> None:
        self.host, self.port = host, port

    async def __aenter__(self) -> "Http":
        self.r, self.w = await asyncio.open_connection(self.host, self.port)
        return self

    async def __aexit__(self, *exc) -> None:
        self.w.close()

    async def call(self, method: str, path: str, obj=None, token: str | None = None) -> tuple[int, dict]:
        body = b"" if obj is None else json.dumps(obj).encode()
        head = f"{method} /api/v1{path} HTTP/1.1\r\nHost: {self.host}\r\n"
        if token:
            head += f"Authorization: Bearer {token}\r\n"
        if obj is not None:
            head += f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n"
        self.w.write(head.encode() + b"\r\n" + body)
        status = int((await self.r.readline()).split()[1])
        length = 0
        while (line := await self.r.readline()) not in (b"\r\n", b""):
            k, _, v = line.partition(b":")
            if k.lower() == b"content-length":
                length = int(v)
        return status, json.loads(await self.r.readexactly(length))


async def client(k: int, port: int, day: str, db: DayBoard, until: float, batch: int, mix: tuple, log: dict):
    rng = random.Random(1000 + k)
    judge = db.judge
    async with Http("127.0.0.1", port) as c:
        t0 = time.perf_counter()
        status, r = await c.call("POST", f"/days/{day}/runs", {"player": f"bench-{k}"})
        log["create"].append(time.perf_counter() - t0)
        assert status == 201, r
        run, token = r["run"], r["token"]
        solved: set[int] = set()
        open_: set[int] = frontier(db, solved)        # kept up to date move by move (cheap for the client)
        sent: list[tuple] = []
        while time.perf_counter() < until:
            if not open_:
                break
            fr = sorted(open_)
            tile = rng.choice(fr)
            t0 = time.perf_counter()
            status, g = await c.call("GET", f"/runs/{run}/tiles/{tile}")
            log["puzzle"].append(time.perf_counter() - t0)
            assert status == 200, g
            moves = []
            for _ in range(batch):
                roll, t = rng.random(), rng.choice(fr)
                cells = judge.truth(t)
                if roll < mix[0] and cells:                     # wrong cells
                    i = rng.randrange(len(cells))
                    cells = cells[:i] + ("1" if cells[i] == "0" else "0") + cells[i + 1:]
                elif roll < mix[0] + mix[1] and solved:         # a replay
                    t = rng.choice(sorted(solved))
                    cells = judge.truth(t)
                elif roll < sum(mix):                           # off the frontier (maybe)
                    t = rng.randrange(len(db.board.squares))
                    cells = judge.truth(t)
                moves.append({"tile": t, "cells": cells})
            t0 = time.perf_counter()
            status, p = await c.call("POST", f"/runs/{run}/moves", {"moves": moves}, token)
            log["moves"].append(time.perf_counter() - t0)
            if status == 409:                                   # a move off the frontier: batch refused whole
                log.setdefault("refused", 0)
                log["refused"] += 1
                continue
            assert status == 200, p
            for v in p["verdicts"]:
                sent.append((v["tile"], v["accepted"], v["correct"], v["reward"]))
                if v["correct"]:
                    solved.add(v["tile"])
                    open_.discard(v["tile"])
                    open_ |= judge.nbrs[v["tile"]] - solved
        status, score = await c.call("GET", f"/runs/{run}")
    log["runs"][run] = (sent, score)


def service_rss(pid: int) -> list[float]:
    """RSS in MB of the service's command and of each worker it spawned (not the multiprocessing tracker)."""
    def rss(p: int) -> float:
        with open(f"/proc/{p}/status") as fh:
            return next(int(x.split()[1]) for x in fh if x.startswith("VmRSS:")) / 1024

    return [rss(pid)] + [rss(p) for p in worker_pids(pid)]


def check(target, runs: dict) -> list[str]:
    """The runs database against what the clients were told; returns the problems found (none expected)."""
    problems = []
    with opened(target) as db:
        twice = db.read("SELECT run, tile FROM moves WHERE correct = 1 GROUP BY run, tile HAVING count(*) > 1")
        if twice:
            problems.append(f"{len(twice)} (run, tile) rewarded twice")
        for run, (sent, score) in runs.items():
            rows = db.read("SELECT tile, accepted, correct, reward FROM moves WHERE run = ? ORDER BY id", (run,))
            got = [(t, bool(a), bool(c), r) for t, a, c, r in rows]
            if Counter(got) != Counter(sent) or len(got) != len(sent):
                problems.append(f"{run}: stored moves differ from the verdicts sent ({len(got)} vs {len(sent)})")
            total = sum(r for *_x, r in sent)
            if not (total == score["reward"] == sum(r for *_x, r in got)):
                problems.append(f"{run}: totals differ (verdicts {total}, score {score['reward']})")
    return problems


async def play(port, day, db, args, log):
    until = time.perf_counter() + args.seconds
    await asyncio.gather(*(client(k, port, day, db, until, args.batch, tuple(args.mix), log)
                           for k in range(args.clients)))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--manifest", type=Path, required=True)
    ap.add_argument("-L", "--library", type=Path, required=True)
    ap.add_argument("--clients", type=int, default=32)
    ap.add_argument("--seconds", type=float, default=30)
    ap.add_argument("--batch", type=int, default=1, help="moves per request")
    ap.add_argument("--mix", type=float, nargs=3, default=(0.1, 0.05, 0.05),
                    metavar=("WRONG", "REPLAY", "OFF"), help="fractions of wrong / replayed / random-tile moves")
    ap.add_argument("--work", type=Path, default=None)
    ap.add_argument("--workers", type=int, default=1)
    ap.add_argument("--runs", default=None, help="a postgresql:// URL (default: a fresh runs file)")
    ap.add_argument("--postgres", action="store_true", help="serve over a throwaway PostgreSQL on loopback")
    args = ap.parse_args()
    work = args.work or Path(tempfile.mkdtemp(prefix="bench-serve-"))
    work.mkdir(parents=True, exist_ok=True)
    runs_path = work / "runs.sqlite"
    for p in work.glob("*runs.sqlite*"):
        p.unlink()
    m = load_manifest(args.manifest)
    with Library.open(args.library) as lib:
        t0 = time.perf_counter()
        db = DayBoard.load(m, lib, work / "unused.sqlite")
        load_s = time.perf_counter() - t0
    base_costs = baselines(db, m, args.library, work)
    cluster = None
    target = args.runs or runs_path
    if args.postgres:
        import pg_support

        cluster = pg_support.Cluster().start()
        target = cluster.new_database("bench")
    port = free_port()
    cmd = [sys.executable, "-m", "tiles_cli.app", "referee", "serve", "-L", str(args.library), "--runs",
           str(target), "--manifest", str(args.manifest), "--port", str(port), "--workers", str(args.workers)]
    srv_log = open(work / "serve.log", "w")
    proc = subprocess.Popen(cmd, stdout=srv_log, stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}"
    log: dict = {"create": [], "puzzle": [], "moves": [], "runs": {}}
    try:
        ready = wait_until_up(proc, base, work / "serve.log")
        t0 = time.perf_counter()
        asyncio.run(play(port, m.day, db, args, log))
        wall = time.perf_counter() - t0
        rss = service_rss(proc.pid)
    finally:
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=30)
        srv_log.close()
    try:
        problems = check(target, log["runs"])
    finally:
        if cluster is not None:
            cluster.cleanup()
    moves = sum(len(s) for s, _ in log["runs"].values())
    correct = sum(sum(1 for x in s if x[2]) for s, _ in log["runs"].values())
    print(f"machine: {platform.node()} {platform.machine()} {os.cpu_count()} cpus; load {os.getloadavg()}")
    print(f"service: {args.workers} worker(s) over {'PostgreSQL' if cluster or args.runs else 'a SQLite runs file'}; "
          f"RSS MB (command, workers…): {', '.join(f'{r:.0f}' for r in rss)}; total {sum(rss):.0f} MB")
    print(f"board: day {m.day}, G={m.G}, {m.tile_count()} tiles; board load {load_s:.1f} s in-process, "
          f"service ready in {ready:.1f} s")
    print(f"{args.clients} clients x {args.seconds:.0f} s, {args.batch} move(s) per request, mix "
          f"wrong/replay/off = {tuple(args.mix)}: {moves} moves ({correct} correct) in {wall:.1f} s "
          f"= {moves / wall:.0f} moves/s, {len(log['moves']) / wall:.0f} POST/s")
    print()
    print("| what | count | median ms | p99 ms | max ms |")
    print("|---|---:|---:|---:|---:|")
    for kind in ("moves", "puzzle", "create"):
        md, p99, mx = stats(log[kind])
        print(f"| {kind} request (HTTP, under load) | {len(log[kind])} | {md:.2f} | {p99:.2f} | {mx:.2f} |")
    print(f"| judging core per move (in-process) | - | {base_costs['core'] * 1000:.4f} | - | - |")
    print(f"| CLI judge per 1-move submission (no rebuild) | 300 | {base_costs['cli'] * 1000:.2f} | - | - |")
    print(f"| board rebuild (every CLI judge call before) | 1 | {base_costs['rebuild'] * 1000:.0f} | - | - |")
    print()
    print("invariants: " + ("every move stored once with its verdict; no tile rewarded twice; totals = "
                            "sum of verdicts = score" if not problems else "; ".join(problems)))
    if problems:
        sys.exit(1)


if __name__ == "__main__":
    main()
