"""Frontier solvability (FORMAT §10 step 4), the global count when it stalls, and clue placement.

**Propagation.** Known cells start as the board givens. A tile's candidates
are the solutions of its own window (rules of FORMAT §1 inside the window)
consistent with the cells known so far — enumerated afresh by the engine
(``engine.backbone_rows``), never read from the library's ``alts``. Cells on
which all candidates agree become known. Repeat to a fixpoint. The closure is
monotone (more known cells → fewer candidates → more agreement), so its
result does not depend on the order tiles are visited in; only ``rounds``
does, and it is defined as follows: round 1 visits every tile in id order;
round k+1 visits, in id order, the tiles whose windows gained a known cell
after their visit in round k (a tile later in the same round that gains cells
before its visit sees them then, and is not queued again). Tiles whose
windows are fully known are skipped. Values learnt are the engine's backbone
values; they are checked against the board solution (a mismatch would mean
the tile/seam checks let a bad board through, an internal error).

**Status.** ``frontier`` when every tile cell is known (this proves the board
has exactly one solution). Otherwise the still-unknown cells split into
components (two unknown cells are linked when one tile window holds both);
each component is handed to CP-SAT with the rules of every tile window that
holds one of its cells, known cells as constants, plus "differs from the
board solution somewhere in the component". Infeasible for every component →
``unique``; feasible for one → ``ambiguous`` (the board solution is one
solution, so this counts global solutions up to 2).

**Its own CP-SAT encoding, on purpose.** Every CP-SAT model that makes tiles
(``generator.complete``, ``stitcher.joint``) is built by ``engine.cpsat``;
``_second_solution`` writes the rules again here, deliberately apart from
that builder. This is the verifier: a bug in the shared builder (a clause
too many, a constant folded wrongly) would make the generator and the
stitcher produce boards that only that same builder would call unique; a
count that reuses it could not catch it. Keep the two apart
(``tests/independent_verifier.py`` is a third copy outside the package).

**Clues** (``add_clues``): while propagation stalls, pick one clue, add it,
propagate again from the tiles that hold it. The pick: among stalled tiles
(tiles with unknown cells), enumerate up to ``CLUE_SAMPLE`` candidates of each
and choose the non-junction unknown cell (held by fewer than 3 tiles) that
rules out the most candidates of its tile disagreeing with the solution;
ties → cells held by 2 tiles (they inform both), then the lowest (row, col).
One clue at a time, fewest first.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

from engine import backbone_rows, count_rows
from packers.packing import adjacency
from referee.board import Board, CheckFailed, board_grid, board_rows, grid_rows, rows_grid, window_cols, window_rows
from tilelib.cpmodel import cp_model

CLUE_SAMPLE = 64
"""Candidates per stalled tile that the clue picker looks at."""

CPSAT_TIME_LIMIT = 120.0


@dataclass
class Frontier:
    """Propagation state: known cells and their values, rounds run, engine calls made."""

    board: Board
    known: np.ndarray  # bool G×G
    values: np.ndarray  # int8 G×G (valid where known)
    rounds: int = 0
    calls: int = 0
    nodes: int = 0
    seconds: float = 0.0
    neighbours: list = field(default_factory=list)

    def unknown_tiles(self) -> list[int]:
        """Ids of tiles whose windows still hold unknown cells."""
        return [i for i in range(len(self.board.squares)) if not self.known[self.board.window(i)].all()]

    @property
    def complete(self) -> bool:
        """True when every tile cell is known."""
        return bool(self.known[self.board.tile_cells].all())

    def unknown_count(self) -> int:
        return int((self.board.tile_cells & ~self.known).sum())


@dataclass(frozen=True)
class Settled:
    """Outcome of step 4: status, rounds, unknown cells left after propagation, how the count was done."""

    status: str
    rounds: int
    unknown: int
    method: str  # "propagation" or "cp-sat"
    components: int
    calls: int
    nodes: int
    seconds: float


def start(board: Board) -> Frontier:
    """The state before propagation: known = board givens, values from the board solution there."""
    known = board.givens & board.tile_cells
    values = np.where(known, board.solution, 0).astype(np.int8)
    return Frontier(board, known.copy(), values, neighbours=adjacency(board.squares))


class _Rows:
    """The propagation's working copy of ``f.known`` / ``f.values`` as ``board_rows`` (one int per
    board row), so that a visit reads its window with n shifts and no array: at G = 1000 a visit was
    62 µs of numpy around a 5 µs engine call. ``propagate`` makes one from the arrays when it starts
    and writes it back when it stops."""

    __slots__ = ("G", "known", "values", "solution", "complete")

    def __init__(self, f: Frontier) -> None:
        b = f.board
        self.G = b.G
        self.known = board_rows(f.known)
        self.values = board_rows(f.known & (f.values == 1))
        self.solution = b.solution_rows
        self.complete: set[int] = set()  # tiles seen with every window cell known (known only grows)

    def window(self, rows: list[int], x0: int, y0: int, n: int) -> list[int]:
        return window_rows(rows, self.G, x0, y0, n)

    def write_back(self, f: Frontier) -> None:
        f.known[:] = board_grid(self.known, self.G)
        f.values[:] = board_grid(self.values, self.G)


def _visit(f: Frontier, R: _Rows, i: int) -> list[int]:
    """Backbone of tile i's window under the known cells; record new cells; return neighbours to wake
    (those whose windows hold a newly known cell and still hold an unknown one)."""
    squares = f.board.squares
    x0, y0, s = squares[i]
    n = s + 1
    full = (1 << n) - 1
    kw = R.window(R.known, x0, y0, n)
    if i in R.complete or all(k == full for k in kw):
        R.complete.add(i)
        return []
    none, bv, bk, nodes = backbone_rows(n, R.window(R.values, x0, y0, n), kw)
    f.calls += 1
    f.nodes += nodes
    if none:
        raise CheckFailed(
            "frontier",
            f"tile {i} has no solution consistent with the known cells "
            "(internal error: its own solution should be one)",
        )
    newk = [b & ~k for b, k in zip(bk, kw, strict=True)]
    if not any(newk):
        return []
    sol = R.window(R.solution, x0, y0, n)
    if any((v ^ t) & m for v, t, m in zip(bv, sol, newk, strict=True)):
        raise CheckFailed(
            "frontier", f"tile {i}: propagation derived a value that differs from the board solution (internal error)"
        )
    G = R.G
    shift = G - x0 - n
    new_rows = [m << shift for m in newk]  # the new cells of each window row, at board columns
    new_cols = 0
    for r, m in enumerate(new_rows):
        if m:
            y = y0 + r
            R.known[y] |= m
            R.values[y] |= (bv[r] << shift) & m
            new_cols |= m
    # wake the neighbours whose windows hold a newly known cell
    rows_hit = [r for r, m in enumerate(new_rows) if m]
    rmin, rmax = y0 + rows_hit[0], y0 + rows_hit[-1]
    cmin, cmax = G - new_cols.bit_length(), G - (new_cols & -new_cols).bit_length()
    wake = []
    known, complete = R.known, R.complete
    for j in f.neighbours[i]:
        xj, yj, sj = squares[j]
        if yj > rmax or yj + sj < rmin or xj > cmax or xj + sj < cmin or j in complete:
            continue
        cols = window_cols(G, xj, sj + 1)
        if not any(new_rows[r] & cols for r in range(max(yj, rmin) - y0, min(yj + sj, rmax) - y0 + 1)):
            continue
        if all(known[y] & cols == cols for y in range(yj, yj + sj + 1)):
            complete.add(j)
            continue
        wake.append(j)
    return wake


def propagate(f: Frontier, dirty: set[int] | None = None) -> Frontier:
    """Run rounds until nothing changes (see the module docstring); ``dirty`` = tiles to start from
    (default: all). Mutates and returns ``f``."""
    t0 = time.perf_counter()
    R = _Rows(f)
    todo = set(range(len(f.board.squares))) if dirty is None else set(dirty)
    while todo:
        order = sorted(todo)
        todo = set()
        pending = set(order)
        f.rounds += 1
        for i in order:
            pending.discard(i)
            for j in _visit(f, R, i):
                if j not in pending:
                    todo.add(j)
    R.write_back(f)
    f.seconds += time.perf_counter() - t0
    return f


# ---------------------------------------------------------------- global count


def _components(f: Frontier) -> list[list[int]]:
    """Groups of stalled tiles linked by shared unknown cells (tile ids, ascending)."""
    b = f.board
    stalled = f.unknown_tiles()
    parent = {i: i for i in stalled}

    def find(a: int) -> int:
        while parent[a] != a:
            parent[a] = parent[parent[a]]
            a = parent[a]
        return a

    sset = set(stalled)
    for i in stalled:
        ri, ci = b.window(i)
        for j in f.neighbours[i]:
            if j <= i or j not in sset:
                continue
            rj, cj = b.window(j)
            r0, r1 = max(ri.start, rj.start), min(ri.stop, rj.stop)
            c0, c1 = max(ci.start, cj.start), min(ci.stop, cj.stop)
            if r0 < r1 and c0 < c1 and not f.known[r0:r1, c0:c1].all():
                parent[find(i)] = find(j)
    comps: dict[int, list[int]] = {}
    for i in stalled:
        comps.setdefault(find(i), []).append(i)
    return sorted(comps.values())


def _second_solution(f: Frontier, tiles: list[int]) -> bool:
    """CP-SAT: is there an assignment of the component's unknown cells, obeying every window's rules,
    that differs from the board solution? Raises CheckFailed if CP-SAT cannot decide."""
    b = f.board
    model = cp_model.CpModel()
    var: dict[tuple[int, int], cp_model.IntVar] = {}

    def cell(r: int, c: int) -> int | cp_model.IntVar:
        if f.known[r, c]:
            return int(f.values[r, c])
        v = var.get((r, c))
        if v is None:
            v = var[(r, c)] = model.new_bool_var(f"c{r}_{c}")
        return v

    for i in tiles:
        rs, cs = b.window(i)
        n = rs.stop - rs.start
        g = [[cell(r, c) for c in range(cs.start, cs.stop)] for r in range(rs.start, rs.stop)]
        lines = g + [list(col) for col in zip(*g, strict=True)]
        for line in lines:
            model.add(sum(line) == n // 2)
            for j in range(n - 2):
                trio = line[j : j + 3]
                if all(isinstance(x, int) for x in trio):
                    continue
                model.add_bool_or([x if not isinstance(x, int) else model.new_constant(x) for x in trio])
                model.add_bool_or([x.Not() if not isinstance(x, int) else model.new_constant(1 - x) for x in trio])
        for group in (g, [list(col) for col in zip(*g, strict=True)]):
            for a in range(n):
                for c2 in range(a + 1, n):
                    _differ(model, group[a], group[c2])
    model.add_bool_or([v if b.solution[r, c] == 0 else v.Not() for (r, c), v in var.items()])
    solver = cp_model.CpSolver()
    solver.parameters.num_workers = 1
    solver.parameters.max_time_in_seconds = CPSAT_TIME_LIMIT
    st = solver.Solve(model)
    if st == cp_model.INFEASIBLE:
        return False
    if st in (cp_model.FEASIBLE, cp_model.OPTIMAL):
        return True
    raise CheckFailed(
        "frontier", f"CP-SAT could not settle a component of {len(tiles)} tiles ({solver.StatusName(st)})"
    )


def _differ(model: cp_model.CpModel, a: list, b: list) -> None:
    """Lines a and b (cells: int constants or BoolVars) differ somewhere."""
    lits = []
    for x, y in zip(a, b, strict=True):
        xc, yc = isinstance(x, int), isinstance(y, int)
        if xc and yc:
            if x != y:
                return  # already differ
            continue
        if xc or yc:
            v, k = (y, x) if xc else (x, y)
            lits.append(v.Not() if k == 1 else v)  # differs iff v != k
            continue
        d = model.new_bool_var("")
        model.add_bool_or([x, y]).only_enforce_if(d)
        model.add_bool_or([x.Not(), y.Not()]).only_enforce_if(d)
        lits.append(d)
    model.add_bool_or(lits)  # empty → the lines are equal constants: infeasible, as it should be


def settle(board: Board) -> tuple[Settled, Frontier]:
    """Propagate from the board givens; status frontier, or the CP-SAT count: unique / ambiguous."""
    f = propagate(start(board))
    if f.complete:
        return Settled("frontier", f.rounds, 0, "propagation", 0, f.calls, f.nodes, f.seconds), f
    t0 = time.perf_counter()
    status, ncomp = count_status(f)
    return Settled(
        status, f.rounds, f.unknown_count(), "cp-sat", ncomp, f.calls, f.nodes, f.seconds + time.perf_counter() - t0
    ), f


def count_status(f: Frontier) -> tuple[str, int]:
    """('frontier' | 'unique' | 'ambiguous', components): the global count up to 2 of the board's
    completions of ``f.known`` (every tile window obeying the rules), via CP-SAT per component."""
    if f.complete:
        return "frontier", 0
    comps = _components(f)
    return ("ambiguous" if any(_second_solution(f, c) for c in comps) else "unique"), len(comps)


# ---------------------------------------------------------------- clues


def propose_clue(f: Frontier, cache: dict | None = None) -> tuple[int, int] | None:
    """One clue for a stalled frontier (see the module docstring), or None if no tile cell is
    unknown. CheckFailed('clues') if every unknown cell is a junction (no legal clue exists).

    ``cache`` (tile id -> (known cells in window, best key, cell), and "stalled" -> the stalled tiles)
    lets ``add_clues`` rescore only the tiles whose windows changed since the last pick.
    """
    b = f.board
    cache = {} if cache is None else cache
    best = None
    # tiles only ever gain known cells, so the stalled list can be narrowed instead of rebuilt
    prev = cache.get("stalled")
    stalled = f.unknown_tiles() if prev is None else [i for i in prev if not f.known[b.window(i)].all()]
    cache["stalled"] = stalled
    if not stalled:
        return None
    for i in stalled:
        rs, cs = b.window(i)
        kw = f.known[rs, cs]
        nk = int(kw.sum())
        hit = cache.get(i)
        if hit is None or hit[0] != nk:
            hit = cache[i] = (nk, *_score_tile(f, i))
        if hit[1] is not None and (best is None or hit[1] > best[0]):
            best = (hit[1], hit[2])
    if best is None:
        raise CheckFailed(
            "clues", "propagation stalls and every unknown cell is held by 3+ tiles: no legal clue exists"
        )
    return best[1]


def _score_tile(f: Frontier, i: int) -> tuple[tuple | None, tuple[int, int] | None]:
    """(key, cell) of tile i's best clue cell, or (None, None) if it has no legal unknown cell."""
    b = f.board
    kw, legal = clue_cells(b, f.known, i)
    if not legal.any():
        return None, None
    rs, cs = b.window(i)
    vw = np.where(kw, f.values[rs, cs], 0)
    _c, sols, _nodes = count_rows(kw.shape[0], grid_rows(vw), grid_rows(kw), CLUE_SAMPLE)
    return best_cell(b, i, legal, sols)


