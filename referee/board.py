"""Rebuild the day's board from a manifest and the library (FORMAT §6, §9): values, owners, givens.

Everything here is plain numpy over G×G board cells:

- ``solution`` (int8): the value every tile puts on a cell, -1 on cells in no
  tile window (inert zone filler);
- ``owners`` (uint8): how many tile windows hold the cell; 3 or more is a
  T-junction / corner, where clues never go;
- ``givens`` (bool): the board givens = every placed tile's givens mapped
  through its transform ∪ zone-given cells (cells a zone rectangle covers
  that lie in some tile window) ∪ the manifest's clues.

``assemble`` places tiles in id order and raises ``CheckFailed`` at the first
cell on which two tiles disagree (the seam check, FORMAT §10 step 3).
``fetch_tiles`` reads each distinct hash once (``Library.get`` re-hashes the
row, so a tampered row is an error). ``build_board`` is both in one call, for
the daily build; ``referee.verify`` calls the pieces with its own checks
between them.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

from referee.manifest import Manifest
from tilelib.bits import blob_len
from tilelib.errors import CorruptLibrary, UnknownTile, VerificationFailed
from tilelib.store import Library
from tilelib.symmetry import apply_grid, apply_mask
from tilelib.tile import Tile, grid_image


class CheckFailed(VerificationFailed):
    """A verification failure that names its FORMAT §10 step (``step``: packing, tiles, seams, clues,
    frontier, seed); the message starts with the step name."""

    def __init__(self, step: str, message: str) -> None:
        super().__init__(f"{step}: {message}")
        self.step = step


@dataclass
class Board:
    """A rebuilt board. ``squares[i] = (x0, y0, s)``, the tile window is rows y0..y0+s, cols x0..x0+s."""

    G: int
    squares: tuple[tuple[int, int, int], ...]
    seed_tile: int
    solution: np.ndarray  # int8 G×G, -1 outside every tile window
    owners: np.ndarray  # uint8 G×G
    givens: np.ndarray  # bool G×G: tile givens ∪ zone givens ∪ clues
    tile_givens: np.ndarray  # bool G×G: the placed tiles' own givens only
    zone_givens: np.ndarray  # bool G×G
    clues: tuple[tuple[int, int], ...]

    def window(self, i: int) -> tuple[slice, slice]:
        """Row and column slices of tile i's window."""
        x0, y0, s = self.squares[i]
        return slice(y0, y0 + s + 1), slice(x0, x0 + s + 1)

    def tile_solution(self, i: int) -> np.ndarray:
        """Tile i's window of the board solution, as it lies on the board (n×n uint8)."""
        return self.solution[self.window(i)].astype(np.uint8)

    @property
    def tile_cells(self) -> np.ndarray:
        """bool G×G: cells in some tile window."""
        return self.owners > 0

    @cached_property
    def solution_rows(self) -> list[int]:
        """``board_rows`` of the cells whose solution value is 1 (read only)."""
        return board_rows(self.solution == 1)

    @property
    def junctions(self) -> np.ndarray:
        """bool G×G: cells held by 3 or more tiles (T-junctions and 4-way corners)."""
        return self.owners >= 3

    def with_clues(self, clues) -> Board:
        """The same board with another clue set (givens recomputed)."""
        clues = tuple((int(r), int(c)) for r, c in clues)
        givens = self.tile_givens | self.zone_givens
        for r, c in clues:
            givens[r, c] = True
        return Board(
            self.G,
            self.squares,
            self.seed_tile,
            self.solution,
            self.owners,
            givens,
            self.tile_givens,
            self.zone_givens,
            clues,
        )


_WEIGHTS = {n: (1 << np.arange(n - 1, -1, -1)).astype(np.int64) for n in range(6, 17, 2)}


def grid_rows(grid: np.ndarray) -> list[int]:
    """Row ints (bit n-1-c = cell (r, c), FORMAT §2) of an n×n 0/1 or bool window: the engine's input."""
    return (grid.astype(np.int64) @ _WEIGHTS[grid.shape[0]]).tolist()


def rows_grid(rows, n: int) -> np.ndarray:
    """The n×n bool window of row ints (the inverse of ``grid_rows``)."""
    r = np.asarray(rows, dtype=np.int64)[:, None]
    return ((r >> np.arange(n - 1, -1, -1)) & 1).astype(bool)


