"""engine.ladder: each technique on hand-made lines, soundness of every fill, and the
consistency of rate()'s features with the standard solve and with the counter."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support import random_solution

from engine import count
from engine.count import ladder_rows
from engine.ladder import TECHNIQUES, Contradiction, _State, balance, bifurcation, rate, runs, solve_with, uniqueness
from tilelib.bits import Puzzle


def state(text: str) -> _State:
    return _State.from_puzzle(Puzzle.parse(text))


def grid6(*rows: str) -> str:
    return "".join(r.ljust(6, ".") for r in rows) + "." * (36 - 6 * len(rows))


def test_techniques_are_an_ordered_named_list():
    assert [(t.level, t.name) for t in TECHNIQUES] == [
        (1, "runs"),
        (2, "balance"),
        (3, "uniqueness"),
        (4, "bifurcation"),
    ]


def test_the_c_solve_walks_the_same_techniques():
    """One list for both languages: the table the C standard solve walks (``engine/_ladder.c``,
    exported as ``techniques()``) is ``TECHNIQUES``, level for level, name for name, in order."""
    from engine.count import c_kernel

    assert c_kernel().techniques() == tuple((t.level, t.name) for t in TECHNIQUES)


def test_runs_doubles_and_sandwiches():
    assert sorted(runs(state(grid6("00....")))) == [(0, 2, 1)]
    assert sorted(runs(state(grid6("..11..")))) == [(0, 1, 0), (0, 4, 0)]
    assert sorted(runs(state(grid6("1.1...")))) == [(0, 1, 0)]
    assert sorted(runs(state(grid6("0.....", "0.....")))) == [(2, 0, 1)]  # columns too
    assert sorted(runs(state(grid6("....0.", "......", "....0.")))) == [(1, 4, 1)]
    assert runs(state(grid6("0.1.0."))) == []


def test_balance_fills_the_other_value():
    assert sorted(balance(state(grid6("1.1.1.")))) == [(0, 1, 0), (0, 3, 0), (0, 5, 0)]
    assert sorted(balance(state(grid6("0", "", "0", "", "0")))) == [(1, 0, 1), (3, 0, 1), (5, 0, 1)]
    assert balance(state(grid6("1.1.0."))) == []


def test_uniqueness_rules_out_a_duplicate_completion():
    # row 1 can be 001011 (= row 0) or 010011: L1 and L2 say nothing about it, L3 does.
    s = state(grid6("001011", "0..011"))
    assert [f for f in runs(s) if f[0] == 1] == [] and [f for f in balance(s) if f[0] == 1] == []
    assert sorted(uniqueness(s)) == [(1, 1, 1), (1, 2, 0)]
    # no complete row matches row 1's known cells: nothing to rule out
    assert uniqueness(state(grid6("110100", "0..011"))) == []


def test_uniqueness_contradiction_when_every_completion_duplicates():
    with pytest.raises(Contradiction):
        uniqueness(state(grid6("001011", "00.011")))


def test_fully_given_puzzle_rates_zero():
    sol = random_solution(6, np.random.default_rng(1))
    r = rate(Puzzle.from_grid(sol))
    assert (r.ladder, r.bifurcations, r.filled) == (0, 0, 0)
    assert not (r.used_unique or r.needs_unique or r.needs_bifurcation)
    assert np.array_equal(r.solution, sol)


def test_ambiguous_and_contradictory_puzzles_rate_five():
    r = rate(Puzzle.parse("." * 36))
    assert r.ladder == 5 and r.solution is None
    r = rate(Puzzle.parse(grid6("001011", "001011")))
    assert r.ladder == 5 and r.solution is None


@st.composite
def from_solution(draw, sizes=(4, 6, 8)):
    n = draw(st.sampled_from(sizes))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    sol = random_solution(n, rng)
    known = (rng.random((n, n)) < draw(st.floats(0.2, 0.95))).astype(np.uint8)
    return sol, Puzzle.from_grid(sol, known)


@settings(max_examples=80)
@given(from_solution())
def test_every_technique_fill_agrees_with_any_solution(case):
    sol, p = case
    s = _State.from_puzzle(p)
    for tech in TECHNIQUES:
        for r, c, v in tech.fn(s):
            assert sol[r, c] == v, (tech.name, r, c)


@settings(max_examples=80)
@given(from_solution())
def test_rate_is_consistent_with_the_counter_and_the_solve(case):
    check_rate(*case)


def test_rate_on_minimal_puzzles_of_the_fixed_set():
    from pathlib import Path

    lines = (Path(__file__).parent / "data" / "engine_instances.txt").read_text().splitlines()
    levels = set()
    for line in lines:
        if line.startswith("#"):
            continue
        g, _, c, _ = line.split()
        p = Puzzle.parse(g)
        if p.n <= 12 and c == "1":
            levels.add(check_rate(count(p, 1).solutions[0], p).ladder)
    assert {3, 4} <= levels  # the set reaches uniqueness and bifurcation


def check_rate(sol, p):
    """Assert rate(p)'s features against the counter and the standard solve; return the result."""
    r = rate(p)
    cnt = count(p, 2).count
    if r.solution is not None:
        assert cnt == 1 and np.array_equal(r.solution, sol)
        assert r.filled == int((p.known == 0).sum())
        assert 0 <= r.ladder <= 4
        assert (r.bifurcations > 0) == (r.ladder == 4)
        if r.ladder >= 1:
            assert solve_with(p, range(1, r.ladder + 1))[0] == "solved"
            assert solve_with(p, range(1, r.ladder))[0] != "solved"
        assert r.needs_unique == (solve_with(p, {1, 2, 4})[0] != "solved")
        assert r.needs_bifurcation == (r.ladder == 4)
        assert not r.needs_unique or r.used_unique or r.bifurcations
        assert not r.used_unique or r.ladder >= 3
    else:
        assert r.ladder == 5
    if cnt == 2:
        assert r.solution is None  # sound deductions cannot finish an ambiguous puzzle
    return r


