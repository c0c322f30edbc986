"""verify (FORMAT §10) on a real small board, and each mutation of it caught with the right step named.

The board: a big-first packing at G=21 (8 tiles: one n=16, seven n=6), tiles made by the generator
with each window's already-fixed cells, one clue added where propagation stalls.
"""

from __future__ import annotations

import json
import os
import sqlite3

import numpy as np
import pytest
from referee_support import board21 as shared_board21
from referee_support import copy_fixture
from referee_support import zoned13 as shared_zoned13

from referee import frontier as fr
from referee.board import CheckFailed, build_board
from referee.manifest import from_json
from referee.verify import verify
from tilelib.errors import LibraryError, VerificationFailed, exit_code
from tilelib.store import Library

SEED = bytes(range(32))


@pytest.fixture(scope="session")
def board21(tmp_path_factory):
    return shared_board21(tmp_path_factory)


@pytest.fixture
def fx(board21, tmp_path):
    return copy_fixture(board21, tmp_path / "lib.sqlite")


_WORKERS = [1]


@pytest.fixture(autouse=True, params=[1, 2], ids=["one-process", "rows-aside"])
def workers(request):
    """Every test of this file twice: one process, and step 2's rows inspected in a forked process
    while the later steps run (``verify(workers=2)``, the daily build's): same reports, same failures."""
    _WORKERS[0] = request.param
    yield request.param
    _WORKERS[0] = 1


def run_verify(manifest, fx, seed=None):
    with Library.open(fx.lib_path) as lib:
        return verify(manifest, lib, seed, workers=_WORKERS[0])


def step_of(manifest, fx, seed=None) -> tuple[str, str]:
    with pytest.raises(CheckFailed) as e:
        run_verify(manifest, fx, seed)
    assert isinstance(e.value, VerificationFailed) and exit_code(e.value) == 5
    msg = str(e.value)
    assert msg.startswith(e.value.step + ": ") and "\n" not in msg
    return e.value.step, msg


def mutate(m, f):
    d = json.loads(m.to_json())
    f(d)
    return from_json(d)


def test_the_fixture_verifies_as_frontier_with_its_seed(fx, workers):
    m = fx.manifest
    k = len(m.clues)  # what add_clues picked for this board (1 under generator 4, 2 under 5)
    assert k >= 1 and m.tile_count() == 8
    rep = run_verify(m, fx, SEED)
    assert ("tiles_aside_wait" in rep.timings) == (workers == 2)  # the rows were inspected aside
    assert rep.status == "frontier" and rep.clues == k and rep.tiles == 8 and rep.seed_checked
    assert rep.line().startswith("frontier: 8 tiles, ") and rep.line().endswith(f" {k} clues, seed ok")
    assert rep.rounds >= 1 and rep.unknown_after_propagation == 0
    # the rebuilt board is the board the fixture laid down
    with Library.open(fx.lib_path) as lib:
        b = build_board(m, lib)
    assert (b.solution == fx.solution).all()
    assert b.owners.max() == 4 or b.owners.max() == 3


def _dies():
    os._exit(3)


def test_a_row_inspection_whose_process_dies_is_done_here(fx, monkeypatch):
    """The forked inspection killed (here: it exits at once): verify inspects the rows itself, and
    reports exactly what one process reports, a tampered row included."""
    import referee.verify as verify_module

    monkeypatch.setattr(verify_module, "_rows_aside", _dies)
    with Library.open(fx.lib_path) as lib:
        one, two = verify(fx.manifest, lib, SEED), verify(fx.manifest, lib, SEED, workers=2)
    assert (one.status, one.line()) == (two.status, two.line()) and "tiles_aside_wait" in two.timings
    with sqlite3.connect(fx.lib_path) as c:
        c.execute("UPDATE tiles SET blank = 0.5 WHERE hash = ?", (fx.manifest.hashes[2],))
    with Library.open(fx.lib_path) as lib, pytest.raises(CheckFailed, match=r"^tiles: tile 2 .*blank"):
        verify(fx.manifest, lib, workers=2)


def library_failure(manifest, fx) -> str:
    """A verification that stops because the library is behind or damaged: exit 3, one line."""
    with pytest.raises(LibraryError) as e:
        run_verify(manifest, fx, None)
    assert exit_code(e.value) == 3 and not isinstance(e.value, VerificationFailed)
    msg = str(e.value)
    assert msg.startswith("tiles: ") and getattr(e.value, "step", None) == "tiles" and "\n" not in msg
    return msg


