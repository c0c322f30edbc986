"""The fair rule end to end (issue 28): consecutive nights from an empty library with the default
settings hold no n >= 10 solution twice, within or across nights — checked from the manifests
and the library with this file's own symmetry code — and pass every verifier; ``--reuse any``
builds the boards of the code before the rule, byte for byte (tests/data/golden_any); a fresh
manifest that places a spent or twice-placed solution fails ``referee verify`` (exit 5, naming
the tile); a bad policy is bad input that writes nothing."""

from __future__ import annotations

import gzip
import hashlib
import json
import re
from dataclasses import replace
from pathlib import Path

import pytest
from cli_support import run_tiles
from independent_verifier import Rejected
from independent_verifier import verify as independent_verify
from test_spent_ledger import own_hash

from referee.manifest import load
from tilelib.bits import from_blob

GOLDEN = Path(__file__).parent / "data" / "golden_any"
GOLDEN_NIGHTS = [("2026-10-01", 61), ("2026-10-02", 61), ("2026-10-03", 61), ("2026-10-04", 301), ("2026-10-05", 301)]


def _build(lib: Path, out: Path, day: str, size: int, *extra: str, secret: str = "fair-secret"):
    r = run_tiles(
        "daily",
        "build",
        "--date",
        day,
        "--size",
        str(size),
        "--library",
        str(lib),
        "--out",
        str(out),
        *extra,
        env={"TILES_SECRET": secret},
    )
    assert r.returncode == 0, r.stderr[-2000:]
    return out / f"{day}.json"


def _solutions(lib: Path, manifest: Path) -> list[tuple[int, int, str]]:
    """(tile id, n, solution hash) of every tile of side n >= 10, hashed by tests/test_spent_ledger's
    own code from the library's stored solution."""
    import sqlite3

    m = json.loads(manifest.read_text())
    conn = sqlite3.connect(lib)
    out = []
    for t in m["tiles"]:
        if t["n"] >= 10:
            (sol,) = conn.execute("SELECT solution FROM tiles WHERE hash = ?", (t["hash"],)).fetchone()
            out.append((t["id"], t["n"], own_hash(from_blob(bytes(sol), t["n"]))))
    conn.close()
    return out


def _reward_share_repeated(nights: list[list[tuple[int, int, str]]]) -> float:
    seen, rep, total = set(), 0, 0
    for night in nights:
        for _i, n, sol in night:
            total += n * n
            rep += n * n if sol in seen else 0
            seen.add(sol)
    return rep / total


