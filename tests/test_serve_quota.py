"""Fair use (``referee.service.quota``): counters in the runs database, so a quota holds across
processes; past a limit 429 with ``Retry-After``, nothing stored; ``players.client`` waits as told
and succeeds.

The counting itself is checked on both backends against a clock the test sets; the service is
checked with two ``tiles referee serve`` processes over one runs database (as two hosts or two
workers would share it): requests alternate between them and the third one over the limit is
refused whichever process answers it."""

from __future__ import annotations

import logging
import time

import httpx
import pytest
from serve_support import board21_day, service_process

from referee.runsdb import opened
from referee.service.quota import NO_QUOTAS, SHARDS, Quotas, charge, retry_after, sweep, window_of
from tilelib.errors import RateLimited

T0 = 1_800_000_000.0  # a window boundary for every window used here (divisible by 60 and by 2)


def _charge(db, q: Quotas, **kw) -> None:
    db.atomic(lambda tx: charge(tx.rows, q, **kw))


def _count(db, key: str) -> int:
    return sum(u for (u,) in db.read("SELECT used FROM quota WHERE key = ?", (key,)))


def test_window_arithmetic():
    assert window_of(T0, 60) == (T0 // 60, 60.0)
    k, left = window_of(T0 + 59.5, 60)
    assert (k, left) == (T0 // 60, 0.5)
    assert window_of(T0 + 60, 60)[0] == T0 // 60 + 1
    assert [retry_after(x) for x in (0.0, 0.01, 1.0, 1.2, 59.9)] == [1, 1, 1, 2, 60]


def test_run_creations_per_address_are_counted_and_refused_past_the_limit(runs_target):
    q = Quotas(runs_per_address=2, moves_per_token=0, moves_per_address=0, window=60)
    with opened(runs_target) as db:
        for _ in range(2):
            _charge(db, q, address="10.0.0.1", creating=True, now=T0 + 10)
        with pytest.raises(RateLimited, match="too many runs created from 10.0.0.1: 2 per 60 s") as e:
            _charge(db, q, address="10.0.0.1", creating=True, now=T0 + 10)
        assert e.value.retry_after == 50
        assert _count(db, "runs@10.0.0.1") == 2  # the refused one rolled back with its transaction
        _charge(db, q, address="10.0.0.2", creating=True, now=T0 + 10)  # another address: its own count
        _charge(db, q, address="10.0.0.1", creating=True, now=T0 + 60)  # the next window starts again
        assert _count(db, "runs@10.0.0.1") == 3


def test_moves_per_token_and_per_address_over_shards(runs_target):
    q = Quotas(runs_per_address=0, moves_per_token=3, moves_per_address=5, window=60)
    runs = [f"r{k:016x}" for k in range(6)]
    with opened(runs_target) as db:
        for _ in range(3):
            _charge(db, q, address="10.0.0.9", run=runs[0], now=T0)
        with pytest.raises(RateLimited, match=f"too many moves requests for run {runs[0]}"):
            _charge(db, q, address="10.0.0.9", run=runs[0], now=T0)
        # two more of other runs reach the address's 5 (spread over shards), the next is refused
        _charge(db, q, address="10.0.0.9", run=runs[1], now=T0)
        _charge(db, q, address="10.0.0.9", run=runs[2], now=T0)
        with pytest.raises(RateLimited, match="too many moves requests from 10.0.0.9: 5 per 60 s"):
            _charge(db, q, address="10.0.0.9", run=runs[3], now=T0)
        keys = [k for (k,) in db.read("SELECT key FROM quota") if k.startswith("moves@")]
        assert keys and all(k.startswith("moves@10.0.0.9#") and 0 <= int(k.rsplit("#", 1)[1]) < SHARDS for k in keys)
        # an address that only extends another's as text is not summed with it
        _charge(db, q, address="10.0.0.91", run=runs[4], now=T0)
        assert sum(_count(db, k) for k in keys) == 5


def test_no_quotas_count_nothing_and_sweep_forgets_old_windows(runs_target):
    q = Quotas(runs_per_address=5, moves_per_token=5, moves_per_address=5, window=60)
    assert NO_QUOTAS.off and not q.off
    with opened(runs_target) as db:
        _charge(db, NO_QUOTAS, address="10.0.0.1", run="r1", now=T0)
        assert db.read("SELECT count(*) FROM quota") == [(0,)]
        for t in (T0 - 120, T0 - 60, T0):
            _charge(db, q, address="10.0.0.1", creating=True, now=t)
        db.atomic(lambda tx: sweep(tx.rows, q, now=T0))
        assert sorted(w for (w,) in db.read("SELECT win FROM quota")) == [T0 // 60 - 1, T0 // 60]


@pytest.fixture(scope="module")
def day21(tmp_path_factory):
    return board21_day(tmp_path_factory, "quota21")


def _moves_for(truth, view) -> list[dict]:
    return [{"tile": view["tile"], "cells": truth.truth(view["tile"])}]


WINDOW = 8  # seconds: a quota window long enough that a few requests never straddle two on a slow machine


def at_a_window_start(room: float = 6.0) -> None:
    """Wait for the next window of WINDOW seconds when fewer than ``room`` seconds of this one remain."""
    left = WINDOW - time.time() % WINDOW
    if left < room:
        time.sleep(left + 0.05)


def test_a_quota_holds_across_two_processes_and_the_client_waits_it_out(day21, tmp_path, make_client, caplog):
    fx, d, manifest, truth = day21
    runs = tmp_path / "runs.sqlite"
    quota = ("--quota-moves", "2", "--quota-runs", "3", "--quota-window", str(WINDOW), "--access-log", "off")
    with (
        service_process(fx.lib_path, runs, [manifest], *quota, log=tmp_path / "a.log") as (_a, url_a),
        service_process(fx.lib_path, runs, [manifest], *quota, log=tmp_path / "b.log") as (_b, url_b),
    ):
        day = httpx.get(f"{url_a}/api/v1/days").json()[0]["day"]
        at_a_window_start()  # the test's requests then fall in one window, however slow the machine
        made = [httpx.post(f"{u}/api/v1/days/{day}/runs", json=None) for u in (url_a, url_b, url_a, url_b)]
        assert [r.status_code for r in made] == [201, 201, 201, 429]
        refused = made[3]
        assert refused.headers["Retry-After"].isdigit() and 1 <= int(refused.headers["Retry-After"]) <= WINDOW
        assert "too many runs created from 127.0.0.1" in refused.json()["error"]
        with opened(runs) as db:
            assert db.read("SELECT count(*) FROM runs") == [(3,)]  # the refused creation stored nothing

        run, token = made[0].json()["run"], made[0].json()["token"]
        auth = {"Authorization": f"Bearer {token}"}
        seed = httpx.get(f"{url_a}/api/v1/runs/{run}/frontier").json()["tiles"][0]
        view = httpx.get(f"{url_a}/api/v1/runs/{run}/tiles/{seed}").json()
        wrong = [{"tile": seed, "cells": "0" * len(view["puzzle"])}]
        at_a_window_start()
        sent = [
            httpx.post(f"{u}/api/v1/runs/{run}/moves", json={"moves": wrong}, headers=auth)
            for u in (url_b, url_a, url_b)
        ]
        assert [r.status_code for r in sent] == [200, 200, 429]
        assert 1 <= int(sent[2].headers["Retry-After"]) <= WINDOW
        with opened(runs) as db:
            assert db.read("SELECT nmoves FROM runs WHERE run = ?", (run,)) == [(2,)]

        # a client that may not wait gives up with the one line; one that may waits for the next window
        with make_client(url_a, max_wait=0) as c:
            c.use_run(run, token)
            with pytest.raises(RateLimited, match="429: too many moves requests for run"):
                c.moves(run, [(seed, wrong[0]["cells"])])
        with make_client(url_b, max_wait=2 * WINDOW) as c:
            c.use_run(run, token)
            at_a_window_start()
            for _ in range(2):
                c.moves(run, [(seed, wrong[0]["cells"])])
            with caplog.at_level(logging.WARNING, logger="players.client"):
                out = c.moves(run, [(seed, truth.truth(seed))])
            assert out.verdicts[0].correct and c.waited >= 1  # refused, waited (the client's count), let in
            said = [r.getMessage() for r in caplog.records if r.name == "players.client"]
            assert said and all(f"POST /runs/{run}/moves: over a fair-use quota (429: " in line for line in said)
            assert all("waiting" in line and "\n" not in line for line in said)  # one line per wait
        with opened(runs) as db:
            assert db.read("SELECT nmoves FROM runs WHERE run = ?", (run,)) == [(5,)]


def test_the_mcp_door_counts_the_callers_address(day21, tmp_path):
    """Runs started through the MCP tools count against the caller's address like the HTTP API's: the
    third of a limit of two is a one-line tool error naming the address, and no run is stored for it."""
    import asyncio

    from mcp import Client as McpClient

    fx, _d, manifest, _truth = day21
    runs = tmp_path / "runs.sqlite"
    with service_process(
        fx.lib_path,
        runs,
        [manifest],
        "--quota-runs",
        "2",
        "--quota-window",
        "600",
        "--access-log",
        "off",
        log=tmp_path / "serve.log",
    ) as (_p, url):
        day = httpx.get(f"{url}/api/v1/days").json()[0]["day"]

        async def three():
            async with McpClient(f"{url}/mcp") as c:
                return [await c.call_tool("start_run", {"day": day}) for _ in range(3)]

        if 600 - time.time() % 600 < 30:  # not across a window's edge
            time.sleep(600 - time.time() % 600 + 0.1)
        answers = asyncio.run(three())
        assert [a.is_error for a in answers] == [False, False, True]
        text = answers[2].content[0].text
        assert "too many runs created from 127.0.0.1: 2 per 600 s" in text and "\n" not in text
        with opened(runs) as db:
            assert db.read("SELECT count(*) FROM runs") == [(2,)]


def test_the_commands_quota_defaults_are_the_services():
    """``tiles referee serve`` spells its defaults out (its module may not import ``referee``: start-up),
    so they are held here against ``Quotas`` and ``ServeOptions``."""
    import inspect

    from referee.service.worker import ServeOptions
    from tiles_cli.referee_play import serve_command

    params = inspect.signature(serve_command).parameters
    got = {k: params[k].default.default for k in ("quota_runs", "quota_moves", "quota_address_moves", "quota_window")}
    want = Quotas()
    assert got == {
        "quota_runs": want.runs_per_address,
        "quota_moves": want.moves_per_token,
        "quota_address_moves": want.moves_per_address,
        "quota_window": want.window,
    }
    opts = ServeOptions(library="x", runs="y")
    assert opts.quotas() == want
