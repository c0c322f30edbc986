"""`tiles library misses | drain`: the generator's to-do list, worked off outside the nightly build.

Thin: parse options, call ``stitcher.refresh``, print; ``drain --remote`` pushes every ``--batch``
misses (and at the end), so a daytime drain publishes as it goes.
"""

from __future__ import annotations

import json
from pathlib import Path

import typer

from tilelib.errors import BadInput
from tiles_cli.library import library_app
from tiles_cli.options import DrainRemoteOpt, LibraryOpt


def register(app: typer.Typer) -> None:
    """Add this module's commands to `tiles library` (the group's own module adds the group)."""
    library_app.command("misses")(misses_cmd)
    library_app.command("drain")(drain_cmd)


def misses_cmd(
    library: Path = LibraryOpt, as_json: bool = typer.Option(False, "--json", help="Print one JSON object.")
) -> None:
    """Open misses (neither drained nor nofit) by n and fixed sides, most asked first."""
    from stitcher.refresh import misses_summary
    from tilelib.store import Library

    with Library.open(library) as lib:
        rows = misses_summary(lib.conn)
    if as_json:
        typer.echo(json.dumps({"open": sum(r["open"] for r in rows), "groups": rows}))
        return
    for r in rows:
        typer.echo(f"n={r['n']:<3} sides {r['sides']:<22} open {r['open']:>7,}  asked {r['asked']:>8,}")
    typer.echo(f"{sum(r['open'] for r in rows):,} open misses")


def drain_cmd(
    library: Path = LibraryOpt,
    limit: int | None = typer.Option(None, "--limit", min=1, help="Drain at most N misses."),
    workers: int = typer.Option(
        1, "--workers", min=1, max=64, help="Solver processes (the tiles made do not depend on it)."
    ),
    seed: str | None = typer.Option(None, "--seed", help="64 hex digits; default a fresh random seed (printed)."),
    remote: str | None = DrainRemoteOpt,
    batch: int = typer.Option(200, "--batch", min=1, help="Misses between pushes."),
) -> None:
    """Make tiles for the open misses (CP-SAT completion, thinning) or prove them nofit."""
    from generator.batch import new_seed
    from remote.backend import open_backend
    from remote.sync import push
    from stitcher.refresh import drain_open
    from tilelib.rng import seed_from_hex
    from tilelib.store import Library

    seed_bytes = seed_from_hex(seed) if seed is not None else new_seed()
    backend = open_backend(remote) if remote else None  # a bad remote fails before any work

    def publish(rep) -> None:
        if backend is not None:
            r = push(library, backend)
            typer.echo(f"tiles: {rep.line()}; pushed ({r.status}, {r.new_tiles:,} new tiles)", err=True)

    if not Path(library).is_file():
        raise BadInput(f"no library at {library}")
    with Library.open(library) as lib:
        rep = drain_open(lib, seed_bytes, limit=limit, workers=workers, batch=batch, on_batch=publish)
        publish(rep)
    typer.echo(f"{rep.line()}; seed {seed_bytes.hex()}")
