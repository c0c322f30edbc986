"""Issue 69, part 3: a row is proven by its content, not by its hash alone, on every way in.

A hostile peer can write a ``tiles`` row whose content hash is right (it hashes whatever it holds)
while the rest is not a tile: blobs of the wrong length for its n, edge columns that are not its
solution's, a solution that breaks the rules, a grid not in canonical orientation, a corner given,
features that disagree with its givens. Each such row, in each way a row arrives — a pulled base
snapshot, a pulled delta, a merge of a file, a push of a local file, a day's bundle — is refused
before it is stored, naming the row, with both remotes (a directory and the S3 server on loopback);
the remote is left untouched, and a fresh pull of the sound state still works afterwards.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import sqlite3
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from cli_support import run_tiles
from remote_support import make_library, random_tiles, tile_hashes
from s3_server import moto, remote_url, s3_env  # noqa: F401  (fixtures)

from remote.backend import open_backend
from remote.sync import pull, push
from tilelib import bits
from tilelib.audit import stored_row_problems
from tilelib.errors import CorruptLibrary
from tilelib.merge import merge_file
from tilelib.store import TILE_COLUMNS, Library, tile_to_row
from tilelib.symmetry import apply_grid
from tilelib.tile import content_hash


def _rehash(row: dict) -> dict:
    row["hash"] = content_hash(row["n"], row["solution"], row["givens"], row["seam_mask"])
    return row


def _long_blob(row: dict) -> dict:
    row["solution"] = row["solution"] + b"\x00"
    return _rehash(row)


def _short_givens(row: dict) -> dict:
    row["givens"] = row["givens"][:-1]
    return _rehash(row)


def _edges(row: dict) -> dict:
    row["top"] ^= 1  # the hash covers no edge column
    return row


def _rules(row: dict) -> dict:
    n = row["n"]
    row["solution"] = bits.to_blob(np.zeros((n, n), dtype=np.uint8))
    row["top"] = row["right"] = row["bottom"] = row["left"] = 0
    return _rehash(row)


def _not_canonical(row: dict) -> dict:
    n = row["n"]
    for t in range(1, 16):
        sol = apply_grid(bits.from_blob(row["solution"], n), t)
        blob = bits.to_blob(sol)
        if blob > row["solution"]:  # a larger image: the row no longer holds the smallest one
            row["solution"] = blob
            row["givens"] = bits.to_blob(apply_grid(bits.from_blob(row["givens"], n), t) & 1)
            row["top"], row["right"], row["bottom"], row["left"] = bits.edges(sol)
            return _rehash(row)
    raise AssertionError("no transform gives a larger image")


def _corner(row: dict) -> dict:
    n = row["n"]
    g = bits.from_blob(row["givens"], n).copy()
    g[0, 0] = 1
    row["givens"] = bits.to_blob(g)
    row["blank"] = 1.0 - float(g.sum()) / (n * n)
    return _rehash(row)


def _features(row: dict) -> dict:
    row["m"] = 2  # no alternative stored for it
    return row


def _seam_mask(row: dict) -> dict:
    row["seam_mask"] = 16
    return _rehash(row)


# name -> (how the row is spoiled, what the refusal says)
BAD_ROWS: dict[str, tuple[Callable[[dict], dict], str]] = {
    "solution blob too long": (_long_blob, "blobs must be"),
    "givens blob too short": (_short_givens, "blobs must be"),
    "edge columns": (_edges, "edge columns"),
    "breaks the rules": (_rules, "solution breaks the rules"),
    "not canonical": (_not_canonical, "canonical orientation"),
    "corner given": (_corner, "corner cell is given"),
    "features": (_features, "alts hold"),
    "seam mask": (_seam_mask, "seam_mask 16"),
}
KINDS = list(BAD_ROWS)


def bad_row(how: str) -> dict:
    """A sound tile no library here holds, as its row, spoiled ``how``."""
    row = tile_to_row(random_tiles(99, 1)[0].canonical()[0], 1_700_000_000)
    assert not stored_row_problems(row)
    return BAD_ROWS[how][0](row)


def insert_raw(path: Path, row: dict) -> None:
    """Insert ``row`` with plain sqlite3, as a peer's own code would."""
    conn = sqlite3.connect(path)
    conn.execute(f"INSERT INTO tiles VALUES ({', '.join('?' * len(TILE_COLUMNS))})", [row[c] for c in TILE_COLUMNS])
    conn.commit()
    conn.close()


