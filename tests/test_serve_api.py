"""`tiles referee serve` over real HTTP: a uvicorn server on 127.0.0.1 (a subprocess on a free port)
driven by an HTTP client. The board is the shared G=21 fixture (tile 0, n=16, is the seed tile; tiles
1-6 share a seam with it; tile 7 only with 3 and 6), offered twice: as its own day 2026-11-29 (over)
and as a copy dated 2099-01-01 (not over: solutions and the manifest stay secret).
"""

from __future__ import annotations

from dataclasses import replace

import httpx
import pytest
from pg_support import query_runs
from referee_support import board21
from serve_support import serving

from referee.board import build_board
from referee.judge import OFF_FRONTIER, Judge
from tilelib.store import Library

DAY, FUTURE = "2026-11-29", "2099-01-01"


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    fx = board21(tmp_path_factory)
    d = tmp_path_factory.mktemp("serve")
    (d / "past.json").write_text(fx.manifest.to_json())
    (d / "future.json").write_text(replace(fx.manifest, day=FUTURE).to_json())
    with Library.open(fx.lib_path) as lib:
        board = build_board(fx.manifest, lib)
    truth = Judge(fx.manifest, board, d / "unused.sqlite")
    return fx, d, truth


@pytest.fixture(scope="module")
def server(files, module_runs_target):
    """The service over a SQLite runs file and over PostgreSQL in turn: every test of the API runs on both."""
    fx, d, _ = files
    with serving(
        fx.lib_path,
        module_runs_target,
        [d / "past.json", d / "future.json"],
        "--max-body",
        "20000",
        "--max-moves",
        "8",
        log=d / f"serve-{id(module_runs_target)}.log",
    ) as base:
        with httpx.Client(base_url=base + "/api/v1", timeout=30) as client:
            yield client


def new_run(c, day=DAY, **body):
    r = c.post(f"/days/{day}/runs", json=body or None)
    assert r.status_code == 201, r.text
    j = r.json()
    return j["run"], {"Authorization": f"Bearer {j['token']}"}


def play(c, run, auth, *moves):
    r = c.post(f"/runs/{run}/moves", json={"moves": [{"tile": t, "cells": s} for t, s in moves]}, headers=auth)
    assert r.status_code == 200, r.text
    return r.json()


def flip(s, i=5):
    return s[:i] + ("1" if s[i] == "0" else "0") + s[i + 1 :]


def error(r, status):
    assert r.status_code == status, (r.status_code, r.text)
    body = r.json()
    assert list(body) == ["error"] and body["error"] and "\n" not in body["error"]
    return body["error"]


def test_days_and_public_board_show_geometry_but_no_solution(server, files):
    fx, _, truth = files
    days = server.get("/days").json()
    assert [(d["day"], d["over"]) for d in days] == [(DAY, True), (FUTURE, False)]
    b = server.get(f"/days/{FUTURE}")
    assert b.status_code == 200
    board = b.json()
    assert board["seed_tile"] == 0 and board["G"] == 21 and len(board["tiles"]) == 8
    assert board["tiles"][7] == {"id": 7, "x0": 15, "y0": 15, "n": 6, "colour": board["tiles"][7]["colour"]}
    text = b.text + server.get(f"/days/{FUTURE}/cells").text
    assert not any(h in text for h in fx.manifest.hashes)
    assert not any(truth.truth(i) in text for i in range(8))


def test_solutions_and_manifest_wait_until_the_day_is_over(server, files):
    fx, _, truth = files
    assert "secret until the day is over" in error(server.get(f"/days/{FUTURE}/manifest"), 403)
    error(server.get(f"/days/{FUTURE}/tiles/3/solution"), 403)
    assert server.get(f"/days/{DAY}/manifest").text == fx.manifest.to_json()
    assert server.get(f"/days/{DAY}/tiles/3/solution").json()["cells"] == truth.truth(3)


