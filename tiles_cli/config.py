"""`tiles config`: each setting's value and where it came from (``tiles_cli.settings``)."""

from __future__ import annotations

import json

import typer

from tiles_cli import settings


def register(app: typer.Typer) -> None:
    app.command("config")(config_command)


def config_command(
    ctx: typer.Context,
    as_json: bool = typer.Option(False, "--json", help="One JSON object: the file, then key -> {value, source}."),
) -> None:
    """Print each setting, its value and its source (environment, the tiles.toml that set it, or default).
    A flag given to a command wins over all three; the secret's value is never printed."""
    project = ctx.obj if isinstance(ctx.obj, settings.Project) else settings.load()
    rows = list(settings.report(project))
    if as_json:
        doc: dict[str, object] = {"file": str(project.path) if project.path else None}
        doc.update({key: {"value": value, "source": source} for key, value, source in rows})
        typer.echo(json.dumps(doc))
        return
    typer.echo(f"project file: {project.path or f'none (no {settings.FILE} here or above)'}")
    width = max(len(key) for key, _, _ in rows)
    for key, value, source in rows:
        typer.echo(f"{key:<{width}}  {value}  ({source})")
