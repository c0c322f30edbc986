"""The fair rule's stock: library rows of side n >= 10 whose solution no board has spent yet.

Under ``--reuse fresh`` (``tilelib.spent``) a board places no n >= 10 solution that an earlier
board used, so the library is a stock the nights draw down: a first-pass hit takes an unspent
tile, a miss is drained (made for its square on the critical path) and spent at once. This module
says how much is left and how fast it goes (``tiles library stock``, ``daily build --json``):

- **per n** (10..16): library rows, rows whose solution is unspent, and the distinct unspent
  solutions — what boards can still place, one row per solution per board (several rows can share
  a solution: thinned alike but with other givens);
- **per edge class**: unspent rows by the shape of the sides they were thinned to rely on
  (``seam_mask``: none, one side, a corner, two opposite sides, three, four). A tile made with
  seam sides has several solutions alone and is only unique, so only placeable, where those sides
  are known; the stitch asks by the sides a square has placed neighbours on;
- **the rate**: tiles drawn from the stock per night over the last ``NIGHTS`` live boards, and the
  **nights left** at that rate (distinct unspent solutions / drawn per night).

Exact and incremental. Counting the unspent rows needs every row's solution hash
(``spent.solution_hash``), a pass over the library; the counts are kept in a cache beside it,
``<library>.stock`` (``tilelib.cache``): per n, the rows in solution-key order (a 16-byte key,
an edge class and a spent flag each), the keys of every spent solution, and two watermarks
(tiles and spent rowids). Opening it reads only the rows added since and merges them, and the
new spent keys, by binary search; the counts are plain passes over the flags.

What each night drew is recorded by the build, which knows it exactly (a fresh tile of the board
with a rowid at most the largest before the build was in the stock; one above was made that
night): the meta key ``stock:night:<day>`` holds ``{"board", "drawn", "made", "left"}``, per n
the tiles drawn and made and the distinct unspent solutions left once its spent rows were stored. Like
``verified:`` keys it is this file's bookkeeping, never part of a snapshot
(``remote.snapshot.STATE_PREFIXES``); a board the library no longer holds as its day's manifest
(withdrawn, rebuilt) does not count.
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

FORMAT = "tiles-stock/2"  # /2: rows in key order with a spent flag
SUFFIX = ".stock"
NIGHTS = 7  # the rate's window: the last 7 live boards with a record
NIGHT_PREFIX = "stock:night:"
CLASSES = ("none", "one", "corner", "opposite", "three", "four")
HELD = tuple(n for n in VALID_N if spent.held(n))
_KEY = "S16"  # the first 16 bytes of a solution hash's digest
_CHUNK = 50_000


def edge_class(seam_mask: int) -> int:
    """Index into ``CLASSES`` of a seam mask's shape (the same under every symmetry)."""
    k = bin(seam_mask & 15).count("1")
    if k == 2:
        return CLASSES.index("opposite" if seam_mask in (5, 10) else "corner")
    return {0: 0, 1: 1, 3: 4, 4: 5}[k]


def _key(n: int, blob: bytes) -> bytes:
    return spent.solution_digest(n, blob)[:16]


@dataclass
class StockSet:
    """Per held n, the library's rows in key order: solution key, edge class, spent flag; the keys
    of every spent solution. Kept sorted so a night's rows and spent keys merge in by binary search
    (no sort of the whole set) and the counts are plain passes."""

    keys: dict[int, np.ndarray]  # n -> (rows,) S16, ascending (rows sharing a solution adjacent)
    classes: dict[int, np.ndarray]  # n -> (rows,) uint8
    gone: dict[int, np.ndarray]  # n -> (rows,) bool: the row's solution is spent
    spent: np.ndarray  # (k,) S16, sorted, unique
    last: int  # largest tiles rowid read
    spent_last: int  # largest spent rowid read

    @staticmethod
    def empty() -> StockSet:
        return StockSet(
            {n: np.zeros(0, _KEY) for n in HELD},
            {n: np.zeros(0, np.uint8) for n in HELD},
            {n: np.zeros(0, bool) for n in HELD},
            np.zeros(0, _KEY),
            0,
            0,
        )