def test_a_run_plays_seed_then_neighbours_with_the_judges_verdicts(server, files):
    _, _, truth = files
    run, auth = new_run(server, FUTURE, player="ann")
    assert server.get(f"/runs/{run}/frontier").json()["tiles"] == [0]
    # a tile off the frontier is a 409 (issue 13): the batch is refused whole and nothing is stored
    msg = error(
        server.post(f"/runs/{run}/moves", json={"moves": [{"tile": 7, "cells": truth.truth(7)}]}, headers=auth), 409
    )
    assert "tile 7" in msg and "shares no seam" in msg and "not recorded" in msg
    assert server.get(f"/runs/{run}/history").json()["moves"] == []
    out = play(
        server, run, auth, (0, flip(truth.truth(0))), (0, truth.truth(0)), (0, truth.truth(0)), (1, truth.truth(1))
    )
    assert [(v["tile"], v["accepted"], v["correct"], v["reward"]) for v in out["verdicts"]] == [
        (0, True, False, 0),
        (0, True, True, 256),
        (0, False, False, 0),
        (1, True, True, 36),
    ]
    assert "replay" in out["verdicts"][2]["reason"]
    assert out["score"] == {
        "run": run,
        "day": FUTURE,
        "player": "ann",
        "solved": 2,
        "reward": 292,
        "moves": 4,
        "frontier": 5,
    }
    assert server.get(f"/runs/{run}/frontier").json() == {"run": run, "tiles": [2, 3, 4, 5, 6], "solved": [0, 1]}
    hist = server.get(f"/runs/{run}/history").json()["moves"]
    assert [(m["tile"], m["correct"]) for m in hist] == [(0, False), (0, True), (0, False), (1, True)]
    assert server.get(f"/runs/{run}/history", params={"after": hist[1]["id"]}).json()["moves"] == hist[2:]


def test_service_and_cli_judge_agree_move_for_move(server, files, tmp_path):
    """The same verdicts on every batch the service accepts; the service refuses (409) exactly the
    batches in which the CLI judge would record a move off the frontier."""
    _, _, truth = files
    moves = [
        (3, truth.truth(3)),
        (0, truth.truth(0)),
        (7, truth.truth(7)),
        (3, flip(truth.truth(3), 0)),
        (3, truth.truth(3)),
        (7, truth.truth(7)),
        (99, "0"),
        (2, "01"),
    ]
    cli = Judge(truth.manifest, truth.board, tmp_path / "cli.sqlite")
    as_cli = cli.judge({"run": "probe", "moves": [{"tile": t, "cells": s} for t, s in moves]})
    off = [i for i, v in enumerate(as_cli) if OFF_FRONTIER in (v["reason"] or "")]
    assert off  # the list does hold moves off the frontier
    run, auth = new_run(server)
    error(
        server.post(f"/runs/{run}/moves", json={"moves": [{"tile": t, "cells": s} for t, s in moves]}, headers=auth),
        409,
    )
    kept = [m for i, m in enumerate(moves) if i not in off]
    via_http = play(server, run, auth, *kept)["verdicts"]
    via_cli = cli.judge({"run": "x", "moves": [{"tile": t, "cells": s} for t, s in kept]})
    assert via_http == via_cli


def test_a_tiles_puzzle_shows_givens_and_solved_neighbours_cells_never_the_rest(server, files):
    _, _, truth = files
    run, auth = new_run(server)
    before = server.get(f"/runs/{run}/tiles/1").json()
    assert before["playable"] is False and set(before["known"]) == {"0"}
    play(server, run, auth, (0, truth.truth(0)))
    p = server.get(f"/runs/{run}/tiles/1").json()
    n, sol = p["n"], truth.truth(1)
    assert (p["x0"], p["y0"], n, p["playable"], p["solved"]) == (15, 0, 6, True, False)
    # tile 1's left column is tile 0's right column: known from the solved seed tile
    known = {i for i, k in enumerate(p["known"]) if k == "1"} | {
        i for i, g in enumerate(p["givens"]) if g == "1" if i % n == 0
    }
    assert {i for i in range(n * n) if i % n == 0} <= known
    for i, ch in enumerate(p["puzzle"]):
        shown = p["givens"][i] == "1" or p["known"][i] == "1"
        assert ch == (sol[i] if shown else ".")
    assert "." in p["puzzle"] and p["puzzle"] != sol


# RFC 6750: no usable credentials is a 401 with a Bearer challenge (an error code only when the
# token is malformed); a well-formed token that is not the run's is a 403 (invalid_token).
AUTH_CASES = {
    "no header": (None, 401, None),
    "another scheme": ("Basic dXNlcjpwdw==", 401, None),
    "an empty header": ("", 401, None),
    "Bearer and no token": ("Bearer", 401, "invalid_request"),
    "only padding": ("Bearer ==", 401, "invalid_request"),
    "a token with a space": ("Bearer two words", 401, "invalid_request"),
    "a token off b64token": ("Bearer tok\u00e9n", 401, "invalid_request"),
    "a wrong token": ("Bearer nope", 403, "invalid_token"),
    "another run's token": ("other", 403, "invalid_token"),
}


