"""engine.windows: the C search that decides completions, against brute force and against CP-SAT.

- 6×6, one window, distinct or not: the search finds a grid exactly when the brute-force
  enumerator of tests/engine_brute.py has one, every grid it finds is a valid completion, and
  excluding every completion it finds in turn enumerates them all (the exact count).
- Window-aware problems (tests/data/joint_protos.json's 177 layouts, the ones the CP-SAT model is
  pinned on) and drained-miss boundaries of every n, feasible and not: the search and CP-SAT
  (``engine.completion.cpsat_model``) agree on feasibility, and both grids are valid.
- A seed fixes the answer; other seeds give other grids.
- Bad input is one ``BadInput`` (``ValueError`` from the kernel itself), never a crash.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from engine_brute import brute_solutions
from hypothesis import given, settings
from hypothesis import strategies as st
from test_cpsat_rules import _layout

from engine.completion import DECIDED_C, DECIDED_CPSAT, cpsat_model, decide
from engine.count import c_kernel
from engine.cpsat import INFEASIBLE
from engine.windows import FOUND, NONE, UNDECIDED, Windows, seed_of, solve
from generator.complete import side_cells
from generator.solution import random_solution
from stitcher.joint import joint_problem
from tilelib.errors import BadInput
from tilelib.rng import Stream
from tilelib.rules import valid_lines, violations

JOINT = Path(__file__).parent / "data" / "joint_protos.json"


def rows_of(grid) -> tuple[int, ...]:
    return tuple(int("".join(map(str, r)), 2) for r in np.asarray(grid).tolist())


def lines_valid(grid: np.ndarray) -> bool:
    """Every row and column balanced and without three equal in a row (distinctness not asked)."""
    ok = set(valid_lines(grid.shape[0]))
    return all(v in ok for v in rows_of(grid)) and all(v in ok for v in rows_of(grid.T))


def check_answer(problem: Windows, grids) -> None:
    """Every window of a found answer obeys its rules, keeps the known cells, avoids its exclusions."""
    for k, ((x, y, n, d), g) in enumerate(zip(problem.windows, grids, strict=True)):
        assert (violations(g) == []) if d else lines_valid(g), (k, g)
        kn = problem.known[y : y + n, x : x + n] == 1
        assert (g[kn] == problem.values[y : y + n, x : x + n][kn]).all()
        for j, ex in problem.exclude:
            assert j != k or not (g == ex).all()


# ---------------------------------------------------------------- 6×6 against brute force


@settings(max_examples=80, deadline=None)
@given(st.integers(0, 2**32 - 1), st.floats(0.05, 0.7), st.booleans())
def test_six_by_six_found_exactly_when_brute_force_finds_one(seed, density, distinct):
    rng = np.random.default_rng(seed)
    values = rng.integers(0, 2, (6, 6)).astype(np.uint8)
    known = (rng.random((6, 6)) < density).astype(np.uint8)
    vals, kn = rows_of(values * known), rows_of(known)
    brute = brute_solutions(6, list(vals), list(kn), distinct)
    got = solve(Windows(values, known, ((0, 0, 6, distinct),)), seed)
    assert got.status == (FOUND if brute else NONE)
    if got.status == FOUND:
        assert rows_of(got.window(0, 0, 6)) in set(brute)


@pytest.mark.parametrize("distinct, first", [(True, 0b001011), (True, 0b110100), (False, 0b010101)])
def test_excluding_each_answer_in_turn_enumerates_every_completion(distinct, first):
    """With row 0 fixed, excluding each found grid in turn enumerates every completion, each once:
    exactly the brute-force set, and then a proof that no other exists."""
    values = np.zeros((6, 6), dtype=np.uint8)
    known = np.zeros((6, 6), dtype=np.uint8)
    values[0] = [(first >> (5 - c)) & 1 for c in range(6)]
    known[0] = 1
    exclude, seen = [], set()
    while True:
        got = solve(Windows(values, known, ((0, 0, 6, distinct),), tuple(exclude)), len(exclude), max_nodes=10**6)
        assert got.status != UNDECIDED
        if got.status == NONE:
            break
        g = got.window(0, 0, 6)
        assert rows_of(g) not in seen and rows_of(g)[0] == first
        seen.add(rows_of(g))
        exclude.append((0, g))
    assert seen == set(brute_solutions(6, [first] + [0] * 5, [63] + [0] * 5, distinct))
    assert len(seen) > 100


# ---------------------------------------------------------------- against CP-SAT


def _agree(problem: Windows, stream: Stream) -> int:
    """Both decide ``problem``; they agree on feasibility and their grids are valid. Returns C's status."""
    got = solve(problem, seed_of(stream.child("c")), max_nodes=10**6)
    assert got.status != UNDECIDED
    model, rows = cpsat_model(problem)
    cp = model.solve(stream, 30.0, lean=True)
    assert cp.found or cp.status == INFEASIBLE
    assert (got.status == FOUND) == cp.found
    if cp.found:
        check_answer(problem, [cp.grid(r) for r in rows])
        check_answer(problem, [got.window(x, y, n) for (x, y, n, _d) in problem.windows])
    return got.status


