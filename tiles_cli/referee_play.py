"""`tiles referee serve | puzzle | score`: play the daily board (thin wrappers over referee.service)."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import List, Optional

import typer

from tiles_cli.options import LibraryOpt
from tiles_cli.referee import referee_app

RunsOpt = typer.Option(Path("tiles-runs.sqlite"), "--runs", envvar="TILES_RUNS",
                       help="SQLite file where runs and moves persist (env TILES_RUNS).")


def register(app: typer.Typer) -> None:
    """Commands are added to `tiles referee` when this module is imported."""


@referee_app.command("serve")
def serve_command(
    library: Path = LibraryOpt,
    runs: Path = RunsOpt,
    manifest: Optional[List[Path]] = typer.Option(None, "--manifest", help="Offer this manifest file's day "
                                                  "(repeatable; default: every day in the library)."),
    day: Optional[List[str]] = typer.Option(None, "--day", help="Offer only this library day (repeatable)."),
    host: str = typer.Option("127.0.0.1", "--host", help="Address to listen on."),
    port: int = typer.Option(8000, "--port", help="TCP port."),
    max_body: int = typer.Option(64 * 1024, "--max-body", help="Largest request body in bytes."),
    max_moves: int = typer.Option(64, "--max-moves", help="Most moves in one request."),
    poll: float = typer.Option(10.0, "--poll", min=0.1, max=3600, help="Seconds between looks for new days in "
                               "the library (without --manifest and --day: a day built later is offered)."),
) -> None:
    """Serve the days' boards over HTTP: JSON API under /api/v1, OpenAPI at /docs, MCP tools at /mcp, the
    play page at /.
    Over a whole library, a day built while it runs is offered within --poll seconds."""
    from referee.service import server, watch
    from referee.service.app import create_app
    from referee.service.boards import load_days
    from referee.service.runs import RunStore
    from tilelib.store import Library

    t0 = time.perf_counter()
    with Library.open(library) as lib:
        days = load_days(lib, runs, manifest, day)
    for d, db in sorted(days.items()):
        typer.echo(f"tiles referee serve: {d}: G={db.board.G}, {len(db.board.squares)} tiles", err=True)
    store = RunStore(runs, days)
    typer.echo(f"tiles referee serve: {len(days)} day(s) loaded in {time.perf_counter() - t0:.1f} s; "
               f"http://{host}:{port}/", err=True)
    say = lambda line: typer.echo(f"tiles referee serve: {line}", err=True)  # noqa: E731
    jobs = [] if manifest or day else [lambda: watch.watch(store, library, runs, say, poll)]
    app = create_app(store, max_body=max_body, max_moves=max_moves, background=jobs, host=host)
    try:
        server.run(app, host, port)
    finally:
        store.close()


@referee_app.command("puzzle")
def puzzle_command(
    manifest: Path = typer.Argument(..., help="The manifest JSON file."),
    tile: int = typer.Argument(..., help="Tile id."),
    runs: Optional[Path] = typer.Option(None, "--runs", help="Runs file: show cells known from the run's "
                                        "solved neighbours."),
    run: Optional[str] = typer.Option(None, "--run", help="The run (with --runs)."),
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
    solved = read_solved(runs, run, db.judge.digest) if runs is not None else set()
    v = puzzle_view(db, tile, solved)
    if as_json:
        typer.echo(json.dumps(v))
        return
    flags = [f for f, on in (("seed", v["seed"]), ("solved", v["solved"]), ("playable", v["playable"])) if on]
    typer.echo(f"tile {tile}: n={v['n']} at x0={v['x0']} y0={v['y0']}; {' '.join(flags) or 'locked'}; "
               f"neighbours {','.join(map(str, v['neighbours']))}")
    typer.echo(v["puzzle"])
    typer.echo(grid_text(v["puzzle"], v["n"]))


@referee_app.command("score")
def score_command(
    runs: Path = typer.Option(..., "--runs", envvar="TILES_RUNS", help="The runs file."),
    run: Optional[str] = typer.Option(None, "--run", help="Only this run."),
) -> None:
    """Print each run's totals (solved tiles, reward, moves, batches) as one JSON line, best first."""
    from referee.service.runs import read_scores

    for row in read_scores(runs, run):
        typer.echo(json.dumps(row))
    sys.stdout.flush()
