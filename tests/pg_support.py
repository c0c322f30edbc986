"""A real PostgreSQL for the tests: a throwaway cluster started with the system's ``initdb`` and
``pg_ctl`` on 127.0.0.1 and a free port, trusted on loopback only, data in a temporary folder.

``initdb`` refuses root, so as root the cluster runs as the ``postgres`` user (Debian's package
makes it). Where there is no PostgreSQL the fixtures skip with a one-line reason, and fail under CI
(``tests/needs.py``; ``scripts/test.sh`` installs it with apt when it can). No mocks: every PostgreSQL test talks
to this server.
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path

USER = "tiles"


def pg_bin() -> Path | None:
    """The folder of ``initdb`` and ``pg_ctl``: on PATH, else Debian's newest /usr/lib/postgresql/N/bin."""
    found = shutil.which("initdb")
    if found:
        return Path(os.path.realpath(found)).parent
    dirs = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=lambda p: int(p.split("/")[4]))
    return Path(dirs[-1]).parent if dirs else None


def why_not() -> str | None:
    """None if a cluster can be started here, else the one-line reason the PostgreSQL tests skip.
    ``TILES_TEST_WITHOUT=postgresql`` plays a machine without it (tests/test_skips.py)."""
    if "postgresql" in os.environ.get("TILES_TEST_WITHOUT", "").split(","):
        return "PostgreSQL is hidden from this run (TILES_TEST_WITHOUT=postgresql)"
    if pg_bin() is None:
        return "PostgreSQL is not installed (no initdb; scripts/test.sh installs it with apt)"
    if os.geteuid() == 0:
        try:
            pwd.getpwnam("postgres")
        except KeyError:
            return "running as root and there is no 'postgres' user to run initdb as"
    try:
        import psycopg  # noqa: F401
    except ImportError:
        return "psycopg is not installed"
    return None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Cluster:
    """One PostgreSQL server: ``start``, ``restart`` (fast), ``stop``; ``url(db)`` and ``new_database``."""

    def __init__(self, durable: bool = False) -> None:
        self.durable = durable  # fsync and full-page writes on, as a production server runs (benches)
        self.bin = pg_bin()
        self.root = Path(tempfile.mkdtemp(prefix="tiles-pg-"))
        os.chmod(self.root, 0o755)
        self.data, self.sock, self.log = self.root / "data", self.root / "sock", self.root / "server.log"
        self.sock.mkdir()
        self.port = _free_port()
        self._as = {}
        if os.geteuid() == 0:
            pw = pwd.getpwnam("postgres")
            for p in (self.root, self.sock):
                os.chown(p, pw.pw_uid, pw.pw_gid)
            self._as = {"user": pw.pw_uid, "group": pw.pw_gid, "extra_groups": []}
        self._count = 0

    def _pg(self, *args: str, check: bool = True) -> subprocess.CompletedProcess:
        return subprocess.run(
            [str(self.bin / args[0]), *args[1:]],
            capture_output=True,
            text=True,
            check=check,
            timeout=120,
            cwd=self.root,
            **self._as,
        )

    def start(self) -> Cluster:
        if not self.data.exists():
            self._pg(
                "initdb", "-D", str(self.data), "-U", USER, "--auth=trust", "-E", "UTF8", "--no-sync", "--locale=C"
            )
        # fsync off (unless durable): a commit still reaches the kernel before it returns
        # (synchronous_commit stays on), so it survives a crash of the server (``restart("immediate")``),
        # only not one of the machine
        sync = "" if self.durable else "-c fsync=off -c full_page_writes=off "
        opts = f"-p {self.port} -k {self.sock} -c listen_addresses=127.0.0.1 {sync}-c max_connections=200"
        self._pg("pg_ctl", "-D", str(self.data), "-l", str(self.log), "-o", opts, "-w", "-t", "60", "start")
        return self

    def restart(self, mode: str = "fast") -> None:
        """Stop (``fast``: connections are cut; ``immediate``: a crash) and start again."""
        self._pg("pg_ctl", "-D", str(self.data), "-m", mode, "-w", "stop")
        self.start()

    def stop(self) -> None:
        self._pg("pg_ctl", "-D", str(self.data), "-m", "fast", "-w", "stop", check=False)

    def cleanup(self) -> None:
        self.stop()
        shutil.rmtree(self.root, ignore_errors=True)

    def url(self, db: str = "postgres") -> str:
        return f"postgresql://{USER}@127.0.0.1:{self.port}/{db}"

    def new_database(self, prefix: str = "runs") -> str:
        """A fresh, empty database; its URL."""
        import psycopg

        self._count += 1
        name = f"{prefix}_{os.getpid()}_{self._count}_{int(time.time() * 1000) % 100000}"
        with psycopg.connect(self.url(), autocommit=True) as c:
            c.execute(f'CREATE DATABASE "{name}"')
        return self.url(name)


def query_runs(target, sql: str, args=()) -> list[tuple]:
    """The rows of one read of a runs database (file or URL), through the project's own interface."""
    from referee.runsdb import opened

    with opened(target) as db:
        return db.read(sql, args)
