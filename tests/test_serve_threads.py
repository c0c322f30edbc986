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
    with service_process(
        fx.lib_path, pg_url, [manifest], "--access-log", "off", "--quota-moves", "0", log=tmp_path / "serve.log"
    ) as (_p, url):
        day = httpx.get(f"{url}/api/v1/days").json()[0]["day"]
        made = httpx.post(f"{url}/api/v1/days/{day}/runs").json()
        run, auth = made["run"], {"Authorization": f"Bearer {made['token']}"}
        seed = httpx.get(f"{url}/api/v1/runs/{run}/frontier").json()["tiles"][0]
        go, answers = threading.Barrier(SENDERS), [None] * SENDERS

        def send(k: int) -> None:
            with httpx.Client(timeout=60) as c:
                go.wait()
                answers[k] = c.post(
                    f"{url}/api/v1/runs/{run}/moves",
                    headers=auth,
                    json={"moves": [{"tile": seed, "cells": truth.truth(seed)}]},
                )

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


def test_a_batch_counts_only_its_runs_moves_when_ids_interleave(day21, runs_target):
    """Concurrent transactions take move ids as they insert (PostgreSQL's sequence), so another run's
    moves can lie inside a batch's id range: the analyzer counts the batch's own moves, not the range."""
    from referee.service.boards import DayBoard, load_manifest
    from referee.service.runs import RunStore
    from tilelib.store import Library

    fx, _d, manifest, _truth = day21
    m = load_manifest(manifest)
    with Library.open(fx.lib_path) as lib:
        store = RunStore(runs_target, {m.day: DayBoard.load(m, lib, runs_target)})
    try:
        (a, _), (b, _) = store.create(m.day), store.create(m.day)
        sql = (
            "INSERT INTO moves (run, tile, cells, accepted, correct, reward, reason, at) "
            "VALUES (?, 0, '0', 0, 0, 0, 'bad', 0) RETURNING id"
        )

        def interleave(tx):
            ids = [tx.one(sql, (r,))[0] for r in (a.run, b.run, b.run, a.run)]
            tx.rows(
                "INSERT INTO batches (run, first_move, last_move, at) VALUES (?,?,?,?)", (a.run, ids[0], ids[3], 1.0)
            )
            tx.rows("UPDATE runs SET nmoves = 2 WHERE run = ?", (a.run,))
            return ids

        ids = store.db.atomic(interleave)
        assert ids[3] - ids[0] + 1 == 4
        (batch,) = store.run_analysis(a.run)["batches"]
        assert batch["moves"] == 2 and batch["solved"] == 0
    finally:
        store.close()
