"""Whole-tile and whole-library checks: the independent verifier of what the generator stores.

``tile_problems`` recomputes everything about a stored tile that needs no
solver: hash, canonical orientation, edge columns, the rules, corner givens,
and the consistency of every feature derived from the alternatives (FORMAT §4).
Whether the alternatives are *all* the solutions needs the engine and is the
referee's job.

``stored_row_problems`` is that for one ``tiles`` row as stored (its hash first), and
``check_stored_row`` the one gate every row passes on its way into a library or out of it
(issue 69): a pull's snapshots and deltas, a merge, a bundle and the publish check all call it,
so a row whose hash is right but whose content is not (blobs of the wrong length, edge columns
that are not its solution's, a solution that breaks the rules) is refused before it is stored,
naming the row. ``referee.checks.verify_library`` (``tiles library verify``) reports every
row's problems instead of stopping at the first.
"""

from __future__ import annotations

import itertools

import numpy as np

from tilelib import bits
from tilelib.errors import CorruptLibrary, HashMismatch
from tilelib.rules import violations
from tilelib.store import row_to_tile
from tilelib.tile import Tile, content_hash, nibbles


def min_hitting_sides(alt_sides: list[int]) -> int:
    """Fewest sides whose set meets every alternative's side nibble (0 when there are none)."""
    if not alt_sides:
        return 0
    for k in range(1, 5):
        for combo in itertools.combinations((1, 2, 4, 8), k):
            m = sum(combo)
            if all(a & m for a in alt_sides):
                return k
    return 5  # some alternative differs on no side: no set of sides pins it


def feature_problems(tile: Tile) -> list[str]:
    """Inconsistencies among a tile's features, alternatives and givens."""
    f, n = tile.features, tile.n
    bl = bits.blob_len(n)
    out: list[str] = []
    if f.m < 1:
        return [f"m = {f.m} < 1"]
    if len(f.alts) != (f.m - 1) * bl:
        return [f"alts hold {len(f.alts)} bytes, m = {f.m} needs {(f.m - 1) * bl}"]
    if len(f.flip) != bl:
        return [f"flip blob is {len(f.flip)} bytes, not {bl}"]
    sol, giv = tile.solution_grid, tile.givens_grid
    alts = tile.alt_grids()
    blobs = [f.alts[i : i + bl] for i in range(0, len(f.alts), bl)]
    if blobs != sorted(set(blobs)):
        out.append("alternatives are not strictly ascending")
    sides = nibbles(f.alt_sides, len(alts))
    if f.alt_sides >> (4 * len(alts)):
        out.append("alt_sides has nibbles beyond the alternatives")
    flip = np.zeros((n, n), dtype=np.uint8)
    for i, alt in enumerate(alts):
        if (alt == sol).all():
            out.append(f"alternative {i} equals the solution")
        if violations(alt):
            out.append(f"alternative {i} breaks the rules ({violations(alt)[0]})")
        if ((alt != sol) & (giv == 1)).any():
            out.append(f"alternative {i} contradicts a given")
        diff = sum(1 << s for s, (a, b) in enumerate(zip(bits.edges(alt), tile.edges, strict=True)) if a != b)
        if sides[i] != diff:
            out.append(f"alt_sides nibble {i} is {sides[i]}, edges differ on {diff}")
        if not diff & tile.seam_mask:
            out.append(f"alternative {i} differs on no seam_mask side (pinning invariant)")
        flip |= (alt != sol).astype(np.uint8)
    if bits.to_blob(flip) != f.flip:
        out.append("flip is not the union of the alternatives' differences")
    pins = 0
    for s in sides:
        pins |= s
    if f.pins != pins:
        out.append(f"pins is {f.pins}, OR of alt_sides is {pins}")
    if f.pin_depth != min_hitting_sides(sides):
        out.append(f"pin_depth is {f.pin_depth}, fewest hitting sides is {min_hitting_sides(sides)}")
    blank = 1.0 - float(giv.sum()) / (n * n)
    if abs(f.blank - blank) > 1e-9:
        out.append(f"blank is {f.blank}, givens leave {blank:.6f}")
    return out


def tile_problems(tile: Tile, *, stored_edges: tuple[int, int, int, int] | None = None) -> list[str]:
    """Every problem with a tile as stored in a library (canonical orientation expected)."""
    out: list[str] = []
    if tile.n not in bits.VALID_N:
        return [f"n = {tile.n} is not a tile size"]
    v = violations(tile.solution_grid)
    if v:
        out.append(f"solution breaks the rules ({v[0]})")
    if tile.canonical_transform() != 0:
        out.append("not stored in canonical orientation")
    if stored_edges is not None and tuple(stored_edges) != tile.edges:
        out.append(f"edge columns {tuple(stored_edges)} differ from the solution's {tile.edges}")
    g = tile.givens_grid
    if g[0, 0] or g[0, -1] or g[-1, 0] or g[-1, -1]:
        out.append("a corner cell is given")
    if not 0 <= tile.seam_mask <= 15:
        out.append(f"seam_mask {tile.seam_mask} is not a 4-bit side mask")
    return out + feature_problems(tile)


def stored_row_problems(row: dict) -> list[str]:
    """Every problem of one stored tiles row (a dict by column): its hash, then ``tile_problems``
    against its stored edge columns. What ``tiles library verify`` reports and what ``tiles library
    repair`` keeps a row by."""
    try:
        tile = row_to_tile(row)
    except (HashMismatch, CorruptLibrary) as err:
        return [str(err)]
    return tile_problems(tile, stored_edges=(row["top"], row["right"], row["bottom"], row["left"]))


def check_stored_row(row: dict, where: str) -> None:
    """Refuse one tiles row that is not a sound stored tile: HashMismatch when its content does not
    hash to its key, CorruptLibrary naming its first other problem. ``where`` says which row of
    which file ("snapshot 1a2b…: tile row 7"), so the one line names it."""
    h = row.get("hash")
    try:
        actual = content_hash(row["n"], bytes(row["solution"]), bytes(row["givens"]), row["seam_mask"])
    except (TypeError, ValueError, KeyError) as err:
        raise CorruptLibrary(f"{where} ({h}) is malformed ({err})") from err
    if actual != h:
        raise HashMismatch(f"{where} ({h}) hashes to {actual}: its content was changed after it was stored")
    problems = stored_row_problems(row)
    if problems:
        raise CorruptLibrary(f"{where} ({h}) is not a sound tile: {problems[0]}")
