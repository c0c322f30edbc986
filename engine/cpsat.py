"""The Takuzu rules (FORMAT §1) as one CP-SAT model builder, shared by every CP-SAT caller that makes tiles.

``RulesModel(values, known)`` holds a model over the cells of one board (a
tile is a board of one window): a known cell is a constant, an unknown cell a
Boolean created the first time a window touches it. ``window(x, y, n)`` adds
one n×n window's rules — balance and no three equal in a row on every row and
column, and (``distinct=True``) distinct rows and distinct columns — with the
constants folded in: a valid line of constants adds nothing (an invalid one an
empty clause), a trio already holding a 0 needs no "not three zeros" clause. ``differ(rows, grid)`` adds "these
cells differ from ``grid`` somewhere", ``solve`` hints every cell Boolean
from the caller's stream and runs CP-SAT with one worker and a seed from the
same stream, so the answer is a function of the inputs and the stream.

Distinctness, per pair of lines whose constants do not already differ: one
literal per cell pair that can differ and one clause "some literal holds";
against a constant the literal is the free cell itself (or its negation),
between two free cells it is a new ``d`` with ``d -> (u != v)`` (two clauses;
the converse is not needed for "differ somewhere").

Users: ``generator.complete`` (one window: a tile around fixed boundary
cells) and ``stitcher.joint`` (a square's window with its neighbours' windows,
the neighbours without distinctness). ``referee.frontier`` keeps its own
encoding on purpose: the verifier must not share the code it verifies.

Speed: the constraints are written as one protobuf text (plain ints: variable
``i`` is literal ``i``, its negation ``~i``) parsed by the proto in one C++
call, and the variables are copies of one template; this skips the Python
expression layer of ``cp_model`` (``Add``, ``AddBoolOr``, ``Not``: ~2 µs per
constraint through pybind) and the ``CpModel`` object itself (1 ms of method
aliasing per model on OR-tools 9.15). The proto is field for field the one
the ``cp_model`` calls made before (tests/data/joint_protos.json holds the
old models' digests), so the solver's answer is too.
"""

from __future__ import annotations

from functools import cache

import numpy as np

from tilelib.cpmodel import cp_model

_PROTO = type(cp_model.CpModel().Proto())  # cp_model_pb2's class before OR-tools 9.14, the C++ one after
_TEMPLATE = _PROTO()
_BOOL = _TEMPLATE.variables.add()  # every variable is a Boolean: domain [0, 1]
_BOOL.domain.extend((0, 1))


def _merge_text(proto, text: str) -> None:
    """Append the protobuf text ``text`` to ``proto`` (C++ parser; google.protobuf's before 9.14)."""
    if hasattr(proto, "merge_text_format"):
        if not proto.merge_text_format(text):
            raise ValueError("CP-SAT model text did not parse")  # a bug here, not bad input
    else:  # pragma: no cover (OR-tools < 9.14)
        from google.protobuf import text_format

        text_format.Merge(text, proto)


INFEASIBLE, FEASIBLE, OPTIMAL = cp_model.INFEASIBLE, cp_model.FEASIBLE, cp_model.OPTIMAL


class _ProtoModel:
    """What ``CpSolver.Solve`` reads of a model: its proto (``model.proto``)."""

    __slots__ = ("proto",)

    def __init__(self, proto) -> None:
        self.proto = proto

    def Proto(self):  # noqa: N802 (cp_model's name)
        return self.proto


@cache
def _trios(m: int) -> tuple[int, ...]:
    return tuple(range(m - 2))


def _valid_constants(line: list[int], m: int) -> bool:
    """A line of constants obeys balance and no three equal in a row."""
    return sum(~v for v in line) == m // 2 and not any(line[j] == line[j + 1] == line[j + 2] for j in range(m - 2))


