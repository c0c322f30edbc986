"""Whole-tile and whole-library checks: the independent verifier of what the generator stores.

``tile_problems`` recomputes everything about a stored tile that needs no
solver: hash, canonical orientation, edge columns, the rules, corner givens,
and the consistency of every feature derived from the alternatives (FORMAT §4).
Whether the alternatives are *all* the solutions needs the engine and is the
referee's job.

``stored_row_problems`` is that for one ``tiles`` row as stored (the kind of each value and its
hash first), ``bad_rows`` the same verdict for many rows at once (a vectorised screen proves the
common ones, the reference decides the rest), and ``check_stored_rows`` the one gate every row
passes on its way into a library or out of it (issue 69): a pull's snapshots and deltas, a merge
and the publish check all call it,
so a row whose hash is right but whose content is not (blobs of the wrong length, edge columns
that are not its solution's, a solution that breaks the rules) is refused before it is stored,
naming the row. ``trust.checks.verify_library`` (``tiles library verify``) reports every
row's problems instead of stopping at the first.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from functools import cache

import numpy as np

from tilelib import bits
from tilelib.errors import CorruptLibrary, HashMismatch
from tilelib.rules import valid_lines, violations
from tilelib.store import TILE_COLUMNS, row_to_tile
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


_INT_COLUMNS = tuple(c for c in TILE_COLUMNS if c not in ("hash", "blank", "solution", "givens", "flip", "alts"))
_BLOB_COLUMNS = ("solution", "givens", "flip", "alts")


def _type_problems(row: dict) -> list[str]:
    """The columns of a stored row that hold the wrong kind of value (SQLite stores what it is given)."""
    bad = [c for c in _INT_COLUMNS if not isinstance(row.get(c), int) or isinstance(row.get(c), bool)]
    bad += [c for c in _BLOB_COLUMNS if not isinstance(row.get(c), bytes)]
    if not isinstance(row.get("blank"), float):
        bad.append("blank")
    if not isinstance(row.get("hash"), str):
        bad.append("hash")
    return [f"column {c} holds a {type(row.get(c)).__name__}" for c in bad[:1]]


def stored_row_problems(row: dict) -> list[str]:
    """Every problem of one stored tiles row (a dict by column): the kind of each value, its hash,
    then ``tile_problems`` against its stored edge columns. What ``tiles library verify`` reports,
    what ``tiles library repair`` keeps a row by, and the last word on every row ``bad_rows`` doubts."""
    wrong = _type_problems(row)
    if wrong:
        return wrong
    try:
        tile = row_to_tile(row)
    except (HashMismatch, CorruptLibrary) as err:
        return [str(err)]
    return tile_problems(tile, stored_edges=(row["top"], row["right"], row["bottom"], row["left"]))


_C = {c: i for i, c in enumerate(TILE_COLUMNS)}
_INT_AT = tuple(_C[c] for c in _INT_COLUMNS)
_BLOB_AT = tuple(_C[c] for c in _BLOB_COLUMNS)


def _plain(row: tuple) -> bool:
    """Whether a row is one ``_screen`` can judge: every value of its kind, n a tile size, m >= 1 with
    m - 1 alternatives' blobs, blobs of its n's length, no nibble past the alternatives, a 4-bit seam
    mask, and its content hash."""
    n, m = row[_C["n"]], row[_C["m"]]
    if type(n) is not int or n not in bits.VALID_N or type(row[_C["blank"]]) is not float:
        return False
    if not all(type(row[i]) is int for i in _INT_AT) or not all(type(row[i]) is bytes for i in _BLOB_AT):
        return False
    bl = bits.blob_len(n)
    if m < 1 or len(row[_C["alts"]]) != (m - 1) * bl or row[_C["alt_sides"]] >> (4 * (m - 1)):
        return False
    if len(row[_C["solution"]]) != bl or len(row[_C["givens"]]) != bl or len(row[_C["flip"]]) != bl:
        return False
    if not 0 <= row[_C["seam_mask"]] <= 15:
        return False
    return content_hash(n, row[_C["solution"]], row[_C["givens"]], row[_C["seam_mask"]]) == row[_C["hash"]]


def _grids(blobs: list[bytes], n: int) -> np.ndarray:
    """The (k, n, n) cells of k grid blobs of side n."""
    bl = bits.blob_len(n)
    packed = np.frombuffer(b"".join(blobs), np.uint8).reshape(-1, bl)
    return np.unpackbits(packed, axis=1)[:, : n * n].reshape(-1, n, n)


@cache
def _valid_line_table(n: int) -> np.ndarray:
    """Whether each n-bit int is a valid line (``rules.valid_lines``), as a lookup table."""
    table = np.zeros(1 << n, dtype=bool)
    table[list(valid_lines(n))] = True
    return table


def _lines(cells: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Row ints, column ints (MSB first, as ``bits.line_int``) and whether each grid keeps the rules:
    every line a valid one (``rules.valid_lines``), no two rows or two columns equal."""
    weights = np.left_shift(1, np.arange(n - 1, -1, -1, dtype=np.int64))
    c = cells.astype(np.int64)
    rows, cols = c @ weights, c.transpose(0, 2, 1) @ weights
    table = _valid_line_table(n)
    ok = table[rows].all(axis=1) & table[cols].all(axis=1)
    ok &= (np.diff(np.sort(rows, axis=1), axis=1) != 0).all(axis=1)
    ok &= (np.diff(np.sort(cols, axis=1), axis=1) != 0).all(axis=1)
    return rows, cols, ok


