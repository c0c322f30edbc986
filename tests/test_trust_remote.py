"""Issue 11, families 1 and 2: push publishes only what verifies, and a poisoned remote heals.

Every test runs against the real moto server on loopback and against file:// (``remote_url``).
Damage is made the way a broken machine or a hostile user makes it: SQL updates of stored rows,
bytes flipped in a page header, a manifest truncated to NUL bytes, and snapshots uploaded by hand
with a correct sha256 but a bad row or a malformed page.
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
import sqlite3
from pathlib import Path

import pytest
from cli_support import run_tiles
from remote_support import add_tiles, make_library, tile_hashes
from s3_server import moto, remote_url, s3_env  # noqa: F401  (fixtures)

from remote.backend import open_backend
from remote.sync import BadSnapshot, pull, push, read_watermark
from tilelib.errors import CorruptLibrary, HashMismatch, SchemaMismatch
from tilelib.store import Library


def head_doc(url: str) -> dict | None:
    h = open_backend(url).get_head()
    return None if h is None else json.loads(h.body)


def remote_state(url: str) -> tuple:
    """Everything a reader of the remote can see: HEAD's body and the set of snapshots."""
    if url.startswith("file://") and not Path(url[7:]).exists():
        return (None, [])  # a file:// remote that was never created
    b = open_backend(url)
    h = b.get_head()
    return (None if h is None else h.body, sorted(s.sha for s in b.list_snapshots()))


def tamper_row(path: Path, rowid: int = 1) -> str:
    with sqlite3.connect(path) as c:
        (h,) = c.execute("SELECT hash FROM tiles WHERE rowid = ?", (rowid,)).fetchone()
        c.execute("UPDATE tiles SET givens = zeroblob(length(givens)) WHERE rowid = ?", (rowid,))
    return h


def flip_page_header(path: Path, name: str = "sqlite_autoindex_tiles_1") -> None:
    """Flip the b-tree page-type byte of ``name``'s root page: PRAGMA quick_check fails."""
    with sqlite3.connect(path) as c:
        page = c.execute("PRAGMA page_size").fetchone()[0]
        (root,) = c.execute("SELECT rootpage FROM sqlite_master WHERE name = ?", (name,)).fetchone()
    data = bytearray(path.read_bytes())
    data[(root - 1) * page + 3] ^= 0xFF
    path.write_bytes(bytes(data))


cli = run_tiles


def upload_tampered(url: str, sha: str, raw: Path, rowid: int = 1) -> tuple[str, int]:
    """Download object ``sha`` to ``raw``, tamper row ``rowid``, upload it under its new sha256 (as a
    broken client would: consistent bytes, a bad row); returns (sha, size)."""
    b = open_backend(url)
    b.get_snapshot(sha, raw)
    tamper_row(raw, rowid)
    data = raw.read_bytes()
    bad = hashlib.sha256(data).hexdigest()
    b.put_snapshot(bad, raw)
    return bad, len(data)


# ---------------------------------------------------------------- publish only what verifies


def test_first_push_of_a_tampered_library_is_refused_and_remote_untouched(remote_url, tmp_path):
    a = tmp_path / "a.sqlite"
    make_library(a, 1, 12)
    victim = tamper_row(a, 1)
    before = remote_state(remote_url)
    with pytest.raises(HashMismatch, match=f"row 1 \\({victim}\\)"):
        push(a, open_backend(remote_url))
    assert remote_state(remote_url) == before


@pytest.fixture
def incremental(monkeypatch):
    """Treat every library as large: the default check covers only what changed (and tampering)."""
    monkeypatch.setattr("trust.checks.FULL_CHECK_MAX_ROWS", 0)


def test_tampering_after_a_verified_push_is_caught_by_the_incremental_check(remote_url, tmp_path, incremental):
    a = tmp_path / "a.sqlite"
    make_library(a, 1, 12)
    push(a, open_backend(remote_url))
    with Library.open(a) as lib:
        assert read_watermark(lib)[0] == 12  # the next check may start after row 12
    tamper_row(a, 1)
    add_tiles(a, 2, 3)  # something new, so a push would publish
    with Library.open(a) as lib:
        assert read_watermark(lib) == (0, 0, 0)  # the update trigger marked the file dirty
    before = remote_state(remote_url)
    with pytest.raises(CorruptLibrary, match="push refused, the remote is untouched"):
        push(a, open_backend(remote_url))
    assert remote_state(remote_url) == before


