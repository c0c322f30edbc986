"""docs/FORMAT.md is enough to verify a board: ``independent_verifier.py``, written from it alone,
agrees with ``referee.verify`` on real boards built by the project and on tampered copies of them.

Two boards, both from ``tiles daily build`` on an empty library: G=61 big-first (65 tiles up to
n=16) and FORMAT.md's own G=27 bands example (a zone and a clue). Every tamper must be rejected by
both verifiers at the same FORMAT §10 step; the sound boards must pass both with the same status and
round count."""

from __future__ import annotations

import ast
import json
import shutil
import sqlite3
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import format_doc as doc
import independent_verifier as iv
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from daily.build import BuildOptions, build
from referee.board import CheckFailed
from referee.manifest import from_json
from referee.verify import verify as referee_verify
from tilelib.errors import BadInput, LibraryError
from tilelib.store import Library
from tilelib.symmetry import EDGE_MAP, compose, inverse

SEED61 = bytes.fromhex("5eed" * 16)
SEED27 = bytes.fromhex(doc.fields("seed")["seed"])


def _build(dest: Path, size: int, seed: bytes, packer: str) -> tuple[str, Path, bytes]:
    opts = BuildOptions(
        day="2026-11-29", library=dest / "lib.sqlite", out_dir=dest, size=size, seed=seed, packer=packer
    )
    res = build(opts, log=lambda _line: None)
    return res.manifest_path.read_text(), dest / "lib.sqlite", seed


@pytest.fixture(scope="module")
def boards(tmp_path_factory):
    root = tmp_path_factory.mktemp("boards")
    (root / "g61").mkdir()
    (root / "g27").mkdir()
    (root / "g27g").mkdir()
    return {
        "g61": _build(root / "g61", 61, SEED61, "big-first"),
        "g27": _build(root / "g27", 27, SEED27, "bands"),
        "g27g": _build(root / "g27g", 27, SEED27, "grown"),
    }


def referee(text: str, lib_path: Path, seed: bytes | None = None):
    """("ok", report) or ("rejected", step) from the project's referee."""
    try:
        m = from_json(text)
    except BadInput:
        return "rejected", "manifest"
    with Library.open(lib_path) as lib:
        try:
            return "ok", referee_verify(m, lib, seed)
        except CheckFailed as e:
            return "rejected", e.step
        except LibraryError as e:  # a missing or damaged row: exit 3 (FORMAT §10.2), still step "tiles"
            assert str(e).startswith("tiles: "), e
            return "rejected", "tiles"


def independent(text: str, lib_path: Path, seed: bytes | None = None):
    try:
        return "ok", iv.verify(text, str(lib_path), seed)
    except iv.Rejected as e:
        return "rejected", e.step


def assert_same_verdict(text: str, lib_path: Path, seed: bytes | None = None) -> str:
    a, b = referee(text, lib_path, seed), independent(text, lib_path, seed)
    assert a[0] == b[0], (a, b)
    if a[0] == "rejected":
        assert a[1] == b[1], (a, b)
        return a[1]
    return "ok"


def _edit(text: str, fn) -> str:
    d = json.loads(text)
    fn(d)
    return json.dumps(d)


# ---------------------------------------------------------------- the verifier itself


