"""The pull/push protocol of FORMAT §11 against both back ends: a real moto server on loopback and file://.

Every test runs on ``file:///<tmp>`` and on ``s3://<fresh bucket>/lib`` (the
``remote_url`` fixture). Tile sets are compared exactly, as sets of hashes.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from remote_support import add_tiles, file_digest, make_library, tile_hashes
from s3_server import moto, remote_url, s3_env  # noqa: F401  (fixtures)

from remote.backend import open_backend
from remote.sync import BadHead, BadSnapshot, parse_head, prune, pull, push
from tilelib.errors import RemoteError


def head_of(url: str) -> dict:
    h = open_backend(url).get_head()
    assert h is not None
    return json.loads(h.body)


def remote_tiles(url: str, tmp_path: Path) -> set[str]:
    """The tile hashes of the state HEAD names: its base snapshot and every delta on top of it
    (each downloaded and sha256- and size-checked independently)."""
    b = open_backend(url)
    doc = head_of(url)
    hashes: set[str] = set()
    for sha, size in [(doc["snapshot"], doc["size"])] + [(d["sha"], d["size"]) for d in doc.get("deltas", [])]:
        dest = tmp_path / f"check-{sha[:8]}.sqlite"
        b.get_snapshot(sha, dest)
        assert hashlib.sha256(dest.read_bytes()).hexdigest() == sha
        assert dest.stat().st_size == size
        hashes |= tile_hashes(dest)
    assert len(hashes) == doc["tiles"]
    return hashes


def delta_shas(url: str) -> list[str]:
    return [d["sha"] for d in head_of(url).get("deltas", [])]


def test_push_then_clone_then_incremental_push(remote_url, tmp_path):
    a, b = tmp_path / "a.sqlite", tmp_path / "b.sqlite"
    ha = make_library(a, 1, 30)
    r1 = push(a, open_backend(remote_url))
    assert (r1.status, r1.new_tiles, r1.attempts, r1.merged_tiles) == ("pushed", 30, 1, 0)
    doc1 = head_of(remote_url)
    assert doc1["parent"] is None and doc1["snapshot"] == r1.snapshot and doc1["tiles"] == 30
    assert remote_tiles(remote_url, tmp_path) == ha

    p = pull(b, open_backend(remote_url))
    assert (p.status, p.tiles_added, p.snapshot) == ("cloned", 30, r1.snapshot)
    assert tile_hashes(b) == ha
    from tilelib.store import Library

    with Library.open(b) as lb, Library.open(a) as la:
        assert lb.meta()["library_id"] != la.meta()["library_id"]  # a clone is a new file, not a copy

    extra = add_tiles(b, 2, 12)
    r2 = push(b, open_backend(remote_url))
    assert (r2.status, r2.new_tiles, r2.kind) == ("pushed", 12, "delta")  # issue 12: only the new rows
    assert head_of(remote_url)["snapshot"] == r1.snapshot and delta_shas(remote_url) == [r2.snapshot]
    assert remote_tiles(remote_url, tmp_path) == ha | extra

    assert pull(b, open_backend(remote_url)).status == "up_to_date"
    r3 = push(b, open_backend(remote_url))
    assert r3.status == "up_to_date" and delta_shas(remote_url) == [r2.snapshot]
    pa = pull(a, open_backend(remote_url))  # a fetches only the delta
    assert (pa.status, pa.tiles_added) == ("merged", 12) and pa.bytes == head_of(remote_url)["deltas"][0]["size"]
    assert tile_hashes(a) == ha | extra


def test_pull_merges_and_never_drops_local_rows(remote_url, tmp_path):
    a, b = tmp_path / "a.sqlite", tmp_path / "b.sqlite"
    ha = make_library(a, 1, 20)
    hb = make_library(b, 2, 25)
    push(a, open_backend(remote_url))
    p = pull(b, open_backend(remote_url))
    assert (p.status, p.tiles_added) == ("merged", 20)
    assert tile_hashes(b) == ha | hb
    # b holds rows the remote lacks, so push must publish them even though b's HEAD state is current.
    r = push(b, open_backend(remote_url))
    assert (r.status, r.new_tiles, r.merged_tiles) == ("pushed", 25, 0)
    assert remote_tiles(remote_url, tmp_path) == ha | hb


def test_push_from_a_stale_library_merges_the_remote_first(remote_url, tmp_path):
    a, b = tmp_path / "a.sqlite", tmp_path / "b.sqlite"
    ha, hb = make_library(a, 1, 15), make_library(b, 2, 10)
    push(a, open_backend(remote_url))
    r = push(b, open_backend(remote_url))  # b never pulled
    assert (r.status, r.merged_tiles, r.new_tiles) == ("pushed", 15, 10)
    assert tile_hashes(b) == ha | hb
    assert remote_tiles(remote_url, tmp_path) == ha | hb


def test_lost_race_is_merged_and_retried(remote_url, tmp_path):
    """A moves HEAD between B's read and B's swap: B's conditional write must lose, then win with the union."""
    a, b = tmp_path / "a.sqlite", tmp_path / "b.sqlite"
    base = tmp_path / "base.sqlite"
    h0 = make_library(base, 0, 5)
    push(base, open_backend(remote_url))
    pull(a, open_backend(remote_url))
    pull(b, open_backend(remote_url))
    ha, hb = add_tiles(a, 1, 7), add_tiles(b, 2, 9)
    fired = []

    def a_pushes_first():
        if not fired:
            fired.append(push(a, open_backend(remote_url)))

    r = push(b, open_backend(remote_url), before_swap=a_pushes_first, sleep=lambda s: None)
    assert fired[0].status == "pushed" and fired[0].new_tiles == 7
    assert (r.status, r.attempts, r.merged_tiles, r.new_tiles) == ("pushed", 2, 7, 9)
    assert remote_tiles(remote_url, tmp_path) == h0 | ha | hb
    assert delta_shas(remote_url) == [fired[0].snapshot, r.snapshot]


