"""Valid synthetic tile libraries of any size, fast, for ``scripts/bench_scale.py`` (issue 12).

Rows are real tiles, never placeholders: every row passes ``tilelib.audit.tile_problems``
(hash, canonical form, edges, rules, corners, every feature that follows from the
alternatives), and its m, alternatives and ladder features are what the engine says.

Row i of the sequence (the libraries are nested prefixes of it, so a 20k library is
the first 20k rows of the 2.5M one):

* i < REAL: a tile made by the generator (``generator.make.make_tile``), n drawn
  from the size mix of a real drained library (``N_MIX``: the 19,143-tile library
  of BENCHMARKS.md's hit-rate section), seam_mask uniform 0..15, m_max by n;
* i >= REAL: a *variant* of real tile i mod REAL — its givens plus a non-empty
  subset of its *free seam cells* (not given, not a corner, on a seam_mask side,
  where every alternative agrees with the solution: flip = 0). Adding such cells
  changes no feature but ``blank``: the solution set is the same (every solution
  already shows those values), and the ladder rates givens + seam sides, which
  already held them. It is canonical in the seed's orientation when the
  solution's 16 images are distinct (seeds with a symmetric solution get no
  variants). A variant is a non-minimal but honest thinning: a row the generator
  could have written.

So a library past REAL rows has REAL distinct solutions and the rest are variants
sharing them (a real n = 6 library must share solutions anyway: there are 4,140
6×6 grids). The benchmark reports the distinct-solution count beside each size.
"""

from __future__ import annotations

import multiprocessing
import shutil
import time
from pathlib import Path

import numpy as np

from generator.features import side_known
from generator.make import GenParams, make_tile
from tilelib import bits
from tilelib.db import atomic, connect
from tilelib.rng import Stream
from tilelib.store import TILE_COLUMNS, Library, tile_row
from tilelib.symmetry import TRANSFORMS, apply_grid
from tilelib.tile import content_hash

BUILDER = "scale-libs/1"  # bump when the row sequence changes (cached files are rebuilt)
SEED = b"tiles-bench-scale".ljust(32, b"\x00")
N_MIX = {6: 6428, 8: 3425, 10: 3493, 12: 2191, 14: 2472, 16: 1134}
REAL = 100_000
CREATED = 1_790_000_000
_COLS = ", ".join(TILE_COLUMNS)
_INSERT = f"INSERT OR IGNORE INTO tiles ({_COLS}) VALUES ({', '.join('?' * len(TILE_COLUMNS))})"


def real_row(i: int) -> tuple:
    """Row i (< REAL): a generator tile of a mix-drawn size and a uniform seam mask, canonical."""
    st = Stream(SEED, "real").child(str(i))
    total = sum(N_MIX.values())
    r = st.randbelow(total)
    for n, w in N_MIX.items():  # noqa: B007 (the loop's last n is the pick)
        if r < w:
            break
        r -= w
    seam = st.randbelow(16)
    tile = make_tile(GenParams.make(n, seam_mask=seam), st.child("make"))
    canon, _ = tile.canonical()
    return tile_row(canon, CREATED)


_COL = {c: k for k, c in enumerate(TILE_COLUMNS)}


def free_seam_cells(row: tuple) -> list[int] | None:
    """Flat indices of a canonical row's free seam cells (see the module doc), or None when its
    solution has a symmetry (a variant might not be canonical in the seed's orientation)."""
    n = row[_COL["n"]]
    sol = bits.from_blob(row[_COL["solution"]], n)
    images = {bits.to_blob(apply_grid(sol, t)) for t in TRANSFORMS}
    if len(images) != 16:
        return None
    giv = bits.from_blob(row[_COL["givens"]], n)
    flip = bits.from_blob(row[_COL["flip"]], n)
    ok = side_known(n, row[_COL["seam_mask"]]).astype(bool) & (giv == 0) & (flip == 0)
    for r, c in ((0, 0), (0, n - 1), (n - 1, 0), (n - 1, n - 1)):
        ok[r, c] = False
    return np.flatnonzero(ok.ravel()).tolist()


