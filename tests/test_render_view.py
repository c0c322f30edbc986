"""`tiles daily render --region/--tile/--scale`: the crop's cells carry the board picture's colours,
the grid and tile ids appear when zoomed in, a legend strip sits under the picture, bad views are refused."""

from __future__ import annotations

import struct
import zlib

import numpy as np
import pytest
from cli_support import run_tiles
from referee_support import zoned13

from referee import render
from referee.board import build_board
from referee.render_view import GRID, PALETTE, TEXT, WHITE, draw_text, parse_region, tile_region, view_image, view_png
from tilelib import ledger
from tilelib.errors import BadInput
from tilelib.store import Library


@pytest.fixture(scope="module")
def zb(tmp_path_factory):
    z = zoned13(tmp_path_factory)
    with Library.open(z.lib_path) as lib:
        return z, build_board(z.manifest, lib).with_clues([(2, 2)])


def decode(png: bytes) -> np.ndarray:
    pos, chunks = 8, {}
    while pos < len(png):
        (length,) = struct.unpack(">I", png[pos : pos + 4])
        chunks[png[pos + 4 : pos + 8]] = chunks.get(png[pos + 4 : pos + 8], b"") + png[pos + 8 : pos + 8 + length]
        pos += 12 + length
    w, h = struct.unpack(">II", chunks[b"IHDR"][:8])
    assert len(chunks[b"PLTE"]) == 3 * len(PALETTE)
    return np.frombuffer(zlib.decompress(chunks[b"IDAT"]), dtype=np.uint8).reshape(h, w + 1)[:, 1:]


@pytest.mark.parametrize("region,k", [((0, 0, 13, 13), 4), ((3, 4, 6, 5), 8), ((5, 5, 6, 6), 20)])
def test_region_cells_keep_the_board_colours(zb, region, k):
    _, b = zb
    x, y, w, h = region
    img = view_image(b, region, k, legend=False)
    assert img.shape == (h * k, w * k)
    idx = render.cell_index(b)
    mid = img[k // 2 :: k, k // 2 :: k]  # one central pixel per cell: off the grid and frame
    clue_ring = np.zeros_like(idx, dtype=bool)
    clue_ring[1:4, 1:4] = True  # the clue ring may cross cells next to (2, 2)
    want = idx[y : y + h, x : x + w]
    ok = (mid == want) | clue_ring[y : y + h, x : x + w] | (mid == TEXT) | (mid == WHITE)
    assert ok.all()
    if k >= 6:  # grid lines, except where the seed frame, the clue ring or an id label is drawn over them
        lines = np.concatenate([img[::k, :].ravel(), img[:, ::k].ravel()])
        drawn = [GRID, render.P_FRAME, render.P_CLUE0, render.P_CLUE1, TEXT, WHITE]
        assert np.isin(lines, drawn).all() and (lines == GRID).mean() > 0.7
    else:
        assert not (img == GRID).any()


def test_tile_ids_show_when_zoomed_in_and_legend_sits_below(zb):
    _, b = zb
    plain = view_image(b, (0, 0, 13, 13), 2, legend=False)
    assert not (plain == TEXT).any()  # 12 px tiles: no room for an id
    big = view_image(b, (0, 0, 13, 13), 16, legend=False)
    for _i, (x0, y0, _s) in enumerate(b.squares):  # each tile's id box at its top-left interior cell
        py, px = (y0 + 1) * 16 + 1, (x0 + 1) * 16 + 1
        assert big[py, px] == WHITE and (big[py : py + 12, px : px + 12] == TEXT).any()
    with_legend = view_image(b, (0, 0, 13, 13), 16)
    assert with_legend.shape[0] > big.shape[0] and (with_legend[: big.shape[0], : big.shape[1]] == big).all()
    strip = with_legend[big.shape[0] :]
    for colour in (render.P_ZONE, render.P_SEAM, render.P_CLUE0, render.P_CLUE1, render.P_FRAME):
        assert (strip == colour).any()


def test_font_is_clipped_at_every_edge():
    img = np.zeros((10, 10), dtype=np.uint8)
    draw_text(img, -8, -8, "88", 2)  # only the bottom row of the second 8 is on the image
    draw_text(img, 8, 8, "8", 2)  # only the top-left of this one
    want = np.zeros((10, 10), dtype=np.uint8)
    want[0:2, 0:6] = TEXT
    want[8:10, 8:10] = TEXT
    assert (img == want).all()


def test_bad_views_are_refused(zb):
    _, b = zb
    for text in ("1,2,3", "a,b,c,d", "0,0,0,5", "10,10,4,4", "-1,0,3,3"):
        with pytest.raises(BadInput, match="--region"):
            parse_region(text, 13)
    assert parse_region("0,0,13,13", 13) == (0, 0, 13, 13)
    assert tile_region(b, 3) == (3, 3, 10, 10)
    with pytest.raises(BadInput, match="--tile"):
        tile_region(b, 4)
    with pytest.raises(BadInput, match="--scale"):
        view_image(b, None, 65)


def test_cli_render_region_tile_scale(zb, tmp_path):
    z, b = zb
    lib = tmp_path / "lib.sqlite"
    lib.write_bytes(z.lib_path.read_bytes())
    with Library.open(lib) as lb:
        ledger.put_manifest(lb.conn, z.manifest.day, z.manifest.seed_commit, z.manifest.to_json())

    def render_day(*args):
        return run_tiles("daily", "render", "--date", z.manifest.day, "-L", str(lib), *args)

    assert render_day("--png", str(tmp_path / "a.png"), "--region", "2,3,6,5", "--scale", "10").returncode == 0
    assert decode((tmp_path / "a.png").read_bytes())[:50, :60].shape == (50, 60)
    assert render_day("--png", str(tmp_path / "t.png"), "--tile", "0").returncode == 0
    assert (tmp_path / "t.png").read_bytes() == view_png(b.with_clues(()), tile_region(b, 0), None)
    assert render_day("--png", str(tmp_path / "w.png")).returncode == 0
    whole = decode((tmp_path / "w.png").read_bytes())
    assert whole.shape[1] >= 13 * render.default_scale(13)
    for args in (["--region", "0,0,99,1"], ["--tile", "9"], ["--region", "0,0,2,2", "--tile", "1"], ["--scale", "0"]):
        r = render_day("--png", str(tmp_path / "bad.png"), *args)
        assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "bad.png").exists()
