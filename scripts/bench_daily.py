"""Daily-build benchmark (issue 7): a cold build on an empty library, then warm builds of later days.

Each day is a full `daily.build.build` (pull and push against a file:// remote
in the work dir, pack, stitch + drain, clues, verify) with the seed derived
from a fixed bench secret, on one library that grows day by day. Prints a
markdown table of seconds per stage, tiles, misses, clues per 100 tiles and
the verified status.

    python scripts/bench_daily.py [--size 1000] [--days 3] [--work DIR] [--packer big-first]
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import platform
import shutil
import time
from pathlib import Path

from daily.build import BuildOptions, build
from tilelib.store import Library

STAGES = ("pull", "pack", "stitch", "clues", "verify", "push")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--size", type=int, default=1000)
    ap.add_argument("--days", type=int, default=3)
    ap.add_argument("--packer", default="big-first")
    ap.add_argument("--work", default="/tmp/tiles-bench-daily")
    ap.add_argument("--keep", action="store_true", help="reuse the work dir's library (no cold day)")
    args = ap.parse_args()
    work = Path(args.work)
    if work.exists() and not args.keep:
        shutil.rmtree(work)
    (work / "remote").mkdir(parents=True, exist_ok=True)
    lib = work / "tiles.sqlite"
    rows = []
    start = dt.date(2026, 12, 1)
    for d in range(args.days):
        day = (start + dt.timedelta(days=d)).isoformat()
        before = 0
        if lib.exists():
            with Library.open(lib) as L:
                before = L.count_tiles()
        t0 = time.perf_counter()
        res = build(
            BuildOptions(
                day=day,
                library=lib,
                out_dir=work / "out",
                size=args.size,
                packer=args.packer,
                secret="bench-daily-secret",
                remote=f"file://{work / 'remote'}",
                force=True,
            ),
            log=lambda line: print("   ", line, flush=True),
        )
        total = time.perf_counter() - t0
        s = res.stitch
        rows.append((day, "cold" if before == 0 else f"warm ({before:,} tiles)", res, s, total))
        print(f"{day}: {res.verify_line} in {total:.0f} s", flush=True)

    cpu = next((ln.split(":", 1)[1].strip() for ln in open("/proc/cpuinfo") if ln.startswith("model name")), "?")
    print(
        f"\nmachine: {cpu}, {os.cpu_count()} cores, Python {platform.python_version()}; "
        f"G={args.size} {args.packer}; load average at end {os.getloadavg()[0]:.1f}\n"
    )
    print(
        "| day | library | " + " | ".join(f"{s} s" for s in STAGES) + " | total s | tiles | first-pass hits | "
        "misses | drained | nofit | fallbacks | final fill | clues/100 tiles | status |"
    )
    print("|---|---|" + "---:|" * (len(STAGES) + 9) + "---|")
    for day, kind, res, s, total in rows:
        secs = " | ".join(f"{res.seconds.get(k, 0):.1f}" for k in STAGES)
        print(
            f"| {day} | {kind} | {secs} | {total:.0f} | {res.tiles:,} | {s['hits_first']:,} | "
            f"{s['misses_first']:,} | {s['drained']:,} | {s['nofit']:,} | {s['fallbacks']:,} | "
            f"{100 * s['final_fill']:.2f}% | {100 * res.clues / max(1, res.tiles):.2f} | {res.status} |"
        )


if __name__ == "__main__":
    main()
