"""A day's board held in memory, and the views the service and the CLI show of it.

``load_manifest`` is the ONE way this package reads a manifest: it parses
(``referee.manifest.from_json``) and passes the one manifest gate
(``referee.gate``: the packing and claims checks of ``tiles referee verify``),
so a malformed or overlapping manifest is refused before any board is built.

``DayBoard.load`` rebuilds the board once (``referee.gate.admit_board``) and
keeps a ``Judge`` over it (seam neighbours, solution windows), so judging a
move later is O(tile). The views are pure functions of the board: nothing here
ever returns a solution cell that is neither given nor known from a tile the
run has solved.
"""

from __future__ import annotations

import base64
import datetime as dt
import gc
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from packers.packing import adjacency
from packers.render import colour_tiles
from referee import gate
from referee.board import Board
from referee.closure import solved_cells
from referee.judge import Judge
from referee.manifest import Manifest, from_json
from tilelib import ledger
from tilelib.errors import BadInput, NotFound
from tilelib.store import Library


def load_manifest(source) -> Manifest:
    """Parse a manifest (dict, JSON text/bytes, or a path) and pass it through the one manifest gate
    (``referee.gate``: the packing validator and the manifest's claims, as ``verify`` runs them).

    BadInput for a malformed manifest, ``CheckFailed`` for a structure verify would reject. Every
    manifest the service or its CLI views use comes through here."""
    if isinstance(source, Path):
        return gate.load(source)
    return gate.admit(from_json(source))


def day_is_over(day: str, today: dt.date | None = None) -> bool:
    """True once ``day`` is in the past (UTC): the rule of ``tiles daily reveal``
    (``daily.seed.check_revealable``). Solutions and the full manifest wait for it."""
    today = today or dt.datetime.now(dt.UTC).date()
    return dt.date.fromisoformat(day) < today


@dataclass
class DayBoard:
    """One day: its manifest, the rebuilt board, the judge over it and cached public views."""

    manifest: Manifest
    board: Board
    judge: Judge
    colours: list[int]
    touching: list[set[int]]  # tiles sharing at least one board cell (seam neighbours and corners)
    clues_by_tile: dict[int, list[tuple[int, int]]] = field(default_factory=dict)

    @property
    def day(self) -> str:
        return self.manifest.day

    @classmethod
    def load(cls, manifest: Manifest, lib: Library, runs_path: str | Path) -> DayBoard:
        """Rebuild the board once (CheckFailed if a tile is missing or two tiles disagree on a seam)."""
        board = gate.admit_board(manifest, lib)
        judge = Judge(manifest, board, runs_path)
        by_tile: dict[int, list[tuple[int, int]]] = {}
        for r, c in board.clues:
            for i in tiles_at(board, r, c):
                by_tile.setdefault(i, []).append((r, c))
        touching = [set(nb) for nb in adjacency(board.squares)]
        return cls(manifest, board, judge, colour_tiles(board.squares), touching, by_tile)

    def n(self, tile: int) -> int:
        return self.board.squares[tile][2] + 1


def tiles_at(board: Board, row: int, col: int) -> list[int]:
    """Ids of the tiles whose window holds board cell (row, col) (up to 4; a linear scan)."""
    return [i for i, (x0, y0, s) in enumerate(board.squares) if y0 <= row <= y0 + s and x0 <= col <= x0 + s]


def load_days(
    lib: Library, runs_path: str | Path, manifests: list[Path] | None = None, days: list[str] | None = None
) -> dict[str, DayBoard]:
    """The days on offer: the given manifest files, else every manifest in the library's ledger
    (optionally only ``days``). BadInput if two manifests claim one day or a named day has none."""
    found: list[Manifest] = []
    if manifests:
        found = [load_manifest(Path(p)) for p in manifests]
    else:
        for d in days or ledger.manifest_days(lib.conn):
            text = ledger.get_manifest(lib.conn, d)
            if text is None:
                raise BadInput(f"no manifest for {d} in the library")
            found.append(load_manifest(text))
    out: dict[str, DayBoard] = {}
    for m in found:
        if m.day in out:
            raise BadInput(f"two manifests for {m.day}; offer one board per day")
        out[m.day] = DayBoard.load(m, lib, runs_path)
    return out


# ------------------------------------------------------------------ views


