"""``/metrics`` and the access log of a real `tiles referee serve` (``referee.service.observe``).

The exposition is read with prometheus-client's own parser, which must itself refuse a broken one;
a request counts exactly once under its route template (never under the path sent: a client cannot
grow the series); moves count by verdict, and a retry answered from its Idempotency-Key not again;
with ``--workers 2`` a scrape answered by either worker adds up both (multiprocess mode, a private
folder removed at the end). The access log has one line per request, text or JSON lines, with a
hostile path printed safely, and none with ``--access-log off``."""

from __future__ import annotations

import http.client
import json
import os
import re
import socket
import stat
import time
from pathlib import Path

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families
from serve_support import board21_day, service_process, serving, worker_pids

DAY = "2026-11-29"


@pytest.fixture(scope="module")
def day(tmp_path_factory):
    """(library, folder, manifest, truth) of the shared G=21 day."""
    fx, d, manifest, truth = board21_day(tmp_path_factory, "metrics")
    return fx.lib_path, d, manifest, truth


@pytest.fixture(scope="module")
def served(day):
    """(base URL, log file) of one service with JSON access lines over its own runs file."""
    lib, d, manifest, _ = day
    log = d / "serve-json.log"
    with serving(lib, d / "runs.sqlite", [manifest], "--access-log", "json", log=log) as base:
        yield base, log


def samples(text: str) -> dict[tuple, float]:
    """Every sample of an exposition, keyed (name, sorted labels), through prometheus-client's parser."""
    return {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for fam in text_string_to_metric_families(text)
        for s in fam.samples
    }


def value(found: dict[tuple, float], name: str, **labels: str) -> float:
    """The value of the sample ``name`` with exactly ``labels`` (0 if the series does not exist yet)."""
    return found.get((name, tuple(sorted(labels.items()))), 0.0)


def scrape(base: str) -> dict[tuple, float]:
    r = httpx.get(base + "/metrics", timeout=30)
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/plain"), r.headers
    return samples(r.text)


def test_the_parser_refuses_a_broken_exposition():
    good = '# TYPE tiles_x counter\ntiles_x_total{route="/a"} 3.0\n'
    assert value(samples(good), "tiles_x_total", route="/a") == 3.0
    for broken in ('tiles_x_total{route="/a} 3\n', 'tiles_x_total{route="/a"} three\n', 'tiles_x_total{="a"} 1\n'):
        with pytest.raises(ValueError):
            samples(broken)


def test_a_request_counts_once_under_its_route_template(served):
    base, _ = served
    before = scrape(base)
    for _ in range(5):
        assert httpx.get(base + "/api/v1/days", timeout=30).status_code == 200
    for k in range(3):
        assert httpx.get(f"{base}/api/v1/days/1999-01-0{k + 1}", timeout=30).status_code == 404
    after = scrape(base)
    days = dict(route="/api/v1/days", method="GET", status="200")
    assert value(after, "tiles_http_requests_total", **days) - value(before, "tiles_http_requests_total", **days) == 5
    one = dict(route="/api/v1/days/{day}", method="GET", status="404")
    assert value(after, "tiles_http_requests_total", **one) - value(before, "tiles_http_requests_total", **one) == 3
    timed = dict(route="/api/v1/days", method="GET")
    count = "tiles_http_request_duration_seconds_count"
    assert value(after, count, **timed) - value(before, count, **timed) == 5
    assert value(after, "tiles_http_request_duration_seconds_bucket", le="+Inf", **timed) == value(
        after, count, **timed
    )
    assert value(after, "tiles_days_loaded") == 1
    # the scrape before this one counted itself once it was answered
    assert value(after, "tiles_http_requests_total", route="/metrics", method="GET", status="200") >= 1


def test_paths_no_route_has_share_one_series(served):
    base, _ = served
    for k in range(20):
        assert httpx.get(f"{base}/nowhere-{k}/x", timeout=30).status_code == 404
    found = scrape(base)
    routes = {dict(labels).get("route") for (name, labels) in found if name == "tiles_http_requests_total"}
    assert not [r for r in routes if "nowhere" in r], routes  # never the path sent
    assert value(found, "tiles_http_requests_total", route="other", method="GET", status="404") >= 20


