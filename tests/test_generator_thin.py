"""generator.thin: the fast thinning loop equals the one-cell definition, and its output is acceptable and minimal."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine import count_rows
from generator.solution import random_rows, rows_to_grid
from generator.thin import corner_free_mask, removal_order, side_rows, sides_differ, thin
from tilelib.bits import edges
from tilelib.rng import Stream

seeds = st.binary(min_size=32, max_size=32)
configs = st.sampled_from([(1, 0), (2, 0), (2, 15), (3, 15), (2, 1), (3, 5), (4, 10)])


def _acceptable(n, sol, known, m_max, seam):
    """Straight from FORMAT §4, with the engine as the counter: m <= m_max and the seam
    sides' cells, added to the givens, pin the tile uniquely."""
    vals = [s & k for s, k in zip(sol, known, strict=True)]
    m, _, _ = count_rows(n, vals, known, m_max + 1)
    if m > m_max:
        return False
    pinned = [k | s for k, s in zip(known, side_rows(n, seam), strict=True)]
    c, _, _ = count_rows(n, [s & k for s, k in zip(sol, pinned, strict=True)], pinned, 2)
    return c == 1


@settings(max_examples=30)
@given(seed=seeds, n=st.sampled_from((6, 8, 10)), cfg=configs)
def test_fast_equals_plain_and_output_is_acceptable_and_minimal(seed, n, cfg):
    m_max, seam = cfg
    sol = random_rows(n, Stream(seed, "sol"))
    fast = thin(n, sol, Stream(seed, "thin"), m_max=m_max, seam_mask=seam)
    plain = thin(n, sol, Stream(seed, "thin"), m_max=m_max, seam_mask=seam, method="plain")
    if fast is None:
        assert plain is None
        assert not _acceptable(n, sol, corner_free_mask(n), m_max, seam)
        return
    assert fast.givens == plain.givens
    assert sorted(fast.solutions) == sorted(plain.solutions)
    known = fast.givens
    # corners never given
    hi, lo = 1 << (n - 1), 1
    assert not (known[0] & (hi | lo)) and not (known[-1] & (hi | lo))
    assert _acceptable(n, sol, known, m_max, seam)
    # the solution list is exactly what the engine enumerates
    c, sols, _ = count_rows(n, [s & k for s, k in zip(sol, known, strict=True)], known, m_max + 1)
    assert c == len(fast.solutions) and sorted(map(tuple, sols)) == sorted(fast.solutions)
    assert tuple(sol) in fast.solutions
    # minimal: no remaining given can go (removals only add solutions, so a
    # cell refused once is refused for good)
    for r in range(n):
        for b in range(n):
            bit = 1 << b
            if known[r] & bit:
                fewer = known[:]
                fewer[r] &= ~bit
                assert not _acceptable(n, sol, fewer, m_max, seam), (r, b)


def test_seam_zero_means_unique():
    sol = random_rows(8, Stream(bytes(32), "s"))
    for i in range(5):
        res = thin(8, sol, Stream(bytes([i]) * 32, "t"), m_max=4, seam_mask=0)
        assert res is None or len(res.solutions) == 1


def test_alternatives_differ_on_a_seam_side():
    found_alt = False
    for i in range(10):
        n = 8
        sol = random_rows(n, Stream(bytes([i]) * 32, "s"))
        res = thin(n, sol, Stream(bytes([i]) * 32, "t"), m_max=4, seam_mask=2)
        if res is None:
            continue
        for a in res.solutions:
            if a != tuple(sol):
                found_alt = True
                assert sides_differ(n, a, sol) & 2
    assert found_alt


def test_sides_differ_matches_edge_ints():
    n = 8
    for i in range(20):
        a = random_rows(n, Stream(bytes([i]) * 32, "a"))
        b = random_rows(n, Stream(bytes([i]) * 32, "b"))
        ea, eb = edges(rows_to_grid(a, n)), edges(rows_to_grid(b, n))
        expect = sum(1 << s for s in range(4) if ea[s] != eb[s])
        assert sides_differ(n, a, b) == expect


def test_removal_order_is_a_seeded_permutation_of_non_corners():
    n = 10
    o = removal_order(n, Stream(bytes(32), "o"))
    assert sorted(o) == sorted(set(range(n * n)) - {0, n - 1, n * (n - 1), n * n - 1})
    assert o == removal_order(n, Stream(bytes(32), "o"))
    assert o != removal_order(n, Stream(bytes(32), "p"))


