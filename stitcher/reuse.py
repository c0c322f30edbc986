"""Reuse before insert: a tile the drain made whose solution grid the library already holds.

The drain's tiles (window-aware, generated for a miss, remade in a repair) are CP-SAT grids
thinned into new givens. For small n the grids repeat: there are only 4,140 grids of side 6
(16 images each), so after a few nights almost every n = 6 grid a drain finds is already a
library tile, only with other givens or thinned for other sides — and inserting it again is
a new row that no later night needs. Measured on a G = 1000 library growing from empty, n = 6
was ~40% of every night's new tiles (issue 12: growth that follows demand).

``existing`` finds, among the index's tiles with exactly the new tile's four edges (in any of
the 16 orientations: the index answers all of them), one whose oriented solution equals the
new tile's and that the square could have been given in its place:

- pinned for the square's known sides (its alternatives all differ there: the square stays
  uniquely solvable when its turn comes in a frontier solve, FORMAT §10.4), as a new tile
  thinned with ``seam_mask`` = those sides is;
- isolated multiplicity m within the new tile's bound (m = 1 for the seed);
- with a profile: of the square's drawn level, else of a level the profile allows (the order
  ``StitchRun.profiled_choose`` takes).

The first such tile in (hash, t) order is taken: the same answer for the same index, so a board
stays a function of its seed and library. Its edges are the new tile's, so nothing else moves.
"""

from __future__ import annotations

from tilelib.constraint import Constraint


def whole(edges: tuple[int, int, int, int], n: int) -> Constraint:
    """The constraint 'these four edges, every cell'."""
    full = (1 << n) - 1
    top, right, bottom, left = edges
    return Constraint(n, (full, full, full, full), (top, right, bottom, left))


def existing(indexes, tile, *, known: int, m_max: int, m1: bool, fetch):
    """(hash, t) of a tile in ``indexes`` (tried in order) that can stand for ``tile`` (see the
    module doc), or None. ``fetch(hash, t)`` returns that tile oriented by t, or None."""
    c = whole(tile.edges, tile.n)
    seen: set[tuple[str, int]] = set()
    for idx in indexes:
        keys, pins = idx.lookup(c, m1)
        for key, pin in zip(keys, pins.tolist(), strict=True):
            if not (pin >> known) & 1:
                continue
            h, t, _edges = idx.decode(tile.n, key)
            if (h, t) in seen:
                continue
            seen.add((h, t))
            got = fetch(h, t)
            if got is not None and got.solution == tile.solution and got.features.m <= m_max:
                return h, t
    return None
