"""The hot reads (``referee.service.hotpath``: a run's frontier and tile views answered ahead of
FastAPI's routing) answer byte for byte as the FastAPI routes they stand in front of: the same
status, headers and body for every request, good or bad, played through a whole run; what they do
not take (another method, an odd id, a trailing slash) FastAPI still answers; the paths they match
are routes of the app and of its OpenAPI document."""

from __future__ import annotations

import asyncio
import gc
import json

import pytest
from serve_support import in_process_day21

from referee.service import hotpath, observe

DAY = "2026-11-29"


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    """(app, judge with the truth) over the G=21 day and a SQLite runs file of its own."""
    with in_process_day21(tmp_path_factory, "hotpath") as (app, _store, truth):
        assert gc.get_freeze_count() > 0  # the days' boards out of the collector's walks (boards.settle)
        yield app, truth


def call(app, method: str, path: str, body: bytes = b"", headers: tuple = ()) -> tuple[int, list, bytes]:
    """(status, headers, body) of one request sent straight to the ASGI app."""
    raw_path, _, query = path.partition("?")
    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": method,
        "scheme": "http",
        "path": raw_path,
        "raw_path": raw_path.encode(),
        "query_string": query.encode(),
        "root_path": "",
        "headers": [(b"host", b"testserver"), (b"content-length", str(len(body)).encode()), *headers],
        "client": ("127.0.0.1", 50000),
        "server": ("127.0.0.1", 80),
    }
    sent: list[dict] = []

    async def receive():
        return {"type": "http.request", "body": body, "more_body": False}

    async def send(message):
        sent.append(message)

    async def go():
        try:
            await app(scope, receive, send)
        except Exception:  # a bug's 500 is sent, then raised for the server's log: only that is expected
            if not sent or sent[0]["status"] != 500:
                raise

    asyncio.run(go())
    return sent[0]["status"], sent[0]["headers"], b"".join(m.get("body", b"") for m in sent[1:])


def both_ways(app, monkeypatch, method: str, path: str) -> tuple[int, list, bytes]:
    """The answer through the hot path, checked equal to FastAPI's own answer to the same request; a
    request the hot path takes (a GET its table matches) must have been answered by it, not passed on."""
    taken: list[str] = []
    real_route = hotpath.route

    def spy(hot, p: str):
        answer = real_route(hot, p)
        if answer is not None:
            taken.append(p)
        return answer

    with monkeypatch.context() as mp:
        mp.setattr(hotpath, "route", spy)
        fast = call(app, method, path)
    raw = path.partition("?")[0]
    if method == "GET" and real_route(app.state.hot, raw) is not None:
        assert taken == [raw], f"{path} did not take the hot path"
    with monkeypatch.context() as mp:
        mp.setattr(hotpath, "route", lambda _hot, _path: None)
        slow = call(app, method, path)
    assert fast == slow, (path, fast, slow)
    return fast


def test_a_whole_run_reads_the_same_both_ways(served, monkeypatch):
    app, truth = served
    status, _, body = call(
        app, "POST", f"/api/v1/days/{DAY}/runs", b'{"player":"hot"}', ((b"content-type", b"application/json"),)
    )
    assert status == 201
    created = json.loads(body)
    run, token = created["run"], created["token"]
    every = list(range(len(truth.nbrs)))
    solved: set[int] = set()
    while True:
        status, _, body = both_ways(app, monkeypatch, "GET", f"/api/v1/runs/{run}/frontier")
        assert status == 200
        front = json.loads(body)
        assert sorted(front["solved"]) == sorted(solved)
        for t in every:  # the frontier's tiles, the solved ones and the rest
            status, _, body = both_ways(app, monkeypatch, "GET", f"/api/v1/runs/{run}/tiles/{t}")
            assert status == 200 and json.loads(body)["solved"] == (t in solved)
        if not front["tiles"]:
            break
        moves = json.dumps({"moves": [{"tile": t, "cells": truth.truth(t)} for t in front["tiles"]]}).encode()
        auth = ((b"content-type", b"application/json"), (b"authorization", f"Bearer {token}".encode()))
        status, _, body = call(app, "POST", f"/api/v1/runs/{run}/moves", moves, auth)
        assert status == 200, body
        solved |= {v["tile"] for v in json.loads(body)["verdicts"] if v["correct"]}
    assert solved == set(every)