def plant_row(path: Path, how: str) -> str:
    """Insert a tile spoiled ``how`` into the file; return its hash."""
    row = bad_row(how)
    insert_raw(path, row)
    return row["hash"]


def remote_state(url: str) -> tuple:
    """Everything a reader of the remote can see: HEAD's body and the set of snapshots."""
    b = open_backend(url)
    h = b.get_head()
    return (None if h is None else h.body, sorted(s.sha for s in b.list_snapshots()))


def upload(url: str, path: Path) -> str:
    data = path.read_bytes()
    sha = hashlib.sha256(data).hexdigest()
    open_backend(url).put_snapshot(sha, path)
    return sha


@pytest.fixture
def sound(tmp_path, remote_url) -> Path:
    """A sound library of 60 tiles pushed to the remote."""
    lib = tmp_path / "sound.sqlite"
    make_library(lib, 3, 60)
    push(lib, open_backend(remote_url))
    return lib


@pytest.mark.parametrize("how", KINDS)
def test_push_refuses_the_row_before_the_remote_is_touched(sound, tmp_path, remote_url, how):
    before = remote_state(remote_url)
    h = plant_row(sound, how)
    r = run_tiles("library", "push", "-L", str(sound), "--remote", remote_url, inherit=True)
    assert r.returncode == 3, r.stderr
    assert h in r.stderr and BAD_ROWS[how][1] in r.stderr and r.stderr.count("\n") == 1, r.stderr
    assert remote_state(remote_url) == before


@pytest.mark.parametrize("how", KINDS)
def test_a_hostile_base_is_healed_around_and_its_row_never_stored(sound, tmp_path, remote_url, how):
    peer = tmp_path / "peer.sqlite"
    shutil.copy(sound, peer)
    h = plant_row(peer, how)
    b = open_backend(remote_url)
    head = b.get_head()
    doc = json.loads(head.body)
    sha = upload(remote_url, peer)
    body = {"snapshot": sha, "size": peer.stat().st_size, "tiles": 61, "parent": doc["snapshot"]}
    assert b.put_head(json.dumps(body).encode(), head.etag)
    fresh = tmp_path / "fresh.sqlite"
    r = pull(fresh, open_backend(remote_url))
    assert r.note and sha[:12] in r.note and h in r.note and BAD_ROWS[how][1] in r.note
    assert tile_hashes(fresh) == tile_hashes(sound) - {h}
    assert h not in tile_hashes(fresh)
    ok = run_tiles("library", "verify", "-L", str(fresh))
    assert ok.returncode == 0, ok.stderr


@pytest.mark.parametrize("how", ["edge columns", "breaks the rules", "features"])
def test_a_hostile_delta_stops_the_chain_and_a_puller_keeps_the_state_before(sound, tmp_path, remote_url, how):
    mine = tmp_path / "mine.sqlite"
    assert pull(mine, open_backend(remote_url)).status != "empty"
    delta = tmp_path / "delta.sqlite"
    with Library.create(delta) as d:
        d.conn.execute("INSERT INTO meta VALUES ('kind', 'delta')")
    row = bad_row(how)
    insert_raw(delta, row)
    b = open_backend(remote_url)
    head = b.get_head()
    doc = json.loads(head.body)
    sha = upload(remote_url, delta)
    doc["deltas"] = [*doc.get("deltas", []), {"sha": sha, "size": delta.stat().st_size}]
    assert b.put_head(json.dumps(doc).encode(), head.etag)
    before = tile_hashes(mine)
    r = pull(mine, open_backend(remote_url))
    assert r.note and sha[:12] in r.note and row["hash"] in r.note
    assert tile_hashes(mine) == before