def test_unknown_hash_means_the_library_is_out_of_date(fx):
    """Issue 11: a tile the local library lacks is "pull first" (exit 3), not proof of a bad board."""
    m = mutate(fx.manifest, lambda d: d["tiles"][3].update(hash="0" * 64))
    msg = library_failure(m, fx)
    assert "tile 3" in msg and "out of date" in msg and "tiles library pull" in msg


def test_another_tiles_hash_breaks_the_seams(fx):
    # tile 2 placed where tile 1 is expected: both n=6, so only the seams can tell
    m = mutate(fx.manifest, lambda d: d["tiles"][1].update(hash=d["tiles"][2]["hash"], t=d["tiles"][2]["t"]))
    step, msg = step_of(m, fx)
    assert step == "seams"


def test_wrong_transform_breaks_the_seams(fx):
    m = mutate(fx.manifest, lambda d: d["tiles"][0].update(t=(d["tiles"][0]["t"] + 1) % 16))
    step, msg = step_of(m, fx)
    assert step == "seams" and "tile" in msg and "board cell" in msg


def test_overlapping_square_is_a_packing_failure(fx):
    m = mutate(fx.manifest, lambda d: d["tiles"][2].update(y0=d["tiles"][2]["y0"] - 1))
    step, msg = step_of(m, fx)
    assert step == "packing" and "overlaps" in msg


def test_removed_tile_is_a_packing_failure(fx):
    def drop(d):
        del d["tiles"][4]
        for i, t in enumerate(d["tiles"]):
            t["id"] = i

    m = mutate(fx.manifest, drop)
    step, msg = step_of(m, fx)
    assert step == "packing" and "gap" in msg


def test_missing_clue_is_a_frontier_failure(fx):
    m = mutate(fx.manifest, lambda d: d.update(clues=[]))
    step, msg = step_of(m, fx)
    assert step == "frontier" and "two solutions" in msg


def test_claiming_the_wrong_status_is_a_frontier_failure(fx):
    m = mutate(fx.manifest, lambda d: d.update(status="unique"))
    step, msg = step_of(m, fx)
    assert step == "frontier" and "'frontier'" in msg


def test_clue_on_a_junction_is_a_clues_failure(fx):
    with Library.open(fx.lib_path) as lib:
        b = build_board(fx.manifest, lib)
    r, c = (int(v) for v in np.argwhere(b.owners >= 3)[0])
    m = mutate(fx.manifest, lambda d: d["clues"].append([r, c]))
    step, msg = step_of(m, fx)
    assert step == "clues" and f"[{r}, {c}]" in msg


@pytest.fixture(scope="session")
def zoned(tmp_path_factory):
    return shared_zoned13(tmp_path_factory)


def test_zone_cells_inside_tile_windows_are_given(zoned):
    with Library.open(zoned.lib_path) as lib:
        b = build_board(zoned.manifest, lib)
    want = np.zeros((13, 13), dtype=bool)
    want[0:11, 10] = True  # zone rect [10,0,2,12] covers columns 10..12; tiles reach column 10
    want[10, 0:11] = True  # zone rect [0,10,10,2] covers rows 10..12
    assert (b.zone_givens == want).all()
    assert (b.owners[11:, :] == 0).all() and (b.owners[:, 11:] == 0).all()
    assert (b.solution[b.owners == 0] == -1).all()
    assert (b.givens == (b.tile_givens | want)).all()
    clues = fr.add_clues(b)
    with Library.open(zoned.lib_path) as lib:
        rep = verify(zoned.manifest.with_clues(clues), lib)
    assert rep.status == "frontier" and rep.tiles == 4


def test_clue_in_no_tile_window_is_a_clues_failure(zoned, tmp_path):
    fx = copy_fixture(zoned, tmp_path / "lib.sqlite")
    m = mutate(fx.manifest, lambda d: d["clues"].append([12, 3]))
    step, msg = step_of(m, fx)
    assert step == "clues" and "[12, 3]" in msg and "no tile window" in msg


