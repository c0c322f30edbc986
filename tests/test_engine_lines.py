"""engine.lines: the valid line patterns per n and the per-position masks built from them."""

import pytest
from engine_brute import brute_lines

from engine.lines import tables, valid_lines


def test_pattern_counts_golden():
    assert [len(valid_lines(n)) for n in range(2, 17, 2)] == [2, 6, 14, 34, 84, 208, 518, 1296]


@pytest.mark.parametrize("n", [2, 4, 6, 8, 10, 12])
def test_patterns_equal_brute_force_ascending(n):
    assert valid_lines(n) == brute_lines(n)
    assert list(valid_lines(n)) == sorted(valid_lines(n))


@pytest.mark.parametrize("n", [6, 16])
def test_cell_masks_select_patterns_by_cell_value(n):
    t = tables(n)
    for i in range(n):
        m0, m1 = t.cell_mask[i]
        assert m0 & m1 == 0 and m0 | m1 == t.full
        for j, p in enumerate(t.patterns):
            bit = (p >> (n - 1 - i)) & 1  # position i = i-th cell from the left (MSB)
            assert (m1 >> j) & 1 == bit


@pytest.mark.parametrize("n", [0, 3, -2])
def test_rejects_bad_sides(n):
    with pytest.raises(ValueError):
        valid_lines(n)
