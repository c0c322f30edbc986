"""Cost of push's publish check (issue 11) against the cost of the push itself, at 100k and 1M tiles.

For each library size it measures, in one run on one machine (wall seconds, median and max of
``--repeat`` runs):
- the push's own local work on a full snapshot: ``VACUUM INTO`` and the snapshot's sha256
  (the anchor the checks are compared with);
- the checks: ``PRAGMA quick_check``, ``PRAGMA integrity_check``, auditing every row (full:
  ``check_rows``, each row's hash and content, issue 69), auditing only the rows added since the
  last verified push (incremental: ``--new`` rows, a G=1000 night's worth by default), and parsing
  the stored manifests;
- the baseline of the rows' check: what it was before issue 69, the content hash alone
  (``hash_only``), over the same rows in the same run.
Libraries are cached under ``.bench-cache/`` (gitignored): sound n=16 rows (``bench_sync.fill``),
so every check does real work.

    .venv/bin/python scripts/bench_publish.py [--sizes 100000,1000000] [--repeat 3] [--new 6000]
"""

from __future__ import annotations

import argparse
import os
import platform
import sqlite3
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))
sys.path.insert(0, str(ROOT / "tests"))

from bench_sync import fill  # noqa: E402

from remote.sync import make_snapshot  # noqa: E402
from tilelib.store import Library  # noqa: E402
from tilelib.tile import content_hash  # noqa: E402
from trust.checks import check_manifests, check_pages, check_rows  # noqa: E402


def hash_only(conn: sqlite3.Connection, since: int) -> int:
    """The rows' check before issue 69, the baseline: every row's content hash re-computed, nothing else."""
    cur = conn.execute("SELECT hash, n, solution, givens, seam_mask FROM tiles WHERE rowid > ?", (since,))
    bad = 0
    while rows := cur.fetchmany(8192):
        bad += sum(content_hash(n, bytes(s), bytes(g), m) != h for h, n, s, g, m in rows)
    return bad


def timed(fn, repeat: int) -> tuple[float, float]:
    out = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t0)
    return statistics.median(out), max(out)


def library(count: int) -> Path:
    cache = ROOT / ".bench-cache"
    cache.mkdir(exist_ok=True)
    path = cache / f"publish-{count}.sqlite"
    if not path.exists():
        tmp = path.with_suffix(".tmp")
        tmp.unlink(missing_ok=True)
        fill(tmp, count, seed=count)
        os.replace(tmp, path)
    return path


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="100000,1000000")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--new", type=int, default=6000, help="rows added since the last verified push")
    args = ap.parse_args()
    print(
        f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
        f"load {os.getloadavg()[0]:.2f}; sqlite {sqlite3.sqlite_version}"
    )
    print(
        "| tiles | file MB | snapshot+sha256 (anchor) | quick_check | integrity_check | rows, all | "
        "rows, hash only (before) | rows / before | rows, new only | manifests | full check / anchor | "
        "incremental / anchor |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for count in (int(s) for s in args.sizes.split(",")):
        path = library(count)
        with Library.open(path) as lib, tempfile.TemporaryDirectory(dir=ROOT) as tmp:
            conn = lib.conn
            conn.execute(f"PRAGMA mmap_size = {1 << 31}")
            top = conn.execute("SELECT max(rowid) FROM tiles").fetchone()[0]

            def snap():
                p = make_snapshot(lib, Path(tmp))[0]
                p.unlink()

            anchor = timed(snap, args.repeat)
            quick = timed(lambda: check_pages(conn, "bench", "quick"), args.repeat)
            full = timed(lambda: check_pages(conn, "bench", "full"), args.repeat)
            rows = timed(lambda: check_rows(conn, "bench", 0), args.repeat)
            before = timed(lambda: hash_only(conn, 0), args.repeat)
            new = timed(lambda: check_rows(conn, "bench", top - args.new), args.repeat)
            mans = timed(lambda: check_manifests(conn, "bench", 0), args.repeat)
        full_total = full[0] + rows[0] + mans[0]
        inc_total = quick[0] + new[0] + mans[0]
        fmt = lambda t: f"{t[0]:.2f} s (max {t[1]:.2f})"  # noqa: E731
        print(
            f"| {count:,} | {path.stat().st_size / 1e6:.0f} | {fmt(anchor)} | {fmt(quick)} | {fmt(full)} | "
            f"{fmt(rows)} | {fmt(before)} | {rows[0] / before[0]:.2f} | {fmt(new)} | {fmt(mans)} | "
            f"{full_total / anchor[0]:.2f} | "
            f"{inc_total / anchor[0]:.2f} |"
        )


if __name__ == "__main__":
    main()