def _edges(rows: np.ndarray, cols: np.ndarray) -> np.ndarray:
    """(top, right, bottom, left) of each grid from its line ints (``bits.edges``)."""
    return np.stack([rows[:, 0], cols[:, -1], rows[:, -1], cols[:, 0]], axis=1)


def _column(rows: list[tuple], name: str) -> list:
    at = _C[name]
    return [r[at] for r in rows]


def _alternatives_ok(n: int, m: int, rows: list[tuple], sol: np.ndarray, giv: np.ndarray, edges: np.ndarray):
    """``feature_problems`` for rows of side n with m - 1 alternatives each, all at once: each
    alternative keeps the rules, differs from the solution, agrees with every given and on some
    seam_mask side; alt_sides, flip, pins and pin_depth are what the alternatives make; the
    alternatives' blobs strictly ascending."""
    k, bl = m - 1, bits.blob_len(n)
    alts = _grids([a[i * bl : (i + 1) * bl] for a in _column(rows, "alts") for i in range(k)], n)
    a_rows, a_cols, a_ok = _lines(alts, n)
    alts = alts.reshape(len(rows), k, n, n)
    ok = a_ok.reshape(len(rows), k).all(axis=1)
    differ = alts != sol[:, None]
    ok &= differ.any(axis=(2, 3)).all(axis=1)
    ok &= ~(differ & (giv[:, None] == 1)).any(axis=(1, 2, 3))
    side_bits = np.left_shift(1, np.arange(4))
    sides = ((_edges(a_rows, a_cols).reshape(len(rows), k, 4) != edges[:, None]) * side_bits).sum(axis=2)
    seam = np.array(_column(rows, "seam_mask"))
    ok &= ((sides & seam[:, None]) != 0).all(axis=1)
    packed = (sides << (4 * np.arange(k))).sum(axis=1)
    ok &= packed == np.array(_column(rows, "alt_sides"))
    pins = np.bitwise_or.reduce(sides, axis=1)
    ok &= pins == np.array(_column(rows, "pins"))
    flips = np.packbits(differ.any(axis=1).reshape(len(rows), -1), axis=1)
    ok &= np.array([f.tobytes() == stored for f, stored in zip(flips, _column(rows, "flip"), strict=True)])
    for i, (r, s) in enumerate(zip(rows, sides.tolist(), strict=True)):
        blobs = [r[_C["alts"]][j * bl : (j + 1) * bl] for j in range(k)]
        ok[i] &= r[_C["pin_depth"]] == min_hitting_sides(s) and blobs == sorted(set(blobs))
    return ok


def _screen(n: int, m: int, rows: list[tuple]) -> np.ndarray:
    """For rows of side n and multiplicity m that ``_plain`` admits, whether each is sound, all at once
    (``tile_problems``: the rules, the stored edge columns, no corner given, ``blank`` from the givens,
    canonical orientation, and the alternatives' features). True proves a row; False only doubts it."""
    sol = _grids(_column(rows, "solution"), n)
    giv = _grids(_column(rows, "givens"), n)
    s_rows, s_cols, ok = _lines(sol, n)
    edges = _edges(s_rows, s_cols)
    stored = np.array([[r[_C[c]] for c in ("top", "right", "bottom", "left")] for r in rows], dtype=object)
    ok &= (stored == edges.astype(object)).all(axis=1)
    ok &= (giv[:, 0, 0] | giv[:, 0, -1] | giv[:, -1, 0] | giv[:, -1, -1]) == 0
    blank = 1.0 - giv.sum(axis=(1, 2)) / (n * n)
    ok &= np.abs(np.array(_column(rows, "blank")) - blank) <= 1e-9
    if m == 1:
        zero = bytes(bits.blob_len(n))
        ok &= np.array([r[_C["flip"]] == zero and not r[_C["pins"]] and not r[_C["pin_depth"]] for r in rows])
    else:
        ok &= _alternatives_ok(n, m, rows, sol, giv, edges)
    return ok & _solution_smallest(s_rows, s_cols, n)


