"""Runs of the referee service in the runs database (``referee.judge``'s schema: runs, moves,
batches, tokens).

A run is created for a day with a random id and a secret token; only sha256(token) is stored.
Moves are judged by ``Judge.record`` — the same core as ``tiles referee judge`` — inside one
``BEGIN IMMEDIATE`` transaction per submission, against the run's solved set held in memory (so a
move costs O(tile), never a board rebuild or a scan of the run). If another writer (the CLI judge)
committed to the file since we last looked (``PRAGMA data_version``), the cached run states are
dropped and re-read.

The service calls this from its event loop only (one thread), so there are no locks here.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import re
import secrets
import sqlite3
import time
from dataclasses import dataclass
from pathlib import Path

from referee.judge import storable, open_runs
from referee.service.analysis import day_series, run_series, time_series
from referee.service.boards import DayBoard, frontier
from referee.service.models import KEY_PATTERN, PLAYER_PATTERN
from referee.judge import OFF_FRONTIER
from tilelib.db import transaction
from tilelib.errors import BadInput, Conflict, Forbidden, NotFound, OffFrontier

MAX_PLAYER = 40
_PLAYER = re.compile(PLAYER_PATTERN)
_KEY = re.compile(KEY_PATTERN)


@dataclass
class RunState:
    """What the service keeps in memory of one run."""

    run: str
    day: str
    player: str | None
    token_sha256: str | None
    created: int
    solved: set[int]
    frontier: set[int]
    reward: int
    moves: int


def _sha(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8", "backslashreplace")).hexdigest()


class RunStore:
    """Runs over one runs file and the days on offer."""

    def __init__(self, path: str | Path, days: dict[str, DayBoard]) -> None:
        self.path = Path(path)
        self.conn: sqlite3.Connection = open_runs(self.path)
        self.conn.execute("PRAGMA journal_mode=WAL")
        self.conn.execute("PRAGMA synchronous=NORMAL")
        self.days = days
        self.by_digest = {db.judge.digest: db for db in days.values()}
        self._runs: dict[str, RunState] = {}
        self.views: dict[tuple[str, str], bytes] = {}   # (day, view) -> JSON of a view that never changes
        self._version = self._data_version()

    def close(self) -> None:
        self.conn.close()

    def _data_version(self) -> int:
        """SQLite's ``PRAGMA data_version``: changes when ANOTHER connection commits to the file (our own
        commits leave it alone), so it tells cheaply whether someone else wrote since we last looked."""
        return self.conn.execute("PRAGMA data_version").fetchone()[0]

    def add_day(self, db: DayBoard) -> None:
        """Offer one more day (``referee.service.watch``: a manifest that came after the start)."""
        if db.day in self.days:
            raise BadInput(f"{db.day} is already on offer")
        self.days[db.day] = db
        self.by_digest[db.judge.digest] = db

    def day(self, day: str) -> DayBoard:
        db = self.days.get(day)
        if db is None:
            raise NotFound(f"day {day!r} is not on offer (days: {', '.join(sorted(self.days)) or 'none'})")
        return db

    # ------------------------------------------------------------ runs

    def create(self, day: str, player: str | None = None) -> tuple[RunState, str]:
        """A new run of ``day``: (state, token). The token is shown once and never stored."""
        db = self.day(day)
        if player is not None and (not isinstance(player, str) or not _PLAYER.fullmatch(player)
                                   or storable(player) != player):
            raise BadInput(f"'player' must be a name of 1..{MAX_PLAYER} characters without control or "
                           "invisible formatting characters")
        run, token = "r" + secrets.token_hex(8), secrets.token_urlsafe(24)
        now = int(time.time())
        with transaction(self.conn) as c:
            c.execute("INSERT INTO runs VALUES (?,?,?,?)", (run, db.judge.digest, day, now))
            c.execute("INSERT INTO tokens VALUES (?,?,?)", (run, _sha(token), player))
        st = RunState(run, day, player, _sha(token), now, set(), frontier(db, set()), 0, 0)
        self._runs[run] = st
        return st, token

    def _sync(self) -> None:
        """Drop the cached run states if another writer (the CLI judge) committed since we last looked."""
        version = self._data_version()
        if version != self._version:
            self._runs.clear()
            self._version = version

    def get(self, run: str) -> RunState:
        """The run's state (read from the file the first time); NotFound if unknown or not on offer."""
        self._sync()
        st = self._runs.get(run)
        if st is not None:
            return st
        row = self.conn.execute("SELECT r.board, r.day, r.created, t.token_sha256, t.player FROM runs r "
                                "LEFT JOIN tokens t ON t.run = r.run WHERE r.run = ?", (run,)).fetchone()
        if row is None:
            raise NotFound(f"no run {run[:80]!r}")
        db = self.by_digest.get(row[0])
        if db is None:
            raise NotFound(f"run {run[:80]!r} is of a board not on offer here (day {row[1]})")
        solved = {t for (t,) in self.conn.execute(
            "SELECT tile FROM moves WHERE run = ? AND correct = 1", (run,))}
        reward, moves = self.conn.execute(
            "SELECT coalesce(sum(reward), 0), count(*) FROM moves WHERE run = ?", (run,)).fetchone()
        st = RunState(run, db.day, row[4], row[3], row[2], solved, frontier(db, solved), reward, moves)
        self._runs[run] = st
        return st

    def authorise(self, st: RunState, token: str | None) -> None:
        """Forbidden unless ``token`` is this run's token."""
        if st.token_sha256 is None:
            raise Forbidden(f"run {st.run!r} has no token (made by `tiles referee judge`); create a run here")
        if not token:
            raise Forbidden("this write needs the run's token: send 'Authorization: Bearer TOKEN'")
        if not hmac.compare_digest(_sha(token), st.token_sha256):
            raise Forbidden(f"wrong token for run {st.run!r}")

    def submit(self, run: str, token: str | None, moves: list, key: str | None = None) -> dict:
        """Judge one batch of raw moves for ``run`` in one transaction; the answer
        ``{"run", "verdicts", "score"}``.

        A move on a tile off the run's frontier (at its turn in the batch) refuses the whole batch:
        ``OffFrontier`` (HTTP 409), nothing stored — the judge's other verdicts are as the CLI's.
        With an idempotency ``key``, the answer is stored with the batch in the same transaction;
        the same key again with the same moves returns that first answer and stores nothing, with
        other moves it is ``Conflict`` (409). So a retry after a lost reply never scores twice."""
        st = self.get(run)
        self.authorise(st, token)
        key = _idempotency_key(key)
        digest = None if key is None else hashlib.sha256(
            json.dumps(moves, sort_keys=True, separators=(",", ":")).encode()).hexdigest()
        db = self.days[st.day]
        try:
            with transaction(self.conn) as c:
                st = self.get(run)                     # re-read if another writer got in first
                if key is not None:
                    row = c.execute("SELECT body_sha256, answer FROM idempotency WHERE run = ? AND key = ?",
                                    (run, key)).fetchone()
                    if row is not None:
                        if row[0] != digest:
                            raise Conflict(f"Idempotency-Key {key[:40]!r} was used with other moves in this run")
                        return json.loads(row[1])
                verdicts = db.judge.record(c, run, moves, st.solved)   # adds the tiles it solves
                off = next((v for v in verdicts if not v["accepted"] and OFF_FRONTIER in (v["reason"] or "")),
                           None)
                if off is not None:
                    raise OffFrontier(f"move on tile {off['tile']}: {off['reason']}; the batch was not recorded")
                self._advance(st, db, verdicts)
                answer = {"run": run, "verdicts": verdicts, "score": self.score(st)}
                if key is not None:
                    c.execute("INSERT INTO idempotency VALUES (?,?,?,?,?)",
                              (run, key, digest, json.dumps(answer, separators=(",", ":")), int(time.time())))
        except BaseException:
            self._runs.clear()                     # st may hold tiles of the rolled-back batch
            raise
        return answer

    @staticmethod
    def _advance(st: RunState, db: DayBoard, verdicts: list[dict]) -> None:
        """Move the run's frontier, reward and move count past a judged batch (``st.solved`` the judge
        has already grown)."""
        for v in verdicts:
            if v["correct"]:
                t = v["tile"]
                st.frontier.discard(t)
                st.frontier |= db.judge.nbrs[t] - st.solved
                st.reward += v["reward"]
        st.moves += len(verdicts)

    # ------------------------------------------------------------ views

    def score(self, st: RunState) -> dict:
        return {"run": st.run, "day": st.day, "player": st.player, "solved": len(st.solved),
                "reward": st.reward, "moves": st.moves, "frontier": len(st.frontier)}

    def history(self, run: str, after: int = 0, limit: int = 100) -> list[dict]:
        """The run's moves with id > ``after``, oldest first (cells omitted)."""
        self.get(run)
        rows = self.conn.execute("SELECT id, tile, accepted, correct, reward, reason, at FROM moves "
                                 "WHERE run = ? AND id > ? ORDER BY id LIMIT ?", (run, after, limit))
        return [{"id": i, "tile": t, "accepted": bool(a), "correct": bool(c), "reward": r, "reason": why,
                 "at": at} for i, t, a, c, r, why, at in rows]

    def leaderboard(self, day: str, limit: int = 100) -> list[dict]:
        """A day's runs by reward (then solved tiles, then age)."""
        db = self.day(day)
        rows = self.conn.execute(
            "SELECT r.run, t.player, r.created, coalesce(sum(m.reward), 0) AS reward, "
            "coalesce(sum(m.correct), 0) AS solved, count(m.id) FROM runs r "
            "LEFT JOIN tokens t ON t.run = r.run LEFT JOIN moves m ON m.run = r.run "
            "WHERE r.board = ? GROUP BY r.run ORDER BY reward DESC, solved DESC, r.created, r.run LIMIT ?",
            (db.judge.digest, limit))
        return [{"rank": k, "run": run, "player": p, "created": cr, "reward": rw, "solved": so, "moves": mv}
                for k, (run, p, cr, rw, so, mv) in enumerate(rows, start=1)]

    def run_analysis(self, run: str) -> dict:
        """Reward per batch and mean n of solved tiles, batch by batch, for one run."""
        st = self.get(run)
        return {"run": run, "day": st.day, "batches": self._series(run, st.created, self.days[st.day])}

    def day_analysis(self, day: str, bucket: float = 60.0) -> dict:
        """The analyzer over every run of a day: each run's totals, batch k of every run side by side,
        and ``bucket``-second wall-clock buckets."""
        db = self.day(day)
        runs = self.conn.execute("SELECT run, created FROM runs WHERE board = ? ORDER BY created, run",
                                 (db.judge.digest,)).fetchall()
        per_run = {run: (created, self._series(run, created, db)) for run, created in runs}
        summary = [{"run": r, "batches": len(s), "reward": s[-1]["total_reward"] if s else 0,
                    "solved": s[-1]["total_solved"] if s else 0,
                    "mean_n": s[-1]["mean_n_so_far"] if s else None} for r, (_c, s) in per_run.items()]
        return {"day": day, "runs": summary, "batches": day_series(s for _c, s in per_run.values()),
                "bucket": bucket, "time": time_series(per_run.values(), bucket)}

    def _series(self, run: str, created: int, db: DayBoard) -> list[dict]:
        batches = self.conn.execute("SELECT first_move, last_move, at FROM batches WHERE run = ? ORDER BY id",
                                    (run,)).fetchall()
        solved = self.conn.execute("SELECT id, tile FROM moves WHERE run = ? AND correct = 1", (run,)).fetchall()
        return run_series(batches, solved, [b - a + 1 for a, b, _ in batches], db.n, created)


