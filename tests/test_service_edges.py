"""The edges of a real `tiles referee serve` on 127.0.0.1, over real HTTP and real files.

- A runs database that cannot take a write — the SQLite file's write lock held by another process
  (a real ``sqlite3`` connection in a subprocess, in ``BEGIN IMMEDIATE``), PostgreSQL stopped — is
  answered 503 with ``Retry-After`` within seconds (the service waits ``runs.PATIENCE``, 1.5 s; the
  old answer was a 500 after SQLite's 30 s busy wait), with no path, address or SQL in its body, and
  the event loop keeps answering ``/healthz`` meanwhile; once the lock goes, the same requests pass.
- The answers uvicorn writes itself (a request it cannot parse) carry the security headers of
  ``referee.service.security``, as every answer of the app does; a WebSocket handshake is an
  ordinary request the app answers.
- A path off by its trailing slash is redirected with a relative ``Location``, never one built from
  the request's ``Host``; ``deploy/nginx.conf`` sends the hosts a fixed ``Host``.

Each check is also fed an input it must refuse (the old answers), so none can pass by asserting
nothing. Times are asserted with wide margins against the failure modes (30 s, a stopped loop).
"""

from __future__ import annotations

import contextlib
import re
import socket
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path

import httpx
import pytest
from serve_support import board21_day, serving

from referee.service.security import HEADERS

DAY = "2026-11-29"
NGINX_CONF = Path(__file__).resolve().parent.parent / "deploy" / "nginx.conf"
SLOW = 15.0  # seconds: 10x PATIENCE's 1.5 s, generous on a shared machine, and still below the old waits
# it tells apart (SQLite's 30 s, PostgreSQL's 20 s); the answer's speed itself is measured in BENCHMARKS
HEALTH_MOST = 5.0  # seconds: /healthz takes ~ms; later than this it waited for a loop held by the database
HEALTH_LEAST = 10  # /healthz answers at least this many times while one write waits (~50 when the loop is free)
SQL_WORDS = ("select", "insert", "update", "begin", "commit", "rollback", "sqlite3", "psycopg", "locked")
# a real sqlite3 connection in a process of its own: takes the file's write lock, says so, holds it
# until its stdin closes
LOCKER = """
import sqlite3, sys
conn = sqlite3.connect(sys.argv[1], isolation_level=None, timeout=10)
conn.execute("BEGIN IMMEDIATE")
print("locked", flush=True)
sys.stdin.read()
conn.execute("ROLLBACK")
"""


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    """(base URL, runs file, the day's truth) of a service over the G=21 day and a runs file of its own."""
    fx, d, manifest, truth = board21_day(tmp_path_factory, "edges")
    runs = d / "runs.sqlite"
    with serving(fx.lib_path, runs, [manifest], log=d / "serve.log") as base:
        yield base, runs, truth


# ---------------------------------------------------------------- the checks, and what they refuse


def leaks(body: str, *secrets: str) -> list[str]:
    """What ``body`` gives away of the service's insides: a path separator, a SQLite file's name, SQL
    or the databases' words, or any of ``secrets`` (the runs file's path, PostgreSQL's address)."""
    found = [s for s in ("/", ".sqlite", *secrets) if s and s in body]
    return found + [w for w in SQL_WORDS if re.search(rf"\b{w}\b", body, re.IGNORECASE)]


def unavailable_problems(r: httpx.Response, took: float, *secrets: str) -> list[str]:
    """Why ``r``, answered in ``took`` seconds, is not the quick 503 of a database busy or away."""
    out = [] if r.status_code == 503 else [f"status {r.status_code}"]
    retry = r.headers.get("retry-after", "")
    if not (retry.isdigit() and 1 <= int(retry) <= 60):
        out.append(f"Retry-After {retry!r}")
    try:
        keys = list(r.json())
    except ValueError:
        keys = None
    if keys != ["error"]:
        out.append(f"body {r.text[:100]!r}")
    out += [f"the body names {w!r}" for w in leaks(r.text, *secrets)]
    if took > SLOW:
        out.append(f"answered after {took:.1f} s")
    return out


