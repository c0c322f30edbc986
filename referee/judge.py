"""The referee's judge (FORMAT §10, §12): runs of moves on a day's board, persisted in SQLite.

A submission is JSON ``{"run": "name", "moves": [{"tile": id, "cells": "0101…"}, …]}``;
``cells`` is the tile's window as it lies on the board, n·n chars of ``0``/``1``,
row-major from board cell (y0, x0). Each move yields one verdict
``{"tile", "accepted", "correct", "reward", "reason"}``:

- **accepted** when the move is well formed (an object with an integer
  ``tile`` that is a tile id and a string ``cells`` of exactly n·n chars, each
  ``0`` or ``1``), the tile is not already solved in this run (a *replay*),
  and the tile is the seed tile or **shares a seam** with a tile already
  solved in this run. Two tiles share a seam when their windows share at
  least two board cells — a stretch of side; tiles that touch only at a
  corner share one cell and do not count.
- **correct** when accepted and ``cells`` equals the board's solution there;
  then the tile is solved and the reward is n² (else 0).
- otherwise ``reason`` says why (``null`` for a correct move).

Moves are judged in order, so a later move may build on an earlier one in
the same submission. Every move, rejected or not, is stored. A submission is
one SQLite transaction (``BEGIN IMMEDIATE``): it is judged whole or not at
all, and two judges on one runs file serialise. A run belongs to one board
(the manifest's sha256); a submission naming a run of another board, or one
that is not even a JSON object with a string ``run`` and a list ``moves``,
is ``BadInput`` and writes nothing; so is a ``--runs`` file that is not a runs file.
"""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path
from typing import Any

from packers.packing import seam_neighbours
from referee.board import Board
from referee.manifest import Manifest
from tilelib import jsonin
from tilelib.db import transaction
from tilelib.errors import BadInput, CorruptLibrary

