"""A reference agent playing a whole day through the HTTP service (issue 30): what a user runs.

Per board side G (``--sizes``): build a daily board in its own library under ``--work`` (or reuse it
when its manifest is there already: ``tiles daily build --date D --size G --seed HEX -L LIB --out
DIR``, log in ``DIR/build.log``), start ``tiles referee serve -L LIB --runs RUNS --port P`` over a
fresh runs file and wait for ``/api/v1/days``, then time whole commands (start-up included),
``--repeats`` times each:

- ``tiles play --url … --day D --agent solver -q``: online, the solver. Checks: ``cleared`` and the
  leaderboard's reward for the run = Σ n² over the manifest's tiles.
- ``tiles play --manifest M -L LIB --agent solver -q``: the same agent offline, in process (the
  online / offline ratio is what HTTP costs). Checks: ``cleared`` and reward = Σ n².
- ``tiles play --url … --agent random -q``: the floor. Checks: the leaderboard has its reward.

While an online play runs, the service's VmRSS (``/proc/PID/status``) is sampled every 0.2 s;
its CPU seconds (utime + stime) and the play command's own (``RUSAGE_CHILDREN``) show which side
the time goes to. One markdown row per measurement as soon as it is done, also written to
``--out``: wall median / p99 (nearest rank) / max of the whole command, the agent's own ``wall_s``
median, moves/s, requests, requests per tile, client and service CPU s (medians), service RSS max
and at rest.

    .venv/bin/python scripts/bench_agents.py [--sizes 301,1000] [--days 2030-01-02,2030-01-01]
        [--repeats 3] [--work /tmp/bench_agents_work] [--out FILE]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import resource
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx
from machine import cpu_model, nearest_rank  # noqa: E402  (scripts/machine.py)
from serving import free_port, wait_until_up  # noqa: E402  (scripts/serving.py)

COLUMNS = (
    "G",
    "agent",
    "mode",
    "tiles",
    "reward",
    "reward = Σn²",
    "cleared",
    "wall median s",
    "wall p99 s",
    "wall max s",
    "in-play s",
    "moves/s",
    "requests",
    "requests / tile",
    "client CPU s",
    "service CPU s",
    "service RSS max MB",
    "service RSS at rest MB",
)
TICK = os.sysconf("SC_CLK_TCK")


def loadavg() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def cpu_s(pid: int) -> float:
    f = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(f[11]) + int(f[12])) / TICK  # utime, stime (fields 14, 15)


def build(tiles: Path, work: Path, g: int, day: str) -> tuple[Path, Path, float | None]:
    """The day's manifest and library under ``work``; built now (its wall seconds) unless there."""
    lib, out = work / "lib.sqlite", work / "out"
    manifest = out / f"{day}.json"
    if manifest.exists():
        return manifest, lib, None
    work.mkdir(parents=True, exist_ok=True)
    seed = hashlib.sha256(f"bench-agents-{g}".encode()).hexdigest()
    print(f"building G={g} day {day} (log {work / 'build.log'}) …", file=sys.stderr, flush=True)
    t0 = time.perf_counter()
    with open(work / "build.log", "w") as log, open(work / "build.json", "w") as js:
        r = subprocess.run(
            [
                str(tiles),
                "daily",
                "build",
                "--date",
                day,
                "--size",
                str(g),
                "--seed",
                seed,
                "-L",
                str(lib),
                "--out",
                str(out),
                "--json",
            ],
            stdout=js,
            stderr=log,
        )
    wall = time.perf_counter() - t0
    if r.returncode != 0 or not manifest.exists():
        sys.exit(f"G={g}: daily build exit {r.returncode}; see {work / 'build.log'}")
    return manifest, lib, wall