def test_eight_concurrent_pushers_lose_nothing(remote_url, tmp_path):
    base = tmp_path / "base.sqlite"
    expected = make_library(base, 0, 5)
    push(base, open_backend(remote_url))
    paths = [tmp_path / f"p{i}.sqlite" for i in range(8)]
    for i, p in enumerate(paths):
        pull(p, open_backend(remote_url))
        expected |= add_tiles(p, 100 + i, 6)
    assert len(expected) == 5 + 8 * 6
    # Everyone reads the same HEAD and uploads before anyone swaps: 7 of 8 must lose the first round.
    gate = threading.Barrier(8, timeout=60)
    results, errors = [None] * 8, []

    def run(i):
        first = [True]

        def hold():
            if first[0]:
                first[0] = False
                gate.wait()

        try:
            results[i] = push(paths[i], open_backend(remote_url), before_swap=hold)
        except BaseException as err:  # noqa: BLE001 - reported below
            errors.append(err)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert not errors, errors
    assert all(r is not None and r.status == "pushed" for r in results)
    assert sorted(r.attempts > 1 for r in results).count(True) >= 7
    assert sum(r.new_tiles for r in results) == 8 * 6
    assert remote_tiles(remote_url, tmp_path) == expected
    assert head_of(remote_url)["tiles"] == 53


KILLER = """
import os, signal, sys
from remote.backend import open_backend
from remote.sync import push
push(sys.argv[1], open_backend(sys.argv[2]), before_swap=lambda: os.kill(os.getpid(), signal.SIGKILL))
"""


def test_push_killed_between_upload_and_swap_leaves_head_and_next_push_works(remote_url, tmp_path):
    a = tmp_path / "a.sqlite"
    h1 = make_library(a, 1, 10)
    push(a, open_backend(remote_url))
    before = open_backend(remote_url).get_head()
    h2 = add_tiles(a, 2, 4)
    proc = subprocess.run(
        [sys.executable, "-c", KILLER, str(a), remote_url], env=dict(os.environ), capture_output=True, timeout=120
    )
    assert proc.returncode == -9, proc.stderr.decode()
    after = open_backend(remote_url).get_head()
    assert (after.body, after.etag) == (before.body, before.etag)
    assert len(open_backend(remote_url).list_snapshots()) == 2  # the orphan was uploaded
    assert remote_tiles(remote_url, tmp_path) == h1
    r = push(a, open_backend(remote_url))
    assert (r.status, r.new_tiles, r.attempts) == ("pushed", 4, 1)
    assert remote_tiles(remote_url, tmp_path) == h1 | h2


