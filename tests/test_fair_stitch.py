"""The fair rule inside the stitcher: dead index rows (C == numpy), the fresh active set (its
sidecar refreshed after spending == a scan), the drain's "make another", and real fresh stitches
(no n >= 10 solution twice, none spent) — checked with this file's own symmetry code."""

from __future__ import annotations

import shutil

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_spent_ledger import own_hash
from test_stitch_kernel import random_constraint

from generator.batch import generate as batch
from generator.make import GenParams
from packers import make_packing
from stitcher.active import load_active, scan
from stitcher.drain import FAILED, TILE, generate
from stitcher.index import MemoryIndex
from stitcher.stitch import StitchOptions, stitch
from tilelib import spent
from tilelib.bits import from_blob
from tilelib.constraint import Constraint
from tilelib.rng import Stream
from tilelib.rules import valid_lines
from tilelib.spent import SpentRow
from tilelib.store import Library

# ---------------------------------------------------------------- dead rows in the index


def _index(seed: int) -> MemoryIndex:
    rng = np.random.default_rng(seed)
    idx = MemoryIndex()
    for n, count in ((6, 200), (8, 90)):
        lines = valid_lines(n)
        rows = [
            (
                rng.bytes(32).hex(),
                tuple(int(lines[v]) for v in rng.integers(0, len(lines), size=4)),
                int(rng.integers(1, 3)),
                0,
            )
            for _ in range(count)
        ]
        idx._size(n).add(rows[: count // 2])  # ranked in the C table
        for r in rows[count // 2 :]:  # extras, as the drain adds them
            idx.add(r[0], n, r[1], r[2], r[3])
    return idx


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 1 << 30))
def test_dead_rows_leave_every_lookup_in_c_and_numpy_and_come_back(seed):
    rng = np.random.default_rng(seed)
    idx = _index(seed % 5)
    for n in (6, 8):
        si = idx._size(n)
        before = [(c, si.lookup(c, False).tolist()) for c in (random_constraint(rng, idx, n) for _ in range(15))]
        dead = [si.hashes[j] for j in rng.choice(len(si.hashes), size=len(si.hashes) // 3, replace=False)]
        idx.set_dead(n, dead, True)
        gone = {si.row_of(h) for h in dead}
        assert si.table is None or si.table.dead == len(dead)
        for c, want in before:
            got = si.lookup(c, False).tolist()
            assert got == si.lookup_py(c, False).tolist()
            assert got == [k for k in want if k // 16 not in gone]
        idx.set_dead(n, dead, False)
        for c, want in before:
            assert si.lookup(c, False).tolist() == want


# ---------------------------------------------------------------- the fresh active set


def _fill(lib: Library, seed: int, per_n: dict[int, int]) -> None:
    for n, k in per_n.items():
        lib.insert_many(batch(GenParams.make(n), k, bytes([seed, n]) * 16))


@pytest.fixture(scope="module")
def warm(tmp_path_factory):
    path = tmp_path_factory.mktemp("fresh") / "lib.sqlite"
    with Library.create(path) as lib:
        _fill(lib, 1, {6: 40, 10: 40, 12: 20})
    return path


def _sols(lib: Library, n: int) -> list[str]:
    return [
        spent.solution_hash(n, bytes(s))
        for (s,) in lib.conn.execute("SELECT solution FROM tiles WHERE n = ? ORDER BY hash", (n,))
    ]


def _spend(lib: Library, sols: list[str], board: str = "ab" * 32, day: str = "2026-10-01") -> None:
    with lib.conn:
        spent.record(lib.conn, [SpentRow(s, board, 10, day) for s in sols])


def test_the_fresh_set_leaves_out_spent_solutions_and_its_sidecar_refreshes_to_what_a_scan_gives(warm, tmp_path):
    path = shutil.copyfile(warm, tmp_path / "lib.sqlite")
    cap = 15
    with Library.open(path) as lib:
        load_active(lib.conn, path, cap, fresh=True)  # the sidecar, before any spending
        sols10 = _sols(lib, 10)
        _spend(lib, sols10[:10:2] + sols10[-3:])  # inside the set and beyond it
        _fill(lib, 2, {10: 10})  # new rows too
        _spend(lib, _sols(lib, 10)[-2:], board="cd" * 32)
        got, info = load_active(lib.conn, path, cap, fresh=True)
        assert info.source == "refresh" and info.dropped > 0
        want, _last, _read = scan(lib.conn, cap, fresh=True)
        gone = spent.spent_of(lib.conn, _sols(lib, 10))
        for n in (6, 10, 12):
            assert got[n].hashes.tolist() == want[n].hashes.tolist()
            assert got[n].sols.tolist() == want[n].sols.tolist()
            assert len(got[n]) == min(
                cap,
                lib.conn.execute("SELECT count(*) FROM tiles WHERE n = ?", (n,)).fetchone()[0]
                - (len(gone) if n == 10 else 0),
            )
        assert not {s.decode() for s in got[10].sols.tolist()} & gone
        # the any set still holds every hash: the policy is the sidecar's, not the library's
        anyset, _ = load_active(lib.conn, path, cap)
        assert len(anyset[10]) == cap and set(anyset[10].hashes.tolist()) != set(got[10].hashes.tolist())
        assert load_active(lib.conn, path, cap, fresh=True)[1].source == "sidecar"


# ---------------------------------------------------------------- the drain makes another


def test_a_banned_completion_is_excluded_and_another_is_made_and_none_left_is_failed_not_nofit():
    c = Constraint(10, (0, 0, 0, 0), (0, 0, 0, 0))
    kind, first = generate(c, 0, 1, Stream(b"\x01" * 32, "d"))
    assert kind == TILE
    seen = {spent.grid_solution_hash(first.solution_grid)}
    kind, other = generate(c, 0, 1, Stream(b"\x01" * 32, "d"), banned=lambda g: spent.grid_solution_hash(g) in seen)
    assert kind == TILE and own_hash(other.solution_grid) not in seen
    kind, none = generate(c, 0, 1, Stream(b"\x01" * 32, "d"), banned=lambda g: True)
    assert (kind, none) == (FAILED, None)


# ---------------------------------------------------------------- real stitches


def _held_solutions(lib: Library, placements, packing) -> list[str]:
    out = []
    for (h, _t), (_x, _y, s) in zip(placements, packing.squares, strict=True):
        if s + 1 >= 10:
            (sol,) = lib.conn.execute("SELECT solution FROM tiles WHERE hash = ?", (h,)).fetchone()
            out.append(own_hash(from_blob(bytes(sol), s + 1)))
    return out


@pytest.mark.parametrize("G", [61, 201])  # 201: the halves run in forked workers
def test_a_fresh_stitch_places_no_held_solution_twice_and_none_spent(warm, tmp_path, G):
    """On a warm library where some solutions are spent: the ``any`` stitch places spent ones and
    repeats (the check below can fail), the fresh one never does."""
    found = {}
    for fresh in (False, True):
        path = shutil.copyfile(warm, tmp_path / f"lib-{fresh}.sqlite")
        with Library.open(path) as lib:
            _spend(lib, _sols(lib, 10)[::2])
            spent_now = {r.solution for r in spent.rows_of(lib.conn, _sols(lib, 10))}
            p = make_packing("big-first", G, bytes(range(32)))
            res = stitch(
                p, lib, Stream(bytes(range(32)), "stitch"), StitchOptions(profile=None, workers=2, fresh=fresh)
            )
            sols = _held_solutions(lib, res.placements, res.packing)
            found[fresh] = (len(sols) - len(set(sols)), len(set(sols) & spent_now))
            assert res.stats.final_fill > 0.98
    assert found[True] == (0, 0)
    if G == 201:
        assert found[False][0] > 0  # the rule changes what a warm stitch does
