"""Options shared by several commands (library path from TILES_LIBRARY, remote from TILES_REMOTE),
the choices they take (Enums: Click checks them, one line and exit 2 on a bad value) and the one
``--params`` parser."""

from __future__ import annotations

import json
from enum import StrEnum
from pathlib import Path

import typer

from tilelib.errors import BadInput

LibraryOpt = typer.Option(
    Path("tiles.sqlite"), "--library", "-L", envvar="TILES_LIBRARY", help="Tile library file (env TILES_LIBRARY)."
)
RemoteOpt = typer.Option(
    None,
    "--remote",
    envvar="TILES_REMOTE",
    help="Library remote: s3://bucket/prefix or file:///dir (env TILES_REMOTE).",
)
_RUNS_HELP = "Runs database: a SQLite file, or a postgresql:// URL (env TILES_RUNS)."
RunsOpt = typer.Option("tiles-runs.sqlite", "--runs", envvar="TILES_RUNS", help=_RUNS_HELP)
RunsNeededOpt = typer.Option(..., "--runs", envvar="TILES_RUNS", help=_RUNS_HELP)
# packers.DEFAULT_PACKER and packers.PACKERS in its order (a test keeps them equal); the packers
# themselves load on use, not at start-up
DEFAULT_PACKER = "big-first"
PACKER_NAMES = "big-first | grown | bands | substitution | islands"
PackerOpt = typer.Option(DEFAULT_PACKER, "--packer", help=PACKER_NAMES)


class Verify(StrEnum):
    """``--verify``: which incoming tile rows a pull or push re-hashes."""

    new = "new"
    sample = "sample"
    none = "none"


class Integrity(StrEnum):
    """``--integrity``: the SQLite check of a downloaded snapshot."""

    full = "full"
    quick = "quick"


class Check(StrEnum):
    """``--check``: what push proves about the local file before publishing it."""

    new = "new"
    full = "full"


def parse_params(text: str | None) -> dict | None:
    """``--params`` (packer params) as a dict; None when not given; BadInput unless a JSON object."""
    if text is None:
        return None
    try:
        value = json.loads(text)
    except json.JSONDecodeError as err:
        raise BadInput(f"--params is not JSON: {err.msg}") from err
    if not isinstance(value, dict):
        raise BadInput("--params must be a JSON object")
    return value