def test_tampered_solution_row_is_a_tiles_failure(fx):
    h = fx.manifest.hashes[5]
    with sqlite3.connect(fx.lib_path) as c:
        sol = bytearray(c.execute("SELECT solution FROM tiles WHERE hash = ?", (h,)).fetchone()[0])
        sol[1] ^= 0x10
        c.execute("UPDATE tiles SET solution = ? WHERE hash = ?", (bytes(sol), h))
    msg = library_failure(fx.manifest, fx)  # issue 11: a damaged library is exit 3, not 5
    assert "tile 5" in msg and "corrupt" in msg and h in msg


def test_tampered_features_caught_by_the_engine_recount(fx):
    """Features are outside the hash: drop a tile's alternatives consistently (m=1, no alts, no flip)
    and only the recount can tell that its givens admit more solutions."""
    with Library.open(fx.lib_path) as lib:
        tiles = [(i, lib.get(h)) for i, h in enumerate(fx.manifest.hashes)]
    i, tile = next((i, t) for i, t in tiles if t.features.m > 1)
    zero = bytes(len(tile.solution))
    with sqlite3.connect(fx.lib_path) as c:
        c.execute(
            "UPDATE tiles SET m = 1, alts = ?, alt_sides = 0, pins = 0, pin_depth = 0, flip = ? WHERE hash = ?",
            (b"", zero, fx.manifest.hashes[i]),
        )
    step, msg = step_of(fx.manifest, fx)
    assert step == "tiles" and f"tile {i}" in msg and "more than 1" in msg


def test_tampered_alt_caught(fx):
    with Library.open(fx.lib_path) as lib:
        i, tile = next((i, lib.get(h)) for i, h in enumerate(fx.manifest.hashes) if lib.get(h).features.m > 1)
    with sqlite3.connect(fx.lib_path) as c:
        c.execute("UPDATE tiles SET m = ? WHERE hash = ?", (tile.features.m + 1, fx.manifest.hashes[i]))
    step, msg = step_of(fx.manifest, fx)
    assert step == "tiles" and f"tile {i}" in msg


def test_wrong_seed_and_a_packing_the_seed_does_not_make(fx):
    step, msg = step_of(fx.manifest, fx, bytes(32))
    assert step == "seed" and "seed_commit" in msg
    m = mutate(fx.manifest, lambda d: d["packer"].update(name="grown"))
    step, msg = step_of(m, fx, SEED)
    assert step == "seed" and "unknown parameter" in msg
    m = mutate(fx.manifest, lambda d: d["packer"].update(name="grown", params={}))
    step, msg = step_of(m, fx, SEED)
    assert step == "seed" and "neither the one packer grown draws" in msg
    m = mutate(fx.manifest, lambda d: d["packer"].update(version=99))
    step, msg = step_of(m, fx, SEED)
    assert step == "claims" and "version" in msg  # issue 11: caught before any seed is needed


@pytest.mark.parametrize(
    "change, words",
    [
        (lambda d: d["packer"].update(name="nope"), "unknown packer 'nope'"),
        (lambda d: d["packer"].update(version=99), "version"),
        (lambda d: d["stats"].update(tiles=d["stats"].get("tiles", 0) + 1), "stats.tiles"),
        (lambda d: d["stats"].update(clues=7), "stats.clues"),
        (lambda d: d["stats"].update(zone_fraction=0.5), "stats.zone_fraction"),
    ],
)
def test_claims_are_checked_without_a_seed(fx, change, words):
    step, msg = step_of(mutate(fx.manifest, change), fx)
    assert step == "claims" and words in msg


def test_seed_accepts_a_refinement_of_the_drawn_packing_and_nothing_else(fx):
    """The stitcher may turn a square it cannot fill into smaller squares or zone (FORMAT §8)."""
    from referee.verify import check_seed

    assert check_seed(fx.manifest, SEED) == "reproduced"

    def zone_tile_1(d):  # tile 1, the 5-square at (15, 0), became zone
        x0, y0, n = d["tiles"][1]["x0"], d["tiles"][1]["y0"], d["tiles"][1]["n"]
        del d["tiles"][1]
        for i, t in enumerate(d["tiles"]):
            t["id"] = i
        d["zones"].append({"id": len(d["zones"]), "rects": [[x0, y0, n - 1, n - 1]]})

    refined = mutate(fx.manifest, zone_tile_1)
    assert check_seed(refined, SEED) == "refined"

    def move_tile_7(d):  # a square moved across drawn squares: not a refinement
        d["tiles"][7]["y0"] -= 2

    with pytest.raises(CheckFailed, match="seed: the packing is neither.*not inside one drawn square"):
        check_seed(mutate(fx.manifest, move_tile_7), SEED)


