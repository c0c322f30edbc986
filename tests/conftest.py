"""Shared fixtures: a fresh library file per test, and the tests/ dir on sys.path for `support`."""

from __future__ import annotations

import os
import sys

import pytest
from hypothesis import settings

sys.path.insert(0, os.path.dirname(__file__))

# No tiles.toml from the working tree above (the quickstart writes one at the clone's root) reaches
# a test or its subprocesses: the tests that read a project file name it or unset this.
os.environ["TILES_CONFIG"] = ""

settings.register_profile("ci", deadline=None, max_examples=60, derandomize=True)
settings.load_profile("ci")


@pytest.fixture(scope="session", autouse=True)
def _sb3_logs_stay_in_the_session(tmp_path_factory):
    """stable-baselines3 makes a log folder per ``learn`` in the system's temp dir unless
    SB3_LOGDIR names one: the tests' (and their subprocesses') go under the session's tmp."""
    os.environ.setdefault("SB3_LOGDIR", str(tmp_path_factory.mktemp("sb3-logs")))


@pytest.fixture
def lib_path(tmp_path):
    return tmp_path / "lib.sqlite"


@pytest.fixture
def lib(lib_path):
    from tilelib.store import Library

    with Library.create(lib_path) as library:
        yield library


@pytest.fixture(scope="session")
def pg_cluster():
    """A real PostgreSQL on 127.0.0.1 for the whole session (``tests/pg_support.py``); where there is
    none, skips with one line (fails under CI: ``tests/needs.py``)."""
    import pg_support
    from needs import need

    need(pg_support.why_not())
    cluster = pg_support.Cluster().start()
    yield cluster
    cluster.cleanup()


@pytest.fixture
def pg_url(pg_cluster):
    """The URL of a fresh, empty database on the session's PostgreSQL."""
    return pg_cluster.new_database()


BACKENDS = ["sqlite", "postgresql"]


def _runs_target(request, folder):
    if request.param == "sqlite":
        return folder / "runs.sqlite"
    return request.getfixturevalue("pg_cluster").new_database()


@pytest.fixture(params=BACKENDS)
def runs_target(request, tmp_path):
    """A fresh runs database on each backend in turn: a SQLite file path, or a PostgreSQL URL."""
    return _runs_target(request, tmp_path)


@pytest.fixture(scope="module", params=BACKENDS)
def module_runs_target(request, tmp_path_factory):
    """``runs_target`` for a module-scoped service."""
    return _runs_target(request, tmp_path_factory.mktemp("runs"))


@pytest.fixture(scope="module")
def browser():
    """Debian's chromium through playwright, one per test module (``serve_support.chromium``: skipped
    locally without it, a failure under CI)."""
    from serve_support import chromium

    with chromium() as br:
        yield br


@pytest.fixture(params=["Client", "AsyncClient"])
def make_client(request):
    """The client class under test, each in turn: ``Client``, or ``AsyncClient`` driven by
    ``client_support.AwaitedClient`` (the same calls, each awaited)."""
    from client_support import AwaitedClient

    from players.client import Client

    return Client if request.param == "Client" else AwaitedClient


def _unlisted_skips(session_or_config) -> list[str]:
    """Node ids of the skipped tests ``needs.ALLOWED`` does not list, from the terminal reporter's
    tally (the one record of outcomes, read by both hooks below)."""
    from needs import allowed

    config = getattr(session_or_config, "config", session_or_config)
    reporter = config.pluginmanager.get_plugin("terminalreporter")
    skipped = reporter.stats.get("skipped", []) if reporter is not None else []
    return [r.nodeid for r in skipped if not allowed(r.nodeid)]


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    """The suite's last words: how many tests were skipped, and why; under CI a skip not listed in
    ``needs.ALLOWED`` fails the session (``pytest_sessionfinish``)."""
    from needs import under_ci

    skipped = terminalreporter.stats.get("skipped", [])
    reasons: dict[str, int] = {}
    for rep in skipped:
        reason = rep.longrepr[2] if isinstance(rep.longrepr, tuple) else str(rep.longrepr)
        reasons[reason] = reasons.get(reason, 0) + 1
    terminalreporter.write_line(f"skipped: {len(skipped)}" + (" (CI)" if under_ci() else ""))
    for reason, count in sorted(reasons.items()):
        terminalreporter.write_line(f"  {count} x {reason}")
    unlisted = _unlisted_skips(config)
    if under_ci() and unlisted:
        terminalreporter.write_line(f"skips not allowed under CI (exit 1): {', '.join(unlisted[:20])}")


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session, exitstatus):
    """Under CI, a run whose tests all passed but skipped one that is not listed exits 1. Runs before
    the summary is printed (the terminal reporter wraps this hook), so it reads the tally itself."""
    from needs import under_ci

    if under_ci() and exitstatus == 0 and _unlisted_skips(session):
        session.exitstatus = 1
