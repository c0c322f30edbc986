"""Runs as a dataset (``tiles referee export``, FORMAT §15): every batch of moves that runs of finished
days made, as one Parquet file — the trajectories agents left, for offline learning and analysis.

``trajectories.parquet``, one row per batch, by day, then run (in the order the runs were made), then
batch: ``day``, ``run``, ``player`` (or null), ``batch`` (its ordinal in the run, from 1), ``t``
(seconds from the run's creation to the batch, 3 decimals), ``moves`` (the batch's moves in order:
``tile``, ``cells``), ``verdicts`` (one per move, in order: ``accepted``, ``correct``, ``reward``,
``reason``), ``reward`` (the batch's Σ n²) and ``solved`` (tiles the batch solved).

Only days that are over (before today, UTC) are exported: a correct move's cells are the tile's
solution. Read straight from the runs database (a file or a PostgreSQL URL) in one read transaction
per query; the file is written whole or not at all (``tilelib.fsio``).
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from pathlib import Path

from referee.runsdb.base import CREATED
from tilelib.errors import BadInput

TRAJECTORIES_FILE = "trajectories.parquet"

# Every batch of the runs of the days in a range, with its moves (a batch is its run's moves with ids
# first_move..last_move), oldest run first.
BATCHES = (
    f"SELECT r.day, r.run, t.player, b.id, b.at, {CREATED}, b.first_move, b.last_move "
    "FROM batches b JOIN runs r ON r.run = b.run LEFT JOIN tokens t ON t.run = r.run "
    f"WHERE r.day >= ? AND r.day <= ? ORDER BY r.day, {CREATED}, r.run, b.id"
)
MOVES = (
    "SELECT m.run, m.id, m.tile, m.cells, m.accepted, m.correct, m.reward, m.reason FROM moves m "
    "JOIN runs r ON r.run = m.run WHERE r.day >= ? AND r.day <= ? ORDER BY m.id"
)


@dataclass(frozen=True)
class TrajectoriesReport:
    """What ``export_runs`` wrote: where, the days it holds, how many runs and batches."""

    out: Path
    days: tuple[str, ...]
    runs: int
    batches: int

    def line(self) -> str:
        return (
            f"exported {self.batches:,} batch(es) of {self.runs:,} run(s) over {len(self.days)} day(s) "
            f"to {self.out / TRAJECTORIES_FILE}"
        )


def rows(read, first: str, last: str) -> list[dict]:
    """The trajectories' rows of the days from ``first`` to ``last`` (module doc); ``read(sql, args)``
    is the runs database's read."""
    moves: dict[str, list[tuple]] = {}
    for run, mid, tile, cells, accepted, correct, reward, reason in read(MOVES, (first, last)):
        moves.setdefault(run, []).append((mid, tile, cells, bool(accepted), bool(correct), int(reward), reason))
    out: list[dict] = []
    ordinal: dict[str, int] = {}
    for day, run, player, _bid, at, created, lo, hi in read(BATCHES, (first, last)):
        ordinal[run] = ordinal.get(run, 0) + 1
        batch = [mv for mv in moves.get(run, ()) if lo <= mv[0] <= hi]
        out.append(
            {
                "day": day,
                "run": run,
                "player": player,
                "batch": ordinal[run],
                "t": round(float(at) - float(created), 3),
                "moves": [{"tile": mv[1], "cells": mv[2]} for mv in batch],
                "verdicts": [{"accepted": mv[3], "correct": mv[4], "reward": mv[5], "reason": mv[6]} for mv in batch],
                "reward": sum(mv[5] for mv in batch),
                "solved": sum(1 for mv in batch if mv[4]),
            }
        )
    return out


def export_runs(target: str | Path, first: str, last: str, out: Path, *, today: dt.date | None = None):
    """Write the trajectories of the days from ``first`` to ``last`` (all over) to ``out`` (module doc)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from referee.runsdb import opened
    from referee.service.runs import require_runs
    from tilelib.fsio import atomic_write, check_placeable

    today = today or dt.datetime.now(dt.UTC).date()
    if dt.date.fromisoformat(last) >= today:
        raise BadInput(
            f"{last} is not over (UTC today is {today.isoformat()}): a correct move's cells are a solution, "
            f"secret until then; export up to {(today - dt.timedelta(days=1)).isoformat()}"
        )
    out = check_placeable(out, "--out", want_dir=True)
    require_runs(target)
    with opened(target) as db:
        table = rows(db.read, first, last)
    days = tuple(sorted({r["day"] for r in table}))
    rep = TrajectoriesReport(Path(out), days, len({r["run"] for r in table}), len(table))
    rep.out.mkdir(parents=True, exist_ok=True)
    sink = pa.BufferOutputStream()
    pq.write_table(pa.Table.from_pylist(table, schema=schema()), sink, compression="zstd")
    atomic_write(rep.out / TRAJECTORIES_FILE, sink.getvalue().to_pybytes())
    return rep


def schema():
    import pyarrow as pa

    move = pa.struct([("tile", pa.int32()), ("cells", pa.string())])
    verdict = pa.struct(
        [("accepted", pa.bool_()), ("correct", pa.bool_()), ("reward", pa.int32()), ("reason", pa.string())]
    )
    return pa.schema(
        [
            ("day", pa.string()),
            ("run", pa.string()),
            ("player", pa.string()),
            ("batch", pa.int32()),
            ("t", pa.float64()),
            ("moves", pa.list_(move)),
            ("verdicts", pa.list_(verdict)),
            ("reward", pa.int64()),
            ("solved", pa.int32()),
        ]
    )
