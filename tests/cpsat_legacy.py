"""The CP-SAT encoders as they were before ``engine.cpsat`` (frozen copies, commit 244a310).

Kept for two readers only: tests/test_cpsat_rules.py checks that the shared builder writes
``stitcher.joint``'s model field for field as the old code did (so window-aware completions, and
with them daily boards, did not change), and scripts/bench_cpsat.py times old against new in the
same run. Not used by the product. Each encoder is split into "build" (returns the model and
what reading the answer needs) and "solve" so the two can be timed apart.
"""

from __future__ import annotations

import numpy as np
from ortools.sat.python import cp_model


# ---------------------------------------------------------------- generator/complete.py

def complete_build(n: int, vals: np.ndarray, known: np.ndarray, stream, exclude=()):
    """The old ``generator.complete`` model: (model, x, solver) with the solver's parameters set."""
    model = cp_model.CpModel()
    x = [[model.NewBoolVar(f"x{r}_{c}") for c in range(n)] for r in range(n)]
    for r in range(n):
        for c in range(n):
            if known[r, c]:
                model.Add(x[r][c] == int(vals[r, c]))
    half = n // 2
    lines = [[x[r][c] for c in range(n)] for r in range(n)]
    cols = [[x[r][c] for r in range(n)] for c in range(n)]
    for line in lines + cols:
        model.Add(sum(line) == half)
        for j in range(n - 2):
            trio = line[j:j + 3]
            model.AddBoolOr(trio)
            model.AddBoolOr([v.Not() for v in trio])
    _complete_distinct(model, lines, [[(vals[r, c], known[r, c]) for c in range(n)] for r in range(n)])
    _complete_distinct(model, cols, [[(vals[r, c], known[r, c]) for r in range(n)] for c in range(n)])
    for g in exclude:
        model.AddBoolOr([x[r][c].Not() if g[r, c] else x[r][c] for r in range(n) for c in range(n)])
    hint = stream.bits(n * n)
    for i in range(n * n):
        model.AddHint(x[i // n][i % n], (hint >> i) & 1)
    solver = cp_model.CpSolver()
    solver.parameters.num_workers = 1
    solver.parameters.random_seed = stream.randbelow(1 << 30)
    solver.parameters.max_time_in_seconds = 60.0
    return model, x, solver


def complete_solve(model, x, solver) -> np.ndarray | None:
    status = solver.Solve(model)
    if status not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        return None
    n = len(x)
    return np.array([[solver.BooleanValue(x[r][c]) for c in range(n)] for r in range(n)], dtype=np.uint8)


def _complete_distinct(model, lines, fixed) -> None:
    n = len(lines)
    for i in range(n):
        for j in range(i + 1, n):
            if any(fixed[i][c][1] and fixed[j][c][1] and fixed[i][c][0] != fixed[j][c][0] for c in range(n)):
                continue
            diffs = []
            for c in range(n):
                a, b = lines[i][c], lines[j][c]
                d = model.NewBoolVar("")
                model.AddBoolOr([a, b]).OnlyEnforceIf(d)
                model.AddBoolOr([a.Not(), b.Not()]).OnlyEnforceIf(d)
                model.AddBoolOr([a.Not(), b, d])
                model.AddBoolOr([a, b.Not(), d])
                diffs.append(d)
            model.AddBoolOr(diffs)


# ---------------------------------------------------------------- stitcher/joint.py

def joint_build(values, known, squares, others, stream, time_limit: float = 10.0):
    """The old ``stitcher.joint`` model (after its line pre-check): (model, own rows, solver)."""
    model = cp_model.CpModel()
    var: dict = {}

    def cell(r, c):
        v = var.get((r, c))
        if v is None:
            v = int(values[r, c]) if known[r, c] else model.NewBoolVar("")
            var[(r, c)] = v
        return v

    def lines(x, y, m):
        rows = [[cell(y + i, x + j) for j in range(m)] for i in range(m)]
        return rows, [[rows[i][j] for i in range(m)] for j in range(m)]

    def rules(line, m):
        if all(isinstance(v, int) for v in line):
            return
        model.Add(sum(line) == m // 2)
        for j in range(m - 2):
            trio = line[j:j + 3]
            lits = [v for v in trio if not isinstance(v, int)]
            consts = [v for v in trio if isinstance(v, int)]
            if not lits:
                continue
            if 1 not in consts:
                model.AddBoolOr(lits)
            if 0 not in consts:
                model.AddBoolOr([v.Not() for v in lits])

    own = []
    for (x0, y0, s) in squares:
        rows, cols = lines(x0, y0, s + 1)
        for line in rows + cols:
            rules(line, s + 1)
        _joint_distinct(model, rows)
        _joint_distinct(model, cols)
        own.append(rows)
    for (x, y, q) in others:
        rows, cols = lines(x, y, q + 1)
        for line in rows + cols:
            rules(line, q + 1)
    free = [v for v in var.values() if not isinstance(v, int)]
    hint = stream.bits(max(len(free), 1))
    for k, v in enumerate(free):
        model.AddHint(v, (hint >> k) & 1)
    solver = cp_model.CpSolver()
    solver.parameters.num_workers = 1
    solver.parameters.random_seed = stream.randbelow(1 << 30)
    solver.parameters.max_time_in_seconds = time_limit
    solver.parameters.cp_model_presolve = False
    solver.parameters.linearization_level = 0
    solver.parameters.symmetry_level = 0
    solver.parameters.cp_model_probing_level = 0
    return model, own, solver


def joint_solve(model, own, solver) -> list[np.ndarray] | None:
    status = solver.Solve(model)
    if status not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        return None
    return [np.array([[v if isinstance(v, int) else int(solver.BooleanValue(v)) for v in row] for row in rows],
                     dtype=np.uint8) for rows in own]


def _joint_distinct(model, lines) -> None:
    m = len(lines)
    for a in range(m):
        for b in range(a + 1, m):
            la, lb = lines[a], lines[b]
            if any(isinstance(u, int) and isinstance(v, int) and u != v for u, v in zip(la, lb)):
                continue
            diffs = []
            for u, v in zip(la, lb):
                if isinstance(u, int) and isinstance(v, int):
                    continue
                if isinstance(u, int) or isinstance(v, int):
                    const, lit = (u, v) if isinstance(u, int) else (v, u)
                    diffs.append(lit.Not() if const else lit)
                    continue
                d = model.NewBoolVar("")
                model.AddBoolOr([u, v]).OnlyEnforceIf(d)
                model.AddBoolOr([u.Not(), v.Not()]).OnlyEnforceIf(d)
                diffs.append(d)
            model.AddBoolOr(diffs)
