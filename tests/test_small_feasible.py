"""stitcher.small.feasible: the packed one-int-per-grid test says what the per-side definition says."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from stitcher.small import by_side, feasible, solutions_edges, solutions_keys
from tilelib.constraint import Constraint
from tilelib.rules import valid_lines


def definition(c: Constraint, distinct: bool) -> bool:
    """Some grid of the table whose edge, on every side, equals the values on the side's mask."""
    E = solutions_edges(c.n, distinct)
    return bool(((E & np.array(c.masks)) == np.array(c.values)).all(axis=1).any())


def enumerated_edges(n: int, distinct: bool) -> list[tuple[int, int, int, int]]:
    """The reference: every valid n×n grid enumerated row by row in Python (rows valid lines in
    ascending order, columns checked as they fill), each grid's (top, right, bottom, left)."""
    lines = list(valid_lines(n))
    valid, half, full = set(lines), n // 2, (1 << n) - 1
    bits = [1 << (n - 1 - c) for c in range(n)]
    out = []

    def extend(rows: list[int], ones: tuple) -> None:
        k = len(rows)
        if k == n:
            cols = [sum(1 << (n - 1 - r) for r in range(n) if rows[r] & b) for b in bits]
            if all(v in valid for v in cols) and (not distinct or len(set(cols)) == n):
                out.append((rows[0], cols[-1], rows[-1], cols[0]))
            return
        for ln in lines:
            if distinct and ln in rows:
                continue
            if k >= 2 and ((rows[-1] & rows[-2] & ln) or (~rows[-1] & ~rows[-2] & ~ln & full)):
                continue  # three equal cells down a column
            new = tuple(o + (1 if ln & b else 0) for o, b in zip(ones, bits, strict=True))
            if max(new) > half or k + 1 - min(new) > half:
                continue  # a column would hold too many ones or zeros
            extend([*rows, ln], new)

    extend([], (0,) * n)
    return out


def test_the_table_is_the_row_by_row_enumeration_in_its_order():
    for distinct in (True, False):
        assert [tuple(e) for e in solutions_edges(6, distinct).tolist()] == enumerated_edges(6, distinct)


def test_the_tables_hold_every_grid_and_each_edge_set_once():
    """The grids (checksums: 4140 with distinct lines, 11222 without) and their distinct edge sets,
    which the packed keys hold, each once, split by every side's edge without loss."""
    assert len(solutions_edges(6)) == 4140 and len(solutions_edges(6, False)) == 11222
    for distinct, sets in ((True, 1466), (False, 1978)):
        E, K = solutions_edges(6, distinct), solutions_keys(6, distinct)
        assert len(K) == sets == len({tuple(e) for e in E.tolist()})
        for s in range(4):
            assert sorted(np.concatenate(list(by_side(6, distinct)[s].values())).tolist()) == K.tolist()


side = st.one_of(st.just(0), st.just(63), st.integers(0, 63))


@settings(max_examples=400)
@given(masks=st.tuples(side, side, side, side), raw=st.tuples(*[st.integers(0, 63)] * 4), distinct=st.booleans())
def test_feasible_is_the_per_side_definition(masks, raw, distinct):
    """Masks empty, full (the by-side index) or partial; values drawn under the mask, so both
    answers occur."""
    c = Constraint(6, masks, tuple(v & m for v, m in zip(raw, masks, strict=True)))
    assert feasible(c, distinct) == definition(c, distinct)


def test_feasible_from_a_real_grid_and_one_cell_off():
    """A constraint read off a table grid is feasible; flipping a corner that two full sides share
    to disagree between them is not."""
    top, right, bottom, left = (int(x) for x in solutions_edges(6)[123])
    assert feasible(Constraint(6, (63, 63, 63, 63), (top, right, bottom, left)))
    assert feasible(Constraint(6, (63, 0, 0, 0b011110), (top, 0, 0, left & 0b011110)))
    assert not feasible(Constraint(6, (63, 0, 0, 63), (top, 0, 0, left ^ 0b100000)))
