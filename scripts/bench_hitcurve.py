"""First-pass hit rate against library size per n, on a frozen library (issue 6, item 7).

    .venv/bin/python scripts/bench_hitcurve.py LIB [--G 1000] [--days 101,102] [--fractions 1/16,1/8,1/4,1/2,1]

The seeds' notes (001 §4) estimate the hit rate from C(n, n/2) edges; this
measures it. For each fraction f, a nested, content-addressed subset of LIB
(tiles whose hash's first 8 hex digits are below f · 16^8 — random with
respect to the tiles, and every smaller subset inside every larger one) is
copied to a temporary library, and big-first packings of G are stitched with
the drain OFF, so nothing is added during the run: a square's first lookup
sees exactly the subset. Per n it prints the subset's tiles of that n and the
first-pass hit rate (hits at a square's first turn / original squares of that
n, summed over the days), then, per n, the smallest measured size with a hit
rate of at least 95% (or that none reached it).

Caveat, as in the stitcher: which constraint a square faces depends on its
neighbours, which come from the same subset, so the curve is the library's
whole-board behaviour, not an isolated per-n lookup.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
from fractions import Fraction
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from packers import make_packing  # noqa: E402
from stitcher.stitch import StitchOptions, stitch  # noqa: E402
from tilelib.db import atomic  # noqa: E402
from tilelib.errors import TilesError  # noqa: E402
from tilelib.rng import Stream  # noqa: E402
from tilelib.store import Library  # noqa: E402

NS = (6, 8, 10, 12, 14, 16)


def day_seed(d: int) -> bytes:
    return bytes([d % 256]) * 31 + bytes([d // 256])


def subset_copy(src: str, dst: str, f: Fraction) -> None:
    """Copy src to dst keeping the tiles whose hash prefix falls below f (and no misses)."""
    shutil.copy(src, dst)
    cut = int(f * 16**8)
    with Library.open(dst) as lib:
        keep = [h for (h,) in lib.conn.execute("SELECT hash FROM tiles") if int(h[:8], 16) < cut]
        with atomic(lib.conn):
            lib.conn.execute("CREATE TEMP TABLE keep (hash TEXT PRIMARY KEY)")
            lib.conn.executemany("INSERT INTO keep VALUES (?)", ((h,) for h in keep))
            lib.conn.execute("DELETE FROM tiles WHERE hash NOT IN (SELECT hash FROM keep)")
            lib.conn.execute("DELETE FROM misses")


def measure(path: str, G: int, days: list[int]) -> tuple[dict, dict]:
    """(tiles per n, first-pass hit rate per n) of drain-off stitches of ``days`` on ``path``."""
    hits = dict.fromkeys(NS, 0)
    tried = dict.fromkeys(NS, 0)
    with Library.open(path) as lib:
        sizes = {n: lib.count_tiles(n) for n in NS}
        for d in days:
            res = stitch(
                make_packing("big-first", G, day_seed(d)),
                lib,
                Stream(day_seed(d), "stitch"),
                StitchOptions(drain=False),
            )
            for n, c in res.stats.per_n.items():
                if n in hits:
                    hits[n] += c["hits_first"]
                    tried[n] += c["hits_first"] + c["misses_first"]
    return sizes, {n: hits[n] / tried[n] for n in NS if tried[n]}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("lib")
    ap.add_argument("--G", type=int, default=1000)
    ap.add_argument("--days", default="101,102")
    ap.add_argument("--fractions", default="1/16,1/8,1/4,1/2,1")
    a = ap.parse_args()
    try:
        days = [int(d) for d in a.days.split(",")]
        fracs = [Fraction(f) for f in a.fractions.split(",")]
    except ValueError as e:
        ap.error(f"--days takes integers and --fractions fractions, comma-separated ({e})")
    if not all(0 < f <= 1 for f in fracs):
        ap.error("every --fractions value must be in (0, 1]")
    try:
        Library.open(a.lib).close()  # a clear error for a missing file or a non-library
    except TilesError as e:
        ap.error(str(e))
    print(f"# bench_hitcurve: {a.lib}, G={a.G}, big-first days {days}, drain off (frozen library)\n")
    print("| fraction | " + " | ".join(f"n={n}: tiles → hit" for n in NS) + " |")
    print("|---|" + "---|" * len(NS))
    rows = []
    for f in fracs:
        tmp = tempfile.mkdtemp()
        try:
            path = os.path.join(tmp, "lib.sqlite")
            subset_copy(a.lib, path, f)
            sizes, rate = measure(path, a.G, days)
        finally:
            shutil.rmtree(tmp)
        rows.append((sizes, rate))
        cells = [f"{sizes[n]} → {rate[n]:.3f}" if n in rate else f"{sizes[n]} → -" for n in NS]
        print(f"| {f} | " + " | ".join(cells) + " |", flush=True)
    print()
    for n in NS:
        reached = [s[n] for s, r in rows if r.get(n, 0) >= 0.95]
        print(
            f"- n={n}: "
            + (
                f"95% first-pass hits with {min(reached)} tiles"
                if reached
                else f"95% not reached (best {max(r.get(n, 0) for _s, r in rows):.3f} "
                f"with {max(s[n] for s, _r in rows)} tiles)"
            )
        )


if __name__ == "__main__":
    main()
