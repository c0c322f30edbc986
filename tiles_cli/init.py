"""`tiles init`: write this folder's project file, tiles.toml, with one option per setting.

The options are made from ``tiles_cli.settings.SETTINGS`` (one declaration): a new setting is a new
``--option`` here, a new key in the file and a new row in ``tiles config`` without a line of this module.
"""

from __future__ import annotations

import inspect
import os
import secrets
from pathlib import Path

import typer

from tilelib.errors import BadInput
from tiles_cli import settings


def register(app: typer.Typer) -> None:
    app.command("init")(init_command)


def init_command(**given: object) -> None:
    """Write ./tiles.toml: the settings every later command in this folder (and below it) reads, below
    the command line and the environment. An existing file keeps the settings not given here. With
    --secret-file naming a file that does not exist yet, the file is made with a fresh random key,
    readable by you alone; a file:// remote's folder is made."""
    target = Path.cwd() / settings.FILE
    kept = settings.read(target.read_bytes(), target) if target.is_file() else {}
    values = {**kept, **{key: str(value) for key, value in given.items() if value is not None}}
    for key, value in values.items():
        if any(0xD800 <= ord(c) <= 0xDFFF for c in value):
            raise BadInput(f"--{key.replace('_', '-')}: not valid UTF-8")
    folders: list[Path] = []  # a directory remote's folder, made here: the first pull or push finds it
    for key in ("remote", "public_remote"):
        if key in values:
            from remote.url import parse_remote

            url = parse_remote(values[key])  # a typo fails here, not on the first night
            if url.scheme == "file":
                folders.append(Path(url.path))
    text = settings.render(values)
    settings.parse(text.encode("utf-8"), target)  # what the file will read back as
    for folder in folders:
        try:
            folder.mkdir(parents=True, exist_ok=True)
        except OSError as err:
            raise BadInput(f"cannot make the remote's folder {folder}: {err.strerror}") from err
    if "secret_file" in values:
        _new_secret(Path(values["secret_file"]))
    from tilelib.fsio import atomic_write

    atomic_write(target, text)
    verb = "updated" if kept else "wrote"
    typer.echo(f"{verb} {target}: {', '.join(values) or 'no settings (defaults)'}")


def _new_secret(path: Path) -> None:
    """A fresh 256-bit key in ``path`` (mode 0600), unless a file is there already (it is kept)."""
    if path.exists():
        return
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    except OSError as err:
        raise BadInput(f"cannot create the secret file {path}: {err.strerror}") from err
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write(secrets.token_hex(32) + "\n")


def _signature() -> inspect.Signature:
    """``init_command``'s parameters as Typer reads them: ``--<key>`` per setting."""
    params = [
        inspect.Parameter(
            s.key,
            inspect.Parameter.KEYWORD_ONLY,
            default=typer.Option(
                None, "--" + s.key.replace("_", "-"), metavar=s.metavar, help=f"{s.help[0].upper()}{s.help[1:]}."
            ),
            annotation=str | None,
        )
        for s in settings.SETTINGS
    ]
    return inspect.Signature(params, return_annotation=None)


init_command.__signature__ = _signature()  # type: ignore[attr-defined]  # Typer reads the options from it
init_command.__annotations__ = {p.name: p.annotation for p in _signature().parameters.values()}
