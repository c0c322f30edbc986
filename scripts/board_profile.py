"""Print the difficulty profile of a built board: each tile's ladder level in context and as stored.

"In context" (``referee.difficulty.context_levels``): rated when the tile becomes
playable, with the board givens in its window plus the cells it shares with tiles
solved before it (breadth-first from the seed tile over shared seams). "Stored":
the library row's ``ladder`` (own givens plus its seam_mask sides).

Usage: .venv/bin/python scripts/board_profile.py MANIFEST -L LIBRARY
"""

from __future__ import annotations

import argparse
import time

from referee.board import build_board
from referee.difficulty import LEVEL_NAMES, context_levels
from referee.manifest import load
from tilelib.store import Library


def table(rows: dict[str, list[int]], title: str) -> None:
    names = [LEVEL_NAMES[lv] for lv in range(6)]
    print(f"{title}\n")
    print("| n | tiles | " + " | ".join(names) + " |")
    print("|---|---:|" + "---:|" * len(names))
    for key in sorted(rows, key=lambda k: (k == "all", int(k) if k.isdigit() else 0)):
        lvs = rows[key]
        cells = [f"{100 * lvs.count(lv) / len(lvs):.1f}%" for lv in range(6)]
        print(f"| {key} | {len(lvs):,} | " + " | ".join(cells) + " |")
    print()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("manifest")
    ap.add_argument("-L", "--library", required=True)
    a = ap.parse_args()
    m = load(a.manifest)
    t0 = time.perf_counter()
    with Library.open(a.library) as lib:
        board = build_board(m, lib)
        stored = {h: lib.get(h).features.ladder for h in set(m.hashes)}
    ctx = context_levels(board)
    secs = time.perf_counter() - t0
    in_ctx: dict[str, list[int]] = {}
    own: dict[str, list[int]] = {}
    for i, n, lv in ctx:
        for key in (str(n), "all"):
            in_ctx.setdefault(key, []).append(lv)
            own.setdefault(key, []).append(stored[m.hashes[i]])
    print(f"{m.day}, G={m.G}, {m.tile_count():,} tiles, profile: {m.difficulty or 'none'} ({secs:.1f} s)\n")
    table(in_ctx, "Ladder level in context (when the tile becomes playable)")
    table(own, "Ladder level as stored (own givens + seam_mask sides)")


if __name__ == "__main__":
    main()