def test_moves_count_by_verdict_and_a_retry_is_not_counted_again(served, day):
    base, *_ = served
    truth = day[3]
    seed = truth.board.seed_tile
    nbr = min(truth.nbrs[seed])
    before = scrape(base)
    r = httpx.post(f"{base}/api/v1/days/{DAY}/runs", timeout=30)
    assert r.status_code == 201, r.text
    run, auth = r.json()["run"], {"Authorization": f"Bearer {r.json()['token']}"}
    wrong = truth.truth(nbr)
    wrong = ("1" if wrong[0] == "0" else "0") + wrong[1:]
    moves = [
        {"tile": seed, "cells": truth.truth(seed)},
        {"tile": seed, "cells": truth.truth(seed)},  # a replay
        {"tile": nbr, "cells": wrong},
        {"tile": nbr, "cells": "0"},
    ]  # malformed
    headers = {**auth, "Idempotency-Key": "metrics-1"}
    first = httpx.post(f"{base}/api/v1/runs/{run}/moves", json={"moves": moves}, headers=headers, timeout=30)
    assert first.status_code == 200, first.text
    again = httpx.post(f"{base}/api/v1/runs/{run}/moves", json={"moves": moves}, headers=headers, timeout=30)
    assert again.json() == first.json()  # answered from its key: nothing judged anew
    after = scrape(base)
    grew = {
        v: value(after, "tiles_moves_judged_total", verdict=v) - value(before, "tiles_moves_judged_total", verdict=v)
        for v in ("correct", "wrong", "rejected")
    }
    assert grew == {"correct": 1, "wrong": 1, "rejected": 2}, grew
    assert value(after, "tiles_runs_created_total") - value(before, "tiles_runs_created_total") == 1
    route = dict(route="/api/v1/runs/{run}/moves", method="POST", status="200")
    assert value(after, "tiles_http_requests_total", **route) - value(before, "tiles_http_requests_total", **route) == 2
    # the runs file never failed, and SQLite never retries
    assert value(after, "tiles_db_errors_total", kind="error") == 0 and value(after, "tiles_db_retries_total") == 0


def access_lines(log: Path) -> list[dict]:
    """The JSON access lines of a service's log (its other lines are its start-up report)."""
    return [json.loads(line) for line in log.read_text().splitlines() if line.startswith("{")]


def test_json_access_log_has_one_line_per_request(served):
    base, log = served
    paths = [f"/api/v1/days/2001-02-0{k}" for k in range(1, 5)]
    sizes = [len(httpx.get(base + p, timeout=30).content) for p in paths]
    time.sleep(0.2)
    lines = access_lines(log)
    for p, size in zip(paths, sizes, strict=True):
        mine = [ln for ln in lines if ln["path"] == p]
        assert len(mine) == 1, mine
        (ln,) = mine
        assert set(ln) == {"ts", "addr", "method", "path", "status", "ms", "bytes"}, ln
        assert (ln["addr"], ln["method"], ln["status"], ln["bytes"]) == ("127.0.0.1", "GET", 404, size)
        assert isinstance(ln["ms"], (int, float)) and 0 <= ln["ms"] < 30_000
        assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", ln["ts"]), ln["ts"]
    # a hostile path: printed as sent (a line break stays %0A), at most 200 characters, one line
    assert hostile(base).startswith(b"HTTP/1.1 404")
    time.sleep(0.2)
    evil = [ln for ln in access_lines(log) if ln["path"].startswith("/evil-")]
    assert len(evil) == 1 and len(evil[0]["path"]) == 200 and evil[0]["path"].isprintable(), evil
    assert evil[0]["path"].startswith("/evil-%0Atiles%20referee%20serve:")
    assert all(line.startswith(("{", "tiles referee serve")) for line in log.read_text().splitlines())


