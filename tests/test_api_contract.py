"""The API declared once (``referee.wire.OPERATIONS``) and every door kept to it, read from the served
app's own ``/openapi.json``:

- the document holds exactly the declared operations (method, path, operationId, answer model);
- every route runs its use case of ``play`` (the same name), which a request really reaches;
- every operation has a method on both Python clients, an MCP tool (``mcp_tools.TOOL_OPERATIONS``)
  or a listed reason for none (``mcp_tools.NO_TOOL``), and the client's parameters are the
  document's, with its defaults;
- the page (``static/play.js``) and the load generator (``scripts/loadgen.py``) call only what the
  document holds, with the method it declares.
"""

from __future__ import annotations

import ast
import asyncio
import inspect
import json
import re
import subprocess
import sys
from pathlib import Path

import httpx
import pytest
from serve_support import in_process_day21

from players.client import AsyncClient, Client, Endpoints
from referee import wire
from referee.service import mcp_tools, play

ROOT = Path(__file__).resolve().parent.parent
DAY = "2026-11-29"
METHODS = ("get", "put", "post", "delete", "patch", "head", "options", "trace")


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    """(app, store, judge with the truth, the OpenAPI document) over the G=21 day, quotas off."""
    with in_process_day21(tmp_path_factory, "contract") as (app, store, truth):
        yield app, store, truth, app.openapi()


def operations(doc) -> dict[str, tuple[str, str, dict]]:
    """operationId -> (METHOD, path under the API prefix, the operation) of the document."""
    out = {}
    for path, item in doc["paths"].items():
        for method, op in item.items():
            if method in METHODS and path.startswith(wire.API):
                out[op["operationId"]] = (method.upper(), path.removeprefix(wire.API), op)
    return out


def template(path: str) -> str:
    """A path with every parameter written ``{}`` (``{day}``, ``${S.day}``, an f-string's field)."""
    return re.sub(r"\$?\{[^}]*\}", "{}", path)


def test_the_document_holds_exactly_the_declared_operations(served):
    _app, _store, _truth, doc = served
    ops = operations(doc)
    assert list(ops) == list(wire.OPERATIONS)  # the same names, in the declared order
    for name, op in wire.OPERATIONS.items():
        method, path, spec = ops[name]
        assert (method, path) == (op.method, op.path), name
        ok = next(code for code in spec["responses"] if code.startswith("2"))
        schema = spec["responses"][ok]["content"]["application/json"]["schema"]
        assert schema == {"$ref": f"#/components/schemas/{op.answer.__name__}"}, name


def test_every_route_runs_its_use_case_and_a_request_reaches_it(served, monkeypatch):
    """Each operation through the async client, in process: the use case of ``play`` bearing the
    operation's name runs exactly once per call (so no route answers beside ``play``), and the
    request the client sends is the operation's method and path."""
    app, _store, truth, _doc = served
    ran: list[str] = []
    for name in wire.OPERATIONS:
        case = getattr(play, name)
        assert inspect.iscoroutinefunction(case), name

        async def counted(*args, _case=case, _name=name, **kw):
            ran.append(_name)
            return await _case(*args, **kw)

        monkeypatch.setattr(play, name, counted)
    sent: list[tuple[str, str]] = []

    async def note(request: httpx.Request) -> None:
        sent.append((request.method, request.url.path.removeprefix(wire.API)))

    async def go():
        c = AsyncClient("http://testserver", transport=httpx.ASGITransport(app), retries=0)
        c.http.event_hooks["request"].append(note)
        try:
            run = await c.create_run(DAY, player="contract")
            seed = (await c.frontier(run.run)).tiles[0]
            calls = {
                "days": c.days(),
                "board": c.board(DAY),
                "cells": c.cells(DAY),
                "day_tile": c.day_tile(DAY, seed),
                "solution": c.solution(DAY, seed),
                "manifest": c.manifest(DAY),
                "leaderboard": c.leaderboard(DAY),
                "day_analysis": c.day_analysis(DAY),
                "score": c.score(run.run),
                "run_tile": c.run_tile(run.run, seed),
                "moves": c.moves(run.run, [(seed, truth.truth(seed))]),
                "history": c.history(run.run),
                "run_analysis": c.run_analysis(run.run),
            }
            for name, pending in calls.items():
                ran.append(f"-> {name}")
                await pending
            return list(calls)
        finally:
            await c.close()

    called = asyncio.run(go())
    assert ran == ["create_run", "frontier"] + [x for name in called for x in (f"-> {name}", name)]
    assert {"create_run", "frontier", *called} == set(wire.OPERATIONS)
    reached = [
        name
        for method, path in sent
        for name, op in wire.OPERATIONS.items()
        if op.method == method and re.fullmatch(re.sub(r"\{[^}]*\}", "[^/]+", op.path), path)
    ]
    assert sorted(reached) == sorted(wire.OPERATIONS) and len(sent) == len(reached)


