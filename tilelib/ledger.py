"""The library's bookkeeping tables: misses (FORMAT §8) and manifests (FORMAT §9).

A miss is a ``Constraint`` the library could not answer. It is stored in the
canonical orientation of the constraint (``constraint.canonical_constraint``)
so the same need met in another orientation is the same row; repeats bump
``count`` and ``last_seen``. A miss ends as drained (``tile`` = hash of the tile
made for it) or ``nofit`` (proven to have no completion). ``settled_nofit``
applies the containment rule: a constraint that contains a known nofit
constraint, in any orientation, cannot be met either.
"""

from __future__ import annotations

import sqlite3
import time
from dataclasses import dataclass

from tilelib.constraint import Constraint, canonical_constraint, push_forward
from tilelib.db import atomic
from tilelib.errors import BadInput, RowsNotStored
from tilelib.symmetry import TRANSFORMS

_SIDES = ("top", "right", "bottom", "left")
_MASKS = tuple(f"{s}_mask" for s in _SIDES)


@dataclass(frozen=True)
class Miss:
    id: int
    constraint: Constraint  # canonical orientation
    packing: str | None
    count: int
    nofit: bool
    tile: str | None


def _row_to_miss(r) -> Miss:
    (id_, n, top, right, bottom, left, tm, rm, bm, lm, packing, count, nofit, tile) = r
    return Miss(id_, Constraint(n, (tm, rm, bm, lm), (top, right, bottom, left)), packing, count, bool(nofit), tile)


_MISS_COLS = (
    "id, n, top, right, bottom, left, top_mask, right_mask, bottom_mask, left_mask, packing, count, nofit, tile"
)


def record_miss(conn, c: Constraint, packing: str | None = None, now: int | None = None) -> Miss:
    """Record (or count again) a miss; return its row."""
    canon, _ = canonical_constraint(c)
    now = int(time.time()) if now is None else now
    key = (canon.n, *canon.values, *canon.masks)
    with atomic(conn):
        conn.execute(
            f"INSERT INTO misses (n, side_mask, top, right, bottom, left, {', '.join(_MASKS)}, "
            "packing, first_seen, last_seen) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?) "
            "ON CONFLICT (n, top, right, bottom, left, top_mask, right_mask, bottom_mask, left_mask) "
            "DO UPDATE SET count = count + 1, last_seen = excluded.last_seen",
            (canon.n, canon.side_mask, *canon.values, *canon.masks, packing, now, now),
        )
        found = _find(conn, key)
        if found is None:
            raise RowsNotStored(f"the miss of n = {canon.n} {canon.masks} was recorded and is not stored")
    return found


def find_miss(conn, c: Constraint) -> Miss | None:
    """The recorded miss of c (in any orientation), or None; reads only."""
    canon, _ = canonical_constraint(c)
    return _find(conn, (canon.n, *canon.values, *canon.masks))


def _find(conn, key: tuple) -> Miss | None:
    row = conn.execute(
        f"SELECT {_MISS_COLS} FROM misses WHERE n=? AND top=? AND right=? AND bottom=? AND left=? "
        "AND top_mask=? AND right_mask=? AND bottom_mask=? AND left_mask=?",
        key,
    ).fetchone()
    return None if row is None else _row_to_miss(row)


def open_misses(conn, n: int | None = None, limit: int | None = None) -> list[Miss]:
    """Misses neither drained nor nofit, oldest first."""
    sql = f"SELECT {_MISS_COLS} FROM misses WHERE nofit = 0 AND tile IS NULL"
    params: list = []
    if n is not None:
        sql += " AND n = ?"
        params.append(n)
    sql += " ORDER BY id"
    if limit is not None:
        sql += f" LIMIT {int(limit)}"
    return [_row_to_miss(r) for r in conn.execute(sql, params)]


def get_miss(conn, miss_id: int) -> Miss:
    r = conn.execute(f"SELECT {_MISS_COLS} FROM misses WHERE id = ?", (miss_id,)).fetchone()
    if r is None:
        raise BadInput(f"no miss with id {miss_id}")
    return _row_to_miss(r)


def mark_nofit(conn, miss_id: int) -> None:
    with atomic(conn):
        conn.execute("UPDATE misses SET nofit = 1 WHERE id = ?", (miss_id,))


def mark_drained(conn, miss_id: int, tile_hash: str) -> None:
    with atomic(conn):
        conn.execute("UPDATE misses SET tile = ? WHERE id = ?", (tile_hash, miss_id))


def nofit_rows(conn, n: int) -> tuple[list, list]:
    """The nofit constraints of side n (canonical, as recorded) as (masks, values) rows: top, right,
    bottom, left; ``constraint.image_arrays`` takes them whole, with no ``Constraint`` per row."""
    rows = conn.execute(
        "SELECT top_mask, right_mask, bottom_mask, left_mask, top, right, bottom, left "
        "FROM misses WHERE nofit = 1 AND n = ?",
        (n,),
    ).fetchall()
    return [r[:4] for r in rows], [r[4:] for r in rows]


def settled_nofit(c: Constraint, nofits: list[Constraint]) -> bool:
    """True if ``c`` contains some known nofit constraint in one of its 16 orientations."""
    for bad in nofits:
        for t in TRANSFORMS:
            if c.contains(push_forward(bad, t)):
                return True
    return False


# ------------------------------------------------------------------ manifests


def put_manifest(conn, day: str, seed_commit: str, json_text: str, *, replace: bool = False, spent=()) -> None:
    """Append a day's manifest and, in the same transaction, the spent rows its board adds
    (``tilelib.spent.record``); an existing day is an error unless ``replace``."""
    verb = "INSERT OR REPLACE" if replace else "INSERT"
    try:
        with atomic(conn):
            conn.execute(
                f"{verb} INTO manifests (day, seed_commit, json, created) VALUES (?,?,?,?)",
                (day, seed_commit, json_text, int(time.time())),
            )
            if get_manifest(conn, day) != json_text:
                raise RowsNotStored(f"the manifest of {day} was stored and is not there")
            if spent:
                from tilelib.spent import record

                record(conn, spent)
    except sqlite3.IntegrityError as err:
        raise BadInput(f"the library already holds a manifest for {day}") from err


def get_manifest(conn, day: str) -> str | None:
    r = conn.execute("SELECT json FROM manifests WHERE day = ?", (day,)).fetchone()
    return None if r is None else r[0]


def manifest_days(conn) -> list[str]:
    return [d for (d,) in conn.execute("SELECT day FROM manifests ORDER BY day")]
