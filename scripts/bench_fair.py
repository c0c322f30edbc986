"""What the fair rule costs (issue 28): consecutive nights from an empty library, ``fresh`` and ``any``.

Each night is the whole command a cron runs, ``tiles daily build --json`` in its own process
(start-up included), on one library per policy that grows night by night; the two policies run in
the same invocation, night by night alternately, so they share the machine's state. Per night it
prints a markdown row as soon as the night is done: wall and CPU seconds (the command and its
forked workers), drains, nofit, fallbacks, final fill, zone share, clues, tiles made, n >= 10
tiles and the repeated share of their reward and of all reward.

    .venv/bin/python scripts/bench_fair.py [--size 1000] [--nights 3] [--work DIR]
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import shutil
import sys
from pathlib import Path

from machine import cpu_model, timed_run  # noqa: E402  (scripts/machine.py)

POLICIES = ("fresh", "any")
COLUMNS = (
    "night",
    "policy",
    "wall s",
    "CPU s",
    "drained",
    "nofit",
    "fallbacks",
    "final fill",
    "zone",
    "clues",
    "made",
    "n>=10 tiles",
    "n>=10 repeated share",
    "all repeated share",
)


def night(tiles: Path, lib: Path, out: Path, day: str, size: int, policy: str) -> dict:
    """One ``tiles daily build`` as a subprocess: its --json summary, wall and CPU seconds."""
    r, wall, cpu = timed_run(
        [
            str(tiles),
            "daily",
            "build",
            "--date",
            day,
            "--size",
            str(size),
            "-L",
            str(lib),
            "--out",
            str(out),
            "--reuse",
            policy,
            "--json",
        ],
        env=dict(os.environ, TILES_SECRET="bench-fair-secret"),
    )
    if r.returncode != 0:
        raise SystemExit(f"{policy} {day}: exit {r.returncode}: {r.stderr.strip().splitlines()[-1]}")
    return {"summary": json.loads(r.stdout), "wall": wall, "cpu": cpu}


def row(k: int, policy: str, got: dict, manifest: dict) -> list:
    s, st = got["summary"], manifest["stats"]
    fair = s["fairness"]
    held = sum(d["tiles"] for n, d in fair["per_n"].items() if int(n) >= 10)
    return [
        k,
        policy,
        f"{got['wall']:.1f}",
        f"{got['cpu']:.1f}",
        st["stitch"]["drained"],
        st["stitch"]["nofit"],
        st["stitch"]["fallbacks"],
        f"{st['stitch']['final_fill']:.4f}",
        f"{st['zone_fraction']:.4f}",
        st["clues"],
        s["stitch"]["made"],
        held,
        f"{100 * fair['repeated_share']['held']:.1f}%",
        f"{100 * fair['repeated_share']['all']:.1f}%",
    ]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--size", type=int, default=1000)
    ap.add_argument("--nights", type=int, default=3)
    ap.add_argument("--work", default="/tmp/tiles-bench-fair")
    args = ap.parse_args()
    work = Path(args.work)
    shutil.rmtree(work, ignore_errors=True)
    tiles = Path(sys.executable).with_name("tiles")
    print(
        f"G = {args.size}, {args.nights} nights from an empty library; {cpu_model()}, {os.cpu_count()} cores; "
        f"{dt.date.today()}\n"
    )
    print("| " + " | ".join(COLUMNS) + " |")
    print("|" + "---|" * len(COLUMNS), flush=True)
    start = dt.date(2026, 10, 1)
    for k in range(1, args.nights + 1):
        day = (start + dt.timedelta(days=k - 1)).isoformat()
        for policy in POLICIES:
            d = work / policy
            d.mkdir(parents=True, exist_ok=True)
            got = night(tiles, d / "tiles.sqlite", d / "out", day, args.size, policy)
            manifest = json.loads((d / "out" / f"{day}.json").read_text())
            print("| " + " | ".join(str(x) for x in row(k, policy, got, manifest)) + " |", flush=True)


if __name__ == "__main__":
    main()
