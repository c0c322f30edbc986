"""Issue 51: nothing planted beside a file redirects a write, and what is written is durable.

A hostile user of a shared directory plants symbolic links at every name a write of the project
could use — the old predictable temp names (``.<name>.<pid>.tmp``, ``<cache>.tmp<pid>``), SQLite's
journals, the build's lock, the output itself — each pointing at a file of someone else's. A build,
a bundle, a cache write and a repair then run: the planted targets are untouched (content and
existence), and the writes land where they should or are refused in one line.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest
from cli_support import run_tiles

from daily.build import BuildOptions, build
from tilelib import fsio
from tilelib.errors import BadInput

SEED = bytes.fromhex("4e0d" * 16)
DAY = "2026-11-23"


class Victim:
    """Files a planted link points at: one that exists (its bytes must stay) and one that does not
    (it must not be created)."""

    def __init__(self, root: Path) -> None:
        root.mkdir(parents=True, exist_ok=True)
        self.existing = root / "precious.txt"
        self.existing.write_bytes(b"someone else's file\n")
        self.absent = root / "not-there.txt"

    def plant(self, *names: Path) -> None:
        for i, name in enumerate(names):
            name.symlink_to(self.existing if i % 2 == 0 else self.absent)

    def untouched(self) -> bool:
        return self.existing.read_bytes() == b"someone else's file\n" and not self.absent.exists()


def test_atomic_write_never_follows_a_link_at_its_temp_name(tmp_path, monkeypatch):
    """mkstemp's O_EXCL: a link at the name it draws first is skipped, not followed."""
    v = Victim(tmp_path / "victim")
    out = tmp_path / "out.json"
    v.plant(tmp_path / ".out.json.planted1.tmp", tmp_path / ".out.json.planted2.tmp")
    monkeypatch.setattr(tempfile, "_get_candidate_names", lambda: iter(["planted1", "planted2", "fresh"]))
    fsio.atomic_write(out, "{}")
    assert out.read_text() == "{}" and v.untouched()
    assert not (tmp_path / ".out.json.fresh.tmp").exists()  # the temp file was renamed away


def test_a_link_at_the_output_itself_is_replaced_not_followed(tmp_path):
    v = Victim(tmp_path / "victim")
    out = tmp_path / "out.json"
    v.plant(out)
    fsio.atomic_write(out, "{}")
    assert not out.is_symlink() and out.read_text() == "{}" and v.untouched()


def test_data_is_fsynced_before_the_rename_and_the_directory_after(tmp_path, monkeypatch):
    events: list[str] = []
    real_fsync, real_replace = os.fsync, os.replace

    def fsync(fd):
        events.append("fsync dir" if os.path.isdir(f"/proc/self/fd/{fd}") else "fsync file")
        return real_fsync(fd)

    def replace(a, b):
        events.append("rename")
        return real_replace(a, b)

    monkeypatch.setattr(os, "fsync", fsync)
    monkeypatch.setattr(os, "replace", replace)
    fsio.atomic_write(tmp_path / "a.json", "{}")
    assert events == ["fsync file", "rename", "fsync dir"]
    events.clear()
    with fsio.staged(tmp_path / "b.sqlite") as tmp:
        tmp.write_bytes(b"x")
    assert events == ["fsync file", "rename", "fsync dir"]


def test_staged_without_replace_never_clobbers(tmp_path):
    out = tmp_path / "b.sqlite"
    with pytest.raises(BadInput, match="appeared while it was being written"):
        with fsio.staged(out, replace=False) as tmp:
            tmp.write_bytes(b"new")
            out.write_bytes(b"theirs")
    assert out.read_bytes() == b"theirs" and [p.name for p in tmp_path.iterdir()] == ["b.sqlite"]


def test_a_build_with_links_at_every_name_it_could_use_leaves_their_targets_alone(tmp_path):
    v = Victim(tmp_path / "victim")
    out, lib = tmp_path / "out", tmp_path / "lib.sqlite"
    out.mkdir()
    pid = os.getpid()
    v.plant(
        out / f".{DAY}.json.{pid}.tmp",  # the manifest's old temp name
        tmp_path / f"lib.sqlite.stock.tmp{pid}",  # the caches' old temp names
        tmp_path / f"lib.sqlite.stitch-index.tmp{pid}",
        tmp_path / f"lib.sqlite.stitch-index-fresh.tmp{pid}",
    )
    res = build(BuildOptions(day=DAY, library=lib, out_dir=out, size=21, seed=SEED), log=lambda _: None)
    assert res.manifest_path.is_file() and not res.manifest_path.is_symlink()
    assert v.untouched()


@pytest.mark.parametrize("journal", ["-journal", "-wal"])
def test_a_link_at_a_journal_is_never_written_through(tmp_path, journal):
    """SQLite opens no journal through a link; the library says so in one line (exit 3), and the
    target is untouched."""
    v = Victim(tmp_path / "victim")
    lib = tmp_path / "lib.sqlite"
    assert run_tiles("library", "init", "-L", str(lib)).returncode == 0
    for target in ("existing", "absent"):
        link = tmp_path / f"lib.sqlite{journal}"
        link.symlink_to(getattr(v, target))
        r = run_tiles("library", "generate", "-L", str(lib), "--n", "6", "--count", "2")
        assert r.returncode == 3 and r.stderr.count("\n") == 1 and "is a symbolic link" in r.stderr, r.stderr
        assert v.untouched()
        link.unlink(missing_ok=True)


def test_a_link_at_the_lock_is_refused_in_one_line(tmp_path):
    v = Victim(tmp_path / "victim")
    lib = tmp_path / "lib.sqlite"
    v.plant(tmp_path / "x", tmp_path / "lib.sqlite.lock")  # the lock points at a file that is not there
    r = run_tiles(
        "daily",
        "build",
        "-L",
        str(lib),
        "--out",
        str(tmp_path / "out"),
        "--date",
        DAY,
        "--size",
        "21",
        "--seed",
        SEED.hex(),
    )
    assert r.returncode == 2 and "symbolic link" in r.stderr and r.stderr.count("\n") == 1, r.stderr
    assert v.untouched() and not lib.exists()


def test_bundle_and_repair_leave_planted_targets_alone(tmp_path):
    v = Victim(tmp_path / "victim")
    lib = tmp_path / "lib.sqlite"
    build(BuildOptions(day=DAY, library=lib, out_dir=tmp_path / "out", size=21, seed=SEED), log=lambda _: None)
    bundle = tmp_path / "day.sqlite"
    v.plant(tmp_path / f".day.sqlite.{os.getpid()}.tmp", tmp_path / "repaired.sqlite")
    assert run_tiles("daily", "bundle", "--date", DAY, "-L", str(lib), "--out", str(bundle)).returncode == 0
    r = run_tiles("library", "repair", "-L", str(lib), "--out", str(tmp_path / "repaired.sqlite"))
    assert r.returncode == 2 and "exists" in r.stderr
    assert bundle.is_file() and not bundle.is_symlink() and v.untouched()
