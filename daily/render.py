"""`tiles daily render`: the day's board as a PNG, from the library's manifest (or a manifest file)."""

from __future__ import annotations

from pathlib import Path

from referee import manifest as manifest_mod
from referee.render import render_board_png
from tilelib import ledger
from tilelib.errors import BadInput
from tilelib.store import Library


def render_day(day: str, library: Path, png: Path, manifest_file: Path | None = None) -> None:
    """Draw the board of ``day``; BadInput if the library holds no manifest for it."""
    with Library.open(library) as lib:
        if manifest_file is not None:
            m = manifest_mod.load(manifest_file)
        else:
            text = ledger.get_manifest(lib.conn, day)
            if text is None:
                raise BadInput(f"no manifest for {day} in {library} (build it first, or pass --manifest)")
            m = manifest_mod.from_json(text)
        if m.day != day:
            raise BadInput(f"manifest is for {m.day}, not {day}")
        render_board_png(m, lib, png)
