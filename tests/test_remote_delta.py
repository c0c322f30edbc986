"""Issue 12 part 4: sync in O(new rows). Push uploads a delta of what the remote lacks, pull fetches
only the deltas it has not merged, deltas compact into a full snapshot, and a bad delta heals.

Every test runs against the real moto server on loopback and against file:// (``remote_url``).
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from contextlib import closing
from pathlib import Path

import pytest
from remote_support import add_tiles, make_library, tile_hashes
from s3_server import moto, remote_url, s3_env  # noqa: F401  (fixtures)
from test_trust_remote import tamper_row, upload_tampered

from remote.backend import open_backend
from remote.delta import DELTA, MAX_DELTAS, kind_of
from remote.sync import pull, push
from tilelib import ledger
from tilelib.constraint import Constraint
from tilelib.store import Library


def kind_at(path: Path) -> str:
    """``remote.delta.kind_of`` of a library file."""
    with closing(sqlite3.connect(path)) as conn:
        return kind_of(conn)


def head_doc(url: str) -> dict:
    return json.loads(open_backend(url).get_head().body)


def record_misses(path: Path, k: int, seed: int) -> list[int]:
    """``k`` new misses (distinct two-side constraints) recorded in the library at ``path``."""
    from tilelib.rules import valid_lines

    lines = sorted(valid_lines(6))
    with Library.open(path) as lib:
        ids = []
        for i in range(k):
            c = Constraint.sides(6, top=lines[(seed * 5 + i) % len(lines)], left=lines[(seed * 3 + 2 * i) % len(lines)])
            ids.append(ledger.record_miss(lib.conn, c).id)
        return ids


def miss_rows(path: Path) -> set:
    """Every misses row's content (ids are per file, so left out)."""
    with sqlite3.connect(path) as c:
        return set(
            c.execute(
                "SELECT n, top, right, bottom, left, top_mask, right_mask, bottom_mask, left_mask, "
                "nofit, tile, count FROM misses"
            )
        )


def test_second_push_is_a_delta_and_pull_fetches_only_it(remote_url, tmp_path):
    a, b = tmp_path / "a.sqlite", tmp_path / "b.sqlite"
    ha = make_library(a, 1, 40)
    first = push(a, open_backend(remote_url))
    assert first.kind == "snapshot"
    pull(b, open_backend(remote_url))
    ha |= add_tiles(a, 2, 5)
    second = push(a, open_backend(remote_url))
    doc = head_doc(remote_url)
    assert second.kind == "delta" and doc["snapshot"] == first.snapshot
    assert doc["deltas"] == [{"sha": second.snapshot, "size": second.bytes}] and doc["tiles"] == 45
    d = tmp_path / "delta.sqlite"
    open_backend(remote_url).get_snapshot(second.snapshot, d)
    assert kind_at(d) == DELTA and len(tile_hashes(d)) == 5  # only what the remote lacked
    r = pull(b, open_backend(remote_url))
    assert (r.status, r.tiles_added, r.bytes) == ("merged", 5, second.bytes)
    assert tile_hashes(b) == ha


def test_misses_updates_and_manifests_travel_in_deltas(remote_url, tmp_path):
    a, b = tmp_path / "a.sqlite", tmp_path / "b.sqlite"
    make_library(a, 1, 4)
    ids = record_misses(a, 3, 1)
    push(a, open_backend(remote_url))
    pull(b, open_backend(remote_url))
    with Library.open(a) as lib:
        ledger.mark_nofit(lib.conn, ids[0])  # an update in place, not a new row
        ledger.put_manifest(
            lib.conn, "2026-11-01", "ab" * 32, json.dumps({"format": "x"})
        )  # checked below: must be refused
    with pytest.raises(Exception, match="manifest of 2026-11-01"):
        push(a, open_backend(remote_url))
    with sqlite3.connect(a) as c:
        c.execute("DELETE FROM manifests")
    record_misses(a, 2, 9)
    r = push(a, open_backend(remote_url))
    assert r.kind == "delta"
    pull(b, open_backend(remote_url))
    assert miss_rows(b) == miss_rows(a)


def test_deltas_compact_into_a_snapshot(remote_url, tmp_path):
    a = tmp_path / "a.sqlite"
    expected = make_library(a, 1, 3)
    push(a, open_backend(remote_url))
    kinds = []
    for i in range(MAX_DELTAS + 1):
        expected |= add_tiles(a, 10 + i, 1)
        kinds.append(push(a, open_backend(remote_url)).kind)
    assert kinds == ["delta"] * MAX_DELTAS + ["snapshot"]
    doc = head_doc(remote_url)
    assert doc["deltas"] == [] and len(doc["parent_deltas"]) == MAX_DELTAS
    fresh = tmp_path / "fresh.sqlite"
    r = pull(fresh, open_backend(remote_url))
    assert r.bytes == doc["size"] and tile_hashes(fresh) == expected


def base_and_one_delta(remote_url: str, a: Path):
    """Push a 6-tile library, then 2 more tiles as a sound delta; (its tile hashes, the backend,
    HEAD's document)."""
    good = make_library(a, 1, 6)
    push(a, open_backend(remote_url))
    good |= add_tiles(a, 2, 2)
    push(a, open_backend(remote_url))  # delta 1: sound
    return good, open_backend(remote_url), head_doc(remote_url)