def test_window_aware_layouts_agree_with_cpsat():
    """The 177 layouts the CP-SAT model is pinned on (a square, 1-4 neighbours, some repairs)."""
    statuses = []
    for case in json.loads(JOINT.read_text())["models"]:
        values, known, squares, others = _layout(case["density"], np.random.default_rng(case["seed"]))
        statuses.append(
            _agree(joint_problem(values, known, squares, others), Stream(case["seed"].to_bytes(4, "big") * 8, "joint"))
        )
    assert statuses.count(FOUND) > 100 and statuses.count(NONE) >= 5  # both answers are tested


@pytest.mark.parametrize("n", [6, 8, 10, 12, 14, 16])
def test_drained_boundaries_agree_with_cpsat(n):
    """Boundaries as drained misses show them: 1-4 fixed sides, half from one tile (completable),
    half each side from its own tile (often not), some with an excluded grid."""
    statuses = []
    for k in range(24):
        s = Stream(bytes([n, k]) * 16, "boundary")
        mask = 1 + s.randbelow(15)
        vals = np.zeros((n, n), dtype=np.uint8)
        src = random_solution(n, s.child("src"))
        for side in (1, 2, 4, 8):
            if mask & side:
                one = side_cells(n, side).astype(bool)
                g = src if k % 2 == 0 else random_solution(n, s.child(f"side{side}"))
                vals[one] = g[one]
        known = side_cells(n, mask)
        exclude = ((0, src),) if k % 4 == 0 else ()
        statuses.append(_agree(Windows(vals, known, ((0, 0, n, True),), exclude), s.child("solve")))
    assert FOUND in statuses and NONE in statuses


# ---------------------------------------------------------------- seeds, budget, the decision path


def test_a_seed_fixes_the_answer_and_seeds_differ():
    z = np.zeros((12, 12), dtype=np.uint8)
    p = Windows(z, z, ((0, 0, 12, True),))
    grids = [solve(p, s).window(0, 0, 12).tobytes() for s in range(8)]
    assert grids[0] == solve(p, 0).window(0, 0, 12).tobytes()
    assert len(set(grids)) > 4


def test_past_the_budget_cpsat_decides_and_the_tally_says_so():
    z = np.zeros((16, 16), dtype=np.uint8)
    p = Windows(z, z, ((0, 0, 16, True),))
    assert solve(p, 1, max_nodes=0).status == UNDECIDED
    tally = []
    got = decide(p, Stream(b"t" * 32, "d"), 30.0, max_nodes=0, tally=lambda n, path: tally.append((n, path)))
    assert got.path == DECIDED_CPSAT and tally == [(16, DECIDED_CPSAT)]
    check_answer(p, got.grids)
    got = decide(p, Stream(b"t" * 32, "d"), 30.0, tally=lambda n, path: tally.append((n, path)))
    assert got.path == DECIDED_C and tally[-1] == (16, DECIDED_C)
    check_answer(p, got.grids)


