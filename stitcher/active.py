"""The stitcher's active set: per tile size, the ``cap`` tiles with the smallest hashes, kept on disk.

Why: the in-memory index (``index.MemoryIndex``) costs memory, load time and lookup time in
proportion to the tiles it holds. A library that grows by thousands of tiles a night would
make every night slower (issue 12: 23 s to load and 4 GB at 1M tiles). So the stitcher sees,
of each size n, at most ``ACTIVE_CAP`` tiles: those with the smallest content hashes — a rule
of the rows alone, so every machine holding the same rows sees the same set and a board
rebuilds bit-for-bit — plus the tiles the stitch itself drains (index extras). Below the cap
(every library up to ~100k tiles with a real size mix) nothing is left out. Above it, the
visible tiles of a size are a uniform sample of CAP of them, which is where the first-pass hit
rate has long flattened (BENCHMARKS.md, "first-pass hit rate against library size").

The set is persisted beside the library, in ``<library>.stitch-index`` (a numpy ``.npz``):
per n the active rows (hash, canonical edges, m, pin bitmap, ladder level) in hash order, and a watermark —
the largest tiles rowid seen. Tiles are append-only, so the rows added since (the day's drain,
a pull's merge) are exactly those with a larger rowid: opening reads only them and merges
(O(new rows)). The file is a cache: it is trusted only if it names this library
(``meta.library_id``), this cap and this format, and the rows at the recorded rowids still
carry the recorded hashes; otherwise one chunked scan of the library rebuilds it. A failed
write (read-only directory) is not an error: the next open scans again.

**Fresh builds** (the fair rule, ``tilelib.spent``) see another set: per n, the ``cap`` smallest
hashes among the tiles whose solution is not spent (n >= 10; smaller sizes as above), each row
with its solution hash — kept in its own sidecar, ``<library>.stitch-index-fresh``, with a second
watermark, the largest ``spent`` rowid seen. Opening merges the new tiles (less the spent ones),
then drops the rows whose solution a new ``spent`` row names and, where that leaves a size below
the cap that was full, refills it with the next unspent hashes in hash order (``_refill``, one
range read of the hash index): O(new rows + new spent rows), whatever the library's size or the
spent share, and the same set a scan would give.
"""

from __future__ import annotations

import json
import time
import zipfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from tilelib import cache, spent
from tilelib.bits import VALID_N
from tilelib.tile import nibbles

FORMAT = "tiles-stitch-index/2"  # /2: with each tile's ladder level (profiled builds)
FRESH_FORMAT = "tiles-stitch-index-fresh/1"
ACTIVE_CAP = 32_768  # tiles per size: rows of the C table (524,288 oriented entries)
SUFFIX = ".stitch-index"
FRESH_SUFFIX = ".stitch-index-fresh"
_CHUNK = 50_000
_COLS = "rowid, hash, n, top, right, bottom, left, m, alt_sides, ladder"
_SELECT = f"SELECT {_COLS} FROM tiles"
_SELECT_FRESH = f"SELECT {_COLS}, solution FROM tiles"


def canonical_pins(m: int, alt_sides: int) -> int:
    """16-bit pin bitmap of a canonical tile: bit S set iff every alt nibble meets S."""
    nibs = nibbles(alt_sides, m - 1)
    return sum(1 << S for S in range(16) if all(nib & S for nib in nibs))


@dataclass
class ActiveRows:
    """The active tiles of one size, ascending by hash (hex, as bytes)."""

    hashes: np.ndarray  # (k,) S64
    edges: np.ndarray  # (k, 4) int64: canonical top, right, bottom, left
    m: np.ndarray  # (k,) int64
    pins: np.ndarray  # (k,) int64: canonical pin bitmap
    ladder: np.ndarray | None = None  # (k,) int64: ladder level (the level indexes of a profile)
    sols: np.ndarray | None = None  # (k,) S64: solution hash (fresh sets; b"" below n = 10), or None

    def __post_init__(self) -> None:
        if self.ladder is None:
            self.ladder = np.zeros(len(self.hashes), dtype=np.int64)

    @staticmethod
    def empty() -> ActiveRows:
        return ActiveRows(
            np.zeros(0, dtype="S64"),
            np.zeros((0, 4), dtype=np.int64),
            np.zeros(0, dtype=np.int64),
            np.zeros(0, dtype=np.int64),
            np.zeros(0, dtype=np.int64),
        )

    def __len__(self) -> int:
        return len(self.hashes)

    def merged(self, other: ActiveRows, cap: int) -> ActiveRows:
        """The ``cap`` smallest hashes of both (rows are content-addressed: a hash held by both is one row)."""
        h = np.concatenate([self.hashes, other.hashes])
        order = np.argsort(h, kind="stable")
        keep = np.ones(len(order), dtype=bool)
        keep[1:] = h[order][1:] != h[order][:-1]
        order = order[keep][:cap]
        e = np.concatenate([self.edges, other.edges])
        m = np.concatenate([self.m, other.m])
        p = np.concatenate([self.pins, other.pins])
        lv = np.concatenate([self.ladder, other.ladder])
        sols = None
        if self.sols is not None or other.sols is not None:
            sols = np.concatenate([_sols(self), _sols(other)])[order]
        return ActiveRows(h[order], e[order], m[order], p[order], lv[order], sols)

    def subset(self, keep: np.ndarray) -> ActiveRows:
        """The rows where ``keep`` (a bool mask) is true, in order."""
        assert self.ladder is not None  # __post_init__ fills a ladder left None
        return ActiveRows(
            self.hashes[keep],
            self.edges[keep],
            self.m[keep],
            self.pins[keep],
            self.ladder[keep],
            None if self.sols is None else self.sols[keep],
        )