def _member(sorted_keys: np.ndarray, keys: np.ndarray) -> np.ndarray:
    """Which of ``keys`` are in ``sorted_keys`` (binary search)."""
    idx = np.searchsorted(sorted_keys, keys)
    hit = idx < len(sorted_keys)
    out = np.zeros(len(keys), dtype=bool)
    out[hit] = sorted_keys[idx[hit]] == keys[hit]
    return out


def _add_rows(st: StockSet, n: int, keys: np.ndarray, classes: np.ndarray) -> None:
    order = np.argsort(keys, kind="stable")
    keys, classes = keys[order], classes[order]
    at = np.searchsorted(st.keys[n], keys, side="right")
    st.keys[n] = np.insert(st.keys[n], at, keys)
    st.classes[n] = np.insert(st.classes[n], at, classes)
    st.gone[n] = np.insert(st.gone[n], at, _member(st.spent, keys))


def _read_tiles(conn, st: StockSet) -> int:
    """Merge the rows above ``st.last`` (chunked); returns how many were read."""
    read = 0
    cur = conn.execute("SELECT rowid, n, seam_mask, solution FROM tiles WHERE rowid > ? ORDER BY rowid", (st.last,))
    while rows := cur.fetchmany(_CHUNK):
        read += len(rows)
        st.last = rows[-1][0]
        for n in HELD:
            part = [r for r in rows if r[1] == n]
            if part:
                _add_rows(
                    st,
                    n,
                    np.array([_key(n, r[3]) for r in part], _KEY),
                    np.array([edge_class(r[2]) for r in part], np.uint8),
                )
    return read


def _read_spent(conn, st: StockSet) -> int:
    """Merge the spent rows above ``st.spent_last`` and flag the rows they name; returns how many were read."""
    if not spent.has_table(conn):
        return 0
    rows = conn.execute("SELECT rowid, solution FROM spent WHERE rowid > ? ORDER BY rowid", (st.spent_last,)).fetchall()
    if not rows:
        return 0
    st.spent_last = rows[-1][0]
    _add_spent(st, np.array([bytes.fromhex(s)[:16] for _r, s in rows], _KEY))
    return len(rows)


def _add_spent(st: StockSet, keys: np.ndarray) -> None:
    """Merge spent solution keys into ``st.spent`` and flag the rows of the new ones."""
    new = np.unique(keys)
    new = new[~_member(st.spent, new)]
    st.spent = np.insert(st.spent, np.searchsorted(st.spent, new), new)
    for n in HELD:
        lo = np.searchsorted(st.keys[n], new, side="left")
        hi = np.searchsorted(st.keys[n], new, side="right")
        for a, b in zip(lo[hi > lo].tolist(), hi[hi > lo].tolist(), strict=True):
            st.gone[n][a:b] = True


def _last_spent(conn) -> int:
    return conn.execute("SELECT coalesce(max(rowid), 0) FROM spent").fetchone()[0] if spent.has_table(conn) else 0


def read_cache(path: Path, conn) -> StockSet | None:
    """The stock set a cache file holds, if it still describes this library (else None)."""
    try:
        with np.load(path, allow_pickle=False) as z:
            meta = json.loads(str(z["meta"]))
            if meta.get("format") != FORMAT or not cache.describes(conn, meta):
                return None
            if int(meta["spent_last"]) > _last_spent(conn):
                return None  # spent rows it saw are gone: not this library's past
            return StockSet(
                {n: z[f"k{n}"] for n in HELD},
                {n: z[f"c{n}"] for n in HELD},
                {n: z[f"g{n}"] for n in HELD},
                z["spent"],
                int(meta["last"]),
                int(meta["spent_last"]),
            )
    except (OSError, ValueError, KeyError, TypeError, EOFError, zipfile.BadZipFile):
        return None


