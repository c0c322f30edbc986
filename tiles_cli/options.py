"""Options shared by several commands (the project's settings: ``tiles_cli.settings``),
the choices they take (Enums: Click checks them, one line and exit 2 on a bad value) and the one
``--params`` parser."""

from __future__ import annotations

import dataclasses
import inspect
import json
import typing
from enum import StrEnum
from pathlib import Path
from typing import Any

import typer

from tilelib import plugins
from tilelib.errors import BadInput
from tiles_cli.settings import option_help, setting
from tiles_cli.settings import secret as read_secret


def setting_option(key: str, *decls: str, text: str, required: bool = False):
    """An option that takes the project setting ``key`` (``tiles_cli.settings``): its envvar, its
    default (a Path for a path setting; none when ``required``: Click then asks for it, after the
    environment and tiles.toml)."""
    s = setting(key)
    default = ... if required else (Path(s.default) if s.kind == "path" and s.default is not None else s.default)
    return typer.Option(default, *decls, envvar=s.env, help=option_help(key, text))


LibraryOpt = setting_option("library", "--library", "-L", text="Tile library file")
RemoteOpt = setting_option("remote", "--remote", text="Library remote: s3://bucket/prefix or file:///dir")
DrainRemoteOpt = setting_option("remote", "--remote", text="Push every --batch misses and at the end, to this remote")
ReplayRemoteOpt = setting_option(
    "remote", "--remote", text="Remote holding the start snapshot, for --replay; an https:// one needs no credentials"
)
PublicRemoteOpt = setting_option(
    "public_remote", "--to", text="The public mirror, s3:// or file://; never the library's remote"
)
_RUNS = "Runs database: a SQLite file, or a postgresql:// URL"
RunsOpt = setting_option("runs", "--runs", text=_RUNS)
RunsNeededOpt = setting_option("runs", "--runs", text=_RUNS, required=True)
OutDirOpt = setting_option("out", "--out", text="Directory for DAY.json")
SecretFileOpt = setting_option(
    "secret_file",
    "--secret-file",
    text="A file holding the daily seed's key; given here it wins over TILES_SECRET, which wins over env's or file's",
)


def field_option(cls: Any, name: str) -> Any:
    """The option ``--<name>`` of the options dataclass ``cls``'s field ``name``: the field's default,
    and the help and limits (min, max) its metadata declares (``referee.service.options``), so an
    option is declared once, beside the value it fills."""
    f = next(f for f in dataclasses.fields(cls) if f.name == name)
    meta = dict(f.metadata)
    return typer.Option(f.default, "--" + name.replace("_", "-"), help=meta.pop("help"), **meta)


def options_of(cls: Any):
    """A command decorator: after the command's own parameters, one option per field of the options
    dataclass ``cls`` that declares its help (``field_option``), passed to the command as keyword
    arguments (its ``**given``), so a field added there is an option here with nothing else to write."""
    hints = typing.get_type_hints(cls)

    def wrap(fn):
        sig = inspect.signature(fn)
        own = [p for p in sig.parameters.values() if p.kind is not p.VAR_KEYWORD]
        extra = [
            inspect.Parameter(
                f.name, inspect.Parameter.KEYWORD_ONLY, default=field_option(cls, f.name), annotation=hints[f.name]
            )
            for f in dataclasses.fields(cls)
            if "help" in f.metadata
        ]
        fn.__signature__ = sig.replace(parameters=own + extra)
        return fn

    return wrap


def secret(ctx: typer.Context, secret_file: Path | None) -> str | None:
    """The daily seed's key for a command with ``--secret-file`` (``tiles_cli.settings.secret``)."""
    return read_secret(secret_file, getattr(ctx.get_parameter_source("secret_file"), "name", "") == "COMMANDLINE")


# The packers as the one registry lists them, the default first: read from its table, so the packers
# themselves load on use, not at start-up
DEFAULT_PACKER = plugins.names(plugins.PACKER)[0]
PACKER_NAMES = " | ".join(plugins.names(plugins.PACKER))
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
