"""``tiles library repair``: a clean library written from a damaged or hostile one, losing only what
does not verify (issue 51).

A library refused for its schema (an extra trigger, a view shadowing a table, a changed index) or
for bad rows still holds rows worth keeping. ``repair`` reads the source read-only, through a
connection that trusts nothing in its schema (``tilelib.db.connect``), and writes a **new** file:

- the schema this code ships (``Library.create``), a fresh ``library_id``;
- every ``tiles`` row that verifies as ``tiles library verify`` verifies one (content hash, the
  rules, canonical orientation, edges, features: ``tilelib.audit``), copied unchanged;
- every stored manifest that passes the one manifest gate filed under its own day and commitment;
- every ``spent`` row of FORMAT §5's shape, every ``misses`` row of its shape (ids are local);
- of ``meta``, only the ``stock:`` records of built nights; sync state and verified marks name rowids
  of the old file, so they are left behind (the next pull or push starts over, losing nothing).

The known tables' known columns are read by name from whatever object holds the name (a view
shadowing ``tiles`` is read through, and every row it yields is proven like any other). What was
left behind — each schema object that differs and each row, with why — is the ``RepairReport``.
The original file is never written: it is opened read-only, and the output may not exist yet.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from tilelib.audit import stored_row_problems
from tilelib.db import atomic, connect
from tilelib.errors import BadInput, CorruptLibrary, LibraryError, SchemaTooNew
from tilelib.fsio import check_placeable, staged
from tilelib.merge import MANIFEST_COLUMNS, MISS_COLUMNS, SPENT_COLUMNS
from tilelib.schema import SCHEMA_VERSION, differences, file_version, read_objects
from tilelib.store import SQLITE_MAGIC, TILE_COLUMNS, Library
from trust.checks import MISS_SHAPE, SPENT_SHAPE, check_connection, manifest_row_problem

KEPT_META = ("stock:",)  # meta keys a repaired file keeps (by prefix); the rest is per file
BATCH = 4096


@dataclass
class RepairReport:
    """What a repair kept and what it left behind, with why."""

    source: Path
    out: Path
    kept: dict[str, int] = field(default_factory=dict)  # table -> rows written
    schema: list[str] = field(default_factory=list)  # schema objects left behind
    dropped: list[tuple[str, str, str]] = field(default_factory=list)  # (table, row, why)
    unread: list[tuple[str, str]] = field(default_factory=list)  # (table, why) where reading stopped

    def lines(self, limit: int = 20) -> list[str]:
        """The report as lines: what was kept, then each thing left behind (the first ``limit`` rows)."""
        kept = ", ".join(f"{n:,} {t}" for t, n in self.kept.items())
        out = [f"repaired {self.source} -> {self.out}: kept {kept}"]
        out += [f"  schema: left out {s}" for s in self.schema]
        out += [f"  {t}: reading stopped: {why}" for t, why in self.unread]
        out += [f"  {t} {row}: dropped: {why}" for t, row, why in self.dropped[:limit]]
        if len(self.dropped) > limit:
            out.append(f"  … and {len(self.dropped) - limit:,} more dropped row(s) (--json lists them all)")
        return out

    def as_json(self) -> dict:
        return {
            "source": str(self.source),
            "out": str(self.out),
            "kept": self.kept,
            "schema": self.schema,
            "unread": [{"table": t, "why": w} for t, w in self.unread],
            "dropped": [{"table": t, "row": r, "why": w} for t, r, w in self.dropped],
        }


def default_out(source: Path) -> Path:
    """Where a repair writes when not told: ``<name>.repaired.sqlite`` beside the source."""
    return source.with_name(f"{source.stem}.repaired.sqlite")


def _check_paths(source: Path, out: Path) -> None:
    """BadInput (exit 2) before anything is written: no source library file, or an output that exists,
    is the source, or cannot be placed."""
    if not source.is_file() or source.stat().st_size == 0:
        raise LibraryError(f"no library file at {source} to repair")
    with open(source, "rb") as fh:
        if fh.read(16) != SQLITE_MAGIC:
            raise CorruptLibrary(f"{source} is not a SQLite file: nothing in it can be recovered")
    check_placeable(out, "--out")
    if out.exists() or out.is_symlink():
        raise BadInput(f"--out {out} exists; a repair never overwrites a file (name another)")
    if not out.parent.is_dir():
        raise BadInput(f"cannot write {out}: no directory {out.parent}")


def _read(
    conn: sqlite3.Connection,
    table: str,
    columns: tuple[str, ...],
    rep: RepairReport,
    order: str = "rowid",
    extra: str | None = None,
) -> Iterator[tuple]:
    """The named columns of every row of ``table`` (and the SQL expression ``extra`` after them), in
    batches; where SQLite cannot read on (a missing column, a damaged page), the reason goes to
    ``rep.unread`` and the rows so far stand."""
    cols = ", ".join([f'"{c}"' for c in columns] + ([f"({extra})"] if extra else []))
    try:
        cur = conn.execute(f'SELECT {cols} FROM main."{table}" ORDER BY {order}')
        while rows := cur.fetchmany(BATCH):
            yield from rows
    except sqlite3.DatabaseError as err:
        rep.unread.append((table, str(err)))


def _tile_problem(row: tuple) -> str | None:
    """Why a tiles row does not verify (``tiles library verify``'s checks), or None."""
    problems = stored_row_problems(dict(zip(TILE_COLUMNS, row, strict=True)))
    return problems[0] if problems else None


def _is_int(v) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


# a spent row is kept when it has the publish check's shape and an integer ``created``
_SPENT_KEPT = f"{SPENT_SHAPE} AND typeof(created) = 'integer'"


def _spent_problem(row: tuple) -> str | None:
    """Why a spent row (read with ``_SPENT_KEPT``'s verdict last) is dropped, or None."""
    if not row[-1]:
        return "not of FORMAT §5's shape (hex solution and board, n in 10..16 even, an ISO day)"
    return None


def _miss_problem(row: tuple) -> str | None:
    """Why a misses row (read with ``MISS_SHAPE``'s verdict last) is dropped, or None."""
    if not row[-1]:
        return "not of a miss's shape (integer columns, a tile size, values inside their masks, side_mask, count)"
    return None


def _manifest_problem(row: tuple) -> str | None:
    day, commit, text, created = row
    if not (isinstance(day, str) and isinstance(commit, str) and _is_int(created)):
        return "day, seed_commit or created is of the wrong type"
    return manifest_row_problem(day, commit, text)


# table -> (columns read, an SQL verdict read after them, the row's name in the report, why it is
# dropped or None)
_TABLES: dict[str, tuple[tuple[str, ...], str | None, Callable[[tuple], str], Callable[[tuple], str | None]]] = {
    "tiles": (TILE_COLUMNS, None, lambda r: str(r[0]), _tile_problem),
    "manifests": (MANIFEST_COLUMNS, None, lambda r: str(r[0]), _manifest_problem),
    "misses": (MISS_COLUMNS, MISS_SHAPE, lambda r: f"n={r[0]} masks={r[5:9]}", _miss_problem),
    "spent": (SPENT_COLUMNS, _SPENT_KEPT, lambda r: f"{str(r[0])[:16]}…/{str(r[1])[:16]}…", _spent_problem),
}


def _copy_table(
    src: sqlite3.Connection, dst: sqlite3.Connection, table: str, rep: RepairReport, on_row: Callable[[], None] | None
) -> None:
    """Copy the rows of ``table`` that verify from ``src`` to ``dst``; each one left behind is reported."""
    columns, verdict, name, problem = _TABLES[table]
    quoted = ", ".join('"' + c + '"' for c in columns)
    insert = f"INSERT OR IGNORE INTO {table} ({quoted}) VALUES ({', '.join('?' * len(columns))})"
    kept = 0
    for row in _read(src, table, columns, rep, extra=verdict):
        why = problem(row)
        if why is None:
            before = dst.total_changes
            try:
                dst.execute(insert, row[: len(columns)])
            except sqlite3.Error as err:
                why = f"not storable ({err})"
            else:
                kept += dst.total_changes - before
                if dst.total_changes == before:
                    why = "a duplicate of a row already kept"
        if why is not None:
            rep.dropped.append((table, name(row), why))
        if on_row is not None and table == "tiles":
            on_row()
    rep.kept[table] = kept


def _copy_meta(src: sqlite3.Connection, dst: sqlite3.Connection, rep: RepairReport) -> None:
    """The ``stock:`` records (text keys and values); every other key is per file."""
    for key, value in _read(src, "meta", ("key", "value"), rep, order="key"):
        if key in ("schema_version", "library_id"):
            continue
        if isinstance(key, str) and isinstance(value, str) and key.startswith(KEPT_META):
            dst.execute("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", (key, value))
        else:
            rep.dropped.append(
                ("meta", str(key), "per-file bookkeeping (sync state, verified marks): it names rowids of the old file")
            )


def _schema_left_out(src: sqlite3.Connection, label: str, rep: RepairReport) -> None:
    """Every object of the source's schema that differs from the one shipped for its version (the
    newest when the file cannot say which: no meta table, or not the shipped one). A newer version is
    refused: its rows may have columns this code would drop."""
    try:
        found = read_objects(src)
    except sqlite3.DatabaseError as err:
        rep.unread.append(("sqlite_master", str(err)))
        return
    try:
        version = file_version(src, label, objects=found)
    except SchemaTooNew:
        raise
    except (LibraryError, sqlite3.DatabaseError) as err:
        rep.unread.append(("meta", str(err)))
        version = SCHEMA_VERSION
    rep.schema = differences(found, version)


def repair(source: str | Path, out: str | Path | None = None, on_row: Callable[[], None] | None = None) -> RepairReport:
    """Write a clean library at ``out`` (default ``default_out``) from ``source``; see the module
    docstring. The result passes the full check (``trust.checks``) before it is moved into place."""
    src_path = Path(source)
    out_path = Path(out) if out is not None else default_out(src_path)
    _check_paths(src_path, out_path)
    rep = RepairReport(src_path, out_path)
    src = connect(src_path, readonly=True)
    try:
        _schema_left_out(src, str(src_path), rep)
        with staged(out_path, replace=False) as tmp, Library.create(tmp) as lib:
            with atomic(lib.conn):
                for table in ("tiles", "manifests", "misses", "spent"):
                    _copy_table(src, lib.conn, table, rep, on_row)
                _copy_meta(src, lib.conn, rep)
            lib.conn.execute("VACUUM")
            check_connection(lib.conn, str(out_path), integrity="full")
    finally:
        src.close()
    return rep


__all__ = ["RepairReport", "default_out", "repair"]
