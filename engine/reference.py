"""Readable pure-Python line-domain counter: the reference the C kernel must match node for node.

Model. A grid of side n has 2n *lines*: rows 0..n-1 are lines 0..n-1 and
columns 0..n-1 are lines n..2n-1. Each line keeps a *domain*: the set of valid
line patterns (``engine.lines``) still consistent with what is known, as a
Python-int bitset over pattern ranks. Position i of a line is its i-th cell
(column i of a row, row i of a column).

Propagation (to a fixpoint, order-free):
  * a domain that becomes empty is a contradiction;
  * a position on which every pattern of a line's domain agrees is a known
    cell; the crossing line's domain keeps only patterns with that value there;
  * distinct lines (``distinct=True``): a line whose domain is a single
    pattern removes that pattern from every other line of the same
    orientation.
Every rule only shrinks domains and is monotone, so the fixpoint (and whether
it holds an empty domain) does not depend on the order lines are processed in.

Search. After propagation, if every line's domain is a single pattern the grid
is a solution. Otherwise branch, by one of two rules:
  * cell rule (tried first): the open cell whose row and column domains are
    smallest together (minimum |D_row| + |D_col|; ties: first cell in
    row-major order), value 0 then 1, each try fixing the cell and
    propagating;
  * line rule (fallback): the line with the smallest domain of size > 1
    (ties: lowest line index), its patterns in ascending int order, each try
    restricting the line to that pattern.
A search follows a plan: a list of (rule, budget) attempts, each searching
afresh from the same propagated state and dropping its results if it runs
past its node budget (the last attempt has no budget). ``count`` uses
PLAN_COUNT = cell rule (16·n²), then line rule; ``backbone``'s probes, which
in sparse grids mostly look for one solution, use PLAN_FIND = line rule
(n²/4), cell rule (32·n²), then line rule. The search stops once k solutions are
found. Why both rules: on minimal unique 16×16 puzzles the cell rule visits
~15× fewer nodes (one puzzle: 2,267 vs 61,585), but on nearly empty grids it
can bury itself in a solution-free subtree whose duplicate lines propagation
only sees late (2,000,000+ nodes on a 12×12 with six givens, where the line
rule needs 21). (Measured: PLAN_FIND for counting cut sparse k=2 counts >10×
but slowed 16×16 thinning passes by ~15%; for backbone it cuts the nodes of
sparse probes ~2.4× and costs minimal unique puzzles ~20% more: 470 -> 573 at n=16.)

NODE (the checksum unit both implementations report): one propagation run to
a fixpoint on a search state. The root counts 1; every branch tried, a
(cell, value) or a (line, pattern), counts 1, whether its propagation succeeds or fails;
nodes of an abandoned attempt of a plan still count. ``backbone`` adds
1 per cell-flip probe on top of the nodes of the searches it runs.
"""

from __future__ import annotations

from engine.lines import tables


class _Ctx:
    __slots__ = (
        "n",
        "masks",
        "pats",
        "distinct",
        "k",
        "keep",
        "count",
        "sols",
        "nodes",
        "line_mode",
        "aborted",
        "limit",
        "max_nodes",
        "stopped",
    )

    def __init__(self, n: int, distinct: bool, k: int, keep: int) -> None:
        t = tables(n)
        self.n, self.masks, self.pats = n, t.cell_mask, t.patterns
        self.distinct, self.k, self.keep = distinct, k, keep
        self.count, self.nodes = 0, 0
        self.sols: list[tuple[int, ...]] = []
        self.line_mode, self.aborted = False, False
        self.limit: float = 0  # a node count, or infinity for a search without a budget (``_run``)
        self.max_nodes, self.stopped = -1, False


def _initial(ctx: _Ctx, vals: list[int], known: list[int]):
    """Root state (doms, kmask, settled) from row ints; kmask bit i = position i known."""
    n, masks = ctx.n, ctx.masks
    for name, rows in (("vals", vals), ("known", known)):
        if len(rows) != n:
            raise ValueError(f"{name} must hold n={n} row ints")
        if any(not 0 <= int(x) < (1 << n) for x in rows):
            raise ValueError(f"{name} rows must be ints of {n} bits")
    full = tables(n).full
    doms = [full] * (2 * n)
    kmask = [0] * (2 * n)
    for r in range(n):
        for c in range(n):
            if (known[r] >> (n - 1 - c)) & 1:
                v = (vals[r] >> (n - 1 - c)) & 1
                doms[r] &= masks[c][v]
                doms[n + c] &= masks[r][v]
                kmask[r] |= 1 << c
                kmask[n + c] |= 1 << r
    return doms, kmask, [False] * (2 * n)


