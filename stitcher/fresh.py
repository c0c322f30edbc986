"""The fair rule during one stitch (``tilelib.spent``): no n >= 10 solution twice, none spent.

A fresh stitch starts from a fresh active set (``active.load_active(fresh=True)``): no indexed tile
has a spent solution. ``FreshRule`` then owns which held solutions the board holds — a count per
solution, since a repair takes tiles off and puts them back — and keeps the index in step:

- when a solution goes on the board (``put``), every indexed tile with that solution is marked dead
  (``MemoryIndex.set_dead``; a profile's level views share the marks), so no lookup offers it
  again; when its last square is taken off (``take``), they are alive again;
- a grid the drain makes is ``banned`` when its solution is on the board, reserved for the other
  half, or spent (one indexed query of the library through the run's journal): the maker then
  excludes its 16 images and asks CP-SAT for another (``images``; at most ``RETRIES`` times per
  drain, and an infeasible answer after an exclusion is no proof of nofit).

Halves (``regions.py``) share no cell but could share a solution: in half r only library solutions
whose hash's last hex digit has parity r are live (``reserve``), so their lookups never meet; two
made grids can still coincide, which ``halves.graft`` catches (``clashes``) by leaving the later
square to the parent's last pass. ``any`` builds have no ``FreshRule`` at all.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from tilelib.spent import grid_solution_hash, held, solution_hash
from tilelib.symmetry import TRANSFORMS, apply_grid

RETRIES = 4  # banned grids a drain may exclude before it gives up on fresh completions


def images(grid: np.ndarray) -> list[np.ndarray]:
    """The distinct images of a grid under the 16 transforms (what a made grid must differ from)."""
    out, seen = [], set()
    for t in TRANSFORMS:
        g = apply_grid(grid, t)
        key = g.tobytes()
        if key not in seen:
            seen.add(key)
            out.append(g)
    return out


def exclude_images(exclude: list, grids: list[np.ndarray], keys: list[int] | None = None) -> bool:
    """Add the images of banned ``grids`` to a maker's ``exclude`` list — plain grids, or (key, grid)
    pairs when ``keys`` says which square of a model each is for; False, adding nothing, once the
    list holds ``RETRIES`` grids' worth (the maker then gives up on fresh completions)."""
    if len(exclude) >= RETRIES * 16:
        return False
    for j, grid in enumerate(grids):
        exclude += images(grid) if keys is None else [(keys[j], g) for g in images(grid)]
    return True


def _parity(sol: str) -> int:
    return int(sol[-1], 16) & 1


def parities(sols: np.ndarray) -> np.ndarray:
    """``_parity`` of each of an S64 array of hex hashes (none empty), as int64."""
    length = np.char.str_len(sols)
    last = sols.view(np.uint8).reshape(len(sols), 64)[np.arange(len(sols)), length - 1].astype(np.int64)
    a, A, zero = ord("a"), ord("A"), ord("0")
    return np.where(last >= a, last - a + 10, np.where(last >= A, last - A + 10, last - zero)) & 1


class FreshRule:
    """The held solutions on the board and the dead marks they put in the index (module doc). Which
    tile has which solution is the index's (``MemoryIndex.solution``, ``rows_of_solution``: arrays,
    not a Python object per tile, so a forked half reads them without copying the parent's pages);
    this rule owns only the counts of the solutions on the board."""

    def __init__(self, index) -> None:
        self.index = index
        self.on_board: dict[str, int] = {}  # solution -> squares holding it
        self.half: int | None = None  # inside a half: its parity (reserve)

    def _mark(self, n: int, sol: str, dead: bool) -> None:
        self.index.set_dead_rows(n, self.index.rows_of_solution(n, sol), dead)

    def learn(self, h: str, tile) -> None:
        """A tile the stitch made (now in the index): dead at once if its solution is on the board."""
        if held(tile.n):
            sol = solution_hash(tile.n, tile.canonical()[0].solution)  # a canonical tile's solution is canonical
            self.index.learn_solution(tile.n, h, sol)
            if self.on_board.get(sol):
                self.index.set_dead(tile.n, [h], True)

    def put(self, n: int, h: str) -> None:
        """Tile h (of side n) went on a square."""
        sol = self.index.solution(n, h)
        if sol is not None:
            self.on_board[sol] = self.on_board.get(sol, 0) + 1
            if self.on_board[sol] == 1:
                self._mark(n, sol, True)

    def take(self, n: int, h: str) -> None:
        """Tile h (of side n) came off a square."""
        sol = self.index.solution(n, h)
        if sol is not None:
            self.on_board[sol] -= 1
            if not self.on_board[sol] and not self._reserved(n, sol):
                self._mark(n, sol, False)

    def clashes(self, n: int, h: str) -> bool:
        """Whether tile h's solution is already on the board (a half's placement, at graft)."""
        sol = self.index.solution(n, h)
        return sol is not None and self.on_board.get(sol, 0) > 0

    def reserve(self, half: int) -> None:
        """Inside half ``half`` (a forked worker): library solutions of the other parity are the
        other half's; mark their tiles dead (those of a solution on the board already are: marking
        them again changes nothing)."""
        self.half = half
        for n in self.index.sizes:
            rows, sols = self.index.solution_rows(n)
            self.index.set_dead_rows(n, rows[parities(sols) != half], True)

    def _reserved(self, n: int, sol: str) -> bool:
        return self.half is not None and _parity(sol) != self.half and bool(self.index.rows_of_solution(n, sol))

    def banned(self, grid: np.ndarray, is_spent: Callable[[str], bool]) -> bool:
        """Whether a made grid may not go on the board: its solution is on it, is the other half's,
        or is spent (``is_spent``, asked last: it reads the library)."""
        if not held(len(grid)):
            return False
        sol = grid_solution_hash(grid)
        return bool(self.on_board.get(sol)) or self._reserved(len(grid), sol) or is_spent(sol)
