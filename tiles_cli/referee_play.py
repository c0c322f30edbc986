"""`tiles referee serve | puzzle | score | analyze`: play the daily board (thin wrappers over referee.service)."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any

import typer

from referee.service.options import ServeOptions
from tilelib.errors import BadInput
from tiles_cli.options import LibraryOpt, RunsNeededOpt, RunsOpt, options_of
from tiles_cli.referee import referee_app


def register(app: typer.Typer) -> None:
    """Add this module's commands to `tiles referee` (the group's own module adds the group)."""
    referee_app.command("serve")(serve_command)
    referee_app.command("puzzle")(puzzle_command)
    referee_app.command("score")(score_command)
    referee_app.command("analyze")(analyze_command)
    referee_app.command("backup")(backup_command)
    referee_app.command("export")(export_command)


@options_of(ServeOptions)
def serve_command(
    library: Path = LibraryOpt,
    runs: str = RunsOpt,
    manifest: list[Path] | None = typer.Option(
        None, "--manifest", help="Offer this manifest file's day (repeatable; default: every day in the library)."
    ),
    day: list[str] | None = typer.Option(None, "--day", help="Offer only this library day (repeatable)."),
    **given: Any,
) -> None:
    """Serve the days' boards over HTTP: JSON API under /api/v1, OpenAPI at /docs, MCP tools at /mcp, the
    play page at /.
    Over a whole library, a day built while it runs is offered within --poll seconds. --runs may be a
    postgresql:// URL; then --workers N processes share it (each loads the boards once)."""
    from referee.service import server
    from referee.service.worker import check_address, open_service

    opts = ServeOptions(
        library=str(library), runs=str(runs), manifests=tuple(map(str, manifest or ())), days=tuple(day or ()), **given
    )
    if opts.access_log not in ("off", "text", "json"):
        raise BadInput(f"--access-log must be off, text or json, not {opts.access_log[:40]!r}")
    say = lambda line: typer.echo(f"tiles referee serve: {line}", err=True)  # noqa: E731
    t0 = time.perf_counter()
    check_address(opts.host, opts.port)  # every argument checked before the runs database is made
    app, store = open_service(opts, say=say, log=say)
    say(
        f"{len(store.days)} day(s) loaded in {time.perf_counter() - t0:.1f} s; http://{opts.host}:{opts.port}/"
        + (f" ({opts.workers} workers)" if opts.workers > 1 else "")
    )
    if opts.workers > 1:
        store.close()  # checked; each worker opens its own (referee.service.worker)
        del app, store
        server.run_workers(opts)
        return
    try:
        server.run(app, opts)
    finally:
        store.close()


def puzzle_command(
    manifest: Path = typer.Argument(..., help="The manifest JSON file."),
    tile: int = typer.Argument(..., help="Tile id."),
    runs: str | None = typer.Option(
        None,
        "--runs",
        help="Runs database (file or postgresql:// URL): show cells known from the run's solved neighbours.",
    ),
    run: str | None = typer.Option(None, "--run", help="The run (with --runs)."),
    as_json: bool = typer.Option(False, "--json", help="Print the whole view as one JSON object."),
    library: Path = LibraryOpt,
) -> None:
    """Print a tile's puzzle in board position (givens, zone cells, clues, cells known in the run): the
    puzzle string `tiles solve` reads, then a grid. Never the solution."""
    from referee.service.boards import DayBoard, grid_text, load_manifest, puzzle_view
    from referee.service.runs import read_solved
    from tilelib.errors import BadInput
    from tilelib.store import Library

    if (runs is None) != (run is None):
        raise BadInput("--runs and --run go together")
    m = load_manifest(manifest)
    with Library.open(library) as lib:
        db = DayBoard.load(m, lib, runs or Path("unused-runs.sqlite"))
    solved = read_solved(runs, run, db.judge.digest) if runs is not None and run is not None else set()
    v = puzzle_view(db, tile, solved)
    if as_json:
        typer.echo(json.dumps(v))
        return
    flags = [f for f, on in (("seed", v["seed"]), ("solved", v["solved"]), ("playable", v["playable"])) if on]
    typer.echo(
        f"tile {tile}: n={v['n']} at x0={v['x0']} y0={v['y0']}; {' '.join(flags) or 'locked'}; "
        f"neighbours {','.join(map(str, v['neighbours']))}"
    )
    typer.echo(v["puzzle"])
    typer.echo(grid_text(v["puzzle"], v["n"]))


