"""`tiles daily render`: the day's board as a PNG, from the library's manifest (or a manifest file)."""

from __future__ import annotations

from pathlib import Path

from referee import gate
from referee.render import render_board_png
from tilelib.errors import BadInput
from tilelib.store import Library


def render_day(day: str, library: Path, png: Path, manifest_file: Path | None = None) -> None:
    """Draw the board of ``day``; BadInput if the library holds no manifest for it."""
    with Library.open(library) as lib:
        m = gate.load(manifest_file) if manifest_file is not None else gate.stored(lib, day)
        if m is None:
            raise BadInput(f"no manifest for {day} in {library} (build it first, or pass --manifest)")
        if m.day != day:
            raise BadInput(f"manifest is for {m.day}, not {day}")
        render_board_png(m, lib, png, board=gate.admit_board(m, lib))
