"""The referee's judge (FORMAT §10, §12): runs of moves on a day's board, persisted in the runs
database (``referee.runsdb``: a SQLite file or PostgreSQL).

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
one transaction holding the run's lock (``Tx.lock_run``): it is judged whole or
not at all, and two judges on one run serialise. A run belongs to one board
(the manifest's sha256); a submission naming a run of another board, or one
that is not even a JSON object with a string ``run`` and a list ``moves``,
is ``BadInput`` and writes nothing; so is a ``--runs`` file that is not a runs file.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from packers.packing import seam_neighbours
from referee.board import Board
from referee.manifest import Manifest
from referee.runsdb import Tx, opened, solved_of
from tilelib import jsonin
from tilelib.errors import BadInput

MAX_RUN_NAME = 200
MAX_CELLS_STORED = 256  # cells strings are stored up to this length (a 16×16 window)
OFF_FRONTIER = "shares no seam with a solved tile"  # the reason of a move off the run's frontier
MAX_MOVES = 4096  # moves per submission: a run spans many submissions, each one transaction
MAX_SUBMISSION_BYTES = 4 << 20


def parse_submission(text: str | bytes | dict) -> tuple[str, list]:
    """(run, raw moves) of a submission; BadInput if it is not that shape at all."""
    obj = text
    if isinstance(obj, (bytes, bytearray, str)):
        obj = jsonin.parse(obj, "submission", MAX_SUBMISSION_BYTES)
    if not isinstance(obj, dict):
        raise BadInput('submission: must be a JSON object {"run": ..., "moves": [...]}')
    run = obj.get("run")
    if not isinstance(run, str) or not run or len(run) > MAX_RUN_NAME or storable(run) != run:
        raise BadInput(f"submission: 'run' must be a non-empty string of at most {MAX_RUN_NAME} chars of valid Unicode")
    moves = obj.get("moves")
    if not isinstance(moves, list):
        raise BadInput("submission: 'moves' must be a list")
    if len(moves) > MAX_MOVES:
        raise BadInput(f"submission: {len(moves):,} moves is over the limit of {MAX_MOVES:,} per submission")
    return run, moves


def storable(text: str) -> str:
    """``text`` as both backends can store it: lone surrogates (legal in JSON text, not in UTF-8)
    and NUL (legal in SQLite text, not in PostgreSQL's) escaped."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        text = text.encode("utf-8", "backslashreplace").decode("utf-8")
    return text.replace("\x00", "\\x00")


def _verdict(tile: Any, accepted: bool, correct: bool, reward: int, reason: str | None) -> dict:
    return {"tile": tile, "accepted": accepted, "correct": correct, "reward": reward, "reason": reason}


INSERT_ROWS = 500  # moves per INSERT statement: 8 values a row stays under SQLite's 32,766 variables


def _insert_moves(tx: Tx, rows: list[tuple]) -> list[int]:
    """Store ``rows`` of ``moves`` in one statement (one round trip to PostgreSQL, not one a move); their
    ids. Within one run they ascend batch after batch (the run is locked); other runs' moves may take
    ids between them, so a batch is its id range *and* its run."""
    values = ",".join(["(?,?,?,?,?,?,?,?)"] * len(rows))
    return [
        i
        for (i,) in tx.rows(
            f"INSERT INTO moves (run, tile, cells, accepted, correct, reward, reason, at) VALUES {values} RETURNING id",
            [x for r in rows for x in r],
        )
    ]


class Judge:
    """Judges submissions on one board against one runs database (a file or a URL)."""

    def __init__(self, manifest: Manifest, board: Board, runs: str | Path) -> None:
        self.manifest = manifest
        self.board = board
        self.digest = manifest.digest()
        self.runs = runs  # the runs database ``judge`` and ``score`` open: a path or a URL
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
            return _verdict(None, False, False, 0, 'a move must be an object {"tile": id, "cells": "01…"}')
        tile = move.get("tile")
        shown = tile if type(tile) is int else (tile[:40] if isinstance(tile, str) else None)
        if type(tile) is not int:
            return _verdict(shown, False, False, 0, "'tile' must be an integer tile id")
        k = len(self.board.squares)
        if not 0 <= tile < k:
            return _verdict(tile, False, False, 0, f"unknown tile id {tile} (this board has tiles 0..{k - 1})")
        if tile not in solved and tile != self.board.seed_tile and not (self.nbrs[tile] & solved):
            # before the cells' form: a move off the frontier is off it whatever it holds (the service
            # refuses its whole batch on this reason, so a malformed one must not hide it)
            return _verdict(
                tile, False, False, 0, f"tile {tile} is not the seed tile ({self.board.seed_tile}) and {OFF_FRONTIER}"
            )
        cells = move.get("cells")
        if not isinstance(cells, str):
            return _verdict(tile, False, False, 0, "'cells' must be a string of '0' and '1'")
        n = self.board.squares[tile][2] + 1
        if len(cells) != n * n:
            return _verdict(
                tile, False, False, 0, f"'cells' holds {len(cells)} characters; tile {tile} (n={n}) needs {n * n}"
            )
        bad = next((j for j, ch in enumerate(cells) if ch not in "01"), None)
        if bad is not None:
            return _verdict(
                tile, False, False, 0, f"'cells' may hold only '0' and '1' ({cells[bad]!r} at position {bad})"
            )
        if tile in solved:
            return _verdict(tile, False, False, 0, f"tile {tile} is already solved in this run (replay)")
        if cells != self.truth(tile):
            return _verdict(tile, True, False, 0, "incorrect: the cells differ from the board's solution")
        solved.add(tile)
        return _verdict(tile, True, True, n * n, None)

    def judge(self, submission: str | bytes | dict) -> list[dict]:
        """Judge a whole submission in one transaction of the runs database; the verdicts in move order."""
        run, moves = parse_submission(submission)
        with opened(self.runs) as db:
            return db.atomic(lambda tx: self._judge_in(tx, run, moves))

    def _judge_in(self, tx: Tx, run: str, moves: list) -> list[dict]:
        # made if new (two judges making one run: the second waits for the first, then finds it), then locked
        now = time.time()
        tx.write(
            "INSERT INTO runs (run, board, day, created, created_at) VALUES (?,?,?,?,?) ON CONFLICT (run) DO NOTHING",
            (run, self.digest, self.manifest.day, int(now), now),
        )
        row = tx.lock_run(run)
        assert row is not None, f"run {run!r} was made just above"
        if row[0] != self.digest:
            raise BadInput(f"run {run!r} belongs to another board (day {row[1]}); pick a new run name")
        return self.record(tx, run, moves, solved_of(tx.rows, run))

    def record(self, tx: Tx, run: str, moves: list, solved: set[int], asked: int = 0) -> list[dict]:
        """Judge ``moves`` in order against the run's ``solved`` tiles (updated in place) and store every
        move, one ``batches`` row (the submission, for the analyzer) and the run's new move count, with
        ``asked`` more requests (the service's count, ``referee.service.asked``) and, the first time
        every tile is solved, the requests it took (``cleared_requests``) — one row update.
        The caller holds the transaction and the run's lock (``Tx.lock_run``). This is the one
        judging core: ``judge`` and the referee service both call it."""
        out, rows = [], []
        now = time.time()
        for mv in moves:
            v = self.judge_move(mv, solved)
            cells = mv.get("cells") if isinstance(mv, dict) else None
            cells = storable(cells[:MAX_CELLS_STORED]) if isinstance(cells, str) else None
            tile = v["tile"] if type(v["tile"]) is int and 0 <= v["tile"] < len(self.board.squares) else None
            rows.append((run, tile, cells, int(v["accepted"]), int(v["correct"]), v["reward"], v["reason"], int(now)))
            out.append(v)
        ids = [i for k in range(0, len(rows), INSERT_ROWS) for i in _insert_moves(tx, rows[k : k + INSERT_ROWS])]
        if ids:
            tx.write(
                "INSERT INTO batches (run, first_move, last_move, at) VALUES (?,?,?,?)", (run, min(ids), max(ids), now)
            )
            cleared = len(solved) == len(self.board.squares)
            # both backends read the row's old values on the right of an UPDATE: the snapshot is old + asked
            tx.write(
                "UPDATE runs SET nmoves = nmoves + ?, requests = requests + ?, cleared_requests = CASE WHEN "
                "cleared_requests IS NULL AND ? = 1 THEN requests + ? ELSE cleared_requests END WHERE run = ?",
                (len(out), asked, int(cleared), asked, run),
            )
        return out

    def score(self, run: str) -> dict:
        """A run's totals so far: solved tiles and reward."""
        with opened(self.runs) as db:
            ((solved, reward),) = db.read(
                "SELECT count(*), coalesce(sum(reward), 0) FROM moves WHERE run = ? AND correct = 1", (run,)
            )
        return {"run": run, "solved": solved, "reward": reward}
