"""What an operator sees of the service, in one place: ``/healthz``, ``/readyz``, ``/metrics`` and one
access-log line per request.

- ``/healthz``: the process answers (200, no database access): for a supervisor deciding to restart it.
- ``/readyz``: 200 once the runs database answers a trivial read (``RunsDB.ping``: a connection of
  its own with a short timeout, in a thread, never the store's ``RETRY_FOR`` wait) and at least one
  day is loaded; else 503 with the one-line reason: for a proxy deciding to send it players.
- ``/metrics``: the Prometheus text format (prometheus-client). With ``--workers N`` the server gives
  every worker one private ``PROMETHEUS_MULTIPROC_DIR`` (``server.run_workers``) and each scrape,
  whichever worker answers it, adds up all of them (prometheus-client's multiprocess mode).

None of the three is part of the API (``/api/v1``) or its OpenAPI document. Metrics are labelled by
route template (``/api/v1/runs/{run}/moves``), never by the path sent, and by a known method, so a
client cannot grow the number of series; a path no route matches is ``other``.

``Observe`` wraps the whole app (outside ``security.SecurityHeaders`` and Starlette's error middleware,
so a 500 is counted and logged too): it times each request, counts it and writes its access-log line
(``Settings.access_log``: ``text``, ``json`` lines or ``off``) with the client's address as uvicorn
gives it (a trusted proxy's ``X-Forwarded-For``) and the path as ``safe_path`` prints it.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import json
import os
import re
import sys
import time
from collections.abc import Callable, Iterable

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse, Response
from prometheus_client import (
    CONTENT_TYPE_LATEST,
    REGISTRY,
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    generate_latest,
)
from starlette.routing import Mount, compile_path

from referee.runsdb.base import listen
from tilelib.errors import TilesError

MULTIPROC_ENV = "PROMETHEUS_MULTIPROC_DIR"  # set: prometheus-client writes to files there (several workers)
READY_TIMEOUT = 2.0  # seconds /readyz gives the database's probe
METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"})
NO_STORE = {"Cache-Control": "no-store"}
MAX_PATH = 200
BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0)

REQUESTS = Counter(
    "tiles_http_requests",
    "HTTP requests answered, by route template, method and status (499: the client left before any answer).",
    ["route", "method", "status"],
)
LATENCY = Histogram(
    "tiles_http_request_duration_seconds",
    "Seconds from a request's arrival to the end of its answer, by route template and method.",
    ["route", "method"],
    buckets=BUCKETS,
)
MOVES = Counter(
    "tiles_moves_judged",
    "Moves judged and recorded, by verdict: correct (scored), wrong "
    "(accepted, not the solution), rejected (not accepted: malformed, a replay).",
    ["verdict"],
)
RUNS = Counter("tiles_runs_created", "Runs created.")
DB_RETRIES = Counter(
    "tiles_db_retries", "Runs-database blocks and reads tried again while the database was busy or away."
)
DB_ERRORS = Counter(
    "tiles_db_errors",
    "Runs-database errors raised: unavailable (busy or away: each try of a write the service tries again "
    "for a moment before its 503, each read answered 503) or error (any other).",
    ["kind"],
)
DAYS = Gauge("tiles_days_loaded", "Days on offer in this service.", multiprocess_mode="max")  # days only grow
for _v in ("correct", "wrong", "rejected"):
    MOVES.labels(_v)
for _k in ("unavailable", "error"):
    DB_ERRORS.labels(_k)


def _db_event(event: str) -> None:
    if event == "retry":
        DB_RETRIES.inc()
    else:
        DB_ERRORS.labels("unavailable" if event == "unavailable" else "error").inc()


listen(_db_event)


def judged(verdicts: Iterable[dict]) -> None:
    """Count a recorded batch's verdicts (``play.moves``; a retry answered from its key is not a batch)."""
    counts = {"correct": 0, "wrong": 0, "rejected": 0}
    for v in verdicts:
        counts["rejected" if not v["accepted"] else "correct" if v["correct"] else "wrong"] += 1
    for verdict, n in counts.items():
        if n:
            MOVES.labels(verdict).inc(n)


def run_created() -> None:
    """Count a run created (``play.start_run``)."""
    RUNS.inc()


def days_loaded(n: int) -> None:
    """Set the days-loaded gauge (at start-up, and at each ``/readyz`` and ``/metrics``: the watcher adds days)."""
    DAYS.set(n)


def exposition() -> bytes:
    """Every metric in the Prometheus text format: this process's, or every worker's added up."""
    if os.environ.get(MULTIPROC_ENV):
        from prometheus_client import multiprocess

        registry = CollectorRegistry()
        multiprocess.MultiProcessCollector(registry)
        return generate_latest(registry)
    return generate_latest(REGISTRY)


def safe_path(scope) -> str:
    """The request's path as sent (no query): printable, at most ``MAX_PATH`` characters, so a hostile
    path cannot forge or flood log lines."""
    raw = scope.get("raw_path") or scope.get("path", "").encode()
    return "".join(c if c.isprintable() else "?" for c in raw.decode("latin-1")[:MAX_PATH])


