"""Benchmark start-up: wall time of whole `tiles` processes, interleaved, with baselines from the same run.

Rows (each run R times, the commands interleaved round by round):
  python -c pass           the interpreter alone (the floor every command pays)
  tiles --help             the CLI built, plain help printed
  tiles solve --givens P   one 8x8 puzzle counted, solved and rated
  generate (process)       `tiles library generate --n N --count K` into a fresh library
  generate (in-process)    the same call's work inside one process, imports excluded
                           (``generator.batch.append_generated`` timed by the child itself)
The issue's targets: help and solve < 0.25 s; whole-process generate within 1.5x of in-process.

Wall time, so load from other jobs shows: the script prints `uptime` with the table.

Usage: .venv/bin/python scripts/bench_startup.py [--runs R] [--n N] [--count K]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

PUZZLE = "01..10..0.1..0..1..0..1.0...1..0..1..01..0...1..01..1..0..1..0.."   # 8x8
SEED = "ab" * 32

IN_PROCESS = """
import sys, time
from generator.batch import append_generated
from generator.make import GenParams
t0 = time.perf_counter()
append_generated(sys.argv[1], GenParams.make(int(sys.argv[2])), int(sys.argv[3]), bytes.fromhex(sys.argv[4]))
print(time.perf_counter() - t0)
"""


def tiles_exe() -> str:
    exe = Path(sys.executable).with_name("tiles")
    return str(exe) if exe.exists() else "tiles"


def wall(cmd: list[str]) -> float:
    t0 = time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - t0


def stats(xs: list[float]) -> str:
    xs = sorted(xs)
    p99 = xs[min(len(xs) - 1, int(0.99 * len(xs)))]
    return f"{statistics.median(xs):.3f} | {p99:.3f} | {xs[-1]:.3f}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=15)
    ap.add_argument("--n", type=int, default=10)
    ap.add_argument("--count", type=int, default=200)
    a = ap.parse_args()
    tiles = tiles_exe()
    rows: dict[str, list[float]] = {k: [] for k in
                                    ("python -c pass", "tiles --help", "tiles solve (one 8x8)",
                                     f"generate n={a.n} x{a.count} (process)", f"generate n={a.n} x{a.count} (in-process)")}
    with tempfile.TemporaryDirectory() as tmp:
        for r in range(a.runs):
            keys = list(rows)
            rows[keys[0]].append(wall([sys.executable, "-c", "pass"]))
            rows[keys[1]].append(wall([tiles, "--help"]))
            rows[keys[2]].append(wall([tiles, "solve", "--givens", PUZZLE]))
            lib = os.path.join(tmp, f"p{r}.sqlite")
            rows[keys[3]].append(wall([tiles, "library", "generate", "--n", str(a.n), "--count", str(a.count),
                                       "--seed", SEED, "-L", lib]))
            lib2 = os.path.join(tmp, f"i{r}.sqlite")
            out = subprocess.run([sys.executable, "-c", IN_PROCESS, lib2, str(a.n), str(a.count), SEED],
                                 check=True, capture_output=True, text=True)
            rows[keys[4]].append(float(out.stdout.strip()))
    load = subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()
    print(f"wall seconds, {a.runs} interleaved runs; uptime: {load}\n")
    print("| command | median s | p99 s | max s |")
    print("|---|---|---|---|")
    for k, xs in rows.items():
        print(f"| {k} | {stats(xs)} |")
    keys = list(rows)
    ratio = statistics.median(rows[keys[3]]) / statistics.median(rows[keys[4]])
    print(f"\nwhole-process / in-process generate (medians): {ratio:.2f}")


if __name__ == "__main__":
    main()
