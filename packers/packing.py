"""The Packing value (FORMAT §6), its JSON shape (FORMAT §9/§12) and the ONE packing validator.

A packing lives in pitch space [0, P)² with P = G - 1. It is a list of squares
``(x0, y0, s)`` (s odd in 5..15; the tile there has n = s + 1) plus zones, each
a list of rectangles ``(x, y, w, h)`` covering pitch area [x, x+w) × [y, y+h).
Squares and zone rectangles partition [0, P)² exactly. Tile ids are list
positions; ``seed_tile`` is a tile id.

``validate_packing`` is shared by the packers' tests, ``tiles pack`` and the
referee (FORMAT §10 step 1): it raises ``VerificationFailed`` naming the FIRST
offence, checking in this order: board size, seed tile id, each square in list
order (side, bounds, overlap with an earlier square), each zone rectangle in
order (shape, bounds, overlap with a square or an earlier rectangle), then the
first uncovered pitch unit in row-major order.

``to_json``/``from_json`` use the manifest's keys (``board``, ``packer``,
``seed_tile``, ``tiles`` with id/x0/y0/n, ``zones`` with id/rects);
``from_json`` checks the shape (keys, integer types, ids = list order) and
raises ``BadInput``; geometry is the validator's job.
"""

from __future__ import annotations

import hashlib
import json
from collections import deque
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

import numpy as np

from tilelib.errors import BadInput, VerificationFailed

SIZES = (5, 7, 9, 11, 13, 15)
"""Legal square sides in pitch space (tile n = s + 1 in 6..16)."""

MAX_PITCH = 4095
"""Largest pitch side the validator accepts (G <= 4096): its occupancy grid is P² int32s (64 MB
at the cap), so a hostile manifest cannot make the referee allocate without bound."""

Square = tuple[int, int, int]
Rect = tuple[int, int, int, int]


@dataclass(frozen=True, eq=True)
class Packing:
    """Squares and zones in pitch space [0, P)², plus who made it (name, version, params)."""

    P: int
    squares: tuple[Square, ...]
    zones: tuple[tuple[Rect, ...], ...]
    seed_tile: int
    name: str = ""
    version: int = 0
    params: Mapping[str, Any] = field(default_factory=dict)

    # params is a dict: the value compares by content but is not hashable. Python's documented way to say
    # so; mypy rejects None for object's __hash__ (typeshed's own unhashable classes carry the same ignore)
    __hash__ = None  # type: ignore[assignment]

    @property
    def G(self) -> int:
        """Board side in cells."""
        return self.P + 1

    def zone_area(self) -> int:
        """Total pitch area of the zones."""
        return sum(w * h for zone in self.zones for (_x, _y, w, h) in zone)

    def zone_fraction(self) -> float:
        """Quality metric (FORMAT §7): zone area as a fraction of P²."""
        return self.zone_area() / (self.P * self.P) if self.P > 0 else 0.0

    def to_json(self) -> dict:
        """The manifest's packing keys as a JSON-ready dict (tile n = s + 1)."""
        return {
            "board": {"cells": self.P + 1, "pitch": self.P},
            "packer": {"name": self.name, "version": self.version, "params": dict(self.params)},
            "seed_tile": self.seed_tile,
            "tiles": [{"id": i, "x0": x, "y0": y, "n": s + 1} for i, (x, y, s) in enumerate(self.squares)],
            "zones": [{"id": i, "rects": [list(r) for r in zone]} for i, zone in enumerate(self.zones)],
        }

    def canonical_bytes(self) -> bytes:
        """Canonical JSON (sorted keys, no spaces, ASCII) of ``to_json()``; goldens hash these bytes."""
        return json.dumps(self.to_json(), sort_keys=True, separators=(",", ":")).encode("ascii")

    def digest(self) -> str:
        """sha256 hex of ``canonical_bytes()``."""
        return hashlib.sha256(self.canonical_bytes()).hexdigest()


def _int(v: Any, what: str) -> int:
    if type(v) is not int:  # bool is not an int here, nor are floats like 3.0
        raise BadInput(f"packing JSON: {what} must be an integer, got {v!r}")
    return v


def _obj(v: Any, what: str) -> dict:
    if not isinstance(v, dict):
        raise BadInput(f"packing JSON: {what} must be an object")
    return v


def _list(v: Any, what: str) -> list:
    if not isinstance(v, list):
        raise BadInput(f"packing JSON: {what} must be a list")
    return v