def test_a_dropped_trigger_is_refused_by_name_and_the_remote_is_untouched(remote_url, tmp_path, incremental):
    """Without its tamper trigger a file could hide an update from the incremental check: since
    issue 51 the schema is proven whole, so the push refuses the file, naming the trigger."""
    a = tmp_path / "a.sqlite"
    make_library(a, 1, 8)
    push(a, open_backend(remote_url))
    with sqlite3.connect(a) as c:
        c.execute("DROP TRIGGER tiles_updated")
    tamper_row(a, 2)
    before = remote_state(remote_url)
    with pytest.raises(SchemaMismatch, match='missing trigger "tiles_updated" on tiles'):
        push(a, open_backend(remote_url))
    assert remote_state(remote_url) == before


def test_clean_incremental_push_checks_only_new_rows(remote_url, tmp_path, incremental):
    a = tmp_path / "a.sqlite"
    make_library(a, 1, 20)
    r1 = push(a, open_backend(remote_url))
    assert r1.check.rows_checked == 20
    add_tiles(a, 2, 3)
    r2 = push(a, open_backend(remote_url))
    assert r2.status == "pushed" and r2.check.rows_checked == 3 and r2.check.integrity == "quick"
    r3 = push(a, open_backend(remote_url), check="full")
    assert r3.status == "up_to_date" and r3.check.rows_checked == 23 and r3.check.integrity == "full"


def test_a_small_library_gets_the_full_check_by_default(remote_url, tmp_path):
    a = tmp_path / "a.sqlite"
    make_library(a, 1, 20)
    push(a, open_backend(remote_url))
    add_tiles(a, 2, 3)
    r = push(a, open_backend(remote_url))
    assert r.check.integrity == "full" and r.check.rows_checked == 23


def test_a_damaged_index_that_only_integrity_check_sees_is_refused(remote_url, tmp_path):
    """A flipped byte inside an index entry: quick_check says ok, integrity_check does not."""
    a = tmp_path / "a.sqlite"
    make_library(a, 1, 300)
    push(a, open_backend(remote_url))
    add_tiles(a, 2, 3)
    with sqlite3.connect(a) as c:
        page = c.execute("PRAGMA page_size").fetchone()[0]
        (h,) = c.execute("SELECT hash FROM tiles WHERE rowid = 7").fetchone()
    data = bytearray(a.read_bytes())
    # The hash is in the file twice: in its table record and in the hash index's entry (a page of
    # type 2 or 10, SQLite's index b-tree pages). Flip one character of the index's copy.
    found = [m.start() for m in re.finditer(re.escape(h.encode()), bytes(data))]
    at = [i for i in found if data[i - i % page] in (2, 10)]
    assert len(found) == 2
    assert len(at) == 1
    data[at[0] + 20] ^= 0x01
    a.write_bytes(bytes(data))
    with sqlite3.connect(a) as c:
        assert c.execute("PRAGMA quick_check").fetchone()[0] == "ok"
    before = remote_state(remote_url)
    with pytest.raises(CorruptLibrary, match="integrity_check"):
        push(a, open_backend(remote_url))
    assert remote_state(remote_url) == before


def test_a_byte_flipped_inside_an_old_record_is_refused(remote_url, tmp_path):
    """The disk flips a bit of a stored givens BLOB: no trigger fires, only re-hashing sees it."""
    a = tmp_path / "a.sqlite"
    make_library(a, 1, 40)
    push(a, open_backend(remote_url))
    with sqlite3.connect(a) as c:
        h, giv = c.execute("SELECT hash, givens FROM tiles WHERE rowid = 1").fetchone()
    data = bytearray(a.read_bytes())
    at = data.find(bytes(giv))
    assert at > 0 and data.count(bytes(giv)) == 1
    data[at] ^= 0x01
    a.write_bytes(bytes(data))
    add_tiles(a, 2, 2)
    before = remote_state(remote_url)
    with pytest.raises(HashMismatch, match=h):
        push(a, open_backend(remote_url))
    assert remote_state(remote_url) == before


