"""Benchmark fresh seeded boards (``players.boards``, the cells env's ``boards=``): what one reset of
``tiles/TakuzuCells-v0`` costs when every episode draws a new board, on one core.

Usage: .venv/bin/python scripts/bench_boards.py [--sizes 41,61,101] [--resets 200]
Per size: the environment made (its split's library warmed up), then ``--resets`` resets each
drawing a board (a copy of the split's library, one build, the board loaded, a run started); the
per-reset wall time's median, p99 and max, boards per hour on one core, and how many were distinct
(tiles, zones and clues). CPU time is the process's own.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import platform
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import gymnasium  # noqa: E402
from machine import cpu_model  # noqa: E402  (scripts/machine.py)

import players.gym as tg  # noqa: E402
from players.boards import DAY  # noqa: E402


def bench(size: int, resets: int) -> dict:
    t0, c0 = time.perf_counter(), time.process_time()
    env = gymnasium.make(tg.CELLS_ID, boards={"size": size})
    made = time.perf_counter() - t0
    u, walls, seen = env.unwrapped, [], set()
    env.reset(seed=0)
    c1 = time.process_time()
    for _ in range(resets):
        t = time.perf_counter()
        env.reset()
        walls.append(time.perf_counter() - t)
        m = json.loads((u._maker._last / f"{DAY}.json").read_text())
        seen.add(hashlib.sha256(json.dumps([m["tiles"], m["zones"], m["clues"]]).encode()).digest())
    cpu = (time.process_time() - c1) / resets
    env.close()
    walls.sort()
    return {
        "size": size,
        "made": made,
        "median": statistics.median(walls),
        "p99": walls[min(len(walls) - 1, int(0.99 * len(walls)))],
        "max": walls[-1],
        "cpu": cpu,
        "distinct": len(seen),
        "total_cpu": time.process_time() - c0,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="41,61,101")
    ap.add_argument("--resets", type=int, default=200)
    a = ap.parse_args()
    print(f"{a.resets} resets per size, CPU: {cpu_model()}, Python {platform.python_version()}\n")
    print("| G | env made s | reset median s | p99 s | max s | CPU s per reset | boards per hour (1 core) | distinct |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|")
    for size in (int(s) for s in a.sizes.split(",")):
        r = bench(size, a.resets)
        print(
            f"| {size} | {r['made']:.2f} | {r['median']:.3f} | {r['p99']:.3f} | {r['max']:.3f} | {r['cpu']:.3f} "
            f"| {3600 / r['cpu']:,.0f} | {r['distinct']} of {a.resets} |"
        )


if __name__ == "__main__":
    main()
