"""engine.cpsat: the one CP-SAT encoding of the rules, against brute force and against golden models.

The solution sets are compared exactly by enumerating the model with CP-SAT. Distinctness uses
auxiliary "differ" literals with only ``d -> (u != v)``, so one grid has many assignments; the
enumeration adds the converse clauses (``d`` is then a function of the cells), which leaves the
set of grids unchanged and makes every grid one solution.
"""

from __future__ import annotations

import hashlib
import json
from functools import cache
from pathlib import Path

import numpy as np
import pytest
from engine_brute import brute_solutions
from hypothesis import given, settings
from hypothesis import strategies as st
from ortools.sat.python import cp_model

from engine.completion import cpsat_model
from engine.cpsat import RulesModel, _ProtoModel
from stitcher.joint import joint_problem
from tilelib.rng import Stream
from tilelib.rules import violations

N = 6


@cache
def all_solutions(distinct: bool) -> tuple[tuple[int, ...], ...]:
    """Every valid 6×6 grid (row ints), by the brute-force enumerator of tests/engine_brute.py."""
    return tuple(brute_solutions(N, [0] * N, [0] * N, distinct))


def rows_of(grid) -> tuple[int, ...]:
    return tuple(int("".join(map(str, r)), 2) for r in np.asarray(grid).tolist())


class _Collect(cp_model.CpSolverSolutionCallback):
    def __init__(self, cells: list[list[int]]) -> None:
        super().__init__()
        self.cells, self.grids = cells, []

    def on_solution_callback(self) -> None:
        self.grids.append(
            tuple(
                int("".join(str(self.SolutionIntegerValue(v) if v >= 0 else ~v) for v in row), 2) for row in self.cells
            )
        )


def enumerate_grids(model: RulesModel, rows: list[list[int]]) -> list[tuple[int, ...]]:
    """Every solution of ``model`` as the row ints of the window ``rows`` (converse clauses added,
    see the module docstring; one worker, presolve off, as ``enumerate_all_solutions`` wants)."""
    proto = model.proto
    pairs = []
    for c in proto.constraints:
        if not c.has_bool_or():  # (reading c.bool_or of a linear constraint would replace it)
            continue
        enf, lits = list(c.enforcement_literal), list(c.bool_or.literals)
        if len(enf) == 1 and len(lits) == 2 and lits[0] >= 0:  # d -> (u or v)
            pairs.append((enf[0], *lits))
    for d, u, v in pairs:  # not d -> u == v
        proto.constraints.add().bool_or.literals.extend((d, ~u, v))
        proto.constraints.add().bool_or.literals.extend((d, u, ~v))
    solver = cp_model.CpSolver()
    solver.parameters.num_workers = 1
    solver.parameters.enumerate_all_solutions = True
    solver.parameters.cp_model_presolve = False
    cb = _Collect(rows)
    status = solver.Solve(_ProtoModel(proto), cb)
    assert status in (cp_model.OPTIMAL, cp_model.INFEASIBLE)
    assert len(set(cb.grids)) == len(cb.grids), "a grid was enumerated twice: d is not determined"
    return cb.grids


@pytest.mark.parametrize("distinct,count", [(True, 4140), (False, 11222)])
def test_free_6x6_window_has_exactly_the_valid_grids(distinct, count):
    z = np.zeros((N, N), dtype=np.uint8)
    model = RulesModel(z, z)
    rows = model.window(0, 0, N, distinct=distinct)
    grids = enumerate_grids(model, rows)
    assert len(grids) == count == len(all_solutions(distinct))
    assert set(grids) == set(all_solutions(distinct))


fixings = st.tuples(
    st.lists(st.integers(0, 63), min_size=N, max_size=N),
    st.lists(st.integers(0, 63), min_size=N, max_size=N),
    st.booleans(),
)


