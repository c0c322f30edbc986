"""A backup of a runs database taken while the service writes it (``tiles referee backup``, DEPLOY).

- A SQLite runs file: SQLite's online backup (``sqlite3.Connection.backup`` in one step), which
  copies one consistent snapshot while the service goes on writing (WAL: the copy holds a read
  transaction, writers are not blocked). The copy is itself a runs file in rollback-journal mode,
  checked (``PRAGMA integrity_check``) before it is moved into place; restoring is putting it back
  where ``--runs`` points while the service is stopped.
- A ``postgresql://`` URL: ``pg_dump --format=custom`` of that database (one snapshot transaction;
  writers are not blocked), restored with ``pg_restore`` into a fresh database.

The backup is built beside ``out`` and linked into place only when complete, so ``out`` is either
the whole backup or absent; an ``out`` that exists is refused (BadInput, exit 2) and left as it is.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
import subprocess
from dataclasses import asdict, dataclass
from pathlib import Path

from referee.runsdb import is_url
from referee.runsdb.schema import RUNS_KIND
from tilelib.db import connect
from tilelib.errors import BadInput, CorruptLibrary, DatabaseUnavailable
from tilelib.fsio import check_placeable, staged

PG_TIMEOUT = 3600  # seconds pg_dump may take


@dataclass(frozen=True)
class Backup:
    """What one backup wrote: the file, the backend, its size, and (SQLite) what the copy holds."""

    out: str
    backend: str  # "sqlite" | "postgresql"
    bytes: int
    runs: int | None = None  # rows in the copy (SQLite: read back from the backup itself)
    moves: int | None = None

    def as_dict(self) -> dict:
        return asdict(self)


def backup(target: str | Path, out: str | Path) -> Backup:
    """Back up the runs database ``target`` (a file or a postgresql:// URL) into the new file ``out``."""
    out = Path(out)
    check_placeable(out, "--out")
    if out.exists() or out.is_symlink():
        raise BadInput(f"--out {out} exists; refusing to overwrite it (name a new file)")
    if is_url(target):
        return _pg_dump(str(target), out)
    return _sqlite(Path(target), out)


def _sqlite(src_path: Path, out: Path) -> Backup:
    if not src_path.is_file() or src_path.stat().st_size == 0:
        raise BadInput(f"--runs {src_path}: no runs file there")
    src = connect(src_path, timeout=30)  # read only in use; a WAL file's reader may need its -shm
    try:
        try:
            kind = src.execute("SELECT value FROM meta WHERE key = 'kind'").fetchone()
        except sqlite3.DatabaseError:
            kind = None
        if kind is None or kind[0] != RUNS_KIND:
            raise BadInput(f"--runs {src_path} is not a runs file (no meta kind {RUNS_KIND!r})")
        with staged(out, replace=False) as tmp:
            dst = connect(tmp)
            try:
                src.backup(dst)  # pages=-1: the whole file from one snapshot
                dst.execute("PRAGMA journal_mode=DELETE")  # one self-contained file, no -wal beside it
                problems = [r[0] for r in dst.execute("PRAGMA integrity_check").fetchall()]
                if problems != ["ok"]:
                    raise CorruptLibrary(f"the backup of {src_path} fails its integrity check: {problems[0]}")
                (runs,) = dst.execute("SELECT count(*) FROM runs").fetchone()
                (moves,) = dst.execute("SELECT count(*) FROM moves").fetchone()
            finally:
                dst.close()
            size = tmp.stat().st_size
    except sqlite3.DatabaseError as e:
        raise CorruptLibrary(f"--runs {src_path}: cannot back it up ({e})") from e
    finally:
        src.close()
    return Backup(str(out), "sqlite", size, runs, moves)


def _pg_dump(url: str, out: Path) -> Backup:
    exe = shutil.which("pg_dump")
    if exe is None:
        raise BadInput(
            "pg_dump is not installed (PostgreSQL's client tools); it makes the backup of a postgresql:// runs database"
        )
    from psycopg.conninfo import conninfo_to_dict, make_conninfo

    try:
        params = conninfo_to_dict(url)
    except Exception as e:  # psycopg.ProgrammingError: a malformed URL
        raise BadInput(f"--runs: not a usable postgresql:// URL ({e})") from None
    env = dict(os.environ)
    if "password" in params:  # to pg_dump by its environment, not on a command line others can read
        env["PGPASSWORD"] = str(params.pop("password"))  # libpq parses every value of a URL as text
    with staged(out, replace=False) as tmp:
        try:
            r = subprocess.run(
                [exe, "--format=custom", "--no-owner", "--file", str(tmp), "--dbname", make_conninfo("", **params)],
                capture_output=True,
                text=True,
                timeout=PG_TIMEOUT,
                env=env,
            )
        except subprocess.TimeoutExpired:
            raise DatabaseUnavailable(f"pg_dump did not finish within {PG_TIMEOUT} s") from None
        if r.returncode != 0:
            lines = [ln for ln in r.stderr.splitlines() if ln.strip()]
            raise DatabaseUnavailable(f"pg_dump failed: {lines[-1] if lines else f'exit {r.returncode}'}")
        size = tmp.stat().st_size
    return Backup(str(out), "postgresql", size)
