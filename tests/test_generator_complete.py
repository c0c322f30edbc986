"""generator.complete: CP-SAT completion around fixed boundary cells, and proofs of no completion."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine import count
from engine.completion import DECIDED_CPSAT
from generator.complete import CompletionError, complete, side_cells
from generator.solution import random_solution
from tilelib.bits import Puzzle, int_line
from tilelib.errors import BadInput
from tilelib.rng import Stream
from tilelib.rules import valid_lines, violations

seeds = st.binary(min_size=32, max_size=32)


def _agrees(grid, vals, known):
    return bool(((grid == vals) | (known == 0)).all())


@settings(max_examples=15)
@given(seed=seeds, n=st.sampled_from((6, 8, 10, 12)), sides=st.integers(1, 15))
def test_completes_the_edges_of_a_valid_tile(seed, n, sides):
    src = random_solution(n, Stream(seed, "src"))
    known = side_cells(n, sides)
    out = complete(n, src * known, known, seed)
    assert out is not None  # src itself is a completion
    assert violations(out) == []
    assert _agrees(out, src, known)


@settings(max_examples=25)
@given(seed=seeds, n=st.sampled_from((6, 8)))
def test_random_valid_line_edges_complete_or_are_proven_empty(seed, n):
    """Four independent valid lines as edges (corners made consistent): CP-SAT's answer
    must agree with the engine's exhaustive count of the same boundary."""
    s = Stream(seed, "edges")
    lines = valid_lines(n)
    top, bottom = s.choice(lines), s.choice(lines)
    vals = np.zeros((n, n), dtype=np.uint8)
    known = side_cells(n, 1 | 4)
    vals[0, :] = int_line(top, n)
    vals[-1, :] = int_line(bottom, n)
    # Left/right columns: valid lines that match the corners already fixed, when one exists.
    for col in (0, n - 1):
        fits = [v for v in lines if int_line(v, n)[0] == vals[0, col] and int_line(v, n)[-1] == vals[-1, col]]
        if fits:
            vals[:, col] = int_line(s.choice(fits), n)
            known[:, col] = 1
    out = complete(n, vals, known, seed)
    engine_count = count(Puzzle.from_grid(vals, known), k=1).count
    if out is None:
        assert engine_count == 0
    else:
        assert engine_count == 1 and violations(out) == [] and _agrees(out, vals, known)


def test_three_equal_on_an_edge_is_nofit():
    n = 8
    vals = np.zeros((n, n), dtype=np.uint8)
    known = np.zeros((n, n), dtype=np.uint8)
    known[0, 2:5] = 1  # three zeros in a row on the top edge
    assert complete(n, vals, known, bytes(32)) is None


def test_equal_top_and_bottom_edges_are_nofit_only_because_rows_must_differ():
    n = 6
    top = np.array([0, 1, 0, 1, 1, 0], dtype=np.uint8)
    vals = np.zeros((n, n), dtype=np.uint8)
    vals[0], vals[-1] = top, top
    known = side_cells(n, 1 | 4)
    assert complete(n, vals, known, bytes(32)) is None
    # Without the distinct-lines rule the same boundary has completions:
    # the proof really rests on distinct rows.
    assert count(Puzzle.from_grid(vals, known), k=1, distinct=False).count == 1
    assert count(Puzzle.from_grid(vals, known), k=1).count == 0


def test_equal_left_and_right_edges_are_nofit():
    n = 8
    col = np.array([0, 0, 1, 1, 0, 1, 0, 1], dtype=np.uint8)
    vals = np.zeros((n, n), dtype=np.uint8)
    vals[:, 0], vals[:, -1] = col, col
    known = side_cells(n, 2 | 8)
    assert complete(n, vals, known, bytes(32)) is None


def test_unbalanced_edge_is_nofit():
    n = 6
    vals = np.zeros((n, n), dtype=np.uint8)
    vals[0] = [1, 1, 0, 1, 1, 0]  # four ones in a row of six
    assert complete(n, vals, side_cells(n, 1), bytes(32)) is None


def test_same_seed_same_completion_and_seeds_vary_it():
    n = 10
    src = random_solution(n, Stream(bytes(32), "src"))
    known = side_cells(n, 1)
    outs = [complete(n, src * known, known, bytes([i]) * 32) for i in range(4)]
    again = complete(n, src * known, known, bytes([0]) * 32)
    assert (outs[0] == again).all()
    assert len({o.tobytes() for o in outs}) > 1


def test_no_fixed_cells_gives_a_valid_grid():
    n = 16
    z = np.zeros((n, n), dtype=np.uint8)
    out = complete(n, z, z, bytes(32))
    assert violations(out) == []


def test_bad_arrays_rejected():
    with pytest.raises(BadInput):
        complete(6, np.zeros((5, 6)), np.zeros((6, 6)), bytes(32))
    with pytest.raises(BadInput):
        complete(6, np.full((6, 6), 2), np.zeros((6, 6)), bytes(32))
    with pytest.raises(BadInput):
        complete(7, np.zeros((7, 7)), np.zeros((7, 7)), bytes(32))


def test_timeout_raises_instead_of_claiming_nofit():
    """A boundary the C search leaves undecided (no nodes allowed) goes to CP-SAT; CP-SAT out of
    time is an error, not a nofit."""
    n = 16
    z = np.zeros((n, n), dtype=np.uint8)
    tally = []
    with pytest.raises(CompletionError):
        complete(n, z, z, bytes(32), time_limit=1e-9, max_nodes=0, tally=lambda *a: tally.append(a))
    assert tally == [(16, DECIDED_CPSAT)]


def test_excluded_grids_are_avoided():
    n = 6
    src = random_solution(n, Stream(bytes(32), "src"))
    known = np.ones((n, n), dtype=np.uint8)
    known[2:4, 2:4] = 0  # a small hole: few completions
    seen = []
    while True:
        g = complete(n, src * known, known, bytes(32), exclude=seen)
        if g is None:
            break
        assert violations(g) == [] and _agrees(g, src, known)
        assert all(not (g == s).all() for s in seen)
        seen.append(g)
    assert len(seen) == count(Puzzle.from_grid(src, known), k=100).count


# sha256 of the completions of GOLDEN_CASES under GENERATOR_VERSION 5 (decided by the C search of
# engine.windows, seeded from the stream; version 4's were CP-SAT's). Completions are part of what
# `tiles library generate` and the drain reproduce: a change that moves this digest must bump
# GENERATOR_VERSION and re-pin it, saying why.
GOLDEN_DIGEST = "dcaafe3a92ea09f84496c8bbd8066a442028a3968bdd9bbec285f68a8451ae2a"


def golden_completions() -> bytes:
    out = b""
    for n in (6, 8, 10, 12, 14, 16):
        for sides in (1, 5, 15):
            src = random_solution(n, Stream(bytes([n, sides]) * 16, "golden-src"))
            known = side_cells(n, sides)
            g = complete(n, src * known, known, Stream(bytes([n, sides]) * 16, "golden"))
            out += bytes([n, sides]) + (b"none" if g is None else g.tobytes())
    return out


def test_completions_golden():
    import hashlib

    from generator.version import GENERATOR_VERSION

    assert GENERATOR_VERSION == 5, "re-pin GOLDEN_DIGEST for the new generator version"
    assert hashlib.sha256(golden_completions()).hexdigest() == GOLDEN_DIGEST