@pytest.mark.parametrize("size", ["small", "large"])
def test_push_refuses_a_malformed_page(remote_url, tmp_path, monkeypatch, size):
    """A broken page header: integrity_check (small libraries) and quick_check (large) both see it."""
    if size == "large":
        monkeypatch.setattr("trust.checks.FULL_CHECK_MAX_ROWS", 0)
    a = tmp_path / "a.sqlite"
    make_library(a, 1, 200)
    flip_page_header(a)
    before = remote_state(remote_url)
    with pytest.raises(CorruptLibrary, match="integrity_check" if size == "small" else "quick_check"):
        push(a, open_backend(remote_url))
    assert remote_state(remote_url) == before


def test_push_refuses_a_truncated_stored_manifest(remote_url, tmp_path):
    from tilelib import ledger

    a = tmp_path / "a.sqlite"
    make_library(a, 1, 4)
    with Library.open(a) as lib:
        ledger.put_manifest(lib.conn, "2026-11-01", "ab" * 32, '{"format":"tiles-manifest/1"' + "\0" * 40)
    before = remote_state(remote_url)
    with pytest.raises(CorruptLibrary, match="manifest of 2026-11-01 is damaged"):
        push(a, open_backend(remote_url))
    assert remote_state(remote_url) == before


def test_cli_push_of_a_tampered_library_exits_3_naming_the_row(tmp_path):
    a = tmp_path / "a.sqlite"
    make_library(a, 1, 5)
    victim = tamper_row(a, 1)
    url = f"file://{tmp_path / 'remote'}"
    r = cli("library", "push", "--remote", url, "--library", str(a))
    assert r.returncode == 3, r.stderr
    assert victim in r.stderr and "untouched" in r.stderr and len(r.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "remote" / "HEAD.json").exists()


# ---------------------------------------------------------------- a poisoned remote heals


def _poison(url: str, tmp_path: Path, how: str) -> str:
    """Upload, as a broken client would, a snapshot with a correct sha256 that fails pull's checks,
    and make it HEAD on top of the current one. Returns its sha."""
    b = open_backend(url)
    head = b.get_head()
    doc = json.loads(head.body)
    bad = tmp_path / f"bad-{how}.sqlite"
    b.get_snapshot(doc["snapshot"], bad)
    add_tiles(bad, 99, 4)  # a poisoned push usually carries new rows too
    if how == "hash":
        tamper_row(bad, 2)
    else:
        flip_page_header(bad)
    data = bad.read_bytes()
    sha = hashlib.sha256(data).hexdigest()
    b.put_snapshot(sha, bad)
    body = json.dumps(
        {"snapshot": sha, "size": len(data), "tiles": doc["tiles"] + 4, "parent": doc["snapshot"]}
    ).encode()
    b.put_head(body, head.etag)
    return sha


@pytest.mark.parametrize("how", ["hash", "page"])
def test_two_healthy_clients_recover_from_a_poisoned_head(remote_url, tmp_path, how):
    a, b = tmp_path / "a.sqlite", tmp_path / "b.sqlite"
    ha = make_library(a, 1, 10)
    push(a, open_backend(remote_url))
    hb = make_library(b, 2, 6)
    push(b, open_backend(remote_url))  # HEAD: a ∪ b, parent: a's snapshot
    good = head_doc(remote_url)
    bad = _poison(remote_url, tmp_path, how)
    assert head_doc(remote_url)["snapshot"] == bad

    ha |= add_tiles(a, 3, 2)
    r = pull(a, open_backend(remote_url))  # a falls back to the good HEAD before
    assert r.snapshot == good["snapshot"] and r.note and "bad" in r.note and bad[:12] in r.note
    p = push(a, open_backend(remote_url))  # and publishes a good HEAD on top
    assert p.status == "pushed" and p.note and "bad" in p.note
    healed = head_doc(remote_url)
    assert healed["parent"] == good["snapshot"] and healed["snapshot"] != bad

    hb |= add_tiles(b, 4, 2)
    push(b, open_backend(remote_url))  # b never saw the poison; nothing is lost
    fresh = tmp_path / "fresh.sqlite"
    pr = pull(fresh, open_backend(remote_url))
    assert pr.status == "cloned" and pr.note is None
    assert tile_hashes(fresh) == ha | hb  # every row a good snapshot held, and theirs


