"""Benchmark of what issue 51's schema proof and honest counts cost, and of the two ways a pulled file
can become a library (FORMAT §5, §11).

Measures, in one run on one machine, on a library of ``--tiles`` random rows with valid hashes:
- ``Library.open`` with the schema proof, against opening the same file with a bare connection
  that reads ``meta`` (what the open did before), and ``tiles library stats`` as a whole command;
- ``merge_file`` of a delta-sized source (``--delta`` rows) and of the whole library into an empty
  file, with the union's stored-rows check and without it (the check alone timed as well);
- a clone: adopting the proven file (``os.link``, what pull does) against rebuilding it
  (a new file from schema.sql with the rows merged in, which the issue allowed as the other way).
Median, p99 and max over ``--repeat`` runs; prints a markdown table.

    .venv/bin/python scripts/bench_schema.py [--tiles 200000] [--delta 2000] [--repeat 20]
"""

from __future__ import annotations

import argparse
import os
import shutil
import sqlite3
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))

from bench_sync import fill  # noqa: E402
from machine import cpu_model, timed_run  # noqa: E402

from tilelib import merge  # noqa: E402
from tilelib.merge import merge_file  # noqa: E402
from tilelib.store import Library  # noqa: E402


def stats(samples: list[float]) -> tuple[float, float, float]:
    """(median, p99, max) in milliseconds."""
    s = sorted(x * 1000 for x in samples)
    return statistics.median(s), s[min(len(s) - 1, int(0.99 * len(s)))], s[-1]


def runs(fn, repeat: int, setup=None) -> list[float]:
    out = []
    for _ in range(repeat):
        if setup is not None:
            setup()
        t0 = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t0)
    return out


def bare_open(path: Path) -> None:
    conn = sqlite3.connect(path)
    dict(conn.execute("SELECT key, value FROM meta"))
    conn.close()


def proven_open(path: Path) -> None:
    Library.open(path).close()


def merged_into_fresh(src: Path, work: Path) -> None:
    dst = work / "fresh.sqlite"
    for p in work.glob("fresh.sqlite*"):
        p.unlink()
    with Library.create(dst) as lib:
        merge_file(lib, src, verify="none")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tiles", type=int, default=200_000)
    ap.add_argument("--delta", type=int, default=2_000)
    ap.add_argument("--repeat", type=int, default=20)
    a = ap.parse_args()
    rows: list[tuple[str, list[float]]] = []
    with tempfile.TemporaryDirectory(prefix="bench-schema-", dir=ROOT) as tmp:
        work = Path(tmp)
        lib, delta = work / "lib.sqlite", work / "delta.sqlite"
        fill(lib, a.tiles, 1)
        fill(delta, a.delta, 2)
        rows.append(("open: bare connection + read meta (before)", runs(lambda: bare_open(lib), a.repeat)))
        rows.append(("open: Library.open with the schema proof", runs(lambda: proven_open(lib), a.repeat)))
        cmd = [sys.executable, "-m", "tiles_cli.app", "library", "stats", "-L", str(lib)]
        rows.append(
            (
                "`tiles library stats` (whole command)",
                [timed_run(cmd, cwd=ROOT)[1] for _ in range(max(3, a.repeat // 4))],
            )
        )

        target = work / "target.sqlite"
        shutil.copy(lib, target)
        keep = target.read_bytes()

        def restore():
            target.write_bytes(keep)
            for p in work.glob("target.sqlite-*"):
                p.unlink()

        def merge_delta():
            with Library.open(target) as t:
                merge_file(t, delta, verify="none")

        check = merge._check_stored
        rows.append(
            (f"merge a {a.delta:,}-row delta, with the stored-rows check", runs(merge_delta, a.repeat, restore))
        )
        merge._check_stored = lambda conn, label: None
        try:
            rows.append((f"merge a {a.delta:,}-row delta, without it", runs(merge_delta, a.repeat, restore)))
            rows.append(
                (
                    f"clone by rebuild: {a.tiles:,} rows merged into a new file, without the check",
                    runs(lambda: merged_into_fresh(lib, work), max(3, a.repeat // 4)),
                )
            )
        finally:
            merge._check_stored = check
        rows.append(
            (
                f"clone by rebuild: {a.tiles:,} rows merged into a new file, with the check",
                runs(lambda: merged_into_fresh(lib, work), max(3, a.repeat // 4)),
            )
        )

        def link():
            dst = work / "linked.sqlite"
            dst.unlink(missing_ok=True)
            os.link(lib, dst)

        rows.append(("clone by adopting the proven file (os.link)", runs(link, a.repeat)))
        size = lib.stat().st_size
    print(
        f"Machine: {cpu_model()}, {os.cpu_count()} cores; library {a.tiles:,} rows ({size / 1e6:.0f} MB); "
        f"{a.repeat} runs each (fewer for the whole-file ones)\n"
    )
    print("| what | median ms | p99 ms | max ms |\n|---|---:|---:|---:|")
    for name, samples in rows:
        med, p99, mx = stats(samples)
        print(f"| {name} | {med:.2f} | {p99:.2f} | {mx:.2f} |")


if __name__ == "__main__":
    main()
