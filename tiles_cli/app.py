"""Entry point of the `tiles` command: builds the Typer app and maps errors to exit codes.

This is the one place where a ``TilesError`` becomes a one-line message on
stderr and an exit code (``tilelib.errors.exit_code``); command modules just
raise.
"""

from __future__ import annotations

import gc
import importlib
import sqlite3
import sys

import typer

from tilelib import plugins
from tilelib.errors import TilesError, disk_error, exit_code, one_line
from tiles_cli import settings

app = typer.Typer(
    help="Build one huge Takuzu board a day from a content-addressed tile library. Formats and rules: docs/FORMAT.md.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,  # plain Click help: Typer's rich help cost ~0.2 s of imports per `--help`
)


@app.callback()
def _root() -> None:
    """The root is always a group: with one command module loaded (``modules_for``), Typer
    would otherwise make a lone ``solve`` or ``pack`` the whole program."""


_registered: set[str] = set()


def build_app(modules: list[str] | tuple[str, ...] | None = None) -> typer.Typer:
    """Import the command modules (default: every command group of ``tilelib.plugins``) and let each
    register its commands (``register(app)``), once per process: ``main`` called again in one
    process, as the in-process tests do, must not register a module's commands again."""
    for name in plugins.modules(plugins.COMMAND) if modules is None else modules:
        if name not in _registered:
            importlib.import_module(name).register(app)
            _registered.add(name)
    return app


def modules_for(argv: list[str]) -> tuple[str, ...]:
    """The command modules a command line needs: when its first word names a command group of the
    registry, that group's modules; otherwise (help, a typo) every one, so that Click lists or
    rejects the whole set. Typer then converts only those commands: a start-up saving of ~10 ms
    CPU on every command (scripts/bench_startup.py)."""
    head = argv[0] if argv else ""
    group = head if head in plugins.names(plugins.COMMAND) else None
    return plugins.modules(plugins.COMMAND, group)


def main(argv: list[str] | None = None) -> int:
    """Run the CLI; return (and exit with) the process exit code."""
    program = argv is None  # this process is the `tiles` program and ends when main returns
    argv = sys.argv[1:] if argv is None else argv
    build_app(modules_for(argv))
    if program:
        # The imported modules live until exit: keep them out of every cycle collection,
        # the interpreter's final one included (~10 ms of each command's CPU at exit).
        gc.freeze()
    try:
        project = settings.load()  # tiles.toml: below the command line and the environment
        command = typer.main.get_command(app)
        command.main(
            args=argv,
            prog_name="tiles",
            standalone_mode=False,
            default_map=settings.default_map(command, project),
            obj=project,
        )
    except (TilesError, sqlite3.DatabaseError) as err:
        typer.echo(f"tiles: error: {one_line(err)}", err=True)
        sys.exit(exit_code(err))
    except typer.Exit as ex:
        sys.exit(ex.exit_code)
    except typer.Abort:
        typer.echo("tiles: aborted", err=True)
        sys.exit(130)
    except OSError as err:
        full = disk_error(err)  # a full disk is one line and exit 3 wherever the write was
        if full is None:
            raise
        typer.echo(f"tiles: error: {one_line(full)}", err=True)
        sys.exit(exit_code(full))
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
