"""Difficulty profiles (issue 14): parsing, seeded level draws, the manifest key, a profiled daily
build, and tiles rated in context on a built board."""

import json
import math
import shutil

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from daily.build import BuildOptions, build
from engine.ladder import rate_rows
from referee.board import build_board
from referee.difficulty import context_levels, play_order, profile_table
from referee.manifest import from_json
from referee.verify import verify
from tilelib.bits import VALID_N
from tilelib.difficulty import LEVELS, PRESETS, parse_profile
from tilelib.errors import BadInput
from tilelib.rng import Stream
from tilelib.store import Library

SEED = bytes.fromhex("d1ff" * 16)


def test_flat_per_n_and_preset_forms():
    flat = parse_profile({"2": 1, "3": 3})
    assert flat.of(6) == flat.of(16) == (0.0, 0.25, 0.75, 0.0, 0.0)
    assert flat.allowed(10) == {2, 3}
    per = parse_profile(json.dumps({str(n): {"4": 1} if n == 16 else {"2": 1} for n in VALID_N}))
    assert per.allowed(16) == {4} and per.allowed(6) == {2}
    assert parse_profile("human") == parse_profile(PRESETS["human"])
    assert parse_profile(None) is None and parse_profile("library") is None
    assert parse_profile(flat.to_json()) == flat  # the manifest form reads back


@pytest.mark.parametrize(
    "bad",
    [
        {},
        {"6": 1},
        {"0": 1},
        {"2": -1},
        {"2": float("nan")},
        {"2": 0, "3": 0},
        {"2": True},
        {"2": "x"},
        [1, 2],
        "nope",
        "{broken",
        {"6": {"2": 1}, "8": {"2": 1}},  # per n, but n = 10..16 missing
        {str(n): {"9": 1} for n in VALID_N},
    ],
)
def test_bad_profiles_are_rejected(bad):
    with pytest.raises(BadInput):
        parse_profile(bad)


@settings(max_examples=30)
@given(
    shares=st.dictionaries(st.sampled_from([str(lv) for lv in LEVELS]), st.floats(0, 10, allow_nan=False), min_size=1),
    seed=st.binary(min_size=32, max_size=32),
    n=st.sampled_from(VALID_N),
)
def test_draws_follow_the_shares(shares, seed, n):
    if sum(shares.values()) <= 0:
        return
    p = parse_profile(shares)
    k = 2000
    draws = [p.draw(n, Stream(seed, "p").child(str(i))) for i in range(k)]
    assert set(draws) <= p.allowed(n)  # never a zero-share level
    assert draws == [p.draw(n, Stream(seed, "p").child(str(i))) for i in range(k)]  # seeded
    for lv, share in zip(LEVELS, p.of(n), strict=True):
        got = draws.count(lv) / k
        assert abs(got - share) < 5 * math.sqrt(share * (1 - share) / k) + 1e-9, (lv, got, share)


def _run(tmp_path, size, **kw):
    opts = BuildOptions(
        day="2026-11-30", library=tmp_path / "lib.sqlite", out_dir=tmp_path / "out", size=size, seed=SEED, **kw
    )
    return build(opts, log=lambda _: None)


def test_profiled_build_records_the_profile_verifies_and_reproduces(tmp_path):
    Library.create(tmp_path / "empty.sqlite").close()
    texts = []
    for name in ("a", "b"):
        d = tmp_path / name
        d.mkdir()
        shutil.copy(tmp_path / "empty.sqlite", d / "lib.sqlite")
        res = _run(d, 61, profile="human")
        texts.append(res.manifest_path.read_bytes())
    assert texts[0] == texts[1]  # bit for bit from library + seed
    m = from_json(texts[0])
    assert m.difficulty == parse_profile("human").to_json()
    assert json.loads(texts[0])["difficulty"] == m.difficulty
    # after the existing keys, then the fair rule's policy, the play rule, then build (FORMAT §9)
    assert list(json.loads(texts[0]))[-4:] == ["difficulty", "reuse", "play", "build"]
    with Library.open(tmp_path / "a" / "lib.sqlite") as lib:
        assert verify(m, lib, SEED).status == "frontier"
        levels = [lib.get(h).features.ladder for h in m.hashes]
    # from an empty library every tile was drained at its square's drawn level where the grid
    # allowed; the profile allows only 2..4, and the plain-thinning fallback is the exception
    inside = sum(lv in (2, 3, 4) for lv in levels) / len(levels)
    assert inside >= 0.8, levels


def test_unprofiled_build_writes_no_difficulty_key(tmp_path):
    res = _run(tmp_path, 41)
    assert "difficulty" not in json.loads(res.manifest_path.read_text())


