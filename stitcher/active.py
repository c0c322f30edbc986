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
"""

from __future__ import annotations

import io
import json
import os
import time
import zipfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from tilelib.bits import VALID_N
from tilelib.tile import nibbles

FORMAT = "tiles-stitch-index/2"   # /2: with each tile's ladder level (profiled builds)
ACTIVE_CAP = 32_768       # tiles per size: 524,288 oriented entries in the C table
SUFFIX = ".stitch-index"
_CHUNK = 50_000
_SELECT = "SELECT rowid, hash, n, top, right, bottom, left, m, alt_sides, ladder FROM tiles"


def canonical_pins(m: int, alt_sides: int) -> int:
    """16-bit pin bitmap of a canonical tile: bit S set iff every alt nibble meets S."""
    nibs = nibbles(alt_sides, m - 1)
    return sum(1 << S for S in range(16) if all(nib & S for nib in nibs))


@dataclass
class ActiveRows:
    """The active tiles of one size, ascending by hash (hex, as bytes)."""

    hashes: np.ndarray        # (k,) S64
    edges: np.ndarray         # (k, 4) int64: canonical top, right, bottom, left
    m: np.ndarray             # (k,) int64
    pins: np.ndarray          # (k,) int64: canonical pin bitmap
    ladder: np.ndarray | None = None   # (k,) int64: ladder level (the level indexes of a profile)

    def __post_init__(self) -> None:
        if self.ladder is None:
            self.ladder = np.zeros(len(self.hashes), dtype=np.int64)

    @staticmethod
    def empty() -> "ActiveRows":
        return ActiveRows(np.zeros(0, dtype="S64"), np.zeros((0, 4), dtype=np.int64),
                          np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64))

    def __len__(self) -> int:
        return len(self.hashes)

    def merged(self, other: "ActiveRows", cap: int) -> "ActiveRows":
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
        return ActiveRows(h[order], e[order], m[order], p[order], lv[order])


@dataclass
class ActiveInfo:
    """How the active set was obtained, for the build's log and benchmarks."""

    source: str               # "sidecar" (no new rows), "refresh" (sidecar + new rows), "scan"
    new_rows: int             # rows read from the library
    seconds: float
    written: bool             # the sidecar was (re)written


def _rows_to_active(rows: list, cap: int) -> dict[int, ActiveRows]:
    """Group library rows (rowid, hash, n, t, r, b, l, m, alt_sides, ladder) by n, each the cap smallest."""
    out: dict[int, ActiveRows] = {}
    if not rows:
        return out
    ns = np.array([r[2] for r in rows], dtype=np.int64)
    hashes = np.array([r[1].encode() for r in rows], dtype="S64")
    edges = np.array([r[3:7] for r in rows], dtype=np.int64)
    m = np.array([r[7] for r in rows], dtype=np.int64)
    ladder = np.array([r[9] for r in rows], dtype=np.int64)
    cache: dict[tuple[int, int], int] = {}
    pins = np.array([cache[k] if k in cache else cache.setdefault(k, canonical_pins(*k))
                     for k in ((r[7], r[8]) for r in rows)], dtype=np.int64)
    for n in np.unique(ns).tolist():
        sel = np.flatnonzero(ns == n)
        out[n] = ActiveRows.empty().merged(ActiveRows(hashes[sel], edges[sel], m[sel], pins[sel], ladder[sel]), cap)
    return out


def scan(conn, cap: int, after: int = 0, base: dict[int, ActiveRows] | None = None):
    """(active set per n, last rowid, rows read): ``base`` merged with the library's rows whose
    rowid is above ``after``, read in chunks (memory stays O(cap + chunk))."""
    act = {n: base.get(n, ActiveRows.empty()) for n in VALID_N} if base else {n: ActiveRows.empty() for n in VALID_N}
    last, read = after, 0
    cur = conn.execute(_SELECT + " WHERE rowid > ? ORDER BY rowid", (after,))
    while True:
        rows = cur.fetchmany(_CHUNK)
        if not rows:
            break
        read += len(rows)
        last = rows[-1][0]
        for n, part in _rows_to_active(rows, cap).items():
            act[n] = act.get(n, ActiveRows.empty()).merged(part, cap)
    return act, last, read