@pytest.mark.parametrize(
    "path, status",
    [
        ("/api/v1/runs/nosuchrun/frontier", 404),
        ("/api/v1/runs/nosuchrun/tiles/0", 404),
        ("/api/v1/runs/" + "r" * 64 + "/frontier", 404),  # the longest id the route takes
        ("/api/v1/runs/" + "r" * 65 + "/frontier", 400),  # one over: FastAPI's 400
        ("/api/v1/runs/" + "r" * 65 + "/tiles/0", 400),
        ("/api/v1/runs/x/tiles/-1", 400),
        ("/api/v1/runs/x/tiles/1e3", 400),
        ("/api/v1/runs/x/tiles/9999999", 400),  # digits past MAX_TILE_ID
        ("/api/v1/runs/x/tiles/99999999999999999999999", 400),
        ("/api/v1/runs/x/tiles/", 404),
        ("/api/v1/runs/x/frontier/", 307),
        ("/api/v1/runs/x/frontier?ignored=1", 404),
        ("/api/v1/runs/r%C3%A9/frontier", 404),  # a non-ASCII id, decoded as FastAPI decodes it
    ],
)
def test_bad_reads_answer_the_same_both_ways(served, monkeypatch, path, status):
    app, _ = served
    got, _, body = both_ways(app, monkeypatch, "GET", path)
    assert got == status, body
    if status != 307:
        assert set(json.loads(body)) == {"error"}


def test_a_known_run_with_a_tile_it_does_not_have(served, monkeypatch):
    app, _ = served
    status, _, body = call(app, "POST", f"/api/v1/days/{DAY}/runs", b"{}", ((b"content-type", b"application/json"),))
    run = json.loads(body)["run"]
    got, _, body = both_ways(app, monkeypatch, "GET", f"/api/v1/runs/{run}/tiles/4000")
    assert got == 404 and "4000" in json.loads(body)["error"]


def test_other_methods_and_routes_go_to_fastapi(served, monkeypatch):
    app, _ = served
    for method in ("HEAD", "POST", "DELETE"):
        status, headers, _ = both_ways(app, monkeypatch, method, "/api/v1/runs/x/frontier")
        assert status == 405 and (b"allow", b"GET") in headers
    hot = app.state.hot
    assert hotpath.route(hot, "/api/v1/runs/x") is None and hotpath.route(hot, "/api/v1/runs/x/history") is None


def test_a_bug_on_the_hot_path_is_the_apps_500(served, monkeypatch):
    app, _ = served

    def broken(*_args):
        raise ZeroDivisionError("a bug")

    monkeypatch.setattr("referee.service.play.frontier", broken)
    status, headers, body = both_ways(app, monkeypatch, "GET", "/api/v1/runs/x/frontier")
    assert status == 500 and json.loads(body) == {"error": "internal error: ZeroDivisionError"}
    assert (b"x-frame-options", b"DENY") in headers  # the security headers, as on every answer


def test_the_hot_paths_are_routes_of_the_app_and_its_document(served):
    app, _ = served
    table = observe.route_table(app.routes)
    assert observe.route_of(table, "/api/v1/runs/x/frontier") == "/api/v1/runs/{run}/frontier"
    assert observe.route_of(table, "/api/v1/runs/x/tiles/3") == "/api/v1/runs/{run}/tiles/{tile}"
    paths = app.openapi()["paths"]
    assert "get" in paths["/api/v1/runs/{run}/frontier"] and "get" in paths["/api/v1/runs/{run}/tiles/{tile}"]
    hot = app.state.hot
    assert hotpath.route(hot, "/api/v1/runs/x/frontier") is not None
    assert hotpath.route(hot, "/api/v1/runs/x/tiles/3") is not None


def test_the_hot_reads_are_answered_without_fastapi(served):
    app, _ = served
    status, _, body = call(app, "POST", f"/api/v1/days/{DAY}/runs", b"{}", ((b"content-type", b"application/json"),))
    run = json.loads(body)["run"]

    async def nowhere(scope, receive, send):
        raise AssertionError(f"{scope['path']} reached FastAPI")

    alone = hotpath.HotReads(nowhere, lambda: app.state.store, app.state.hot)
    status, _, body = call(alone, "GET", f"/api/v1/runs/{run}/frontier")
    assert status == 200 and json.loads(body)["run"] == run
    seed = json.loads(body)["tiles"][0]
    status, _, body = call(alone, "GET", f"/api/v1/runs/{run}/tiles/{seed}")
    assert status == 200 and json.loads(body)["seed"] is True
    with pytest.raises(AssertionError, match="reached FastAPI"):
        asyncio.run(alone({"type": "http", "method": "GET", "path": f"/api/v1/runs/{run}"}, None, None))