class RulesModel:
    """A CP-SAT model of Takuzu windows over the cells of one board (see the module docstring).

    ``values`` and ``known`` are 2-D arrays of the board (0/1; ``values`` read only where
    ``known``). Cell codes in the rows ``window`` returns: a variable index ``>= 0``, or ``~v`` for
    a constant ``v`` (-1 is a known 0, -2 a known 1)."""

    __slots__ = ("values", "known", "_proto", "_text", "_flushed", "_index", "_width", "nvars", "cell_vars")

    def __init__(self, values: np.ndarray, known: np.ndarray) -> None:
        self.values = values
        self.known = known
        self._proto = _PROTO()
        self._text: list[str] = []  # constraints not yet in the proto, as protobuf text
        self._flushed = 0  # variables already in the proto
        self._index: dict[int, int] = {}  # r * width + c -> cell code
        self._width = known.shape[1]
        self.nvars = 0
        self.cell_vars: list[int] = []  # the cells' variables, in creation order (hint order)

    @property
    def proto(self):
        """The CpModelProto with everything added so far."""
        if self._text:
            _merge_text(self._proto, "".join(self._text))
            self._text.clear()
        if self._flushed < self.nvars:
            self._proto.variables.extend([_BOOL] * (self.nvars - self._flushed))
            self._flushed = self.nvars
        return self._proto

    # ------------------------------------------------------------ building

    def _new_var(self) -> int:
        self.nvars += 1
        return self.nvars - 1

    def cells(self, x: int, y: int, n: int) -> list[list[int]]:
        """Codes of the n×n window at column x, row y (row-major; new variables made in that order)."""
        known = self.known[y : y + n, x : x + n].tolist()
        values = self.values[y : y + n, x : x + n].tolist()
        index, width, made = self._index, self._width, self.cell_vars
        rows = []
        for i in range(n):
            base = (y + i) * width + x
            kr, vr = known[i], values[i]
            row = []
            for j in range(n):
                code = index.get(base + j)
                if code is None:
                    if kr[j]:
                        code = ~int(vr[j])
                    else:
                        code = self._new_var()
                        made.append(code)
                    index[base + j] = code
                row.append(code)
            rows.append(row)
        return rows

    def window(self, x: int, y: int, n: int, *, distinct: bool = True) -> list[list[int]]:
        """Add the rules of the n×n window at (x, y); return its rows of cell codes.

        Rows' then columns' balance and no-three rules, then (``distinct``) distinct rows and
        distinct columns. Constants that break a rule make the model infeasible (an empty clause;
        callers that want a cheaper "no" check the lines first, as ``stitcher.joint`` does)."""
        rows = self.cells(x, y, n)
        cols = [list(c) for c in zip(*rows, strict=True)]
        for line in rows:
            self._line(line, n)
        for line in cols:
            self._line(line, n)
        if distinct:
            self._distinct(rows)
            self._distinct(cols)
        return rows

    def _line(self, line: list[int], m: int) -> None:
        """Balance and no three equal in a row on one line of codes."""
        out = self._text
        free = [v for v in line if v >= 0]
        if not free:
            if not _valid_constants(line, m):
                out.append("constraints{bool_or{}}")  # an empty clause: infeasible
            return
        rhs = m // 2 - sum(~v for v in line if v < 0)
        free.sort()  # cp_model's order for sum(line) == k
        out.append(f"constraints{{linear{{vars:{free} coeffs:{[1] * len(free)} domain:[{rhs},{rhs}]}}}}")
        for j in _trios(m):
            trio = line[j : j + 3]
            lits = [v for v in trio if v >= 0]
            if not lits:
                if trio[0] == trio[1] == trio[2]:
                    out.append("constraints{bool_or{}}")  # three equal constants
                continue
            if -2 not in trio:  # no known 1: not three zeros
                out.append(f"constraints{{bool_or{{literals:{lits}}}}}")
            if -1 not in trio:  # no known 0: not three ones
                out.append(f"constraints{{bool_or{{literals:{[~v for v in lits]}}}}}")

    def _distinct(self, lines: list[list[int]]) -> None:
        """Every two lines differ somewhere (pairs whose constants already differ are skipped)."""
        out = self._text
        m = len(lines)
        for a in range(m):
            la = lines[a]
            for b in range(a + 1, m):
                lb = lines[b]
                if any(u < 0 and v < 0 and u != v for u, v in zip(la, lb, strict=True)):
                    continue
                diffs = []
                for u, v in zip(la, lb, strict=True):
                    if u < 0:
                        if v >= 0:
                            diffs.append(v if u == -1 else ~v)
                    elif v < 0:
                        diffs.append(u if v == -1 else ~u)
                    else:
                        d = self.nvars
                        self.nvars += 1
                        out.append(
                            f"constraints{{enforcement_literal:{d} bool_or{{literals:[{u},{v}]}}}}"
                            f"constraints{{enforcement_literal:{d} bool_or{{literals:[{~u},{~v}]}}}}"
                        )
                        diffs.append(d)
                out.append(f"constraints{{bool_or{{literals:{diffs}}}}}")

    def differ(self, rows: list[list[int]], grid: np.ndarray) -> None:
        """The cells of ``rows`` differ from ``grid`` (same shape, 0/1) somewhere."""
        lits = []
        for row, want in zip(rows, np.asarray(grid).tolist(), strict=True):
            for code, g in zip(row, want, strict=True):
                if code >= 0:
                    lits.append(~code if g else code)
                elif ~code != g:
                    return  # a constant already differs
        self._text.append(f"constraints{{bool_or{{literals:{lits}}}}}")

    # ------------------------------------------------------------ solving

    def solve(self, stream, time_limit: float, *, lean: bool = True) -> Solved:
        """Hint every cell variable from ``stream`` (``bits(max(cells, 1))``, bit k for the k-th
        cell made), draw ``random_seed = stream.randbelow(2^30)``, solve with one worker.

        ``lean`` turns presolve, LP relaxation, symmetry detection, probing and SAT inprocessing
        off (these models are small SAT problems; see docs/DECISIONS.md)."""
        made = self.cell_vars
        hint = stream.bits(max(len(made), 1))
        proto = self.proto
        sh = proto.solution_hint
        sh.vars.extend(made)
        sh.values.extend([(hint >> k) & 1 for k in range(len(made))])
        solver = cp_model.CpSolver()
        p = solver.parameters
        p.num_workers = 1
        p.random_seed = stream.randbelow(1 << 30)
        p.max_time_in_seconds = time_limit
        if lean:
            p.cp_model_presolve = False
            p.linearization_level = 0
            p.symmetry_level = 0
            p.cp_model_probing_level = 0
            # SAT inprocessing (clause vivification, subsumption, ... between restarts) costs more
            # than it saves on models this small: 529 window-aware models captured from a warm
            # G = 301 stitch solved in 5.54 s with it and 3.02 s without (CPU), same verdicts.
            p.use_sat_inprocessing = False
        status = solver.Solve(_ProtoModel(proto))
        sol = list(solver.response_proto.solution) if status in (OPTIMAL, FEASIBLE) else None
        return Solved(status, solver.StatusName(status), sol)


class Solved:
    """CP-SAT's answer: ``status`` (cp_model's enum), its name, and the variable values if found."""

    __slots__ = ("status", "name", "solution")

    def __init__(self, status, name: str, solution: list[int] | None) -> None:
        self.status, self.name, self.solution = status, name, solution

    @property
    def found(self) -> bool:
        return self.solution is not None

    def grid(self, rows: list[list[int]]) -> np.ndarray:
        """The uint8 values of a window's rows of codes (constants as they are)."""
        sol = self.solution
        assert sol is not None, "grid() of an answer without a solution"  # callers ask only when ``found``
        return np.array([[sol[v] if v >= 0 else ~v for v in row] for row in rows], dtype=np.uint8)