def route_table(routes) -> list[tuple[re.Pattern, str]]:
    """(pattern, template) of every route of an app, in routing order, with its full path template
    (``/api/v1/days/{day}``; a mount's ``/static/{path}`` takes every path below it). FastAPI ≥ 0.13x
    keeps an included router as one entry (``iter_route_contexts`` walks into it); before, its routes
    were copied into the app's list with their prefix."""
    import fastapi.routing

    walk = getattr(fastapi.routing, "iter_route_contexts", None)
    out = []
    for r in walk(routes) if walk is not None else routes:
        template = getattr(r, "path_format", None)
        if template is None:
            continue
        if isinstance(getattr(r, "original_route", r), Mount):
            template = template.removesuffix("/{path}") + "/{path}"
            pattern = compile_path(template.removesuffix("/{path}") + "/{path:path}")[0]
        else:
            pattern = compile_path(template)[0]
        out.append((pattern, template))
    return out


def route_of(table: list[tuple[re.Pattern, str]], path: str) -> str:
    """The template of the first route whose path is ``path`` (a 405 counts under its route), or
    ``other`` (a 404 of a path no route has)."""
    return next((template for pattern, template in table if pattern.match(path)), "other")


def _stderr(line: str) -> None:
    sys.stderr.write(line + "\n")
    sys.stderr.flush()


class Observe:
    """ASGI wrapper around the whole app: metrics and the access-log line of every HTTP request
    (module doc). ``routes`` is the app's route list; ``access_log`` is off, text or json; ``write``
    takes each line (default: stderr, one write per line)."""

    def __init__(self, app, routes, access_log: str = "off", write: Callable[[str], None] = _stderr) -> None:
        self.app, self.access_log, self.write = app, access_log, write
        self.table = route_table(routes)

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        t0 = time.perf_counter()
        route = route_of(self.table, scope.get("path", ""))
        status, size, done = 0, 0, False

        async def sending(message) -> None:
            nonlocal status, size, done
            if message["type"] == "http.response.start":
                status = message["status"]
            elif message["type"] == "http.response.body":
                size += len(message.get("body", b""))
                if not message.get("more_body", False) and not done:
                    # counted before the last bytes leave: a client that has its answer finds it counted
                    done = True
                    self._done(scope, route, status, size, time.perf_counter() - t0)
            await send(message)

        failed = False
        try:
            await self.app(scope, receive, sending)
        except BaseException:
            failed = True
            raise
        finally:
            if not done:
                self._done(scope, route, status or (500 if failed else 499), size, time.perf_counter() - t0)

    def _done(self, scope, route: str, status: int, size: int, seconds: float) -> None:
        method = scope.get("method", "")
        label = method if method in METHODS else "other"
        REQUESTS.labels(route, label, str(status)).inc()
        LATENCY.labels(route, label).observe(seconds)
        if self.access_log == "off":
            return
        client = scope.get("client")
        addr = str(client[0]) if client else "-"
        method = "".join(c if c.isprintable() else "?" for c in method[:16])
        path, ms = safe_path(scope), round(seconds * 1000, 2)
        if self.access_log == "json":
            ts = dt.datetime.now(dt.UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
            self.write(
                json.dumps(
                    {"ts": ts, "addr": addr, "method": method, "path": path, "status": status, "ms": ms, "bytes": size}
                )
            )
        else:
            self.write(f"{addr} {method} {path} {status} {ms:.1f} ms {size} B")


router = APIRouter(include_in_schema=False)


@router.get("/healthz")
async def healthz() -> JSONResponse:
    """Alive: the process answers. No database access."""
    return JSONResponse({"status": "alive"}, headers=NO_STORE)


@router.get("/readyz")
async def readyz(request: Request) -> JSONResponse:
    """Ready for players: the runs database answers now and a day is loaded; else 503 and why."""
    store = request.app.state.store
    n = len(store.days)
    days_loaded(n)
    try:
        await asyncio.wait_for(asyncio.to_thread(store.db.ping, READY_TIMEOUT), READY_TIMEOUT + 1)
    except TimeoutError:
        return _not_ready(f"the runs database did not answer within {READY_TIMEOUT + 1:.0f} s")
    except TilesError as e:  # its reason names the runs file or the server's address: logged, not answered
        log = getattr(request.app.state, "log", None)
        if log is not None:
            log(f"GET /readyz: {' '.join(str(e).split())[:300]}")
        return _not_ready("the runs database does not answer (the service's log says why)")
    if n == 0:
        return _not_ready("no day is loaded yet")
    return JSONResponse({"status": "ready", "days": n}, headers=NO_STORE)


def _not_ready(reason: str) -> JSONResponse:
    return JSONResponse({"error": " ".join(reason.split())[:300]}, status_code=503, headers=NO_STORE)


@router.get("/metrics")
async def metrics(request: Request) -> Response:
    """The Prometheus text format (module doc)."""
    days_loaded(len(request.app.state.store.days))
    return Response(exposition(), media_type=CONTENT_TYPE_LATEST, headers=NO_STORE)