RUNS_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS runs (
    run TEXT PRIMARY KEY, board TEXT NOT NULL, day TEXT NOT NULL, created INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS moves (
    id INTEGER PRIMARY KEY, run TEXT NOT NULL REFERENCES runs(run), tile INTEGER, cells TEXT,
    accepted INTEGER NOT NULL, correct INTEGER NOT NULL, reward INTEGER NOT NULL, reason TEXT,
    at INTEGER NOT NULL);
CREATE INDEX IF NOT EXISTS moves_run ON moves (run, correct, tile);
CREATE TABLE IF NOT EXISTS batches (
    id INTEGER PRIMARY KEY, run TEXT NOT NULL REFERENCES runs(run), first_move INTEGER NOT NULL,
    last_move INTEGER NOT NULL, at REAL NOT NULL);
CREATE INDEX IF NOT EXISTS batches_run ON batches (run, id);
CREATE TABLE IF NOT EXISTS tokens (
    run TEXT PRIMARY KEY REFERENCES runs(run), token_sha256 TEXT NOT NULL, player TEXT);
CREATE TABLE IF NOT EXISTS idempotency (
    run TEXT NOT NULL REFERENCES runs(run), key TEXT NOT NULL, body_sha256 TEXT NOT NULL,
    answer TEXT NOT NULL, at INTEGER NOT NULL, PRIMARY KEY (run, key));
"""
RUNS_KIND = "tiles-runs/1"
MAX_RUN_NAME = 200
MAX_CELLS_STORED = 256  # cells strings are stored up to this length (a 16×16 window)
OFF_FRONTIER = "shares no seam with a solved tile"   # the reason of a move off the run's frontier
MAX_MOVES = 4096        # moves per submission: a run spans many submissions, each one transaction
MAX_SUBMISSION_BYTES = 4 << 20


def open_runs(path: str | Path) -> sqlite3.Connection:
    """Open a runs file, creating it if absent or empty. An existing file that is not a runs file (a tile
    library, say) is refused with BadInput and left untouched."""
    p = Path(path)
    if p.is_dir():
        raise BadInput(f"--runs {p} is a directory, not a runs file")
    if not p.parent.is_dir():
        raise BadInput(f"--runs {p}: the folder {p.parent} does not exist")
    fresh = not p.exists() or p.stat().st_size == 0
    if not fresh:
        with open(p, "rb") as fh:
            if fh.read(16) != b"SQLite format 3\x00":
                raise BadInput(f"{p} is not a runs file (not SQLite)")
    try:
        conn = sqlite3.connect(p, isolation_level=None, timeout=30)
        if not fresh:
            try:
                row = conn.execute("SELECT value FROM meta WHERE key = 'kind'").fetchone()
            except sqlite3.OperationalError:
                row = None
            if row is None or row[0] != RUNS_KIND:
                conn.close()
                raise BadInput(f"{p} is not a runs file (no meta kind {RUNS_KIND!r}); refusing to touch it")
        conn.executescript(RUNS_SCHEMA)
        conn.execute("INSERT OR IGNORE INTO meta VALUES ('kind', ?)", (RUNS_KIND,))
    except sqlite3.DatabaseError as e:
        raise CorruptLibrary(f"{p}: cannot use as a runs file ({e})") from e
    return conn


def parse_submission(text: str | bytes | dict) -> tuple[str, list]:
    """(run, raw moves) of a submission; BadInput if it is not that shape at all."""
    obj = text
    if isinstance(obj, (bytes, bytearray, str)):
        obj = jsonin.parse(obj, "submission", MAX_SUBMISSION_BYTES)
    if not isinstance(obj, dict):
        raise BadInput("submission: must be a JSON object {\"run\": ..., \"moves\": [...]}")
    run = obj.get("run")
    if not isinstance(run, str) or not run or len(run) > MAX_RUN_NAME or storable(run) != run:
        raise BadInput(f"submission: 'run' must be a non-empty string of at most {MAX_RUN_NAME} "
                       "chars of valid Unicode")
    moves = obj.get("moves")
    if not isinstance(moves, list):
        raise BadInput("submission: 'moves' must be a list")
    if len(moves) > MAX_MOVES:
        raise BadInput(f"submission: {len(moves):,} moves is over the limit of {MAX_MOVES:,} per submission")
    return run, moves


def storable(text: str) -> str:
    """``text`` as SQLite can store it: lone surrogates (legal in JSON text, not in UTF-8) escaped."""
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        return text.encode("utf-8", "backslashreplace").decode("utf-8")


def _verdict(tile: Any, accepted: bool, correct: bool, reward: int, reason: str | None) -> dict:
    return {"tile": tile, "accepted": accepted, "correct": correct, "reward": reward, "reason": reason}


class Judge:
    """Judges submissions on one board against one runs file."""

    def __init__(self, manifest: Manifest, board: Board, runs_path: str | Path) -> None:
        self.manifest = manifest
        self.board = board
        self.digest = manifest.digest()
        self.path = Path(runs_path)
        self.nbrs = seam_neighbours(board.squares)
        self._truth: dict[int, str] = {}

    def truth(self, i: int) -> str:
        """Tile i's window of the board solution as n·n chars."""
        if i not in self._truth:
            self._truth[i] = "".join("01"[v] for v in self.board.tile_solution(i).ravel())
        return self._truth[i]

    def judge_move(self, move: Any, solved: set[int]) -> dict:
        """The verdict on one raw move given the run's solved tiles (updated when correct)."""
        if not isinstance(move, dict):
            return _verdict(None, False, False, 0, "a move must be an object {\"tile\": id, \"cells\": \"01…\"}")
        tile = move.get("tile")
        shown = tile if type(tile) is int else (tile[:40] if isinstance(tile, str) else None)
        if type(tile) is not int:
            return _verdict(shown, False, False, 0, "'tile' must be an integer tile id")
        k = len(self.board.squares)
        if not 0 <= tile < k:
            return _verdict(tile, False, False, 0, f"unknown tile id {tile} (this board has tiles 0..{k - 1})")
        cells = move.get("cells")
        if not isinstance(cells, str):
            return _verdict(tile, False, False, 0, "'cells' must be a string of '0' and '1'")
        n = self.board.squares[tile][2] + 1
        if len(cells) != n * n:
            return _verdict(tile, False, False, 0, f"'cells' holds {len(cells)} characters; tile {tile} "
                                                   f"(n={n}) needs {n * n}")
        bad = next((j for j, ch in enumerate(cells) if ch not in "01"), None)
        if bad is not None:
            return _verdict(tile, False, False, 0, f"'cells' may hold only '0' and '1' "
                                                   f"({cells[bad]!r} at position {bad})")
        if tile in solved:
            return _verdict(tile, False, False, 0, f"tile {tile} is already solved in this run (replay)")
        if tile != self.board.seed_tile and not (self.nbrs[tile] & solved):
            return _verdict(tile, False, False, 0, f"tile {tile} is not the seed tile "
                                                   f"({self.board.seed_tile}) and {OFF_FRONTIER}")
        if cells != self.truth(tile):
            return _verdict(tile, True, False, 0, "incorrect: the cells differ from the board's solution")
        solved.add(tile)
        return _verdict(tile, True, True, n * n, None)

    def judge(self, submission: str | bytes | dict) -> list[dict]:
        """Judge a whole submission in one transaction; return the verdicts in move order."""
        run, moves = parse_submission(submission)
        conn = open_runs(self.path)
        try:
            with transaction(conn):
                row = conn.execute("SELECT board, day FROM runs WHERE run = ?", (run,)).fetchone()
                if row is None:
                    conn.execute("INSERT INTO runs VALUES (?,?,?,?)",
                                 (run, self.digest, self.manifest.day, int(time.time())))
                elif row[0] != self.digest:
                    raise BadInput(f"run {run!r} belongs to another board (day {row[1]}); pick a new run name")
                solved = {t for (t,) in conn.execute(
                    "SELECT tile FROM moves WHERE run = ? AND correct = 1", (run,))}
                out = self.record(conn, run, moves, solved)
        except sqlite3.DatabaseError as e:
            raise CorruptLibrary(f"{self.path}: {e}") from e
        finally:
            conn.close()
        return out

    def record(self, conn: sqlite3.Connection, run: str, moves: list, solved: set[int]) -> list[dict]:
        """Judge ``moves`` in order against the run's ``solved`` tiles (updated in place) and store every
        move plus one ``batches`` row (the submission, for the analyzer). The caller holds the
        transaction. This is the one judging core: ``judge`` and the referee service both call it."""
        out = []
        now = time.time()
        first = last = None
        for mv in moves:
            v = self.judge_move(mv, solved)
            cells = mv.get("cells") if isinstance(mv, dict) else None
            cells = storable(cells[:MAX_CELLS_STORED]) if isinstance(cells, str) else None
            tile = v["tile"] if type(v["tile"]) is int and 0 <= v["tile"] < len(self.board.squares) else None
            cur = conn.execute("INSERT INTO moves (run, tile, cells, accepted, correct, reward, reason, at) "
                               "VALUES (?,?,?,?,?,?,?,?)",
                               (run, tile, cells, int(v["accepted"]), int(v["correct"]), v["reward"],
                                v["reason"], int(now)))
            first = cur.lastrowid if first is None else first
            last = cur.lastrowid
            out.append(v)
        if first is not None:
            conn.execute("INSERT INTO batches (run, first_move, last_move, at) VALUES (?,?,?,?)",
                         (run, first, last, now))
        return out

    def score(self, run: str) -> dict:
        """A run's totals so far: solved tiles and reward."""
        conn = open_runs(self.path)
        try:
            solved, reward = conn.execute(
                "SELECT count(*), coalesce(sum(reward), 0) FROM moves WHERE run = ? AND correct = 1",
                (run,)).fetchone()
        finally:
            conn.close()
        return {"run": run, "solved": solved, "reward": reward}
