"""Completing square windows of a board by line domains: the C search that decides drains.

A ``Windows`` problem is a board's fixed cells (``values``/``known``, any H×W region) and square
windows ``(x, y, n, distinct)`` on it. A completion gives every free cell of the windows' union a
value so that every row and column of every window is a valid line (balanced, no three equal in a
row) and, in the ``distinct`` windows, rows differ from each other and columns too; and window k
differs from every grid of ``exclude`` paired with k. This is field for field the model
``engine.cpsat`` builds for ``generator.complete`` (one distinct window) and ``stitcher.joint``
(a square's window with distinct lines and its unplaced neighbours' windows without), so the two
answer the same question; tests/test_windows.py holds them to it.

``solve`` runs the C kernel (``engine/_complete.c``): the line domains of ``engine._kernel``'s
counter over every window, propagation to a fixpoint, depth-first search on the free cell whose
lines have the fewest patterns, the value tried first drawn from ``seed`` (so a seed fixes the
answer, and two seeds usually give two completions). An exhausted search is a proof that no
completion exists (``NONE``); a search that passes ``max_nodes`` is ``UNDECIDED`` and the caller
asks CP-SAT. Bad input (sizes, windows outside the board, bytes other than 0/1, an excluded grid
of the wrong side) is ``BadInput``, one line, before any search.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from engine.count import c_kernel
from tilelib.errors import BadInput
from tilelib.rng import Stream

FOUND, NONE, UNDECIDED = 1, 0, -1
MAX_NODES = 4096
"""Default node budget of one search before it is UNDECIDED (measured in BENCHMARKS, issue 36)."""


@dataclass(frozen=True)
class Windows:
    """One completion problem: fixed cells of a board and the windows to complete on it.

    ``values``/``known``: H×W arrays of 0/1 (a value where ``known`` is 0 is ignored);
    ``windows``: (x, y, n, distinct) with x the column; ``exclude``: (k, n×n grid) pairs, window k
    must differ from that grid."""

    values: np.ndarray
    known: np.ndarray
    windows: tuple
    exclude: tuple = field(default=())


@dataclass(frozen=True)
class Answer:
    """``status`` FOUND / NONE / UNDECIDED; ``grid`` the completed region (FOUND only: the bounding
    box of the windows, at ``origin`` (x, y) of the board); ``nodes`` searched."""

    status: int
    grid: np.ndarray | None
    origin: tuple[int, int]
    nodes: int

    def window(self, x: int, y: int, n: int) -> np.ndarray:
        """The n×n grid of the window at board cell (x, y) in a FOUND answer."""
        ox, oy = self.origin
        assert self.grid is not None, "window() of an answer that is not FOUND"  # FOUND answers carry a grid
        return self.grid[y - oy : y - oy + n, x - ox : x - ox + n].copy()


def seed_of(stream: Stream) -> int:
    """The kernel's 64-bit seed, the next 8 bytes of ``stream``."""
    return int.from_bytes(stream.bytes(8), "big")


def solve(problem: Windows, seed: int, max_nodes: int = MAX_NODES) -> Answer:
    """Complete ``problem`` (see the module doc); the search is cropped to the windows' bounding box."""
    values, known = np.asarray(problem.values), np.asarray(problem.known)
    if values.ndim != 2 or values.shape != known.shape:
        raise BadInput("values and known must be two arrays of one H x W shape")
    wins = [_window(w) for w in problem.windows]
    if not wins:
        raise BadInput("a completion needs at least one window")
    x0, y0 = min(w[0] for w in wins), min(w[1] for w in wins)
    x1, y1 = max(w[0] + w[2] for w in wins), max(w[1] + w[2] for w in wins)
    H, W = values.shape
    if x0 < 0 or y0 < 0 or x1 > W or y1 > H:
        raise BadInput(f"a window lies outside the {H}x{W} board")
    k, v = known[y0:y1, x0:x1], values[y0:y1, x0:x1]
    if not (_bits(v) and _bits(k)):
        raise BadInput("values and known must hold only 0 and 1")
    k = k.astype(np.uint8)
    v = v.astype(np.uint8) & k
    local = [(x - x0, y - y0, n, d) for (x, y, n, d) in wins]
    exclude = [_excluded(e, wins) for e in problem.exclude]
    max_nodes = -1 if max_nodes < 0 else min(int(max_nodes), 2**62)
    try:
        status, grid, nodes = c_kernel().complete_windows(
            y1 - y0, x1 - x0, v.tobytes(), k.tobytes(), local, exclude, seed & (2**64 - 1), max_nodes
        )
    except ValueError as err:
        raise BadInput(f"completion: {err}") from None
    if grid is not None:
        grid = np.frombuffer(grid, dtype=np.uint8).reshape(y1 - y0, x1 - x0)
    return Answer(status, grid, (x0, y0), nodes)


def _window(w) -> tuple[int, int, int, bool]:
    try:
        x, y, n, d = w
        return int(x), int(y), int(n), bool(d)
    except (TypeError, ValueError):
        raise BadInput(f"a window must be (x, y, n, distinct), got {w!r}") from None


def _excluded(e, wins) -> tuple[int, bytes]:
    try:
        k, g = e
        k = int(k)
        g = np.asarray(g)
    except (TypeError, ValueError):
        raise BadInput(f"an excluded grid must be (window index, grid), got {e!r}") from None
    if not 0 <= k < len(wins) or g.shape != (wins[k][2],) * 2 or not _bits(g):
        raise BadInput(f"excluded grid {k}: must be a 0/1 grid of its window's side")
    return k, g.astype(np.uint8).tobytes()


def _bits(a: np.ndarray) -> bool:
    """Every entry of ``a`` is 0 or 1."""
    return not ((a != 0) & (a != 1)).any()
