"""`tiles daily build | reveal | render | bundle`: the nightly job and what follows it."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import typer

from daily.options import BuildOptions, default
from tiles_cli.options import (
    LibraryOpt,
    OutDirOpt,
    PackerOpt,
    PublicRemoteOpt,
    RemoteOpt,
    SecretFileOpt,
    parse_params,
    secret,
)
from tiles_cli.progress import progress

daily_app = typer.Typer(help="The daily board: build it, reveal its seed, draw it.", no_args_is_help=True)


# tilelib.difficulty.DEFAULT_PROFILE (a test holds them equal; importing it here would load
# the profile code on every `tiles daily` start-up)
DEFAULT_PROFILE = "human"


def register(app: typer.Typer) -> None:
    app.add_typer(daily_app, name="daily")


def _log(line: str) -> None:
    typer.echo(f"tiles daily: {line}", err=True)


@daily_app.command("build")
def build(
    ctx: typer.Context,
    date: str = typer.Option(None, "--date", help="ISO day YYYY-MM-DD (default: today, UTC)."),
    size: int = typer.Option(default("size"), "--size", help="Board side G in cells."),
    packer: str = PackerOpt,
    params: str = typer.Option(None, "--params", help="Packer params as a JSON object."),
    seed: str = typer.Option(None, "--seed", help="The seed itself, 64 hex digits (tests)."),
    out: Path = OutDirOpt,
    force: bool = typer.Option(False, "--force", help="Rebuild a day that already has a manifest."),
    as_json: bool = typer.Option(False, "--json", help="Print a JSON summary of every stage on stdout."),
    profile: str = typer.Option(
        DEFAULT_PROFILE,
        "--profile",
        help="Difficulty profile: shares of ladder "
        'levels the stitcher aims for, as JSON ({"2": 0.25, "3": 0.5, ...} or one '
        "per n) or a preset (human: what a strong player solves without search); "
        "recorded in the manifest. 'library': no profile.",
    ),
    workers: int | None = typer.Option(
        default("workers"),
        "--workers",
        min=1,
        help="Processes that stitch the two halves "
        "of a big board (default: 2 on a 2-core machine); the board is the same.",
    ),
    reuse: str = typer.Option(
        default("reuse"),
        "--reuse",
        help="fresh: no solution of side n >= 10 twice on the "
        "board and none an earlier board used (the fair rule); any: any library "
        "tile, as before the rule. Recorded in the manifest.",
    ),
    metrics: Path | None = typer.Option(
        None,
        "--metrics",
        help="After the run, built or not, write this host's figures here as a Prometheus text file "
        "(node_exporter's textfile collector).",
    ),
    library: Path = LibraryOpt,
    remote: str = RemoteOpt,
    secret_file: Path | None = SecretFileOpt,
) -> None:
    """Pull, pack, stitch, drain misses, add clues, verify, write the manifest, push.

    Off a terminal (cron), the stitch logs a progress line at most every 15 s. Every run, built or
    not, adds a line to LIBRARY.nights (tiles daily status reads it)."""
    from daily import nights
    from daily.build import build as run_build
    from daily.observe import ProgressLog
    from daily.seed import parse_day
    from tilelib.rng import seed_from_hex

    opts = BuildOptions(
        day=parse_day(date),
        library=library,
        out_dir=out,
        size=size,
        packer=packer,
        params=parse_params(params),
        seed=seed_from_hex(seed) if seed else None,
        secret=secret(ctx, secret_file),
        remote=remote,
        force=force,
        profile=profile,
        workers=workers,
        reuse=reuse,
    )
    with progress("stitching") as bar:

        def tick(done: int, total: int, _stats=None) -> None:
            bar.total(total)
            bar.set(done)

        with nights.recorded(opts.library, opts.day, metrics, _log) as run:
            res = run_build(opts, log=_log, progress=tick if sys.stderr.isatty() else ProgressLog(_log))
            run["summary"] = res.summary()
    if as_json:
        typer.echo(json.dumps(res.summary()))
        return
    if res.skipped:
        typer.echo(f"{res.day}: already built")
        return
    typer.echo(f"{res.day}: {res.verify_line}; manifest {res.manifest_path}")


@daily_app.command("status")
def status(
    library: Path = LibraryOpt,
    remote: str = RemoteOpt,
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object."),
) -> None:
    """When this host last built a night, the runs that failed since (from LIBRARY.nights), and the
    remote's last push: when, and from which host."""
    from dataclasses import asdict

    from daily import nights

    st = nights.status(nights.read(library))
    pushed: dict[str, object] | None = None
    if remote:
        from remote.backend import open_backend
        from remote.head import parse_head, provenance

        backend = open_backend(remote)
        head = backend.get_head()
        if head is not None:  # proven as a pull reads it (a malformed HEAD is one line, exit 4)
            at, by = provenance(head)
            pushed = {
                "pushed_at": at,
                "pushed_by": by,
                "tiles": parse_head(head, str(backend.url)).tiles,
            }
    if as_json:
        out = {
            "last": st.last and asdict(st.last),
            "last_built": st.last_ok and asdict(st.last_ok),
            "failed_since": [asdict(r) for r in st.failed_since],
            "remote": pushed,
        }
        typer.echo(json.dumps(out))
        return
    for line in st.lines():
        typer.echo(line)
    if remote:
        if pushed is None:
            typer.echo(f"remote {remote}: empty")
        else:
            who = pushed["pushed_by"] or "a host that did not say"
            typer.echo(f"remote {remote}: last push {pushed['pushed_at']} by {who}")


