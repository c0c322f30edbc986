"""The tile-by-tile closure (FORMAT §10, step ``closure``): can the board be played the way the game is?

A player learns cells only from the tiles it has solved. So the question is not
whether the board has one solution (step ``frontier``) but whether a player that
solves one tile at a time, from the seed tile outward, never gets stuck.

**View.** Tile i's view, once the tiles in S are solved, is every board given in
its window (the placed tiles' givens, zone givens, clues: ``Board.givens``) and
every cell of its window that lies in the window of a tile in S. Nothing else:
no cell a partial propagation would learn. ``view_mask`` is that definition;
the referee's puzzle view (``referee.service.boards.puzzle_view``) shows exactly
it.

**Solvable, playable.** Tile i is *solvable* in a view when exactly one n×n grid
obeys FORMAT §1 inside its window and equals the view on the view's cells
(enumerated afresh by the engine, never read from ``alts``). It is *playable*
when it is the seed tile or shares a seam (>= 2 board cells) with a solved tile:
the judge's acceptance rule (§14).

**Waves.** S_0 = {}; S_{k+1} = S_k ∪ {i playable under S_k and solvable in its
view under S_k}. The closure is the union; the board is *playable* when it holds
every tile. Both properties are monotone in S (a larger view keeps the board's
own window as a candidate and has no more, and a tile once playable stays so),
so the closure and each tile's wave depend on nothing but the board: not on any
visiting order. ``waves`` is the k at which S stops growing.

**Cost.** A tile is counted (engine ``count_rows``, up to 2) only when it is
playable and its view has grown since its last count, so the work is about one
count per tile plus one per stall resolved.

**Clues** (``add_play_clues``): while the closure stalls, the *stalled* tiles
are the playable, unsolved ones. For each, up to ``CLUE_SAMPLE`` candidates are
enumerated; the clue is the legal cell (unknown to the view, held by < 3
tiles) of the stalled tile with the fewest candidates that rules out the most
of its wrong candidates; ties → cells held by 2 tiles, then the lowest
(row, col). One clue at a time, then the waves go on from the tiles that hold
it. A tile with two candidates is settled by one clue, which is the usual stall
(two neighbours each waiting for the other).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

from engine import count_rows
from packers.packing import adjacency, seam_neighbours
from referee.board import Board, CheckFailed, board_grid, board_rows, grid_rows, window_cols, window_rows
from referee.frontier import CLUE_SAMPLE, best_cell, clue_cells  # one sample size, one rule for both

STEP = "closure"
"""The verify step's name (FORMAT §10)."""


@dataclass
class Closure:
    """The closure's state: the player's known cells, each tile's wave (0 = unsolved), the work done."""

    board: Board
    known: np.ndarray  # bool G×G: board givens in windows ∪ windows of solved tiles
    wave: list[int]  # per tile: the wave that solved it, 0 while unsolved
    seams: list[set[int]]  # the judge's seam neighbours
    touching: list[list[int]]  # tiles sharing at least one cell
    pending: set[int] = field(default_factory=set)  # to count in the next wave
    seen: dict[int, int] = field(default_factory=dict)  # tile -> view size at its last failed count
    waves: int = 0
    calls: int = 0
    nodes: int = 0
    seconds: float = 0.0

    @property
    def complete(self) -> bool:
        """True when every tile is solved: the board is playable tile by tile."""
        return all(self.wave)

    def solved(self) -> int:
        return sum(1 for w in self.wave if w)

    def playable(self, i: int) -> bool:
        """The judge's rule: the seed tile, or a tile sharing a seam with a solved tile."""
        return i == self.board.seed_tile or any(self.wave[j] for j in self.seams[i])

    def stalled(self) -> list[int]:
        """Playable tiles not solved, ascending: where a player is stuck once the waves stop."""
        return [i for i, w in enumerate(self.wave) if not w and self.playable(i)]

    def unreached(self) -> list[int]:
        """Unsolved tiles that are not even playable."""
        return [i for i, w in enumerate(self.wave) if not w and not self.playable(i)]


def solved_cells(board: Board, solved, i: int, touching: list[set[int]] | None = None) -> np.ndarray:
    """n×n bool: the cells of tile i's window that lie in the window of a tile in ``solved`` (all of
    them when i itself is solved). ``touching[i]``, the tiles sharing a cell with i, narrows the scan."""
    x0, y0, s = board.squares[i]
    out = np.zeros((s + 1, s + 1), dtype=bool)
    if i in solved:
        out[...] = True
        return out
    for j in solved if touching is None else touching[i] & solved:
        xj, yj, sj = board.squares[j]
        r0, r1 = max(y0, yj), min(y0 + s, yj + sj)
        c0, c1 = max(x0, xj), min(x0 + s, xj + sj)
        if r0 <= r1 and c0 <= c1:
            out[r0 - y0 : r1 - y0 + 1, c0 - x0 : c1 - x0 + 1] = True
    return out


def view_mask(board: Board, solved, i: int, touching: list[set[int]] | None = None) -> np.ndarray:
    """Tile i's view under the solved tiles ``solved`` (ids): n×n bool, the definition above — the board
    givens in its window and ``solved_cells``. The referee's puzzle view shows exactly these cells;
    ``Closure.known`` keeps the same cells for the whole board at once."""
    return board.givens[board.window(i)] | solved_cells(board, set(solved), i, touching)


def start(board: Board) -> Closure:
    """Nothing solved; the seed tile is the one tile to count first."""
    known = board.givens & board.tile_cells
    return Closure(
        board,
        known.copy(),
        [0] * len(board.squares),
        seam_neighbours(board.squares),
        [sorted(nb) for nb in adjacency(board.squares)],
        pending={board.seed_tile},
    )


