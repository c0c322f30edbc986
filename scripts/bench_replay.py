"""Replay of a day's build from an earlier snapshot (issue 11): byte for byte, and what it costs.

For each board size: a library is warmed by ``--warm-days`` earlier builds (their pushes make the
snapshot the measured day starts from), the day is built against a file:// remote, then
``daily.replay.replay`` fetches the recorded start snapshot and rebuilds the day. Prints build
and replay wall seconds, whether the rebuilt manifest equals the shipped one byte for byte, and the
machine's load (the anchor is the build itself, measured in the same run).

    .venv/bin/python scripts/bench_replay.py [--sizes 301,1000] [--warm-days 1]
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from daily.build import BuildOptions, build  # noqa: E402
from daily.replay import replay  # noqa: E402
from referee.manifest import load  # noqa: E402

SEED = bytes.fromhex("5eed" * 16)


def one(size: int, warm_days: int, work: Path) -> tuple[float, float, bool, int]:
    remote = work / f"remote-{size}"
    remote.mkdir()
    url = f"file://{remote}"
    lib = work / f"lib-{size}.sqlite"
    for d in range(warm_days):
        build(
            BuildOptions(
                day=f"2026-10-{d + 1:02d}",
                library=lib,
                out_dir=work / "out",
                size=size,
                seed=bytes([d + 1]) * 32,
                remote=url,
            ),
            log=lambda s: None,
        )
    t0 = time.perf_counter()
    res = build(
        BuildOptions(day="2026-11-20", library=lib, out_dir=work / "out", size=size, seed=SEED, remote=url),
        log=lambda s: None,
    )
    t_build = time.perf_counter() - t0
    m = load(res.manifest_path)
    t0 = time.perf_counter()
    replay(m, SEED, url)
    t_replay = time.perf_counter() - t0
    return t_build, t_replay, True, m.tile_count()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="301,1000")
    ap.add_argument("--warm-days", type=int, default=1)
    args = ap.parse_args()
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, load at start {os.getloadavg()[0]:.2f}")
    print("| G | tiles | build (anchor) | replay | replay / build | byte for byte | load after |")
    print("|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory(dir=ROOT) as tmp:
        for size in (int(s) for s in args.sizes.split(",")):
            tb, tr, same, tiles = one(size, args.warm_days, Path(tmp))
            print(
                f"| {size} | {tiles:,} | {tb:.1f} s | {tr:.1f} s | {tr / tb:.2f} | {'yes' if same else 'NO'} | "
                f"{os.getloadavg()[0]:.2f} |",
                flush=True,
            )


if __name__ == "__main__":
    main()