def run_play(cmd: list[str], server: int | None) -> dict:
    """One whole ``tiles play`` command: its final JSON line, wall, own CPU, the service's CPU and RSS."""
    samples: list[float] = []
    stop = threading.Event()

    def sample() -> None:
        while not stop.is_set():
            samples.append(rss_mb(server))
            stop.wait(0.2)

    th = threading.Thread(target=sample, daemon=True) if server else None
    srv0 = cpu_s(server) if server else 0.0
    ru0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    if th:
        th.start()
    t0 = time.perf_counter()
    r = subprocess.run(cmd, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    ru1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    if th:
        stop.set()
        th.join()
    lines = [ln for ln in r.stdout.splitlines() if ln.strip()]
    if r.returncode != 0 or not lines:
        sys.exit(f"tiles play failed (exit {r.returncode}): {' '.join(cmd)}\nstdout: {r.stdout}\nstderr: {r.stderr}")
    return {
        "res": json.loads(lines[-1]),
        "wall": wall,
        "cmd": cmd,
        "client_cpu": (ru1.ru_utime - ru0.ru_utime) + (ru1.ru_stime - ru0.ru_stime),
        "server_cpu": cpu_s(server) - srv0 if server else None,
        "rss_max": max(samples) if samples else None,
    }


def leaderboard_reward(base: str, day: str, run: str) -> int | None:
    rows = httpx.get(f"{base}/api/v1/days/{day}/leaderboard", params={"limit": 1000}, timeout=30).json()["runs"]
    mine = [row["reward"] for row in rows if row["run"] == run]
    return mine[0] if mine else None


class Table:
    def __init__(self, out: Path) -> None:
        self.fh = open(out, "w")

    def line(self, s: str = "") -> None:
        print(s, flush=True)
        self.fh.write(s + "\n")
        self.fh.flush()

    def row(self, cells) -> None:
        self.line("| " + " | ".join(str(c) for c in cells) + " |")


def measure(
    table: Table,
    g: int,
    agent: str,
    mode: str,
    cmd: list[str],
    repeats: int,
    total: int,
    base: str | None,
    day: str,
    server: int | None,
    at_rest: float | None,
    problems: list[str],
) -> dict:
    got = [run_play(cmd, server) for _ in range(repeats)]
    for x in got:
        res = x["res"]
        x["board"] = leaderboard_reward(base, day, res["run"]) if base is not None else None
        if agent == "solver" and not res["cleared"]:
            problems.append(f"G={g} {agent} {mode}: not cleared ({res['solved']}/{res['tiles']}): {' '.join(cmd)}")
        if agent == "solver" and res["reward"] != total:
            problems.append(f"G={g} {agent} {mode}: reward {res['reward']} != Σn² {total}")
        if base is not None and x["board"] != res["reward"]:
            problems.append(f"G={g} {agent} {mode}: leaderboard reward {x['board']} != the agent's {res['reward']}")
    walls = [x["wall"] for x in got]
    res = [x["res"] for x in got]
    rewards = sorted({r["reward"] for r in res})
    exact = all(r["reward"] == total and (x["board"] in (None, total)) for r, x in zip(res, got, strict=True))
    med = statistics.median
    reqs = med([r["requests"] for r in res])
    table.row(
        (
            g,
            agent,
            mode,
            res[0]["tiles"],
            "/".join(f"{w:,}" for w in rewards),
            "yes" if exact else "no",
            f"{sum(r['cleared'] for r in res)}/{len(res)}",
            f"{med(walls):.2f}",
            f"{nearest_rank(walls, 0.99):.2f}",
            f"{max(walls):.2f}",
            f"{med([r['wall_s'] for r in res]):.2f}",
            f"{med([r['moves_per_s'] for r in res]):,.0f}",
            f"{reqs:,.0f}",
            f"{reqs / res[0]['tiles']:.2f}",
            f"{med([x['client_cpu'] for x in got]):.2f}",
            "—" if server is None else f"{med([x['server_cpu'] for x in got]):.2f}",
            "—" if server is None else f"{max(x['rss_max'] for x in got):.0f}",
            "—" if at_rest is None else f"{at_rest:.0f}",
        )
    )
    return {"wall": med(walls), "play": med([r["wall_s"] for r in res])}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="301,1000", help="board sides G, comma-separated")
    ap.add_argument("--days", default="2030-01-02,2030-01-01", help="one day per size (a day not yet over)")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--work", type=Path, default=Path("/tmp/bench_agents_work"))
    ap.add_argument("--out", type=Path, default=None, help="the table's file (default: WORK/bench_agents.md)")
    args = ap.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    days = args.days.split(",")
    if len(days) != len(sizes):
        sys.exit("--days needs one day per size")
    tiles = Path(sys.executable).with_name("tiles")
    args.work.mkdir(parents=True, exist_ok=True)
    table = Table(args.out or args.work / "bench_agents.md")
    commit = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, cwd=Path(__file__).resolve().parent
    ).stdout.strip()
    table.line(
        f"{cpu_model()}, {os.cpu_count()} cores; load average {loadavg()} at the start; commit {commit}; "
        f"{args.repeats} repeats per row, whole commands (start-up included)"
    )
    table.line()
    table.row(COLUMNS)
    table.line("|" + "---|" * len(COLUMNS))
    problems: list[str] = []
    notes: list[str] = []
    for g, day in zip(sizes, days, strict=True):
        work = args.work / f"g{g}"
        manifest, lib, built = build(tiles, work, g, day)
        total = sum(t["n"] ** 2 for t in json.loads(manifest.read_text())["tiles"])
        runs = work / "runs.sqlite"
        for p in work.glob("runs.sqlite*"):
            p.unlink()
        port = free_port()
        base = f"http://127.0.0.1:{port}"
        srv_log = open(work / "serve.log", "w")
        proc = subprocess.Popen(
            [str(tiles), "referee", "serve", "-L", str(lib), "--runs", str(runs), "--port", str(port)],
            stdout=srv_log,
            stderr=subprocess.STDOUT,
        )
        try:
            ready = wait_until_up(proc, base, work / "serve.log")
            rest0 = rss_mb(proc.pid)
            online = ["--url", base, "--day", day, "-q"]
            on = measure(
                table,
                g,
                "solver",
                "online",
                [str(tiles), "play", *online, "--agent", "solver"],
                args.repeats,
                total,
                base,
                day,
                proc.pid,
                rest0,
                problems,
            )
            off = measure(
                table,
                g,
                "solver",
                "offline",
                [str(tiles), "play", "--manifest", str(manifest), "-L", str(lib), "--agent", "solver", "-q"],
                args.repeats,
                total,
                None,
                day,
                None,
                None,
                problems,
            )
            measure(
                table,
                g,
                "random",
                "online",
                [str(tiles), "play", *online, "--agent", "random"],
                args.repeats,
                total,
                base,
                day,
                proc.pid,
                rss_mb(proc.pid),
                problems,
            )
            rest1 = rss_mb(proc.pid)
        finally:
            proc.terminate()
            proc.wait(timeout=30)
            srv_log.close()
        notes.append(
            f"G={g} (day {day}, Σn² = {total:,}{'' if built is None else f', built in {built:.0f} s'}): "
            f"service ready in {ready:.1f} s, RSS at rest {rest0:.0f} MB before the plays, "
            f"{rest1:.0f} MB after; solver online / offline = {on['wall'] / off['wall']:.2f}x whole "
            f"command, {on['play'] / off['play']:.2f}x in play"
        )
    table.line()
    for n in notes:
        table.line("- " + n)
    table.line(f"- load average {loadavg()} at the end")
    table.line(
        "- checks: "
        + (
            "the solver cleared every run with reward = Σn² on the leaderboard (online) and "
            "in its own result; every online run's leaderboard reward = the agent's"
            if not problems
            else "; ".join(problems)
        )
    )
    if problems:
        sys.exit(1)


if __name__ == "__main__":
    main()
