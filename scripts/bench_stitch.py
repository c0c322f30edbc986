"""Benchmark the stitcher (FORMAT §8): cold library, then warm runs on later days' seeds.

    .venv/bin/python scripts/bench_stitch.py [--lib FILE] [--plan 301:1,301:6,1000:1] [--speed-G 1000]
    .venv/bin/python scripts/bench_stitch.py --warm-lib FILE [--days 2,3,4] [--packers big-first,grown]

``--plan`` lists runs as G:days (big-first, with the drain). The library starts empty unless
``--lib`` names an existing file (then the runs continue growing it). Per run: squares,
placements/s excluding the drain and the ledger (first pass + retries + fallback lookups),
first-pass and final hit rate and fill, drained tiles and drain seconds per tile, nofit /
settled / failed, zone fraction after fallback. Then a speed run (``--speed-G``, a later day,
no drain) with the in-memory index and with per-query SQLite, and the curve of first-pass
hit rate per n against the library size of that n before each run. Prints markdown.

``--warm-lib FILE`` times placement only: per packer, one warm-up stitch (caches), then one
drain-off stitch per day, each on a fresh copy of FILE (so every run starts from the same
library), at ``--speed-G``; it prints placements/s by the stats' wall clock, the stitch's CPU
seconds and the load average (the machine is shared), and skips everything else. Its ``path``
column says whether the C twin ``stitcher._core`` ran (else the Python reference: not built).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from machine import cpu_model  # noqa: E402  (scripts/machine.py)

from packers import make_packing  # noqa: E402
from packers.packing import validate_packing  # noqa: E402
from stitcher.index import MemoryIndex, SqlIndex  # noqa: E402
from stitcher.index import _core as stitcher_core  # noqa: E402  (None: the Python reference path ran)
from stitcher.stitch import StitchOptions, stitch  # noqa: E402
from tilelib.errors import TilesError  # noqa: E402
from tilelib.rng import Stream  # noqa: E402
from tilelib.store import Library  # noqa: E402

NS = (6, 8, 10, 12, 14, 16)


def day_seed(d: int) -> bytes:
    return bytes([d % 256]) * 31 + bytes([d // 256])


def per_n_sizes(lib) -> dict[int, int]:
    return {n: lib.count_tiles(n) for n in NS}


def run_row(label: str, G: int, day: int, lib, drain=True, index=None) -> tuple[dict, dict]:
    sizes = per_n_sizes(lib)
    packing = make_packing("big-first", G, day_seed(day))
    t0 = time.perf_counter()
    res = stitch(packing, lib, Stream(day_seed(day), "stitch"), StitchOptions(drain=drain), index=index)
    wall = time.perf_counter() - t0
    validate_packing(res.packing, G - 1)
    st = res.stats
    sec = st.seconds
    sq = len(packing.squares)
    hits1 = st.total("hits_first")
    drained = lib.count_tiles() - sum(sizes.values())  # new library tiles made by this run
    row = {
        "run": label,
        "G": G,
        "day": day,
        "lib": sum(sizes.values()),
        "squares": sq,
        "wall s": round(wall, 1),
        "place s": round(sec["place"], 2),
        "placements/s": round(st.placements / sec["place"]) if sec["place"] else 0,
        "index s": round(sec["index"], 2),
        "ledger s": round(sec["ledger"], 2),
        "hit 1st": f"{hits1 / sq:.3f}",
        "fill 1st": f"{st.first_fill:.4f}",
        "final fill": f"{st.final_fill:.4f}",
        "new tiles": drained,
        "drain s/tile": round(sec["drain"] / drained, 3) if drained else "-",
        "nofit": st.total("nofit"),
        "settled": st.total("settled"),
        "failed": st.total("failed"),
        "repaired": st.total("repaired"),
        "fallbacks": st.total("fallbacks"),
        "zone after": f"{st.zone_fraction_after:.4f}",
    }
    curve = {}
    for n in NS:
        d = st.per_n.get(n)
        if d and d["hits_first"] + d["misses_first"]:
            curve[n] = (
                sizes[n],
                d["hits_first"] / (d["hits_first"] + d["misses_first"]),
                d["hits_first"] + d["misses_first"],
            )
    return row, curve


def table(rows: list[dict]) -> str:
    keys = list(rows[0])
    out = ["| " + " | ".join(keys) + " |", "|" + "---|" * len(keys)]
    out += ["| " + " | ".join(str(r[k]) for k in keys) + " |" for r in rows]
    return "\n".join(out)


def warm_copies(path: str, G: int, days: list[int], packers: list[str]) -> None:
    """Drain-off stitches on fresh copies of one library (see the module doc)."""
    import shutil

    print(
        f"# bench_stitch --warm-lib\n\nmachine: {cpu_model()}, {os.cpu_count()} cores (shared); library {path}, G={G}\n"
    )
    rows = []
    for name in packers:
        for k, day in enumerate([days[0] - 1] + days):
            tmp = tempfile.mkdtemp()
            copy = os.path.join(tmp, "lib.sqlite")
            shutil.copy(path, copy)
            lib = Library.open(copy)
            packing = make_packing(name, G, day_seed(day))
            c0 = time.process_time()
            res = stitch(packing, lib, Stream(day_seed(day), "stitch"), StitchOptions(drain=False))
            cpu = time.process_time() - c0
            lib.close()
            shutil.rmtree(tmp)
            if k == 0:
                continue  # warm-up: process-level caches
            st = res.stats
            rows.append(
                {
                    "packer": name,
                    "day": day,
                    "path": "C" if stitcher_core is not None else "python",
                    "placements": st.placements,
                    "place s": round(st.seconds["place"], 3),
                    "placements/s": round(st.placements / st.seconds["place"]),
                    "stitch cpu s": round(cpu, 3),
                    "load": round(os.getloadavg()[0], 2),
                }
            )
            print(table([rows[-1]]).splitlines()[-1] if len(rows) > 1 else table([rows[-1]]), flush=True)
    print("\n" + table(rows))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--lib", default=None)
    ap.add_argument("--plan", default="301:1,301:4,1000:1")
    ap.add_argument("--speed-G", type=int, default=1000)
    ap.add_argument("--first-day", type=int, default=0)
    ap.add_argument("--warm-lib", default=None)
    ap.add_argument("--days", default="2,3,4")
    ap.add_argument("--packers", default="big-first,grown")
    a = ap.parse_args()
    if a.warm_lib:
        try:
            Library.open(a.warm_lib).close()  # a clear error for a missing file or a non-library
        except TilesError as e:
            ap.error(str(e))
        warm_copies(a.warm_lib, a.speed_G, [int(d) for d in a.days.split(",")], a.packers.split(","))
        return
    path = a.lib or os.path.join(tempfile.mkdtemp(), "bench.sqlite")
    lib = Library.create(path)
    print(
        f"# bench_stitch\n\nmachine: {cpu_model()}, {os.cpu_count()} cores (shared with other "
        f"helpers: timings are noisy); library {path}\n",
        flush=True,
    )
    rows, curves = [], []
    day = a.first_day
    for part in filter(None, a.plan.split(",")):
        G, days = (int(v) for v in part.split(":"))
        for _ in range(days):
            label = "cold" if lib.count_tiles() == 0 else "warm"
            row, curve = run_row(label, G, day, lib)
            rows.append(row)
            curves.append(curve)
            print(table([row]).splitlines()[-1] if len(rows) > 1 else table([row]), flush=True)
            day += 1
    if rows:
        print("\n## Runs\n")
        print(table(rows))
    # speed: a later day, no drain, both indexes
    if a.speed_G:
        speed = []
        for name, make_index in (
            ("memory", lambda: MemoryIndex.load(lib.conn, NS)),
            ("sqlite", lambda: SqlIndex(lib.conn)),
        ):
            t0 = time.perf_counter()
            idx = make_index()
            load = time.perf_counter() - t0
            row, _ = run_row(f"speed/{name}", a.speed_G, day, lib, drain=False, index=idx)
            row["index s"] = round(load, 2)
            speed.append(row)
        print("\n## Placement speed (no drain, same library, same day)\n")
        print(table(speed))
    print("\n## First-pass hit rate per n against library tiles of that n (before the run)\n")
    print("| run | " + " | ".join(f"n={n}: tiles → hit (squares)" for n in NS) + " |")
    print("|---|" + "---|" * len(NS))
    for r, c in zip(rows, curves, strict=True):
        cells = [f"{c[n][0]} → {c[n][1]:.2f} ({c[n][2]})" if n in c else "-" for n in NS]
        print(f"| {r['run']} G={r['G']} day {r['day']} | " + " | ".join(cells) + " |")
    for n in NS:
        reached = [c[n][0] for c in curves if n in c and c[n][1] >= 0.95]
        print(
            f"- n={n}: "
            + (
                f"95% first-pass hits first seen with {min(reached)} tiles"
                if reached
                else "95% first-pass hits not reached in these runs"
            )
        )


if __name__ == "__main__":
    main()
