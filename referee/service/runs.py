"""Runs of the referee service in the runs database (``referee.runsdb``: a SQLite file or
PostgreSQL; ``referee.runsdb.schema``: runs, moves, batches, tokens, idempotency keys).

A run is created for a day with a random id and a secret token; only sha256(token) is stored.
Moves are judged by ``Judge.record`` — the same core as ``tiles referee judge`` — inside one
transaction per submission that holds the run's lock, against the database's view of the run:
the run's row says how many moves it has stored (``nmoves``), and a state cached here is used
only while that number is still its own; otherwise the run is read again inside the same
transaction. So any number of workers (and the CLI judge) may write one database: no state that
matters lives in a worker, a move cannot be scored twice, and the cache only saves reading a
run's solved tiles on every move.

One store serves one event loop (one per worker). Over SQLite its work runs on that loop's thread;
over PostgreSQL (``db.threads`` > 0) the service judges batches of moves on the store's threads
(``RunStore.judge_off_loop``), each with its own connection, so reads and new runs are answered
while batches wait on their round trips. So the cache has a lock, and a run's state is copied
before a batch changes it: a reader on the loop never sees it change.

The service's event loop never waits for the database: the app sets the database's own wait to 0
(``wait_off_loop``), so a write that finds the SQLite file locked by another process, or PostgreSQL
away, fails at once with nothing done (``DatabaseBusy``), and ``patient`` tries it again after
asyncio sleeps — the loop answers other requests meanwhile — for at most ``PATIENCE`` seconds, then
lets the 503 (with ``Retry-After``) go to the client.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import json
import re
import secrets
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from pathlib import Path
from typing import NamedTuple, TypeVar

from referee.judge import OFF_FRONTIER, storable
from referee.runsdb import RUN_ROW, RUN_ROWS, RunsDB, Tx, is_url, open_runsdb, opened, solved_of
from referee.runsdb.base import CREATED, note
from referee.service import ranking
from referee.service.analysis import day_series, run_series, time_series
from referee.service.asked import Asked, write
from referee.service.boards import DayBoard, frontier
from referee.service.gather import Gathered
from referee.service.quota import NO_QUOTAS, Quotas, charge, sweep
from referee.wire import KEY_PATTERN, PLAYER_PATTERN
from tilelib.errors import BadInput, Conflict, DatabaseBusy, Forbidden, NotFound, OffFrontier, Unauthorized

MAX_PLAYER = 40
# seconds a write of the service waits for a busy or absent database before its 503: long enough for
# another writer's usual turn on the SQLite file (milliseconds) or a PostgreSQL restart's first
# seconds, short enough that a client is told to come back within 2 s rather than left hanging
PATIENCE = 1.5
T = TypeVar("T")
_PLAYER = re.compile(PLAYER_PATTERN)
_KEY = re.compile(KEY_PATTERN)
_B64TOKEN = re.compile(r"[A-Za-z0-9\-._~+/]+=*")  # RFC 6750 b64token: every run's token is one


class MalformedToken(Unauthorized):
    """A token sent that no run can have: empty, or a character outside RFC 6750's b64token (401)."""

    bearer_error = "invalid_request"  # RFC 6750 §3.1: the answer's WWW-Authenticate names it


class WrongToken(Forbidden):
    """A well-formed token that is not the run's (403)."""

    bearer_error = "invalid_token"


@dataclass
class RunState:
    """What the service keeps in memory of one run."""

    run: str
    day: str
    player: str | None
    token_sha256: str | None
    created: float  # unix seconds, to the microsecond (``runsdb.base.CREATED``)
    solved: set[int]
    frontier: set[int]
    reward: int
    moves: int


