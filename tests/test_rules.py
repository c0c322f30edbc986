"""tilelib.rules.violations: its quick acceptance of a valid grid agrees with the offence-by-offence
listing and with an independent line check, on every 4×4 grid (exact counts) and on drawn grids."""

from __future__ import annotations

import numpy as np
import pytest
from engine_brute import line_valid
from hypothesis import given, settings
from hypothesis import strategies as st
from support import random_solution

from tilelib.rules import _offences, violations


def independent_ok(g: np.ndarray, distinct: bool) -> bool:
    """Every row and column a valid line (engine_brute's own test), and distinct if asked."""
    n = g.shape[0]
    rows = [int("".join(map(str, r)), 2) for r in g.tolist()]
    cols = [int("".join(map(str, c)), 2) for c in g.T.tolist()]
    ok = all(line_valid(x, n) for x in rows + cols)
    return ok and (not distinct or (len(set(rows)) == n and len(set(cols)) == n))


@pytest.mark.parametrize("distinct,total", [(True, 72), (False, 90)])
def test_every_4x4_grid_exact_count(distinct, total):
    """Of all 65,536 4×4 grids, exactly 72 (distinct lines) or 90 break no rule; every other one
    lists the same offences as the reference listing."""
    bits = (np.arange(1 << 16)[:, None] >> np.arange(16)) & 1
    accepted = 0
    for k in range(1 << 16):
        g = bits[k].reshape(4, 4).astype(np.uint8)
        v = violations(g, distinct=distinct)
        assert v == _offences(g, distinct)
        accepted += not v
    assert accepted == total


@settings(max_examples=300, deadline=None)
@given(
    n=st.sampled_from([6, 8, 10, 12, 14, 16]),
    seed=st.integers(0, 2**32 - 1),
    flips=st.integers(0, 3),
    distinct=st.booleans(),
)
def test_drawn_grids_agree_with_the_listing_and_an_independent_check(n, seed, flips, distinct):
    """A valid solution with 0..3 cells flipped: [] exactly when the independent check passes, and
    the same offences, in the same order, as the reference listing otherwise."""
    rng = np.random.default_rng(seed)
    g = np.array(random_solution(n, rng), dtype=np.uint8)
    for _ in range(flips):
        r, c = rng.integers(0, n, size=2)
        g[r, c] ^= 1
    v = violations(g, distinct=distinct)
    assert (v == []) == independent_ok(g, distinct)
    assert v == _offences(g, distinct)


def test_rejects_what_is_not_a_grid_of_bits():
    assert [x.rule for x in violations(np.zeros((4, 6), dtype=np.uint8))] == ["shape"]
    assert [x.rule for x in violations(np.zeros((5, 5), dtype=np.uint8))] == ["shape"]
    g = np.array(random_solution(6, np.random.default_rng(0)), dtype=np.int64)
    assert violations(g) == []
    g[2, 3] = 2
    assert [x.rule for x in violations(g)] == ["values"]
