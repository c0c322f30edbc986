"""The board picture: a valid palette PNG of the right size whose pixels say what each cell is."""

from __future__ import annotations

import struct
import zlib

import numpy as np
import pytest
from referee_support import zoned13 as shared_zoned13

from referee import render
from referee.board import build_board
from tilelib.store import Library


@pytest.fixture(scope="session")
def zoned(tmp_path_factory):
    return shared_zoned13(tmp_path_factory)


def decode(png: bytes) -> np.ndarray:
    """Palette indexes of an 8-bit, filter-0 palette PNG (what png_bytes writes)."""
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    pos, chunks = 8, {}
    while pos < len(png):
        (length,) = struct.unpack(">I", png[pos : pos + 4])
        tag = png[pos + 4 : pos + 8]
        data = png[pos + 8 : pos + 8 + length]
        (crc,) = struct.unpack(">I", png[pos + 8 + length : pos + 12 + length])
        assert crc == zlib.crc32(tag + data) & 0xFFFFFFFF
        chunks[tag] = chunks.get(tag, b"") + data
        pos += 12 + length
    w, h, depth, ctype = struct.unpack(">IIBB", chunks[b"IHDR"][:10])
    assert (depth, ctype) == (8, 3) and len(chunks[b"PLTE"]) == 3 * len(render.PALETTE)
    raw = np.frombuffer(zlib.decompress(chunks[b"IDAT"]), dtype=np.uint8).reshape(h, w + 1)
    assert (raw[:, 0] == 0).all()
    return raw[:, 1:]


def test_picture_cells_colours_and_frame(zoned, tmp_path):
    with Library.open(zoned.lib_path) as lib:
        b = build_board(zoned.manifest, lib)
        b = b.with_clues([(2, 2), (8, 1)])
        path = render.render_board_png(zoned.manifest, lib, tmp_path / "b.png", board=b, scale=4)
    img = decode(path.read_bytes())
    assert img.shape == (13 * 4, 13 * 4)
    cell = img[1::4, 1::4]  # one interior pixel per cell (the seed frame is the outer pixel ring)
    assert (cell[b.owners == 0] == render.P_ZONE).all()
    seam = b.owners >= 2
    assert ((cell[seam] >= render.P_SEAM) & (cell[seam] < render.P_SEAM + 3)).all()
    for r, c in [(2, 2), (8, 1)]:
        assert cell[r, c] == (render.P_CLUE1 if b.solution[r, c] == 1 else render.P_CLUE0)
    single = b.owners == 1
    single[2, 2] = single[8, 1] = False
    lev = cell[single] % 3
    giv = b.givens[single]
    one = b.solution[single] == 1
    assert ((lev == 0) == ~giv).all() and ((lev == 2) == (giv & one)).all()
    # the seed tile (3, window rows/cols 5..10) is framed in black on its outer pixel ring
    assert (img[20, 20:44] == render.P_FRAME).all() and (img[20:44, 43] == render.P_FRAME).all()
    assert img[21, 21] != render.P_FRAME and (img[19, 19:45] == render.P_FRAME).all()
    # each clue is ringed in its own colour around its 3×3 neighbourhood
    for r, c in [(2, 2), (8, 1)]:
        colour = render.P_CLUE1 if b.solution[r, c] == 1 else render.P_CLUE0
        assert (img[(r - 1) * 4, (c - 1) * 4 : (c + 2) * 4] == colour).all()
        assert (img[(r - 1) * 4 : (r + 2) * 4, (c + 2) * 4 - 1] == colour).all()


def test_picture_is_deterministic_and_default_scale(zoned, tmp_path):
    with Library.open(zoned.lib_path) as lib:
        a = render.render_board_png(zoned.manifest, lib, tmp_path / "a.png").read_bytes()
        b = render.render_board_png(zoned.manifest, lib, tmp_path / "b.png").read_bytes()
    assert a == b
    assert decode(a).shape == (13 * 16, 13 * 16)
    assert render.default_scale(1000) == 3 and render.default_scale(61) == 16 and render.default_scale(4096) == 2
