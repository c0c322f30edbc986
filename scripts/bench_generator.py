"""Benchmark the tile generator per n (6..16) and print markdown tables.

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

Usage: .venv/bin/python scripts/bench_generator.py [--budget SECONDS] [--ns 6,8,...] [--seed HEX]
"""

from __future__ import annotations

import argparse
import platform
import time

import numpy as np

from engine.ladder import rate
from generator.complete import complete, side_cells
from generator.features import features, ladder_puzzle
from generator.make import GenParams, make_tile_stats
from generator.solution import random_rows, rows_to_grid
from generator.thin import thin
from generator.version import default_m_max
from tilelib.bits import int_line
from tilelib.rng import Stream
from tilelib.rules import valid_lines

# Unruly (C, -O2, distinct rows/columns, "normal", ~23% clues) on this machine kind, ms per puzzle.
UNRULY_MS = {6: 0.14, 8: 0.40, 10: 0.98, 12: 2.27, 14: 4.76, 16: 9.46}
NS = (6, 8, 10, 12, 14, 16)


def cpu_model() -> str:
    """The CPU model name from /proc/cpuinfo (what `lscpu` shows), else the platform's guess."""
    try:
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def cpu() -> float:
    return time.process_time()


def bench_tiles(n: int, m_max: int, seam: int, seed: bytes, budget: float, min_k: int = 5,
                max_k: int = 2000) -> dict:
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
        if res is None:           # corner swap not pinned: a real generator redraws
            continue
        counts += res.counts
        sol, giv = rows_to_grid(rows, n), rows_to_grid(res.givens, n)
        lad = rate(ladder_puzzle(sol, giv, seam))
        features(sol, giv, seam, [rows_to_grid(x, n) for x in res.solutions], lad)
        t_feat += cpu() - t2
        tiles += 1
        blanks.append(1 - int(giv.sum()) / n ** 2)
    per = lambda x: 1000 * x / tiles  # noqa: E731
    return dict(tiles=tiles, tries=tries, sol=per(t_sol), thin=per(t_thin), feat=per(t_feat),
                puzzle=per(t_sol + t_thin), total=per(t_sol + t_thin + t_feat),
                counts=counts / tiles, blank=float(np.mean(blanks)))


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
    a = ap.parse_args()
    seed = bytes.fromhex(a.seed)
    ns = [int(x) for x in a.ns.split(",")]
    print(f"machine: {cpu_model()}, python {platform.python_version()}, "
          f"CPU time per configuration ~{a.budget}s (process_time, one core)\n")
    for label, cfg in (("m_max=1, seam_mask=0 (Unruly's job)", lambda n: (1, 0)),
                       ("m_max(n), seam_mask=15", lambda n: (default_m_max(n), 15))):
        print(f"### Tile generation, {label}\n")
        print("| n | tiles | solution ms | thinning ms | counts/tile | ladder+features ms | puzzle ms | tile ms "
              "| blank | Unruly ms | ratio (puzzle) | ratio (tile) |")
        print("|---|---|---|---|---|---|---|---|---|---|---|---|")
        for n in ns:
            m_max, seam = cfg(n)
            r = bench_tiles(n, m_max, seam, seed, a.budget)
            u = UNRULY_MS[n]
            print(f"| {n} | {r['tiles']} | {r['sol']:.3f} | {r['thin']:.3f} | {r['counts']:.0f} | {r['feat']:.2f} "
                  f"| {r['puzzle']:.3f} | {r['total']:.2f} | {r['blank']:.3f} | {u} | {u / r['puzzle']:.2f} "
                  f"| {u / r['total']:.3f} |", flush=True)
        print()
    print("### CP-SAT seam-prefilled completion, four sides fixed\n")
    print("| n | tile edges: mean ms | max ms | random valid lines: mean ms | max ms | nofit share | samples |")
    print("|---|---|---|---|---|---|---|")
    for n in ns:
        c = bench_complete(n, seed, a.budget)
        t, li = c["tile"], c["lines"]
        assert t[2] == 0, "edges of a valid tile must always complete"
        print(f"| {n} | {t[0]:.1f} | {t[1]:.1f} | {li[0]:.1f} | {li[1]:.1f} | {100 * li[2]:.0f}% | {t[3]}+{li[3]} |",
              flush=True)


if __name__ == "__main__":
    main()
