"""The load generator of ``scripts/bench_serve.py``: players of a served day over asyncio streams.

Each player is one keep-alive HTTP/1.1 connection (a few lines over asyncio streams, plain or TLS)
and plays like the reference solver agent (``players.agents.play_solver`` over ``HttpSession``):
create a run, read its frontier, read the view of every frontier tile, submit a move for each of
them in batches, and so on until the board is cleared; then read the run's score and start a new
run. It knows every tile's solution from the board the bench rebuilt (``Judge.truth``), so it spends
no CPU solving: the load generator shares the machine with the service and must cost far less per
request than the service does (httpx costs ~1 ms a request; this ~0.15-0.2 ms, one read per answer's
head and no task per request). The bench prints what it took: a share of one core, and per request.

Requests survive faults the way ``players.client`` does: a failure on the way (refused, dropped,
timed out) or a 5xx is sent again after an exponential backoff; reads are safe to repeat, a moves
request carries one ``Idempotency-Key`` for all its attempts (so a retry is answered, never judged
twice), and a run creation is sent again only when the connection was refused. A 429 (a quota)
stored nothing: the player waits ``Retry-After`` and sends again; 429s are counted apart from errors.

``Recorder`` keeps what the bench reports: latencies per request type (``create``, ``frontier``,
``tile``, ``moves``, ``score``), errors and 429s, moves acknowledged per player (fairness), runs
finished, and every verdict a player was told (compact: ``tile << 2 | accepted << 1 | correct``)
for the check that the runs database holds each of them exactly once.
"""

from __future__ import annotations

import asyncio
import gc
import json
import random
import ssl
import time
import uuid
from array import array
from collections import Counter
from dataclasses import dataclass, field

import numpy as np

from referee.wire import API

KINDS = ("create", "frontier", "tile", "moves", "score")


class Dropped(Exception):
    """The connection failed mid-request (or the answer never came): ``refused`` when it never opened."""

    def __init__(self, what: str, refused: bool = False) -> None:
        super().__init__(what)
        self.refused = refused


