"""engine.count / engine.backbone: exact checksums, agreement with a brute-force enumerator,
identical results (node counts included) from the C kernel and the Python reference."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from engine_brute import brute_solutions, line_valid
from hypothesis import given, settings
from hypothesis import strategies as st
from support import random_solution

import engine
from engine import backbone, backbone_rows, count, count_rows
from tilelib.bits import Puzzle, row_ints
from tilelib.errors import BadInput

BIG = 10**9
INSTANCES = Path(__file__).parent / "data" / "engine_instances.txt"


def rows_obey_rules(rows, n, distinct=True) -> bool:
    """Independent check of a solution given as row ints."""
    cols = [sum(((r >> (n - 1 - c)) & 1) << (n - 1 - i) for i, r in enumerate(rows)) for c in range(n)]
    ok = all(line_valid(x, n) for x in list(rows) + cols)
    return ok and (not distinct or (len(set(rows)) == n and len(set(cols)) == n))


# ------------------------------------------------------------------ checksums


@pytest.mark.parametrize("impl", ["c", "python"])
@pytest.mark.parametrize(
    "n,distinct,total", [(2, True, 2), (4, True, 72), (4, False, 90), (6, True, 4140), (6, False, 11222)]
)
def test_all_grids_checksums(n, distinct, total, impl):
    c, sols, _ = count_rows(n, [0] * n, [0] * n, BIG, distinct=distinct, keep=BIG, impl=impl)
    assert c == total
    assert len(set(sols)) == total
    assert all(rows_obey_rules(s, n, distinct) for s in sols)


def test_all_8x8_grids_oeis_a253316():
    c, sols, nodes = count_rows(8, [0] * 8, [0] * 8, BIG, keep=0)
    assert c == 4_111_116 and sols == []
    assert nodes == 8_413_256  # golden: the search itself is part of the checksum


def test_6x6_node_counts_identical_c_python():
    for distinct in (True, False):
        a = count_rows(6, [0] * 6, [0] * 6, BIG, distinct=distinct, keep=0)
        b = count_rows(6, [0] * 6, [0] * 6, BIG, distinct=distinct, keep=0, impl="python")
        assert a == b
    assert a[2] == 21_733 and count_rows(6, [0] * 6, [0] * 6, BIG, keep=0)[2] == 9_018


# ------------------------------------------------------------------ fixed instance set


def _instances():
    out = []
    for line in INSTANCES.read_text().splitlines():
        if line.startswith("#") or not line.strip():
            continue
        g, k, c, nodes = line.split()
        out.append((g, int(k), int(c), int(nodes)))
    return out


def test_fixed_instance_set_golden_and_identical_across_implementations():
    inst = _instances()
    assert len(inst) == 33
    for g, k, c, nodes in inst:
        p = Puzzle.parse(g)
        v, kn = p.row_masks()
        rc = count_rows(p.n, v, kn, k)
        rp = count_rows(p.n, v, kn, k, impl="python")
        assert rc == rp, g
        assert (rc[0], rc[2]) == (c, nodes), g
        for sol in rc[1]:
            assert rows_obey_rules(sol, p.n)
            assert all((s ^ vv) & kk == 0 for s, vv, kk in zip(sol, v, kn, strict=True))
    # one instance exhausts the cell rule's 16·n² budget and finishes with the line rule
    assert any(nodes > 16 * Puzzle.parse(g).n ** 2 for g, _, _, nodes in inst)


def test_backbone_identical_across_implementations_on_fixed_set():
    for g, _, _, _ in _instances()[:30]:
        p = Puzzle.parse(g)
        v, kn = p.row_masks()
        kn = list(kn)
        kn[p.n // 2] = 0  # open a row so backbones are not trivially full
        assert backbone_rows(p.n, v, kn) == backbone_rows(p.n, v, kn, impl="python"), g


# ------------------------------------------------------------------ brute-force agreement


@st.composite
def puzzles(draw, max_n=8):
    n = draw(st.sampled_from([n for n in (2, 4, 6, 8) if n <= max_n]))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    if n == 2:
        grid = np.array([[0, 1], [1, 0]], dtype=np.uint8)[:, :: rng.choice([1, -1])]
    elif draw(st.booleans()):
        grid = random_solution(n, rng)
    else:  # noise: usually contradictory once enough is known
        grid = rng.integers(0, 2, (n, n)).astype(np.uint8)
    lo = 0.45 if n == 8 else 0.0  # keeps the brute force quick at n = 8
    density = draw(st.floats(lo, 1.0))
    known = (rng.random((n, n)) < density).astype(np.uint8)
    for _ in range(draw(st.integers(0, 2))):  # flip a few known cells: over-constrained cases
        r, c = rng.integers(0, n, 2)
        grid[r, c] ^= known[r, c]
    return Puzzle.from_grid(grid, known)


@settings(max_examples=120)
@given(puzzles())
def test_count_agrees_with_brute_force(p):
    n = p.n
    v, kn = p.row_masks()
    truth = brute_solutions(n, v, kn)
    c, sols, _ = count_rows(n, v, kn, BIG, keep=BIG)
    assert c == len(truth)
    assert sorted(sols) == truth  # every solution exactly once
    c2, sols2, _ = count_rows(n, v, kn, 2)
    assert c2 == min(2, len(truth)) and len(sols2) == c2
    assert set(sols2) <= set(truth)
    # the reference gives the same answers, solutions in the same order, same nodes
    kk = BIG if len(truth) <= 300 else 300  # (the Python side is slow on thousands of solutions)
    assert count_rows(n, v, kn, 2) == count_rows(n, v, kn, 2, impl="python")
    assert count_rows(n, v, kn, kk, keep=kk) == count_rows(n, v, kn, kk, keep=kk, impl="python")


@settings(max_examples=60)
@given(puzzles(max_n=6))
def test_count_without_distinct_agrees_with_brute_force(p):
    n = p.n
    v, kn = p.row_masks()
    truth = brute_solutions(n, v, kn, distinct=False)
    a = count_rows(n, v, kn, BIG, keep=BIG, distinct=False)
    assert a[0] == len(truth) and sorted(a[1]) == truth
    kk = BIG if len(truth) <= 300 else 300
    assert count_rows(n, v, kn, kk, keep=kk, distinct=False) == count_rows(
        n, v, kn, kk, keep=kk, distinct=False, impl="python"
    )


@settings(max_examples=80)
@given(puzzles())
def test_backbone_agrees_with_brute_force(p):
    n = p.n
    v, kn = p.row_masks()
    truth = brute_solutions(n, v, kn)
    res = backbone(p)
    assert _same_backbone(res, backbone(p, impl="python"))
    assert res.count0 == (not truth)
    if truth:
        arr = np.array([[[(r >> (n - 1 - c)) & 1 for c in range(n)] for r in s] for s in truth])
        agree = (arr == arr[0]).all(axis=0)
        assert np.array_equal(res.known.astype(bool), agree)
        assert np.array_equal(res.values, np.where(agree, arr[0], 0))


def _same_backbone(a, b):
    return (
        a.count0 == b.count0
        and a.nodes == b.nodes
        and np.array_equal(a.values, b.values)
        and np.array_equal(a.known, b.known)
    )


# ------------------------------------------------------------------ API behaviour


def test_count_api_returns_grids_and_respects_k_and_keep():
    p = Puzzle.parse("." * 36)
    r = count(p, 3)
    assert r.count == 3 and len(r.solutions) == 3
    assert all(g.shape == (6, 6) and g.dtype == np.uint8 for g in r.solutions)
    assert len({g.tobytes() for g in r.solutions}) == 3
    assert all(rows_obey_rules(row_ints(g), 6) for g in r.solutions)
    assert count(p, 3, keep=1).solutions[0].tobytes() == r.solutions[0].tobytes()  # deterministic order
    assert count(p, 3, keep=0).solutions == []
    assert count(p, 0).count == 0


def test_unique_puzzle_and_its_backbone():
    for g, _k, c, _ in _instances():
        p = Puzzle.parse(g)
        if p.n > 8 or c != 1:
            continue
        truth = brute_solutions(p.n, *p.row_masks())
        r = count(p, 2)
        assert r.count == len(truth) == 1
        assert row_ints(r.solutions[0]) == list(truth[0])
        b = backbone(p)
        assert not b.count0 and b.known.all() and np.array_equal(b.values, r.solutions[0])


def test_contradictions_count_zero():
    assert count(Puzzle.parse("000" + "." * 33), 2).count == 0  # three zeros in a row
    assert count(Puzzle.parse("1111" + "." * 32), 2).count == 0  # four ones in a 6-cell row
    dup = "001011" + "001011" + "." * 24  # two equal complete rows
    assert count(Puzzle.parse(dup), 2).count == 0
    assert count(Puzzle.parse(dup), 2, distinct=False).count == 2
    assert backbone(Puzzle.parse(dup)).count0
    c, sols, nodes = count_rows(6, [0b000000] + [0] * 5, [0b111000] + [0] * 5, 2)
    assert (c, sols, nodes) == (0, [], 1)  # refuted at the root


@pytest.mark.parametrize(
    "bad",
    [
        lambda: count_rows(7, [0] * 7, [0] * 7, 2),
        lambda: count_rows(0, [], [], 2),
        lambda: count_rows(18, [0] * 18, [0] * 18, 2),  # the C kernel stops at 16
        lambda: count_rows(6, [0] * 5, [0] * 5, 2),
        lambda: count_rows(6, [0] * 6, [1 << 6] + [0] * 5, 2),
        lambda: count_rows(6, [-1] + [0] * 5, [0] * 6, 2),
        lambda: count_rows(6, ["x"] + [0] * 5, [0] * 6, 2),
        lambda: count_rows(6, [-1] * 6, [0] * 6, 2, impl="python"),
        lambda: count_rows(6, [0] * 6, [0] * 6, 2, impl="fortran"),
        lambda: backbone_rows(6, [0] * 6, [0] * 7),
    ],
)
def test_rejects_bad_input(bad):
    with pytest.raises(BadInput):
        bad()


def test_python_reference_handles_sides_beyond_the_kernel():
    c, sols, _ = count_rows(18, [0] * 18, [0] * 18, 1, impl="python")
    assert c == 1 and rows_obey_rules(sols[0], 18)


def test_public_names_and_kernel_is_built():
    for name in ("count", "backbone", "count_rows", "backbone_rows", "CountResult", "Backbone"):
        assert hasattr(engine, name)
    import sys

    assert sys.modules["engine.count"].KERNEL_BUILT, "pip install -e . must build engine._kernel"


def test_max_nodes_stops_with_minus_one_and_never_changes_a_finished_answer():
    for g, k, c, nodes in _instances():
        p = Puzzle.parse(g)
        v, kn = p.row_masks()
        for mx in (0, 5, 50, 300, 5000):
            a = count_rows(p.n, v, kn, k, max_nodes=mx)
            assert a == count_rows(p.n, v, kn, k, max_nodes=mx, impl="python")
            if nodes <= mx:
                assert (a[0], a[2]) == (c, nodes)
            elif a[0] != -1:
                assert (a[0], a[2]) == (c, nodes)  # finished on the branch that passed the cap
            else:
                assert mx < a[2] <= nodes
    assert count_rows(16, [0] * 16, [0] * 16, 2, max_nodes=100)[0] == -1


@pytest.mark.parametrize("n", [2, 4, 6, 8, 10, 16])
def test_fast_row_conversions_match_tilelib_bits(n):
    from engine.count import puzzle_rows, rows_to_grid

    rng = np.random.default_rng(n)
    for _ in range(5):
        g = rng.integers(0, 2, (n, n)).astype(np.uint8)
        k = rng.integers(0, 2, (n, n)).astype(np.uint8)
        p = Puzzle.from_grid(g, k)
        assert puzzle_rows(p) == p.row_masks()
        assert np.array_equal(rows_to_grid(row_ints(g), n), g)


def test_backbone_on_sparse_grids_identical_across_implementations():
    # the near-empty 12x12 of the fixed set, and sparse windows of solutions (PLAN_FIND's ground)
    grids = [g for g, _, _, _ in _instances() if Puzzle.parse(g).n == 12][-1:]
    rng = np.random.default_rng(7)
    for n in (10, 12):
        sol = random_solution(n, rng)
        grids.append(str(Puzzle.from_grid(sol, (rng.random((n, n)) < 0.12).astype(np.uint8))))
    for g in grids:
        p = Puzzle.parse(g)
        a, b = backbone(p), backbone(p, impl="python")
        assert _same_backbone(a, b) and not a.count0
        assert a.known.sum() >= p.known.sum()


def test_find_plan_same_answers_and_identical_across_implementations():
    for g, k, c, _nodes in _instances():
        p = Puzzle.parse(g)
        v, kn = p.row_masks()
        a = count_rows(p.n, v, kn, k, find=True)
        assert a == count_rows(p.n, v, kn, k, find=True, impl="python")
        assert a[0] == c  # same count, maybe other nodes
    # on the near-empty 12x12 the line rule first finds two solutions at once
    g = [g for g, _, _, _ in _instances() if Puzzle.parse(g).n == 12][-1]
    p = Puzzle.parse(g)
    assert count_rows(12, *p.row_masks(), 2, find=True)[2] < 100 < count_rows(12, *p.row_masks(), 2)[2]


def test_search_options_are_declared_once_and_a_misspelt_one_is_refused():
    """``count`` forwards its options to ``count_rows`` untouched (one declaration, ``Search``), and an
    option neither knows is a TypeError, as a misspelt keyword argument was before."""
    p = Puzzle(6, np.zeros((6, 6), dtype=np.uint8), np.zeros((6, 6), dtype=np.uint8))
    assert count(p, 5, distinct=False, keep=0).count == count_rows(6, [0] * 6, [0] * 6, 5, keep=0, distinct=False)[0]
    assert count(p, BIG, keep=0).count == 4140
    for call in (lambda: count_rows(6, [0] * 6, [0] * 6, 2, distinc=False), lambda: count(p, 2, max_node=3)):
        with pytest.raises(TypeError, match="unexpected search option"):
            call()  # type: ignore[call-arg]