@pytest.mark.parametrize("how", KINDS)
def test_a_merge_is_refused_whole_naming_the_row(tmp_path, how):
    lib = tmp_path / "lib.sqlite"
    make_library(lib, 4, 10)
    src = tmp_path / "src.sqlite"
    make_library(src, 5, 30)
    h = plant_row(src, how)
    before = lib.read_bytes()
    with Library.open(lib) as opened, pytest.raises(CorruptLibrary, match=h):
        merge_file(opened, src)
    assert lib.read_bytes() == before


def test_the_checks_refuse_nothing_sound(tmp_path, remote_url):
    """The other side: the same transfers of sound rows all pass (no check refuses everything)."""
    lib = tmp_path / "lib.sqlite"
    make_library(lib, 6, 40)
    insert_miss(lib)
    assert run_tiles("library", "push", "-L", str(lib), "--remote", remote_url, inherit=True).returncode == 0
    fresh = tmp_path / "fresh.sqlite"
    r = pull(fresh, open_backend(remote_url))
    assert r.note is None and tile_hashes(fresh) == tile_hashes(lib)
    other = tmp_path / "other.sqlite"
    make_library(other, 7, 20)
    with Library.open(fresh) as opened:
        assert merge_file(opened, other).tiles_added == 20


MISS = dict(n=6, side_mask=1, top=5, right=0, bottom=0, left=0, top_mask=7, right_mask=0, bottom_mask=0, left_mask=0)
# name -> a misses row's columns changed from the sound ``MISS``
BAD_MISSES = {
    "n not a tile size": {"n": 7},
    "value outside its mask": {"top": 13},
    "mask wider than n": {"top_mask": 1 << 6, "top": 0},
    "side_mask not its sides": {"side_mask": 3},
    "count zero": {"count": 0},
    "nofit two": {"nofit": 2},
    "text where an integer goes": {"left": "zero"},
    "tile not a hash": {"tile": "not-a-hash"},
}


def insert_miss(path: Path, **change) -> None:
    row = {**MISS, "first_seen": 1, "last_seen": 2, "count": 1, "nofit": 0, **change}
    conn = sqlite3.connect(path)
    conn.execute(f"INSERT INTO misses ({', '.join(row)}) VALUES ({', '.join('?' * len(row))})", list(row.values()))
    conn.commit()
    conn.close()


@pytest.mark.parametrize("how", list(BAD_MISSES))
def test_a_misses_row_of_the_wrong_shape_is_refused_by_push_and_named_by_verify(sound, remote_url, how):
    before = remote_state(remote_url)
    insert_miss(sound, **BAD_MISSES[how])
    r = run_tiles("library", "push", "-L", str(sound), "--remote", remote_url, inherit=True)
    assert r.returncode == 3 and "misses row" in r.stderr and r.stderr.count("\n") == 1, r.stderr
    assert remote_state(remote_url) == before
    v = run_tiles("library", "verify", "-L", str(sound))
    assert v.returncode != 0 and "misses row" in v.stdout + v.stderr


@pytest.mark.parametrize("value", ["[1e999, 0]", "[NaN, 0]", '["x", 0]', "[", "[1e999, 0, 0, 0]"])
def test_a_watermark_or_mark_that_does_not_parse_is_none(tmp_path, value):
    """The publish check's watermark and a remote's mark are read strictly: one that does not parse
    counts as none (every row checked, every row sent), never a traceback."""
    from remote.delta import read_mark
    from trust.checks import read_watermark

    lib = tmp_path / "lib.sqlite"
    make_library(lib, 8, 3)
    with Library.open(lib) as opened:
        opened.conn.execute("INSERT OR REPLACE INTO meta VALUES ('verified:rowids', ?)", (value,))
        opened.conn.execute("INSERT OR REPLACE INTO meta VALUES ('remote_mark:file:///r', ?)", (value,))
        assert read_watermark(opened) == (0, 0, 0)
        assert read_mark(opened, "file:///r") is None
