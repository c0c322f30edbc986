"""A view of the day's board for people (``tiles daily render --region/--tile/--scale``): one region,
a cell grid and tile ids when zoomed in, and a legend strip under the picture.

Cell colours are ``referee.render``'s (tile hues from the 7-colouring, pale = given 0, dark = given 1,
seams neutral, zones grey, clues yellow/red with a ring, the seed tile framed in black); this module
crops before scaling, so a 40×40 region at 32 px per cell costs 1280² pixels, not the whole board's.
Text is a built-in 3×5 pixel font (digits and the legend's capitals), so the output stays a palette
PNG written by ``packers.render.png_bytes`` with no imaging library.
"""

from __future__ import annotations

import numpy as np

from referee import render
from referee.board import Board
from tilelib.errors import BadInput

GRID, WHITE, TEXT = len(render.PALETTE), len(render.PALETTE) + 1, len(render.PALETTE) + 2
PALETTE = render.PALETTE + [(0x55, 0x50, 0x4A), (0xFF, 0xFF, 0xFF), (0x11, 0x11, 0x11)]

_GLYPHS = {
    "0": "111101101101111",
    "1": "010110010010111",
    "2": "111001111100111",
    "3": "111001111001111",
    "4": "101101111001001",
    "5": "111100111001111",
    "6": "111100111101111",
    "7": "111001001001001",
    "8": "111101111101111",
    "9": "111101111001111",
    " ": "000000000000000",
    ",": "000000000010100",
    "#": "101111101111101",
    "X": "101101010101101",
    "-": "000000111000000",
    "=": "000111000111000",
    "A": "010101111101101",
    "C": "111100100100111",
    "D": "110101101101110",
    "E": "111100110100111",
    "G": "111100101101111",
    "I": "111010010010111",
    "L": "100100100100111",
    "M": "101111111101101",
    "N": "110101101101101",
    "O": "111101101101111",
    "R": "110101110101101",
    "S": "111100111001111",
    "T": "111010010010010",
    "U": "101101101101111",
    "V": "101101101101010",
    "Z": "111001010100111",
    "P": "111101111100100",
    "H": "101101111101101",
    "W": "101101111111101",
    "Y": "101101010010010",
}


def text_width(text: str, fs: int) -> int:
    return len(text) * 4 * fs - fs


