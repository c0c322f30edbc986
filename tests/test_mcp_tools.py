"""The MCP tools at ``/mcp`` (``referee.service.mcp_tools``), driven by the MCP SDK's own client over
real HTTP against a real ``tiles referee serve`` of a G=61 day: the tools are listed with their
schemas, three tiles are played and scored as the HTTP API scores them (one core), and every
wrong call — a wrong token, arguments off the schema, an unknown tool, run or tile, a move off the
frontier — is a tool error of one line while the service goes on answering."""

from __future__ import annotations

import asyncio

import httpx
import pytest
from mcp import Client as McpClient
from serve_support import daily_g61, serving

from players.agents import solve_puzzle
from players.client import Client
from referee.service import mcp_tools
from tilelib.errors import OffFrontier

DAY = "2026-11-29"
TOOLS = set(mcp_tools.TOOL_OPERATIONS)  # what the server declares; the test holds the served list to it


@pytest.fixture(scope="module")
def served(tmp_path_factory, module_runs_target):
    """The service over each backend in turn; (its URL, its log)."""
    d, manifest = daily_g61(tmp_path_factory, "mcp61", DAY, bytes.fromhex("cd" * 32))
    with serving(d / "lib.sqlite", module_runs_target, [manifest], log=d / "serve.log") as base:
        yield base, d / "serve.log"


def session(base: str, work):
    """Run ``work(client)`` in one MCP client connection to the service; its result."""

    async def go():
        async with McpClient(f"{base}/mcp") as c:
            return await work(c)

    return asyncio.run(go())


async def call(c, name: str, args: dict):
    """(is_error, structured result, the text of the first content block)."""
    r = await c.call_tool(name, args)
    return r.is_error, r.structured_content, r.content[0].text if r.content else ""


def one_line_error(result, *says: str) -> str:
    is_error, _data, text = result
    assert is_error, text
    assert text and "\n" not in text and "Traceback" not in text, text
    for s in says:
        assert s in text, text
    return text


def test_the_tools_are_listed_with_their_schemas(served):
    base, _ = served

    async def work(c):
        return (await c.list_tools()).tools

    tools = {t.name: t for t in session(base, work)}
    assert set(tools) == TOOLS
    moves = tools["submit_moves"].input_schema
    assert set(moves["required"]) == {"run", "token", "moves"}
    assert all(tools[n].description for n in TOOLS)
    assert tools["read_tile"].input_schema["properties"]["tile"]["type"] == "integer"


def test_an_mcp_client_plays_three_tiles_scored_as_the_api_scores_them(served):
    base, _ = served

    async def work(c):
        err, days, _ = await call(c, "list_days", {})
        assert not err and [d["day"] for d in days["result"]] == [DAY]
        err, run, _ = await call(c, "start_run", {"day": DAY, "player": "mcp-bot"})
        assert not err and run["solved"] == 0 and run["frontier"] == 1 and run["token"]
        rewards = []
        while len(rewards) < 3:
            err, fr, _ = await call(c, "read_frontier", {"run": run["run"]})
            assert not err and fr["tiles"]
            for t in fr["tiles"]:
                err, view, _ = await call(c, "read_tile", {"run": run["run"], "tile": t})
                assert not err and view["tile"] == t and view["playable"]
                grid = solve_puzzle(view["puzzle"], view["n"])
                if grid is None:
                    continue
                err, res, _ = await call(
                    c, "submit_moves", {"run": run["run"], "token": run["token"], "moves": [{"tile": t, "cells": grid}]}
                )
                (v,) = res["verdicts"]
                assert not err and v["correct"] and v["reward"] == view["n"] ** 2
                rewards.append(v["reward"])
                break
        err, score, _ = await call(c, "read_score", {"run": run["run"]})
        err2, fr, _ = await call(c, "read_frontier", {"run": run["run"]})
        return run, rewards, score, fr

    run, rewards, score, fr = session(base, work)
    assert score["solved"] == 3 and score["reward"] == sum(rewards) and score["player"] == "mcp-bot"
    with Client(base) as api:  # the HTTP API sees the same run
        assert api.score(run["run"]).model_dump() == score
        assert api.frontier(run["run"]).model_dump() == fr
        assert any(r.run == run["run"] for r in api.leaderboard(DAY).runs)