def test_the_verifier_imports_only_the_standard_library():
    tree = ast.parse(Path(iv.__file__).read_text())
    mods = {a.name.split(".")[0] for node in ast.walk(tree) if isinstance(node, ast.Import) for a in node.names}
    mods |= {node.module.split(".")[0] for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
    assert mods <= set(sys.stdlib_module_names) | {"__future__"}, mods


def test_the_verifier_reproduces_the_documents_examples():
    f, c = doc.fields("tile-found"), doc.fields("tile-canonical")
    n = int(f["n"])
    sol = [int(r, 2) for r in f["solution"].split()]
    giv = [int(r, 2) for r in f["givens"].split()]
    assert iv.blob_of(sol, n).hex() == f["solution_blob"] and iv.rows_of(bytes.fromhex(f["solution_blob"]), n) == sol
    assert list(iv.edges_of(sol, n)) == [int(v) for v in f["edges"].split()]
    tc = iv.canonical_t(sol, giv, int(f["seam_mask"]), n)
    assert tc == int(c["canonical_t"])
    cs, cg = iv.transform(sol, n, tc), iv.transform(giv, n, tc, values=False)
    assert (
        iv.content_hash(n, iv.blob_of(cs, n), iv.blob_of(cg, n), iv.transform_side_mask(int(f["seam_mask"]), tc))
        == c["hash"]
    )
    found = list(iv.solutions(n, cg, [a & b for a, b in zip(cs, cg, strict=True)]))
    assert sorted(iv.blob_of(s, n).hex() for s in found) == sorted([c["solution_blob"], c["alts"]])
    assert len(iv.valid_lines(6)) == 14


def test_the_verifier_reproduces_the_seed_stream_and_manifest_layout(boards):
    f, st_ = doc.fields("seed"), doc.fields("stream")
    seed = iv.day_seed(f["secret"], f["day"])
    assert seed.hex() == f["seed"] and iv.hashlib.sha256(seed).hexdigest() == f["seed_commit"]
    assert iv.stream_bytes(bytes.fromhex(st_["seed"]), st_["label"], 32).hex() == st_["block0"]
    text = doc.blocks()["manifest"]
    assert iv.manifest_text(json.loads(text)) == text
    for name in ("g61", "g27"):
        built = boards[name][0]
        assert iv.manifest_text(json.loads(built)) == built


def test_the_verifiers_transforms_match_the_projects_edge_map_and_composition():
    rng = np.random.default_rng(7)
    for t in range(16):
        assert list(iv.side_source(t)) == [src.side for src in EDGE_MAP[t]]
    for _ in range(20):
        g = [int(v) for v in rng.integers(0, 1 << 8, size=8)]
        for a in range(16):
            for b in (0, 1, 5, 13):
                assert iv.transform(iv.transform(g, 8, a), 8, b) == iv.transform(g, 8, compose(a, b))
            assert iv.transform(iv.transform(g, 8, a), 8, inverse(a)) == g


@given(st.lists(st.sampled_from([0, 1]), min_size=36, max_size=36), st.lists(st.booleans(), min_size=36, max_size=36))
@settings(max_examples=40)
def test_brute_force_enumeration_matches_the_engine(values, known):
    """The verifier's solution enumerator (from §1 alone) against the project's counter."""
    from engine import count
    from tilelib.bits import Puzzle

    n = 6
    v = np.array(values, dtype=np.uint8).reshape(n, n)
    k = np.array(known, dtype=np.uint8).reshape(n, n)
    res = count(Puzzle.from_grid(v, k), k=10_000)
    km = [int("".join(map(str, row)), 2) for row in k]
    kv = [int("".join(map(str, row)), 2) for row in v * k]
    mine = sorted(tuple(s) for s in iv.solutions(n, km, kv))
    theirs = sorted(tuple(int("".join(map(str, row)), 2) for row in g) for g in res.solutions)
    assert mine == theirs


# ---------------------------------------------------------------- sound boards


@pytest.mark.parametrize("name", ["g61", "g27"])
def test_sound_board_passes_both_with_the_same_status_and_rounds(boards, name):
    text, lib_path, seed = boards[name]
    kind, rep = referee(text, lib_path, seed)
    assert kind == "ok", rep
    mine = iv.verify(text, str(lib_path), seed)
    assert (mine["status"], mine["tiles"], mine["distinct"], mine["rounds"], mine["waves"]) == (
        rep.status,
        rep.tiles,
        rep.distinct_tiles,
        rep.rounds,
        rep.waves,
    )
    assert rep.waves is not None and json.loads(text)["play"] == "tile-by-tile"


@pytest.mark.parametrize("name", ["g61", "g27g"])
def test_a_seed_tile_no_player_can_start_from_is_rejected_by_both_at_closure(boards, name):
    """The frontier proof does not depend on the seed tile; the tile-by-tile closure starts there. A
    manifest moved to a seed tile whose givens alone admit several grids stalls at once. (The G=27
    bands board has no such tile since GENERATOR_VERSION 5, every one is solvable alone; the grown
    packing of the same seed has two.)"""
    from referee import closure
    from referee.board import build_board

    text, lib_path, _seed = boards[name]
    m = from_json(text)
    with Library.open(lib_path) as lib:
        board = build_board(m, lib)
    moved = None
    for i in range(m.tile_count()):
        b = replace(board, seed_tile=i)
        if not closure.closure(b).complete:
            moved = i
            break
    assert moved is not None, "every tile of the board is solvable from its givens alone"
    forged = _edit(text, lambda d: d.update(seed_tile=moved))
    assert assert_same_verdict(forged, lib_path) == "closure"
    # without the play key the same board is held to the rule before: no closure, and it passes
    old = _edit(forged, lambda d: d.pop("play"))
    assert assert_same_verdict(old, lib_path) == "ok"


def test_command_line_exit_codes(boards, tmp_path):
    text, lib_path, seed = boards["g27"]
    good = tmp_path / "good.json"
    good.write_text(text)
    bad = tmp_path / "bad.json"
    bad.write_text(_edit(text, lambda d: d["tiles"][0].update(t=d["tiles"][0]["t"] ^ 8)))
    run = lambda p, *a: subprocess.run(  # noqa: E731
        [sys.executable, iv.__file__, str(p), str(lib_path), *a],
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    r = run(good, "--seed", seed.hex())
    assert r.returncode == 0 and r.stdout.startswith("ok: frontier"), r.stderr
    r = run(bad)
    assert r.returncode == 5 and r.stdout.startswith("rejected: seams"), r.stdout
    r = run(good, "--seed", "00" * 32)
    assert r.returncode == 5 and "seed" in r.stdout


# ---------------------------------------------------------------- tampered copies


def _tampers(text: str):
    d = json.loads(text)
    first = d["tiles"][0]
    same_n = [t["id"] for t in d["tiles"] if t["n"] == first["n"] and t["hash"] != first["hash"]]
    other_n = next(t for t in d["tiles"] if t["n"] != first["n"])
    yield "complemented t", lambda m: m["tiles"][0].update(t=first["t"] ^ 8), "seams"
    yield "moved tile", lambda m: m["tiles"][1].update(x0=m["tiles"][1]["x0"] + 2), "packing"
    yield "changed hash", lambda m: m["tiles"][0].update(hash="ab" * 32), "tiles"
    yield "hash of another size", lambda m: m["tiles"][0].update(hash=other_n["hash"]), "tiles"
    if same_n:
        j = same_n[0]
        yield (
            "swapped tiles",
            lambda m: (
                m["tiles"][0].update(hash=d["tiles"][j]["hash"], t=d["tiles"][j]["t"]),
                m["tiles"][j].update(hash=first["hash"], t=first["t"]),
            ),
            "any",
        )
    yield "seed_tile out of range", lambda m: m.update(seed_tile=9999), "packing"
    yield "status unique", lambda m: m.update(status="unique"), "frontier"
    yield "status ambiguous", lambda m: m.update(status="ambiguous"), "frontier"
    yield "extra tile", lambda m: m["tiles"].append(dict(first, id=len(m["tiles"]))), "packing"
    yield "no tiles", lambda m: m.update(tiles=[]), "packing"
    yield "clue off the board", lambda m: m.update(clues=[[d["board"]["cells"], 0]]), "manifest"
    yield "t out of range", lambda m: m["tiles"][0].update(t=16), "manifest"
    yield "bad pitch", lambda m: m["board"].update(pitch=m["board"]["pitch"] + 1), "manifest"
    if d["zones"]:
        yield "zone dropped", lambda m: m.update(zones=[]), "packing"
    if d["clues"]:
        # a forger who keeps stats consistent is caught by propagation; one who does not, by the claims
        yield "clue removed", lambda m: (m.update(clues=[]), m["stats"].update(clues=0)), "frontier"
        yield "clue removed, stats left", lambda m: m.update(clues=[]), "claims"
    yield "unknown play rule", lambda m: m.update(play="greedy"), "manifest"
    yield "play rule of the wrong type", lambda m: m.update(play=1), "manifest"
    yield "unknown packer", lambda m: m["packer"].update(name="nope"), "claims"
    yield "stated tile count off", lambda m: m["stats"].update(tiles=m["stats"].get("tiles", 0) + 1), "claims"
    x0, y0, n = first["x0"], first["y0"], first["n"]
    yield (
        "clue on tile 0's bottom-right corner",
        lambda m: m.update(clues=m["clues"] + [[y0 + n - 1, x0 + n - 1]]),
        None,
    )  # a junction or not


@pytest.mark.parametrize("name", ["g61", "g27"])
def test_tampered_manifests_are_rejected_by_both_at_the_same_step(boards, name):
    text, lib_path, _seed = boards[name]
    for label, fn, step in _tampers(text):
        got = assert_same_verdict(_edit(text, fn), lib_path)
        if step == "any":
            assert got != "ok", label
        elif step is not None:
            assert got == step, (label, got)


@pytest.mark.parametrize("name", ["g61", "g27"])
def test_a_wrong_seed_is_rejected_by_both(boards, name):
    text, lib_path, seed = boards[name]
    assert assert_same_verdict(text, lib_path, bytes(32)) == "seed"
    assert assert_same_verdict(text, lib_path, seed) == "ok"


def _tamper_library(src: Path, dest: Path, sql: str, args=()) -> Path:
    shutil.copy(src, dest)
    conn = sqlite3.connect(dest)
    with conn:
        conn.execute(sql, args)
    conn.close()
    return dest


@pytest.mark.parametrize("name", ["g61", "g27"])
def test_tampered_library_rows_are_rejected_by_both(boards, name, tmp_path):
    text, lib_path, _seed = boards[name]
    d = json.loads(text)
    h = d["tiles"][0]["hash"]
    conn = sqlite3.connect(lib_path)
    multi = conn.execute(
        f"SELECT hash, n FROM tiles WHERE m > 1 AND hash IN ({','.join('?' * len(d['tiles']))}) LIMIT 1",
        [t["hash"] for t in d["tiles"]],
    ).fetchone()
    conn.close()
    cases = [
        ("givens zeroed", "UPDATE tiles SET givens = zeroblob(length(givens)) WHERE hash = ?", (h,)),
        ("pins changed", "UPDATE tiles SET pins = (pins + 1) % 16 WHERE hash = ?", (h,)),
        ("blank changed", "UPDATE tiles SET blank = blank + 0.01 WHERE hash = ?", (h,)),
        ("row deleted", "DELETE FROM tiles WHERE hash = ?", (h,)),
    ]
    if multi is not None:
        bl = (multi[1] ** 2 + 7) // 8
        # claim m = 1: every feature made consistent, only the recount (enumeration) can tell
        cases.append(
            (
                "alternatives hidden",
                "UPDATE tiles SET m = 1, alts = x'', alt_sides = 0, pins = 0, "
                "pin_depth = 0, flip = zeroblob(?) WHERE hash = ?",
                (bl, multi[0]),
            )
        )
    for i, (label, sql, args) in enumerate(cases):
        bad = _tamper_library(lib_path, tmp_path / f"bad{i}.sqlite", sql, args)
        got = assert_same_verdict(text, bad)
        assert got == "tiles", (label, got)


def test_wrong_edge_columns_pass_both_verifiers(boards, tmp_path):
    """FORMAT §10.2: the referee does not read the edge columns (they serve lookups; the board comes
    from the solution BLOB); only `tiles library verify` checks them. Both verifiers agree on that."""
    text, lib_path, _seed = boards["g27"]
    h = json.loads(text)["tiles"][0]["hash"]
    bad = _tamper_library(lib_path, tmp_path / "edges.sqlite", "UPDATE tiles SET top = top + 1 WHERE hash = ?", (h,))
    assert assert_same_verdict(text, bad) == "ok"


@given(tile=st.integers(min_value=0, max_value=16), t=st.integers(min_value=0, max_value=15))
@settings(max_examples=30)
def test_any_changed_orientation_gets_the_same_verdict(boards_cache, tile, t):
    text, lib_path, seed = boards_cache["g27"]
    d = json.loads(text)
    d["tiles"][tile]["t"] = t
    assert_same_verdict(json.dumps(d), lib_path, seed)


@pytest.fixture(scope="module")
def boards_cache(boards):
    """The module's boards under another name: hypothesis tests may not take function-scoped fixtures."""
    return boards


def test_an_islands_board_passes_both_verifiers(tmp_path):
    """A board of the fifth packer (FORMAT §7, `islands`) is accepted by the referee and by the
    verifier written from FORMAT alone, with the same verdict."""
    text, lib_path, seed = _build(tmp_path, 61, SEED61, "islands")
    assert json.loads(text)["packer"]["name"] == "islands"
    assert assert_same_verdict(text, lib_path, seed) == "ok"
