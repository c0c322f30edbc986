"""Entry point of the `tiles` command: builds the Typer app and maps errors to exit codes.

This is the one place where a ``TilesError`` becomes a one-line message on
stderr and an exit code (``tilelib.errors.exit_code``); command modules just
raise.
"""

from __future__ import annotations

import importlib
import sqlite3
import sys

import typer

from tilelib.errors import TilesError, exit_code

app = typer.Typer(
    help="Build one huge Takuzu board a day from a content-addressed tile library. "
         "Formats and rules: docs/FORMAT.md.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,   # plain Click help: Typer's rich help cost ~0.2 s of imports per `--help`
)

# Command modules, imported for their side effect of registering commands on
# `app` (each defines `register(app)`). Add a module here to add commands.
COMMAND_MODULES = [
    "tiles_cli.library",
    "tiles_cli.library_sync",
    "tiles_cli.library_generate",
    "tiles_cli.library_misses",
    "tiles_cli.pack",
    "tiles_cli.referee",
    "tiles_cli.referee_play",
    "tiles_cli.daily",
    "tiles_cli.solve",
]


_built = False


def build_app() -> typer.Typer:
    """Import every command module and let it register its commands (once per process: ``main``
    called again in one process, as the tests do, must not register them again)."""
    global _built
    if not _built:
        for name in COMMAND_MODULES:
            importlib.import_module(name).register(app)
        _built = True
    return app


def main(argv: list[str] | None = None) -> int:
    """Run the CLI; return (and exit with) the process exit code."""
    build_app()
    try:
        app(args=argv, prog_name="tiles", standalone_mode=False)
    except (TilesError, sqlite3.DatabaseError) as err:
        typer.echo(f"tiles: error: {err}", err=True)
        sys.exit(exit_code(err))
    except typer.Exit as ex:
        sys.exit(ex.exit_code)
    except typer.Abort:
        typer.echo("tiles: aborted", err=True)
        sys.exit(130)
    except Exception as err:
        # Click's usage errors (unknown option, missing argument, bad value).
        # Typer vendors Click privately, so match its interface, not its class.
        if hasattr(err, "format_message") and hasattr(err, "exit_code"):
            if err.format_message():
                typer.echo(f"tiles: error: {err.format_message()}", err=True)
            sys.exit(2)
        raise
    return 0


if __name__ == "__main__":  # pragma: no cover
    main()