# Every run of a board with its aggregates (``ranking.row``'s arguments): the moves' totals and the id
# of its last correct move, the batches up to the one holding that move and that batch's time, all
# its batches. A batch is the run's moves in its id range (see ``_series``).
LEADERBOARD = (
    "WITH agg AS (SELECT m.run, sum(m.reward) AS reward, sum(m.correct) AS solved, count(m.id) AS moves, "
    "max(CASE WHEN m.correct = 1 THEN m.id END) AS last_ok FROM moves m JOIN runs r ON r.run = m.run "
    "WHERE r.board = ? GROUP BY m.run) "
    f"SELECT r.run, t.player, {CREATED}, coalesce(a.reward, 0), coalesce(a.solved, 0), coalesce(a.moves, 0), "
    "r.requests, r.cleared_requests, "
    "(SELECT count(*) FROM batches b WHERE b.run = r.run AND b.first_move <= a.last_ok), "
    "(SELECT max(b.at) FROM batches b WHERE b.run = r.run AND b.first_move <= a.last_ok AND b.last_move >= a.last_ok), "
    "(SELECT count(*) FROM batches b WHERE b.run = r.run) "
    "FROM runs r LEFT JOIN tokens t ON t.run = r.run LEFT JOIN agg a ON a.run = r.run WHERE r.board = ?"
)


class Submitted(NamedTuple):
    """What ``RunStore.submit`` did: the answer, and whether it is a retry's answered from its
    idempotency key (nothing judged or stored again)."""

    answer: dict
    replayed: bool


class RunCache:
    """The runs a worker holds in memory, bounded by what is active: a run not used for ``idle``
    seconds is dropped, and at most ``most`` are kept (the least recently used go first). A dropped
    run costs one read of its solved tiles when it comes back; what a worker holds no longer grows with
    every run ever played (about 120 KB a cleared G=301 run)."""

    def __init__(self, idle: float = 120.0, most: int = 2048) -> None:
        self.idle, self.most = idle, most
        self._runs: OrderedDict[str, tuple[float, RunState]] = OrderedDict()
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._runs)

    def get(self, run: str) -> RunState | None:
        with self._lock:
            hit = self._runs.get(run)
            if hit is None:
                return None
            self._runs[run] = (time.monotonic(), hit[1])
            self._runs.move_to_end(run)
            return hit[1]

    def put(self, st: RunState) -> None:
        now = time.monotonic()
        with self._lock:
            self._runs[st.run] = (now, st)
            self._runs.move_to_end(st.run)
            while self._runs:
                run, (used, _) = next(iter(self._runs.items()))
                if len(self._runs) <= self.most and now - used <= self.idle:
                    break
                del self._runs[run]

    def drop(self, run: str) -> None:
        with self._lock:
            self._runs.pop(run, None)