def variant_row(row: tuple, cells: list[int], v: int) -> tuple:
    """Variant v >= 0 of a seed row: the subset of ``cells`` whose bitmask is v + 1 added to the givens."""
    n = row[_COL["n"]]
    giv = bits.from_blob(row[_COL["givens"]], n).ravel().copy()
    sub = v + 1
    for k, cell in enumerate(cells):
        if (sub >> k) & 1:
            giv[cell] = 1
    givens = bits.to_blob(giv.reshape(n, n))
    out = list(row)
    out[_COL["givens"]] = givens
    out[_COL["blank"]] = float(1.0 - giv.sum() / (n * n))
    out[_COL["hash"]] = content_hash(n, row[_COL["solution"]], givens, row[_COL["seam_mask"]])
    return tuple(out)


def variants_per_seed(cells: list[int] | None) -> int:
    return 0 if not cells else min((1 << min(len(cells), 40)) - 1, 1 << 20)


def _real_chunk(args: tuple[int, int]) -> list[tuple]:
    a, b = args
    return [(i, real_row(i)) for i in range(a, b)]


_SEEDS: list | None = None
_CELLS: dict[int, list | None] = {}


def _variant_chunk(args: tuple[int, int]) -> list[tuple]:
    """(slot, row or None) for slots [a, b) >= REAL: slot REAL + k is variant k // S of seed k % S
    (S = the real tiles), None when that seed has too few free cells (or a symmetric solution)."""
    a, b = args
    out = []
    for s in range(a, b):
        k = s - REAL
        j, v = k % len(_SEEDS), k // len(_SEEDS)
        if j not in _CELLS:
            _CELLS[j] = free_seam_cells(_SEEDS[j])
        cells = _CELLS[j]
        out.append((s, variant_row(_SEEDS[j], cells, v) if v < variants_per_seed(cells) else None))
    return out


def _init_seeds(seeds) -> None:
    global _SEEDS
    _SEEDS = seeds
    _CELLS.clear()


def _pool(workers: int, initializer=None, initargs=()):
    return multiprocessing.get_context("fork").Pool(workers, initializer=initializer, initargs=initargs)


def _append(conn, chunks, have: int, want: int, log, name: str) -> tuple[int, int]:
    """Insert (slot, row) chunks in slot order until the library holds ``want`` tiles;
    return (tiles, next slot)."""
    t0, last, nxt = time.perf_counter(), time.perf_counter(), None
    for chunk in chunks:
        rows = []
        for slot, row in chunk:
            if have + len(rows) >= want:
                break
            nxt = slot + 1
            if row is not None:
                rows.append(row)
        if rows:
            before = conn.total_changes
            with atomic(conn):
                conn.executemany(_INSERT, rows)
            have += conn.total_changes - before
        if have >= want:
            break
        if time.perf_counter() - last > 15:
            last = time.perf_counter()
            log(f"  {name}: {have:,}/{want:,} rows ({time.perf_counter() - t0:.0f} s)")
    return have, nxt


def _tag(cache: Path, size: int) -> Path:
    return cache / f"lib-{size}.built"


def _built(cache: Path, size: int) -> int | None:
    """The next variant slot of a finished cached library of this size, or None."""
    tag, path = _tag(cache, size), cache / f"lib-{size}.sqlite"
    if not (tag.exists() and path.exists()):
        return None
    parts = tag.read_text().split()
    return int(parts[1]) if len(parts) == 2 and parts[0] == BUILDER else None


def _connect(path: Path):
    conn = connect(path)
    conn.execute("PRAGMA synchronous = OFF")
    conn.execute("PRAGMA cache_size = -2000000")  # 2 GB: random-hash inserts into a 700 MB file
    return conn