def _propagate(ctx: _Ctx, st, queue: int) -> bool:
    """Run the rules to a fixpoint starting from the lines in bitmask ``queue``; False on contradiction."""
    n, masks = ctx.n, ctx.masks
    doms, kmask, settled = st
    while queue:
        L = (queue & -queue).bit_length() - 1
        queue &= queue - 1
        D = doms[L]
        if not D:
            return False
        km = kmask[L]
        idx = L if L < n else L - n
        for i in range(n):
            if (km >> i) & 1:
                continue
            if not D & masks[i][1]:
                v = 0
            elif not D & masks[i][0]:
                v = 1
            else:
                continue
            km |= 1 << i
            X = n + i if L < n else i  # the crossing line
            if not (kmask[X] >> idx) & 1:
                kmask[X] |= 1 << idx
                doms[X] &= masks[idx][v]
                queue |= 1 << X
        kmask[L] = km
        if ctx.distinct and not settled[L] and not D & (D - 1):
            settled[L] = True
            base = 0 if L < n else n
            for S in range(base, base + n):
                if S != L and doms[S] & D:
                    doms[S] &= ~D
                    queue |= 1 << S
    return True


def _copy(st):
    return (st[0][:], st[1][:], st[2][:])


def _restrict(ctx: _Ctx, st, r: int, c: int, v: int) -> int:
    """Make cell (r, c) = v in state st; return the queue bitmask of the two lines touched."""
    n, masks = ctx.n, ctx.masks
    st[0][r] &= masks[c][v]
    st[0][n + c] &= masks[r][v]
    st[1][r] |= 1 << c
    st[1][n + c] |= 1 << r
    return (1 << r) | (1 << (n + c))


def _sizes(st) -> list[int]:
    return [d.bit_count() for d in st[0]]


def _branch_cell(ctx: _Ctx, st, sizes: list[int]) -> tuple[int, int]:
    """Cell rule: the open cell (r, c) minimising |D_row r| + |D_col c|, first in row-major order on ties."""
    n, kmask = ctx.n, st[1]
    full = (1 << n) - 1
    best, size = None, 1 << 30
    for r in range(n):
        free = full & ~kmask[r]
        for c in range(n):
            if (free >> c) & 1 and sizes[r] + sizes[n + c] < size:
                best, size = (r, c), sizes[r] + sizes[n + c]
    # a line of more than one pattern has an open cell: the caller branches only when one exists
    assert best is not None
    return best


def _done(ctx: _Ctx) -> bool:
    """After a child search: stop when k solutions are found, or a node budget runs out
    (``max_nodes``: the caller's cap, reported as stopped; ``limit``: this plan's cap, aborted)."""
    if ctx.count >= ctx.k or ctx.stopped or ctx.aborted:
        return True
    if 0 <= ctx.max_nodes < ctx.nodes:
        ctx.stopped = True
        return True
    if ctx.nodes > ctx.limit:
        ctx.aborted = True
        return True
    return False


def _search(ctx: _Ctx, st) -> None:
    """Count solutions below a propagated state, recording up to ``keep`` of them."""
    sizes = _sizes(st)
    if all(s == 1 for s in sizes):
        ctx.count += 1
        if len(ctx.sols) < ctx.keep:
            ctx.sols.append(tuple(ctx.pats[d.bit_length() - 1] for d in st[0][: ctx.n]))
        return
    if ctx.line_mode:
        # line rule: smallest domain of size > 1 (lowest line on ties), patterns ascending
        L = min((s, i) for i, s in enumerate(sizes) if s > 1)[1]
        D = st[0][L]
        while D:
            bit = D & -D
            D ^= bit
            ctx.nodes += 1
            child = _copy(st)
            child[0][L] = bit
            if _propagate(ctx, child, 1 << L):
                _search(ctx, child)
            if _done(ctx):
                return
        return
    r, c = _branch_cell(ctx, st, sizes)
    for v in (0, 1):
        ctx.nodes += 1
        child = _copy(st)
        if _propagate(ctx, child, _restrict(ctx, child, r, c, v)):
            _search(ctx, child)
        if _done(ctx):
            return


