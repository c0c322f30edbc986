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
import threading

import uvicorn

GRACE = 5


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
    config = uvicorn.Config(app, host=opts.host, port=opts.port, log_level="warning", access_log=False,
                            timeout_graceful_shutdown=GRACE, proxy_headers=True,
                            forwarded_allow_ips=opts.trust_proxy)
    _Server(config).run()


def run_workers(opts) -> None:
    """Serve with ``opts.workers`` uvicorn worker processes, each building its app from ``opts``
    (``referee.service.worker.app``); uvicorn's supervisor restarts a worker that dies and stops
    them all on SIGTERM or Ctrl-C. The workers' metrics go to one private temporary folder
    (prometheus-client's multiprocess mode: ``observe``), made here before any worker starts and
    removed when they have all stopped, so a scrape of any worker counts every worker of this serve
    and nothing of an earlier one."""
    import os
    import shutil
    import tempfile

    from referee.service.observe import MULTIPROC_ENV
    from referee.service.worker import ENV

    os.environ[ENV] = opts.to_env()
    metrics_dir = tempfile.mkdtemp(prefix="tiles-metrics-")       # mode 0700: this user's only
    os.environ[MULTIPROC_ENV] = metrics_dir
    try:
        uvicorn.run("referee.service.worker:app", factory=True, host=opts.host, port=opts.port,
                    workers=opts.workers, log_level="warning", access_log=False, timeout_graceful_shutdown=GRACE,
                    proxy_headers=True, forwarded_allow_ips=opts.trust_proxy)
    finally:
        shutil.rmtree(metrics_dir, ignore_errors=True)