def score_command(
    runs: str = RunsNeededOpt,
    run: str | None = typer.Option(None, "--run", help="Only this run."),
) -> None:
    """Print each run's totals (solved tiles, reward, moves, batches) as one JSON line, best first."""
    from referee.service.runs import read_scores

    for row in read_scores(runs, run):
        typer.echo(json.dumps(row))
    sys.stdout.flush()


def export_command(
    runs: str = RunsNeededOpt,
    first: str = typer.Option(..., "--from", help="First day (YYYY-MM-DD)."),
    last: str = typer.Option(..., "--to", help="Last day (YYYY-MM-DD), which must be over (UTC)."),
    out: Path = typer.Option(..., "--out", help="Folder for trajectories.parquet."),
) -> None:
    """Write the runs of finished days as a trajectories table: one row per batch of moves with its
    moves, verdicts, reward and time (trajectories.parquet, FORMAT §15)."""
    from referee.trajectories import export_runs
    from tilelib.days import check_day

    rep = export_runs(runs, check_day(first, "--from"), check_day(last, "--to"), out)
    typer.echo(rep.line())


def analyze_command(
    day: str = typer.Option(..., "--day", help="The day (YYYY-MM-DD)."),
    runs: str = RunsNeededOpt,
    library: Path = LibraryOpt,
    manifest: Path | None = typer.Option(
        None, "--manifest", help="The day's manifest file (default: the library's manifest of --day)."
    ),
    run: str | None = typer.Option(None, "--run", help="Also chart this run."),
    bucket: float = typer.Option(60.0, "--bucket", min=1, max=86400, help="Seconds per time bucket of the day."),
    top: int = typer.Option(10, "--top", min=1, max=1000, help="Leaderboard rows."),
    png: Path | None = typer.Option(
        None, "--png", help="Draw the leaderboard and the two charts into this PNG file (as the play page shows them)."
    ),
) -> None:
    """The analyzer of a day: its leaderboard, reward per batch and mean n of solved tiles over time (and
    of one run with --run), as one JSON object on stdout; with --png, drawn for a report."""
    from referee.service.boards import load_days
    from referee.service.runs import RunStore, require_runs
    from tilelib.days import check_day
    from tilelib.errors import BadInput
    from tilelib.fsio import atomic_write, check_placeable
    from tilelib.store import Library

    day = check_day(day, "--day")
    require_runs(runs)
    if png is not None:
        check_placeable(png, "--png")
    with Library.open(library) as lib:
        days = load_days(lib, runs, [manifest] if manifest else None, None if manifest else [day])
    if day not in days:
        raise BadInput(f"--day {day} differs from the manifest's day {next(iter(days))}")
    store = RunStore(runs, days)
    try:
        board = store.leaderboard(day, top)
        analysis = store.day_analysis(day, bucket)
        one = store.run_analysis(run) if run is not None else None
    finally:
        store.close()
    if one is not None and one["day"] != day:
        raise BadInput(f"run {run!r} is of {one['day']}, not {day}")
    if png is not None:
        from referee.analysis_png import report_png

        atomic_write(png, report_png(analysis, board, one, top=top))
        typer.echo(f"tiles referee analyze: wrote {png}", err=True)
    typer.echo(json.dumps({"day": day, "leaderboard": board, "analysis": analysis, "run": one}))


def backup_command(
    runs: str = RunsNeededOpt,
    out: Path = typer.Option(..., "--out", help="The backup file to write (must not exist)."),
) -> None:
    """Back up the runs database while the service writes it: a SQLite runs file by SQLite's online backup
    (the copy is a runs file), a postgresql:// URL by pg_dump --format=custom (restore with pg_restore).
    Prints one JSON line: the file, backend, bytes (and for SQLite the runs and moves it holds). An --out
    that exists is refused, untouched (exit 2)."""
    from referee.runsdb.backup import backup

    done = backup(runs, out)
    typer.echo(json.dumps(done.as_dict()))
