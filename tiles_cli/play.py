"""`tiles play`: a reference agent plays a day, through the service (`--url`) or offline (`--manifest`)."""

from __future__ import annotations

import json
import tempfile
from enum import StrEnum
from pathlib import Path

import typer

from tilelib.errors import BadInput
from tiles_cli.options import LibraryOpt


class Agent(StrEnum):
    solver = "solver"
    random = "random"


def register(app: typer.Typer) -> None:
    app.command("play")(play_command)


def play_command(
    url: str | None = typer.Option(None, "--url", help="The service's root, e.g. http://127.0.0.1:8000."),
    day: str | None = typer.Option(
        None, "--day", help="The day to play (YYYY-MM-DD; default: the manifest's, or the newest day on offer)."
    ),
    manifest: Path | None = typer.Option(
        None, "--manifest", help="Play this manifest offline, in process (with -L), instead of a served day."
    ),
    library: Path = LibraryOpt,
    agent: Agent = typer.Option(Agent.solver, "--agent", help="solver | random"),
    runs: int = typer.Option(1, "--runs", min=1, max=1000, help="How many runs to play, one after another."),
    player: str | None = typer.Option(None, "--player", help="Player name on the leaderboard."),
    seed: int = typer.Option(0, "--seed", help="Seed of the random agent (run k uses seed + k)."),
    batch: int = typer.Option(64, "--batch", min=1, max=4096, help="Moves per request (the service's --max-moves)."),
    runs_file: Path | None = typer.Option(
        None, "--runs-file", help="Offline: keep the runs in this runs file (default: a temporary one)."
    ),
    run: str | None = typer.Option(
        None, "--run", help="Online: go on with this run (with --token) instead of creating one."
    ),
    token: str | None = typer.Option(None, "--token", envvar="TILES_TOKEN", help="The run's token (env TILES_TOKEN)."),
    retries: int = typer.Option(
        4, "--retries", min=0, max=20, help="Online: attempts after a failed request (exponential backoff from 0.25 s)."
    ),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No progress lines."),
) -> None:
    """Play a day with a reference agent: progress lines on stderr, one JSON line per run on stdout
    (reward, tiles solved, moves, requests, wall time, moves/s)."""
    from players import agents

    if (url is None) == (manifest is None):
        raise BadInput("give --url URL (a served day) or --manifest FILE (offline), not both or neither")
    if (run is None) != (token is None) or (run is not None and (url is None or runs != 1)):
        raise BadInput("--run and --token go together, online, for one run")
    say = (lambda _line: None) if quiet else (lambda line: typer.echo(f"tiles play: {line}", err=True))
    if url is not None:
        from players.client import Client
        from players.sessions import HttpSession

        with Client(url, retries=retries) as client:
            if run is not None and token is not None:  # together or neither (checked above)
                client.use_run(run, token)
                day = client.score(run).day
            day = day or _newest(client)
            for k in range(runs):
                s: agents.Session = HttpSession(client, day, player, batch, run=run)
                _report(agents.play(agent.value, s, say, seed=seed + k, player=player))
        return
    from players.sessions import LocalSession
    from referee.service.boards import DayBoard, load_manifest
    from referee.service.runs import RunStore
    from tilelib.store import Library

    m = load_manifest(manifest)
    if day is not None and day != m.day:
        raise BadInput(f"--day {day} differs from the manifest's day {m.day}")
    with tempfile.TemporaryDirectory(prefix="tiles-play-") as tmp:
        path = runs_file or Path(tmp) / "runs.sqlite"
        with Library.open(library) as lib:
            db = DayBoard.load(m, lib, path)
        store = RunStore(path, {m.day: db})
        try:
            for k in range(runs):
                s = LocalSession(store, m.day, player, batch)
                _report(agents.play(agent.value, s, say, seed=seed + k, player=player))
        finally:
            store.close()


def _newest(client) -> str:
    days = client.days()
    if not days:
        raise BadInput("the service offers no day")
    return max(d.day for d in days)


def _report(result) -> None:
    typer.echo(json.dumps(result.as_dict()))