@daily_app.command("reveal")
def reveal(
    ctx: typer.Context,
    date: str = typer.Option(..., "--date", help="ISO day YYYY-MM-DD."),
    force: bool = typer.Option(False, "--force", help="Reveal even if the day is not over."),
    secret_file: Path | None = SecretFileOpt,
) -> None:
    """Print the day's seed (hex) once the day is over (UTC)."""
    from daily.seed import check_revealable, day_seed, parse_day

    day = parse_day(date)
    check_revealable(day, force=force)
    typer.echo(day_seed(secret(ctx, secret_file), day).hex())


@daily_app.command("render")
def render(
    date: str = typer.Option(..., "--date", help="ISO day YYYY-MM-DD."),
    png: Path = typer.Option(..., "--png", help="Output PNG file."),
    manifest: Path = typer.Option(None, "--manifest", help="Manifest file (default: the library's)."),
    region: str = typer.Option(None, "--region", help="Only cells X,Y,W,H (columns X..X+W-1, rows Y..Y+H-1)."),
    tile: int = typer.Option(None, "--tile", help="Only this tile's window (and a 2-cell margin)."),
    scale: int = typer.Option(
        None, "--scale", help="Pixels per cell (1..64); a cell grid from 6 and tile ids once they fit."
    ),
    library: Path = LibraryOpt,
) -> None:
    """Draw the day's board: tile hues, zones grey, givens and clues, the seed tile marked, a legend."""
    from daily.render import render_day
    from daily.seed import parse_day

    render_day(parse_day(date), library, png, manifest, region=region, tile=tile, scale=scale)
    typer.echo(f"wrote {png}")


@daily_app.command("bundle")
def bundle(
    date: str = typer.Option(..., "--date", help="ISO day YYYY-MM-DD: a day the library holds a manifest for."),
    out: Path = typer.Option(None, "--out", help="The bundle file to write (default ./DATE.bundle.sqlite)."),
    library: Path = LibraryOpt,
) -> None:
    """Write the day's bundle: a library holding exactly the rows its board uses (FORMAT §5).

    What is published of a finished day: `tiles referee verify MANIFEST --seed HEX -L BUNDLE` checks
    the day from it alone, and it holds no tile of the stock."""
    from daily.seed import parse_day
    from referee.bundle import write_bundle
    from tilelib.store import Library

    day = parse_day(date)
    with Library.open(library) as lib:
        rep = write_bundle(lib, day, out if out is not None else Path(f"{day}.bundle.sqlite"))
    typer.echo(f"wrote {rep.line()}")


@daily_app.command("export")
def export(
    ctx: typer.Context,
    first: str = typer.Option(..., "--from", help="The first day, YYYY-MM-DD."),
    last: str = typer.Option(..., "--to", help="The last day, YYYY-MM-DD; every day exported must be over (UTC)."),
    out: Path = typer.Option(..., "--out", help="The directory for days.parquet and tiles.parquet."),
    library: Path = LibraryOpt,
    secret_file: Path | None = SecretFileOpt,
) -> None:
    """Write the days the library holds from --from to --to as a dataset (Parquet): one row per tile
    (its start view, solution, neighbours, closure wave) and one per day (with TILES_SECRET, its seed)."""
    from daily.export import export_days
    from tilelib.days import check_day
    from tilelib.store import Library

    a, b = check_day(first, "--from"), check_day(last, "--to")
    with Library.open(library) as lib:
        rep = export_days(lib, a, b, out, secret=secret(ctx, secret_file))
    typer.echo(rep.line())


@daily_app.command("publish-bundle")
def publish_bundle(
    ctx: typer.Context,
    date: str = typer.Option(..., "--date", help="ISO day YYYY-MM-DD; it must be over (UTC)."),
    to: str = PublicRemoteOpt,
    force: bool = typer.Option(False, "--force", help="Publish a day that is not over (tests)."),
    library: Path = LibraryOpt,
    remote: str = RemoteOpt,
    secret_file: Path | None = SecretFileOpt,
) -> None:
    """Publish a finished day: its bundle, manifest and (with TILES_SECRET) seed, to the public mirror.

    The library and its remote hold the stock and stay private; this is all the public needs to
    verify the day (FORMAT §11, "The public mirror")."""
    from daily.publish import publish_day
    from daily.seed import parse_day
    from tilelib.store import Library

    day = parse_day(date)
    with Library.open(library) as lib:
        rep = publish_day(lib, day, to, private=remote, secret=secret(ctx, secret_file), force=force)
    typer.echo(rep.line())