def test_wrong_calls_are_one_line_tool_errors_and_the_service_goes_on(served):
    base, log = served

    async def work(c):
        _, run, _ = await call(c, "start_run", {"day": DAY})
        r, token = run["run"], run["token"]
        _, view, _ = await call(c, "read_tile", {"run": r, "tile": 0})
        grid = solve_puzzle(view["puzzle"], view["n"])
        _, far, _ = await call(c, "read_tile", {"run": r, "tile": view["neighbours"][0]})
        out = {
            "wrong token": await call(
                c, "submit_moves", {"run": r, "token": "not-it", "moves": [{"tile": 0, "cells": grid}]}
            ),
            "no args": await call(c, "read_tile", {"run": r}),
            "tile as text": await call(c, "read_tile", {"run": r, "tile": "zero"}),
            "moves as text": await call(c, "submit_moves", {"run": r, "token": token, "moves": "0101"}),
            "bad cells": await call(
                c, "submit_moves", {"run": r, "token": token, "moves": [{"tile": 0, "cells": "01x"}]}
            ),
            "no moves": await call(c, "submit_moves", {"run": r, "token": token, "moves": []}),
            "unknown tool": await call(c, "solve_it_for_me", {}),
            "unknown run": await call(c, "read_score", {"run": "r" + "0" * 16}),
            "unknown day": await call(c, "start_run", {"day": "1999-01-01"}),
            "unknown tile": await call(c, "read_tile", {"run": r, "tile": 99999}),
            "off frontier": await call(
                c,
                "submit_moves",
                {"run": r, "token": token, "moves": [{"tile": far["tile"], "cells": "0" * far["n"] ** 2}]},
            ),
            "bad player": await call(c, "start_run", {"day": DAY, "player": "a\u202eb"}),
        }
        _, score, _ = await call(c, "read_score", {"run": r})
        ok = await call(c, "submit_moves", {"run": r, "token": token, "moves": [{"tile": 0, "cells": grid}]})
        return out, score, ok

    out, score, ok = session(base, work)
    one_line_error(out["wrong token"], "wrong token")
    one_line_error(out["no args"], "invalid arguments", "tile")
    one_line_error(out["tile as text"], "invalid arguments", "tile")
    one_line_error(out["moves as text"], "invalid arguments", "moves")
    one_line_error(out["bad cells"], "invalid arguments", "cells")
    one_line_error(out["no moves"], "invalid arguments", "moves")
    one_line_error(out["unknown tool"], "solve_it_for_me")
    one_line_error(out["unknown run"], "no run")
    one_line_error(out["unknown day"], "not on offer")
    one_line_error(out["unknown tile"], "unknown tile id 99999")
    one_line_error(out["off frontier"], "not recorded")
    one_line_error(out["bad player"], "player")
    assert score["moves"] == 0  # nothing above was judged or stored
    assert not ok[0] and ok[1]["verdicts"][0]["correct"]  # and the run plays on
    for method in ("GET", "DELETE"):  # stateless: nothing to listen to or end
        r = httpx.request(method, f"{base}/mcp", timeout=10)
        assert r.status_code == 405 and r.headers["allow"] == "POST" and "POST" in r.json()["error"]
    r = httpx.post(
        f"{base}/mcp",
        content=b"{not json",
        timeout=10,
        headers={"Content-Type": "application/json", "Accept": "application/json, text/event-stream"},
    )
    assert r.status_code == 400 and r.json()["error"]["code"] == -32700
    assert httpx.get(f"{base}/api/v1/days", timeout=10).status_code == 200
    assert "Traceback" not in log.read_text() and "internal error" not in log.read_text()