def test_a_bad_delta_heals_to_the_state_before_it(remote_url, tmp_path):
    a, b = tmp_path / "a.sqlite", tmp_path / "b.sqlite"
    good, be, doc = base_and_one_delta(remote_url, a)
    raw = tmp_path / "raw.sqlite"
    be.get_snapshot(doc["deltas"][0]["sha"], raw)
    add_tiles(raw, 3, 2)
    tamper_row(raw, 1)
    data = raw.read_bytes()
    sha = hashlib.sha256(data).hexdigest()
    be.put_snapshot(sha, raw)
    doc["deltas"].append({"sha": sha, "size": len(data)})
    be.put_head(json.dumps(doc).encode(), be.get_head().etag)  # a broken client's delta 2
    r = pull(b, open_backend(remote_url))
    assert r.note and "delta" in r.note and sha[:12] in r.note and tile_hashes(b) == good
    p = push(b, open_backend(remote_url))  # publishes a good HEAD: a full snapshot
    assert p.status == "pushed" and p.kind == "snapshot" and p.note
    fresh = tmp_path / "fresh.sqlite"
    assert pull(fresh, open_backend(remote_url)).note is None and tile_hashes(fresh) == good


def test_a_delta_is_never_taken_for_a_base(remote_url, tmp_path):
    """When every base is bad, a fallback must not settle on a delta (it holds a fraction of the rows)."""
    a = tmp_path / "a.sqlite"
    make_library(a, 1, 5)
    base = push(a, open_backend(remote_url)).snapshot
    add_tiles(a, 2, 2)
    push(a, open_backend(remote_url))
    be = open_backend(remote_url)
    bad, size = upload_tampered(remote_url, base, tmp_path / "raw.sqlite")
    doc = head_doc(remote_url)
    doc.update(snapshot=bad, size=size, parent=None)
    be.put_head(json.dumps(doc).encode(), be.get_head().etag)
    if remote_url.startswith("file://"):
        (Path(remote_url[7:]) / "snapshots" / f"{base}.sqlite").unlink()
    else:
        be.delete_snapshot(base)
    from remote.sync import BadSnapshot

    with pytest.raises(BadSnapshot, match="none of the"):
        pull(tmp_path / "fresh.sqlite", open_backend(remote_url))


# ---------------------------------------------------------------- one restore path (issue 35)


def test_the_one_fetch_holds_each_file_to_the_kind_named(remote_url, tmp_path):
    """``fetch_verified`` proves a file sound *and* of the kind its caller named: a delta fetched as
    a base and a base fetched as a delta are BadSnapshot, and nothing is left in the work dir."""
    from remote.snapshot import BASE, BadSnapshot, fetch_verified

    _, be, doc = base_and_one_delta(remote_url, tmp_path / "a.sqlite")
    base, delta = doc["snapshot"], doc["deltas"][0]["sha"]
    work = tmp_path / "work"
    work.mkdir()
    assert kind_at(fetch_verified(be, base, work, None, "quick", kind=BASE)) == BASE
    assert kind_at(fetch_verified(be, delta, work, None, "quick", kind=DELTA)) == DELTA
    for f in work.iterdir():
        f.unlink()
    with pytest.raises(BadSnapshot, match="is a delta where a base snapshot was named"):
        fetch_verified(be, delta, work, None, "quick", kind=BASE)
    with pytest.raises(BadSnapshot, match="is a base snapshot where a delta was named"):
        fetch_verified(be, base, work, None, "quick", kind=DELTA)
    with pytest.raises(ValueError, match="kind must be"):
        fetch_verified(be, base, work, None, "quick", kind="snapshot")
    assert list(work.iterdir()) == []


def test_a_base_listed_as_a_delta_stops_the_chain_there(remote_url, tmp_path):
    """HEAD naming a full snapshot among its deltas (a broken client): pull merges the deltas before
    it, says which one it refused and why, and a push publishes a good HEAD."""
    a, b = tmp_path / "a.sqlite", tmp_path / "b.sqlite"
    good, be, doc = base_and_one_delta(remote_url, a)
    other = tmp_path / "other.sqlite"
    make_library(other, 9, 3)  # a sound base, not a delta
    data = other.read_bytes()
    sha = hashlib.sha256(data).hexdigest()
    be.put_snapshot(sha, other)
    doc["deltas"].append({"sha": sha, "size": len(data)})
    be.put_head(json.dumps(doc).encode(), be.get_head().etag)
    r = pull(b, open_backend(remote_url))
    assert r.note and sha[:12] in r.note and "where a delta was named" in r.note
    assert tile_hashes(b) == good  # none of the stray base's rows
    assert push(b, open_backend(remote_url)).status == "pushed"
    assert pull(tmp_path / "fresh.sqlite", open_backend(remote_url)).note is None


def test_only_the_one_fetch_downloads_a_snapshot():
    """One restore path, read from the source: the shipped code calls ``get_snapshot`` only inside
    ``remote.snapshot.fetch_verified``, and every ``fetch_verified`` call names the kind it wants."""
    import ast

    from test_dependencies import ROOT, shipped_sources

    downloads, unnamed = [], []
    for path in shipped_sources():
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call) and isinstance(node.func, (ast.Attribute, ast.Name)):
                name = node.func.attr if isinstance(node.func, ast.Attribute) else node.func.id
                where = f"{path.relative_to(ROOT)}:{node.lineno}"
                if name == "get_snapshot":
                    downloads.append(where)
                if name == "fetch_verified" and not any(k.arg == "kind" for k in node.keywords):
                    unnamed.append(where)
    assert [d.split(":")[0] for d in downloads] == ["remote/snapshot.py"], downloads
    assert unnamed == []