def _idempotency_key(key: str | None) -> str | None:
    """The key of an ``Idempotency-Key`` header (``models.KEY_PATTERN``: a quoted string as the IETF
    draft writes it, or bare); BadInput otherwise."""
    if key is None:
        return None
    if not _KEY.fullmatch(key):
        raise BadInput("Idempotency-Key must be 1..255 visible ASCII characters other than '\"', bare or "
                       "in double quotes")
    return key.strip('"')


# ---------------------------------------------------------------- offline reads (the CLI views)


def _open_existing(path: str | Path) -> sqlite3.Connection:
    if not Path(path).is_file():
        raise NotFound(f"no runs file {path}")
    return open_runs(path)


def read_solved(path: str | Path, run: str, digest: str) -> set[int]:
    """Tiles solved so far in ``run``; NotFound if no such run, BadInput if it is another board's."""
    conn = _open_existing(path)
    try:
        row = conn.execute("SELECT board, day FROM runs WHERE run = ?", (run,)).fetchone()
        if row is None:
            raise NotFound(f"no run {run!r} in {path}")
        if row[0] != digest:
            raise BadInput(f"run {run!r} belongs to another board (day {row[1]})")
        return {t for (t,) in conn.execute("SELECT tile FROM moves WHERE run = ? AND correct = 1", (run,))}
    finally:
        conn.close()


