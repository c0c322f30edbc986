"""The index's hashes as bytes arrays (``stitcher.index._SizeIndex``: ``row_of``, ``rows_of_solution``,
``solution_rows``) and the fair rule that reads them (``stitcher.fresh.FreshRule``), each against a
plain Python reference built from the same rows."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from stitcher.fresh import FreshRule, parities
from stitcher.index import MemoryIndex, _SizeIndex

SETTINGS = settings(max_examples=25, deadline=None)


def _rows(rng, k: int) -> tuple[list[str], np.ndarray, np.ndarray, np.ndarray]:
    hashes = [rng.bytes(32).hex() for _ in range(k)]
    canon = rng.integers(0, 1 << 10, size=(k, 4))
    return hashes, canon, rng.integers(1, 3, size=k), rng.integers(0, 1 << 16, size=k)


def _sols(rng, k: int, pool: list[str]) -> list[str]:
    """Solution hashes for k rows: "" (not known) or one of ``pool`` (so several rows share one)."""
    return ["" if rng.random() < 0.3 else pool[int(rng.integers(0, len(pool)))] for _ in range(k)]


@SETTINGS
@given(st.integers(0, 1 << 30))
def test_rows_and_solutions_are_found_as_a_dict_would(seed):
    """Rows loaded in hash order, then batches in any order, solutions set later: ``row_of`` and
    ``rows_of_solution`` answer what dicts over every row answer, before and after the sort."""
    rng = np.random.default_rng(seed)
    pool = [rng.bytes(32).hex() for _ in range(6)]
    si = _SizeIndex(10)
    want_row: dict[str, int] = {}
    want_sol: dict[str, str] = {}
    first = True
    for _ in range(int(rng.integers(1, 5))):
        hashes, canon, m, pins = _rows(rng, int(rng.integers(1, 40)))
        if first:
            hashes.sort()  # an active set arrives in hash order
        sols = _sols(rng, len(hashes), pool)
        with_sols = bool(rng.integers(0, 2))
        si.add_arrays(hashes, canon, m, pins, table=False, sols=sols if with_sols else None)
        for j, h in enumerate(hashes):
            row = len(want_row)
            want_row[h] = row
            if with_sols and sols[j]:
                want_sol[h] = sols[j]
            elif not with_sols and sols[j] and rng.random() < 0.5:
                si.set_solution(row, sols[j].encode())  # a made tile's, learned later
                want_sol[h] = sols[j]
        first = False
        if rng.random() < 0.5:
            si.rows_of_solution(pool[0].encode())  # sort now: later rows go to the late lists
    for h, row in want_row.items():
        assert si.row_of(h) == row and si.hash_of(row) == h
    assert si.row_of(rng.bytes(32).hex()) is None and si.row_of("") is None
    for sol in pool:
        rows = sorted(want_row[h] for h, s in want_sol.items() if s == sol)
        assert si.rows_of_solution(sol.encode()) == rows
    assert si.hashes == list(want_row)


@SETTINGS
@given(st.lists(st.text("0123456789abcdefABCDEF", min_size=1, max_size=64) | st.just(""), max_size=30))
def test_solution_parity_is_the_last_hex_digit(sols):
    """``solution_rows``: the rows with a solution hash and those hashes; ``fresh.parities`` of them:
    int(last digit, 16) & 1 each."""
    idx = MemoryIndex()
    k = len(sols)
    if k:
        rng = np.random.default_rng(k)
        hashes, canon, m, pins = _rows(rng, k)
        idx._size(12).add_arrays(hashes, canon, m, pins, table=False, sols=sols)
    rows, got = idx.solution_rows(12)
    assert rows.tolist() == [j for j, s in enumerate(sols) if s]
    assert [g.decode() for g in got.tolist()] == [s for s in sols if s]
    assert parities(got).tolist() == [int(s[-1], 16) & 1 for s in sols if s]


def test_hashes_longer_than_64_characters_are_refused():
    si = _SizeIndex(6)
    with pytest.raises(ValueError, match="64"):
        si.add_arrays(["a" * 65], np.zeros((1, 4), dtype=np.int64), np.ones(1), np.zeros(1), table=False)


@pytest.mark.parametrize("seed", range(4))
def test_the_fair_rule_marks_what_a_per_solution_reference_marks(seed):
    """Tiles on and off the board, then a half reserved, then more: the dead rows are exactly those
    whose solution is on the board or (in a half) of the other parity and not on the board."""
    rng = np.random.default_rng(seed)
    idx = MemoryIndex()
    sol_of: dict[tuple[int, str], str] = {}
    for n in (10, 12):
        pool = [rng.bytes(32).hex() for _ in range(12)]  # a solution hash names its n (tilelib.spent)
        hashes, canon, m, pins = _rows(rng, 60)
        hashes.sort()
        sols = _sols(rng, 60, pool)
        idx._size(n).add_arrays(hashes, canon, m, pins, sols=sols)
        sol_of.update(((n, h), s) for h, s in zip(hashes, sols, strict=True) if s)
    rule = FreshRule(idx)
    count: dict[str, int] = {}
    tiles = list(sol_of)

    def check(half):
        for n in (10, 12):
            si = idx.sizes[n]
            for row, h in enumerate(si.hashes):
                s = sol_of.get((n, h))
                on = bool(s and count.get(s))
                other = bool(s and half is not None and int(s[-1], 16) % 2 != half)
                assert bool(si.DEAD[row]) == (on or other), (n, h)
                assert si.table.dead == int(si.DEAD[: si.size].sum())

    held: list[tuple[int, str]] = []
    for step in range(80):
        if step == 40:
            half = int(rng.integers(0, 2))
            rule.reserve(half)
        if held and rng.random() < 0.4:
            n, h = held.pop(int(rng.integers(0, len(held))))
            rule.take(n, h)
            count[sol_of[(n, h)]] -= 1
        else:
            n, h = tiles[int(rng.integers(0, len(tiles)))]
            rule.put(n, h)
            held.append((n, h))
            count[sol_of[(n, h)]] = count.get(sol_of[(n, h)], 0) + 1
            assert rule.clashes(n, h)
        check(None if step < 40 else half)