def _sols(a: ActiveRows) -> np.ndarray:
    return a.sols if a.sols is not None else np.zeros(len(a), dtype="S64")


@dataclass
class ActiveInfo:
    """How the active set was obtained, for the build's log and benchmarks."""

    source: str  # "sidecar" (no new rows), "refresh" (sidecar + new rows), "scan"
    new_rows: int  # rows read from the library
    seconds: float
    written: bool  # the sidecar was (re)written
    dropped: int = 0  # fresh: rows that left the set because their solution was spent since


def _rows_to_active(rows: list, sols: list[bytes] | None = None, *, cap: int) -> dict[int, ActiveRows]:
    """Group library rows (rowid, hash, n, t, r, b, l, m, alt_sides, ladder) by n, each the cap smallest
    (``sols``: their solution hashes, for a fresh set)."""
    out: dict[int, ActiveRows] = {}
    if not rows:
        return out
    sol = None if sols is None else np.array(sols, dtype="S64")
    ns = np.array([r[2] for r in rows], dtype=np.int64)
    hashes = np.array([r[1].encode() for r in rows], dtype="S64")
    edges = np.array([r[3:7] for r in rows], dtype=np.int64)
    m = np.array([r[7] for r in rows], dtype=np.int64)
    ladder = np.array([r[9] for r in rows], dtype=np.int64)
    memo: dict[tuple[int, int], int] = {}
    pins = np.array(
        [memo[k] if k in memo else memo.setdefault(k, canonical_pins(*k)) for k in ((r[7], r[8]) for r in rows)],
        dtype=np.int64,
    )
    for n in np.unique(ns).tolist():
        sel = np.flatnonzero(ns == n)
        part = ActiveRows(hashes[sel], edges[sel], m[sel], pins[sel], ladder[sel], None if sol is None else sol[sel])
        out[n] = ActiveRows.empty().merged(part, cap)
    return out


def _fresh_rows(conn, rows: list) -> tuple[list, list[bytes]]:
    """Rows read with ``_SELECT_FRESH`` less those whose solution is spent (n >= 10), without their
    solution column, and the solution hash of each kept row (b"" below n = 10)."""
    hs = [spent.solution_hash(r[2], r[10]).encode() if spent.held(r[2]) else b"" for r in rows]
    gone = {s.encode() for s in spent.spent_of(conn, [h.decode() for h in hs if h])}
    keep = [j for j, h in enumerate(hs) if h not in gone]
    return [rows[j][:10] for j in keep], [hs[j] for j in keep]


def scan(conn, cap: int, after: int = 0, base: dict[int, ActiveRows] | None = None, fresh: bool = False):
    """(active set per n, last rowid, rows read): ``base`` merged with the library's rows whose
    rowid is above ``after``, read in chunks (memory stays O(cap + chunk)); ``fresh``: less the
    rows whose solution is spent, each with its solution hash."""
    act = {n: base.get(n, ActiveRows.empty()) for n in VALID_N} if base else {n: ActiveRows.empty() for n in VALID_N}
    last, read = after, 0
    cur = conn.execute((_SELECT_FRESH if fresh else _SELECT) + " WHERE rowid > ? ORDER BY rowid", (after,))
    while True:
        rows = cur.fetchmany(_CHUNK)
        if not rows:
            break
        read += len(rows)
        last = rows[-1][0]
        parts = _rows_to_active(*_fresh_rows(conn, rows), cap=cap) if fresh else _rows_to_active(rows, cap=cap)
        for n, part in parts.items():
            act[n] = act.get(n, ActiveRows.empty()).merged(part, cap)
    return act, last, read


def _last_spent(conn) -> int:
    return conn.execute("SELECT coalesce(max(rowid), 0) FROM spent").fetchone()[0] if spent.has_table(conn) else 0


def drop_spent(conn, act: dict[int, ActiveRows], after: int, cap: int) -> tuple[dict[int, ActiveRows], int, int]:
    """A fresh set less the rows whose solution a spent row past rowid ``after`` names, each size
    that was full refilled (``_refill``). Returns (set, last spent rowid, rows dropped)."""
    if not spent.has_table(conn):
        return act, 0, 0
    new = conn.execute("SELECT rowid, solution FROM spent WHERE rowid > ? ORDER BY rowid", (after,)).fetchall()
    if not new:
        return act, after, 0
    # by solution alone (the hash covers n, so it names one size): the rows' n column is not trusted
    sols = np.array(sorted({sol.encode() for _rid, sol in new}), dtype="S64")
    dropped = 0
    for n in [n for n in VALID_N if spent.held(n)]:
        a = act.get(n)
        if a is None or not len(a):
            continue
        keep = ~np.isin(_sols(a), sols)
        if keep.all():
            continue
        dropped += int((~keep).sum())
        full, top = len(a) >= cap, a.hashes[-1]
        a = a.subset(keep)
        if full:
            a = a.merged(_refill(conn, n, top, cap - len(a)), cap)
        act[n] = a
    return act, new[-1][0], dropped