@cache
def _bit_reversed(n: int) -> np.ndarray:
    """Each n-bit int with its bits in reverse order (a line read from its other end)."""
    v = np.arange(1 << n)
    out = np.zeros(1 << n, dtype=np.int64)
    for b in range(n):
        out |= ((v >> b) & 1) << (n - 1 - b)
    return out


def _solution_smallest(rows: np.ndarray, cols: np.ndarray, n: int) -> np.ndarray:
    """Whether each solution, given by its row ints and column ints (MSB first), is strictly smaller
    than its 15 other images (FORMAT §3), all at once: then t = 0 is the canonical orientation
    whatever the givens. A blob compares as its sequence of row ints does, and the row ints of the 16
    images are those of the rows or the columns, in order or reversed, each read forwards or
    backwards, complemented or not (the 8 geometries times the complement). A solution equal to one of
    its images (a symmetric one) is doubted: the givens decide there, and the reference does that."""
    at = np.arange(len(rows))
    back, full = _bit_reversed(n), (1 << n) - 1
    ok = np.ones(len(rows), dtype=bool)
    for lines in (rows, cols):
        for ordered in (lines, lines[:, ::-1]):
            for read in (ordered, back[ordered]):
                for image in (read, read ^ full):
                    if image is rows:
                        continue  # the identity
                    differ = image != rows
                    first = differ.argmax(axis=1)
                    ok &= differ.any(axis=1) & (image[at, first] > rows[at, first])
    return ok


def bad_rows(rows: Sequence[tuple]) -> list[tuple[int, list[str]]]:
    """(index, problems) of every row of ``rows`` (tuples in ``TILE_COLUMNS`` order) that is not a
    sound stored tile, in order. The rows ``_plain`` admits (every well-typed row) are judged together per
    (n, m) by ``_screen``; every other row, and every row the screen doubts, goes through ``stored_row_problems``,
    the reference, which has the last word: the two agree on every row (tests/test_audit_batch.py)."""
    doubt = []
    groups: dict[tuple[int, int], list[int]] = {}
    for i, r in enumerate(rows):
        if _plain(r):
            groups.setdefault((r[_C["n"]], r[_C["m"]]), []).append(i)
        else:
            doubt.append(i)
    for (n, m), idx in groups.items():
        ok = _screen(n, m, [rows[i] for i in idx])
        doubt += [i for i, good in zip(idx, ok.tolist(), strict=True) if not good]
    out = []
    for i in sorted(doubt):
        problems = stored_row_problems(dict(zip(TILE_COLUMNS, rows[i], strict=True)))
        if problems:
            out.append((i, problems))
    return out


def check_stored_rows(rows: Sequence[tuple], where: Callable[[int], str]) -> None:
    """Refuse the first of ``rows`` (tuples in ``TILE_COLUMNS`` order) that is not a sound stored tile:
    HashMismatch when its content does not hash to its key, CorruptLibrary naming its first other
    problem. ``where(i)`` says which row of which file ("snapshot 1a2b…: tile row 7"), so the one line
    names it. The one gate every row passes on its way into a library or out of it."""
    found = bad_rows(rows)
    if not found:
        return
    i, problems = found[0]
    row = dict(zip(TILE_COLUMNS, rows[i], strict=True))
    h = row["hash"]
    try:
        actual = content_hash(row["n"], bytes(row["solution"]), bytes(row["givens"]), row["seam_mask"])
    except (TypeError, ValueError) as err:
        raise CorruptLibrary(f"{where(i)} ({h}) is malformed ({err})") from err
    if actual != h:
        raise HashMismatch(f"{where(i)} ({h}) hashes to {actual}: its content was changed after it was stored")
    raise CorruptLibrary(f"{where(i)} ({h}) is not a sound tile: {problems[0]}")
