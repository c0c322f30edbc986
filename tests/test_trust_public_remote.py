"""Issue 11: anyone can verify without credentials — pull (and replay) from a read-only static
HTTP mirror of a remote, with the same checks, healing along HEAD's chain; writes are refused.

The mirror is Python's own static file server over a ``file://`` remote's directory, on 127.0.0.1.
"""

from __future__ import annotations

import functools
import json
import threading
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from cli_support import run_tiles
from remote_support import add_tiles, file_digest, make_library, tile_hashes
from test_trust_remote import upload_tampered

from remote.backend import open_backend
from remote.http import ReadOnlyRemote
from remote.sync import pull, push
from tilelib.errors import exit_code


class _Quiet(SimpleHTTPRequestHandler):
    def log_message(self, *args) -> None:
        pass


@pytest.fixture
def mirror(tmp_path):
    """(file:// URL to write to, http:// URL of a static server reading the same directory)."""
    root = tmp_path / "remote"
    root.mkdir()
    srv = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_Quiet, directory=str(root)))
    t = threading.Thread(target=srv.serve_forever, daemon=True)
    t.start()
    yield f"file://{root}", f"http://127.0.0.1:{srv.server_address[1]}"
    srv.shutdown()
    srv.server_close()
    t.join()


def test_clone_and_merge_from_a_static_mirror(mirror, tmp_path):
    writable, public = mirror
    a, b = tmp_path / "a.sqlite", tmp_path / "b.sqlite"
    ha = make_library(a, 1, 12)
    push(a, open_backend(writable))
    r = pull(b, open_backend(public))
    assert r.status == "cloned" and tile_hashes(b) == ha
    ha |= add_tiles(a, 2, 3)
    push(a, open_backend(writable))
    assert pull(b, open_backend(public)).tiles_added == 3 and tile_hashes(b) == ha
    assert pull(b, open_backend(public)).status == "up_to_date"


def test_an_empty_mirror_is_empty_and_a_missing_host_is_a_remote_error(mirror, tmp_path):
    _, public = mirror
    assert pull(tmp_path / "x.sqlite", open_backend(public)).status == "empty"
    from tilelib.errors import RemoteError

    with pytest.raises(RemoteError, match="cannot reach"):
        pull(tmp_path / "y.sqlite", open_backend("http://127.0.0.1:9/none"))


def test_the_mirror_is_read_only(mirror, tmp_path):
    writable, public = mirror
    a = tmp_path / "a.sqlite"
    make_library(a, 1, 4)
    before = sorted(p.name for p in Path(writable[7:]).rglob("*"))
    with pytest.raises(ReadOnlyRemote, match="read-only") as e:
        push(a, open_backend(public))
    assert exit_code(e.value) == 4
    assert sorted(p.name for p in Path(writable[7:]).rglob("*")) == before


def test_a_poisoned_head_heals_along_the_chain_without_listing(mirror, tmp_path):
    writable, public = mirror
    a = tmp_path / "a.sqlite"
    ha = make_library(a, 1, 8)
    push(a, open_backend(writable))
    good = json.loads((Path(writable[7:]) / "HEAD.json").read_bytes())["snapshot"]
    b = open_backend(writable)
    bad, size = upload_tampered(writable, good, tmp_path / "raw.sqlite", rowid=3)
    b.put_head(json.dumps({"snapshot": bad, "size": size, "tiles": 8, "parent": good}).encode(), b.get_head().etag)
    fresh = tmp_path / "fresh.sqlite"
    r = pull(fresh, open_backend(public))
    assert r.snapshot == good and r.note and bad[:12] in r.note and tile_hashes(fresh) == ha


def test_cli_verify_replay_from_a_public_mirror_needs_no_credentials(mirror, tmp_path):
    """The whole verifier's path: pull the library and replay the build from the mirror alone."""
    writable, public = mirror
    seed = "5eed" * 16
    lib, out = tmp_path / "operator.sqlite", tmp_path / "out"

    def tiles(*args, **extra):
        return run_tiles(*args, env=extra)

    r = tiles(
        "daily",
        "build",
        "--date",
        "2026-11-18",
        "--size",
        "21",
        "--seed",
        seed,
        "--out",
        str(out),
        "--library",
        str(lib),
        TILES_REMOTE=writable,
    )
    assert r.returncode == 0, r.stderr
    anyone = tmp_path / "anyone.sqlite"
    r = tiles("library", "pull", "--remote", public, "--library", str(anyone))
    assert r.returncode == 0, r.stderr
    r = tiles(
        "referee",
        "verify",
        str(out / "2026-11-18.json"),
        "--seed",
        seed,
        "--replay",
        "--remote",
        public,
        "--library",
        str(anyone),
    )
    assert r.returncode == 0, r.stderr
    assert "replay ok" in r.stdout and file_digest(anyone)
