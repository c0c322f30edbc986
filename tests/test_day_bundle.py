"""A day's bundle (issue 31; FORMAT §5, §10 step bundle): what is published of a finished day.

Two fresh G=61 nights on one library. The bundle of night 2 holds exactly its board's rows (read
back with sqlite3 and compared with the library), passes `library verify`, and verifies the day
alone with `referee verify --seed` and with the independent verifier; the full library still
verifies as before. Tampered bundles — a row missing, a stock tile added, a manifest edited to
place a tile night 1 spent, a spent row of another board, the bundle of another day — are refused
by both verifiers at step bundle with one line. Bad input (a day with no manifest, an --out that
cannot be written) is one line, exit 2, and writes nothing."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

import independent_verifier as iv
import pytest
from cli_support import run_tiles

SECRET = {"TILES_SECRET": "bundle-secret"}
DAY1, DAY2 = "2026-10-01", "2026-10-02"


@pytest.fixture(scope="module")
def nights(tmp_path_factory):
    root = tmp_path_factory.mktemp("bundle")
    lib, out = root / "lib.sqlite", root / "out"
    for day in (DAY1, DAY2):
        r = run_tiles("daily", "build", "--date", day, "--size", "61", "--library", lib, "--out", out, env=SECRET)
        assert r.returncode == 0, r.stderr[-2000:]
    bundle = root / f"{DAY2}.bundle.sqlite"
    r = run_tiles("daily", "bundle", "--date", DAY2, "--out", bundle, "--library", lib)
    assert r.returncode == 0 and r.stdout.startswith(f"wrote bundle of {DAY2}: "), r.stderr
    seed = run_tiles("daily", "reveal", "--date", DAY2, env=SECRET).stdout.strip()
    return {"lib": lib, "m1": out / f"{DAY1}.json", "m2": out / f"{DAY2}.json", "bundle": bundle, "seed": seed}


def _q(path: Path, sql: str, *args) -> list[tuple]:
    conn = sqlite3.connect(path)
    try:
        return conn.execute(sql, args).fetchall()
    finally:
        conn.close()


def _refused(manifest: Path, bundle: Path, seed: str, want: str) -> None:
    """Both verifiers refuse at step bundle; the project's says ``want`` in one line, exit 5."""
    r = run_tiles("referee", "verify", manifest, "--seed", seed, "--library", bundle)
    assert r.returncode == 5 and r.stderr.count("\n") == 1 and f"error: step bundle: {want}" in r.stderr, r.stderr
    with pytest.raises(iv.Rejected) as rej:
        iv.verify(manifest.read_text(), str(bundle), bytes.fromhex(seed))
    assert rej.value.step == "bundle", rej.value


def test_the_bundle_holds_exactly_the_days_rows_and_verifies_the_day_alone(nights):
    lib, b, m2 = nights["lib"], nights["bundle"], nights["m2"]
    text = m2.read_text()
    hashes = {t["hash"] for t in json.loads(text)["tiles"]}
    assert {h for (h,) in _q(b, "SELECT hash FROM tiles")} == hashes
    assert len(hashes) < _q(lib, "SELECT count(*) FROM tiles")[0][0]  # the stock stays behind
    cols = (
        "hash, n, version, seam_mask, top, right, bottom, left, m, blank, ladder, solution, givens, flip, alts, created"
    )
    ph = ",".join("?" * len(hashes))
    assert sorted(_q(b, f"SELECT {cols} FROM tiles")) == sorted(
        _q(lib, f"SELECT {cols} FROM tiles WHERE hash IN ({ph})", *hashes)
    )
    assert _q(b, "SELECT day, json FROM manifests") == [(DAY2, text)]
    import hashlib

    digest = hashlib.sha256(text.encode()).hexdigest()
    assert sorted(_q(b, "SELECT solution, board, n, day FROM spent")) == sorted(
        _q(lib, "SELECT solution, board, n, day FROM spent WHERE board = ?", digest)
    )
    assert len(_q(b, "SELECT 1 FROM spent")) > 10
    assert _q(b, "SELECT count(*) FROM misses") == [(0,)]
    meta = dict(_q(b, "SELECT key, value FROM meta"))
    assert meta["kind"] == "bundle" and meta["bundle_day"] == DAY2 and meta["schema_version"] == "2"
    assert meta["library_id"] != dict(_q(lib, "SELECT key, value FROM meta"))["library_id"]
    assert run_tiles("library", "verify", "--library", b).returncode == 0
    r = run_tiles("referee", "verify", m2, "--seed", nights["seed"], "--library", b)
    assert r.returncode == 0 and r.stdout.strip().endswith("seed ok, from its bundle"), r.stdout + r.stderr
    rep = iv.verify(text, str(b), bytes.fromhex(nights["seed"]))
    assert rep["bundle"] is True and rep["status"] == "frontier"
    # the full library is checked as before
    full = run_tiles("referee", "verify", m2, "--seed", nights["seed"], "--library", lib)
    assert full.returncode == 0 and "from its bundle" not in full.stdout
    assert iv.verify(text, str(lib))["bundle"] is False


