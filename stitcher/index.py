"""Candidate lookup for the stitcher: an in-memory edge index and the per-query SQLite path.

Both answer the same question with the same answer, in the same order:
every (hash, t) such that transform(canonical tile, t) satisfies a
``Constraint`` (whole or partly known sides), optionally only m = 1 tiles,
sorted by (hash, t) so that a seeded draw is reproducible; plus, per
candidate, its *pin bitmap*: bit S (S a side mask 0..15) is set when every
alternative of the ORIENTED tile differs from the solution on some side in S
(always set for m = 1). The stitcher prefers candidates whose bit for "the
sides known at this square's turn" is set.

``MemoryIndex`` loads the few edge columns of the needed sizes once (of each
size only the active set: the ``active.ACTIVE_CAP`` tiles with the smallest
hashes, persisted beside the library by ``MemoryIndex.open``; see
``stitcher/active.py``) and keeps each canonical tile once, as a *row*: its
canonical edges, canonical pin bitmap, m, ladder level and hash key (the first
60 bits of the hash; the SQL path sorts by the full hash, so the two orders
agree unless two hashes share 60 bits). A candidate is an *entry*, key
16·row + t: the tile in orientation t. A lookup pulls the constraint back
through each of the 16 transforms (``tilelib.constraint.pull_back``) and asks
the rows; the answer is sorted by (hash key, row, t). Rows rather than
oriented entries: sixteen times less memory for the same answers
(docs/benchmarks/45). ``_SizeIndex.lookup_py`` is the numpy reference (per
transform, the bucket of the smallest whole side, then a filter); ``SqlIndex``
runs ``tilelib.query.find`` per lookup. Which is faster is measured in
``scripts/bench_stitch.py``.

Each row carries its tile's ladder level (``LEVELS``: 1..5, 0 when not known): a lookup or a
draw can keep only the tiles of a set of levels (``LevelView``, the candidate pools of a difficulty
profile, ``stitcher/profile.py``), over the same rows and C table — no copy of either.

Tiles can be marked *dead* (``MemoryIndex.set_dead``; the fair rule, ``stitcher/fresh.py``: their
solution is already on the board): lookups, and so draws, leave them out until they are marked
alive again. An index with no dead tile answers exactly as before.

With the C extension built, each size also holds a ``stitcher._core.Table`` (the same rows
as bitsets over their hash ranks, answers as bits of entry ranks 16·rank + t; tiles added later
are appended as a short list of *extras*, merged in at lookup, and the table is rebuilt once they
pass ``EXTRA_LIMIT`` tiles or an eighth of the table): ``lookup`` runs there, and ``choose`` runs
``place.choose`` over the lookup in one C call when the check is a C ``Checker`` (or none) — the
same draws from the same stream, so the same key. Any other check (a Python callable) takes the
Python ``place.choose``.
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from functools import lru_cache

import numpy as np

from stitcher.active import ACTIVE_CAP, ActiveInfo, canonical_pins, load_active, scan
from stitcher.place import TRIES, choose
from tilelib.constraint import Constraint, pull_back
from tilelib.native import load_twin
from tilelib.query import find
from tilelib.symmetry import EDGE_MAP, TRANSFORMS, inverse, transform_edges, transform_side_mask

_core = load_twin("stitcher._core")  # None: the numpy reference runs (tilelib.native warned)


# Tiles appended to a C Table before it is rebuilt: EXTRA_LIMIT, or an eighth of its ranked tiles if
# more. A rebuild is O(tiles) (a few ms at the cap's 32,768) and in a forked half writes a new table
# into the worker's private memory (the inherited one stays shared), so a half's drained tiles stay
# extras (docs/benchmarks/43). A lookup tests each extra tile in its 16 orientations.
EXTRA_LIMIT = 256
EXTRA_SHARE = 8

LEVELS = 8  # ladder levels a row can carry (0..7; 0: not known), the C table's TABLE_LEVELS


def level_mask(levels) -> int:
    """The lookup mask of a set of ladder levels (bit L for level L); never 0 (0 means "any")."""
    mask = 0
    for lv in levels:
        if not 1 <= lv < LEVELS:
            raise ValueError(f"ladder level {lv} is not in 1..{LEVELS - 1}")
        mask |= 1 << lv
    if not mask:
        raise ValueError("a level set must hold at least one level")
    return mask


def _level_codes(ladder) -> np.ndarray:
    """Ladder levels as the index keeps them: uint8, anything outside 1..7 as 0 (not known)."""
    lv = np.asarray(ladder, dtype=np.int64)
    return np.where((lv >= 1) & (lv < LEVELS), lv, 0).astype(np.uint8)


@lru_cache(maxsize=1)
def pin_perm() -> np.ndarray:
    """(16, 65536) uint16: the pin bitmap of transform(tile, t) from the canonical bitmap."""
    b = np.arange(1 << 16, dtype=np.int64)
    out = np.zeros((16, 1 << 16), dtype=np.int64)
    for t in TRANSFORMS:
        it = inverse(t)
        for S in range(16):
            out[t] |= ((b >> transform_side_mask(S, it)) & 1) << S
    return out.astype(np.uint16)


def oriented_pins(pins: int, t: int) -> int:
    return int(pin_perm()[t, pins])


class _SizeIndex:
    """The tiles of one side n: one row per canonical tile, asked in the 16 orientations."""

    def __init__(self, n: int) -> None:
        self.n = n
        self.size = 0  # rows (canonical tiles); entry keys are 16 * row + t
        cap = 1024
        # 21 bytes per tile: a line fits 16 bits, m = 1..4 a byte (the C table takes int64 copies)
        self.CE = np.zeros((cap, 4), dtype=np.uint16)  # canonical edges
        self.PINS = np.zeros(cap, dtype=np.uint16)  # canonical pin bitmaps
        self.M = np.zeros(cap, dtype=np.uint8)
        self.H = np.zeros(cap, dtype=np.uint64)  # the hash's first 60 bits: the rows' order
        self.DEAD = np.zeros(cap, dtype=bool)  # dead rows (set_dead)
        self.LV = np.zeros(cap, dtype=np.uint8)  # ladder level of each tile (0: not known)
        # hashes and solution hashes (b"": not known or not held) as bytes, not a Python string per
        # tile: a forked half reads them without touching (so copying) the parent's pages
        self.HS = np.zeros(cap, dtype="S64")
        self.SOL = np.zeros(cap, dtype="S64")
        self._sorted = 0  # rows 0.._sorted-1 are in ascending hash order (row_of searches them)
        self._late: dict[str, int] = {}  # hash -> row of the rows past them
        self._sol_rows: tuple[np.ndarray, np.ndarray] | None = None  # rows_of_solution's sort
        self._sol_late: dict[bytes, list[int]] = {}  # solution -> rows past that sort
        self._buckets: list[dict[int, np.ndarray]] | None = None  # lookup_py's, built at its first call
        self._bucketed = 0  # rows in them
        self._ranked = 0  # rows in the C table's bitsets (the rest are its extras)
        self._ranked_h = self.H[:0]  # their hash keys, ascending
        self.table = self._table()

    def _grow(self, need: int) -> None:
        """Room for ``need`` rows and a quarter more. The arrays are zeroed by calloc, whose large
        blocks are fresh pages: the headroom costs no memory until rows are written into it, so
        the forked halves append a night's drained tiles into pages of their own instead of each
        copying every inherited array whole (and a full active set never doubles for one tile)."""
        cap = len(self.H)
        if need <= cap:
            return
        cap = max(need + need // 4, cap + cap // 4)
        for name in ("CE", "PINS", "M", "H", "DEAD", "LV", "HS", "SOL"):
            old = getattr(self, name)
            new = np.zeros((cap,) + old.shape[1:], dtype=old.dtype)
            new[: self.size] = old[: self.size]
            setattr(self, name, new)

    def add(self, rows: list[tuple[str, tuple[int, int, int, int], int, int]], ladder=None) -> None:
        """Add canonical tiles (hash, edges, m, alt_sides), of ladder levels ``ladder`` (None: not
        known)."""
        if not rows:
            return
        self.add_arrays(
            [r[0] for r in rows],
            np.array([r[1] for r in rows], dtype=np.int64),
            np.array([r[2] for r in rows], dtype=np.int64),
            np.array([canonical_pins(r[2], r[3]) for r in rows], dtype=np.int64),
            ladder=ladder,
        )

    def add_arrays(
        self,
        hashes: list[str],
        canon: np.ndarray,
        m: np.ndarray,
        pins: np.ndarray,
        table: bool = True,
        ladder=None,
        sols=None,
    ) -> None:
        """Add canonical tiles as arrays: hashes (str or bytes), edges (k, 4), m (k,), canonical pin
        bitmaps (k,), ladder levels (k,; None: not known), solution hashes (k,; None or b"": not
        known). Cost O(k) plus the C table's extend (O(extras)) or, past EXTRA_LIMIT, its rebuild;
        ``table=False`` leaves the C table unbuilt until ``build_tables`` (lookups need it built)."""
        if not len(hashes):
            return
        hs = _as_bytes(hashes, "hash")
        k, k0 = len(hs), self.size
        self._grow(k0 + k)
        sl = slice(k0, k0 + k)
        self.CE[sl] = np.asarray(canon, dtype=np.int64)
        self.PINS[sl] = np.asarray(pins, dtype=np.int64)
        self.H[sl] = np.array([int(h[:15], 16) for h in hs.tolist()], dtype=np.uint64)
        self.HS[sl] = hs
        self.M[sl] = m
        self.LV[sl] = 0 if ladder is None else _level_codes(ladder)
        if sols is not None:
            sb = _as_bytes(sols, "solution hash")
            self.SOL[sl] = sb
            if self._sol_rows is not None:  # sorted already: rows_of_solution finds these among the later
                for j, sol in enumerate(sb.tolist()):
                    if sol:
                        self.set_solution(k0 + j, sol)
        self._added(hs, k0, table)

    def _added(self, hs: np.ndarray, k0: int, table: bool) -> None:
        """Bookkeeping after rows k0.. were written: where row_of finds them, size, the C table."""
        k = len(hs)
        if self._sorted == k0 and (k == 1 or bool((hs[1:] > hs[:-1]).all())) and (k0 == 0 or hs[0] > self.HS[k0 - 1]):
            self._sorted = k0 + k
        else:
            self._late.update((h.decode(), k0 + j) for j, h in enumerate(hs.tolist()))
        self.size = k0 + k
        if not table:
            self.table = None
        elif self.table is not None and self.size - self._ranked <= max(EXTRA_LIMIT, self._ranked // EXTRA_SHARE):
            self._extend(k0)
        else:
            self.table = self._table()

    @property
    def hashes(self) -> list[str]:
        """The tiles' hashes in row order."""
        return [h.decode() for h in self.HS[: self.size].tolist()]

    def hash_of(self, row: int) -> str:
        return self.HS[row].decode()

    def row_of(self, h: str) -> int | None:
        """The row of tile h in this size, or None: a binary search of the sorted rows, then the
        later ones."""
        hb = h.encode()
        j = int(np.searchsorted(self.HS[: self._sorted], hb))
        if j < self._sorted and self.HS[j] == hb:
            return j
        return self._late.get(h)

    def rows_of_solution(self, sol: bytes) -> list[int]:
        """The rows whose solution hash is ``sol`` (ascending): a binary search of the solutions
        sorted at the first call, then the rows added since."""
        if self._sol_rows is None:
            order = np.argsort(self.SOL[: self.size], kind="stable")
            self._sol_rows = (self.SOL[order], order)
        keys, order = self._sol_rows
        a, b = np.searchsorted(keys, sol, side="left"), np.searchsorted(keys, sol, side="right")
        return sorted(order[a:b].tolist() + self._sol_late.get(sol, []))

    def set_solution(self, row: int, sol: bytes) -> None:
        """The solution hash of a row (b"" is none); one sorted already, rows_of_solution finds
        among the later ones."""
        self.SOL[row] = sol
        if self._sol_rows is not None:
            self._sol_late.setdefault(sol, []).append(row)

    def set_levels(self, rows: np.ndarray, ladder) -> None:
        """The ladder levels of the tiles at ``rows`` (an index built without them); the C table is
        rebuilt at the next ``build_table``."""
        self.LV[np.asarray(rows, dtype=np.int64)] = _level_codes(ladder)
        self.table = None

    def set_dead(self, rows, dead: bool) -> None:
        """Mark rows (a sequence or an array) dead (their entries left out of lookups) or alive again."""
        ids = np.asarray(rows, dtype=np.int64)
        if not len(ids):
            return
        self.DEAD[ids] = dead
        if self.table is not None:
            self.table.set_dead(ids, dead)

    def build_table(self) -> None:
        """Build the C table if ``add_arrays(table=False)`` left it unbuilt."""
        if self.table is None and _core is not None:
            self.table = self._table()

    def buckets(self) -> list[dict[int, np.ndarray]]:
        """Per canonical side, whole value -> rows in row order. Built at the first call, then
        extended by the rows added since."""
        if self._buckets is None:
            self._buckets = [{}, {}, {}, {}]
        if self._bucketed < self.size:
            ids = np.arange(self._bucketed, self.size, dtype=np.int64)
            for s in range(4):
                vals = self.CE[ids, s]
                order = np.argsort(vals, kind="stable")
                sv, si = vals[order], ids[order]
                cuts = np.flatnonzero(np.diff(sv)) + 1
                b = self._buckets[s]
                for part_v, part in zip(sv[np.r_[0, cuts]].tolist(), np.split(si, cuts), strict=True):
                    old = b.get(part_v)
                    b[part_v] = part if old is None else np.concatenate([old, part])
            self._bucketed = self.size
        return self._buckets

    def _table(self):
        """The C twin of these rows (None without the extension)."""
        if _core is None:
            return None
        k = self.size
        order = np.argsort(self.H[:k], kind="stable").astype(np.int64)
        self._ranked, self._ranked_h = k, self.H[order]
        plan, pinmap = _table_maps()
        table = _core.Table(
            self.n,
            k,
            self.CE[:k].astype(np.int64),
            self.PINS[:k].astype(np.int64),
            self.M[:k].astype(np.int64),
            order,
            self.LV[:k].astype(np.int64),
            plan,
            pinmap,
        )
        dead = np.flatnonzero(self.DEAD[:k]).astype(np.int64)
        if len(dead):
            table.set_dead(dead, True)
        return table

    def _extend(self, k0: int) -> None:
        """Append rows k0.. to the C table as extras: all rows past the ranked ones, in (hash key,
        row) order (a stable sort, as ``_table``), each with its insertion point."""
        ids = np.arange(self._ranked, self.size, dtype=np.int64)
        ids = ids[np.argsort(self.H[ids], kind="stable")]
        ins = np.searchsorted(self._ranked_h, self.H[ids], side="right").astype(np.int64)
        self.table.extend(
            self.CE[k0 : self.size].astype(np.int64),
            ids,
            ins,
            self.PINS[ids].astype(np.int64),
            self.M[ids].astype(np.int64),
            self.LV[k0 : self.size].astype(np.int64),
        )

    def oriented_pins(self, keys: np.ndarray) -> np.ndarray:
        """The pin bitmap of each entry key (uint16)."""
        keys = np.asarray(keys, dtype=np.int64)
        return pin_perm()[keys & 15, self.PINS[keys >> 4].astype(np.int64)]

    def edges(self, key: int) -> tuple[int, int, int, int]:
        """The oriented edges of entry ``key``."""
        if self.table is not None:
            return self.table.edges(key)
        a, b, c, d = (int(v) for v in self.CE[key >> 4])
        return transform_edges((a, b, c, d), self.n, key & 15)

    def lookup(self, c: Constraint, m1: bool, levels: int = 0) -> np.ndarray:
        """Entry keys (16 * row + t) satisfying c (and m = 1 if asked, and of a ladder level in the
        mask ``levels`` if not 0), sorted by (hash, t)."""
        if self.table is None:
            return self.lookup_py(c, m1, levels)
        return np.frombuffer(self.table.lookup(c.masks, c.values, m1, levels), dtype=np.int64)

    def lookup_py(self, c: Constraint, m1: bool, levels: int = 0) -> np.ndarray:
        """``lookup`` in numpy (the reference): per transform t, the rows whose canonical tile meets
        c pulled back through t (from the bucket of its smallest whole side), as keys 16 * row + t."""
        full, k = (1 << self.n) - 1, self.size
        keep = ~self.DEAD[:k]
        if m1:
            keep &= self.M[:k] == 1
        if levels:
            keep &= ((levels >> self.LV[:k].astype(np.int64)) & 1) == 1
        parts = []
        for t in TRANSFORMS:
            p = pull_back(c, t)
            sides = [s for s in range(4) if p.masks[s]]
            whole = [s for s in sides if p.masks[s] == full]
            if whole:
                got = [self.buckets()[s].get(p.values[s]) for s in whole]
                hit = [g for g in got if g is not None]
                if len(hit) < len(got):
                    continue
                rows = min(hit, key=len)
            else:
                rows = np.arange(k, dtype=np.int64)
            for s in sides:
                rows = rows[(self.CE[rows, s] & p.masks[s]) == p.values[s]]
            parts.append(16 * rows[keep[rows]] + t)
        keys = np.concatenate(parts) if parts else np.zeros(0, dtype=np.int64)
        return keys[np.lexsort((keys, self.H[keys >> 4]))]  # (hash, t) order, as the C table


