"""No move scored twice: the clients' retries (``Client`` and ``AsyncClient``, each test on both)
and the service's Idempotency-Key, under real faults.

A real `tiles referee serve` on 127.0.0.1, reached through a TCP proxy (``flaky_proxy``) that drops
the connection of a moves request after the service has committed it and answered (the reply never
reaches the client), or answers 503 itself. The client retries with the same key; the runs file must
hold the batch once, and the answer the client gets is the first one.
"""

from __future__ import annotations

import httpx
import pytest
from flaky_proxy import FlakyProxy
from pg_support import query_runs
from serve_support import board21_day, serving

from tilelib.errors import Conflict, Unreachable

DAY = "2026-11-29"


@pytest.fixture(scope="module")
def service(tmp_path_factory, module_runs_target):
    """The service over each backend in turn."""
    fx, d, manifest, truth = board21_day(tmp_path_factory, "retry")
    with serving(fx.lib_path, module_runs_target, [manifest], log=d / "serve.log") as base:
        yield base, module_runs_target, truth


def stored(runs, run) -> tuple[int, int, int]:
    ((moves, reward),) = query_runs(runs, "SELECT count(*), coalesce(sum(reward), 0) FROM moves WHERE run = ?", (run,))
    ((batches,),) = query_runs(runs, "SELECT count(*) FROM batches WHERE run = ?", (run,))
    return moves, reward, batches


def test_a_reply_lost_after_the_commit_is_retried_and_scored_once(service, make_client):
    base, runs, truth = service
    port = int(base.rsplit(":", 1)[1])
    with FlakyProxy(port) as proxy, make_client(f"http://127.0.0.1:{proxy.port}", backoff=0.01) as c:
        run = c.create_run(DAY).run
        proxy.drop_after_reply = 1
        sent = c.requests
        result = c.moves(run, [(0, truth.truth(0))])
        assert c.requests - sent == 2 and proxy.moves_seen == 2  # the lost reply, then the retry
        assert result.verdicts[0].correct and result.verdicts[0].reward == 256 and result.score.reward == 256
        assert stored(runs, run) == (1, 256, 1)  # judged and stored once
        assert c.score(run).reward == 256

        proxy.unavailable = 2  # two 503s from the proxy, then through
        result = c.moves(run, [(1, truth.truth(1))])
        assert result.score.reward == 256 + 36 and stored(runs, run) == (2, 292, 2)


def test_the_same_key_answers_the_first_answer_and_another_body_is_a_409(service, make_client):
    base, runs, truth = service
    with make_client(base) as c:
        run = c.create_run(DAY).run
        first = c.moves(run, [(0, truth.truth(0))], key="k-1")
        again = c.moves(run, [(0, truth.truth(0))], key="k-1")
        assert again == first and stored(runs, run) == (1, 256, 1)
        with pytest.raises(Conflict, match="other moves"):
            c.moves(run, [(1, truth.truth(1))], key="k-1")
        assert stored(runs, run) == (1, 256, 1)
        other = c.moves(run, [(0, truth.truth(0))], key="k-2")  # a new key is a new batch: a replay now
        assert not other.verdicts[0].accepted and stored(runs, run) == (2, 256, 2)
        auth = {"Authorization": f"Bearer {c.tokens[run]}"}
        for bad in ("", '""', "x" * 256, "caf\u00e9"):
            r = httpx.post(
                f"{base}/api/v1/runs/{run}/moves",
                json={"moves": []},
                headers={**auth, "Idempotency-Key": bad.encode("utf-8")},
            )
            assert r.status_code == 400 and "Idempotency-Key" in r.json()["error"], (bad, r.text)


def test_a_service_that_keeps_failing_gives_up_with_unreachable(service, make_client):
    base, runs, truth = service
    port = int(base.rsplit(":", 1)[1])
    with FlakyProxy(port) as proxy, make_client(f"http://127.0.0.1:{proxy.port}", retries=2, backoff=0.01) as c:
        run = c.create_run(DAY).run
        proxy.unavailable = 10
        with pytest.raises(Unreachable, match="503"):
            c.moves(run, [(0, truth.truth(0))])
        assert c.requests == 1 + 3 and stored(runs, run) == (0, 0, 0)