@pytest.mark.parametrize("case", list(AUTH_CASES))
def test_writes_need_the_runs_own_token(server, files, case):
    _, _, truth = files
    run, auth = new_run(server)
    _, other_auth = new_run(server)
    header, status, code = AUTH_CASES[case]
    header = other_auth["Authorization"] if header == "other" else header
    headers = {} if header is None else {"Authorization": header.encode("utf-8")}
    r = server.post(f"/runs/{run}/moves", json={"moves": [{"tile": 0, "cells": truth.truth(0)}]}, headers=headers)
    line = error(r, status)
    assert r.headers["WWW-Authenticate"] == 'Bearer realm="tiles"' + (f', error="{code}"' if code else ""), r.headers
    assert ("wrong token" in line) == (status == 403), line
    assert server.get(f"/runs/{run}").json()["moves"] == 0


def test_the_token_is_checked_after_the_run_is_found_and_only_on_the_write(server, files):
    """An unknown run is a 404 with or without a token; reads need none; a secret asked for too early
    is a 403 without a challenge (no token would help)."""
    _, _, truth = files
    body = {"moves": [{"tile": 0, "cells": truth.truth(0)}]}
    assert "no run" in error(server.post("/runs/rnope/moves", json=body), 404)
    run, _ = new_run(server)
    assert server.get(f"/runs/{run}").status_code == 200
    r = server.get(f"/days/{FUTURE}/manifest", headers={"Authorization": "Bearer nope"})
    error(r, 403)
    assert "WWW-Authenticate" not in r.headers


def test_the_mcp_door_tells_a_malformed_token_from_a_wrong_one(server, files):
    """The MCP tools take the token as an argument: the same store refuses it with the same lines."""
    _, _, truth = files
    run, _ = new_run(server)
    base = str(server.base_url).removesuffix("/api/v1/").removesuffix("/api/v1")
    lines = {}
    for tok in ("", "two words", "nope"):
        call = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "tools/call",
            "params": {
                "name": "submit_moves",
                "arguments": {"run": run, "token": tok, "moves": [{"tile": 0, "cells": truth.truth(0)}]},
            },
        }
        r = httpx.post(base + "/mcp", json=call, timeout=30, headers={"Accept": "application/json, text/event-stream"})
        res = r.json()["result"]
        assert r.status_code == 200 and res["isError"], r.text
        lines[tok] = res["content"][0]["text"]
    assert "empty or malformed" in lines[""] and "empty or malformed" in lines["two words"]
    assert "wrong token" in lines["nope"] and all("\n" not in x for x in lines.values())
    assert server.get(f"/runs/{run}").json()["moves"] == 0


def test_bad_requests_get_one_clear_4xx(server, files):
    _, _, truth = files
    run, auth = new_run(server)
    post = lambda **kw: server.post(f"/runs/{run}/moves", headers={**auth, **kw.pop("headers", {})}, **kw)  # noqa
    assert "not valid JSON" in error(post(content=b"{nope"), 400)
    assert "not UTF-8" in error(post(content=b"\xff\xfe"), 400)
    assert "body must be" in error(post(json=[1, 2]), 400)
    assert "body.moves" in error(post(json={"moves": "all"}), 400)
    assert "body.moves.0.tile" in error(post(json={"moves": [{"tile": "0", "cells": truth.truth(0)}]}), 400)
    assert "body.moves.0.cells" in error(post(json={"moves": [{"tile": 0, "cells": "2" * 256}]}), 400)
    assert "nested" in error(post(content=b"[" * 1000 + b"]" * 1000), 400)
    assert "nested deeper than 64" in error(post(content=b'{"moves": ' + b"[" * 70 + b"]" * 70 + b"}"), 400)
    assert "application/json" in error(post(content=b'{"moves": []}', headers={"Content-Type": "text/plain"}), 415)
    assert "application/json" in error(
        server.post(
            f"/days/{DAY}/runs",
            content=b'{"player": "x"}',
            headers={"Content-Type": "application/x-www-form-urlencoded"},
        ),
        415,
    )
    assert "after" in error(server.get(f"/runs/{run}/history", params={"after": 2**63}), 400)
    assert "body must be" in error(post(content=b""), 400)
    assert "differs" in error(post(json={"run": "other", "moves": []}), 400)
    assert "over the limit" in error(post(content=b"[" + b"0," * 20000 + b"0]"), 413)
    assert "limit is 8" in error(post(json={"moves": [{"tile": 0, "cells": "0"}] * 9}), 413)
    assert "no run" in error(server.post("/runs/nope/moves", json={"moves": []}, headers=auth), 404)
    assert "no run" in error(server.get("/runs/nope/frontier"), 404)
    assert "not on offer" in error(server.get("/days/2026-01-01"), 404)
    assert "not on offer" in error(server.post("/days/2026-01-01/runs"), 404)
    assert "unknown tile id 8" in error(server.get(f"/runs/{run}/tiles/8"), 404)  # README: 404 unknown tile
    assert "unknown tile id 8" in error(server.get(f"/days/{DAY}/tiles/8"), 404)
    assert "path.tile" in error(server.get(f"/runs/{run}/tiles/x"), 400)
    error(server.get(f"/runs/{run}/history", params={"limit": 0}), 400)
    assert "player" in error(server.post(f"/days/{DAY}/runs", json={"player": "x" * 41}), 400)
    assert "player" in error(server.post(f"/days/{DAY}/runs", json={"player": 7}), 400)
    error(server.get("/nothing-here"), 404)
    error(server.delete(f"/runs/{run}"), 405)
    assert server.get(f"/runs/{run}").json()["moves"] == 0  # none of that wrote a move