def _as_bytes(values, what: str) -> np.ndarray:
    """Hashes (str or bytes; at most 64 characters, as every tile and solution hash) as an S64 array."""
    arr = np.asarray([v.encode() if isinstance(v, str) else v for v in values] if isinstance(values, list) else values)
    if arr.dtype.kind != "S" or arr.dtype.itemsize > 64:
        raise ValueError(f"a {what} is at most 64 ASCII characters")
    return arr.astype("S64")


@lru_cache(maxsize=1)
def _table_maps() -> tuple[np.ndarray, np.ndarray]:
    """The C table's ``plan`` (16 x 4: side s of transform t reads canonical side ``src`` | 4 if
    reversed | 8 if complemented) and ``pinmap`` (16 x 16: pin bit S of transform t is canonical
    pin bit ``pinmap[t, S]``), from ``EDGE_MAP``, as int64."""
    plan = [[e.side | 4 * e.reversed | 8 * e.complemented for e in EDGE_MAP[t]] for t in TRANSFORMS]
    pinmap = [[transform_side_mask(S, inverse(t)) for S in range(16)] for t in TRANSFORMS]
    return np.array(plan, dtype=np.int64).ravel(), np.array(pinmap, dtype=np.int64).ravel()


def build_tables(sizes, threads: int | None = None) -> None:
    """Build the unbuilt C tables of ``sizes`` (``_SizeIndex``es) on ``threads`` threads (default:
    up to 2, the cores the nightly job has): the C constructor runs without the GIL, and a table
    is the same whichever thread builds it. Largest first, so the threads finish together."""
    todo = sorted((si for si in sizes if si.table is None), key=lambda si: -si.size)
    if _core is None or not todo:
        return
    threads = min(len(todo), threads or min(2, os.cpu_count() or 1))
    if threads <= 1:
        for si in todo:
            si.build_table()
        return
    with ThreadPoolExecutor(threads) as pool:
        list(pool.map(_SizeIndex.build_table, todo))


