"""Edge lookups in all 16 orientations (FORMAT §5, questions 1–3).

The library indexes only the canonical sides. A query is a ``Constraint`` on
the oriented sides (whole or partly known) plus optional feature filters; it
is pulled back through each of the 16 transforms (``constraint.pull_back``)
to a condition on the canonical columns, and the 16 conditions run as one
``UNION ALL`` statement returning ``(hash, t)`` pairs such that
``transform(canonical tile, t)`` satisfies the constraint. The benchmark in
``scripts/bench_lookup.py`` compares this with indexing all 16 oriented edge
tuples (see BENCHMARKS.md).

Partly known sides become ``IN (...)`` over the valid lines that match the
known bits (a tile's edge is always a valid line), so the edge indexes are
still used; when every constrained side is partial and the list is long, the
condition falls back to a bit test.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache, lru_cache

from tilelib.bits import reverse_bits
from tilelib.constraint import Constraint, pull_back
from tilelib.errors import BadInput
from tilelib.rules import valid_lines
from tilelib.symmetry import EDGE_MAP, TRANSFORMS, inverse, transform_side_mask

SIDE_COLUMNS = ("top", "right", "bottom", "left")
FILTER_COLUMNS = (
    "m",
    "ladder",
    "bifurcations",
    "used_unique",
    "needs_unique",
    "needs_bifurcation",
    "pin_depth",
    "version",
    "blank",
)
MAX_IN = 256


@lru_cache(maxsize=65536)
def matching_lines(n: int, mask: int, value: int) -> tuple[int, ...]:
    """Valid n-bit lines whose bits under ``mask`` equal ``value``."""
    return tuple(v for v in valid_lines(n) if v & mask == value)


def _side_condition(n: int, col: str, mask: int, value: int) -> tuple[str, list[int]]:
    if mask == (1 << n) - 1:
        return f"{col} = ?", [value]
    lines = matching_lines(n, mask, value)
    if not lines:
        return "0", []
    if len(lines) <= MAX_IN:
        return f"{col} IN ({','.join('?' * len(lines))})", list(lines)
    return f"({col} & ?) = ?", [mask, value]


def _filter_conditions(filters: Mapping[str, object]) -> tuple[list[str], list]:
    conds, params = [], []
    for col, want in filters.items():
        if col not in FILTER_COLUMNS:
            raise BadInput(f"cannot filter tiles by {col!r}; use one of {FILTER_COLUMNS} or seam_mask")
        if isinstance(want, tuple):
            lo, hi = want
            conds.append(f"{col} BETWEEN ? AND ?")
            params += [lo, hi]
        else:
            conds.append(f"{col} = ?")
            params.append(want)
    return conds, params


def build_query(
    c: Constraint, filters: Mapping[str, object] | None = None, seam_mask: int | None = None, transforms=TRANSFORMS
) -> tuple[str, list]:
    """SQL and parameters answering ``c`` (+ filters) in every transform of ``transforms``.

    ``seam_mask`` is the wanted seam mask of the *oriented* tile (pulled back like the sides).
    When every constrained side is whole, the SQL text depends only on the shape of
    the query and is cached; only the parameters are computed per call (profiling
    showed query building, not SQLite, dominated a lookup).
    """
    full = (1 << c.n) - 1
    if all(m in (0, full) for m in c.masks) and tuple(transforms) == TRANSFORMS:
        filters = filters or {}
        shape = tuple((k, isinstance(v, tuple)) for k, v in filters.items())
        sql = _whole_side_sql(c.n, c.full_mask, shape, seam_mask is not None)
        return sql, _whole_side_params(c, filters, seam_mask)
    return _general_query(c, filters, seam_mask, transforms)


@lru_cache(maxsize=4096)
def _whole_side_sql(n: int, side_bits: int, filter_shape: tuple, with_seam: bool) -> str:
    fconds, _ = _filter_conditions({k: (0, 0) if rng else 0 for k, rng in filter_shape})
    parts = []
    for t in TRANSFORMS:
        conds = ["n = ?"] + [f"{SIDE_COLUMNS[src.side]} = ?" for s, src in enumerate(EDGE_MAP[t]) if side_bits >> s & 1]
        if with_seam:
            conds.append("seam_mask = ?")
        parts.append(f"SELECT hash, {t} AS t FROM tiles WHERE {' AND '.join(conds + fconds)}")
    return " UNION ALL ".join(parts) + " ORDER BY hash, t"


@cache
def _reversed_table(n: int) -> list[int]:
    return [reverse_bits(v, n) for v in range(1 << n)]


def _whole_side_params(c: Constraint, filters: Mapping[str, object], seam_mask: int | None) -> list:
    n, full = c.n, (1 << c.n) - 1
    rev = _reversed_table(n)
    _, fparams = _filter_conditions(filters)
    sides = [s for s in range(4) if c.masks[s]]
    params: list = []
    for t in TRANSFORMS:
        params.append(n)
        emap = EDGE_MAP[t]
        for s in sides:
            src, v = emap[s], c.values[s]
            # invert the edge map: canonical side value from the oriented one
            if src.complemented:
                v ^= full
            if src.reversed:
                v = rev[v]
            params.append(v)
        if seam_mask is not None:
            params.append(transform_side_mask(seam_mask, inverse(t)))
        params += fparams
    return params


def _general_query(c: Constraint, filters, seam_mask, transforms) -> tuple[str, list]:
    fconds, fparams = _filter_conditions(filters or {})
    parts, params = [], []
    for t in transforms:
        pb = pull_back(c, t)
        conds, ps = ["n = ?"], [c.n]
        for s in range(4):
            if pb.masks[s]:
                cond, p = _side_condition(c.n, SIDE_COLUMNS[s], pb.masks[s], pb.values[s])
                conds.append(cond)
                ps += p
        if seam_mask is not None:
            conds.append("seam_mask = ?")
            ps.append(transform_side_mask(seam_mask, inverse(t)))
        parts.append(f"SELECT hash, {t} AS t FROM tiles WHERE {' AND '.join(conds + fconds)}")
        params += ps + fparams
    return " UNION ALL ".join(parts) + " ORDER BY hash, t", params


def find(
    conn,
    c: Constraint,
    filters: Mapping[str, object] | None = None,
    seam_mask: int | None = None,
    limit: int | None = None,
) -> list[tuple[str, int]]:
    """(hash, t) pairs of every library tile that, placed as transform(tile, t), satisfies ``c``.

    Sorted by (hash, t) so a seeded draw among them is reproducible.
    """
    sql, params = build_query(c, filters, seam_mask)
    if limit is not None:
        sql += f" LIMIT {int(limit)}"
    return [(h, t) for h, t in conn.execute(sql, params)]


def find_edges(
    conn,
    n: int,
    *,
    top: int | None = None,
    right: int | None = None,
    bottom: int | None = None,
    left: int | None = None,
    **kw,
) -> list[tuple[str, int]]:
    """Whole-side shorthand for ``find``: FORMAT §5 questions 1 and 2."""
    return find(conn, Constraint.sides(n, top, right, bottom, left), **kw)
