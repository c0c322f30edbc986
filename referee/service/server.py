"""Running the app: uvicorn on one host and port, stopped by SIGTERM or Ctrl-C like a return.

uvicorn shuts down gracefully on either signal (open requests finish, idle keep-alive connections
close, the app's background jobs are cancelled, at most ``GRACE`` seconds) and then raises the
signal again, so the process dies of it before the caller can close its files. Here a stop signal
ends ``run`` normally instead: the caller closes the runs file and the command exits 0 — a service
asked to stop has done its job.

uvicorn answers a few requests itself, before or around the app: a request it cannot parse (a
malformed request line, an unknown method, a bad header line: 400) and an app that ended without an
answer (500). ``SecuredHttp`` makes those carry ``security.HEADERS`` like every answer of the app.
WebSockets are off (``ws="none"``): the service has none, and a handshake refused by uvicorn's own
WebSocket code would be one more answer written outside the app; an ``Upgrade`` request is an
ordinary request the app answers.
"""

from __future__ import annotations

import contextlib
import logging
import signal
import socket
import threading
from collections.abc import Callable
from typing import Any

import uvicorn
from starlette.types import ASGIApp
from uvicorn.protocols.http.httptools_impl import STATUS_LINE, HttpToolsProtocol

from referee.service.security import HEADERS

GRACE = 5
# asyncio's own loop, not uvloop: under load uvloop left new connections in the kernel's accept queue
# for seconds (a new player's first request waited 2-11 s at 256 players; asyncio's loop: 0.2-0.4 s,
# for the same throughput within 7%; DECISIONS, issue 52)
LOOP = "asyncio"
_SECURITY = [(name.lower().encode("latin-1"), value.encode("latin-1")) for name, value in HEADERS]
_INVALID = b'{"error":"invalid HTTP request"}'
_CRASHED = b'{"error":"internal error"}'