class MemoryIndex:
    """In-memory edge index over the library's tiles of the given sizes (see the module doc)."""

    def __init__(self) -> None:
        self.sizes: dict[int, _SizeIndex] = {}
        self.info: ActiveInfo | None = None  # how ``open`` got the active set

    @staticmethod
    def load(conn, ns, cap: int = ACTIVE_CAP) -> MemoryIndex:
        """The index of the sizes ``ns``: of each, the active set (the ``cap`` smallest hashes),
        read by one scan of the library (``open`` keeps it on disk instead)."""
        act, _last, _read = scan(conn, cap)
        return MemoryIndex.from_active(act, ns)

    @staticmethod
    def open(conn, library, ns, cap: int = ACTIVE_CAP, fresh: bool = False) -> MemoryIndex:
        """``load``, with the active set read from (and kept in) the sidecar beside ``library``
        (``active.load_active``): the same index, in O(rows added since the last open). ``fresh``:
        the active set of a fresh build (no spent solution), with ``solutions`` filled."""
        act, info = load_active(conn, library, cap, fresh=fresh)
        idx = MemoryIndex.from_active(act, ns)
        idx.info = info
        return idx

    @staticmethod
    def from_active(act, ns) -> MemoryIndex:
        idx = MemoryIndex()
        for n in sorted(set(ns)):
            a = act.get(n)
            if a is not None and len(a):
                idx._size(n).add_arrays(a.hashes, a.edges, a.m, a.pins, table=False, ladder=a.ladder, sols=a.sols)
            else:
                idx._size(n)
        build_tables(idx.sizes.values())
        return idx

    def _size(self, n: int) -> _SizeIndex:
        if n not in self.sizes:
            self.sizes[n] = _SizeIndex(n)
        return self.sizes[n]

    def tiles(self, n: int) -> int:
        return self._size(n).size

    def tile_hashes(self, n: int) -> list[str]:
        """The hashes of size n's tiles, in the index's (ascending hash, then added) order."""
        return self._size(n).hashes

    def set_dead_rows(self, n: int, rows, dead: bool) -> None:
        """Mark size n's rows dead — left out of every lookup — or alive."""
        si = self.sizes.get(n)
        if si is not None:
            si.set_dead(rows, dead)

    def _located(self, n: int, h: str) -> tuple[_SizeIndex, int] | None:
        """(size n's index, tile h's row), or None when it does not hold h."""
        si = self.sizes.get(n)
        row = None if si is None else si.row_of(h)
        return None if si is None or row is None else (si, row)

    def solution(self, n: int, h: str) -> str | None:
        """The solution hash of size n's tile h (None: not indexed, or its solution not known)."""
        at = self._located(n, h)
        sol = b"" if at is None else at[0].SOL[at[1]]
        return sol.decode() if sol else None

    def rows_of_solution(self, n: int, sol: str) -> list[int]:
        """Size n's rows whose solution hash is ``sol``."""
        si = self.sizes.get(n)
        return [] if si is None else si.rows_of_solution(sol.encode())

    def learn_solution(self, n: int, h: str, sol: str) -> None:
        """Tile h's solution hash (a tile the stitch made, added without one)."""
        at = self._located(n, h)
        if at is not None and not at[0].SOL[at[1]]:
            at[0].set_solution(at[1], sol.encode())

    def solution_rows(self, n: int) -> tuple[np.ndarray, np.ndarray]:
        """(rows, solution hashes): size n's rows with a known solution hash, and those hashes (S64)."""
        si = self.sizes.get(n)
        if si is None:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype="S64")
        rows = np.flatnonzero(np.char.str_len(si.SOL[: si.size]) > 0)
        return rows, si.SOL[rows]

    def set_dead(self, n: int, hashes, dead: bool) -> None:
        """Mark size n's tiles ``hashes`` (those it holds) dead — left out of every lookup — or alive."""
        si = self.sizes.get(n)
        if si is not None:
            si.set_dead([r for r in (si.row_of(h) for h in hashes) if r is not None], dead)

    def add(self, hash_: str, n: int, edges, m: int, alt_sides: int) -> None:
        """Add one canonical tile (after the drain inserted it into the library)."""
        self.add_rows(n, [(hash_, tuple(edges), m, alt_sides)])

    def add_rows(self, n: int, rows: list[tuple[str, tuple[int, int, int, int], int, int]], ladder=None) -> None:
        """Add canonical tiles of side n as (hash, edges, m, alt_sides), in this order, of ladder
        levels ``ladder`` (None: not known); none: the size is still indexed, empty."""
        self._size(n).add(rows, ladder)

    def levels(self, n: int) -> np.ndarray:
        """The ladder level of each of size n's tiles (0: not known), in ``tile_hashes`` order."""
        si = self._size(n)
        return si.LV[: si.size].astype(np.int64)

    def lookup(self, c: Constraint, m1: bool = False, levels: int = 0):
        """(keys, pins): opaque sorted candidate keys and their pin bitmaps (uint16 array); of the
        ladder levels in the mask ``levels`` only, unless 0."""
        si = self._size(c.n)
        keys = si.lookup(c, m1, levels)
        return keys, si.oriented_pins(keys)

    def table(self, n: int):
        """The ``stitcher._core.Table`` of size n (None without the extension)."""
        return self._size(n).table

    def choose(
        self,
        c: Constraint,
        m1: bool,
        known: int,
        stream,
        check=None,
        tries: int = TRIES,
        best_of: int = 1,
        levels: int = 0,
    ):
        """``place.choose`` over ``lookup(c, m1, levels)``; in one C call when check is None or a C
        Checker."""
        si = self._size(c.n)
        if si.table is not None and (check is None or isinstance(check, _core.Checker)):
            return _core.choose(si.table, c.masks, c.values, m1, known, stream, check, tries, best_of, levels)
        keys, pins = self.lookup(c, m1, levels)
        return choose(keys, pins, known, stream, check=check, tries=tries, best_of=best_of)

    def decode(self, n: int, key) -> tuple[str, int, tuple[int, int, int, int]]:
        """(hash, t, oriented edges) of a candidate key."""
        si = self.sizes[n]
        k = int(key)
        return si.hash_of(k >> 4), k & 15, si.edges(k)


