"""Every answer of a real `tiles referee serve` on 127.0.0.1 carries the browser security headers
(``referee.service.security``): the page, a static file, the API, its errors (404, 400 for a request
off its schema, 405, 413, and a 500), ``/docs``, ``/openapi.json`` and the MCP tools alike."""

from __future__ import annotations

import httpx
import pytest
from serve_support import board21_day, serving

DAY = "2026-11-29"
MCP_HEADERS = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    """(base URL, runs file) of a service over the G=21 day and a SQLite runs file of its own."""
    fx, d, manifest, _ = board21_day(tmp_path_factory, "headers")
    with serving(fx.lib_path, d / "runs.sqlite", [manifest], "--max-body", "2000", log=d / "serve.log") as base:
        yield base, d / "runs.sqlite"


def assert_secured(r: httpx.Response) -> None:
    """The four headers, with a policy that allows no inline script, no framing and no plugin."""
    csp = r.headers.get("content-security-policy", "")
    rules = {part.split()[0]: part.split()[1:] for part in csp.split("; ") if part}
    assert rules.get("default-src") == ["'self'"], (r.request.url, csp)
    assert rules.get("script-src") == ["'self'"] and "'unsafe-inline'" not in csp and "'unsafe-eval'" not in csp
    assert rules.get("frame-ancestors") == ["'none'"] and rules.get("object-src") == ["'none'"]
    assert "base-uri" in rules and "form-action" in rules
    assert r.headers.get("x-content-type-options") == "nosniff"
    assert r.headers.get("x-frame-options") == "DENY"
    assert r.headers.get("referrer-policy") == "no-referrer"


@pytest.mark.parametrize(
    "method, path, status, kind",
    [
        ("GET", "/", 200, "text/html"),
        ("GET", "/static/play.js", 200, "javascript"),
        ("GET", "/static/style.css", 200, "text/css"),
        ("GET", "/api/v1/days", 200, "application/json"),
        ("GET", f"/api/v1/days/{DAY}", 200, "application/json"),
        ("GET", "/api/v1/days/1999-01-01", 404, "application/json"),
        ("GET", "/nowhere", 404, "application/json"),
        ("GET", "/static/nothing.js", 404, "application/json"),
        ("GET", "/api/v1/runs/r1/history?limit=0", 400, "application/json"),
        ("DELETE", "/api/v1/days", 405, "application/json"),
        ("GET", "/mcp", 405, "application/json"),
        ("GET", "/docs", 200, "text/html"),
        ("GET", "/openapi.json", 200, "application/json"),
    ],
)
def test_every_kind_of_answer_carries_the_headers(served, method, path, status, kind):
    base, _ = served
    r = httpx.request(method, base + path, timeout=30)
    assert r.status_code == status and kind in r.headers["content-type"], (r.status_code, r.headers, r.text[:200])
    assert_secured(r)


def test_writes_and_their_refusals_carry_the_headers(served):
    base, _ = served
    created = httpx.post(f"{base}/api/v1/days/{DAY}/runs", json={"player": "h"}, timeout=30)
    assert created.status_code == 201
    assert_secured(created)
    big = httpx.post(
        f"{base}/api/v1/days/{DAY}/runs", content=b" " * 3000, timeout=30, headers={"Content-Type": "application/json"}
    )
    assert big.status_code == 413
    assert_secured(big)
    form = httpx.post(f"{base}/api/v1/days/{DAY}/runs", data={"player": "x"}, timeout=30)
    assert form.status_code == 415
    assert_secured(form)


def test_the_mcp_tools_answers_carry_the_headers(served):
    base, _ = served
    r = httpx.post(
        f"{base}/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"}, headers=MCP_HEADERS, timeout=30
    )
    assert r.status_code == 200 and "submit_moves" in r.text
    assert_secured(r)
    bad = httpx.post(f"{base}/mcp", content=b"{not json", headers=MCP_HEADERS, timeout=30)
    assert bad.status_code == 400
    assert_secured(bad)
    big = b'{"jsonrpc": "2.0", "id": 1, "method": "tools/list", "pad": "' + b"x" * 3000 + b'"}'
    for body in (big, iter([big[:1000], big[1000:]])):  # with a Content-Length, and chunked
        r = httpx.post(f"{base}/mcp", content=body, headers=MCP_HEADERS, timeout=30)
        assert r.status_code == 413, r.text
        assert_secured(r)


def test_a_crash_answers_500_with_the_headers_too(tmp_path):
    """A bug (an exception no handler knows) is answered 500 by Starlette's error middleware, outside
    every middleware ``add_middleware`` adds: the headers still come. No request a client can send
    crashes the service (the fuzz tests hold that), so this one app, the service's own, gets one
    more route that raises, and is called in process."""
    import asyncio

    from referee.service.app import create_app
    from referee.service.runs import RunStore

    store = RunStore(tmp_path / "runs.sqlite", {})
    try:
        app = create_app(store)

        @app.get("/crash")
        async def crash() -> None:
            raise RuntimeError("a bug")

        async def get() -> httpx.Response:
            transport = httpx.ASGITransport(app=app, raise_app_exceptions=False)
            async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as c:
                return await c.get("/crash")

        r = asyncio.run(get())
    finally:
        store.close()
    assert r.status_code == 500 and r.json() == {"error": "internal error: RuntimeError"}, r.text
    assert_secured(r)
