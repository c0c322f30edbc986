"""Lookup benchmark (issue 2): one- and two-edge oriented queries on a 100k-tile library.

Compares the two index designs of FORMAT §5 on the same tiles:
  A. canonical sides indexed, the query expanded over the 16 transforms
     (what ``tilelib.query`` does);
  B. all 16 oriented edge tuples indexed in a side table.
Both must return the same (hash, t) pairs (checked: the hit totals are the
checksum). Prints a markdown table: p50/p99 µs per query and file bytes per
tile after VACUUM.

    python scripts/bench_lookup.py [--tiles 100000] [--queries 2000] [--work DIR]
"""

from __future__ import annotations

import argparse
import os
import platform
import sqlite3
import statistics
import time
from pathlib import Path

import numpy as np

from generator.solution import random_solution
from tilelib import bits, query
from tilelib.constraint import Constraint
from tilelib.db import atomic, connect
from tilelib.rng import Stream
from tilelib.store import Library
from tilelib.symmetry import TRANSFORMS, transform_edges
from tilelib.tile import Features, Tile

SIZES = bits.VALID_N


def random_tiles(count: int, stream: Stream):
    """Random valid solutions with random corner-free givens and seam masks, n uniform in 6..16."""
    for i in range(count):
        n = SIZES[i % len(SIZES)]
        sol = random_solution(n, stream)
        giv = np.frombuffer(stream.bytes(n * n), dtype=np.uint8).reshape(n, n) < 77  # ~30% given
        giv = giv.astype(np.uint8)
        giv[0, 0] = giv[0, -1] = giv[-1, 0] = giv[-1, -1] = 0
        blank = 1 - giv.sum() / (n * n)
        yield Tile.from_grids(sol, giv, stream.randbelow(16), Features(version=0, blank=float(blank)))


def build_a(path: Path, count: int) -> float:
    t0 = time.perf_counter()
    with Library.create(path) as lib:
        lib.insert_many(random_tiles(count, Stream(b"\x00" * 32, "bench_lookup")))
        lib.conn.execute("VACUUM")
    return time.perf_counter() - t0


def build_b(src: Path, dst: Path) -> None:
    """Variant B: the same tiles table without edge indexes, plus a 16-row oriented edge table."""
    if dst.exists():
        dst.unlink()
    conn = connect(dst)
    conn.execute(f"ATTACH DATABASE '{src}' AS a")
    with atomic(conn):
        conn.execute("CREATE TABLE tiles AS SELECT * FROM a.tiles")
        conn.execute("CREATE UNIQUE INDEX tiles_hash ON tiles (hash)")
        conn.execute(
            "CREATE TABLE orient (n INTEGER, t INTEGER, top INTEGER, right INTEGER, "
            "bottom INTEGER, left INTEGER, tile INTEGER)"
        )
        rows = conn.execute("SELECT rowid, n, top, right, bottom, left FROM tiles").fetchall()
        conn.executemany(
            "INSERT INTO orient VALUES (?,?,?,?,?,?,?)",
            ((n, t, *transform_edges(e, n, t), rid) for rid, n, *e in rows for t in TRANSFORMS),
        )
        for a, b in (("top", "right"), ("right", "bottom"), ("bottom", "left"), ("left", "top")):
            conn.execute(f"CREATE INDEX o_{a}_{b} ON orient (n, {a}, {b})")
    conn.execute("DETACH DATABASE a")
    conn.execute("VACUUM")
    conn.close()


def query_b(conn, n: int, top: int, left: int | None):
    if left is None:
        sql = (
            "SELECT tiles.hash, o.t FROM orient o JOIN tiles ON tiles.rowid = o.tile "
            "WHERE o.n = ? AND o.top = ? ORDER BY tiles.hash, o.t"
        )
        return conn.execute(sql, (n, top)).fetchall()
    sql = (
        "SELECT tiles.hash, o.t FROM orient o JOIN tiles ON tiles.rowid = o.tile "
        "WHERE o.n = ? AND o.top = ? AND o.left = ? ORDER BY tiles.hash, o.t"
    )
    return conn.execute(sql, (n, top, left)).fetchall()