def _refill(conn, n: int, after: bytes, k: int) -> ActiveRows:
    """The ``k`` smallest-hash unspent tiles of size n with a hash above ``after``: the rows a full
    set lets in once spent rows leave it. ``+n`` keeps SQLite on the hash index (a range read in
    hash order) rather than reading every tile of size n and sorting them."""
    got = ActiveRows.empty()
    cur = conn.execute(_SELECT_FRESH + " WHERE +n = ? AND hash > ? ORDER BY hash", (n, after.decode()))
    while len(got) < k and (rows := cur.fetchmany(max(2 * k, 256))):
        part = _rows_to_active(*_fresh_rows(conn, rows), cap=k).get(n)
        if part is not None:
            got = got.merged(part, k)
    return got


def sidecar_path(library: Path, fresh: bool = False) -> Path:
    return cache.beside(library, FRESH_SUFFIX if fresh else SUFFIX)


def read_sidecar(path: Path, conn, cap: int, fresh: bool = False):
    """(active set, watermark, spent watermark) from a sidecar that still describes this library,
    else None (the spent watermark is 0 for a set that ignores spent rows)."""
    try:
        with np.load(path, allow_pickle=False) as z:
            meta = json.loads(str(z["meta"]))
            if (
                meta.get("format") != (FRESH_FORMAT if fresh else FORMAT)
                or meta.get("cap") != cap
                or not cache.describes(conn, meta)
            ):
                return None
            act = {}
            for n in VALID_N:
                act[n] = ActiveRows(
                    z[f"h{n}"],
                    z[f"e{n}"].astype(np.int64),
                    z[f"m{n}"].astype(np.int64),
                    z[f"p{n}"].astype(np.int64),
                    z[f"l{n}"].astype(np.int64),
                    z[f"s{n}"] if fresh else None,
                )
            spent_last = int(meta["spent_last"]) if fresh else 0
            if spent_last > _last_spent(conn):
                return None  # spent rows it saw are gone: not this library's past
            return act, int(meta["last"]), spent_last
    except (OSError, ValueError, KeyError, TypeError, EOFError, zipfile.BadZipFile):
        return None


def write_sidecar(
    path: Path, conn, act: dict[int, ActiveRows], last: int, cap: int, spent_last: int | None = None
) -> bool:
    """Write the sidecar atomically (temp file, then rename); False if the directory refuses.
    ``spent_last`` (a fresh set): the spent watermark, and the rows' solution hashes are kept."""
    fresh = spent_last is not None
    meta = (
        {"format": FRESH_FORMAT if fresh else FORMAT, "cap": cap}
        | cache.identity(conn, last)
        | ({"spent_last": spent_last} if fresh else {})
    )
    arrays = {"meta": np.array(json.dumps(meta))}
    for n, a in act.items():
        assert a.ladder is not None  # __post_init__ fills a ladder left None
        arrays |= {
            f"h{n}": a.hashes,
            f"e{n}": a.edges.astype(np.uint16),
            f"m{n}": a.m.astype(np.uint8),
            f"p{n}": a.pins.astype(np.uint16),
            f"l{n}": a.ladder.astype(np.uint8),
        }
        if fresh:
            arrays[f"s{n}"] = _sols(a)
    return cache.write_npz(path, arrays)


def load_active(
    conn, library: Path | None, cap: int = ACTIVE_CAP, fresh: bool = False
) -> tuple[dict[int, ActiveRows], ActiveInfo]:
    """The active set of the library open on ``conn`` (see the module doc), persisted beside
    ``library`` when given (None: scan, write nothing); ``fresh``: the set of a fresh build."""
    t0 = time.perf_counter()
    path = sidecar_path(library, fresh) if library is not None else None
    got = read_sidecar(path, conn, cap, fresh) if path is not None and path.exists() else None
    spent_last = _last_spent(conn) if fresh else 0
    dropped = 0
    if got is None:
        act, last, read = scan(conn, cap, fresh=fresh)
        source = "scan"
    else:
        # new tiles first (less the spent ones, by every spent row), then the rows new spent rows
        # name leave the set and full sizes refill past its largest hash
        act, last, read = scan(conn, cap, after=got[1], base=got[0], fresh=fresh)
        if fresh:
            act, spent_last, dropped = drop_spent(conn, act, got[2], cap)
        source = "refresh" if read or dropped or spent_last != got[2] else "sidecar"
    written = False
    if path is not None and source != "sidecar":
        written = write_sidecar(path, conn, act, last, cap, spent_last if fresh else None)
    return act, ActiveInfo(source, read, time.perf_counter() - t0, written, dropped)