def read_scores(path: str | Path, run: str | None = None) -> list[dict]:
    """Totals of every run in a runs file (or of one run): day, player, solved, reward, moves,
    accepted and batches, best reward first."""
    conn = _open_existing(path)
    try:
        where, args = ("WHERE r.run = ?", (run,)) if run is not None else ("", ())
        rows = conn.execute(
            "SELECT r.run, r.day, t.player, "
            "(SELECT count(*) FROM moves m WHERE m.run = r.run AND m.correct = 1), "
            "(SELECT coalesce(sum(reward), 0) FROM moves m WHERE m.run = r.run), "
            "(SELECT count(*) FROM moves m WHERE m.run = r.run), "
            "(SELECT count(*) FROM moves m WHERE m.run = r.run AND m.accepted = 1), "
            "(SELECT count(*) FROM batches b WHERE b.run = r.run) "
            f"FROM runs r LEFT JOIN tokens t ON t.run = r.run {where} ORDER BY 5 DESC, r.created, r.run",
            args).fetchall()
    finally:
        conn.close()
    if run is not None and not rows:
        raise NotFound(f"no run {run!r} in {path}")
    return [{"run": r, "day": d, "player": p, "solved": s, "reward": rw, "moves": mv, "accepted": ac,
             "batches": b} for r, d, p, s, rw, mv, ac, b in rows]
