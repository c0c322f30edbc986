"""What ``tiles referee serve`` runs, as one typed value: ``ServeOptions`` made once from the command
line, ``check_address`` (the command's listening address, tried before anything is written),
``open_service`` (the days' boards, then the runs database, so a bad argument leaves no file
behind; then the app), and ``app``, the factory each of ``--workers N`` processes calls.

With one worker the command calls ``open_service`` and serves the app in its own process. With
more, it opens the service once to check everything (a bad manifest or database is one line and
its exit code, before any worker starts), lets it go, and hands the same options to uvicorn's
workers through ``ENV``: each opens its own connection and loads each day's board once. No state
that matters lives in a worker (``referee.service.runs``), so any worker may answer any request.
"""

from __future__ import annotations

import atexit
import os
import sys
from collections.abc import Callable
from pathlib import Path

from referee.service.options import ServeOptions

ENV = "TILES_SERVE_OPTIONS"


def check_address(host: str, port: int) -> None:
    """BadInput unless this process may listen on ``host``:``port`` now: the name resolves, the port
    is free and allowed. Bound and let go at once, before anything is written, so a bad ``--host`` or
    ``--port`` is one line and exit 2 (uvicorn binds it again when it starts: a port taken in between
    is its own error then)."""
    import socket

    from tilelib.errors import BadInput

    try:
        family, kind, proto, _, addr = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)[
            0
        ]
    except (socket.gaierror, UnicodeError) as e:
        raise BadInput(f"--host {host[:80]!r}: cannot resolve it ({getattr(e, 'strerror', None) or e})") from None
    with socket.socket(family, kind, proto) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as uvicorn binds
        try:
            s.bind(addr)
        except OSError as e:
            raise BadInput(f"cannot listen on {host}:{port}: {e.strerror or e}") from None


def open_service(opts: ServeOptions, say: Callable[[str], None] | None = None, log: Callable[[str], None] = print):
    """(app, store) of ``opts``: the days loaded from the library (read only), then the runs database
    opened (created and migrated if new), then the app made. The runs database comes last so that a
    bad library, manifest or day leaves no file behind. ``say`` gets a line per day loaded once all is
    open (the command's start-up report: a refused start says only its error), ``log`` the service's
    own lines (the watcher's, a client gone)."""
    from referee.service import watch
    from referee.service.app import create_app
    from referee.service.boards import load_days, settle
    from referee.service.runs import RunStore
    from tilelib.store import Library

    with Library.open(Path(opts.library)) as lib:
        days = load_days(lib, opts.runs, [Path(m) for m in opts.manifests] or None, list(opts.days) or None)
    store = RunStore(opts.runs, days, opts.quotas())
    try:
        for d, db in sorted(days.items()):
            if say is not None:
                say(f"{d}: G={db.board.G}, {len(db.board.squares)} tiles")
        jobs = (
            []
            if opts.manifests or opts.days
            else [lambda: watch.watch(store, Path(opts.library), opts.runs, log, opts.poll)]
        )
        app = create_app(
            store,
            max_body=opts.max_body,
            max_moves=opts.max_moves,
            background=jobs,
            host=opts.host,
            log=log,
            access_log=opts.access_log,
        )
    except BaseException:
        store.close()
        raise
    settle()
    return app, store


def app():
    """The app of one worker process (uvicorn's factory): options from ``ENV``."""
    opts = ServeOptions.from_env(os.environ[ENV])
    pid = os.getpid()
    application, store = open_service(
        opts, log=lambda line: print(f"tiles referee serve [{pid}]: {line}", file=sys.stderr, flush=True)
    )
    atexit.register(store.close)
    return application