class SecuredHttp(HttpToolsProtocol):
    """uvicorn's HTTP/1.1 protocol (httptools, what uvicorn picks where it is installed), whose own
    answers carry ``security.HEADERS`` (module doc) and are the service's one-line JSON errors: the
    400 it writes straight to the connection, and the 500 it would send for an app that ended
    before answering (``_answered`` sends that one first, through the connection's own ``send``)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.app = _answered(self.app, self.logger, lambda: self.transport.is_closing())

    def send_400_response(self, msg: str) -> None:
        """A request httptools could not parse (``msg``, uvicorn's words, is in its log line already):
        400 with the headers, written straight to the connection as uvicorn writes it, then closed."""
        head = [*self.server_state.default_headers, *_SECURITY, *_json_headers(_INVALID)]
        self.transport.write(b"".join([STATUS_LINE[400], *(b"%s: %s\r\n" % kv for kv in head), b"\r\n", _INVALID]))
        self.transport.close()


def _answered(app: ASGIApp, logger: logging.Logger, gone: Callable[[], bool]) -> ASGIApp:
    """``app``, with the 500 uvicorn would send for a request it ended without starting an answer to
    (raising, or returning while the client is still there: not ``gone()``) sent here instead, with
    the headers; an exception still goes on to uvicorn, which logs it and closes the connection."""

    async def guarded(scope, receive, send) -> None:
        started = False

        async def watched(message) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await app(scope, receive, watched)
        except BaseException:
            if scope["type"] == "http" and not started:
                await _crashed(send)
            raise
        if scope["type"] == "http" and not started and not gone():
            logger.error("ASGI callable returned without starting response.")
            await _crashed(send)

    return guarded


async def _crashed(send) -> None:
    """The 500 of an app that ended without an answer: one JSON line, the headers, the connection closed."""
    await send({"type": "http.response.start", "status": 500, "headers": [*_SECURITY, *_json_headers(_CRASHED)]})
    await send({"type": "http.response.body", "body": _CRASHED, "more_body": False})


def _json_headers(body: bytes) -> list[tuple[bytes, bytes]]:
    """The headers of a JSON error ``body`` that ends its connection."""
    return [(b"content-type", b"application/json"), (b"content-length", b"%d" % len(body)), (b"connection", b"close")]


def _config(opts) -> dict[str, Any]:
    """What both ways of serving give ``uvicorn.Config`` beside the app (module doc)."""
    return {
        "host": opts.host,
        "port": opts.port,
        "loop": LOOP,
        "http": SecuredHttp,
        "ws": "none",
        "server_header": False,  # no "server: uvicorn": what runs here is no client's business
        "log_level": "warning",
        "access_log": False,
        "timeout_graceful_shutdown": GRACE,
        "proxy_headers": True,
        "forwarded_allow_ips": opts.trust_proxy,
    }


class _Server(uvicorn.Server):
    @contextlib.contextmanager
    def capture_signals(self):
        if threading.current_thread() is not threading.main_thread():
            yield
            return
        old = {s: signal.signal(s, self.handle_exit) for s in (signal.SIGINT, signal.SIGTERM)}
        try:
            yield
        finally:
            for s, handler in old.items():
                signal.signal(s, handler)


def run(app, opts) -> None:
    """Serve ``app`` on ``opts`` (``ServeOptions``: host, port, the proxies trusted) until a stop signal
    (see the module doc)."""
    _Server(uvicorn.Config(app, **_config(opts))).run()


class _OwnListener(socket.socket):
    """The supervisor's socket, bound to the service's address with ``SO_REUSEPORT`` and never
    listening: it holds the port (a port 0 becomes a real one) while each worker, given it, makes a
    listening socket of its own on the same address (``__reduce__``: what a worker unpickles is a
    new socket, not this one). The kernel then spreads new connections over the workers' sockets.
    One socket shared by every worker (uvicorn's way) let whichever worker woke first accept a whole
    burst: 232 of 256 players on one of two workers, measured (DECISIONS, issue 52)."""

    def __reduce__(self):
        return _listener, (self.family, self.getsockname())


def _listener(family: int, address: tuple, kind: type[socket.socket] = socket.socket) -> socket.socket:
    """A socket of ``kind`` bound to ``address`` in the ``SO_REUSEPORT`` group of the service's address
    (a worker's: uvicorn's ``create_server`` makes it listen; the supervisor's ``_OwnListener``)."""
    sock = kind(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
    sock.bind(address)
    return sock


def _reserve(host: str, port: int) -> socket.socket:
    return _listener(socket.AF_INET6 if ":" in host else socket.AF_INET, (host, port), _OwnListener)


def run_workers(opts) -> None:
    """Serve with ``opts.workers`` uvicorn worker processes, each building its app from ``opts``
    (``referee.service.worker.app``) and listening on a socket of its own (``_OwnListener``);
    uvicorn's supervisor restarts a worker that dies and stops them all on SIGTERM or Ctrl-C. The
    workers' metrics go to one private temporary folder (prometheus-client's multiprocess mode:
    ``observe``), made here before any worker starts and removed when they have all stopped, so a
    scrape of any worker counts every worker of this serve and nothing of an earlier one."""
    import os
    import shutil
    import tempfile

    from uvicorn.supervisors import Multiprocess

    from referee.service.observe import MULTIPROC_ENV
    from referee.service.worker import ENV

    os.environ[ENV] = opts.to_env()
    metrics_dir = tempfile.mkdtemp(prefix="tiles-metrics-")  # mode 0700: this user's only
    os.environ[MULTIPROC_ENV] = metrics_dir
    try:
        config = uvicorn.Config("referee.service.worker:app", factory=True, workers=opts.workers, **_config(opts))
        with _reserve(opts.host, opts.port) as sock:
            Multiprocess(config, sockets=[sock]).run()
    finally:
        shutil.rmtree(metrics_dir, ignore_errors=True)
