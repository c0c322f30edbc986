"""Retries as the S3 SDK expects (issue 74): the client is botocore's ``standard`` retry mode with its
attempts and timeouts stated (``remote.s3.make_client``), and every failed attempt botocore retries
is one log line saying what failed and whether another attempt follows — against a server on
loopback that answers 503 SlowDown, one that cuts the connection, and one that answers 404 (not a
fault: no line)."""

from __future__ import annotations

import logging
import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import botocore.exceptions as bex
import pytest

from remote.s3 import make_client

SLOW_DOWN = b"""<?xml version="1.0" encoding="UTF-8"?>
<Error><Code>SlowDown</Code><Message>Please reduce your request rate.</Message></Error>"""
NO_KEY = b"""<?xml version="1.0" encoding="UTF-8"?>
<Error><Code>NoSuchKey</Code><Message>The specified key does not exist.</Message></Error>"""


def _serve(answer):
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self):
            answer(self)

        def log_message(self, *_a):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def _status(code: int, body: bytes):
    def answer(h):
        h.send_response(code)
        h.send_header("Content-Type", "application/xml")
        h.send_header("Content-Length", str(len(body)))
        h.end_headers()
        h.wfile.write(body)

    return answer


def _cut(h):
    h.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
    h.connection.close()  # a reset, no answer


@pytest.fixture
def creds(monkeypatch):
    for k, v in {"AWS_ACCESS_KEY_ID": "k", "AWS_SECRET_ACCESS_KEY": "s", "AWS_REGION": "auto"}.items():
        monkeypatch.setenv(k, v)


@pytest.mark.parametrize(
    ("answer", "fault"),
    [(_status(503, SLOW_DOWN), "HTTP 503 SlowDown"), (_cut, "ConnectionClosedError")],
    ids=["slow-down", "reset"],
)
def test_each_retried_fault_is_one_line(answer, fault, creds, caplog):
    server = _serve(answer)
    try:
        client = make_client(f"http://127.0.0.1:{server.server_port}", max_attempts=3)
        with (
            caplog.at_level(logging.WARNING, logger="remote.s3"),
            pytest.raises(bex.BotoCoreError if fault != "HTTP 503 SlowDown" else bex.ClientError),
        ):
            client.get_object(Bucket="b", Key="k")
    finally:
        server.shutdown()
    lines = [r.getMessage() for r in caplog.records if r.name == "remote.s3"]
    assert lines == [
        f"s3: GetObject attempt 1 of 3 failed ({fault}); retrying",
        f"s3: GetObject attempt 2 of 3 failed ({fault}); retrying",
        f"s3: GetObject attempt 3 of 3 failed ({fault}); giving up",
    ]


def test_an_answer_that_is_no_fault_logs_nothing(creds, caplog):
    server = _serve(_status(404, NO_KEY))
    try:
        client = make_client(f"http://127.0.0.1:{server.server_port}", max_attempts=3)
        with caplog.at_level(logging.WARNING, logger="remote.s3"), pytest.raises(bex.ClientError):
            client.get_object(Bucket="b", Key="k")
    finally:
        server.shutdown()
    assert [r for r in caplog.records if r.name == "remote.s3"] == []


def test_the_client_is_standard_retries_with_stated_timeouts(creds):
    cfg = make_client("http://127.0.0.1:9", max_attempts=2).meta.config
    assert cfg.retries == {"total_max_attempts": 2, "mode": "standard"}  # 2 in all, as FORMAT says
    assert (cfg.connect_timeout, cfg.read_timeout) == (4, 6)
