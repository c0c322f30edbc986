"""Past days as a dataset (``tiles daily export``, issue 54): the days a library holds that are over,
as two Parquet files that pandas, polars, pyarrow and Hugging Face ``datasets`` read as they are.

- ``tiles.parquet``, one row per tile: ``day``, ``tile`` (its id), ``n``, ``y0``, ``x0`` (its
  window's top-left board cell), ``neighbours`` (the tiles it shares a seam with: the judge's
  frontier rule), ``seed`` (the seed tile?), ``puzzle`` (what a player sees at the start of a run:
  n·n chars ``0``/``1``/``.``, the service's view with nothing solved), ``solution`` (n·n chars) and
  ``wave`` (the wave of the tile-by-tile closure that solves it: 1 = solvable from the start; the
  order a perfect player can follow); and its difficulty as the library measured it: ``ladder``
  (the highest rule level its puzzle needs), ``m`` (its isolated multiplicity), ``blank`` (the
  share of its cells not given).
- ``days.parquet``, one row per day: ``day``, ``G``, ``tiles``, ``seed`` (hex, when TILES_SECRET is
  set and matches the day's commitment; else null), ``seed_commit``, ``packer``, ``code`` (the
  versions the board was built with, JSON: what a replay needs), ``reward_total`` (Σ n², a full
  clear's reward), ``waves``.

A day that is not over (today or later, UTC) is refused: its solutions are still secret. Each board
is rebuilt from the library and proven by the one gate (``referee.gate``) before a row is written;
the files are written whole or not at all (``tilelib.fsio``).
"""

from __future__ import annotations

import datetime as dt
import json
from dataclasses import dataclass, field
from pathlib import Path

from tilelib.errors import BadInput

TILES_FILE, DAYS_FILE = "tiles.parquet", "days.parquet"


@dataclass
class ExportReport:
    """What ``export_days`` wrote."""

    out: Path
    days: list[str] = field(default_factory=list)
    tiles: int = 0
    seeds: int = 0

    def line(self) -> str:
        span = f"{self.days[0]}..{self.days[-1]}" if self.days else "no day"
        return (
            f"exported {len(self.days)} day(s) ({span}), {self.tiles} tiles, {self.seeds} seed(s) revealed "
            f"-> {self.out / DAYS_FILE}, {self.out / TILES_FILE}"
        )


def days_in(conn, first: str, last: str) -> list[str]:
    """The days from ``first`` to ``last`` (inclusive) whose manifest the library holds, in order."""
    if first > last:
        raise BadInput(f"--from {first} is after --to {last}")
    return [
        d for (d,) in conn.execute("SELECT day FROM manifests WHERE day BETWEEN ? AND ? ORDER BY day", (first, last))
    ]


def refuse_unfinished(days: list[str], today: dt.date) -> None:
    """BadInput naming the first day that is not over (its solutions are secret until it is)."""
    late = [d for d in days if dt.date.fromisoformat(d) >= today]
    if late:
        raise BadInput(
            f"{late[0]} is not over (UTC today is {today.isoformat()}): its solutions are secret "
            f"until then; export up to {(today - dt.timedelta(days=1)).isoformat()}"
        )


def day_rows(lib, day: str, secret: str | None) -> tuple[dict, list[dict]]:
    """(the day's row, its tiles' rows): the board rebuilt through the gate, the views and waves."""
    from daily.seed import day_seed
    from referee.closure import closure
    from referee.manifest import from_json
    from referee.service.boards import DayBoard, puzzle_view
    from tilelib.days import seed_commit
    from tilelib.ledger import get_manifest

    m = from_json(get_manifest(lib.conn, day))
    db = DayBoard.load(m, lib, "unused-runs.sqlite")  # the judge's runs are never opened here
    waves = closure(db.board).wave
    stored = lib.get_many(m.hashes)  # the library rows the manifest names: each tile's measures (FORMAT §4)
    tiles = []
    for t, (x0, y0, s) in enumerate(db.board.squares):
        view = puzzle_view(db, t, set())
        f = stored[m.hashes[t]].features
        tiles.append(
            {
                "day": day,
                "tile": t,
                "n": s + 1,
                "y0": y0,
                "x0": x0,
                "neighbours": view["neighbours"],
                "seed": t == db.board.seed_tile,
                "puzzle": view["puzzle"],
                "solution": db.judge.truth(t),
                "wave": waves[t],
                "ladder": f.ladder,
                "m": f.m,
                "blank": f.blank,
            }
        )
    seed = None
    if secret:
        raw = day_seed(secret, day)
        seed = raw.hex() if seed_commit(raw) == m.seed_commit else None
    row = {
        "day": day,
        "G": db.board.G,
        "tiles": len(tiles),
        "seed": seed,
        "seed_commit": m.seed_commit,
        "packer": m.packing.name,
        "code": _versions(m),
        "reward_total": sum(r["n"] ** 2 for r in tiles),
        "waves": max(waves, default=0),
    }
    return row, tiles


def _versions(m) -> str | None:
    """The manifest's ``build.versions`` as JSON with sorted keys, or None when it has none."""
    v = (m.build or {}).get("versions")
    return None if v is None else json.dumps(v, sort_keys=True)


def export_days(
    lib, first: str, last: str, out: Path, *, secret: str | None = None, today: dt.date | None = None
) -> ExportReport:
    """Write the over days from ``first`` to ``last`` that ``lib`` holds to ``out`` (module doc)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from tilelib.fsio import atomic_write, check_placeable

    today = today or dt.datetime.now(dt.UTC).date()
    out = check_placeable(out, "--out", want_dir=True)
    days = days_in(lib.conn, first, last)
    refuse_unfinished(days, today)
    if not days:
        raise BadInput(f"the library holds no day from {first} to {last}")
    rep = ExportReport(Path(out), days)
    day_table, tile_table = [], []
    for day in days:
        row, tiles = day_rows(lib, day, secret)
        day_table.append(row)
        tile_table.extend(tiles)
    rep.tiles, rep.seeds = len(tile_table), sum(1 for r in day_table if r["seed"])
    rep.out.mkdir(parents=True, exist_ok=True)
    day_schema, tile_schema = _schemas()
    for name, rows, schema in ((DAYS_FILE, day_table, day_schema), (TILES_FILE, tile_table, tile_schema)):
        sink = pa.BufferOutputStream()
        pq.write_table(pa.Table.from_pylist(rows, schema=pa.schema(schema)), sink, compression="zstd")
        atomic_write(rep.out / name, sink.getvalue().to_pybytes())
    return rep


def _schemas():
    import pyarrow as pa

    days = [
        ("day", pa.string()),
        ("G", pa.int32()),
        ("tiles", pa.int32()),
        ("seed", pa.string()),
        ("seed_commit", pa.string()),
        ("packer", pa.string()),
        ("code", pa.string()),
        ("reward_total", pa.int64()),
        ("waves", pa.int32()),
    ]
    tiles = [
        ("day", pa.string()),
        ("tile", pa.int32()),
        ("n", pa.int32()),
        ("y0", pa.int32()),
        ("x0", pa.int32()),
        ("neighbours", pa.list_(pa.int32())),
        ("seed", pa.bool_()),
        ("puzzle", pa.string()),
        ("solution", pa.string()),
        ("wave", pa.int32()),
        ("ladder", pa.int32()),
        ("m", pa.int32()),
        ("blank", pa.float64()),
    ]
    return days, tiles
