"""Pictures of packings: tile adjacency, a greedy 7-colouring, and a stdlib+numpy PNG writer.

Two tiles are adjacent when they share a board cell, i.e. their closed
pitch-space squares [x0, x0+s] × [y0, y0+s] intersect (a shared side segment
or just a corner). ``colour_tiles`` colours them greedily in smallest-last
order (which needs at most degeneracy + 1 colours; the packings here use at
most 5 in practice) and raises ColouringFailed if 7 hues do not suffice.

``render_png`` draws pitch space at ``scale`` pixels per unit: tiles filled
with their hue and outlined one pixel darker (the seams), zones grey with a
darker grey outline, the seed tile outlined and dotted in near-black. The image is an
8-bit palette PNG (filter 0, zlib level 9), so flat colours compress to a
few hundred kB at G = 1000. No Pillow: ``png_bytes`` writes the chunks itself.
"""

from __future__ import annotations

import struct
import zlib

import numpy as np

from packers.packing import Packing, adjacency
from tilelib.errors import TilesError

HUES = [
    (0xE6, 0x6B, 0x5B),
    (0xF2, 0xB1, 0x4C),
    (0x9C, 0xC9, 0x5A),
    (0x4F, 0xB3, 0xA9),
    (0x5B, 0x8F, 0xDB),
    (0x9B, 0x7B, 0xD4),
    (0xE0, 0x82, 0xC0),
]


class ColouringFailed(TilesError):
    """The greedy colouring needed more hues than the palette has."""


GREY, GREY_DARK, SEED_MARK = (0xC8, 0xC8, 0xC8), (0x90, 0x90, 0x90), (0x20, 0x20, 0x20)


def colour_tiles(squares, k: int = 7) -> list[int]:
    """Greedy colouring (smallest-last order) of the tile adjacency graph with colours 0..k-1."""
    nbrs = adjacency(squares)
    n = len(nbrs)
    deg = [len(a) for a in nbrs]
    removed = [False] * n
    buckets: dict[int, set[int]] = {}
    for i, d in enumerate(deg):
        buckets.setdefault(d, set()).add(i)
    order = []
    d = 0
    for _ in range(n):
        d = max(0, d - 1)
        while not buckets.get(d):
            d += 1
        i = min(buckets[d])
        buckets[d].discard(i)
        removed[i] = True
        order.append(i)
        for j in nbrs[i]:
            if not removed[j]:
                buckets[deg[j]].discard(j)
                deg[j] -= 1
                buckets.setdefault(deg[j], set()).add(j)
    colour = [-1] * n
    for i in reversed(order):
        used = {colour[j] for j in nbrs[i]}
        c = next((c for c in range(k) if c not in used), None)
        if c is None:
            raise ColouringFailed(f"render: tile {i} has neighbours in all {k} colours")
        colour[i] = c
    return colour


def png_bytes(index: np.ndarray, palette: list[tuple[int, int, int]]) -> bytes:
    """An 8-bit palette PNG of a 2-D uint8 index image."""
    h, w = index.shape

    def chunk(tag: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + tag + data + struct.pack(">I", zlib.crc32(tag + data) & 0xFFFFFFFF)

    raw = np.zeros((h, w + 1), dtype=np.uint8)  # filter byte 0 (None) on each row
    raw[:, 1:] = index
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 3, 0, 0, 0))
        + chunk(b"PLTE", bytes(c for rgb in palette for c in rgb))
        + chunk(b"IDAT", zlib.compress(raw.tobytes(), 9))
        + chunk(b"IEND", b"")
    )


def default_scale(P: int) -> int:
    """Pixels per pitch unit: about 2000 px across, at least 2."""
    return max(2, 2000 // max(P, 1))


def render_index(packing: Packing, scale: int | None = None) -> tuple[np.ndarray, list[tuple[int, int, int]]]:
    """The packing as a palette-index image (and its palette)."""
    k = scale or default_scale(packing.P)
    colours = colour_tiles(packing.squares)
    palette = HUES + [(r * 2 // 3, gr * 2 // 3, b * 2 // 3) for r, gr, b in HUES] + [GREY, GREY_DARK, SEED_MARK]
    g, gd, mark = len(HUES) * 2, len(HUES) * 2 + 1, len(HUES) * 2 + 2
    img = np.full((packing.P * k, packing.P * k), g, dtype=np.uint8)

    def box(x: int, y: int, w: int, h: int, fill: int, edge: int) -> None:
        X, Y, W, H = x * k, y * k, w * k, h * k
        img[Y : Y + H, X : X + W] = edge
        if W > 2 and H > 2:
            img[Y + 1 : Y + H - 1, X + 1 : X + W - 1] = fill

    for zone in packing.zones:
        for x, y, w, h in zone:
            box(x, y, w, h, g, gd)
    for (x, y, s), c in zip(packing.squares, colours, strict=True):
        box(x, y, s, s, c, c + len(HUES))
    if 0 <= packing.seed_tile < len(packing.squares):
        x, y, s = packing.squares[packing.seed_tile]
        X, Y, S = x * k, y * k, s * k
        t = max(1, k)  # a heavy dark outline, then a dot in the middle
        img[Y : Y + S, X : X + t] = img[Y : Y + S, X + S - t : X + S] = mark
        img[Y : Y + t, X : X + S] = img[Y + S - t : Y + S, X : X + S] = mark
        cx, cy, r = X + S // 2, Y + S // 2, max(1, S // 6)
        img[cy - r : cy + r, cx - r : cx + r] = mark
    return img, palette


def render_png(packing: Packing, scale: int | None = None) -> bytes:
    """PNG bytes of the packing picture (see the module docstring)."""
    img, palette = render_index(packing, scale)
    return png_bytes(img, palette)