def _without_statistics(path: Path) -> None:
    """Drop the planner statistics a cached library built before issue 51 carries (``ANALYZE``'s
    sqlite_stat tables): a library's schema is exactly the shipped one, and real libraries have none."""
    conn = _connect(path)
    try:
        for (name,) in conn.execute("SELECT name FROM sqlite_master WHERE name LIKE 'sqlite_stat%'").fetchall():
            with atomic(conn):
                conn.execute(f"DROP TABLE {name}")
    finally:
        conn.close()


def build_reals(cache: Path, *, workers: int = 2, log=print) -> Path:
    """``reals.sqlite``: the generator tiles of slots 0..REAL-1 in slot order (a tile made twice is
    one row, so it may hold a few fewer than REAL)."""
    cache.mkdir(parents=True, exist_ok=True)
    path, tag = cache / "reals.sqlite", cache / "reals.built"
    if path.exists() and tag.exists() and tag.read_text() == f"{BUILDER} {REAL}":
        return path
    tmp = cache / "reals.partial.sqlite"
    for stale in (tmp, tmp.with_name(tmp.name + "-journal")):
        if stale.exists():
            stale.unlink()
    Library.create(tmp).close()
    conn = _connect(tmp)
    t0 = time.perf_counter()
    with _pool(workers) as pool:
        chunks = pool.imap(_real_chunk, ((a, min(a + 250, REAL)) for a in range(0, REAL, 250)))
        have, _ = _append(conn, chunks, 0, REAL, log, path.name)
    conn.close()
    tmp.replace(path)
    tag.write_text(f"{BUILDER} {REAL}")
    log(f"  built {path.name}: {have:,} generator tiles in {time.perf_counter() - t0:.0f} s")
    return path


def build_library(cache: Path, size: int, *, workers: int = 2, log=print) -> Path:
    """The cached library of ``size`` tiles: the first ``size`` real tiles, or all of them and
    variants in slot order (continued from the largest smaller cached library, whose next
    variant slot its tag file records)."""
    path = cache / f"lib-{size}.sqlite"
    if _built(cache, size) is not None:
        _without_statistics(path)
        return path
    reals = build_reals(cache, workers=workers, log=log)
    tmp = cache / f"lib-{size}.partial.sqlite"
    for stale in (tmp, tmp.with_name(tmp.name + "-journal")):  # a killed build's hot journal would
        if stale.exists():  # "roll back" onto the fresh copy
            stale.unlink()
    t0 = time.perf_counter()
    conn = _connect(reals)
    nreal = conn.execute("SELECT count(*) FROM tiles").fetchone()[0]
    conn.close()
    if size <= nreal:
        shutil.copyfile(reals, tmp)
        conn = _connect(tmp)
        with atomic(conn):
            conn.execute("DELETE FROM tiles WHERE rowid > ?", (size,))
        conn.execute("VACUUM")
        have, slot = conn.execute("SELECT count(*) FROM tiles").fetchone()[0], REAL
    else:
        smaller = sorted(
            s
            for s in (int(p.stem.split("-")[1]) for p in cache.glob("lib-*.built"))
            if nreal < s < size and _built(cache, s) is not None
        )
        src = cache / f"lib-{smaller[-1]}.sqlite" if smaller else reals
        slot = _built(cache, smaller[-1]) if smaller else REAL
        shutil.copyfile(src, tmp)
        conn = _connect(tmp)
        have = conn.execute("SELECT count(*) FROM tiles").fetchone()[0]
        seeds = _connect(reals).execute(f"SELECT {_COLS} FROM tiles ORDER BY rowid").fetchall()
        step = 5000

        def ranges():
            a = slot
            while True:
                yield a, a + step
                a += step

        with _pool(workers, _init_seeds, (seeds,)) as pool:
            have, nxt = _append(conn, pool.imap(_variant_chunk, ranges()), have, size, log, path.name)
            slot = nxt if nxt is not None else slot
            pool.terminate()
    conn.close()
    tmp.replace(path)
    _tag(cache, size).write_text(f"{BUILDER} {slot}")
    log(f"  built {path.name}: {have:,} rows in {time.perf_counter() - t0:.0f} s (next slot {slot:,})")
    return path