class LevelView:
    """The tiles of ``base`` whose ladder level is in ``levels``: every lookup and draw is the base's
    own, with the level mask (the same entries, C table, dead marks and keys, so ``decode`` and the
    forward check are the base's too). Tiles the base learns later are in it by their level."""

    def __init__(self, base: MemoryIndex, levels) -> None:
        self.base, self.levels, self.mask = base, frozenset(levels), level_mask(levels)

    def tile_hashes(self, n: int) -> list[str]:
        """The hashes of size n's tiles of these levels, in the base's order."""
        keep = np.isin(self.base.levels(n), sorted(self.levels))
        return [h for h, k in zip(self.base.tile_hashes(n), keep.tolist(), strict=True) if k]

    def lookup(self, c: Constraint, m1: bool = False):
        return self.base.lookup(c, m1, self.mask)

    def choose(self, c: Constraint, m1: bool, known: int, stream, check=None, tries: int = TRIES, best_of: int = 1):
        return self.base.choose(c, m1, known, stream, check, tries, best_of, self.mask)

    def table(self, n: int):
        return self.base.table(n)

    def decode(self, n: int, key) -> tuple[str, int, tuple[int, int, int, int]]:
        return self.base.decode(n, key)


class SqlIndex:
    """The same answers from ``tilelib.query.find`` per lookup, plus a per-hash feature cache."""

    def __init__(self, conn) -> None:
        self.conn = conn
        self._info: dict[str, tuple[tuple[int, int, int, int], int]] = {}

    def add(self, hash_: str, n: int, edges, m: int, alt_sides: int) -> None:
        self._info[hash_] = (tuple(edges), canonical_pins(m, alt_sides))

    def _fetch(self, hashes) -> None:
        missing = [h for h in hashes if h not in self._info]
        for i in range(0, len(missing), 500):
            part = missing[i : i + 500]
            for h, t, r, b, lf, m, a in self.conn.execute(
                f"SELECT hash, top, right, bottom, left, m, alt_sides FROM tiles WHERE hash IN "
                f"({','.join('?' * len(part))})",
                part,
            ):
                self._info[h] = ((t, r, b, lf), canonical_pins(m, a))

    def lookup(self, c: Constraint, m1: bool = False):
        keys = find(self.conn, c, filters={"m": 1} if m1 else None)
        self._fetch(sorted({h for h, _ in keys}))
        perm = pin_perm()
        pins = np.array([perm[t, self._info[h][1]] for h, t in keys], dtype=np.uint16)
        return keys, pins

    def table(self, n: int):
        return None

    def choose(self, c: Constraint, m1: bool, known: int, stream, check=None, tries: int = TRIES, best_of: int = 1):
        keys, pins = self.lookup(c, m1)
        return choose(keys, pins, known, stream, check=check, tries=tries, best_of=best_of)

    def decode(self, n: int, key) -> tuple[str, int, tuple[int, int, int, int]]:
        h, t = key
        return h, t, transform_edges(self._info[h][0], n, t)
