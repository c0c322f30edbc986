"""``/healthz`` and ``/readyz`` of a real `tiles referee serve` (``referee.service.observe``): alive
needs no database; ready needs the runs database to answer now, and says 503 in one line (the reason,
which names the runs file or the server's address, goes to the service's log, never into a body),
within a few seconds, while PostgreSQL is stopped (a real server, stopped and started again) or
the runs file is gone, and 200 again once it is back."""

from __future__ import annotations

import time

import httpx
import pytest
from serve_support import board21_day, serving

DAY = "2026-11-29"
HANG = 15.0  # seconds: a guard against a hang, not a speed claim (the probe takes 2 s: libpq's least
# connect_timeout; the store's own retries would take 20 s); how fast these answer is in BENCHMARKS


@pytest.fixture(scope="module")
def day(tmp_path_factory):
    """(library, folder, manifest) of the shared G=21 day."""
    fx, d, manifest, _ = board21_day(tmp_path_factory, "health")
    return fx.lib_path, d, manifest


def timed_get(url: str) -> tuple[httpx.Response, float]:
    t0 = time.monotonic()
    r = httpx.get(url, timeout=30)
    return r, time.monotonic() - t0


def assert_not_ready(r: httpx.Response, *words: str) -> None:
    """503, one JSON object ``{"error": one line}`` naming each of ``words``, never cached."""
    assert r.status_code == 503, (r.status_code, r.text)
    body = r.json()
    assert list(body) == ["error"] and "\n" not in body["error"] and 0 < len(body["error"]) <= 300, body
    for w in words:
        assert w in body["error"], body
    assert r.headers["cache-control"] == "no-store"


def test_alive_and_ready_over_a_runs_file_and_not_ready_while_it_is_gone(day):
    lib, d, manifest = day
    runs = d / "runs.sqlite"
    with serving(lib, runs, [manifest], log=d / "serve-sqlite.log") as base:
        r = httpx.get(base + "/healthz", timeout=30)
        assert (r.status_code, r.json(), r.headers["cache-control"]) == (200, {"status": "alive"}, "no-store")
        r = httpx.get(base + "/readyz", timeout=30)
        assert (r.status_code, r.json()) == (200, {"status": "ready", "days": 1}), r.text
        # the runs file moved away: the probe (a connection of its own) cannot open it
        away = runs.with_name("away.sqlite")
        runs.rename(away)
        try:
            r, took = timed_get(base + "/readyz")
            assert_not_ready(r, "runs database does not answer")
            assert str(runs.parent) not in r.text and ".sqlite" not in r.text  # no server path in a body
            assert took < HANG, took
            assert httpx.get(base + "/healthz", timeout=30).status_code == 200  # alive all the same
        finally:
            away.rename(runs)
        assert httpx.get(base + "/readyz", timeout=30).status_code == 200
        # none of the three is part of the API's document
        paths = httpx.get(base + "/openapi.json", timeout=30).json()["paths"]
        assert paths and not {"/healthz", "/readyz", "/metrics"} & set(paths), sorted(paths)
        # they answer GET only (a 405 that says so, not a 500)
        assert httpx.post(base + "/readyz", timeout=30).status_code == 405


def test_readyz_is_503_while_postgresql_is_stopped_and_200_after(day, pg_cluster):
    lib, d, manifest = day
    url = pg_cluster.new_database("ready")
    with serving(lib, url, [manifest], log=d / "serve-pg.log") as base:
        r = httpx.get(base + "/readyz", timeout=30)
        assert (r.status_code, r.json()) == (200, {"status": "ready", "days": 1}), r.text
        pg_cluster.stop()
        stopped = True
        try:
            for _ in range(3):  # each time, at once: one probe, not the store's 20 s retries
                r, took = timed_get(base + "/readyz")
                assert_not_ready(r, "does not answer")
                assert "127.0.0.1" not in r.text and "5432" not in r.text  # no server address in a body
                assert took < HANG, took
            h, took = timed_get(base + "/healthz")
            assert h.status_code == 200 and took < HANG, (h.status_code, took)
            pg_cluster.start()
            stopped = False
        finally:
            if stopped:
                pg_cluster.start()
        deadline = time.monotonic() + 30
        while (r := httpx.get(base + "/readyz", timeout=30)).status_code != 200 and time.monotonic() < deadline:
            time.sleep(0.2)
        assert (r.status_code, r.json()) == (200, {"status": "ready", "days": 1}), r.text
        # and the service itself is back: its own connection is dialled again
        created = httpx.post(f"{base}/api/v1/days/{DAY}/runs", timeout=60)
        assert created.status_code == 201, created.text