def write_cache(path: Path, conn, st: StockSet) -> bool:
    meta = {"format": FORMAT, "spent_last": st.spent_last} | cache.identity(conn, st.last)
    arrays = {"meta": np.array(json.dumps(meta)), "spent": st.spent}
    for n in HELD:
        arrays |= {f"k{n}": st.keys[n], f"c{n}": st.classes[n], f"g{n}": st.gone[n]}
    return cache.write_npz(path, arrays)


@dataclass
class LoadInfo:
    source: str  # "cache" (nothing new), "refresh" (cache + new rows), "scan"
    rows_read: int  # tiles and spent rows read from the library
    seconds: float


def load(conn, library: Path | None) -> tuple[StockSet, LoadInfo]:
    """The stock set of the library open on ``conn``, kept in ``<library>.stock`` (None: scan, write nothing)."""
    t0 = time.perf_counter()
    path = cache.beside(library, SUFFIX) if library is not None else None
    st = read_cache(path, conn) if path is not None and path.exists() else None
    source = "scan" if st is None else "cache"
    st = StockSet.empty() if st is None else st
    read = _read_tiles(conn, st) + _read_spent(conn, st)
    if read and source == "cache":
        source = "refresh"
    if path is not None and source != "cache":
        write_cache(path, conn, st)
    return st, LoadInfo(source, read, time.perf_counter() - t0)


# ------------------------------------------------------------------ what each night drew


def night_key(day: str) -> str:
    return NIGHT_PREFIX + day


def record_night(conn, day: str, board: str, fair_per_n: dict, left: dict[int, dict] | None = None) -> dict:
    """Record what the board ``board`` of ``day`` drew from the stock and made (per held n, from
    ``daily.fairness.report``'s ``per_n``) and the distinct unspent solutions it ``left`` (``counts``
    once its spent rows are stored) into the open transaction; returns the record. Drawn + left is
    the stock the night started with: what the top-up restores (``generator.topup``)."""
    rec = {
        "board": board,
        "drawn": {n: d.get("drawn", 0) for n, d in fair_per_n.items() if spent.held(int(n))},
        "made": {n: d.get("made", 0) for n, d in fair_per_n.items() if spent.held(int(n))},
    }
    if left is not None:
        rec["left"] = {str(n): c["solutions"] for n, c in left.items()}
    conn.execute(
        "INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", (night_key(day), json.dumps(rec, sort_keys=True))
    )
    return rec


def nights(conn, k: int = NIGHTS) -> list[tuple[str, dict]]:
    """(day, record) of the last ``k`` days, latest first, whose record names the board the library
    holds as that day's manifest."""
    rows = conn.execute(
        "SELECT key, value FROM meta WHERE key >= ? AND key < ? ORDER BY key DESC",
        (NIGHT_PREFIX, NIGHT_PREFIX[:-1] + ";"),
    ).fetchall()
    recs = []
    for key, value in rows:
        try:
            rec = json.loads(value)
        except ValueError:
            continue
        if isinstance(rec, dict):
            recs.append((key[len(NIGHT_PREFIX) :], rec))
    live = spent.live_boards(conn, [d for d, _ in recs])
    return [(d, r) for d, r in recs if live.get(d) == r.get("board")][:k]


# ------------------------------------------------------------------ the report


def counts(st: StockSet) -> dict[int, dict]:
    """Per held n: rows, unspent rows, distinct unspent solutions, unspent rows per edge class."""
    out = {}
    for n in HELD:
        keys, free = st.keys[n], ~st.gone[n]
        per_class = np.bincount(st.classes[n][free], minlength=len(CLASSES))
        fk = keys[free]  # ascending: a solution's rows are adjacent
        out[n] = {
            "rows": int(len(keys)),
            "unspent": int(free.sum()),
            "solutions": int(len(fk) and 1 + np.count_nonzero(fk[1:] != fk[:-1])),
            "per_class": {c: int(v) for c, v in zip(CLASSES, per_class, strict=True)},
        }
    return out


