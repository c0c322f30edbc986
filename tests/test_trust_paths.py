"""Issue 69, part 6: paths. Nothing is created through a planted link, and an output that cannot be
written is refused before the first row is.

- A library path that is a symbolic link (dangling, or to an empty file) is refused by every
  command that would create or replace the library there — ``library init``, ``library pull``,
  ``daily build`` — in one line, exit 2, and nothing appears at the link's target.
- A file:// remote whose own folder (``snapshots/``) or file (``HEAD.json``) is a symbolic link is
  refused (exit 4) by push and pull, and nothing is written outside the remote.
- An output folder that takes no file (a read-only mount; for a user who is not root, a folder
  without write permission) makes ``daily build`` exit 2 before any tile or miss is stored.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
from cli_support import run_tiles
from remote_support import make_library, tile_hashes
from s3_server import moto, remote_url, s3_env  # noqa: F401  (fixtures)

SEED = "ab" * 32


@pytest.fixture
def dangling(tmp_path) -> Path:
    link = tmp_path / "lib.sqlite"
    link.symlink_to(tmp_path / "elsewhere" / "target.sqlite")
    (tmp_path / "elsewhere").mkdir()
    return link


def one_line(r, code: int) -> None:
    errors = [line for line in r.stderr.splitlines() if line.startswith("tiles: error")]
    assert r.returncode == code and len(errors) == 1 and "Traceback" not in r.stderr, r.stderr


def test_init_refuses_a_dangling_link(dangling):
    r = run_tiles("library", "init", "-L", str(dangling))
    one_line(r, 2)
    assert "symbolic link" in r.stderr and not (dangling.parent / "elsewhere" / "target.sqlite").exists()


def test_pull_refuses_a_dangling_link(dangling, tmp_path, remote_url):
    src = tmp_path / "src.sqlite"
    make_library(src, 1, 10)
    url = remote_url
    if url.startswith("file://"):
        Path(url[7:]).mkdir()
    assert run_tiles("library", "push", "-L", str(src), "--remote", url, inherit=True).returncode == 0
    r = run_tiles("library", "pull", "-L", str(dangling), "--remote", url, inherit=True)
    one_line(r, 2)
    assert not (dangling.parent / "elsewhere" / "target.sqlite").exists()
    assert list((dangling.parent / "elsewhere").iterdir()) == []


def test_pull_refuses_a_link_to_an_empty_file(tmp_path):
    target = tmp_path / "empty.sqlite"
    target.write_bytes(b"")
    link = tmp_path / "lib.sqlite"
    link.symlink_to(target)
    src = tmp_path / "src.sqlite"
    make_library(src, 2, 5)
    (tmp_path / "remote").mkdir()
    url = f"file://{tmp_path / 'remote'}"
    assert run_tiles("library", "push", "-L", str(src), "--remote", url).returncode == 0
    one_line(run_tiles("library", "pull", "-L", str(link), "--remote", url), 2)
    assert target.read_bytes() == b""


def test_build_refuses_a_dangling_link(dangling, tmp_path):
    r = run_tiles("daily", "build", "-L", str(dangling), "--out", str(tmp_path / "out"), "--size", "21", "--seed", SEED)
    one_line(r, 2)
    assert list((dangling.parent / "elsewhere").iterdir()) == []


def test_a_library_through_a_link_to_a_real_file_still_opens(tmp_path):
    """The other side: a link to an existing library is used, not refused (nothing is created)."""
    real = tmp_path / "real.sqlite"
    make_library(real, 3, 5)
    link = tmp_path / "link.sqlite"
    link.symlink_to(real)
    assert run_tiles("library", "verify", "-L", str(link)).returncode == 0


@pytest.mark.parametrize("planted", ["snapshots", "HEAD.json"])
def test_a_file_remote_whose_own_folder_or_file_is_a_link_is_refused(tmp_path, planted):
    lib = tmp_path / "lib.sqlite"
    make_library(lib, 4, 8)
    remote, outside = tmp_path / "remote", tmp_path / "outside"
    remote.mkdir()
    outside.mkdir()
    url = f"file://{remote}"
    if planted == "snapshots":
        (remote / "snapshots").symlink_to(outside)
    else:
        good = tmp_path / "good"
        good.mkdir()
        assert run_tiles("library", "push", "-L", str(lib), "--remote", f"file://{good}").returncode == 0
        shutil.copytree(good / "snapshots", remote / "snapshots")
        (outside / "HEAD.json").write_bytes((good / "HEAD.json").read_bytes())
        (remote / "HEAD.json").symlink_to(outside / "HEAD.json")
    before = sorted(p.name for p in outside.iterdir())
    r = run_tiles("library", "push", "-L", str(lib), "--remote", url)
    one_line(r, 4)
    assert "symbolic link" in r.stderr and planted in r.stderr
    assert sorted(p.name for p in outside.iterdir()) == before
    one_line(run_tiles("library", "pull", "-L", str(tmp_path / "fresh.sqlite"), "--remote", url), 4)
    assert not (tmp_path / "fresh.sqlite").exists()


@pytest.fixture
def read_only_dir(tmp_path):
    """A folder that takes no new file: a read-only tmpfs mount for root (who ignores permission bits),
    a folder without write permission for anyone else."""
    d = tmp_path / "ro"
    d.mkdir()
    if os.geteuid() != 0:
        d.chmod(0o555)
        yield d
        d.chmod(0o755)
        return
    subprocess.run(["mount", "-t", "tmpfs", "-o", "ro,size=1m", "tmpfs", str(d)], check=True)
    try:
        yield d
    finally:
        subprocess.run(["umount", str(d)], check=False)


def test_a_build_into_a_read_only_folder_writes_nothing(tmp_path, read_only_dir):
    lib = tmp_path / "lib.sqlite"
    make_library(lib, 5, 20)
    before = lib.read_bytes()
    r = run_tiles("daily", "build", "-L", str(lib), "--out", str(read_only_dir), "--size", "21", "--seed", SEED)
    one_line(r, 2)
    assert "cannot write" in r.stderr and str(read_only_dir) in r.stderr
    assert lib.read_bytes() == before and tile_hashes(lib)
    r = run_tiles("daily", "build", "-L", str(lib), "--out", str(read_only_dir / "day"), "--size", "21", "--seed", SEED)
    one_line(r, 2)
    assert lib.read_bytes() == before