def secured_problems(headers: dict[str, list[str]]) -> list[str]:
    """Which of ``security.HEADERS`` an answer (its headers by lower-case name, each with every value
    sent) lacks, or sends other than once with its value."""
    return [name for name, value in HEADERS if headers.get(name.lower()) != [value]]


def location_problems(location: str | None, want: str) -> list[str]:
    """Why ``location`` is not the relative reference ``want``: absent, absolute or scheme-relative
    (a host in it), or another path."""
    if location is None:
        return ["no Location"]
    out = [f"not relative: {location!r}"] if "://" in location or location.startswith("//") else []
    return out + ([f"{location!r} is not {want!r}"] if location != want else [])


def host_problems(conf: str) -> list[str]:
    """Why nginx's ``conf`` does not send its hosts one fixed ``Host`` (a variable such as ``$host`` or
    ``$http_host`` passes on what the client sent)."""
    lines = [line.split("#")[0].strip() for line in conf.splitlines()]
    hosts = [line for line in lines if re.match(r"proxy_set_header\s+host\s", line, re.IGNORECASE)]
    if len(hosts) != 1:
        return [f"{len(hosts)} 'proxy_set_header Host' lines"]
    value = hosts[0].split()[2].rstrip(";")
    return [f"Host from a variable: {value}"] if "$" in value or not value else []


def test_the_checks_refuse_the_old_answers():
    """Each check below refuses what the service and the proxy did before (so it can fail)."""
    old = httpx.Response(500, json={"error": "/srv/tiles/runs.sqlite: database is locked"})
    assert {"status 500", "Retry-After ''"} <= set(unavailable_problems(old, 30.2))
    assert "answered after 30.2 s" in unavailable_problems(old, 30.2)
    assert {"/", ".sqlite", "locked"} <= set(leaks(old.text))
    pg = "the runs database postgresql://tiles@127.0.0.1:5432/runs is unavailable: connection refused"
    assert {"/", "127.0.0.1"} <= set(leaks(pg, "127.0.0.1"))
    assert set(leaks('{"error":"insert or select failed"}')) == {"insert", "select"}
    bare = {"content-type": ["text/plain; charset=utf-8"], "connection": ["close"]}  # uvicorn's own 400
    assert secured_problems(bare) == [name for name, _ in HEADERS]
    twice = {name.lower(): [value, value] for name, value in HEADERS}
    assert secured_problems(twice) == [name for name, _ in HEADERS]
    assert location_problems("http://evil.example/api/v1/days", "/api/v1/days")[0].startswith("not relative")
    assert location_problems("//evil.example/api/v1/days", "/api/v1/days")[0].startswith("not relative")
    assert location_problems(None, "/api/v1/days") == ["no Location"]
    conf = NGINX_CONF.read_text()
    fixed = next(line for line in conf.splitlines() if "proxy_set_header Host" in line.split("#")[0])
    for was in ("proxy_set_header Host $http_host;", "proxy_set_header Host $host;"):
        assert host_problems(conf.replace(fixed, was)) == [f"Host from a variable: {was.split()[2][:-1]}"]
    assert host_problems(conf.replace(fixed, "")) == ["0 'proxy_set_header Host' lines"]


# ---------------------------------------------------------------- 1. a database that cannot take a write


