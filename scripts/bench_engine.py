"""Benchmark of the solver engine's counter: µs per count(k=2) on minimal unique puzzles, per n.

For each n in 6..16 it makes ``--per-n`` minimal unique puzzles (a random
solution, then greedy removal of givens in seeded random order while the
puzzle stays unique, using the C counter) and times on them:
  * C: ``engine.count_rows`` (the row-int entry point thinning uses) and
    ``engine.count`` (Puzzle in, numpy grids out);
  * Python: the reference counter (``impl="python"``);
  * nodes per count (identical for both, checked here too);
  * ``engine.backbone`` and ``engine.ladder.rate`` (C) per puzzle;
  * the greedy thinning pass that made the puzzle (all n² removal tests,
    count_rows k=2 each): ms per pass, the engine's share of making a tile.
Prints a Markdown table. One core; note other load on the machine when reading it.

    .venv/bin/python scripts/bench_engine.py [--per-n 20] [--seed 1] [--repeat 200]
"""

from __future__ import annotations

import os

# numpy's OpenBLAS threads spin on the second core and skew timings on a shared box
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import argparse  # noqa: E402
import statistics  # noqa: E402
import time  # noqa: E402

import engine  # noqa: E402
from engine import count_rows, rows_to_grid  # noqa: E402
from engine.ladder import rate  # noqa: E402
from tilelib.bits import Puzzle  # noqa: E402
from tilelib.rng import Stream  # noqa: E402


def random_solution_rows(n: int, stream: Stream) -> list[int]:
    """A random valid solution: give random cells random values (flipping a value that
    leaves no solution) until the puzzle is unique. Seeded; uses the C counter."""
    cells = [(r, c) for r in range(n) for c in range(n)]
    stream.shuffle(cells)
    vals, known = [0] * n, [0] * n
    for r, c in cells:
        b = 1 << (n - 1 - c)
        known[r] |= b
        if stream.randbelow(2):
            vals[r] |= b
        cnt, sols, _ = count_rows(n, vals, known, 2)
        if cnt == 0:
            vals[r] ^= b
            cnt, sols, _ = count_rows(n, vals, known, 2)
        if cnt == 1:
            return list(sols[0])
    raise AssertionError("a fully given consistent grid is unique")


def minimal_puzzle(n: int, stream: Stream, timing: list | None = None) -> Puzzle:
    """A minimal unique puzzle: remove givens in seeded random order while the count stays 1.

    If ``timing`` is a list, the seconds spent in the removal pass are appended to it."""
    sol = random_solution_rows(n, stream)
    known = [(1 << n) - 1] * n
    cells = [(r, c) for r in range(n) for c in range(n)]
    stream.shuffle(cells)
    t = time.perf_counter()
    for r, c in cells:
        trial = known[:]
        trial[r] &= ~(1 << (n - 1 - c))
        if count_rows(n, [v & k for v, k in zip(sol, trial, strict=True)], trial, 2, keep=0)[0] == 1:
            known = trial
    if timing is not None:
        timing.append(time.perf_counter() - t)
    return Puzzle.from_grid(rows_to_grid(sol, n), rows_to_grid(known, n))


def _time_per_call(fn, repeat: int) -> float:
    t = time.perf_counter()
    for _ in range(repeat):
        fn()
    return (time.perf_counter() - t) / repeat


def bench(per_n: int, seed: int, repeat: int) -> list[dict]:
    rows = []
    for n in range(6, 17, 2):
        stream = Stream(seed.to_bytes(8, "big"), f"bench-engine/{n}")
        thin: list[float] = []
        puzzles = [minimal_puzzle(n, stream, thin) for _ in range(per_n)]
        c_rows, c_api, py, nodes, bb, lad, given = [], [], [], [], [], [], []
        for p in puzzles:
            v, k = p.row_masks()
            res_c = count_rows(n, v, k, 2)
            res_p = count_rows(n, v, k, 2, impl="python")
            assert res_c == res_p and res_c[0] == 1, "C and Python disagree"
            nodes.append(res_c[2])
            given.append(int(p.known.sum()))
            c_rows.append(_time_per_call(lambda: count_rows(n, v, k, 2), repeat))
            c_api.append(_time_per_call(lambda: engine.count(p, 2), max(1, repeat // 4)))
            py.append(_time_per_call(lambda: count_rows(n, v, k, 2, impl="python"), max(1, repeat // 50)))
            bb.append(_time_per_call(lambda: engine.backbone(p), max(1, repeat // 20)))
            lad.append(_time_per_call(lambda: rate(p), max(1, repeat // 20)))
        rows.append(
            {
                "n": n,
                "given": statistics.mean(given),
                "nodes": statistics.mean(nodes),
                "nodes_max": max(nodes),
                "c_rows_us": 1e6 * statistics.mean(c_rows),
                "c_api_us": 1e6 * statistics.mean(c_api),
                "py_us": 1e6 * statistics.mean(py),
                "ratio": statistics.mean(py) / statistics.mean(c_rows),
                "backbone_us": 1e6 * statistics.mean(bb),
                "ladder_us": 1e6 * statistics.mean(lad),
                "thin_ms": 1e3 * statistics.mean(thin),
            }
        )
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--per-n", type=int, default=20)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--repeat", type=int, default=200)
    a = ap.parse_args()
    rows = bench(a.per_n, a.seed, a.repeat)
    print(f"{a.per_n} minimal unique puzzles per n (seed {a.seed}); means per puzzle\n")
    print(
        "| n | givens | nodes (mean / max) | C count_rows µs | C count() µs | Python µs | Py/C "
        "| backbone µs | ladder rate µs | thinning pass ms |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(
            f"| {r['n']} | {r['given']:.1f} | {r['nodes']:.1f} / {r['nodes_max']} | {r['c_rows_us']:.1f} | "
            f"{r['c_api_us']:.1f} | {r['py_us']:.0f} | {r['ratio']:.0f}× | {r['backbone_us']:.0f} | "
            f"{r['ladder_us']:.0f} | {r['thin_ms']:.2f} |"
        )


if __name__ == "__main__":
    main()