def clue_cells(b: Board, known: np.ndarray, i: int) -> tuple[np.ndarray, np.ndarray]:
    """(known, legal) over tile i's window, n×n bool: what ``known`` (G×G) says there, and where a
    clue may go — a cell not known and held by fewer than 3 tiles (FORMAT §9). Both clue rules."""
    rs, cs = b.window(i)
    kw = known[rs, cs]
    return kw, ~kw & (b.owners[rs, cs] < 3)


def best_cell(b: Board, i: int, legal: np.ndarray, sols: list, lead: tuple = ()) -> tuple[tuple, tuple[int, int]]:
    """(key, (row, col)): the clue rule's cell in tile i's window among ``legal`` (n×n bool, not empty)
    — the one where most of the candidates ``sols`` (row ints) differ from the board's solution;
    ties → cells held by 2 tiles, then the lowest (row, col). ``lead`` goes first in every key (the
    closure ranks its tiles before its cells). Shared by both clue rules (FORMAT §9)."""
    rs, cs = b.window(i)
    n = legal.shape[0]
    truth = b.solution[rs, cs] == 1
    wrong = np.zeros((n, n), dtype=np.int64)
    for s in sols:
        wrong += rows_grid(s, n) != truth
    best: tuple[tuple, tuple[int, int]] | None = None
    for r, c in np.argwhere(legal):
        R, C = int(r) + rs.start, int(c) + cs.start
        key = (*lead, int(wrong[r, c]), int(b.owners[R, C] == 2), -R, -C)
        if best is None or key > best[0]:
            best = (key, (R, C))
    if best is None:
        raise ValueError(f"tile {i}: no legal clue cell (the callers pass a non-empty 'legal')")
    return best


def add_clues(board: Board, f: Frontier | None = None) -> list[tuple[int, int]]:
    """Clues that make ``board`` frontier, fewest first (one at a time, re-propagating after each).

    ``board``'s own clues are kept; the returned list holds only the new ones, in the order chosen.
    Pass ``f`` if the board was already propagated (saves one full propagation); it is updated.
    """
    if f is None:
        f = propagate(start(board))
    added: list[tuple[int, int]] = []
    cache: dict = {}
    while not f.complete:
        rc = propose_clue(f, cache)
        if rc is None:
            break
        r, c = rc
        f.known[r, c] = True
        f.values[r, c] = board.solution[r, c]
        added.append((r, c))
        propagate(f, set(holders(board, r, c)))
    return added


def holders(board: Board, r: int, c: int) -> list[int]:
    """Ids of the tiles whose windows hold board cell (r, c) (a linear scan; stops at owners[r, c])."""
    out = []
    want = int(board.owners[r, c])
    for i, (x0, y0, s) in enumerate(board.squares):
        if y0 <= r <= y0 + s and x0 <= c <= x0 + s:
            out.append(i)
            if len(out) == want:
                break
    return out
