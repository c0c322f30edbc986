"""What counting the stock costs as the library grows (issue 31): ``tilelib.stock.report``.

For each size, a synthetic library file holding what the count reads — ``tiles(hash, n,
seam_mask, solution)`` with random solution BLOBs in the size mix of a real library, ``spent``
naming a quarter of the n >= 10 solutions, ``meta.library_id`` — and the three opens a nightly
build sees: **cold** (no ``.stock`` cache: one pass over every row), **warm** (the cache, nothing
new), **night** (the cache after a night's 5,000 new rows and 4,000 new spent rows). Median, p99
and max over ``--repeat`` runs (cold: one run), and the peak RSS of the process.

    .venv/bin/python scripts/bench_stock.py [--sizes 20k,300k,2.5M] [--repeat 5] [--work DIR]
"""

from __future__ import annotations

import argparse
import hashlib
import os
import random
import resource
import shutil
import sqlite3
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from machine import cpu_model  # noqa: E402

from tilelib import stock  # noqa: E402
from tilelib.db import atomic, connect, statements  # noqa: E402

MIX = {6: 6428, 8: 3425, 10: 3493, 12: 2191, 14: 2472, 16: 1134}  # a real drained library's sizes


def _size(text: str) -> int:
    t = text.lower()
    mult = 1_000_000 if t.endswith("m") else 1_000 if t.endswith("k") else 1
    return int(float(t.rstrip("mk")) * mult)


def _rows(rng: random.Random, k: int):
    ns, w = list(MIX), list(MIX.values())
    for n in rng.choices(ns, w, k=k):
        sol = rng.randbytes((n * n + 7) // 8)
        yield hashlib.sha256(sol + bytes([n])).hexdigest(), n, rng.randrange(16), sol


def _add(conn, rng: random.Random, tiles: int, spent_share: float = 0.25, spent_rows: int | None = None) -> None:
    rows = list(_rows(rng, tiles))
    held = [hashlib.sha256(bytes([n]) + s).hexdigest() for _h, n, _m, s in rows if n >= 10]
    pick = rng.sample(held, spent_rows if spent_rows is not None else int(len(held) * spent_share))
    with atomic(conn):
        conn.executemany("INSERT INTO tiles (hash, n, seam_mask, solution) VALUES (?,?,?,?)", rows)
        conn.executemany(
            "INSERT OR IGNORE INTO spent (solution, board, n, day, created) VALUES (?, 'b', 10, 'd', 0)",
            [(s,) for s in pick],
        )


def make(path: Path, size: int) -> None:
    conn = connect(path)
    with atomic(conn):
        for stmt in statements(SCHEMA):
            conn.execute(stmt)
    rng = random.Random(size)
    for a in range(0, size, 100_000):
        _add(conn, rng, min(100_000, size - a))
    conn.close()


SCHEMA = """
        CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
        CREATE TABLE tiles (hash TEXT PRIMARY KEY, n INTEGER, seam_mask INTEGER, solution BLOB);
        CREATE TABLE spent (solution TEXT, board TEXT, n INTEGER, day TEXT, created INTEGER,
                            PRIMARY KEY (solution, board));
        CREATE TABLE manifests (day TEXT PRIMARY KEY, seed_commit TEXT, json TEXT, created INTEGER);
        INSERT INTO meta VALUES ('library_id', 'bench-stock');"""


def timed(path: Path) -> tuple[float, dict]:
    conn = sqlite3.connect(path)
    t0 = time.perf_counter()
    rep = stock.report(conn, path)
    dt = time.perf_counter() - t0
    conn.close()
    return dt, rep


def stats(xs: list[float]) -> str:
    xs = sorted(xs)
    p99 = xs[min(len(xs) - 1, round(0.99 * (len(xs) - 1)))]
    return f"{statistics.median(xs):.3f} / {p99:.3f} / {xs[-1]:.3f}"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="20k,300k,2.5M")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--work", default="/tmp/tiles-bench-stock")
    args = ap.parse_args()
    work = Path(args.work)
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    print(f"{cpu_model()}, {os.cpu_count()} cores; stock.report; seconds median / p99 / max\n")
    print("| tiles | n >= 10 rows | cold s | warm s | night s (+5,000 rows, +4,000 spent) | cache MB | peak RSS MB |")
    print("|---:|---:|---:|---:|---:|---:|---:|", flush=True)
    for text in args.sizes.split(","):
        size = _size(text)
        path = work / f"lib-{size}.sqlite"
        make(path, size)
        cold, rep = timed(path)
        warm = [timed(path)[0] for _ in range(args.repeat)]
        night = []
        for k in range(args.repeat):
            conn = connect(path)
            _add(conn, random.Random(1000 + k), 5_000, spent_rows=0)
            base = [
                s for (s,) in conn.execute("SELECT hash FROM tiles WHERE n >= 10 ORDER BY random() LIMIT 4000")
            ]  # any 4,000 keys
            with atomic(conn):
                conn.executemany(
                    "INSERT OR IGNORE INTO spent (solution, board, n, day, created) VALUES (?, 'night', 10, 'd', 0)",
                    [(b,) for b in base],
                )
            conn.close()
            night.append(timed(path)[0])
        held = sum(c["rows"] for c in rep["per_n"].values())
        side = Path(str(path) + stock.SUFFIX)
        rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        print(
            f"| {size:,} | {held:,} | {cold:.2f} | {stats(warm)} | {stats(night)} | "
            f"{side.stat().st_size / 1e6:.1f} | {rss:.0f} |",
            flush=True,
        )
        path.unlink()


if __name__ == "__main__":
    main()