def board_rows(grid: np.ndarray) -> list[int]:
    """One int per row of a G-wide bool grid (bit G-1-c = cell c, as a window's row ints are bit
    n-1-c): what the propagation and the closure work on, a window then being n shifts away."""
    G = grid.shape[1]
    pad = 8 * ((G + 7) // 8) - G
    return [int.from_bytes(row, "big") >> pad for row in map(bytes, np.packbits(grid, axis=1))]


def board_grid(rows: list[int], G: int) -> np.ndarray:
    """The bool grid of ``board_rows`` (its inverse)."""
    nb = (G + 7) // 8
    pad = 8 * nb - G
    data = b"".join((r << pad).to_bytes(nb, "big") for r in rows)
    return np.unpackbits(np.frombuffer(data, dtype=np.uint8).reshape(len(rows), nb), axis=1)[:, :G].astype(bool)


def window_cols(G: int, x0: int, n: int) -> int:
    """The bits of columns x0..x0+n-1 in a ``board_rows`` row."""
    return ((1 << n) - 1) << (G - x0 - n)


def window_rows(rows: list[int], G: int, x0: int, y0: int, n: int) -> list[int]:
    """The row ints of the n×n window at column x0, row y0 of ``board_rows``."""
    shift, full = G - x0 - n, (1 << n) - 1
    return [(rows[y] >> shift) & full for y in range(y0, y0 + n)]


def fetch_tiles(manifest: Manifest, lib: Library) -> dict[str, Tile]:
    """The canonical tile of every distinct hash in the manifest (CheckFailed step 'tiles' if absent
    or tampered, naming the first tile id that uses it)."""
    try:
        got = lib.get_many(manifest.hashes)
    except CorruptLibrary:  # HashMismatch included: the loop names the first tile id with a bad row
        got = {}
    out: dict[str, Tile] = {}
    for i, h in enumerate(manifest.hashes):
        if h in out:
            continue
        try:
            out[h] = got[h] if h in got else lib.get(h)
        except UnknownTile:
            raise CheckFailed("tiles", f"tile {i}: no row with hash {h} in the library") from None
        except CorruptLibrary as e:  # HashMismatch included
            raise CheckFailed("tiles", f"tile {i}: library row {h} is corrupt ({e})") from None
    return out


def oriented_grids(tile: Tile, t: int) -> tuple[np.ndarray, np.ndarray]:
    """(solution, givens) of transform(tile, t) as n×n uint8 grids (no alts work: cheap)."""
    return apply_grid(tile.solution_grid, t), apply_mask(tile.givens_grid, t)


def assemble(manifest: Manifest, tiles: dict[str, Tile]) -> Board:
    """Place every tile in id order; CheckFailed('seams') at the first cell two tiles disagree on.

    Also CheckFailed('tiles') if a tile's stored n differs from the manifest's square.

    Two ways to one answer: ``_assemble_at_once`` places every tile with a few array operations
    per tile side and proves that no two tiles disagree anywhere (0.63 -> ~0.1 s at G = 1000); when
    it cannot (a wrong n, a clash), ``_assemble_in_order`` places the tiles one by one, the
    definition above, and names the first offence."""
    done = _assemble_at_once(manifest, tiles)
    return done if done is not None else _assemble_in_order(manifest, tiles)


def _assemble_at_once(manifest: Manifest, tiles: dict[str, Tile]) -> Board | None:
    """The board, or None when some tile's n is wrong or two tiles disagree on a cell. Per tile side:
    each distinct (tile, transform) oriented once (``grid_image`` of its BLOBs, unpacked together),
    the flat cell indexes of every window, the owners counted, the values written (any writer) and
    then read back under every window: equal everywhere exactly when no two tiles disagree."""
    p = manifest.packing
    G = p.P + 1
    by_n: dict[int, list[int]] = {}
    for i, (_x0, _y0, s) in enumerate(p.squares):
        if tiles[manifest.hashes[i]].n != s + 1:
            return None
        by_n.setdefault(s + 1, []).append(i)
    sol = np.full(G * G, -1, dtype=np.int8)
    owners = np.zeros(G * G, dtype=np.uint8)
    tgiv = np.zeros(G * G, dtype=bool)
    placed = []
    for n, ids in by_n.items():
        keys: dict[tuple[str, int], int] = {}
        which = [keys.setdefault((manifest.hashes[i], manifest.transforms[i]), len(keys)) for i in ids]
        values = _unpack(n, [grid_image(n, tiles[h].solution, t, True) for h, t in keys])[which].astype(np.int8)
        given = _unpack(n, [grid_image(n, tiles[h].givens, t, False) for h, t in keys])[which].astype(bool)
        corner = np.array([p.squares[i][1] * G + p.squares[i][0] for i in ids], dtype=np.int32)  # G*G < 2**31
        idx = _cells(corner, n, G)
        owners += np.bincount(idx.ravel(), minlength=G * G).astype(np.uint8)
        sol[idx] = values
        tgiv[idx[given]] = True
        placed.append((corner, n, values))
    if any(not np.array_equal(sol[_cells(corner, n, G)], values) for corner, n, values in placed):
        return None
    return _board(manifest, sol.reshape(G, G), owners.reshape(G, G), tgiv.reshape(G, G))


def _cells(corner: np.ndarray, n: int, G: int) -> np.ndarray:
    """(k, n*n) flat board indexes of the n×n windows whose top-left cells are ``corner``."""
    return corner[:, None] + (np.arange(n, dtype=np.int32)[:, None] * G + np.arange(n, dtype=np.int32)).ravel()


def _unpack(n: int, blobs: list[bytes]) -> np.ndarray:
    """(k, n*n) 0/1 cells of k grid BLOBs of side n, row-major (FORMAT §2)."""
    data = np.frombuffer(b"".join(blobs), dtype=np.uint8).reshape(len(blobs), blob_len(n))
    return np.unpackbits(data, axis=1)[:, : n * n]


def _assemble_in_order(manifest: Manifest, tiles: dict[str, Tile]) -> Board:
    """``assemble`` by its definition: tile after tile, the first offence raised."""
    p = manifest.packing
    G = p.P + 1
    sol = np.full((G, G), -1, dtype=np.int8)
    owners = np.zeros((G, G), dtype=np.uint8)
    tgiv = np.zeros((G, G), dtype=bool)
    cache: dict[tuple[str, int], tuple[np.ndarray, np.ndarray]] = {}
    for i, (x0, y0, s) in enumerate(p.squares):
        h, t = manifest.hashes[i], manifest.transforms[i]
        tile = tiles[h]
        if tile.n != s + 1:
            raise CheckFailed(
                "tiles",
                f"tile {i}: the library tile {h[:12]}… has n={tile.n}, the square at ({x0},{y0}) needs n={s + 1}",
            )
        key = (h, t)
        if key not in cache:
            cache[key] = oriented_grids(tile, t)
        g, gv = cache[key]
        win = sol[y0 : y0 + s + 1, x0 : x0 + s + 1]
        clash = (win >= 0) & (win != g)
        if clash.any():
            r, c = (int(v) for v in np.argwhere(clash)[0])
            other = _holder(p.squares[:i], y0 + r, x0 + c)
            raise CheckFailed(
                "seams",
                f"board cell (row {y0 + r}, col {x0 + c}) is {int(g[r, c])} in tile {i} "
                f"but {int(win[r, c])} in tile {other}",
            )
        win[...] = g
        owners[y0 : y0 + s + 1, x0 : x0 + s + 1] += 1
        tgiv[y0 : y0 + s + 1, x0 : x0 + s + 1] |= gv.astype(bool)
    return _board(manifest, sol, owners, tgiv)


def _board(manifest: Manifest, sol: np.ndarray, owners: np.ndarray, tgiv: np.ndarray) -> Board:
    """The Board of placed tiles: the zone givens (zone cells in some window) and the clues added."""
    p = manifest.packing
    G = p.P + 1
    zgiv = np.zeros((G, G), dtype=bool)
    for zone in p.zones:
        for x, y, w, hh in zone:
            zgiv[y : y + hh + 1, x : x + w + 1] = True
    zgiv &= owners > 0
    givens = tgiv | zgiv
    for r, c in manifest.clues:
        givens[r, c] = True
    return Board(G, tuple(p.squares), p.seed_tile, sol, owners, givens, tgiv, zgiv, tuple(manifest.clues))


def _holder(squares, row: int, col: int) -> int:
    """Id of the first square whose window holds board cell (row, col)."""
    for j, (x0, y0, s) in enumerate(squares):
        if y0 <= row <= y0 + s and x0 <= col <= x0 + s:
            return j
    return -1


def build_board(manifest: Manifest, lib: Library) -> Board:
    """Fetch the tiles and assemble the board (raises CheckFailed for a missing tile or a seam clash)."""
    return assemble(manifest, fetch_tiles(manifest, lib))
