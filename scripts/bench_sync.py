"""Benchmark of `tiles library push/pull` (FORMAT §11) against a loopback moto server and file://.

Measures, in one run on one machine:
- push and pull of a ~100 MB library to the local moto server, MB/s, against a
  plain boto3 ``upload_file``/``download_file`` of the same file with the same
  TransferConfig (target: ratio >= 0.8);
- the same against a file:// remote, against a plain file copy;
- the merge of two 100k-tile libraries (disjoint rows), with and without
  re-hashing the incoming rows.
Prints a markdown table. The library rows are sound n = 16 tiles (``sound_rows``: real solutions,
random givens), so pull's and push's row checks do the work they do on a real library.

    .venv/bin/python scripts/bench_sync.py [--mb 100] [--merge-tiles 100000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import functools
import os
import platform
import shutil
import sqlite3
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from s3_server import DUMMY_KEY, DUMMY_SECRET, REGION, moto_endpoint, new_bucket  # noqa: E402

from generator.solution import random_solution  # noqa: E402
from remote.backend import open_backend  # noqa: E402
from remote.s3 import MiB  # noqa: E402
from remote.sync import Fetching, make_snapshot, pull, push, sha256_file  # noqa: E402
from tilelib.db import atomic  # noqa: E402
from tilelib.merge import merge_file  # noqa: E402
from tilelib.rng import Stream  # noqa: E402
from tilelib.store import TILE_COLUMNS, Library  # noqa: E402
from tilelib.tile import Tile, content_hash, grid_image  # noqa: E402

N = 16
BL = (N * N + 7) // 8


@functools.cache
def _bases(seed: int, k: int = 256) -> tuple[tuple[bytes, tuple[int, int, int, int]], ...]:
    """``k`` random n = 16 solutions in canonical orientation whose 16 images are all distinct (so the
    solution alone decides the canonical orientation, whatever the givens), with their edges."""
    stream = Stream(seed.to_bytes(32, "big"), "bench_sync/bases")
    out: list[tuple[bytes, tuple[int, int, int, int]]] = []
    while len(out) < k:
        canon, _ = Tile.from_grids(random_solution(N, stream), np.zeros((N, N), np.uint8)).canonical()
        if len({grid_image(N, canon.solution, t, True) for t in range(16)}) == 16:
            out.append((canon.solution, canon.edges))
    return tuple(out)


def sound_rows(count: int, seed: int) -> list[tuple]:
    """``count`` tiles rows of n = 16 that pass every check a pull or push makes (``tilelib.audit``):
    a real solution (one of ``_bases``), random givens with no corner given, a random seam mask, and
    the m = 1 features that agree; fast enough for a 100 MB library. Rows in ``TILE_COLUMNS`` order."""
    rng = np.random.default_rng(seed)
    bases = _bases(seed % 7)
    giv = rng.integers(0, 256, (count, BL), dtype=np.uint8)
    giv[:, 0] &= 0x7F  # cell (0, 0)
    giv[:, 1] &= 0xFE  # cell (0, 15)
    giv[:, 30] &= 0x7F  # cell (15, 0)
    giv[:, 31] &= 0xFE  # cell (15, 15)
    blank = 1.0 - np.unpackbits(giv, axis=1).sum(axis=1) / (N * N)
    seams = rng.integers(0, 16, count)
    flip = bytes(BL)
    rows = []
    for i in range(count):
        sol, (top, right, bottom, left) = bases[int(rng.integers(0, len(bases)))]
        g, seam = giv[i].tobytes(), int(seams[i])
        rows.append(
            (content_hash(N, sol, g, seam), N, 1, seam, top, right, bottom, left, 1, float(blank[i]), 2)
            + (0,) * 7
            + (sol, g, flip, b"", 1_700_000_000)
        )
    return rows


def fill(path: Path, count: int, seed: int) -> None:
    """Create a library with ``count`` sound n = 16 rows (``sound_rows``)."""
    with Library.create(path) as lib:
        cols = ", ".join(TILE_COLUMNS)
        sql = f"INSERT OR IGNORE INTO tiles ({cols}) VALUES ({', '.join('?' * len(TILE_COLUMNS))})"
        done = 0
        while done < count:
            k = min(20000, count - done)
            with atomic(lib.conn):
                lib.conn.executemany(sql, sound_rows(k, seed * 1_000_003 + done))
            done += k


def timed(fn, repeat: int) -> float:
    """Median wall seconds of ``fn()`` over ``repeat`` runs."""
    out = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t0)
    return statistics.median(out)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--mb", type=float, default=100)
    ap.add_argument("--merge-tiles", type=int, default=100_000)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()

    endpoint = moto_endpoint()
    os.environ.update(
        TILES_S3_ENDPOINT=endpoint,
        AWS_ACCESS_KEY_ID=DUMMY_KEY,
        AWS_SECRET_ACCESS_KEY=DUMMY_SECRET,
        AWS_DEFAULT_REGION=REGION,
        AWS_EC2_METADATA_DISABLED="true",
    )
    work = Path(tempfile.mkdtemp(prefix="bench-sync-", dir=ROOT))
    rows: list[tuple[str, str, str]] = []
    try:
        lib_path = work / "big.sqlite"
        probe = work / "probe.sqlite"
        fill(probe, 5000, 1)
        per_row = probe.stat().st_size / 5000
        count = int(args.mb * 1e6 / per_row)
        t0 = time.perf_counter()
        fill(lib_path, count, 2)
        build = time.perf_counter() - t0
        size = lib_path.stat().st_size
        mb = size / 1e6
        print(f"library: {count:,} rows, {mb:.1f} MB (built in {build:.1f} s)", file=sys.stderr)

        # --- phases of push, measured alone
        with Library.open(lib_path) as lib:

            def vac():
                d = Path(tempfile.mkdtemp(dir=work))
                make_snapshot(lib, d)
                shutil.rmtree(d)

            t_vac = timed(vac, args.repeat)
        t_sha = timed(lambda: sha256_file(lib_path), args.repeat)

        def check(pragma):
            conn = sqlite3.connect(f"file:{lib_path}?mode=ro", uri=True)
            conn.execute(f"PRAGMA mmap_size = {1 << 31}")
            conn.execute("PRAGMA cache_size = -262144")
            assert conn.execute(f"PRAGMA {pragma}").fetchall() == [("ok",)]
            conn.close()

        t_ic = timed(lambda: check("integrity_check"), args.repeat)
        t_qc = timed(lambda: check("quick_check"), args.repeat)

        # --- S3: plain boto3 baseline vs push/pull
        bucket = new_bucket(endpoint)
        backend = open_backend(f"s3://{bucket}/bench")
        client, tc = backend.client, backend.transfer
        k = iter(range(1000))
        client.upload_file(str(probe), bucket, "warm-up", Config=tc)  # first-use costs out of the timings
        t_up = timed(lambda: client.upload_file(str(lib_path), bucket, f"plain/{next(k)}", Config=tc), args.repeat)
        t_down = timed(lambda: client.download_file(bucket, "plain/0", str(work / "plain.bin"), Config=tc), args.repeat)

        fresh = iter([new_bucket(endpoint) for _ in range(args.repeat)])

        def s3_push():
            b = next(fresh)  # a fresh remote each time: the full snapshot is uploaded
            r = push(lib_path, open_backend(f"s3://{b}/lib"))
            assert r.status == "pushed" and r.bytes > 0
            s3_push.last = b

        t_push = timed(s3_push, args.repeat)
        url = f"s3://{s3_push.last}/lib"

        def clone(u, verify="new", integrity="full"):
            dest = work / "clone.sqlite"
            dest.unlink(missing_ok=True)
            r = pull(dest, open_backend(u), Fetching(verify=verify, integrity=integrity))
            assert r.status == "cloned" and r.tiles_added == count

        t_clone = timed(lambda: clone(url, "new"), args.repeat)
        t_clone_quick = timed(lambda: clone(url, "sample", "quick"), args.repeat)

        small = work / "small.sqlite"

        def pull_merge():
            small.unlink(missing_ok=True)
            fill(small, 1000, 3)
            r = pull(small, open_backend(url))
            assert r.status == "merged" and r.tiles_added == count

        t_pull_merge = timed(pull_merge, 1)

        # --- file:// baseline vs push/pull
        def file_copy():
            shutil.copyfile(lib_path, work / "copy.bin")
            with open(work / "copy.bin", "rb") as fh:
                os.fsync(fh.fileno())

        t_copy = timed(file_copy, args.repeat)

        def file_push():
            d = work / f"remote-{time.perf_counter_ns()}"
            r = push(lib_path, open_backend(f"file://{d}"))
            assert r.status == "pushed"
            file_push.last = d

        t_fpush = timed(file_push, args.repeat)
        t_fclone = timed(lambda: clone(f"file://{file_push.last}"), args.repeat)

        # --- merge of two 100k-tile libraries
        a, b = work / "ma.sqlite", work / "mb.sqlite"
        fill(b, args.merge_tiles, 5)

        def merge(verify):
            a.unlink(missing_ok=True)
            fill(a, args.merge_tiles, 4)
            with Library.open(a) as lib:
                t0 = time.perf_counter()
                st = merge_file(lib, b, verify=verify)
                dt = time.perf_counter() - t0
                assert st.tiles_added == args.merge_tiles and lib.count_tiles() == 2 * args.merge_tiles
            return dt

        t_merge = statistics.median(merge("new") for _ in range(args.repeat))
        t_merge_none = statistics.median(merge("none") for _ in range(args.repeat))

        rows = [
            ("VACUUM INTO snapshot (push phase)", f"{t_vac:.2f} s", f"{mb / t_vac:.0f} MB/s"),
            ("sha256 of the file (push/pull phase)", f"{t_sha:.2f} s", f"{mb / t_sha:.0f} MB/s"),
            ("S3 plain boto3 upload_file", f"{t_up:.2f} s", f"{mb / t_up:.0f} MB/s"),
            (
                "S3 `push` (vacuum+sha+upload+HEAD swap)",
                f"{t_push:.2f} s",
                f"{mb / t_push:.0f} MB/s, ratio {t_up / t_push:.2f}",
            ),
            ("S3 plain boto3 download_file", f"{t_down:.2f} s", f"{mb / t_down:.0f} MB/s"),
            ("PRAGMA integrity_check (pull phase)", f"{t_ic:.2f} s", f"{mb / t_ic:.0f} MB/s"),
            ("PRAGMA quick_check (pull phase with --integrity quick)", f"{t_qc:.2f} s", f"{mb / t_qc:.0f} MB/s"),
            (
                "S3 `pull` into no local file (defaults: verify=new, integrity=full)",
                f"{t_clone:.2f} s",
                f"{mb / t_clone:.0f} MB/s, ratio {t_down / t_clone:.2f}",
            ),
            (
                "S3 `pull` into no local file, verify=sample, integrity=quick",
                f"{t_clone_quick:.2f} s",
                f"{mb / t_clone_quick:.0f} MB/s, ratio {t_down / t_clone_quick:.2f}",
            ),
            ("S3 `pull` merging into a 1k-tile library", f"{t_pull_merge:.2f} s", f"{mb / t_pull_merge:.0f} MB/s"),
            ("file:// plain copy + fsync", f"{t_copy:.2f} s", f"{mb / t_copy:.0f} MB/s"),
            ("file:// `push`", f"{t_fpush:.2f} s", f"{mb / t_fpush:.0f} MB/s, ratio {t_copy / t_fpush:.2f}"),
            (
                "file:// `pull` into no local file",
                f"{t_fclone:.2f} s",
                f"{mb / t_fclone:.0f} MB/s, ratio {t_copy / t_fclone:.2f}",
            ),
            (
                f"merge {args.merge_tiles:,} + {args.merge_tiles:,} tiles, verify=new",
                f"{t_merge:.2f} s",
                f"{args.merge_tiles / t_merge:,.0f} rows/s",
            ),
            (
                f"merge {args.merge_tiles:,} + {args.merge_tiles:,} tiles, verify=none",
                f"{t_merge_none:.2f} s",
                f"{args.merge_tiles / t_merge_none:,.0f} rows/s",
            ),
        ]
    finally:
        shutil.rmtree(work, ignore_errors=True)

    cpu = next((ln.split(":", 1)[1].strip() for ln in open("/proc/cpuinfo") if ln.startswith("model name")), "?")
    print(
        f"\nbench_sync: library {mb:.1f} MB ({count:,} rows of n={N}), median of {args.repeat}; "
        f"{cpu}, {os.cpu_count()} cores, Python {platform.python_version()}, moto on 127.0.0.1; "
        f"multipart above {tc.multipart_threshold // MiB} MiB\n"
    )
    print("| operation | time | rate |")
    print("|---|---|---|")
    for r in rows:
        print(f"| {r[0]} | {r[1]} | {r[2]} |")


if __name__ == "__main__":
    main()