def report(conn, library: Path | None, k: int = NIGHTS, loaded: tuple[StockSet, LoadInfo] | None = None) -> dict:
    """The stock (module doc) as one JSON-ready dict: per n its counts, ``drawn_per_night`` (the
    mean over the last ``k`` recorded live nights; None without any) and ``nights_left`` (None when
    nothing is drawn); ``empty``: the held sizes with no unspent solution; ``started``: the stock
    the latest recorded night started with (its drawn + left; None for a size it lacks).
    ``loaded``: a ``load`` the caller already made (nothing has changed since)."""
    st, info = loaded if loaded is not None else load(conn, library)
    recs = nights(conn, k)
    last = recs[0][1] if recs else {}
    per_n = {}
    for n, c in counts(st).items():
        drawn = [int(r.get("drawn", {}).get(str(n), 0)) for _d, r in recs]
        made = [int(r.get("made", {}).get(str(n), 0)) for _d, r in recs]
        rate = sum(drawn) / len(drawn) if drawn else None
        left = last.get("left", {}).get(str(n))
        c |= {
            "drawn_per_night": None if rate is None else round(rate, 3),
            "made_per_night": round(sum(made) / len(made), 3) if made else None,
            "nights_left": round(c["solutions"] / rate, 1) if rate else None,
            "started": None if left is None else int(left) + int(last.get("drawn", {}).get(str(n), 0)),
        }
        per_n[str(n)] = c
    return {
        "per_n": per_n,
        "nights": [d for d, _ in recs],
        "empty": [int(n) for n, c in per_n.items() if not c["solutions"]],
        "load": {"source": info.source, "rows_read": info.rows_read, "seconds": round(info.seconds, 3)},
    }


def line(rep: dict) -> str:
    """One line: distinct unspent solutions and nights left per n (the build's stage line)."""
    parts = []
    for n, c in rep["per_n"].items():
        left = "" if c["nights_left"] is None else f", {c['nights_left']:,} nights"
        parts.append(f"{n}: {c['solutions']:,}{left}")
    return f"unspent n>=10 solutions {'  '.join(parts)} (rate over {len(rep['nights'])} night(s)){_empty(rep)}"


def _empty(rep: dict) -> str:
    return f"; EMPTY for n = {', '.join(map(str, rep['empty']))}" if rep["empty"] else ""


def lines(rep: dict) -> list[str]:
    """The report in a few lines for people (``tiles library stock``, ``status``, the top-up)."""
    out = []
    for n, c in rep["per_n"].items():
        left = "" if c["nights_left"] is None else f", {c['nights_left']:,} nights left"
        rate = (
            "no night recorded"
            if c["drawn_per_night"] is None
            else f"{c['drawn_per_night']:,} drawn and {c['made_per_night']:,} made per night"
        )
        cls = ", ".join(f"{k} {v:,}" for k, v in c["per_class"].items() if v)
        out.append(
            f"n={n:>2}: {c['unspent']:,} unspent of {c['rows']:,} rows, {c['solutions']:,} solutions"
            + (f" (by seam sides: {cls})" if cls else "")
            + f"; {rate}{left}"
        )
    nights_ = rep["nights"]
    out.append(
        f"rate over {len(nights_)} night(s)" + (f" ({nights_[-1]} .. {nights_[0]})" if nights_ else "") + _empty(rep)
    )
    return out


__all__ = [
    "CLASSES",
    "FORMAT",
    "HELD",
    "LoadInfo",
    "NIGHTS",
    "NIGHT_PREFIX",
    "StockSet",
    "counts",
    "edge_class",
    "line",
    "lines",
    "load",
    "night_key",
    "nights",
    "read_cache",
    "record_night",
    "report",
    "write_cache",
]
