"""refinement_problem: a manifest packing may only subdivide the drawn one (stitcher fallback)."""

import dataclasses

from packers import make_packing
from packers.packing import refinement_problem, validate_packing

SEED = bytes.fromhex("ab" * 32)


def drawn():
    return make_packing("big-first", 61, SEED)


def split(p, i):
    """Replace square i by 5-squares and zone strips (what a fallback may do)."""
    x0, y0, s = p.squares[i]
    k = s // 5
    subs = [(x0 + 5 * a, y0 + 5 * b, 5) for b in range(k) for a in range(k)]
    zone = []
    if s - 5 * k:
        zone += [(x0 + 5 * k, y0, s - 5 * k, s), (x0, y0 + 5 * k, 5 * k, s - 5 * k)]
    squares = list(p.squares[:i]) + subs + list(p.squares[i + 1 :])
    seed = p.seed_tile if p.seed_tile < i else p.seed_tile + len(subs) - 1
    zones = tuple(p.zones) + ((tuple(zone),) if zone else ())
    return dataclasses.replace(p, squares=tuple(squares), zones=zones, seed_tile=seed)


def big_non_seed(p):
    return next(i for i, (x0, _, s) in enumerate(p.squares) if s >= 11 and i != p.seed_tile and x0 > 0)


def test_identity_and_a_split_refine():
    p = drawn()
    assert refinement_problem(p, p) is None
    q = split(p, big_non_seed(p))
    validate_packing(q, q.P)
    assert refinement_problem(p, q) is None


def test_a_moved_square_does_not_refine():
    p = drawn()
    i = big_non_seed(p)
    q = split(p, i)
    x0, y0, s = q.squares[i]
    moved = list(q.squares)
    moved[i] = (x0 - 1, y0, s)  # the first sub-square now pokes into the left neighbour
    assert "not inside one drawn square" in refinement_problem(p, dataclasses.replace(q, squares=tuple(moved)))


def test_a_drawn_zone_covered_by_a_tile_does_not_refine():
    p = drawn()
    assert p.zones, "fixture needs a packing with zones"
    q = dataclasses.replace(p, zones=p.zones[1:])
    assert "zone unit" in refinement_problem(p, q)


def test_seed_square_and_params_must_match():
    p = drawn()
    q = split(p, p.seed_tile)
    assert refinement_problem(p, q) is not None
    assert "params" in refinement_problem(p, dataclasses.replace(p, params={**p.params, "density": 1}))
