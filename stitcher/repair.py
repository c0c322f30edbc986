"""Local repair (stitch step 4): before a square is split, try to remake it and its placed neighbours.

A square reaches repair when no library tile fits the boundary its placed
neighbours show it and the drain could not make one (nofit, settled or
failed). Measured on warm boards, almost all of these are n = 6 squares
whose neighbours were chosen before them. So, with ``run`` the stitch
(``run.StitchRun``, which calls this module's ``repair`` through the hook it was made with) and
``run.at`` what its squares hold:

1. ``repair_with``: take placed neighbours off — one at a time (most recent
   first, up to REPAIR_TRIES), then all of them — make the square
   window-aware (``run.make_joint``), then put each neighbour back by lookup
   or ``make_joint``.
2. ``repair_together``: the same sets, largest first, but the square and
   the neighbours taken off are completed in one CP-SAT model
   (``joint.joint_complete_many``: every grid a full Takuzu grid, agreeing
   on shared cells) and each grid is thinned into a new tile; last of all
   with every placed neighbour off and the other open windows left out of
   the model (they get their own turn, and repair, later). Measured on a
   warm G = 301 board: fill 0.9952 -> 0.9997; G = 1000: 0.9894 -> 0.9982.
3. Last, under the fair rule, the same with up to RING2 squares of the second ring off as well
   (``second_ring``): a neighbour taken off can be pinned by its own neighbours. Measured over 30
   fresh G = 301 nights: fallbacks 38 -> 10, the lowest fill 0.9989 -> 0.9995. ``--reuse any``
   keeps the stitch before the rule, byte for byte (its golden boards).

A failed attempt puts back exactly what it took off (new tiles it made stay
in the library). The seed never moves, nor (inside a half) the strip: ``run.fixed``. All of it is drain time.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from stitcher.drain import tile_from_grid
from stitcher.fresh import exclude_images
from stitcher.joint import JOINT_TRIES, joint_complete_many
from stitcher.run import StitchRun
from stitcher.small import doomed
from tilelib.spent import grid_solution_hash, held

if TYPE_CHECKING:
    import numpy as np

REPAIR_TRIES = 4
RING2 = 8  # at most this many second-ring squares join the last joint repair


def repair(run: StitchRun, i: int) -> bool:
    """Try ``repair_with`` then ``repair_together`` on square i (see the module doc)."""
    with run.draining():
        near = run.at.movable_neighbours(i, run.fixed)
        sets = [[k] for k in near[:REPAIR_TRIES]]
        if len(near) > 1:
            sets.append(near)
        n = run.at.n(i)
        for ks in sets:
            if repair_with(run, i, ks):
                run.st.bump(n, "repaired")
                return True
        attempts = [(ks, True, False) for ks in sets[::-1]] + [(near, False, False)]
        ring = second_ring(run, i, near) if run.fresh is not None else []
        if ring:
            attempts.append((near + ring, False, True))
        for ks, keep, wide in attempts:
            if repair_together(run, i, ks, keep):
                run.st.bump(n, "repaired")
                run.st.bump(n, "repaired_together")
                if wide:
                    run.st.bump(n, "repaired_wide")
                return True
        return False


def second_ring(run: StitchRun, i: int, near: list[int]) -> list[int]:
    """The placed, movable squares two steps from i (neighbours of its neighbours ``near``), most
    recent first, at most RING2: what pins the neighbours when taking them off is not enough."""
    at = run.at
    inside = set(near) | {i}
    ring = {k for j in near for k in at.adj[j] if k not in inside and at.placed(k) and k not in run.fixed}
    return sorted(ring, key=lambda k: (-at.turn(k), k))[:RING2]


def unfair(run: StitchRun, grids: list) -> list[int]:
    """Positions of the grids a fair stitch may not place: banned (``StitchRun.banned``), or the
    same solution as an earlier grid of the same model. Empty for an ``any`` stitch."""
    if run.fresh is None:
        return []
    out, seen = [], set()
    for k, g in enumerate(grids):
        sol = grid_solution_hash(g) if held(g.shape[0]) else None
        if run.banned(g) or (sol is not None and sol in seen):
            out.append(k)
        seen.add(sol)
    return out


def repair_with(run: StitchRun, i: int, ks: list[int]) -> bool:
    """Take ks off, make square i window-aware, put each k back by lookup or ``make_joint``."""
    at = run.at
    old = at.take_off(ks)
    kind, tile = run.make_joint(i)
    done: list[int] = []
    if kind == "tile":
        run.install(i, tile)
        done.append(i)
        for k in ks:
            ok, _ck = run.try_place(k)
            if not ok:
                kind2, tile2 = run.make_joint(k)
                if kind2 == "tile":
                    run.install(k, tile2)
                    ok = True
            if not ok:
                break
            done.append(k)
        else:
            return True
    for j in done:
        at.remove(j)
    at.put_back(old)
    return False


def repair_together(run: StitchRun, i: int, ks: list[int], keep_others: bool = True) -> bool:
    """Take ks off, complete square i and ks in one model (keeping the other unplaced neighbours'
    windows completable if ``keep_others``), thin every grid, place them all; else put ks back."""
    at = run.at
    old = at.take_off(ks)
    group = [i] + ks
    others = at.open_around(group) if keep_others else []
    tiles = None
    squares = [at.squares[j] for j in group]
    tries, a = (JOINT_TRIES if doomed(at.board, squares, [at.squares[j] for j in others]) else 0), 0
    exclude: list[tuple[int, np.ndarray]] = []  # (square of the model, banned grid image) pairs
    while tries < JOINT_TRIES:
        run.st.cp_calls += 1
        sub = run.drain_stream.child(f"{run.drains}/together/{a}")
        a += 1
        grids = joint_complete_many(
            at.board.values,
            at.board.known,
            squares,
            [at.squares[j] for j in others],
            sub,
            exclude=exclude,
            tally=run.st.bump,
        )
        if grids is None:
            break
        bad = unfair(run, grids)
        if bad:  # the fair rule: exclude those grids and ask again (not a try)
            if not exclude_images(exclude, [grids[k] for k in bad], keys=bad):
                break
            for k in bad:
                run.st.bump(grids[k].shape[0], "banned")
            continue
        tries += 1
        made = [
            tile_from_grid(g, *run.tile_params(j), sub.child(f"thin/{j}"), level=run.level_for(j))
            for j, g in zip(group, grids, strict=True)
        ]
        if all(t is not None for t in made):
            tiles = made
            break
    run.drains += 1
    if tiles is None:
        at.put_back(old)
        return False
    for j, tile in zip(group, tiles, strict=True):
        run.install(j, tile)
    return True
