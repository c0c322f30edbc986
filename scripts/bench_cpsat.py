"""The completions of real nights, decided by the C search and by CP-SAT: CPU per completion per n.

    .venv/bin/python scripts/bench_cpsat.py --lib START.sqlite [--lib2 OTHER.sqlite] [--size 1000]
        [--day 2026-12-02] [--reuse fresh] [--work DIR] [--max K]

For each start library (e.g. a young ~5k-tile one and a warm 20k one) the script runs one nightly
build on a fresh copy of it (``tiles daily build``, in this process and its forked stitch workers)
and captures every completion the night asks ``engine.completion.decide`` for — a drained miss's
tile (``drain``: one window) or a window-aware completion (``window-aware``: a square with its
unplaced neighbours, or a repair's group) — with its stream. Then each captured problem is decided
again, timed alone (CPU of this process): by the C search (``engine.windows.solve`` with the
product's node budget, the wrapper included) and by CP-SAT (``engine.completion.cpsat_model`` built
and solved as the fallback does). Per kind and n (the first window's side): completions, C and
CP-SAT median / p99 / max ms, the ratio of medians, proofs that none exists, fallbacks (the C
search passed its budget: CP-SAT decides those in the product), and disagreements on feasibility
(the script exits 1 on any, or on an invalid grid). ``--max K`` replays at most K problems per
kind and n (spread over the night). Prints markdown.
"""

from __future__ import annotations

import argparse
import copy
import os
import pickle
import statistics
import sys
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench_nightly import fresh_copy  # noqa: E402  (scripts/bench_nightly.py)
from machine import cpu_model  # noqa: E402  (scripts/machine.py)

import generator.complete as gen_complete  # noqa: E402
import stitcher.joint as joint_mod  # noqa: E402
from engine import completion  # noqa: E402
from engine.cpsat import INFEASIBLE  # noqa: E402
from engine.windows import FOUND, MAX_NODES, NONE, UNDECIDED, seed_of, solve  # noqa: E402
from tilelib.rules import violations  # noqa: E402

cpu = time.process_time
SECRET = "bench-cpsat-secret"


def capture_night(start: Path, work: Path, args) -> list:
    """Run one nightly build on a copy of ``start``; every problem ``decide`` was asked, in order."""
    lib = fresh_copy(start, work)
    spool = work / "calls"
    spool.mkdir()
    real = completion.decide

    def spy(problem, stream, time_limit, **kw):
        with open(spool / f"{os.getpid()}.pkl", "ab") as fh:  # forked workers write their own
            pickle.dump((problem, copy.deepcopy(stream), time_limit), fh)
        return real(problem, stream, time_limit, **kw)

    gen_complete.decide = joint_mod.decide = spy
    os.environ["TILES_SECRET"] = SECRET
    from tiles_cli.app import main as tiles

    try:
        tiles(
            [
                "daily",
                "build",
                "--date",
                args.day,
                "--size",
                str(args.size),
                "--library",
                str(lib),
                "--out",
                str(work / "out"),
                "--reuse",
                args.reuse,
                "--force",
            ]
        )
    finally:
        gen_complete.decide = joint_mod.decide = real
    calls = []
    for f in sorted(spool.glob("*.pkl")):
        with open(f, "rb") as fh:
            while True:
                try:
                    calls.append(pickle.load(fh))
                except EOFError:
                    break
    return calls


def kind_of(problem) -> str:
    return "drain" if len(problem.windows) == 1 else "window-aware"


def valid(problem, grids) -> bool:
    """Each distinct window a valid grid, every window keeps its known cells."""
    for (x, y, n, d), g in zip(problem.windows, grids, strict=True):
        k = problem.known[y : y + n, x : x + n] == 1
        if (d and violations(g)) or (g[k] != problem.values[y : y + n, x : x + n][k]).any():
            return False
    return True


