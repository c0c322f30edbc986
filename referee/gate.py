"""The one manifest gate: every reader of a manifest (judge, render, puzzle views, the service,
replay) passes it through here before using it, so nothing is played, drawn or scored on a board
that ``tiles referee verify`` would reject for its structure.

- ``admit(m)``: the checks that need neither library nor seed — the packing validator
  (bounds, sizes, overlap, exact cover, seed tile id) and the manifest's claims
  (``referee.verify.check_claims``: packer known at its version, stats consistent
  with the board). ``CheckFailed`` (exit 5).
- ``admit_board(m, lib)``: ``admit`` plus every tile row fetched and hash-checked
  and every seam agreeing: the rebuilt ``Board``. A row the library lacks is
  ``LibraryOutOfDate`` (exit 3: pull), a damaged row ``CorruptLibrary`` (exit 3).
- ``load(path)`` / ``stored(lib, day)``: parse a file, or a manifest stored in the
  library — there a parse failure is a damaged library (exit 3), not bad input.
"""

from __future__ import annotations

from pathlib import Path

from referee import manifest as manifest_mod
from referee.board import Board, assemble
from referee.manifest import Manifest
from referee.verify import check_claims, check_packing, check_tiles_present
from tilelib import ledger
from tilelib.errors import BadInput, CorruptLibrary
from tilelib.store import Library


def admit(m: Manifest) -> Manifest:
    """Structure and claims; returns ``m`` so calls chain."""
    check_packing(m)
    check_claims(m)
    return m


def admit_board(m: Manifest, lib: Library) -> Board:
    """``admit``, then the tiles (present, untampered, right size) and the seams: the board."""
    admit(m)
    return assemble(m, check_tiles_present(m, lib))


def load(path: str | Path) -> Manifest:
    """A manifest file, parsed (BadInput) and admitted (CheckFailed)."""
    return admit(manifest_mod.load(path))


def stored(lib: Library, day: str) -> Manifest | None:
    """The manifest the library holds for ``day`` (None if none), admitted; a stored text that no
    longer parses is a damaged library (CorruptLibrary, exit 3)."""
    text = ledger.get_manifest(lib.conn, day)
    if text is None:
        return None
    try:
        m = manifest_mod.from_json(text)
    except BadInput as err:
        raise CorruptLibrary(f"{lib.path}: the stored manifest of {day} is damaged ({err})") from err
    if m.day != day:
        raise CorruptLibrary(f"{lib.path}: the manifest stored under {day} is for {m.day}")
    return admit(m)


__all__ = ["admit", "admit_board", "load", "stored"]