@pytest.mark.parametrize("how", ["hash", "page"])
def test_push_alone_heals_without_a_pull_first(remote_url, tmp_path, how):
    a, b = tmp_path / "a.sqlite", tmp_path / "b.sqlite"
    ha = make_library(a, 1, 10)
    push(a, open_backend(remote_url))
    hb = make_library(b, 2, 3)
    _poison(remote_url, tmp_path, how)
    p = push(b, open_backend(remote_url))  # nothing pulled yet: push falls back itself
    assert p.status == "pushed" and p.note
    fresh = tmp_path / "fresh.sqlite"
    pull(fresh, open_backend(remote_url))
    assert tile_hashes(fresh) == ha | hb


def test_an_up_to_date_client_still_replaces_a_bad_head(remote_url, tmp_path):
    """A client whose rows are all in the good snapshot has nothing new, yet must not leave HEAD bad."""
    a = tmp_path / "a.sqlite"
    ha = make_library(a, 1, 10)
    push(a, open_backend(remote_url))
    bad = _poison(remote_url, tmp_path, "hash")
    r = pull(a, open_backend(remote_url))
    assert r.note and r.tiles_added == 0
    assert pull(a, open_backend(remote_url)).note  # still says so until someone pushes
    p = push(a, open_backend(remote_url))
    assert p.status == "pushed" and head_doc(remote_url)["snapshot"] != bad
    fresh = tmp_path / "fresh.sqlite"
    assert pull(fresh, open_backend(remote_url)).note is None and tile_hashes(fresh) == ha


def test_no_sound_snapshot_at_all_is_an_error(remote_url, tmp_path):
    a = tmp_path / "a.sqlite"
    make_library(a, 1, 6)
    sha = push(a, open_backend(remote_url)).snapshot
    b = open_backend(remote_url)
    bad, size = upload_tampered(remote_url, sha, tmp_path / "raw.sqlite")
    if remote_url.startswith("file://"):
        (Path(remote_url[7:]) / "snapshots" / f"{sha}.sqlite").unlink()  # the only good one is gone
    else:
        b.delete_snapshot(sha)
    head = b.get_head()
    b.put_head(json.dumps({"snapshot": bad, "size": size, "tiles": 6, "parent": sha}).encode(), head.etag)
    with pytest.raises(BadSnapshot, match="none of the"):
        pull(tmp_path / "x.sqlite", open_backend(remote_url))
    assert not (tmp_path / "x.sqlite").exists()


def test_head_history_lets_a_client_fall_back_several_snapshots(remote_url, tmp_path):
    """Bases (full snapshots: the first push and every compaction) form the chain HEAD names."""
    a = tmp_path / "a.sqlite"
    ha = make_library(a, 1, 4)
    shas = [push(a, open_backend(remote_url)).snapshot]
    for seed in (2, 3):
        ha |= add_tiles(a, seed, 2)
        shas.append(push(a, open_backend(remote_url), compact=True).snapshot)
    doc = head_doc(remote_url)
    assert doc["snapshot"] == shas[2] and doc["parent"] == shas[1] and doc["history"] == [shas[0]]
    # poison the two newest bases: a fresh client falls back two bases along the history
    b = open_backend(remote_url)
    for sha in shas[1:]:
        raw = tmp_path / f"{sha[:8]}.sqlite"
        b.get_snapshot(sha, raw)
        flip_page_header(raw)
        if remote_url.startswith("file://"):
            (Path(remote_url[7:]) / "snapshots" / f"{sha}.sqlite").write_bytes(raw.read_bytes())
        else:
            b.client.put_object(Bucket=b.url.bucket, Key=b.url.key(f"snapshots/{sha}.sqlite"), Body=raw.read_bytes())
    fresh = tmp_path / "fresh.sqlite"
    r = pull(fresh, open_backend(remote_url))
    assert r.snapshot == shas[0] and "2 snapshot(s) back" in r.note
    shutil.copy(a, tmp_path / "keep.sqlite")
