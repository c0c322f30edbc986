"""Whole-process generation against Unruly (issue 55): what a user waits for.

For each n, in rounds that alternate which goes first, two processes are timed from start to exit:

* ours: ``tiles library generate --n N --count K --workers 1 --seed S -L FRESH.sqlite`` exactly as a
  user runs it — interpreter start-up, imports, a new library file, K tiles (random solution,
  seeded thinning, features, canonical form) and their rows written;
* Unruly's: the harness ``scripts/build_unruly_harness.sh`` builds around Simon Tatham's generator
  (unique rows and columns, "normal"), making K puzzles in one process.

Our process runs as on a user's machine, where an install leaves compiled bytecode beside the
sources: PYTHONDONTWRITEBYTECODE is dropped from its environment and one untimed run per n comes
first (without that, compiling the modules again in every process is ~20 ms of each run).

Times are the child's CPU (user + system, ``resource.getrusage``) and its wall time; "ratio" is
Unruly's median over ours (>= 1.0: ours is faster; the issue asks 2.0 at n = 6, 10 and 16). K
defaults to about two seconds of Unruly's work per n, so start-up weighs what it weighs for a
user generating a few thousand tiles. The machine is shared: run nothing else beside it.

Usage: python scripts/bench_generate_cli.py --unruly /tmp/unruly-bench [--ns 6,10,16] [--rounds 5]
       [--count K] [--work DIR]
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import statistics
import sys
from pathlib import Path

from machine import cpu_model, nearest_rank, timed_run  # scripts/machine.py

ROOT = Path(__file__).resolve().parent.parent
# puzzles per process: about 2 s of Unruly's generator on this machine kind (0.16 ms at n = 6 …
# 13.5 ms at n = 16, BENCHMARKS "Generation against Unruly")
COUNT = {6: 12000, 8: 5000, 10: 2000, 12: 800, 14: 350, 16: 150}
SEED = "5eed" * 16
USER_ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def ours(n: int, count: int, lib: Path) -> tuple[float, float]:
    """(CPU s, wall s) of one ``tiles library generate`` process into a new library file."""
    lib.unlink(missing_ok=True)
    cmd = [sys.executable, "-m", "tiles_cli.app", "library", "generate", "--n", str(n), "--count", str(count)]
    cmd += ["--workers", "1", "--seed", SEED, "-L", str(lib)]
    r, wall, cpu = timed_run(cmd, cwd=ROOT, env=USER_ENV)
    if r.returncode != 0:
        raise SystemExit(f"tiles library generate --n {n}: exit {r.returncode}: {r.stderr[-800:]}")
    return cpu, wall


def unruly(harness: str, n: int, count: int) -> tuple[float, float]:
    """(CPU s, wall s) of one Unruly harness process making ``count`` puzzles."""
    r, wall, cpu = timed_run([harness, str(n), str(count), "tiles-bench"])
    if r.returncode != 0 or len(r.stdout.splitlines()) != count:
        raise SystemExit(f"{harness} {n} {count}: exit {r.returncode}: {r.stderr[-800:]}")
    return cpu, wall


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--unruly", required=True, help="the harness binary (scripts/build_unruly_harness.sh)")
    ap.add_argument("--ns", default="6,10,16")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--count", type=int, default=0, help="puzzles per process for every n (0: COUNT by n)")
    ap.add_argument("--work", type=Path, default=Path("/tmp/bench-generate-cli"))
    args = ap.parse_args()
    if shutil.which(args.unruly) is None and not Path(args.unruly).is_file():
        raise SystemExit(f"bench_generate_cli: no harness at {args.unruly} (scripts/build_unruly_harness.sh)")
    args.work.mkdir(parents=True, exist_ok=True)
    ns = [int(x) for x in args.ns.split(",")]
    print(f"machine: {cpu_model()}, Python {platform.python_version()}; {args.rounds} rounds, alternating\n")
    head = ["n", "K", "ours CPU s median (p99, max)", "Unruly CPU s median (p99, max)", "CPU ratio"]
    print("| " + " | ".join([*head, "ours wall s", "Unruly wall s", "wall ratio"]) + " |")
    print("|---:|---:|---|---|---:|---:|---:|---:|")
    for n in ns:
        k = args.count or COUNT[n]
        got: dict[str, list[tuple[float, float]]] = {"ours": [], "unruly": []}
        ours(n, min(k, 10), args.work / "lib.sqlite")  # untimed: leaves the bytecode a user's install has
        for r in range(args.rounds):
            order = ("ours", "unruly") if r % 2 == 0 else ("unruly", "ours")
            for who in order:
                got[who].append(ours(n, k, args.work / "lib.sqlite") if who == "ours" else unruly(args.unruly, n, k))
        cpu = {w: [c for c, _ in got[w]] for w in got}
        wall = {w: [x for _, x in got[w]] for w in got}
        med = {w: statistics.median(cpu[w]) for w in got}
        medw = {w: statistics.median(wall[w]) for w in got}
        print(
            f"| {n} | {k:,} | {med['ours']:.2f} ({nearest_rank(cpu['ours'], 0.99):.2f}, {max(cpu['ours']):.2f}) "
            f"| {med['unruly']:.2f} ({nearest_rank(cpu['unruly'], 0.99):.2f}, {max(cpu['unruly']):.2f}) "
            f"| **{med['unruly'] / med['ours']:.2f}×** | {medw['ours']:.2f} | {medw['unruly']:.2f} "
            f"| {medw['unruly'] / medw['ours']:.2f}× |",
            flush=True,
        )


if __name__ == "__main__":
    main()