@contextlib.contextmanager
def write_locked(path: Path):
    """The write lock of the SQLite file ``path`` held by another process for the block."""
    proc = subprocess.Popen(
        [sys.executable, "-c", LOCKER, str(path)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "locked"
        yield
    finally:
        assert proc.stdin is not None
        proc.stdin.close()
        assert proc.wait(timeout=30) == 0


def while_polling_health(base: str, send) -> tuple[httpx.Response, float, list[float]]:
    """``send()`` (one request) on a thread while ``/healthz`` is asked again and again: (its answer,
    its seconds, the seconds of each /healthz asked while it was waiting)."""
    done: dict = {}

    def go() -> None:
        t0 = time.monotonic()
        done["r"] = send()
        done["took"] = time.monotonic() - t0

    thread = threading.Thread(target=go)
    health: list[float] = []
    with httpx.Client(timeout=60) as c:
        thread.start()
        time.sleep(0.05)
        while thread.is_alive():
            t0 = time.monotonic()
            assert c.get(base + "/healthz").status_code == 200
            health.append(time.monotonic() - t0)
            time.sleep(0.01)
    thread.join()
    return done["r"], done["took"], health


def loop_problems(health: list[float]) -> list[str]:
    """Why the /healthz times taken while a write waited say the event loop stood still."""
    out = [] if len(health) >= HEALTH_LEAST else [f"only {len(health)} /healthz answered while it waited"]
    return out + ([f"/healthz took {max(health):.2f} s"] if health and max(health) > HEALTH_MOST else [])


def test_a_runs_file_locked_by_another_process_is_a_quick_503_and_the_loop_goes_on(served):
    base, runs, truth = served
    seed = truth.board.seed_tile
    with httpx.Client(base_url=base, timeout=60) as c:
        made = c.post(f"/api/v1/days/{DAY}/runs")  # unlocked: a run is made (what must pass does)
        assert made.status_code == 201, made.text
        run, token = made.json()["run"], made.json()["token"]
        move = {
            "json": {"moves": [{"tile": seed, "cells": truth.truth(seed)}]},
            "headers": {"Authorization": f"Bearer {token}", "Idempotency-Key": uuid.uuid4().hex},
        }
        with write_locked(runs):
            r, took, health = while_polling_health(base, lambda: c.post(f"/api/v1/days/{DAY}/runs"))
            assert not unavailable_problems(r, took, str(runs), runs.name), (unavailable_problems(r, took), r.text)
            assert not loop_problems(health), loop_problems(health)
            print(
                f"\nPOST /runs while locked: {r.status_code} in {took:.2f} s; /healthz meanwhile: "
                f"{len(health)} answers, max {max(health) * 1000:.1f} ms"
            )
            r, took, health = while_polling_health(base, lambda: c.post(f"/api/v1/runs/{run}/moves", **move))
            assert not unavailable_problems(r, took, str(runs), runs.name), (unavailable_problems(r, took), r.text)
            assert not loop_problems(health), loop_problems(health)
            print(f"POST moves while locked: {r.status_code} in {took:.2f} s; /healthz max {max(health) * 1000:.1f} ms")
            # reads do not need the write lock (WAL): still answered
            assert c.get(f"/api/v1/runs/{run}").json()["moves"] == 0
            # a client's own error is still its own status, not a 503
            assert c.post("/api/v1/days/1999-01-01/runs").status_code == 404
        # the lock gone: the same requests pass, the move judged once
        assert c.post(f"/api/v1/days/{DAY}/runs").status_code == 201
        judged = c.post(f"/api/v1/runs/{run}/moves", **move)
        assert judged.status_code == 200 and judged.json()["verdicts"][0]["correct"], judged.text
        assert c.get(f"/api/v1/runs/{run}").json()["moves"] == 1


def test_postgresql_stopped_is_a_quick_503_and_the_loop_goes_on(tmp_path_factory, pg_cluster):
    fx, d, manifest, truth = board21_day(tmp_path_factory, "edges_pg")
    url = pg_cluster.new_database("edges")
    address = f"127.0.0.1:{pg_cluster.port}"
    with (
        serving(fx.lib_path, url, [manifest], log=d / "serve-pg.log") as base,
        httpx.Client(base_url=base, timeout=60) as c,
    ):
        made = c.post(f"/api/v1/days/{DAY}/runs")
        assert made.status_code == 201, made.text
        run = made.json()["run"]
        pg_cluster.stop()
        try:
            r, took, health = while_polling_health(base, lambda: c.post(f"/api/v1/days/{DAY}/runs"))
            problems = unavailable_problems(r, took, address, str(pg_cluster.port), "postgres")
            assert not problems, (problems, r.text)
            assert not loop_problems(health), loop_problems(health)
            print(
                f"\nPOST /runs, PostgreSQL stopped: {r.status_code} in {took:.2f} s; /healthz meanwhile: "
                f"{len(health)} answers, max {max(health) * 1000:.1f} ms"
            )
            t0 = time.monotonic()
            read = c.get(f"/api/v1/runs/{run}")
            problems = unavailable_problems(read, time.monotonic() - t0, address, "postgres")
            assert not problems, (problems, read.text)
        finally:
            pg_cluster.start()
        again = c.post(f"/api/v1/days/{DAY}/runs")  # back: the service dials again
        assert again.status_code == 201, again.text


# ---------------------------------------------------------------- 2. uvicorn's own answers


def raw_exchange(base: str, request: bytes) -> tuple[int, dict[str, list[str]], bytes]:
    """``request``'s bytes sent as they are on a new connection: (status, headers by lower-case name
    with every value sent, body)."""
    host, port = base.removeprefix("http://").rsplit(":", 1)
    with socket.create_connection((host, int(port)), timeout=30) as s:
        s.sendall(request)
        data = b""
        while b"\r\n\r\n" not in data and (chunk := s.recv(65536)):
            data += chunk
        head, _, body = data.partition(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        headers: dict[str, list[str]] = {}
        for line in lines[1:]:
            name, _, value = line.partition(":")
            headers.setdefault(name.strip().lower(), []).append(value.strip())
        size = int(headers.get("content-length", ["0"])[0])
        while len(body) < size and (chunk := s.recv(65536)):
            body += chunk
    return int(lines[0].split()[1]), headers, body


@pytest.mark.parametrize(
    "request_bytes",
    [
        b"this is not an HTTP request line\r\n\r\n",
        b"BREW /api/v1/days HTTP/1.1\r\nHost: t\r\n\r\n",  # a method no one knows
        b"GET /api/v1/days HTTP/1.1\r\nHost: t\r\na header line without a colon\r\n\r\n",
        b"GET /api/v1/days HTTP/1.1\r\nHost: t\r\nX-Bad\x01Name: v\r\n\r\n",
        b"GET /api/v1/days HTTP/1.1\r\nHost: t\r\nContent-Length: -1\r\n\r\n",
    ],
    ids=["request-line", "unknown-method", "header-without-colon", "control-in-name", "bad-length"],
)
def test_requests_uvicorn_refuses_itself_are_answered_with_the_headers(served, request_bytes):
    base, _, _ = served
    status, headers, body = raw_exchange(base, request_bytes)
    assert status == 400, (status, body)
    assert not secured_problems(headers), (secured_problems(headers), headers)
    assert headers["content-type"] == ["application/json"] and body == b'{"error":"invalid HTTP request"}', body


def test_a_well_formed_raw_request_and_a_websocket_handshake_are_the_apps_answers(served):
    base, _, _ = served
    status, headers, body = raw_exchange(base, b"GET /api/v1/days HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n")
    assert status == 200 and body.startswith(b"[") and not secured_problems(headers), (status, headers)
    handshake = (
        b"GET /api/v1/days HTTP/1.1\r\nHost: t\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n"
        b"Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n"
    )
    status, headers, body = raw_exchange(base, handshake)
    assert status == 200 and body.startswith(b"["), (status, headers, body)  # no 101, no bare 403
    assert not secured_problems(headers), (secured_problems(headers), headers)


# ---------------------------------------------------------------- 3. no Location from Host


@pytest.mark.parametrize(
    "path, want",
    [
        ("/api/v1/days/", "/api/v1/days"),
        (f"/api/v1/days/{DAY}/leaderboard/?limit=3&by=reward", f"/api/v1/days/{DAY}/leaderboard?limit=3&by=reward"),
        ("/docs/", "/docs"),
        ("/static", "/static/"),
        ("/api/v1/runs/r%20x/frontier/", "/api/v1/runs/r%20x/frontier"),
    ],
)
def test_a_trailing_slash_is_redirected_relatively_whatever_the_host(served, path, want):
    base, _, _ = served
    for host in ("evil.example", "127.0.0.1:1", None):
        headers = {"X-Forwarded-Host": "evil.example", "X-Forwarded-Proto": "https"}
        if host is not None:
            headers["Host"] = host
        r = httpx.get(base + path, headers=headers, timeout=30)
        assert r.status_code == 307, (host, r.status_code, r.text)
        assert not location_problems(r.headers.get("location"), want), (host, r.headers.get("location"))
        assert not secured_problems({k: r.headers.get_list(k) for k in r.headers}), r.headers


@pytest.mark.parametrize("path", ["//evil.example/", "/nowhere/", "/api/v1/days/x/y/"])
def test_a_path_with_no_twin_is_a_404_without_a_location(served, path):
    base, _, _ = served
    r = httpx.get(base + path, headers={"Host": "evil.example"}, timeout=30)
    assert r.status_code == 404 and "location" not in r.headers and list(r.json()) == ["error"], r.text


def test_the_proxy_sends_a_fixed_host():
    assert not host_problems(NGINX_CONF.read_text()), host_problems(NGINX_CONF.read_text())


def test_an_app_that_ends_without_an_answer_gets_the_500_with_the_headers_not_uvicorns():
    """uvicorn's own 500 (an app that raised or returned before answering) cannot be asked for over
    HTTP — no request crashes the service — so ``server._answered``, which sends it in uvicorn's
    place, is called here with apps that do; a client already gone gets nothing."""
    import asyncio
    import logging

    from referee.service.server import _answered

    async def raises(scope, receive, send):
        raise RuntimeError("a bug")

    async def returns(scope, receive, send):
        return None

    async def answers(scope, receive, send):
        await send({"type": "http.response.start", "status": 204, "headers": []})
        await send({"type": "http.response.body", "body": b""})

    raised: list[str] = []

    def sent_by(app, gone: bool = False) -> list[dict]:
        out: list[dict] = []

        async def send(message):
            out.append(message)

        async def go():
            await _answered(app, logging.getLogger("test"), lambda: gone)({"type": "http"}, None, send)

        try:
            asyncio.run(go())
        except RuntimeError as e:
            raised.append(str(e))
        return out

    for app in (raises, returns):
        start, body = sent_by(app)
        assert start["status"] == 500 and body["body"] == b'{"error":"internal error"}'
        headers = {k.decode(): [v.decode()] for k, v in start["headers"]}
        assert not secured_problems(headers), headers
    assert raised == ["a bug"]  # the bug still goes on, for uvicorn's log
    assert [m["status"] for m in sent_by(answers) if "status" in m] == [204]  # an answer is left alone
    assert sent_by(returns, gone=True) == []  # nobody to answer


def test_the_clients_wait_out_a_503_and_create_the_run_once_the_lock_is_gone(served, make_client):
    """A 503 with Retry-After stored nothing: both clients send any call again after the seconds it
    names, a run's creation too, and the run is made once the other process lets the file go."""
    base, runs, _truth = served
    result: dict = {}
    with make_client(base, retries=8) as c:
        sent = c.requests
        with write_locked(runs):
            worker = threading.Thread(target=lambda: result.update(made=c.create_run(DAY, player="patient")))
            worker.start()
            time.sleep(3.0)  # 503s with Retry-After meanwhile: the client waits and asks again
            assert worker.is_alive()  # still waiting, not given up
        worker.join(timeout=60)
        assert not worker.is_alive() and result["made"].run
        assert c.requests - sent >= 2  # at least one 503, then the run


def test_a_retry_after_that_is_not_ascii_digits_is_one_second():
    from players.client import _retry_after

    for value, want in (("7", 7.0), ("²", 1.0), ("\u0663", 1.0), ("1e3", 1.0), ("", 1.0), ("99999999", 3600.0)):
        # as the bytes a hostile server sends: '²' as one latin-1 byte, which httpx reads back as '²'
        raw = [(b"Retry-After", value.encode("latin-1") if value.isascii() or value == "²" else value.encode())]
        assert _retry_after(httpx.Response(503, headers=raw)) == want, value


def test_no_answer_names_the_server_software(served):
    base, _runs, _truth = served
    for path in ("/healthz", "/api/v1/days", "/nowhere"):
        assert "server" not in httpx.get(base + path, timeout=30).headers, path
    status, headers, _ = raw_exchange(base, b"BREW / HTTP/1.1\r\nHost: x\r\n\r\n")
    assert status == 400 and "server" not in headers
