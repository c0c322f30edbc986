"""Options shared by several commands (library path from TILES_LIBRARY, remote from TILES_REMOTE)."""

from __future__ import annotations

from pathlib import Path

import typer

LibraryOpt = typer.Option(Path("tiles.sqlite"), "--library", "-L", envvar="TILES_LIBRARY",
                          help="Tile library file (env TILES_LIBRARY).")
RemoteOpt = typer.Option(None, "--remote", envvar="TILES_REMOTE",
                         help="Library remote: s3://bucket/prefix or file:///dir (env TILES_REMOTE).")
