"""Nightly bytes moved by push and pull with deltas (issue 12: ≤ 5% of the library at 1M tiles).

For each library size: a library of N tiles (cached under ``.bench-cache/``, sound n=16 rows, as
bench_sync: every push and pull audits them) is pushed whole to a file:// remote and cloned by a second client
(the anchor: what every night cost before deltas). Then, for ``--nights`` nights, the first
client adds ``--new`` rows (a G=1000 night's worth), pushes, and the second pulls. Prints bytes
and seconds per night (median and max) against the full snapshot.

    .venv/bin/python scripts/bench_delta.py [--sizes 100000,1000000] [--new 6000] [--nights 3]
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))

from bench_publish import library  # noqa: E402
from bench_sync import sound_rows  # noqa: E402

from remote.backend import open_backend  # noqa: E402
from remote.sync import pull, push  # noqa: E402
from tilelib.store import TILE_COLUMNS, Library  # noqa: E402


def add_rows(path: Path, count: int, seed: int) -> None:
    """``count`` new sound rows (``bench_sync.sound_rows``)."""
    cols = ", ".join(TILE_COLUMNS)
    sql = f"INSERT OR IGNORE INTO tiles ({cols}) VALUES ({', '.join('?' * len(TILE_COLUMNS))})"
    with Library.open(path) as lib, lib.conn:
        lib.conn.executemany(sql, sound_rows(count, seed))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="100000,1000000")
    ap.add_argument("--new", type=int, default=6000)
    ap.add_argument("--nights", type=int, default=3)
    args = ap.parse_args()
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, load {os.getloadavg()[0]:.2f}")
    print(
        "| tiles | library MB | full push (anchor) | full clone | nightly push: MB, s (median / max) | "
        "nightly pull: MB, s (median / max) | nightly bytes / library |"
    )
    print("|---|---|---|---|---|---|---|")
    for count in (int(s) for s in args.sizes.split(",")):
        with tempfile.TemporaryDirectory(dir=ROOT) as tmp:
            work = Path(tmp)
            a, b, remote = work / "a.sqlite", work / "b.sqlite", work / "remote"
            shutil.copy(library(count), a)
            remote.mkdir()
            url = f"file://{remote}"
            t0 = time.perf_counter()
            full = push(a, open_backend(url))
            t_full = time.perf_counter() - t0
            t0 = time.perf_counter()
            clone = pull(b, open_backend(url))
            t_clone = time.perf_counter() - t0
            pushes, pulls = [], []
            for night in range(args.nights):
                add_rows(a, args.new, 1000 + night)
                t0 = time.perf_counter()
                p = push(a, open_backend(url))
                pushes.append((p.bytes, time.perf_counter() - t0, p.kind))
                t0 = time.perf_counter()
                q = pull(b, open_backend(url))
                pulls.append((q.bytes, time.perf_counter() - t0))
            size = a.stat().st_size
            assert all(k == "delta" for _, _, k in pushes), pushes

            def fmt(xs):
                mb = statistics.median(x[0] for x in xs) / 1e6
                return f"{mb:.2f} MB, {statistics.median(x[1] for x in xs):.2f} / {max(x[1] for x in xs):.2f} s"

            worst = max(max(x[0] for x in pushes), max(x[0] for x in pulls))
            print(
                f"| {count:,} | {size / 1e6:.0f} | {full.bytes / 1e6:.0f} MB, {t_full:.1f} s | "
                f"{clone.bytes / 1e6:.0f} MB, {t_clone:.1f} s | {fmt(pushes)} | {fmt(pulls)} | "
                f"{100 * worst / size:.2f}% |",
                flush=True,
            )


if __name__ == "__main__":
    main()