def _replace_snapshot(url: str, sha: str, data: bytes) -> None:
    """Overwrite a snapshot's bytes behind the protocol's back (what a damaged remote looks like)."""
    b = open_backend(url)
    if url.startswith("file://"):
        (Path(b.root) / "snapshots" / f"{sha}.sqlite").write_bytes(data)
    else:
        b.client.put_object(Bucket=b.url.bucket, Key=b.url.key(f"snapshots/{sha}.sqlite"), Body=data)


def _snapshot_bytes(url: str, sha: str, tmp_path: Path) -> bytes:
    dest = tmp_path / "orig.sqlite"
    open_backend(url).get_snapshot(sha, dest)
    return dest.read_bytes()


@pytest.mark.parametrize("damage", ["flip_byte", "truncate"])
def test_altered_snapshot_is_refused_and_local_untouched(remote_url, tmp_path, damage):
    a, b = tmp_path / "a.sqlite", tmp_path / "b.sqlite"
    make_library(a, 1, 20)
    make_library(b, 2, 5)
    sha = push(a, open_backend(remote_url)).snapshot
    data = bytearray(_snapshot_bytes(remote_url, sha, tmp_path))
    if damage == "flip_byte":
        data[len(data) // 2] ^= 0x01
    else:
        data = data[: len(data) - 4096]
    _replace_snapshot(remote_url, sha, bytes(data))
    before = file_digest(b)
    with pytest.raises(BadSnapshot, match="sha256" if damage == "flip_byte" else "bytes but HEAD says"):
        pull(b, open_backend(remote_url))
    assert file_digest(b) == before
    assert not list(tmp_path.glob(".tiles-sync-*"))  # temp files cleaned up
    fresh = tmp_path / "fresh.sqlite"
    with pytest.raises(BadSnapshot):
        pull(fresh, open_backend(remote_url))
    assert not fresh.exists()


def test_snapshot_that_is_not_a_library_is_refused(remote_url, tmp_path):
    import sqlite3

    junk = tmp_path / "junk.sqlite"
    with sqlite3.connect(junk) as c:
        c.execute("CREATE TABLE t (x)")
    data = junk.read_bytes()
    sha = hashlib.sha256(data).hexdigest()
    b = open_backend(remote_url)
    b.prepare()
    b.put_snapshot(sha, junk)
    body = json.dumps({"snapshot": sha, "size": len(data), "tiles": 0, "parent": None}).encode()
    b.put_head(body, None)
    with pytest.raises(BadSnapshot, match="not a tiles library"):
        pull(tmp_path / "x.sqlite", open_backend(remote_url))
    assert not (tmp_path / "x.sqlite").exists()


BAD_HEADS = [
    b"not json at all",
    b"[1, 2]",
    b'{"snapshot": "abc", "size": 1, "tiles": 1, "parent": null}',
    json.dumps({"snapshot": "A" * 64, "size": 1, "tiles": 1, "parent": None}).encode(),
    json.dumps({"snapshot": "a" * 64, "size": -1, "tiles": 1, "parent": None}).encode(),
    json.dumps({"snapshot": "a" * 64, "size": 1, "tiles": True, "parent": None}).encode(),
    json.dumps({"snapshot": "a" * 64, "size": 1, "tiles": 1, "parent": "b"}).encode(),
    json.dumps({"snapshot": "a" * 64, "tiles": 1}).encode(),
    b"\xff\xfe",
]


@pytest.mark.parametrize("body", BAD_HEADS)
def test_malformed_head_is_a_clear_error(body):
    from remote.backend import Head

    with pytest.raises(BadHead, match="HEAD.json is malformed"):
        parse_head(Head(body, '"x"'), "file:///r")


def test_malformed_head_on_the_remote_refuses_pull_and_push(remote_url, tmp_path):
    a = tmp_path / "a.sqlite"
    make_library(a, 1, 3)
    b = open_backend(remote_url)
    b.prepare()
    b.put_head(b'{"snapshot": 42}', None)
    before = file_digest(a)
    with pytest.raises(BadHead):
        pull(a, open_backend(remote_url))
    with pytest.raises(BadHead):
        push(a, open_backend(remote_url))
    assert file_digest(a) == before


def test_head_naming_a_missing_snapshot_is_a_clear_error(remote_url, tmp_path):
    b = open_backend(remote_url)
    b.prepare()
    b.put_head(json.dumps({"snapshot": "c" * 64, "size": 1, "tiles": 1, "parent": None}).encode(), None)
    with pytest.raises(RemoteError, match="missing"):
        pull(tmp_path / "x.sqlite", open_backend(remote_url))


def test_prune_keeps_head_parent_and_newest(remote_url, tmp_path):
    """Every object HEAD names (base and deltas, parent and its deltas) survives pruning; what two
    compactions left behind goes."""
    a = tmp_path / "a.sqlite"
    make_library(a, 1, 3)
    shas = [push(a, open_backend(remote_url)).snapshot]
    for i in range(4):
        add_tiles(a, 10 + i, 2)
        shas.append(push(a, open_backend(remote_url)).snapshot)
    b = open_backend(remote_url)
    assert {s.sha for s in b.list_snapshots()} == set(shas) and delta_shas(remote_url) == shas[1:]
    deleted, kept = prune(b, keep=0, min_age=3600)  # all too young: nothing goes
    assert deleted == [] and len(kept) == 5
    deleted, kept = prune(b, keep=0, min_age=0)  # all named by HEAD: nothing goes
    assert deleted == [] and len(kept) == 5
    add_tiles(a, 20, 2)
    c1 = push(a, open_backend(remote_url), compact=True)
    doc = head_of(remote_url)
    assert c1.kind == "snapshot" and doc["parent"] == shas[0] and doc["deltas"] == []
    assert [d["sha"] for d in doc["parent_deltas"]] == shas[1:]
    add_tiles(a, 21, 2)
    c2 = push(a, open_backend(remote_url), compact=True)
    deleted, kept = prune(b, keep=0, min_age=0)
    assert {s.sha for s in kept} == {c2.snapshot, c1.snapshot} and len(deleted) == 5
    fresh = tmp_path / "fresh.sqlite"
    assert pull(fresh, open_backend(remote_url)).tiles_added == 3 + 4 * 2 + 2 * 2


def test_empty_remote(remote_url, tmp_path):
    b = open_backend(remote_url)
    b.prepare()
    r = pull(tmp_path / "x.sqlite", b)
    assert r.status == "empty" and not (tmp_path / "x.sqlite").exists()


def test_day_old_work_dirs_of_killed_syncs_are_removed(tmp_path):
    from remote.sync import STALE_WORKDIR_SECONDS

    a = tmp_path / "a.sqlite"
    make_library(a, 1, 2)
    old, young = tmp_path / ".tiles-sync-old", tmp_path / ".tiles-sync-young"
    for d in (old, young):
        d.mkdir()
        (d / "snapshot.sqlite").write_bytes(b"x")
    past = os.stat(old).st_mtime - STALE_WORKDIR_SECONDS - 60
    os.utime(old, (past, past))
    push(a, open_backend(f"file://{tmp_path / 'r'}"))
    assert not old.exists() and young.exists()


def test_a_misses_change_alone_is_pushed_and_pulled(remote_url, tmp_path):
    """Nothing-to-push is decided by a fingerprint that every allowed change moves, misses included."""
    import sqlite3

    a, b = tmp_path / "a.sqlite", tmp_path / "b.sqlite"
    make_library(a, 1, 3)
    push(a, open_backend(remote_url))
    assert push(a, open_backend(remote_url)).status == "up_to_date"
    with sqlite3.connect(a) as c:
        c.execute(
            "INSERT INTO misses (n, side_mask, top, right, bottom, left, top_mask, right_mask, "
            "bottom_mask, left_mask, first_seen, last_seen) VALUES (6, 1, 5, 0, 0, 0, 63, 0, 0, 0, 1, 1)"
        )
    r = push(a, open_backend(remote_url))
    assert (r.status, r.new_tiles) == ("pushed", 0)
    with sqlite3.connect(a) as c:
        c.execute("UPDATE misses SET count = count + 1, last_seen = 2")
    assert push(a, open_backend(remote_url)).status == "pushed"
    pull(b, open_backend(remote_url))
    with sqlite3.connect(b) as c:
        assert c.execute("SELECT top, count, last_seen FROM misses").fetchall() == [(5, 2, 2)]


def test_pull_into_a_file_that_is_not_a_library_fails_untouched(remote_url, tmp_path):
    a, junk = tmp_path / "a.sqlite", tmp_path / "junk.sqlite"
    make_library(a, 1, 3)
    push(a, open_backend(remote_url))
    junk.write_bytes(b"not a database, just bytes" * 100)
    from tilelib.errors import NotALibrary

    with pytest.raises(NotALibrary):
        pull(junk, open_backend(remote_url))
    assert junk.read_bytes() == b"not a database, just bytes" * 100


def test_snapshot_with_a_tampered_row_is_refused_as_bad_remote_data(remote_url, tmp_path):
    """A consistent snapshot (right sha256, sound SQLite) whose row content does not match its hash."""
    import sqlite3

    src, b = tmp_path / "src.sqlite", tmp_path / "b.sqlite"
    victim = sorted(make_library(src, 1, 20))[3]
    with sqlite3.connect(src) as c:
        c.execute("UPDATE tiles SET solution = zeroblob(length(solution)) WHERE hash = ?", (victim,))
    data = src.read_bytes()
    sha = hashlib.sha256(data).hexdigest()
    be = open_backend(remote_url)
    be.prepare()
    be.put_snapshot(sha, src)
    be.put_head(json.dumps({"snapshot": sha, "size": len(data), "tiles": 20, "parent": None}).encode(), None)
    make_library(b, 2, 4)
    before = file_digest(b)
    for dest in (b, tmp_path / "fresh.sqlite"):
        with pytest.raises(BadSnapshot, match=victim):
            pull(dest, open_backend(remote_url))
    with pytest.raises(BadSnapshot, match=victim):
        push(b, open_backend(remote_url))
    assert file_digest(b) == before and not (tmp_path / "fresh.sqlite").exists()


def test_pull_into_an_empty_file_merges(remote_url, tmp_path):
    a, empty = tmp_path / "a.sqlite", tmp_path / "empty.sqlite"
    ha = make_library(a, 1, 6)
    push(a, open_backend(remote_url))
    empty.touch()
    r = pull(empty, open_backend(remote_url))
    assert (r.status, r.tiles_added) == ("merged", 6) and tile_hashes(empty) == ha


def test_start_states_are_what_the_stored_manifests_name_as_their_builds_start():
    import sqlite3

    from remote.sync import start_states

    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE TABLE manifests (day TEXT, seed_commit TEXT, json TEXT, created INTEGER)")
    days = [
        {"build": {"snapshot": "a" * 64, "deltas": ["b" * 64, "c" * 64]}},
        {"build": {"snapshot": "d" * 64, "deltas": []}},
        {"build": {"snapshot": None, "deltas": []}},  # built with no remote
        {"day": "no build key"},
    ]
    conn.executemany("INSERT INTO manifests VALUES ('d', 'c', ?, 0)", [(json.dumps(d),) for d in days])
    assert start_states(conn) == {"a" * 64, "b" * 64, "c" * 64, "d" * 64}


def test_prune_never_deletes_a_replayable_state(remote_url, tmp_path):
    a = tmp_path / "a.sqlite"
    make_library(a, 1, 3)
    first = push(a, open_backend(remote_url)).snapshot
    for i in range(3):
        add_tiles(a, 30 + i, 2)
        push(a, open_backend(remote_url), compact=i > 0)
    b = open_backend(remote_url)
    deleted, kept = prune(b, keep=0, min_age=0, replayable=frozenset({first}))
    assert first in {s.sha for s in kept} and first not in {s.sha for s in deleted} and deleted
