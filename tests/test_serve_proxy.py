"""Two hosts, one database, behind a real reverse proxy with TLS (docs/DEPLOY.md): Debian's nginx runs
``deploy/nginx.conf`` as shipped (its placeholders filled in) on 127.0.0.1 with a self-signed
certificate, in front of two ``tiles referee serve`` processes on two ports — as two machines would
run them — over one PostgreSQL database.

Through https (the client trusting the test's certificate, nothing else): a run started on one host
answers on the other; three solver agents play through the proxy while one host is killed
(``kill -9``) mid-run, and each finishes with the full reward; afterwards every run's stored moves,
judged again one by one by the judging core, give the stored scores (0 lost, 0 scored twice). The
proxy's refusals (plain http, an unknown certificate, a body over ``--max-body``) and its
X-Forwarded-For (the client's address counts for quotas, not one the client names) are checked too.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import ssl
import time

import httpx
import pytest
from pg_support import query_runs
from serve_support import NGINX_SITE, judged_day, nginx_proxy, replayed, self_signed, service_process, start_players

from players.client import Client
from players.sessions import HttpSession
from referee.service.app import PROXY_HOST
from referee.service.runs import read_scores
from referee.service.worker import ServeOptions
from tilelib.errors import Unreachable

DAY = "2026-12-02"
PLAYERS = 3

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def day121(tmp_path_factory):
    """A real G=121 day: (library, manifest path, the truth as a Judge, the day's full reward)."""
    return judged_day(tmp_path_factory, "proxy121", DAY, bytes.fromhex("3c" * 32), 121)


@pytest.fixture(scope="module")
def tls(tmp_path_factory):
    """(cert, key, a client SSL context trusting only that certificate)."""
    cert, key = self_signed(tmp_path_factory.mktemp("tls"))
    return cert, key, ssl.create_default_context(cafile=str(cert))


@contextlib.contextmanager
def two_hosts_behind_nginx(day121, tls, url, folder, *extra):
    """Two serve processes over ``url`` and nginx in front: ((proc1, base1), (proc2, base2), proxy)."""
    lib, manifest, _truth, _full = day121
    cert, key, _ctx = tls
    with (
        service_process(lib, url, [manifest], *extra, log=folder / "host1.log") as (p1, b1),
        service_process(lib, url, [manifest], *extra, log=folder / "host2.log") as (p2, b2),
    ):
        proxy_dir = folder / "nginx"
        proxy_dir.mkdir()
        with nginx_proxy(proxy_dir, [b1.removeprefix("http://"), b2.removeprefix("http://")], cert, key) as proxy:
            yield (p1, b1), (p2, b2), proxy


def session(client, k):
    """Player ``k``'s new run through ``client``, one move per request (a longer run to kill a host in)."""
    return HttpSession(client, DAY, player=f"proxied{k}", max_moves=1)


def moves_of(url, run) -> int:
    return query_runs(url, "SELECT nmoves FROM runs WHERE run = ?", (run,))[0][0]


def test_the_shipped_config_matches_the_service():
    """The proxy's body limit is serve's --max-body default; the headers the hosts believe are set."""
    text = NGINX_SITE.read_text()
    assert f"client_max_body_size {ServeOptions.max_body // 1024}k;" in text
    for line in (
        "proxy_set_header X-Forwarded-For $remote_addr;",
        "proxy_set_header X-Forwarded-Proto $scheme;",
        f"proxy_set_header Host {PROXY_HOST};",
        "proxy_next_upstream error timeout;",
        "keepalive 32;",
        "listen ${TILES_LISTEN} ssl;",
    ):
        assert line in text, line


def test_two_hosts_behind_tls_serve_one_run_and_one_host_killed_loses_nothing(day121, tls, pg_cluster, tmp_path):
    _lib, _manifest, truth, full = day121
    ctx = tls[2]
    url = pg_cluster.new_database("proxy")
    with two_hosts_behind_nginx(day121, tls, url, tmp_path) as ((p1, b1), (_p2, b2), proxy):
        port = proxy.rsplit(":", 1)[1]
        # refusals at the proxy: plain http on the TLS port, a client that does not trust the certificate
        plain = httpx.get(f"http://127.0.0.1:{port}/api/v1/days")
        assert plain.status_code == 400 and "HTTPS" in plain.text
        with pytest.raises(Unreachable, match="CERTIFICATE_VERIFY_FAILED"):
            Client(proxy, retries=0).days()

        with Client(proxy, verify=ctx) as c, Client(b1) as h1, Client(b2) as h2:
            assert [d.day for d in c.days()] == [DAY]
            # a run started through the proxy answers on both hosts directly
            run = c.create_run(DAY, player="via-proxy")
            seed = truth.board.seed_tile
            assert c.moves(run.run, [(seed, truth.truth(seed))]).verdicts[0].correct
            n2 = (truth.board.squares[seed][2] + 1) ** 2
            assert h1.score(run.run).reward == h2.score(run.run).reward == n2
            # a run started on host 1 is played on host 2 and read back through the proxy
            r1 = h1.create_run(DAY, player="host1")
            h2.use_run(r1.run, r1.token)
            assert h2.moves(r1.run, [(seed, truth.truth(seed))]).verdicts[0].correct
            assert h1.history(r1.run).moves[0].tile == seed and c.score(r1.run).reward == n2
            # a redirect the hosts make is relative (never built from the client's Host), so a client
            # resolves it against the address it used: through the proxy it stays on https://
            redirect = httpx.get(f"{proxy}/api/v1/days/", verify=ctx)
            assert redirect.status_code == 307 and redirect.headers["location"] == "/api/v1/days"
            followed = httpx.get(f"{proxy}/api/v1/days/", verify=ctx, follow_redirects=True)
            assert followed.status_code == 200 and str(followed.url) == f"{proxy}/api/v1/days"
            direct = httpx.get(f"{b1}/api/v1/days/", headers={"Host": "evil.example"})
            assert direct.status_code == 307 and direct.headers["location"] == "/api/v1/days"
            # MCP through the proxy: the hosts listen on loopback and take the proxy's fixed Host
            init = {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "initialize",
                "params": {
                    "protocolVersion": "2025-06-18",
                    "capabilities": {},
                    "clientInfo": {"name": "proxy-test", "version": "1"},
                },
            }
            mcp_headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
            r = httpx.post(f"{proxy}/mcp", json=init, headers=mcp_headers, verify=ctx)
            assert r.status_code == 200 and r.json()["result"]["serverInfo"], r.text
            # ... and refuse another Host sent to them directly (DNS rebinding)
            r = httpx.post(f"{b1}/mcp", json=init, headers={**mcp_headers, "Host": "evil.example"})
            assert r.status_code in (403, 421), r.text
            # health through the proxy; metrics only on each host's own address
            assert httpx.get(f"{proxy}/readyz", verify=ctx).json()["status"] == "ready"
            assert httpx.get(f"{proxy}/metrics", verify=ctx).status_code == 403
            assert "tiles_http_requests_total" in httpx.get(f"{b2}/metrics").text
            # a body over --max-body stops at the proxy (413), and nothing is stored
            big = json.dumps({"moves": [{"tile": seed, "cells": "0" * (70 * 1024)}]})
            r = httpx.post(
                f"{proxy}/api/v1/runs/{run.run}/moves",
                content=big,
                verify=ctx,
                headers={"Content-Type": "application/json", "Authorization": f"Bearer {run.token}"},
            )
            assert r.status_code == 413 and c.score(run.run).moves == 1

        # three players through the proxy; host 1 dies mid-run
        clients = [Client(proxy, verify=ctx, retries=10, backoff=0.2) for _ in range(PLAYERS)]
        sessions = [session(c, k) for k, c in enumerate(clients)]
        threads, results, errors = start_players(sessions, "player")
        tiles = len(truth.board.squares)
        deadline = time.monotonic() + 120
        while min(moves_of(url, s.run) for s in sessions) < 20 and time.monotonic() < deadline:
            time.sleep(0.05)
        os.kill(p1.pid, signal.SIGKILL)
        at_kill = [moves_of(url, s.run) for s in sessions]
        assert all(20 <= n < tiles for n in at_kill), at_kill  # every player was mid-run
        for t in threads:
            t.join(timeout=600)
        for c in clients:
            c.close()
        assert p1.wait(timeout=10) == -signal.SIGKILL
        assert not errors, errors
        for k, res in enumerate(results):
            assert res is not None and res.cleared and res.reward == full, (k, res)
        assert (
            "127.0.0.1:" + b1.rsplit(":", 1)[1] in (tmp_path / "nginx" / "error.log").read_text()
        )  # nginx met the dead host
        with Client(proxy, verify=ctx) as c:  # and goes on serving from the other
            board = {row.run: row for row in c.leaderboard(DAY).runs}

    scores = {row["run"]: row for row in read_scores(url)}
    assert len(scores) == PLAYERS + 2
    for run, row in scores.items():
        reward, moves, scored = replayed(truth, url, run)
        assert reward == row["reward"] == board[run].reward and moves == row["moves"], run
        assert len(scored) == len(set(scored)) == row["solved"], run  # no tile scored twice
        assert query_runs(url, "SELECT nmoves FROM runs WHERE run = ?", (run,)) == [(moves,)]
    for s in sessions:
        assert scores[s.run]["reward"] == full and scores[s.run]["solved"] == tiles


def test_quotas_count_the_address_the_proxy_saw_not_one_the_client_names(day121, tls, pg_cluster, tmp_path):
    """Each host trusts X-Forwarded-For from the proxy's address only (--trust-proxy 127.0.0.1); nginx
    replaces what a client sent with the address it came from. A client on 127.0.0.2 gets two runs per
    window however it names itself; a trusted sender's X-Forwarded-For is believed; an untrusted
    sender's is not."""
    ctx = tls[2]
    url = pg_cluster.new_database("proxyquota")
    args = ("--quota-runs", "2", "--quota-window", "3600", "--trust-proxy", "127.0.0.1")
    with two_hosts_behind_nginx(day121, tls, url, tmp_path, *args) as ((_p1, b1), (_p2, b2), proxy):

        def create(base, source, claimed, **kw):
            with httpx.Client(transport=httpx.HTTPTransport(local_address=source, **kw)) as h:
                return h.post(f"{base}/api/v1/days/{DAY}/runs", json={}, headers={"X-Forwarded-For": claimed})

        got = [create(proxy, "127.0.0.2", f"203.0.113.{k}", verify=ctx).status_code for k in range(3)]
        refused = create(proxy, "127.0.0.2", "203.0.113.9", verify=ctx)
        assert got == [201, 201, 429] and refused.status_code == 429 and int(refused.headers["retry-after"]) > 0
        assert [create(b1, "127.0.0.1", "198.51.100.7").status_code for _ in range(3)] == [201, 201, 429]
        assert create(b2, "127.0.0.2", "198.51.100.8").status_code == 429  # not trusted: its own address
    logs = (tmp_path / "host1.log").read_text() + (tmp_path / "host2.log").read_text()
    assert "127.0.0.2" in logs and "198.51.100.7" in logs and "203.0.113." not in logs  # the access log agrees
    used = {k: n for k, n in query_runs(url, "SELECT key, used FROM quota") if k.startswith("runs@")}
    assert used == {"runs@127.0.0.2": 2, "runs@198.51.100.7": 2}
    assert query_runs(url, "SELECT count(*) FROM runs") == [(4,)]
