"""FORMAT §3: the 16 transforms form a group, and the edge and side maps agree with the grids."""

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from tilelib import bits
from tilelib.symmetry import (
    TRANSFORMS,
    apply_grid,
    apply_mask,
    compose,
    edge_map,
    inverse,
    side_map,
    transform_edges,
    transform_side_mask,
)

ts = st.sampled_from(TRANSFORMS)


@st.composite
def grids(draw, n=None):
    n = n or draw(st.sampled_from(bits.VALID_N))
    cells = draw(st.lists(st.integers(0, 1), min_size=n * n, max_size=n * n))
    return np.array(cells, dtype=np.uint8).reshape(n, n)


def spec_transform(g, t):
    """FORMAT §3 written out with loops, as the independent reference."""
    k, f, r = t >> 3, (t >> 2) & 1, t & 3
    n = len(g)
    g = [list(row) for row in g]
    if f:
        g = [[g[i][n - 1 - j] for j in range(n)] for i in range(n)]
    for _ in range(r):
        g = [[g[n - 1 - j][i] for j in range(n)] for i in range(n)]
    if k:
        g = [[1 - v for v in row] for row in g]
    return np.array(g, dtype=np.uint8)


@given(grids(), ts)
def test_apply_grid_matches_the_spec_definition(g, t):
    assert (apply_grid(g, t) == spec_transform(g, t)).all()
    assert (apply_mask(g, t) == spec_transform(g, t & 7)).all()  # masks: geometry only


def test_transform_numbering():
    g = np.arange(4).reshape(2, 2) % 2
    assert (apply_grid(g, 0) == g).all()
    assert (apply_grid(g, 1) == np.rot90(g, -1)).all()  # r=1: clockwise
    assert (apply_grid(g, 4) == g[:, ::-1]).all()  # f: mirror left-right
    assert (apply_grid(g, 8) == 1 - g).all()  # k: complement


@given(grids(), ts, ts, ts)
def test_group_laws(g, a, b, c):
    assert (apply_grid(g, 0) == g).all()  # identity
    assert (apply_grid(apply_grid(g, a), b) == apply_grid(g, compose(a, b))).all()  # closure
    assert (apply_grid(apply_grid(g, a), inverse(a)) == g).all()  # inverses
    assert compose(a, inverse(a)) == 0 == compose(inverse(a), a)
    assert compose(compose(a, b), c) == compose(a, compose(b, c))  # associativity


def test_all_sixteen_transforms_are_distinct():
    g = np.array([[0, 0, 1], [0, 1, 1], [1, 0, 0]], dtype=np.uint8)  # no symmetry at all
    assert len({apply_grid(g, t).tobytes() for t in TRANSFORMS}) == 16


@given(grids(), ts)
def test_edge_map_agrees_with_transforming_the_grid(g, t):
    n = len(g)
    assert transform_edges(bits.edges(g), n, t) == bits.edges(apply_grid(g, t))


@given(ts, ts, st.integers(0, 15))
def test_side_masks_permute_with_the_sides(a, b, mask):
    assert transform_side_mask(transform_side_mask(mask, a), b) == transform_side_mask(mask, compose(a, b))
    assert transform_side_mask(transform_side_mask(mask, a), inverse(a)) == mask
    assert bin(transform_side_mask(mask, a)).count("1") == bin(mask).count("1")


def test_side_map_of_a_quarter_turn():
    # rotating clockwise: new top comes from old left (reversed), new right from old top
    assert side_map(1) == (3, 0, 1, 2)
    assert edge_map(1)[0].reversed and not edge_map(1)[1].reversed
    assert side_map(4) == (0, 3, 2, 1)  # mirror swaps left and right
    assert all(e.complemented for e in edge_map(8)) and side_map(8) == (0, 1, 2, 3)


@st.composite
def constraints(draw):
    """A constraint of a valid side: each side's mask any n-bit int, its values inside the mask."""
    from tilelib.constraint import Constraint

    n = draw(st.sampled_from(bits.VALID_N))
    full = (1 << n) - 1
    masks = tuple(draw(st.integers(0, full)) for _ in range(4))
    values = tuple(m & draw(st.integers(0, full)) for m in masks)
    return Constraint(n, masks, values)


@given(st.lists(constraints(), min_size=1, max_size=6).filter(lambda cs: len({c.n for c in cs}) == 1))
def test_image_arrays_are_push_forward_of_every_constraint_and_transform(cs):
    """The array form the stitch's nofit screen reads, against the reference, row for row."""
    from tilelib.constraint import image_arrays, push_forward

    n = cs[0].n
    masks, values = image_arrays(n, [c.masks for c in cs], [c.values for c in cs])
    want = [push_forward(c, t) for c in cs for t in TRANSFORMS]
    assert masks.tolist() == [list(w.masks) for w in want]
    assert values.tolist() == [list(w.values) for w in want]


def test_image_arrays_refuse_a_value_outside_its_mask():
    import pytest

    from tilelib.constraint import image_arrays

    for masks, values in (([[0b1, 0, 0, 0]], [[0b11, 0, 0, 0]]), ([[1 << 6, 0, 0, 0]], [[0, 0, 0, 0]])):
        with pytest.raises(ValueError, match="inside their n-bit masks"):
            image_arrays(6, masks, values)