def _window(c: Closure, i: int) -> tuple[int, list[int], list[int], np.ndarray]:
    """(n, value rows, known rows, known mask) of tile i's view."""
    rs, cs = c.board.window(i)
    kw = c.known[rs, cs]
    vw = np.where(kw, c.board.solution[rs, cs], 0)
    return kw.shape[0], grid_rows(vw), grid_rows(kw), kw


def _count(c: Closure, i: int, k: int) -> tuple[int, list]:
    """Candidates of tile i's view, counted up to k: (count, up to k candidates as row ints)."""
    n, vals, known, _kw = _window(c, i)
    return _count_view(c, i, n, vals, known, k)


def _count_view(c: Closure, i: int, n: int, vals: list[int], known: list[int], k: int) -> tuple[int, list]:
    """``_count`` of a view given as row ints."""
    got, sols, nodes = count_rows(n, vals, known, k)
    c.calls += 1
    c.nodes += nodes
    if got == 0:
        raise CheckFailed(
            STEP, f"tile {i} has no solution agreeing with its view (internal error: its own solution should be one)"
        )
    return got, sols


def run(c: Closure) -> Closure:
    """Waves until none solves a tile (see the module docstring). Mutates and returns ``c``.

    The waves read the views from one int per board row (``board_rows``: a window is n shifts, not
    numpy slices) and write ``c.known`` back when they stop."""
    t0 = time.perf_counter()
    b = c.board
    G = b.G
    known, solution = board_rows(c.known), b.solution_rows
    while c.pending:
        found = []
        for i in sorted(c.pending):
            if c.wave[i]:
                continue
            x0, y0, s = b.squares[i]
            kw = window_rows(known, G, x0, y0, s + 1)
            size = sum(map(int.bit_count, kw))
            if c.seen.get(i) == size:
                continue  # its view has not grown since it last failed
            vals = [k & v for k, v in zip(kw, window_rows(solution, G, x0, y0, s + 1), strict=True)]
            if _count_view(c, i, s + 1, vals, kw, 2)[0] == 1:
                found.append(i)
            else:
                c.seen[i] = size
        c.pending = set()
        if not found:
            break
        c.waves += 1
        for i in found:  # views change only after the whole wave was counted
            c.wave[i] = c.waves
            x0, y0, s = b.squares[i]
            cols = window_cols(G, x0, s + 1)
            for y in range(y0, y0 + s + 1):
                known[y] |= cols
        for i in found:
            c.pending.update(j for j in c.touching[i] if not c.wave[j] and c.playable(j))
    c.known[:] = board_grid(known, G)
    c.seconds += time.perf_counter() - t0
    return c


def closure(board: Board) -> Closure:
    """The tile-by-tile closure of ``board`` (its clues included)."""
    return run(start(board))


def stall_message(c: Closure, limit: int = 6) -> str:
    """One line naming where the closure stops: the first stalled tiles and what is left."""
    st = c.stalled()
    left = len(c.wave) - c.solved()
    if not st:
        return (
            f"no tile is playable: {left} of {len(c.wave)} tiles are never reached"
            if c.solved() == 0
            else f"{left} tiles share no seam path with the solved ones"
        )
    names = ", ".join(str(i) for i in st[:limit]) + (", …" if len(st) > limit else "")
    return (
        f"a player solving one tile at a time stalls after {c.solved()} of {len(c.wave)} tiles "
        f"({c.waves} waves): tiles {names} each keep more than one solution in their view"
    )


# ---------------------------------------------------------------- clues


def add_play_clues(board: Board, c: Closure | None = None) -> list[tuple[int, int]]:
    """Clues that make ``board`` playable tile by tile, fewest first (one at a time, the waves going on
    after each). ``board``'s own clues are kept; the result holds only the new ones, in order.
    CheckFailed('closure') when some tiles can never become playable (no seam path), and
    CheckFailed('clues') when a stalled tile has no legal clue cell."""
    c = closure(board) if c is None else c
    added: list[tuple[int, int]] = []
    cache: dict[int, tuple] = {}
    while not c.complete:
        stalled = c.stalled()
        if not stalled:
            raise CheckFailed(STEP, stall_message(c))
        rc = _pick(c, stalled, cache)
        if rc is None:
            raise CheckFailed(
                "clues",
                f"tiles {stalled[:6]} stall and every cell their views lack is held by 3+ tiles: no legal clue exists",
            )
        r, col = rc
        c.known[r, col] = True
        added.append((r, col))
        c.pending = {i for i in stalled if _holds(board, i, r, col)}  # only their views grew
        run(c)
    return added


def _holds(board: Board, i: int, r: int, c: int) -> bool:
    """True when board cell (r, c) lies in tile i's window."""
    x0, y0, s = board.squares[i]
    return y0 <= r <= y0 + s and x0 <= c <= x0 + s


def _pick(c: Closure, stalled: list[int], cache: dict) -> tuple[int, int] | None:
    """The clue cell (see the module docstring); scores are cached per tile and view size."""
    best = None
    for i in stalled:
        size = int(c.known[c.board.window(i)].sum())
        hit = cache.get(i)
        if hit is None or hit[0] != size:
            hit = cache[i] = (size, *_score(c, i))
        if hit[1] is not None and (best is None or hit[1] > best[0]):
            best = (hit[1], hit[2])
    return None if best is None else best[1]


def _score(c: Closure, i: int) -> tuple[tuple | None, tuple[int, int] | None]:
    """(key, cell) of tile i's best clue, or (None, None) when its view lacks no legal cell."""
    b = c.board
    _kw, legal = clue_cells(b, c.known, i)
    if not legal.any():
        return None, None
    got, sols = _count(c, i, CLUE_SAMPLE)
    return best_cell(b, i, legal, sols, lead=(-got,))
