"""Benchmark the CP-SAT models of the rules: the old encoders against ``engine.cpsat``, in one run.

    .venv/bin/python scripts/bench_cpsat.py [--count K] [--ns 6,8,...] [--days D] [--size G] [--seed HEX]

Two sets of models, each built and solved by the old code (tests/cpsat_legacy.py: frozen copies
of the encoders before issue 12) and by the new (``generator.complete.completion_model``,
``stitcher.joint.joint_model`` + ``RulesModel.solve``), alternating old and new model by model
so load from other jobs hits both alike:

* **complete, n = 6..16**: ``--count`` seeded boundaries per n, as a drained miss shows them:
  1-4 fixed sides (mask drawn), half taken from one random valid tile (always completable),
  half each side from its own random tile (often not: ``nofit``).
* **joint windows**: every window-aware model (square + unplaced neighbours, and repairs' groups)
  of ``--days`` seeded big-first G = ``--size`` stitches growing a library from empty, captured
  from the real stitcher's calls; only the models that pass ``joint._lines_completable`` (the
  pre-check is the same function before and after) reach CP-SAT, and only those are timed.

Per set and code: models, build ms and solve ms (median / p99 / max, CPU time of this process)
and the total. Verdicts (a grid or None) must agree model by model; for joint the grids and the
model protos themselves must be identical (the shared builder writes the same model), for
complete the new grid must be a valid completion of its boundary (the old model differs by
design: GENERATOR_VERSION 3). Prints markdown.
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
sys.path.insert(0, str(ROOT / "tests"))

import cpsat_legacy as legacy  # noqa: E402
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

    def spy(values, known, squares, others, stream, time_limit=TIME_LIMIT):
        calls.append((values.copy(), known.copy(), list(squares), list(others), copy.deepcopy(stream)))
        return real(values, known, squares, others, stream, time_limit)

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


def run_complete(ns, count: int, seed: bytes) -> tuple[dict, int, int]:
    """{(n, 'old'|'new'): (build ms list, solve ms list)}, verdict mismatches, invalid new grids."""
    times, mismatch, invalid = {}, 0, 0
    for n in ns:
        for vals, known, stream in boundaries(n, count, seed):
            old, _, ob, os_ = timed(lambda: legacy.complete_build(n, vals, known, copy.deepcopy(stream)),
                                    lambda b: legacy.complete_solve(*b))

            def build_new():
                model, rows = completion_model(n, vals, known)
                model.proto   # noqa: B018 (writes the pending text into the proto: part of the build)
                return model, rows

            def solve_new(b):
                got = b[0].solve(copy.deepcopy(stream), DEFAULT_TIME_LIMIT, lean=LEAN)
                return got.grid(b[1]) if got.found else None

            new, _, nb, ns_ = timed(build_new, solve_new)
            for key, b, s in (((n, "old"), ob, os_), ((n, "new"), nb, ns_)):
                times.setdefault(key, ([], []))
                times[key][0].append(b)
                times[key][1].append(s)
            mismatch += (old is None) != (new is None)
            if new is not None and (violations(new) or ((new != vals) & (known == 1)).any()):
                invalid += 1
    return times, mismatch, invalid


def run_joint(calls) -> tuple[dict, int, int, int]:
    """Times per code for the captured joint models, verdict/grid mismatches, proto mismatches, models."""
    times = {"old": ([], []), "new": ([], [])}
    mismatch = proto_diff = models = 0
    for values, known, squares, others, stream in calls:
        if not _lines_completable(values, known, list(squares) + list(others)):
            continue
        models += 1
        old, (om, _, _), ob, os_ = timed(
            lambda: legacy.joint_build(values, known, squares, others, copy.deepcopy(stream)),
            lambda b: legacy.joint_solve(*b))

        def solve_new(b):
            got = b[0].solve(copy.deepcopy(stream), TIME_LIMIT, lean=True)
            return [got.grid(rows) for rows in b[1]] if got.found else None

        def build_new():
            model, own = joint_model(values, known, squares, others)
            model.proto   # noqa: B018 (writes the pending text into the proto: part of the build)
            return model, own

        new, (nm, _), nb, ns_ = timed(build_new, solve_new)
        for key, b, s in (("old", ob, os_), ("new", nb, ns_)):
            times[key][0].append(b)
            times[key][1].append(s)
        same = (old is None and new is None) or (
            old is not None and new is not None and all((a == b).all() for a, b in zip(old, new)))
        mismatch += not same
        proto_diff += str(om.Proto()) != str(nm.proto)   # both carry their hints after solving
    return times, mismatch, proto_diff, models


def stats(xs: list[float]) -> str:
    xs = sorted(xs)
    p99 = xs[min(len(xs) - 1, int(round(0.99 * (len(xs) - 1))))]
    return f"{statistics.median(xs):.2f} / {p99:.2f} / {xs[-1]:.2f}"


def row(label: str, code: str, b: list[float], s: list[float]) -> str:
    return (f"| {label} | {code} | {len(b)} | {stats(b)} | {stats(s)} | {sum(b) / 1000:.2f} | "
            f"{sum(s) / 1000:.2f} | {(sum(b) + sum(s)) / 1000:.2f} |")


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
    jt, jmis, jproto, jmodels = run_joint(calls)
    ct, cmis, cinv = run_complete(ns, a.count, seed)
    load1 = os.getloadavg()
    print(f"load average before {load0[0]:.2f}, after {load1[0]:.2f} (1 min); CPU ms of this process; "
          f"joint models from {a.days} big-first G = {a.size} stitches ({len(calls)} calls, "
          f"{jmodels} reach CP-SAT; capture {capture_s:.1f} s)\n")
    print("| models | code | count | build ms median / p99 / max | solve ms median / p99 / max "
          "| build s | solve s | total s |")
    print("|---|---|---|---|---|---|---|---|")
    for code in ("old", "new"):
        print(row("joint windows", code, *jt[code]))
    for n in ns:
        for code in ("old", "new"):
            print(row(f"complete n = {n}", code, *ct[(n, code)]))
    allc = {code: ([x for n in ns for x in ct[(n, code)][0]], [x for n in ns for x in ct[(n, code)][1]])
            for code in ("old", "new")}
    for code in ("old", "new"):
        print(row("complete, all n", code, *allc[code]))
    print()
    for label, t in (("joint windows", jt), ("complete, all n", allc)):
        ob, os_ = sum(t["old"][0]), sum(t["old"][1])
        nb, ns_ = sum(t["new"][0]), sum(t["new"][1])
        print(f"- {label}: build {ob / max(nb, 1e-9):.2f}x faster, solve {os_ / max(ns_, 1e-9):.2f}x, "
              f"total {(ob + os_) / max(nb + ns_, 1e-9):.2f}x (old / new)")
    print(f"- joint: verdict or grid mismatches {jmis}, model protos differing {jproto} (of {jmodels})")
    print(f"- complete: verdict mismatches {cmis}, invalid new grids {cinv} "
          f"(of {len(ns) * a.count}; grids differ by design)")
    if jmis or jproto or cmis or cinv:
        sys.exit(1)


if __name__ == "__main__":
    main()
