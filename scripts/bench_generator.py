"""Benchmark the tile generator per n (6..16) and print markdown tables.

0. The CLI path against Unruly, side by side: CPU ms per whole tile as
   `tiles library generate` makes it (``make_tile_stats`` with the command's
   defaults: solution, thinning, canonical form, rating, features), median,
   p99 and max, and the same for Simon Tatham's Unruly generator (unique
   rows/columns, "normal") when ``--unruly PATH`` names a harness built by
   ``scripts/build_unruly_harness.sh`` from the public puzzles source. The two
   run interleaved in rounds in this one process run, so load from other jobs
   hits both alike; "ratio" = Unruly's median / ours (>= 1.0: at least as
   fast). Without ``--unruly`` the stored Unruly figures below are used, with
   a warning. ``--levels 2,3`` adds rows for target-level tiles (``--level``).
1. ms per generated tile for (m_max=1, seam_mask=0) — the job Simon Tatham's
   Unruly generator does (a random solution thinned to a unique puzzle) —
   and for (m_max(n), seam_mask=15). Columns split the time: random solution,
   thinning, ladder rating + features. "ratio" = Unruly's ms / ours (>= 1.0
   means at least as fast), for solution+thinning ("puzzle") and for the
   whole tile (with the ladder, which Unruly's difficulty check replaces).
2. CP-SAT completion ms with four sides fixed: edges taken from a random
   valid tile (always completable), and random valid lines per side (corners
   made consistent) with the share that are proven ``nofit``.

Times are CPU seconds of this process (``time.process_time``), one core, so
other jobs on the machine disturb them less than wall time; still, the
machine is shared — note contention when quoting.

Usage: .venv/bin/python scripts/bench_generator.py [--unruly PATH] [--count K] [--rounds R]
       [--levels 2,3] [--budget SECONDS] [--ns 6,8,...] [--seed HEX] [--cli-only]
"""

from __future__ import annotations

import argparse
import platform
import statistics
import subprocess
import sys
import time

import numpy as np
from machine import cpu_model  # noqa: E402  (scripts/machine.py)

from engine.ladder import rate
from generator.batch import tile_stream
from generator.complete import complete, side_cells
from generator.features import features, ladder_puzzle
from generator.make import GenParams, Targets, make_tile_stats
from generator.solution import random_rows, rows_to_grid
from generator.thin import thin
from generator.version import default_m_max
from tilelib.bits import int_line
from tilelib.rng import Stream
from tilelib.rules import valid_lines

# Unruly (C, -O2, distinct rows/columns, "normal", ~23% clues) on this machine kind, ms per puzzle
# (issue 14's side-by-side figures); used only when no harness is given.
UNRULY_MS = {6: 0.21, 8: 0.46, 10: 1.13, 12: 2.58, 14: 5.53, 16: 11.5}
NS = (6, 8, 10, 12, 14, 16)


def cpu() -> float:
    return time.process_time()


def pct(xs: list[float], q: float) -> float:
    """The q-quantile (nearest rank) of xs."""
    xs = sorted(xs)
    return xs[min(len(xs) - 1, max(0, int(round(q * len(xs))) - 1))]


def unruly_times(path: str, n: int, count: int, seed: str) -> tuple[list[float], list[int]]:
    """Per-puzzle CPU ms (and clue counts) of ``count`` Unruly puzzles of side n from the harness."""
    out = subprocess.run([path, str(n), str(count), seed], check=True, capture_output=True, text=True).stdout
    rows = [line.split() for line in out.splitlines() if line.strip()]
    return [float(r[0]) for r in rows], [int(r[1]) for r in rows]


def cli_path_times(params: GenParams, seed: bytes, start: int, count: int) -> tuple[list[float], list]:
    """CPU ms of tiles start..start+count-1 as `tiles library generate` makes them (same streams)."""
    ts, tiles = [], []
    for i in range(start, start + count):
        t0 = cpu()
        tile, _ = make_tile_stats(params, tile_stream(seed, i))
        ts.append(1000 * (cpu() - t0))
        tiles.append(tile)
    return ts, tiles


