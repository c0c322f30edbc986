"""Benchmark the CP-SAT models of the rules as the product builds and solves them.

    .venv/bin/python scripts/bench_cpsat.py [--count K] [--ns 6,8,...] [--days D] [--size G] [--seed HEX]

Two sets of models, each built by ``generator.complete.completion_model`` or
``stitcher.joint.joint_model`` and solved by ``RulesModel.solve``:

* **complete, n = 6..16**: ``--count`` seeded boundaries per n, as a drained miss shows them:
  1-4 fixed sides (mask drawn), half taken from one random valid tile (always completable),
  half each side from its own random tile (often not: ``nofit``).
* **joint windows**: every window-aware model (square + unplaced neighbours, and repairs' groups)
  of ``--days`` seeded big-first G = ``--size`` stitches growing a library from empty, captured
  from the real stitcher's calls; only the models that pass ``joint._lines_completable`` reach
  CP-SAT, and only those are timed.

Per set: models, build ms and solve ms (median / p99 / max, CPU time of this process), the
total, and how many had no completion. Every grid found must be a valid completion of its
boundary (exit 1 otherwise). Prints markdown. (The frozen pre-engine.cpsat encoders this once
timed against are gone; tests/data/joint_protos.json keeps their models' digests.)
"""

from __future__ import annotations

import argparse
import copy
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import stitcher.joint as joint_mod  # noqa: E402
import stitcher.repair as repair_mod  # noqa: E402
from generator.complete import DEFAULT_TIME_LIMIT, LEAN, completion_model, side_cells  # noqa: E402
from generator.solution import random_solution  # noqa: E402
from packers import make_packing  # noqa: E402
from stitcher.joint import TIME_LIMIT, _lines_completable, joint_model  # noqa: E402
from stitcher.stitch import stitch  # noqa: E402
from tilelib.rng import Stream  # noqa: E402
from tilelib.rules import violations  # noqa: E402
from tilelib.store import Library  # noqa: E402

NS = (6, 8, 10, 12, 14, 16)
cpu = time.process_time


def boundaries(n: int, count: int, seed: bytes):
    """``count`` seeded (vals, known) boundaries of side n: 1-4 sides fixed, half from one tile."""
    root = Stream(seed, f"bench-cpsat/{n}")
    for k in range(count):
        s = root.child(str(k))
        mask = 1 + s.randbelow(15)
        vals = np.zeros((n, n), dtype=np.uint8)
        src = random_solution(n, s.child("src"))
        for side in (1, 2, 4, 8):
            if mask & side:
                one = side_cells(n, side).astype(bool)
                g = src if k % 2 == 0 else random_solution(n, s.child(f"side{side}"))
                vals[one] = g[one]
        yield vals, side_cells(n, mask), s.child("complete")


def capture_joint(days: int, size: int, seed: bytes) -> list:
    """The arguments of every window-aware CP-SAT call of ``days`` seeded stitches (cold library)."""
    calls = []
    real = joint_mod.joint_complete_many

    def spy(values, known, squares, others, stream, time_limit=TIME_LIMIT, *, exclude=()):
        calls.append((values.copy(), known.copy(), list(squares), list(others), copy.deepcopy(stream),
                      list(exclude)))
        return real(values, known, squares, others, stream, time_limit, exclude=exclude)

    joint_mod.joint_complete_many = repair_mod.joint_complete_many = spy
    try:
        with tempfile.TemporaryDirectory() as d, Library.create(os.path.join(d, "bench.sqlite")) as lib:
            for day in range(days):
                day_seed = bytes([day]) + seed[1:]
                stitch(make_packing("big-first", size, day_seed), lib, Stream(day_seed, "stitch"))
    finally:
        joint_mod.joint_complete_many = repair_mod.joint_complete_many = real
    return calls


def timed(build, solve):
    t0 = cpu()
    built = build()
    t1 = cpu()
    out = solve(built)
    return out, built, 1000 * (t1 - t0), 1000 * (cpu() - t1)


