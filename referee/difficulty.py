"""The difficulty a player meets on a board: each tile rated in context (issue 14).

A tile's library ``ladder`` is rated on its own givens plus its seam_mask
sides. On the board a player sees more: the board givens in the tile's
window (its own givens, zone givens, clues, neighbours' givens on shared
cells) and, once a neighbour is solved, every cell it shares with that
neighbour. ``context_levels`` rates every tile the way a player meets it when
it becomes playable: tiles are taken in breadth-first order from the seed
tile over the judge's seam relation (``packers.packing.seam_order``,
neighbours in id order), and tile i is rated (FORMAT §4 ladder, C kernel) on
its window with known = the board givens there plus every cell it shares
with a tile earlier in that order (solved before it). Tiles no seam path
reaches are rated on the board givens alone.
"""

from __future__ import annotations

import numpy as np

from engine.ladder import rate_rows
from packers.packing import seam_order
from referee.board import Board, grid_rows

LEVEL_NAMES = {0: "given", 1: "L1", 2: "L2", 3: "L3", 4: "L4", 5: "beyond L4"}


def play_order(board: Board) -> list[int]:
    """Tile ids in breadth-first order from the seed tile over shared seams, then the unreached."""
    order = seam_order(board.squares, board.seed_tile)
    seen = set(order)
    return order + [i for i in range(len(board.squares)) if i not in seen]


def context_levels(board: Board) -> list[tuple[int, int, int]]:
    """(tile id, n, ladder level in context) for every tile, in play order."""
    solved = np.zeros(board.givens.shape, dtype=bool)
    out = []
    for i in play_order(board):
        rs, cs = board.window(i)
        sol = board.solution[rs, cs]
        known = board.givens[rs, cs] | solved[rs, cs]
        n = sol.shape[0]
        k = grid_rows(known)
        lad = rate_rows(n, [v & m for v, m in zip(grid_rows(sol == 1), k, strict=True)], k)
        out.append((i, n, int(lad.ladder)))
        solved[rs, cs] = True
    return out


def profile_table(levels: list[tuple[int, int, int]]) -> dict[str, dict[str, float]]:
    """Shares of each level per n (and "all"), from ``context_levels``."""
    out: dict[str, dict[str, float]] = {}
    groups: dict[str, list[int]] = {}
    for _, n, lv in levels:
        groups.setdefault(str(n), []).append(lv)
        groups.setdefault("all", []).append(lv)
    for key, lvs in groups.items():
        out[key] = {LEVEL_NAMES[lv]: round(lvs.count(lv) / len(lvs), 4) for lv in sorted(set(lvs))}
        out[key]["tiles"] = len(lvs)
    return out
