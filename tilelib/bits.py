"""Bit-level encodings fixed by FORMAT §2: grids, BLOBs, row ints, edges, puzzle strings.

A grid is an ``n×n`` numpy ``uint8`` array of 0/1, indexed ``[row, col]``.
A row int has bit ``n-1-c`` = cell (r, c) (leftmost cell is the MSB).
A BLOB is ``numpy.packbits(grid.ravel())`` (row-major, MSB first, zero padded).
Edges are n-bit ints read in absolute directions, first cell = MSB.

numpy is imported inside the functions that build or read grids, so the
row-int paths (``tiles solve``, ``tiles library generate``) never load it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from tilelib.errors import BadInput

if TYPE_CHECKING:
    import numpy as np

SIDES = ("top", "right", "bottom", "left")
TOP, RIGHT, BOTTOM, LEFT = 1, 2, 4, 8
VALID_N = (6, 8, 10, 12, 14, 16)


def check_n(n: int) -> int:
    """Return n if it is a legal tile side (even, 6..16), else raise BadInput."""
    if n not in VALID_N:
        raise BadInput(f"tile side n={n} is not one of {VALID_N}")
    return n


def blob_len(n: int) -> int:
    """Bytes in a grid BLOB of side n."""
    return (n * n + 7) // 8


def to_blob(grid: np.ndarray) -> bytes:
    """Pack a 0/1 grid into its BLOB (FORMAT §2)."""
    import numpy as np

    return np.packbits(np.asarray(grid, dtype=np.uint8).ravel()).tobytes()


def from_blob(blob: bytes, n: int) -> np.ndarray:
    """Unpack a BLOB of side n into a read-only uint8 grid; raise BadInput on a wrong length."""
    import numpy as np

    if len(blob) != blob_len(n):
        raise BadInput(f"grid blob for n={n} must be {blob_len(n)} bytes, got {len(blob)}")
    bits = np.unpackbits(np.frombuffer(blob, dtype=np.uint8), count=n * n)
    grid = bits.reshape(n, n)
    grid.flags.writeable = False
    return grid


def line_int(cells) -> int:
    """Int of a sequence of 0/1 cells, first cell = MSB."""
    v = 0
    for b in cells:
        v = (v << 1) | int(b)
    return v


def int_line(v: int, n: int) -> list[int]:
    """Cells of an n-bit int, MSB first (inverse of ``line_int``)."""
    return [(v >> (n - 1 - i)) & 1 for i in range(n)]


def row_ints(grid: np.ndarray) -> list[int]:
    """Row ints of a grid (bit n-1-c = cell (r, c))."""
    import numpy as np

    return [line_int(row) for row in np.asarray(grid)]


def edges(grid: np.ndarray) -> tuple[int, int, int, int]:
    """(top, right, bottom, left) edge ints in absolute directions (FORMAT §2)."""
    import numpy as np

    g = np.asarray(grid)
    return line_int(g[0, :]), line_int(g[:, -1]), line_int(g[-1, :]), line_int(g[:, 0])


def rows_blob(rows, n: int) -> bytes:
    """The BLOB of a grid given as row ints: ``to_blob`` of that grid, without numpy."""
    v = 0
    for r in rows:
        v = (v << n) | r
    nb = blob_len(n)
    return (v << (8 * nb - n * n)).to_bytes(nb, "big")


def blob_rows(blob: bytes, n: int) -> list[int]:
    """Row ints of a grid BLOB (the inverse of ``rows_blob``)."""
    v = int.from_bytes(blob, "big") >> (8 * len(blob) - n * n)
    mask = (1 << n) - 1
    return [(v >> (n * (n - 1 - r))) & mask for r in range(n)]


def row_edges(rows, n: int) -> tuple[int, int, int, int]:
    """``edges`` of a grid given as row ints: right is the column of low bits, left of high bits."""
    right = left = 0
    hi = n - 1
    for r in rows:
        right = (right << 1) | (r & 1)
        left = (left << 1) | (r >> hi & 1)
    return rows[0], right, rows[-1], left


def reverse_bits(v: int, n: int) -> int:
    """Reverse the order of the low n bits of v."""
    r = 0
    for _ in range(n):
        r = (r << 1) | (v & 1)
        v >>= 1
    return r


# ---------------------------------------------------------------- puzzles


def puzzle_text(text: str) -> tuple[str, int]:
    """(the stripped puzzle string, its side n), or BadInput: only '0', '1' and '.', n*n of them
    for an even n >= 2. The one check of a puzzle string (``Puzzle.parse``, ``engine.report``)."""
    s = text.strip()
    bad = sorted(set(s) - set("01."))
    if bad:
        raise BadInput(f"puzzle string holds {bad[0]!r}; only '0', '1' and '.' are allowed")
    n = int(round(len(s) ** 0.5))
    if n * n != len(s) or n < 2 or n % 2:
        raise BadInput(f"puzzle string of length {len(s)} is not n*n for an even n")
    return s, n


@dataclass(frozen=True)
class Puzzle:
    """A tile puzzle: side n, cell values and a mask of known cells (both n×n uint8).

    ``values`` is 0 wherever ``known`` is 0. The string form is n·n chars of
    ``0``, ``1``, ``.`` row-major (FORMAT §12).
    """

    n: int
    values: np.ndarray
    known: np.ndarray

    @staticmethod
    def parse(text: str) -> Puzzle:
        """Parse a puzzle string; n is inferred from its length. Raise BadInput if malformed."""
        import numpy as np

        s, n = puzzle_text(text)
        arr = np.frombuffer(s.encode("ascii"), dtype=np.uint8).reshape(n, n)
        known = (arr != ord(".")).astype(np.uint8)
        values = (arr == ord("1")).astype(np.uint8)
        return Puzzle(n, values, known)

    @staticmethod
    def from_grid(grid: np.ndarray, known: np.ndarray | None = None) -> Puzzle:
        """Puzzle showing ``grid`` where ``known`` is 1 (all cells when known is None)."""
        import numpy as np

        g = np.asarray(grid, dtype=np.uint8)
        k = np.ones_like(g) if known is None else np.asarray(known, dtype=np.uint8)
        return Puzzle(g.shape[0], g * k, k.copy())

    def __str__(self) -> str:
        import numpy as np

        out = np.where(self.known == 1, self.values + ord("0"), ord(".")).astype(np.uint8)
        return out.tobytes().decode("ascii")

    def row_masks(self) -> tuple[list[int], list[int]]:
        """(value row ints, known-mask row ints): the engine's input form."""
        return row_ints(self.values), row_ints(self.known)