def test_bifurcation_finds_a_forced_cell_the_cheaper_levels_miss():
    # search the fixed instance set for a state where L1-L3 stall and L4 progresses
    from pathlib import Path

    lines = (Path(__file__).parent / "data" / "engine_instances.txt").read_text().splitlines()
    found = 0
    for line in lines:
        if line.startswith("#"):
            continue
        g, _, c, _ = line.split()
        p = Puzzle.parse(g)
        if p.n > 10 or c != "1":
            continue
        status, grid = solve_with(p, {1, 2, 3})
        if status == "stuck":
            s = _State.from_puzzle(p)
            from engine.ladder import _solve

            _solve(s, frozenset({1, 2, 3}), None)
            fills = bifurcation(s)
            sol = count(p, 1).solutions[0]
            assert len(fills) == 1 and all(sol[r, c] == v for r, c, v in fills)
            found += 1
    assert found >= 1


def _same(a, b) -> bool:
    fa = (a.ladder, a.bifurcations, a.used_unique, a.needs_unique, a.needs_bifurcation, a.filled)
    fb = (b.ladder, b.bifurcations, b.used_unique, b.needs_unique, b.needs_bifurcation, b.filled)
    if fa != fb or (a.solution is None) != (b.solution is None):
        return False
    return a.solution is None or np.array_equal(a.solution, b.solution)


def test_c_ladder_equals_python_reference_on_the_fixed_set():
    from pathlib import Path

    lines = (Path(__file__).parent / "data" / "engine_instances.txt").read_text().splitlines()
    seen = set()
    for line in lines:
        if line.startswith("#"):
            continue
        p = Puzzle.parse(line.split()[0])
        if p.n <= 12:
            a, b = rate(p), rate(p, impl="python")
            assert _same(a, b), line
            seen.add(a.ladder)
    assert {3, 4, 5} <= seen


@settings(max_examples=100)
@given(from_solution(sizes=(4, 6, 8, 10)))
def test_c_ladder_equals_python_reference(case):
    _, p = case
    assert _same(rate(p), rate(p, impl="python"))


def test_rate_rejects_unknown_impl():
    from tilelib.errors import BadInput

    with pytest.raises(BadInput):
        rate(Puzzle.parse("." * 16), impl="java")


def _rows(grid: np.ndarray) -> list[int]:
    return [int("".join(map(str, row)), 2) for row in grid.astype(int)]


@settings(max_examples=150)
@given(from_solution(sizes=(4, 6, 8, 10, 12)))
def test_a_known_solution_changes_no_rating(case):
    """Given a solution, each bifurcation trial runs only the value it does not show; the rating,
    the solved rows and the cells filled are exactly the same (puzzles of several solutions too)."""
    sol, p = case
    n = p.n
    known = _rows(p.known)
    vals = [v & k for v, k in zip(_rows(p.values), known, strict=True)]
    assert ladder_rows(n, vals, known, _rows(sol)) == ladder_rows(n, vals, known)


def test_the_solution_check_accepts_exactly_the_72_valid_4x4_grids():
    """rate_rows checks the solution it is given: of all 65,536 4×4 grids, it takes exactly the 72
    that tilelib.rules.violations finds valid (an independent check of the C validator)."""
    from tilelib.rules import violations

    taken = 0
    for g in range(1 << 16):
        rows = [(g >> (4 * r)) & 15 for r in range(4)]
        grid = np.array([[(x >> (3 - c)) & 1 for c in range(4)] for x in rows], dtype=np.uint8)
        try:
            ladder_rows(4, [0] * 4, [0] * 4, rows)
            ok = True
        except ValueError:
            ok = False
        assert ok == (not violations(grid)), rows
        taken += ok
    assert taken == 72


@pytest.mark.parametrize(
    "rows,why",
    [
        ([0b001011, 0b001101, 0b010011, 0b110100, 0b101100, 0b110010], "column 0 holds three 0s"),
        ([0b001011, 0b001011, 0b110100, 0b110100, 0b010101, 0b101010], "rows repeat"),
        ([0b000111] * 6, "no row is a valid line"),
    ],
)
def test_rate_rows_refuses_a_solution_that_is_not_a_valid_grid(rows, why):
    with pytest.raises(ValueError, match="not a valid 6x6 grid"):
        ladder_rows(6, [0] * 6, [0] * 6, rows)


def test_rate_rows_refuses_a_solution_that_disagrees_with_a_known_cell():
    sol = [0b001011, 0b010101, 0b101010, 0b110100, 0b001101, 0b110010]
    from tilelib.rules import violations

    assert not violations(np.array([[(x >> (5 - c)) & 1 for c in range(6)] for x in sol], dtype=np.uint8))
    known = [0b100000] + [0] * 5
    vals = [0b100000] + [0] * 5  # cell (0, 0) known as 1; the solution shows 0 there
    with pytest.raises(ValueError, match="disagrees with a known cell of row 0"):
        ladder_rows(6, vals, known, sol)
    assert ladder_rows(6, [0] * 6, known, sol)[0] == 5  # (0, 0) known as 0: it agrees