def test_a_bundle_missing_a_row_is_refused(nights, tmp_path):
    b = tmp_path / "b.sqlite"
    shutil.copy(nights["bundle"], b)
    tiles = json.loads(nights["m2"].read_text())["tiles"]
    victim = tiles[len(tiles) // 2]["hash"]
    conn = sqlite3.connect(b)
    conn.execute("DELETE FROM tiles WHERE hash = ?", (victim,))
    conn.commit()
    conn.close()
    first = next(t["id"] for t in tiles if t["hash"] == victim)
    _refused(nights["m2"], b, nights["seed"], f"tile {first}'s row {victim[:12]}… is not in the bundle")


def test_a_bundle_carrying_a_stock_tile_is_refused(nights, tmp_path):
    b = tmp_path / "b.sqlite"
    shutil.copy(nights["bundle"], b)
    placed = {t["hash"] for t in json.loads(nights["m2"].read_text())["tiles"]}
    conn = sqlite3.connect(b)
    conn.execute("ATTACH DATABASE ? AS lib", (str(nights["lib"]),))
    stock = conn.execute("SELECT hash FROM lib.tiles ORDER BY hash").fetchall()
    extra = next(h for (h,) in stock if h not in placed)
    conn.execute("INSERT INTO tiles SELECT * FROM lib.tiles WHERE hash = ?", (extra,))
    conn.commit()
    conn.close()
    _refused(nights["m2"], b, nights["seed"], "the bundle holds 1 tile row(s) the manifest does not place")


def test_a_manifest_edited_to_place_a_spent_tile_is_refused(nights, tmp_path):
    """Night 2's manifest with one n >= 10 tile swapped for a night-1 tile of the same side: the
    bundle refuses it (its manifest is another), and so does the full library (step fresh or a
    later one, never a pass)."""
    one = {t["n"]: t["hash"] for t in json.loads(nights["m1"].read_text())["tiles"] if t["n"] >= 10}
    m = json.loads(nights["m2"].read_text())
    victim = next(t for t in m["tiles"] if t["n"] in one and t["hash"] != one[t["n"]])
    text = nights["m2"].read_text().replace(victim["hash"], one[victim["n"]])
    forged = tmp_path / "forged.json"
    forged.write_text(text)
    _refused(forged, nights["bundle"], nights["seed"], f"the bundle's manifest of {DAY2} is not this manifest")
    r = run_tiles("referee", "verify", forged, "--library", nights["lib"])
    assert r.returncode == 5, r.stderr


def test_spent_rows_of_another_board_or_another_days_bundle_are_refused(nights, tmp_path):
    b = tmp_path / "b.sqlite"
    shutil.copy(nights["bundle"], b)
    conn = sqlite3.connect(b)
    conn.execute("INSERT INTO spent VALUES (?, ?, 12, ?, 0)", ("ab" * 32, "cd" * 32, DAY1))
    conn.commit()
    conn.close()
    _refused(nights["m2"], b, nights["seed"], "the bundle holds 1 spent row(s) that are not this board's")
    seed1 = run_tiles("daily", "reveal", "--date", DAY1, env=SECRET).stdout.strip()
    _refused(nights["m1"], nights["bundle"], seed1, f"this is the bundle of {DAY2}, the manifest is of {DAY1}")


def test_bad_input_is_one_line_exit_2_and_writes_nothing(nights, tmp_path):
    before = set(tmp_path.iterdir())
    cases = [
        ("2026-10-09", tmp_path / "x.sqlite", "holds no manifest for 2026-10-09"),
        (DAY2, tmp_path / "missing" / "x.sqlite", "no directory"),
        (DAY2, tmp_path, "is a directory"),
        ("2026-13-01", tmp_path / "x.sqlite", ""),
    ]
    for day, out, want in cases:
        r = run_tiles("daily", "bundle", "--date", day, "--out", out, "--library", nights["lib"])
        assert r.returncode == 2 and r.stderr.count("\n") == 1 and want in r.stderr, (day, out, r.stderr)
    afile = tmp_path / "afile"
    afile.write_text("x")
    r = run_tiles("daily", "bundle", "--date", DAY2, "--out", afile / "x.sqlite", "--library", nights["lib"])
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "which is a file" in r.stderr, r.stderr
    assert set(tmp_path.iterdir()) == before | {afile}
    r = run_tiles("daily", "bundle", "--date", DAY2, "--library", tmp_path / "none.sqlite")
    assert r.returncode == 3 and r.stderr.count("\n") == 1, r.stderr