def grid_of(rows: list[int]) -> np.ndarray:
    return np.array([[(r >> (N - 1 - c)) & 1 for c in range(N)] for r in rows], dtype=np.uint8)


@settings(max_examples=20)
@given(fixings)
def test_window_with_fixed_cells_matches_brute_force(case):
    vals, known, distinct = case
    # sparse masks are the interesting ones (dense random values are mostly infeasible)
    known = [k & (k >> 1) | (k & 0b100001) for k in known]
    model = RulesModel(grid_of(vals), grid_of(known))
    rows = model.window(0, 0, N, distinct=distinct)
    want = {g for g in all_solutions(distinct) if all((g[r] ^ vals[r]) & known[r] == 0 for r in range(N))}
    assert set(enumerate_grids(model, rows)) == want


@settings(max_examples=40)
@given(st.integers(0, 4139), st.lists(st.integers(0, 35), max_size=20))
def test_constants_breaking_a_rule_make_the_model_infeasible(pick, flips):
    """Fully known windows: feasible exactly when the grid is valid (the constant-only paths)."""
    g = grid_of(list(all_solutions(True)[pick]))
    for f in flips:
        g[f // N, f % N] ^= 1
    model = RulesModel(g, np.ones((N, N), dtype=np.uint8))
    rows = model.window(0, 0, N)
    got = enumerate_grids(model, rows)
    assert got == ([rows_of(g)] if rows_of(g) in set(all_solutions(True)) else [])


@settings(max_examples=30)
@given(st.integers(0, 4139), st.integers(0, 11221), st.lists(st.integers(0, 65), max_size=12))
def test_two_windows_sharing_a_column_match_brute_force(a, b, cells):
    """Window A (distinct) at x = 0 and window B (not distinct) at x = 5 share column 5: a cell
    both touch is one variable. Feasible exactly when some valid A and some valid B agree on the
    fixed cells and on the shared column."""
    board_v = np.zeros((N, 2 * N - 1), dtype=np.uint8)
    board_k = np.zeros_like(board_v)
    board_v[:, :N] = grid_of(list(all_solutions(True)[a]))
    board_v[:, N - 1 :] = grid_of(list(all_solutions(False)[b]))  # column 5 from B
    for c in cells:
        board_k[c // 11, c % 11] = 1
    model = RulesModel(board_v, board_k)
    model.window(0, 0, N)
    model.window(N - 1, 0, N, distinct=False)
    ka, va = rows_of(board_k[:, :N]), rows_of(board_v[:, :N])
    kb, vb = rows_of(board_k[:, N - 1 :]), rows_of(board_v[:, N - 1 :])

    def fits(g, k, v):
        return all((g[r] ^ v[r]) & k[r] == 0 for r in range(N))

    left = {tuple(r & 1 for r in g) for g in all_solutions(True) if fits(g, ka, va)}
    right = {tuple(r >> (N - 1) for r in g) for g in all_solutions(False) if fits(g, kb, vb)}
    solver = cp_model.CpSolver()
    solver.parameters.num_workers = 1
    status = solver.Solve(_ProtoModel(model.proto))
    assert status in (cp_model.OPTIMAL, cp_model.FEASIBLE, cp_model.INFEASIBLE)
    assert (status != cp_model.INFEASIBLE) == bool(left & right)


@settings(max_examples=20)
@given(st.integers(0, 4139), st.lists(st.integers(0, 35), min_size=4, max_size=12))
def test_differ_excludes_exactly_the_given_grid(pick, fixed):
    g = grid_of(list(all_solutions(True)[pick]))
    known = np.zeros((N, N), dtype=np.uint8)
    for f in fixed:
        known[f // N, f % N] = 1
    model = RulesModel(g, known)
    rows = model.window(0, 0, N)
    model.differ(rows, g)
    gr, kr = rows_of(g), rows_of(known)
    want = {s for s in all_solutions(True) if s != gr and all((s[r] ^ gr[r]) & kr[r] == 0 for r in range(N))}
    assert set(enumerate_grids(model, rows)) == want


# ---------------------------------------------------------------- joint's model is the old one


def _layout(draw_cells, rng: np.random.Generator):
    """A 40×40 board: a square, 1-4 neighbour windows around it, random sparse known cells."""
    values = rng.integers(0, 2, (40, 40)).astype(np.uint8)
    known = (rng.random((40, 40)) < draw_cells).astype(np.uint8)
    s = int(rng.choice([5, 7, 9, 11]))
    x0 = y0 = 14
    squares = [(x0, y0, s)]
    others = []
    for dx, dy in ((1, 0), (-1, 0), (0, 1), (0, -1)):
        if rng.random() < 0.7:
            q = int(rng.choice([5, 7, 9]))
            x = x0 + s if dx == 1 else x0 - q if dx == -1 else x0 + int(rng.integers(-2, 3))
            y = y0 + s if dy == 1 else y0 - q if dy == -1 else y0 + int(rng.integers(-2, 3))
            others.append((x, y, q))
    if others and rng.random() < 0.3:  # a repair: two squares with distinct lines
        squares.append(others.pop(0))
    return values, known, squares, others


JOINT_GOLDEN = Path(__file__).parent / "data" / "joint_protos.json"


def _joint_cases() -> list[dict]:
    return json.loads(JOINT_GOLDEN.read_text())["models"]


def proto_digest(model: RulesModel) -> str:
    return hashlib.sha256(str(model.proto).encode()).hexdigest()


def test_joint_golden_models_are_many_and_distinct():
    """The golden file can tell models apart: 177 completable layouts, nearly all different."""
    cases = _joint_cases()
    assert len(cases) == 177
    assert len({c["proto_sha256"] for c in cases}) > 150


@pytest.mark.parametrize("case", _joint_cases(), ids=lambda c: f"{c['seed']}-{c['density']}")
def test_joint_model_is_field_for_field_the_golden_one(case):
    """Same variables, constraints, order and hints as the pre-issue-12 stitcher.joint (the protos'
    sha256 in tests/data/joint_protos.json, made by the encoders before engine.cpsat and checked
    equal to this code when made), so the same answer under the same solver parameters; and the
    answer, when there is one, is a valid grid on every square that keeps every known cell."""
    seed, density = case["seed"], case["density"]
    values, known, squares, others = _layout(density, np.random.default_rng(seed))
    model, rows = cpsat_model(joint_problem(values, known, squares, others))
    own = rows[: len(squares)]
    got = model.solve(Stream(seed.to_bytes(4, "big") * 8, "joint"), 10.0, lean=True)
    assert proto_digest(model) == case["proto_sha256"]  # the hints are written by solve
    if got.found:
        for (x0, y0, s), rows in zip(squares, own, strict=True):
            grid = got.grid(rows)
            assert violations(grid) == []
            k = known[y0 : y0 + s + 1, x0 : x0 + s + 1] == 1
            assert (grid[k] == values[y0 : y0 + s + 1, x0 : x0 + s + 1][k]).all()


def test_a_changed_joint_model_changes_its_digest():
    """The digest check can fail: one more window (a neighbour dropped from ``others``) or another
    hint stream gives another proto."""
    case = _joint_cases()[0]
    values, known, squares, others = _layout(case["density"], np.random.default_rng(case["seed"]))
    model, _ = cpsat_model(joint_problem(values, known, squares, others[:-1] if others else [(0, 0, 5)]))
    model.solve(Stream(case["seed"].to_bytes(4, "big") * 8, "joint"), 10.0, lean=True)
    assert proto_digest(model) != case["proto_sha256"]
    model2, _ = cpsat_model(joint_problem(values, known, squares, others))
    model2.solve(Stream(b"\x01" * 32, "joint"), 10.0, lean=True)
    assert proto_digest(model2) != case["proto_sha256"]
