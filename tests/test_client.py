"""`players.client.Client` and `AsyncClient` (each test runs on both: the ``make_client`` fixture)
against a real `tiles referee serve` on 127.0.0.1: every endpoint through its typed method, the
answers equal to the raw JSON the service sends, and its errors as the project's exception types. The board is the
shared G=21 fixture on its own day (over, so solutions and the
manifest are served)."""

from __future__ import annotations

import httpx
import pytest
from serve_support import board21_day, serving

from referee import wire as m
from tilelib.errors import BadInput, Forbidden, NotFound, Unauthorized, exit_code

DAY = "2026-11-29"


@pytest.fixture(scope="module")
def served(tmp_path_factory, module_runs_target):
    """The service over each backend in turn."""
    fx, d, manifest, truth = board21_day(tmp_path_factory, "client")
    with serving(fx.lib_path, module_runs_target, [manifest], log=d / "serve.log") as base:
        yield base, truth, fx.manifest


def raw(base: str, path: str, **params):
    return httpx.get(f"{base}/api/v1{path}", params=params).json()


def test_every_endpoint_through_its_typed_method(served, make_client):
    base, truth, manifest = served
    with make_client(base + "/api/v1/") as c:  # the root or the API prefix both work
        days = c.days()
        assert [d.day for d in days] == [DAY] and days[0].over and isinstance(days[0], m.DaySummary)
        board = c.board(DAY)
        assert board.model_dump() == raw(base, f"/days/{DAY}") and board.board == manifest.digest()
        assert board.zones == [m.Zone(id=i, rects=[list(r) for r in z]) for i, z in enumerate(manifest.packing.zones)]
        assert c.cells(DAY).model_dump() == raw(base, f"/days/{DAY}/cells")
        assert c.day_tile(DAY, 3).model_dump() == raw(base, f"/days/{DAY}/tiles/3")
        assert c.solution(DAY, 0).cells == truth.truth(0)
        assert c.manifest(DAY).seed_commit == manifest.seed_commit

        run = c.create_run(DAY, player="typed")
        assert run.token and c.tokens[run.run] == run.token and run.reward == 0
        assert c.frontier(run.run).tiles == [board.seed_tile]
        view = c.run_tile(run.run, board.seed_tile)
        assert view.playable and not view.solved and len(view.puzzle) == view.n**2
        result = c.moves(run.run, [(0, truth.truth(0)), (1, truth.truth(1))])
        assert [v.reward for v in result.verdicts] == [256, 36] and result.score.reward == 292
        assert c.score(run.run) == result.score
        assert [h.tile for h in c.history(run.run).moves] == [0, 1]
        assert [h.tile for h in c.history(run.run, after=c.history(run.run).moves[0].id).moves] == [1]
        assert c.run_analysis(run.run).batches[0].reward == 292
        board = c.leaderboard(DAY).runs  # the other client's run of this test may tie it, older
        assert board[0].reward == 292 and any(r.run == run.run and r.reward == 292 for r in board[:2])
        day = c.day_analysis(DAY, bucket=30)
        assert day.bucket == 30 and day.runs[0].reward == 292
        assert c.requests >= 16


def test_client_errors_are_the_projects_types(served, make_client):
    base, _, _ = served
    with make_client(base) as c:
        with pytest.raises(NotFound, match="404: day '2026-01-01' is not on offer"):
            c.board("2026-01-01")
        with pytest.raises(NotFound, match="unknown tile id 99"):
            c.day_tile(DAY, 99)
        with pytest.raises(NotFound, match="no run"):
            c.score("rnope")
        with pytest.raises(BadInput, match="400"):
            c.history("rnope", limit=0)
    with pytest.raises(BadInput, match="http:// or https://"):
        make_client("localhost:8000")


def test_a_missing_token_is_unauthorized_and_a_wrong_one_forbidden(served, make_client):
    """The service's 401 (no usable token) and 403 (a wrong one) come back as two types, each with the
    service's line; both are bad input to `tiles play` (exit 2)."""
    base, truth, _ = served
    made = httpx.post(f"{base}/api/v1/days/{DAY}/runs", json={}).json()  # made elsewhere: no token kept
    with make_client(base) as c:
        with pytest.raises(Unauthorized, match=r"^401: this write needs the run's token") as missing:
            c.moves(made["run"], [(0, truth.truth(0))])
        assert not isinstance(missing.value, Forbidden)
        c.use_run(made["run"], "not-the-token")
        with pytest.raises(Forbidden, match=r"^403: wrong token") as wrong:
            c.moves(made["run"], [(0, truth.truth(0))])
        assert not isinstance(wrong.value, Unauthorized)
        assert exit_code(missing.value) == exit_code(wrong.value) == 2
        c.use_run(made["run"], made["token"])
        assert c.moves(made["run"], [(0, truth.truth(0))]).score.solved == 1


def test_a_name_of_any_script_is_fine_but_not_an_invisible_trick(served, make_client):
    base, _, _ = served
    with make_client(base) as c:
        for name in ("عليّ", "😀 bot", "Zoë-Ann", "名前"):
            assert c.create_run(DAY, player=name).player == name
        for name in ("a\u202eb", "bell\x07", "zero\u200bwidth", "x" * 41):
            with pytest.raises(BadInput, match="400"):
                c.create_run(DAY, player=name)


def test_clients_share_one_default_tls_context(make_client):
    """Making a client costs no TLS set-up after the first (an SSL context was ~27 ms a client, even
    for http://; scripts/bench_client.py times it); a context passed in is used as it is."""
    import ssl

    from players import client as client_mod

    a, b = make_client("http://127.0.0.1:9"), make_client("https://127.0.0.1:9")
    own = ssl.create_default_context()
    c = make_client("https://127.0.0.1:9", verify=own)
    try:
        shared = client_mod._default_tls()
        assert isinstance(shared, ssl.SSLContext) and shared is client_mod._default_tls()
        pools = [x.http._transport._pool._ssl_context for x in (a, b, c)]
        assert pools[0] is shared and pools[1] is shared and pools[2] is own
    finally:
        for x in (a, b, c):
            x.close()