def _sha(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8", "backslashreplace")).hexdigest()


class RunStore:
    """Runs over one runs database and the days on offer."""

    def __init__(self, target: str | Path, days: dict[str, DayBoard], quotas: Quotas = NO_QUOTAS) -> None:
        self.db: RunsDB = open_runsdb(target)
        self.quotas = quotas
        self.days = days
        self.by_digest = {db.judge.digest: db for db in days.values()}
        self._runs = RunCache()
        self.asked = Asked()  # requests per run not yet in the database (``asked``)
        self._pool = ThreadPoolExecutor(self.db.threads, "runs") if self.db.threads else None
        # the run rows of frontier and tile views: one reader thread (its own connection), reads gathered
        self._reader = ThreadPoolExecutor(1, "run-rows") if self.db.threads else None
        self._rows = Gathered(self._run_rows, self._reader)
        self.views: dict[tuple[str, str], bytes] = {}  # (day, view) -> JSON of a view that never changes
        self._own_wait = self.db.wait  # the database's own wait, for the last flush (``close``)

    def wait_off_loop(self) -> None:
        """Make the database never wait inside a call (``db.wait`` 0): the app calls this, since a
        call on its event loop that waited for a lock or a reconnection would stop every other
        request; its writes wait in ``patient`` instead (module doc)."""
        self.db.wait = 0.0

    def close(self) -> None:
        for pool in (self._pool, self._reader):
            if pool is not None:
                pool.shutdown(wait=True)
        self.db.wait = self._own_wait  # no loop to keep going now: the last flush may wait its turn
        try:
            self.flush_requests()
        finally:
            self.db.close()

    def flush_requests(self, older: float = 0.0) -> int:
        """Write the pending request counts (``asked``) that have waited ``older`` seconds, in one
        transaction; how many runs. On a failure the counts stay pending for the next flush."""
        counts = self.asked.drain(older)
        if not counts:
            return 0

        def flush(tx: Tx) -> None:
            for run, n in sorted(counts.items()):
                write(tx.write, run, n)

        try:
            self.db.atomic(flush)
        except BaseException:
            self.asked.restore(counts)
            raise
        return len(counts)

    async def judge_off_loop(self, fn: Callable[..., T], *args) -> T:
        """``fn(*args)`` — a batch of moves: a transaction of 8 or more round trips — from the event
        loop: on this thread over SQLite, else on the store's threads, so the loop serves other
        requests (reads, new runs) meanwhile; tried again while the database is busy (``patient``).
        Creations and the rarer reads stay on the loop: one or two
        round trips each, and a hop to a thread each cost more than it saved; the hot reads' run rows
        are gathered on a thread of their own (``current``; DECISIONS 0036, 0040, measured)."""
        return await self.patient(fn, *args, off_loop=True)

    async def patient(self, fn: Callable[..., T], *args, off_loop: bool = False) -> T:
        """``fn(*args)`` — a write: a new run, a batch — on the loop's thread (``off_loop``: on the
        store's threads, if it has any), tried again while it raises ``DatabaseBusy`` (nothing of it
        was done) after asyncio sleeps of 10 ms doubling to 200 ms, so the event loop serves other
        requests meanwhile, for at most ``PATIENCE`` seconds; then that DatabaseBusy goes to the
        client (503 with ``Retry-After``)."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + PATIENCE
        delay = 0.01
        while True:
            try:
                if off_loop and self._pool is not None:
                    return await loop.run_in_executor(self._pool, fn, *args)
                return fn(*args)
            except DatabaseBusy:
                if loop.time() + delay > deadline:
                    raise
            note("retry")
            await asyncio.sleep(delay)
            delay = min(delay * 2, 0.2)

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

    def create(self, day: str, player: str | None = None, address: str | None = None) -> tuple[RunState, str]:
        """A new run of ``day``: (state, token). The token is shown once and never stored. Counted
        against ``address``'s quota of creations (``quota``: RateLimited past it, nothing stored)."""
        db = self.day(day)
        if player is not None and (
            not isinstance(player, str) or not _PLAYER.fullmatch(player) or storable(player) != player
        ):
            raise BadInput(
                f"'player' must be a name of 1..{MAX_PLAYER} characters without control or "
                "invisible formatting characters"
            )
        run, token = "r" + secrets.token_hex(8), secrets.token_urlsafe(24)
        now = time.time()

        def insert(tx: Tx) -> None:
            if not self.quotas.off:
                charge(tx.rows, self.quotas, address=address, creating=True)
                sweep(tx.rows, self.quotas)
            tx.write(
                "INSERT INTO runs (run, board, day, created, created_at) VALUES (?,?,?,?,?)",
                (run, db.judge.digest, day, int(now), now),
            )
            tx.write("INSERT INTO tokens (run, token_sha256, player) VALUES (?,?,?)", (run, _sha(token), player))

        self.db.atomic(insert)
        st = RunState(run, day, player, _sha(token), now, set(), frontier(db, set()), 0, 0)
        self._runs.put(st)
        return st, token

    def get(self, run: str) -> RunState:
        """The run's state as the database holds it now; NotFound if unknown or not on offer. Each call
        is one request naming the run (``asked``: the leaderboard's requests)."""
        rows = self.db.read(RUN_ROW, (run,))
        st = self._state(run, rows[0] if rows else None, self.db.read)
        self.asked.note(run)
        return st

    async def current(self, run: str) -> RunState:
        """``get``, the run's row read with other requests' (``gather``: off the event loop over
        PostgreSQL, one query for every run asked meanwhile): what the hot reads use."""
        st = self._state(run, await self._rows.get(run), self.db.read)
        self.asked.note(run)
        return st

    def _run_rows(self, runs) -> dict[str, tuple]:
        """``RUN_ROW`` of each of ``runs`` that exists, in one read: run -> row."""
        rows = self.db.read(RUN_ROWS.format(", ".join("?" * len(runs))), list(runs))
        return {r[0]: r[1:] for r in rows}

    def _state(self, run: str, row: tuple | None, read) -> RunState:
        """The cached state of ``run`` if its move count is still ``row``'s, else read again through
        ``read`` (the store's reads, or the open transaction's)."""
        if row is None:
            raise NotFound(f"no run {run[:80]!r}")
        board, day, created, nmoves, token_sha, player = row
        st = self._runs.get(run)
        if st is not None and st.moves == nmoves:
            return st
        db = self.by_digest.get(board)
        if db is None:
            raise NotFound(f"run {run[:80]!r} is of a board not on offer here (day {day})")
        solved = solved_of(read, run)
        ((reward,),) = read("SELECT coalesce(sum(reward), 0) FROM moves WHERE run = ?", (run,))
        st = RunState(run, db.day, player, token_sha, created, solved, frontier(db, solved), reward, nmoves)
        self._runs.put(st)
        return st

    def authorise(self, st: RunState, token: str | None) -> None:
        """Pass only ``token``, this run's token. None (nothing sent): Unauthorized; sent but malformed:
        MalformedToken (both 401: send a token); well-formed but wrong: WrongToken; a run made by the
        CLI judge takes no token here: Forbidden (both 403: no token will do)."""
        if st.token_sha256 is None:
            raise Forbidden(f"run {st.run!r} has no token (made by `tiles referee judge`); create a run here")
        if token is None:
            raise Unauthorized("this write needs the run's token: send 'Authorization: Bearer TOKEN'")
        if not _B64TOKEN.fullmatch(token):
            raise MalformedToken(
                "the token sent is empty or malformed (a run's token is letters, digits and "
                "-._~+/ as its creation returned it): send 'Authorization: Bearer TOKEN'"
            )
        if not hmac.compare_digest(_sha(token), st.token_sha256):
            raise WrongToken(f"wrong token for run {st.run!r}")

    def submit(
        self,
        run: str,
        token: str | None,
        moves: list,
        key: str | None = None,
        address: str | None = None,
        check: Callable[[RunState], None] | None = None,
        whole: bool = False,
    ) -> Submitted:
        """Judge one batch of raw moves for ``run`` in one transaction; the answer
        ``{"run", "verdicts", "score"}``, and whether it is a retry's, answered from its key.

        A move on a tile off the run's frontier (at its turn in the batch) refuses the whole batch:
        ``OffFrontier`` (HTTP 409), nothing stored — the judge's other verdicts are as the CLI's.
        With an idempotency ``key``, the answer is stored with the batch in the same transaction;
        the same key again with the same moves returns that first answer and stores nothing, with
        other moves it is ``Conflict`` (409). So a retry after a lost reply never scores twice. A new
        batch counts against the run's and ``address``'s quotas (``quota``; a retry answered from its
        key does not); past one it is RateLimited (429), nothing stored. ``check(state)``: the caller's
        own refusals, after the token's (``state``: the run before this batch). ``whole``: a move the
        judge does not accept for any reason (malformed, a replay, off the frontier) refuses the
        batch so, the first such move named (``BadInput``; ``OffFrontier`` off the frontier) — what
        the MCP tools promise: every failure a tool error.

        Three round trips to PostgreSQL: the run's row locked with what the key stored, the moves
        inserted, the rest with the ``COMMIT`` (``Tx.write``). The request is counted here (``asked``)."""
        try:
            key_, bad_key = _idempotency_key(key), None
        except BadInput as e:  # refused in its turn, after the run and the token
            key_, bad_key = None, e
        noted: list[str] = []  # the block may run again (PostgreSQL away): counted once

        def judge(tx: Tx) -> tuple[dict, RunState | None, int]:
            row = tx.lock_run(run, key_)
            st = self._state(run, row and row[:6], tx.rows)
            assert row is not None  # else _state raised NotFound
            if not noted:  # this request, once the run is known to exist
                self.asked.note(run)
                noted.append(run)
            self.authorise(st, token)
            if check is not None:
                check(st)
            if bad_key is not None:
                raise bad_key
            if key_ is not None:
                digest = hashlib.sha256(json.dumps(moves, sort_keys=True, separators=(",", ":")).encode()).hexdigest()
                if row[6] is not None:
                    if row[6] != digest:
                        raise Conflict(f"Idempotency-Key {key_[:40]!r} was used with other moves in this run")
                    return json.loads(row[7]), None, 0
            if not self.quotas.off:
                charge(tx.rows, self.quotas, address=address, run=run)
            self._runs.drop(run)  # changed below: it joins the cache again only once committed
            if self._pool is not None:  # judged on a thread while the loop may be reading this state
                st = replace(st, solved=set(st.solved), frontier=set(st.frontier))
            db = self.days[st.day]
            asked = self.asked.pending(run)  # this request and the reads before it
            verdicts = db.judge.record(tx, run, moves, st.solved, asked)  # adds the tiles it solves
            off = next(
                (v for v in verdicts if not v["accepted"] and (whole or OFF_FRONTIER in (v["reason"] or ""))), None
            )
            if off is not None:
                refused = OffFrontier if OFF_FRONTIER in (off["reason"] or "") else BadInput
                raise refused(f"move on tile {off['tile']}: {off['reason']}; the batch was not recorded")
            self._advance(st, db, verdicts)
            answer = {"run": run, "verdicts": verdicts, "score": self.score(st)}
            if key_ is not None:
                tx.write(
                    "INSERT INTO idempotency (run, key, body_sha256, answer, at) VALUES (?,?,?,?,?)",
                    (run, key_, digest, json.dumps(answer, separators=(",", ":")), int(time.time())),
                )
            return answer, st, asked

        answer, st, asked = self.db.atomic(judge)  # ``asked``: the requests it wrote to the run's row
        if st is not None:
            self._runs.put(st)
            self.asked.settle(run, asked)
        return Submitted(answer, replayed=st is None)

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
        return {
            "run": st.run,
            "day": st.day,
            "player": st.player,
            "solved": len(st.solved),
            "reward": st.reward,
            "moves": st.moves,
            "frontier": len(st.frontier),
        }

    def history(self, run: str, after: int = 0, limit: int = 100) -> list[dict]:
        """The run's moves with id > ``after``, oldest first (cells omitted)."""
        self.get(run)
        rows = self.db.read(
            "SELECT id, tile, accepted, correct, reward, reason, at FROM moves "
            "WHERE run = ? AND id > ? ORDER BY id LIMIT ?",
            (run, after, limit),
        )
        return [
            {"id": i, "tile": t, "accepted": bool(a), "correct": bool(c), "reward": r, "reason": why, "at": at}
            for i, t, a, c, r, why, at in rows
        ]

    def leaderboard(self, day: str, limit: int = 100, by: str = "reward") -> list[dict]:
        """A day's runs in ``by``'s order (``ranking``: reward, or what reaching the full reward took —
        batches, requests, time), with every measure on each row."""
        if by not in ranking.MEASURES:
            raise BadInput(f"'by' must be one of {', '.join(ranking.MEASURES)}, not {str(by)[:40]!r}")
        db = self.day(day)
        rows = self.db.read(LEADERBOARD, (db.judge.digest, db.judge.digest))
        tiles = len(db.board.squares)
        return ranking.rank([ranking.row(*r, tiles=tiles) for r in rows], by, limit)

    def run_analysis(self, run: str) -> dict:
        """Reward per batch and mean n of solved tiles, batch by batch, for one run."""
        st = self.get(run)
        return {"run": run, "day": st.day, "batches": self._series(run, st.created, self.days[st.day])}

    def day_analysis(self, day: str, bucket: float = 60.0) -> dict:
        """The analyzer over every run of a day: each run's totals, batch k of every run side by side,
        and ``bucket``-second wall-clock buckets."""
        db = self.day(day)
        runs = self.db.read(
            f"SELECT r.run, {CREATED} AS c FROM runs r WHERE r.board = ? ORDER BY c, r.run", (db.judge.digest,)
        )
        per_run = {run: (created, self._series(run, created, db)) for run, created in runs}
        summary = [
            {
                "run": r,
                "batches": len(s),
                "reward": s[-1]["total_reward"] if s else 0,
                "solved": s[-1]["total_solved"] if s else 0,
                "mean_n": s[-1]["mean_n_so_far"] if s else None,
            }
            for r, (_c, s) in per_run.items()
        ]
        return {
            "day": day,
            "runs": summary,
            "batches": day_series(s for _c, s in per_run.values()),
            "bucket": bucket,
            "time": time_series(per_run.values(), bucket),
        }

    def _series(self, run: str, created: float, db: DayBoard) -> list[dict]:
        # a batch is its run's moves in its id range: other runs' moves can take ids inside it (PostgreSQL
        # hands out ids to concurrent transactions as they insert), so its size is counted, not subtracted
        rows = self.db.read(
            "SELECT b.first_move, b.last_move, b.at, (SELECT count(*) FROM moves m WHERE m.run = b.run "
            "AND m.id BETWEEN b.first_move AND b.last_move) FROM batches b WHERE b.run = ? ORDER BY b.id",
            (run,),
        )
        solved = self.db.read("SELECT id, tile FROM moves WHERE run = ? AND correct = 1", (run,))
        return run_series([(a, b, at) for a, b, at, _ in rows], solved, [k for *_, k in rows], db.n, created)


def _idempotency_key(key: str | None) -> str | None:
    """The key of an ``Idempotency-Key`` header (``wire.KEY_PATTERN``: a quoted string as the IETF
    draft writes it, or bare); BadInput otherwise."""
    if key is None:
        return None
    if not _KEY.fullmatch(key):
        raise BadInput(
            "Idempotency-Key must be 1..255 visible ASCII characters other than '\"', bare or in double quotes"
        )
    return key.strip('"')


# ---------------------------------------------------------------- offline reads (the CLI views)


def require_runs(target: str | Path) -> None:
    """NotFound unless ``target`` is a URL or an existing runs file: the CLI's views read runs, they
    never make an empty file."""
    if not is_url(target) and not Path(target).is_file():
        raise NotFound(f"no runs file {target}")


def _existing(target: str | Path):
    """The runs database ``target`` names, which must exist (``require_runs``)."""
    require_runs(target)
    return opened(target)


def read_solved(target: str | Path, run: str, digest: str) -> set[int]:
    """Tiles solved so far in ``run``; NotFound if no such run, BadInput if it is another board's."""
    with _existing(target) as db:
        row = db.read("SELECT board, day FROM runs WHERE run = ?", (run,))
        if not row:
            raise NotFound(f"no run {run!r} in {db.target}")
        if row[0][0] != digest:
            raise BadInput(f"run {run!r} belongs to another board (day {row[0][1]})")
        return solved_of(db.read, run)


def read_scores(target: str | Path, run: str | None = None) -> list[dict]:
    """Totals of every run in a runs database (or of one run): day, player, solved, reward, moves,
    accepted and batches, best reward first."""
    where, args = ("WHERE r.run = ?", (run,)) if run is not None else ("", ())
    with _existing(target) as db:
        rows = db.read(
            "SELECT r.run, r.day, t.player, "
            "(SELECT count(*) FROM moves m WHERE m.run = r.run AND m.correct = 1), "
            "(SELECT coalesce(sum(reward), 0) FROM moves m WHERE m.run = r.run), "
            "(SELECT count(*) FROM moves m WHERE m.run = r.run), "
            "(SELECT count(*) FROM moves m WHERE m.run = r.run AND m.accepted = 1), "
            "(SELECT count(*) FROM batches b WHERE b.run = r.run) "
            f"FROM runs r LEFT JOIN tokens t ON t.run = r.run {where} ORDER BY 5 DESC, r.created, r.run",
            args,
        )
        if run is not None and not rows:
            raise NotFound(f"no run {run!r} in {db.target}")
    return [
        {"run": r, "day": d, "player": p, "solved": s, "reward": int(rw), "moves": mv, "accepted": ac, "batches": b}
        for r, d, p, s, rw, mv, ac, b in rows
    ]
