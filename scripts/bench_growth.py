"""The cost of the nights over time (issue 31): consecutive nights per policy, the whole commands.

Each night is what the cron example runs, each command in its own process (start-up included):
``tiles daily build --json`` with a ``file://`` remote (pull, build, push), then, for ``fresh``,
``tiles library generate --stock --nights K`` and ``tiles library push`` (the top-up, after the
board is stored). Every policy of ``--reuse`` starts from the same library (empty, or a copy of
``--library``; ``--synthetic 20000`` makes one of real generator tiles in the size mix of a real
drained library, ``scripts/scale_libs.py``), night by night alternately, so they share the
machine's state. Per night a markdown row is printed as soon as it is done:

build wall and CPU (the command and its forked workers), top-up CPU, drains, nofit, fallbacks,
final fill, zone share, clues, the stock after the top-up (distinct unspent solutions per n >= 10;
``DRY n`` when some n has none: a failure of the top-up), library rows and MB, KB pushed (the
remote's growth: the build's push and the top-up's), and the repeated share of the reward
(n >= 10, n = 6/8, all). At the end, a projection to night 365 from the measured nights: a
least-squares line through library rows, MB, build wall and top-up CPU per night (the second half
of the nights, past the start-up), and the stock's net change per night.

    .venv/bin/python scripts/bench_growth.py [--G 301] [--days 30] [--reuse fresh,any]
        [--library LIB | --synthetic 20000] [--stock-nights 3] [--workers 2] [--profile human]
        [--packer NAME] [--params JSON]
        [--work DIR] [--json FILE] [--start 2027-01-01]
    .venv/bin/python scripts/bench_growth.py --report FILE     # the projections of an earlier --json
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import resource
import shutil
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from machine import cpu_model  # noqa: E402  (scripts/machine.py)

SECRET = "bench-growth-secret"
HELD = ("10", "12", "14", "16")
COLUMNS = (
    "night",
    "policy",
    "build wall s",
    "build CPU s",
    "top-up CPU s",
    "drained",
    "nofit",
    "fallbacks",
    "final fill",
    "zone",
    "clues",
    "stock 10/12/14/16",
    "rows",
    "MB",
    "pushed KB",
    "rep. n>=10",
    "rep. n=6/8",
    "rep. all",
)


def run(tiles: Path, *args: str, env: dict | None = None) -> tuple[subprocess.CompletedProcess, float, float]:
    """One ``tiles`` command in its own process: (result, wall s, CPU s of it and its children)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    r = subprocess.run([str(tiles), *args], capture_output=True, text=True, env=dict(os.environ, **(env or {})))
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if r.returncode != 0:
        raise SystemExit(f"tiles {' '.join(args[:3])}: exit {r.returncode}: {r.stderr.strip()[-500:]}")
    return r, wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def tree_bytes(d: Path) -> int:
    return sum(p.stat().st_size for p in d.rglob("*") if p.is_file())


def night(tiles: Path, d: Path, day: str, args, policy: str) -> dict:
    """Build, then (fresh) top up and push; the night's figures."""
    lib, remote = d / "tiles.sqlite", d / "remote"
    env = {"TILES_SECRET": SECRET, "TILES_LIBRARY": str(lib), "TILES_REMOTE": remote.as_uri()}
    pushed0 = tree_bytes(remote)
    build = (
        [
            "daily",
            "build",
            "--date",
            day,
            "--size",
            str(args.G),
            "--out",
            str(d / "out"),
            "--reuse",
            policy,
            "--workers",
            str(args.workers),
            "--json",
            "--packer",
            args.packer,
        ]
        + (["--profile", args.profile] if args.profile else [])
        + (["--params", args.params] if args.params else [])
    )
    r, wall, cpu = run(tiles, *build, env=env)
    s = json.loads(r.stdout)
    top_cpu, stock = None, s["stock"]
    if policy == "fresh":
        t, _w, top_cpu = run(
            tiles,
            "library",
            "generate",
            "--stock",
            "--nights",
            str(args.stock_nights),
            "--workers",
            str(args.workers),
            "--seed",
            f"{day.replace('-', '')}{'0' * 56}",
            env=env,
        )
        run(tiles, "library", "push", env=env)
        st, _w, _c = run(tiles, "library", "stock", "--json", env=env)
        stock = json.loads(st.stdout)
    m = json.loads((d / "out" / f"{day}.json").read_text())["stats"]
    return {
        "day": day,
        "policy": policy,
        "wall": wall,
        "cpu": cpu,
        "topup_cpu": top_cpu,
        "drained": m["stitch"]["drained"],
        "nofit": m["stitch"]["nofit"],
        "fallbacks": m["stitch"]["fallbacks"],
        "fill": m["stitch"]["final_fill"],
        "zone": m["zone_fraction"],
        "clues": m["clues"],
        "tiles": m["tiles"],
        "stock": {n: stock["per_n"][n]["solutions"] for n in HELD},
        "emptied": s["stock"]["empty"],
        "drawn": {n: s["stock"]["per_n"][n]["drawn_per_night"] for n in HELD},
        "rows": _rows(lib),
        "bytes": lib.stat().st_size,
        "pushed": tree_bytes(remote) - pushed0,
        "repeated": s["fairness"]["repeated_share"],
    }


