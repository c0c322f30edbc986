"""Issue 69, part 4: a day belongs to its operator.

A peer who can write the shared remote plants a board for tomorrow under its own seed commitment
(here: a real board of that day built with another secret and pushed). The operator's nightly
build pulls it, and must not say "already built" for a board it did not make: it refuses in one
line naming the day and both commitments (exit 5), writes no manifest and leaves the remote as it
was. ``--force`` builds the operator's own board in its place, and the push publishes it: a board of
the day under another commitment is not a race this board lost. The operator's own day, built
twice, is still "already built". Both remotes: a directory and the S3 server on loopback.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

import pytest
from cli_support import run_tiles
from s3_server import moto, remote_url, s3_env  # noqa: F401  (fixtures)

from remote.backend import open_backend
from tilelib.days import seed_commit

OURS = "our-secret"
THEIRS = "their-secret"
TODAY, TOMORROW = "2026-11-23", "2026-11-24"


def build(lib: Path, out: Path, day: str, secret: str, remote: str | None, *more: str):
    args = ["daily", "build", "-L", str(lib), "--out", str(out), "--date", day, "--size", "21", *more]
    if remote:
        args += ["--remote", remote]
    return run_tiles(*args, env={"TILES_SECRET": secret}, inherit=True)


def commit_of(secret: str, day: str) -> str:
    from daily.seed import day_seed

    return seed_commit(day_seed(secret, day))


def stored(lib: Path, day: str) -> tuple | None:
    conn = sqlite3.connect(lib)
    row = conn.execute("SELECT seed_commit, json FROM manifests WHERE day = ?", (day,)).fetchone()
    conn.close()
    return row


def remote_state(url: str) -> tuple:
    b = open_backend(url)
    h = b.get_head()
    return (None if h is None else h.body, sorted(s.sha for s in b.list_snapshots()))


@pytest.fixture
def planted(tmp_path, remote_url):
    """The operator built today and pushed; a peer then built tomorrow with its own secret and pushed."""
    ours, theirs = tmp_path / "ours.sqlite", tmp_path / "theirs.sqlite"
    if remote_url.startswith("file://"):
        Path(remote_url[7:]).mkdir()
    r = build(ours, tmp_path / "out", TODAY, OURS, remote_url)
    assert r.returncode == 0, r.stderr
    r = build(theirs, tmp_path / "peer-out", TOMORROW, THEIRS, remote_url)
    assert r.returncode == 0, r.stderr
    return {"lib": ours, "out": tmp_path / "out", "url": remote_url}


def test_the_build_refuses_a_day_another_commitment_holds(planted):
    before = remote_state(planted["url"])
    r = build(planted["lib"], planted["out"], TOMORROW, OURS, planted["url"])
    ours, theirs = commit_of(OURS, TOMORROW), commit_of(THEIRS, TOMORROW)
    errors = [line for line in r.stderr.splitlines() if line.startswith("tiles: error")]
    assert r.returncode == 5 and len(errors) == 1 and r.stderr.splitlines()[-1] == errors[0], r.stderr
    assert TOMORROW in r.stderr and ours[:16] in r.stderr and theirs[:16] in r.stderr
    assert "already built" not in r.stdout + r.stderr
    assert not (planted["out"] / f"{TOMORROW}.json").exists()
    assert remote_state(planted["url"]) == before


def test_force_builds_the_operators_own_board_and_the_push_publishes_it(planted, tmp_path):
    r = build(planted["lib"], planted["out"], TOMORROW, OURS, planted["url"], "--force")
    assert r.returncode == 0, r.stderr
    ours = commit_of(OURS, TOMORROW)
    assert stored(planted["lib"], TOMORROW)[0] == ours
    assert json.loads((planted["out"] / f"{TOMORROW}.json").read_text())["seed_commit"] == ours
    # the operator's next pull keeps its own board of the day, and a rebuild is "already built"
    assert (
        run_tiles("library", "pull", "-L", str(planted["lib"]), "--remote", planted["url"], inherit=True).returncode
        == 0
    )
    assert stored(planted["lib"], TOMORROW)[0] == ours
    again = build(planted["lib"], planted["out"], TOMORROW, OURS, planted["url"])
    assert again.returncode == 0 and "already" in again.stdout + again.stderr, again.stderr


def test_the_operators_own_day_is_still_already_built(planted):
    r = build(planted["lib"], planted["out"], TODAY, OURS, planted["url"])
    assert r.returncode == 0 and "already" in r.stdout + r.stderr, r.stderr


def test_without_a_remote_a_merged_foreign_day_is_refused_too(planted, tmp_path):
    lib = tmp_path / "alone.sqlite"
    shutil.copy(planted["lib"], lib)
    pulled = run_tiles("library", "pull", "-L", str(lib), "--remote", planted["url"], inherit=True)
    assert pulled.returncode == 0, pulled.stderr
    assert stored(lib, TOMORROW)[0] == commit_of(THEIRS, TOMORROW)
    r = build(lib, tmp_path / "out2", TOMORROW, OURS, None)
    assert r.returncode == 5 and commit_of(OURS, TOMORROW)[:16] in r.stderr, r.stderr
