"""Benchmark the packers at G = 1000 over 20 seeds: time per packing, zone fraction, tile counts, n histogram.

Usage: .venv/bin/python scripts/bench_packers.py [--size G] [--seeds K]
Prints a markdown table (one row per packer) and a histogram table of tile sides n.
Seeds are sha256("bench-<k>"). The first packing in the process also pays one-off
table builds (the guillotine zone table); "max" shows it. Times are wall-clock on
a shared machine: note contention when reading them.
"""

from __future__ import annotations

import argparse
import hashlib
import platform
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from machine import cpu_model  # noqa: E402  (scripts/machine.py)

from packers import PACKERS, make_packing, validate_packing  # noqa: E402
from packers.packing import SIZES  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", type=int, default=1000)
    ap.add_argument("--seeds", type=int, default=20)
    a = ap.parse_args()
    seeds = [hashlib.sha256(b"bench-%d" % k).digest() for k in range(a.seeds)]
    print(f"G = {a.size}, {a.seeds} seeds, CPU: {cpu_model()}, Python {platform.python_version()}\n")
    print(
        "| packer | v | median s | max s | validate s | zone % mean | zone % max | tiles mean | tiles "
        "min..max | zones mean |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    hist_rows = []
    for name, packer in PACKERS.items():
        times, vtimes, zones, tiles, nzones = [], [], [], [], []
        hist = {s + 1: 0 for s in SIZES}
        for seed in seeds:
            t0 = time.perf_counter()
            p = make_packing(name, a.size, seed)
            t1 = time.perf_counter()
            validate_packing(p, a.size - 1)
            t2 = time.perf_counter()
            times.append(t1 - t0)
            vtimes.append(t2 - t1)
            zones.append(100 * p.zone_fraction())
            tiles.append(len(p.squares))
            nzones.append(len(p.zones))
            for _x, _y, s in p.squares:
                hist[s + 1] += 1
        print(
            f"| {name} | {packer.version} | {statistics.median(times):.3f} | {max(times):.3f} | "
            f"{statistics.median(vtimes):.3f} | {statistics.mean(zones):.3f} | {max(zones):.3f} | "
            f"{statistics.mean(tiles):.0f} | {min(tiles)}..{max(tiles)} | {statistics.mean(nzones):.1f} |"
        )
        total = sum(hist.values())
        hist_rows.append(f"| {name} | " + " | ".join(f"{100 * hist[n] / total:.1f}" for n in sorted(hist)) + " |")
    print("\nTile sides n, % of tiles (all seeds):\n")
    print("| packer | " + " | ".join(f"n={s + 1}" for s in SIZES) + " |")
    print("|---|" + "---|" * len(SIZES))
    print("\n".join(hist_rows))


if __name__ == "__main__":
    main()
