"""`tiles referee verify | tile | judge` (FORMAT §10, §12): thin wrappers over the referee package."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import typer

from tilelib.errors import BadInput
from tiles_cli.options import LibraryOpt, ReplayRemoteOpt, RunsOpt
from tiles_cli.progress import progress

referee_app = typer.Typer(help="Verify a day's board, look tiles up, judge runs.", no_args_is_help=True)


def register(app: typer.Typer) -> None:
    app.add_typer(referee_app, name="referee")


@referee_app.command("verify")
def verify_command(
    manifest: Path = typer.Argument(..., help="The manifest JSON file."),
    library: Path = LibraryOpt,
    seed: str | None = typer.Option(
        None, "--seed", help="The revealed seed (64 hex digits): check the commitment and re-draw the packing."
    ),
    deep: bool = typer.Option(False, "--deep", help="Also re-run the difficulty ladder on every tile (slow)."),
    replay: bool = typer.Option(
        False,
        "--replay",
        help="With --seed: fetch the snapshot the build started "
        "from and rerun the whole build; the board must come out byte for byte.",
    ),
    remote: str | None = ReplayRemoteOpt,
) -> None:
    """Check a manifest against the library (FORMAT §10); print one line, or name the first failure (exit 5)."""
    from referee.manifest import load
    from referee.verify import verify
    from tilelib.rng import seed_from_hex
    from tilelib.store import Library

    seed_bytes = seed_from_hex(seed) if seed is not None else None
    if replay and seed_bytes is None:
        raise BadInput("--replay needs --seed (the revealed seed of the day)")
    if replay and not remote:  # before any work: bad input is one line, exit 2, nothing printed first
        from remote.url import REMOTE_ADVICE

        raise BadInput(f"--replay needs the remote that holds the start snapshot ({REMOTE_ADVICE})")
    m = load(manifest)
    with Library.open(library) as lib, progress("checking tiles", total=m.tile_count()) as bar:
        report = verify(m, lib, seed_bytes, deep=deep, on_tile=bar.advance)
    typer.echo(report.line())
    if replay and seed_bytes is not None:  # --replay without --seed was refused above
        from daily.replay import replay as run_replay

        rep = run_replay(m, seed_bytes, remote, log=lambda line: typer.echo(f"tiles replay: {line}", err=True))
        typer.echo(rep.line())


@referee_app.command("tile")
def tile_command(
    hash_: str = typer.Argument(..., metavar="HASH", help="The tile's content hash (64 hex digits)."),
    t: int = typer.Option(0, "--t", help="Transform 0..15 to apply (0 = canonical orientation)."),
    with_solution: bool = typer.Option(
        False, "--with-solution", help="Also print the solution, the alternative solutions and the flip mask."
    ),
    library: Path = LibraryOpt,
) -> None:
    """Print a library tile as one JSON object (canonical, or oriented by --t); no solution unless asked."""
    from referee.records import tile_record
    from tilelib.store import Library

    with Library.open(library) as lib:
        rec = tile_record(lib, hash_, t)
    if not with_solution:
        for key in ("solution", "alts", "flip"):
            rec.pop(key)
    typer.echo(json.dumps(rec))


@referee_app.command("judge")
def judge_command(
    manifest: Path = typer.Argument(..., help="The manifest JSON file."),
    submission: str = typer.Argument(..., help="The submission JSON file ('-' reads stdin)."),
    runs: str = RunsOpt,
    library: Path = LibraryOpt,
) -> None:
    """Judge a submission's moves; print one JSON verdict per move."""
    from referee import gate
    from referee.judge import Judge
    from tilelib.store import Library

    if submission == "-":
        text = sys.stdin.buffer.read()
    else:
        try:
            text = Path(submission).read_bytes()
        except OSError as e:
            raise BadInput(f"cannot read {submission}: {e.strerror}") from e
    m = gate.load(manifest)  # nothing is scored on a board verify would reject
    with Library.open(library) as lib:
        board = gate.admit_board(m, lib)
    for verdict in Judge(m, board, runs).judge(text):
        typer.echo(json.dumps(verdict))