def test_chunked_body_over_the_limit_is_refused(server, files):
    run, auth = new_run(server)

    def chunks():
        for _ in range(100):
            yield b" " * 1000

    assert "over the limit" in error(server.post(f"/runs/{run}/moves", content=chunks(), headers=auth), 413)


def test_leaderboard_and_analyzer(server, files):
    _, _, truth = files
    a, auth_a = new_run(server, FUTURE, player="a")
    b, auth_b = new_run(server, FUTURE, player="b")
    play(server, a, auth_a, (0, truth.truth(0)))
    play(server, a, auth_a, (1, truth.truth(1)), (4, truth.truth(4)), (5, flip(truth.truth(5))))
    play(server, b, auth_b, (0, truth.truth(0)), (2, truth.truth(2)))
    an = server.get(f"/runs/{a}/analysis").json()["batches"]
    assert [(e["batch"], e["moves"], e["solved"], e["reward"], e["mean_n"], e["total_reward"]) for e in an] == [
        (1, 1, 1, 256, 16.0, 256),
        (2, 3, 2, 72, 6.0, 328),
    ]
    assert an[-1]["mean_n_so_far"] == pytest.approx(28 / 3, abs=1e-3)
    day = server.get(f"/days/{FUTURE}/analysis").json()
    mine = {r["run"]: r for r in day["runs"]}
    assert mine[a]["reward"] == 328 and mine[b]["reward"] == 292 and mine[b]["batches"] == 1
    assert day["bucket"] == 60 and sum(x["reward"] for x in day["time"]) == sum(r["reward"] for r in day["runs"])
    assert "bucket" in error(server.get(f"/days/{FUTURE}/analysis", params={"bucket": 0}), 400)
    board = server.get(f"/days/{FUTURE}/leaderboard").json()["runs"]
    ranks = [r["run"] for r in board if r["run"] in (a, b)]
    assert ranks == [a, b]
    assert all(x["reward"] >= y["reward"] for x, y in zip(board, board[1:], strict=False))


def test_openapi_docs_and_the_page_are_served(server):
    base = str(server.base_url).rstrip("/").removesuffix("/api/v1")
    spec = httpx.get(base + "/openapi.json").json()
    assert "/api/v1/runs/{run}/moves" in spec["paths"] and "/api/v1/days/{day}/runs" in spec["paths"]
    assert httpx.get(base + "/docs").status_code == 200
    page = httpx.get(base + "/")
    assert page.status_code == 200 and "/static/play.js" in page.text
    assert httpx.get(base + "/static/play.js").status_code == 200


@pytest.mark.slow
def test_state_survives_a_restart_and_sees_the_cli_judges_writes(files, runs_target, tmp_path):
    fx, d, truth = files
    runs = runs_target
    with (
        serving(fx.lib_path, runs, [d / "past.json"], log=tmp_path / "serve.log") as base,
        httpx.Client(base_url=base + "/api/v1") as c,
    ):
        run, auth = new_run(c)
        play(c, run, auth, (0, truth.truth(0)))
        # the CLI judge writes to the same runs file while the service runs; the service notices
        Judge(truth.manifest, truth.board, runs).judge({"run": run, "moves": [{"tile": 3, "cells": truth.truth(3)}]})
        assert c.get(f"/runs/{run}").json()["reward"] == 256 + 36
        assert play(c, run, auth, (7, truth.truth(7)))["verdicts"][0]["correct"] is True
    with (
        serving(fx.lib_path, runs, [d / "past.json"], log=tmp_path / "serve.log") as base,
        httpx.Client(base_url=base + "/api/v1") as c,
    ):
        assert c.get(f"/runs/{run}").json()["reward"] == 256 + 36 + 36
        assert play(c, run, auth, (7, truth.truth(7)))["verdicts"][0]["reason"].endswith("(replay)")
    assert query_runs(runs, "SELECT count(*), sum(reward) FROM moves WHERE run = ?", (run,)) == [(4, 328)]
    assert query_runs(runs, "SELECT count(*) FROM batches WHERE run = ?", (run,)) == [(4,)]