def test_every_operation_has_client_methods_or_a_tool_or_a_reason(served):
    app, store, _truth, doc = served
    tools = asyncio.run(mcp_tools.create(store, app.state.settings).list_tools())
    assert {t.name for t in tools} == set(mcp_tools.TOOL_OPERATIONS)
    ops = operations(doc)
    tooled = set(mcp_tools.TOOL_OPERATIONS.values())
    assert tooled.isdisjoint(mcp_tools.NO_TOOL) and tooled | set(mcp_tools.NO_TOOL) == set(ops)
    assert all(reason.strip() for reason in mcp_tools.NO_TOOL.values())
    for name, (_method, _path, spec) in ops.items():
        for cls in (Client, AsyncClient):
            assert getattr(cls, name) is getattr(Endpoints, name), (cls, name)  # one method, two senders
        method = inspect.signature(getattr(Endpoints, name))
        params = {p["name"]: p for p in spec.get("parameters", []) if p["in"] in ("path", "query")}
        takes = [p for p in method.parameters.values() if p.name != "self"]
        assert [p.name for p in takes[: len(params)]] == list(params), name
        for p in takes[: len(params)]:
            default = params[p.name]["schema"].get("default", inspect.Parameter.empty)
            assert p.default == default, (name, p.name)


def test_a_client_awaits_only_in_its_async_form(served):
    """The sync client's methods answer; the async one's give awaitables (``Endpoints._send``)."""
    assert not inspect.iscoroutinefunction(Client._send) and inspect.iscoroutinefunction(AsyncClient._send)


def _js_calls(source: str) -> list[tuple[str, str, str]]:
    """(METHOD, path template, query) of each API path literal of the page's script."""
    out = []
    for m in re.finditer(r"[`\"](/(?:days|runs)[^`\"]*)[`\"](\s*,\s*\{\s*method:\s*\"(\w+)\")?", source):
        path, _, query = m.group(1).partition("?")
        out.append((m.group(3) or "GET", template(path), query))
    return out


def _py_calls(source: str) -> list[tuple[str, str]]:
    """(METHOD, path template) of each request the load generator makes: a call whose arguments are
    a method name then a path (a string or an f-string)."""
    out = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Call):
            continue
        args = node.args
        for a, b in zip(args, args[1:], strict=False):
            if isinstance(a, ast.Constant) and a.value in ("GET", "POST"):
                if isinstance(b, ast.JoinedStr):
                    path = "".join(v.value if isinstance(v, ast.Constant) else "{}" for v in b.values)
                elif isinstance(b, ast.Constant) and isinstance(b.value, str):
                    path = b.value
                else:
                    continue
                out.append((a.value, template(path)))
    return out


def test_the_page_and_the_load_generator_call_only_what_the_document_holds(served):
    _app, _store, _truth, doc = served
    held = {(method, template(path)): spec for method, path, spec in operations(doc).values()}
    page = (ROOT / "referee/service/static/play.js").read_text()
    assert f'const API = "{wire.API}";' in page
    js = _js_calls(page)
    assert len(js) >= 10
    for method, path, query in js:
        assert (method, path) in held, (method, path)
        names = {p["name"] for p in held[method, path].get("parameters", []) if p["in"] == "query"}
        asked = {kv.partition("=")[0] for kv in query.split("&") if kv}
        assert asked <= names, (path, asked, names)
    assert {("POST", "/days/{}/runs"), ("POST", "/runs/{}/moves")} <= {(m, p) for m, p, _ in js}
    load = _py_calls((ROOT / "scripts/loadgen.py").read_text())
    assert len(load) >= 5
    for method, path in load:
        assert (method, path) in held, (method, path)


def test_the_path_readers_see_a_call_the_document_lacks():
    """The two readers above find a stray call, so the test can fail."""
    assert _js_calls('api(`/runs/${r}/undo`, { method: "POST" })') == [("POST", "/runs/{}/undo", "")]
    assert _py_calls('self.call("x", "DELETE", f"/runs/{r}")\nself.call("y", "GET", f"/days/{d}/x")') == [
        ("GET", "/days/{}/x")
    ]


def test_the_client_imports_the_contract_without_the_server():
    """``players.client`` reads ``referee.wire`` alone: no FastAPI, no service module, no store."""
    code = "import sys, players.client; print(sorted(m for m in sys.modules if m.startswith(('fastapi', 'referee'))))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT)
    assert out.stdout.strip() == "['referee', 'referee.wire']", out.stdout


def test_answers_made_of_shared_parts_keep_their_key_order():
    """RunCreated is Score with the token; RunTotals and TimeBucket are one Tally with a key: their JSON
    keys stay in the order the answers always had (pydantic orders inherited fields by the bases)."""
    want = {
        wire.RunCreated: ["run", "token", "day", "player", "solved", "reward", "moves", "frontier"],
        wire.Score: ["run", "day", "player", "solved", "reward", "moves", "frontier"],
        wire.RunTotals: ["run", "batches", "reward", "solved", "mean_n"],
        wire.TimeBucket: ["t", "batches", "reward", "solved", "mean_n"],
    }
    for model, keys in want.items():
        values = {k: ("x" if k in ("run", "token", "day", "player") else 0) for k in keys}
        assert list(json.loads(model.model_validate(values).model_dump_json())) == keys, model.__name__
