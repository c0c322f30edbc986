"""`tiles library init | stats | verify`: create, summarise and check a tile library."""

from __future__ import annotations

import typer

library_app = typer.Typer(help="The tile library: create, inspect, verify, sync, generate.", no_args_is_help=True)


def register(app: typer.Typer) -> None:
    app.add_typer(library_app, name="library")
