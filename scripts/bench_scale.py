"""Scale benchmark (issue 12): the nightly build's cost against library size, 20k .. 2.5M tiles.

For each size it builds (or reuses, cached in ``--cache``, gitignored) a valid synthetic library
(``scripts/scale_libs.py``: generator tiles first, then honest variants of them), then measures
on a fresh copy, each in its own process (so peak RSS is that measurement's own):

* **index**: the stitcher's index of every size — cold (one scan of the library, writing the
  sidecar), warm (``MemoryIndex.open`` over the sidecar: what a nightly build does), RSS after;
* **lookups**: p50 / p99 µs per n of one-edge and two-edge oriented lookups (the C table) and of a
  seeded draw (``choose``), queries from random library tiles under random transforms;
* **adds**: the cost of adding one drained tile to the index, per n (median, mean, max ms);
* **build**: the G = 1000 daily build (drain on, a fixed seed), wall time by stage and inside
  the stitch, peak RSS, bytes written to disk (``/proc/self/io`` write_bytes) and new tiles.

``--baseline DIR`` runs the index/lookup/add measurements also against another checkout of the
code (e.g. ``git archive <commit> | tar -x -C DIR`` plus ``python setup.py build_ext --inplace``),
in the same run, on the same library copy; ``--baseline-max`` skips it above a size (the old
index needs ~4 GB at 1M tiles).

    .venv/bin/python scripts/bench_scale.py --sizes 20k,100k,300k,1M,2.5M [--G 1000]
        [--baseline /tmp/base --baseline-max 1M] [--skip-build] [--cache .bench-scale]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import shutil
import sqlite3
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = Path(os.environ.get("BENCH_CODE_ROOT", HERE.parent))
sys.path.insert(0, str(ROOT))
NS = (6, 8, 10, 12, 14, 16)
DAY = "2026-12-01"
SEED = bytes.fromhex("5ca1e" + "0" * 59)


def io_counters() -> dict:
    """This process's /proc/self/io (write_bytes: what reached the block layer; wchar: write() bytes)."""
    try:
        d = dict(line.split(": ") for line in Path("/proc/self/io").read_text().splitlines() if line)
        return {k: int(v) for k, v in d.items()}
    except OSError:
        return {}


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def pct(xs, q):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * (len(xs) - 1)))] if xs else float("nan")


# ------------------------------------------------------------------ child: index, lookups, adds


def child_micro(lib_path: Path, mode: str, queries: int, add_budget: float) -> dict:
    import numpy as np

    from stitcher.index import MemoryIndex
    from tilelib.constraint import Constraint
    from tilelib.rng import Stream
    from tilelib.symmetry import transform_edges

    conn = sqlite3.connect(lib_path)
    t0, c0 = time.perf_counter(), time.process_time()
    if mode == "warm":
        idx = MemoryIndex.open(conn, lib_path, NS)
    else:
        idx = MemoryIndex.load(conn, NS)
    load_s = time.perf_counter() - t0
    out = {
        "load_s": load_s,
        "load_cpu_s": time.process_time() - c0,
        "rss_after_load_mb": peak_rss_mb(),
        "active": {n: idx.sizes[n].size for n in NS},
    }
    info = getattr(idx, "info", None)
    if info is not None:
        out["source"] = info.source
    rng = np.random.default_rng(7)
    maxrow = conn.execute("SELECT max(rowid) FROM tiles").fetchone()[0]
    look, draw = {}, {}
    stream = Stream(SEED, "bench-scale/draw")
    for n in NS:
        full = (1 << n) - 1
        rows = conn.execute(
            f"SELECT top, right, bottom, left FROM tiles WHERE n = ? AND rowid IN "
            f"({','.join(str(int(r)) for r in rng.integers(1, maxrow + 1, size=queries * 8))}) LIMIT ?",
            (n, queries),
        ).fetchall()
        si = idx.sizes[n]
        for kind in ("one", "two"):
            times, dts = [], []
            for e in rows:
                oe = transform_edges(tuple(e), n, int(rng.integers(0, 16)))
                masks = (full, 0, 0, 0) if kind == "one" else (full, 0, 0, full)
                c = Constraint(n, masks, tuple(v & m for v, m in zip(oe, masks, strict=True)))
                a = time.perf_counter_ns()
                si.lookup(c, False)
                b = time.perf_counter_ns()
                idx.choose(c, False, int(rng.integers(0, 16)), stream)
                d = time.perf_counter_ns()
                times.append((b - a) / 1000)
                dts.append((d - b) / 1000)
            look[f"{n}/{kind}"] = (statistics.median(times), pct(times, 0.99))
            draw[f"{n}/{kind}"] = (statistics.median(dts), pct(dts, 0.99))
    out["lookup_us"], out["draw_us"] = look, draw
    adds = {}
    for n in NS:
        rows = conn.execute(
            "SELECT top, right, bottom, left, m, alt_sides FROM tiles WHERE n = ? LIMIT 400", (n,)
        ).fetchall()
        times = []
        t_end = time.perf_counter() + add_budget
        for _k, (t_, r_, b_, l_, m, alt) in enumerate(rows):
            h = rng.bytes(32).hex()
            a = time.perf_counter()
            idx.add(h, n, (t_, r_, b_, l_), m, alt)
            times.append((time.perf_counter() - a) * 1000)
            if time.perf_counter() > t_end:
                break
        adds[n] = (statistics.median(times), statistics.fmean(times), max(times), len(times))
    out["add_ms"] = adds
    out["peak_rss_mb"] = peak_rss_mb()
    return out