def from_json(obj: Any) -> Packing:
    """Build a Packing from the manifest shape (a dict, or JSON text/bytes); BadInput if malformed.

    Extra keys (a full manifest's ``hash``, ``t``, ``clues`` …) are ignored.
    """
    if isinstance(obj, (str, bytes, bytearray)):
        try:
            obj = json.loads(obj)
        except (ValueError, UnicodeDecodeError) as e:
            raise BadInput(f"packing JSON: not valid JSON ({e})") from e
    obj = _obj(obj, "top level")
    for key in ("board", "packer", "seed_tile", "tiles", "zones"):
        if key not in obj:
            raise BadInput(f"packing JSON: missing key {key!r}")
    board = _obj(obj["board"], "board")
    if "cells" not in board or "pitch" not in board:
        raise BadInput("packing JSON: board needs 'cells' and 'pitch'")
    cells, pitch = _int(board["cells"], "board.cells"), _int(board["pitch"], "board.pitch")
    if pitch != cells - 1:
        raise BadInput(f"packing JSON: board.pitch {pitch} != cells - 1 ({cells - 1})")
    packer = _obj(obj["packer"], "packer")
    name = packer.get("name")
    if not isinstance(name, str):
        raise BadInput("packing JSON: packer.name must be a string")
    version = _int(packer.get("version"), "packer.version")
    params = _obj(packer.get("params", {}), "packer.params")
    seed_tile = _int(obj["seed_tile"], "seed_tile")
    squares = []
    for i, t in enumerate(_list(obj["tiles"], "tiles")):
        t = _obj(t, f"tiles[{i}]")
        for key in ("id", "x0", "y0", "n"):
            if key not in t:
                raise BadInput(f"packing JSON: tiles[{i}] lacks {key!r}")
        if _int(t["id"], f"tiles[{i}].id") != i:
            raise BadInput(f"packing JSON: tiles[{i}].id is {t['id']}, ids must equal list order")
        squares.append(
            (_int(t["x0"], f"tiles[{i}].x0"), _int(t["y0"], f"tiles[{i}].y0"), _int(t["n"], f"tiles[{i}].n") - 1)
        )
    zones = []
    for i, z in enumerate(_list(obj["zones"], "zones")):
        z = _obj(z, f"zones[{i}]")
        if _int(z.get("id"), f"zones[{i}].id") != i:
            raise BadInput(f"packing JSON: zones[{i}].id is {z.get('id')}, ids must equal list order")
        rects: list[Rect] = []
        for j, r in enumerate(_list(z.get("rects"), f"zones[{i}].rects")):
            r = _list(r, f"zones[{i}].rects[{j}]")
            if len(r) != 4:
                raise BadInput(f"packing JSON: zones[{i}].rects[{j}] must be [x, y, w, h]")
            x, y, w, h = (_int(v, f"zones[{i}].rects[{j}]") for v in r)
            rects.append((x, y, w, h))
        zones.append(tuple(rects))
    return Packing(
        P=pitch,
        squares=tuple(squares),
        zones=tuple(zones),
        seed_tile=seed_tile,
        name=name,
        version=version,
        params=dict(params),
    )


def validate_packing(packing: Packing, P: int) -> None:
    """Raise VerificationFailed naming the first offence; return None if the packing is sound.

    Checks: P matches; seed_tile is a tile id; every square has s odd in 5..15,
    lies inside [0, P)², and overlaps no earlier square; every zone rectangle
    has w, h > 0, lies inside, and overlaps no square or earlier rectangle;
    finally every pitch unit is covered. An occupancy grid makes this O(P²).
    """
    if type(P) is not int or P < 1:
        raise VerificationFailed(f"packing: pitch size P={P!r} is not a positive integer")
    if P > MAX_PITCH:
        raise VerificationFailed(f"packing: pitch size {P} exceeds the supported maximum {MAX_PITCH}")
    if packing.P != P:
        raise VerificationFailed(f"packing: board pitch is {packing.P}, expected {P}")
    k = len(packing.squares)
    if not (0 <= packing.seed_tile < k):
        raise VerificationFailed(f"packing: seed_tile {packing.seed_tile} is not a tile id (0..{k - 1})")
    # owner: 0 = free, i + 1 = square i, -(j + 1) = zone rectangle j (in reading order).
    owner = np.zeros((P, P), dtype=np.int32)
    for i, (x, y, s) in enumerate(packing.squares):
        if s not in SIZES:
            why = "even" if s % 2 == 0 else ("below 5" if s < 5 else "above 15")
            raise VerificationFailed(
                f"packing: tile {i} at ({x},{y}) has side s={s} (n={s + 1}): {why}; s must be odd in 5..15"
            )
        _claim(owner, (x, y, s, s), f"tile {i} at ({x},{y}) s={s}", i + 1, packing)
    r = 0
    for zi, zone in enumerate(packing.zones):
        if not zone:
            raise VerificationFailed(f"packing: zone {zi} has no rectangles")
        for rj, (x, y, w, h) in enumerate(zone):
            where = f"zone {zi} rect {rj} [{x},{y},{w},{h}]"
            if w <= 0 or h <= 0:
                raise VerificationFailed(f"packing: {where} has a non-positive width or height")
            _claim(owner, (x, y, w, h), where, -(r + 1), packing)
            r += 1
    free = np.flatnonzero(owner == 0)
    if free.size:
        y, x = divmod(int(free[0]), P)
        raise VerificationFailed(
            f"packing: gap: pitch unit ({x},{y}) is covered by no tile and no zone ({free.size} uncovered units)"
        )


