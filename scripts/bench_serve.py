"""Load bench of `tiles referee serve` (issues 13 and 52): real players of one day over loopback.

Players (``scripts/loadgen.py``) play like the reference solver agent over HTTP — create a run, read
its frontier, read each frontier tile's view, submit the moves in batches, until the board is
cleared, then a new run — arriving one by one over the first ``--ramp`` seconds (players started
together march in step: ``loadgen.play``), on asyncio streams, knowing the solutions from the board this script
rebuilds, so the load generator stays cheap; its CPU (a share of one core) is printed with every
figure. Set-ups (``scripts/bench_serve_setups.py``): ``sqlite`` (1 worker), ``pg1``, ``pg2``
(PostgreSQL, 1 and 2 workers) and ``proxy`` (two hosts behind nginx with TLS, from
``deploy/nginx.conf``), each started fresh for every client count, quotas off unless ``--quotas``
(then 429s are counted apart from errors), the access log off unless ``--access-log``. Every run
exits 1 if an audit or a ``players.client`` player failed.

Three modes:

- the matrix (default): every set-up x ``--clients`` for ``--seconds``; a markdown row each as it
  ends: moves/s, runs cleared, p50/p99/max per request type, errors (not 429) and 429s, fairness
  (the slowest player's moves/s over the median player's), the service's RSS, the cores the service
  and PostgreSQL kept busy, the load generator's CPU and its event loop's lateness, and the audit
  (``scripts/bench_serve_check.py``: every run's stored history replayed through the judging core;
  moves lost, scored twice — both must be 0);
- ``--faults [LIST]``: each fault under load on its set-up (``kill-worker``, ``restart-db``: pg2;
  ``kill-host``: proxy; ``drop``: players leaving mid-request), injected a third of the way in,
  with ``--ref-players`` ``players.client`` players beside the load; then the audit;
- ``--soak MINUTES``: one set-up, a line a minute (runs cleared, moves/s, latencies, RSS of each
  service process), and the RSS when 100 and 1,000 runs had been cleared (the first of ``--setups``
  and of ``--clients``).

The full measurement (a G=301 day; ``--work`` keeps the services' logs):

    S="python scripts/bench_serve.py --manifest DAY.json -L LIB"
    $S --setups sqlite,pg1,pg2,proxy --clients 32,128,256 --seconds 60     # ~20 min
    $S --faults --clients 128 --seconds 60                                 # ~6 min
    $S --setups sqlite --clients 128 --soak 20                             # ~22 min

The crowd (issue 75): players at an agent's pace, ``--think`` ms after every answer (each pause drawn
from half to one and a half times it), on a G=61 day so that runs clear inside a cell (creations and
scores under load, every run's score audited):

    $S --setups proxy,pg2 --clients 256,1000 --seconds 120 --think 500 --ramp 20   # ~11 min

    python scripts/bench_serve.py --manifest DAY.json -L LIB [--setups sqlite,pg1,pg2,proxy]
        [--clients 32,128,256] [--seconds 60] [--think 0] [--batch 64] [--wrong 0] [--quotas] [--durable]
        [--faults [kill-worker,restart-db,kill-host,drop]] [--soak MINUTES]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import platform
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.append(str(Path(__file__).resolve().parent))

import bench_serve_setups as setups  # noqa: E402
import loadgen  # noqa: E402
from bench_serve_check import audit  # noqa: E402
from machine import cpu_model  # noqa: E402

from referee.board import build_board  # noqa: E402
from referee.judge import Judge  # noqa: E402
from referee.service.boards import DayBoard, frontier, load_manifest  # noqa: E402
from tilelib.store import Library  # noqa: E402


def say(line: str = "") -> None:
    print(line, flush=True)


def machine_lines(args) -> None:
    mem = next((int(x.split()[1]) // 1024 for x in open("/proc/meminfo") if x.startswith("MemTotal")), 0)
    say(
        f"machine: {cpu_model()}, {os.cpu_count()} cpus, {mem:,} MB RAM; {platform.system()} {platform.release()}; "
        f"Python {platform.python_version()}; load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}"
    )
    import pg_support

    pg = pg_support.pg_bin()
    vers = [
        subprocess.run([str(pg / "postgres"), "--version"], capture_output=True, text=True).stdout.strip()
        if pg
        else "no PostgreSQL"
    ]
    if setups.nginx_bin():
        vers.append(subprocess.run([setups.nginx_bin(), "-v"], capture_output=True, text=True).stderr.strip())
    say(f"software: {'; '.join(vers)}")


def baselines(db: DayBoard, manifest, lib_path: Path, work: Path) -> None:
    """In-process reference costs on this machine: the judging core per move, the CLI judge per
    1-move submission, one board rebuild."""
    judge, rng = db.judge, random.Random(7)
    solved, order, t = set(), [], 0.0
    fr = frontier(db, solved)
    while fr and len(order) < 2000:
        tile = rng.choice(sorted(fr))
        t0 = time.perf_counter()
        judge.judge_move({"tile": tile, "cells": judge.truth(tile)}, solved)
        t += time.perf_counter() - t0
        order.append(tile)
        fr = frontier(db, solved)
    cli, times = Judge(manifest, db.board, work / "cli-runs.sqlite"), []
    for tile in order[:300]:
        t0 = time.perf_counter()
        cli.judge({"run": "bench", "moves": [{"tile": tile, "cells": judge.truth(tile)}]})
        times.append(time.perf_counter() - t0)
    with Library.open(lib_path) as lib:
        t0 = time.perf_counter()
        build_board(manifest, lib)
        rebuild = time.perf_counter() - t0
    say(
        f"in-process: judging core {t / len(order) * 1e6:.1f} us/move; CLI judge {np.median(times) * 1e3:.2f} ms "
        f"per 1-move submission; board rebuild {rebuild * 1e3:.0f} ms"
    )


def fmt3(rec: loadgen.Recorder, kind: str, since: int = 0) -> str:
    n, p50, p99, mx = rec.stats(kind, since)
    return f"{p50:.0f} / {p99:.0f} / {mx:.0f}" if n else "-"


def fairness(rec: loadgen.Recorder, wall: float) -> str:
    rates = np.array(rec.acked) / wall
    med = float(np.median(rates))
    return f"{rates.min() / med:.2f} ({rates.min():.0f} / {med:.0f})" if med > 0 else "-"


def errors(rec: loadgen.Recorder, counts=None) -> str:
    """Failed attempts (not 429; ``counts``: another counter by kind, the 429s) and their kinds."""
    c = rec.errors if counts is None else counts
    n = sum(c.values())
    return f"{n}" + (f" ({', '.join(f'{k} {v}' for k, v in c.most_common())})" if n else "")


def gen_cpu(rec: loadgen.Recorder, cpu: float, wall: float) -> str:
    """The load generator's CPU: share of one core, microseconds per request sent, and how late its
    event loop woke (p99 / max ms: that much of any latency may be its own)."""
    sent = sum(len(a) for a in rec.lat.values()) + sum(rec.errors.values()) + sum(rec.r429.values())
    p99, mx = rec.lag_ms()
    return f"{cpu:.2f} ({cpu * wall / max(sent, 1) * 1e6:.0f} us/req; late {p99:.0f} / {mx:.0f} ms)"


def rss_text(rss: list) -> str:
    return f"{sum(r for _, r in rss):.0f} ({' + '.join(f'{r:.0f}' for _, r in rss)})"


def start(name: str, work: Path, args):
    """The set-up ``name`` started in ``work`` over the bench's day, with the command's serve options."""
    return setups.start(
        name,
        work,
        args.library,
        args.manifest,
        quotas=args.quotas,
        access_log=args.access_log,
        proxy_workers=args.proxy_workers,
        durable=args.durable,
    )


def run_load(svc, n: int, seconds: float, args, ctx, during=()) -> tuple:
    """``n`` players on ``svc`` for ``seconds``: (recorder, wall s, load generator's CPU share, RSS at the end,
    cores busy in (the service, PostgreSQL))."""
    rec = loadgen.Recorder(n)
    end_rss = []
    cpu0 = svc.cpu()

    async def main():
        try:
            return await loadgen.play(
                n,
                "127.0.0.1",
                svc.port,
                ctx["day"],
                ctx["judge"],
                rec,
                seconds=seconds,
                batch=args.batch,
                wrong=args.wrong,
                retries=args.retries,
                tls=svc.tls,
                ramp=args.ramp,
                think=args.think / 1000,
                during=[d(rec) for d in during],
            )
        finally:
            end_rss.extend(svc.rss())

    wall, cpu = loadgen.cpu_share(asyncio.run, main())
    cores = tuple((b - a) / wall for a, b in zip(cpu0, svc.cpu(), strict=True))
    return rec, wall, cpu, end_rss, cores


def loaded(svc, ctx, load):
    """``load()`` on a started set-up, then the set-up stopped, the runs audited and its files removed:
    (what ``load`` returned, the audit's text, whether it passed)."""
    try:
        out = load()
    finally:
        svc.stop()
    try:
        text, good = audit_line(svc, out[0], ctx)
    finally:
        svc.cleanup()
    return out, text, good


def audit_line(svc, rec, ctx) -> tuple[str, bool]:
    a = audit(svc.target, ctx["judge"], rec.runs)
    text = f"lost {a.lost}, twice {a.twice}" + (
        "" if a.ok() else f", extra {a.extra}, replay {a.mismatch}, score {a.score}; " + "; ".join(a.notes[:2])
    )
    if rec.frontier_wrong:
        text += f"; {rec.frontier_wrong} frontiers not as the player's verdicts make them"
    return text, a.ok() and not rec.frontier_wrong


def matrix(args, ctx) -> bool:
    say(
        f"\n{args.seconds:.0f} s per cell; players arriving over its first {args.ramp:g} s; "
        f"think {args.think:g} ms after each answer; batches of up to {args.batch} moves; "
        f"wrong moves {args.wrong:.0%}; "
        f"quotas {'on (serve defaults)' if args.quotas else 'off'}; access log {args.access_log}; "
        f"PostgreSQL fsync {'on' if args.durable else 'off'}; "
        "latencies p50 / p99 / max ms; fairness = slowest player's moves/s over the median's\n"
    )
    say(
        "| set-up | clients | moves/s | runs cleared | create | frontier | tile | moves | errors | 429s | "
        "fairness | RSS MB (processes) | cores: service / PostgreSQL | load gen CPU | audit |"
    )
    say("|---|---:|---:|---:|---|---|---|---|---:|---:|---|---|---|---:|---|")
    ok, notes = True, []
    for name in args.setups:
        if (why := setups.why_not(name)) is not None:
            notes.append(f"{name}: skipped: {why}")
            continue
        for n in args.clients:
            svc = start(name, ctx["work"] / f"{name}-{n}", args)
            (rec, wall, cpu, rss, cores), text, good = loaded(
                svc, ctx, lambda: run_load(svc, n, args.seconds, args, ctx)
            )
            ok &= good
            say(
                f"| {setups.describe(name, args.proxy_workers)} | {n} | {rec.moves() / wall:,.0f} | "
                f"{len(rec.finished)} | {fmt3(rec, 'create')} | {fmt3(rec, 'frontier')} | {fmt3(rec, 'tile')} | "
                f"{fmt3(rec, 'moves')} | {errors(rec)} | {errors(rec, rec.r429)} | {fairness(rec, wall)} | "
                f"{rss_text(rss)} | {cores[0]:.2f} / {cores[1]:.2f} | {gen_cpu(rec, cpu, wall)} | {text} |"
            )
            if rec.why or rec.gave_up or rec.frontier_wrong:
                notes.append(
                    f"{name} x {n}: failed attempts {dict(rec.why)}; abandoned {dict(rec.gave_up)}; "
                    f"frontiers not as expected {rec.frontier_wrong}"
                )
    for line in notes:
        say(f"- {line}")
    return ok


def faults(args, ctx) -> bool:
    n = args.clients[0]
    say(
        f"\nfaults under load: {n} players + {args.ref_players} players.client players, {args.seconds:.0f} s each, "
        f"the fault at {args.seconds / 3:.0f} s; audit = every run's history replayed through the judging core\n"
    )
    say(
        "| fault | set-up | what happened | moves/s | longest stall s | errors | retries | abandoned | "
        "dropped | players.client runs | audit |"
    )
    say("|---|---|---|---:|---:|---:|---:|---:|---:|---|---|")
    ok, notes = True, []
    for fault in args.faults:
        name = setups.FAULTS[fault]
        if (why := setups.why_not(name)) is not None:
            say(f"| {fault} | {name} | skipped: {why} | | | | | | | | |")
            continue
        svc = start(name, ctx["work"] / f"fault-{fault}", args)
        what, at = [], args.seconds / 3

        def inject(rec):
            async def go(_until):
                await asyncio.sleep(at)
                t = time.monotonic()
                if fault == "drop":
                    rec.drop_rate = args.drop_rate
                    await asyncio.sleep(args.seconds / 3)
                    rec.drop_rate = 0.0
                    what.append(f"{args.drop_rate:.0%} of moves requests dropped for {args.seconds / 3:.0f} s")
                else:
                    call = {"kill-worker": svc.kill_worker, "restart-db": svc.restart_db, "kill-host": svc.kill_host}[
                        fault
                    ]
                    what.append(await asyncio.to_thread(call))
                what.append(t)

            return go

        refs: dict = {}

        def with_refs(rec):
            async def go(until):
                refs["threads"], refs["outcomes"] = loadgen.ref_players(
                    args.ref_players, svc.base, ctx["day"], until, rec, verify=str(svc.cert) if svc.cert else True
                )

            return go

        def load():
            out = run_load(svc, n, args.seconds, args, ctx, during=(with_refs, inject))
            for t in refs.get("threads", ()):
                t.join()
            return out

        (rec, wall, _cpu, _rss, _cores), text, good = loaded(svc, ctx, load)
        outcomes = refs.get("outcomes", [])
        times = np.sort(np.frombuffer(rec.at["moves"], dtype=np.float64))
        t_fault = next((w for w in what if isinstance(w, float)), None)
        stall = float(np.diff(times[times >= t_fault - 1]).max()) if t_fault and len(times) > 2 else float("nan")
        cleared = sum(o == "cleared" for o in outcomes)
        bad = [o for o in outcomes if o != "cleared"]
        good &= not bad
        ok &= good
        say(
            f"| {fault} | {setups.describe(name, args.proxy_workers)} | "
            f"{'; '.join(w for w in what if isinstance(w, str))} | {rec.moves() / wall:,.0f} | {stall:.2f} | "
            f"{errors(rec)} | {rec.retries} | {sum(rec.gave_up.values())} | {rec.dropped} | "
            f"{cleared} cleared" + (f", {len(bad)} failed: {bad[0]}" if bad else "") + f" | {text} |"
        )
        if rec.why or rec.gave_up:
            notes.append(f"{fault}: failed attempts {dict(rec.why)}; abandoned {dict(rec.gave_up)}")
    for line in notes:
        say(f"- {line}")
    return ok


def soak(args, ctx) -> bool:
    name, n = args.setups[0], args.clients[0]
    if (why := setups.why_not(name)) is not None:
        sys.exit(f"soak on {name}: {why}")
    svc = start(name, ctx["work"] / f"soak-{name}", args)
    say(
        f"\nsoak: {setups.describe(name, args.proxy_workers)}, {n} players, {args.soak:g} min, a line every "
        f"{args.every:.0f} s (latencies p50 / p99 / max ms of that interval)\n"
    )
    say(
        "| minute | runs cleared | moves/s | moves | create | frontier | tile | errors | 429s | "
        "RSS MB (processes) | load gen CPU |"
    )
    say("|---:|---:|---:|---|---|---|---|---:|---:|---|---:|")
    marks: dict[int, list] = {}

    def sampler(rec):
        async def go(_until):
            t0, c0 = time.monotonic(), time.thread_time()
            since = {k: 0 for k in loadgen.KINDS}
            moves0, err0, r0, tick = 0, 0, 0, 0
            while True:
                await asyncio.sleep(1.0)
                for mark in (100, 1000):
                    if mark not in marks and len(rec.finished) >= mark:
                        marks[mark] = await asyncio.to_thread(svc.rss)
                if time.monotonic() - t0 < (tick + 1) * args.every:
                    continue
                tick += 1
                rss = await asyncio.to_thread(svc.rss)
                moves, err, r = rec.moves(), sum(rec.errors.values()), sum(rec.r429.values())
                c1 = time.thread_time()
                say(
                    f"| {tick * args.every / 60:.1f} | {len(rec.finished)} | {(moves - moves0) / args.every:,.0f} | "
                    + " | ".join(fmt3(rec, k, since[k]) for k in ("moves", "create", "frontier", "tile"))
                    + f" | {err - err0} | {r - r0} | {rss_text(rss)} | {(c1 - c0) / args.every:.2f} |"
                )
                since = {k: len(rec.lat[k]) for k in loadgen.KINDS}
                moves0, err0, r0, c0 = moves, err, r, c1

        return go

    (rec, wall, cpu, rss, _cores), text, ok = loaded(
        svc, ctx, lambda: run_load(svc, n, args.soak * 60 + 3, args, ctx, during=(sampler,))
    )
    say(
        f"\nsoak total: {rec.moves():,} moves in {wall:.0f} s = {rec.moves() / wall:,.0f} moves/s, {len(rec.finished)} "
        f"runs cleared; moves p50/p99/max {fmt3(rec, 'moves')} ms, create {fmt3(rec, 'create')} ms; errors "
        f"{errors(rec)}, 429s {errors(rec, rec.r429)}; load gen CPU {gen_cpu(rec, cpu, wall)}; RSS at the end "
        f"{rss_text(rss)} MB"
    )
    for mark, r in sorted(marks.items()):
        say(f"RSS after {mark:,} runs cleared: {rss_text(r)} MB")
    if 100 in marks and 1000 in marks:
        a, b = sum(r for _, r in marks[100]), sum(r for _, r in marks[1000])
        say(f"RSS after 1,000 runs / after 100: {b / a:.3f} (the acceptance: within 10%)")
    say(f"audit: {text}")
    return ok


def descriptors(players: int) -> None:
    """Raise this process's soft limit of open files to what ``players`` connections need (one each,
    and a margin for the services' pipes and files), up to the hard limit; exit with one line if the
    hard limit is lower."""
    import resource

    need = players + 256
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft != resource.RLIM_INFINITY and soft < need:
        if hard != resource.RLIM_INFINITY and hard < need:
            sys.exit(f"{players} players need {need} open files; the hard limit here is {hard} (ulimit -Hn)")
        resource.setrlimit(resource.RLIMIT_NOFILE, (need, hard))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--manifest", type=Path, required=True)
    ap.add_argument("-L", "--library", type=Path, required=True)
    ap.add_argument("--setups", default="sqlite,pg1,pg2,proxy", help="comma-separated: " + ", ".join(setups.SETUPS))
    ap.add_argument("--clients", default="32,128,256", help="comma-separated player counts")
    ap.add_argument("--seconds", type=float, default=60, help="seconds of load per cell (and per fault)")
    ap.add_argument(
        "--ramp",
        type=float,
        default=5.0,
        help="seconds over which the players arrive, evenly spaced (0: all at once, in step)",
    )
    ap.add_argument(
        "--think", type=float, default=0.0, help="each player's mean pause after every answer, ms (0: a tight loop)"
    )
    ap.add_argument("--batch", type=int, default=64, help="most moves per request (the service's --max-moves)")
    ap.add_argument("--wrong", type=float, default=0.0, help="share of moves sent with a wrong cell")
    ap.add_argument("--retries", type=int, default=6, help="attempts after a failure (players.client: 4)")
    ap.add_argument(
        "--durable", action="store_true", help="PostgreSQL with fsync on, as in production (default: off, as the tests)"
    )
    ap.add_argument("--quotas", action="store_true", help="serve with its default quotas (429s counted apart)")
    ap.add_argument("--access-log", default="off", choices=("off", "text", "json"))
    ap.add_argument("--proxy-workers", type=int, default=1, help="workers of each host of the proxy set-up")
    ap.add_argument(
        "--faults",
        nargs="?",
        const=",".join(setups.FAULTS),
        default=None,
        help="comma-separated: " + ", ".join(setups.FAULTS) + " (alone: all)",
    )
    ap.add_argument("--drop-rate", type=float, default=0.2, help="share of moves requests dropped by the drop fault")
    ap.add_argument("--ref-players", type=int, default=2, help="players.client players beside the faults' load")
    ap.add_argument("--soak", type=float, default=None, metavar="MINUTES")
    ap.add_argument("--every", type=float, default=60, help="seconds between the soak's lines")
    ap.add_argument("--baselines", action="store_true", help="also the in-process costs (judging core, CLI judge)")
    ap.add_argument("--work", type=Path, default=None)
    args = ap.parse_args()
    args.setups = [s for s in args.setups.split(",") if s]
    args.clients = [int(c) for c in args.clients.split(",") if c]
    bad = [s for s in args.setups if s not in setups.SETUPS]
    if args.faults is not None:
        args.faults = [f for f in args.faults.split(",") if f]
        bad += [f for f in args.faults if f not in setups.FAULTS]
    if bad:
        ap.error(f"unknown set-up or fault: {', '.join(bad)}")
    descriptors(max(args.clients) + args.ref_players)
    work = args.work or Path(tempfile.mkdtemp(prefix="bench-serve-"))
    work.mkdir(parents=True, exist_ok=True)
    m = load_manifest(args.manifest)
    with Library.open(args.library) as lib:
        t0 = time.perf_counter()
        db = DayBoard.load(m, lib, work / "unused.sqlite")
        load_s = time.perf_counter() - t0
    machine_lines(args)
    say(
        f"board: day {m.day}, G={m.G}, {m.tile_count()} tiles (rebuilt in {load_s:.1f} s); "
        f"command: {' '.join(sys.argv[1:])}"
    )
    if args.baselines:
        baselines(db, m, args.library, work)
    ctx = {"day": m.day, "judge": db.judge, "work": work}
    try:
        if args.soak is not None:
            ok = soak(args, ctx)
        elif args.faults is not None:
            ok = faults(args, ctx)
        else:
            ok = matrix(args, ctx)
    finally:
        if args.work is None:
            shutil.rmtree(work, ignore_errors=True)
    if not ok:
        say("FAILED: the audit found a problem (above)")
        sys.exit(1)


if __name__ == "__main__":
    main()
