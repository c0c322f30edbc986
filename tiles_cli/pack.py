"""`tiles pack`: pack a board with a named packer from a seed; optionally write its JSON and a PNG.

Thin: parse, call ``packers.make_packing`` (stream ``Stream(seed, "pack/" + name)``), validate
with the one validator, then write the files (all computed first, so a bad input writes nothing).
"""

from __future__ import annotations

import json
from pathlib import Path

import typer

from tiles_cli.options import PackerOpt, parse_params


def pack_command(
    packer: str = PackerOpt,
    size: int = typer.Option(1000, "--size", help="Board side G in cells (>= 6); pitch P = G - 1."),
    seed: str = typer.Option(..., "--seed", help="The seed: 64 hex digits (32 bytes)."),
    json_out: Path | None = typer.Option(None, "--json", help="Write the packing JSON (manifest shapes) here."),
    png_out: Path | None = typer.Option(None, "--png", help="Write a picture of the packing here."),
    params: str | None = typer.Option(None, "--params", help="Packer params as a JSON object, e.g. '{\"sub\": 30}'."),
) -> None:
    """Pack a G×G board with a seeded packer and print a one-line summary."""
    from packers import make_packing, validate_packing
    from packers.render import render_png
    from tilelib.fsio import atomic_write
    from tilelib.rng import seed_from_hex

    seed_bytes = seed_from_hex(seed)
    packing = make_packing(packer, size, seed_bytes, parse_params(params))
    validate_packing(packing, packing.P)
    writes: list[tuple[Path, bytes]] = []  # both made before either is written
    if json_out:
        writes.append((json_out, (json.dumps(packing.to_json(), separators=(",", ":")) + "\n").encode()))
    if png_out:
        writes.append((png_out, render_png(packing)))
    for path, data in writes:
        atomic_write(path, data)
    typer.echo(
        f"{packing.name} v{packing.version} G={packing.G}: {len(packing.squares)} tiles, "
        f"{len(packing.zones)} zones, zone {100 * packing.zone_fraction():.3f}% of pitch area, "
        f"seed tile {packing.seed_tile}"
    )


def register(app: typer.Typer) -> None:
    app.command("pack")(pack_command)
