"""Benchmark the referee at G=1000: verify (per step), frontier propagation, backbone cost per tile, clues.

Until the stitcher fills real packings, this builds a SYNTHETIC board with the
real tile-size mix of a big-first G=1000 packing (~60% n=6 … 2.5% n=16):
horizontal bands of one square size each, separated by 1-unit zone rows
(so bands share no seams; a band's top and bottom rows are zone-given), each
band of n <= 12 filled left to right with generated tiles whose left column
continues the previous tile's right column; bands of n = 14, 16 have 1-unit
zone gaps between squares (see CHAIN_MAX_S). Tiles are real: a random valid grid (table
draw when no column is fixed, else the engine's first completion of the
fixed left column plus the top row of a random valid grid), thinned by ``generator.thin`` with
seam_mask 15 and the default m_max, with ladder features left at 0 (the
ladder is not part of default verification). The board and library are
cached under --cache so repeated runs time only the referee.

Prints a table: seconds per verify step, engine calls, backbone cost per call
by n, rounds, clues added, status. Run on a quiet machine; note contention.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import platform
import subprocess
import sys
import time
from pathlib import Path
from types import SimpleNamespace

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from engine import backbone_rows, count_rows  # noqa: E402
from generator.features import features  # noqa: E402
from generator.solution import random_rows  # noqa: E402
from generator.thin import thin  # noqa: E402
from generator.version import default_m_max  # noqa: E402
from packers.packing import Packing, group_zones, validate_packing  # noqa: E402
from referee import frontier as fr  # noqa: E402
from referee.board import build_board  # noqa: E402
from referee.manifest import Manifest, from_json  # noqa: E402
from referee.verify import verify  # noqa: E402
from tilelib.bits import int_line  # noqa: E402
from tilelib.rng import Stream  # noqa: E402
from tilelib.store import Library  # noqa: E402
from tilelib.tile import Tile  # noqa: E402

# bands per side s, scaled from big-first G=1000 tile counts per n
BANDS = {5: 47, 7: 21, 9: 16, 11: 9, 13: 13, 15: 6}
CHAIN_MAX_S = 11
"""Bands of squares up to this side are chained (neighbours share a column); bigger squares get
1-unit zone gaps, because the engine's first-solution search from a bare column has a heavy tail at
n >= 14 (seconds to minutes) and CP-SAT completion is too slow for thousands of bench tiles."""
NO_LADDER = SimpleNamespace(ladder=0, bifurcations=0, used_unique=False, needs_unique=False, needs_bifurcation=False)


def band_packing(G: int, stream: Stream) -> Packing:
    """Bands of equal squares, sizes in a seeded order, 1-unit zone rows between bands."""
    P = G - 1
    order = [s for s, k in BANDS.items() for _ in range(k)]
    stream.shuffle(order)
    squares, rects, y = [], [], 0
    for s in order:
        if y + s > P:
            break
        step = s if s <= CHAIN_MAX_S else s + 1  # big squares stand apart: 1-unit zone gaps
        k = (P + step - s) // step
        squares += [(i * step, y, s) for i in range(k)]
        if step > s:
            rects += [(i * step + s, y, 1, s) for i in range(k - 1)]
        end = (k - 1) * step + s
        if end < P:
            rects.append((end, y, P - end, s))
        y += s
        if y < P:
            rects.append((0, y, P, 1))
            y += 1
    if y < P:
        rects.append((0, y, P, P - y))
    return Packing(
        P=P, squares=tuple(squares), zones=group_zones(rects), seed_tile=0, name="bench-bands", version=0, params={}
    )


def grid_of(rows, n):
    return np.array([int_line(r, n) for r in rows], dtype=np.uint8)


def make_tile_left(n: int, left: list[int] | None, stream: Stream) -> Tile:
    """A thinned tile whose column 0 equals ``left`` (cells top→bottom), or any tile if None."""
    for attempt in range(10**6):
        r = random_rows(n, stream.child(f"grid/{attempt}"))
        if left is not None:
            # left column fixed; top row taken from a random valid grid (its first cell from the column)
            g = grid_of(r, n)
            known = np.zeros((n, n), np.uint8)
            known[:, 0] = 1
            known[0, :] = 1
            vals = g.copy()
            vals[:, 0] = left
            vals *= known
            w = 1 << np.arange(n - 1, -1, -1)
            c, sols, _ = count_rows(n, (vals.astype(np.int64) @ w).tolist(), (known.astype(np.int64) @ w).tolist(), 1)
            if not c:
                continue
            r = list(sols[0])
        res = thin(n, r, stream.child(f"thin/{attempt}"), m_max=default_m_max(n), seam_mask=15)
        if res is None:
            continue
        sol, giv = grid_of(r, n), grid_of(res.givens, n)
        feats = features(sol, giv, 15, [grid_of(s, n) for s in res.solutions], NO_LADDER)
        return Tile.from_grids(sol, giv, 15, feats)
    raise RuntimeError("no tile")


def build(G: int, cache: Path, seed: bytes) -> tuple[Manifest, Path]:
    cache.mkdir(parents=True, exist_ok=True)
    mpath, lpath = cache / f"bench-{G}.json", cache / f"bench-{G}.sqlite"
    if mpath.exists() and lpath.exists():
        return from_json(mpath.read_bytes()), lpath
    lpath.unlink(missing_ok=True)
    st = Stream(seed, "bench-referee")
    packing = band_packing(G, st.child("pack"))
    validate_packing(packing, packing.P)
    hashes, ts = [], []
    t0 = time.time()
    with Library.create(lpath) as lib:
        prev_right, prev_end = None, None
        for i, (x0, y0, s) in enumerate(packing.squares):
            n = s + 1
            left = prev_right if prev_end == (y0, x0) else None
            tile = make_tile_left(n, left, st.child(f"tile/{i}"))
            prev_right, prev_end = list(tile.solution_grid[:, -1]), (y0, x0 + s)
            h, t = lib.insert(tile)
            hashes.append(h)
            ts.append(t)
            if i % 2000 == 0:
                print(f"  built {i}/{len(packing.squares)} tiles, {time.time() - t0:.0f}s", file=sys.stderr)
    m = Manifest(
        day="2026-11-29",
        seed_commit=hashlib.sha256(seed).hexdigest(),
        packing=packing,
        hashes=tuple(hashes),
        transforms=tuple(ts),
        status="frontier",
    )
    with Library.open(lpath) as lib:
        b = build_board(m, lib)
        clues = fr.add_clues(b)
    m = m.with_clues(clues)
    mpath.write_text(m.to_json())
    return m, lpath


def per_call_costs(board, f0) -> dict:
    """Backbone µs per call by n, on each tile's window under the board givens (the first round)."""
    out: dict[int, list[float]] = {}
    for i in range(len(board.squares)):
        rs, cs = board.window(i)
        kw = f0.known[rs, cs]
        if kw.all():
            continue
        n = kw.shape[0]
        w = 1 << np.arange(n - 1, -1, -1)
        vv = (np.where(kw, board.solution[rs, cs], 0).astype(np.int64) @ w).tolist()
        kk = (kw.astype(np.int64) @ w).tolist()
        t = time.perf_counter()
        backbone_rows(n, vv, kk)
        out.setdefault(n, []).append(time.perf_counter() - t)
    return {
        n: (len(v), 1e6 * float(np.mean(v)), 1e6 * float(np.percentile(v, 99)), 1e6 * max(v))
        for n, v in sorted(out.items())
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", type=int, default=1000)
    ap.add_argument("--cache", type=Path, default=Path(".bench-referee"))
    ap.add_argument("--manifest", type=Path, help="verify this manifest instead of the synthetic board")
    ap.add_argument("--library", type=Path)
    args = ap.parse_args()
    cpu = next(
        (
            ln.split(":", 1)[1].strip()
            for ln in subprocess.run(["lscpu"], capture_output=True, text=True).stdout.splitlines()
            if ln.startswith("Model name")
        ),
        platform.processor(),
    )
    print(f"machine: {cpu}, python {platform.python_version()}")
    if args.manifest:
        m, lpath = from_json(args.manifest.read_bytes()), args.library
    else:
        t0 = time.time()
        m, lpath = build(args.size, args.cache, bytes(32))
        print(f"synthetic board ready in {time.time() - t0:.1f}s")
    with Library.open(lpath) as lib:
        t0 = time.perf_counter()
        rep = verify(m, lib)
        total = time.perf_counter() - t0
        board = build_board(m, lib)
    print(
        f"\nG={m.G}: {rep.tiles} tiles ({rep.distinct_tiles} distinct), {len(m.clues)} clues "
        f"({100 * len(m.clues) / rep.tiles:.2f} per 100 tiles), status {rep.status}, {rep.rounds} rounds"
    )
    print("\n| verify step | seconds |\n|---|---:|")
    for k, v in rep.timings.items():
        print(f"| {k} | {v:.2f} |")
    print(f"| **total** | **{total:.2f}** |")
    print(
        f"\nfrontier: {rep.engine_calls} backbone calls, {rep.engine_nodes} nodes, "
        f"{1e6 * rep.timings['frontier'] / max(rep.engine_calls, 1):.0f} µs per call all-in"
    )
    f0 = fr.start(board.with_clues(()))
    print("\n| n | first-round calls | mean µs | p99 µs | max µs |\n|---:|---:|---:|---:|---:|")
    for n, (k, mean, p99, mx) in per_call_costs(board, f0).items():
        print(f"| {n} | {k} | {mean:.0f} | {p99:.0f} | {mx:.0f} |")
    t0 = time.perf_counter()
    f = fr.propagate(fr.start(board.with_clues(())))
    t1 = time.perf_counter()
    left = f.unknown_count()
    clues = fr.add_clues(board.with_clues(()), f)
    t2 = time.perf_counter()
    print(
        f"\nadd_clues from no clues: propagation {t1 - t0:.2f}s ({left} cells left), "
        f"clue placement {t2 - t1:.2f}s, {len(clues)} clues"
    )
    print(json.dumps({"G": m.G, "tiles": rep.tiles, "verify_s": round(total, 2), "timings": rep.timings}))


if __name__ == "__main__":
    main()