def public_board(db: DayBoard, over: bool) -> dict:
    """What anyone may see of a day: geometry, zones, seed tile, clue cells with values, the colouring."""
    b, m = db.board, db.manifest
    return {
        "day": m.day,
        "G": b.G,
        "status": m.status,
        "seed_tile": b.seed_tile,
        "over": over,
        "board": m.digest(),
        "tiles": [
            {"id": i, "x0": x0, "y0": y0, "n": s + 1, "colour": db.colours[i]}
            for i, (x0, y0, s) in enumerate(b.squares)
        ],
        "zones": [{"id": i, "rects": [list(r) for r in z]} for i, z in enumerate(m.packing.zones)],
        "clues": [[r, c, int(b.solution[r, c])] for r, c in b.clues],
    }


def given_cells(board: Board) -> dict:
    """Every given cell of the board as two bit planes (``numpy.packbits`` of the G×G row-major mask,
    base64): ``givens`` (which cells show) and ``values`` (their value; 0 where not given)."""
    mask = board.givens & (board.owners > 0)
    vals = mask & (board.solution == 1)
    enc = lambda a: base64.b64encode(np.packbits(a.ravel()).tobytes()).decode("ascii")  # noqa: E731
    return {"G": board.G, "givens": enc(mask), "values": enc(vals), "tile_cells": enc(board.owners > 0)}


def _mask(a: np.ndarray) -> str:
    """A bool/0-1 array as a row-major string of '0'/'1'."""
    return (a.ravel().astype(np.uint8) + ord("0")).tobytes().decode("ascii")


def puzzle_view(db: DayBoard, tile: int, solved: set[int]) -> dict:
    """Tile ``tile``'s puzzle in board position for a run that has solved ``solved``.

    ``puzzle`` is n·n chars row-major from board cell (y0, x0): ``0``/``1`` where the cell shows (a
    board given: the tile's own, a neighbour's on the seam, a zone cell, a clue) or is known from a
    solved neighbour, ``.`` elsewhere — the string ``tiles solve`` reads. ``givens``, ``known`` and
    ``zone`` are masks of the same layout; ``clues`` are [row, col, value] in board coordinates."""
    b = db.board
    k = len(b.squares)
    if not 0 <= tile < k:
        raise NotFound(f"unknown tile id {tile} (this board has tiles 0..{k - 1})")
    x0, y0, s = b.squares[tile]
    rows, cols = b.window(tile)
    giv = b.givens[rows, cols]
    known = solved_cells(b, solved, tile, db.touching)  # the closure's view (FORMAT §10) less the givens
    shown = giv | known
    sol = b.solution[rows, cols]
    puzzle = np.where(shown, sol + ord("0"), ord(".")).astype(np.uint8).tobytes().decode("ascii")
    playable = tile not in solved and (tile == b.seed_tile or bool(db.judge.nbrs[tile] & solved))
    return {
        "day": db.day,
        "tile": tile,
        "x0": x0,
        "y0": y0,
        "n": s + 1,
        "seed": tile == b.seed_tile,
        "solved": tile in solved,
        "playable": playable,
        "neighbours": sorted(db.judge.nbrs[tile]),
        "puzzle": puzzle,
        "givens": _mask(giv),
        "known": _mask(known & ~giv),
        "zone": _mask(b.zone_givens[rows, cols]),
        "clues": [[r, c, int(b.solution[r, c])] for r, c in db.clues_by_tile.get(tile, [])],
    }


def frontier(db: DayBoard, solved: set[int]) -> set[int]:
    """Tiles a run may play now: the seed tile until solved, and every unsolved seam neighbour of a
    solved tile (the judge's acceptance rule, as a set)."""
    out = {db.board.seed_tile} - solved
    for t in solved:
        out |= db.judge.nbrs[t]
    return out - solved


def tile_solution(db: DayBoard, tile: int) -> str:
    """The solution window of a tile (only served once the day is over)."""
    k = len(db.board.squares)
    if not 0 <= tile < k:
        raise NotFound(f"unknown tile id {tile} (this board has tiles 0..{k - 1})")
    return db.judge.truth(tile)


def grid_text(puzzle: str, n: int) -> str:
    """A puzzle string as n lines of space-separated cells (the CLI's grid)."""
    return "\n".join(" ".join(puzzle[r * n : (r + 1) * n]) for r in range(n))


def settle() -> None:
    """Take every object made so far out of the garbage collector's reach (``gc.freeze``): the days'
    boards live as long as the service, and a full collection walking them stopped a worker's loop
    for ~95 ms at G=301 (160k objects), the tail of every request under load (DECISIONS 0040). Called
    once the service is open (``worker.open_service``) and after each day the watcher adds."""
    gc.freeze()
