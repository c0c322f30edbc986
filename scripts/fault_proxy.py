"""A fault-injecting HTTP proxy for the S3 API on loopback (``scripts/bench_year.py``, its test).

It sits between the S3 client and the server and, for each request, draws from its own seeded
generator whether to pass it through or to inject one fault, the kinds an operator's network and
provider produce:

- ``reset``: the request reaches the server (which does the work) and the answer's body is cut
  half-way with a TCP reset — the client never learns that its write happened;
- ``error500``: 500 InternalError, the server untouched;
- ``slowdown``: 503 SlowDown, the server untouched;
- ``stall``: nothing answered for ``stall`` seconds (past the client's read timeout), then closed.

``hook``, when set, is called with each request's method and path once its body has arrived and
before anything is forwarded (the year's bench kills a build there: the request still reaches the
server, as one sent just before its sender died does). ``abandon_next()``: the next multipart
upload's parts after the first all fail (500), and so does the client's abort, so the managed
transfer gives up half-way and the upload is left open on the server, as when a host dies
mid-upload. ``counts`` says how many of each were injected. A fault is drawn only while
``armed``; one connection per request (``Connection: close``), so a cut connection never poisons
the next.
No package does this for S3 on loopback (toxiproxy works on TCP streams, not requests, and is a
Go binary), so it is small and here.
"""

from __future__ import annotations

import http.client
import random
import socket
import struct
import sys
import threading
import time
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlsplit

KINDS = ("reset", "error500", "slowdown", "stall")

_ERROR = (
    '<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>{code}</Code><Message>{message}</Message>'
    "<RequestId>fault-proxy</RequestId></Error>"
)


class _Quiet(ThreadingHTTPServer):
    """A client that died or gave up mid-answer is what the bench does on purpose: no traceback."""

    def handle_error(self, request, client_address) -> None:
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


class FaultProxy:
    """The proxy on ``127.0.0.1:port`` in front of ``upstream`` (module doc). ``rate`` is the chance
        that one request gets a fault (seeded); the faults take ``kinds`` in turn, so every kind comes
    as soon as there are as many faults as kinds."""

    def __init__(self, upstream: str, *, seed: int, rate: float = 0.02, stall: float = 8.0, kinds=KINDS) -> None:
        u = urlsplit(upstream)
        self.upstream = (u.hostname or "127.0.0.1", u.port or 80)
        self.rng = random.Random(seed)
        self.rate, self.stall, self.kinds = rate, stall, tuple(kinds)
        self.armed = True
        self.hook = None  # called with (method, path) for each request once its body is read
        self.abandon_multipart = False
        self.counts: Counter[str] = Counter()
        self.requests = 0
        self.bytes_up = self.bytes_down = 0  # request bodies in, answer bodies out (what the client moved)
        self._lock = threading.Lock()
        self._abandoning: str | None = None  # the upload id being abandoned
        self._server = _Quiet(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        self.port = self._server.server_port
        self.url = f"http://127.0.0.1:{self.port}"
        threading.Thread(target=self._server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def __enter__(self) -> FaultProxy:
        return self

    def __exit__(self, *_exc) -> None:
        self.close()

    def draw(self, method: str, path: str) -> str | None:
        """The fault for this request, or None: seeded, one draw per request in arrival order."""
        with self._lock:
            self.requests += 1
            query = path.partition("?")[2]
            upload = query.split("uploadId=")[1].split("&")[0] if "uploadId=" in query else None
            if self.abandon_multipart and upload is not None and self._abandoning not in (None, upload):
                self.abandon_multipart, self._abandoning = False, None  # the next upload: off again
            if self.abandon_multipart and upload is not None:
                # its parts after the first fail, and so does the client's abort: the upload stays
                # open on the server, as one whose host died mid-upload
                if self._abandoning is None and method == "PUT" and "partNumber=1" not in query.split("&"):
                    self._abandoning = upload
                    self.counts["abandon_multipart"] += 1
                if self._abandoning == upload and method in ("PUT", "DELETE"):
                    return "error500"
            if not self.armed or self.rng.random() >= self.rate:
                return None
            kind = self.kinds[sum(self.counts[k] for k in self.kinds) % len(self.kinds)]  # in turn: all
            self.counts[kind] += 1
            return kind

    def abandon_next(self) -> None:
        """Leave the next multipart upload open half-way (module doc); one upload, then off."""
        with self._lock:
            self.abandon_multipart, self._abandoning = True, None

    def _handler(self):
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *_a) -> None:
                pass

            def _any(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                with proxy._lock:
                    proxy.bytes_up += len(body)
                if proxy.hook is not None:
                    proxy.hook(self.command, self.path)
                fault = proxy.draw(self.command, self.path)
                if fault in ("error500", "slowdown"):
                    code, message, status = (
                        ("InternalError", "We encountered an internal error.", 500)
                        if fault == "error500"
                        else ("SlowDown", "Please reduce your request rate.", 503)
                    )
                    self._answer(status, _ERROR.format(code=code, message=message).encode())
                    return
                if fault == "stall":
                    time.sleep(proxy.stall)
                    self.close_connection = True
                    return
                status, headers, data = self._forward(body)
                if self.command == "HEAD":  # no body: the upstream's own Content-Length stands
                    self.send_response_only(status)
                    for k, v in headers:
                        if k.lower() not in ("connection", "keep-alive", "transfer-encoding"):
                            self.send_header(k, v)
                    self.send_header("Connection", "close")
                    self.end_headers()
                    self.close_connection = True
                    return
                if fault == "reset":
                    self._head(status, headers, len(data))
                    self.wfile.write(data[: len(data) // 2])
                    self.wfile.flush()
                    self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                    self.close_connection = True
                    return
                self._head(status, headers, len(data))
                self.wfile.write(data)
                with proxy._lock:
                    proxy.bytes_down += len(data)

            def _forward(self, body: bytes):
                conn = http.client.HTTPConnection(*proxy.upstream, timeout=60)
                try:
                    headers = {k: v for k, v in self.headers.items() if k.lower() not in ("connection", "keep-alive")}
                    conn.request(self.command, self.path, body=body if body else None, headers=headers)
                    r = conn.getresponse()
                    return r.status, r.getheaders(), r.read()
                finally:
                    conn.close()

            def _head(self, status: int, headers, length: int) -> None:
                self.send_response_only(status)
                for k, v in headers:
                    if k.lower() not in ("connection", "keep-alive", "content-length", "transfer-encoding"):
                        self.send_header(k, v)
                self.send_header("Content-Length", str(length))
                self.send_header("Connection", "close")
                self.end_headers()
                self.close_connection = True

            def _answer(self, status: int, body: bytes) -> None:
                self._head(status, [("Content-Type", "application/xml")], len(body))
                self.wfile.write(body)

            do_GET = do_PUT = do_POST = do_DELETE = do_HEAD = _any

        return Handler
