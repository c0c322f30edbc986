"""A picture of the day's board (FORMAT §9 ``tiles daily render``): every cell, as a palette PNG.

Each board cell is a ``scale``×``scale`` block (default about 3000 px across,
3 px per cell at G = 1000; at least 2, at most 16). Colours:

- a cell held by one tile takes that tile's hue from the 7-colouring of
  ``packers.render.colour_tiles``: the plain hue when the cell is not given,
  a pale tint when it is a given 0, a dark shade when it is a given 1;
- a cell held by 2+ tiles (a seam) is a warm neutral in the same three
  levels, so tile outlines show as seams and seam givens still show their value;
- the manifest's extra clues stand out: yellow for a 0, red for a 1, with a
  ring of that colour on the outer pixels of the 3×3 cells around them;
- inert zone cells (in no tile window) are grey;
- the seed tile is framed in black (the outer pixel ring of its window and
  one pixel just outside it).

Non-given cells show no value: the picture is the puzzle, not its answer.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from packers.render import HUES, colour_tiles, png_bytes
from referee.board import Board, build_board
from referee.manifest import Manifest
from tilelib.fsio import atomic_write
from tilelib.store import Library


def _mix(c, w, t: float):
    return tuple(int(round(a * (1 - t) + b * t)) for a, b in zip(c, w, strict=True))


WHITE, BLACK = (255, 255, 255), (0, 0, 0)
SEAM = (0x8A, 0x80, 0x76)
ZONE = (0xC8, 0xC8, 0xC8)
CLUE0, CLUE1 = (0xFF, 0xD8, 0x20), (0xD8, 0x10, 0x10)

# palette layout: hue h -> 3h (plain), 3h+1 (given 0), 3h+2 (given 1); then seam x3, zone, clues, frame
PALETTE = [c for h in HUES for c in (h, _mix(h, WHITE, 0.8), _mix(h, BLACK, 0.6))]
P_SEAM = len(PALETTE)
PALETTE += [SEAM, _mix(SEAM, WHITE, 0.85), _mix(SEAM, BLACK, 0.7)]
P_ZONE = len(PALETTE)
PALETTE += [ZONE]
P_CLUE0, P_CLUE1, P_FRAME = len(PALETTE), len(PALETTE) + 1, len(PALETTE) + 2
PALETTE += [CLUE0, CLUE1, BLACK]


def default_scale(G: int) -> int:
    """Pixels per cell: about 3000 px across, between 2 and 16."""
    return max(2, min(16, 3000 // max(G, 1)))


def cell_index(board: Board) -> np.ndarray:
    """G×G uint8 palette index of every cell (see the module docstring)."""
    G = board.G
    colours = colour_tiles(board.squares)
    hue = np.zeros((G, G), dtype=np.uint8)
    for i, c in enumerate(colours):
        hue[board.window(i)] = c
    sol = board.solution
    level = np.where(board.givens, np.where(sol == 1, 2, 1), 0).astype(np.uint8)
    idx = (3 * hue + level).astype(np.uint8)
    idx = np.where(board.owners >= 2, P_SEAM + level, idx).astype(np.uint8)
    idx[board.owners == 0] = P_ZONE
    for r, c in board.clues:
        idx[r, c] = P_CLUE1 if sol[r, c] == 1 else P_CLUE0
    return idx


def board_image(board: Board, scale: int | None = None) -> np.ndarray:
    """The picture as a palette-index image (cells scaled up, seed tile framed)."""
    k = scale or default_scale(board.G)
    idx = cell_index(board)
    img = np.repeat(np.repeat(idx, k, axis=0), k, axis=1)
    H = img.shape[0]

    def ring(Y0: int, Y1: int, X0: int, X1: int, w: int, colour: int) -> None:
        """A w-pixel ring just inside the pixel box [Y0, Y1) × [X0, X1), clipped to the image."""
        y0, y1, x0, x1 = max(Y0, 0), min(Y1, H), max(X0, 0), min(X1, H)
        if Y0 >= 0:
            img[Y0 : Y0 + w, x0:x1] = colour
        if Y1 <= H:
            img[Y1 - w : Y1, x0:x1] = colour
        if X0 >= 0:
            img[y0:y1, X0 : X0 + w] = colour
        if X1 <= H:
            img[y0:y1, X1 - w : X1] = colour

    # clues: a ring in the clue's colour on the outer pixels of the 3×3 cells around it (the
    # neighbours' centres stay visible), so ~1 clue per 100 tiles is findable at 3 px per cell
    for r, c in board.clues:
        ring((r - 1) * k, (r + 2) * k, (c - 1) * k, (c + 2) * k, 1, int(idx[r, c]))
    if 0 <= board.seed_tile < len(board.squares):
        rs, cs = board.window(board.seed_tile)
        w = 1 if k < 6 else 2
        # the window's outer pixel ring(s) plus one pixel just outside it
        ring(rs.start * k, rs.stop * k, cs.start * k, cs.stop * k, w, P_FRAME)
        ring(rs.start * k - 1, rs.stop * k + 1, cs.start * k - 1, cs.stop * k + 1, 1, P_FRAME)
    return img


def board_png(board: Board, scale: int | None = None) -> bytes:
    """PNG bytes of the board picture."""
    return png_bytes(board_image(board, scale), PALETTE)


def render_board_png(
    manifest: Manifest, lib: Library, path: str | Path, *, board: Board | None = None, scale: int | None = None
) -> Path:
    """Rebuild the board (unless given) and write its picture to ``path`` atomically; return the path."""
    b = board if board is not None else build_board(manifest, lib)
    data = board_png(b, scale)
    return atomic_write(path, data)