def bench_cli_vs_unruly(ns, seed: bytes, unruly: str | None, count: int, rounds: int, levels) -> None:
    """Section 0: the CLI path and Unruly, interleaved in rounds per n (see the module doc)."""
    load = subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()
    src = "measured in this run" if unruly else "STORED figures (no --unruly harness given)"
    print(f"### Whole tile on the CLI path vs Unruly ({src})\n")
    print(f"CPU ms per tile/puzzle, {count} each per n in {rounds} interleaved rounds; uptime at start: {load}\n")
    if not unruly:
        print(
            "**warning: Unruly was not run; its column holds the stored means, not a same-run median.**\n",
            file=sys.stderr,
        )
    head = (
        "| n | mode | ours median | p99 | max | p99/median | blank | ladder 1/2/3/4/5 "
        "| Unruly median | p99 | max | clues | ratio (median) |"
    )
    print(head)
    print("|---" * (head.count("|") - 1) + "|")
    modes = [("default", Targets())] + [(f"level {lv}", Targets(level=lv)) for lv in levels]
    for n in ns:
        runs = {m: ([], []) for m, _ in modes}
        u_ts: list[float] = []
        u_clues: list[int] = []
        per = max(1, count // rounds)
        for _m, tg in modes:  # warm-up outside the clock: tables, caches
            make_tile_stats(GenParams.make(n, targets=tg), Stream(seed, "warm-up"))
        for r in range(rounds):
            if unruly:
                ts, cl = unruly_times(unruly, n, per, f"{seed.hex()[:16]}-{n}-{r}")
                u_ts += ts
                u_clues += cl
            for m, tg in modes:
                ts, tiles = cli_path_times(GenParams.make(n, targets=tg), seed, r * per, per)
                runs[m][0].extend(ts)
                runs[m][1].extend(tiles)
        for m, _ in modes:
            ts, tiles = runs[m]
            med = statistics.median(ts)
            lad = [sum(1 for t in tiles if t.features.ladder == lv) for lv in (1, 2, 3, 4, 5)]
            blank = statistics.mean(t.features.blank for t in tiles)
            if unruly:
                um = statistics.median(u_ts)
                ucols = f"{um:.3f} | {pct(u_ts, 0.99):.3f} | {max(u_ts):.3f} | {statistics.mean(u_clues) / n**2:.3f}"
            else:
                um = UNRULY_MS[n]
                ucols = f"{um} (stored mean) | – | – | 0.23"
            print(
                f"| {n} | {m} | {med:.3f} | {pct(ts, 0.99):.3f} | {max(ts):.3f} | {pct(ts, 0.99) / med:.1f} "
                f"| {blank:.3f} | {'/'.join(map(str, lad))} | {ucols} | {um / med:.2f} |",
                flush=True,
            )
    print()


def bench_tiles(n: int, m_max: int, seam: int, seed: bytes, budget: float, min_k: int = 5, max_k: int = 2000) -> dict:
    """Generate tiles until ``budget`` CPU seconds pass; split the time into its stages."""
    root = Stream(seed, f"bench/{n}/{m_max}/{seam}")
    # Warm-up outside the clock: one-off tables (all 4140 grids for n=6, line
    # lists, column automata) and the engine's caches.
    make_tile_stats(GenParams.make(n, m_max, seam), Stream(seed, "warm-up"))
    t_sol = t_thin = t_feat = 0.0
    tiles = tries = counts = 0
    blanks = []
    start = cpu()
    while (cpu() - start < budget or tiles < min_k) and tiles < max_k:
        s = root.child(str(tries))
        tries += 1
        t0 = cpu()
        rows = random_rows(n, s.child("solution"))
        t1 = cpu()
        res = thin(n, rows, s.child("thin"), m_max=m_max, seam_mask=seam)
        t2 = cpu()
        t_sol += t1 - t0
        t_thin += t2 - t1
        if res is None:  # corner swap not pinned: a real generator redraws
            continue
        counts += res.counts
        sol, giv = rows_to_grid(rows, n), rows_to_grid(res.givens, n)
        lad = rate(ladder_puzzle(sol, giv, seam))
        features(sol, giv, seam, [rows_to_grid(x, n) for x in res.solutions], lad)
        t_feat += cpu() - t2
        tiles += 1
        blanks.append(1 - int(giv.sum()) / n**2)
    per = lambda x: 1000 * x / tiles  # noqa: E731
    return dict(
        tiles=tiles,
        tries=tries,
        sol=per(t_sol),
        thin=per(t_thin),
        feat=per(t_feat),
        puzzle=per(t_sol + t_thin),
        total=per(t_sol + t_thin + t_feat),
        counts=counts / tiles,
        blank=float(np.mean(blanks)),
    )


def _random_line_boundary(n: int, s: Stream) -> tuple[np.ndarray, np.ndarray]:
    """Four random valid lines as edges: top and bottom free, left/right drawn among the
    lines that agree with the corners already fixed (a side stays open if none does)."""
    lines = valid_lines(n)
    vals = np.zeros((n, n), dtype=np.uint8)
    known = side_cells(n, 1 | 4)
    vals[0, :] = int_line(s.choice(lines), n)
    vals[-1, :] = int_line(s.choice(lines), n)
    for col in (0, n - 1):
        fits = [v for v in lines if (v >> (n - 1)) & 1 == vals[0, col] and v & 1 == vals[-1, col]]
        if fits:
            vals[:, col] = int_line(s.choice(fits), n)
            known[:, col] = 1
    return vals, known


def bench_complete(n: int, seed: bytes, budget: float, min_k: int = 5, max_k: int = 200) -> dict:
    """CP-SAT completion ms: four sides from a valid tile, and four random valid lines."""
    root = Stream(seed, f"bench-complete/{n}")
    out = {}
    for kind in ("tile", "lines"):
        ts, nofit, k = [], 0, 0
        start = cpu()
        while (cpu() - start < budget / 2 or k < min_k) and k < max_k:
            s = root.child(f"{kind}/{k}")
            k += 1
            if kind == "tile":
                src = rows_to_grid(random_rows(n, s.child("src")), n)
                known = side_cells(n, 15)
                vals = src * known
            else:
                vals, known = _random_line_boundary(n, s.child("edges"))
            t0 = cpu()
            g = complete(n, vals, known, s.child("complete"))
            ts.append(cpu() - t0)
            nofit += g is None
        out[kind] = (1000 * float(np.mean(ts)), 1000 * float(np.max(ts)), nofit / k, k)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--budget", type=float, default=3.0, help="CPU seconds per configuration and n")
    ap.add_argument("--ns", default=",".join(map(str, NS)))
    ap.add_argument("--seed", default="00" * 32)
    ap.add_argument("--unruly", default=None, help="Unruly harness (scripts/build_unruly_harness.sh)")
    ap.add_argument("--count", type=int, default=400, help="tiles (and Unruly puzzles) per n in section 0")
    ap.add_argument("--rounds", type=int, default=8, help="interleaved rounds in section 0")
    ap.add_argument("--levels", default="", help="also time target-level tiles, e.g. 2,3")
    ap.add_argument("--cli-only", action="store_true", help="run section 0 only")
    a = ap.parse_args()
    seed = bytes.fromhex(a.seed)
    ns = [int(x) for x in a.ns.split(",")]
    print(
        f"machine: {cpu_model()}, python {platform.python_version()}, "
        f"CPU time per configuration ~{a.budget}s (process_time, one core)\n"
    )
    levels = [int(x) for x in a.levels.split(",") if x]
    bench_cli_vs_unruly(ns, seed, a.unruly, a.count, a.rounds, levels)
    if a.cli_only:
        return
    for label, cfg in (
        ("m_max=1, seam_mask=0 (Unruly's job)", lambda n: (1, 0)),
        ("m_max(n), seam_mask=15", lambda n: (default_m_max(n), 15)),
    ):
        print(f"### Tile generation, {label}\n")
        print(
            "| n | tiles | solution ms | thinning ms | counts/tile | ladder+features ms | puzzle ms | tile ms "
            "| blank | Unruly ms (stored) | ratio (puzzle) | ratio (tile) |"
        )
        print("|---|---|---|---|---|---|---|---|---|---|---|---|")
        for n in ns:
            m_max, seam = cfg(n)
            r = bench_tiles(n, m_max, seam, seed, a.budget)
            u = UNRULY_MS[n]
            print(
                f"| {n} | {r['tiles']} | {r['sol']:.3f} | {r['thin']:.3f} | {r['counts']:.0f} | {r['feat']:.2f} "
                f"| {r['puzzle']:.3f} | {r['total']:.2f} | {r['blank']:.3f} | {u} | {u / r['puzzle']:.2f} "
                f"| {u / r['total']:.3f} |",
                flush=True,
            )
        print()
    print("### CP-SAT seam-prefilled completion, four sides fixed\n")
    print("| n | tile edges: mean ms | max ms | random valid lines: mean ms | max ms | nofit share | samples |")
    print("|---|---|---|---|---|---|---|")
    for n in ns:
        c = bench_complete(n, seed, a.budget)
        t, li = c["tile"], c["lines"]
        assert t[2] == 0, "edges of a valid tile must always complete"
        print(
            f"| {n} | {t[0]:.1f} | {t[1]:.1f} | {li[0]:.1f} | {li[1]:.1f} | {100 * li[2]:.0f}% | {t[3]}+{li[3]} |",
            flush=True,
        )


if __name__ == "__main__":
    main()