def test_the_schemas_carry_their_limits_and_the_service_holds_them(served):
    """``submit_moves`` says its batch limit (maxItems) and ``read_tile`` its tile bound, as the HTTP
    API's OpenAPI does; a call past either is a one-line tool error and stores nothing."""
    base, _ = served
    api = httpx.get(f"{base}/openapi.json", timeout=10).json()
    http_moves = api["components"]["schemas"]["MovesRequest"]["properties"]["moves"]

    async def work(c):
        tools = {t.name: t.input_schema for t in (await c.list_tools()).tools}
        _, run, _ = await call(c, "start_run", {"day": DAY})
        too_many = [{"tile": 0, "cells": "0"}] * (http_moves["maxItems"] + 1)
        return (
            tools,
            run,
            (
                await call(c, "submit_moves", {"run": run["run"], "token": run["token"], "moves": too_many}),
                await call(c, "read_tile", {"run": run["run"], "tile": 2**31}),
            ),
        )

    tools, run, (over, far) = session(base, work)
    moves = tools["submit_moves"]["properties"]["moves"]
    assert moves["maxItems"] == http_moves["maxItems"] == 64 and moves["minItems"] == 1
    tile = tools["read_tile"]["properties"]["tile"]
    assert tile["minimum"] == 0 and tile["maximum"] == (4095 // 5) ** 2 - 1 < 2**31
    one_line_error(over, "invalid arguments", "moves")
    one_line_error(far, "invalid arguments", "tile")
    assert Client(base).score(run["run"]).moves == 0


def test_mcp_and_http_refuse_a_mixed_batch_identically(served):
    """A right move on the seed tile, then a move off the frontier whose grid has the wrong length:
    the whole batch is refused on every door (HTTP, MCP, the client) with the same line, and nothing
    is stored."""
    base, _ = served
    with Client(base) as api:
        created = api.create_run(DAY)
        seed = api.run_tile(created.run, 0)
        off = next(t for t in range(len(api.board(DAY).tiles)) if t != 0 and t not in seed.neighbours)
        mixed = [{"tile": 0, "cells": solve_puzzle(seed.puzzle, seed.n)}, {"tile": off, "cells": "0"}]
        r = httpx.post(
            f"{base}/api/v1/runs/{created.run}/moves",
            json={"moves": mixed},
            timeout=10,
            headers={"Authorization": f"Bearer {created.token}"},
        )
        assert r.status_code == 409, r.text
        http_line = r.json()["error"]

        async def work(c):
            _, run, _ = await call(c, "start_run", {"day": DAY})
            return run, await call(c, "submit_moves", {"run": run["run"], "token": run["token"], "moves": mixed})

        run, out = session(base, work)
        mcp_line = one_line_error(out, "not recorded")
        assert mcp_line == http_line and f"move on tile {off}:" in http_line
        with pytest.raises(OffFrontier) as e:  # and through the client
            api.moves(created.run, [(m["tile"], m["cells"]) for m in mixed])
        assert str(e.value) == f"409: {http_line}"  # the client names the status
        assert api.score(created.run).moves == 0 and api.score(run["run"]).moves == 0


def test_the_leaderboard_tool_is_the_apis_in_every_order(served):
    base, _ = served

    async def work(c):
        return {
            by: await call(c, "read_leaderboard", {"day": DAY, "by": by, "limit": 50})
            for by in ("reward", "batches", "requests", "time")
        }, await call(c, "read_leaderboard", {"day": DAY, "by": "luck"})

    out, wrong = session(base, work)
    with Client(base) as api:
        for by, (err, data, _) in out.items():
            assert not err and data == api.leaderboard(DAY, limit=50, by=by).model_dump(), by
    one_line_error(wrong, "invalid arguments", "by")


LIMITS = ("maxLength", "minLength", "minimum", "maximum", "pattern")
# What names the same thing at every door. Not "limit": a page's size is each operation's own (the
# leaderboard tool gives a language model at most 100 rows, the HTTP route 1,000).
SHARED = ("run", "day", "tile", "player")


def test_every_argument_the_api_also_takes_has_the_apis_limits(served):
    """A tool argument that names what an HTTP parameter or body field of the API names (``SHARED``)
    carries the same limits in its schema as the OpenAPI document gives it: one declaration
    (``referee.wire``) for both."""
    base, _ = served
    api = httpx.get(f"{base}/openapi.json", timeout=10).json()
    http: dict[str, list[dict]] = {}
    for ops in api["paths"].values():
        for op in ops.values():
            for p in op.get("parameters", []):
                http.setdefault(p["name"], []).append(p["schema"])
    for name, schema in api["components"]["schemas"]["RunCreate"]["properties"].items():
        text = next((s for s in schema.get("anyOf", []) if s.get("type") == "string"), schema)
        http.setdefault(name, []).append(text)

    async def work(c):
        return {t.name: t.input_schema for t in (await c.list_tools()).tools}

    compared = set()
    for tool, schema in session(base, work).items():
        for arg, spec in schema["properties"].items():
            if arg not in SHARED:
                continue
            spec = next((s for s in spec.get("anyOf", []) if s.get("type") != "null"), spec)
            for theirs in http.get(arg, []):
                mine = {k: spec.get(k) for k in LIMITS}
                assert mine == {k: theirs.get(k) for k in LIMITS}, (tool, arg, mine, theirs)
                compared.add(arg)
    assert compared >= {"run", "day", "tile", "player"}


def test_every_move_the_judge_would_not_accept_is_a_tool_error(served):
    """Over MCP a move that cannot be judged — a tile id the board lacks, a grid of the wrong length,
    a tile already solved — is a tool error of one line naming it, and nothing of its batch is stored
    (over HTTP the same moves are verdicts with ``accepted: false``, FORMAT §14)."""
    base, _ = served
    with Client(base) as api:
        tiles = len(api.board(DAY).tiles)

    async def work(c):
        _, run, _ = await call(c, "start_run", {"day": DAY})
        r, token = run["run"], run["token"]
        _, seed, _ = await call(c, "read_tile", {"run": r, "tile": 0})
        grid = solve_puzzle(seed["puzzle"], seed["n"])

        async def submit(moves):
            return await call(c, "submit_moves", {"run": r, "token": token, "moves": moves})

        out = {
            "unknown tile": await submit([{"tile": tiles, "cells": "0" * 36}]),
            "short grid": await submit([{"tile": 0, "cells": grid[:-1]}]),
            "after a right move": await submit([{"tile": 0, "cells": grid}, {"tile": tiles, "cells": "01"}]),
        }
        first = await submit([{"tile": 0, "cells": grid}])
        out["replay"] = await submit([{"tile": 0, "cells": grid}])
        _, score, _ = await call(c, "read_score", {"run": r})
        return out, first, score

    out, first, score = session(base, work)
    one_line_error(out["unknown tile"], f"move on tile {tiles}", "unknown tile id", "not recorded")
    one_line_error(out["short grid"], "move on tile 0", "characters", "not recorded")
    one_line_error(out["after a right move"], f"move on tile {tiles}", "not recorded")
    one_line_error(out["replay"], "move on tile 0", "replay", "not recorded")
    assert not first[0] and first[1]["verdicts"][0]["correct"]
    assert score["moves"] == 1 and score["solved"] == 1  # only the one right batch was stored