# ------------------------------------------------------------------ child: the daily build


def child_build(lib_path: Path, out: Path, G: int) -> dict:
    from daily.build import BuildOptions, build

    size0 = lib_path.stat().st_size
    n0 = sqlite3.connect(lib_path).execute("SELECT count(*) FROM tiles").fetchone()[0]
    io0 = io_counters()
    t0 = time.perf_counter()
    profile = os.environ.get("BENCH_PROFILE") or None  # the nightly job's CLI default is "human"
    kw = {"profile": profile} if profile else {}
    res = build(
        BuildOptions(day=DAY, library=lib_path, out_dir=out, size=G, seed=SEED, force=True, **kw),
        log=lambda line: print(line, file=sys.stderr, flush=True),
    )
    wall = time.perf_counter() - t0
    io1 = io_counters()
    n1 = sqlite3.connect(lib_path).execute("SELECT count(*) FROM tiles").fetchone()[0]
    ru = resource.getrusage(resource.RUSAGE_SELF)
    rc = resource.getrusage(resource.RUSAGE_CHILDREN)  # the stitch's half workers (forked)
    cpu, child_cpu = ru.ru_utime + ru.ru_stime, rc.ru_utime + rc.ru_stime
    halves = [
        v
        for k, v in sorted(getattr(res, "stitch_detail", {}).get("seconds", {}).items())
        if k.startswith("half") and k.endswith("_cpu")
    ]
    return {
        "wall_s": wall,
        "cpu_s": cpu + child_cpu,
        "child_cpu_s": child_cpu,
        # on an idle 2-core machine the halves overlap: the wall is about all CPU less the shorter half
        "critical_cpu_s": cpu + child_cpu - (min(halves) if len(halves) == 2 else 0.0),
        "child_peak_rss_mb": rc.ru_maxrss / 1024,
        "seconds": res.seconds,
        "stitch": res.stitch,
        "stitch_detail": getattr(res, "stitch_detail", {}),
        "status": res.status,
        "peak_rss_mb": peak_rss_mb(),
        "write_bytes": io1.get("write_bytes", 0) - io0.get("write_bytes", 0),
        "wchar": io1.get("wchar", 0) - io0.get("wchar", 0),
        "lib_bytes_before": size0,
        "lib_bytes_after": lib_path.stat().st_size,
        "tiles_before": n0,
        "new_tiles": n1 - n0,
    }


# ------------------------------------------------------------------ parent


