"""`tiles daily render`: the day's board as a PNG, from the library's manifest (or a manifest file):
the whole board or one region / one tile, with a cell grid and tile ids when zoomed in, and a legend."""

from __future__ import annotations

from pathlib import Path

from referee import gate
from referee import render as board_render
from referee.render_view import parse_region, tile_region, view_png
from tilelib.errors import BadInput
from tilelib.fsio import atomic_write
from tilelib.store import Library


def render_day(
    day: str,
    library: Path,
    png: Path,
    manifest_file: Path | None = None,
    *,
    region: str | None = None,
    tile: int | None = None,
    scale: int | None = None,
) -> None:
    """Draw the board of ``day`` (or ``region`` "X,Y,W,H" / ``tile``'s window); BadInput if the library
    holds no manifest for it or the view is malformed."""
    if region is not None and tile is not None:
        raise BadInput("give --region or --tile, not both")
    if scale is not None and not 1 <= scale <= 64:
        raise BadInput(f"--scale must be 1..64 pixels per cell, got {scale}")
    with Library.open(library) as lib:
        m = gate.load(manifest_file) if manifest_file is not None else gate.stored(lib, day)
        if m is None:
            raise BadInput(f"no manifest for {day} in {library} (build it first, or pass --manifest)")
        if m.day != day:
            raise BadInput(f"manifest is for {m.day}, not {day}")
        if region is not None:
            parse_region(region, m.G)  # refuse a bad region before the board is built
        board = gate.admit_board(m, lib)
    view = parse_region(region, m.G) if region is not None else tile_region(board, tile) if tile is not None else None
    if view is None and scale is None:
        scale = board_render.default_scale(board.G)
    atomic_write(png, view_png(board, view, scale))