def test_the_app_answers_the_hot_reads_before_routing(served, monkeypatch):
    """The app's own stack holds the hot path: with every FastAPI route of the app taken away, the two
    hot reads still answer 200 with the run's data, and any other read finds nothing (404)."""
    app, _ = served
    status, _, body = call(app, "POST", f"/api/v1/days/{DAY}/runs", b"{}", ((b"content-type", b"application/json"),))
    run = json.loads(body)["run"]
    monkeypatch.setattr(app.router, "routes", [])
    status, _, body = call(app, "GET", f"/api/v1/runs/{run}/frontier")
    assert status == 200 and json.loads(body)["run"] == run
    seed = json.loads(body)["tiles"][0]
    status, _, body = call(app, "GET", f"/api/v1/runs/{run}/tiles/{seed}")
    assert status == 200 and json.loads(body)["seed"] is True
    status, _, _ = call(app, "GET", f"/api/v1/runs/{run}")
    assert status == 404


# ---------------------------------------------------------------- the table is the app's routes


def routes_like_the_apps(run_path, *extra_dependencies):
    """A throwaway app with the two hot routes as the service declares them, the frontier's run
    parameter declared by ``run_path`` and given ``extra_dependencies``."""
    from fastapi import Depends, FastAPI

    from referee import wire as m
    from referee.service.deps import store
    from referee.service.routes_runs import RunPath, TilePath
    from referee.wire import API

    app = FastAPI()
    deps = [Depends(d) for d in extra_dependencies]

    @app.get(API + "/runs/{run}/frontier", name="frontier", response_model=m.Frontier, dependencies=deps)
    async def frontier(run: str = run_path, st=Depends(store)) -> dict:
        raise AssertionError("not called")

    @app.get(API + "/runs/{run}/tiles/{tile}", name="run_tile", response_model=m.TileView)
    async def run_tile(run: str = RunPath, tile: int = TilePath, st=Depends(store)) -> dict:
        raise AssertionError("not called")

    return app.router.routes


def test_a_hot_route_that_gains_a_dependency_is_refused():
    """A quota (or a counter, or any dependency but the store) added to a hot route would be skipped
    on the reads the hot path answers: the table refuses the route, naming what it would skip."""
    from referee.service.routes_runs import RunPath

    async def quota() -> None:
        return None

    assert hotpath.table(routes_like_the_apps(RunPath)).routes  # as the service declares them: taken
    with pytest.raises(
        RuntimeError, match=r"^the hot route frontier \(/api/v1/runs/\{run\}/frontier\) depends on quota"
    ):
        hotpath.table(routes_like_the_apps(RunPath, quota))


def test_the_hot_paths_limits_are_the_routes():
    """The run id's limit is the route's max_length, wherever it is declared (8 here, not 64)."""
    from fastapi import Path

    hot = hotpath.table(routes_like_the_apps(Path(max_length=8)))
    assert hotpath.route(hot, "/api/v1/runs/abcdefgh/frontier") is not None
    assert hotpath.route(hot, "/api/v1/runs/abcdefghi/frontier") is None
    assert hotpath.route(hot, "/api/v1/runs/abcdefghi/tiles/3") is not None  # that route still says 64
    with pytest.raises(RuntimeError, match="reads run with limits other than one max_length"):
        hotpath.table(routes_like_the_apps(Path(max_length=8, pattern="^[a-z]+$")))


def test_the_service_refuses_to_start_when_a_hot_route_needs_more(served, monkeypatch):
    """Named hot, a route with dependencies the hot path does not run (the moves: a token, a quota)
    stops the app from being made at all."""
    from referee.service.app import create_app

    app, _ = served
    monkeypatch.setattr(hotpath, "HOT", (*hotpath.HOT, "moves"))
    refused = r"^the hot route moves .* depends on settings, RunToken, address, which it does not run"
    with pytest.raises(RuntimeError, match=refused):
        create_app(app.state.store)
    monkeypatch.setattr(hotpath, "HOT", ("frontier", "no_such_route"))
    with pytest.raises(RuntimeError, match="^the hot routes no_such_route are not routes of the app$"):
        create_app(app.state.store)
