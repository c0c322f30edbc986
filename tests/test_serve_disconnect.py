"""A client that goes away mid-request costs a real `tiles referee serve` one log line, not a traceback:
a raw socket sends a request's headers with a Content-Length, half its body, and closes."""

from __future__ import annotations

import socket
import time

import httpx
import pytest
from serve_support import board21_day, serving

DAY = "2026-11-29"
LINE = "client disconnected"


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    """(base URL, port, the service's log file): the service's own lines only (no access log)."""
    fx, d, manifest, _ = board21_day(tmp_path_factory, "gone")
    log = d / "serve.log"
    with serving(fx.lib_path, d / "runs.sqlite", [manifest], "--access-log", "off", log=log) as base:
        yield base, int(base.rsplit(":", 1)[1]), log


def half_a_request(port: int, path: str, headers: dict | None = None) -> None:
    """Send ``POST path`` announcing a 100-byte JSON body, send 40 bytes of it, and hang up."""
    extra = "".join(f"{k}: {v}\r\n" for k, v in (headers or {}).items())
    head = (
        f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n"
        f"Accept: application/json, text/event-stream\r\n{extra}Content-Length: 100\r\n\r\n"
    )
    with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
        s.sendall(head.encode() + b'{"player": "' + b"x" * 28)
        time.sleep(0.3)  # the server is reading the body when the connection closes


def new_lines(log, seen: int, want: int, wait: float = 10.0) -> list[str]:
    """The log's lines after the first ``seen``, once there are ``want`` of them (or ``wait`` is over),
    and after a moment more in which nothing else may come."""
    t0 = time.monotonic()
    while len(log.read_text().splitlines()) - seen < want and time.monotonic() - t0 < wait:
        time.sleep(0.1)
    time.sleep(1.0)
    return log.read_text().splitlines()[seen:]


@pytest.mark.parametrize("path, auth", [(f"/api/v1/days/{DAY}/runs", False), ("/api/v1/runs/{run}/moves", True)])
def test_a_client_gone_mid_body_costs_one_line(served, path, auth):
    base, port, log = served
    made = httpx.post(f"{base}/api/v1/days/{DAY}/runs", json={}, timeout=30).json()
    seen = len(log.read_text().splitlines())
    half_a_request(port, path.format(run=made["run"]), {"Authorization": f"Bearer {made['token']}"} if auth else None)
    lines = new_lines(log, seen, 1)
    sent = path.format(run=made["run"])
    assert lines == [f"tiles referee serve: POST {sent}: client disconnected before its request body arrived"], lines
    assert httpx.get(f"{base}/api/v1/runs/{made['run']}", timeout=30).json()["moves"] == 0  # and it goes on


def test_a_client_gone_mid_body_at_the_mcp_endpoint_costs_one_line_too(served):
    """The MCP SDK would log it as an error with a traceback of 40 lines: the service reads the body
    first and says the same one line as for the API."""
    base, port, log = served
    seen = len(log.read_text().splitlines())
    half_a_request(port, "/mcp")
    lines = new_lines(log, seen, 1)
    assert lines == ["tiles referee serve: POST /mcp: client disconnected before its request body arrived"], lines
    assert httpx.get(f"{base}/api/v1/days", timeout=30).status_code == 200


def test_the_whole_log_has_no_traceback(served):
    """Last: whatever came before, the service never logged a traceback."""
    _, _, log = served
    text = log.read_text()
    assert "Traceback" not in text and "Exception in ASGI application" not in text, text[-3000:]