def sidecar_path(library: Path) -> Path:
    return Path(library).with_name(Path(library).name + SUFFIX)


def _probes(conn, last: int) -> list[tuple[int, str]]:
    """(rowid, hash) at a few rowids up to the watermark: what the sidecar checks on open."""
    out = []
    for rid in sorted({last, last // 2, last // 4, 1} - {0}):
        row = conn.execute("SELECT hash FROM tiles WHERE rowid = ?", (rid,)).fetchone()
        if row is not None:
            out.append((rid, row[0]))
    return out


def _library_id(conn) -> str | None:
    row = conn.execute("SELECT value FROM meta WHERE key = 'library_id'").fetchone()
    return row[0] if row else None


def read_sidecar(path: Path, conn, cap: int):
    """(active set, watermark) from a sidecar that still describes this library, else None."""
    try:
        with np.load(path, allow_pickle=False) as z:
            meta = json.loads(str(z["meta"]))
            if (meta.get("format") != FORMAT or meta.get("cap") != cap
                    or meta.get("library_id") != _library_id(conn)):
                return None
            for rid, h in meta["probes"]:
                row = conn.execute("SELECT hash FROM tiles WHERE rowid = ?", (rid,)).fetchone()
                if row is None or row[0] != h:
                    return None
            act = {}
            for n in VALID_N:
                act[n] = ActiveRows(z[f"h{n}"], z[f"e{n}"].astype(np.int64), z[f"m{n}"].astype(np.int64),
                                    z[f"p{n}"].astype(np.int64), z[f"l{n}"].astype(np.int64))
            return act, int(meta["last"])
    except (OSError, ValueError, KeyError, TypeError, EOFError, zipfile.BadZipFile):
        return None


def write_sidecar(path: Path, conn, act: dict[int, ActiveRows], last: int, cap: int) -> bool:
    """Write the sidecar atomically (temp file, then rename); False if the directory refuses."""
    meta = {"format": FORMAT, "cap": cap, "library_id": _library_id(conn), "last": last,
            "probes": _probes(conn, last)}
    arrays = {"meta": np.array(json.dumps(meta))}
    for n, a in act.items():
        arrays |= {f"h{n}": a.hashes, f"e{n}": a.edges.astype(np.uint16), f"m{n}": a.m.astype(np.uint8),
                   f"p{n}": a.pins.astype(np.uint16), f"l{n}": a.ladder.astype(np.uint8)}
    tmp = path.with_name(path.name + f".tmp{os.getpid()}")
    try:
        buf = io.BytesIO()
        np.savez(buf, **arrays)
        tmp.write_bytes(buf.getvalue())
        os.replace(tmp, path)
        return True
    except OSError:
        try:
            tmp.unlink()
        except OSError:
            pass
        return False


def load_active(conn, library: Path | None, cap: int = ACTIVE_CAP) -> tuple[dict[int, ActiveRows], ActiveInfo]:
    """The active set of the library open on ``conn`` (see the module doc), persisted beside
    ``library`` when given (None: scan, write nothing)."""
    t0 = time.perf_counter()
    path = sidecar_path(library) if library is not None else None
    got = read_sidecar(path, conn, cap) if path is not None and path.exists() else None
    if got is None:
        act, last, read = scan(conn, cap)
        source = "scan"
    else:
        act, last, read = scan(conn, cap, after=got[1], base=got[0])
        source = "refresh" if read else "sidecar"
    written = False
    if path is not None and source != "sidecar":
        written = write_sidecar(path, conn, act, last, cap)
    return act, ActiveInfo(source, read, time.perf_counter() - t0, written)
