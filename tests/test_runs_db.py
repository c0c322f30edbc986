"""The runs database (``referee.runsdb``) on both backends: the schema and its migrations, a legacy
runs file brought forward, a newer schema refused with nothing written, a wrong or unreachable
``postgresql://`` URL failing fast with one line and exit 4, and the drivers loaded only when used."""

from __future__ import annotations

import contextlib
import socket
import sqlite3
import subprocess
import sys

import pytest
from cli_support import run_tiles
from s3_server import free_port
from serve_support import silent_port

from referee.runsdb import open_runsdb, opened, schema
from tilelib.errors import DatabaseUnavailable, SchemaTooNew


def one_error_line(r) -> str:
    lines = [x for x in r.stderr.splitlines() if x.strip()]
    assert len(lines) == 1, r.stderr
    return lines[0]


def test_a_new_database_gets_every_migration_once(runs_target):
    with opened(runs_target) as db:
        assert db.read("SELECT version FROM schema_migrations ORDER BY version") == [(1,), (2,), (3,), (4,), (5,)]
        assert db.read("SELECT value FROM meta WHERE key = 'kind'") == [(schema.RUNS_KIND,)]
    with opened(runs_target) as db:  # opening again applies nothing
        assert db.read("SELECT count(*) FROM schema_migrations") == [(5,)]


def test_a_legacy_runs_file_is_migrated_with_its_move_counts(tmp_path):
    """A file written before migrations were recorded (version 1's tables and kind) opens as version 1
    and gains ``runs.nmoves``, counted from its moves."""
    p = tmp_path / "old.sqlite"
    conn = sqlite3.connect(p)
    conn.executescript(";\n".join(schema.statements(schema.MIGRATIONS[0][1], "sqlite")) + ";")
    conn.execute("INSERT INTO runs VALUES ('a', 'b', '2026-01-01', 1)")
    conn.executemany(
        "INSERT INTO moves (run, tile, cells, accepted, correct, reward, reason, at) "
        "VALUES ('a', ?, '', 1, 1, 36, NULL, 1)",
        [(t,) for t in range(3)],
    )
    conn.commit()
    conn.close()
    with opened(p) as db:
        assert db.read("SELECT run, nmoves, requests, cleared_requests FROM runs") == [("a", 3, 0, None)]
        assert db.read("SELECT version FROM schema_migrations ORDER BY version") == [(1,), (2,), (3,), (4,), (5,)]


def _newer(target) -> None:
    with opened(target) as db:
        db.atomic(
            lambda tx: tx.rows("INSERT INTO schema_migrations (version, applied) VALUES (?, 0)", (schema.LATEST + 1,))
        )


def _raw_versions(target) -> list[int]:
    """The recorded versions, read around the project's interface (which refuses a newer schema)."""
    sql = "SELECT version FROM schema_migrations ORDER BY version"
    if isinstance(target, str):
        import psycopg

        with psycopg.connect(target) as c:
            return [v for (v,) in c.execute(sql)]
    with sqlite3.connect(target) as c:
        return [v for (v,) in c.execute(sql)]


def test_a_newer_schema_is_refused_and_nothing_written(runs_target, tmp_path):
    _newer(runs_target)
    before = _raw_versions(runs_target)
    assert before == list(range(1, schema.LATEST + 2))  # every version, and one past this code's
    raw = runs_target.read_bytes() if not isinstance(runs_target, str) else None
    with pytest.raises(SchemaTooNew, match="newer than this code"):
        open_runsdb(runs_target)
    r = run_tiles("referee", "score", "--runs", str(runs_target))
    assert r.returncode == 3 and "upgrade tiles" in one_error_line(r)
    lib = tmp_path / "lib.sqlite"
    run_tiles("library", "init", "-L", str(lib))
    r = run_tiles("referee", "serve", "-L", str(lib), "--runs", str(runs_target), "--port", str(free_port()))
    assert r.returncode == 3 and "newer than this code" in one_error_line(r)
    assert _raw_versions(runs_target) == before
    if raw is not None:
        assert runs_target.read_bytes() == raw


def test_a_database_that_is_something_else_is_refused_untouched(pg_cluster):
    url = pg_cluster.new_database("other")
    import psycopg

    with psycopg.connect(url, autocommit=True) as c:
        c.execute("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
        c.execute("INSERT INTO meta VALUES ('kind', 'somebody-else/3')")
    r = run_tiles("referee", "score", "--runs", url)
    assert r.returncode == 2 and "not a runs database" in one_error_line(r)
    with psycopg.connect(url) as c:
        assert c.execute("SELECT to_regclass('runs')").fetchone() == (None,)


@pytest.mark.parametrize("how", ["refused", "silent", "no such database", "not a URL"])
def test_a_wrong_or_unreachable_url_fails_at_start_up_fast_with_exit_4(how, tmp_path, request):
    if how == "refused":
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        url = f"postgresql://tiles@127.0.0.1:{port}/runs"
    elif how == "silent":
        held = contextlib.ExitStack()
        request.addfinalizer(held.close)
        url = f"postgresql://tiles@127.0.0.1:{held.enter_context(silent_port())}/runs"  # hangs at start-up
    elif how == "no such database":
        url = request.getfixturevalue("pg_cluster").url("no_such_database")
    else:
        url = "postgresql://tiles@127.0.0.1:notaport/runs"
    lib = tmp_path / "lib.sqlite"
    run_tiles("library", "init", "-L", str(lib))
    r = run_tiles(  # timeout: a guard against a hang, not the claim
        "referee", "serve", "-L", str(lib), "--runs", url, "--port", str(free_port()), process=True, timeout=60
    )
    line = one_error_line(r)
    assert r.returncode == 4 and "runs database" in line, line
    with pytest.raises(DatabaseUnavailable):
        open_runsdb(url)


def test_the_database_drivers_load_only_when_used():
    code = (
        "import sys, tiles_cli.app as a\n"
        "from referee.service import runs\n"
        "assert 'psycopg' not in sys.modules, 'psycopg at import'\n"
        "print('ok')"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and r.stdout.strip() == "ok", r.stderr


def test_the_runs_file_syncs_every_commit(tmp_path):
    """An accepted move is on disk when it is answered: WAL with ``synchronous=FULL`` (2), not NORMAL (1),
    which syncs only at checkpoints (DECISIONS, "Durable when acknowledged")."""
    with opened(tmp_path / "runs.sqlite") as db:
        assert db.read("PRAGMA journal_mode") == [("wal",)]
        assert db.read("PRAGMA synchronous") == [(2,)]