def replay(calls: list, per: int | None) -> dict:
    """{(kind, n): {"c": ms list, "cp": ms list, "none": k, "fallback": k, "disagree": k, "invalid": k}}."""
    groups = defaultdict(list)
    for problem, stream, limit in calls:
        groups[(kind_of(problem), problem.windows[0][2])].append((problem, stream, limit))
    out = {}
    for key, items in sorted(groups.items()):
        if per and len(items) > per:
            items = [items[i * len(items) // per] for i in range(per)]
        r = {"c": [], "cp": [], "none": 0, "fallback": 0, "disagree": 0, "invalid": 0}
        for problem, stream, limit in items:
            t0 = cpu()
            got = solve(problem, seed_of(copy.deepcopy(stream).child("c")), MAX_NODES)
            t1 = cpu()
            model, rows = completion.cpsat_model(problem)
            cp = model.solve(copy.deepcopy(stream), limit, lean=True)
            t2 = cpu()
            r["c"].append(1000 * (t1 - t0))
            r["cp"].append(1000 * (t2 - t1))
            r["none"] += got.status == NONE
            r["fallback"] += got.status == UNDECIDED
            if got.status != UNDECIDED and (cp.found or cp.status == INFEASIBLE):
                r["disagree"] += (got.status == FOUND) != cp.found
            if got.status == FOUND:
                r["invalid"] += not valid(problem, [got.window(x, y, n) for (x, y, n, _d) in problem.windows])
            if cp.found:
                r["invalid"] += not valid(problem, [cp.grid(rw) for rw in rows])
        out[key] = r
    return out


def stats(xs: list[float]) -> tuple[float, float, float]:
    xs = sorted(xs)
    return statistics.median(xs), xs[min(len(xs) - 1, int(round(0.99 * (len(xs) - 1))))], xs[-1]


def table(name: str, res: dict) -> int:
    """Print one library's table; the number of disagreements and invalid grids."""
    print(f"\n**{name}**\n")
    print(
        "| kind | n | completions | C ms median / p99 / max | CP-SAT ms median / p99 / max | CP-SAT / C "
        "(medians) | none (proofs) | fallbacks | disagree |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    bad = 0
    for kind in ("drain", "window-aware"):
        keys = [k for k in res if k[0] == kind]
        for key in keys + [(kind, "all")]:
            r = res.get(key) or {
                f: (sum((res[k][f] for k in keys), []) if f in ("c", "cp") else sum(res[k][f] for k in keys))
                for f in ("c", "cp", "none", "fallback", "disagree", "invalid")
            }
            if not r["c"]:
                continue
            c, p = stats(r["c"]), stats(r["cp"])
            print(
                f"| {kind} | {key[1]} | {len(r['c']):,} | {c[0]:.2f} / {c[1]:.2f} / {c[2]:.2f} | "
                f"{p[0]:.2f} / {p[1]:.2f} / {p[2]:.2f} | {p[0] / c[0]:.1f} | {r['none']:,} | {r['fallback']:,} | "
                f"{r['disagree']} |"
            )
            if key[1] == "all":
                bad += r["disagree"] + r["invalid"]
    return bad


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--lib", action="append", required=True, type=Path, help="a start library (repeatable)")
    ap.add_argument("--size", type=int, default=1000)
    ap.add_argument("--day", default="2026-12-02")
    ap.add_argument("--reuse", default="fresh")
    ap.add_argument("--work", type=Path, default=Path("/tmp/bench-cpsat"))
    ap.add_argument("--max", type=int, default=None, help="problems replayed per kind and n")
    a = ap.parse_args()
    load0 = os.getloadavg()
    bad = 0
    print(
        f"machine: {cpu_model()}, {os.cpu_count()} cores; G = {a.size}, {a.day}, --reuse {a.reuse}; "
        f"C node budget {MAX_NODES}; CPU ms of this process per completion, each decided alone"
    )
    for lib in a.lib:
        t0 = time.perf_counter()
        calls = capture_night(lib.resolve(), a.work / lib.stem, a)
        t1 = time.perf_counter()
        res = replay(calls, a.max)
        bad += table(
            f"{lib.name}: {len(calls):,} completions in one night (build {t1 - t0:.0f} s, "
            f"replay {time.perf_counter() - t1:.0f} s)",
            res,
        )
    load1 = os.getloadavg()
    print(f"\nload average before {load0[0]:.2f}, after {load1[0]:.2f} (1 min); disagreements and invalid grids: {bad}")
    if bad:
        sys.exit(1)


if __name__ == "__main__":
    main()