def _rows(lib: Path) -> int:
    import sqlite3

    with sqlite3.connect(lib) as c:
        return c.execute("SELECT count(*) FROM tiles").fetchone()[0]


def cells(k: int, g: dict) -> list:
    dry = [n for n in HELD if not g["stock"][n]] if g["policy"] == "fresh" else []  # any: no stock to keep
    stock = "/".join(f"{g['stock'][n]:,}" for n in HELD) + (f" DRY {','.join(dry)}" if dry else "")
    rep = g["repeated"]
    return [
        k,
        g["policy"],
        f"{g['wall']:.1f}",
        f"{g['cpu']:.1f}",
        "—" if g["topup_cpu"] is None else f"{g['topup_cpu']:.1f}",
        g["drained"],
        g["nofit"],
        g["fallbacks"],
        f"{g['fill']:.4f}",
        f"{g['zone']:.4f}",
        g["clues"],
        stock,
        f"{g['rows']:,}",
        f"{g['bytes'] / 1e6:.1f}",
        f"{g['pushed'] / 1e3:,.0f}",
        f"{100 * rep['held']:.1f}%",
        f"{100 * rep['small']:.1f}%",
        f"{100 * rep['all']:.1f}%",
    ]


def fit(xs: list[float], ys: list[float]) -> tuple[float, float]:
    """Least-squares line (intercept, slope) through (xs, ys)."""
    n = len(xs)
    mx, my = sum(xs) / n, sum(ys) / n
    var = sum((x - mx) ** 2 for x in xs)
    slope = sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / var if var else 0.0
    return my - slope * mx, slope


