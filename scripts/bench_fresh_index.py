"""The fresh build's index at scale (issue 28): does its cost stay flat as spent rows accumulate?

For each library size it makes a synthetic library (random rows with the real columns: the index
reads only hashes, edges, m, pins, ladder and the solution BLOB, so the rows need not be valid
tiles; ``scripts/scale_libs.py`` makes valid ones, in half an hour at 2.5M) whose tiles are 55%
n = 6/8 and 45% n >= 10, and spends a quarter of all its tiles' solutions (n >= 10 ones, spread
over 300 boards). Then, in one process per size, on the same file:

* **cold**: ``load_active`` with no sidecar (one scan), ``any`` and ``fresh``;
* **night**: what one G = 1000 night adds — 2,000 new tiles and 8,000 spent rows, half of them
  naming solutions inside the fresh set (the board's lookups), half made that night — then the
  warm ``load_active`` a nightly build runs: ``any`` (new tiles only) and ``fresh`` (new tiles, the
  spent rows' drops and the refill past the largest hash); the fresh set is checked equal to a
  scan;
* the **MemoryIndex** build from that set (what the stitch then waits for).

Prints a markdown table, one row per size as it finishes.

    .venv/bin/python scripts/bench_fresh_index.py [--sizes 20k,300k,2.5M] [--work DIR]
"""

from __future__ import annotations

import argparse
import hashlib
import os
import random
import resource
import time
from pathlib import Path

from stitcher.active import ACTIVE_CAP, load_active, scan
from stitcher.index import MemoryIndex
from tilelib import spent
from tilelib.bits import blob_len
from tilelib.db import atomic, connect
from tilelib.store import TILE_COLUMNS, Library

SIZES = (6, 8, 10, 12, 14, 16)
SHARE = (0.30, 0.25, 0.14, 0.12, 0.10, 0.09)
_INSERT = f"INSERT INTO tiles ({', '.join(TILE_COLUMNS)}) VALUES ({', '.join('?' * len(TILE_COLUMNS))})"


def _rows(rng: random.Random, k: int, created: int):
    for _ in range(k):
        n = rng.choices(SIZES, SHARE)[0]
        bl = blob_len(n)
        sol = rng.randbytes(bl)
        yield (
            rng.randbytes(32).hex(),
            n,
            4,
            0,
            *(rng.getrandbits(n) for _ in range(4)),
            1,
            0.5,
            2,
            0,
            0,
            0,
            0,
            0,
            0,
            0,
            sol,
            bytes(bl),
            bytes(bl),
            b"",
            created,
        )


def make(path: Path, tiles: int, seed: int = 1) -> None:
    """A synthetic library of ``tiles`` rows with a quarter of its tiles' solutions spent."""
    rng = random.Random(seed)
    Library.create(path).close()
    conn = connect(path)
    conn.execute("PRAGMA journal_mode = OFF")
    conn.execute("PRAGMA synchronous = OFF")
    with atomic(conn):
        conn.executemany(_INSERT, _rows(rng, tiles, 1))
    held = [spent.solution_hash(n, s) for n, s in conn.execute("SELECT n, solution FROM tiles WHERE n >= 10")]
    rng.shuffle(held)
    want = min(len(held), tiles // 4)
    with atomic(conn):
        spent.record(
            conn,
            [
                spent.SpentRow(s, hashlib.sha256(b"%d" % (i % 300)).hexdigest(), 10, "2026-01-01")
                for i, s in enumerate(held[:want])
            ],
            now=1,
        )
    conn.close()


def night(lib: Library, act: dict, seed: int = 2) -> None:
    """2,000 new tiles and 8,000 spent rows: 4,000 of solutions in the fresh set, 4,000 of new tiles."""
    rng = random.Random(seed)
    new = list(_rows(rng, 2000, 2))
    with atomic(lib.conn):
        lib.conn.executemany(_INSERT, new)
    inside = [s.decode() for n in (10, 12, 14, 16) for s in act[n].sols.tolist()]
    rng.shuffle(inside)
    made = [spent.solution_hash(r[1], r[18]) for r in new if r[1] >= 10]
    board = hashlib.sha256(b"tonight").hexdigest()
    with atomic(lib.conn):
        spent.record(lib.conn, [spent.SpentRow(s, board, 10, "2026-02-01") for s in inside[:4000] + made[:4000]])


def timed(f):
    t0 = time.perf_counter()
    out = f()
    return out, time.perf_counter() - t0


def measure(path: Path) -> dict:
    with Library.open(path) as lib:
        tiles = lib.conn.execute("SELECT max(rowid) FROM tiles").fetchone()[0]
        spent_rows = spent.count(lib.conn)[0]
        (_a, _), any_cold = timed(lambda: load_active(lib.conn, path, ACTIVE_CAP))
        (act, _), fresh_cold = timed(lambda: load_active(lib.conn, path, ACTIVE_CAP, fresh=True))
        night(lib, act)
        (_a, _), any_warm = timed(lambda: load_active(lib.conn, path, ACTIVE_CAP))
        (act, info), fresh_warm = timed(lambda: load_active(lib.conn, path, ACTIVE_CAP, fresh=True))
        want, _l, _r = scan(lib.conn, ACTIVE_CAP, fresh=True)
        same = all(act[n].hashes.tolist() == want[n].hashes.tolist() for n in SIZES)
        _idx, index_s = timed(lambda: MemoryIndex.from_active(act, SIZES))
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024
    return {
        "tiles": tiles,
        "spent": spent_rows,
        "any cold s": any_cold,
        "fresh cold s": fresh_cold,
        "any warm s": any_warm,
        "fresh warm s": fresh_warm,
        "dropped": info.dropped,
        "same as scan": same,
        "index build s": index_s,
        "active n>=10": sum(len(act[n]) for n in (10, 12, 14, 16)),
        "peak RSS MB": rss,
    }


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="20k,300k,2.5M")
    ap.add_argument("--work", default="/tmp/tiles-bench-fresh-index")
    args = ap.parse_args()
    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    cols = (
        "tiles",
        "spent",
        "make s",
        "any cold s",
        "fresh cold s",
        "any warm s",
        "fresh warm s",
        "dropped",
        "same as scan",
        "index build s",
        "active n>=10",
        "peak RSS MB",
    )
    print("| " + " | ".join(cols) + " |\n|" + "---|" * len(cols), flush=True)
    for label in args.sizes.split(","):
        k = int(float(label.rstrip("kM")) * (1000 if label.endswith("k") else 1_000_000 if label.endswith("M") else 1))
        path = work / f"lib-{label}.sqlite"
        for p in work.glob(f"lib-{label}.sqlite*"):
            p.unlink()
        _, make_s = timed(lambda: make(path, k))
        pid = os.fork()
        if pid == 0:  # its own process: its own peak RSS
            r = measure(path) | {"make s": make_s}
            print(
                "| "
                + " | ".join(
                    f"{r[c]:.2f}"
                    if isinstance(r[c], float)
                    else f"{r[c]:,}"
                    if isinstance(r[c], int) and not isinstance(r[c], bool)
                    else str(r[c])
                    for c in cols
                )
                + " |",
                flush=True,
            )
            os._exit(0)
        os.waitpid(pid, 0)


if __name__ == "__main__":
    main()
