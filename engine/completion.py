"""The one way a completion is decided: the C line-domain search first, CP-SAT for what it leaves open.

Every completion the project asks for — a drained miss's tile around its fixed boundary
(``generator.complete``), a square's window with its unplaced neighbours (``stitcher.joint``), a
repair's group of squares — is a ``Windows`` problem (``engine.windows``). ``decide`` hands it to
the C search (``engine.windows.solve``, seeded from ``stream.child("c")``), which answers within
its node budget for nearly all of them: a grid, or a proof that none exists. Only a problem the
search leaves ``UNDECIDED`` is built as ``engine.cpsat``'s model (the same rules, windows in the
same order) and solved by CP-SAT with ``stream`` itself, exactly as before the C search existed.
``tally(n, path)`` — e.g. ``StitchStats.bump`` — counts which path decided a problem whose first
window has side n (``DECIDED_C`` or ``DECIDED_CPSAT``), so a night reports how often CP-SAT was
still needed.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from engine import windows as cwin
from engine.cpsat import INFEASIBLE, RulesModel
from tilelib.rng import Stream

DECIDED_C, DECIDED_CPSAT = "decided_c", "decided_cpsat"
Tally = Callable[[int, str], None]


@dataclass(frozen=True)
class Decision:
    """``grids``: each window's n×n grid, in the problem's order (None: no completion found);
    ``proof``: None comes with a proof that none exists (C's exhausted search or CP-SAT's
    INFEASIBLE), not a time limit; ``path``: DECIDED_C or DECIDED_CPSAT; ``status``: CP-SAT's status
    name when it decided, else the C search's (``found``/``none``)."""

    grids: list | None
    proof: bool
    path: str
    status: str


def decide(
    problem: cwin.Windows,
    stream: Stream,
    time_limit: float,
    *,
    max_nodes: int = cwin.MAX_NODES,
    tally: Tally | None = None,
) -> Decision:
    """Complete ``problem`` (see the module doc); CP-SAT runs with ``time_limit`` seconds only
    when the C search passes ``max_nodes``."""
    got = cwin.solve(problem, cwin.seed_of(stream.child("c")), max_nodes)
    n = problem.windows[0][2]
    if got.status != cwin.UNDECIDED:
        if tally is not None:
            tally(n, DECIDED_C)
        if got.status == cwin.NONE:
            return Decision(None, True, DECIDED_C, "none")
        return Decision([got.window(x, y, m) for (x, y, m, _d) in problem.windows], False, DECIDED_C, "found")
    if tally is not None:
        tally(n, DECIDED_CPSAT)
    model, rows = cpsat_model(problem)
    solved = model.solve(stream, time_limit, lean=True)
    if not solved.found:
        return Decision(None, solved.status == INFEASIBLE, DECIDED_CPSAT, solved.name)
    return Decision([solved.grid(r) for r in rows], False, DECIDED_CPSAT, solved.name)


def cpsat_model(problem: cwin.Windows) -> tuple[RulesModel, list]:
    """``problem`` as ``engine.cpsat``'s model (before hints and solving) and every window's rows
    of cells: the windows in order, each with or without distinct lines, then the exclusions."""
    model = RulesModel(np.asarray(problem.values), np.asarray(problem.known))
    rows = [model.window(x, y, n, distinct=d) for (x, y, n, d) in problem.windows]
    for k, g in problem.exclude:
        model.differ(rows[k], g)
    return model, rows
