"""Growth of the library over consecutive nights (issue 12, part 3): new tiles a day, and why.

One library, ``--days`` consecutive daily builds (``daily.build.build``, big-first unless
``--packer``, the day's seed from a fixed bench secret, the drain on), each on the library the
night before left. Per day:
new tiles, final fill, CP-SAT calls, and where the new tiles came from — first-pass misses,
squares whose candidates all failed the forward check (``unchecked``/window-aware tiles),
repairs (an n = 6 square no grid fits, remade with its neighbours) — plus the build's
seconds. Starts from an empty library unless ``--library`` gives one to copy.

    .venv/bin/python scripts/bench_growth.py [--days 30] [--G 301] [--start 2027-01-01]
        [--library LIB] [--work /tmp/tiles-bench-growth] [--workers 2] [--profile human|none] [--json out.json]
        [--packer islands] [--params JSON]

G = 301 is the proxy for G = 1000 (a G = 1000 night costs ~10x): say so beside its figures.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import shutil
import sqlite3
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

SECRET = "bench-growth-secret"
CAUSES = ("misses_first", "unchecked", "joint", "drained", "nofit", "settled", "repaired", "fallbacks", "reused")


def one_day(lib: Path, out: Path, day: str, G: int, workers: int, profile: str | None,
            params: dict | None = None, packer: str = "big-first") -> dict:
    from daily.build import BuildOptions, build

    n0, r0 = _count(lib), _last_rowid(lib)
    t0, c0 = time.perf_counter(), os.times()
    res = build(BuildOptions(day=day, library=lib, out_dir=out, size=G, secret=SECRET, force=True,
                             workers=workers, profile=profile, packer=packer, params=params),
                log=lambda _line: None)
    c1 = os.times()
    st = res.stitch_detail
    per_n = st.get("per_n", {})
    row = {"day": day, "status": res.status, "new_tiles": _count(lib) - n0, "tiles": _count(lib),
           "final_fill": st.get("final_fill"), "first_fill": st.get("first_fill"), "cp_calls": st.get("cp_calls"),
           "squares": sum(d["squares"] for d in per_n.values()),
           "wall_s": time.perf_counter() - t0,
           "cpu_s": (c1.user - c0.user) + (c1.system - c0.system)
           + (c1.children_user - c0.children_user) + (c1.children_system - c0.children_system)}
    for k in CAUSES:
        row[k] = sum(d.get(k, 0) for d in per_n.values())
    row["joint_by_n"] = {n: d.get("joint", 0) for n, d in per_n.items()}
    row["reused_by_n"] = {n: d.get("reused", 0) for n, d in per_n.items()}
    with sqlite3.connect(lib) as c:     # rows are appended: the night's are those past r0
        row["new_by_n"] = {str(n): k for n, k in c.execute(
            "SELECT n, count(*) FROM tiles WHERE rowid > ? GROUP BY n ORDER BY n", (r0,))}
    return row


def _count(lib: Path) -> int:
    if not lib.exists():
        return 0
    with sqlite3.connect(lib) as c:
        return c.execute("SELECT count(*) FROM tiles").fetchone()[0]


def _last_rowid(lib: Path) -> int:
    if not lib.exists():
        return 0
    with sqlite3.connect(lib) as c:
        return c.execute("SELECT coalesce(max(rowid), 0) FROM tiles").fetchone()[0]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--days", type=int, default=30)
    ap.add_argument("--G", type=int, default=301)
    ap.add_argument("--start", default="2027-01-01")
    ap.add_argument("--library", default=None, help="a library to copy as day 0 (default: empty)")
    ap.add_argument("--work", default="/tmp/tiles-bench-growth")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--json", default=None)
    ap.add_argument("--profile", default="human", help="difficulty profile, as the nightly job's (none: no profile)")
    ap.add_argument("--packer", default="big-first", help="packer of every night (default: big-first, the nightly's)")
    ap.add_argument("--params", default=None, help="packer params as JSON (e.g. other big-first fill weights)")
    args = ap.parse_args()
    if args.days < 1 or args.G < 21:
        ap.error("need --days >= 1 and --G >= 21")
    try:
        start = dt.date.fromisoformat(args.start)
    except ValueError:
        ap.error(f"--start: not an ISO day: {args.start!r}")
    try:
        params = None if args.params is None else json.loads(args.params)
    except json.JSONDecodeError as err:
        ap.error(f"--params: not JSON: {err}")
    from packers import check_request
    from tilelib.errors import BadInput
    try:
        check_request(args.packer, args.G, params)   # before any night: one line, not a traceback
    except BadInput as err:
        ap.error(f"--packer/--params: {err}")
    work = Path(args.work)
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    lib = work / "lib.sqlite"
    if args.library:
        src = Path(args.library)
        if not src.is_file():
            ap.error(f"--library: no such file: {src}")
        shutil.copyfile(src, lib)
    cpu = next((ln.split(":", 1)[1].strip() for ln in open("/proc/cpuinfo") if ln.startswith("model name")), "?")
    print(f"machine: {cpu}, {os.cpu_count()} cores, Python {platform.python_version()}; G = {args.G}, "
          f"{args.days} days from {start}, workers {args.workers}, profile {args.profile}, packer {args.packer}, params {params}; load at start {os.getloadavg()[0]:.1f}")
    rows = []
    print("\n| day | status | squares | new tiles | tiles | first fill | final fill | first misses | "
          "unchecked | window-aware tiles | reused | repaired | nofit+settled | CP-SAT calls | new by n (6/8/10/12/14/16) "
          "| CPU s | wall s |")
    print("|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|---:|")
    for k in range(args.days):
        day = (start + dt.timedelta(days=k)).isoformat()
        r = one_day(lib, work / "out", day, args.G, args.workers, None if args.profile == "none" else args.profile,
                    params, args.packer)
        rows.append(r)
        print(f"| {k + 1} | {r['status']} | {r['squares']:,} | {r['new_tiles']:,} | {r['tiles']:,} | "
              f"{r['first_fill']:.4f} | {r['final_fill']:.4f} | {r['misses_first']} | {r['unchecked']} | "
              f"{r['joint']} | {r['reused']} | {r['repaired']} | {r['nofit'] + r['settled']} | {r['cp_calls']:,} | "
              f"{'/'.join(str(r['new_by_n'].get(str(n), 0)) for n in range(6, 17, 2))} | "
              f"{r['cpu_s']:.1f} | {r['wall_s']:.1f} |", flush=True)
        if args.json:      # after every night: a long run that stops early keeps what it measured
            Path(args.json).write_text(json.dumps(rows, indent=1))
    if len(rows) >= 30:
        d5, d30 = rows[4]["new_tiles"], rows[29]["new_tiles"]
        print(f"\nday 30 / day 5 new tiles: {d30:,} / {d5:,} = {d30 / max(d5, 1):.2f} "
              f"(target <= 0.5 at final fill >= 0.995: day 30 fill {rows[29]['final_fill']:.4f})")
    print(f"load at end {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