def timed(fn, cases):
    """Per n: (p50 µs, p99 µs, total hits); the key None holds all queries."""
    per: dict = {}
    for case in cases:
        t0 = time.perf_counter_ns()
        r = fn(*case)
        us = (time.perf_counter_ns() - t0) / 1000
        for key in (None, case[0]):
            d = per.setdefault(key, ([], [0]))
            d[0].append(us)
            d[1][0] += len(r)
    out = {}
    for key, (times, hits) in per.items():
        times.sort()
        out[key] = (statistics.median(times), times[int(0.99 * (len(times) - 1))], hits[0], len(times))
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--tiles", type=int, default=100_000)
    ap.add_argument("--queries", type=int, default=2000)
    ap.add_argument("--work", default="/tmp/tiles-bench-lookup")
    args = ap.parse_args()
    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    pa, pb = work / f"a-{args.tiles}.sqlite", work / f"b-{args.tiles}.sqlite"
    build_s = None
    if not pa.exists():
        build_s = build_a(pa, args.tiles)
    build_b(pa, pb)

    lib = Library.open(pa)
    conn_b = sqlite3.connect(pb)
    rng = Stream(b"\x01" * 32, "bench_lookup/queries")
    rows = lib.conn.execute("SELECT n, top, right, bottom, left FROM tiles").fetchall()
    cases = []
    for _ in range(args.queries):
        n, *e = rows[rng.randbelow(len(rows))]
        oe = transform_edges(tuple(e), n, rng.randbelow(16))
        cases.append((n, oe[0], oe[3]))

    def a_one(n, top, left):
        return query.find(lib.conn, Constraint.sides(n, top=top))

    def a_two(n, top, left):
        return query.find(lib.conn, Constraint.sides(n, top=top, left=left))

    results = {
        ("A canonical + 16-way expansion", "one edge"): timed(a_one, cases),
        ("A canonical + 16-way expansion", "two edges"): timed(a_two, cases),
        ("B 16 oriented edge tuples", "one edge"): timed(lambda n, t, ln: query_b(conn_b, n, t, None), cases),
        ("B 16 oriented edge tuples", "two edges"): timed(lambda n, t, ln: query_b(conn_b, n, t, ln), cases),
    }
    tiles = lib.count_tiles()
    size = {"A": pa.stat().st_size / tiles, "B": pb.stat().st_size / tiles}
    cpu = next((ln.split(":", 1)[1].strip() for ln in open("/proc/cpuinfo") if ln.startswith("model name")), "?")
    print(
        f"machine: {cpu}, {os.cpu_count()} cores, Python {platform.python_version()}, "
        f"SQLite {sqlite3.sqlite_version}; {tiles:,} tiles (n uniform 6..16), {args.queries} queries"
        + (f"; library built in {build_s:.0f} s" if build_s else "")
    )
    print()
    print("| design | query | n | p50 µs | p99 µs | mean hits | bytes/tile |")
    print("|---|---|---|---:|---:|---:|---:|")
    for (design, q), per in results.items():
        for key in [None, *SIZES]:
            p50, p99, hits, k = per[key]
            print(
                f"| {design[:1]} | {q} | {'all' if key is None else key} | {p50:.0f} | {p99:.0f} | "
                f"{hits / k:,.0f} | {size[design[0]]:.0f} |"
            )
    a2 = results[("A canonical + 16-way expansion", "two edges")][None][0]
    b2 = results[("B 16 oriented edge tuples", "two edges")][None][0]
    print(f"\nA: {list(results)[0][0]}; B: {list(results)[2][0]}")
    print(f"two-edge p50 ratio B/A (all n): {b2 / a2:.2f}; size ratio B/A: {size['B'] / size['A']:.2f}")
    for q in ("one edge", "two edges"):
        ha = results[("A canonical + 16-way expansion", q)][None][2]
        hb = results[("B 16 oriented edge tuples", q)][None][2]
        assert ha == hb, f"designs disagree on {q}: {ha} vs {hb}"


if __name__ == "__main__":
    main()