def test_first_failure_wins_in_spec_order(fx):
    """An overlap (step 1) and an unknown hash (step 2) together: the packing is named."""

    def both(d):
        d["tiles"][2]["y0"] -= 1
        d["tiles"][3]["hash"] = "0" * 64

    step, _ = step_of(mutate(fx.manifest, both), fx)
    assert step == "packing"

    def seams_and_clue(d):
        d["tiles"][0]["t"] = (d["tiles"][0]["t"] + 1) % 16
        d["clues"] = []

    step, _ = step_of(mutate(fx.manifest, seams_and_clue), fx)
    assert step == "seams"
    # within step 2, tiles in id order: a bad row at tile 1 before a missing row at tile 3
    with sqlite3.connect(fx.lib_path) as c:
        c.execute("UPDATE tiles SET blank = 0.5 WHERE hash = ?", (fx.manifest.hashes[1],))
    step, msg = step_of(mutate(fx.manifest, lambda d: d["tiles"][3].update(hash="0" * 64)), fx)
    assert step == "tiles" and msg.startswith("tiles: tile 1 ") and "blank" in msg
    # a bad row (step 2, inspected aside under workers=2) and broken seams (step 3, found here)
    step, msg = step_of(mutate(fx.manifest, lambda d: d["tiles"][0].update(t=(d["tiles"][0]["t"] + 1) % 16)), fx)
    assert step == "tiles" and msg.startswith("tiles: tile 1 ") and "blank" in msg


def test_deep_check_reruns_the_ladder(fx):
    rep = None
    with Library.open(fx.lib_path) as lib:
        rep = verify(fx.manifest, lib, deep=True)
    assert rep.status == "frontier"
    h = fx.manifest.hashes[1]
    with sqlite3.connect(fx.lib_path) as c:
        c.execute("UPDATE tiles SET ladder = 5, bifurcations = 99 WHERE hash = ?", (h,))
    run_verify(fx.manifest, fx)  # the default check does not re-run the ladder
    with Library.open(fx.lib_path) as lib, pytest.raises(CheckFailed, match="ladder features"):
        verify(fx.manifest, lib, deep=True)


def _rows_read(fx):
    """(manifest, the rows ``check_tiles_present`` reads for it, by hash), as step 2 hands them on."""
    from referee.verify import check_tiles_present

    with Library.open(fx.lib_path) as lib:
        return fx.manifest, check_tiles_present(fx.manifest, lib)


def test_the_row_inspection_alone_is_shallow_unless_asked(fx):
    """``first_row_problem`` re-rates the ladder only with ``deep=True``: a row whose ladder features are
    tampered passes the default inspection and is the first problem of the deep one."""
    from referee.verify import first_row_problem

    h = fx.manifest.hashes[1]
    with sqlite3.connect(fx.lib_path) as c:
        c.execute("UPDATE tiles SET ladder = 5, bifurcations = 99 WHERE hash = ?", (h,))
    m, tiles = _rows_read(fx)
    assert first_row_problem(m, tiles) is None
    i, got_h, problem = first_row_problem(m, tiles, deep=True)
    assert (i, got_h) == (m.hashes.index(h), h) and problem.startswith("ladder features ") and "are (5, 99, " in problem


def test_the_forked_inspection_inspects_what_was_set_aside(fx, monkeypatch):
    """``_rows_aside`` (what the forked process runs) is ``first_row_problem`` over the (manifest, rows,
    deep) set aside before the fork: a tampered row is found, and a sound set of rows passes."""
    import referee.verify as verify_module

    m, tiles = _rows_read(fx)
    monkeypatch.setattr(verify_module, "_ASIDE", (m, tiles, False))
    assert verify_module._rows_aside() is None
    with sqlite3.connect(fx.lib_path) as c:
        c.execute("UPDATE tiles SET blank = 0.5 WHERE hash = ?", (m.hashes[2],))
    m, tiles = _rows_read(fx)
    monkeypatch.setattr(verify_module, "_ASIDE", (m, tiles, False))
    found = verify_module._rows_aside()
    assert found == verify_module.first_row_problem(m, tiles, False) and found[:2] == (2, m.hashes[2])
    assert "blank" in found[2]
