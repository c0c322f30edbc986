"""The nightly build as a user runs it, this code against a baseline checkout, in one run.

Each sample is the whole command — ``python -m tiles_cli.app daily build --date D --size G --json``
in a fresh interpreter, start-up included — on a fresh copy of one start library (with the caches
beside it, as a nightly finds them), so both codes build exactly the same night. The codes take
turns (which goes first alternates per round). Wall and CPU (the command and its stitch workers),
the seconds of the stitch and of the board stages (clues + verify) per sample, and memory: the
parent's peak RSS (its own ``ru_maxrss``, from the summary) and the peak of the summed PSS of the
command and its forked workers (sampled every 0.1 s; PSS shares a page among the processes holding
it, so the halves' inherited index is not counted three times); the table gives median, p99 and max
per code and the ratio of medians; every night's manifest must be byte-identical between the two
codes (else the comparison is of different work).
``--new-output`` is for a change that moves the boards on purpose (a new GENERATOR_VERSION): the
manifests may then differ, and a second table gives what each code's boards are — final fill, zone,
clues per 100 tiles, drained, nofit, completions decided in C and by CP-SAT (medians over rounds) —
so that "faster" is not bought with worse boards.

    python scripts/bench_nightly.py --baseline /tmp/before --lib START.sqlite [--size 1000]
        [--day 2026-12-03] [--rounds 3] [--reuse fresh] [--work DIR] [--new-output]

``--baseline`` is a checkout of the code before (``git worktree add DIR COMMIT``) with its C
extensions built or copied in; it runs with ``PYTHONPATH=DIR``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import sys
from pathlib import Path

from machine import cpu_model, memory_run  # (scripts/machine.py)

ROOT = Path(__file__).resolve().parent.parent
SECRET = "bench-nightly-secret"


def pct(xs: list[float], q: float) -> float:
    """The q-th percentile (nearest rank) of xs."""
    s = sorted(xs)
    return s[min(len(s) - 1, max(0, round(q / 100 * len(s) + 0.5) - 1))]


def fresh_copy(start: Path, work: Path) -> Path:
    """A copy of the start library and the caches beside it (not its lock) in an empty ``work``."""
    if work.exists():
        shutil.rmtree(work)
    work.mkdir(parents=True)
    for f in start.parent.glob(start.name + "*"):
        if not f.name.endswith(".lock"):
            shutil.copy2(f, work / f.name)
    return work / start.name


def one_night(code: Path, start: Path, work: Path, args) -> dict:
    """Run the command once with ``code`` on a fresh copy; its wall, CPU, summary and manifest."""
    lib = fresh_copy(start, work)
    out = work / "out"
    cmd = [
        sys.executable,
        "-m",
        "tiles_cli.app",
        "daily",
        "build",
        "--date",
        args.day,
        "--size",
        str(args.size),
        "--library",
        str(lib),
        "--out",
        str(out),
        "--reuse",
        args.reuse,
        "--force",
        "--json",
    ]
    env = {k: v for k, v in os.environ.items() if not k.startswith("TILES_")}
    env.update(PYTHONPATH=str(code), TILES_SECRET=SECRET)
    r, wall, cpu, tree = memory_run(cmd, cwd=code, env=env)
    if r.returncode != 0:
        raise SystemExit(f"{code}: exit {r.returncode}: {r.stderr[-1500:]}")
    summary = json.loads(r.stdout)
    return {
        "wall": wall,
        "cpu": cpu,
        "stitch": summary["stages"]["stitch"]["seconds"],
        "board_s": sum(summary["stages"][k]["seconds"] for k in ("clues", "verify") if k in summary["stages"]),
        "rss_mb": summary["peak_rss_bytes"] / 2**20,
        "tree_mb": tree / 2**20,
        "manifest": (out / f"{args.day}.json").read_bytes(),
        "board": board_quality(summary),
    }


def board_quality(summary: dict) -> dict:
    """What a night's board is, from its ``--json`` summary (see the module doc)."""
    st = summary["stitch"]
    total = {
        k: sum(d.get(k, 0) for d in st["per_n"].values()) for k in ("drained", "nofit", "decided_c", "decided_cpsat")
    }
    return {
        "fill %": 100 * st["final_fill"],
        "zone %": 100 * st["zone_fraction_after"],
        "clues / 100 tiles": 100 * summary["clues"] / max(summary["tiles"], 1),
        **total,
    }


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--baseline", required=True, type=Path)
    ap.add_argument("--lib", required=True, type=Path, help="the start library (copied for every sample)")
    ap.add_argument("--size", type=int, default=1000)
    ap.add_argument("--day", default="2026-12-03")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--reuse", default="fresh")
    ap.add_argument("--work", type=Path, default=Path("/tmp/bench-nightly"))
    ap.add_argument("--new-output", action="store_true", help="the codes may build different boards (see above)")
    args = ap.parse_args()
    codes = {"baseline": args.baseline.resolve(), "this": ROOT}
    runs: dict[str, list[dict]] = {k: [] for k in codes}
    for r in range(args.rounds):
        order = list(codes) if r % 2 == 0 else list(codes)[::-1]
        for name in order:
            got = one_night(codes[name], args.lib, args.work / name, args)
            runs[name].append(got)
            print(
                f"round {r + 1} {name:8}: wall {got['wall']:7.1f} s, cpu {got['cpu']:7.1f} s, "
                f"stitch {got['stitch']:6.1f} s, clues + verify {got['board_s']:5.1f} s, "
                f"peak RSS {got['rss_mb']:.0f} MB, "
                f"all processes {got['tree_mb']:.0f} MB",
                flush=True,
            )
    same = all(a["manifest"] == b["manifest"] for a, b in zip(runs["baseline"], runs["this"], strict=True))
    print(
        f"\nmachine: {cpu_model()}, {os.cpu_count()} cores, Python {platform.python_version()}; G = {args.size}, "
        f"{args.day}, --reuse {args.reuse}, {args.rounds} rounds, start library {args.lib.name} "
        f"({args.lib.stat().st_size / 2**20:.1f} MB); manifests identical between the codes: {same}\n"
    )
    print(
        "| code | wall median s | wall p99 | wall max | CPU median s | CPU p99 | CPU max | stitch median s | "
        "clues + verify median s | parent peak RSS MB | all processes peak PSS MB |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for name, rs in runs.items():
        w, c, s = [x["wall"] for x in rs], [x["cpu"] for x in rs], [x["stitch"] for x in rs]
        print(
            f"| {name} | {statistics.median(w):.1f} | {pct(w, 99):.1f} | {max(w):.1f} | {statistics.median(c):.1f} | "
            f"{pct(c, 99):.1f} | {max(c):.1f} | {statistics.median(s):.1f} | "
            f"{statistics.median(x['board_s'] for x in rs):.1f} | {max(x['rss_mb'] for x in rs):.0f} | "
            f"{max(x['tree_mb'] for x in rs):.0f} |"
        )
    med = {
        k: (statistics.median(x["wall"] for x in rs), statistics.median(x["cpu"] for x in rs)) for k, rs in runs.items()
    }
    print(
        f"| ratio this / baseline | {med['this'][0] / med['baseline'][0]:.3f} | | | "
        f"{med['this'][1] / med['baseline'][1]:.3f} | | | | | | |"
    )
    if args.new_output:
        keys = list(runs["this"][0]["board"])
        print("\n| code | " + " | ".join(keys) + " |")
        print("|---|" + "---|" * len(keys))
        for name, rs in runs.items():
            cells = [statistics.median(x["board"][k] for x in rs) for k in keys]
            print(f"| {name} | " + " | ".join(f"{v:.3f}" if isinstance(v, float) else f"{v:,}" for v in cells) + " |")
    elif not same:
        raise SystemExit("the two codes built different manifests: the timings compare different work")


if __name__ == "__main__":
    main()