def test_cli_builds_with_the_human_profile_unless_told(tmp_path):
    """`tiles daily build` aims for DEFAULT_PROFILE (human) when not told and records it;
    `--profile library` builds without one (no difficulty key)."""
    import subprocess
    import sys

    from tilelib.difficulty import DEFAULT_PROFILE as LIB_DEFAULT
    from tiles_cli.daily import DEFAULT_PROFILE

    assert DEFAULT_PROFILE == LIB_DEFAULT == "human"
    keys = []
    for extra in ([], ["--profile", "library"]):
        out = tmp_path / f"out{len(keys)}"
        r = subprocess.run(
            [
                sys.executable,
                "-m",
                "tiles_cli.app",
                "daily",
                "build",
                "--date",
                "2026-11-30",
                "--size",
                "21",
                "--seed",
                SEED.hex(),
                "--library",
                str(tmp_path / f"l{len(keys)}.sqlite"),
                "--out",
                str(out),
                *extra,
            ],
            capture_output=True,
            text=True,
        )
        assert r.returncode == 0, r.stderr
        keys.append(json.loads((out / "2026-11-30.json").read_text()).get("difficulty"))
    assert keys == [parse_profile("human").to_json(), None]


def test_bad_profile_fails_before_any_work(tmp_path):
    with pytest.raises(BadInput):
        _run(tmp_path, 41, profile={"7": 1})
    assert not (tmp_path / "lib.sqlite").exists()


def test_manifest_rejects_a_bad_difficulty_key(tmp_path):
    res = _run(tmp_path, 21, profile={"3": 1})
    d = json.loads(res.manifest_path.read_text())
    assert from_json(d).to_json() == res.manifest_path.read_text()
    for bad in ({"3": -1}, [1], "human", {"6": {"3": 1}}):
        d["difficulty"] = bad
        with pytest.raises(BadInput, match="difficulty"):
            from_json(d)


def test_context_levels_rate_each_tile_once_in_play_order(tmp_path):
    res = _run(tmp_path, 61)
    m = from_json(res.manifest_path.read_text())
    with Library.open(tmp_path / "lib.sqlite") as lib:
        board = build_board(m, lib)
    order = play_order(board)
    assert order[0] == m.packing.seed_tile and sorted(order) == list(range(m.tile_count()))
    ctx = context_levels(board)
    assert [i for i, _, _ in ctx] == order
    # the seed tile meets only the board givens in its window
    i, n, lv = ctx[0]
    rs, cs = board.window(i)
    sol, known = board.solution[rs, cs], board.givens[rs, cs]
    w = 1 << np.arange(n - 1, -1, -1)
    k = [int(x) for x in (known * w).sum(axis=1)]
    v = [int(x) for x in ((sol == 1) & known).dot(w)]
    assert rate_rows(n, v, k).ladder == lv
    # the table counts every tile once and its shares sum to 1
    table = profile_table(ctx)
    assert table["all"]["tiles"] == m.tile_count()
    assert abs(sum(v for k_, v in table["all"].items() if k_ != "tiles") - 1) < 1e-3


def test_level_indexes_are_the_main_index_tiles_of_each_level(tmp_path):
    """Each level set's pool holds exactly the main index's tiles whose stored ladder level is in
    the set, in the main index's order, with the main index's own entries (a view, not a copy); a
    capped main index caps every pool with it; an index built tile by tile (no levels known) has
    them read from the library."""
    from generator.make import GenParams, make_tile
    from stitcher.index import LevelView, MemoryIndex
    from stitcher.profile import level_indexes
    from tilelib.rng import Stream
    from tilelib.store import Library

    with Library.open(tmp_path / "lvl.sqlite", create=True) as lib:
        for k in range(60):
            lib.insert(make_tile(GenParams.make(6 + 2 * (k % 2), seam_mask=k % 16), Stream(b"lvl", str(k))))
        levels_of = dict(lib.conn.execute("SELECT hash, ladder FROM tiles").fetchall())
        rows = lib.conn.execute("SELECT hash, n, top, right, bottom, left, m, alt_sides FROM tiles").fetchall()
        by_hand = MemoryIndex()
        for h, n, t, r, b, lf, m, alt in rows:
            by_hand.add(h, n, (t, r, b, lf), m, alt)
        for main in [MemoryIndex.load(lib.conn, (6, 8), cap=cap) for cap in (10**9, 7)] + [by_hand]:
            sets = [frozenset({lv}) for lv in sorted(set(levels_of.values()))] + [frozenset({1, 2, 3})]
            got = level_indexes(lib.conn, main, (6, 8), sets)
            for levels, idx in got.items():
                assert isinstance(idx, LevelView) and idx.base is main
                for n in (6, 8):
                    assert idx.tile_hashes(n) == [h for h in main.tile_hashes(n) if levels_of[h] in levels]
                    assert len(idx.tile_hashes(n)) <= len(main.tile_hashes(n))
                    assert main.levels(n).tolist() == [levels_of[h] for h in main.tile_hashes(n)]
            assert sum(len(idx.tile_hashes(6)) for levels, idx in got.items() if len(levels) == 1) == len(
                main.tile_hashes(6)
            )
