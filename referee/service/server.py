"""Running the app: uvicorn on one host and port, stopped by SIGTERM or Ctrl-C like a return.

uvicorn shuts down gracefully on either signal (open requests finish, idle keep-alive connections
close, the app's background jobs are cancelled, at most ``GRACE`` seconds) and then raises the
signal again, so the process dies of it before the caller can close its files. Here a stop signal
ends ``run`` normally instead: the caller closes the runs file and the command exits 0 — a service
asked to stop has done its job.
"""

from __future__ import annotations

import contextlib
import signal
import socket
import threading

import uvicorn

GRACE = 5
# asyncio's own loop, not uvloop: under load uvloop left new connections in the kernel's accept queue
# for seconds (a new player's first request waited 2-11 s at 256 players; asyncio's loop: 0.2-0.4 s,
# for the same throughput within 7%; DECISIONS, issue 52)
LOOP = "asyncio"


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
    config = uvicorn.Config(
        app,
        host=opts.host,
        port=opts.port,
        loop=LOOP,
        log_level="warning",
        access_log=False,
        timeout_graceful_shutdown=GRACE,
        proxy_headers=True,
        forwarded_allow_ips=opts.trust_proxy,
    )
    _Server(config).run()


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
        config = uvicorn.Config(
            "referee.service.worker:app",
            factory=True,
            host=opts.host,
            port=opts.port,
            workers=opts.workers,
            loop=LOOP,
            log_level="warning",
            access_log=False,
            timeout_graceful_shutdown=GRACE,
            proxy_headers=True,
            forwarded_allow_ips=opts.trust_proxy,
        )
        with _reserve(opts.host, opts.port) as sock:
            Multiprocess(config, sockets=[sock]).run()
    finally:
        shutil.rmtree(metrics_dir, ignore_errors=True)