# Search plans: (rule, budget) attempts, each searching afresh from the same propagated
# state until one finishes within its budget of quarters·n²/4 nodes (None: no budget).
PLAN_COUNT = (("cell", 64), ("line", None))  # 16·n², then unbounded: proofs dominate
PLAN_FIND = (("line", 1), ("cell", 128), ("line", None))  # n²/4, 32·n²: mostly finding a solution


def _run(ctx: _Ctx, st, plan=PLAN_COUNT) -> None:
    """Search below a propagated state by ``plan`` (see PLAN_COUNT / PLAN_FIND)."""
    for rule, quarters in plan:
        ctx.line_mode, ctx.aborted, ctx.count, ctx.sols = rule == "line", False, 0, []
        ctx.limit = float("inf") if quarters is None else ctx.nodes + quarters * ctx.n * ctx.n // 4
        _search(ctx, st)
        if not ctx.aborted or ctx.stopped:
            return


def count_rows(
    n: int,
    vals: list[int],
    known: list[int],
    k: int = 2,
    *,
    distinct: bool = True,
    keep: int | None = None,
    max_nodes: int = -1,
    find: bool = False,
) -> tuple[int, list[tuple[int, ...]], int]:
    """(count capped at k, up to ``keep`` solutions as row-int tuples in search order, nodes).

    With ``max_nodes >= 0`` the search stops once its node count passes max_nodes and the
    count returned is -1 (unknown). ``find=True`` searches by PLAN_FIND instead of PLAN_COUNT."""
    ctx = _Ctx(n, distinct, k, k if keep is None else keep)
    ctx.max_nodes = max_nodes
    st = _initial(ctx, vals, known)
    if k <= 0:
        return 0, [], 0
    ctx.nodes = 1
    if _propagate(ctx, st, (1 << (2 * n)) - 1):
        _run(ctx, st, PLAN_FIND if find else PLAN_COUNT)
    return (-1 if ctx.stopped else min(ctx.count, k)), ctx.sols, ctx.nodes


def backbone_rows(
    n: int, vals: list[int], known: list[int], *, distinct: bool = True
) -> tuple[bool, list[int], list[int], int]:
    """(no_solution, backbone value rows, backbone known rows, nodes).

    The backbone is the set of cells on which every solution agrees. Method:
    propagate the root; find one solution S; then for each cell still open (row-major)
    that no solution so far has shown to vary, probe "cell = opposite of S" with a
    k=1 search. A solution found clears every cell where it differs from S; no
    solution proves the cell is backbone, and it is added to the root state so later
    probes start stronger.
    """
    ctx = _Ctx(n, distinct, 1, 1)
    root = _initial(ctx, vals, known)
    ctx.nodes = 1
    if not _propagate(ctx, root, (1 << (2 * n)) - 1):
        return True, [0] * n, [0] * n, ctx.nodes
    _run(ctx, _copy(root), PLAN_FIND)
    if not ctx.sols:
        return True, [0] * n, [0] * n, ctx.nodes
    sol = ctx.sols[0]
    varies = [0] * n  # row ints: cells shown to differ between solutions
    for r in range(n):
        for c in range(n):
            if (root[1][r] >> c) & 1 or (varies[r] >> (n - 1 - c)) & 1:
                continue
            v = ((sol[r] >> (n - 1 - c)) & 1) ^ 1
            ctx.count, ctx.sols = 0, []
            ctx.nodes += 1
            child = _copy(root)
            if _propagate(ctx, child, _restrict(ctx, child, r, c, v)):
                _run(ctx, child, PLAN_FIND)
            if ctx.sols:
                other = ctx.sols[0]
                for rr in range(n):
                    varies[rr] |= other[rr] ^ sol[rr]
            else:  # backbone cell: strengthen the root with it
                ok = _propagate(ctx, root, _restrict(ctx, root, r, c, v ^ 1))
                assert ok, "a backbone cell cannot contradict a state that has a solution"
    full = (1 << n) - 1
    bknown = [full ^ varies[r] for r in range(n)]
    bvals = [sol[r] & bknown[r] for r in range(n)]
    return False, bvals, bknown, ctx.nodes