class Http:
    """One keep-alive HTTP/1.1 connection to the service (``tls``: an SSL context, for the proxy),
    opened on first use and again after a failure."""

    def __init__(self, host: str, port: int, tls: ssl.SSLContext | None = None, timeout: float = 60.0) -> None:
        self.host, self.port, self.tls, self.timeout = host, port, tls, timeout
        self.r: asyncio.StreamReader | None = None
        self.w: asyncio.StreamWriter | None = None

    async def _open(self) -> None:
        try:
            self.r, self.w = await asyncio.wait_for(
                asyncio.open_connection(
                    self.host, self.port, ssl=self.tls, server_hostname="localhost" if self.tls else None
                ),
                self.timeout,
            )
        except (TimeoutError, ConnectionRefusedError) as e:
            raise Dropped(f"connect: {type(e).__name__}", refused=True) from None
        except (OSError, ssl.SSLError) as e:
            raise Dropped(f"connect: {type(e).__name__}: {e}", refused=isinstance(e, ConnectionError)) from None

    def close(self) -> None:
        if self.w is not None:
            self.w.transport.abort()
        self.r = self.w = None

    async def send(
        self, method: str, path: str, body: bytes = b"", headers: str = "", drop: int = 0
    ) -> tuple[int, dict, bytes]:
        """(status, {header: value} lower-case, body) of one request. ``drop``: the client goes away
        mid-request instead (1: after the whole request, 2: halfway through the body); raises Dropped."""
        if self.w is None:
            await self._open()
        head = f"{method} {path} HTTP/1.1\r\nHost: {self.host}\r\n{headers}"
        if body:
            head += f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n"
        data = head.encode() + b"\r\n" + body
        try:
            if drop:
                self.w.write(data if drop == 1 else data[: len(data) - len(body) // 2])
                await self.w.drain()
                self.close()
                raise Dropped("dropped by the client")
            self.w.write(data)
            async with asyncio.timeout(self.timeout):  # no task per request, unlike wait_for
                return await self._answer()
        except (
            TimeoutError,
            OSError,
            asyncio.IncompleteReadError,
            asyncio.LimitOverrunError,
            ValueError,
            IndexError,
            ssl.SSLError,
        ) as e:
            self.close()
            raise Dropped(f"{type(e).__name__}") from None

    async def _answer(self) -> tuple[int, dict, bytes]:
        head = await self.r.readuntil(b"\r\n\r\n")  # the status line and headers in one read
        lines = head.decode("latin-1").split("\r\n")
        status = int(lines[0].split()[1])
        hdrs = {}
        for line in lines[1:-2]:
            k, _, v = line.partition(":")
            hdrs[k.strip().lower()] = v.strip()
        if hdrs.get("transfer-encoding", "").lower() == "chunked":
            body = b""
            while size := int((await self.r.readline()).split(b";")[0], 16):
                body += await self.r.readexactly(size)
                await self.r.readline()
            while (await self.r.readline()) not in (b"\r\n", b""):
                pass
        else:
            body = await self.r.readexactly(int(hdrs.get("content-length", 0)))
        if hdrs.get("connection", "").lower() == "close":
            self.close()
        return status, hdrs, body


@dataclass
class Recorder:
    """Everything the players measured (module doc). ``since`` indexes let the soak read a minute."""

    clients: int
    lat: dict = field(default_factory=lambda: {k: array("d") for k in KINDS})
    at: dict = field(default_factory=lambda: {k: array("d") for k in KINDS})  # when each answer came
    errors: Counter = field(default_factory=Counter)  # failed attempts (not 429) by kind
    why: Counter = field(default_factory=Counter)  # failed attempts by what failed
    r429: Counter = field(default_factory=Counter)  # 429 answers by kind
    retries: int = 0
    gave_up: Counter = field(default_factory=Counter)  # calls abandoned after every retry, by kind
    dropped: int = 0  # requests the players dropped on purpose
    frontier_wrong: int = 0  # a frontier other than the one the player expects
    finished: array = field(default_factory=lambda: array("d"))  # when each cleared run ended
    runs: dict = field(default_factory=dict)  # run -> (verdicts told as ints, score read or None)
    drop_rate: float = 0.0  # share of moves requests to drop (a fault)
    lag: array = field(default_factory=lambda: array("d"))  # the players' event loop: lateness of a 10 ms sleep

    def __post_init__(self) -> None:
        self.acked = [0] * self.clients  # moves acknowledged per player

    def stats(self, kind: str, since: int = 0) -> tuple[int, float, float, float]:
        """(count, p50, p99, max) in ms of ``kind``'s latencies from index ``since``."""
        a = np.frombuffer(self.lat[kind], dtype=np.float64)[since:] * 1000
        if not len(a):
            return 0, float("nan"), float("nan"), float("nan")
        return len(a), float(np.median(a)), float(np.percentile(a, 99)), float(a.max())

    def moves(self) -> int:
        return sum(self.acked)

    def lag_ms(self) -> tuple[float, float]:
        """(p99, max) ms by which the players' event loop woke late: the part of every latency
        above that is the load generator's own wait, not the service's."""
        a = np.frombuffer(self.lag, dtype=np.float64) * 1000
        return (float(np.percentile(a, 99)), float(a.max())) if len(a) else (float("nan"), float("nan"))


class Player:
    """One player (module doc): ``play`` until ``until`` (time.monotonic)."""

    def __init__(
        self,
        k: int,
        http: Http,
        day: str,
        judge,
        rec: Recorder,
        *,
        batch: int,
        wrong: float,
        retries: int,
        until: float,
        think: float = 0.0,
    ) -> None:
        self.k, self.http, self.day, self.judge, self.rec = k, http, day, judge, rec
        self.batch, self.wrong, self.retries, self.until = batch, wrong, retries, until
        self.think = think
        self.rng = random.Random(1000 + k)
        self.seed = judge.board.seed_tile

    def live(self) -> bool:
        return time.monotonic() < self.until

    async def call(
        self,
        kind: str,
        method: str,
        path: str,
        obj=None,
        token: str | None = None,
        key: str | None = None,
        safe: bool = True,
    ) -> tuple[int, object] | None:
        """(status, JSON) of a call, with ``players.client``'s retries (module doc); None if abandoned
        (every attempt failed, or the bench's time ran out while waiting)."""
        body = b"" if obj is None else json.dumps(obj, separators=(",", ":")).encode()
        hdrs = (f"Authorization: Bearer {token}\r\n" if token else "") + (
            f'Idempotency-Key: "{key}"\r\n' if key else ""
        )
        rec, failures = self.rec, 0
        while failures <= self.retries:
            if failures:
                await asyncio.sleep(min(0.25 * 2 ** (failures - 1), 5.0))
                rec.retries += 1
            drop = 0
            if rec.drop_rate and kind == "moves" and self.rng.random() < rec.drop_rate:
                drop = self.rng.choice((1, 2))
            t0 = time.perf_counter()
            try:
                status, h, raw = await self.http.send(method, API + path, body, hdrs, drop)
            except Dropped as e:
                if drop:
                    rec.dropped += 1
                else:
                    rec.errors[kind] += 1
                    rec.why[str(e)] += 1
                failures += 1
                if safe or e.refused:
                    continue
                break
            t1 = time.perf_counter()
            if status == 429:
                rec.r429[kind] += 1
                pause = float(h.get("retry-after", "1")) if h.get("retry-after", "").isdigit() else 1.0
                if time.monotonic() + pause > self.until:  # waits out the bench instead
                    await asyncio.sleep(max(0.0, self.until - time.monotonic()))
                    return None
                await asyncio.sleep(pause)
                continue
            if status >= 500:
                rec.errors[kind] += 1
                rec.why[f"{status}"] += 1
                failures += 1
                if safe:
                    continue
                break
            rec.lat[kind].append(t1 - t0)
            rec.at[kind].append(time.monotonic())
            try:
                out = json.loads(raw)
            except ValueError:
                out = None
            if self.think:  # reading the answer and deciding the next request, at an agent's pace
                await asyncio.sleep(self.think * (0.5 + self.rng.random()))
            if status >= 400:
                rec.errors[kind] += 1
                rec.why[f"{status}: {(out or {}).get('error', '')[:60] if isinstance(out, dict) else ''}"] += 1
            return status, out
        rec.gave_up[kind] += 1
        return None

    async def play(self) -> None:
        while self.live():
            got = await self.call("create", "POST", f"/days/{self.day}/runs", {"player": f"bench-{self.k}"}, safe=False)
            if got is None or got[0] != 201:
                await asyncio.sleep(0.1)
                continue
            await self.run(got[1]["run"], got[1]["token"])

    async def run(self, run: str, token: str) -> None:
        """Play one run until the board is cleared or the time is up."""
        judge, rec = self.judge, self.rec
        told = array("q")
        rec.runs[run] = (told, None)
        solved: set[int] = set()
        expect = {self.seed}
        cleared = False
        while self.live():
            got = await self.call("frontier", "GET", f"/runs/{run}/frontier")
            if got is None or got[0] != 200:
                continue
            tiles = got[1]["tiles"]
            if set(tiles) != expect:  # counted, then played from the service's view
                rec.frontier_wrong += 1
                expect, solved = set(tiles), set(got[1]["solved"])
            if not tiles:
                cleared = True
                break
            ready = []
            for t in tiles:  # the solver reads every frontier tile's view
                if not self.live():
                    return
                got = await self.call("tile", "GET", f"/runs/{run}/tiles/{t}")
                if got is None or got[0] != 200:
                    continue
                cells = judge.truth(t)
                if self.wrong and self.rng.random() < self.wrong:
                    i = self.rng.randrange(len(cells))
                    cells = cells[:i] + ("1" if cells[i] == "0" else "0") + cells[i + 1 :]
                ready.append({"tile": t, "cells": cells})
            for i in range(0, len(ready), self.batch):
                if not self.live():
                    return
                got = await self.call(
                    "moves",
                    "POST",
                    f"/runs/{run}/moves",
                    {"moves": ready[i : i + self.batch]},
                    token,
                    key=uuid.uuid4().hex,
                )
                if got is None or got[0] != 200:
                    continue
                for v in got[1]["verdicts"]:
                    t = v["tile"]
                    told.append(t << 2 | v["accepted"] << 1 | v["correct"])
                    if v["correct"]:
                        solved.add(t)
                        expect.discard(t)
                        expect |= judge.nbrs[t] - solved
                self.rec.acked[self.k] += len(got[1]["verdicts"])
        if cleared:
            rec.finished.append(time.monotonic())
            got = await self.call("score", "GET", f"/runs/{run}")
            if got is not None and got[0] == 200:
                rec.runs[run] = (told, got[1])


async def play(
    n: int,
    host: str,
    port: int,
    day: str,
    judge,
    rec: Recorder,
    *,
    seconds: float,
    batch: int,
    wrong: float,
    retries: int,
    tls: ssl.SSLContext | None = None,
    during=None,
    ramp: float = 0.0,
    think: float = 0.0,
) -> float:
    """Run ``n`` players for ``seconds``; the wall seconds they took. ``during``: coroutines (a fault,
    the soak's sampler) run beside them, given the deadline, cancelled when the players are done.
    ``ramp``: the players arrive one by one over its first seconds, evenly spaced (0: all at once).
    ``think``: each player's mean pause after every answer, in seconds (drawn uniformly from half to
    one and a half times it, from the player's own seeded random stream; 0: a tight loop).

    Players started together stay in step: the same board, the same solver and the same batch sizes
    make every player send its frontier read, its tile reads and its batch at the same moments, so
    the service meets 256 batches inside half a second and then none for seconds (measured on a
    G=301 day: every player acknowledged exactly 127 moves in 30 s). People and agents arrive at
    different times; the ramp is how the bench plays them (DECISIONS, issue 52)."""
    until = time.monotonic() + seconds
    conns = [Http(host, port, tls) for _ in range(n)]
    players = [
        Player(k, conns[k], day, judge, rec, batch=batch, wrong=wrong, retries=retries, until=until, think=think)
        for k in range(n)
    ]
    # what exists now lives through the load: out of the collector's walks, so that a full collection
    # of the players' own objects (~65-90 ms at 1,000 players, measured) is not timed as the service's
    gc.collect()
    gc.freeze()
    side = [asyncio.ensure_future(c(until)) for c in (*(during or []), lambda u: _lag_probe(rec, u))]
    t0 = time.perf_counter()
    try:
        await asyncio.gather(*(_after(k * ramp / n, p.play()) for k, p in enumerate(players)))
    finally:
        wall = time.perf_counter() - t0
        for s in side:
            if not s.done():
                s.cancel()
        for s in side:
            try:
                await s
            except asyncio.CancelledError:
                pass
        for c in conns:
            c.close()
        gc.unfreeze()
    return wall


async def _lag_probe(rec: Recorder, until: float, every: float = 0.01) -> None:
    """Sleep ``every`` seconds again and again, recording how late each wake-up came (``Recorder.lag``)."""
    while time.monotonic() < until:
        t0 = time.perf_counter()
        await asyncio.sleep(every)
        rec.lag.append(max(0.0, time.perf_counter() - t0 - every))


async def _after(delay: float, coro) -> None:
    await asyncio.sleep(delay)
    await coro


def cpu_share(fn, *a, **kw):
    """(fn's result, CPU seconds this thread spent in it / its wall seconds): the load generator's
    cost as a share of one core (the players all run in this thread)."""
    c0, t0 = time.thread_time(), time.perf_counter()
    out = fn(*a, **kw)
    return out, (time.thread_time() - c0) / max(time.perf_counter() - t0, 1e-9)


def ref_players(n: int, base: str, day: str, until: float, rec: Recorder, verify=True) -> tuple[list, list]:
    """Start ``n`` threads, each a ``players.client`` player (``players.agents.play_solver`` over
    ``HttpSession``, retries and all) playing runs until ``until``; their verdicts go to ``rec.runs``
    like the asyncio players'. Returns (threads, outcomes): join the threads, then each outcome is
    ``"cleared"`` or the error a run ended with."""
    import threading

    import httpx

    from players.agents import play_solver
    from players.client import Client
    from players.sessions import HttpSession

    outcomes: list = []

    class Told(HttpSession):
        def submit(self, moves):
            verdicts = super().submit(moves)
            told = rec.runs[self.run][0]
            for v in verdicts:
                told.append(v.tile << 2 | v.accepted << 1 | v.correct)
            return verdicts

    def loop(k: int) -> None:
        with Client(base, transport=httpx.HTTPTransport(verify=verify)) as c:
            while time.monotonic() < until:
                run = None
                try:
                    s = Told(c, day, f"client-{k}")
                    run = s.run
                    rec.runs[run] = (array("q"), None)
                    r = play_solver(s, lambda _line: None)
                    rec.runs[run] = (rec.runs[run][0], c.score(run).model_dump())
                    outcomes.append("cleared" if r.cleared else "not cleared")
                except Exception as e:  # the outcome reported: a player that did not finish
                    outcomes.append(f"{type(e).__name__}: {str(e)[:120]}")

    threads = [threading.Thread(target=loop, args=(k,), daemon=True) for k in range(n)]
    for t in threads:
        t.start()
    return threads, outcomes
