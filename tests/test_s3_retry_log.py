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


def test_the_part_size_is_stated_and_checked():
    from remote.s3 import MiB, part_size
    from tilelib.errors import BadInput

    assert part_size({}) == 8 * MiB and part_size({"TILES_S3_PART_MB": "5"}) == 5 * MiB
    for bad in ("4", "5121", "eight", "-5", "5.5"):
        with pytest.raises(BadInput, match="TILES_S3_PART_MB"):
            part_size({"TILES_S3_PART_MB": bad})


@pytest.fixture
def moto_bucket(monkeypatch):
    """(endpoint, bucket) of the loopback S3 server, with its credentials in the environment."""
    from s3_server import DUMMY_KEY, DUMMY_SECRET, moto_endpoint, new_bucket

    up = moto_endpoint()
    for k, v in {
        "AWS_ACCESS_KEY_ID": DUMMY_KEY,
        "AWS_SECRET_ACCESS_KEY": DUMMY_SECRET,
        "AWS_REGION": "us-east-1",
    }.items():
        monkeypatch.setenv(k, v)
    return up, new_bucket(up)


def _proxy_class():
    """``scripts/fault_proxy.FaultProxy`` (the year's bench's proxy)."""
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "scripts"))
    from fault_proxy import FaultProxy

    return FaultProxy


def test_a_multipart_upload_abandoned_half_way_is_restarted_whole(tmp_path, monkeypatch, moto_bucket):
    """Parts after the first fail and so does the abort (the upload stays open, as when its host
    died): one RemoteError line; the next push of the same snapshot uploads it whole, byte for byte."""
    import hashlib
    import os

    from s3_server import client

    from remote.s3 import S3Backend
    from remote.url import parse_remote
    from tilelib.errors import RemoteError

    up, bucket = moto_bucket
    FaultProxy = _proxy_class()  # noqa: N806 (a class)
    monkeypatch.setenv("TILES_S3_PART_MB", "5")
    blob = os.urandom(11 << 20)  # three parts of 5 MiB at most
    src = tmp_path / "snap"
    src.write_bytes(blob)
    sha = hashlib.sha256(blob).hexdigest()
    with FaultProxy(up, seed=0, rate=0.0) as proxy:
        backend = S3Backend(parse_remote(f"s3://{bucket}/lib"), client=make_client(proxy.url))
        proxy.abandon_next()
        with pytest.raises(RemoteError) as err:
            backend.put_snapshot(sha, src)
        assert "\n" not in str(err.value) and proxy.counts["abandon_multipart"] == 1
        assert len(client(up).list_multipart_uploads(Bucket=bucket).get("Uploads", [])) == 1  # left open
        assert backend.put_snapshot(sha, src) is True  # restarted whole
    back = tmp_path / "back"
    S3Backend(parse_remote(f"s3://{bucket}/lib"), client=make_client(up)).get_snapshot(sha, back)
    assert hashlib.sha256(back.read_bytes()).hexdigest() == sha


def test_a_body_cut_mid_way_is_read_again(moto_bucket, caplog):
    """botocore retries a request, not its body: HEAD.json's body cut by a reset after the server
    answered is asked for again, with one log line, and the pull goes on."""
    from s3_server import client

    from remote.s3 import S3Backend
    from remote.url import parse_remote

    up, bucket = moto_bucket
    FaultProxy = _proxy_class()  # noqa: N806 (a class)
    body = b'{"snapshot": "' + b"a" * 64 + b'"}\n' + b" " * 2000
    client(up).put_object(Bucket=bucket, Key="lib/HEAD.json", Body=body)
    with FaultProxy(up, seed=0, rate=1.0, kinds=("reset",)) as proxy:
        seen = []
        proxy.hook = lambda method, path: (seen.append(method), setattr(proxy, "armed", len(seen) < 2))
        backend = S3Backend(parse_remote(f"s3://{bucket}/lib"), client=make_client(proxy.url))
        with caplog.at_level(logging.WARNING, logger="remote.s3"):
            got = backend.get_head()
    assert got is not None and got.body == body and proxy.counts["reset"] == 1
    assert [r.getMessage() for r in caplog.records if r.name == "remote.s3"] == [
        "s3: GetObject body 1 of 2 cut (ResponseStreamingError); retrying"
    ]