def projection(rows: list[dict], k_nights: int, target: int = 365) -> list[str]:
    """Lines projecting one policy's measured nights to night ``target`` (module doc): a line
    through the second half of the nights for rows, MB and build wall; the stock and the top-up
    as the top-up's rule holds them (``generator.topup``: K nights of draws, at least the floor)."""
    from generator.topup import floor

    k = len(rows)
    tail = list(range(k // 2, k)) if k >= 4 else list(range(k))
    xs = [i + 1 for i in tail]
    out = []
    for label, key, scale, unit in (
        ("library rows", "rows", 1, ""),
        ("library MB", "bytes", 1e-6, " MB"),
        ("build wall", "wall", 1, " s"),
    ):
        ys = [rows[i][key] * scale for i in tail]
        a, b = fit(xs, ys)
        out.append(
            f"{label}: {ys[-1]:,.1f}{unit} on night {k}, {b:+,.2f}{unit} a night -> "
            f"{max(0.0, a + b * target):,.1f}{unit} on night {target}"
        )
    topped = rows[-1]["topup_cpu"] is not None
    drawn = rows[-1]["drawn"]
    for n in HELD:
        first, last = rows[0]["stock"][n], rows[-1]["stock"][n]
        per = (last - first) / max(1, k - 1)
        if topped:
            hold = max(floor(int(n)), -(-k_nights * (drawn[n] or 0) // 1))
            out.append(
                f"stock n={n}: {first:,} -> {last:,} ({per:+,.1f} a night); drawn {drawn[n] or 0:,.0f} a night, "
                f"replaced by the top-up each night (never below {hold:,.0f}: {k_nights} nights of draws, "
                f"floor {floor(int(n))}); it grows by what the drains leave unplaced"
            )
        else:
            out.append(
                f"stock n={n}: {first:,} -> {last:,} ({per:+,.1f} a night) -> "
                f"{max(0, last + per * (target - k)):,.0f} on night {target}"
            )
    if topped:
        cpu = sorted(r["topup_cpu"] for r in rows)
        out.append(
            f"top-up CPU: median {cpu[len(cpu) // 2]:.1f} s, max {cpu[-1]:.1f} s; it makes what a night "
            f"draws: {sum((drawn[n] or 0) for n in HELD):,.0f} tiles a night now, flat while the draw is"
        )
    return out


def _synthetic(path: Path, size: int, workers: int) -> None:
    """A library of ``size`` real generator tiles (scripts/scale_libs.py's first ``size`` slots)."""
    import scale_libs

    from tilelib.store import Library

    if path.exists():
        scale_libs._without_statistics(path)
        return
    tmp = path.with_name(path.name + ".partial")
    tmp.unlink(missing_ok=True)
    Library.create(tmp).close()
    conn = scale_libs._connect(tmp)
    with scale_libs._pool(workers) as pool:
        chunks = pool.imap(scale_libs._real_chunk, ((a, min(a + 250, size)) for a in range(0, size, 250)))
        scale_libs._append(conn, chunks, 0, size, print, path.name)
    conn.close()
    tmp.replace(path)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--G", type=int, default=301)
    ap.add_argument("--days", type=int, default=30)
    ap.add_argument("--reuse", default="fresh,any", help="policies, comma-separated: fresh, any")
    ap.add_argument("--library", help="start from a copy of this library (default: empty)")
    ap.add_argument("--synthetic", type=int, help="start from a library of this many generator tiles")
    ap.add_argument("--stock-nights", type=int, default=3, help="the top-up's --nights")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--profile", default="human", help="the build's --profile ('' for none)")
    ap.add_argument("--packer", default="big-first", help="the build's --packer")
    ap.add_argument("--params", help="the build's --params (JSON)")
    ap.add_argument("--work", default="/tmp/tiles-bench-growth")
    ap.add_argument("--json", help="write every night's figures here")
    ap.add_argument("--start", default="2027-01-01")
    ap.add_argument("--report", help="print the projections of an earlier --json file and stop")
    args = ap.parse_args()
    if args.report:
        for p, rows in json.loads(Path(args.report).read_text()).items():
            print(f"\nprojection, {p}:")
            for line in projection(rows, args.stock_nights):
                print(f"- {line}")
        return
    policies = [p for p in args.reuse.split(",") if p]
    work = Path(args.work)
    for p in policies:
        shutil.rmtree(work / p, ignore_errors=True)
    tiles = Path(sys.executable).with_name("tiles")
    start_lib = Path(args.library) if args.library else None
    if args.synthetic:
        start_lib = work / f"synthetic-{args.synthetic}.sqlite"
        t0 = time.perf_counter()
        _synthetic(start_lib, args.synthetic, args.workers)
        print(f"start library: {args.synthetic:,} generator tiles ({time.perf_counter() - t0:.0f} s)")
    for p in policies:
        d = work / p
        (d / "remote").mkdir(parents=True)
        if start_lib is not None:
            shutil.copyfile(start_lib, d / "tiles.sqlite")
            run(
                tiles,
                "library",
                "push",
                env={"TILES_LIBRARY": str(d / "tiles.sqlite"), "TILES_REMOTE": (d / "remote").as_uri()},
            )
    print(
        f"G = {args.G}, {args.packer}, {args.days} nights, {', '.join(policies)}, from "
        f"{'an empty library' if start_lib is None else f'{_rows(start_lib):,} tiles'}; top-up --nights "
        f"{args.stock_nights}; {cpu_model()}, {os.cpu_count()} cores; {dt.date.today()}\n"
    )
    print("| " + " | ".join(COLUMNS) + " |")
    print("|" + "---|" * len(COLUMNS), flush=True)
    got: dict[str, list[dict]] = {p: [] for p in policies}
    day0 = dt.date.fromisoformat(args.start)
    t_all = time.perf_counter()
    for k in range(1, args.days + 1):
        day = (day0 + dt.timedelta(days=k - 1)).isoformat()
        for p in policies:
            g = night(tiles, work / p, day, args, p)
            got[p].append(g)
            print("| " + " | ".join(str(x) for x in cells(k, g)) + " |", flush=True)
            if args.json:
                Path(args.json).write_text(json.dumps(got, indent=1))
    print(f"\n{args.days} nights x {len(policies)} policies in {(time.perf_counter() - t_all) / 60:.1f} min")
    for p in policies:
        print(f"\nprojection, {p}:")
        for line in projection(got[p], args.stock_nights):
            print(f"- {line}")


if __name__ == "__main__":
    main()