def _claim(owner: np.ndarray, rect: Rect, where: str, mark: int, packing: Packing) -> None:
    """Mark the pitch units of ``rect`` (x, y, w, h) in ``owner`` with ``mark`` (``validate_packing``'s
    grid); VerificationFailed naming ``where`` if the rectangle has a negative coordinate, runs out of
    the board or overlaps a unit already marked (a square or an earlier zone rectangle)."""
    x, y, w, h = rect
    P = owner.shape[0]
    if x < 0 or y < 0:
        raise VerificationFailed(f"packing: {where} has a negative coordinate")
    if x + w > P or y + h > P:
        raise VerificationFailed(f"packing: {where} runs out of the board [0,{P})")
    block = owner[y : y + h, x : x + w]
    hit = np.flatnonzero(block)
    if hit.size:
        o = int(block.flat[hit[0]])
        what = (
            f"tile {o - 1} {packing.squares[o - 1]}"
            if o > 0
            else f"an earlier zone rectangle (#{-o - 1} in reading order)"
        )
        raise VerificationFailed(f"packing: {where} overlaps {what}")
    block[...] = mark


def group_zones(rects: Iterable[Rect]) -> tuple[tuple[Rect, ...], ...]:
    """Group zone rectangles into zones: connected components under edge contact (shared border of
    positive length). Rectangles sorted by (y, x) within a zone; zones ordered by their first rectangle."""
    rs = sorted({(x, y, w, h) for x, y, w, h in rects}, key=lambda r: (r[1], r[0], r[2], r[3]))
    parent = list(range(len(rs)))

    def find(a: int) -> int:
        while parent[a] != a:
            parent[a] = parent[parent[a]]
            a = parent[a]
        return a

    def touch(a: Rect, b: Rect) -> bool:
        ax, ay, aw, ah = a
        bx, by, bw, bh = b
        ox = min(ax + aw, bx + bw) - max(ax, bx)
        oy = min(ay + ah, by + bh) - max(ay, by)
        return (ox > 0 and oy == 0) or (oy > 0 and ox == 0)

    # Bucket by 32-unit blocks so grouping stays near-linear.
    buckets: dict[tuple[int, int], list[int]] = {}
    for i, (x, y, w, h) in enumerate(rs):
        for bx in range(x // 32, (x + w) // 32 + 1):
            for by in range(y // 32, (y + h) // 32 + 1):
                for j in buckets.get((bx, by), ()):
                    if touch(rs[i], rs[j]):
                        parent[find(i)] = find(j)
                buckets.setdefault((bx, by), []).append(i)
    comps: dict[int, list[Rect]] = {}
    for i, r in enumerate(rs):
        comps.setdefault(find(i), []).append(r)
    zones = [tuple(c) for c in comps.values()]
    zones.sort(key=lambda z: (z[0][1], z[0][0]))
    return tuple(zones)


def refinement_problem(drawn: Packing, actual: Packing) -> str | None:
    """Why ``actual`` is not ``drawn`` refined by the stitcher's fallback, or None if it is.

    The stitcher may split a square it cannot fill into smaller squares and zone
    rectangles (FORMAT §8), so a manifest's packing is the packer's packing with
    some squares subdivided. It refines the drawn one when: the board, packer,
    version and params agree; every square of ``actual`` lies inside one square of
    ``drawn``; every zone unit of ``drawn`` is still zone; and the seed tile's
    square is unchanged. Both packings must already pass ``validate_packing``.
    """
    if (drawn.P, drawn.name, drawn.version, dict(drawn.params)) != (
        actual.P,
        actual.name,
        actual.version,
        dict(actual.params),
    ):
        return "board, packer, version or params differ from the ones drawn"
    P = drawn.P
    owner = np.full((P, P), -1, dtype=np.int32)
    for i, (x0, y0, s) in enumerate(drawn.squares):
        owner[y0 : y0 + s, x0 : x0 + s] = i
    for i, (x0, y0, s) in enumerate(actual.squares):
        region = owner[y0 : y0 + s, x0 : x0 + s]
        if region.min() < 0 or region.min() != region.max():
            return f"tile {i} at ({x0}, {y0}) side {s} is not inside one drawn square"
    zone = np.zeros((P, P), dtype=bool)
    for rects in actual.zones:
        for x, y, w, h in rects:
            zone[y : y + h, x : x + w] = True
    lost = (owner < 0) & ~zone
    if lost.any():
        y, x = map(int, np.argwhere(lost)[0])
        return f"drawn zone unit ({x}, {y}) is covered by a tile"
    if actual.squares[actual.seed_tile] != drawn.squares[drawn.seed_tile]:
        return "the seed tile's square differs from the drawn one"
    return None


def merge_params(name: str, defaults: Mapping[str, Any], params: Mapping[str, Any]) -> dict:
    """A packer's effective params: a copy of its defaults (lists copied) overridden by
    ``params``; ValueError naming an unknown key. Each packer then checks the values."""
    p = {k: (list(v) if isinstance(v, list) else v) for k, v in defaults.items()}
    for k, v in params.items():
        if k not in defaults:
            raise ValueError(f"unknown parameter {k!r} for {name} (known: {sorted(defaults)})")
        p[k] = v
    return p


def adjacency(squares) -> list[list[int]]:
    """For each square, the ids of the squares it shares a board cell with (closed squares meet).
    A fresh list each call, copied from ``_adjacency``'s answer for these squares."""
    return [list(nb) for nb in _adjacency(_squares_key(squares))]


def seam_neighbours(squares) -> list[set[int]]:
    """For each tile, the tiles it shares a seam with: windows sharing >= 2 board cells (FORMAT §14: a
    move is accepted on the seed tile or on a tile sharing a seam with a solved one).

    Windows are closed squares [x0, x0+s] × [y0, y0+s] in cell space; squares do not
    overlap in pitch area, so two windows that meet share a segment of max(ox, oy) + 1
    cells where ox, oy are the overlaps of their closed extents (one of them is 0).
    A fresh list of sets each call, copied from ``_seam_neighbours``'s answer.
    """
    return [set(nb) for nb in _seam_neighbours(_squares_key(squares))]


def _squares_key(squares) -> tuple[tuple[int, int, int], ...]:
    return tuple(map(tuple, squares))  # free for a Packing's (tuple() of a tuple is itself)


# A night asks for one packing's neighbours seven times (the stitch; the clues' frontier and closure;
# the verify's frontier, closure and judge): 0.085 s and 0.19 s each at G = 1000. Both are pure
# functions of the squares, so the last two packings' answers are kept (immutable; callers get copies).
@lru_cache(maxsize=2)
def _adjacency(squares: tuple[tuple[int, int, int], ...]) -> tuple[tuple[int, ...], ...]:
    B = 16
    buckets: dict[tuple[int, int], list[int]] = {}
    for i, (x, y, s) in enumerate(squares):
        for bx in range(x // B, (x + s) // B + 1):
            for by in range(y // B, (y + s) // B + 1):
                buckets.setdefault((bx, by), []).append(i)
    nbrs: list[set[int]] = [set() for _ in squares]
    for ids in buckets.values():
        for a in range(len(ids)):
            i = ids[a]
            xi, yi, si = squares[i]
            for j in ids[a + 1 :]:
                xj, yj, sj = squares[j]
                if xi <= xj + sj and xj <= xi + si and yi <= yj + sj and yj <= yi + si:
                    nbrs[i].add(j)
                    nbrs[j].add(i)
    return tuple(tuple(sorted(n)) for n in nbrs)


@lru_cache(maxsize=2)
def _seam_neighbours(squares: tuple[tuple[int, int, int], ...]) -> tuple[tuple[int, ...], ...]:
    out: list[set[int]] = [set() for _ in squares]
    for i, nb in enumerate(_adjacency(squares)):
        xi, yi, si = squares[i]
        for j in nb:
            xj, yj, sj = squares[j]
            ox = min(xi + si, xj + sj) - max(xi, xj)
            oy = min(yi + si, yj + sj) - max(yi, yj)
            if ox >= 0 and oy >= 0 and max(ox, oy) + 1 >= 2:
                out[i].add(j)
    return tuple(tuple(sorted(o)) for o in out)  # tuples: half a frozenset's memory, kept for the process


def seam_order(squares, seed: int) -> list[int]:
    """The squares a path of shared seams joins to square ``seed``, in breadth-first order from it
    (neighbours in id order): the tiles a player can ever reach (FORMAT §14), in the order
    ``referee.difficulty`` rates them."""
    nbrs = seam_neighbours(squares)
    seen = {seed}
    order, q = [], deque([seed])
    while q:
        i = q.popleft()
        order.append(i)
        for j in sorted(nbrs[i]):
            if j not in seen:
                seen.add(j)
                q.append(j)
    return order


def seam_reachable(squares, seed: int) -> list[bool]:
    """For each square, whether ``seam_order`` reaches it. The stitcher turns the others into zone
    (``stitcher.fallback``)."""
    reached = set(seam_order(squares, seed))
    return [i in reached for i in range(len(squares))]
