"""`tiles library init | stats | verify`: create, summarise and check a tile library."""

from __future__ import annotations

import json
from pathlib import Path

import typer

from tilelib.errors import VerificationFailed
from tiles_cli.options import LibraryOpt
from tiles_cli.progress import progress

library_app = typer.Typer(help="The tile library: create, inspect, verify, sync, generate.", no_args_is_help=True)


def register(app: typer.Typer) -> None:
    app.add_typer(library_app, name="library")


@library_app.command("init")
def init(library: Path = LibraryOpt) -> None:
    """Create an empty library file (an existing library is left as it is)."""
    from tilelib.store import Library

    existed = library.exists() and library.stat().st_size > 0
    with Library.create(library) as lib:
        n = lib.count_tiles()
    typer.echo(f"{'library exists' if existed else 'created library'} {library} ({n:,} tiles)")


@library_app.command("stats")
def stats(
    library: Path = LibraryOpt, as_json: bool = typer.Option(False, "--json", help="Print one JSON object.")
) -> None:
    """Counts per n, m and ladder level; misses; manifests; bytes per tile. A damaged file is exit 3."""
    from tilelib.store import Library
    from trust.checks import check_pages

    with Library.open(library) as lib:
        check_pages(lib.conn, str(library), "quick")
        s = lib.stats()
    if as_json:
        typer.echo(json.dumps(s, sort_keys=True))
        return
    typer.echo(f"library {s['path']}  id {s['library_id']}  schema v{s['schema_version']}")
    typer.echo(
        f"tiles {s['tiles']:,}  ({s['file_bytes']:,} bytes"
        + (f", {s['bytes_per_tile']} per tile)" if s["tiles"] else ")")
    )
    for key in ("per_n", "per_m", "per_ladder"):
        if s[key]:
            typer.echo(f"  {key[4:]:<7}" + "  ".join(f"{k}: {v:,}" for k, v in s[key].items()))
    typer.echo(
        f"misses open {s['misses_open']:,}  nofit {s['misses_nofit']:,}  "
        f"drained {s['misses_drained']:,}  manifests {s['manifests']:,}"
    )
    typer.echo(f"spent solutions {s['spent_solutions']:,} (n >= 10, by {s['spent_rows']:,} board rows)")


@library_app.command("stock")
def stock_cmd(
    library: Path = LibraryOpt,
    nights: int = typer.Option(7, "--nights", min=1, help="Nights the rate is measured over."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object."),
) -> None:
    """The fair rule's stock per n >= 10: unspent rows and solutions, per edge class, drawn per night, nights left."""
    from tilelib import stock
    from tilelib.store import Library

    with Library.open(library) as lib:
        rep = stock.report(lib.conn, library, nights)
    if as_json:
        typer.echo(json.dumps(rep, sort_keys=True))
        return
    for text in stock.lines(rep):
        typer.echo(text)


@library_app.command("verify")
def verify(library: Path = LibraryOpt) -> None:
    """Recompute every hash, rule check and feature, parse every stored manifest; list bad rows; exit 5 if any."""
    from tilelib.store import Library
    from trust.checks import verify_library

    with Library.open(library) as lib:
        with progress("verifying", total=lib.count_tiles()) as bar:
            report = verify_library(lib, on_row=bar.advance)
    for h, problem in report.problems:
        typer.echo(f"{h}: {problem}")
    if not report.ok:
        raise VerificationFailed(f"{len(report.problems)} problem(s) in {report.rows:,} tiles")
    typer.echo(f"ok: {report.rows:,} tiles verified")


@library_app.command("repair")
def repair_cmd(
    library: Path = LibraryOpt,
    out: Path = typer.Option(
        None,
        "--out",
        help="The clean library to write (default: <name>.repaired.sqlite beside the library; never overwritten).",
    ),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object (every row left behind)."),
) -> None:
    """Write a clean library from a damaged or hostile one: every row that verifies, the shipped schema,
    and what was left behind and why. The library itself is never modified."""
    from trust.repair import repair

    with progress("repairing") as bar:
        rep = repair(library, out, on_row=bar.advance)
    if as_json:
        typer.echo(json.dumps(rep.as_json(), sort_keys=True))
        return
    for text in rep.lines():
        typer.echo(text)
    typer.echo(f"the library is untouched; to use the repaired one: mv {rep.out} {library}")