def run_complete(ns, count: int, seed: bytes) -> tuple[dict, dict, int]:
    """{n: (build ms list, solve ms list)}, {n: models with no completion}, invalid grids."""
    times, nofit, invalid = {}, {}, 0
    for n in ns:
        times[n], nofit[n] = ([], []), 0
        for vals, known, stream in boundaries(n, count, seed):
            def build():
                model, rows = completion_model(n, vals, known)
                model.proto   # noqa: B018 (writes the pending text into the proto: part of the build)
                return model, rows

            def solve(b):
                got = b[0].solve(copy.deepcopy(stream), DEFAULT_TIME_LIMIT, lean=LEAN)
                return got.grid(b[1]) if got.found else None

            grid, _, bms, sms = timed(build, solve)
            times[n][0].append(bms)
            times[n][1].append(sms)
            nofit[n] += grid is None
            if grid is not None and (violations(grid) or ((grid != vals) & (known == 1)).any()):
                invalid += 1
    return times, nofit, invalid


def run_joint(calls) -> tuple[tuple[list, list], int, int, int]:
    """Times of the captured joint models, how many had no answer, invalid grids, models timed."""
    times: tuple[list, list] = ([], [])
    none = invalid = models = 0
    for values, known, squares, others, stream, exclude in calls:
        if not _lines_completable(values, known, list(squares) + list(others)):
            continue
        models += 1

        def build():
            model, own = joint_model(values, known, squares, others)
            for k, g in exclude:                 # the fair rule's other images, as the stitcher adds them
                model.differ(own[k], g)
            model.proto   # noqa: B018 (writes the pending text into the proto: part of the build)
            return model, own

        def solve(b):
            got = b[0].solve(copy.deepcopy(stream), TIME_LIMIT, lean=True)
            return [got.grid(rows) for rows in b[1]] if got.found else None

        grids, _, bms, sms = timed(build, solve)
        times[0].append(bms)
        times[1].append(sms)
        none += grids is None
        invalid += grids is not None and any(violations(g) for g in grids)
    return times, none, invalid, models


def stats(xs: list[float]) -> str:
    xs = sorted(xs)
    p99 = xs[min(len(xs) - 1, int(round(0.99 * (len(xs) - 1))))]
    return f"{statistics.median(xs):.2f} / {p99:.2f} / {xs[-1]:.2f}"


def row(label: str, b: list[float], s: list[float], none: int) -> str:
    return (f"| {label} | {len(b)} | {stats(b)} | {stats(s)} | {sum(b) / 1000:.2f} | "
            f"{sum(s) / 1000:.2f} | {(sum(b) + sum(s)) / 1000:.2f} | {none} |")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--count", type=int, default=40, help="boundaries per n for complete")
    ap.add_argument("--ns", default=",".join(map(str, NS)))
    ap.add_argument("--days", type=int, default=4, help="seeded stitches whose joint models are captured")
    ap.add_argument("--size", type=int, default=101, help="board side G of those stitches")
    ap.add_argument("--seed", default="00" * 32)
    a = ap.parse_args()
    seed = bytes.fromhex(a.seed)
    ns = [int(x) for x in a.ns.split(",")]
    load0 = os.getloadavg()
    t0 = time.perf_counter()
    calls = capture_joint(a.days, a.size, seed)
    capture_s = time.perf_counter() - t0
    jt, jnone, jinv, jmodels = run_joint(calls)
    ct, cnone, cinv = run_complete(ns, a.count, seed)
    load1 = os.getloadavg()
    print(f"load average before {load0[0]:.2f}, after {load1[0]:.2f} (1 min); CPU ms of this process; "
          f"joint models from {a.days} big-first G = {a.size} stitches ({len(calls)} calls, "
          f"{jmodels} reach CP-SAT; capture {capture_s:.1f} s)\n")
    print("| models | count | build ms median / p99 / max | solve ms median / p99 / max "
          "| build s | solve s | total s | no completion |")
    print("|---|---|---|---|---|---|---|---|")
    print(row("joint windows", *jt, jnone))
    for n in ns:
        print(row(f"complete n = {n}", *ct[n], cnone[n]))
    print(row("complete, all n", [x for n in ns for x in ct[n][0]], [x for n in ns for x in ct[n][1]],
              sum(cnone.values())))
    print()
    print(f"- invalid grids: joint {jinv}, complete {cinv}")
    if jinv or cinv:
        sys.exit(1)


if __name__ == "__main__":
    main()
