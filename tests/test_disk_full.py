"""A full disk (issue 74) is one line and exit 3 wherever the write fails — SQLite's own ("database
or disk is full") or a file the pull downloads — never a traceback; the night's log says so, the
remote is as it was, and the same build succeeds once there is room. The disk is made full for
one process by RLIMIT_FSIZE: a write that would grow a file past the limit fails with EFBIG."""

from __future__ import annotations

import errno
import os
import resource
import signal
import subprocess
import sys

import pytest

from daily import nights
from tilelib.errors import DiskFull, disk_error, exit_code


def test_disk_errors_are_one_line_of_exit_3_and_others_are_not_touched():
    for number in (errno.ENOSPC, errno.EFBIG, errno.EROFS):
        told = disk_error(OSError(number, os.strerror(number), "/srv/tiles/tiles.sqlite"))
        assert isinstance(told, DiskFull) and exit_code(told) == 3
        assert "/srv/tiles/tiles.sqlite" in str(told) and os.strerror(number) in str(told)
    assert disk_error(OSError(errno.ENOENT, "No such file")) is None
    assert disk_error(ConnectionResetError(errno.ECONNRESET, "reset")) is None
    assert disk_error(ValueError("x")) is None


def _full(limit: int):
    def pre() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    return pre


@pytest.mark.parametrize("lost", [False, True], ids=["sqlite-write", "pull-download"])
def test_a_build_on_a_full_disk_fails_in_one_line_and_the_next_succeeds(tmp_path, lost):
    remote = tmp_path / "remote"
    remote.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith("TILES_")}
    env.update(TILES_SECRET="disk-full-test", TILES_REMOTE=f"file://{remote}")

    def build(day: str, lib: str, limit: int = 0) -> subprocess.CompletedProcess:
        cmd = [sys.executable, "-m", "tiles_cli.app", "daily", "build", "--date", day, "--size", "41", "-L", lib]
        return subprocess.run(
            cmd + ["--out", "."],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            preexec_fn=_full(limit) if limit else None,
        )

    assert build("2027-01-01", "a.sqlite").returncode == 0
    head = (remote / "HEAD.json").read_bytes()
    lib = "b.sqlite" if lost else "a.sqlite"  # lost: a new host's first build downloads the remote's snapshot
    full = build("2027-01-02", lib, limit=16 * 1024)
    assert full.returncode == 3, full.stderr
    assert "Traceback" not in full.stderr and full.stderr.count("tiles: error:") == 1
    assert "disk" in full.stderr.splitlines()[-1] or "File too large" in full.stderr
    assert (remote / "HEAD.json").read_bytes() == head  # the remote as it was
    runs = nights.read(tmp_path / lib)
    assert runs[-1].exit == 3 and runs[-1].day == "2027-01-02"
    again = build("2027-01-02", lib)
    assert again.returncode == 0, again.stderr
    assert nights.status(nights.read(tmp_path / lib)).failed_since == ()