def hostile(base: str) -> bytes:
    """Send a path of 400+ characters that tries to start a log line of its own (``%0A``), over a raw
    socket; the start of the answer."""
    raw = b"/evil-%0Atiles%20referee%20serve:%20forged%0D%0A" + b"a" * 400
    with socket.create_connection(("127.0.0.1", int(base.rsplit(":", 1)[1])), timeout=30) as s:
        s.sendall(b"GET " + raw + b" HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        return s.recv(100)


def test_text_access_log_and_off(day):
    lib, d, manifest, _ = day
    text_log, off_log = d / "serve-text.log", d / "serve-off.log"
    with serving(lib, d / "runs-text.sqlite", [manifest], log=text_log) as base:  # text is the default
        for p in ("/healthz", "/api/v1/days/2002-03-04"):
            httpx.get(base + p, timeout=30)
        time.sleep(0.2)
        lines = text_log.read_text().splitlines()
        assert len([ln for ln in lines if " /healthz " in ln]) == 1, lines
        assert any(re.fullmatch(r"127\.0\.0\.1 GET /api/v1/days/2002-03-04 404 \d+\.\d ms \d+ B", ln) for ln in lines)
        assert hostile(base).startswith(b"HTTP/1.1 404")
        time.sleep(0.2)
        lines = text_log.read_text().splitlines()
        evil = [ln for ln in lines if "/evil-" in ln]
        assert len(evil) == 1 and re.fullmatch(r"127\.0\.0\.1 GET /evil-%0A\S{191} 404 \d+\.\d ms \d+ B", evil[0]), evil
        assert not [ln for ln in lines if "forged" in ln and not ln.startswith("127.0.0.1 GET /evil-")]
    with serving(lib, d / "runs-off.sqlite", [manifest], "--access-log", "off", log=off_log) as base:
        for _ in range(3):
            assert httpx.get(base + "/healthz", timeout=30).status_code == 200
        found = scrape(base)
        assert value(found, "tiles_http_requests_total", route="/healthz", method="GET", status="200") == 3
    assert [ln for ln in off_log.read_text().splitlines() if "GET" in ln] == []  # counted, not logged


def _owner(pids: list[int], port: int, client_port: int) -> int | None:
    """The worker among ``pids`` holding the server's side of the connection from ``client_port``."""
    inode = None
    for line in Path("/proc/net/tcp").read_text().splitlines()[1:]:
        f = line.split()
        if int(f[1].split(":")[1], 16) == port and int(f[2].split(":")[1], 16) == client_port:
            inode = f[9]
    for pid in pids:
        for fd in os.listdir(f"/proc/{pid}/fd"):
            try:
                if os.readlink(f"/proc/{pid}/fd/{fd}") == f"socket:[{inode}]":
                    return pid
            except OSError:
                pass
    return None


def _get(conn: http.client.HTTPConnection, path: str) -> tuple[int, str]:
    conn.request("GET", path)
    r = conn.getresponse()
    return r.status, r.read().decode()


def test_two_workers_add_up_in_every_scrape(day, tmp_path):
    lib, _d, manifest, _ = day
    with service_process(lib, tmp_path / "runs.sqlite", [manifest], "--workers", "2", log=tmp_path / "serve.log") as (
        proc,
        base,
    ):
        deadline = time.monotonic() + 60
        while len(pids := worker_pids(proc.pid)) < 2 and time.monotonic() < deadline:
            time.sleep(0.2)
        assert len(pids) == 2, pids
        env = Path(f"/proc/{pids[0]}/environ").read_bytes().split(b"\0")
        folder = Path(next(e for e in env if e.startswith(b"PROMETHEUS_MULTIPROC_DIR=")).split(b"=", 1)[1].decode())
        assert stat.S_IMODE(folder.stat().st_mode) == 0o700
        port = int(base.rsplit(":", 1)[1])
        # keep-alive connections until each worker holds one (a worker still loading its boards takes
        # none): the newest of each kept, so none sits idle past uvicorn's keep-alive of 5 s
        by_worker: dict[int | None, http.client.HTTPConnection] = {}
        deadline = time.monotonic() + 60
        while not all(p in by_worker for p in pids) and time.monotonic() < deadline:
            c = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
            assert _get(c, "/healthz")[0] == 200
            old = by_worker.get(owner := _owner(pids, port, c.sock.getsockname()[1]))
            if old is not None:
                old.close()
            by_worker[owner] = c
            time.sleep(0.02)
        assert all(p in by_worker for p in pids), (pids, list(by_worker))
        a, b = by_worker[pids[0]], by_worker[pids[1]]
        days = dict(route="/api/v1/days", method="GET", status="200")
        start = [value(samples(_get(c, "/metrics")[1]), "tiles_http_requests_total", **days) for c in (a, b)]
        assert start[0] == start[1], start  # each worker's scrape sees the same total
        for c, n in ((a, 3), (b, 4)):
            for _ in range(n):
                assert _get(c, "/api/v1/days")[0] == 200
        for c in (a, b):
            found = samples(_get(c, "/metrics")[1])
            assert value(found, "tiles_http_requests_total", **days) == start[0] + 7  # not 3, not 4
            assert value(found, "tiles_days_loaded") == 1  # the most, not the sum
        for c in by_worker.values():
            c.close()
        assert list(folder.glob("counter_*.db")), list(folder.iterdir())
    assert not folder.exists()  # removed with the workers
