"""The same boards after a refactor (issue 34): for three fixed dates and each packer at G=301, the
manifests and the library rows a chain of nightly builds leaves are byte for byte those of the
code before it (``tests/data/golden_build``, made by ``tests/golden_build.py``; its docstring
says what is normalised and why). The normalisation is checked too: it ignores exactly the wall
clock, the library id, the release and the board digests it names, and nothing else."""

from __future__ import annotations

import gzip
import json
import sqlite3
from pathlib import Path

import pytest
from cli_support import run_tiles
from golden_build import DAYS, GOLDEN, PACKERS, SECRET, build_args, library_rows, normalised_manifest


@pytest.mark.slow
@pytest.mark.parametrize("packer", PACKERS)
def test_three_nights_build_the_golden_boards_and_library_rows(packer, tmp_path):
    lib, out = tmp_path / "lib.sqlite", tmp_path / "out"
    for day in DAYS:
        r = run_tiles(*build_args(lib, out, packer, day), env={"TILES_SECRET": SECRET})
        assert r.returncode == 0, r.stderr[-2000:]
        want = gzip.decompress((GOLDEN / packer / f"{day}.json.gz").read_bytes()).decode()
        assert normalised_manifest((out / f"{day}.json").read_text()) == normalised_manifest(want), (packer, day)
        want_rows = json.loads((GOLDEN / packer / f"{day}.rows.json").read_text())
        assert library_rows(lib) == want_rows, (packer, day)


def _library(path: Path, release: str = "0.6.1") -> Path:
    """A small library file: the schema (less its tamper triggers), one tile, one miss, one manifest and
    its spent row."""
    from tilelib.store import Library

    with Library.create(path):
        pass
    text = json.dumps({"day": "2026-11-01", "build": {"versions": {"tiles": release}}}, separators=(",", ":"))
    import hashlib

    board = hashlib.sha256(text.encode()).hexdigest()
    conn = sqlite3.connect(path)
    for (name,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'trigger'").fetchall():
        conn.execute(f"DROP TRIGGER {name}")  # the tamper marks would be a change of meta of their own
    conn.execute(
        "INSERT INTO tiles VALUES (?, 6, 1, 0, 1, 2, 3, 4, 1, 0.5, 2, 0, 0, 0, 0, 0, 0, 0, ?, ?, ?, ?, 100)",
        ("ab" * 32, b"\x01" * 5, b"\x02" * 5, b"", b""),
    )
    conn.execute(
        "INSERT INTO misses (n, side_mask, top, right, bottom, left, top_mask, right_mask, bottom_mask, "
        "left_mask, packing, first_seen, last_seen) VALUES (6, 1, 5, 0, 0, 0, 31, 0, 0, 0, 'p', 100, 200)"
    )
    conn.execute("INSERT INTO manifests VALUES ('2026-11-01', 'c0', ?, 100)", (text,))
    conn.execute("INSERT INTO spent VALUES (?, ?, 10, '2026-11-01', 100)", ("cd" * 32, board))
    conn.commit()
    conn.close()
    return path


def _change(path: Path, sql: str, *args) -> dict:
    conn = sqlite3.connect(path)
    conn.execute(sql, args)
    conn.commit()
    conn.close()
    return library_rows(path)


def test_the_rows_digest_ignores_the_clock_and_the_library_id_and_nothing_else(tmp_path):
    path = _library(tmp_path / "a.sqlite")
    base = library_rows(path)
    assert {t: v["rows"] for t, v in base.items()} == {
        "manifests": 1,
        "meta": base["meta"]["rows"],
        "misses": 1,
        "spent": 1,
        "tiles": 1,
    }
    assert _change(path, "UPDATE tiles SET created = 999") == base
    assert _change(path, "UPDATE misses SET first_seen = 1, last_seen = 2") == base
    assert _change(path, "UPDATE spent SET created = 5") == base
    assert _change(path, "UPDATE meta SET value = 'other' WHERE key = 'library_id'") == base
    for table, sql, args in [
        ("tiles", "UPDATE tiles SET givens = ?", (b"\x03" * 5,)),
        ("misses", "UPDATE misses SET count = 2", ()),
        ("spent", "UPDATE spent SET n = 12", ()),
        ("meta", "INSERT INTO meta VALUES ('stock:night:x', '{}')", ()),
    ]:
        got = _change(path, sql, *args)
        assert got[table] != base[table], table
        base = got


def test_the_rows_digest_holds_across_a_release_that_builds_the_same_board(tmp_path):
    a = library_rows(_library(tmp_path / "a.sqlite", "0.6.1"))
    b = library_rows(_library(tmp_path / "b.sqlite", "0.7.0"))
    assert a == b  # the manifest's release string and the board digest of its text
    c = library_rows(_library(tmp_path / "c.sqlite", "0.6.1"))
    assert _change(tmp_path / "c.sqlite", "UPDATE manifests SET seed_commit = 'c1'") != c


def test_a_manifest_differs_in_anything_but_its_release():
    text = '{"build":{"versions":{"tiles":"0.6.1","x":"1"}},"tiles":[1]}'
    assert normalised_manifest(text) == normalised_manifest(text.replace("0.6.1", "0.7.0"))
    assert normalised_manifest(text) != normalised_manifest(text.replace('"x":"1"', '"x":"2"'))
