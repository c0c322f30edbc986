"""No tile the judge can never accept: every square of a final packing is joined to the seed tile by
shared seams (FORMAT §14). Packers draw such packings; a stitcher split can ring a small square with
its own zones, and ``stitcher.fallback.assemble`` turns such a square into zone (counted
``isolated``), so the tile-by-tile closure (FORMAT §10) can reach every tile."""

from __future__ import annotations

import hashlib

import pytest

from packers import PACKERS, make_packing
from packers.packing import Packing, refinement_problem, seam_neighbours, seam_reachable, validate_packing
from stitcher.fallback import assemble
from stitcher.placements import Placements
from stitcher.stats import StitchStats


def test_seams_need_two_shared_cells_and_reachability_follows_them():
    squares = [(0, 0, 5), (5, 0, 5), (10, 5, 5), (20, 20, 5)]  # 0-1 seam; 1-2 corner only; 3 alone
    assert seam_neighbours(squares) == [{1}, {0}, set(), set()]
    assert seam_reachable(squares, 0) == [True, True, False, False]
    assert seam_reachable(squares, 3) == [False, False, False, True]


@pytest.mark.parametrize("name", sorted(PACKERS))
def test_every_packer_draws_packings_a_player_can_cross(name):
    for k in range(4):
        seed = hashlib.sha256(f"reach-{name}-{k}".encode()).digest()
        for size in (61, 301):
            p = make_packing(name, size, seed, None)
            assert all(seam_reachable(p.squares, p.seed_tile)), (name, size, k)


ZONES = [(10, 0, 10, 10), (5, 5, 5, 10), (10, 10, 5, 5)]  # the split 15-square less its two leaves


def _split_run(seed_first: bool = True):
    """The real ``Placements`` of a P = 20 packing: the seed square (0, 0, 5) and (5, 0, 15), split into
    the leaves (5, 0, 5), which shares the seed's right seam, and (15, 10, 5), which its zones ring
    on every side; each holding a stand-in tile. ``seed_first`` off: the big square is id 0 and the
    seed id 1, and the ringed leaf is the first leaf."""
    big, seed = ((5, 0, 15), (0, 0, 5))
    squares, seed_id = ((seed, big), 0) if seed_first else ((big, seed), 1)
    packing = Packing(
        P=20,
        squares=squares,
        zones=(((0, 5, 5, 15), (5, 15, 15, 5)),),
        seed_tile=seed_id,
        name="bands",
        version=PACKERS["bands"].version,
    )
    validate_packing(packing, 20)
    at = Placements(packing)
    leaves = [(5, 0, 5), (15, 10, 5)] if seed_first else [(15, 10, 5), (5, 0, 5)]
    ids = at.split(1 - seed_id, leaves, ZONES)
    tiles = {
        seed_id: ("a" * 64, 0),
        ids[leaves.index((5, 0, 5))]: ("b" * 64, 3),
        ids[leaves.index((15, 10, 5))]: ("c" * 64, 5),
    }
    for i, (h, t) in tiles.items():
        at.put(i, h, t, (0, 0, 0, 0))
    return at, packing, StitchStats()


def test_a_leaf_no_seam_reaches_becomes_zone_and_the_packing_stays_a_refinement():
    at, packing, st = _split_run()
    p, placements = assemble(at, packing, st)
    assert p.squares == ((0, 0, 5), (5, 0, 5)) and p.seed_tile == 0
    assert placements == [("a" * 64, 0), ("b" * 64, 3)]
    assert st.total("isolated") == 1 and st.per_n[6]["isolated"] == 1
    validate_packing(p, 20)  # still covers every pitch unit exactly
    assert (15, 10, 5, 5) in [r for z in p.zones for r in z]
    assert refinement_problem(packing, p) is None  # the seed check still calls it refined
    assert all(seam_reachable(p.squares, p.seed_tile))


def test_the_seed_tile_keeps_its_place_when_squares_before_it_are_cut():
    at, packing, st = _split_run(seed_first=False)
    p, placements = assemble(at, packing, st)
    assert p.squares == ((5, 0, 5), (0, 0, 5)) and p.seed_tile == 1
    assert placements == [("b" * 64, 3), ("a" * 64, 0)]
