"""Boards a player solving one tile at a time clears (issue 29): clues the rule adds, what it costs.

Per board (its own secret and its own library): day 1 on G=61, then day 2 on G=``size`` — the
whole command a cron runs, ``tiles daily build --json`` in its own process. Then, in this process:
``referee verify``'s steps with their seconds (``frontier`` against the new ``closure``), and the
test player (``tests/tile_player.py``: the referee's puzzle views and judge, its own brute-force
solver) playing the board from the seed tile. It prints one markdown row per board as soon as
the board is done: wall seconds of the build, tiles, clues, of them the tile-by-tile rule's,
clues per 100 tiles, final fill, zone share, waves, verify frontier / closure seconds, whether the
player cleared the board and its seconds; then the totals.

    .venv/bin/python scripts/bench_play.py [--size 301] [--boards 20] [--first 1] [--reuse fresh|any] [--work DIR]
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import math
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

from machine import cpu_model  # noqa: E402  (scripts/machine.py)

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

COLUMNS = (
    "secret",
    "build s",
    "tiles",
    "clues",
    "play clues",
    "per 100 tiles",
    "final fill",
    "zone",
    "waves",
    "frontier s",
    "closure s",
    "player",
    "player s",
    "player without play clues",
)


def build_board(tiles: Path, work: Path, secret: str, size: int, reuse: str) -> tuple[Path, Path, dict, float]:
    """Day 1 (G=61) then day 2 (G=size, ``--reuse reuse``) in a fresh library; (manifest, library,
    summary, day-2 wall)."""
    lib, out = work / "lib.sqlite", work / "out"
    for day, g in (("2026-10-01", 61), ("2026-10-02", size)):
        t0 = time.perf_counter()
        r = subprocess.run(
            [
                str(tiles),
                "daily",
                "build",
                "--date",
                day,
                "--size",
                str(g),
                "-L",
                str(lib),
                "--out",
                str(out),
                "--json",
                "--reuse",
                reuse,
            ],
            capture_output=True,
            text=True,
            env=dict(os.environ, TILES_SECRET=secret),
        )
        wall = time.perf_counter() - t0
        if r.returncode != 0:
            raise SystemExit(f"{secret} {day}: exit {r.returncode}: {r.stderr.strip().splitlines()[-1]}")
    return out / "2026-10-02.json", lib, json.loads(r.stdout), wall


def measure(manifest: Path, lib: Path, runs: Path, play_clues: int) -> dict:
    """verify's step seconds and the test player's outcome on one board, and on the same board without
    its ``play_clues`` last clues (the control: where the rule was needed, the player stalls)."""
    import tile_player

    from referee.service.boards import DayBoard, load_manifest
    from referee.verify import verify
    from tilelib.store import Library

    with Library.open(lib) as lb:
        m = load_manifest(manifest)
        rep = verify(m, lb)
        db = DayBoard.load(m, lb, runs)
        t0 = time.perf_counter()
        got = tile_player.play(tile_player.Local(db))
        secs = time.perf_counter() - t0
        bare = None
        if play_clues:
            stripped = m.with_clues(
                m.clues[: len(m.clues) - play_clues], stats=dict(m.stats) | {"clues": len(m.clues) - play_clues}
            )
            bare = tile_player.play(tile_player.Local(DayBoard.load(load_manifest(stripped.to_json()), lb, runs)))
    return {"report": rep, "player": got, "player_s": secs, "manifest": m, "bare": bare}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--size", type=int, default=301)
    ap.add_argument("--boards", type=int, default=20)
    ap.add_argument("--first", type=int, default=1, help="secrets are bench-play-<k> for k = first, first+1, …")
    ap.add_argument("--reuse", default="fresh", choices=("fresh", "any"))
    ap.add_argument("--work", default="/tmp/tiles-bench-play")
    args = ap.parse_args()
    tiles = Path(sys.executable).with_name("tiles")
    print(
        f"G = {args.size}, {args.boards} boards (day 1 G=61, then day 2), each from an empty library, "
        f"--reuse {args.reuse}; "
        f"{cpu_model()}, {os.cpu_count()} cores; {dt.date.today()}\n"
    )
    print("| " + " | ".join(COLUMNS) + " |")
    print("|" + "---|" * len(COLUMNS), flush=True)
    added, per100, closure_s, frontier_s, cleared = [], [], [], [], 0
    for k in range(args.first, args.first + args.boards):
        secret = f"bench-play-{k}"
        work = Path(args.work) / secret
        shutil.rmtree(work, ignore_errors=True)
        work.mkdir(parents=True)
        manifest, lib, summary, wall = build_board(tiles, work, secret, args.size, args.reuse)
        got = measure(manifest, lib, work / "runs.sqlite", summary["play_clues"])
        m, rep, p = got["manifest"], got["report"], got["player"]
        st = m.stats
        added.append(summary["play_clues"])
        per100.append(100 * len(m.clues) / m.tile_count())
        closure_s.append(rep.timings["closure"])
        frontier_s.append(rep.timings["frontier"])
        cleared += p.cleared
        print(
            "| "
            + " | ".join(
                str(x)
                for x in (
                    secret,
                    f"{wall:.1f}",
                    m.tile_count(),
                    len(m.clues),
                    summary["play_clues"],
                    f"{per100[-1]:.2f}",
                    f"{st['stitch']['final_fill']:.4f}",
                    f"{st['zone_fraction']:.4f}",
                    rep.waves,
                    f"{frontier_s[-1]:.2f}",
                    f"{closure_s[-1]:.2f}",
                    "cleared" if p.cleared else f"stuck at {p.stuck[:4]}",
                    f"{got['player_s']:.1f}",
                    "—"
                    if got["bare"] is None
                    else f"stuck after {got['bare'].solved} of {m.tile_count()} at {got['bare'].stuck[:4]}",
                )
            )
            + " |",
            flush=True,
        )
        shutil.rmtree(work, ignore_errors=True)
    p99 = sorted(added)[max(0, math.ceil(0.99 * len(added)) - 1)]  # nearest rank
    print(
        f"\ncleared {cleared} of {len(added)}; play clues per board: median {statistics.median(added)}, "
        f"p99 {p99}, max {max(added)}, boards with any {sum(1 for a in added if a)}; clues per 100 "
        f"tiles max {max(per100):.2f}; closure / frontier seconds: median "
        f"{statistics.median(closure_s) / statistics.median(frontier_s):.2f}x"
    )


if __name__ == "__main__":
    main()
