"""Issue 69, part 5: every unreadable snapshot heals.

A snapshot on the remote that cannot be opened, decoded, proven or parsed — its text in UTF-16, a
``schema_version`` of digits that are not ASCII (``'²'`` passes ``str.isdigit``), a ``meta`` that is
not a snapshot's (a bundle's kind, a key no snapshot holds, a value that is a blob or not ASCII), a
header or a body that is not SQLite's — is unsound like a corrupt page: ``tiles library pull``
falls back to the newest sound snapshot before it, says so in one line and exits 0; a pull into an
empty path clones the sound one (UTF-8, the shipped schema). With only unsound snapshots, the pull
exits 4 and writes nothing. Both remotes: a directory and the S3 server on loopback.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest
from cli_support import run_tiles
from remote_support import make_library, tile_hashes
from s3_server import moto, remote_url, s3_env  # noqa: F401  (fixtures)

from remote.backend import SNAPSHOT_DIR, open_backend
from remote.sync import push
from tilelib.schema import version_statements
from tilelib.store import Library


def meta_set(key: str, value) -> Callable[[Path], None]:
    def change(path: Path) -> None:
        conn = sqlite3.connect(path)
        conn.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (key, value))
        conn.commit()
        conn.close()

    return change


def utf16(path: Path) -> None:
    """The same library, its text stored as UTF-16: every table copied into a file made so."""
    src = path.with_suffix(".utf8")
    path.rename(src)
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA encoding = 'UTF-16le'")
    conn.executescript("\n".join(version_statements(2)))
    old = sqlite3.connect(src)
    for table in ("meta", "tiles", "misses", "manifests", "spent"):
        rows = old.execute(f"SELECT * FROM {table}").fetchall()
        if rows:
            conn.executemany(f"INSERT INTO {table} VALUES ({', '.join('?' * len(rows[0]))})", rows)
    old.close()
    conn.commit()
    conn.close()
    check = sqlite3.connect(path)
    assert check.execute("PRAGMA encoding").fetchone()[0] == "UTF-16le"
    check.close()


def garbage(path: Path) -> None:
    path.write_bytes(b"SQLite format 3\x00" + bytes(range(256)) * 16)


def bad_page_size(path: Path) -> None:
    data = bytearray(path.read_bytes())
    data[16:18] = (3).to_bytes(2, "big")  # a page size SQLite does not have
    path.write_bytes(bytes(data))


def truncated(path: Path) -> None:
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])


UNSOUND: dict[str, tuple[Callable[[Path], None], str]] = {
    "schema_version superscript two": (meta_set("schema_version", "²"), "schema_version"),
    "schema_version Arabic-Indic two": (meta_set("schema_version", "\u0662"), "schema_version"),
    "schema_version with a space": (meta_set("schema_version", " 2"), "schema_version"),
    "schema_version as a blob": (meta_set("schema_version", b"2"), "schema_version"),
    "text in UTF-16": (utf16, "UTF-16"),
    "a bundle's kind": (meta_set("kind", "bundle"), "kind"),
    "kind in capitals": (meta_set("kind", "DELTA"), "kind"),
    "an unknown meta key": (meta_set("note", "hello"), "note"),
    "a meta value past ASCII": (meta_set("library_id", "caf\u00e9"), "library_id"),
    "a meta value that is a number": (meta_set("library_id", 12.5), "library_id"),
    "not SQLite inside": (garbage, "snapshot"),
    "a page size SQLite has not": (bad_page_size, "snapshot"),
    "cut in half": (truncated, "snapshot"),
}
KINDS = list(UNSOUND)


@pytest.fixture
def sound(tmp_path, remote_url) -> Path:
    lib = tmp_path / "sound.sqlite"
    make_library(lib, 11, 30)
    push(lib, open_backend(remote_url))
    return lib


def plant_head(url: str, path: Path, parent: str | None) -> str:
    """Upload ``path`` as a base and make it HEAD's, as a hostile peer's own code would."""
    data = path.read_bytes()
    sha = hashlib.sha256(data).hexdigest()
    b = open_backend(url)
    b.put_snapshot(sha, path)
    head = b.get_head()
    body = {"snapshot": sha, "size": len(data), "tiles": 30, "parent": parent}
    assert b.put_head(json.dumps(body).encode(), None if head is None else head.etag)
    return sha


def spoiled_copy(sound: Path, tmp_path: Path, how: str) -> Path:
    peer = tmp_path / "peer.sqlite"
    shutil.copy(sound, peer)
    UNSOUND[how][0](peer)
    return peer


@pytest.mark.parametrize("how", KINDS)
def test_a_fresh_pull_heals_to_the_sound_parent(sound, tmp_path, remote_url, how):
    parent = json.loads(open_backend(remote_url).get_head().body)["snapshot"]
    bad = plant_head(remote_url, spoiled_copy(sound, tmp_path, how), parent)
    fresh = tmp_path / "fresh.sqlite"
    r = run_tiles("library", "pull", "-L", str(fresh), "--remote", remote_url, inherit=True)
    assert r.returncode == 0 and "Traceback" not in r.stderr, r.stderr
    said = r.stdout + r.stderr
    assert bad[:12] in said and UNSOUND[how][1] in said and parent[:12] in said, said
    assert tile_hashes(fresh) == tile_hashes(sound)
    conn = sqlite3.connect(fresh)
    assert conn.execute("PRAGMA encoding").fetchone()[0] == "UTF-8"
    assert dict(conn.execute("SELECT key, value FROM meta"))["schema_version"] == "2"
    conn.close()
    assert run_tiles("library", "verify", "-L", str(fresh)).returncode == 0


@pytest.mark.parametrize("how", ["schema_version superscript two", "text in UTF-16", "a bundle's kind"])
def test_a_pull_into_a_library_heals_too_and_a_push_then_publishes_a_good_head(sound, tmp_path, remote_url, how):
    mine = tmp_path / "mine.sqlite"
    shutil.copy(sound, mine)
    parent = json.loads(open_backend(remote_url).get_head().body)["snapshot"]
    bad = plant_head(remote_url, spoiled_copy(sound, tmp_path, how), parent)
    r = run_tiles("library", "pull", "-L", str(mine), "--remote", remote_url, inherit=True)
    assert r.returncode == 0 and bad[:12] in r.stdout + r.stderr, r.stderr
    p = run_tiles("library", "push", "-L", str(mine), "--remote", remote_url, inherit=True)
    assert p.returncode == 0, p.stderr
    assert json.loads(open_backend(remote_url).get_head().body)["snapshot"] != bad
    fresh = tmp_path / "fresh.sqlite"
    r = run_tiles("library", "pull", "-L", str(fresh), "--remote", remote_url, inherit=True)
    assert r.returncode == 0 and tile_hashes(fresh) == tile_hashes(sound), r.stderr


@pytest.mark.parametrize("how", ["schema_version superscript two", "text in UTF-16", "not SQLite inside"])
def test_only_unsound_snapshots_is_exit_4_and_nothing_written(sound, tmp_path, remote_url, how):
    url = remote_url + "-alone" if remote_url.startswith("s3://") else remote_url + "-alone"
    if url.startswith("file://"):
        (Path(url[7:]) / SNAPSHOT_DIR).mkdir(parents=True)
    bad = plant_head(url, spoiled_copy(sound, tmp_path, how), None)
    fresh = tmp_path / "fresh.sqlite"
    r = run_tiles("library", "pull", "-L", str(fresh), "--remote", url, inherit=True)
    assert r.returncode == 4 and bad[:12] in r.stderr and r.stderr.count("\n") == 1, r.stderr
    assert not fresh.exists()


@pytest.mark.parametrize("how", ["schema_version superscript two", "text in UTF-16", "an unknown meta key"])
def test_a_local_file_like_it_is_refused_in_one_line(sound, tmp_path, how):
    peer = spoiled_copy(sound, tmp_path, how)
    r = run_tiles("library", "verify", "-L", str(peer))
    assert r.returncode == 3 or how == "an unknown meta key", r.stderr
    assert "Traceback" not in r.stderr and r.stderr.count("\n") <= 1, r.stderr


def test_a_delta_whose_meta_is_unsound_stops_the_chain(sound, tmp_path, remote_url):
    mine = tmp_path / "mine.sqlite"
    assert run_tiles("library", "pull", "-L", str(mine), "--remote", remote_url, inherit=True).returncode == 0
    delta = tmp_path / "delta.sqlite"
    with Library.create(delta) as d:
        d.conn.execute("INSERT INTO meta VALUES ('kind', 'delta')")
        d.conn.execute("UPDATE meta SET value = '²' WHERE key = 'schema_version'")
    data = delta.read_bytes()
    sha = hashlib.sha256(data).hexdigest()
    b = open_backend(remote_url)
    b.put_snapshot(sha, delta)
    head = b.get_head()
    doc = json.loads(head.body)
    doc["deltas"] = [{"sha": sha, "size": len(data)}]
    assert b.put_head(json.dumps(doc).encode(), head.etag)
    before = tile_hashes(mine)
    r = run_tiles("library", "pull", "-L", str(mine), "--remote", remote_url, inherit=True)
    assert r.returncode == 0 and sha[:12] in r.stdout + r.stderr and "Traceback" not in r.stderr, r.stderr
    assert tile_hashes(mine) == before