def test_an_infeasible_decision_is_a_proof():
    values = np.zeros((6, 6), dtype=np.uint8)
    known = np.zeros((6, 6), dtype=np.uint8)
    known[0, :3] = 1  # three zeros in a row
    got = decide(Windows(values, known, ((0, 0, 6, True),)), Stream(b"i" * 32), 10.0)
    assert got.grids is None and got.proof and got.path == DECIDED_C


# ---------------------------------------------------------------- bad input

Z6 = np.zeros((6, 6), dtype=np.uint8)


@pytest.mark.parametrize(
    "problem, says",
    [
        (Windows(Z6, np.zeros((6, 5), dtype=np.uint8), ((0, 0, 6, True),)), "shape"),
        (Windows(Z6, Z6, ()), "at least one window"),
        (Windows(Z6, Z6, ((1, 0, 6, True),)), "outside"),
        (Windows(Z6, Z6, ((0, 0, 5, True),)), "even"),
        (
            Windows(np.zeros((20, 20), dtype=np.uint8), np.zeros((20, 20), dtype=np.uint8), ((0, 0, 18, True),)),
            "even in 2..16",
        ),
        (Windows(Z6 + 2, Z6, ((0, 0, 6, True),)), "0 and 1"),
        (Windows(Z6, Z6, ((0, 0, 6),)), "(x, y, n, distinct)"),
        (Windows(Z6, Z6, ((0, 0, 6, True),), ((1, Z6),)), "excluded grid 1"),
        (
            Windows(
                Z6,
                Z6,
                ((0, 0, 6, True),),
                (
                    (
                        0,
                        np.zeros((4, 4)),
                    ),
                ),
            ),
            "excluded grid 0",
        ),
    ],
)
def test_bad_problems_are_one_clear_error(problem, says):
    with pytest.raises(BadInput) as e:
        solve(problem, 0)
    assert says in str(e.value) and "\n" not in str(e.value)


def test_the_kernel_checks_its_own_input():
    """Called directly (not through ``solve``), the kernel refuses what it cannot search."""
    k = c_kernel().complete_windows
    z = bytes(36)
    w = [(0, 0, 6, True)]
    cases = [
        ((6, 6, bytes(35), z, w, [], 0, -1), "H*W bytes"),
        ((6, 6, b"\x02" * 36, z, w, [], 0, -1), "0/1"),
        ((6, 6, b"\x01" * 36, z, w, [], 0, -1), "free cell"),
        ((6, 6, z, z, [(0, 1, 6, True)], [], 0, -1), "outside"),
        ((6, 6, z, z, [(0, 0, 7, True)], [], 0, -1), "even"),
        ((6, 6, z, z, [], [], 0, -1), "between 1 and"),
        ((6, 6, z, z, [[0, 0, 6, True]], [], 0, -1), "tuple"),
        ((6, 6, z, z, w, [(1, z)], 0, -1), "excluded"),
        ((6, 6, z, z, w, [(0, bytes(35))], 0, -1), "excluded"),
        ((0, 6, b"", b"", w, [], 0, -1), "region"),
        ((2048, 1024, bytes(2**21), bytes(2**21), w, [], 0, -1), "region"),
        ((6, 6, z, z, w * 257, [], 0, -1), "between 1 and 256"),
    ]
    for args, says in cases:
        with pytest.raises(ValueError) as e:
            k(*args)
        assert says in str(e.value), (args[:2], str(e.value))


@settings(max_examples=300, deadline=None)
@given(
    st.integers(1, 12),
    st.integers(1, 12),
    st.binary(max_size=160),
    st.binary(max_size=160),
    st.lists(st.tuples(st.integers(-3, 14), st.integers(-3, 14), st.integers(-2, 18), st.booleans()), max_size=4),
    st.lists(st.tuples(st.integers(-1, 4), st.binary(max_size=40)), max_size=2),
)
def test_junk_to_the_kernel_is_an_answer_or_a_value_error(h, w, vals, known, wins, excl):
    """Arbitrary arguments: a (status, grid, nodes) answer or ValueError, never a crash."""
    try:
        status, grid, nodes = c_kernel().complete_windows(h, w, vals, known, wins, excl, 7, 5000)
    except ValueError:
        return
    assert status in (FOUND, NONE, UNDECIDED) and nodes >= 1
    assert (grid is None) == (status != FOUND)
