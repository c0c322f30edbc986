"""The stock's top-up (issue 31; generator/topup.py, `tiles library generate --stock`).

The plan is pure and checked on made-up reports: the target is the larger of the floor and
K nights of draws, the shortfall is split over the classes a stock tile can serve by the misses'
mix, three- and four-sided demand is left to the drain. End to end on two G=61 nights: the top-up
lifts every n to its target (counted by test_stock's own count), makes the seam masks it
planned, the same rows for one worker or two, nothing when run again; the next night draws
from what it made. Bad input is one line, exit 2, and writes nothing."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import pytest
from cli_support import run_tiles
from hypothesis import given
from hypothesis import strategies as st
from test_stock import SECRET, _own_count, nights  # noqa: F401  (the module's two nights)

from generator import topup
from tilelib import stock

SEED = "5e" * 32


@given(total=st.integers(0, 5000), w=st.dictionaries(st.sampled_from(list(topup.SERVED)), st.integers(0, 10**6)))
def test_split_gives_every_tile_once_in_proportion(total, w):
    parts = topup.split(total, w)
    assert sum(parts.values()) == total
    if total and not any(w.values()):
        assert parts == {"none": total}
    s = sum(w.values())
    for k, v in parts.items():
        assert w.get(k, 0) > 0 or (k == "none" and not s)
        if s:
            assert abs(v - total * w[k] / s) < 1


def test_the_floor_is_the_one_sided_stock_of_the_doc():
    assert [topup.floor(n) for n in stock.HELD] == [13, 30, 75, 187]


def _report(per_n: dict, started: dict | None = None) -> dict:
    return {
        "per_n": {
            str(n): {"solutions": s, "drawn_per_night": r, "started": (started or {}).get(n)}
            for n, (s, r) in per_n.items()
        }
    }


def test_the_plan_restores_what_the_last_night_started_with():
    rep = _report({10: (0, None), 12: (30, 0.0), 14: (100, 40.0), 16: (200, 5.0)}, {12: 20, 14: 150, 16: 650})
    p = topup.plan(rep, {}, 3)
    assert p.targets == {10: 13, 12: 30, 14: 150, 16: 650}  # floor, floor, started, started
    assert {b.n: b.count for b in p.batches} == {10: 13, 14: 50, 16: 450}


def test_the_plan_fills_the_shortfall_with_the_servable_mix_and_leaves_three_sides_to_the_drain():
    rep = _report({10: (0, None), 12: (500, 2.0), 14: (10, 40.0), 16: (187, 0.0)})
    mix = {
        10: {"none": 1, "one": 0, "corner": 3, "opposite": 0, "three": 50, "four": 46},
        12: {},
        14: {"three": 7},
        16: {},
    }
    p = topup.plan(rep, mix, 3)
    assert p.targets == {10: 13, 12: 30, 14: 120, 16: 187}
    got = {(b.n, b.cls): b.count for b in p.batches}
    assert got == {(10, "none"): 3, (10, "corner"): 10, (14, "none"): 110}  # 12 and 16 are not thin
    assert {b.seam_mask for b in p.batches} == {0, 3}
    with pytest.raises(Exception, match="--nights"):
        topup.plan(rep, mix, 0)


def test_with_a_profile_each_class_is_split_over_its_levels():
    from tilelib.difficulty import parse_profile

    rep = _report({10: (0, None), 12: (30, None), 14: (75, None), 16: (0, None)})
    p = topup.plan(rep, {}, 3, parse_profile("human"))
    by = {(b.n, b.level): b.count for b in p.batches}
    assert by == {(10, 2): 3, (10, 3): 7, (10, 4): 3, (16, 2): 47, (16, 3): 93, (16, 4): 47}
    assert {b.cls for b in p.batches} == {"none"} and p.count == 13 + 187
    assert len({topup.batch_seed(b"s" * 32, b) for b in p.batches}) == len(p.batches)


def _rows(lib: Path, after: int = 0) -> list[tuple]:
    conn = sqlite3.connect(lib)
    try:
        return conn.execute(
            "SELECT hash, n, seam_mask, ladder FROM tiles WHERE rowid > ? ORDER BY rowid", (after,)
        ).fetchall()
    finally:
        conn.close()


def test_the_top_up_lifts_the_stock_to_its_targets_and_the_next_night_draws_on_it(nights, tmp_path):  # noqa: F811
    lib, twin = tmp_path / "lib.sqlite", tmp_path / "twin.sqlite"
    shutil.copy(nights["lib"], lib)
    shutil.copy(nights["lib"], twin)
    start = len(_rows(lib))
    r = run_tiles("library", "generate", "--stock", "--nights", "2", "--seed", SEED, "--workers", "2", "--library", lib)
    assert r.returncode == 0, r.stderr
    out = r.stdout.splitlines()
    assert out[0].startswith("stock target 2 night(s): n=10 ") and "CPU" in r.stdout
    made = [ln for ln in out if ln.startswith("topped up ")]
    assert len(made) == 1 and f"seed {SEED}" in made[0]
    own = _own_count(lib)
    for n in stock.HELD:
        assert own[str(n)]["solutions"] >= topup.floor(n), (n, own)
    new = _rows(lib, start)
    # stored canonical: a corner made as mask 3 may be stored as 6, 9 or 12; its class is the same
    assert new and {stock.CLASSES[stock.edge_class(m)] for _h, _n, m, _lv in new} <= set(topup.SERVED)
    assert all(n >= 10 for _h, n, _m, _lv in new)
    assert {lv for *_x, lv in new} == {2, 3, 4}  # the default profile's levels, as the build aims
    # one worker makes the same rows; run again, nothing is thin
    r1 = run_tiles("library", "generate", "--stock", "--nights", "2", "--seed", SEED, "--library", twin)
    assert r1.returncode == 0 and _rows(twin, start) == new, r1.stderr
    again = run_tiles("library", "generate", "--stock", "--nights", "2", "--seed", "77" * 32, "--library", lib)
    assert again.returncode == 0 and "topped up 0 tiles (the stock was not thin)" in again.stdout
    assert len(_rows(lib)) == start + len(new)
    # the next night places some of them: its record says it drew from the stock
    b = run_tiles(
        "daily",
        "build",
        "--date",
        "2026-10-03",
        "--size",
        "61",
        "--library",
        lib,
        "--out",
        tmp_path / "out",
        env=SECRET,
    )
    assert b.returncode == 0, b.stderr[-2000:]
    conn = sqlite3.connect(lib)
    rec = dict(stock.nights(conn))["2026-10-03"]
    fresh_hashes = {h for h, *_x in new}
    placed = {h for (h,) in conn.execute("SELECT hash FROM tiles")} & fresh_hashes
    conn.close()
    assert sum(rec["drawn"].values()) >= 1 and placed
    # what night 3 started with is what the next top-up restores, drawn tiles replaced
    assert all(rec["left"][n] + rec["drawn"].get(n, 0) >= topup.floor(int(n)) for n in rec["left"])
    t = run_tiles("library", "generate", "--stock", "--nights", "2", "--seed", "99" * 32, "--library", lib)
    assert t.returncode == 0, t.stderr
    own = _own_count(lib)
    for n in rec["left"]:
        assert own[n]["solutions"] >= rec["left"][n] + rec["drawn"].get(n, 0), (n, rec, own[n])


@pytest.mark.parametrize(
    "args, want",
    [
        (("--stock", "--n", "10"), "--stock plans its own sizes, counts, seam masks and levels: drop --n"),
        (("--stock", "--m-max", "2", "--needs-unique"), "drop --m-max, --needs-unique"),
        (("--stock", "--max-ladder", "4"), "drop --max-ladder"),
        (("--stock", "--seam-mask", "3"), "drop --seam-mask"),
        (("--stock", "--nights", "0"), "--nights must be 1..365"),
        (("--stock", "--level", "3"), "drop --level"),
        (("--stock", "--profile", "hard"), "--profile must be a preset"),
        (("--n", "10"), "--n and --count are required (or --stock)"),
    ],
)
def test_bad_input_is_one_line_exit_2_and_writes_nothing(nights, tmp_path, args, want):  # noqa: F811
    lib = tmp_path / "lib.sqlite"
    shutil.copy(nights["lib"], lib)
    before = lib.read_bytes()
    r = run_tiles("library", "generate", *args, "--library", lib)
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and want in r.stderr, r.stderr
    assert lib.read_bytes() == before


def test_a_missing_library_has_no_stock_to_top_up(tmp_path):
    r = run_tiles("library", "generate", "--stock", "--library", tmp_path / "none.sqlite")
    assert r.returncode == 3 and r.stderr.count("\n") == 1 and "no tile library" in r.stderr, r.stderr
    assert not (tmp_path / "none.sqlite").exists()