def draw_text(img: np.ndarray, y: int, x: int, text: str, fs: int, colour: int = TEXT) -> None:
    """Write ``text`` with its top-left corner at pixel (y, x), glyph pixels ``fs``×``fs``, clipped."""
    H, W = img.shape
    for k, ch in enumerate(text):
        g = _GLYPHS.get(ch.upper(), _GLYPHS[" "])
        for i, bit in enumerate(g):
            py, px = y + (i // 3) * fs, x + k * 4 * fs + (i % 3) * fs
            if bit == "1" and py + fs > 0 and px + fs > 0 and py < H and px < W:
                img[max(py, 0) : py + fs, max(px, 0) : px + fs] = colour


def parse_region(text: str, G: int) -> tuple[int, int, int, int]:
    """``X,Y,W,H`` in board cells (columns X..X+W-1, rows Y..Y+H-1), inside the G×G board."""
    try:
        x, y, w, h = (int(v) for v in text.split(","))
    except ValueError:
        raise BadInput(f"--region must be X,Y,W,H (four integers), got {text!r}") from None
    if w < 1 or h < 1 or x < 0 or y < 0 or x + w > G or y + h > G:
        raise BadInput(f"--region {text} must lie inside the {G}x{G} board with W, H >= 1")
    return x, y, w, h


def tile_region(board: Board, tile: int, margin: int = 2) -> tuple[int, int, int, int]:
    """The window of ``tile`` plus ``margin`` cells each side (clipped to the board)."""
    if not 0 <= tile < len(board.squares):
        raise BadInput(f"--tile {tile}: this board has tiles 0..{len(board.squares) - 1}")
    x0, y0, s = board.squares[tile]
    x, y = max(0, x0 - margin), max(0, y0 - margin)
    return x, y, min(board.G, x0 + s + 1 + margin) - x, min(board.G, y0 + s + 1 + margin) - y


def view_scale(w: int, h: int) -> int:
    """Default pixels per cell: about 1500 px across the larger side, between 1 and 32."""
    return max(1, min(32, 1500 // max(w, h)))


def _ring(img: np.ndarray, Y0: int, Y1: int, X0: int, X1: int, w: int, colour: int) -> None:
    """A w-pixel ring just inside the pixel box [Y0, Y1) × [X0, X1), clipped to the image."""
    H, W = img.shape
    y0, y1, x0, x1 = max(Y0, 0), min(Y1, H), max(X0, 0), min(X1, W)
    if y0 >= y1 or x0 >= x1:
        return
    if 0 <= Y0 < H:
        img[Y0 : Y0 + w, x0:x1] = colour
    if 0 < Y1 <= H:
        img[Y1 - w : Y1, x0:x1] = colour
    if 0 <= X0 < W:
        img[y0:y1, X0 : X0 + w] = colour
    if 0 < X1 <= W:
        img[y0:y1, X1 - w : X1] = colour


LEGEND = [
    (0, "TILE"),
    (1, "GIVEN 0"),
    (2, "GIVEN 1"),
    (render.P_SEAM, "SEAM"),
    (render.P_ZONE, "ZONE"),
    (render.P_CLUE0, "CLUE 0"),
    (render.P_CLUE1, "CLUE 1"),
    (render.P_FRAME, "SEED"),
]


def view_image(
    board: Board, region: tuple[int, int, int, int] | None = None, scale: int | None = None, legend: bool = True
) -> np.ndarray:
    """Palette-index image of ``region`` (default: the whole board) at ``scale`` px per cell."""
    x, y, w, h = region or (0, 0, board.G, board.G)
    k = view_scale(w, h) if scale is None else scale
    if not 1 <= k <= 64:
        raise BadInput(f"--scale must be 1..64 pixels per cell, got {k}")
    idx = render.cell_index(board)[y : y + h, x : x + w]
    img = np.repeat(np.repeat(idx, k, axis=0), k, axis=1)
    if k >= 6:  # the cell grid
        img[::k, :] = GRID
        img[:, ::k] = GRID
    for r, c in board.clues:
        if y - 1 <= r <= y + h and x - 1 <= c <= x + w:
            _ring(
                img,
                (r - 1 - y) * k,
                (r + 2 - y) * k,
                (c - 1 - x) * k,
                (c + 2 - x) * k,
                1,
                render.P_CLUE1 if board.solution[r, c] == 1 else render.P_CLUE0,
            )
    if 0 <= board.seed_tile < len(board.squares):
        x0, y0, s = board.squares[board.seed_tile]
        fw = 1 if k < 6 else 2
        Y0, Y1, X0, X1 = (y0 - y) * k, (y0 + s + 1 - y) * k, (x0 - x) * k, (x0 + s + 1 - x) * k
        _ring(img, Y0, Y1, X0, X1, fw, render.P_FRAME)
        _ring(img, Y0 - 1, Y1 + 1, X0 - 1, X1 + 1, 1, render.P_FRAME)
    fs = 1 if k < 12 else 2
    for i, (x0, y0, s) in enumerate(board.squares):  # tile ids where a tile is big enough on screen
        label = str(i)
        if (s + 1) * k < text_width(label, fs) + 4 * fs + k or k < 3:
            continue
        if x0 + s < x or y0 + s < y or x0 >= x + w or y0 >= y + h:
            continue
        py, px = (y0 + 1 - y) * k + 1, (x0 + 1 - x) * k + 1
        if py < 0 or px < 0:  # the tile's corner is outside the view
            continue
        img[py : py + 5 * fs + 2, px : px + text_width(label, fs) + 2] = WHITE
        draw_text(img, py + 1, px + 1, label, fs)
    if legend:
        img = _with_legend(img, f"X{x} Y{y} W{w} H{h} {k}PX", fs=2)
    return img


def _with_legend(img: np.ndarray, caption: str, fs: int) -> np.ndarray:
    """``img`` with a white strip under it: one swatch and label per colour, then the caption."""
    sw, gap = 6 * fs, 3 * fs
    items = [(c, t) for c, t in LEGEND]
    width = sum(sw + gap + text_width(t, fs) + 3 * gap for _c, t in items) + text_width(caption, fs) + 2 * gap
    H, W = img.shape
    strip_h = sw + 4 * gap
    out = np.full((H + strip_h, max(W, width)), WHITE, dtype=np.uint8)
    out[:H, :W] = img
    cx, cy = gap, H + 2 * gap
    for colour, label in items:
        out[cy : cy + sw, cx : cx + sw] = TEXT
        out[cy + 1 : cy + sw - 1, cx + 1 : cx + sw - 1] = colour
        draw_text(out, cy + (sw - 5 * fs) // 2, cx + sw + gap, label, fs)
        cx += sw + gap + text_width(label, fs) + 3 * gap
    draw_text(out, cy + (sw - 5 * fs) // 2, cx, caption, fs)
    return out


def view_png(board: Board, region=None, scale: int | None = None, legend: bool = True) -> bytes:
    """PNG bytes of ``view_image``."""
    from packers.render import png_bytes

    return png_bytes(view_image(board, region, scale, legend), PALETTE)