def mark_as_published(lib_path: Path) -> None:
    """Give the cached library the publish check's watermark once, as a nightly library has from
    its last push: a build then checks the rows added since (not all 2.5M, which only the first
    check of a never-checked file does)."""
    from tilelib.store import Library
    from trust.checks import check_library, mark_verified

    with Library.open(lib_path) as lib:
        if lib.conn.execute("SELECT 1 FROM meta WHERE key = 'verified:rowids'").fetchone() is None:
            mark_verified(lib, check_library(lib, "new"))


def run_child(code_root: Path, args: list[str], profile: str | None = None) -> dict:
    env = dict(os.environ, BENCH_CODE_ROOT=str(code_root), PYTHONPATH=str(code_root), BENCH_PROFILE=profile or "")
    p = subprocess.run(
        [sys.executable, str(HERE / "bench_scale.py"), "--child", *args],
        env=env,
        stdout=subprocess.PIPE,
        stderr=None,
        text=True,
        check=True,
    )
    return json.loads(p.stdout.strip().splitlines()[-1])


def parse_size(text: str) -> int:
    t = text.strip().lower()
    mult = 1_000_000 if t.endswith("m") else 1000 if t.endswith("k") else 1
    return int(float(t.rstrip("mk")) * mult)


def uptime() -> str:
    try:
        return Path("/proc/loadavg").read_text().split()[:3].__str__()
    except OSError:
        return "?"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="20k,100k,300k,1M,2.5M")
    ap.add_argument("--G", type=int, default=1000)
    ap.add_argument("--cache", default=str(HERE.parent / ".bench-scale"))
    ap.add_argument("--work", default="/tmp/tiles-bench-scale")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--queries", type=int, default=400)
    ap.add_argument("--add-budget", type=float, default=10.0, help="seconds of adds per n at most")
    ap.add_argument("--baseline", default=None)
    ap.add_argument("--baseline-max", default="1M")
    ap.add_argument("--skip-build", action="store_true", help="index/lookups/adds only")
    ap.add_argument(
        "--profile",
        default="human",
        help="difficulty profile of the builds: the nightly job's default (human), or none",
    )
    ap.add_argument(
        "--baseline-build",
        action="store_true",
        help="also run the G = 1000 build with the --baseline code (same library, same run)",
    )
    ap.add_argument("--build-only", action="store_true", help="only the sidecar (one timed open) and the daily build")
    ap.add_argument("--child", nargs="*", default=None)
    args = ap.parse_args()
    args.profile = None if args.profile == "none" else args.profile
    if args.child is not None:
        kind, lib = args.child[0], Path(args.child[1])
        if kind == "micro":
            res = child_micro(lib, args.child[2], args.queries, args.add_budget)
        else:
            res = child_build(lib, Path(args.child[2]), args.G)
        print(json.dumps(res))
        return

    sys.path.insert(0, str(HERE))
    import scale_libs

    cache, work = Path(args.cache), Path(args.work)
    sizes = [parse_size(s) for s in args.sizes.split(",")]
    cpu = next((line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo") if line.startswith("model name")), "?")
    print(
        f"machine: {cpu}, {os.cpu_count()} cores, Python {platform.python_version()}, "
        f"SQLite {sqlite3.sqlite_version}; G = {args.G}; profile {args.profile}; load average at start {uptime()}",
        flush=True,
    )
    results = {}
    for size in sorted(sizes):
        t0 = time.perf_counter()
        src = scale_libs.build_library(
            cache, size, workers=args.workers, log=lambda m: print(m, file=sys.stderr, flush=True)
        )
        built_s = time.perf_counter() - t0
        mark_as_published(src)
        conn = sqlite3.connect(src)
        tiles = conn.execute("SELECT count(*) FROM tiles").fetchone()[0]
        distinct = conn.execute("SELECT count(DISTINCT solution) FROM tiles").fetchone()[0]
        per_n = dict(conn.execute("SELECT n, count(*) FROM tiles GROUP BY n").fetchall())
        conn.close()
        d = work / str(size)
        shutil.rmtree(d, ignore_errors=True)
        d.mkdir(parents=True)
        lib = d / "lib.sqlite"
        shutil.copyfile(src, lib)
        os.sync()  # else the copy's dirty pages are written back when the build fsyncs the file,
        #             and /proc/self/io charges them to the build's write_bytes
        r = {
            "tiles": tiles,
            "distinct_solutions": distinct,
            "per_n": per_n,
            "file_mb": lib.stat().st_size / 1e6,
            "lib_ready_s": built_s,
            "load_at_start": uptime(),
        }
        t1 = time.perf_counter()
        if not args.build_only:
            r["cold"] = run_child(ROOT, ["micro", str(lib), "cold"])  # a scan; writes no sidecar
        r["warm_first"] = run_child(ROOT, ["micro", str(lib), "warm"])  # scan + write the sidecar
        if not args.build_only:
            r["warm"] = run_child(ROOT, ["micro", str(lib), "warm"])  # the sidecar: a nightly open
        r["micro_s"] = time.perf_counter() - t1
        if args.baseline and size <= parse_size(args.baseline_max):
            r["base"] = run_child(Path(args.baseline), ["micro", str(lib), "cold"])
        if not args.skip_build:
            if args.baseline and args.baseline_build:  # the anchor: the baseline code's build, same run
                base_lib = d / "base-lib.sqlite"
                shutil.copyfile(src, base_lib)
                for side in (Path(str(src) + ".stitch-index"),):
                    if side.exists():
                        shutil.copyfile(side, Path(str(base_lib) + ".stitch-index"))
                os.sync()
                r["base_build"] = run_child(
                    Path(args.baseline), ["build", str(base_lib), str(d / "base-out")], args.profile
                )
                base_lib.unlink()
            r["build"] = run_child(ROOT, ["build", str(lib), str(d)], args.profile)
        r["load_at_end"] = uptime()
        results[size] = r
        if "build" in r:
            print(json.dumps({"size": size, "build": r["build"]}), file=sys.stderr, flush=True)
        print(f"size {size:,}: done, load {r['load_at_end']}", file=sys.stderr, flush=True)
        (work / "results.json").write_text(json.dumps(results, indent=1))
    report(results)


def report(results: dict) -> None:
    micro = {k: r for k, r in results.items() if "warm" in r}
    build = results
    results = micro
    print("\n### Libraries and the index (wall s / CPU s of the loading process)\n")
    print(
        "| tiles | distinct solutions | file MB | index cold (scan) | index warm (sidecar) | "
        "baseline index | RSS after warm load MB | baseline RSS MB | active tiles (all n) |"
    )
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|")

    def ws(d):
        return f"{d['load_s']:.2f} / {d.get('load_cpu_s', float('nan')):.2f}" if d else "–"

    for _size, r in results.items():
        b = r.get("base", {})
        print(
            f"| {r['tiles']:,} | {r['distinct_solutions']:,} | {r['file_mb']:.0f} | {ws(r['cold'])} | "
            f"{ws(r['warm'])} | {ws(b)} | "
            f"{r['warm']['rss_after_load_mb']:.0f} | {b.get('rss_after_load_mb', float('nan')):.0f} | "
            f"{sum(r['warm']['active'].values()):,} |"
        )
    print("\n### Lookups and draws (µs, p50 / p99), this code vs baseline\n")
    print(
        "| tiles | n | one edge | two edges | draw, two edges | baseline one edge | baseline two edges | "
        "baseline draw |"
    )
    print("|---:|---:|---|---|---|---|---|---|")
    for _size, r in results.items():
        w, b = r["warm"], r.get("base")
        for n in NS:

            def f(d, k):
                return f"{d[k][0]:.0f} / {d[k][1]:.0f}" if d and k in d else "–"

            print(
                f"| {r['tiles']:,} | {n} | {f(w['lookup_us'], f'{n}/one')} | {f(w['lookup_us'], f'{n}/two')} | "
                f"{f(w['draw_us'], f'{n}/two')} | {f(b and b['lookup_us'], f'{n}/one')} | "
                f"{f(b and b['lookup_us'], f'{n}/two')} | {f(b and b['draw_us'], f'{n}/two')} |"
            )
    print("\n### Adding one drained tile to the index (ms: median / mean / max, adds timed)\n")
    print("| tiles | n | this code | baseline |")
    print("|---:|---:|---|---|")
    for _size, r in results.items():
        for n in NS:
            a = r["warm"]["add_ms"][str(n)]
            b = r.get("base", {}).get("add_ms", {}).get(str(n))
            fb = f"{b[0]:.3f} / {b[1]:.3f} / {b[2]:.1f} ({b[3]})" if b else "–"
            print(f"| {r['tiles']:,} | {n} | {a[0]:.3f} / {a[1]:.3f} / {a[2]:.1f} ({a[3]}) | {fb} |")
    results = build
    if any("build" in r for r in results.values()):
        print("\n### G = 1000 daily build, drain on: this code against the baseline in the same run\n")
        print(
            "| tiles | code | wall s | CPU s, all processes | critical-path CPU s (idle 2-core wall) | "
            "halves' CPU s | new tiles | CP-SAT calls | final fill | parent / worker peak RSS MB |"
        )
        print("|---:|---|---:|---:|---:|---|---:|---:|---:|---|")
        for _size, r in results.items():
            for name, key in (("baseline", "base_build"), ("this", "build")):
                bd = r.get(key)
                if not bd:
                    continue
                sd = bd.get("stitch_detail", {})
                hv = [
                    f"{v:.0f}"
                    for k, v in sorted(sd.get("seconds", {}).items())
                    if k.startswith("half") and k.endswith("_cpu")
                ]
                print(
                    f"| {r['tiles']:,} | {name} | {bd['wall_s']:.0f} | {bd['cpu_s']:.0f} | "
                    f"{bd.get('critical_cpu_s', bd['cpu_s']):.0f} | {' + '.join(hv) or '–'} | {bd['new_tiles']:,} | "
                    f"{sd.get('cp_calls', 0):,} | {bd['stitch'].get('final_fill', float('nan')):.4f} | "
                    f"{bd['peak_rss_mb']:.0f} / {bd.get('child_peak_rss_mb', 0):.0f} |"
                )
            if r.get("base_build") and r.get("build"):
                b, t = r["base_build"], r["build"]
                print(
                    f"| | ratio this / baseline | {t['wall_s'] / b['wall_s']:.2f} | {t['cpu_s'] / b['cpu_s']:.2f} | "
                    f"{t.get('critical_cpu_s', t['cpu_s']) / b.get('critical_cpu_s', b['cpu_s']):.2f} | | "
                    f"{t['new_tiles'] / max(b['new_tiles'], 1):.2f} | | | |"
                )
        print("\n### G = 1000 daily build, stages (this code)\n")
        print(
            "| tiles | wall s | CPU s | pack | stitch | of which index | place | drain | index adds | ledger | clues | "
            "verify | peak RSS MB | written MB (write_bytes / wchar) | library MB before → after | new tiles "
            "| final fill | "
            "load avg start → end |"
        )
        print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|---:|---|")
        for _size, r in results.items():
            bd = r.get("build")
            if not bd:
                continue
            s, sd = bd["seconds"], bd.get("stitch_detail", {}).get("seconds", {})
            print(
                f"| {r['tiles']:,} | {bd['wall_s']:.0f} | {bd.get('cpu_s', float('nan')):.0f} | "
                f"{s.get('pack', 0):.1f} | {s.get('stitch', 0):.1f} | "
                f"{sd.get('index', float('nan')):.2f} | {sd.get('place', float('nan')):.1f} | "
                f"{sd.get('drain', float('nan')):.1f} | {sd.get('index_add', float('nan')):.2f} | "
                f"{sd.get('ledger', float('nan')):.2f} | {s.get('clues', 0):.1f} | {s.get('verify', 0):.1f} | "
                f"{bd['peak_rss_mb']:.0f} | {bd['write_bytes'] / 1e6:.1f} / {bd['wchar'] / 1e6:.1f} | "
                f"{bd['lib_bytes_before'] / 1e6:.0f} → {bd['lib_bytes_after'] / 1e6:.0f} | {bd['new_tiles']:,} | "
                f"{bd['stitch'].get('final_fill', float('nan')):.4f} | {r['load_at_start']} → {r['load_at_end']} |"
            )


if __name__ == "__main__":
    main()
