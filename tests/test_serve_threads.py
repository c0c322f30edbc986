"""Over PostgreSQL one worker runs its database work on threads of its own (``RunStore.call``). Many
requests on one run at once, through that one worker, still judge every batch once: the same
correct move sent by 24 players at the same moment scores exactly once, every batch is stored
with the verdict its sender got, and the cached state never runs ahead of the database."""

from __future__ import annotations

import threading

import httpx
import pytest

from pg_support import query_runs
from serve_support import board21_day, service_process

SENDERS = 24


@pytest.fixture(scope="module")
def day21(tmp_path_factory):
    return board21_day(tmp_path_factory, "threads21")


def test_concurrent_batches_on_one_run_score_once(day21, pg_url, tmp_path):
    fx, _d, manifest, truth = day21
    with service_process(fx.lib_path, pg_url, [manifest], "--access-log", "off", "--quota-moves", "0",
                         log=tmp_path / "serve.log") as (_p, url):
        day = httpx.get(f"{url}/api/v1/days").json()[0]["day"]
        made = httpx.post(f"{url}/api/v1/days/{day}/runs").json()
        run, auth = made["run"], {"Authorization": f"Bearer {made['token']}"}
        seed = httpx.get(f"{url}/api/v1/runs/{run}/frontier").json()["tiles"][0]
        go, answers = threading.Barrier(SENDERS), [None] * SENDERS

        def send(k: int) -> None:
            with httpx.Client(timeout=60) as c:
                go.wait()
                answers[k] = c.post(f"{url}/api/v1/runs/{run}/moves", headers=auth,
                                    json={"moves": [{"tile": seed, "cells": truth.truth(seed)}]})

        threads = [threading.Thread(target=send, args=(k,)) for k in range(SENDERS)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert [a.status_code for a in answers] == [200] * SENDERS
        verdicts = [a.json()["verdicts"][0] for a in answers]
        assert sum(v["correct"] for v in verdicts) == 1
        stored = query_runs(pg_url, "SELECT correct, reward FROM moves WHERE run = ? ORDER BY id", (run,))
        assert len(stored) == SENDERS and sum(c for c, _r in stored) == 1
        assert sorted((int(v["correct"]), v["reward"]) for v in verdicts) == sorted(stored)
        score = httpx.get(f"{url}/api/v1/runs/{run}").json()
        n = len(truth.truth(seed)) ** 0.5
        assert (score["moves"], score["solved"], score["reward"]) == (SENDERS, 1, int(n) ** 2)