@pytest.mark.slow
def test_three_default_g301_nights_repeat_no_held_solution_and_pass_every_verifier(tmp_path):
    lib, out = tmp_path / "lib.sqlite", tmp_path / "out"
    nights, paths = [], []
    for day in ("2026-10-01", "2026-10-02", "2026-10-03"):
        p = _build(lib, out, day, 301)
        paths.append(p)
        nights.append(_solutions(lib, p))
    assert all(len(n) > 100 for n in nights)
    assert _reward_share_repeated(nights) == 0.0  # within and across nights
    for p in paths:
        m = load(p)
        assert m.reuse == "fresh"
        r = run_tiles("referee", "verify", str(p), "--library", str(lib))
        assert r.returncode == 0 and r.stdout.startswith("frontier"), r.stderr
        independent_verify(p.read_text(), str(lib))
        st = m.stats
        assert st["stitch"]["final_fill"] >= 0.99 and st["zone_fraction"] < 0.05
        assert st["clues"] <= max(1, m.tile_count() // 100) * 3
    # the control: the same nights under --reuse any repeat solutions (the check above can fail)
    lib2, out2 = tmp_path / "any.sqlite", tmp_path / "any"
    anys = [_solutions(lib2, _build(lib2, out2, d, 301, "--reuse", "any")) for d in ("2026-10-01", "2026-10-02")]
    assert _reward_share_repeated(anys) > 0.05


def _normalised(text: str, golden_version: str) -> str:
    """The manifest with ``build.versions.tiles`` (the release) set to the golden's: the one field
    a release may change on a board it builds byte for byte."""
    m = json.loads(text)
    return text.replace(f'"tiles":"{m["build"]["versions"]["tiles"]}"', f'"tiles":"{golden_version}"')


@pytest.mark.slow
def test_reuse_any_builds_the_golden_boards_of_the_code_before_the_rule(tmp_path):
    """Since the tile-by-tile rule (issue 29) a board differs from the code before only by the clues
    that rule appends and its ``play`` key: without them it is the golden board, byte for byte; and
    the golden manifests themselves, built under the rule before, still verify. (The golden boards
    were re-made once, for GENERATOR_VERSION 5: tests/data/golden_any/README.md.)"""
    lib, out = tmp_path / "lib.sqlite", tmp_path / "out"
    for day, size in GOLDEN_NIGHTS:
        r = run_tiles(
            "daily",
            "build",
            "--date",
            day,
            "--size",
            str(size),
            "--library",
            str(lib),
            "--out",
            str(out),
            "--reuse",
            "any",
            "--json",
            env={"TILES_SECRET": "golden-secret"},
        )
        assert r.returncode == 0, r.stderr[-2000:]
        k = json.loads(r.stdout)["play_clues"]
        m = load(out / f"{day}.json")
        assert m.reuse is None and m.play == "tile-by-tile"  # absent = any, as before the rule
        before = replace(m, play=None).with_clues(
            m.clues[: len(m.clues) - k], stats=dict(m.stats) | {"clues": len(m.clues) - k}
        )
        want = gzip.decompress((GOLDEN / f"{day}.json.gz").read_bytes()).decode()
        assert _normalised(before.to_json(), json.loads(want)["build"]["versions"]["tiles"]) == want, day
        golden = tmp_path / f"golden-{day}.json"
        golden.write_text(want)
        v = run_tiles("referee", "verify", str(golden), "--library", str(lib))
        assert v.returncode == 0 and "playable tile by tile" not in v.stdout, v.stderr


def test_a_fresh_label_on_a_board_that_repeats_or_reuses_fails_verify_naming_the_tile(tmp_path):
    lib, out = tmp_path / "lib.sqlite", tmp_path / "out"
    first = _build(lib, out, "2026-10-01", 61)
    sols = {s for _i, _n, s in _solutions(lib, first)}
    again = _build(lib, out, "2026-10-02", 61, "--reuse", "any")  # free to take day 1's solutions
    placed = _solutions(lib, again)
    text = again.read_text()
    assert '"reuse"' not in text
    forged = tmp_path / "forged.json"
    forged.write_text(text.replace(',\n "build":', ',\n "reuse":"fresh",\n "build":'))
    r = run_tiles("referee", "verify", str(forged), "--library", str(lib))
    first_bad = next((i for i, _n, s in placed if s in sols), None)
    repeat = next((i for k, (i, _n, s) in enumerate(placed) if s in {x for _j, _m, x in placed[:k]}), None)
    assert first_bad is not None or repeat is not None, "day 2 reused nothing: no forgery to catch"
    assert r.returncode == 5 and r.stderr.count("\n") == 1 and "error: step fresh: tile " in r.stderr, r.stderr
    named = int(r.stderr.split("fresh: tile ")[1].split()[0])
    assert named in {first_bad, repeat}
    with pytest.raises(Rejected) as rej:  # the independent verifier agrees
        independent_verify(forged.read_text(), str(lib))
    assert rej.value.step == "fresh" and re.match(r"fresh: tile (\d+)", rej.value.args[0]).group(1) == str(named)
    # the same text as "any" is not held to the rule
    assert run_tiles("referee", "verify", str(again), "--library", str(lib)).returncode == 0
    # both boards spent their solutions (an any board too), and library stats counts them
    want = len(sols | {s for _i, _n, s in placed})
    st = run_tiles("library", "stats", "--json", "--library", str(lib))
    assert json.loads(st.stdout)["spent_solutions"] == want


def test_an_unknown_policy_is_bad_input_that_writes_nothing(tmp_path):
    lib, out = tmp_path / "lib.sqlite", tmp_path / "out"
    r = run_tiles(
        "daily",
        "build",
        "--size",
        "31",
        "--seed",
        "5eed" * 16,
        "--library",
        str(lib),
        "--out",
        str(out),
        "--reuse",
        "sometimes",
    )
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "fresh, any" in r.stderr
    assert not lib.exists() and not out.exists()
    good = _build(lib, out, "2026-10-01", 31)
    bad = tmp_path / "bad.json"
    bad.write_text(good.read_text().replace('"reuse":"fresh"', '"reuse":"rarely"'))
    before = hashlib.sha256(lib.read_bytes()).hexdigest()
    r = run_tiles("referee", "verify", str(bad), "--library", str(lib))
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "reuse" in r.stderr
    assert hashlib.sha256(lib.read_bytes()).hexdigest() == before