@settings(max_examples=200)
@given(n=st.sampled_from([2, 4, 6, 10, 16]), data=st.data())
def test_the_c_removal_order_sorts_as_the_reference_ties_included(n, data):
    """C against ``removal_order_py`` and against a plain statement of the rule: cells by (key, cell),
    with keys from a two-value alphabet too, so equal keys fall back to the cell."""
    from engine.count import c_kernel
    from generator.thin import _non_corners, removal_order_py

    cells = _non_corners(n)
    byte = st.sampled_from([0, 255]) if data.draw(st.booleans()) else st.integers(0, 255)
    keys = bytes(data.draw(st.lists(byte, min_size=4 * len(cells), max_size=4 * len(cells))))
    want = sorted(cells, key=lambda c: (int.from_bytes(keys[4 * cells.index(c) :][:4], "big"), c))
    assert removal_order_py(cells, keys) == want
    assert c_kernel().removal_order(n, keys) == want


def test_the_c_removal_order_refuses_the_wrong_key_length_and_side():
    from engine.count import c_kernel

    with pytest.raises(ValueError, match="32 cells need 128 key bytes, got 127"):
        c_kernel().removal_order(6, bytes(127))
    with pytest.raises(ValueError, match="n must be even"):
        c_kernel().removal_order(7, bytes(4 * 45))


def test_corner_free_mask_and_side_rows():
    assert corner_free_mask(6) == [0b011110] + [0b111111] * 4 + [0b011110]
    assert side_rows(6, 1) == [0b111111] + [0] * 5
    assert side_rows(6, 2) == [0b000001] * 6
    assert side_rows(6, 4) == [0] * 5 + [0b111111]
    assert side_rows(6, 8) == [0b100000] * 6


def test_bad_arguments():
    sol = random_rows(6, Stream(bytes(32), "s"))
    with pytest.raises(ValueError):
        thin(6, sol, Stream(bytes(32)), m_max=0)
    with pytest.raises(ValueError):
        thin(6, sol, Stream(bytes(32)), method="fastest")


@settings(max_examples=60, deadline=None)
@given(seed=seeds, n=st.sampled_from((6, 8, 10, 12, 16)), cfg=configs, max_nodes=st.sampled_from([None, 0, 5, 40, 400]))
def test_c_loop_equals_python_loop(seed, n, cfg, max_nodes):
    """engine._kernel.thin_rows makes the same counts in the same order as the Python fast loop:
    same givens, solutions (in order), counts and nodes, with and without a node cap."""
    m_max, seam = cfg
    sol = random_rows(n, Stream(seed, "sol"))
    c = thin(n, sol, Stream(seed, "thin"), m_max=m_max, seam_mask=seam, max_nodes=max_nodes)
    py = thin(n, sol, Stream(seed, "thin"), m_max=m_max, seam_mask=seam, max_nodes=max_nodes, impl="python")
    assert c == py


@settings(max_examples=15, deadline=None)
@given(seed=seeds, n=st.sampled_from((6, 8, 10)), cfg=configs, max_nodes=st.sampled_from([5, 40]))
def test_node_cap_keeps_output_acceptable(seed, n, cfg, max_nodes):
    """A capped count only keeps a cell given, so both methods' output stays acceptable (they may
    differ from each other: a capped test is not monotone, so group tests no longer equal single ones)."""
    m_max, seam = cfg
    sol = random_rows(n, Stream(seed, "sol"))
    fast = thin(n, sol, Stream(seed, "thin"), m_max=m_max, seam_mask=seam, max_nodes=max_nodes)
    plain = thin(n, sol, Stream(seed, "thin"), m_max=m_max, seam_mask=seam, max_nodes=max_nodes, method="plain")
    if fast is None:
        return
    assert _acceptable(n, sol, fast.givens, m_max, seam)
    assert plain is not None and _acceptable(n, sol, plain.givens, m_max, seam)


@pytest.mark.parametrize(
    "order, message",
    [
        ([0, 1, 36], "order entry 2 is not a cell index of n=6"),
        ([0, -1], "order entry 1 is not a cell index of n=6"),
        (list(range(37)), "order is longer than n\\*n"),
        (5, "order must be a sequence of cell indices"),
    ],
)
def test_both_c_thinning_loops_refuse_a_bad_removal_order_alike(order, message):
    """thin_rows and thin_ladder read the removal order with one reader: the same one-line error."""
    from engine.count import c_kernel
    from generator.solution import random_solution
    from tilelib.rng import Stream

    rows = [int("".join(map(str, r)), 2) for r in random_solution(6, Stream(b"order", "x")).tolist()]
    known = [63] * 6
    kernel = c_kernel()
    with pytest.raises((ValueError, TypeError), match=message):
        kernel.thin_rows(6, rows, known, order, 1, 0, 2, 10, -1)
    with pytest.raises((ValueError, TypeError), match=message):
        kernel.thin_ladder(6, rows, known, [0] * 6, order, 2, 0, 1, 1000)
