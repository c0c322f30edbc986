"""The board under construction: border cells of placed tiles, and the constraint a square faces.

Neighbouring tiles share only their border cells (squares do not overlap in
pitch space), so the board keeps just those: ``values``/``known`` are G×G
uint8 arrays where ``known`` marks cells written by some placed tile's
border. A square's constraint (FORMAT §5, question 4) is read from its window's
four border lines; placing a tile writes its four oriented edges and checks
every already-known cell (the seam check) before writing anything.

Lines are gathered with one fancy index per call (offsets precomputed per n)
and turned into edge ints by a dot product with powers of two, MSB first
(FORMAT §2): top row left→right, right column top→bottom, bottom row
left→right, left column top→bottom.

``PyBoard`` is that numpy code, kept as the reference; ``Board`` is the same board with
``constraint``/``place``/``remove`` run by the C twin ``stitcher._core.Board`` on the same
buffers (a warm G=1000 stitch calls them ~40,000 times; numpy's per-call overhead dominated).
``Board`` is ``CBoard`` when the extension loads, else ``PyBoard`` (``tilelib.native`` warned).
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from tilelib.constraint import Constraint
from tilelib.errors import TilesError
from tilelib.native import load_twin

_core = load_twin("stitcher._core")


class SeamConflict(TilesError):
    """A placement disagrees with a cell another tile already holds (a stitcher bug, never data)."""


@lru_cache(maxsize=64)
def border_offsets(n: int, G: int) -> np.ndarray:
    """(4, n) flat offsets, relative to the window's top-left cell, of the top/right/bottom/left lines."""
    i = np.arange(n)
    top = i
    right = i * G + (n - 1)
    bottom = (n - 1) * G + i
    left = i * G
    return np.stack([top, right, bottom, left]).astype(np.int64)


@lru_cache(maxsize=16)
def pow2(n: int) -> np.ndarray:
    """Weights turning an n-cell line into its int, first cell = MSB."""
    return (1 << np.arange(n - 1, -1, -1)).astype(np.int64)


@lru_cache(maxsize=16)
def line_table(n: int) -> np.ndarray:
    """(2**n, n) uint8: the cells of every n-bit int, MSB first."""
    v = np.arange(1 << n, dtype=np.int64)[:, None]
    return ((v >> np.arange(n - 1, -1, -1)) & 1).astype(np.uint8)


class PyBoard:
    """Border cells of the tiles placed so far on a G×G board (numpy reference)."""

    def __init__(self, G: int) -> None:
        self.G = G
        self.values = np.zeros((G, G), dtype=np.uint8)
        self.known = np.zeros((G, G), dtype=np.uint8)
        self.holders = np.zeros((G, G), dtype=np.uint8)  # placed tiles holding each cell
        self._v = self.values.ravel()
        self._k = self.known.ravel()
        self._h = self.holders.ravel()

    def constraint(self, x0: int, y0: int, n: int) -> Constraint:
        """The constraint the window at board cell (y0, x0) of side n faces from the known cells."""
        idx = border_offsets(n, self.G) + (y0 * self.G + x0)
        k = self._k[idx]
        v = self._v[idx] & k
        p = pow2(n)
        masks = (k @ p).tolist()
        vals = (v @ p).tolist()
        return Constraint(n, tuple(masks), tuple(vals))

    def place(self, x0: int, y0: int, n: int, edges) -> None:
        """Write a tile's four oriented edges; SeamConflict (nothing written) if a known cell differs."""
        idx = border_offsets(n, self.G) + (y0 * self.G + x0)
        cells = line_table(n)[np.asarray(edges, dtype=np.int64)]
        k = self._k[idx]
        if (k & (self._v[idx] ^ cells)).any():
            raise SeamConflict(f"tile of n={n} at cell ({y0},{x0}) disagrees with a placed neighbour")
        self._v[idx] = cells
        self._k[idx] = 1
        self._h[idx] += 1  # buffered: a corner listed twice counts once

    def remove(self, x0: int, y0: int, n: int) -> None:
        """Take a placed tile off: its border cells stay known only where another tile holds them."""
        idx = border_offsets(n, self.G) + (y0 * self.G + x0)
        self._h[idx] -= 1
        self._k[idx] = self._h[idx] > 0

    def push(self, x0: int, y0: int, n: int, edges):
        """Write a tile's edges without the seam check and return what ``pop`` needs to undo it."""
        idx = border_offsets(n, self.G) + (y0 * self.G + x0)
        saved = (idx, self._v[idx].copy(), self._k[idx].copy())
        self._v[idx] = line_table(n)[np.asarray(edges, dtype=np.int64)]
        self._k[idx] = 1
        return saved

    def pop(self, saved) -> None:
        """Undo a ``push``."""
        idx, v, k = saved
        self._v[idx] = v
        self._k[idx] = k


class CBoard(PyBoard):
    """``PyBoard`` with its hot methods in C (``core``: a ``stitcher._core.Board`` over the same
    buffers, also read by the C forward check). Needs the extension."""

    def __init__(self, G: int) -> None:
        super().__init__(G)
        self.core = _core.Board(self._v, self._k, self._h, G)

    def constraint(self, x0: int, y0: int, n: int) -> Constraint:
        masks, vals = self.core.constraint(x0, y0, n)
        return Constraint(n, masks, vals)

    def place(self, x0: int, y0: int, n: int, edges) -> None:
        if not self.core.place(x0, y0, n, edges):
            raise SeamConflict(f"tile of n={n} at cell ({y0},{x0}) disagrees with a placed neighbour")

    def remove(self, x0: int, y0: int, n: int) -> None:
        self.core.remove(x0, y0, n)


Board = CBoard if _core is not None else PyBoard
