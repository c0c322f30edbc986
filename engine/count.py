"""Public counting API: ``count`` (solutions up to k) and ``backbone`` (cells all solutions share).

Both dispatch to the C kernel ``engine._kernel`` (built by ``pip install -e .``);
the pure-Python reference ``engine.reference`` runs only when asked for with
``impl="python"``. The two implement the same algorithm and report the same
node counts (see ``engine.reference`` for the definition of a node).

For hot loops (thinning) there are row-int entry points that skip numpy:
``count_rows(n, vals, known, k)`` and ``backbone_rows(n, vals, known)``, with
rows as ints (bit ``n-1-c`` = cell (r, c), FORMAT §2) and ``known`` the mask rows.
``ladder_rows`` is the kernel's ladder rating (``engine.ladder`` wraps it), ``puzzle_rows``
a puzzle's row ints, ``c_kernel()`` the built kernel itself for the generator's C-only loops.

Without the built kernel (``tilelib.native`` warns once at import) a call that needs it raises
``NotBuilt``: the engine's Python reference is opt-in (``impl="python"``), ~100x slower, and
has no twin of the thinning loops.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, TypedDict, Unpack

from tilelib.errors import BadInput
from tilelib.native import load_twin, require_twin

if TYPE_CHECKING:  # numpy and tilelib.bits load on first use: `tiles solve` runs on row ints without them
    import numpy as np

    from tilelib.bits import Puzzle

_kernel = load_twin("engine._kernel", fallback="engine calls fail with NotBuilt (impl='python' still runs)")
KERNEL_BUILT = _kernel is not None

C_MAX_N = 16


@dataclass(frozen=True)
class CountResult:
    """``count`` capped at k (-1 if ``max_nodes`` stopped the search); ``solutions`` (n×n uint8
    grids, search order); ``nodes`` visited."""

    count: int
    solutions: list
    nodes: int


@dataclass(frozen=True)
class Backbone:
    """``count0``: no solution. Else ``values``/``known`` (n×n uint8): cells all solutions agree on."""

    count0: bool
    values: np.ndarray
    known: np.ndarray
    nodes: int


def c_kernel():
    """The built ``engine._kernel`` (``NotBuilt`` without it): for the loops only C runs."""
    return require_twin(_kernel, "engine._kernel")


def _impl(n: int, impl: str | None):
    """The module that will run a count of side n: the C kernel unless impl == 'python'."""
    if n < 2 or n % 2:
        raise BadInput(f"grid side must be even and >= 2, got {n}")
    if impl == "python":
        from engine import reference

        return reference
    if impl not in (None, "c"):
        raise BadInput(f"unknown engine implementation {impl!r} (use 'c' or 'python')")
    kernel = c_kernel()
    if n > C_MAX_N:
        raise BadInput(f"the C kernel handles n <= {C_MAX_N}; pass impl='python' for n={n}")
    return kernel


class Search(TypedDict, total=False):
    """The search's options, shared by ``count_rows`` and ``count`` (``count_rows`` says what each
    does; left out, each takes the default written there)."""

    distinct: bool
    keep: int | None
    max_nodes: int | None
    find: bool
    impl: str | None


def count_rows(n: int, vals, known, k: int = 2, **search: Unpack[Search]) -> tuple[int, list, int]:
    """(count capped at k, up to ``keep`` (default k) solutions as tuples of row ints, nodes).

    ``max_nodes``: the search checks after each branch whether it has passed that many nodes
    and if so stops with count -1 (unknown); a search that finishes first returns its result.
    ``find=True``: search line rule first (``engine.reference.PLAN_FIND``), better when the
    grid is sparse and solutions are wanted rather than a proof of uniqueness.
    Hot loops may call ``engine._kernel.count_rows`` (same arguments, n <= 16, ValueError
    on bad rows) directly to skip this wrapper's checks.
    """
    if unknown := search.keys() - Search.__optional_keys__:  # as a misspelt keyword would be
        raise TypeError(f"unexpected search option(s) {sorted(unknown)}; known: {sorted(Search.__optional_keys__)}")
    keep, max_nodes = search.get("keep"), search.get("max_nodes")
    options = {
        "distinct": search.get("distinct", True),
        "keep": k if keep is None else keep,
        "max_nodes": -1 if max_nodes is None else max_nodes,
        "find": search.get("find", False),
    }
    try:
        return _impl(n, search.get("impl")).count_rows(n, vals, known, k, **options)
    except ValueError as e:  # the kernel's own message about the rows; it has no further cause
        raise BadInput(str(e)) from None


def backbone_rows(
    n: int, vals, known, *, distinct: bool = True, impl: str | None = None
) -> tuple[bool, list, list, int]:
    """(no solution, backbone value rows, backbone known-mask rows, nodes)."""
    try:
        return _impl(n, impl).backbone_rows(n, vals, known, distinct=distinct)
    except ValueError as e:  # the kernel's own message about the rows; it has no further cause
        raise BadInput(str(e)) from None


def ladder_rows(n: int, vals, known, solution=None) -> tuple:
    """The C kernel's ladder rating of row ints (``engine.ladder.rate`` in C): (ladder, bifurcations,
    used_unique, needs_unique, needs_bifurcation, solution rows or None, cells filled).
    ``solution`` (a valid grid agreeing with the known cells, or None) only saves time
    (``engine.ladder.rate_rows``)."""
    return _impl(n, None).rate_rows(n, vals, known, solution)


def rows_to_grid(rows, n: int) -> np.ndarray:
    """n×n uint8 grid from row ints (bit n-1-c = cell (r, c))."""
    import numpy as np

    from tilelib.bits import int_line

    if n <= 16:
        b = np.array(rows, dtype=">u2").view(np.uint8).reshape(n, 2)
        return np.unpackbits(b, axis=1)[:, 16 - n :].copy()
    return np.array([int_line(r, n) for r in rows], dtype=np.uint8).reshape(n, n)


def _row_ints(a: np.ndarray) -> list[int]:
    """Row ints of an n×n 0/1 array (bit n-1-c = cell (r, c)); numpy-fast for n <= 16."""
    import numpy as np

    n = a.shape[0]
    if n <= 16:
        packed = np.packbits(np.asarray(a, dtype=np.uint8), axis=1, bitorder="big")
        if packed.shape[1] == 1:
            return [int(x) >> (8 - n) for x in packed[:, 0]]
        return [int(x) >> (16 - n) for x in packed.view(">u2")[:, 0]]
    return [int("".join(map(str, row)), 2) for row in np.asarray(a, dtype=np.uint8)]


def puzzle_rows(p: Puzzle) -> tuple[list[int], list[int]]:
    """``p.row_masks()`` computed with numpy (the same ints, faster)."""
    return _row_ints(p.values), _row_ints(p.known)


def count(puzzle: Puzzle, k: int = 2, **search: Unpack[Search]) -> CountResult:
    """Count the puzzle's solutions up to k (deterministic; line-domain propagation search).

    ``keep`` limits how many solutions are returned (default k; 0 for pure counting,
    e.g. the 8×8 checksum). ``distinct=False`` drops the distinct-lines rule.
    ``max_nodes`` bounds the search: past it the count is -1 (unknown). ``find=True`` uses
    the line-rule-first plan (see ``count_rows``).
    """
    vals, known = puzzle_rows(puzzle)
    c, sols, nodes = count_rows(puzzle.n, vals, known, k, **search)
    return CountResult(c, [rows_to_grid(s, puzzle.n) for s in sols], nodes)


def backbone(puzzle: Puzzle, *, distinct: bool = True, impl: str | None = None) -> Backbone:
    """The cells on which all solutions agree (every cell of a unique puzzle); count0 if none."""
    vals, known = puzzle_rows(puzzle)
    n = puzzle.n
    none, bv, bk, nodes = backbone_rows(n, vals, known, distinct=distinct, impl=impl)
    return Backbone(bool(none), rows_to_grid(bv, n), rows_to_grid(bk, n), nodes)
